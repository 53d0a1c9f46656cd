#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
README's main command, scripts/run.sh, without setup.sh:
  1. --duration 5: exits 0; swordd forwarded the demo traffic both ways
     (its --stats-json: both ports received, tx == rx, the RoCE requests and
     responses counted by opcode, managed_rx > 0 since 198.18.0.2 is
     server.mem0 in conf/swordd.conf); the client got answers through it;
  2. no duration, stopped with SIGINT (Ctrl-C) while running: exits 0, prints
     swordd's final counters, and they show the demo traffic both ways
     (run.sh says "running" only once a ping got through swordd).  Ctrl-C
     reaches run.sh, ping and the endpoints at once (one process group):
     the case where bash's `wait` used to lose a child and hang.
After each run nothing is left: namespaces, taps, swordd, /var/run/dpdk dir.
"""

import os
import signal
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import swordtest as t  # noqa: E402


def leftovers(pid):
    left = []
    ns = t.sh(["ip", "netns", "list"]).stdout
    for n in ("sword-client-%d" % pid, "sword-server-%d" % pid):
        if n in ns.split():
            left.append("netns " + n)
    links = t.sh(["ip", "-o", "link"]).stdout
    for i in ("swc%d" % pid, "sws%d" % pid):
        if (" %s:" % i) in links or (" %s@" % i) in links:
            left.append("interface " + i)
    if os.path.exists("/var/run/dpdk/sword-demo-%d" % pid):
        left.append("/var/run/dpdk/sword-demo-%d" % pid)
    r = t.sh(["pgrep", "-f", "file-prefix sword-demo-%d " % pid], check_rc=False)
    if r.stdout.strip():
        left.append("processes " + r.stdout.strip())
    return left


def start(opts, d, name):
    run_sh = os.path.join(t.args().source_root, "scripts", "run.sh")
    build = t.args().build_root or os.path.dirname(os.path.dirname(os.path.dirname(t.swordd_path())))
    cmd = [run_sh, "--no-setup", "--build", build] + opts
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
            os.killpg(p.pid, signal.SIGTERM)
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        # swordd runs in its own session: make sure it is gone too
        r = t.sh(["pgrep", "-f", "file-prefix sword-demo-%d " % p.pid], check_rc=False)
        for pid in r.stdout.split():
            os.kill(int(pid), signal.SIGKILL)
        for n in ("sword-client-%d" % p.pid, "sword-server-%d" % p.pid):
            t.sh(["ip", "netns", "del", n], check_rc=False)
    t.on_cleanup(kill)
    return p, os.path.join(d, name + ".out")


def body():
    t.require_root()
    t.swordd_path()
    d = t.tmpdir()

    # 1. fixed duration
    sj = os.path.join(d, "stats.json")
    p, outp = start(["--duration", "5", "--stats-json", sj], d, "timed")
    try:
        rc = p.wait(240)
    except subprocess.TimeoutExpired:
        raise t.TestFailure("run.sh --duration 5 still running after 240 s")
    out = open(outp).read()
    t.log("\n".join(out.splitlines()[-12:]))
    t.check_eq(rc, 0, "run.sh --duration 5 exit code\n" + out)
    st = t.read_stats_json(sj)
    ports = st["ports"]
    t.check(ports[0]["rx"] > 0 and ports[1]["rx"] > 0, "no traffic on one side: %r" % ports)
    # (tx drops possible while the taps are being moved: see test_tap.py)
    t.check_eq(ports[1]["tx"] + ports[1].get("tx_dropped", 0), ports[0]["rx"],
               "port 1 tx + tx_dropped vs port 0 rx")
    t.check_eq(ports[0]["tx"] + ports[0].get("tx_dropped", 0), ports[1]["rx"],
               "port 0 tx + tx_dropped vs port 1 rx")
    ops = t.opcode_counts(st)
    for op, what in ((0x13, "CAS"), (0x12, "ATOMIC ACK"), (0x0A, "WRITE_ONLY"), (0x11, "ACK"),
                     (0x0C, "READ"), (0x10, "READ RESPONSE")):
        t.check(ops.get(op, 0) > 0, "no %s (0x%02x) counted: %r" % (what, op, ops))
    t.check(st.get("managed_rx", 0) > 0, "managed_rx is 0 (198.18.0.2 is server.mem0)")
    t.check_eq(st.get("malformed"), 0, "malformed")
    import re
    m = re.search(r"client: sent (\d+) requests, (\d+) responses", out)
    t.check(m and int(m.group(2)) > 0, "the client got no responses through swordd:\n" + out)
    t.check("stats:" in out, "no live stats lines in run.sh output")
    left = leftovers(p.pid)
    t.check(not left, "run.sh left behind: %s" % left)

    # 2. until Ctrl-C
    sj = os.path.join(d, "stats-sigint.json")
    p, outp = start(["--stats-json", sj], d, "sigint")
    t.wait_for(lambda: p.poll() is None and "running; Ctrl-C" in open(outp).read()
               and open(outp).read().count("stats:") >= 2, 120,
               "run.sh to run and print stats")
    os.killpg(p.pid, signal.SIGINT)   # what the terminal does on Ctrl-C
    try:
        rc = p.wait(120)
    except subprocess.TimeoutExpired:
        raise t.TestFailure("run.sh did not stop within 120 s of SIGINT; its output:\n"
                            + open(outp).read()[-3000:])
    out = open(outp).read()
    t.log("\n".join(out.splitlines()[-6:]))
    t.check_eq(rc, 0, "run.sh exit code after Ctrl-C\n" + out)
    t.check("final counters" in out, "no final counters after Ctrl-C:\n" + out[-2000:])
    st = t.read_stats_json(sj)
    ports = st["ports"]
    t.check(ports[0]["rx"] > 0 and ports[1]["rx"] > 0, "no traffic on one side: %r" % ports)
    t.check_eq(ports[1]["tx"] + ports[1].get("tx_dropped", 0), ports[0]["rx"],
               "port 1 tx + tx_dropped vs port 0 rx (Ctrl-C)")
    t.check_eq(ports[0]["tx"] + ports[0].get("tx_dropped", 0), ports[1]["rx"],
               "port 0 tx + tx_dropped vs port 1 rx (Ctrl-C)")
    left = leftovers(p.pid)
    t.check(not left, "run.sh left behind after Ctrl-C: %s" % left)


if __name__ == "__main__":
    t.main(body)
