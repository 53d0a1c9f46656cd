#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
sword_exporter — swordd's counters as OpenMetrics (Prometheus) text.

Why a separate process: swordd's main lcore already serves the DPDK
telemetry socket; an HTTP server inside the daemon would add a second
network-facing surface and a thread to a DPDK process.  This reads the
telemetry socket with the shared client (scripts/sword_telemetry.py) at
every scrape, so what it shows is what /sword/... says at that moment.

    sword_exporter.py -f PREFIX [--listen ADDR:PORT]   serve GET /metrics
    sword_exporter.py -f PREFIX --once [--openmetrics] print one scrape

Two formats, chosen as Prometheus' own client libraries do: OpenMetrics
1.0 when the scraper's Accept header asks for application/openmetrics-text
(Prometheus does), else the Prometheus text format 0.0.4 (what
`promtool check metrics`, curl and older scrapers read).  The families are
the same; in the text format an info family is a gauge named ..._info and a
counter family is named with its _total.

Families (labels in braces):
  swordd_up                          1 if swordd answered this scrape
  swordd_build_info{version,dpdk}    1
  swordd_config_info{hash,source}    1; swordd_config_hash: the top 52 bits
                                     of the config hash (exact in a float)
  swordd_config_reloads_total, swordd_config_reloads_refused_total
  swordd_<counter>_total{worker}     /sword/workers,N counters (rx, tx,
                                     dropped, rewritten, managed_rx, ...)
  swordd_opcode_total{worker,opcode}           frames per RoCE opcode
  swordd_malformed_reason_total{worker,reason} malformed RoCE by reason
  swordd_non_roce_reason_total{worker,reason}  non-RoCE by reason
  swordd_function_<counter>_total{worker,function}
                                     counters of the attached functions
                                     (function="atomic", "clover")
  swordd_frame_processing_seconds{worker}  gauge: mean processing time
                                     per frame
  swordd_function_latency_seconds{worker,function}  gauge: mean time in
                                     one function per managed frame (sampled)
  swordd_server_managed_rx_total{server,worker}, swordd_server_rewritten_total
                                     per managed server (/sword/servers)
  swordd_port_<counter>_total{port,role}       /sword/ports,P (ours + ethdev)
  swordd_port_queues{port,role}      gauge
"""

import argparse
import http.server
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sword_telemetry  # noqa: E402

CONTENT_TYPE = "application/openmetrics-text; version=1.0.0; charset=utf-8"
CONTENT_TYPE_TEXT = "text/plain; version=0.0.4; charset=utf-8"
WORKER_SKIP = {"worker", "lcore", "socket", "non_roce", "malformed"}   # labels, or sums of labelled ones
PORT_GAUGES = {"queues", "flow_steering"}


def esc(v):
    return str(v).replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n")


class Families:
    """Samples grouped by family, printed family by family (OpenMetrics
    wants a family's samples together)."""

    def __init__(self):
        self.order = []
        self.fam = {}

    def add(self, name, kind, labels, value, help_=None):
        if name not in self.fam:
            self.order.append(name)
            self.fam[name] = (kind, help_, [])
        self.fam[name][2].append((labels, value))

    def text(self, openmetrics=True):
        out = []
        for name in self.order:
            kind, help_, samples = self.fam[name]
            suffix = {"counter": "_total", "info": "_info"}.get(kind, "")
            if openmetrics:
                fam = name
            else:
                fam, kind = name + suffix, {"info": "gauge"}.get(kind, kind)
            out.append("# HELP %s %s" % (fam, help_ or HELP.get(name) or default_help(name)))
            out.append("# TYPE %s %s" % (fam, kind))
            for labels, value in samples:
                lab = ",".join('%s="%s"' % (k, esc(v)) for k, v in labels)
                out.append("%s%s%s %s" % (name, suffix, "{%s}" % lab if lab else "", value))
        if openmetrics:
            out.append("# EOF")
        return "\n".join(out) + "\n"


# Help of the families whose name comes from swordd's counters (the
# counters' own documentation is sword_stats.h; these say what they count).
HELP = {
    "swordd_build": "swordd's version and the DPDK it runs on",
    "swordd_config": "the running configuration's hash and source file",
}


def default_help(name):
    """Help for a family named after a swordd counter: what it is, from its name."""
    for prefix, what in (("swordd_port_", "port counter"),
                         ("swordd_function_", "counter of an attached function"),
                         ("swordd_malformed_reason", "malformed RoCE frames by reason"),
                         ("swordd_non_roce_reason", "non-RoCE frames by reason"),
                         ("swordd_", "worker counter")):
        if name.startswith(prefix):
            return "swordd %s %s (see /sword/... on the telemetry socket)" % (
                what, name[len(prefix):] or name)
    return name


def metric_name(s):
    return re.sub(r"[^a-zA-Z0-9_]", "_", s)


def worker_counters(f, w, st):
    lab = [("worker", str(w))]
    for k, v in st.items():
        if k in WORKER_SKIP or not isinstance(v, int):
            continue
        m = re.fullmatch(r"opcode_(0x[0-9a-f]{2})", k)
        if m:
            f.add("swordd_opcode", "counter", lab + [("opcode", m.group(1))], v,
                  "frames per RoCE opcode")
            continue
        m = re.fullmatch(r"(malformed|non_roce)_(.+)", k)
        if m:
            f.add("swordd_%s_reason" % m.group(1), "counter", lab + [("reason", m.group(2))], v,
                  "%s frames by reason" % {"malformed": "malformed RoCE",
                                           "non_roce": "non-RoCE"}[m.group(1)])
            continue
        m = re.fullmatch(r"fn_latency_ns_([a-z]+)", k)
        if m:
            f.add("swordd_function_latency_seconds", "gauge", lab + [("function", m.group(1))],
                  v / 1e9, "mean time in the function per frame (1 frame in 64 sampled)")
            continue
        m = re.fullmatch(r"fn_([a-z]+)_(.+)", k)
        if m:
            f.add("swordd_function_" + metric_name(m.group(2)), "counter",
                  lab + [("function", m.group(1))], v)
            continue
        if k == "proc_ns_per_frame":
            f.add("swordd_frame_processing_seconds", "gauge", lab, v / 1e9,
                  "mean time a worker spends processing one frame")
            continue
        f.add("swordd_" + metric_name(k), "counter", lab, v)


def scrape(prefix, runtime_dir=sword_telemetry.RUNTIME_DIR, openmetrics=True):
    f = Families()
    path = sword_telemetry.socket_path(prefix, runtime_dir)
    try:
        with sword_telemetry.Client(path) as c:
            ver = c.query("/sword/version") or {}
            cfg = c.query("/sword/config") or {}
            workers = c.query("/sword/workers") or []
            per_worker = [(w, c.query("/sword/workers,%d" % w) or {}) for w in workers]
            servers = (c.query("/sword/servers") or {}).values()
            ports = c.query("/sword/ports") or []
            per_port = [(p, c.query("/sword/ports,%d" % p) or {}) for p in ports]
    except (OSError, ValueError, sword_telemetry.Error) as e:
        f.add("swordd_up", "gauge", [], 0, "swordd answered this scrape")
        sys.stderr.write("sword_exporter: %s: %s\n" % (path, e))
        return f.text(openmetrics)
    f.add("swordd_up", "gauge", [], 1, "swordd answered this scrape")
    f.add("swordd_build", "info", [("version", ver.get("version", "")),
                                   ("dpdk", ver.get("dpdk", ""))], 1)
    h = cfg.get("hash", "0")
    f.add("swordd_config", "info", [("hash", h), ("source", cfg.get("source", ""))], 1)
    f.add("swordd_config_hash", "gauge", [], int(h, 16) >> 12,
          "top 52 bits of the configuration hash (changes on reload)")
    f.add("swordd_config_reloads", "counter", [], cfg.get("reloads", 0),
          "SIGHUP reloads applied")
    f.add("swordd_config_reloads_refused", "counter", [], cfg.get("reloads_refused", 0),
          "SIGHUP reloads refused (nothing changed)")
    for w, st in per_worker:
        worker_counters(f, w, st)
    for sv in servers:
        lab = [("server", sv.get("name", "")), ("worker", str(sv.get("worker", "")))]
        f.add("swordd_server_managed_rx", "counter", lab, sv.get("managed_rx", 0),
              "RoCE frames to or from this managed server")
        f.add("swordd_server_rewritten", "counter", lab, sv.get("rewritten", 0),
              "frames of this server a function rewrote")
    for p, st in per_port:
        lab = [("port", str(p)), ("role", st.get("role", ""))]
        for k, v in st.items():
            if k in ("port", "role") or not isinstance(v, int):
                continue
            if k in PORT_GAUGES:
                f.add("swordd_port_" + k, "gauge", lab, v)
            else:
                f.add("swordd_port_" + metric_name(k), "counter", lab, v)
    return f.text(openmetrics)


def serve(prefix, runtime_dir, host, port):
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            if self.path.split("?")[0] != "/metrics":
                self.send_error(404, "only /metrics")
                return
            om = "application/openmetrics-text" in self.headers.get("Accept", "")
            body = scrape(prefix, runtime_dir, om).encode()
            self.send_response(200)
            self.send_header("Content-Type", CONTENT_TYPE if om else CONTENT_TYPE_TEXT)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, fmt, *a):
            pass

    srv = http.server.ThreadingHTTPServer((host, port), Handler)
    sys.stderr.write("sword_exporter: serving http://%s:%d/metrics for %s\n"
                     % (host, srv.server_address[1], prefix))
    sys.stderr.flush()
    srv.serve_forever()


def main():
    p = argparse.ArgumentParser(description="swordd counters as OpenMetrics text")
    p.add_argument("-f", "--file-prefix", required=True, help="swordd's EAL --file-prefix")
    p.add_argument("--runtime-dir", default=sword_telemetry.RUNTIME_DIR)
    p.add_argument("--listen", default="127.0.0.1:9880", help="ADDR:PORT (port 0: any)")
    p.add_argument("--once", action="store_true", help="print one scrape and exit")
    p.add_argument("--openmetrics", action="store_true",
                   help="with --once: OpenMetrics instead of the Prometheus text format")
    a = p.parse_args()
    if a.once:
        sys.stdout.write(scrape(a.file_prefix, a.runtime_dir, a.openmetrics))
        return 0
    host, _, port = a.listen.rpartition(":")
    serve(a.file_prefix, a.runtime_dir, host or "127.0.0.1", int(port))
    return 0


if __name__ == "__main__":
    sys.exit(main())
