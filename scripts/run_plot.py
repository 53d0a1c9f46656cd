#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
run_plot.py — the demo's picture: draws run_summary.py's JSON (scripts/run.sh
--plot FILE) as two panels sharing the time axis: lock ops/s per mode over
time (every run of a mode in its colour, the median run bold) and the
atomics the memory server executed per second.  The title says when the
memory server's atomic unit was a model.  FILE ends .svg or .png.

    run_plot.py SUMMARY.json FILE.svg|FILE.png

With --sweep, SUMMARY.json is scripts/bench-locks.sh's and the picture is
lock ops/s (median, min-max bars) against the number of clients per mode.
"""
import json
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

# the SVG keeps its text as text (a test reads the labels back)
plt.rcParams["svg.fonttype"] = "none"
# and every sample a vertex of its line (a test counts them)
plt.rcParams["path.simplify"] = False

COLOR = {"direct": "#7f7f7f", "passthrough": "#d62728", "accel": "#1f77b4",
         "remap": "#ff7f0e", "accel-remap": "#2ca02c"}
WHAT = {"direct": "direct (no swordd)", "passthrough": "pass-through",
        "accel": "acceleration", "remap": "remapping",
        "accel-remap": "acceleration + remapping"}


def model_line(js):
    m = js.get("atomic_unit") or {}
    if m.get("model"):
        return ("memory server: MODELLED atomic unit, %s atomics/s per address "
                "(a model of an RNIC's, not a NIC)" % m["atomics_per_s_per_address"])
    return "memory server: no modelled atomic unit (software, never bound by its atomics)"


def timeline(js, path):
    fig, (a1, a2) = plt.subplots(2, 1, figsize=(9, 6.5), sharex=True,
                                 gridspec_kw={"height_ratios": [3, 2]})
    modes = [m["mode"] for m in js["modes"]]
    for m in js["modes"]:
        rs = [r for r in js["runs"] if r["mode"] == m["mode"] and r["series"]["t_s"]]
        if not rs:
            continue
        med = m["lock_ops_per_s"]["median"]
        best = min(rs, key=lambda r: abs(r["lock_ops_per_s"] - med))
        c = COLOR.get(m["mode"], "black")
        q = m.get("ratio_to_passthrough")
        label = WHAT.get(m["mode"], m["mode"]) + " (median %.0f/s" % med
        label += (", %.2fx pass-through)" % q["median"]) if q else ")"
        for r in rs:
            s = r["series"]
            heavy = r is best
            # gid: the SVG names each series (ops-MODE-RUN, atomics-MODE-RUN)
            a1.plot(s["t_s"], s["lock_ops_per_s"], color=c, marker="o", ms=3 if heavy else 2,
                    lw=2.2 if heavy else 0.8, alpha=1 if heavy else 0.35,
                    label=label if heavy else None, gid="ops-%s-%d" % (m["mode"], r["run"]))
            a2.plot(s["t_s"], s["server_atomics_per_s"], color=c, marker="o", ms=3 if heavy else 2,
                    lw=2.2 if heavy else 0.8, alpha=1 if heavy else 0.35,
                    label=WHAT.get(m["mode"], m["mode"]) if heavy else None,
                    gid="atomics-%s-%d" % (m["mode"], r["run"]))
    n = max((m["runs"] for m in js["modes"]), default=0)
    a1.set_title("sword demo: lock throughput per mode (%d run%s each; bold = median run)\n%s"
                 % (n, "" if n == 1 else "s", model_line(js)), fontsize=10)
    a1.set_ylabel("lock ops/s (all clients)")
    a2.set_ylabel("server atomics/s")
    a2.set_xlabel("seconds since the clients were started")
    a2.xaxis.set_major_locator(MaxNLocator(integer=True))
    for a in (a1, a2):
        a.set_ylim(bottom=0)
        a.grid(alpha=0.3)
    a1.legend(loc="lower right", fontsize=8, framealpha=0.9)
    a2.legend(loc="center right", fontsize=8, framealpha=0.9)
    if not modes:
        a1.text(0.5, 0.5, "no run completed", ha="center", transform=a1.transAxes)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def sweep(js, path):
    fig, ax = plt.subplots(figsize=(8, 5))
    nm = len(js["series"])
    for i, (mode, pts) in enumerate(js["series"].items()):
        pts = sorted(pts, key=lambda p: p["clients"])
        # modes side by side at each count, so their min-max bars stay apart
        x = [p["clients"] + (i - (nm - 1) / 2) * 0.08 for p in pts]
        y = [p["lock_ops_per_s"]["median"] for p in pts]
        lo = [p["lock_ops_per_s"]["median"] - p["lock_ops_per_s"]["min"] for p in pts]
        hi = [p["lock_ops_per_s"]["max"] - p["lock_ops_per_s"]["median"] for p in pts]
        eb = ax.errorbar(x, y, yerr=[lo, hi], color=COLOR.get(mode, "black"), marker="o",
                         capsize=3, lw=2, label=WHAT.get(mode, mode))
        eb.lines[0].set_gid("sweep-" + mode)   # the SVG names the line
    n = js["repeat"]
    ax.set_title("lock throughput against clients (%s)\n%s" % (
        "median and min-max of %d runs each" % n if n > 1 else "1 run each", model_line(js)),
        fontsize=10)
    ax.set_xlabel("clients (1 QP each, %d locks)" % js["locks"])
    ax.set_ylabel("lock ops/s (all clients)")
    ax.set_xticks(sorted({p["clients"] for pts in js["series"].values() for p in pts}))
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    args = sys.argv[1:]
    sw = "--sweep" in args
    args = [a for a in args if a != "--sweep"]
    if len(args) != 2 or not args[1].endswith((".svg", ".png")):
        sys.exit("usage: run_plot.py [--sweep] SUMMARY.json FILE.svg|FILE.png")
    with open(args[0]) as f:
        js = json.load(f)
    (sweep if sw else timeline)(js, args[1])


if __name__ == "__main__":
    main()
