#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
F6 clean shutdown under traffic: net_pcap replays a Clover capture forever
(infinite_rx=1; tx is dropped by the PMD, or written to /dev/null-like
files), swordd forwards it, then gets SIGTERM (one-port) or SIGINT
(two-port).  It must exit 0, log final counters after the signal (rte_log
"sword.stats", on stderr), and
write --stats-json with counters that add up: every frame received is
classified once (sum of per-opcode counts + non_roce + malformed == rx; the
capture is all valid RoCE, so non_roce == malformed == 0) and nothing is
sent that was not received.
"""

import os
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import swordtest as t  # noqa: E402


def run(mode, sig):
    cap = os.path.join(t.args().captures, "clover-1thread-100pkt.pcap")
    d = t.tmpdir()
    sj = os.path.join(d, "stats.json")
    if mode == "one-port":
        vdevs = ["net_pcap0,rx_pcap=%s,infinite_rx=1" % cap]
    else:
        vdevs = ["net_pcap0,rx_pcap=%s,infinite_rx=1" % cap,
                 "net_pcap1,rx_pcap=%s,infinite_rx=1" % cap]
    sw = t.Swordd(vdevs, ["--mode", mode, "--stats-interval", "1", "--stats-json", sj],
                  name="sd" + mode[:3], workdir=d).start()

    def two_stats_lines():
        t.check(sw.alive(), "swordd exited early")
        # rate lines are rte_log messages on sword.stats (stderr)
        return len([l for l in sw.stderr().splitlines() if "sword.stats: rx=" in l]) >= 2
    try:
        t.wait_for(two_stats_lines, 90, "two stats lines on stdout")
    except t.TestFailure:
        sw.dump()
        raise
    before = len(sw.stderr())
    t.check(not os.path.exists(sj), "--stats-json written before exit")
    rc = sw.stop(sig, timeout=60)
    what = "%s, signal %d" % (mode, sig)
    if rc != 0:
        sw.dump()
    t.check_eq(rc, 0, what + ": exit code")
    tail = sw.stderr()[before:]
    t.check("final counters" in tail and "rx" in tail,
            what + ": no final counters logged after the signal:\n" + tail)
    st = t.read_stats_json(sj)
    rx, tx = st.get("rx", 0), st.get("tx", 0)
    t.log(what, "rx", rx, "tx", tx, "dropped", st.get("dropped"))
    t.check(rx > 0 and tx > 0, what + ": no traffic counted: %r" % st)
    t.check(tx + st.get("dropped", 0) <= rx, what + ": tx + dropped > rx: %r" % st)
    t.check_eq(st.get("malformed"), 0, what + ": malformed")
    t.check_eq(st.get("non_roce"), 0, what + ": non_roce")
    t.check_eq(sum(t.opcode_counts(st).values()), rx, what + ": sum of per-opcode counts vs rx")
    ports = st.get("ports", [])
    t.check_eq(len(ports), 1 if mode == "one-port" else 2, what + ": ports listed")
    t.check_eq(sum(p["rx"] for p in ports), rx, what + ": sum of port rx")
    t.check_eq(sum(p["tx"] for p in ports), tx, what + ": sum of port tx")


def body():
    t.require_root()
    t.args()
    run("one-port", signal.SIGTERM)
    run("two-port", signal.SIGINT)


if __name__ == "__main__":
    t.main(body)
