#!/usr/bin/env bash
# sword-openflow: the flows it prints for conf/swordd.conf are accepted by
# Open vSwitch's own parser (ovs-ofctl parse-flows), redirect exactly the
# managed server's RoCEv2 both ways, forward only swordd's RoCEv2 output
# (never NORMAL, never other IP: flooded copies must die), to a --host's
# port or else through the learned table (learn() only in rules frames from
# host ports hit, never in one matching swordd's ports), emit rules for
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
# no host list at all (issue #32): every destination from the learned table
"$tool" -c "$conf" --sword 5 --sword-server 6 >"$tmp/nohost" || bad "run without --host failed"
"$tool" -c "$conf" --sword 5 --sword-server 6 --table 3 >"$tmp/table3" || bad "run with --table 3 failed"
for m in one two nohost table3; do
	grep -v '^#' "$tmp/$m" >"$tmp/$m.flows"
	if ovs-ofctl parse-flows "$tmp/$m.flows" >"$tmp/$m.parsed" 2>&1; then
		ok "$m: ovs-ofctl parses $(wc -l <"$tmp/$m.flows") flows"
	else
		bad "$m: ovs-ofctl refused: $(cat "$tmp/$m.parsed")"
	fi
	# NORMAL only in the learning rule, which frames from swordd never
	# reach (their priority-190 drop is above it); no learn() in a rule
	# that matches swordd's ports
	grep 'NORMAL' "$tmp/$m.flows" | grep -vq '^cookie=0x5304d,table=[0-9]*,priority=1,actions=learn(.*),NORMAL$' &&
		bad "$m: NORMAL used outside the priority-1 learning rule"
	grep -E 'in_port=(5|6),' "$tmp/$m.flows" | grep -q 'learn(' && bad "$m: a rule for swordd's ports learns"
done
# what the parser understood, not just our text
p=$tmp/two.parsed
grep -qE 'priority=100,udp,nw_dst=198.18.0.2,tp_dst=4791 .*actions=learn\(.*\),output:5$' "$p" || bad "requests not to client side"
grep -qE 'priority=100,udp,nw_src=198.18.0.2,tp_dst=4791 .*actions=learn\(.*\),output:6$' "$p" || bad "responses not to server side"
grep -qE 'priority=200,udp,in_port=6,nw_dst=198.18.0.2,tp_dst=4791 .*actions=output:2$' "$p" || bad "server side not forwarded to the server"
grep -qE 'priority=200,udp,in_port=5,nw_src=198.18.0.2,nw_dst=198.18.0.1,tp_dst=4791 .*actions=output:1$' "$p" || bad "client side not forwarded to the client"
grep -E 'priority=200' "$p" | grep -vq 'udp.*tp_dst=4791' && bad "a from-swordd rule forwards more than RoCEv2"
grep -qE 'priority=190,in_port=5 .*actions=drop$' "$p" || bad "no drop for unknown destinations"
grep -qE 'priority=195,udp,in_port=5,nw_src=198.18.0.2,tp_dst=4791 .*actions=resubmit\(,1\)$' "$p" || bad "responses to unlisted hosts not looked up in the learned table"
grep -qE 'priority=100,udp,nw_src=198.18.0.2,tp_dst=4791 .*actions=learn\(.*\),output:5$' "$tmp/one.parsed" || bad "one-port responses not to swordd"
# the learned table: what learn() writes, and its miss
learn='learn\(table=1,hard_timeout=300,priority=10,delete_learned,cookie=0x5304d,NXM_OF_VLAN_TCI\[0\.\.11\],NXM_OF_ETH_DST\[\]=NXM_OF_ETH_SRC\[\],output:NXM_OF_IN_PORT\[\]\)'
[ "$(grep -cE "actions=$learn," "$p")" -eq 3 ] || bad "want learn() in the 2 redirect rules and the priority-1 rule: $(grep -c learn "$p")"
grep -qE "priority=1 .*actions=$learn,NORMAL$" "$p" || bad "no priority-1 learning rule"
grep -qE 'ADD table:1 priority=0 .*actions=drop$' "$p" || bad "no miss rule in the learned table"
[ "$fail" -eq 0 ] && ok "flows as expected"

# without --host: both directions from swordd through the learned table
p=$tmp/nohost.parsed
grep -qE 'priority=200,udp,in_port=6,nw_dst=198.18.0.2,tp_dst=4791 .*actions=resubmit\(,1\)$' "$p" || bad "no-host: requests from swordd not looked up"
grep -qE 'priority=195,udp,in_port=5,nw_src=198.18.0.2,tp_dst=4791 .*actions=resubmit\(,1\)$' "$p" || bad "no-host: responses from swordd not looked up"
grep -E 'priority=(19[05]|200)' "$p" | grep -q 'output:' && bad "no-host: a static output from swordd"
grep -qE 'priority=190,in_port=5 .*actions=drop$' "$p" || bad "no-host: no drop for the rest"
# --table N: the learned table is N+1
grep -qE 'ADD table:3 priority=195,.*actions=resubmit\(,4\)$' "$tmp/table3.parsed" || bad "--table 3: lookup not in table 4"
grep -qE 'ADD table:4 priority=0 .*actions=drop$' "$tmp/table3.parsed" || bad "--table 3: no miss rule in table 4"
grep -qE 'learn\(table=4,' "$tmp/table3.parsed" || bad "--table 3: learn() not into table 4"
[ "$fail" -eq 0 ] && ok "no --host: learned table as expected"

# scale-out: two instances, each owning one server; fail-over groups
printf '[ports]\nmode = one-port\nclient = 0\nfailover_bypass = on\n[server.a]\nip = 198.18.0.2\n' >"$tmp/a.conf"
printf '[ports]\nmode = one-port\nclient = 0\nfailover_bypass = on\n[server.b]\nip = 198.18.0.3\n' >"$tmp/b.conf"
if "$tool" -c "$tmp/a.conf" --sword 5 -c "$tmp/b.conf" --sword 7 --failover "$tmp/groups" >"$tmp/so"; then
	grep -v '^#' "$tmp/so" >"$tmp/so.flows"
	ovs-ofctl -O OpenFlow13 parse-flows "$tmp/so.flows" >"$tmp/so.parsed" 2>&1 || bad "scale-out flows refused: $(cat "$tmp/so.parsed")"
	# (ovs-ofctl has no parse-groups: tests/tor loads them into a real OVS)
	cp "$tmp/groups" "$tmp/groups.parsed"
	grep -qE 'udp,nw_dst=198.18.0.2,tp_dst=4791 .*group:(21248)' "$tmp/so.parsed" || bad "server a not via group"
	g=$(sed -nE 's/.*udp,nw_dst=198.18.0.3,tp_dst=4791 .*group:([0-9]+).*/\1/p' "$tmp/so.parsed")
	grep -qE "^group_id=$g,type=ff,bucket=watch_port:7,actions=output:7,bucket=watch_group:21247,actions=NORMAL$" "$tmp/groups.parsed" || bad "server b's group does not fail over from 7 to NORMAL: $(cat "$tmp/groups.parsed")"
	grep -qE "^group_id=21247,type=indirect,bucket=actions=NORMAL$" "$tmp/groups.parsed" || bad "no always-live group for the NORMAL buckets to watch"
	grep -qE "udp,nw_src=198.18.0.3,tp_dst=4791 .*learn\(.*\),group:$g$" "$tmp/so.parsed" || bad "server b's responses not via its group"
	# one per swordd port
	[ "$(grep -c type=ff "$tmp/groups.parsed")" -eq 2 ] || bad "want 2 ff groups: $(cat "$tmp/groups.parsed")"
	[ "$(wc -l <"$tmp/groups.parsed")" -eq 3 ] || bad "want 3 groups: $(cat "$tmp/groups.parsed")"
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
"$tool" -c "$conf" --sword 5 --sword-server 6 --host 198.18.0.1=1 >/dev/null 2>"$tmp/err" &&
	ok "server without --host: accepted (learned)" || bad "server without --host refused: $(cat "$tmp/err")"
expect2 "--table 254 (no room for the learned table)" -c "$conf" --sword 5 --sword-server 6 --table 254
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
