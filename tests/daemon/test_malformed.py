#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
I7 / F1 on bad input: malformed and truncated RoCEv2 frames, plus frames
that are not RoCE at all, go through swordd (one-port, net_pcap).

Frames are built by scapy (tests/helpers/roce_scapy.py) as valid frames and
then broken in exactly one place each, so the reason swordd must count is
known by construction.  Checks:
  - the output is the input, byte for byte, in order (never repaired,
    never dropped: malformed frames are counted and passed);
  - malformed_<reason> (names of roce_status_name()) equals, for every
    reason, the number of frames we broke that way; malformed is their sum;
  - non_roce counts the frames that are not RoCE; the valid control frames
    are counted under their opcodes; rx == tx == all frames.
"""

import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import swordtest as t  # noqa: E402

# IPv4 frame offsets (untagged Ethernet)
IP = 14
IP_TOTLEN = IP + 2
IP_FRAG = IP + 6
IP_PROTO = IP + 9
UDP = IP + 20
UDP_LEN = UDP + 4
BTH = UDP + 8


def put16(f, off, v):
    f = bytearray(f)
    struct.pack_into("!H", f, off, v)
    return bytes(f)


def get16(f, off):
    return struct.unpack_from("!H", f, off)[0]


def ipv4_udp(payload, dport=4791, tot_len=None, udp_len=None):
    """Ether/IPv4/UDP around raw bytes, lengths consistent unless given."""
    from scapy.layers.inet import IP as SIP, UDP as SUDP
    from scapy.layers.l2 import Ether
    from scapy.packet import Raw
    p = (Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") /
         SIP(src="198.18.0.1", dst="198.18.1.2", tos=2, id=7) /
         SUDP(sport=0xc000, dport=dport, chksum=0) / Raw(payload))
    if tot_len is not None:
        p[SIP].len = tot_len
    if udp_len is not None:
        p[SUDP].len = udp_len
    return bytes(p)


def build():
    """[(frame, expect)] with expect = 'malformed_<reason>' | 'non_roce' |
    'opcode_0xNN'."""
    import roce_scapy as rs
    from scapy.layers.inet import IP as SIP, TCP, ICMP
    from scapy.layers.inet6 import IPv6, ICMPv6EchoRequest
    from scapy.layers.l2 import ARP, Ether
    from scapy.packet import Raw

    mk = rs.make_frame
    cas = mk(0x13, swap=1, compare=0, va=0x1000, rkey=0x1234, psn=10)
    ack = mk(0x11, msn=3, psn=10)
    bth_only = bytes([0x04, 0x40, 0xff, 0xff, 0, 0, 0x01, 0xf0, 0, 0, 0, 5])  # SEND_ONLY
    fr = []

    def add(frame, expect, why):
        fr.append((bytes(frame), expect, why))

    # -- valid control frames (counted by opcode)
    add(cas, "opcode_0x13", "valid CAS")
    add(mk(0x0C, ipv6=True, va=0x3000, rkey=0x55, dma_len=64), "opcode_0x0c", "valid IPv6 READ")
    add(mk(0x0A, vlan=100, payload=b"y" * 16), "opcode_0x0a", "valid VLAN WRITE_ONLY")
    add(mk(0x11, msn=1, eth_pad_to=60), "opcode_0x11", "valid ACK with Ethernet padding")

    # -- malformed, one reason each
    add(cas[:10], "malformed_trunc_l2", "10-byte frame")
    add(mk(0x0A, vlan=5, payload=b"z" * 4)[:16], "malformed_trunc_l2", "VLAN tag cut off")
    add(cas[:IP + 10], "malformed_trunc_l3", "IPv4 header cut at 10 bytes")
    add(mk(0x0C, ipv6=True)[:IP + 30], "malformed_trunc_l3", "IPv6 header cut at 30 bytes")
    add(cas[:IP] + bytes([0x44]) + cas[IP + 1:], "malformed_bad_ip_hdr", "IHL 4")
    add(cas[:IP] + bytes([0x65]) + cas[IP + 1:], "malformed_bad_ip_hdr", "version 6 in an IPv4 ethertype")
    add(put16(cas, IP_TOTLEN, get16(cas, IP_TOTLEN) + 100), "malformed_bad_ip_len", "IP total length beyond the frame")
    add(put16(cas, IP_TOTLEN, 12), "malformed_bad_ip_len", "IP total length < header")
    add(put16(cas, IP_FRAG, 0x2000), "malformed_ip_fragment", "UDP/4791 first fragment (MF)")
    add(put16(cas, IP_TOTLEN, 24), "malformed_trunc_l4", "IP length leaves 4 bytes of UDP")
    add(put16(cas, UDP_LEN, get16(cas, UDP_LEN) + 4), "malformed_bad_udp_len", "UDP length > IP payload")
    add(put16(cas, UDP_LEN, get16(cas, UDP_LEN) - 4), "malformed_bad_udp_len", "UDP length < IP payload")
    add(ipv4_udp(bth_only[:10]), "malformed_trunc_bth", "UDP payload of 10 bytes")
    add(ipv4_udp(bth_only + b"\0\0"), "malformed_trunc_bth", "BTH + 2 bytes (no room for ICRC)")
    f = ipv4_udp(bth_only[:8])
    add(f + bytes(60 - len(f)), "malformed_trunc_bth", "short BTH inside Ethernet padding")
    add(cas[:BTH + 1] + bytes([cas[BTH + 1] | 0x01]) + cas[BTH + 2:], "malformed_bad_tver", "BTH TVer 1")
    for op in (0x15, 0x1F, 0x40, 0xFF):
        add(cas[:BTH] + bytes([op]) + cas[BTH + 1:], "malformed_unknown_opcode", "opcode 0x%02x" % op)
    # WRITE_ONLY needs a 16-byte RETH: give it 8 (+ ICRC)
    add(ipv4_udp(bytes([0x0A]) + bth_only[1:] + bytes(8) + bytes(4)), "malformed_trunc_ext", "RETH cut to 8 bytes")
    # CAS needs a 28-byte AtomicETH: give it 20
    add(ipv4_udp(bytes([0x13]) + bth_only[1:] + bytes(20) + bytes(4)), "malformed_trunc_ext", "AtomicETH cut to 20 bytes")
    # SEND_ONLY, no payload, pad count 3
    add(ipv4_udp(bytes([0x04, 0x70]) + bth_only[2:] + bytes(4)), "malformed_bad_pad", "pad 3, no payload")
    # ACK (no payload) with pad count 1
    add(ack[:BTH + 1] + bytes([ack[BTH + 1] | 0x10]) + ack[BTH + 2:], "malformed_bad_pad", "ACK with pad 1")
    # ACK with 4 payload bytes, SEND_ONLY with 5, CNP with 8 instead of 16
    add(ipv4_udp(bytes([0x11]) + bth_only[1:] + bytes(4) + b"abcd" + bytes(4)), "malformed_bad_payload", "ACK with payload")
    add(ipv4_udp(bth_only + b"hello" + bytes(4)), "malformed_bad_payload", "SEND_ONLY with 5-byte payload, pad 0")
    add(ipv4_udp(bytes([0x81]) + bth_only[1:] + bytes(8) + bytes(4)), "malformed_bad_payload", "CNP with 8 reserved bytes")

    # A 16 KB WRITE cannot fit one mbuf (swordd's hold a 4096-MTU frame):
    # net_pcap hands it over chained, and RoCE in several segments is
    # refused (ICRC and rewriters need contiguous bytes), counted, passed.
    add(mk(0x0A, payload=bytes(16000), va=0x4000, rkey=0x1234, psn=12), "malformed_segmented",
        "16 KB WRITE_ONLY in chained mbufs")

    # -- not RoCE (passed, counted as non_roce, never malformed)
    e = Ether(src="02:00:00:00:00:01", dst="ff:ff:ff:ff:ff:ff")
    add(e / ARP(psrc="198.18.0.1", pdst="198.18.1.2"), "non_roce", "ARP")
    add(Ether(dst="01:80:c2:00:00:0e", type=0x88cc) / Raw(bytes(46)), "non_roce", "LLDP ethertype")
    add(e / IPv6(src="2001:db8::1", dst="2001:db8::2") / ICMPv6EchoRequest(), "non_roce", "IPv6 ICMPv6")
    add(e / SIP(src="198.18.0.1", dst="198.18.1.2") / TCP(dport=4791), "non_roce", "TCP to port 4791")
    tcp = bytes(e / SIP(src="198.18.0.1", dst="198.18.1.2") / TCP(dport=80))
    add(put16(tcp, IP_TOTLEN, 1000), "non_roce", "TCP with a bogus IP length (lengths of non-UDP not judged)")
    add(e / SIP(src="198.18.0.1", dst="198.18.1.2") / ICMP(), "non_roce", "ICMP")
    add(ipv4_udp(b"dns?" * 5, dport=53), "non_roce", "UDP to port 53")
    add(ipv4_udp(bth_only + bytes(4), dport=4792), "non_roce", "BTH-looking UDP to port 4792")
    add(put16(cas, IP_FRAG, 0x0010), "non_roce", "later fragment (offset 16): no UDP header")
    # Chained too, but UDP to port 53 is not RoCE whatever its length
    # (roce_parse_mbuf: "a chained frame is still classified").
    add(ipv4_udp(bytes(16000), dport=53), "non_roce", "16 KB UDP to port 53 (chained, not RoCE)")
    return fr


def body():
    t.require_root()
    t.args()
    frames = build()
    d = t.tmpdir()
    cap = os.path.join(d, "malformed.pcap")
    out = os.path.join(d, "out.pcap")
    sj = os.path.join(d, "stats.json")
    t.write_frames(cap, [f for f, _, _ in frames])
    want = {}
    for _, e, _ in frames:
        want[e] = want.get(e, 0) + 1
    t.log("generated %d frames: %s" % (len(frames), want))

    sw = t.Swordd(["net_pcap0,rx_pcap=%s,tx_pcap=%s" % (cap, out)],
                  ["--mode", "one-port", "--idle-exit", "2", "--stats-json", sj],
                  name="mal", workdir=d).start()
    sw.expect_exit(0)
    got = t.read_frames(out)
    t.compare_frames(got, [f for f, _, _ in frames], "malformed: output vs input")

    st = t.read_stats_json(sj)
    n = len(frames)
    t.check_eq(st.get("rx"), n, "rx")
    t.check_eq(st.get("tx"), n, "tx")
    t.check_eq(st.get("dropped"), 0, "dropped")
    want_mal = {k[len("malformed_"):]: v for k, v in want.items() if k.startswith("malformed_")}
    for reason, cnt in sorted(want_mal.items()):
        t.check(("malformed_" + reason) in st, "stats lack key malformed_" + reason)
    t.check_eq(t.malformed_counts(st), want_mal, "malformed_<reason> counters")
    t.check_eq(st.get("malformed"), sum(want_mal.values()), "malformed total")
    t.check_eq(st.get("non_roce"), want.get("non_roce", 0), "non_roce")
    want_ops = {int(k[len("opcode_"):], 16): v for k, v in want.items() if k.startswith("opcode_")}
    t.check_eq(t.opcode_counts(st), want_ops, "per-opcode counts (valid frames only)")
    t.check_eq(st.get("ports")[0]["tx"], n, "port 0 tx")


if __name__ == "__main__":
    t.main(body)
