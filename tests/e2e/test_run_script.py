#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
README's main command, scripts/run.sh (the demo), without setup.sh:
  1. --duration 3: exits 0; the summary (printed, and --json) has both runs,
     pass-through and lock acceleration, each with lock ops > 0, zero
     violations, zero QP errors, every check ok (memory counters equal the
     critical sections completed); rewrites > 0 with acceleration and 0 in
     pass-through; live progress lines were printed;
  2. Ctrl-C: SIGINT to run.sh's process group (what a terminal does) in the
     middle of an accelerated run: exits 130, says it was interrupted, the
     summary covers the interrupted run and its checks still hold (the
     clients finish their critical sections before the server and swordd
     stop).
  3. --atomic-unit 100 (the memory server models an RNIC atomic unit): the
     banner and the summary label it with its rate, atomics waited for it;
     run 1 had no model (rate 0, nothing waited); --atomic-unit 0 is
     refused before anything starts.
After each run nothing is left: namespaces, taps, processes, the
/var/run/dpdk directory, the temp directory.
"""

import glob
import json
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


def check_summary(out, js, modes, interrupted=False):
    t.check(js is not None, "no --json summary")
    t.check_eq([r["mode"] for r in js["runs"]], modes, "runs in the summary")
    t.check(js["ok"], "summary checks failed: %r" % [r["failures"] for r in js["runs"]])
    for r in js["runs"]:
        m = r["mode"]
        t.check(re.search(r"^  %s%s\s+\d+ .* ok$" % (m, " \\(interrupted\\)" if interrupted else ""),
                          out, re.M), "no %s row in the printed summary" % m)
        t.check(r["ops"] > 0, "%s: no lock ops" % m)
        t.check_eq(r["violations"], 0, "%s: violations" % m)
        t.check_eq(r["qp_errors"], 0, "%s: QP errors" % m)
        t.check_eq(r["failures"], [], "%s: failed checks" % m)
        t.check(r["managed_rx"] > 0, "%s: swordd managed no traffic" % m)
        t.check_eq(r["interrupted"], interrupted, "%s: interrupted" % m)
        if m == "accel":
            t.check(not r["no_impl"], "swordd has no atomic_replacement implementation")
            t.check(r["rewrites"] > 0, "accel: nothing rewritten")
        else:
            t.check_eq(r["rewrites"], 0, "pass-through: rewrites")


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

    # 1. both runs, fixed duration
    js = os.path.join(d, "timed.json")
    p, outp = start(["--duration", "3", "--clients", "3", "--json", js], d, "timed")
    try:
        rc = p.wait(300)
    except subprocess.TimeoutExpired:
        raise t.TestFailure("run.sh --duration 3 still running after 300 s")
    out = open(outp).read()
    t.log("\n".join(out.splitlines()[-14:]))
    t.check_eq(rc, 0, "run.sh --duration 3 exit code\n" + out)
    t.check(re.search(r"^\s+\d+s\s+\d+", out, re.M), "no live progress lines")
    check_summary(out, load(js), ["passthrough", "accel"])
    t.check("acceleration / pass-through:" in out, "no comparison line in the summary")
    left = leftovers(p.pid)
    t.check(not left, "run.sh left behind: %s" % left)

    # 2. Ctrl-C in the middle of an accelerated run
    js = os.path.join(d, "sigint.json")
    p, outp = start(["--mode", "accel", "--duration", "120", "--clients", "3", "--json", js],
                    d, "sigint")
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
    check_summary(out, load(js), ["accel"], interrupted=True)
    left = leftovers(p.pid)
    t.check(not left, "run.sh left behind after Ctrl-C: %s" % left)

    # 3. the modelled atomic unit (the first run had none)
    for r in load(os.path.join(d, "timed.json"))["runs"]:
        t.check_eq((r["atomic_unit_rate"], r["atomics_waited"]), (0, 0),
                   "%s without --atomic-unit: rate, atomics waited" % r["mode"])
    p, outp = start(["--atomic-unit", "0"], d, "aunit-bad")
    t.check_eq(p.wait(60), 2, "run.sh --atomic-unit 0 exit code")
    t.check("--atomic-unit wants atomics per second" in open(outp).read(),
            "no message for --atomic-unit 0")
    js = os.path.join(d, "aunit.json")
    p, outp = start(["--mode", "passthrough", "--duration", "2", "--clients", "2",
                     "--atomic-unit", "100", "--json", js], d, "aunit")
    t.check_eq(p.wait(300), 0, "run.sh --atomic-unit 100 exit code\n" + open(outp).read())
    out = open(outp).read()
    label = "memory server: modelled atomic unit, 100 atomics/s per address"
    t.check_eq(out.count(label), 2, "the banner and the summary label the model:\n" + out)
    js = load(js)
    check_summary(out, js, ["passthrough"])
    r = js["runs"][0]
    t.check_eq(r["atomic_unit_rate"], 100, "summary JSON: the model's rate")
    t.check(r["atomics_waited"] > 0, "no atomic waited for a 100/s unit:\n" + out)
    left = leftovers(p.pid)
    t.check(not left, "run.sh --atomic-unit left behind: %s" % left)


if __name__ == "__main__":
    t.main(body)
