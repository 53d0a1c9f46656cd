#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
The cost guard (issue #31): instructions a frame through swordd's worker,
counted by callgrind (exact for one binary and input, whatever else the
machine does: no timing here), against the figures recorded in
tests/serializer/cost.json.  A path that rises more than 10% above its
figure fails; one that falls more than 10% below asks for the figure to be
lowered (so the guard follows the gains).

  test_cost.py BUILD_DIR [--record]

--record prints the figures measured now as cost.json content.
Each path: the benchmark and arguments of the issue's table on small
inputs (valgrind runs ~50x slower), --collect-atstart=no so that only
the frames' path is counted (the benchmarks toggle collection around it).
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOLERANCE = 0.10

# name: (binary, args, how frames are counted)
PATHS = {
    # CAS->WRITE and its ACK->ATOMIC ACK, one frame at a time (pairs are
    # rounded up to bursts of 32: 2000 -> 2016 pairs, 4032 frames)
    "worker_lock": ("bench_worker", ["2000", "1", "ref"], "pairs"),
    # a RoCE frame of a server swordd does not manage
    "worker_pass": ("bench_worker", ["2000", "1", "pass"], "pairs"),
    # 8 connections' CAS/ACK with atomic replacement alone, then remapped
    # onto one lane (remapping's cost is the difference)
    "lanes_accel": ("bench_lanes", ["20", "1", "accel"], "counted"),
    "lanes_remap": ("bench_lanes", ["20", "1", "remap"], "counted"),
}


def frames(kind, args, out):
    if kind == "pairs":
        pairs = int(args[0])
        return 2 * ((pairs + 31) // 32 * 32)
    m = re.search(r"frames counted: (\d+) requests, (\d+) answers", out)
    if not m:
        raise RuntimeError("no 'frames counted' line in:\n" + out[-2000:])
    return int(m.group(1)) + int(m.group(2))


def measure(build, name):
    binary, args, kind = PATHS[name]
    exe = os.path.join(build, "tests", "serializer", binary)
    with tempfile.TemporaryDirectory() as d:
        outf = os.path.join(d, "cg.out")
        r = subprocess.run(["valgrind", "--tool=callgrind", "--collect-atstart=no",
                            "--callgrind-out-file=" + outf, exe] + args,
                           cwd=d, capture_output=True, text=True, timeout=900)
        out = r.stdout + r.stderr
        if r.returncode != 0:
            raise RuntimeError("%s %s exited %d:\n%s" % (binary, " ".join(args),
                                                         r.returncode, out[-2000:]))
        m = re.search(r"Collected : (\d+)", out)
        if not m:
            raise RuntimeError("no callgrind total in:\n" + out[-2000:])
        return int(m.group(1)) / frames(kind, args, out)


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    build = os.path.abspath(sys.argv[1])
    if shutil.which("valgrind") is None:
        print("FAIL: valgrind not found (scripts/setup.sh installs it)")
        return 1
    now = {n: round(measure(build, n), 1) for n in PATHS}
    if "--record" in sys.argv:
        print(json.dumps(now, indent=2))
        return 0
    with open(os.path.join(HERE, "cost.json")) as f:
        rec = json.load(f)
    bad = []
    for n, v in now.items():
        ref = rec[n]
        ratio = v / ref
        print("%-12s %8.1f instructions a frame, recorded %8.1f (%+.1f%%)" %
              (n, v, ref, 100 * (ratio - 1)))
        if ratio > 1 + TOLERANCE:
            bad.append("%s rose %.1f%% above its recorded %.1f (now %.1f)" %
                       (n, 100 * (ratio - 1), ref, v))
        elif ratio < 1 - TOLERANCE:
            bad.append("%s fell %.1f%% below its recorded %.1f (now %.1f): lower "
                       "the figure in tests/serializer/cost.json" %
                       (n, 100 * (1 - ratio), ref, v))
    print("remapping on top of atomic replacement: %+.1f instructions a frame" %
          (now["lanes_remap"] - now["lanes_accel"]))
    for b in bad:
        print("FAIL: " + b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
