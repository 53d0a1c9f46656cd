#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
bench_e2e.py — load figures, not a test: aggregate lock ops/s and p99 for N
contending sherman-lock clients, on three paths in one run:

  direct       client netns -- veth pair -- server netns (no swordd)
  passthrough  through swordd two-port, atomic_replacement = off
  accel        through swordd, atomic_replacement = on (reported as
               "no implementation" while swordd lacks it)

Each path is run --reps times, interleaved (direct, passthrough, accel,
direct, ...), so drift hits all alike; medians and ratios to direct are
printed, plus each run's checks (a run that fails its checks is reported).

  sudo SWORDD=build/app/swordd/swordd ROCE_PEER=build/app/roce-peer/roce-peer \
      /usr/bin/python3 tests/e2e/bench_e2e.py --clients 4 --duration 5 --reps 3

The endpoints are software (one AF_PACKET syscall per frame) sharing the
machine's cores with swordd's busy-polling lcores: these are functional
load figures, not RNIC numbers.
"""

import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e  # noqa: E402
from e2e import t  # noqa: E402


def one(path, a):
    accel = path == "accel"
    topo = e2e.Topology("direct" if path == "direct" else "swordd", accel=accel)
    sjs, cjs, rcs = e2e.run(topo, workload="sherman-lock", clients=a.clients, qps=a.qps,
                            duration=a.duration, locks=a.locks, rto_us=a.rto_us)
    ok = True
    try:
        e2e.check_run(sjs, cjs, rcs, "sherman-lock", a.locks)
    except t.TestFailure as e:
        ok = False
        t.log("  checks FAILED:", e)
    secs = max(c["seconds"] for c in cjs)
    sw_cpu = 0.0
    if topo.sw:
        # swordd's CPU over its whole life (busy-polling lcores), per second of run
        with open("/proc/%d/stat" % topo.sw.proc.pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        sw_cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        sw_cpu /= max(1e-9, __import__("time").monotonic() - topo.t_start)
    st = topo.stop_swordd() or {}
    res = {
        "path": path,
        "ops_per_s": sum(c["ops"] for c in cjs) / secs,
        "p99_us": max(c["lat_p99_us"] for c in cjs),
        "p50_us": statistics.median(c["lat_p50_us"] for c in cjs),
        "rdma_p50_us": statistics.median(c["rdma_p50_us"] for c in cjs),
        "retries": sum(c["retries"] for c in cjs),
        "retx": sum(c["retx_pkts"] for c in cjs),
        "rewritten": st.get("rewritten", 0),
        "noimpl": accel and not topo.accel_available(),
        # CPU used over the run's wall time: 1.0 = one core busy
        "server_cpu": (sjs["_cpu_s"] or 0) / secs,
        "clients_cpu": sum(c["_cpu_s"] or 0 for c in cjs) / secs,
        "swordd_cpu": sw_cpu,
        "ok": ok,
    }
    t.run_cleanups()  # namespaces, swordd: each run starts clean
    return res


def main():
    t.require_root()
    ap = argparse.ArgumentParser()
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--qps", type=int, default=1)
    ap.add_argument("--locks", type=int, default=4)
    ap.add_argument("--duration", type=float, default=5)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--rto-us", type=int, default=20000)
    ap.add_argument("--paths", default="direct,passthrough,accel")
    ap.add_argument("--json")
    a, _ = ap.parse_known_args()
    paths = a.paths.split(",")
    runs = {p: [] for p in paths}
    for rep in range(a.reps):
        for p in paths:
            r = one(p, a)
            runs[p].append(r)
            t.log("rep %d %-12s %9.0f lock ops/s  p50 %6.0f us  p99 %7.0f us  retries %d "
                  "retx %d rewritten %d  cpu server %.2f clients %.2f swordd %.2f%s%s"
                  % (rep, p, r["ops_per_s"], r["p50_us"], r["p99_us"],
                     r["retries"], r["retx"], r["rewritten"], r["server_cpu"], r["clients_cpu"], r["swordd_cpu"],
                                              " (no accel impl)" if r["noimpl"] else "",
                                              "" if r["ok"] else " CHECKS FAILED"))
    t.log("\n%d clients x %d QP, %d locks, %.0fs per run, median of %d:"
          % (a.clients, a.qps, a.locks, a.duration, a.reps))
    base = statistics.median(r["ops_per_s"] for r in runs[paths[0]])
    summary = {}
    for p in paths:
        ops = statistics.median(r["ops_per_s"] for r in runs[p])
        p99 = statistics.median(r["p99_us"] for r in runs[p])
        p50 = statistics.median(r["p50_us"] for r in runs[p])
        summary[p] = {"ops_per_s": ops, "p99_us": p99, "p50_us": p50,
                      "ratio_to_" + paths[0]: ops / base if base else 0,
                      "all_ok": all(r["ok"] for r in runs[p]), "runs": runs[p]}
        t.log("  %-12s %9.0f lock ops/s  p50 %6.0f us  p99 %7.0f us  %.2fx %s  cpu server %.2f "
              "clients %.2f swordd %.2f%s%s"
              % (p, ops, p50, p99, ops / base if base else 0, paths[0],
                 statistics.median(r["server_cpu"] for r in runs[p]),
                 statistics.median(r["clients_cpu"] for r in runs[p]),
                 statistics.median(r["swordd_cpu"] for r in runs[p]),
                 " (no accel impl: passed through)" if any(r["noimpl"] for r in runs[p]) else "",
                 "" if summary[p]["all_ok"] else "  SOME RUNS FAILED CHECKS"))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(summary, f, indent=1)


if __name__ == "__main__":
    try:
        main()
    finally:
        t.run_cleanups()
