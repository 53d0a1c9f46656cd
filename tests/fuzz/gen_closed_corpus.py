#!/usr/bin/env python3
"""Writes the handwritten seeds of fuzz_closed (tests/fuzz/corpus/closed/).

Why a generator: the scripts are bytes; this keeps them readable and
editable (step encoding: fuzz_closed.c top comment)."""
import os, sys

READ, WRITE, CAS, FAA, MCAS, ACQ, REL, DELIVER, DROP, DUP, TIMEOUT, RECONNECT, RESTART, RUN, FLOW = range(15)
S2C = 3


def st(op, cl=0, b1=0, b2=0, b3=0):
    return bytes([op | (cl << 4), b1, b2, b3])


def flow(n=6):
    return b"".join(st(FLOW) for _ in range(n))


def sherman(cl, word=1):
    # acquire, (answer), data write, release: Sherman's lock loop
    return st(ACQ, cl, word) + flow() + st(WRITE, cl, 8 | word, 0x80) + st(REL, cl, word) + flow()


SEEDS = {
    # acceleration alone, two clients at Sherman's PSN 3185 contending
    "sherman-accel": bytes([0x20]) + st(ACQ, 0, 1) + st(ACQ, 1, 1) + flow(8)
        + sherman(0) + sherman(1) + sherman(0) + sherman(1),
    # a QP re-created out of band: same QPN, same first PSN, the same first
    # requests (acquire, release) again; then another client takes the lock
    "oob-identical-accel": bytes([0x00]) + sherman(0) + st(RECONNECT, 0, 8 | 3)
        + flow(8) + st(ACQ, 1, 1) + flow(8) + st(REL, 1, 1) + flow(),
    # go-back-N: an answer lost between swordd and the client, the timer
    "gobackn-accel": bytes([0x00]) + st(CAS, 0, 1, 0, 0x80) + st(WRITE, 0, 9, 3)
        + st(FAA, 1, 2, 1) + flow(3) + st(DROP, 0, S2C, 0) + st(TIMEOUT, 0) + flow(8)
        + st(REL, 0, 1) + st(DUP, 0, 0, 0) + flow(8),
    # remapping alone, one lane, three clients' lock loops
    "sherman-remap1": bytes([0x09]) + sherman(0) + sherman(1) + sherman(2)
        + st(ACQ, 0, 2) + st(ACQ, 1, 2) + st(ACQ, 2, 2) + flow(10),
    # both, two lanes: the lane owner goes back N and then re-creates its QP
    "owner-both": bytes([0x07]) + sherman(0) + sherman(1) + st(ACQ, 0, 1)
        + st(READ, 0, 9) + st(TIMEOUT, 0) + st(DELIVER, 0, 0) + st(TIMEOUT, 0)
        + flow(4) + st(RECONNECT, 0, 8 | 2) + flow(8) + sherman(1),
    # a restart with a rewritten CAS in flight
    "restart-accel": bytes([0x00]) + st(ACQ, 0, 1) + st(DELIVER, 0, 0)
        + st(RESTART) + st(ACQ, 1, 1) + flow(8) + st(MCAS, 1, 2, 0, 1) + flow(),
}

out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus", "closed")
os.makedirs(out, exist_ok=True)
for name, data in SEEDS.items():
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
