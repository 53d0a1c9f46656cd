# SPDX-License-Identifier: BSD-3-Clause
"""
swordtest — shared plumbing for the daemon tests (tests/daemon/test_*.py).

Why it exists: every daemon test starts swordd on virtual ports, maybe builds
network namespaces around it, reads its counters and must leave nothing
behind even when it fails or meson kills it on timeout.  Doing that once,
here, keeps the tests about what they check.

Run with /usr/bin/python3 (it has scapy).  Paths come from the command line
(meson passes them) or the environment:
  --swordd PATH      SWORDD         built daemon
  --captures DIR     CAPTURES_DIR   ../shared/captures
  --helpers DIR      TEST_HELPERS   tests/helpers (roce_scapy.py, ...)
  --source-root DIR  SOURCE_ROOT    repository root (conf/, scripts/)
  --build-root DIR   BUILD_ROOT     meson build directory

Conventions: every name a test creates (netns, interface, DPDK file prefix,
temporary directory) carries the test's pid, so parallel runs of the suite
never collide.  Cleanup actions are registered as soon as a resource exists
and run in reverse order at exit, on failure, and on SIGTERM/SIGINT (what
meson sends on timeout).
"""

import argparse
import atexit
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

SKIP = 77  # meson's "skipped" exit code

# EAL arguments for tests.  Note: DPDK 22.11 rejects --in-memory together
# with --no-huge ("--legacy-mem is not compatible with --in-memory"), so we
# use --no-shconf plus a unique --file-prefix instead: no shared files, and a
# private telemetry socket per daemon.
EAL_BASE = ["--no-pci", "--no-huge", "-m", "512", "--no-shconf"]


class TestFailure(Exception):
    pass


# ---------------------------------------------------------------------------
# command line / environment

_args = None


def args():
    global _args
    if _args is None:
        p = argparse.ArgumentParser()
        p.add_argument("--swordd", default=os.environ.get("SWORDD"))
        p.add_argument("--captures", default=os.environ.get("CAPTURES_DIR"))
        p.add_argument("--helpers", default=os.environ.get("TEST_HELPERS"))
        p.add_argument("--source-root", default=os.environ.get("SOURCE_ROOT"))
        p.add_argument("--build-root", default=os.environ.get("BUILD_ROOT"))
        p.add_argument("-v", "--verbose", action="store_true")
        _args, _ = p.parse_known_args()
        here = os.path.dirname(os.path.abspath(__file__))
        root = os.path.abspath(os.path.join(here, "..", ".."))
        if not _args.source_root:
            _args.source_root = root
        if not _args.helpers:
            _args.helpers = os.path.join(_args.source_root, "tests", "helpers")
        if not _args.captures:
            _args.captures = os.path.join(_args.source_root, "..", "shared",
                                          "captures")
        if _args.helpers and _args.helpers not in sys.path:
            sys.path.insert(0, _args.helpers)
    return _args


def swordd_path():
    p = args().swordd
    if not p or not os.access(p, os.X_OK):
        raise TestFailure("swordd binary not found (pass --swordd or SWORDD): %r" % p)
    return p


def require_root():
    if os.geteuid() != 0:
        print("SKIP: needs root (netns, tap devices, DPDK)")
        sys.exit(SKIP)


def log(*a):
    print(*a, flush=True)


def check(cond, msg):
    """Assert that survives python -O and says what failed."""
    if not cond:
        raise TestFailure(msg)


def check_eq(got, want, what):
    if got != want:
        raise TestFailure("%s: got %r, want %r" % (what, got, want))


# ---------------------------------------------------------------------------
# cleanup

_cleanups = []
_tag = "%d" % os.getpid()


def tag():
    """Unique per test process; keep names short (interfaces: 15 chars)."""
    return _tag


def on_cleanup(fn, *a, **kw):
    _cleanups.append((fn, a, kw))


def run_cleanups():
    while _cleanups:
        fn, a, kw = _cleanups.pop()
        try:
            fn(*a, **kw)
        except Exception as e:  # cleanup must go on
            log("cleanup %s: %s" % (getattr(fn, "__name__", fn), e))


def _on_signal(signum, frame):
    raise SystemExit("killed by signal %d" % signum)


signal.signal(signal.SIGTERM, _on_signal)
signal.signal(signal.SIGINT, _on_signal)
atexit.register(run_cleanups)


def tmpdir():
    d = tempfile.mkdtemp(prefix="swordtest-%s-" % tag())
    if os.environ.get("SWORDTEST_KEEP"):
        log("keeping", d)
    else:
        on_cleanup(shutil.rmtree, d, ignore_errors=True)
    return d


def main(fn):
    """Run a test body: exit 0 on success, 1 on failure, cleanup always."""
    try:
        fn()
    except TestFailure as e:
        log("FAIL:", e)
        run_cleanups()
        sys.exit(1)
    except SystemExit:
        run_cleanups()
        raise
    except Exception:
        import traceback
        traceback.print_exc()
        run_cleanups()
        sys.exit(1)
    run_cleanups()
    log("PASS")
    sys.exit(0)


# ---------------------------------------------------------------------------
# processes

def sh(cmd, check_rc=True, **kw):
    """Run a command (list), return CompletedProcess with text output."""
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, **kw)
    if check_rc and r.returncode != 0:
        raise TestFailure("%s -> %d\n%s%s" % (" ".join(cmd), r.returncode,
                                             r.stdout, r.stderr))
    return r


def wait_for(pred, timeout, what, interval=0.1):
    deadline = time.monotonic() + timeout
    while True:
        v = pred()
        if v:
            return v
        if time.monotonic() > deadline:
            raise TestFailure("timed out after %ss waiting for %s" % (timeout, what))
        time.sleep(interval)


class Swordd:
    """One swordd process with its own DPDK file prefix and output files."""

    def __init__(self, vdevs, opts, eal_extra=(), name="swordd", workdir=None,
                 eal_base=EAL_BASE, env=None):
        self.dir = workdir or tmpdir()
        self.prefix = "swt%s%s" % (tag(), name[-3:])
        self.name = name
        self.env = env
        self.stdout_path = os.path.join(self.dir, name + ".stdout")
        self.stderr_path = os.path.join(self.dir, name + ".stderr")
        eal = list(eal_base) + ["--file-prefix", self.prefix]
        for v in vdevs:
            eal += ["--vdev", v]
        eal += list(eal_extra)
        self.cmd = [swordd_path()] + eal + ["--"] + list(opts)
        self.proc = None
        self.rc = None

    def start(self):
        log("+", " ".join(self.cmd))
        self.out = open(self.stdout_path, "w")
        self.err = open(self.stderr_path, "w")
        self.proc = subprocess.Popen(self.cmd, stdout=self.out, stderr=self.err,
                                     stdin=subprocess.DEVNULL, env=self.env)
        on_cleanup(shutil.rmtree, "/var/run/dpdk/" + self.prefix,
                   ignore_errors=True)
        # with hugepages and shared config (eal_base without --no-shconf,
        # for a secondary process such as dpdk-dumpcap) the EAL leaves its
        # hugepage files behind
        on_cleanup(lambda: [os.unlink(os.path.join("/dev/hugepages", f))
                            for f in os.listdir("/dev/hugepages")
                            if f.startswith(self.prefix + "map_")]
                   if os.path.isdir("/dev/hugepages") else None)
        on_cleanup(self._kill)      # cleanups run last first: kill, then remove
        return self

    def _kill(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def alive(self):
        return self.proc.poll() is None

    def wait(self, timeout=120):
        try:
            self.rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.dump()
            raise TestFailure("%s did not exit within %ss" % (self.name, timeout))
        self.out.flush()
        self.err.flush()
        return self.rc

    def stop(self, sig=signal.SIGTERM, timeout=60):
        self.proc.send_signal(sig)
        return self.wait(timeout)

    def stdout(self):
        with open(self.stdout_path) as f:
            return f.read()

    def stderr(self):
        with open(self.stderr_path) as f:
            return f.read()

    def dump(self):
        log("---- %s stdout (tail)" % self.name)
        log("\n".join(self.stdout().splitlines()[-40:]))
        log("---- %s stderr (tail)" % self.name)
        log("\n".join(self.stderr().splitlines()[-40:]))

    def expect_exit(self, want=0, timeout=120):
        rc = self.wait(timeout)
        if rc != want:
            self.dump()
            raise TestFailure("%s exited %d, want %d" % (self.name, rc, want))

    # telemetry
    def telemetry_path(self):
        return "/var/run/dpdk/%s/dpdk_telemetry.v2" % self.prefix

    def telemetry(self, cmd, timeout=30):
        wait_for(lambda: os.path.exists(self.telemetry_path()) or not self.alive(),
                 timeout, "telemetry socket " + self.telemetry_path())
        check(self.alive(), "%s died before telemetry was up" % self.name)
        return telemetry_query(self.telemetry_path(), cmd)


def telemetry_query(path, cmd):
    """One telemetry command (scripts/sword_telemetry.py, the shared client)."""
    try:
        return _sword_telemetry().query(path, cmd, timeout=10)
    except _sword_telemetry().Error as e:
        raise TestFailure(str(e))


def _sword_telemetry():
    scripts = os.path.join(args().source_root, "scripts")
    if scripts not in sys.path:
        sys.path.insert(0, scripts)
    import sword_telemetry
    return sword_telemetry


def read_stats_json(path):
    check(os.path.exists(path), "--stats-json file %s not written" % path)
    with open(path) as f:
        txt = f.read()
    try:
        return json.loads(txt)
    except ValueError as e:
        raise TestFailure("--stats-json %s is not JSON (%s): %r" % (path, e, txt[:500]))


def opcode_counts(stats):
    """{opcode int: count} from opcode_0xNN keys (zero counts dropped)."""
    out = {}
    for k, v in stats.items():
        m = re.fullmatch(r"opcode_0x([0-9a-fA-F]{1,2})", k)
        if m and v:
            out[int(m.group(1), 16)] = v
    return out


def malformed_counts(stats):
    out = {}
    for k, v in stats.items():
        if k.startswith("malformed_") and v:
            out[k[len("malformed_"):]] = v
    return out


# ---------------------------------------------------------------------------
# pcaps

def read_frames(path):
    """Frame bytes of a pcap or pcapng file, in order (scapy reader)."""
    from scapy.utils import RawPcapReader
    # Raw reader: no dissection, so malformed frames come back byte for byte.
    r = RawPcapReader(path)
    try:
        return [bytes(data) for data, _meta in r]
    finally:
        r.close()


def write_frames(path, frames, linktype=1):
    from scapy.utils import RawPcapWriter
    w = RawPcapWriter(path, linktype=linktype, sync=True)
    w.write_header(None)
    for i, f in enumerate(frames):
        w.write_packet(bytes(f), sec=1700000000 + i // 1000, usec=(i % 1000) * 1000)
    w.close()


def tshark_count(path, display_filter=None):
    cmd = ["tshark", "-n", "-r", path, "-T", "fields", "-e", "frame.number"]
    if display_filter:
        cmd += ["-Y", display_filter]
    r = sh(cmd)
    return len([l for l in r.stdout.splitlines() if l.strip()])


def tshark_opcodes(path):
    """{opcode: count} as tshark's InfiniBand dissector sees them."""
    r = sh(["tshark", "-n", "-r", path, "-T", "fields",
            "-e", "infiniband.bth.opcode"])
    out = {}
    for l in r.stdout.splitlines():
        l = l.strip()
        if not l:
            continue
        op = int(l.split(",")[0], 0)
        out[op] = out.get(op, 0) + 1
    return out


def tshark_frames(path):
    """Frame bytes as tshark decodes them (an independent reader for pcapng)."""
    r = sh(["tshark", "-n", "-r", path, "-T", "fields", "-e", "frame.len",
            "-e", "frame.cap_len"])
    return [tuple(int(x) for x in l.split("\t")) for l in r.stdout.splitlines() if l.strip()]


def compare_frames(got, want, what):
    if len(got) != len(want):
        raise TestFailure("%s: %d frames, want %d" % (what, len(got), len(want)))
    for i, (g, w) in enumerate(zip(got, want)):
        if g != w:
            j = next((k for k in range(min(len(g), len(w))) if g[k] != w[k]),
                     min(len(g), len(w)))
            raise TestFailure("%s: frame %d differs at byte %d (len %d vs %d)\n got  %s\n want %s"
                              % (what, i + 1, j, len(g), len(w),
                                 g[max(0, j - 8):j + 24].hex(),
                                 w[max(0, j - 8):j + 24].hex()))


# ---------------------------------------------------------------------------
# network namespaces

def netns(name):
    sh(["ip", "netns", "add", name])
    on_cleanup(sh, ["ip", "netns", "del", name], check_rc=False)
    # No IPv6: keeps router solicitations and MLD reports out of the counts.
    sh(["ip", "netns", "exec", name, "sysctl", "-qw",
        "net.ipv6.conf.all.disable_ipv6=1",
        "net.ipv6.conf.default.disable_ipv6=1"])
    sh(["ip", "-n", name, "link", "set", "lo", "up"])
    return name


def iface_flags(ifname, ns=None):
    cmd = ["ip"] + (["-n", ns] if ns else []) + ["-o", "link", "show", "dev", ifname]
    r = sh(cmd, check_rc=False)
    if r.returncode != 0:
        return None
    m = re.search(r"<([^>]*)>", r.stdout)
    return m.group(1).split(",") if m else []


def wait_tap_started(d, ifname, timeout=60):
    """A net_tap interface appears at probe and goes UP at rte_eth_dev_start.
    Moving it to another netns before that makes the PMD's own ioctls (by
    name, in its netns) fail, so wait for UP."""
    def ready():
        check(d.alive(), "%s exited before starting its ports" % d.name)
        f = iface_flags(ifname)
        return f is not None and "UP" in f
    try:
        wait_for(ready, timeout, "tap %s up" % ifname)
    except TestFailure:
        if not d.alive():
            d.dump()
        raise


def move_iface(ifname, ns, addr_cidr):
    sh(["ip", "link", "set", ifname, "netns", ns])
    sh(["ip", "-n", ns, "addr", "add", addr_cidr, "dev", ifname])
    sh(["ip", "-n", ns, "link", "set", ifname, "up"])


def iface_mac(ifname, ns):
    r = sh(["ip", "-n", ns, "-o", "link", "show", "dev", ifname])
    return re.search(r"link/ether ([0-9a-f:]{17})", r.stdout).group(1)


def in_ns(ns, cmd):
    return ["ip", "netns", "exec", ns] + cmd


class Sniffer:
    """tcpdump -w in a netns, started and stopped explicitly."""

    def __init__(self, ns, ifname, path, bpf=()):
        self.path = path
        errp = path + ".err"
        self.errf = open(errp, "w")
        self.errp = errp
        self.proc = subprocess.Popen(in_ns(ns, ["tcpdump", "-U", "-n", "-i", ifname,
                                                "-w", path] + list(bpf)),
                                     stdout=subprocess.DEVNULL, stderr=self.errf)
        on_cleanup(self._kill)

        def listening():
            check(self.proc.poll() is None, "tcpdump died: " + open(errp).read())
            return "listening on" in open(errp).read()
        wait_for(listening, 30, "tcpdump on %s/%s" % (ns, ifname))

    def _kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def stop(self):
        time.sleep(0.5)  # let the last frames reach the socket
        self.proc.send_signal(signal.SIGINT)
        self.proc.wait(30)
        return read_frames(self.path)
