#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
swordd on net_af_xdp with the XDP steering program (app/xdp): a middlebox
host whose NICs carry both swordd's RoCE and the host's own traffic.

  netns C (198.18.0.1) --veth-- [h0: 198.18.0.10, the host's own address]
                                 netns H: swordd two-port on h0 and h1,
                                 net_af_xdp, xdp_prog=sword_xdp.bpf.o
  netns S (198.18.0.2) --veth-- [h1]

Checks: swordd fills the program's server map itself (no sword-xdp-servers
by hand: each interface's map holds exactly the managed server, and swordd
logs how many it put there); the map emptied behind its back (by
sword-xdp-servers with a config without servers) is filled again on
SIGHUP; the lock workload with acceleration then passes through swordd (0
violations, memory equals the clients' critical sections; swordd's RoCE
frames are exactly the endpoints'); ping, a TCP connection and a UDP
datagram to port 4791 from C to the host's own address (not a managed
server) reach H's kernel, and none of those frames reached swordd (its
ports received only the managed RoCE).  A path MTU above 2048 is
refused at start-up with a message naming the limit.
Needs root, clang/libbpf (the program) and the net_af_xdp PMD; exits 77
(a failure for scripts/test.sh) without them.
"""

import json
import os
import re
import signal
import socket
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tor  # noqa: E402
from tor import t, e2e  # noqa: E402

HOST_IP = "198.18.0.10"
LOCKS = 4
TCP_PORT = 7777


class NsHost:
    """An endpoint for tor.run_workload: netns + interface."""

    def __init__(self, ns, ifname, ip, index=0):
        self.ns, self.ifname, self.ip, self.index = ns, ifname, ip, index
        self.mac = t.iface_mac(ifname, ns)


def veth_between(ns_a, if_a, ns_b, if_b):
    t.sh(["ip", "link", "add", if_a, "type", "veth", "peer", "name", if_b])
    t.on_cleanup(t.sh, ["ip", "link", "del", if_a], check_rc=False)
    for ns, ifn in ((ns_a, if_a), (ns_b, if_b)):
        t.sh(["ip", "link", "set", ifn, "netns", ns])
        t.sh(["ip", "-n", ns, "link", "set", ifn, "up"])
        # TCP checksums left to an offload do not survive the copy into an
        # XDP buffer on veth
        t.sh(["ip", "netns", "exec", ns, "ethtool", "-K", ifn, "tx", "off"], check_rc=False)


def steering_map(ns, ifname):
    """{server IPv4: RoCE UDP port} in the sword_servers map of the program
    attached to ifname, found through the program's id (map names are not
    unique: other XDP programs may run on this machine)."""
    link = t.sh(["ip", "-n", ns, "link", "show", "dev", ifname]).stdout
    m = re.search(r"prog/xdp id (\d+)", link)
    t.check(m, "no XDP program on %s: %s" % (ifname, link))
    prog = json.loads(t.sh(["bpftool", "-j", "prog", "show", "id", m.group(1)]).stdout)
    for map_id in prog.get("map_ids", []):
        info = json.loads(t.sh(["bpftool", "-j", "map", "show", "id", str(map_id)]).stdout)
        if info.get("name") != "sword_servers":
            continue
        out = {}
        for e in json.loads(t.sh(["bpftool", "-j", "map", "dump", "id", str(map_id)]).stdout):
            # without BTF formatting: keys and values as lists of hex bytes
            key = bytes(int(b, 16) for b in e["key"])
            val = bytes(int(b, 16) for b in e["value"])
            out[socket.inet_ntoa(key)] = struct.unpack("=H", val)[0]
        return out
    raise t.TestFailure("no sword_servers map in XDP program %s on %s" % (m.group(1), ifname))


def require_xdp():
    t.require_root()
    prog = os.environ.get("SWORD_XDP_PROG")
    tool = os.environ.get("SWORD_XDP_SERVERS")
    pmd = [f for d in ("/usr/lib/x86_64-linux-gnu/dpdk",) if os.path.isdir(d)
           for r, _, fs in os.walk(d) for f in fs if f.startswith("librte_net_af_xdp.so")]
    if not prog or not os.path.exists(prog) or not tool or not pmd:
        print("SKIP (counts as a failure): no XDP program/tool built (clang, libbpf-dev: "
              "scripts/setup.sh) or no net_af_xdp PMD (librte-net-af-xdp23): %r %r %r"
              % (prog, tool, pmd))
        sys.exit(t.SKIP)
    return prog, tool


def body():
    prog, tool = require_xdp()
    t.args()
    tg = t.tag()
    d = t.tmpdir()
    ns_c, ns_h, ns_s = t.netns("txc%s" % tg), t.netns("txh%s" % tg), t.netns("txs%s" % tg)
    if_c, if_h0, if_h1, if_s = "txc%s" % tg, "txh0%s" % tg, "txh1%s" % tg, "txs%s" % tg
    veth_between(ns_c, if_c, ns_h, if_h0)
    veth_between(ns_h, if_h1, ns_s, if_s)
    t.sh(["ip", "-n", ns_c, "addr", "add", tor.CLIENT_IP + "/24", "dev", if_c])
    t.sh(["ip", "-n", ns_s, "addr", "add", tor.SERVER_IPS[0] + "/24", "dev", if_s])
    t.sh(["ip", "-n", ns_h, "addr", "add", HOST_IP + "/24", "dev", if_h0])

    conf = os.path.join(d, "swordd.conf")
    with open(conf, "w") as f:
        f.write(tor.SWORDD_CONF.format(
            mode="two-port", server_port="server = 1\n", accel="on", bypass="off",
            servers=tor.SERVER_SECTION.format(i=0, ip=tor.SERVER_IPS[0])))

    # a path MTU the UMEM cannot hold (the default, 4096): refused at
    # start-up, naming the limit
    bad = t.Swordd(["net_af_xdp0,iface=%s" % if_h0, "net_af_xdp1,iface=%s" % if_h1],
                   ["-c", conf], eal_extra=["-l", "0-1"],
                   name="bad", workdir=d)
    bad.cmd = t.in_ns(ns_h, bad.cmd)
    bad.start()
    rc = bad.wait(60)
    t.check(rc == 2 and "path MTU must be at most 2048" in bad.stderr(),
            "pmtu 4096 on net_af_xdp: rc %d, stderr %r" % (rc, bad.stderr()[-400:]))
    t.log("pmtu 4096 refused: %s" % bad.stderr().strip().splitlines()[-1])

    stats_json = os.path.join(d, "swordd-stats.json")
    sw = t.Swordd(["net_af_xdp%d,iface=%s,xdp_prog=%s" % (j, f, prog)
                   for j, f in enumerate((if_h0, if_h1))],
                  ["-c", conf, "--set", "atomic.pmtu=2048", "--stats-json", stats_json],
                  eal_extra=["-l", "0-1"],
                  name="xdp", workdir=d)
    sw.cmd = t.in_ns(ns_h, sw.cmd)
    sw.start()
    t.wait_for(lambda: "running:" in sw.stdout() + sw.stderr() or not sw.alive(), 60,
               "swordd running on net_af_xdp")
    if not sw.alive():
        sw.dump()
        raise t.TestFailure("swordd exited at start on net_af_xdp")
    for ifn in (if_h0, if_h1):
        link = t.sh(["ip", "-n", ns_h, "link", "show", "dev", ifn]).stdout
        t.check(re.search(r"prog/xdp id \d+ name sword_xdp", link),
                "sword_xdp not attached to %s: %s" % (ifn, link))
    # swordd filled both programs' server maps from its config at start
    want = {tor.SERVER_IPS[0]: 4791}
    for ifn in (if_h0, if_h1):
        t.check_eq(steering_map(ns_h, ifn), want, "sword_servers on %s after start" % ifn)
        t.check("XDP steering on %s: 1 managed server(s)" % ifn in sw.stdout() + sw.stderr(),
                "swordd did not log the XDP steering of %s" % ifn)

    # emptied behind swordd's back (the by-hand tool, a config without
    # servers): SIGHUP fills it again
    empty = os.path.join(d, "no-servers.conf")
    with open(empty, "w") as f:
        f.write(tor.SWORDD_CONF.format(mode="two-port", server_port="server = 1\n",
                                       accel="off", bypass="off", servers=""))
    r = t.sh(t.in_ns(ns_h, [tool, "-c", empty, "--iface", if_h0, "--iface", if_h1]))
    t.log(r.stdout.strip())
    for ifn in (if_h0, if_h1):
        t.check_eq(steering_map(ns_h, ifn), {}, "sword_servers on %s emptied by hand" % ifn)
    sw.proc.send_signal(signal.SIGHUP)
    t.wait_for(lambda: (sw.stdout() + sw.stderr()).count(
        "XDP steering on %s: 1 managed server(s)" % if_h1) == 2 or not sw.alive(), 60,
        "swordd re-filling the XDP steering on SIGHUP")
    for ifn in (if_h0, if_h1):
        t.check_eq(steering_map(ns_h, ifn), want, "sword_servers on %s after SIGHUP" % ifn)
    t.log("XDP steering filled by swordd at start and again on SIGHUP")

    # the host's own traffic: answered by its kernel, never seen by swordd
    listener = e2e.Proc(t.in_ns(ns_h, [
        "/usr/bin/python3", "-c",
        "import socket\nl=socket.socket(); l.setsockopt(socket.SOL_SOCKET, "
        "socket.SO_REUSEADDR, 1)\nl.bind(('%s', %d)); l.listen(4); print('ready', flush=True)\n"
        "a, _ = l.accept(); a.send(a.recv(16)); a.close()\n" % (HOST_IP, TCP_PORT)]),
        d, "tcp-listener")
    t.wait_for(lambda: "ready" in listener.output() or listener.p.poll() is not None,
               30, "TCP listener on the host")
    r = t.sh(t.in_ns(ns_c, ["ping", "-c", "3", "-i", "0.2", "-W", "2", HOST_IP]),
             check_rc=False)
    t.check(r.returncode == 0, "ping to the host's own address through its XDP "
            "program: %s%s" % (r.stdout, r.stderr))
    r = t.sh(t.in_ns(ns_c, ["/usr/bin/python3", "-c",
                            "import socket\ns=socket.create_connection(('%s', %d), timeout=10)\n"
                            "s.send(b'hello'); print(s.recv(16).decode())\n"
                            % (HOST_IP, TCP_PORT)]))
    t.check_eq(r.stdout.strip(), "hello", "TCP echo from the host's kernel")
    listener.wait(30)
    # UDP to port 4791 of an address that is not a managed server (the
    # host's own): the kernel's, not swordd's
    udp = e2e.Proc(t.in_ns(ns_h, [
        "/usr/bin/python3", "-c",
        "import socket\nu=socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
        "u.bind(('%s', 4791)); print('ready', flush=True)\n"
        "print('got', u.recvfrom(64)[0].decode(), flush=True)\n" % HOST_IP]), d, "udp-listener")
    t.wait_for(lambda: "ready" in udp.output() or udp.p.poll() is not None, 30,
               "UDP listener on the host")
    t.sh(t.in_ns(ns_c, ["/usr/bin/python3", "-c",
                        "import socket\nsocket.socket(socket.AF_INET, socket.SOCK_DGRAM)"
                        ".sendto(b'not-managed', ('%s', 4791))\n" % HOST_IP]))
    t.check_eq(udp.wait(30), 0, "UDP listener exit code")
    t.check("got not-managed" in udp.output(), "UDP 4791 to an unmanaged address did not "
            "reach the host's kernel: %r" % udp.output())
    t.log("host's own address: ping answered, TCP echo answered, UDP 4791 received by "
          "its kernel")

    # RoCE through swordd
    rack = type("Rack", (), {})()
    rack.d = d
    rack.client = NsHost(ns_c, if_c, tor.CLIENT_IP)
    rack.servers = [NsHost(ns_s, if_s, tor.SERVER_IPS[0])]
    res = tor.run_workload(rack, ops=120, locks=LOCKS)
    sjs, cjs, rcs = res[0]
    tor.log_clients(cjs)
    e2e.check_run(sjs, cjs, rcs, "sherman-lock", LOCKS)

    rc = sw.stop()
    if rc != 0:
        sw.dump()
    t.check_eq(rc, 0, "swordd exit code on SIGTERM")
    st = t.read_stats_json(stats_json)
    roce = tor.roce_frames(st)
    sent = sjs["link_tx"] + sum(c["link_tx"] for c in cjs)
    rx = sum(p["rx"] for p in st["ports"])
    t.log("swordd on net_af_xdp: rx %d (RoCE %d), endpoints sent %d, managed_rx %d, "
          "rewritten %d" % (rx, roce, sent, st.get("managed_rx", 0), st.get("rewritten", 0)))
    t.check_eq(roce, sent, "swordd RoCE frames vs frames the endpoints sent")
    t.check_eq(rx, roce, "frames swordd received vs RoCE frames (the XDP program must "
               "leave everything else to the kernel)")
    t.check(st.get("rewritten", 0) > 0, "acceleration on but nothing rewritten")


if __name__ == "__main__":
    t.main(body)
