#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
F6 capture: --pcap-in / --pcap-out write pcapng files (rte_pcapng) of every
frame received / transmitted.  Checked with tshark (an independent reader):
right format, right frame counts, right lengths; and byte for byte (scapy's
raw reader) equal to what went in and came out of the ports.  One-port and
two-port (both ports in one file each).  A long capture: more frames than
the capture mbuf pool holds (8191), so copies must go back to the pool once
written (they did not: captures used to stop after 8191 frames in all);
frames the best-effort capture could not take are counted capture_dropped.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import swordtest as t  # noqa: E402

PCAPNG_MAGIC = b"\x0a\x0d\x0d\x0a"


def check_pcapng(path, want_frames, what, ordered=True):
    t.check(os.path.exists(path), "%s: %s not written" % (what, path))
    with open(path, "rb") as f:
        t.check_eq(f.read(4), PCAPNG_MAGIC, what + ": pcapng section header magic")
    tl = t.tshark_frames(path)
    t.check_eq(len(tl), len(want_frames), what + ": tshark frame count")
    t.check_eq(sorted(l for l, _ in tl), sorted(len(f) for f in want_frames),
               what + ": tshark frame lengths")
    t.check_eq([c for _, c in tl], [l for l, _ in tl], what + ": frames captured whole")
    got = t.read_frames(path)
    if ordered:
        t.compare_frames(got, want_frames, what)
    else:
        t.compare_frames(sorted(got), sorted(want_frames), what + " (as multiset)")


def body():
    t.require_root()
    cap = os.path.join(t.args().captures, "rcuckoo-connectx.pcap")
    frames = t.read_frames(cap)

    d = t.tmpdir()
    pin, pout, out = (os.path.join(d, x) for x in ("in.pcapng", "out.pcapng", "out.pcap"))
    sw = t.Swordd(["net_pcap0,rx_pcap=%s,tx_pcap=%s" % (cap, out)],
                  ["--mode", "one-port", "--idle-exit", "2",
                   "--pcap-in", pin, "--pcap-out", pout], name="png1", workdir=d).start()
    sw.expect_exit(0)
    check_pcapng(pin, frames, "one-port --pcap-in")
    check_pcapng(pout, frames, "one-port --pcap-out")
    t.compare_frames(t.read_frames(out), frames, "one-port port output")

    # two-port: requests on port 0, the rest on port 1
    a = frames[0][6:12]
    f0 = [f for f in frames if f[6:12] == a]
    f1 = [f for f in frames if f[6:12] != a]
    d2 = t.tmpdir()
    p = {x: os.path.join(d2, x) for x in ("in0.pcap", "in1.pcap", "out0.pcap", "out1.pcap",
                                          "in.pcapng", "out.pcapng")}
    t.write_frames(p["in0.pcap"], f0)
    t.write_frames(p["in1.pcap"], f1)
    sw = t.Swordd(["net_pcap0,rx_pcap=%s,tx_pcap=%s" % (p["in0.pcap"], p["out0.pcap"]),
                   "net_pcap1,rx_pcap=%s,tx_pcap=%s" % (p["in1.pcap"], p["out1.pcap"])],
                  ["--mode", "two-port", "--idle-exit", "2",
                   "--pcap-in", p["in.pcapng"], "--pcap-out", p["out.pcapng"]],
                  name="png2", workdir=d2).start()
    sw.expect_exit(0)
    # the two ports interleave in time: compare as multisets
    check_pcapng(p["in.pcapng"], frames, "two-port --pcap-in", ordered=False)
    check_pcapng(p["out.pcapng"], frames, "two-port --pcap-out", ordered=False)
    # pcapng records the interface: frames of port 0 on one interface id
    r = t.sh(["tshark", "-n", "-r", p["in.pcapng"], "-T", "fields", "-e", "frame.interface_id"])
    ifs = [l.strip() for l in r.stdout.splitlines() if l.strip()]
    t.check_eq(sorted(set(ifs)), ["0", "1"] if f1 else ["0"], "two-port --pcap-in interface ids")

    # long: 2000 copies of the capture, in and out each far over the pool.
    # The capture is best effort by design (a copy that finds the ring or
    # the pool full is counted capture_dropped, the data path never waits),
    # so: every frame is either captured or counted, what is captured is
    # whole and what went through, and more is captured than the pool
    # holds (with copies never returned to it, nothing past 8191 could be).
    many = frames * 2000
    d3 = t.tmpdir()
    p = {x: os.path.join(d3, x) for x in ("in.pcap", "out.pcap", "in.pcapng", "out.pcapng",
                                          "stats.json")}
    t.write_frames(p["in.pcap"], many)
    sw = t.Swordd(["net_pcap0,rx_pcap=%s,tx_pcap=%s" % (p["in.pcap"], p["out.pcap"])],
                  ["--mode", "one-port", "--idle-exit", "2", "--stats-json", p["stats.json"],
                   "--pcap-in", p["in.pcapng"], "--pcap-out", p["out.pcapng"]],
                  name="png3", workdir=d3).start()
    sw.expect_exit(0)
    t.check_eq(len(t.read_frames(p["out.pcap"])), len(many), "long: frames forwarded")
    st = t.read_stats_json(p["stats.json"])
    known = set(frames)
    got = 0
    for what in ("in", "out"):
        tl = t.tshark_frames(p[what + ".pcapng"])
        t.check_eq([c for _, c in tl], [l for l, _ in tl], "long --pcap-%s: frames captured whole" % what)
        fr = t.read_frames(p[what + ".pcapng"])
        t.check_eq(len(fr), len(tl), "long --pcap-%s: tshark and scapy frame counts" % what)
        t.check(all(f in known for f in fr), "long --pcap-%s: a captured frame that was not sent" % what)
        got += len(fr)
    t.log("long: %d of %d copies captured, capture_dropped %d" % (got, 2 * len(many),
                                                                   st["capture_dropped"]))
    t.check_eq(got + st["capture_dropped"], 2 * len(many), "long: captured + capture_dropped")
    t.check(got > 8191, "long: only %d frames captured: the capture pool (8191) is not refilled" % got)

if __name__ == "__main__":
    t.main(body)
