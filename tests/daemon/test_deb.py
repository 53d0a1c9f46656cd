#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
sword as Debian packages: dpkg-buildpackage builds `sword` and
`sword-prometheus` from a copy of the source tree (only the sources: never
a developer's build/ or build-asan/, and the .debs land in the test's own
directory), `dpkg -i` installs them on this machine, and then everything
the units and the man page name is where they say:

  - swordd.service's ExecStart binary and config, sword-prometheus.service's
    interpreter and exporter; `systemd-analyze verify` accepts both units
    (when systemd-analyze is there: no systemd needs to run);
  - every path in swordd(8)'s FILES section (the configured paths
    substituted, not /usr/local nor a literal <libexecdir>), the man pages
    of sword-openflow(1) and sword-xdp-servers(8);
  - the configs are conffiles; no test endpoint (roce-peer) is installed.

The installed swordd answers --version and --check-config on the installed
config, starts on it the way its unit does (two net_pcap ports in place of
the NICs) and exits 0 with --idle-exit; the installed sword-openflow prints
rules from the installed config; the installed exporter answers a scrape.
`dpkg -r` removes the programs and keeps the conffiles, `dpkg --purge`
removes those too.

Runs as root on a throwaway machine (CI): it changes the real system's
package database.  Refuses (exit 77) if a sword package is already
installed, so it never removes an operator's.  SWORD_DEB_DIR=DIR reuses
the .debs already built there (e.g. by an earlier test of the same run).
"""

import glob
import os
import re
import shlex
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import swordtest as t  # noqa: E402
from scapy.all import Ether, IP, UDP, Raw  # noqa: E402

PACKAGES = ("sword", "sword-prometheus")


def dpkg_status(pkg):
    r = subprocess.run(["dpkg-query", "-W", "-f=${Status}", pkg],
                       capture_output=True, text=True)
    return r.stdout if r.returncode == 0 else ""


def unit_settings(path):
    out = {}
    for line in open(path):
        line = line.strip()
        if "=" in line and not line.startswith(("#", "[")):
            k, v = line.split("=", 1)
            out.setdefault(k, []).append(v)
    return out


def build_debs(d):
    """Build the packages from a copy of the sources; the .deb paths."""
    src = os.environ.get("SOURCE_ROOT") or os.path.join(os.path.dirname(__file__), "..", "..")
    tree = os.path.join(d, "sword")
    # the sources only: build trees, dh's obj-*, git and caches stay behind
    shutil.copytree(src, tree, symlinks=True, ignore=shutil.ignore_patterns(
        "build", "build-*", "obj-*", ".git", "__pycache__", "*.deb", "tmp"))
    env = dict(os.environ, DEB_BUILD_OPTIONS="nocheck parallel=%d" % min(os.cpu_count() or 1, 2))
    log = os.path.join(d, "dpkg-buildpackage.log")
    t.log("+ dpkg-buildpackage -b -us -uc (in %s, log %s)" % (tree, log))
    with open(log, "w") as f:
        rc = subprocess.call(["dpkg-buildpackage", "-b", "-us", "-uc"], cwd=tree, env=env,
                             stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    tail = open(log).read()[-3000:]
    t.check(rc == 0, "dpkg-buildpackage exit %d:\n%s" % (rc, tail))
    t.log(tail[-600:])
    return find_debs(d)


def find_debs(d):
    debs = {}
    for pkg in PACKAGES:
        hits = glob.glob(os.path.join(d, "%s_*.deb" % pkg))
        t.check(len(hits) == 1, "want one %s_*.deb in %s, found %r" % (pkg, d, hits))
        debs[pkg] = hits[0]
    return debs


def man_files(page):
    """Absolute paths named in the FILES section of an installed man page."""
    r = t.sh(["man", "-P", "cat", page], env=dict(os.environ, MANWIDTH="200"))
    text = r.stdout
    t.check("<libexecdir>" not in text and "/usr/local" not in text,
            "man %s names unconfigured paths" % page)
    m = re.search(r"^FILES\n(.*?)^\S", text, re.S | re.M)
    t.check(m, "man %s has no FILES section" % page)
    # an entry's heading line: "/a, /b" or "/path -f ARG ..."; a path with
    # a placeholder (<file-prefix>) exists only at run time
    paths = []
    for line in m.group(1).splitlines():
        if line.strip().startswith("/"):
            paths += [p.split()[0] for p in line.strip().split(", ")]
    return sorted(set(p for p in paths if "<" not in p))


def check_installed(d):
    # the units and what they run
    swordd_unit = "/lib/systemd/system/swordd.service"
    exporter_unit = "/lib/systemd/system/sword-prometheus.service"
    u = unit_settings(swordd_unit)
    t.check_eq(u.get("Type"), ["notify"], "swordd.service Type=")
    exec_start = shlex.split(u["ExecStart"][0])
    t.check_eq(exec_start[0], "/usr/sbin/swordd", "swordd.service ExecStart binary")
    conf = exec_start[exec_start.index("-c") + 1]
    t.check_eq(conf, "/etc/sword/swordd.conf", "swordd.service config")
    e = shlex.split(unit_settings(exporter_unit)["ExecStart"][0])
    t.check(os.access(e[0], os.X_OK) and os.path.isfile(e[1]),
            "sword-prometheus.service ExecStart %r: not installed" % e)
    for path in (exec_start[0], conf):
        t.check(os.path.isfile(path), "%s (named by swordd.service) is not installed" % path)
    if shutil.which("systemd-analyze"):
        for unit in (swordd_unit, exporter_unit):
            r = t.sh(["systemd-analyze", "verify", unit], check_rc=False)
            t.check(r.returncode == 0, "systemd-analyze verify %s: %s%s"
                    % (unit, r.stdout, r.stderr))
        t.log("systemd-analyze verify: both units OK")

    # what the man page says is there
    files = man_files("swordd")
    t.log("swordd(8) FILES:", files)
    t.check("/etc/sword/swordd.conf" in files, "swordd(8) FILES does not name "
            "/etc/sword/swordd.conf: %r" % files)
    for path in files:
        t.check(os.path.exists(path), "swordd(8) FILES names %s: not installed" % path)
    for page in ("sword-openflow", "sword-xdp-servers"):
        t.sh(["man", "-w", page])

    # conffiles, and no test endpoints
    conffiles = t.sh(["dpkg-query", "-W", "-f=${Conffiles}", "sword"]).stdout
    for c in ("/etc/sword/swordd.conf", "/etc/sword/clover.conf"):
        t.check(c in conffiles, "%s is not a conffile of sword: %r" % (c, conffiles))
    listed = t.sh(["dpkg", "-L", "sword", "sword-prometheus"]).stdout.split()
    t.check(not [p for p in listed if os.path.basename(p) == "roce-peer"],
            "a test endpoint is packaged: %r" % listed)
    return conf


def run_installed(d, conf):
    v = t.sh(["/usr/sbin/swordd", "--version"]).stdout.strip()
    t.check(v.startswith("swordd "), "swordd --version: %r" % v)
    t.log(v)
    r = t.sh(["/usr/sbin/swordd", "--check-config", "-c", conf])
    t.check("config OK" in r.stdout, "--check-config: %r" % r.stdout[-400:])

    # started as the unit starts it, on the installed config (the two-port
    # demo): two net_pcap ports with a few frames in place of the NICs
    frames = [Ether() / IP(src="198.18.0.1", dst="198.18.0.9") / UDP(dport=9) / Raw(b"x" * 32)
              for _ in range(4)]
    inp = os.path.join(d, "in.pcap")
    t.write_frames(inp, frames)
    prefix = "swt%sdeb" % t.tag()
    t.on_cleanup(shutil.rmtree, "/var/run/dpdk/" + prefix, ignore_errors=True)
    cmd = (["/usr/sbin/swordd"] + t.EAL_BASE + ["--file-prefix", prefix, "-l", "0-1",
           "--vdev", "net_pcap0,rx_pcap=%s,tx_pcap=%s" % (inp, os.path.join(d, "o0.pcap")),
           "--vdev", "net_pcap1,rx_pcap=%s,tx_pcap=%s" % (inp, os.path.join(d, "o1.pcap")),
           "--", "-c", conf, "--idle-exit", "1"])
    t.log("+", " ".join(cmd))
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                       stdin=subprocess.DEVNULL)
    out = r.stdout + r.stderr
    t.check(r.returncode == 0 and "swordd: running" in out,
            "installed swordd: exit %d\n%s" % (r.returncode, out[-2000:]))
    t.log("installed swordd ran and exited 0")

    r = t.sh(["/usr/bin/sword-openflow", "-c", conf, "--sword", "5", "--sword-server", "6",
              "--host", "198.18.0.1=1", "--host", "198.18.0.2=2"])
    t.check("cookie=0x5304d" in r.stdout, "sword-openflow printed no rule: %r" % r.stdout)
    e = shlex.split(unit_settings("/lib/systemd/system/sword-prometheus.service")
                    ["ExecStart"][0])
    r = t.sh([e[0], e[1], "-f", prefix, "--once"])
    t.check("swordd_up 0" in r.stdout, "installed exporter: %r" % r.stdout)
    # swordctl (issue #32) from the sword package, importing the
    # sword_telemetry.py it ships: swordd has exited, so one line, exit 1
    r = t.sh(["/usr/bin/swordctl", "-f", prefix, "show", "stats"], check_rc=False)
    t.check(r.returncode == 1 and "swordd is not running" in r.stderr
            and "Traceback" not in r.stderr, "installed swordctl: %d %r" % (r.returncode, r.stderr))
    t.check("drain" in t.sh(["/usr/bin/swordctl", "--help"]).stdout, "swordctl --help")


def body():
    t.require_root()
    t.args()
    for tool in ("dpkg-buildpackage", "dh", "man"):
        if shutil.which(tool) is None:
            print("SKIP (counts as a failure): no %s (debhelper, dpkg-dev, man-db: "
                  "scripts/setup.sh)" % tool)
            sys.exit(t.SKIP)
    for pkg in PACKAGES:
        if "installed" in dpkg_status(pkg):
            print("SKIP (counts as a failure): %s is already installed here; this test "
                  "installs and purges its own and will not replace it" % pkg)
            sys.exit(t.SKIP)
    d = t.tmpdir()
    reuse = os.environ.get("SWORD_DEB_DIR")
    debs = find_debs(reuse) if reuse else build_debs(d)

    def purge():
        subprocess.call(["dpkg", "--purge"] + list(PACKAGES),
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    t.on_cleanup(purge)
    r = t.sh(["dpkg", "-i", debs["sword"], debs["sword-prometheus"]], check_rc=False)
    t.check(r.returncode == 0, "dpkg -i: %s%s" % (r.stdout, r.stderr))
    conf = check_installed(d)
    run_installed(d, conf)

    t.sh(["dpkg", "-r"] + list(PACKAGES))
    t.check(not os.path.exists("/usr/sbin/swordd"), "dpkg -r left /usr/sbin/swordd")
    t.check(os.path.exists(conf), "dpkg -r removed the conffile %s" % conf)
    t.sh(["dpkg", "--purge"] + list(PACKAGES))
    t.check(not os.path.exists(conf), "dpkg --purge left %s" % conf)
    for pkg in PACKAGES:
        t.check("installed" not in dpkg_status(pkg), "%s still installed" % pkg)
    t.log("installed, checked, ran, removed and purged")


if __name__ == "__main__":
    t.main(body)
