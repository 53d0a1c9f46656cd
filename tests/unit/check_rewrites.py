#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
check_rewrites.py IN.pcap OUT.pcap SPEC — judge lib/roce rewrites with scapy.

Why it exists: test_roce.c rewrites frames (CAS/FAA/masked CAS -> WRITE,
ACK -> ATOMIC ACK, synthesized ACKs) and must not be the judge of its own
output.  Frame i of OUT is the rewrite of frame i of IN as described by line
i of SPEC:

  w VALUE              atomic -> WRITE_ONLY with 8-byte payload VALUE
  z                    atomic -> zero-length WRITE_ONLY
  a ORIG               ACK -> ATOMIC ACK carrying ORIG
  b PSN SYN MSN        ACK built from template IN
  B PSN SYN MSN ORIG   ATOMIC ACK built from template IN

Each OUT frame must pass roce_scapy.check_frame (lengths, IPv4 checksum,
UDP checksum if used, ICRC computed by scapy), carry the requested values,
and equal IN byte for byte except where the rewrite must change it (IP and
UDP length/checksum, opcode, pad bits, PSN for built ACKs, the extension
headers and payload).  Ethernet trailer bytes must be carried over.
Prints one line per problem and exits 1, else "N rewrites checked".
"""

import os
import sys

sys.path.insert(0, os.environ.get('TEST_HELPERS_DIR',
                                  os.path.join(os.path.dirname(
                                      os.path.abspath(__file__)),
                                      '..', 'helpers')))

import roce_scapy as rs  # noqa: E402
from scapy.compat import raw  # noqa: E402
from scapy.layers.inet import IP, UDP  # noqa: E402
from scapy.layers.inet6 import IPv6  # noqa: E402
from scapy.utils import rdpcap  # noqa: E402


def offsets(p):
    """(l3, l4, bth, end) byte offsets of a dissected frame."""
    l3 = rs.l2_len(p)
    ip = p[IP] if IP in p else p[IPv6]
    if isinstance(ip, IP):
        l4 = l3 + ip.ihl * 4
        end = l3 + ip.len
    else:
        l4 = l3 + 40
        end = l4 + ip.plen
    return l3, l4, l4 + 8, end


def diff_outside(a, b, n, allowed):
    return [i for i in range(n) if a[i] != b[i] and i not in allowed]


def check(i, fin, fout, spec):
    probs = rs.check_frame(fout, allow_trailer=True)
    pin, pout = rs.dissect(fin), rs.dissect(fout)
    l3, l4, bth, end_in = offsets(pin)
    l3o, l4o, btho, end_out = offsets(pout)
    if (l3, l4, bth) != (l3o, l4o, btho):
        return probs + ['header offsets changed']
    v6 = IPv6 in pin
    lenf = {l3 + 4, l3 + 5} if v6 else {l3 + 2, l3 + 3, l3 + 10, l3 + 11}
    allowed = lenf | {l4 + 4, l4 + 5, l4 + 6, l4 + 7, bth, bth + 1}
    kind = spec[0]
    if kind in 'wza' and fin[end_in:] != fout[end_out:]:
        probs.append('Ethernet trailer not carried over')
    bi, bo = pin[rs.BTH], pout[rs.BTH]
    if kind in 'wz':
        ext = rs.ext_len(bi.opcode)
        val = int(spec[1], 0) if kind == 'w' else None
        want_len = end_in - ext + 16 + (8 if val is not None else 0)
        if end_out != want_len:
            probs.append('datagram end %d, want %d' % (end_out, want_len))
        if bo.opcode != 0x0a:
            probs.append('opcode 0x%x, want WRITE_ONLY' % bo.opcode)
        if bi.opcode not in (0x13, 0x14, 0x18):
            probs.append('input opcode 0x%x is not atomic' % bi.opcode)
        if rs.RETH not in pout:
            return probs + ['no RETH']
        r = pout[rs.RETH]
        a = pin[rs.AtomicETH] if rs.AtomicETH in pin \
            else pin[rs.MaskedAtomicETH]
        if (r.va, r.rkey) != (a.va, a.rkey):
            probs.append('va/rkey changed')
        pay = fout[bth + 28:end_out - 4]
        if val is not None:
            if r.dma_len != 8 or pay != val.to_bytes(8, 'big'):
                probs.append('payload %s dma_len %d, want %016x/8'
                             % (pay.hex(), r.dma_len, val))
        elif r.dma_len != 0 or pay:
            probs.append('zero-length WRITE has dma_len %d payload %d'
                         % (r.dma_len, len(pay)))
        if bo.padcount != 0:
            probs.append('pad %d' % bo.padcount)
        allowed |= {bth + 24 + k for k in range(4)}     # DMA length
        n = bth + 24
    elif kind == 'a':
        if bi.opcode != 0x11 or bo.opcode != 0x12:
            probs.append('opcodes 0x%x -> 0x%x' % (bi.opcode, bo.opcode))
        if end_out != end_in + 8:
            probs.append('datagram end %d, want %d' % (end_out, end_in + 8))
        orig = int(spec[1], 0)
        if rs.AtomicAckETH not in pout or \
                pout[rs.AtomicAckETH].orig != orig:
            probs.append('orig wrong, want %x' % orig)
        if (pout[rs.AETH].syndrome, pout[rs.AETH].msn) != \
                (pin[rs.AETH].syndrome, pin[rs.AETH].msn):
            probs.append('AETH changed')
        n = bth + 16
    elif kind in 'bB':
        psn, syn, msn = (int(x, 0) for x in spec[1:4])
        want_op = 0x12 if kind == 'B' else 0x11
        if bo.opcode != want_op:
            probs.append('opcode 0x%x want 0x%x' % (bo.opcode, want_op))
        if bo.psn != psn or bo.padcount:
            probs.append('psn %d pad %d, want %d 0' % (bo.psn, bo.padcount,
                                                       psn))
        if rs.AETH not in pout or (pout[rs.AETH].syndrome,
                                   pout[rs.AETH].msn) != (syn, msn):
            probs.append('AETH wrong')
        want_end = bth + 12 + 4 + 4 + (8 if kind == 'B' else 0)
        if end_out != want_end:
            probs.append('datagram end %d want %d' % (end_out, want_end))
        if kind == 'B':
            orig = int(spec[4], 0)
            if rs.AtomicAckETH not in pout or \
                    pout[rs.AtomicAckETH].orig != orig:
                probs.append('orig wrong, want %x' % orig)
        if len(fout) != end_out:
            probs.append('built frame has %d bytes after the datagram'
                         % (len(fout) - end_out))
        allowed |= {bth + 9, bth + 10, bth + 11}
        n = bth + 12
        if bi.ackreq != bo.ackreq:
            probs.append('AckReq not kept')
    else:
        return ['bad spec %r' % spec]
    if (bo.solicited, bo.migreq, bo.version, bo.pkey, bo.fecn, bo.becn,
            bo.dqpn, bo.ackreq) != (bi.solicited, bi.migreq, bi.version,
                                    bi.pkey, bi.fecn, bi.becn, bi.dqpn,
                                    bi.ackreq):
        probs.append('BTH fields changed')
    if kind in 'wza' and bo.psn != bi.psn:
        probs.append('PSN changed')
    bad = diff_outside(fin, fout, n, allowed)
    if bad:
        probs.append('bytes changed at %s' % bad)
    if kind in 'wza' and bi.opcode == bo.opcode:
        probs.append('opcode unchanged')
    if pin[UDP].sport != pout[UDP].sport or pin[UDP].dport != 4791:
        probs.append('UDP ports changed')
    return probs


def main(argv):
    fin = [raw(p) for p in rdpcap(argv[0])]
    fout = [raw(p) for p in rdpcap(argv[1])]
    specs = [line.split() for line in open(argv[2]) if line.strip()]
    if not (len(fin) == len(fout) == len(specs)) or not specs:
        print('count mismatch: %d in, %d out, %d specs'
              % (len(fin), len(fout), len(specs)))
        return 1
    bad = 0
    for i, (a, b, s) in enumerate(zip(fin, fout, specs), 1):
        probs = check(i, a, b, s)
        if probs:
            bad += 1
            print('rewrite %d (%s): %s' % (i, ' '.join(s), '; '.join(probs)))
    if bad:
        return 1
    print('%d rewrites checked' % len(specs))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
