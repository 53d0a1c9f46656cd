#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
The roce-peer memory server against requests built by scapy (not by our
library), over a veth pair between two namespaces; every response must be
valid RoCEv2 by scapy's ICRC and follow IBTA vol.1 ch.9:

  - WRITE executes and is ACKed with MSN+1; READ returns what was written
  - CAS / FAA / masked CAS execute on memory (big-endian words) and return
    the original value in an ATOMIC ACKNOWLEDGE
  - a duplicate CAS is replayed from the responder resources, not executed
    again; a duplicate WRITE is ACKed again (PSN = last done) and not executed
  - a PSN gap gets exactly one NAK (PSN sequence error, PSN = expected), later
    out-of-sequence requests get nothing, and the expected PSN resumes
  - a 2500-byte READ with PMTU 1024 answers FIRST/MIDDLE/LAST (AETH on
    first and last only, 1024/1024/452 bytes); a duplicate READ naming the
    middle PSN replays MIDDLE and LAST
  - a request with a bad ICRC gets no answer and is counted
  - with --ack ackreq, WRITEs without AckReq are not ACKed until one with it
  - with --initial-psn 3185 the QP starts at 3185; a RECONNECT datagram (UDP
    4792, lib/peer/peer_ctl.c) is answered RECONNECTED and resets the QP: the
    same CAS at 3185 is then executed again (not replayed), MSN restarts at
    1; a resent RECONNECT of the same incarnation is answered again without
    a second reset, an older incarnation gets nothing
  - --atomic-unit RATE (a model of an RNIC atomic unit, not a NIC): one QP's
    mixed burst gets byte for byte the answers it gets without the model;
    two QPs adding to one word serialize (every FAA result a partial sum,
    nothing lost, per QP PSN order and MSN 1..n) and atomics waited; a QP's
    WRITE sent after its waiting CAS is answered after it, while another QP
    (a WRITE, a CAS on another word) is answered before it; a retransmitted
    CAS that waited is replayed, not run again; a full --atomic-unit-queue
    drops (and counts) what does not fit, and the retransmission is taken;
    with the option off nothing waited; bad rates are refused.  No test
    here reads a clock: order of answers and counters only (the unit times
    are long, 0.25-1 s, so that a burst lands inside one)
Needs root; exits 77 otherwise.
"""

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e  # noqa: E402
from e2e import t  # noqa: E402

# Runs inside the client netns: "S hex" sends a frame, "R ms" prints the
# RoCE frames received for this host within ms, then "END".
EXCHANGER = r"""
import select, socket, sys, time
ifname, myip = sys.argv[1], bytes(int(x) for x in sys.argv[2].split('.'))
CTL_PORT = int(sys.argv[3]).to_bytes(2, 'big')  # our end of the control exchange
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
s.bind((ifname, 0))
for line in sys.stdin:
    cmd, arg = line.split()
    if cmd == 'S':
        s.send(bytes.fromhex(arg))
        continue
    end = time.monotonic() + int(arg) / 1000.0
    while True:
        left = end - time.monotonic()
        if left <= 0 or not select.select([s], [], [], left)[0]:
            break
        f, addr = s.recvfrom(65536)
        if addr[2] == socket.PACKET_OUTGOING:
            continue
        if len(f) > 42 and f[12:14] == b'\x08\x00' and f[36:38] in (b'\x12\xb7', CTL_PORT) \
                and f[30:34] == myip:
            print(f.hex())
    print('END', flush=True)
"""


CTL_PORT = 4792          # roce-peer's out-of-band reconnect port (peer.h)
CTL_CLIENT_PORT = 40123  # ours (nothing listens: the kernel may answer ICMP, harmless)


def ctl_frame(topo, incarnation, client_qpn, server_qpn, psn):
    """A RECONNECT datagram (lib/peer/peer_ctl.c), built here independently."""
    from scapy.all import Ether, IP, UDP, Raw
    msg = (b"SWQP" + bytes([1, 1, 0, 0]) + incarnation.to_bytes(4, "big") +
           client_qpn.to_bytes(4, "big") + server_qpn.to_bytes(4, "big") + psn.to_bytes(4, "big"))
    return bytes(Ether(src=topo.mac_c, dst=topo.mac_s) /
                 IP(src=e2e.CLIENT_IP, dst=e2e.SERVER_IP) /
                 UDP(sport=CTL_CLIENT_PORT, dport=CTL_PORT) / Raw(msg))


def ctl_answers(frames):
    """(type, incarnation, client QPN, server QPN, PSN) of each control datagram."""
    out = []
    for f in frames:
        if f[34:36] != CTL_PORT.to_bytes(2, "big"):
            continue
        m = f[42:66]
        t.check_eq(m[:5], b"SWQP\x01", "control datagram magic and version")
        out.append((m[5],) + tuple(int.from_bytes(m[i:i + 4], "big") for i in (8, 12, 16, 20)))
    return out


def psn0(seed, g):
    m = 0xffffffff
    x = (((g + 1) * 0x9e3779b1) & m) ^ ((seed * 0x85ebca6b) & m)
    x ^= x >> 15
    x = (x * 0x2c1b3c6d) & m
    x ^= x >> 12
    return x & 0xffffff


class Wire:
    def __init__(self, topo):
        self.topo = topo
        self.p = subprocess.Popen(t.in_ns(topo.ns_c, ["/usr/bin/python3", "-c", EXCHANGER,
                                                      topo.if_c, e2e.CLIENT_IP,
                                                      str(CTL_CLIENT_PORT)]),
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        t.on_cleanup(self.p.kill)

    def send(self, frame):
        self.p.stdin.write("S %s\n" % frame.hex())
        self.p.stdin.flush()

    def recv(self, ms=300):
        self.p.stdin.write("R %d\n" % ms)
        self.p.stdin.flush()
        out = []
        for line in self.p.stdout:
            line = line.strip()
            if line == "END":
                return out
            out.append(bytes.fromhex(line))
        raise t.TestFailure("exchanger died")


def parse(frame):
    """(opcode, psn, syndrome|None, msn|None, orig|None, payload) of a response."""
    import roce_scapy as rs
    probs = rs.check_frame(frame)
    if probs:
        raise t.TestFailure("invalid response frame (scapy): %s: %s" % (probs, frame.hex()))
    bth = 42
    op = frame[bth]
    psn = int.from_bytes(frame[bth + 9:bth + 12], "big")
    pad = (frame[bth + 1] >> 4) & 3
    off = bth + 12
    syn = msn = orig = None
    if op != 0x0e:
        syn = frame[off]
        msn = int.from_bytes(frame[off + 1:off + 4], "big")
        off += 4
    if op == 0x12:
        orig = int.from_bytes(frame[off:off + 8], "big")
        off += 8
    ip_end = 14 + int.from_bytes(frame[16:18], "big")
    payload = frame[off:ip_end - 4 - pad]
    return op, psn, syn, msn, orig, payload


class Client:
    def __init__(self, wire, topo, psn_start, qpn=0x100):
        self.w = wire
        self.kw = dict(src_mac=topo.mac_c, dst_mac=topo.mac_s, src_ip=e2e.CLIENT_IP,
                       dst_ip=e2e.SERVER_IP, qpn=qpn, udp_chksum=0, rkey=0x1234,
                       tos=0, sport=0xc123)
        self.p0 = psn_start

    def frame(self, op, k, **kw):
        import roce_scapy as rs
        a = dict(self.kw)
        a.update(kw)
        return rs.make_frame(op, psn=(self.p0 + k) & 0xffffff, **a)

    def x(self, op, k, ms=300, **kw):
        self.w.send(self.frame(op, k, **kw))
        return [parse(f) for f in self.w.recv(ms)]

    def psn(self, k):
        return (self.p0 + k) & 0xffffff


BASE = 0x10000000
ACK = 0x1f  # ACK, credits invalid
NAK_SEQ = 0x60


def one(resps, what):
    t.check_eq(len(resps), 1, "%s: number of responses (%r)" % (what, resps))
    return resps[0]


def dqpn(frame):
    """Destination QPN of a response (the client QP it answers)."""
    return int.from_bytes(frame[47:50], "big")


def start_server(topo, d, name, ack, extra=()):
    sj = os.path.join(d, name + ".json")
    ready = os.path.join(d, name + ".ready")
    srv = e2e.Proc(t.in_ns(topo.ns_s, [e2e.roce_peer_path(), "server", "--iface", topo.if_s,
                                       "--ip", e2e.SERVER_IP, "--pmtu", "1024", "--ack", ack,
                                       "--json", sj, "--ready-file", ready, "--progress", "0"] +
                           list(extra)),
                   d, name)
    t.wait_for(lambda: os.path.exists(ready) or srv.p.poll() is not None, 30, "server ready")
    t.check(srv.p.poll() is None, "server exited early:\n" + srv.output())
    return srv, sj


def stop_server(srv, sj):
    srv.p.terminate()
    t.check_eq(srv.wait(30), 0, "server exit code")
    with open(sj) as f:
        return json.load(f)


def body():
    t.require_root()
    t.args()
    topo = e2e.Topology("direct")
    d = topo.d
    wire = Wire(topo)
    srv, sj = start_server(topo, d, "server", "every")
    c = Client(wire, topo, psn0(1, 0))
    data = bytes(range(16))

    op, psn, syn, msn, _, _ = one(c.x(0x0a, 0, payload=data, va=BASE + 0x1000, ackreq=True), "WRITE")
    t.check_eq((op, psn, syn, msn), (0x11, c.psn(0), ACK, 1), "ACK of WRITE (op, psn, syndrome, msn)")
    op, psn, syn, msn, _, pl = one(c.x(0x0c, 1, va=BASE + 0x1000, dma_len=16), "READ")
    t.check_eq((op, psn, msn, pl), (0x10, c.psn(1), 2, data), "READ_RESPONSE_ONLY")
    op, psn, syn, msn, orig, _ = one(c.x(0x13, 2, va=BASE + 0x2000, compare=0, swap=7), "CAS")
    t.check_eq((op, psn, msn, orig), (0x12, c.psn(2), 3, 0), "ATOMIC ACK of CAS(0->7)")
    op, psn, syn, msn, orig, _ = one(c.x(0x13, 2, va=BASE + 0x2000, compare=0, swap=7), "dup CAS")
    t.check_eq((op, psn, msn, orig), (0x12, c.psn(2), 3, 0),
               "duplicate CAS replayed (orig 0), not executed again (would be 7)")
    op, psn, syn, msn, orig, _ = one(c.x(0x14, 3, va=BASE + 0x2000, swap=5), "FAA")
    t.check_eq((op, psn, msn, orig), (0x12, c.psn(3), 4, 7), "ATOMIC ACK of FAA(+5)")
    op, psn, syn, msn, _, _ = one(c.x(0x0a, 0, payload=b"\xff" * 16, va=BASE + 0x1000,
                                      ackreq=True), "dup WRITE")
    t.check_eq((op, psn, syn, msn), (0x11, c.psn(3), ACK, 4),
               "duplicate WRITE re-ACKed with the last PSN done")
    op, psn, syn, msn, _, pl = one(c.x(0x0c, 4, va=BASE + 0x1000, dma_len=16), "READ 2")
    t.check_eq(pl, data, "memory after a duplicate WRITE (must not be re-executed)")
    # PSN gap: expected is 5
    op, psn, syn, msn, _, _ = one(c.x(0x0a, 10, payload=data, va=BASE + 0x1100, ackreq=True),
                                  "out of sequence WRITE")
    t.check_eq((op, psn, syn), (0x11, c.psn(5), NAK_SEQ), "NAK PSN sequence error, PSN expected")
    t.check_eq(c.x(0x0a, 11, payload=data, va=BASE + 0x1100, ackreq=True), [],
               "second out-of-sequence request: silently dropped")
    op, psn, syn, msn, _, _ = one(c.x(0x0a, 5, payload=data, va=BASE + 0x1100, ackreq=True),
                                  "expected PSN after NAK")
    t.check_eq((op, psn, syn, msn), (0x11, c.psn(5), ACK, 6), "ACK once the expected PSN came")
    # multi-packet READ: 2500 bytes at PMTU 1024
    big = bytes((i * 7) & 0xff for i in range(2500))
    for k, off in ((6, 0), (7, 1024), (8, 2048)):
        n = min(1024, 2500 - off)
        op, psn, syn, msn, _, _ = one(c.x(0x0a, k, payload=big[off:off + n],
                                          va=BASE + 0x3000 + off, ackreq=True), "WRITE chunk")
        t.check_eq((op, psn), (0x11, c.psn(k)), "ACK of chunk write")
    rs = c.x(0x0c, 9, va=BASE + 0x3000, dma_len=2500)
    t.check_eq([(r[0], r[1], r[2] is not None, len(r[5])) for r in rs],
               [(0x0d, c.psn(9), True, 1024), (0x0e, c.psn(10), False, 1024),
                (0x0f, c.psn(11), True, 452)], "multi-packet READ response (op, psn, AETH, len)")
    t.check_eq(b"".join(r[5] for r in rs), big, "multi-packet READ data")
    t.check_eq((rs[0][3], rs[2][3]), (10, 10), "READ response MSN (one message)")
    rs = c.x(0x0c, 10, va=BASE + 0x3000 + 1024, dma_len=2500 - 1024)
    t.check_eq([(r[0], r[1]) for r in rs], [(0x0e, c.psn(10)), (0x0f, c.psn(11))],
               "duplicate READ from its middle PSN: MIDDLE and LAST replayed")
    t.check_eq(b"".join(r[5] for r in rs), big[1024:], "replayed READ data")
    # masked CAS (0x18) on bit 7
    mk = dict(va=BASE + 0x2008, compare=0, compare_mask=0x80, swap=0x80, swap_mask=0x80)
    op, psn, syn, msn, orig, _ = one(c.x(0x18, 12, **mk), "masked CAS")
    t.check_eq((op, orig), (0x12, 0), "masked CAS acquires bit 7")
    op, psn, syn, msn, orig, _ = one(c.x(0x18, 13, **mk), "masked CAS 2")
    t.check_eq((op, orig), (0x12, 0x80), "masked CAS on a set bit returns it (and fails)")
    # bad ICRC: no answer
    f = bytearray(c.frame(0x0a, 14, payload=data, va=BASE + 0x1200, ackreq=True))
    f[-1] ^= 0xff
    wire.send(bytes(f))
    t.check_eq(wire.recv(300), [], "answer to a frame with a bad ICRC")
    op, psn, syn, _, _, _ = one(c.x(0x0a, 14, payload=data, va=BASE + 0x1200, ackreq=True),
                                "WRITE after bad ICRC")
    t.check_eq((op, psn, syn), (0x11, c.psn(14), ACK), "the good copy is executed")
    st = stop_server(srv, sj)
    t.check_eq((st["atomic_unit_model"], st["aunit_waited"], st["aunit_wait_ns"],
                st["aunit_held"]), (False, 0, 0, 0),
               "without --atomic-unit: no model, no atomic waited or held")
    t.check("atomic unit" not in srv.output(), "server summary names no atomic unit when off")
    t.check_eq(st["rx_bad_icrc"], 1, "server bad-ICRC counter")
    t.check_eq(st["naks_seq"], 1, "server NAKs (one per gap)")
    t.check_eq((st["dup_atomics"], st["dup_writes"], st["dup_reads"]), (1, 1, 1),
               "server duplicate counters (atomic, write, read)")

    # ACK coalescing: AckReq only
    srv, sj = start_server(topo, d, "server2", "ackreq")
    c = Client(wire, topo, psn0(1, 0))
    t.check_eq(c.x(0x0a, 0, payload=data, va=BASE + 0x1000, ackreq=False), [],
               "--ack ackreq: WRITE without AckReq is not ACKed")
    t.check_eq(c.x(0x0a, 1, payload=data, va=BASE + 0x1000, ackreq=False), [],
               "--ack ackreq: second WRITE without AckReq")
    op, psn, syn, msn, _, _ = one(c.x(0x0a, 2, payload=data, va=BASE + 0x1000, ackreq=True),
                                  "WRITE with AckReq")
    t.check_eq((op, psn, syn, msn), (0x11, c.psn(2), ACK, 3),
               "one ACK covers all three WRITEs (PSN of the last, MSN 3)")
    st = stop_server(srv, sj)
    t.check_eq((st["acks"], st["coalesced"]), (1, 2), "server acks/coalesced")

    # Sherman's fixed initial PSN, and a reconnect of QP 0 (same QPNs, same PSN)
    srv, sj = start_server(topo, d, "server3", "every", ["--initial-psn", "3185"])
    c = Client(wire, topo, 3185)
    cas = dict(va=BASE + 0x2010, compare=0, swap=7)
    op, psn, syn, msn, orig, _ = one(c.x(0x13, 0, **cas), "CAS at the initial PSN 3185")
    t.check_eq((op, psn, msn, orig), (0x12, 3185, 1, 0), "ATOMIC ACK of CAS(0->7) at PSN 3185")
    op, psn, syn, msn, _, _ = one(c.x(0x0a, 1, payload=data, va=BASE + 0x1000, ackreq=True),
                                  "WRITE at 3186")
    t.check_eq((op, psn, msn), (0x11, 3186, 2), "ACK of WRITE at 3186")
    wire.send(ctl_frame(topo, 2, 0x10000, 0x100, 3185))
    t.check_eq(ctl_answers(wire.recv(500)), [(2, 2, 0x10000, 0x100, 3185)],
               "RECONNECTED answer (type, incarnation, client QPN, server QPN, PSN)")
    op, psn, syn, msn, orig, _ = one(c.x(0x13, 0, **cas), "the same CAS at 3185 after the reconnect")
    t.check_eq((op, psn, msn, orig), (0x12, 3185, 1, 7),
               "executed again on the new incarnation (memory 7, MSN 1), not replayed (orig 0)")
    wire.send(ctl_frame(topo, 2, 0x10000, 0x100, 3185))
    t.check_eq(ctl_answers(wire.recv(500)), [(2, 2, 0x10000, 0x100, 3185)],
               "a resent RECONNECT of the same incarnation is answered again")
    wire.send(ctl_frame(topo, 1, 0x10000, 0x100, 3185))
    t.check_eq(ctl_answers(wire.recv(300)), [], "RECONNECT of an older incarnation: no answer")
    op, psn, syn, msn, _, _ = one(c.x(0x0a, 1, payload=data, va=BASE + 0x1000, ackreq=True),
                                  "WRITE at 3186 after the resent RECONNECT")
    t.check_eq((op, psn, syn, msn), (0x11, 3186, ACK, 2),
               "no second reset: 3186 is the expected PSN (MSN 2)")
    st = stop_server(srv, sj)
    t.check_eq((st["qp_resets"], st["ctl_bad"], st["dup_atomics"]), (1, 0, 0),
               "server QP resets, bad control datagrams, replayed atomics")
    atomic_unit_refused()
    atomic_unit_same_answers(topo, d, wire)
    atomic_unit_contention(topo, d, wire)
    atomic_unit_head_of_line(topo, d, wire)
    atomic_unit_queue_full(topo, d, wire)


def atomic_unit_refused():
    """Bad rates are refused before anything starts, with a message naming the option."""
    peer = e2e.roce_peer_path()
    for bad in ("0", "-5", "abc", "", "nan", "inf", "1e12", "3000x"):
        r = t.sh([peer, "server", "--iface", "lo", "--ip", "127.0.0.1", "--atomic-unit", bad],
                 check_rc=False)
        t.check_eq(r.returncode, 2, "--atomic-unit %r: exit code" % bad)
        t.check("bad value for --atomic-unit: '%s'" % bad in r.stderr and "> 0" in r.stderr,
                "--atomic-unit %r: message: %r" % (bad, r.stderr))
    r = t.sh([peer, "server", "--iface", "lo", "--ip", "127.0.0.1", "--atomic-unit-queue", "4"],
             check_rc=False)
    t.check_eq(r.returncode, 2, "--atomic-unit-queue without --atomic-unit: exit code")
    t.check("needs --atomic-unit" in r.stderr, "message: %r" % r.stderr)
    r = t.sh([peer, "--help"])
    t.check("MODEL of an RNIC atomic unit (this is not a NIC)" in r.stdout,
            "--help labels --atomic-unit a model")


def mixed_burst(c):
    """One QP's requests, sent back to back: atomics on one word (each but
    the first waits for its unit with the model), a WRITE and READs behind
    them, a masked CAS on another word and a retransmitted CAS."""
    data = bytes(range(32, 48))
    a, b = BASE + 0x4000, BASE + 0x4008
    return [c.frame(0x0a, 0, payload=data, va=BASE + 0x4100, ackreq=True),
            c.frame(0x13, 1, va=a, compare=0, swap=7),
            c.frame(0x13, 2, va=a, compare=7, swap=9),
            c.frame(0x14, 3, va=a, swap=1),
            c.frame(0x0a, 4, payload=data[::-1], va=BASE + 0x4100, ackreq=True),
            c.frame(0x0c, 5, va=BASE + 0x4100, dma_len=16),
            c.frame(0x18, 6, va=b, compare=0, compare_mask=1, swap=1, swap_mask=1),
            c.frame(0x14, 7, va=a, swap=2),
            c.frame(0x0c, 8, va=a, dma_len=8),
            c.frame(0x13, 1, va=a, compare=0, swap=7)]


def burst_answers(topo, d, wire, name, extra):
    srv, sj = start_server(topo, d, name, "every", extra)
    c = Client(wire, topo, psn0(1, 0))
    for f in mixed_burst(c):
        wire.send(f)
    got = wire.recv(3000)
    return got, stop_server(srv, sj), srv


def atomic_unit_same_answers(topo, d, wire):
    """The model changes when answers leave, never what they say."""
    plain, st0, _ = burst_answers(topo, d, wire, "aunit-off", [])
    model, st1, srv = burst_answers(topo, d, wire, "aunit-same", ["--atomic-unit", "4"])
    rs = [parse(f) for f in model]
    t.check_eq([(r[0], r[1] - psn0(1, 0), r[3]) for r in rs],
               [(0x11, 0, 1), (0x12, 1, 2), (0x12, 2, 3), (0x12, 3, 4), (0x11, 4, 5),
                (0x10, 5, 6), (0x12, 6, 7), (0x12, 7, 8), (0x10, 8, 9), (0x12, 1, 2)],
               "model: answers (opcode, PSN offset, MSN) in PSN order, the dup CAS last")
    t.check_eq([r[4] for r in rs if r[0] == 0x12], [0, 7, 9, 0, 10, 0],
               "model: atomic results (CAS 0->7, CAS 7->9, FAA+1, masked CAS, FAA+2, replay)")
    t.check_eq(rs[8][5], (12).to_bytes(8, "big"), "model: the word after them (9+1+2)")
    t.check_eq(model, plain, "answers with --atomic-unit 4 byte for byte as without the model")
    t.check_eq((st1["atomics"], st1["dup_atomics"]), (st0["atomics"], st0["dup_atomics"]),
               "atomics executed and replayed, with and without the model")
    t.check_eq((st1["atomic_unit_model"], st1["atomic_unit_rate"], st1["atomic_unit_ns"]),
               (True, 4, 250000000), "server JSON: the model and its rate")
    t.check(st1["aunit_waited"] > 0 and st1["aunit_wait_ns"] > 0 and st1["aunit_held"] > 0,
            "model: atomics waited and requests were held behind them: %r" %
            {k: v for k, v in st1.items() if k.startswith("aunit")})
    t.check_eq(st0["aunit_waited"], 0, "no model: nothing waited")
    t.check_eq((st1["aunit_queue_full"], st1["aunit_table_full"]), (0, 0),
               "model: nothing dropped")
    t.check("MODEL of an RNIC atomic unit (not a NIC), 4 atomics/s per 8-byte word" in
            srv.output(), "server summary labels the model:\n" + srv.output())


def atomic_unit_contention(topo, d, wire):
    """Two QPs adding to one word: serialized, nothing lost, each QP in order."""
    srv, sj = start_server(topo, d, "aunit-faa", "every", ["--atomic-unit", "8"])
    cs = [Client(wire, topo, psn0(1, g), qpn=0x100 + g) for g in (0, 1)]
    add = (1, 16)
    word = BASE + 0x5000
    for k in range(4):
        for g in (0, 1):
            wire.send(cs[g].frame(0x14, k, va=word, swap=add[g]))
    got = wire.recv(4000)
    pairs = []
    for g in (0, 1):
        rs = [parse(f) for f in got if dqpn(f) == 0x10000 + g]
        t.check_eq([(r[0], r[1], r[3]) for r in rs],
                   [(0x12, cs[g].psn(k), k + 1) for k in range(4)],
                   "QP %d: four ATOMIC ACKs in PSN order, MSN 1..4" % g)
        origs = [r[4] for r in rs]
        t.check(origs == sorted(origs), "QP %d: its FAA results increase: %r" % (g, origs))
        pairs += [(o, add[g]) for o in origs]
    v = 0
    for o, a in sorted(pairs):
        t.check_eq(o, v, "each FAA result is the sum of the ones before it (%r)" % sorted(pairs))
        v += a
    _, psn, _, msn, _, pl = one(cs[0].x(0x0c, 4, va=word, dma_len=8), "READ the word")
    t.check_eq((int.from_bytes(pl, "big"), msn), (4 * 17, 5), "the word: every FAA once")
    st = stop_server(srv, sj)
    t.check_eq(st["atomics"], 8, "atomics executed")
    t.check(st["aunit_waited"] > 0, "atomics waited for the unit under contention")


def atomic_unit_head_of_line(topo, d, wire):
    """QP 0's CAS waits a whole second for its word: QP 0's WRITE waits
    behind it, QP 1 (a CAS on another word, a WRITE) does not."""
    srv, sj = start_server(topo, d, "aunit-hol", "every", ["--atomic-unit", "1"])
    c0 = Client(wire, topo, psn0(1, 0), qpn=0x100)
    c1 = Client(wire, topo, psn0(1, 1), qpn=0x101)
    word, other = BASE + 0x6000, BASE + 0x6008
    data = b"\x5a" * 16
    for f in (c0.frame(0x13, 0, va=word, compare=0, swap=1),
              c0.frame(0x13, 1, va=word, compare=1, swap=2),      # waits ~1 s
              c0.frame(0x0a, 2, payload=data, va=BASE + 0x6100, ackreq=True),
              c0.frame(0x13, 1, va=word, compare=1, swap=2),      # its retransmission
              c1.frame(0x13, 0, va=other, compare=0, swap=5),
              c1.frame(0x0a, 1, payload=data, va=BASE + 0x6200, ackreq=True)):
        wire.send(f)
    got = wire.recv(4000)
    seq = [(dqpn(f) - 0x10000,) + r[:2] + (r[4],) for f, r in zip(got, map(parse, got))]
    names = {(0, 0x12, c0.psn(0)): "QP0 CAS 1", (0, 0x12, c0.psn(1)): "QP0 CAS 2",
             (0, 0x11, c0.psn(2)): "QP0 WRITE", (1, 0x12, c1.psn(0)): "QP1 CAS",
             (1, 0x11, c1.psn(1)): "QP1 WRITE"}
    order = [names.get(x[:3], repr(x)) for x in seq]
    t.check_eq(sorted(order), sorted(list(names.values()) + ["QP0 CAS 2"]),
               "every request answered once, the retransmitted CAS twice: %r" % order)
    t.check_eq(order[0], "QP0 CAS 1", "first answer")
    pos = {n: order.index(n) for n in names.values()}
    t.check(pos["QP1 CAS"] < pos["QP0 CAS 2"] and pos["QP1 WRITE"] < pos["QP0 CAS 2"],
            "QP 1 is not held behind QP 0's waiting CAS: %r" % order)
    t.check(pos["QP0 CAS 2"] < pos["QP0 WRITE"] < len(order) - 1 and order[-1] == "QP0 CAS 2",
            "QP 0: its WRITE after its CAS, the retransmission replayed last: %r" % order)
    t.check_eq([x[3] for x in seq if x[:3] == (0, 0x12, c0.psn(1))], [1, 1],
               "the CAS and its retransmission both read 1 (replayed, not run again)")
    _, _, _, _, _, pl = one(c0.x(0x0c, 3, va=word, dma_len=8), "READ the word")
    t.check_eq(int.from_bytes(pl, "big"), 2, "the word after CAS 0->1, 1->2")
    st = stop_server(srv, sj)
    t.check_eq((st["atomics"], st["dup_atomics"], st["aunit_waited"]), (3, 1, 1),
               "atomics executed, replayed, waited (the retransmission took no unit time)")


def atomic_unit_queue_full(topo, d, wire):
    """Room for 3 held requests: the 4th and 5th behind a waiting CAS are
    dropped and counted; their retransmissions are taken."""
    srv, sj = start_server(topo, d, "aunit-full", "every",
                           ["--atomic-unit", "1", "--atomic-unit-queue", "3"])
    c = Client(wire, topo, psn0(1, 0))
    word = BASE + 0x7000
    data = b"\xa5" * 16
    wire.send(c.frame(0x13, 0, va=word, compare=0, swap=1))
    wire.send(c.frame(0x13, 1, va=word, compare=1, swap=2))       # waits ~1 s
    for k in range(2, 7):
        wire.send(c.frame(0x0a, k, payload=data, va=BASE + 0x7100 + 16 * k, ackreq=True))
    rs = [parse(f) for f in wire.recv(4000)]
    t.check_eq([(r[0], r[1], r[3]) for r in rs],
               [(0x12, c.psn(0), 1), (0x12, c.psn(1), 2)] +
               [(0x11, c.psn(k), k + 1) for k in (2, 3, 4)],
               "answers: both CAS, the three WRITEs held; the two that did not fit dropped")
    for k in (5, 6):
        _, psn, syn, msn, _, _ = one(c.x(0x0a, k, payload=data, va=BASE + 0x7100 + 16 * k,
                                         ackreq=True), "retransmitted WRITE %d" % k)
        t.check_eq((psn, syn, msn), (c.psn(k), ACK, k + 1), "retransmission %d taken" % k)
    st = stop_server(srv, sj)
    t.check_eq((st["aunit_queue_full"], st["aunit_held"], st["aunit_held_max"]), (2, 3, 3),
               "dropped (queue full), held, most held at once")


if __name__ == "__main__":
    t.main(body)
