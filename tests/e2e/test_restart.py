#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
swordd killed (SIGKILL) and restarted on the same ports, several times,
while roce-peer lock clients run through it with acceleration on.

  test_restart.py [--restarts N] [--outage-ms MS] [--duration S] [--clients C]
                  [--qps Q] [--locks L] [--rto-us US] [--max-retries N]
                  [--initial-psn P] [--no-accel] [--remap] [--state [--upgrade]]
                  [--workload sherman-lock|rcuckoo-lock|cas-bench] [--json FILE]

Topology: e2e's "afpacket" path (veth pairs, swordd on net_af_packet in its
own namespace): the veths are the cables and stay while swordd is dead, as
a switch port would; a net_tap swordd takes its interfaces with it.

Each restarted swordd keeps the default [atomic] learn_holdoff_ms (1 s):
answers to requests it never saw are not learned from (they may replay a
pre-restart decision), and connections are re-learned (lib/rc).

The clients' retry budget models an RNIC's: one retransmission timeout of
--rto-us (default 537 ms = IBTA local ACK timeout 17, 4.096 us x 2^17) and
--max-retries 7 (retry_cnt's maximum) = about 4.3 s without an answer
before a QP goes to error.  A swordd outage (kill, --outage-ms, start)
must fit in it; the outage each restart took is reported (about 1.5 s
here with --outage-ms 1000).  roce-peer's own defaults (20 ms x 64 =
1.3 s) would not cover it: those clients would die of the outage alone,
accelerated or not; e2e.run's (10 ms x 600 = 6 s) would, but resend the
whole window every 10 ms while swordd is down.  With this budget the
pass-through run loses no QP, so the QPs the accelerated run loses are
lost to the missing stubs, not to the budget.

--remap: connection remapping on too (one lane).  Without --state lanes
and stubs are lost with the process: each restarted swordd forwards
nothing of a connection the RDMA CM did not set up since for [remap]
start_holdoff_ms (10 s, above the clients' retry budget), so every client
connection running at a kill times out (QP error) instead of reaching
its server QP with PSNs the lane has passed (lib/remap/README.md,
"Restart").  Safety is asserted the same way; the QPs lost are reported.

--state: swordd --state (lib/sword/sword_state.h): each instance adopts the
tables the killed one left (with --remap its lanes too:
lib/remap/remap_state.c); asserts 0 QP errors and 0 leaked locks too.
--state --upgrade: each restart is an upgrade whose layout differs (the
new instance refuses the segment and starts empty), after the upgrade
drain; the same assertions.  The configured learn_holdoff_ms is 0 (a
first start's): each instance that starts empty after another ran must
raise it for that start, as its log says.

--workload: the clients' workload (roce-peer --workload; default
sherman-lock).  rcuckoo-lock: RCuckoo's bitmap locks (64 locks to a word,
CAS and masked releases); cas-bench: perftest-like private CAS, shared FAA,
WRITE and READ loops, judged by the FAA counter and originals below.

Asserts (safety): no client saw a violation (mutual exclusion, lost
update); no frame with a bad ICRC anywhere; the server saw no malformed
frame and sent no access/invalid NAK; in server memory every lock's
counter equals the critical sections all clients completed (no lost or
doubled write), plus at most one for each critical section in doubt (its
QP failed with the record write and the release posted: the server may
have run them without the client seeing the ACK), and every lock word and
record holder is 0 or the tag of one of the clients' QPs (nothing written
there but a lock value); cas-bench: the FAA originals all clients saw are
distinct and below the counter in memory, and with no QP error they are
exactly 0..n-1 with n the counter (no FAA lost, run twice or answered
twice).

Counted and reported, not asserted (what the clients saw): timeouts,
retransmitted frames, QP errors (and which), locks left held at the end
(a leaked lock: a CAS swordd had turned into a WRITE in flight when it was
killed has no stub after the restart; its client times out), operations
done after each restart, swordd's counters just before each kill (from
telemetry) and the last instance's final counters.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e  # noqa: E402
from e2e import t  # noqa: E402

SNAP_KEYS = ("rx", "tx", "managed_rx", "rewritten", "malformed", "fn_atomic_granted",
             "fn_atomic_failed_local", "fn_atomic_passed_real_atomic", "fn_atomic_relearn",
             "fn_atomic_learned", "fn_atomic_dup_replayed", "fn_atomic_unknown_qp",
             "fn_atomic_paired", "fn_atomic_resp_mismatch", "fn_atomic_dup_ack_dropped",
             "fn_remap_bound", "fn_remap_stitched", "fn_remap_start_held")


def check_faa(sjs, cjs, fig):
    """cas-bench's shared counter: every FAA original a client saw is
    distinct and below the counter in memory; with no QP error every FAA
    the server ran was answered, so they are exactly 0..n-1."""
    n = sjs["bench_counter"]
    origs = [o for c in cjs for o in c["faa_origs"]]
    t.check(all(c["faa_origs_complete"] for c in cjs), "a client's FAA originals incomplete")
    fig["faa"] = {"counter": n, "answered": len(origs)}
    t.log("FAA: counter %d, %d answered" % (n, len(origs)))
    t.check_eq(len(origs), len(set(origs)), "FAA originals seen twice (an FAA answered twice "
               "or run twice)")
    t.check(all(o < n for o in origs), "an FAA original at or above the counter %d" % n)
    if fig["qp_errors"] == 0:
        t.check_eq(sorted(origs), list(range(n)), "FAA originals vs 0..counter-1 (an FAA "
                   "run without its answer, or lost)")


def body():
    t.require_root()
    t.args()
    ap = argparse.ArgumentParser()
    ap.add_argument("--restarts", type=int, default=4)
    ap.add_argument("--outage-ms", type=int, default=1000,
                    help="time between the SIGKILL and the new swordd's start")
    ap.add_argument("--warmup", type=float, default=4.0,
                    help="seconds of load before the first kill")
    ap.add_argument("--between", type=float, default=5.0,
                    help="seconds of load after each restart")
    ap.add_argument("--clients", type=int, default=2)
    ap.add_argument("--qps", type=int, default=4)
    ap.add_argument("--locks", type=int, default=16)
    ap.add_argument("--rto-us", type=int, default=537000)
    ap.add_argument("--max-retries", type=int, default=7)
    ap.add_argument("--initial-psn", type=int, default=None)
    ap.add_argument("--no-accel", action="store_true")
    ap.add_argument("--remap", action="store_true")
    ap.add_argument("--state", action="store_true",
                    help="swordd --state: each restart adopts the tables the killed "
                         "instance left; asserts 0 QP errors and 0 leaked locks")
    ap.add_argument("--upgrade", action="store_true",
                    help="with --state: each restart is an upgrade whose state layout "
                         "differs (tables.qps alternates, so the new instance refuses the "
                         "segment and starts empty), after the upgrade drain "
                         "(/sword/drain until drained); asserts 0 QP errors and 0 leaked "
                         "locks")
    ap.add_argument("--workload", default="sherman-lock",
                    choices=("sherman-lock", "rcuckoo-lock", "cas-bench"))
    ap.add_argument("--no-hugepages", action="store_true",
                    help="swordd on the tests' --no-huge memory (default: hugepages, "
                         "as deployed, when 256 MB of them are free)")
    ap.add_argument("--json", help="write the figures here")
    a, _ = ap.parse_known_args()
    accel = not a.no_accel

    d = t.tmpdir()
    # --upgrade: a hold-off of 0 (for a first start only, conf/swordd.conf):
    # each new instance that starts empty after another ran must raise
    # it for that start (ser_fn.c), which the last one's log shows
    topo = e2e.Topology("afpacket", accel=accel, pcap=False,
                        learn_holdoff_ms=0 if a.upgrade else 1000,
                        remap=a.remap, d=d,
                        swordd_args=(["--state", os.path.join(d, "state", "swordd")]
                                     if a.state else []),
                        eal_base=None if a.no_hugepages else e2e.hugepage_eal())
    t.log("swordd memory: %s" % ("hugepages" if topo.eal_base else "--no-huge"))
    events = []

    def snapshot():
        """The running instance's counters, through telemetry (a SIGKILLed
        swordd writes no --stats-json)."""
        try:
            st = topo.sw.telemetry("/sword/stats")
        except (t.TestFailure, OSError) as e:
            return {"error": str(e)}
        st = st.get("/sword/stats", st) if isinstance(st, dict) else {}
        return {k: st.get(k) for k in SNAP_KEYS if k in st}

    def drain():
        """The upgrade drain: nothing new rewritten, then wait until nothing
        rewritten is unanswered (doc/operating.md, Upgrade drain)."""
        t0 = time.monotonic()
        topo.sw.telemetry("/sword/drain")
        st = {}
        while time.monotonic() - t0 < 20:
            st = topo.sw.telemetry("/sword/drain,status")
            st = st.get("/sword/drain,status", st)
            if st.get("drained") == "true":
                return round(time.monotonic() - t0, 2)
            time.sleep(0.1)
        raise t.TestFailure("swordd not drained after 20 s: %r" % st)

    def during(procs):
        time.sleep(a.warmup)
        for i in range(a.restarts):
            ev = {"restart": i + 1, "before_kill": snapshot()}
            if a.upgrade:
                ev["drain_s"] = drain()
                # the next build's layout differs: its sizes do
                topo.swordd_set = ["tables.qps=%d" % (512 if i % 2 == 0 else 1024)]
            t0 = time.monotonic()
            topo.kill_swordd()
            time.sleep(a.outage_ms / 1000.0)
            topo.start_swordd()
            ev["outage_s"] = round(time.monotonic() - t0, 3)
            # swordd's own account: main() to forwarding, and its phases
            m = re.search(r"ready ([0-9.]+) s after main: EAL ([0-9.]+) s, tables ([0-9.]+) s",
                          topo.sw.stderr() + topo.sw.stdout())
            if m:
                ev["start_s"], ev["eal_s"], ev["tables_s"] = (float(x) for x in m.groups())
            if a.state:
                # what it adopted: a kill in the middle of a frame gives
                # that frame's connection up (ser_state.c)
                m = re.search(r"given up \(a frame in progress when it ended\): (\d+) "
                              r"connection\(s\), (\d+) word\(s\)",
                              topo.sw.stderr() + topo.sw.stdout())
                if m:
                    ev["given_up_conns"], ev["given_up_words"] = (int(x) for x in m.groups())
                # remapping's: a kill in one of a server's frames gives
                # that server's lanes up (remap_state.c)
                m = re.search(r"given up \(a frame in progress when it ended: (yes|none)\): "
                              r"(\d+) server\(s\), (\d+) connection\(s\)",
                              topo.sw.stderr() + topo.sw.stdout())
                if m:
                    ev["remap_torn"] = m.group(1) == "yes"
                    ev["given_up_servers"], ev["given_up_remapped"] = (
                        int(x) for x in m.groups()[1:])
            ev["clients_alive"] = sum(1 for p in procs if p.p.poll() is None)
            t.log("restart %d: swordd down %.3f s (SIGKILL, %d ms, start: main to forwarding "
                  "%s s, EAL %s s, tables %s s); before the kill: %s"
                  % (i + 1, ev["outage_s"], a.outage_ms, ev.get("start_s"), ev.get("eal_s"),
                     ev.get("tables_s"), ev["before_kill"]))
            events.append(ev)
            time.sleep(a.between)

    duration = a.warmup + a.restarts * (a.between + a.outage_ms / 1000.0 + 3) + 3
    sjs, cjs, rcs = e2e.run(topo, workload=a.workload, clients=a.clients, qps=a.qps,
                            duration=duration, locks=a.locks, rto_us=a.rto_us,
                            max_retries=a.max_retries, initial_psn=a.initial_psn,
                            client_timeout=duration + 120, during=during)
    # the last instance forwards on the same ports (its clients may all be
    # gone: see the module docstring)
    t.check(subprocess.run(t.in_ns(topo.ns_c, ["ping", "-c", "3", "-W", "2", e2e.SERVER_IP]),
                           stdout=subprocess.DEVNULL).returncode == 0,
            "no ping through the last swordd")
    final = topo.stop_swordd()

    # ---- what the clients saw
    n_qps = a.clients * a.qps
    tags = set(range(1, n_qps + 1))          # roce-peer: tag = global QP index + 1
    fig = {"restarts": events, "clients": [], "duration_s": round(duration, 1)}
    for c, rc in zip(cjs, rcs):
        fig["clients"].append({k: c.get(k) for k in (
            "client_id", "ops", "retries", "retx_pkts", "timeouts", "naks_seq",
            "implied_naks", "qp_errors", "violations", "errors")} | {"rc": rc})
        t.log("client %d: rc=%d ops=%d retries=%d retx=%d timeouts=%d naks=%d implied=%d "
              "qp_errors=%d violations=%d errors=%r"
              % (c["client_id"], rc, c["ops"], c["retries"], c["retx_pkts"], c["timeouts"],
                 c["naks_seq"], c["implied_naks"], c["qp_errors"], c["violations"],
                 c["errors"]))
    locking = a.workload != "cas-bench"
    words = sjs["lock_words"][:sjs["_dumped_words"]] if locking else []
    recs = sjs["records"][:a.locks] if locking else []
    leaked = [(i, w) for i, w in enumerate(words) if w != 0]
    held = [(i, r[0]) for i, r in enumerate(recs) if r[0] != 0]
    fig.update({
        "ops": sum(c["ops"] for c in cjs),
        "qp_errors": sum(c["qp_errors"] for c in cjs),
        "timeouts": sum(c["timeouts"] for c in cjs),
        "retx_pkts": sum(c["retx_pkts"] for c in cjs),
        "violations": sum(c["violations"] for c in cjs),
        "leaked_locks": [{"lock": i, "word": w} for i, w in leaked],
        "holders_left": [{"lock": i, "holder": h} for i, h in held],
        "server": {k: sjs.get(k) for k in ("rx_frames", "writes", "atomics", "naks_seq",
                                           "dup_writes", "dup_reads", "dup_atomics",
                                           "dup_unknown")},
        "swordd_last": {k: final.get(k) for k in SNAP_KEYS if k in final},
    })
    t.log("restart figures: %d restarts (outages %s s; swordd's own start %s s), ops=%d, "
          "qp_errors=%d, "
          "timeouts=%d, retx=%d, violations=%d, leaked locks=%s, holders left=%s"
          % (len(events), [e["outage_s"] for e in events], [e.get("start_s") for e in events],
             fig["ops"], fig["qp_errors"],
             fig["timeouts"], fig["retx_pkts"], fig["violations"], leaked, held))
    if a.state:
        torn = [e for e in events if e.get("given_up_conns")]
        fig["torn_restarts"] = len(torn)
        t.log("restarts killed in the middle of a frame: %d (connections given up: %s)"
              % (len(torn), [e["given_up_conns"] for e in torn]))
        if a.remap:
            rtorn = [e for e in events if e.get("remap_torn") or e.get("given_up_servers")]
            fig["remap_torn_restarts"] = len(rtorn)
            t.log("restarts that gave remapped servers up: %d (servers, connections: %s)"
                  % (len(rtorn), [(e.get("given_up_servers"), e.get("given_up_remapped"))
                                  for e in rtorn]))
    t.log("server: %s" % fig["server"])
    t.log("swordd (last instance): %s" % fig["swordd_last"])
    if a.json:
        with open(a.json, "w") as f:
            json.dump(fig, f, indent=1)

    # ---- safety
    for c in cjs:
        t.check_eq(c["violations"], 0, "client %d violations (%r)"
                   % (c["client_id"], c["violation_msgs"]))
        t.check_eq(c["rx_bad_icrc"], 0, "client %d frames with a bad ICRC" % c["client_id"])
    t.check_eq(sjs["rx_bad_icrc"], 0, "server frames with a bad ICRC")
    t.check_eq(sjs["rx_malformed"], 0, "server malformed frames")
    t.check_eq(sjs["naks_access"] + sjs["naks_invalid"], 0, "server access/invalid NAKs")
    t.check_eq(final.get("malformed", 0), 0, "swordd malformed (last instance)")
    for i in range(len(recs)):
        # A critical section whose QP failed after it posted the record write
        # and the release is in doubt: the server may have run both (the
        # client never saw the ACK), so the counter may be one ahead for it.
        cs = sum(c["cs_per_lock"][i] for c in cjs)
        doubt = sum(c["cs_in_doubt_per_lock"][i] for c in cjs)
        t.check(cs <= recs[i][1] <= cs + doubt,
                "lock %d: counter in memory %d vs critical sections completed by all "
                "clients %d (+ %d in doubt: lost or doubled write)"
                % (i, recs[i][1], cs, doubt))
    for i, w in leaked:
        if a.workload == "rcuckoo-lock":
            # 64 one-bit locks to a word: any bits may be held
            continue
        t.check(w in tags, "lock %d word %#x is no QP's tag: memory corrupted" % (i, w))
    for i, h in held:
        t.check(h in tags, "lock %d record holder %#x is no QP's tag: memory corrupted"
                % (i, h))
    t.check(fig["ops"] > 0, "no operation completed")
    if a.workload == "cas-bench":
        check_faa(sjs, cjs, fig)
    if a.remap:
        first = events[0]["before_kill"] if events else {}
        t.check(first.get("fn_remap_stitched", 0) > 0,
                "nothing was remapped before the first kill: %r" % first)
    if a.state:
        # each instance says what it found (its log's "state:" lines)
        adopted = [ln for ln in topo.sw.stderr().splitlines() + topo.sw.stdout().splitlines()
                   if "state: " in ln]
        t.log("last instance: %s" % adopted)
        if a.upgrade:
            t.check(any("made for another build or configuration" in ln for ln in adopted),
                    "the last instance did not refuse the other layout: %r" % adopted)
            t.check(any("learn_holdoff_ms raised" in ln for ln in adopted),
                    "the last instance, empty after another ran, did not hold learning "
                    "off: %r" % adopted)
            t.log("drains: %s s" % [e["drain_s"] for e in events])
        else:
            t.check(any("adopted (generation %d)" % (a.restarts + 1) in ln for ln in adopted),
                    "the last instance did not adopt the state: %r" % adopted)
        t.check_eq(fig["qp_errors"], 0, "QP errors across restarts with --state")
        t.check_eq(leaked, [], "locks left held at the end with --state")
    if a.no_accel:
        # pass-through: swordd keeps no state the endpoints depend on, so
        # an outage inside the retry budget costs retransmissions only
        t.check_eq(fig["qp_errors"], 0, "QP errors across restarts in pass-through")


if __name__ == "__main__":
    t.main(body)
