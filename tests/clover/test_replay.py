#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
Clover steering (F4) in swordd, on the real ConnectX Clover captures.

1. clover-1thread-{1,10,100}pkt.pcap through swordd (net_pcap, one port,
   conf/clover.conf): one client, nothing is ever stale, so the output is
   the input byte for byte; the counters show what was recognised, and the
   numbers are what scapy finds in the capture (data WRITEs = 1 KiB
   WRITE_ONLY, tail CAS = COMPARE_SWAP, value READs = 1 KiB READs, every
   CAS answered with orig == compare), with nothing steered.
2. The 100-frame capture made stale on purpose (scapy moves a tail CAS and
   a value READ back to an older node of the same key and re-signs them):
   swordd steers both back, so the output equals the original capture — the
   steered frames are byte for byte what the real NIC sent — and
   validate_pcap.py (scapy) accepts every frame.
3. The same stale frames with a wrong ICRC: passed unchanged (I7), counted
   as clover_bad_icrc_passed, learned nothing; the client's retransmission
   that follows (good ICRC) is steered like the original.
"""

import os
import struct
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "daemon"))
import swordtest as t  # noqa: E402

VA_OFF = 14 + 20 + 8 + 12      # Ethernet, IPv4, UDP, BTH: RETH/AtomicETH va


def conf_path():
    return os.path.join(t.args().source_root, "conf", "clover.conf")


def run(frames, name, extra=()):
    d = t.tmpdir()
    cap = os.path.join(d, "in.pcap")
    out = os.path.join(d, "out.pcap")
    sj = os.path.join(d, "stats.json")
    t.write_frames(cap, frames)
    sw = t.Swordd(["net_pcap0,rx_pcap=%s,tx_pcap=%s" % (cap, out)],
                  ["-c", conf_path(), "--idle-exit", "2", "--stats-json", sj]
                  + list(extra), name=name, workdir=d).start()
    sw.expect_exit(0)
    return t.read_frames(out), t.read_stats_json(sj), out


def expected_counts(frames):
    """What scapy sees in a Clover capture."""
    import roce_scapy as rs
    want = {"data_writes": 0, "tail_cas": 0, "value_reads": 0, "cas_ok": 0}
    cas_cmp = {}
    for f in frames:
        p = rs.dissect(f)
        if not p.haslayer(rs.BTH):
            continue
        op = p[rs.BTH].opcode
        if op == 0x0a and p[rs.RETH].dma_len >= 1024:
            want["data_writes"] += 1
        elif op == 0x0c and p[rs.RETH].dma_len >= 1024:
            want["value_reads"] += 1
        elif op == 0x13:
            want["tail_cas"] += 1
            cas_cmp[p[rs.BTH].psn] = p[rs.AtomicETH].compare
        elif op == 0x12:
            if cas_cmp.get(p[rs.BTH].psn) == p[rs.AtomicAckETH].orig:
                want["cas_ok"] += 1
    return want


def fn(st, name):
    k = "fn_clover_" + name
    t.check(k in st, "stats have no %s: %r" % (k, sorted(st)))
    return st[k]


def resign(frame, va, bad_icrc=False):
    """frame with its RETH/AtomicETH va replaced, ICRC recomputed by scapy."""
    import roce_scapy as rs
    f = bytearray(frame)
    f[VA_OFF:VA_OFF + 8] = struct.pack(">Q", va)
    end = rs.datagram_end(bytes(f))
    icrc = rs.icrc_expected(bytes(f))
    if bad_icrc:
        icrc ^= 0x5a5a5a5a
    f[end - 4:end] = struct.pack("<I", icrc)
    return bytes(f)


def va_of(frame):
    return struct.unpack(">Q", frame[VA_OFF:VA_OFF + 8])[0]


def test():
    caps = [os.path.join(t.args().captures, "clover-1thread-%dpkt.pcap" % n)
            for n in (1, 10, 100)]
    for cap in caps:
        if not os.path.exists(cap):
            raise t.TestFailure("capture missing: " + cap)

    # 1. bit-identical replay
    for cap in caps:
        frames = t.read_frames(cap)
        got, st, _ = run(frames, "rp%d" % len(frames))
        what = os.path.basename(cap)
        t.compare_frames(got, frames, what + " through swordd with clover on")
        want = expected_counts(frames)
        for k, v in want.items():
            t.check_eq(fn(st, k), v, what + " clover_" + k)
        for k in ("steered_writes", "steered_reads", "bad_icrc_passed",
                  "steered_failed", "cas_failed"):
            t.check_eq(fn(st, k), 0, what + " clover_" + k)
        t.check_eq(st.get("managed_rx"), len(frames), what + " managed_rx")
        t.check_eq(st.get("rewritten", 0), 0, what + " rewritten")
        t.log("ok: %s bit-identical, counters %r" % (what, want))

    # 2. stale CAS and stale READ, steered back to what the NIC sent
    frames = t.read_frames(caps[2])
    import roce_scapy as rs
    ops = [rs.dissect(f)[rs.BTH].opcode if rs.dissect(f).haslayer(rs.BTH) else None
           for f in frames]
    # frame 17 (index 16): CAS at node 0x...c500 linking 0x...e500; the node
    # before it (written in frame 3, index 2) is a stale tail of the same key.
    cas_i, read_i = 16, 18
    t.check_eq(ops[cas_i], 0x13, "frame 17 is the second tail CAS")
    t.check_eq(ops[read_i], 0x0c, "frame 19 is a value READ")
    stale_node = va_of(frames[2])
    t.check(stale_node != va_of(frames[cas_i]), "frame 3's node differs from the tail")
    # frame 19 reads the node linked by frame 17; frame 9's READ target
    # (frame 5's node) is the older node of the same key.
    stale_read = va_of(frames[8])
    t.check(stale_read != va_of(frames[read_i]), "frame 9's read target differs")
    stale = list(frames)
    stale[cas_i] = resign(frames[cas_i], stale_node)
    stale[read_i] = resign(frames[read_i], stale_read)
    got, st, out = run(stale, "rps")
    t.compare_frames(got, frames, "stale CAS/READ steered back to the capture")
    t.check_eq(fn(st, "steered_writes"), 1, "stale: clover_steered_writes")
    t.check_eq(fn(st, "steered_reads"), 1, "stale: clover_steered_reads")
    t.check_eq(fn(st, "steered_failed"), 0, "stale: clover_steered_failed")
    t.check_eq(st.get("rewritten", 0), 2, "stale: rewritten")
    r = t.sh([sys.executable, os.path.join(t.args().helpers, "validate_pcap.py"),
              "--expect", str(len(frames)), out], check_rc=False)
    t.check(r.returncode == 0, "validate_pcap.py on the steered output:\n" +
            r.stdout + r.stderr)
    t.log("ok: stale CAS and READ steered back, output == capture;", r.stdout.strip())

    # 3. stale frames with a bad ICRC: never re-signed, teach nothing.  A
    # server drops such a frame and the client retransmits it (same PSN):
    # the good retransmission right after it is steered as usual.
    for i, what in ((cas_i, "CAS"), (read_i, "READ")):
        bad = list(stale)
        bad[i] = resign(frames[i], va_of(stale[i]), bad_icrc=True)
        bad.insert(i + 1, stale[i])
        want = list(frames)
        want[i] = bad[i]
        want.insert(i + 1, frames[i])
        got, st, _ = run(bad, "rb" + what[0])
        t.compare_frames(got, want, "bad-ICRC stale %s unchanged, retransmission "
                         "steered" % what)
        t.check_eq(fn(st, "bad_icrc_passed"), 1, "bad %s: clover_bad_icrc_passed" % what)
        t.check_eq(fn(st, "steered_writes"), 1, "bad %s: clover_steered_writes" % what)
        t.check_eq(fn(st, "steered_reads"), 1, "bad %s: clover_steered_reads" % what)
        t.log("ok: bad-ICRC stale %s passed unchanged and counted" % what)

if __name__ == "__main__":
    t.require_root()
    t.main(test)
