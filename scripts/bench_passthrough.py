#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
bench_passthrough.py — the measuring half of scripts/bench-passthrough.sh
(which parses options, prepares captures and hugepages, and calls this with
positional arguments): swordd pass-through (and lock acceleration) vs
dpdk-testpmd on the same vdevs, medians and ratios.  It lived in a bash
heredoc; here it can be linted.
"""
import json, os, shutil, signal, statistics, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sword_telemetry  # noqa: E402  (the shared telemetry client)

swordd, runs, seconds, warmup, workers, setups, capture, huge, modes, baseline, locks, conf = sys.argv[1:13]
swordds = {"swordd": swordd}
if baseline:
    swordds["swordd-base"] = baseline
LOCK_ARGS = ["-c", conf, "--set", "features.atomic_replacement=on",
             "--set", "atomic.learn_holdoff_ms=0",
             "--set", "atomic.out_of_band=on"]   # the frames have no RDMA CM
if locks == "1":
    swordds["swordd-locks"] = swordd
    if baseline:   # before/after of the lock path in the same runs
        swordds["swordd-locks-base"] = baseline
testpmds = ["testpmd-" + m for m in modes.split()]
apps = list(swordds) + testpmds
runs, seconds, warmup = int(runs), float(seconds), float(warmup)
workers = [int(w) for w in workers.split()]
setups = setups.split()
tag = "bench%d" % os.getpid()
work = tempfile.mkdtemp(prefix="sword-bench-")
ncpu = os.cpu_count()
procs = []

def cleanup():
    for p in procs:
        if p.poll() is None:
            p.kill()
            p.wait()
    shutil.rmtree(work, ignore_errors=True)
    for d in os.listdir("/var/run/dpdk") if os.path.isdir("/var/run/dpdk") else []:
        if d.startswith(tag):
            shutil.rmtree("/var/run/dpdk/" + d, ignore_errors=True)

def on_signal(*_):
    raise SystemExit(130)
signal.signal(signal.SIGINT, on_signal)
signal.signal(signal.SIGTERM, on_signal)

def eal(prefix, w, vdevs):
    mem = ["--in-memory"] if huge == "yes" else ["--no-huge", "-m", "1024", "--no-shconf"]
    # main lcore + w forwarding lcores; with fewer CPUs than lcores the
    # main lcore (which sleeps) shares a CPU
    if w + 1 <= ncpu:
        cores = ["-l", "0-%d" % w]
    else:
        cores = ["--lcores", "0@(0-%d),%s" % (ncpu - 1, ",".join(
            "%d@%d" % (i + 1, i % ncpu) for i in range(w)))]
    a = ["--no-pci", "--file-prefix", prefix, "--log-level", "pmd.net.pcap:warning"] + mem + cores
    for v in vdevs:
        a += ["--vdev", v]
    return a

def vdevs_of(setup):
    if setup == "null":
        return ["net_null0"], 1, "one-port"
    if setup == "pcap1":
        return ["net_pcap0,rx_pcap=%s,infinite_rx=1" % capture], 1, "one-port"
    if setup == "pcap2":
        return ["net_pcap%d,rx_pcap=%s,infinite_rx=1" % (i, capture) for i in (0, 1)], 2, "two-port"
    raise SystemExit("unknown port setup " + setup)

def queues_of(setup, w):
    return w if setup == "null" else 1

def telemetry(prefix, cmd):
    return sword_telemetry.query(sword_telemetry.socket_path(prefix), cmd)

def opackets(prefix, nports):
    return sum(telemetry(prefix, "/ethdev/stats,%d" % p)["opackets"] for p in range(nports))

def cpu_seconds(pid):
    """user+system CPU time of the whole process (all lcore threads)."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

def measure(app, setup, w, run):
    vdevs, nports, mode = vdevs_of(setup)
    prefix = "%s%s%d" % (tag, app[0] + app[-2:], run)
    q = queues_of(setup, w)
    if app in swordds:
        cmd = [swordds[app]] + eal(prefix, w, vdevs) + ["--", "--mode", mode, "--workers", str(w)]
        if app.startswith("swordd-locks"):
            cmd += LOCK_ARGS
    else:
        cmd = (["dpdk-testpmd"] + eal(prefix, w, vdevs) +
               ["--", "--forward-mode=" + app.split("-", 1)[1], "--no-flush-rx", "--nb-cores=%d" % w,
                "--rxq=%d" % q, "--txq=%d" % q, "--rxd=1024", "--txd=1024", "--burst=32",
                "--total-num-mbufs=16384", "--stats-period=3600", "--auto-start"] +
               (["--port-topology=loop"] if nports == 1 else []))
    log = open(os.path.join(work, "%s-%s-%d-%d.log" % (app, setup, w, run)), "w")
    p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    procs.append(p)
    try:
        deadline = time.monotonic() + 60
        while True:
            if p.poll() is not None:
                raise RuntimeError("%s exited %d: see %s" % (app, p.returncode, log.name))
            try:
                if opackets(prefix, nports) > 0:
                    break
            except (OSError, KeyError, TypeError, ValueError):
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("%s: no traffic after 60 s" % app)
            time.sleep(0.2)
        time.sleep(warmup)
        t0, u0, c0 = time.monotonic(), cpu_seconds(p.pid), opackets(prefix, nports)
        time.sleep(seconds)
        t1, u1, c1 = time.monotonic(), cpu_seconds(p.pid), opackets(prefix, nports)
        if app.startswith("swordd-locks"):
            st = telemetry(prefix, "/sword/stats")
            print("    " + app + " counters: granted %d, ack_to_atomic_ack %d, passed_real %d, "
                  "rewritten frames %d of %d" % (st.get("fn_atomic_granted", 0),
                  st.get("fn_atomic_ack_to_atomic_ack", 0), st.get("fn_atomic_passed_real_atomic", 0),
                  st.get("rewritten", 0), st.get("rx", 0)), flush=True)
        return (c1 - c0) / (t1 - t0) / 1e6, (c1 - c0) / max(u1 - u0, 1e-3) / 1e6
    finally:
        p.send_signal(signal.SIGINT)
        try:
            p.wait(30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        shutil.rmtree("/var/run/dpdk/" + prefix, ignore_errors=True)

try:
    if baseline:
        print("swordd-base: %s" % baseline)
    print("swordd: %s\ncapture: %s\nmemory: %s, %d CPUs, %d runs x %.0f s (warmup %.0f s)"
          % (swordd, capture, "hugepages" if huge == "yes" else "--no-huge", ncpu, runs, seconds, warmup),
          flush=True)
    res = {}
    for setup in setups:
        for w in workers:
            for r in range(runs):
                for app in (apps if r % 2 == 0 else apps[::-1]):
                    if app.startswith("swordd-locks") and setup != "pcap1":
                        continue
                    try:
                        mpps, per_cpu = measure(app, setup, w, r)
                    except RuntimeError as e:
                        print("  %-6s W=%d run %d %-16s FAILED: %s" % (setup, w, r + 1, app, e), flush=True)
                        continue
                    res.setdefault((setup, w, app), []).append((mpps, per_cpu))
                    print("  %-6s W=%d run %d %-16s %8.3f Mpps  %8.3f Mpps/CPU-s"
                          % (setup, w, r + 1, app, mpps, per_cpu), flush=True)
    load = open("/proc/loadavg").read().split()[:3]
    print("\nload average at the end: %s (other work on the machine makes wall-clock rates noisy;"
          "\nMpps per CPU-second = packets / CPU time the program got, all its threads)" % " ".join(load))
    nan = float("nan")
    for base in testpmds:
        for cand in swordds:
            print("\n%-9s | %-31s | %-31s" % ("", "Mpps (wall clock)", "Mpps per CPU-second"))
            print("%-6s %2s | %11s %12s %6s | %11s %12s %6s" % ("ports", "W", cand, base, "ratio",
                                                               cand, base, "ratio"))
            for setup in setups:
                for w in workers:
                    s, t = res.get((setup, w, cand), []), res.get((setup, w, base), [])
                    row = []
                    for i in (0, 1):
                        ms = statistics.median(x[i] for x in s) if s else nan
                        mt = statistics.median(x[i] for x in t) if t else nan
                        row += [ms, mt, ms / mt if s and t and mt else nan]
                    print("%-6s %2d | %11.3f %12.3f %6.2f | %11.3f %12.3f %6.2f" % ((setup, w) + tuple(row)))
    print("(medians over %d runs; ratio = swordd (or swordd-base) / testpmd in that mode)" % runs)
finally:
    cleanup()
