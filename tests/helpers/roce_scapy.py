# SPDX-License-Identifier: BSD-3-Clause
"""
roce_scapy — RoCEv2 extension headers for scapy, a frame builder and a frame
checker.  Run it with /usr/bin/python3 (Debian's python3-scapy), never the
pyenv python3 on PATH.

Why it exists: the tests must check our C wire library (lib/roce) against a
peer we did not write.  scapy.contrib.roce has BTH, AETH, CNPPadding and the
IPv4 ICRC but none of the other extension headers; they are added here and
bound to BTH by opcode, so scapy dissects every opcode swordd handles.

Stable interface (other suites import it; do not rename):

  Layers (scapy Packet classes; all fields host integers):
    BTH, AETH, CNPPadding      re-exported from scapy.contrib.roce
    RETH(va, rkey, dma_len)                      16 bytes
    AtomicETH(va, rkey, swap, compare)           28 bytes (swap = add for FAA)
    MaskedAtomicETH(va, rkey, swap, compare, swap_mask, compare_mask)
                                                 44 bytes, vendor opcode 0x18
                                                 (order checked against frame
                                                 10 of rcuckoo-connectx.pcap)
    AtomicAckETH(orig)                           8 bytes
    ImmDt(imm)   IETH(rkey)   DETH(qkey, resv, src_qp)

  OPCODE_HEADERS: {opcode: (tuple of layer classes after BTH, payload_allowed)}
  OPCODE_NAMES:   {opcode: name}
  opcodes():      sorted list of every opcode we support

  make_pkt(opcode, **kw) -> scapy packet (Ether/[Dot1Q]/IP|IPv6/UDP/BTH/...)
  make_frame(opcode, **kw) -> bytes with a valid ICRC (and IPv4 checksum)
      keywords (all optional):
        payload=b''       message payload; zero pad bytes are appended up to
                          a multiple of 4 and BTH.padcount set (pad=None), or
                          pad=N forces the pad count (pad bytes still appended)
        ipv6=False, vlan=None (VLAN id -> 802.1Q tag), prio=0
        src_mac, dst_mac, src_ip, dst_ip, sport=0xc000, dport=4791,
        tos=0x02 (v4) / tc=0x02, fl=0 (v6), ttl=64 / hlim=64, ip_id=0x1234,
        ip_options=b'' (raw IPv4 option bytes, a multiple of 4)
        udp_chksum=0 (None: let scapy compute a real one)
        qpn=0x1f0, psn=0, ackreq=False, se=False, migreq=True, pkey=0xffff,
        fecn=0, becn=0
        va, rkey, dma_len (RETH; dma_len defaults to len(payload) for
                           WRITE_ONLY*, 64 for READ_REQUEST, else 0)
        swap, compare, swap_mask, compare_mask (AtomicETH / masked)
        syndrome=0x1f (ACK, credits invalid), msn=0, orig=0, imm=0, ieth_rkey=0
        qkey=0x80010000, src_qp=1 (DETH)
        eth_pad_to=None   pad the Ethernet frame with zeros to this length
  icrc_expected(frame: bytes) -> int | None
      ICRC of the frame as scapy computes it (IPv4: scapy's own
      BTH.compute_icrc; IPv6: the same masking done here, since scapy 2.5
      only does IPv4), as the integer stored little-endian on the wire.
  icrc_found(frame: bytes) -> int      trailing 4 bytes read little-endian
  check_frame(frame: bytes, allow_trailer=False, check_icrc=True)
      -> list of problems ([] = ok): every check validate_pcap.py does, for
      one UDP/4791 frame (see validate_pcap.py for the list).
  dissect(frame: bytes) -> scapy packet
  l2_len(pkt) -> int             Ethernet (+802.1Q) header length
  datagram_end(frame) -> int     offset just past the IP datagram
  ext_len(opcode) -> int         extension header bytes after the BTH

IPv6 note: the masked pseudo-header for IPv6 is (IBTA Annex A17.3.3) 8 bytes
0xFF, the IPv6 header with traffic class, flow label and hop limit set to
ones, the UDP header with checksum set to ones, the BTH with byte 4 set to
ones, then the rest up to the ICRC.  That computation is the only part of
the ICRC not done by scapy itself.
"""

import struct
import zlib

from scapy.compat import raw
from scapy.config import conf
from scapy.fields import BitField, XBitField, XIntField, XLongField
from scapy.layers.inet import IP, UDP, IPOption
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Dot1Q, Ether
from scapy.packet import Packet, bind_layers
from scapy.utils import checksum
from scapy.contrib.roce import AETH, BTH, CNPPadding

__all__ = [
    'BTH', 'AETH', 'CNPPadding', 'RETH', 'AtomicETH', 'MaskedAtomicETH',
    'AtomicAckETH', 'ImmDt', 'IETH', 'DETH', 'OPCODE_HEADERS', 'OPCODE_NAMES',
    'opcodes', 'make_pkt', 'make_frame', 'icrc_expected', 'icrc_found',
    'check_frame', 'dissect', 'ROCE_PORT', 'l2_len', 'datagram_end',
    'ext_len',
]

ROCE_PORT = 4791


def _bth_of(layer):
    while layer is not None and not isinstance(layer, BTH):
        layer = layer.underlayer
    return layer


def _next_header(self, payload):
    """Next layer after self, from the opcode of the BTH below it."""
    bth = _bth_of(self.underlayer)
    if bth is not None:
        ent = OPCODE_HEADERS.get(bth.opcode)
        if ent is not None:
            seq = ent[0]
            for i, cls in enumerate(seq):
                if isinstance(self, cls) and i + 1 < len(seq):
                    return seq[i + 1]
    return conf.raw_layer


class RETH(Packet):
    name = "RETH"
    fields_desc = [XLongField("va", 0), XIntField("rkey", 0),
                   XIntField("dma_len", 0)]
    guess_payload_class = _next_header


class AtomicETH(Packet):
    name = "AtomicETH"
    fields_desc = [XLongField("va", 0), XIntField("rkey", 0),
                   XLongField("swap", 0), XLongField("compare", 0)]
    guess_payload_class = _next_header


class MaskedAtomicETH(Packet):
    name = "MaskedAtomicETH"
    fields_desc = [XLongField("va", 0), XIntField("rkey", 0),
                   XLongField("swap", 0), XLongField("compare", 0),
                   XLongField("swap_mask", 0), XLongField("compare_mask", 0)]
    guess_payload_class = _next_header


class AtomicAckETH(Packet):
    name = "AtomicAckETH"
    fields_desc = [XLongField("orig", 0)]
    guess_payload_class = _next_header


class ImmDt(Packet):
    name = "ImmDt"
    fields_desc = [XIntField("imm", 0)]
    guess_payload_class = _next_header


class IETH(Packet):
    name = "IETH"
    fields_desc = [XIntField("rkey", 0)]
    guess_payload_class = _next_header


class DETH(Packet):
    name = "DETH"
    fields_desc = [XIntField("qkey", 0), XBitField("resv", 0, 8),
                   BitField("src_qp", 0, 24)]
    guess_payload_class = _next_header


# scapy's AETH only knows it follows an ACK; after it may come AtomicAckETH.
AETH.guess_payload_class = _next_header

# opcode -> (extension headers in wire order, payload allowed)
OPCODE_HEADERS = {
    0x00: ((), True),                    # RC SEND_FIRST
    0x01: ((), True),                    # RC SEND_MIDDLE
    0x02: ((), True),                    # RC SEND_LAST
    0x03: ((ImmDt,), True),              # RC SEND_LAST_IMM
    0x04: ((), True),                    # RC SEND_ONLY
    0x05: ((ImmDt,), True),              # RC SEND_ONLY_IMM
    0x06: ((RETH,), True),               # RC WRITE_FIRST
    0x07: ((), True),                    # RC WRITE_MIDDLE
    0x08: ((), True),                    # RC WRITE_LAST
    0x09: ((ImmDt,), True),              # RC WRITE_LAST_IMM
    0x0a: ((RETH,), True),               # RC WRITE_ONLY
    0x0b: ((RETH, ImmDt), True),         # RC WRITE_ONLY_IMM
    0x0c: ((RETH,), False),              # RC READ_REQUEST
    0x0d: ((AETH,), True),               # RC READ_RESPONSE_FIRST
    0x0e: ((), True),                    # RC READ_RESPONSE_MIDDLE
    0x0f: ((AETH,), True),               # RC READ_RESPONSE_LAST
    0x10: ((AETH,), True),               # RC READ_RESPONSE_ONLY
    0x11: ((AETH,), False),              # RC ACKNOWLEDGE
    0x12: ((AETH, AtomicAckETH), False),  # RC ATOMIC_ACKNOWLEDGE
    0x13: ((AtomicETH,), False),         # RC COMPARE_SWAP
    0x14: ((AtomicETH,), False),         # RC FETCH_ADD
    0x16: ((IETH,), True),               # RC SEND_LAST_INV
    0x17: ((IETH,), True),               # RC SEND_ONLY_INV
    0x18: ((MaskedAtomicETH,), False),   # RC masked CAS (ConnectX)
    0x64: ((DETH,), True),               # UD SEND_ONLY
    0x65: ((DETH, ImmDt), True),         # UD SEND_ONLY_IMM
    0x81: ((CNPPadding,), False),        # CNP (16 reserved bytes)
}

OPCODE_NAMES = {
    0x00: 'RC_SEND_FIRST', 0x01: 'RC_SEND_MIDDLE', 0x02: 'RC_SEND_LAST',
    0x03: 'RC_SEND_LAST_IMM', 0x04: 'RC_SEND_ONLY', 0x05: 'RC_SEND_ONLY_IMM',
    0x06: 'RC_WRITE_FIRST', 0x07: 'RC_WRITE_MIDDLE', 0x08: 'RC_WRITE_LAST',
    0x09: 'RC_WRITE_LAST_IMM', 0x0a: 'RC_WRITE_ONLY',
    0x0b: 'RC_WRITE_ONLY_IMM', 0x0c: 'RC_READ_REQUEST',
    0x0d: 'RC_READ_RESPONSE_FIRST', 0x0e: 'RC_READ_RESPONSE_MIDDLE',
    0x0f: 'RC_READ_RESPONSE_LAST', 0x10: 'RC_READ_RESPONSE_ONLY',
    0x11: 'RC_ACKNOWLEDGE', 0x12: 'RC_ATOMIC_ACKNOWLEDGE',
    0x13: 'RC_COMPARE_SWAP', 0x14: 'RC_FETCH_ADD', 0x16: 'RC_SEND_LAST_INV',
    0x17: 'RC_SEND_ONLY_INV', 0x18: 'RC_MASKED_COMPARE_SWAP',
    0x64: 'UD_SEND_ONLY', 0x65: 'UD_SEND_ONLY_IMM', 0x81: 'CNP',
}

_HDR_LEN = {RETH: 16, AtomicETH: 28, MaskedAtomicETH: 44, AtomicAckETH: 8,
            ImmDt: 4, IETH: 4, DETH: 8, AETH: 4, CNPPadding: 16}


def opcodes():
    return sorted(OPCODE_HEADERS)


def ext_len(opcode):
    """Bytes of extension headers after the BTH (CNP's 16 reserved bytes
    count as its 'header')."""
    return sum(_HDR_LEN[c] for c in OPCODE_HEADERS[opcode][0])


for _op, (_seq, _pl) in OPCODE_HEADERS.items():
    if _seq and _op not in (0x11, 0x81):   # scapy binds those itself
        bind_layers(BTH, _seq[0], opcode=_op)


def _ext_layer(cls, kw, payload_len, opcode):
    if cls is RETH:
        if opcode == 0x0c:
            dflt = 64
        elif opcode in (0x0a, 0x0b):
            dflt = payload_len
        else:
            dflt = 0
        return RETH(va=kw.get('va', 0x1000), rkey=kw.get('rkey', 0x2521),
                    dma_len=kw.get('dma_len', dflt))
    if cls is AtomicETH:
        return AtomicETH(va=kw.get('va', 0x1000), rkey=kw.get('rkey', 0x2521),
                         swap=kw.get('swap', 1), compare=kw.get('compare', 0))
    if cls is MaskedAtomicETH:
        return MaskedAtomicETH(va=kw.get('va', 0x1000),
                               rkey=kw.get('rkey', 0x2521),
                               swap=kw.get('swap', 0x80),
                               compare=kw.get('compare', 0),
                               swap_mask=kw.get('swap_mask', 0x80),
                               compare_mask=kw.get('compare_mask', 0x80))
    if cls is AETH:
        return AETH(syndrome=kw.get('syndrome', 0x1f), msn=kw.get('msn', 0))
    if cls is AtomicAckETH:
        return AtomicAckETH(orig=kw.get('orig', 0))
    if cls is ImmDt:
        return ImmDt(imm=kw.get('imm', 0))
    if cls is IETH:
        return IETH(rkey=kw.get('ieth_rkey', 0))
    if cls is DETH:
        return DETH(qkey=kw.get('qkey', 0x80010000), src_qp=kw.get('src_qp', 1))
    if cls is CNPPadding:
        return CNPPadding()
    raise ValueError(cls)


def make_pkt(opcode, **kw):
    """Scapy packet for opcode (ICRC left for make_frame to fill)."""
    if opcode not in OPCODE_HEADERS:
        raise ValueError('unsupported opcode 0x%x' % opcode)
    seq, payload_ok = OPCODE_HEADERS[opcode]
    payload = bytes(kw.get('payload', b''))
    if payload and not payload_ok:
        raise ValueError('opcode 0x%x carries no payload' % opcode)
    pad = kw.get('pad')
    if pad is None:
        pad = (-len(payload)) % 4
    ipv6 = kw.get('ipv6', False)

    l2 = Ether(src=kw.get('src_mac', 'ec:0d:9a:68:21:cc'),
               dst=kw.get('dst_mac', 'ec:0d:9a:68:21:d0'))
    if kw.get('vlan') is not None:
        l2 = l2 / Dot1Q(vlan=kw['vlan'], prio=kw.get('prio', 0))
    if ipv6:
        l3 = IPv6(src=kw.get('src_ip', '2001:db8::13'),
                  dst=kw.get('dst_ip', '2001:db8::12'),
                  tc=kw.get('tc', 0x02), fl=kw.get('fl', 0),
                  hlim=kw.get('hlim', 64))
    else:
        l3 = IP(src=kw.get('src_ip', '198.18.1.13'),
                dst=kw.get('dst_ip', '198.18.1.12'),
                tos=kw.get('tos', 0x02), ttl=kw.get('ttl', 64),
                id=kw.get('ip_id', 0x1234), flags='DF',
                options=[IPOption(kw['ip_options'])] if kw.get('ip_options')
                else [])
    l4 = UDP(sport=kw.get('sport', 0xc000), dport=kw.get('dport', ROCE_PORT),
             chksum=kw.get('udp_chksum', 0))
    bth = BTH(opcode=opcode, solicited=int(kw.get('se', False)),
              migreq=int(kw.get('migreq', True)), padcount=pad & 3,
              version=kw.get('tver', 0), pkey=kw.get('pkey', 0xffff),
              fecn=kw.get('fecn', 0), becn=kw.get('becn', 0),
              dqpn=kw.get('qpn', 0x1f0), ackreq=int(kw.get('ackreq', False)),
              psn=kw.get('psn', 0))
    if opcode == 0x81 and 'becn' not in kw:
        bth.becn = 1
    pkt = l2 / l3 / l4 / bth
    for cls in seq:
        pkt = pkt / _ext_layer(cls, kw, len(payload), opcode)
    body = payload + b'\0' * ((-len(payload)) % 4 if kw.get('pad') is None
                              else pad)
    if body:
        pkt = pkt / conf.raw_layer(load=body)
    return pkt


def make_frame(opcode, **kw):
    """Bytes of a valid RoCEv2 frame (ICRC computed by scapy)."""
    pkt = make_pkt(opcode, **kw)
    if kw.get('ipv6', False):
        # scapy 2.5 has no IPv6 ICRC: compute it, then rebuild so that a
        # real UDP checksum (udp_chksum=None) covers the final ICRC.
        pkt[BTH].icrc = 0
        crc = icrc_expected(raw(pkt))
        pkt[BTH].icrc = struct.unpack('!I', struct.pack('<I', crc))[0]
        frame = bytearray(raw(pkt))
    else:
        frame = bytearray(raw(pkt))     # scapy fills icrc (None)
    pad_to = kw.get('eth_pad_to')
    if pad_to and len(frame) < pad_to:
        frame += b'\0' * (pad_to - len(frame))
    return bytes(frame)


def dissect(frame):
    return Ether(bytes(frame))


def _ipv6_icrc(pkt):
    ip6 = pkt[IPv6]
    hdr = bytearray(raw(ip6)[:40])
    hdr[0] = 0x6f
    hdr[1] = 0xff
    hdr[2] = 0xff
    hdr[3] = 0xff
    hdr[7] = 0xff
    dgram = raw(ip6)[40:40 + ip6.plen]
    udp = bytearray(dgram[:8])
    udp[6:8] = b'\xff\xff'
    rest = bytearray(dgram[8:-4])
    rest[4] = 0xff
    return zlib.crc32(b'\xff' * 8 + bytes(hdr) + bytes(udp) + bytes(rest)) \
        & 0xffffffff


def l2_len(pkt):
    """Ethernet header length of a dissected frame (14 + 4 per 802.1Q)."""
    return 14 + 4 * sum(isinstance(x, Dot1Q) for x in _layers(pkt))


def datagram_end(frame):
    """Offset just past the IP datagram (drops Ethernet padding/trailer)."""
    pkt = Ether(bytes(frame))
    l3 = _l3(pkt)
    if l3 is None:
        return len(frame)
    n = l3.len if isinstance(l3, IP) else 40 + l3.plen
    return min(len(frame), l2_len(pkt) + n)


def icrc_expected(frame):
    """ICRC scapy computes for this frame, as a host integer (wire bytes
    read little-endian); None if it is not an IP/UDP/BTH frame."""
    frame = bytes(frame)[:datagram_end(frame)]
    pkt = Ether(frame)
    if BTH not in pkt:
        return None
    if IPv6 in pkt:
        return _ipv6_icrc(pkt)
    return struct.unpack('<I', pkt[BTH].compute_icrc(None))[0]


def icrc_found(frame):
    """Trailing ICRC of the IP datagram, read little-endian."""
    end = datagram_end(frame)
    return struct.unpack('<I', bytes(frame)[end - 4:end])[0]


def _layers(pkt):
    out = []
    while pkt is not None and not isinstance(pkt, conf.raw_layer):
        out.append(pkt)
        pkt = pkt.payload if pkt.payload else None
    return out


def _l3(pkt):
    if IP in pkt:
        return pkt[IP]
    if IPv6 in pkt:
        return pkt[IPv6]
    return None


def check_frame(frame, allow_trailer=False, check_icrc=True):
    """Problems found in one UDP/4791 frame; [] if it is valid RoCEv2."""
    frame = bytes(frame)
    probs = []
    pkt = Ether(frame)
    l3 = _l3(pkt)
    if l3 is None or UDP not in pkt:
        return ['not IP/UDP']
    l2len = l2_len(pkt)
    if isinstance(l3, IP):
        ihl = l3.ihl * 4
        hdr = frame[l2len:l2len + ihl]
        if len(hdr) < 20 or checksum(hdr) != 0:
            probs.append('bad IPv4 header checksum 0x%04x' % l3.chksum)
        if l3.flags.MF or l3.frag:
            probs.append('IPv4 fragment')
        dgram_len = l3.len
        l4_len = l3.len - ihl
    else:
        dgram_len = 40 + l3.plen
        l4_len = l3.plen
        if l3.nh != 17:
            probs.append('IPv6 next header %d is not UDP' % l3.nh)
    end = l2len + dgram_len
    if end > len(frame):
        probs.append('IP length %d exceeds frame (%d bytes after L2)'
                     % (dgram_len, len(frame) - l2len))
        return probs
    if end < len(frame) and not allow_trailer and len(frame) > 64:
        probs.append('%d trailing bytes after the IP datagram'
                     % (len(frame) - end))
    udp = pkt[UDP]
    if udp.len != l4_len:
        probs.append('UDP length %d != IP payload length %d'
                     % (udp.len, l4_len))
        return probs
    if udp.chksum != 0:
        l3c = l3.copy()
        l3c.remove_payload()
        fresh = l3c / UDP(raw(udp)[:udp.len])
        if isinstance(fresh, IP):
            fresh.chksum = None
        fresh[UDP].chksum = None
        good = fresh.__class__(raw(fresh))[UDP].chksum
        if good != udp.chksum:
            probs.append('bad UDP checksum 0x%04x (want 0x%04x)'
                         % (udp.chksum, good))
    if BTH not in pkt:
        probs.append('no BTH (dport %d)' % udp.dport)
        return probs
    bth = pkt[BTH]
    bth_len = l4_len - 8            # BTH .. ICRC inclusive
    if bth_len < 16:
        probs.append('UDP payload %d shorter than BTH+ICRC' % bth_len)
        return probs
    if bth.version != 0:
        probs.append('BTH tver %d' % bth.version)
    ent = OPCODE_HEADERS.get(bth.opcode)
    if ent is None:
        probs.append('unknown opcode 0x%02x' % bth.opcode)
        return probs
    hlen = 12 + ext_len(bth.opcode)
    payload_len = bth_len - 4 - hlen
    if payload_len < 0:
        probs.append('opcode 0x%02x needs %d header bytes, has %d'
                     % (bth.opcode, hlen, bth_len - 4))
        return probs
    if payload_len and not ent[1]:
        probs.append('opcode 0x%02x with %d payload bytes'
                     % (bth.opcode, payload_len))
    if payload_len % 4:
        probs.append('payload+pad %d not a multiple of 4' % payload_len)
    if bth.padcount > payload_len:
        probs.append('pad count %d > payload %d' % (bth.padcount, payload_len))
    if bth.opcode in (0x0a, 0x0b) and RETH in pkt:
        if pkt[RETH].dma_len != payload_len - bth.padcount:
            probs.append('WRITE_ONLY DMA length %d != payload %d'
                         % (pkt[RETH].dma_len, payload_len - bth.padcount))
    if check_icrc:
        want = icrc_expected(frame)
        got = icrc_found(frame)
        if want != got:
            probs.append('bad ICRC 0x%08x (scapy computes 0x%08x)'
                         % (got, want))
    return probs
