#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
OpenMetrics endpoint (scripts/sword_exporter.py) under load: swordd replays
rcuckoo-connectx.pcap forever (net_pcap infinite_rx, one port) with atomic
replacement on its lock words; the exporter serves /metrics over HTTP from
the telemetry socket.  Two scrapes: the text is valid OpenMetrics (every
sample under a declared family, families contiguous, "# EOF" last), carries
swordd_up, the build info (= swordd --version), the config hash (=
/sword/config's), per-worker, per-opcode, per-port and per-function
(function="atomic", with its sampled latency) and per-server counters, and swordd_rx_total{worker="0"} moves between
the scrapes.  The same scrape in the Prometheus text format (no Accept
header: what promtool and curl read) passes `promtool check metrics`
(package prometheus; scripts/setup.sh installs it): every family has a HELP
and a known type, and names follow Prometheus' conventions (base units).
"""

import os
import re
import shutil
import subprocess
import sys
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import swordtest as t  # noqa: E402

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (-?[0-9.eE+-]+)$')


def parse(text):
    """{(name, labels): value}; checks the OpenMetrics structure on the way."""
    lines = text.rstrip("\n").split("\n")
    t.check_eq(lines[-1], "# EOF", "last line")
    families, seen_done, current = {}, set(), None
    out = {}
    for line in lines[:-1]:
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ", 3)
            t.check(name not in families, "family %s declared twice" % name)
            families[name] = kind
            if current:
                seen_done.add(current)
            current = name
            continue
        if line.startswith("# HELP "):
            continue
        m = SAMPLE.match(line)
        t.check(m is not None, "not a sample line: %r" % line)
        name, labels, value = m.group(1), m.group(2) or "", m.group(3)
        suffix = {"counter": "_total", "info": "_info"}.get(families.get(current), "")
        t.check(current is not None and name == current + suffix,
                "sample %s outside its family (current %s)" % (name, current))
        out[(name, labels)] = float(value)
    return out


def scrape(url, openmetrics=True):
    req = urllib.request.Request(url, headers={
        "Accept": "application/openmetrics-text; version=1.0.0,text/plain;q=0.5"}
        if openmetrics else {})
    with urllib.request.urlopen(req, timeout=30) as r:
        ctype = r.headers.get("Content-Type", "")
        want = "application/openmetrics-text" if openmetrics else "text/plain; version=0.0.4"
        t.check(ctype.startswith(want), "Content-Type %r, want %s" % (ctype, want))
        return r.read().decode()


def promtool(text, d):
    exe = shutil.which("promtool")
    t.check(exe is not None, "promtool not installed (package prometheus, scripts/setup.sh)")
    path = os.path.join(d, "metrics.txt")
    with open(path, "w") as f:
        f.write(text)
    with open(path) as f:
        r = subprocess.run([exe, "check", "metrics"], stdin=f, capture_output=True, text=True,
                           timeout=60)
    t.log("promtool check metrics: exit %d%s" % (r.returncode,
                                                 (": " + (r.stdout + r.stderr).strip())
                                                 if r.stdout + r.stderr else ""))
    t.check_eq(r.returncode, 0, "promtool check metrics exit status")
    t.check_eq((r.stdout + r.stderr).strip(), "", "promtool findings")
    helps = {l.split()[2] for l in text.splitlines() if l.startswith("# HELP ")}
    types = {l.split()[2] for l in text.splitlines() if l.startswith("# TYPE ")}
    t.check_eq(sorted(types - helps), [], "families without a HELP")


def main_body():
    t.require_root()
    root = t.args().source_root
    cap = os.path.join(t.args().captures, "rcuckoo-connectx.pcap")
    d = t.tmpdir()
    locks = ["--set", "server.m.ip=192.168.1.12", "--set", "features.atomic_replacement=on",
             "--set", "lock.masked.server=m", "--set", "lock.masked.rkey=0x2521",
             "--set", "lock.masked.base=0", "--set", "lock.masked.length=0x1000",
             "--set", "atomic.learn_holdoff_ms=0",
             "--set", "atomic.out_of_band=on"]   # the capture has no RDMA CM
    sw = t.Swordd(["net_pcap0,rx_pcap=%s,infinite_rx=1" % cap],
                  ["--mode", "one-port"] + locks, name="met", workdir=d).start()
    t.wait_for(lambda: (sw.telemetry("/sword/stats") or {}).get("rx", 0) > 0, 60,
               "first frames counted")

    err = open(os.path.join(d, "exporter.err"), "w+")
    exp = subprocess.Popen(["/usr/bin/python3", os.path.join(root, "scripts", "sword_exporter.py"),
                            "-f", sw.prefix, "--listen", "127.0.0.1:0"],
                           stdout=subprocess.DEVNULL, stderr=err)

    def stop_exporter():
        if exp.poll() is None:
            exp.terminate()
            exp.wait(10)
    t.on_cleanup(stop_exporter)

    def listening():
        err.seek(0)
        m = re.search(r"serving (http://\S+/metrics)", err.read())
        t.check(exp.poll() is None, "exporter exited")
        return m.group(1) if m else None
    url = t.wait_for(listening, 30, "exporter listening")
    t.log("scraping", url)

    try:
        first = parse(scrape(url))
        key = ("swordd_rx_total", '{worker="0"}')
        t.check(key in first, "no %s in the scrape" % (key,))

        def moved():
            m = parse(scrape(url))
            return m if m[key] > first[key] else None
        second = t.wait_for(moved, 60, "swordd_rx_total to move", interval=0.2)
        t.log("swordd_rx_total{worker=\"0\"}: %d -> %d" % (first[key], second[key]))

        t.check_eq(second[("swordd_up", "")], 1.0, "swordd_up")
        version = t.sh([t.swordd_path(), "--version"]).stdout.split()[1]
        builds = [k for k in second if k[0] == "swordd_build_info"]
        t.check(len(builds) == 1 and 'version="%s' % version in builds[0][1],
                "swordd_build_info %r vs --version %s" % (builds, version))
        h = sw.telemetry("/sword/config")["hash"]
        t.check(any(k[0] == "swordd_config_info" and 'hash="%s"' % h in k[1] for k in second),
                "swordd_config_info has no hash=%s" % h)
        t.check_eq(second[("swordd_config_hash", "")], float(int(h, 16) >> 12), "swordd_config_hash")
        t.check(second.get(("swordd_opcode_total", '{worker="0",opcode="0x12"}'), 0) > 0,
                "no ATOMIC ACKs (opcode 0x12) counted")
        t.check(second.get(("swordd_port_rx_total", '{port="0",role="hairpin"}'), 0) > 0,
                "no port rx")
        t.check(second.get(("swordd_function_latency_seconds",
                            '{worker="0",function="atomic"}'), 0) > 0,
                "no latency for the atomic replacement function")
        t.check(second.get(("swordd_server_managed_rx_total", '{server="m",worker="0"}'), 0) > 0,
                "no per-server managed frames")
        t.check(second.get(("swordd_function_req_seen_total",
                            '{worker="0",function="atomic"}'), 0) > 0,
                "no atomic replacement request counted")
        t.check(second.get(("swordd_frame_processing_seconds", '{worker="0"}'), 0) > 0,
                "no mean processing time per frame")
        promtool(scrape(url, openmetrics=False), d)
        t.check_eq(sw.stop(), 0, "swordd exit status")
    except BaseException:
        sw.dump()
        err.seek(0)
        t.log("---- exporter stderr\n" + err.read()[-2000:])
        raise


if __name__ == "__main__":
    t.main(main_body)
