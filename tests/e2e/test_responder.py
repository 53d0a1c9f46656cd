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


if __name__ == "__main__":
    t.main(body)
