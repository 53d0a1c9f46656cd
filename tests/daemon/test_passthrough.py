#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
F1 pass-through on real ConnectX captures, through net_pcap ports.

Every capture in captures_dir goes through swordd with no managed servers:
  - one-port (hairpin): out of port 0 == into port 0, byte for byte, in order;
  - two-port: the capture is split by sender (first frame's source MAC is
    the client side, port 0); what port 1 sends == what port 0 got, and the
    other way round;
  - one-port with 2 workers: same frames out (as a multiset: workers may
    interleave different flows), per-flow order kept.
Counters: rx == tx == frames; per-opcode counts equal what tshark's
InfiniBand dissector counts; non_roce equals the frames tshark sees no BTH
in; nothing malformed, nothing dropped.
"""

import glob
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import swordtest as t  # noqa: E402


def expect_counters(st, frames, opcodes, n_ports, what):
    n = len(frames)
    t.check_eq(st.get("rx"), n, what + " rx")
    t.check_eq(st.get("tx"), n, what + " tx")
    t.check_eq(st.get("dropped"), 0, what + " dropped")
    t.check_eq(st.get("malformed"), 0, what + " malformed")
    t.check_eq(t.opcode_counts(st), opcodes, what + " per-opcode counts vs tshark")
    non_roce = n - sum(opcodes.values())
    t.check_eq(st.get("non_roce"), non_roce, what + " non_roce")
    t.check_eq(st.get("passthrough"), n, what + " passthrough (nothing is managed)")
    t.check_eq(st.get("managed_rx"), 0, what + " managed_rx")
    ports = st.get("ports")
    t.check(isinstance(ports, list) and len(ports) == n_ports,
            "%s: ports should list %d ports: %r" % (what, n_ports, ports))
    t.check_eq(sum(p["rx"] for p in ports), n, what + " sum of port rx")
    t.check_eq(sum(p["tx"] for p in ports), n, what + " sum of port tx")
    t.check_eq(sum(p.get("tx_dropped", 0) for p in ports), 0, what + " port tx_dropped")


def one_port(cap, frames, opcodes, workers=1):
    d = t.tmpdir()
    out = os.path.join(d, "out.pcap")
    sj = os.path.join(d, "stats.json")
    sw = t.Swordd(["net_pcap0,rx_pcap=%s,tx_pcap=%s" % (cap, out)],
                  ["--mode", "one-port", "--workers", str(workers),
                   "--idle-exit", "2", "--stats-json", sj],
                  eal_extra=(["--lcores", "(0-%d)@(0,1)" % workers] if workers > 1 else []),
                  name="op%d" % workers, workdir=d).start()
    sw.expect_exit(0)
    what = "%s one-port/%d worker(s)" % (os.path.basename(cap), workers)
    got = t.read_frames(out)
    if workers == 1:
        t.compare_frames(got, frames, what + " output")
    else:
        t.compare_frames(sorted(got), sorted(frames), what + " output (as multiset)")
        # per flow (src MAC, dst MAC, rest of L2/L3 header up to UDP ports)
        flows = {}
        for f in got:
            flows.setdefault(f[:12] + f[26:38], []).append(f)
        for f in frames:
            k = f[:12] + f[26:38]
            t.check(flows.get(k) and flows[k].pop(0) == f,
                    what + ": a flow's frames came out reordered")
    expect_counters(t.read_stats_json(sj), frames, opcodes, 1, what)
    t.log("ok:", what)


def two_port(cap, frames, opcodes):
    d = t.tmpdir()
    side_a = frames[0][6:12]
    in0 = [f for f in frames if f[6:12] == side_a]
    in1 = [f for f in frames if f[6:12] != side_a]
    p_in0, p_in1 = os.path.join(d, "in0.pcap"), os.path.join(d, "in1.pcap")
    t.write_frames(p_in0, in0)
    t.write_frames(p_in1, in1)
    out0, out1 = os.path.join(d, "out0.pcap"), os.path.join(d, "out1.pcap")
    sj = os.path.join(d, "stats.json")
    # net_pcap needs a readable rx file even when a side sends nothing.
    sw = t.Swordd(["net_pcap0,rx_pcap=%s,tx_pcap=%s" % (p_in0, out0),
                   "net_pcap1,rx_pcap=%s,tx_pcap=%s" % (p_in1, out1)],
                  ["--mode", "two-port", "--idle-exit", "2", "--stats-json", sj],
                  name="tp", workdir=d).start()
    sw.expect_exit(0)
    what = "%s two-port" % os.path.basename(cap)
    t.compare_frames(t.read_frames(out1), in0, what + " port0->port1")
    t.compare_frames(t.read_frames(out0), in1, what + " port1->port0")
    st = t.read_stats_json(sj)
    expect_counters(st, frames, opcodes, 2, what)
    ports = st["ports"]
    t.check_eq((ports[0]["rx"], ports[1]["tx"]), (len(in0), len(in0)), what + " port0 rx / port1 tx")
    t.check_eq((ports[1]["rx"], ports[0]["tx"]), (len(in1), len(in1)), what + " port1 rx / port0 tx")
    t.log("ok:", what)


def body():
    t.require_root()
    caps = sorted(glob.glob(os.path.join(t.args().captures, "*.pcap")))
    t.check(len(caps) > 0, "no captures in %s" % t.args().captures)
    for cap in caps:
        frames = t.read_frames(cap)
        opcodes = t.tshark_opcodes(cap)
        t.check(len(frames) > 0 and sum(opcodes.values()) > 0, cap + ": no RoCE frames?")
        one_port(cap, frames, opcodes)
        two_port(cap, frames, opcodes)
        one_port(cap, frames, opcodes, workers=2)


if __name__ == "__main__":
    t.main(body)
