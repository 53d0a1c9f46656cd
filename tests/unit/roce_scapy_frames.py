#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
roce_scapy_frames.py — frames built by scapy for every opcode in our table,
with the field values scapy dissects back out of them, for test_roce.c.

Why it exists: the C parser and ICRC must agree with an encoder we did not
write.  Output, one frame per line:

  HEX key=value key=value ...

keys (decimal or 0x-hex): op ver vlan qpn psn ackreq pad paylen udplen
va rkey dmalen swap compare swap_mask compare_mask syn msn orig qkey srcqp
imm icrc (the ICRC scapy computed, read little-endian), udpcs (1 if the UDP
checksum is a real one).  A key is present only if the frame has that field.
"""

import os
import random
import sys

sys.path.insert(0, os.environ.get('TEST_HELPERS_DIR',
                                  os.path.join(os.path.dirname(
                                      os.path.abspath(__file__)),
                                      '..', 'helpers')))

import roce_scapy as rs  # noqa: E402
from scapy.layers.inet import UDP  # noqa: E402
from scapy.layers.l2 import Dot1Q  # noqa: E402
from scapy.layers.inet6 import IPv6  # noqa: E402


def fields(frame):
    p = rs.dissect(frame)
    b = p[rs.BTH]
    out = {
        'op': b.opcode, 'ver': 6 if IPv6 in p else 4,
        'vlan': p[Dot1Q].vlan if Dot1Q in p else -1,
        'qpn': b.dqpn, 'psn': b.psn, 'ackreq': b.ackreq, 'pad': b.padcount,
        'udplen': p[UDP].len, 'udpcs': int(p[UDP].chksum != 0),
        'icrc': rs.icrc_expected(frame),
    }
    hdr = 12 + rs.ext_len(b.opcode)
    if b.opcode == 0x81:
        hdr = 12      # CNP: the 16 reserved bytes are its payload
    out['paylen'] = p[UDP].len - 8 - hdr - 4
    if rs.RETH in p:
        r = p[rs.RETH]
        out.update(va=r.va, rkey=r.rkey, dmalen=r.dma_len)
    for cls in (rs.AtomicETH, rs.MaskedAtomicETH):
        if cls in p:
            a = p[cls]
            out.update(va=a.va, rkey=a.rkey, swap=a.swap, compare=a.compare)
            if cls is rs.MaskedAtomicETH:
                out.update(swap_mask=a.swap_mask, compare_mask=a.compare_mask)
    if rs.AETH in p:
        out.update(syn=p[rs.AETH].syndrome, msn=p[rs.AETH].msn)
    if rs.AtomicAckETH in p:
        out['orig'] = p[rs.AtomicAckETH].orig
    if rs.DETH in p:
        out.update(qkey=p[rs.DETH].qkey, srcqp=p[rs.DETH].src_qp)
    if rs.ImmDt in p:
        out['imm'] = p[rs.ImmDt].imm
    return out


def main():
    rnd = random.Random(4791)
    n = 0
    for op in rs.opcodes():
        payload_ok = rs.OPCODE_HEADERS[op][1] and op != 0x81
        payloads = [b''] + ([b'x', b'abcdefgh', bytes(range(37))]
                            if payload_ok else [])
        for ipv6 in (False, True):
            for vlan in (None, 42):
                for pl in payloads:
                    kw = dict(
                        ipv6=ipv6, vlan=vlan, payload=pl,
                        qpn=rnd.randrange(1 << 24), psn=rnd.randrange(1 << 24),
                        ackreq=rnd.random() < 0.5,
                        va=rnd.randrange(1 << 64), rkey=rnd.randrange(1 << 32),
                        swap=rnd.randrange(1 << 64),
                        compare=rnd.randrange(1 << 64),
                        swap_mask=rnd.randrange(1 << 64),
                        compare_mask=rnd.randrange(1 << 64),
                        syndrome=rnd.choice([0x1f, 0x00, 0x0c, 0x20, 0x60,
                                             0x61]),
                        msn=rnd.randrange(1 << 24),
                        orig=rnd.randrange(1 << 64),
                        imm=rnd.randrange(1 << 32),
                        ieth_rkey=rnd.randrange(1 << 32),
                        src_qp=rnd.randrange(1 << 24),
                        tos=rnd.randrange(256), ttl=rnd.randrange(1, 256),
                        tc=rnd.randrange(256), fl=rnd.randrange(1 << 20),
                        hlim=rnd.randrange(1, 256),
                        fecn=rnd.randrange(2), becn=rnd.randrange(2),
                        udp_chksum=None if rnd.random() < 0.3 else 0,
                        eth_pad_to=60 if rnd.random() < 0.3 else None)
                    frame = rs.make_frame(op, **kw)
                    f = fields(frame)
                    print(frame.hex(), ' '.join('%s=%d' % kv
                                                for kv in f.items()))
                    n += 1
    # IPv4 with options (IHL > 5), with and without VLAN
    for op in (0x0a, 0x11, 0x13, 0x18):
        for vlan in (None, 7):
            frame = rs.make_frame(op, vlan=vlan,
                                  payload=b'abcd' if op == 0x0a else b'',
                                  ip_options=b'\x01\x01\x01\x01' * (1 + n % 3),
                                  psn=n, qpn=op)
            print(frame.hex(), ' '.join('%s=%d' % kv
                                        for kv in fields(frame).items()))
            n += 1
    sys.stderr.write('%d scapy frames\n' % n)


if __name__ == '__main__':
    main()
