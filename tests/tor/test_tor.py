#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
The rack on a real Open vSwitch (tests/tor/tor.py): clients and memory
servers in netns, swordd instances on their own ports, flows only from
sword-openflow.

  test_tor.py --mode one-port|two-port     one instance, one server
  test_tor.py --ovs-dpdk --mode ...       the same on OVS-DPDK, swordd on memif
  test_tor.py --scale-out                  2 instances, each owning 1 of 2 servers
  test_tor.py --failover [--passthrough] [--signal TERM|KILL|STOP [--cont-after S]]
                                           fast-failover groups, the instance
                                           stopped, killed or hung mid-load
  test_tor.py --late-host [--listed servers|none]
                                           a client host attached after the
                                           flows were loaded, in no --host

Checks (all shapes): the lock workload with acceleration passes (0
violations, memory equals the clients' critical sections); the redirect
rules were hit; no host MAC learned on swordd's ports; ARP, ping and a TCP
connect arrive exactly once even with the MAC table flushed (flooding).
Needs root and Open vSwitch; exits 77 (a failure for scripts/test.sh)
without them.
"""

import argparse
import os
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tor  # noqa: E402
from tor import t, e2e  # noqa: E402

LOCKS = 4


def check_workload(res):
    for idx, (sjs, cjs, rcs) in sorted(res.items()):
        tor.log_clients(cjs)
        t.log("server %d: rx=%d writes=%d reads=%d atomics=%d records=%r" % (
            idx, sjs["rx_frames"], sjs["writes"], sjs["reads"], sjs["atomics"],
            sjs["records"][:LOCKS]))
        e2e.check_run(sjs, cjs, rcs, "sherman-lock", LOCKS)


def check_instance_saw_only_its_servers(rack, res, stats, flows):
    """Each instance's RoCE frames are exactly those the switch redirected
    to it, and those are the frames of the endpoints of the servers it owns
    (every frame they sent, nothing of the others).  OVS-DPDK loses frames
    on its kernel (veth) ports when its PMD thread and swordd hold both
    cores of this machine: there only the first equality holds (the RC
    endpoints retransmit)."""
    for inst, st in zip(rack.instances, stats):
        outs = ["output:%d" % p for p in inst.ofports]
        # the last action (the first is learn(...))
        redirected = sum(f[2] for f in flows if f[0] == 100 and f[3].split(",")[-1] in outs)
        want = 0
        for s in inst.servers:
            sjs, cjs, _ = res[s.index]
            want += sjs["link_tx"] + sum(c["link_tx"] for c in cjs)
        got = tor.roce_frames(st)
        t.log("swordd %d (servers %s): RoCE frames %d, managed_rx %d, rewritten %d; "
              "its endpoints sent %d" % (inst.k, [s.ip for s in inst.servers], got,
                                         st.get("managed_rx", 0), st.get("rewritten", 0), want))
        t.check_eq(got, redirected, "swordd %d RoCE frames vs frames the switch "
                   "redirected to it" % inst.k)
        if not rack.ovs_dpdk:
            t.check_eq(got, want, "swordd %d RoCE frames vs frames sent by its servers' "
                       "endpoints" % inst.k)
        t.check(st.get("managed_rx", 0) > 0, "swordd %d managed nothing" % inst.k)
        t.check(st.get("rewritten", 0) > 0, "swordd %d rewrote nothing (acceleration on)"
                % inst.k)


def progress_ops(log, t_max):
    """ops of the last progress line at or before t_max seconds."""
    ops = 0
    for m in re.finditer(r"t=([\d.]+)s ops=(\d+) .*retries=(\d+)", log):
        if float(m.group(1)) <= t_max:
            ops = int(m.group(2))
    return ops


def check_no_corruption(sjs, cjs):
    """What a fail-over must never do, whatever the clients saw: a client
    finding a lock's record held or its counter going back (violations), or
    memory disagreeing with the critical sections the clients completed.
    QP errors are allowed (and reported): the QPs lost in these runs died
    on a CAS in flight at the stop that was never answered, as expected of
    a CAS swordd had rewritten into a WRITE (executed by the server as that
    WRITE, its ATOMIC ACK lost with swordd, the retransmitted CAS a
    duplicate PSN the server never saw as an atomic)."""
    for c in cjs:
        t.check_eq(c["violations"], 0, "client %d violations (%r)"
                   % (c["client_id"], c["violation_msgs"]))
        t.check_eq(c["rx_bad_icrc"], 0, "client %d frames with a bad ICRC" % c["client_id"])
    t.check_eq(sjs["rx_bad_icrc"], 0, "server frames with a bad ICRC")
    t.check_eq(sjs["naks_access"] + sjs["naks_invalid"], 0, "server access/invalid NAKs")
    for i in range(LOCKS):
        cs = sum(c["cs_per_lock"][i] for c in cjs)
        t.check_eq(sjs["records"][i][1], cs, "lock %d: counter in memory vs critical "
                   "sections completed by all clients" % i)
        t.check_eq(sjs["records"][i][0], 0, "lock %d: holder left in the record" % i)


SIGNALS = {"TERM": signal.SIGTERM, "KILL": signal.SIGKILL, "STOP": signal.SIGSTOP}


class Sniff:
    """tcpdump -w (root namespace when ns is None); stop() returns the
    capture times of its frames (seconds, CLOCK_REALTIME)."""

    def __init__(self, ns, ifname, path, bpf):
        self.path = path
        self.errp = path + ".err"
        cmd = ["tcpdump", "-U", "-n", "-B", "8192", "-i", ifname, "-w", path] + bpf
        self.p = subprocess.Popen(t.in_ns(ns, cmd) if ns else cmd,
                                  stdout=subprocess.DEVNULL, stderr=open(self.errp, "w"))
        t.on_cleanup(lambda: self.p.poll() is None and self.p.kill())
        t.wait_for(lambda: "listening on" in open(self.errp).read() or self.p.poll() is not None,
                   30, "tcpdump on %s" % ifname)
        t.check(self.p.poll() is None, "tcpdump died: " + open(self.errp).read())

    def stop(self):
        from scapy.utils import RawPcapReader
        time.sleep(0.5)
        self.p.send_signal(signal.SIGINT)
        self.p.wait(30)
        r = RawPcapReader(self.path)
        try:
            return [m.sec + m.usec / 1e6 for _, m in r]
        finally:
            r.close()


def resume_time(t_sig, t_cont, at_server, from_sword):
    """Seconds from the signal to the first frame from the client that the
    server received around swordd: after the signal and after the last
    frame swordd sent (a stopping swordd drains for a few ms) before it was
    resumed (SIGCONT at t_cont)."""
    last_sw = max([x for x in from_sword if x < t_cont] or [t_sig])
    after = [x for x in at_server if x > max(t_sig, last_sw) and x < t_cont]
    return (min(after) - t_sig) if after else None


def sword_to_server(rack, inst, ip):
    """RoCE frames swordd sent to the server: its priority-200 rule's count."""
    return sum(n for prio, match, n, _ in rack.ovs.flows(rack.br)
               if prio == 200 and "in_port=%d," % inst.ofports[-1] in match
               and "nw_dst=%s," % ip in match)


def failover(a):
    """One instance behind fast-failover groups gets a signal while the
    clients run: TERM (a clean stop), KILL (a crash), STOP (a hang; SIGCONT
    --cont-after seconds later, or after the clients are done).  The test
    never touches a link: swordd's exit path (TERM) or its guardian (KILL,
    STOP) sets its net_af_packet interfaces down, OVS sees the ports down
    and the groups switch to their second bucket; after SIGCONT the guardian
    sets them up and the traffic goes through swordd again."""
    sig = SIGNALS[a.signal]
    restart = sig == signal.SIGKILL and a.restart_after > 0
    rack = tor.Rack(mode=a.mode, n_servers=1, owners=(0,), accel=not a.passthrough,
                    failover=True, listed=a.listed, state=restart)
    groups = rack.ovs.ofctl("dump-groups", rack.br)
    t.log(groups)
    t.check("type=ff" in groups, "no fast-failover group in the switch")
    inst = rack.instances[0]
    srv = rack.servers[0]
    marks = {}
    at_server = Sniff(srv.ns, srv.ifname, os.path.join(rack.d, "at-server.pcap"),
                      ["udp", "port", "4791", "and", "src", "host", tor.CLIENT_IP])
    from_sword = Sniff(None, inst.outers[-1], os.path.join(rack.d, "from-sword.pcap"),
                       ["udp", "port", "4791"])

    def ports_are(state):
        return all((rack.ovs.port_state(rack.br, p) == "LINK_DOWN") == (state == "down")
                   for p in inst.ofports)

    def signal_mid_load():
        time.sleep(a.stop_after)
        try:
            marks["rewritten"] = inst.sw.telemetry("/sword/stats").get("rewritten")
        except Exception as e:  # noqa: BLE001 (only logged)
            t.log("telemetry before the signal: %s" % e)
        marks["log_at_sig"] = len(inst.sw.stderr())
        marks["sig"] = time.monotonic() - rack.clients_started
        marks["t_sig"] = time.time()
        inst.sw.proc.send_signal(sig)
        # a generous bound for "the bypass took over at all"
        t.wait_for(lambda: ports_are("down"), 10, "swordd's ports down in OVS after SIG%s"
                   % a.signal, interval=0.01)
        marks["down"] = time.monotonic() - rack.clients_started
        t.log("swordd's interfaces after SIG%s: %r" % (
            a.signal, [t.iface_flags(f, inst.ns) for f in inst.ifs]))
        if sig == signal.SIGSTOP and a.cont_after:
            time.sleep(a.cont_after)
            marks["t_cont"] = time.time()
            inst.sw.proc.send_signal(signal.SIGCONT)
            t.wait_for(lambda: ports_are("up"), 10, "swordd's ports up in OVS after SIGCONT",
                       interval=0.01)
            marks["up"] = time.monotonic() - rack.clients_started
            marks["sw_to_server_at_cont"] = sword_to_server(rack, inst, srv.ip)
        if restart:
            # a crash, and the same host's swordd started again on the
            # dead one's state segment (systemd's Restart=)
            time.sleep(a.restart_after)
            marks["t_restart"] = time.time()
            inst.restart()
            t.wait_for(lambda: ports_are("up"), 10, "the restarted swordd's ports up in OVS",
                       interval=0.01)
            marks["up_after_restart"] = time.time() - marks["t_restart"]
            marks["sw_to_server_at_restart"] = sword_to_server(rack, inst, srv.ip)

    res = tor.run_workload(rack, duration=a.duration, locks=LOCKS, progress=1,
                           during=signal_mid_load)
    sjs, cjs, rcs = res[0]
    killed = inst.previous[0] if inst.previous else inst.sw
    if sig == signal.SIGSTOP:
        if "t_cont" not in marks:
            inst.sw.proc.send_signal(signal.SIGCONT)
        inst.stop()
    elif restart:
        t.check_eq(killed.wait(60), -signal.SIGKILL, "swordd's exit status after SIGKILL")
        inst.stop()
        new_log = inst.sw.stdout() + inst.sw.stderr()
        adopted = re.search(r"adopted after a fail-over bypass.*", new_log)
        marks["adopted"] = bool(adopted)
        t.log("restart: %s; ports up %.0f ms after the restart began" % (
            adopted.group(0) if adopted else None, marks["up_after_restart"] * 1000))
    else:
        rc = inst.sw.wait(60)
        t.check_eq(rc, 0 if sig == signal.SIGTERM else -signal.SIGKILL,
                   "swordd's exit status after SIG%s" % a.signal)
        if sig == signal.SIGTERM:
            inst.stats = t.read_stats_json(inst.stats_json)
    st = inst.stats or {}
    early = re.findall(r"swordd guardian: .*", killed.stderr()[:marks["log_at_sig"]])
    if early:
        # a stall of guard_ms before the signal (this machine's 2 CPUs are
        # shared): the guardian did its job, but the timing below is then
        # not the signal's
        t.log("guardian acted before the signal: %r" % early)
    log = killed.stdout() + killed.stderr()
    for line in re.findall(r".*(?:link (?:up|down)|guardian).*", log):
        t.log("swordd: " + line)
    if sig == signal.SIGTERM:
        # swordd itself, or its guardian if swordd's shutdown took guard_ms
        t.check(re.search(r"port \d+: link down: .*interface \S+ (set|was already) down", log),
                "swordd did not say it set its interfaces down")
    else:
        t.check(re.search(r"swordd guardian: interface \S+ set down", log),
                "the guardian did not say it set swordd's interfaces down")
    if "t_cont" in marks:
        t.check(re.search(r"swordd guardian: interface \S+ set up", log),
                "the guardian did not set the interfaces up after SIGCONT")
        # the bypass carried the traffic around swordd: before the links
        # came up again every worker forgot what it knew (app/swordd/links.c;
        # with acceleration, granting on the old shadow made two holders)
        t.check(st.get("bypass_forgets", 0) >= 1, "swordd resumed after the bypass "
                "without forgetting what it knew (bypass_forgets %r)"
                % st.get("bypass_forgets"))
        t.log("after the bypass: bypass_forgets %r, bypass_dropped %r, bypass_kept %r, "
              "bypass_kept_resent %r" % (
                  st.get("bypass_forgets"), st.get("bypass_dropped"), st.get("bypass_kept"),
                  st.get("bypass_kept_resent")))
    t_sig = marks["t_sig"]
    resume = resume_time(t_sig, marks.get("t_cont", marks.get("t_restart", float("inf"))),
                         at_server.stop(),
                         from_sword.stop())
    t.check(resume is not None and resume < 10, "no frame reached the server around "
            "swordd within 10 s of SIG%s: %r" % (a.signal, resume))
    t.log("fail-open: SIG%s -> first frame delivered around swordd after %.0f ms%s "
          "(OVS saw the ports down %.0f ms after the signal%s)" % (
              a.signal, resume * 1000, " (not the signal's: the guardian acted before it)"
              if early else "", (marks["down"] - marks["sig"]) * 1000,
              "; SIGCONT -> ports up %.0f ms later" % ((marks["up"] - marks["sig"]) * 1000
                                                       - (marks["t_cont"] - t_sig) * 1000)
              if "up" in marks else ""))
    tor.log_clients(cjs)
    before = [progress_ops(c["_log"], marks["sig"]) for c in cjs]
    after = [c["ops"] - b for c, b in zip(cjs, before)]
    sw_to_server = sword_to_server(rack, inst, srv.ip)
    # (a restarted swordd counts from 0: the killed one's count then)
    rewritten = marks.get("rewritten") if restart else st.get("rewritten", marks.get("rewritten"))
    t.log("fail-over: SIG%s at t=%.1fs, its ports down in OVS at t=%.1fs; "
          "clients' ops before the signal %r, after %r; retries %r, retransmitted "
          "packets %r, timeouts %r, violations %r, QP errors %r, exit codes %r" % (
              a.signal, marks["sig"], marks["down"], before, after,
              [c["retries"] for c in cjs], [c["retx_pkts"] for c in cjs],
              [c["timeouts"] for c in cjs], [c["violations"] for c in cjs],
              [c["qp_errors"] for c in cjs], rcs))
    t.log("fail-over: server received %d frames, %d of them forwarded by swordd; "
          "swordd rewrote %r; records %r, lock words %r" % (
              sjs["rx_frames"], sw_to_server, rewritten,
              sjs["records"][:LOCKS], sjs["lock_words"][:LOCKS]))
    t.check(sjs["rx_frames"] > sw_to_server,
            "the server received nothing past swordd after the fail-over")
    if "sw_to_server_at_restart" in marks:
        t.check(sw_to_server > marks["sw_to_server_at_restart"],
                "the restarted swordd forwarded nothing to the server (%d frames before)"
                % marks["sw_to_server_at_restart"])
    if "sw_to_server_at_cont" in marks:
        t.check(sw_to_server > marks["sw_to_server_at_cont"],
                "swordd forwarded nothing to the server after SIGCONT (%d frames before)"
                % marks["sw_to_server_at_cont"])
    if a.passthrough:
        # nothing was rewritten: RC retransmission covers the frames lost
        # in the switch-over, and the run must be as clean as without it
        t.check(all(n > 0 for n in after), "a client made no progress after the "
                "fail-over: %r" % after)
        e2e.check_run(sjs, cjs, rcs, "sherman-lock", LOCKS)
    else:
        # with rewrites the clients may lose QPs and locks (check_no_corruption
        # says why); what they saw is logged above, corruption is never allowed
        t.check(rewritten is None or rewritten > 0, "swordd rewrote nothing before the signal")
        check_no_corruption(sjs, cjs)
        if "t_cont" in marks:
            # a hang the switch bypassed, then the same swordd again: the
            # answers to what it decided before the hang reach the clients
            # once its links are up (app/swordd/links.c), so no QP is lost
            # (before they were kept: 4 QPs lost in 1 of 6 runs)
            t.check_eq([c["qp_errors"] for c in cjs], [0] * len(cjs),
                       "QP errors after a bypassed hang")
        if a.max_qp_errors >= 0:
            t.check(sum(c["qp_errors"] for c in cjs) <= a.max_qp_errors,
                    "QP errors %r, more than %d" % ([c["qp_errors"] for c in cjs],
                                                   a.max_qp_errors))
    if restart:
        # (checked last: what the clients saw is logged above either way)
        t.check(marks["adopted"], "the restarted swordd did not adopt the killed one's tables")
    tor.check_no_mac_on_sword(rack)
    # the bypass carries the other traffic too, exactly once
    tor.check_non_roce_once(rack)


LATE_IP = "198.18.0.4"
OF_LATE = 4


class FdbWatch:
    """Samples the switch's MAC table (fdb/show) until stop(): every
    sample is kept, so "never on swordd's port" covers the whole run and
    not only its end."""

    def __init__(self, rack):
        import threading
        self.rack = rack
        self.samples = 0
        self.bad = []
        self.last = ""
        self.done = threading.Event()
        self.th = threading.Thread(target=self._run, daemon=True)
        self.th.start()

    def _run(self):
        ports = self.rack.sword_ports()
        while not self.done.is_set():
            out = self.rack.ovs.appctl("fdb/show", self.rack.br)
            self.samples += 1
            self.last = out
            for line in out.splitlines()[1:]:
                f = line.split()
                if len(f) >= 3 and f[0].isdigit() and int(f[0]) in ports:
                    self.bad.append(line.strip())
            self.done.wait(0.2)

    def stop(self):
        self.done.set()
        self.th.join(30)
        return self.samples, self.bad, self.last


def late_host(a):
    """A client host that did not exist when sword-openflow's rules were
    loaded (its netns, veth and switch port are made afterwards, and it is
    in no --host) runs the lock workload against the managed server.  Its
    requests and the server's responses must go through swordd (frames
    swordd sent to the new host are captured on swordd's port), the
    responses must reach it (the workload's checks), the switch must have
    learned it on its own port only, and the MAC table must never show a
    host MAC on swordd's port.  With the rules of before the learned table
    (responses from swordd only to listed hosts, the rest dropped at
    priority 190) the new host's responses never arrive and its run fails."""
    rack = tor.Rack(mode=a.mode, n_servers=1, owners=(0,), accel=True, listed=a.listed)
    inst = rack.instances[0]
    srv = rack.servers[0]
    late = rack.add_client("c2", LATE_IP, OF_LATE)
    t.log("host %s (MAC %s) attached on port %d after the rules were loaded"
          % (late.ip, late.mac, late.ofport))
    watch = FdbWatch(rack)
    t.wait_for(lambda: subprocess.run(
        t.in_ns(late.ns, ["ping", "-c", "1", "-W", "1", srv.ip]),
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0,
        60, "ping from the new host to %s through the switch" % srv.ip)
    # what swordd sent to the new host: frames arriving at the switch from
    # swordd's (client-side) port, as seen on its veth in the root netns
    sn = Sniff(None, inst.outers[0], os.path.join(rack.d, "sword-to-late.pcap"),
               ["--immediate-mode", "-Q", "in", "udp", "port", "4791", "and",
                "dst", "host", late.ip])
    # and what of it the new host received
    at_late = Sniff(late.ns, late.ifname, os.path.join(rack.d, "at-late.pcap"),
                    ["--immediate-mode", "udp", "port", "4791", "and", "src", "host", srv.ip])
    try:
        res = tor.run_workload(rack, ops=a.ops, locks=LOCKS, client=late)
    finally:
        samples, bad, last = watch.stop()
    to_late, got_late = sn.stop(), at_late.stop()
    t.log("fdb/show %s after the run (%d samples taken during it):\n%s"
          % (rack.br, samples, last))
    learned = rack.ovs.ofctl("dump-flows", rack.br, "table=1")
    t.log("learned table:\n" + learned)
    t.log("swordd sent %d RoCE frames to the new host, which received %d from the server"
          % (len(to_late), len(got_late)))
    t.check(len(to_late) > 0, "swordd sent no RoCE frame to the new host %s" % late.ip)
    t.check(len(got_late) > 0, "none of the %d RoCE frames swordd sent to the new host %s "
            "reached it: the switch dropped them (its flows: %r)"
            % (len(to_late), late.ip, [f for f in rack.ovs.flows(rack.br) if f[2]]))
    check_workload(res)
    t.check(not bad, "host MACs on swordd's port %r in the switch's MAC table: %r"
            % (rack.sword_ports(), bad))
    tor.check_no_mac_on_sword(rack)
    t.check(re.search(r"dl_dst=%s actions=output:%d" % (late.mac, late.ofport), learned),
            "the new host's MAC %s is not learned on its port %d: %s"
            % (late.mac, late.ofport, learned))
    t.check(not re.search(r"actions=output:(%s)\b" % "|".join(map(str, rack.sword_ports())),
                          learned), "a MAC learned on swordd's port: %s" % learned)
    flows = rack.ovs.flows(rack.br)
    for prio, match, n, act in flows:
        t.log("flow priority=%d %s actions=%s: n_packets=%d" % (prio, match, act, n))
    stats = rack.stop_instances()
    check_instance_saw_only_its_servers(rack, res, stats, flows)


def shape(a):
    if a.scale_out:
        return dict(mode=a.mode, n_servers=2, owners=(0, 1))
    return dict(mode=a.mode, n_servers=1, owners=(0,))


def body():
    tor.require_ovs()
    t.args()
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", default="two-port")
    ap.add_argument("--scale-out", action="store_true")
    ap.add_argument("--ops", type=int, default=120)
    ap.add_argument("--ovs-dpdk", action="store_true",
                    help="OVS-DPDK (openvswitch-switch-dpdk), swordd on memif")
    ap.add_argument("--failover", action="store_true")
    ap.add_argument("--late-host", action="store_true",
                    help="a client attached after the flows were loaded")
    ap.add_argument("--listed", choices=("all", "servers", "none"), default="all",
                    help="the hosts given to sword-openflow as --host")
    ap.add_argument("--passthrough", action="store_true",
                    help="fail-over with acceleration off")
    ap.add_argument("--duration", type=float, default=8)
    ap.add_argument("--stop-after", type=float, default=3)
    ap.add_argument("--signal", choices=sorted(SIGNALS), default="TERM",
                    help="what swordd gets mid-load with --failover")
    ap.add_argument("--cont-after", type=float, default=0,
                    help="--signal STOP: SIGCONT this many seconds later (0: after the run)")
    ap.add_argument("--restart-after", type=float, default=0,
                    help="--signal KILL: start swordd again (with --state) this many "
                         "seconds after its ports went down (0: never)")
    ap.add_argument("--max-qp-errors", type=int, default=-1,
                    help="with acceleration: fail if the clients lose more QPs (-1: "
                         "log only)")
    a, _ = ap.parse_known_args()
    if a.failover:
        return failover(a)
    if a.late_host:
        return late_host(a)

    if a.ovs_dpdk:
        tor.require_ovs_dpdk()
    rack = tor.Rack(accel=True, ovs_dpdk=a.ovs_dpdk, **shape(a))
    res = tor.run_workload(rack, ops=a.ops, locks=LOCKS)
    check_workload(res)
    tor.check_non_roce_once(rack)
    flows = tor.check_redirect_counters(rack)
    tor.check_no_mac_on_sword(rack)
    stats = rack.stop_instances()
    check_instance_saw_only_its_servers(rack, res, stats, flows)


if __name__ == "__main__":
    t.main(body)
