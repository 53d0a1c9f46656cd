#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
gen_corpus.py — (re)writes the seed corpora of tests/fuzz/corpus/.

Why it exists: the harnesses reach deep states only from inputs that are
already well-formed, so each starts from seeds: every RoCEv2 frame of the
real captures (and scapy frames with the shapes the captures lack: 802.1Q,
IPv6, IPv4 options, padding, a real UDP checksum) for `parse`; short
scripts of the lock, Clover and CM exchanges for `serializer`, `remap`
and `clover` (the step layout is documented in fuzz_script.h,
fuzz_remap.c and fuzz_clover.c); the shipped configs for `config`.  Seed
files are named seed-*; inputs that reproduced a finding are named regress-* and are
written by hand, never by this script.

  tests/fuzz/gen_corpus.py [--swordd build/app/swordd/swordd] [CAPTURES_DIR]

CAPTURES_DIR defaults to ../shared/captures; with --swordd it also writes
config.dict (libFuzzer dictionary: the sections and keys swordd knows).
"""

import glob
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.normpath(os.path.join(HERE, '..', '..'))
OUT = os.path.join(HERE, 'corpus')


def pcap_frames(path):
    with open(path, 'rb') as f:
        data = f.read()
    magic = struct.unpack('<I', data[:4])[0]
    end = '<' if magic in (0xa1b2c3d4, 0xa1b23c4d) else '>'
    off = 24
    while off + 16 <= len(data):
        _, _, incl, _ = struct.unpack(end + 'IIII', data[off:off + 16])
        yield data[off + 16:off + 16 + incl]
        off += 16 + incl


def put(kind, name, data):
    d = os.path.join(OUT, kind)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, 'seed-' + name), 'wb') as f:
        f.write(data)


def clear_seeds(kind):
    for p in glob.glob(os.path.join(OUT, kind, 'seed-*')):
        os.unlink(p)


def parse_seeds(captures):
    clear_seeds('parse')
    seen = set()
    pcaps = sorted(glob.glob(os.path.join(captures, '*.pcap')) +
                   glob.glob(os.path.join(TOP, 'tests', 'captures', '*.pcap')))
    for path in pcaps:
        base = os.path.splitext(os.path.basename(path))[0]
        for i, fr in enumerate(pcap_frames(path)):
            # one frame per distinct (ethertype, IP proto, UDP port, opcode)
            # shape and length: the 100-frame capture repeats itself
            key = (fr[12:14], fr[23:24], fr[36:38], fr[42:43], len(fr))
            if key in seen:
                continue
            seen.add(key)
            put('parse', '%s-%03d' % (base, i + 1), fr)
    sys.path.insert(0, os.path.join(TOP, 'tests', 'helpers'))
    import roce_scapy as rs
    shapes = [
        ('vlan-cas', 0x13, dict(vlan=5, va=0x10000, swap=1)),
        ('ipv6-write', 0x0a, dict(ipv6=True, payload=b'\x01' * 8, va=0x10000)),
        ('ipopt-ack', 0x11, dict(ip_options=b'\x01\x01\x01\x00')),
        ('pad-send', 0x04, dict(payload=b'abcde')),
        ('udpcsum-cas', 0x13, dict(udp_chksum=None, va=0x10000)),
        ('udpcsum-ack', 0x11, dict(udp_chksum=None)),
        ('mcas', 0x18, dict(va=0x10000, swap=1, swap_mask=1, compare_mask=1)),
        ('ethpad-ack', 0x11, dict(eth_pad_to=64)),
        ('ipv6-vlan-rr', 0x10, dict(ipv6=True, vlan=7, payload=b'\x00' * 16)),
        ('cnp', 0x81, dict()),
    ]
    for name, opc, kw in shapes:
        put('parse', 'scapy-' + name, rs.make_frame(opc, **kw))


# fuzz_serializer.c's operations
(CAS, FAA, MCAS, WRITE, WRITE_FIRST, WRITE_MIDDLE, WRITE_LAST, READ, SEND,
 WRITE_IMM, ACK, NAK, ATOMIC_ACK, RR_FIRST, RR_MIDDLE, RR_LAST, RR_ONLY,
 CM_REQ, CM_REP, CM_DREQ, CM_DREP, CM_RTU, RETRANSMIT, RESEND_RESP,
 RESET) = range(25)


def step(op, conn=0, srv=0, psn=0, addr=0, flags=0, v5=0, v6=0, b7=0):
    return bytes([op, conn | srv << 4, psn, addr, flags, v5, v6, b7])


def lock_round(conn, word=0, srv=0, rewritten=False):
    """acquire CAS(0 -> 1) with its answer (the server ACKs the WRITE a
    rewritten one became), release WRITE(0) with its ACK"""
    return (step(CAS, conn, srv, addr=word, v5=1) +
            (step(ACK, conn, srv, v5=3) if rewritten else
             step(ATOMIC_ACK, conn, srv, v5=3, v6=0)) +
            step(WRITE, conn, srv, addr=word, flags=1, v5=0) +
            step(ACK, conn, srv, v5=3))


def serializer_seeds():
    clear_seeds('serializer')
    put('serializer', 'sherman-one-client',
        b'\x00\x00' + lock_round(0) + lock_round(0, rewritten=True) * 2)
    put('serializer', 'sherman-two-clients',
        b'\x00\x00' + lock_round(0) + lock_round(3) +
        lock_round(0, rewritten=True) + lock_round(4))
    # Sherman start PSN on every QP, several QPs per IP, no AckReq forcing
    put('serializer', 'same-psn-no-ackreq',
        b'\x01\x00' + lock_round(0) + lock_round(1) + lock_round(2))
    # a CAS whose ACK comes back coalesced: ACK (not ATOMIC ACK) for it
    put('serializer', 'coalesced-ack',
        b'\x00\x00' + lock_round(0) +
        step(CAS, 0, addr=0, v5=1) + step(CAS, 0, addr=1, v5=1) +
        step(ACK, 0, v5=4))
    # retransmissions, a go-back-N, a NAK
    put('serializer', 'retransmit',
        b'\x00\x01' + lock_round(0) + step(CAS, 0, v5=1) +
        step(RETRANSMIT, 0) + step(NAK, 0, b7=0) + step(RETRANSMIT, 0) +
        step(ATOMIC_ACK, 0, v5=3))
    # FAA and masked CAS on other words, READ spanning PSNs, READ responses
    put('serializer', 'faa-mcas-read',
        b'\x80\x00' + step(FAA, 1, addr=2, v5=1) + step(ATOMIC_ACK, 1, v5=3) +
        step(MCAS, 1, addr=3, v5=1, v6=5) + step(ATOMIC_ACK, 1, v5=3) +
        step(READ, 1, addr=4 | 0x40) + step(RR_FIRST, 1, psn=0xa0, v5=3) +
        step(RR_MIDDLE, 1, psn=0xa1) + step(RR_LAST, 1, v5=2))
    # multi-packet WRITE over lock words, a WRITE_ONLY of 16 bytes
    put('serializer', 'span-writes',
        b'\x00\x00' + step(WRITE_FIRST, 2, addr=5, flags=1) +
        step(WRITE_MIDDLE, 2, v5=1) + step(WRITE_LAST, 2, flags=1) +
        step(ACK, 2, v5=3) + step(WRITE, 2, addr=6 | 0x20, flags=1) +
        step(ACK, 2, v5=3))
    # RDMA CM: REQ, REP, RTU, a lock round, DREQ, DREP
    put('serializer', 'cm-exchange',
        b'\x00\x02' + step(CM_REQ, 0, v5=16, v6=16) + step(CM_REP, 0, v5=16, v6=16) +
        step(CM_RTU, 0) + lock_round(0) + step(CM_DREQ, 0) +
        step(CM_DREP, 0, b7=4))
    # a real UDP checksum, bad ICRCs, corrupted bytes
    put('serializer', 'udp-cksum-bad-icrc',
        b'\x00\x00' + step(CAS, 0, v5=1, flags=8) + step(ATOMIC_ACK, 0, v5=3, flags=8) +
        step(WRITE, 0, flags=1 | 8) + step(ACK, 0, v5=3, flags=8) +
        step(CAS, 0, v5=1, flags=2 | 8) + step(CAS, 0, v5=1, flags=4) +
        step(CAS, 0, v5=1, flags=8) + step(ACK, 0, v5=3, flags=8))
    # a retransmitted decision after another connection changed the word
    # (ser_word.c S8): A's rewritten CAS is its second-latest request
    put('serializer', 'replay-after-other-changed',
        b'\x00\x00' + lock_round(0) + lock_round(0, rewritten=True) +
        lock_round(3) + lock_round(3, rewritten=True) +
        step(RETRANSMIT, 0, b7=1) + step(ACK, 0, v5=3))
    # more connections than slots, time passing, a restart
    fill = b''.join(step(CAS, c, s, addr=c, v5=1) for s in (0, 1) for c in range(9))
    put('serializer', 'table-full-idle',
        b'\x10\x08' + fill + step(CAS, 0, flags=0xf0, v5=1) + fill +
        step(RESET, b7=0xff) + lock_round(0))


# fuzz_remap.c: b[1] bit 6 answers from the connection's own QP, not a
# lane; b[5] bits 3-5 of a lane answer pick its PSN from the lane's state
DIRECT = 0x40
UNA, UNA1, UNA2, RESEND, NEXT1, NEXT2, NEXT3, BEFORE = (x << 3 for x in range(8))
MSN1 = 3        # b[5] low bits: the server's MSN moves by one


def pair(conn, srv=0, op=WRITE):
    """a request on the connection's own QP and its answer from there:
    paired on evidence, its MSN known, ready to bind at its next request"""
    return (step(op, conn, srv, flags=1) +
            step(ACK if op != CAS else ATOMIC_ACK, conn | DIRECT, srv, v5=MSN1))


def cm(conn, srv=0):
    return (step(CM_REQ, conn, srv, v5=4, v6=4) + step(CM_REP, conn, srv, v5=4, v6=4) +
            step(CM_RTU, conn, srv))


def remap_seeds():
    clear_seeds('remap')
    # scattered PSNs (h1 = 2): two clients paired on evidence, bound onto
    # one lane; a coalesced lane ACK expanded to both, an ATOMIC ACK mapped
    two = (pair(0) + step(CAS, 0, v5=1) + step(ATOMIC_ACK, 0, v5=UNA | MSN1) +
           pair(1) + step(WRITE, 1, flags=1) + step(WRITE, 0, flags=1) +
           step(WRITE, 1, flags=1) + step(ACK, 0, v5=NEXT1 | MSN1))
    put('remap', 'bind-expand', b'\x00\x02' + two)
    # the same behind a serializer (server 0 has lock words), two lanes
    put('remap', 'stacked-two-lanes', b'\x03\x02' + two + pair(3) +
        step(CAS, 3, v5=1) + step(ACK, 3, v5=UNA | MSN1) + step(FAA, 3, addr=2, v5=1) +
        step(ATOMIC_ACK, 3, v5=UNA | MSN1))
    # Sherman: every QP at 3185, identified by the RDMA CM
    put('remap', 'sherman-cm', b'\x00\x00' + cm(0) + cm(1) + cm(3) +
        pair(0, op=CAS) + pair(1, op=CAS) + pair(3, op=CAS) +
        b''.join(step(CAS, c, v5=1) + step(WRITE, c, flags=1) for c in (0, 1, 3)) +
        step(ATOMIC_ACK, 0, v5=UNA | MSN1) + step(ACK, 0, v5=NEXT1 | MSN1))
    # READs spanning lane PSNs (path MTU 256), their responses in parts
    put('remap', 'read-spans', b'\x40\x02' + pair(0) + pair(1) + step(WRITE, 0) +
        step(READ, 1, addr=0x40) + step(READ, 0, addr=0x20) +
        step(RR_FIRST, 1, v5=UNA1 | MSN1) + step(RR_MIDDLE, 1, v5=UNA2) +
        step(ACK, 0, v5=UNA | MSN1) + step(RR_LAST, 1, v5=NEXT2 | MSN1) +
        step(RR_ONLY, 0, v5=NEXT1 | MSN1))
    # a sequence NAK on the lane: recovery, clients asked in turn,
    # retransmissions at their lane PSNs; then an RNR NAK
    put('remap', 'nak-recovery', b'\x00\x02' + pair(0) + pair(1) +
        step(WRITE, 0, flags=1) + step(WRITE, 1, flags=1) + step(WRITE, 0, flags=1) +
        step(NAK, 0, v5=UNA | 2, b7=0) + step(RETRANSMIT, 0, b7=1) +
        step(RETRANSMIT, 1) + step(RETRANSMIT, 0) + step(ACK, 0, v5=NEXT1 | MSN1) +
        step(WRITE, 1, flags=1) + step(NAK, 1, v5=UNA | 2, b7=5) +
        step(RETRANSMIT, 1) + step(ACK, 1, v5=NEXT1 | MSN1))
    # one responder resource: the second client's atomic waits its turn
    # and is asked back with an RNR NAK; an answer lost, asked again
    put('remap', 'rd-limit-wait', b'\x10\x02' + pair(0) + pair(1) +
        step(CAS, 0, v5=1) + step(CAS, 1, v5=1) + step(ATOMIC_ACK, 0, v5=UNA | MSN1) +
        step(RETRANSMIT, 1) + step(RETRANSMIT, 0) + step(ATOMIC_ACK, 1, v5=UNA | MSN1) +
        step(CAS, 0, v5=1, flags=0x80) + step(RETRANSMIT, 0))
    # a multi-packet WRITE keeps the lane; another client's request held
    put('remap', 'open-message', b'\x00\x02' + pair(0) + pair(1) +
        step(WRITE_FIRST, 0, flags=1) + step(WRITE, 1, flags=1) +
        step(WRITE_MIDDLE, 0) + step(WRITE_LAST, 0, flags=1) + step(RETRANSMIT, 1) +
        step(ACK, 0, v5=NEXT1 | MSN1))
    # bad ICRCs, corrupted bytes, UDP checksums, on both paths
    put('remap', 'bad-icrc-udp', b'\x00\x02' + pair(0) + pair(1) +
        step(WRITE, 0, flags=1 | 8) + step(WRITE, 1, flags=2) +
        step(WRITE, 1, flags=4) + step(WRITE, 1, flags=1 | 8) +
        step(ACK, 0, v5=NEXT1 | MSN1, flags=2) + step(ACK, 0, v5=NEXT1 | MSN1, flags=8) +
        step(ACK, 0 | DIRECT, v5=MSN1, flags=2))
    # a fatal NAK closes the lane; the owner reconnects (CM), a restart
    # with the start hold-off, a small connection table
    put('remap', 'fatal-restart', b'\x00\x0e' + pair(0) + pair(1) +
        step(WRITE, 1, flags=1) + step(NAK, 1, v5=UNA | 2, b7=2) +
        step(WRITE, 1, flags=1) + cm(0) + pair(0) + step(WRITE, 0, flags=1) +
        step(RESET, b7=0xff) + step(WRITE, 0, flags=0x90) + cm(2) + pair(2) +
        step(WRITE, 2, flags=0xc0))


(C_WRITE, C_WRITE2, C_CAS, C_READ, C_AACK, C_AACK2, C_OTHER, C_RETX) = range(8)


def clover_seeds():
    clear_seeds('clover')
    # key width 1, next pointer at 56, both steerings, 16 keys, 8 QPs,
    # 8 CAS slots, read factor 3
    h = b'\x1c\x7f'
    put('clover', 'steer-cas-and-read',
        h + step(C_WRITE, 0, addr=1, v5=7) + step(C_CAS, 0, addr=0, v6=1) +
        step(C_AACK, 0) + step(C_WRITE, 0, addr=2, v5=7) +
        step(C_CAS, 0, addr=1, v6=2) + step(C_WRITE, 1, addr=3, v5=7) +
        step(C_CAS, 1, addr=1, v6=3) + step(C_READ, 2, addr=1))
    put('clover', 'contention-two-servers',
        h + b''.join(step(C_WRITE, c, s, addr=c + 1, v5=9) +
                     step(C_CAS, c, s, addr=c, v6=c + 1) +
                     step(C_AACK, c, s, v6=c & 1) + step(C_READ, c, s, addr=c)
                     for s in (0, 1) for c in range(6)))
    put('clover', 'tiny-tables-retransmit',
        b'\x3d\x00' + step(C_WRITE, 0, addr=1, v5=1) + step(C_CAS, 0, v6=1) +
        step(C_RETX, 0) + step(C_WRITE, 1, addr=2, v5=2) + step(C_CAS, 1, v6=2) +
        step(C_AACK, 1) + step(C_AACK, 0) + step(C_OTHER, 0, b7=3) +
        step(C_CAS, 0, flags=2) + step(C_READ, 0, addr=1, flags=8))


def config_seeds():
    clear_seeds('config')
    for path in sorted(glob.glob(os.path.join(TOP, 'conf', '*.conf'))):
        with open(path, 'rb') as f:
            put('config', os.path.basename(path), f.read())
    put('config', 'sets',
        b'[server.a]\nip = 10.0.0.1\n[lock.l]\nserver = a\nbase = 0x1000\n'
        b'length = 64\n[features]\natomic_replacement = on\n--\n'
        b'lock.l.rkey=any\nserver.b.ip=10.0.0.2\ncores.workers=2\n')
    # everything cross-checked at once: two workers, servers pinned and
    # not, explicit rkeys, two lock regions and two Clover layouts per
    # server that validate, then --set overrides on top
    put('config', 'full',
        b'[ports]\nmode = two-port\nclient = 0\nserver = 1\n[cores]\nworkers = 2\n'
        b'[server.m0]\nip = 10.0.0.1\nworker = 1\n[server.m1]\nip = 10.0.0.2\n'
        b'[lock.a]\nserver = m0\nrkey = 0x2521\nbase = 0x10000\nlength = 4096\n'
        b'[lock.b]\nserver = m0\nrkey = 0x2522\nbase = 0x10000\nlength = 64\n'
        b'[lock.c]\nserver = m1\nbase = 0x0\nlength = 8\n'
        b'[clover.v]\nserver = m1\nrkey = 7\nbase = 0x100000\nlength = 0x10000\n'
        b'write_min = 64\nkey_offset = 0\nkey_width = 4\nnext_offset = 56\n'
        b'read_min = 64\n[clover.w]\nserver = m1\nrkey = 8\n'
        b'[features]\natomic_replacement = on\nclover = on\n'
        b'[tables]\nlock_words = 1024\n[atomic]\ngate_ms = 5\n'
        b'[clover]\nkeys = 1024\nread_ways = 4\n--\n'
        b'server.m1.worker=0\nlock.c.rkey=any\natomic.force_ackreq=off\n')
    # refused by the cross-checks: overlapping regions, too many words
    put('config', 'overlap',
        b'[server.m0]\nip = 10.0.0.1\n[lock.a]\nserver = m0\nbase = 0x1000\n'
        b'length = 64\n[lock.b]\nserver = m0\nbase = 0x1020\nlength = 64\n'
        b'[clover.x]\nserver = m0\nbase = 0x8000\nlength = 0x100\n'
        b'[clover.y]\nserver = m0\nbase = 0x8080\n')
    put('config', 'clover-layout',
        b'[server.m]\nip = 192.168.1.13\n[clover.c]\nserver = m\nbase = 0x0\n'
        b'length = 0\nkey_offset = 8\nkey_width = 8\nnext_offset = 56\n'
        b'write_min = 64\n[features]\nclover = on\n')


def config_dict(swordd):
    """libFuzzer dictionary for fuzz_config: every section and key swordd
    knows (from swordd --config-keys) and the value words of the parsers"""
    import subprocess
    out = subprocess.run([swordd, '--config-keys'], check=True,
                         capture_output=True, text=True).stdout
    words = ['\n--\n', '=', ' = ', '\n', '[', ']', ';', '0x', 'on', 'off',
             'yes', 'no', 'true', 'false', 'any', 'auto', 'one-port',
             'two-port', '192.168.1.13', '4294967295', '18446744073709551615']
    secs, keys = set(), set()
    for line in out.splitlines():
        if line.startswith('#') or not line.strip():
            continue
        sec, key = line.split('\t')[:2]
        secs.add(sec)
        keys.add(key)
    for sec in sorted(secs):
        words += ['[%s]' % sec, '[%s.' % sec, '%s.' % sec]
    words += ['%s = ' % k for k in sorted(keys)]
    with open(os.path.join(HERE, 'config.dict'), 'w') as f:
        f.write('# written by gen_corpus.py from swordd --config-keys\n')
        for w in words:
            f.write('"%s"\n' % ''.join(
                c if 32 <= ord(c) < 127 and c not in '"\\' else '\\x%02x' % ord(c)
                for c in w))


def main():
    args = sys.argv[1:]
    if len(args) >= 2 and args[0] == '--swordd':
        config_dict(args[1])
        args = args[2:]
    captures = args[0] if args else os.path.join(TOP, '..', 'shared', 'captures')
    parse_seeds(captures)
    serializer_seeds()
    remap_seeds()
    clover_seeds()
    config_seeds()
    for k in ('parse', 'serializer', 'remap', 'clover', 'config'):
        n = len(os.listdir(os.path.join(OUT, k)))
        print('%s: %d files' % (k, n))


if __name__ == '__main__':
    main()
