#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
run_summary.py — the demo's closing summary for scripts/run.sh: reads the
JSON each run left (clients, memory server, swordd's --stats-json) under
WORK/MODE/runK (MODE passthrough, accel, remap, accel-remap or direct;
K = 1..--repeat) with the per-second series run.sh recorded, prints the
runs (with what each takes off the memory server: the atomics it executed
per second and the server QPs that carried the requests) and the endpoints'
checks, writes --json, exits 1 if a check failed.  When the memory server
modelled an RNIC atomic unit (run.sh --atomic-unit, on by default), the
summary and the JSON say it is a model, with its rate and how many atomics
waited for it in each run.  Each mode's runs give a median and min-max of lock
ops/s, server atomics/s and the ratio to pass-through (run K of a mode over run
K of pass-through: they ran back to back).

    run_summary.py WORK LOCKS CLIENTS JSON_OUT_OR_EMPTY
"""
import json, os, re, signal, statistics, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)   # a second Ctrl-C: the summary still comes
work, locks, nclients, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]

def load(p):
    try:
        with open(p) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None

MODES = ("direct", "passthrough", "accel", "remap", "accel-remap")
WHAT = {"direct": "direct (no swordd)", "passthrough": "pass-through", "accel": "acceleration",
        "remap": "remapping", "accel-remap": "acceleration + remapping"}


def progress(path, pat):
    """(t, cumulative count) from an endpoint's progress lines"""
    out = []
    try:
        with open(path) as f:
            for line in f:
                m = re.match(pat, line)
                if m:
                    out.append((float(m.group(1)), int(m.group(2))))
    except OSError:
        pass
    return out


def at(pts, t):
    """the count at time t: the last progress line at or before it"""
    v = 0
    for pt, n in pts:
        if pt > t + 0.05:   # lines come every 0.25 s, printed to 0.1 s
            break
        v = n
    return v


def series(d, nclients):
    """per-second lock ops/s (all clients) and server atomics/s, from the
    endpoints' progress lines, on run.sh's clock (0 = when it began
    starting the clients): each client's clock shifted by when it started
    (client-starts), the server's by its time then (server-t0); the seconds
    every client ran through"""
    out = {"t_s": [], "lock_ops_per_s": [], "server_atomics_per_s": []}
    cl = [progress(os.path.join(d, "client%d.log" % i), r"client \d+ t=([0-9.]+)s ops=(\d+) ")
          for i in range(nclients)]
    srv = progress(os.path.join(d, "server.log"), r"server t=([0-9.]+)s rx=.* atomics=(\d+) ")
    try:
        with open(os.path.join(d, "server-t0")) as f:
            s0 = float(f.read().strip() or 0)
    except (OSError, ValueError):
        s0 = 0.0
    try:
        with open(os.path.join(d, "client-starts")) as f:
            off = [int(x) / 1000 for x in f.read().split()]
    except (OSError, ValueError):
        off = []
    off = (off + [0.0] * nclients)[:nclients]
    if not all(cl):
        return out
    end = int(min(c[-1][0] + o for c, o in zip(cl, off)) + 0.05)
    for k in range(1, end + 1):
        out["t_s"].append(k)
        out["lock_ops_per_s"].append(sum(at(c, k - o) - at(c, k - 1 - o) for c, o in zip(cl, off)))
        out["server_atomics_per_s"].append(at(srv, s0 + k) - at(srv, s0 + k - 1))
    return out


def run_dirs():
    """(mode, K, directory) in the order run.sh ran them: round K, each mode"""
    found = []
    for label in MODES:
        base = os.path.join(work, label)
        if not os.path.isdir(base):
            continue
        for n in os.listdir(base):
            m = re.fullmatch(r"run(\d+)", n)
            if m:
                found.append((int(m.group(1)), MODES.index(label), label, os.path.join(base, n)))
    return [(label, k, d) for k, _, label, d in sorted(found)]


runs, ok = [], True
for label, k, d in run_dirs():
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
    if sw is None and label != "direct":
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
    run = {"mode": label, "run": k, "ops": ops, "seconds": secs, "lock_ops_per_s": ops / secs,
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
           "ok": not why, "failures": why, "series": series(d, nclients)}
    ok = ok and not why
    runs.append(run)

print("  %-26s %11s %9s %9s %9s %6s %5s %6s %9s %11s %7s %s" % (
      "run", "lock ops/s", "p50 us", "p99 us*", "retries", "retx", "viol", "qperr",
      "rewrites", "srv atom/s", "srv QPs", "checks"))
for r in runs:
    name = "%s #%d" % (r["mode"], r["run"]) + (" (no impl)" if r["no_impl"] else "") + \
        (" (interrupted)" if r["interrupted"] else "")
    print("  %-26s %11.0f %9.0f %9.0f %9d %6d %5d %6d %9d %11.0f %7d %s" % (
        name, r["lock_ops_per_s"], r["p50_us"], r["p99_us"], r["retries"], r["retx"],
        r["violations"], r["qp_errors"], r["rewrites"], r["server_atomics_per_s"],
        r["server_qps"], "ok" if r["ok"] else "FAILED"))
    for w in r["failures"]:
        print("    %s #%d: %s" % (r["mode"], r["run"], w))
if not runs:
    print("  (no run completed)")
print("  (* worst client's p99; checks = no violation, no QP error, no retry storm,")
print("     every lock word free and every lock's counter in server memory equal")
print("     to the critical sections all clients completed; srv atom/s = atomics the")
print("     memory server executed per second; srv QPs = server QPs that took >= 1%")
print("     of the requests)")
rates = sorted({r["atomic_unit_rate"] for r in runs if r["atomic_unit_rate"]})
model = {"model": bool(rates), "atomics_per_s_per_address": rates[0] if len(rates) == 1 else rates,
         "note": ("a MODEL of an RNIC atomic unit in the software memory server, not a NIC: "
                  "atomics on one 8-byte word run one at a time at this rate") if rates else
                 "no model: the software memory server is never bound by its atomics"}
if rates:
    print("  memory server: modelled atomic unit, %s atomics/s per address (a model of an"
          " RNIC's, not a NIC)" % " / ".join("%g" % x for x in rates))
    for r in runs:
        print("    %s #%d: %d atomics waited for it, %.2f s modelled wait in all" % (
              r["mode"], r["run"], r["atomics_waited"], r["atomic_wait_s"]))
else:
    print("  memory server: no modelled atomic unit (never bound by its atomics: "
          "acceleration cannot gain here)")


def spread(xs):
    if not xs:
        return None
    return {"median": statistics.median(xs), "min": min(xs), "max": max(xs), "n": len(xs)}


def fmt(sp, f="%.0f"):
    if sp is None:
        return "-"
    if sp["n"] == 1:
        return f % sp["median"]
    return (f + " (" + f + "-" + f + ")") % (sp["median"], sp["min"], sp["max"])


base = {r["run"]: r for r in runs if r["mode"] == "passthrough" and r["lock_ops_per_s"] > 0}
modes = []
for m in MODES:
    rs = [r for r in runs if r["mode"] == m]
    if not rs:
        continue
    pairs = [(r, base[r["run"]]) for r in rs if r["run"] in base and not r["no_impl"]]
    modes.append({
        "mode": m, "runs": len(rs), "ok": all(r["ok"] for r in rs),
        "no_impl": any(r["no_impl"] for r in rs),
        "lock_ops_per_s": spread([r["lock_ops_per_s"] for r in rs]),
        "server_atomics_per_s": spread([r["server_atomics_per_s"] for r in rs]),
        "server_qps": spread([r["server_qps"] for r in rs]),
        "ratio_to_passthrough": None if m == "passthrough" else
        spread([r["lock_ops_per_s"] / b["lock_ops_per_s"] for r, b in pairs])})
print()
print("  %-26s %24s %22s %14s   %s" % ("mode: median (min-max)", "lock ops/s", "srv atomics/s",
                                      "srv QPs", "lock ops/s / pass-through"))
for m in modes:
    print("  %-26s %24s %22s %14s   %s" % (
        WHAT[m["mode"]] + " x%d" % m["runs"], fmt(m["lock_ops_per_s"]),
        fmt(m["server_atomics_per_s"]), fmt(m["server_qps"]),
        fmt(m["ratio_to_passthrough"], "%.2fx") if m["ratio_to_passthrough"] else "-"))
for m in modes:
    if m["mode"] == "passthrough" or not base:
        continue
    if m["no_impl"]:
        print("  no %s ratio: this swordd passed the run through" % m["mode"])
    elif m["ratio_to_passthrough"]:
        q = m["ratio_to_passthrough"]
        print("  %s / pass-through: %.2fx lock ops/s (median of %d; %.2fx-%.2fx)%s" % (
              WHAT[m["mode"]], q["median"], q["n"], q["min"], q["max"],
              " with the modelled atomic unit" if rates else ""))
if out:
    with open(out, "w") as f:
        json.dump({"ok": ok, "atomic_unit": model, "modes": modes, "runs": runs}, f, indent=1)
sys.exit(0 if ok else 1)
