#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
swordd as an operator installs and runs it: `meson install` into a scratch
DESTDIR puts the binaries (not the test endpoints), the systemd units, the
documented configs and the man pages in place; swordd started the way the installed unit starts it
(its ExecStart, with test EAL arguments in SWORDD_EAL_ARGS, on the installed
config) sends READY=1 on the NOTIFY_SOCKET this test opens (the
sd_notify(3) protocol systemd uses; systemd itself may not run in a
container) only once its ports are up and its workers run, answers
/sword/version with what --version prints, and sends STOPPING=1 and exits 0
on SIGTERM.

In between, SIGHUP reloads (systemctl reload: the unit's ExecReload) with
RELOADING=1 then READY=1 each time: live keys ([stats] interval, [atomic]
gate_ms) edited in the installed config apply and change the config hash; an edit of the
same live key together with one that needs a restart ([ports] burst) is
refused as a whole (the live key keeps its value, the hash does not move,
the log names the refused key); an invalid edit is refused with the usual
file/section/key message and swordd keeps running.  The installed metrics
exporter scrapes the running daemon and sees the reload (config hash,
reload counters).
"""

import glob
import re
import os
import shlex
import signal
import socket
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import swordtest as t  # noqa: E402
from scapy.all import Ether, IP, UDP, Raw  # noqa: E402


def installed(dest, pattern):
    hits = glob.glob(os.path.join(dest, "**", pattern), recursive=True)
    t.check(len(hits) == 1, "meson install: want one %s under %s, found %r"
            % (pattern, dest, hits))
    return hits[0]


def unit_settings(path):
    out = {}
    for line in open(path):
        line = line.strip()
        if "=" in line and not line.startswith("#") and not line.startswith("["):
            k, v = line.split("=", 1)
            out.setdefault(k, []).append(v)
    return out


class NotifySocket:
    """The receiving end of sd_notify(3): a datagram socket at a path."""

    def __init__(self, path):
        self.path = path
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.s.bind(path)
        self.s.settimeout(1)
        self.messages = []

    def wait(self, key, proc=None, timeout=120):
        """First message carrying KEY=..., as a dict (proc: fail at once if
        it exits first; a stopping daemon's messages are already queued)."""
        def got():
            try:
                data = self.s.recv(4096).decode()
            except socket.timeout:
                t.check(proc is None or proc.poll() is None,
                        "swordd exited %s before %s" % (proc and proc.poll(), key))
                return None
            msg = dict(l.split("=", 1) for l in data.splitlines() if "=" in l)
            t.log("notify:", msg)
            self.messages.append(msg)
            return msg if key in msg else None
        return t.wait_for(got, timeout, "%s on NOTIFY_SOCKET" % key, interval=0)


def scrape(exporter, prefix):
    """One scrape by the installed exporter: {sample without labels: value}."""
    r = t.sh(["/usr/bin/python3", exporter, "-f", prefix, "--once"])
    out = {}
    for line in r.stdout.splitlines():
        if line and not line.startswith("#") and "{" not in line:
            k, v = line.rsplit(" ", 1)
            out[k] = v
    return out


def edit(conf, old, new):
    text = open(conf).read()
    t.check(old in text, "test bug: %r not in %s" % (old, conf))
    with open(conf, "w") as f:
        f.write(text.replace(old, new, 1))


def log_text(out):
    out.flush()
    out.seek(0)
    return out.read()


def reload(proc, notify):
    proc.send_signal(signal.SIGHUP)
    notify.wait("RELOADING", proc)
    return notify.wait("READY", proc)


def reload_checks(proc, notify, conf, tel, out):
    cfg0 = t.telemetry_query(tel, "/sword/config")
    t.check_eq(cfg0["stats"]["interval"], "0", "stats.interval before")

    # two live keys: apply together
    edit(conf, "\ninterval = 0", "\ninterval = 1")
    edit(conf, "\ngate_ms = 0", "\ngate_ms = 50")
    reload(proc, notify)
    cfg1 = t.telemetry_query(tel, "/sword/config")
    t.check_eq(cfg1["stats"]["interval"], "1", "stats.interval after a live reload")
    t.check_eq(cfg1["atomic"]["gate_ms"], "50", "atomic.gate_ms after a live reload")
    t.check(cfg1["hash"] != cfg0["hash"], "config hash did not change on reload")
    t.check_eq((cfg1["reloads"], cfg1["reloads_refused"]), (1, 0), "reloads, refused")
    t.check("reload applied (2 change(s)" in log_text(out),
            "no 'reload applied (2 change(s)' in the log")

    # live + restart-only together: nothing applies
    edit(conf, "\ninterval = 1", "\ninterval = 2")
    edit(conf, "\nburst = 32", "\nburst = 16")
    reload(proc, notify)
    cfg2 = t.telemetry_query(tel, "/sword/config")
    t.check_eq(cfg2["stats"]["interval"], "1", "stats.interval after a refused reload")
    t.check_eq(cfg2["ports"]["burst"], "32", "ports.burst after a refused reload")
    t.check_eq(cfg2["hash"], cfg1["hash"], "config hash after a refused reload")
    t.check_eq((cfg2["reloads"], cfg2["reloads_refused"]), (1, 1), "reloads, refused")
    log = log_text(out)
    t.check(re.search(r"reload refused, nothing changed: .*\[ports\] burst: 32 -> 16", log),
            "refused reload not logged with the key:\n" + log[-2000:])

    # invalid: refused with the config error, swordd keeps forwarding
    edit(conf, "\nburst = 16", "\nburst = 100000")
    reload(proc, notify)
    t.check(re.search(re.escape(conf) + r": \[ports\] burst: .*out of range", log_text(out)),
            "invalid reload not logged as a config error")
    t.check_eq(t.telemetry_query(tel, "/sword/config")["reloads_refused"], 2, "refused")
    t.check(proc.poll() is None, "swordd died on an invalid reload")


def body():
    t.require_root()
    build = t.args().build_root
    d = t.tmpdir()
    dest = os.path.join(d, "destdir")
    t.sh(["meson", "install", "-C", build, "--no-rebuild", "--quiet", "--destdir", dest])

    swordd = installed(dest, "sbin/swordd")
    installed(dest, "bin/sword-openflow")
    unit = installed(dest, "swordd.service")
    installed(dest, "sword-prometheus.service")
    installed(dest, "man1/sword-openflow.1")
    if os.environ.get("SWORD_XDP_PROG"):     # built (clang, libbpf)
        installed(dest, "sbin/sword-xdp-servers")
        installed(dest, "sword/sword_xdp.bpf.o")
        installed(dest, "man8/sword-xdp-servers.8")
    # test endpoints stay out of an install (-Dinstall_test_tools=true)
    for tool in ("roce-peer", "sword-lock-client", "sword-mem-server"):
        t.check(not glob.glob(os.path.join(dest, "**", tool), recursive=True),
                "meson install installed the test endpoint %s" % tool)
    conf = installed(dest, "sword/swordd.conf")
    installed(dest, "sword/clover.conf")
    exporter = installed(dest, "sword/sword_exporter.py")
    installed(dest, "sword/sword_telemetry.py")
    # swordctl (issue #32): in bindir, importing the installed client
    ctl = installed(dest, "bin/swordctl")
    t.check(os.access(ctl, os.X_OK), "%s is not executable" % ctl)
    t.check("@LIBEXECDIR@" not in open(ctl).read(), "%s: LIBEXECDIR not substituted" % ctl)
    man = installed(dest, "man8/swordd.8")
    t.check(open(man).read().startswith(".\\\" Generated by scdoc"),
            "%s is not a man page" % man)
    r = t.sh(["man", "-l", "-P", "cat", man], check_rc=False)
    t.check(r.returncode == 0 and "SIGHUP" in r.stdout, "man -l %s:\n%s" % (man, r.stderr))

    u = unit_settings(unit)
    t.check_eq(u.get("Type"), ["notify"], "unit Type=")
    exec_start = shlex.split(u["ExecStart"][0])
    t.check("$SWORDD_EAL_ARGS" in exec_start, "ExecStart has no $SWORDD_EAL_ARGS: %r" % exec_start)
    # fail-open (issue #30): a watchdog swordd feeds, and the links set down
    # after any end (the "-": a failure there must not fail the stop)
    wd = u.get("WatchdogSec", ["0"])[0]
    t.check(wd.isdigit() and int(wd) > 0, "unit WatchdogSec=%r" % wd)
    stop_post = u.get("ExecStopPost", [""])[0]
    t.check(stop_post.startswith("-") and "--links-down" in shlex.split(stop_post[1:])
            and "$SWORDD_EAL_ARGS" in stop_post, "ExecStopPost=%r" % stop_post)

    # the installed config is the two-port demo: two net_pcap ports with a
    # few frames each, in place of the NICs
    frames = [Ether() / IP(src="198.18.0.1", dst="198.18.0.9") / UDP(dport=9) / Raw(b"x" * 32)
              for _ in range(4)]
    inp = os.path.join(d, "in.pcap")
    t.write_frames(inp, frames)
    prefix = "swt%sins" % t.tag()
    eal = t.EAL_BASE + ["--file-prefix", prefix, "-l", "0-1",
                        "--vdev", "net_pcap0,rx_pcap=%s,tx_pcap=%s" % (inp, os.path.join(d, "o0.pcap")),
                        "--vdev", "net_pcap1,rx_pcap=%s,tx_pcap=%s" % (inp, os.path.join(d, "o1.pcap"))]
    cmd = []
    for tok in exec_start:
        if tok == "$SWORDD_EAL_ARGS":
            cmd += eal
        elif tok.startswith("/"):
            cmd.append(dest + tok)       # installed under DESTDIR
        else:
            cmd.append(tok)
    t.check_eq(cmd[0], swordd, "ExecStart binary")
    t.check(conf in cmd, "ExecStart does not use the installed config %s: %r" % (conf, cmd))

    notify = NotifySocket(os.path.join(d, "notify.sock"))
    env = dict(os.environ, NOTIFY_SOCKET=notify.path, WATCHDOG_USEC=str(int(wd) * 1000000))
    t.log("+", " ".join(cmd))
    out = open(os.path.join(d, "swordd.out"), "w+")
    proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env,
                            stdin=subprocess.DEVNULL)

    def kill():
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    t.on_cleanup(kill)
    t.on_cleanup(__import__("shutil").rmtree, "/var/run/dpdk/" + prefix, ignore_errors=True)

    def dump():
        out.flush()
        out.seek(0)
        t.log("---- swordd output\n" + out.read()[-3000:])

    try:
        ready = notify.wait("READY", proc)
        t.check_eq(ready.get("READY"), "1", "READY=")
        t.check_eq(ready.get("MAINPID"), str(proc.pid), "MAINPID=")
        # the main lcore feeds the watchdog while the worker forwards
        t.check_eq(notify.wait("WATCHDOG", proc, timeout=int(wd)).get("WATCHDOG"), "1",
                   "WATCHDOG=")
        # READY means forwarding: both ports started, the worker running
        tel = "/var/run/dpdk/%s/dpdk_telemetry.v2" % prefix
        ports = t.telemetry_query(tel, "/sword/ports")
        t.check_eq(sorted(ports), [0, 1], "/sword/ports at READY")
        workers = t.telemetry_query(tel, "/sword/workers")
        t.check_eq(workers, [0], "/sword/workers at READY")
        version = t.sh([swordd, "--version"]).stdout.strip()
        tv = t.telemetry_query(tel, "/sword/version")
        t.check(version.startswith("swordd " + tv.get("version", "?")),
                "/sword/version %r vs --version %r" % (tv, version))
        cfg = t.telemetry_query(tel, "/sword/config")
        t.check_eq(cfg.get("source"), conf, "/sword/config source")

        m0 = scrape(exporter, prefix)
        reload_checks(proc, notify, conf, tel, out)
        # the installed exporter sees the daemon and the reload
        m1 = scrape(exporter, prefix)
        t.check_eq((m0.get("swordd_up"), m1.get("swordd_up")), ("1", "1"), "swordd_up")
        t.check(m1["swordd_config_hash"] != m0["swordd_config_hash"],
                "swordd_config_hash did not move on reload")
        t.check_eq(m1.get("swordd_config_reloads_total"), "1", "reloads metric")
        t.check_eq(m1.get("swordd_config_reloads_refused_total"), "2", "refused metric")

        proc.send_signal(signal.SIGTERM)
        notify.wait("STOPPING", None, timeout=60)
        rc = proc.wait(60)
        t.check_eq(rc, 0, "swordd exit status after SIGTERM")
        # ExecStopPost as the unit runs it, on the installed config (valid
        # again: reload_checks left an invalid edit in it, which
        # --links-down refuses like any config error): failover_bypass is
        # off there, so it leaves the links alone and says so (tests/tor
        # has swordd and its guardian set real ones down)
        edit(conf, "\nburst = 100000", "\nburst = 32")
        post = [dest + tok if tok.startswith("/") else tok
                for tok in shlex.split(stop_post[1:]) if tok != "$SWORDD_EAL_ARGS"]
        post[1:1] = eal
        r = t.sh(post, check_rc=False)
        t.check(r.returncode == 0 and "nothing to do" in r.stdout,
                "ExecStopPost %r: exit %d\n%s%s" % (post, r.returncode, r.stdout, r.stderr))
    except BaseException:
        dump()
        raise


if __name__ == "__main__":
    t.main(body)
