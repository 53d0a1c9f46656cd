#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
swordctl (issue #32) against a running swordd: every subcommand's happy
path, human-readable and --json, the upgrade drain (issue #30) started and
reported drained, then with swordd stopped one clear line and exit 1.

swordd runs one-port on net_pcap (rdmacm-read-lat.pcap replayed, --no-huge)
with a managed server whose remapping keeps 2 lanes and a lock region, so
that /sword/lanes and /sword/lock have something to show.
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import swordtest as t  # noqa: E402

CONF = """\
[ports]
mode = one-port
mbufs = 2048

[cores]
workers = 1

[server.mem0]
ip = 198.18.1.2
udp_port = 4791
lanes = 2

[lock.l1]
server = mem0
rkey = any
base = 0x10000
length = 4096
word_size = 8

[features]
atomic_replacement = on
remapping = on
clover = off
"""


def swordctl():
    return os.path.join(t.args().source_root, "scripts", "swordctl")


def ctl(prefix, *argv, want=0):
    r = t.sh(["/usr/bin/python3", swordctl(), "-f", prefix] + list(argv), check_rc=False)
    t.log("swordctl %s -> %d\n%s%s" % (" ".join(argv), r.returncode, r.stdout[:600],
                                       r.stderr[:300]))
    t.check("Traceback" not in r.stderr, "swordctl %s: traceback:\n%s" % (argv, r.stderr))
    t.check_eq(r.returncode, want, "swordctl %s: exit status" % " ".join(argv))
    return r


def ctl_json(prefix, *argv):
    return json.loads(ctl(prefix, "--json", *argv).stdout)


def body():
    t.require_root()
    d = t.tmpdir()
    conf = os.path.join(d, "swordd.conf")
    with open(conf, "w") as f:
        f.write(CONF)
    cap = os.path.join(t.args().source_root, "tests", "captures", "rdmacm-read-lat.pcap")
    out = os.path.join(d, "out.pcap")
    sw = t.Swordd(["net_pcap0,rx_pcap=%s,tx_pcap=%s" % (cap, out)],
                  ["-c", conf], name="ctl", workdir=d).start()
    # commands are registered a moment after the socket is up
    t.wait_for(lambda: (sw.telemetry("/sword/lanes") or {}).get("lanes") is not None,
               60, "/sword/lanes answers")
    p = sw.prefix

    r = ctl(p, "--help")
    for word in ("show", "capture", "log-level", "drain", "--json"):
        t.check(word in r.stdout, "--help does not mention %s" % word)

    st = ctl_json(p, "show", "stats")
    t.check("rx" in st and "tx" in st, "show stats --json: %r" % st)
    t.check("rx" in ctl(p, "show", "stats").stdout, "show stats: no rx line")

    t.check("mem0" in ctl(p, "show", "servers").stdout, "show servers: no mem0")
    t.check("mem0" in json.dumps(ctl_json(p, "show", "servers")), "show servers --json")

    c = ctl_json(p, "show", "conns")
    t.check("connections" in c, "show conns --json: %r" % c)
    t.check(ctl(p, "show", "conns", "mem0").stdout.startswith("connections:"),
            "show conns mem0: no connections line")

    # lanes: 2 per the configuration, keyed SERVER_LANE
    ln = ctl_json(p, "show", "lanes")
    t.check_eq(ln.get("lanes"), 2, "show lanes --json: lanes")
    t.check("mem0_0" in ln and "mem0_1" in ln, "show lanes --json: %r" % ln)
    t.check_eq(ctl_json(p, "show", "lanes", "mem0").get("lanes"), 2, "show lanes mem0")
    r = ctl(p, "show", "lanes")
    t.check("lanes: 2" in r.stdout and "mem0_1" in r.stdout, "show lanes: %r" % r.stdout)
    r = ctl(p, "show", "lanes", "nosuch", want=1)
    t.check("no managed server" in r.stderr and len(r.stderr.strip().splitlines()) == 1,
            "show lanes nosuch: %r" % r.stderr)

    lk = ctl_json(p, "show", "lock", "mem0", "0x10000")
    t.check_eq((lk.get("region"), lk.get("atomic_replacement")), ("l1", "on"),
               "show lock --json")
    t.check("state" in ctl(p, "show", "lock", "mem0", "0x10000").stdout, "show lock")

    t.check("one-port" in json.dumps(ctl_json(p, "show", "config")), "show config --json")
    t.check("mode" in ctl(p, "show", "config").stdout, "show config")
    t.check("version" in ctl_json(p, "show", "version"), "show version --json")
    t.check("dpdk" in ctl(p, "show", "version").stdout, "show version")

    cap_out = os.path.join(d, "rx.pcapng")
    r = ctl_json(p, "capture", "start", "rx", cap_out)
    t.check_eq(r["rx"]["state"], "writing", "capture start rx: state")
    r = ctl_json(p, "capture", "stop", "rx")
    t.check_eq(r["rx"]["state"], "off", "capture stop rx: state")
    t.check(os.path.exists(cap_out), "capture start rx wrote no %s" % cap_out)
    ctl(p, "capture", "start", "tx", os.path.join(d, "tx.pcapng"))
    t.check("state" in ctl(p, "capture", "stop").stdout, "capture stop: no state")
    # nothing left to stop: swordd's refusal in one line, exit 1
    r = ctl(p, "capture", "stop", want=1)
    t.check("no capture to stop" in r.stderr, "capture stop twice: %r" % r.stderr)

    t.check("sword" in ctl(p, "log-level").stdout, "log-level: no sword log types")
    r = ctl_json(p, "log-level", "sword.*", "debug")
    t.check(r.get("types_matched", 0) >= 1, "log-level sword.* debug: %r" % r)

    # drain: not started, then started; nothing rewritten here, so drained
    r = ctl_json(p, "drain", "status")
    t.check_eq((r.get("draining"), r.get("drained")), (0, "false"), "drain status before")
    # drained only once every worker began a poll round after the flag
    r = ctl(p, "drain")
    t.check("drain: draining" in r.stdout or "drain: drained" in r.stdout,
            "drain: %r" % r.stdout)
    r = ctl(p, "drain", "status", "--wait", "10")
    t.check("drained: true" in r.stdout, "drain status --wait: %r" % r.stdout)
    r = ctl_json(p, "drain", "status")
    t.check_eq((r.get("draining"), r.get("workers_draining"), r.get("unanswered"),
                r.get("drained")), (1, 1, 0, "true"), "drain status after")
    t.check(sw.alive(), "swordd died under swordctl")

    t.check_eq(sw.stop(), 0, "swordd exit code on SIGTERM")
    # swordd is down: one clear line, no traceback, exit 1
    for argv in (["show", "stats"], ["drain", "status"]):
        r = ctl(p, *argv, want=1)
        lines = r.stderr.strip().splitlines()
        t.check(len(lines) == 1 and "swordd is not running" in lines[0],
                "swordctl %s with swordd down: %r" % (argv, r.stderr))


if __name__ == "__main__":
    t.main(body)
