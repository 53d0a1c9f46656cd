#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
F6 configuration errors: every kind of invalid configuration makes swordd
exit 2 with a message on stderr that names the source (file path or
--set), the [section], the key and what is wrong (sword_config.h: "SOURCE:
[section] key: what is wrong"); the shipped conf/swordd.conf and a full
hand-written config pass --check-config (exit 0, summary on stdout), and
--set overrides show up in that summary.
"""

import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import swordtest as t  # noqa: E402

GOOD = """\
; a complete, valid configuration (every section, every key)
[ports]
mode = two-port
client = 0
server = 1
rx_desc = 1024
tx_desc = 1024
mbufs = 8191
burst = 32

[cores]
workers = 2

[server.mem0]
ip = 198.18.1.2
udp_port = 4791

[server.mem1]
ip = 198.18.1.3
udp_port = 4791

[lock.l1]
server = mem0
rkey = any
base = 0x10000
length = 4096
word_size = 8

[lock.l2]
server = mem0
rkey = any
base = 0x20000
length = 4096
word_size = 8

[lock.l3]
server = mem1
rkey = 0x1234
base = 0x10000
length = 0x1000
word_size = 8

[features]
atomic_replacement = on
remapping = off
clover = off

[tables]
lock_words = 4096
qps = 256
stub_ring = 256

[stats]
interval = 0
"""


def sub(text, old, new):
    t.check(old in text, "test bug: %r not in base config" % old)
    return text.replace(old, new, 1)


# (name, config text or None, extra CLI options, stderr regex after "SOURCE: ")
FILE_CASES = [
    # issue #30: a fail-over bypass cannot be made safe under remapping
    ("failover_bypass with remapping",
     sub(sub(GOOD, "burst = 32", "burst = 32\nfailover_bypass = on"), "remapping = off",
         "remapping = on"),
     r"\[ports\] failover_bypass: on with \[features\] remapping = on"),
    ("guard_ms out of range", sub(GOOD, "burst = 32", "burst = 32\nguard_ms = 60001"),
     r"\[ports\] guard_ms: .*out of range"),
    ("bad number", sub(GOOD, "rx_desc = 1024", "rx_desc = abc"),
     r"\[ports\] rx_desc: .*(not a number|invalid).*abc"),
    ("number out of range", sub(GOOD, "burst = 32", "burst = 100000"),
     r"\[ports\] burst: .*out of range"),
    ("negative number", sub(GOOD, "tx_desc = 1024", "tx_desc = -1024"),
     r"\[ports\] tx_desc: "),
    ("trailing garbage in number", sub(GOOD, "mbufs = 8191", "mbufs = 8191x"),
     r"\[ports\] mbufs: .*8191x"),
    ("unknown key", sub(GOOD, "burst = 32", "burst = 32\ncolour = blue"),
     r"\[ports\] colour: .*unknown key"),
    ("unknown section", GOOD + "\n[bogus]\nx = 1\n",
     r"\[bogus\].*unknown section"),
    ("missing required key (server ip)", GOOD + "\n[server.mem9]\nudp_port = 4791\n",
     r"\[server\.mem9\] ip: .*missing"),
    ("missing required key (lock base)",
     GOOD + "\n[lock.l9]\nserver = mem1\nlength = 8\n",
     r"\[lock\.l9\] base: .*missing"),
    ("lock region referencing an unknown server", sub(GOOD, "server = mem1", "server = nosuch"),
     r"\[lock\.l3\] server: .*nosuch"),
    ("overlapping lock regions", sub(GOOD, "base = 0x20000", "base = 0x10800"),
     r"\[lock\.l2\] base: .*overlap.*l1"),
    ("bad mode", sub(GOOD, "mode = two-port", "mode = three-port"),
     r"\[ports\] mode: .*three-port"),
    ("workers 0", sub(GOOD, "workers = 2", "workers = 0"),
     r"\[cores\] workers: .*(out of range|at least)"),
    ("bad on/off", sub(GOOD, "clover = off", "clover = maybe"),
     r"\[features\] clover: .*maybe"),
    ("bad IPv4 address", sub(GOOD, "ip = 198.18.1.2", "ip = 198.18.1.256"),
     r"\[server\.mem0\] ip: .*198\.18\.1\.256"),
    ("duplicate server address", sub(GOOD, "ip = 198.18.1.3", "ip = 198.18.1.2"),
     r"\[server\.mem1\] ip: .*198\.18\.1\.2"),
    ("bad rkey", sub(GOOD, "rkey = 0x1234", "rkey = sometimes"),
     r"\[lock\.l3\] rkey: .*sometimes"),
    ("unaligned lock base", sub(GOOD, "base = 0x20000", "base = 0x20004"),
     r"\[lock\.l2\] base: .*align"),
    ("duplicate key", sub(GOOD, "burst = 32", "burst = 32\nburst = 16"),
     r"\[ports\] burst: .*duplicate"),
    ("syntax error", sub(GOOD, "[cores]", "[cores]\nthis line has no equals sign"),
     r"(syntax error|line \d+)"),
    ("two-port with client == server", sub(GOOD, "server = 1", "server = 0"),
     r"\[ports\] server: .*two"),
    # an ended connection's ops would hold their words for 0 (ser_word.c
    # S7; issue #29 finding 9): refused, either alone is accepted
    ("no hold for an ended connection's ops",
     GOOD + "\n[atomic]\npending_expire_ms = 0\nlearn_holdoff_ms = 0\n",
     r"\[atomic\] pending_expire_ms: .*learn_holdoff_ms"),
    # says what it is, not "line too long" or a bad key
    ("binary file", "\x7fELF\x02\x01\x01\x00" + "x" * 2000, r"line 1: byte 0x7f: a binary file"),
    # refused: an empty file is more likely truncated than meant (no -c
    # gives the built-in defaults on purpose)
    ("empty file", "", r"no \[section\] in it: an empty configuration"),
    ("only comments", "; nothing\n# here\n", r"no \[section\]"),
]

# (name, options, stderr regex) for command-line errors
CLI_CASES = [
    ("--set without '='", ["--set", "ports.burst"], r"--set: .*SECTION\.KEY=VALUE"),
    ("--set without a section", ["--set", "burst=32"], r"--set: .*SECTION\.KEY=VALUE"),
    ("--set unknown key", ["--set", "ports.nope=1"], r"--set: \[ports\] nope: .*unknown key"),
    ("--set unknown section", ["--set", "bogus.x=1"], r"--set: \[bogus\].*unknown section"),
    ("--set bad value", ["--set", "cores.workers=0"], r"--set: \[cores\] workers: .*out of range"),
    ("--set failover_bypass with remapping", ["--set", "ports.failover_bypass=on",
                                              "--set", "features.remapping=on"],
     r"\[ports\] failover_bypass: on with \[features\] remapping"),
    ("--set bad number", ["--set", "ports.rx_desc=lots"], r"--set: \[ports\] rx_desc: .*lots"),
    ("--mode bogus", ["--mode", "sideways"], r"sideways"),
    ("--workers 0", ["--workers", "0"], r"workers"),
    ("unknown option", ["--frobnicate"], r"frobnicate"),
    # checked at start, not after the run
    ("--stats-json unwritable", ["--stats-json", "/nonexistent-dir/s.json"],
     r"--stats-json: /nonexistent-dir/s\.json: cannot write"),
]


def run(opts, d):
    cmd = ([t.swordd_path()] + t.EAL_BASE +
           ["--file-prefix", "swt%scfg" % t.tag(), "--"] + opts)
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=120)
    return r


def body():
    t.require_root()
    d = t.tmpdir()
    t.on_cleanup(__import__("shutil").rmtree, "/var/run/dpdk/swt%scfg" % t.tag(),
                 ignore_errors=True)
    failures = []

    def expect(name, r, rc, regex, stream="stderr"):
        text = getattr(r, stream)
        ok = r.returncode == rc and re.search(regex, text, re.S) is not None
        t.log("%s %-45s exit %d" % ("ok  " if ok else "FAIL", name, r.returncode))
        if not ok:
            failures.append("%s: exit %d (want %d), %s does not match /%s/:\n%s%s"
                            % (name, r.returncode, rc, stream, regex, r.stdout[-2000:],
                               r.stderr[-2000:]))

    # good configurations
    good = os.path.join(d, "good.conf")
    with open(good, "w") as f:
        f.write(GOOD)
    r = run(["--config", good, "--check-config"], d)
    expect("full config passes --check-config", r, 0, re.escape(good) + r".*server\.mem1.*lock\.l3", "stdout")
    r = run(["-c", good, "--check-config", "--set", "cores.workers=3",
             "--set", "server.mem0.ip=198.18.1.9"], d)
    expect("--set overrides appear in the summary", r, 0, r"workers 3.*198\.18\.1\.9", "stdout")
    shipped = os.path.join(t.args().source_root, "conf", "swordd.conf")
    r = run(["--config", shipped, "--check-config"], d)
    expect("conf/swordd.conf passes --check-config", r, 0, re.escape(shipped), "stdout")
    hashed = os.path.join(d, "hash-comment.conf")
    with open(hashed, "w") as f:
        f.write(sub(GOOD, "workers = 2", "workers = 3 # three, '#' as ';'"))
    r = run(["--config", hashed, "--check-config"], d)
    expect("'#' after a value is a comment", r, 0, r"workers 3\n", "stdout")
    r = run(["--check-config"], d)
    expect("built-in defaults pass --check-config", r, 0, r"one-port", "stdout")
    r = run(["--help"], d)
    expect("--help exits 0", r, 0, r"--config", "stdout")

    # bad configuration files
    for i, (name, text, regex) in enumerate(FILE_CASES):
        p = os.path.join(d, "bad%02d.conf" % i)
        with open(p, "w") as f:
            f.write(text)
        r = run(["--config", p, "--check-config"], d)
        expect(name, r, 2, re.escape(p) + r": " + regex)
        # and the same refusal when starting for real (no --check-config)
        if i == 0:
            r = run(["--config", p], d)
            expect(name + " (without --check-config)", r, 2, re.escape(p) + r": " + regex)

    missing = os.path.join(d, "does-not-exist.conf")
    r = run(["--config", missing, "--check-config"], d)
    expect("missing config file", r, 2, re.escape(missing) + r": .*(cannot open|No such file)")

    for name, opts, regex in CLI_CASES:
        r = run(["--config", good, "--check-config"] + opts, d)
        expect(name, r, 2, regex)

    t.check(not failures, "%d case(s) failed:\n\n%s" % (len(failures), "\n\n".join(failures)))


if __name__ == "__main__":
    t.main(body)
