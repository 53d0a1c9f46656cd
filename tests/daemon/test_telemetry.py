#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
F6 telemetry: while swordd runs, /sword/stats, /sword/ports, /sword/workers
and /sword/config answer on the DPDK telemetry socket with counters that
match the traffic (net_pcap replays rcuckoo-connectx.pcap once; we wait
until all of it is counted, then compare with tshark's view of the file).
Queried both with our own socket client and with DPDK's dpdk-telemetry.py.
At SIGTERM the --stats-json counters equal what telemetry said.
"""

import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import swordtest as t  # noqa: E402


def telemetry_script():
    p = shutil.which("dpdk-telemetry.py")
    if p:
        return p
    r = subprocess.run(["dpkg", "-L", "dpdk"], stdout=subprocess.PIPE, text=True)
    for l in r.stdout.splitlines():
        if l.endswith("dpdk-telemetry.py"):
            return l
    return None


def body():
    t.require_root()
    cap = os.path.join(t.args().captures, "rcuckoo-connectx.pcap")
    frames = t.read_frames(cap)
    n = len(frames)
    ops = t.tshark_opcodes(cap)
    d = t.tmpdir()
    sj = os.path.join(d, "stats.json")
    out = os.path.join(d, "out.pcap")
    sw = t.Swordd(["net_pcap0,rx_pcap=%s,tx_pcap=%s" % (cap, out)],
                  ["--mode", "one-port", "--stats-json", sj],
                  name="tel", workdir=d).start()

    def all_counted():
        # null until swordd has registered its commands (the socket is up
        # from rte_eal_init on)
        st = sw.telemetry("/sword/stats")
        return st if st and st.get("rx") == n else None
    try:
        st = t.wait_for(all_counted, 60, "/sword/stats rx == %d" % n, interval=0.5)
    except t.TestFailure:
        sw.dump()
        raise
    t.check_eq(st.get("tx"), n, "/sword/stats tx")
    t.check_eq(t.opcode_counts(st), ops, "/sword/stats per-opcode counts vs tshark")
    t.check_eq(st.get("non_roce"), n - sum(ops.values()), "/sword/stats non_roce")
    t.check_eq(st.get("malformed"), 0, "/sword/stats malformed")
    t.check_eq(st.get("passthrough"), n, "/sword/stats passthrough")

    # /sword/ports: list of port ids; /sword/ports,ID: that port's counters
    ids = sw.telemetry("/sword/ports")
    t.check_eq(ids, [0], "/sword/ports (port ids)")
    p0 = sw.telemetry("/sword/ports,0")
    t.log("/sword/ports,0:", json.dumps(p0)[:300])
    t.check_eq((p0.get("rx"), p0.get("tx")), (n, n), "/sword/ports,0 rx, tx")

    ids = sw.telemetry("/sword/workers")
    t.check_eq(ids, [0], "/sword/workers (worker ids, 1 worker)")
    w0 = sw.telemetry("/sword/workers,0")
    t.log("/sword/workers,0:", json.dumps(w0)[:300])
    t.check_eq((w0.get("rx"), w0.get("tx")), (n, n), "/sword/workers,0 rx, tx")
    t.check_eq(t.opcode_counts(w0), ops, "/sword/workers,0 per-opcode counts")

    cfg = sw.telemetry("/sword/config")
    t.log("/sword/config:", json.dumps(cfg)[:300])
    t.check("one-port" in json.dumps(cfg), "/sword/config does not say one-port: %r" % cfg)

    # DPDK's own client, non-interactive (reads commands from stdin)
    script = telemetry_script()
    t.check(script is not None, "dpdk-telemetry.py not found (dpkg -L dpdk)")
    r = t.sh([script, "-f", sw.prefix], input="/sword/stats\n")
    reply = json.loads(r.stdout.strip().splitlines()[-1])
    t.check_eq(reply["/sword/stats"].get("rx"), n, "dpdk-telemetry.py /sword/stats rx")
    r = t.sh([script, "-f", sw.prefix], input="/ethdev/stats,0\n")
    reply = json.loads(r.stdout.strip().splitlines()[-1])
    t.check_eq(reply["/ethdev/stats"].get("ipackets"), n, "ethdev ipackets (PMD's own count)")

    r = sw.telemetry("/sword/lock,nosuch,0")
    t.check("error" in (r or {}), "/sword/lock of an unknown server: an error object, got %r" % r)
    r = sw.telemetry("/sword/lock")
    t.check("usage" in (r or {}).get("error", ""), "/sword/lock without parameters: %r" % r)

    rc = sw.stop()
    t.check_eq(rc, 0, "exit code on SIGTERM")
    # swordd is down: one clear line, no traceback, exit 1
    r = t.sh(["/usr/bin/python3", os.path.join(t.args().source_root, "scripts",
                                               "sword_telemetry.py"),
              "-f", sw.prefix, "/sword/stats"], check_rc=False)
    t.check_eq(r.returncode, 1, "sword_telemetry.py with swordd down: exit status")
    lines = r.stderr.strip().splitlines()
    t.check(len(lines) == 1 and "is swordd running" in lines[0] and "Traceback" not in r.stderr,
            "sword_telemetry.py with swordd down: one line: %r" % r.stderr)
    final = t.read_stats_json(sj)
    for k in ("rx", "tx", "non_roce", "malformed", "passthrough"):
        t.check_eq(final.get(k), st.get(k), "--stats-json %s vs telemetry" % k)


if __name__ == "__main__":
    t.main(body)
