#!/usr/bin/python3
"""Run one shell command in a rig guest through the agent on its ttyS1
(a unix socket on the host, see guest-init.sh) and exit with its status.

    guestctl.py SOCKET 'command' [TIMEOUT_S]

The command is prefixed with a fresh marker so that output left over from an
earlier command that timed out is never taken for this one's.
The agent kills the command after TIMEOUT_S (exit 137).  Exit 124 if the
guest does not answer in time, 125 if it cannot be reached."""
import os
import re
import socket
import sys
import time


def run(sock_path, cmd, timeout=120.0):
    marker = "__BEGIN_%s__" % os.urandom(6).hex()
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(sock_path)
    except OSError as e:
        return 125, "guestctl: cannot reach %s: %s\n" % (sock_path, e)
    s.settimeout(0.5)
    # the agent kills the command after `timeout` s; we wait a little longer
    s.sendall(("%d echo %s; %s\n" % (max(1, int(timeout)), marker, cmd)).encode())
    buf, deadline = b"", time.time() + timeout + 10
    start = None
    while time.time() < deadline:
        try:
            d = s.recv(65536)
        except socket.timeout:
            continue
        if not d:
            break
        buf += d
        if start is None:
            i = buf.find(marker.encode())
            j = buf.find(b"\n", i) if i >= 0 else -1
            if j >= 0:
                start = j + 1
        if start is not None:
            m = re.search(rb"__RC__ (\d+)\r?\n", buf[start:])
            if m:
                return int(m.group(1)), buf[start:start + m.start()].decode(errors="replace")
    out = buf[start:].decode(errors="replace") if start else ""
    return 124, out + "guestctl: timeout after %.0f s waiting for: %s\n" % (timeout, cmd)


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    rc, out = run(sys.argv[1], sys.argv[2], float(sys.argv[3]) if len(sys.argv) > 3 else 120.0)
    sys.stdout.write(out.replace("\r\n", "\n"))
    sys.exit(rc)
