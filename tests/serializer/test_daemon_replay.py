#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
Atomic replacement inside the real daemon, on the real ConnectX capture.

rcuckoo-connectx.pcap goes through swordd (net_pcap, one port) with
features.atomic_replacement on and lock regions covering its atomics
(masked CAS on va 0 / rkey 0x2521, CAS on va 0x5562cc8a7ab0).  Open loop:
the capture's server saw real atomics, so later frames may disagree with
what swordd decided; they must be passed and counted, never crash anything.

1. learn at once: the first masked CAS is learned from the capture's own
   ATOMIC ACK, the next one on that word is decided by swordd and leaves as a
   WRITE; every RoCE frame out is valid for scapy (I1), non-RoCE frames and
   everything on unmanaged words are byte-identical.
2. learn hold-off (as after a restart): nothing is learned, so nothing is
   rewritten and the output is the input, byte for byte.
3. the second masked CAS with a wrong ICRC: passed unchanged, counted as
   bad_icrc_passed, never re-signed (I7).
"""

import os
import struct
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "daemon"))
import swordtest as t  # noqa: E402

SERVER = "192.168.1.12"
LOCKS = [("masked", "0x2521", "0", "0x1000"),
         ("cas", "0x2a583", "0x5562cc8a7000", "0x1000")]


def opts(extra=()):
    o = ["--mode", "one-port", "--set", "server.m.ip=" + SERVER,
         "--set", "features.atomic_replacement=on",
         "--set", "atomic.out_of_band=on"]   # the capture has no RDMA CM
    for name, rkey, base, length in LOCKS:
        o += ["--set", "lock.%s.server=m" % name, "--set", "lock.%s.rkey=%s" % (name, rkey),
              "--set", "lock.%s.base=%s" % (name, base),
              "--set", "lock.%s.length=%s" % (name, length),
              "--set", "lock.%s.word_size=8" % name]
    return o + list(extra)


def run(frames, name, extra=()):
    d = t.tmpdir()
    cap, out, sj = (os.path.join(d, n) for n in ("in.pcap", "out.pcap", "s.json"))
    t.write_frames(cap, frames)
    sw = t.Swordd(["net_pcap0,rx_pcap=%s,tx_pcap=%s" % (cap, out)],
                  opts(extra) + ["--idle-exit", "2", "--stats-json", sj],
                  name=name, workdir=d).start()
    sw.expect_exit(0)
    return t.read_frames(out), t.read_stats_json(sj), out


def validate(path, extra=()):
    helpers = t.args().helpers
    r = subprocess.run(["/usr/bin/python3", os.path.join(helpers, "validate_pcap.py")]
                       + list(extra) + [path], capture_output=True, text=True)
    t.log(r.stdout.strip())
    t.check(r.returncode == 0, "validate_pcap.py rejected %s:\n%s%s"
            % (path, r.stdout, r.stderr))


def is_roce(f):
    return len(f) > 42 and f[12:14] == b"\x08\x00" and f[23] == 17 and \
        struct.unpack_from("!H", f, 36)[0] == 4791


def fn(st, name):
    k = "fn_atomic_" + name
    t.check(k in st, "stats have no %s" % k)
    return st[k]


def body():
    t.require_root()
    frames = t.read_frames(os.path.join(t.args().captures, "rcuckoo-connectx.pcap"))
    t.check_eq(len(frames), 24, "frames in the capture")

    # 1. learn at once
    out, st, path = run(frames, "learn", ["--set", "atomic.learn_holdoff_ms=0"])
    t.check_eq(st["rx"], 24, "rx")
    t.check(fn(st, "learned") >= 1, "nothing learned from the capture's ATOMIC ACKs")
    t.check(st["rewritten"] >= 1, "no atomic was rewritten")
    t.check(any(is_roce(f) and f[42] == 0x0a for f in out),
            "no WRITE_ONLY left swordd: %r" % [hex(f[42]) for f in out if is_roce(f)])
    # frame 16, the second masked CAS on the word frame 12 taught, is decided
    # by swordd (case 3 breaks exactly this frame's ICRC)
    t.check_eq(out[15][42], 0x0a, "frame 16 opcode after swordd")
    t.check_eq(fn(st, "misaligned_passed"), 1, "misaligned CAS (va ...ab0 % 8 != 0) passed")
    t.check_eq(fn(st, "bad_icrc_passed"), 0, "bad ICRC on a capture frame")
    validate(path)
    # everything that is not RoCE leaves exactly as it came, in order
    t.check_eq([f for f in out if not is_roce(f)], [f for f in frames if not is_roce(f)],
               "non-RoCE frames")

    # 2. learn hold-off: swordd decides nothing, the output is the input
    out, st, _ = run(frames, "hold", ["--set", "atomic.learn_holdoff_ms=600000"])
    t.check_eq(fn(st, "learned"), 0, "learned during hold-off")
    t.check_eq(st["rewritten"], 0, "rewritten during hold-off")
    t.compare_frames(out, frames, "output during hold-off")

    # 3. the second masked CAS (frame 16) with a broken ICRC
    bad = list(frames)
    f16 = bytearray(bad[15])
    t.check_eq(f16[42], 0x18, "frame 16 opcode")
    f16[-1] ^= 0x01
    bad[15] = bytes(f16)
    out, st, path = run(bad, "badicrc", ["--set", "atomic.learn_holdoff_ms=0"])
    t.check_eq(fn(st, "bad_icrc_passed"), 1, "bad_icrc_passed")
    t.check(bytes(f16) in out, "the bad frame did not leave unchanged")
    n = [i for i, f in enumerate(out) if f == bytes(f16)][0] + 1
    validate(path, ["--allow-bad-icrc", str(n)])


if __name__ == "__main__":
    t.main(body)
