#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
README's main command, scripts/run.sh (the demo), without setup.sh:
  1. the default load (its modelled atomic unit on) with --duration 4
     --repeat 2 --plot FILE.svg: exits 0 within a bound; the banner and the
     summary label the memory server's atomic unit a model with its default
     rate, and so does --json; the summary (printed, and --json) has the runs
     interleaved, pass-through and lock acceleration twice, each with lock
     ops > 0, zero violations, zero QP errors, every check ok (memory
     counters equal the critical sections completed); rewrites > 0 with
     acceleration and 0 in pass-through; live progress lines were printed;
     each mode's median and min-max, the ratio's too; --json has every run's
     per-second series (lock ops/s, server atomics/s); the SVG parses and
     holds one line per run and panel with as many points as the series,
     the labels and the model's; the same JSON drawn as PNG is a PNG, and
     as bench-locks.sh's picture (run_plot.py --sweep) an SVG with its series;
  2. Ctrl-C: SIGINT to run.sh's process group (what a terminal does) in the
     middle of an accelerated run: exits 130, says it was interrupted, the
     summary covers the interrupted run and its checks still hold (the
     clients finish their critical sections before the server and swordd
     stop).
     (--atomic-unit 0: no model, so nothing waited for one)
  3. --mode direct --no-atomic-unit (no swordd, a veth pair; no model): the
     banner and the summary say there is no model; --atomic-unit -1 and abc
     are refused before anything starts.
After each run nothing is left: namespaces, taps, processes, the
/var/run/dpdk directory, the temp directory.
"""

import glob
import json
import struct
import time
import xml.etree.ElementTree as ET
import os
import re
import signal
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e  # noqa: E402,F401  (sets up the import path of swordtest)
from e2e import t  # noqa: E402


def leftovers(pid):
    left = []
    ns = t.sh(["ip", "netns", "list"]).stdout.split()
    for n in ("demoC%d" % pid, "demoS%d" % pid):
        if n in ns:
            left.append("netns " + n)
    links = t.sh(["ip", "-o", "link"]).stdout
    for i in ("dmc%d" % pid, "dms%d" % pid):
        if (" %s:" % i) in links or (" %s@" % i) in links:
            left.append("interface " + i)
    if os.path.exists("/var/run/dpdk/demo%d" % pid):
        left.append("/var/run/dpdk/demo%d" % pid)
    left += glob.glob("/tmp/sword-demo-%d-*" % pid)
    r = t.sh(["pgrep", "-f", "(demo|dmc|dms)%d( |$)" % pid], check_rc=False)
    if r.stdout.strip():
        left.append("processes " + " ".join(r.stdout.split()))
    return left


def start(opts, d, name):
    run_sh = os.path.join(t.args().source_root, "scripts", "run.sh")
    cmd = [run_sh, "--no-setup", "--build", t.args().build_root] + opts
    t.log("+", " ".join(cmd))
    out = open(os.path.join(d, name + ".out"), "w")
    # Own process group (we signal it like a terminal would), and SIGINT
    # at its default: a non-interactive shell cannot trap a signal that
    # was ignored when it started.
    p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                         start_new_session=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))

    def kill():
        if p.poll() is None:
            t.log("run.sh %d still running; processes:\n%s" % (p.pid, t.sh(
                ["ps", "-o", "pid,pgid,stat,wchan:20,cmd", "-g", str(p.pid)], check_rc=False).stdout))
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        # swordd and the endpoints run in sessions of their own
        r = t.sh(["pgrep", "-f", "(demo|dmc|dms)%d( |$)" % p.pid], check_rc=False)
        for pid in r.stdout.split():
            try:
                os.kill(int(pid), signal.SIGKILL)
            except ProcessLookupError:
                pass
        for n in ("demoC%d" % p.pid, "demoS%d" % p.pid):
            t.sh(["ip", "netns", "del", n], check_rc=False)
        for w in glob.glob("/tmp/sword-demo-%d-*" % p.pid):
            t.sh(["rm", "-rf", w], check_rc=False)
        t.sh(["rm", "-rf", "/var/run/dpdk/demo%d" % p.pid], check_rc=False)
    t.on_cleanup(kill)
    return p, os.path.join(d, name + ".out")


def check_summary(out, js, runs, interrupted=False):
    """runs: [(mode, run number)] in the order they ran"""
    t.check(js is not None, "no --json summary")
    t.check_eq([(r["mode"], r["run"]) for r in js["runs"]], runs, "runs in the summary")
    t.check(js["ok"], "summary checks failed: %r" % [r["failures"] for r in js["runs"]])
    for r in js["runs"]:
        m = r["mode"]
        t.check(re.search(r"^  %s #%d%s\s+\d+ .* ok$" % (m, r["run"], " \\(interrupted\\)" if interrupted else ""),
                          out, re.M), "no %s #%d row in the printed summary" % (m, r["run"]))
        t.check(r["ops"] > 0, "%s: no lock ops" % m)
        t.check_eq(r["violations"], 0, "%s: violations" % m)
        t.check_eq(r["qp_errors"], 0, "%s: QP errors" % m)
        t.check_eq(r["failures"], [], "%s: failed checks" % m)
        if m == "direct":
            t.check_eq(r["managed_rx"], 0, "direct: swordd counters")
        else:
            t.check(r["managed_rx"] > 0, "%s: swordd managed no traffic" % m)
        t.check_eq(r["interrupted"], interrupted, "%s: interrupted" % m)
        if m == "accel":
            t.check(not r["no_impl"], "swordd has no atomic_replacement implementation")
            t.check(r["rewrites"] > 0, "accel: nothing rewritten")
        else:
            t.check_eq(r["rewrites"], 0, "pass-through: rewrites")
        s = r["series"]
        t.check_eq(sorted(s), ["lock_ops_per_s", "server_atomics_per_s", "t_s"],
                   "%s #%d: series keys" % (m, r["run"]))
        t.check(len(s["t_s"]) == len(s["lock_ops_per_s"]) == len(s["server_atomics_per_s"]),
                "%s #%d: series lengths differ: %r" % (m, r["run"], s))
        t.check(s["t_s"] == sorted(s["t_s"]), "%s #%d: series time not ascending" % (m, r["run"]))
        t.check(all(v >= 0 for v in s["lock_ops_per_s"] + s["server_atomics_per_s"]),
                "%s #%d: negative rate in the series" % (m, r["run"]))
    modes = list(dict.fromkeys(m for m, _ in runs))
    t.check_eq([m["mode"] for m in js["modes"]], sorted(modes, key=[
        "direct", "passthrough", "accel", "remap", "accel-remap"].index), "modes in the summary")
    for m in js["modes"]:
        n = sum(1 for x, _ in runs if x == m["mode"])
        sp = m["lock_ops_per_s"]
        t.check_eq(sp["n"], n, "%s: runs in the median" % m["mode"])
        t.check(sp["min"] <= sp["median"] <= sp["max"], "%s: median outside min-max" % m["mode"])
        if m["mode"] not in ("passthrough", "direct") and "passthrough" in modes:
            q = m["ratio_to_passthrough"]
            t.check(q and q["n"] == n and q["min"] <= q["median"] <= q["max"],
                    "%s: ratio to pass-through %r" % (m["mode"], q))


def check_svg(path, js):
    """the picture: a parseable SVG with one line per run and panel whose
    points are the series, the axis labels, each mode's legend, the model"""
    root = ET.parse(path).getroot()
    t.check(root.tag.endswith("svg"), "%s is not an SVG: %s" % (path, root.tag))
    text = " ".join(x.text or "" for x in root.iter() if x.tag.endswith("text"))
    for want in ("lock ops/s", "server atomics/s", "seconds since the clients were started",
                 "pass-through", "acceleration", "MODELLED atomic unit, %g atomics/s per address" %
                 js["atomic_unit"]["atomics_per_s_per_address"], "not a NIC"):
        t.check(want in text, "the SVG has no text %r; it has: %s" % (want, text[:600]))
    groups = {g.get("id"): g for g in root.iter() if g.tag.endswith("g") and g.get("id")}
    for r in js["runs"]:
        n = len(r["series"]["t_s"])
        if not n:
            continue
        for panel in ("ops", "atomics"):
            gid = "%s-%s-%d" % (panel, r["mode"], r["run"])
            t.check(gid in groups, "the SVG has no line %s (it has %s)" % (gid, sorted(groups)[:40]))
            paths = [p for p in groups[gid].iter() if p.tag.endswith("path") and p.get("d")]
            t.check(paths, "line %s has no path" % gid)
            pts = len(re.findall(r"[ML]", paths[0].get("d")))
            t.check_eq(pts, n, "points of line %s" % gid)


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def body():
    t.require_root()
    t.swordd_path()
    e2e.roce_peer_path()
    d = t.tmpdir()

    # 1. the default load (modelled atomic unit on), both modes twice, a plot
    js = os.path.join(d, "timed.json")
    svg = os.path.join(d, "timed.svg")
    t0 = time.monotonic()
    p, outp = start(["--duration", "4", "--repeat", "2", "--clients", "3", "--json", js,
                     "--plot", svg], d, "timed")
    try:
        rc = p.wait(300)
    except subprocess.TimeoutExpired:
        raise t.TestFailure("run.sh --duration 4 --repeat 2 still running after 300 s")
    took = time.monotonic() - t0
    out = open(outp).read()
    t.log("\n".join(out.splitlines()[-14:]))
    t.log("took %.0f s" % took)
    t.check_eq(rc, 0, "run.sh --duration 4 --repeat 2 exit code\n" + out)
    # 4 runs of 4 s: the rest is set-up and tear-down (about 5 s a run here)
    t.check(took < 150, "4 runs of 4 s took %.0f s" % took)
    t.check(re.search(r"^\s+\d+s\s+\d+", out, re.M), "no live progress lines")
    label = "memory server: modelled atomic unit, 80 atomics/s per address (a model of an RNIC's, not a NIC)"
    t.check_eq(out.count(label), 2, "the banner and the summary label the default model:\n" + out)
    jsd = load(js)
    check_summary(out, jsd, [("passthrough", 1), ("accel", 1), ("passthrough", 2), ("accel", 2)])
    t.check_eq(jsd["atomic_unit"]["model"], True, "JSON: the model")
    t.check_eq(jsd["atomic_unit"]["atomics_per_s_per_address"], 80, "JSON: the model's rate")
    t.check("MODEL" in jsd["atomic_unit"]["note"] and "not a NIC" in jsd["atomic_unit"]["note"],
            "JSON: the model's note %r" % jsd["atomic_unit"]["note"])
    for r in jsd["runs"]:
        t.check_eq(r["atomic_unit_rate"], 80, "%s #%d: the model's rate" % (r["mode"], r["run"]))
    t.check(any(r["atomics_waited"] > 0 for r in jsd["runs"] if r["mode"] == "passthrough"),
            "no pass-through atomic waited for an 80/s unit")
    t.check(sum(len(r["series"]["t_s"]) for r in jsd["runs"]) >= 4,
            "hardly any per-second samples: %r" % [r["series"] for r in jsd["runs"]])
    t.check(re.search(r"^  acceleration / pass-through: \d+\.\d\dx lock ops/s \(median of 2; "
                      r"\d+\.\d\dx-\d+\.\d\dx\) with the modelled atomic unit$", out, re.M),
            "no comparison line (median, min-max) in the summary")
    t.check("plot: " + svg in out, "run.sh did not say where the plot is")
    check_svg(svg, jsd)
    png = os.path.join(d, "timed.png")
    t.sh(["/usr/bin/python3", os.path.join(t.args().source_root, "scripts", "run_plot.py"), js, png])
    with open(png, "rb") as f:
        head = f.read(24)
    t.check(head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR", "not a PNG: %r" % head)
    w, h = struct.unpack(">II", head[16:24])
    t.check(w >= 600 and h >= 400, "PNG %dx%d" % (w, h))
    # bench-locks.sh's picture from the same numbers (as one point, 3 clients)
    sweep = {"repeat": 2, "locks": 4, "atomic_unit": jsd["atomic_unit"], "series": {
        m["mode"]: [{"clients": 3, "lock_ops_per_s": m["lock_ops_per_s"]}] for m in jsd["modes"]}}
    with open(os.path.join(d, "sweep.json"), "w") as f:
        json.dump(sweep, f)
    t.sh(["/usr/bin/python3", os.path.join(t.args().source_root, "scripts", "run_plot.py"),
          "--sweep", os.path.join(d, "sweep.json"), os.path.join(d, "sweep.svg")])
    root = ET.parse(os.path.join(d, "sweep.svg")).getroot()
    ids = {g.get("id") for g in root.iter() if g.get("id")}
    t.check({"sweep-passthrough", "sweep-accel"} <= ids, "sweep SVG series: %s" % sorted(ids)[:40])
    left = leftovers(p.pid)
    t.check(not left, "run.sh left behind: %s" % left)

    # 2. Ctrl-C in the middle of an accelerated run
    js = os.path.join(d, "sigint.json")
    p, outp = start(["--mode", "accel", "--duration", "120", "--clients", "3", "--json", js,
                     "--atomic-unit", "0"], d, "sigint")
    t.wait_for(lambda: p.poll() is not None or
               len(re.findall(r"^\s+\d+s\s+\d+", open(outp).read(), re.M)) >= 2,
               120, "run.sh to print progress")
    t.check(p.poll() is None, "run.sh exited early:\n" + open(outp).read())
    os.killpg(p.pid, signal.SIGINT)   # what the terminal does on Ctrl-C
    try:
        rc = p.wait(120)
    except subprocess.TimeoutExpired:
        raise t.TestFailure("run.sh did not stop within 120 s of SIGINT; its output:\n"
                            + open(outp).read()[-3000:])
    out = open(outp).read()
    t.log("\n".join(out.splitlines()[-8:]))
    t.check_eq(rc, 130, "run.sh exit code after Ctrl-C\n" + out)
    t.check("run.sh: interrupted; cleaned up" in out, "no interruption message:\n" + out[-2000:])
    jsi = load(js)
    check_summary(out, jsi, [("accel", 1)], interrupted=True)
    r = jsi["runs"][0]
    t.check_eq((r["atomic_unit_rate"], r["atomics_waited"], jsi["atomic_unit"]["model"]),
               (0, 0, False), "--atomic-unit 0: rate, atomics waited, model")
    left = leftovers(p.pid)
    t.check(not left, "run.sh left behind after Ctrl-C: %s" % left)

    # 3. direct (no swordd), no model; bad rates refused
    for bad in ("-1", "abc"):
        p, outp = start(["--atomic-unit", bad], d, "aunit-bad")
        t.check_eq(p.wait(60), 2, "run.sh --atomic-unit %s exit code" % bad)
        t.check("--atomic-unit wants atomics per second" in open(outp).read(),
                "no message for --atomic-unit %s" % bad)
    js = os.path.join(d, "direct.json")
    p, outp = start(["--mode", "direct", "--duration", "3", "--repeat", "1", "--clients", "2",
                     "--no-atomic-unit", "--json", js], d, "direct")
    t.check_eq(p.wait(300), 0, "run.sh --mode direct exit code\n" + open(outp).read())
    out = open(outp).read()
    t.check_eq(out.count("memory server: no modelled atomic unit"), 2,
               "the banner and the summary say there is no model:\n" + out)
    t.check("modelled atomic unit, " not in out, "a model labelled without one:\n" + out)
    js = load(js)
    check_summary(out, js, [("direct", 1)])
    t.check_eq(js["atomic_unit"]["model"], False, "direct: JSON model")
    left = leftovers(p.pid)
    t.check(not left, "run.sh --mode direct left behind: %s" % left)


if __name__ == "__main__":
    t.main(body)
