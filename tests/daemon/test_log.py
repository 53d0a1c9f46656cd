#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
Logs reach the journal once, with priority: swordd run as systemd runs it
(JOURNAL_STREAM = the device:inode of its stderr, here a file) writes every
message once, each line starting with an sd-daemon priority "<N>" (0..7),
errors and warnings at theirs; nothing is duplicated (DPDK 22.11's default
stream wrote each message to stderr and to syslog, which is the journal
too).  Without JOURNAL_STREAM the lines carry no prefix.  Log levels change
at run time: /sword/log_level,GLOB,LEVEL (the answer lists the matched
types), a bad level answers an error object, /sword/log_level lists
"TYPE:LEVEL" for every type.
"""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import swordtest as t  # noqa: E402


def body():
    t.require_root()
    cap = os.path.join(t.args().captures, "rcuckoo-connectx.pcap")
    d = t.tmpdir()
    out = os.path.join(d, "out.pcap")
    err_path = os.path.join(d, "jrn.stderr")
    open(err_path, "w").close()
    st = os.stat(err_path)
    env = dict(os.environ, JOURNAL_STREAM="%d:%d" % (st.st_dev, st.st_ino))
    # an unknown [ports] mbufs warning would do; a too-small pool warns
    sw = t.Swordd(["net_pcap0,rx_pcap=%s,tx_pcap=%s" % (cap, out)],
                  ["--mode", "one-port", "--idle-exit", "1", "--set", "ports.mbufs=2048"],
                  name="jrn", workdir=d, env=env)
    sw.stderr_path = err_path
    sw.start()
    sw.expect_exit(0)
    lines = sw.stderr().splitlines()
    t.check(len(lines) > 10, "%d lines on stderr" % len(lines))
    bad = [l for l in lines if not re.match(r"^<[0-7]>", l)]
    t.check_eq(bad, [], "lines without a priority prefix")
    t.check(any(l.startswith("<6>swordd: running") for l in lines), "running at <6> (info)")
    warn = [l for l in lines if "may be too few" in l]
    t.check(len(warn) == 1 and warn[0].startswith("<4>"), "the mbufs warning at <4>: %r" % warn)
    # the counters table repeats words, not lines: each message once
    msgs = [l for l in lines if not l[3:].startswith("  ")]
    dup = sorted({l for l in msgs if msgs.count(l) > 1})
    t.check_eq(dup, [], "messages written twice")

    plain = t.Swordd(["net_pcap0,rx_pcap=%s,tx_pcap=%s" % (cap, out)],
                     ["--mode", "one-port", "--idle-exit", "1"], name="pln", workdir=d).start()
    plain.expect_exit(0)
    t.check(not any(re.match(r"^<[0-7]>", l) for l in plain.stderr().splitlines()),
            "no prefix without JOURNAL_STREAM")
    t.check("swordd: running" in plain.stderr(), "plain lines")

    live = t.Swordd(["net_pcap0,rx_pcap=%s,infinite_rx=1" % cap], ["--mode", "one-port"],
                    name="lvl", workdir=d).start()
    t.wait_for(lambda: (live.telemetry("/sword/stats") or {}).get("rx", 0) > 0, 60, "frames")
    r = live.telemetry("/sword/log_level,sword.*,debug")
    t.check_eq(r.get("level"), "debug", "set: level")
    t.check("sword.worker:debug" in r.get("types", []), "set: sword.worker matched: %r" % r)
    levels = live.telemetry("/sword/log_level")
    t.check("sword.flow:debug" in levels and "swordd:info" in levels,
            "levels after the change: %r" % [l for l in levels if "sword" in l])
    r = live.telemetry("/sword/log_level,sword.*,loud")
    t.check("unknown log level" in (r or {}).get("error", ""), "bad level: %r" % r)
    r = live.telemetry("/sword/log_level,nolevel")
    t.check("usage" in (r or {}).get("error", ""), "no level: %r" % r)
    t.check_eq(live.stop(), 0, "swordd exit status")
    t.check("log level of sword.* set to debug" in live.stderr(), "the change is logged")


if __name__ == "__main__":
    t.main(body)
