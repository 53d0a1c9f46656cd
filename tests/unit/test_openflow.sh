#!/usr/bin/env bash
# sword-openflow: the flows it prints for conf/swordd.conf are accepted by
# Open vSwitch's own parser (ovs-ofctl parse-flows), redirect exactly the
# managed server's RoCEv2 both ways, forward only swordd's RoCEv2 output
# (never NORMAL, never other IP: flooded copies must die), emit rules for
# several instances and fast-failover groups, and bad input is refused with
# exit code 2.  tests/tor runs the same rules on a real Open vSwitch.
set -u
tool=$1 conf=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0
ok() { echo "ok: $*"; }
bad() { echo "FAIL: $*"; fail=1; }

command -v ovs-ofctl >/dev/null || { echo "FAIL: ovs-ofctl not installed (openvswitch-common)"; exit 1; }

# two-port (the example config) and one-port
"$tool" -c "$conf" --sword 5 --sword-server 6 --host 198.18.0.1=1 --host 198.18.0.2=2 >"$tmp/two" ||
	bad "two-port run failed"
"$tool" -c <(sed 's/^mode = two-port/mode = one-port/' "$conf") --sword 5 \
	--host 198.18.0.1=1 --host 198.18.0.2=2 >"$tmp/one" || bad "one-port run failed"
for m in one two; do
	grep -v '^#' "$tmp/$m" >"$tmp/$m.flows"
	if ovs-ofctl parse-flows "$tmp/$m.flows" >"$tmp/$m.parsed" 2>&1; then
		ok "$m-port: ovs-ofctl parses $(wc -l <"$tmp/$m.flows") flows"
	else
		bad "$m-port: ovs-ofctl refused: $(cat "$tmp/$m.parsed")"
	fi
	grep -q 'NORMAL' "$tmp/$m.flows" && bad "$m-port: NORMAL used"
done
# what the parser understood, not just our text
p=$tmp/two.parsed
grep -qE 'priority=100,udp,nw_dst=198.18.0.2,tp_dst=4791 .*actions=output:5$' "$p" || bad "requests not to client side"
grep -qE 'priority=100,udp,nw_src=198.18.0.2,tp_dst=4791 .*actions=output:6$' "$p" || bad "responses not to server side"
grep -qE 'priority=200,udp,in_port=6,nw_dst=198.18.0.2,tp_dst=4791 .*actions=output:2$' "$p" || bad "server side not forwarded to the server"
grep -qE 'priority=200,udp,in_port=5,nw_src=198.18.0.2,nw_dst=198.18.0.1,tp_dst=4791 .*actions=output:1$' "$p" || bad "client side not forwarded to the client"
grep -E 'priority=200' "$p" | grep -vq 'udp.*tp_dst=4791' && bad "a from-swordd rule forwards more than RoCEv2"
grep -qE 'priority=190,in_port=5 .*actions=drop$' "$p" || bad "no drop for unknown destinations"
grep -qE 'nw_src=198.18.0.2,tp_dst=4791 .*actions=output:5$' "$tmp/one.parsed" || bad "one-port responses not to swordd"
[ "$fail" -eq 0 ] && ok "flows as expected"

# scale-out: two instances, each owning one server; fail-over groups
printf '[ports]\nmode = one-port\nclient = 0\nfailover_bypass = on\n[server.a]\nip = 198.18.0.2\n' >"$tmp/a.conf"
printf '[ports]\nmode = one-port\nclient = 0\nfailover_bypass = on\n[server.b]\nip = 198.18.0.3\n' >"$tmp/b.conf"
if "$tool" -c "$tmp/a.conf" --sword 5 -c "$tmp/b.conf" --sword 7 --host 198.18.0.1=1 \
	--host 198.18.0.2=2 --host 198.18.0.3=3 --failover "$tmp/groups" >"$tmp/so"; then
	grep -v '^#' "$tmp/so" >"$tmp/so.flows"
	ovs-ofctl -O OpenFlow13 parse-flows "$tmp/so.flows" >"$tmp/so.parsed" 2>&1 || bad "scale-out flows refused: $(cat "$tmp/so.parsed")"
	# (ovs-ofctl has no parse-groups: tests/tor loads them into a real OVS)
	cp "$tmp/groups" "$tmp/groups.parsed"
	grep -qE 'udp,nw_dst=198.18.0.2,tp_dst=4791 .*group:(21248)' "$tmp/so.parsed" || bad "server a not via group"
	g=$(sed -nE 's/.*udp,nw_dst=198.18.0.3,tp_dst=4791 .*group:([0-9]+).*/\1/p' "$tmp/so.parsed")
	grep -qE "group_id=$g,type=ff,bucket=.*watch_port:7.*output:7.*watch_port:3.*output:3" "$tmp/groups.parsed" || bad "server b's group does not fail over from 7 to 3: $(cat "$tmp/groups.parsed")"
	# per instance: requests to its server, responses to the 2 other hosts
	[ "$(grep -c type=ff "$tmp/groups.parsed")" -eq 6 ] || bad "want 6 ff groups: $(cat "$tmp/groups.parsed")"
	ok "scale-out + fail-over: $(wc -l <"$tmp/so.flows") flows, $(wc -l <"$tmp/groups") groups"
else
	bad "scale-out run failed"
fi

# errors: exit 2 with a message
expect2() { # what args...
	local what=$1; shift
	"$tool" "$@" >/dev/null 2>"$tmp/err"
	rc=$?
	[ "$rc" -eq 2 ] && [ -s "$tmp/err" ] && ok "$what: $(head -1 "$tmp/err")" || bad "$what: rc $rc"
}
expect2 "no --sword" -c "$conf" --host 198.18.0.2=2
expect2 "two-port without --sword-server" -c "$conf" --sword 5 --host 198.18.0.2=2
expect2 "server without --host" -c "$conf" --sword 5 --sword-server 6 --host 198.18.0.1=1
expect2 "bad host" -c "$conf" --sword 5 --sword-server 6 --host 198.18.0.2
expect2 "bad port" -c "$conf" --sword x --sword-server 6 --host 198.18.0.2=2
expect2 "bad config" -c /nonexistent --sword 5 --host 198.18.0.2=2
expect2 "server in two instances" -c "$tmp/a.conf" --sword 5 -c "$tmp/a.conf" --sword 7 --host 198.18.0.2=2
expect2 "instances share a port" -c "$tmp/a.conf" --sword 5 -c "$tmp/b.conf" --sword 5 --host 198.18.0.2=2 --host 198.18.0.3=3
expect2 "second instance without --sword" -c "$tmp/a.conf" --sword 5 -c "$tmp/b.conf" --host 198.18.0.2=2 --host 198.18.0.3=3
# fail-over (issue #30): remapping behind a bypass is refused, and so is a
# config that does not declare the bypass swordd must know of
expect2msg() { # what regex args...
	local what=$1 re=$2; shift 2
	"$tool" "$@" >/dev/null 2>"$tmp/err"
	rc=$?
	if [ "$rc" -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -qE "$re" "$tmp/err"; then
		ok "$what: $(cat "$tmp/err")"
	else
		bad "$what: rc $rc, want 2 and one line matching '$re': $(cat "$tmp/err")"
	fi
}
sed 's/^failover_bypass = on/failover_bypass = off/' "$tmp/a.conf" >"$tmp/nobypass.conf"
printf '[features]\nremapping = on\n' | cat "$tmp/nobypass.conf" - >"$tmp/remap.conf"
expect2msg "--failover without failover_bypass" "nobypass.conf: \[ports\] failover_bypass: off" \
	-c "$tmp/nobypass.conf" --sword 5 --host 198.18.0.2=2 --failover "$tmp/g"
expect2msg "--failover with remapping" "remap.conf: \[features\] remapping: on" \
	-c "$tmp/remap.conf" --sword 5 --host 198.18.0.2=2 --failover "$tmp/g"
# swordd's own check refuses the pair in the file, before --failover looks
printf '[features]\nremapping = on\n' | cat "$tmp/a.conf" - >"$tmp/both.conf"
expect2msg "failover_bypass with remapping" "both.conf.*\[ports\] failover_bypass: on with \[features\] remapping" \
	-c "$tmp/both.conf" --sword 5 --host 198.18.0.2=2 --failover "$tmp/g"
# without --failover neither key matters
"$tool" -c "$tmp/remap.conf" --sword 5 --host 198.18.0.2=2 >/dev/null 2>"$tmp/err" &&
	ok "no --failover: remapping accepted" || bad "no --failover: remapping refused: $(cat "$tmp/err")"
exit "$fail"
