#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
gen-lock-pcap.py — a pcap of lock traffic for benchmarking swordd's
atomic replacement on a replayed (infinite_rx) net_pcap port.

  gen-lock-pcap.py OUT.pcap [--qps Q] [--pairs N] [--client IP] [--server IP]
                   [--base VA]

Q connections (client QPN 0x100+q, server QPN 0x200+q), each toggling its
own lock word base+8q with CAS(v, v^1); every CAS is followed by the
server's answer, connections interleaved.  The first answer of each
connection is the real ATOMIC ACK (orig 0), the rest are the plain ACKs a
server sends for the WRITEs swordd makes of them.  N (pairs per
connection) is even and larger than swordd's stub ring, so when the
replay wraps, each connection's PSN jumps back, swordd treats it as a new
incarnation, passes its first CAS as a real atomic and learns the word
from the ATOMIC ACK that follows: every loop is the same steady state.
Frames are built by scapy (tests/helpers/roce_scapy.py), ICRCs by scapy.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "tests", "helpers"))
from roce_scapy import make_frame  # noqa: E402
from scapy.utils import wrpcap  # noqa: E402
from scapy.layers.l2 import Ether  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("out")
ap.add_argument("--qps", type=int, default=4)
ap.add_argument("--pairs", type=int, default=1024)
ap.add_argument("--client", default="198.18.0.1")
ap.add_argument("--server", default="198.18.0.2")
ap.add_argument("--base", type=lambda v: int(v, 0), default=0x10000000)
a = ap.parse_args()
if a.pairs % 2 or a.pairs <= 512:
    sys.exit("gen-lock-pcap.py: --pairs must be even and > 512")

cmac, smac = "02:00:00:00:00:01", "02:00:00:00:00:02"
frames = []
for i in range(a.pairs):
    for q in range(a.qps):
        psn, v = 1000 + i, i & 1
        frames.append(make_frame(0x13, src_ip=a.client, dst_ip=a.server,
                                 src_mac=cmac, dst_mac=smac, qpn=0x200 + q,
                                 psn=psn, ackreq=True, va=a.base + 8 * q,
                                 rkey=0x2521, compare=v, swap=v ^ 1))
        if i == 0:
            frames.append(make_frame(0x12, src_ip=a.server, dst_ip=a.client,
                                     src_mac=smac, dst_mac=cmac, qpn=0x100 + q,
                                     psn=psn, msn=i + 1, orig=0))
        else:
            frames.append(make_frame(0x11, src_ip=a.server, dst_ip=a.client,
                                     src_mac=smac, dst_mac=cmac, qpn=0x100 + q,
                                     psn=psn, msn=i + 1))
wrpcap(a.out, [Ether(f) for f in frames])
print("%s: %d frames (%d connections x %d CAS + answer)" % (a.out, len(frames), a.qps, a.pairs))
