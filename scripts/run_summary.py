#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
run_summary.py — the demo's closing summary for scripts/run.sh: reads the
JSON each run left (clients, memory server, swordd's --stats-json) under
WORK/passthrough, WORK/accel, WORK/remap and WORK/accel-remap, prints the
runs (with what each takes off the memory server: the atomics it executed
per second and the server QPs that carried the requests) and the endpoints'
checks, writes --json, exits 1 if a check failed.  When the memory server
modelled an RNIC atomic unit (run.sh --atomic-unit), the summary says so,
with its rate and how many atomics waited for it in each run.  It lived in a bash
heredoc in run.sh; here it can be linted.

    run_summary.py WORK LOCKS CLIENTS JSON_OUT_OR_EMPTY
"""
import json, os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)   # a second Ctrl-C: the summary still comes
work, locks, nclients, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]

def load(p):
    try:
        with open(p) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None

runs, ok = [], True
for label in ("passthrough", "accel", "remap", "accel-remap"):
    d = os.path.join(work, label)
    if not os.path.isdir(d):
        continue
    cl = [load(os.path.join(d, "client%d.json" % i)) for i in range(nclients)]
    missing = sum(c is None for c in cl)
    cl = [c for c in cl if c]
    srv = load(os.path.join(d, "server.json"))
    sw = load(os.path.join(d, "swordd.json"))
    why = []
    if missing:
        why.append("%d client(s) wrote no summary" % missing)
    if srv is None:
        why.append("the memory server wrote no summary")
    if sw is None:
        why.append("swordd wrote no final counters")
    if os.path.exists(os.path.join(d, "killed")):
        why.append("a process had to be killed")
    ops = sum(c["ops"] for c in cl)
    secs = max([c["seconds"] for c in cl] + [1e-9])
    viol = sum(c["violations"] for c in cl)
    qpe = sum(c["qp_errors"] for c in cl)
    if viol:
        why.append("violations")
    if qpe:
        why.append("QP errors")
    if any(c["retry_storm"] for c in cl):
        why.append("retry storm")
    errs = [e for c in cl for e in c["errors"]]
    if errs:
        why.append("client errors: " + "; ".join(errs[:4]))
    if srv is not None and not missing:
        cs = [sum(c["cs_per_lock"][i] for c in cl) for i in range(locks)]
        if [r[1] for r in srv["records"][:locks]] != cs:
            why.append("lock counters in memory != critical sections completed")
        if any(w != 0 for w in srv["lock_words"][:locks]):
            why.append("lock words not all free at the end")
    sw = sw or {}
    run = {"mode": label, "ops": ops, "seconds": secs, "lock_ops_per_s": ops / secs,
           "p50_us": sorted(c["lat_p50_us"] for c in cl)[len(cl) // 2] if cl else 0,
           "p99_us": max((c["lat_p99_us"] for c in cl), default=0),
           "retries": sum(c["retries"] for c in cl), "retx": sum(c["retx_pkts"] for c in cl),
           "violations": viol, "qp_errors": qpe,
           "managed_rx": sw.get("managed_rx", 0), "rewrites": sw.get("rewritten", 0),
           "server_atomics_per_s": (srv or {}).get("atomics", 0) / secs,
           # the server's modelled atomic unit (0: none), and what waited for it
           "atomic_unit_rate": (srv or {}).get("atomic_unit_rate", 0),
           "atomics_waited": (srv or {}).get("aunit_waited", 0),
           "atomic_wait_s": (srv or {}).get("aunit_wait_ns", 0) / 1e9,
           # QPs that took at least 1% of the requests (a connection's few
           # requests before remapping binds it do not count)
           "server_qps": sum(1 for n in (srv or {}).get("qp_executed", [])
                             if n * 100 >= sum((srv or {}).get("qp_executed", [])) or 0),
           "server_qps_any": len((srv or {}).get("qp_executed", [])),
           "no_impl": os.path.exists(os.path.join(d, "noimpl")),
           "interrupted": os.path.exists(os.path.join(d, "interrupted")),
           "ok": not why, "failures": why}
    ok = ok and not why
    runs.append(run)

print("  %-26s %11s %9s %9s %9s %6s %5s %6s %9s %11s %7s %s" % (
      "run", "lock ops/s", "p50 us", "p99 us*", "retries", "retx", "viol", "qperr",
      "rewrites", "srv atom/s", "srv QPs", "checks"))
for r in runs:
    name = r["mode"] + (" (no impl)" if r["no_impl"] else "") + (" (interrupted)" if r["interrupted"] else "")
    print("  %-26s %11.0f %9.0f %9.0f %9d %6d %5d %6d %9d %11.0f %7d %s" % (
        name, r["lock_ops_per_s"], r["p50_us"], r["p99_us"], r["retries"], r["retx"],
        r["violations"], r["qp_errors"], r["rewrites"], r["server_atomics_per_s"],
        r["server_qps"], "ok" if r["ok"] else "FAILED"))
    for w in r["failures"]:
        print("    %s: %s" % (r["mode"], w))
if not runs:
    print("  (no run completed)")
print("  (* worst client's p99; checks = no violation, no QP error, no retry storm,")
print("     every lock word free and every lock's counter in server memory equal")
print("     to the critical sections all clients completed; srv atom/s = atomics the")
print("     memory server executed per second; srv QPs = server QPs that took >= 1%")
print("     of the requests)")
rates = sorted({r["atomic_unit_rate"] for r in runs if r["atomic_unit_rate"]})
if rates:
    print("  memory server: modelled atomic unit, %s atomics/s per address (a model of an"
          " RNIC's, not a NIC)" % " / ".join("%g" % x for x in rates))
    for r in runs:
        print("    %s: %d atomics waited for it, %.2f s modelled wait in all" % (
              r["mode"], r["atomics_waited"], r["atomic_wait_s"]))
base = [r for r in runs if r["mode"] == "passthrough"]
for r in runs:
    if r["mode"] == "passthrough" or not base or base[0]["lock_ops_per_s"] <= 0:
        continue
    if r["no_impl"]:
        print("  no %s ratio: this swordd passed the run through" % r["mode"])
    else:
        what = {"accel": "acceleration", "remap": "remapping",
                "accel-remap": "acceleration + remapping"}.get(r["mode"], r["mode"])
        print("  %s / pass-through: %.2fx lock ops/s, server atomics %.0f/s -> %.0f/s, "
              "server QPs %d -> %d" % (what, r["lock_ops_per_s"] / base[0]["lock_ops_per_s"],
                                       base[0]["server_atomics_per_s"], r["server_atomics_per_s"],
                                       base[0]["server_qps"], r["server_qps"]))
if out:
    with open(out, "w") as f:
        json.dump({"ok": ok, "runs": runs}, f, indent=1)
sys.exit(0 if ok else 1)
