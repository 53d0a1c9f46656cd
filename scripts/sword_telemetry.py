#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
sword_telemetry — the one client of swordd's DPDK telemetry socket that
sword's scripts and tests share (the demo's progress line, the benchmarks,
the daemon tests, the metrics exporter).

It speaks dpdk-telemetry.py's protocol (telemetry v2): connect a
SOCK_SEQPACKET socket to /var/run/dpdk/<file-prefix>/dpdk_telemetry.v2, read
the JSON greeting (it carries max_output_len), send a command such as
"/sword/stats" or "/sword/workers,0", read one JSON reply
{"/sword/workers": {...}}.

    sword_telemetry.py -f PREFIX CMD [KEY...]
        print the reply as JSON, or only the values of KEYs, space separated
"""

import argparse
import json
import os
import socket
import sys

RUNTIME_DIR = "/var/run/dpdk"


def socket_path(prefix, runtime_dir=RUNTIME_DIR):
    return os.path.join(runtime_dir, prefix, "dpdk_telemetry.v2")


class Error(Exception):
    pass


class Client:
    """One connection; several commands may be sent over it."""

    def __init__(self, path, timeout=5):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.s.settimeout(timeout)
        try:
            self.s.connect(path)
            hello = json.loads(self.s.recv(1 << 16).decode())
        except BaseException:
            self.s.close()
            raise
        self.max_len = max(int(hello.get("max_output_len", 16384)), 16384)

    def query(self, cmd):
        """The reply's payload (what is under the command's name), or None
        when swordd answers the command with an error (null)."""
        self.s.send(cmd.encode())
        reply = json.loads(self.s.recv(self.max_len).decode())
        name = cmd.split(",")[0]
        if name not in reply:
            raise Error("telemetry %s: unexpected reply %r" % (cmd, reply))
        return reply[name]

    def close(self):
        self.s.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def query(path, cmd, timeout=5):
    """One command on a fresh connection (path: the socket)."""
    with Client(path, timeout) as c:
        return c.query(cmd)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("-f", "--file-prefix", required=True)
    p.add_argument("--runtime-dir", default=RUNTIME_DIR)
    p.add_argument("cmd")
    p.add_argument("keys", nargs="*")
    a = p.parse_args()
    path = socket_path(a.file_prefix, a.runtime_dir)
    try:
        r = query(path, a.cmd)
    except (OSError, ValueError, Error) as e:
        reason = getattr(e, "strerror", None) or str(e)
        sys.stderr.write("sword_telemetry: %s: %s (is swordd running with --file-prefix %s?)\n"
                         % (path, reason, a.file_prefix))
        return 1
    if a.keys:
        print(" ".join(str((r or {}).get(k, 0)) for k in a.keys))
    else:
        print(json.dumps(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
