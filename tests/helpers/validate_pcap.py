#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
validate_pcap.py — check that every RoCEv2 frame in pcap/pcapng files is
valid on the wire, judged by scapy (not by our C library).

Why it exists: invariant I1 (every packet swordd emits is valid RoCEv2) needs
a checker we did not write.  All suites run it on what they capture.

Usage (stable interface):
  /usr/bin/python3 validate_pcap.py [options] FILE [FILE...]

For every Ethernet frame (optionally one or more 802.1Q tags) carrying
IPv4/IPv6 UDP to destination port 4791 it checks:
  - IPv4 header checksum valid; not a fragment
  - IP total length (IPv6 payload length) fits the frame; no trailing bytes
    after the IP datagram unless the frame is <= 64 bytes (Ethernet padding)
  - UDP length == IP payload length; UDP checksum valid when non-zero
  - BTH transport version 0, opcode known (RC 0x00-0x14, 0x16-0x18, UD
    0x64/0x65, CNP 0x81), extension headers present for the opcode, no
    payload where the opcode carries none, payload+pad a multiple of 4,
    pad count <= payload, WRITE_ONLY DMA length == payload length
  - ICRC equal to the one scapy computes (scapy.contrib.roce for IPv4; the
    same masking in roce_scapy.py for IPv6)

Output: one line per bad frame, "FILE:FRAMENO: problem; problem" (FRAMENO
counts from 1 as in Wireshark), then exit 1; if every frame is good, prints
"N frames valid" (N = RoCEv2 frames checked over all files) and exits 0.
Exit 2 on usage errors or unreadable files.

Options:
  --allow-bad-icrc LIST  frames (1-based numbers, comma separated, per file;
                         prefix with FILE: to restrict to one file, e.g.
                         out.pcap:3,out.pcap:7) whose ICRC is expected bad
                         (e.g. corrupted on purpose); their other checks
                         still apply, and a *good* ICRC on them is reported
  --allow-trailer        accept bytes after the IP datagram on any frame
  --expect N             fail unless exactly N RoCEv2 frames were checked
  --min N                fail unless at least N RoCEv2 frames were checked
  --quiet                print nothing on success
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from scapy.compat import raw  # noqa: E402
from scapy.layers.inet import UDP  # noqa: E402
from scapy.utils import PcapReader  # noqa: E402

import roce_scapy  # noqa: E402


def _allowed(spec, path, frameno):
    for item in spec:
        if ':' in item:
            f, n = item.rsplit(':', 1)
            if int(n) == frameno and (f == path or
                                      os.path.basename(f) ==
                                      os.path.basename(path)):
                return True
        elif int(item) == frameno:
            return True
    return False


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[1])
    ap.add_argument('files', nargs='+')
    ap.add_argument('--allow-bad-icrc', default='')
    ap.add_argument('--allow-trailer', action='store_true')
    ap.add_argument('--expect', type=int)
    ap.add_argument('--min', type=int)
    ap.add_argument('--quiet', action='store_true')
    a = ap.parse_args(argv)
    allow = [x for x in a.allow_bad_icrc.split(',') if x]

    checked = 0
    bad = 0
    for path in a.files:
        try:
            reader = PcapReader(path)
        except Exception as e:   # noqa: BLE001
            print('%s: cannot read: %s' % (path, e))
            return 2
        with reader:
            for frameno, pkt in enumerate(reader, 1):
                if UDP not in pkt or pkt[UDP].dport != roce_scapy.ROCE_PORT:
                    continue
                checked += 1
                frame = raw(pkt)
                expect_bad_icrc = _allowed(allow, path, frameno)
                probs = roce_scapy.check_frame(
                    frame, allow_trailer=a.allow_trailer,
                    check_icrc=not expect_bad_icrc)
                if expect_bad_icrc:
                    want = roce_scapy.icrc_expected(frame)
                    if want is not None and \
                            want == roce_scapy.icrc_found(frame):
                        probs.append('ICRC valid but listed in '
                                     '--allow-bad-icrc')
                if probs:
                    bad += 1
                    print('%s:%d: %s' % (path, frameno, '; '.join(probs)))
    if a.expect is not None and checked != a.expect:
        print('checked %d RoCEv2 frames, expected %d' % (checked, a.expect))
        bad += 1
    if a.min is not None and checked < a.min:
        print('checked %d RoCEv2 frames, expected at least %d'
              % (checked, a.min))
        bad += 1
    if bad:
        return 1
    if not a.quiet:
        print('%d frames valid' % checked)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
