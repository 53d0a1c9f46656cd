# SPDX-License-Identifier: BSD-3-Clause
"""
tor — a rack on a real Open vSwitch: a private ovsdb-server/ovs-vswitchd
(userspace datapath), clients and memory servers in network namespaces on
veth ports, swordd instances on their own veth port(s) through
net_af_packet, and only the flows sword-openflow prints.

Why it exists: sword-openflow's rules were only ever parsed; what matters is
what a switch does with them (flooding, MAC learning, fail-over groups).
The tor tests (test_tor.py) build racks of different shapes with this code.

  netns C (198.18.0.1) --veth-- port 1 -+                   +- port 10 --veth-- netns W0: swordd 0
  netns S0 (198.18.0.2) --veth- port 2 -+- OVS (netdev dp) -+- port 11 --veth-- (two-port: server side)
  netns S1 (198.18.0.3) --veth- port 3 -+                   +- port 12.. swordd 1

OVS runs with OVS_RUNDIR/OVS_DBDIR/OVS_LOGDIR in the test's own temporary
directory (the Debian service does not run in containers, and this machine
has no openvswitch kernel module: datapath_type=netdev).  Everything is
named after the test's pid and removed at exit (swordtest cleanups).

Environment (meson sets these): SWORDD, ROCE_PEER, SWORD_OPENFLOW.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))
import e2e  # noqa: E402
from e2e import t  # noqa: E402

CLIENT_IP = "198.18.0.1"
SERVER_IPS = ["198.18.0.2", "198.18.0.3"]
OF_CLIENT = 1
OF_SERVER0 = 2          # server i is on OpenFlow port 2 + i
OF_SWORD0 = 10          # instance k: 10 + 2k (client side / one port), 11 + 2k

OVS_SCHEMA = "/usr/share/openvswitch/vswitch.ovsschema"
OVS_DPDK = "/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk"   # openvswitch-switch-dpdk
OVS_DPDK_MEM_MB = 256
COOKIE = "0x5304d"


def require_ovs():
    """No Open vSwitch: exit 77 saying so (scripts/test.sh counts a skip as
    a failure, so a machine without OVS never passes this suite)."""
    t.require_root()
    missing = [p for p in ("ovsdb-server", "ovs-vswitchd", "ovs-vsctl", "ovs-ofctl",
                           "ovs-appctl", "ovsdb-tool") if shutil.which(p) is None]
    if missing or not os.path.exists(OVS_SCHEMA):
        print("SKIP (counts as a failure): Open vSwitch is not installed (missing %s); "
              "scripts/setup.sh installs openvswitch-switch"
              % (", ".join(missing) or OVS_SCHEMA))
        sys.exit(t.SKIP)


def require_ovs_dpdk():
    if not os.access(OVS_DPDK, os.X_OK):
        print("SKIP (counts as a failure): %s missing: scripts/setup.sh installs "
              "openvswitch-switch-dpdk" % OVS_DPDK)
        sys.exit(t.SKIP)


def tool(name):
    p = os.environ.get(name)
    if not p or not os.access(p, os.X_OK):
        raise t.TestFailure("%s not found (environment %s): %r" % (name.lower(), name, p))
    return p


class Ovs:
    """ovsdb-server + ovs-vswitchd of this test only, in directory d."""

    def __init__(self, d, dpdk=False):
        self.d = os.path.join(d, "ovs")
        os.makedirs(self.d)
        self.env = dict(os.environ, OVS_RUNDIR=self.d, OVS_DBDIR=self.d,
                        OVS_LOGDIR=self.d, OVS_SYSCONFDIR=self.d)
        self.db = "unix:%s/db.sock" % self.d
        self.bridges = []
        db = os.path.join(self.d, "conf.db")
        self._run(["ovsdb-tool", "create", db, OVS_SCHEMA])
        self._run(["ovsdb-server", db, "--remote=punix:%s/db.sock" % self.d,
                   "--pidfile=%s/ovsdb-server.pid" % self.d, "--detach",
                   "--log-file=%s/ovsdb-server.log" % self.d,
                   "--unixctl=%s/ovsdb-server.ctl" % self.d])
        t.on_cleanup(self._exit, "ovsdb-server")
        self.vsctl("--no-wait", "init")
        vswitchd = "ovs-vswitchd"
        if dpdk:
            vswitchd = OVS_DPDK
            # EAL of OVS itself: no PCI, its own file prefix, and a limit,
            # or it takes every free hugepage of the machine; its PMD
            # thread busy-polls CPU 0, where swordd's main lcore mostly
            # sleeps (swordd's worker busy-polls CPU 1: two pollers on one
            # CPU take turns by scheduler time slices, and frames wait)
            self.vsctl("--no-wait", "set", "Open_vSwitch", ".",
                       "other_config:dpdk-init=true",
                       "other_config:dpdk-socket-mem=%d" % OVS_DPDK_MEM_MB,
                       "other_config:dpdk-socket-limit=%d" % OVS_DPDK_MEM_MB,
                       "other_config:pmd-cpu-mask=0x1",
                       'other_config:dpdk-extra="--no-pci --file-prefix=ovs%s"' % t.tag())
            t.on_cleanup(shutil.rmtree, "/var/run/dpdk/ovs%s" % t.tag(), ignore_errors=True)
        self._run([vswitchd, self.db, "--pidfile=%s/ovs-vswitchd.pid" % self.d,
                   "--detach", "--log-file=%s/ovs-vswitchd.log" % self.d,
                   "--unixctl=%s/ovs-vswitchd.ctl" % self.d, "--disable-system"])
        t.on_cleanup(self._exit, "ovs-vswitchd")

    def _run(self, cmd, check_rc=True):
        return t.sh(cmd, check_rc=check_rc, env=self.env)

    def _exit(self, daemon):
        pidf = os.path.join(self.d, daemon + ".pid")
        try:
            pid = int(open(pidf).read())
        except (OSError, ValueError):
            return
        self._run(["ovs-appctl", "-t", os.path.join(self.d, daemon + ".ctl"), "exit"],
                  check_rc=False)
        for _ in range(100):
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.05)
        os.kill(pid, signal.SIGKILL)

    def vsctl(self, *a):
        return self._run(["ovs-vsctl", "--db=" + self.db, "--timeout=30"] + list(a)).stdout

    def ofctl(self, *a):
        return self._run(["ovs-ofctl", "-O", "OpenFlow13"] + list(a)).stdout

    def appctl(self, *a):
        return self._run(["ovs-appctl", "-t", os.path.join(self.d, "ovs-vswitchd.ctl")]
                         + list(a)).stdout

    def add_bridge(self, br):
        self.vsctl("add-br", br, "--", "set", "bridge", br, "datapath_type=netdev",
                   "protocols=OpenFlow10,OpenFlow13")
        self.bridges.append(br)
        # before the daemons exit, or the bridge's tap device outlives them
        t.on_cleanup(self.vsctl, "--if-exists", "del-br", br)

    def add_port(self, br, ifname, ofport):
        self.vsctl("add-port", br, ifname, "--", "set", "interface", ifname,
                   "ofport_request=%d" % ofport)

    def flows(self, br):
        """[(priority, match, n_packets)] of sword's flows (cookie 0x5304d)."""
        out = []
        for line in self.ofctl("dump-flows", br, "cookie=%s/-1" % COOKIE).splitlines():
            m = re.search(r"n_packets=(\d+),.*priority=(\d+),?(\S*) actions=(\S+)", line)
            if m:
                out.append((int(m.group(2)), m.group(3), int(m.group(1)), m.group(4)))
        return out

    def fdb(self, br):
        """{mac: OpenFlow port} learned by NORMAL."""
        out = {}
        for line in self.appctl("fdb/show", br).splitlines()[1:]:
            f = line.split()
            if len(f) >= 3:
                out[f[2]] = int(f[0]) if f[0].isdigit() else f[0]
        return out

    def port_state(self, br, ofport):
        m = re.search(r"^ *%d\(.*?\n(?:.*\n)*?\s+state:\s+(\S+)" % ofport,
                      self.ofctl("show", br), re.M)
        return m.group(1) if m else None


def veth_to_ns(ns, inner, outer, addr=None):
    """A veth pair: `inner` in ns (with addr), `outer` up in the root ns."""
    t.sh(["ip", "link", "add", inner, "type", "veth", "peer", "name", outer])
    t.on_cleanup(t.sh, ["ip", "link", "del", outer], check_rc=False)
    t.sh(["sysctl", "-qw", "net.ipv6.conf.%s.disable_ipv6=1" % outer])
    t.sh(["ip", "link", "set", outer, "up"])
    t.sh(["ip", "link", "set", inner, "netns", ns])
    if addr:
        t.sh(["ip", "-n", ns, "addr", "add", addr, "dev", inner])
    t.sh(["ip", "-n", ns, "link", "set", inner, "up"])
    # the kernel's TCP would leave checksums to an offload that a switch
    # reading the veth through a socket never completes
    t.sh(["ip", "netns", "exec", ns, "ethtool", "-K", inner, "tx", "off"], check_rc=False)


SWORDD_CONF = """\
[ports]
mode = {mode}
client = 0
{server_port}mbufs = 8191
failover_bypass = {bypass}
[cores]
workers = 1
{servers}
[atomic]
; started before any RDMA traffic: no answer can replay an older request
learn_holdoff_ms = 0
; roce-peer exchanges QPNs out of band and no tor test re-creates a QP
out_of_band = on
[features]
atomic_replacement = {accel}
"""

SERVER_SECTION = """\
[server.mem{i}]
ip = {ip}
[lock.table{i}]
server = mem{i}
rkey = any
base = 0x10000000
length = 0x10000
word_size = 8
"""


class Host:
    def __init__(self, role, ip, ofport, tg):
        self.ns = "tr%s%s" % (role, tg)
        self.ifname = "tr%s%s" % (role, tg)
        self.outer = "to%s%s" % (role, tg)
        self.ip = ip
        self.ofport = ofport
        t.netns(self.ns)
        veth_to_ns(self.ns, self.ifname, self.outer, ip + "/24")
        self.mac = t.iface_mac(self.ifname, self.ns)


class Instance:
    """One swordd in its own netns on one or two veth ports of the bridge."""

    def __init__(self, rack, k, servers, mode, accel, failover=False, state=False):
        tg = t.tag()
        self.rack_d = rack.d
        self.ovs_dpdk = rack.ovs_dpdk
        self.previous = []   # the instances restart() replaced
        self.k = k
        self.mode = mode
        self.servers = servers
        self.ns = "trw%d%s" % (k, tg)
        if not rack.ovs_dpdk:
            t.netns(self.ns)
        self.ofports = [OF_SWORD0 + 2 * k] + ([OF_SWORD0 + 2 * k + 1] if mode == "two-port" else [])
        self.ifs, self.outers, vdevs = [], [], []
        for j, ofp in enumerate(self.ofports):
            if rack.ovs_dpdk:
                # OVS-DPDK: a memif pair, OVS the server (a dpdk port with
                # vdev devargs), swordd the client
                sock = os.path.join(rack.d, "memif%d%d.sock" % (k, j))
                name = "tm%d%d%s" % (k, j, tg)
                rack.ovs.vsctl("add-port", rack.br, name, "--", "set", "interface", name,
                               "type=dpdk", "ofport_request=%d" % ofp,
                               "options:dpdk-devargs=net_memif%d%d,role=server,socket=%s"
                               % (k, j, sock))
                vdevs.append("net_memif%d,role=client,socket=%s" % (j, sock))
                continue
            inner, outer = "tw%d%d%s" % (k, j, tg), "tv%d%d%s" % (k, j, tg)
            veth_to_ns(self.ns, inner, outer)
            rack.ovs.add_port(rack.br, outer, ofp)
            self.ifs.append(inner)
            self.outers.append(outer)
            vdevs.append("net_af_packet%d,iface=%s" % (j, inner))
        self.conf = os.path.join(rack.d, "swordd%d.conf" % k)
        with open(self.conf, "w") as f:
            f.write(SWORDD_CONF.format(
                mode=mode, server_port="server = 1\n" if mode == "two-port" else "",
                accel="on" if accel else "off", bypass="on" if failover else "off",
                servers="".join(SERVER_SECTION.format(i=h.index, ip=h.ip) for h in servers)))
        self.vdevs = vdevs
        # --state: the tables in a segment a restarted swordd adopts
        self.state_args = ["--state", os.path.join(rack.d, "sw%d-state" % k)] if state else []
        self.sw = self._swordd("sw%d" % k, "swordd%d-stats.json" % k)
        self.stats = None

    def _swordd(self, name, stats):
        self.stats_json = os.path.join(self.rack_d, stats)
        sw = t.Swordd(self.vdevs,
                      ["-c", self.conf, "--stats-json", self.stats_json] + self.state_args,
                      eal_extra=["-l", "0-1"], name=name, workdir=self.rack_d)
        if not self.ovs_dpdk:
            sw.cmd = t.in_ns(self.ns, sw.cmd)
        return sw

    def restart(self):
        """A new swordd on the same ports, config and state segment, as
        systemd's Restart= starts one after a crash."""
        self.previous.append(self.sw)
        n = len(self.previous)
        self.sw = self._swordd("sw%dr%d" % (self.k, n), "swordd%d-stats-%d.json" % (self.k, n))
        self.start()

    def start(self):
        self.sw.start()
        t.wait_for(lambda: "running:" in self.sw.stdout() + self.sw.stderr()
                   or not self.sw.alive(), 60, "swordd %d running" % self.k)
        if not self.sw.alive():
            self.sw.dump()
            raise t.TestFailure("swordd %d exited at start" % self.k)

    def openflow_args(self):
        a = ["-c", self.conf, "--sword", str(self.ofports[0])]
        if self.mode == "two-port":
            a += ["--sword-server", str(self.ofports[1])]
        return a

    def stop(self):
        rc = self.sw.stop()
        if rc != 0:
            self.sw.dump()
        t.check_eq(rc, 0, "swordd %d exit code on SIGTERM" % self.k)
        self.stats = t.read_stats_json(self.stats_json)
        return self.stats


class Rack:
    """A bridge with one client host, n_servers memory servers and swordd
    instances; owners[i] = instance owning server i."""

    def __init__(self, mode="two-port", n_servers=1, owners=(0,), accel=True, failover=False,
                 ovs_dpdk=False, listed="all", state=False):
        """listed: the hosts sword-openflow gets as --host IP=PORT: "all",
        "servers" or "none" (the rest is learned by the switch)."""
        self.d = t.tmpdir()
        self.listed = listed
        tg = t.tag()
        self.ovs_dpdk = ovs_dpdk
        self.ovs = Ovs(self.d, dpdk=ovs_dpdk)
        self.br = "trbr%s" % tg
        self.ovs.add_bridge(self.br)
        self.client = Host("c", CLIENT_IP, OF_CLIENT, tg)
        self.ovs.add_port(self.br, self.client.outer, OF_CLIENT)
        self.servers = []
        for i in range(n_servers):
            h = Host("s%d" % i, SERVER_IPS[i], OF_SERVER0 + i, tg)
            h.index = i
            self.ovs.add_port(self.br, h.outer, h.ofport)
            self.servers.append(h)
        self.hosts = [self.client] + self.servers
        self.instances = []
        for k in range(max(owners) + 1):
            owned = [s for i, s in enumerate(self.servers) if owners[i] == k]
            self.instances.append(Instance(self, k, owned, mode, accel, failover, state))
        for inst in self.instances:
            inst.start()
        self.load_flows(failover)
        for s in self.servers:
            t.wait_for(lambda: subprocess.run(
                t.in_ns(self.client.ns, ["ping", "-c", "1", "-W", "1", s.ip]),
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0,
                60, "ping from the client to %s through the switch" % s.ip)

    def load_flows(self, failover):
        cmd = [tool("SWORD_OPENFLOW")]
        for inst in self.instances:
            cmd += inst.openflow_args()
        listed = {"all": self.hosts, "servers": self.servers, "none": []}[self.listed]
        for h in listed:
            cmd += ["--host", "%s=%d" % (h.ip, h.ofport)]
        groups = os.path.join(self.d, "groups.txt")
        if failover:
            cmd += ["--failover", groups]
        r = t.sh(cmd)
        flows = os.path.join(self.d, "flows.txt")
        with open(flows, "w") as f:
            f.write(r.stdout)
        if failover:
            self.ovs.ofctl("add-groups", self.br, groups)
        self.ovs.ofctl("add-flows", self.br, flows)
        t.log("flows loaded:\n" + "\n".join(l for l in r.stdout.splitlines()
                                            if not l.startswith("#")))

    def add_client(self, role, ip, ofport):
        """A client host attached after the flows were loaded: a new netns
        and port, known to no rule."""
        h = Host(role, ip, ofport, t.tag())
        self.ovs.add_port(self.br, h.outer, h.ofport)
        self.hosts.append(h)
        return h

    def sword_ports(self):
        return [p for inst in self.instances for p in inst.ofports]

    def stop_instances(self):
        return [inst.stop() if inst.sw.alive() else inst.stats for inst in self.instances]


def run_workload(rack, workload="sherman-lock", clients=2, qps=2, ops=None, duration=None,
                 locks=4, servers=None, rto_us=10000, max_retries=600, retry_storm=None,
                 client_timeout=300, during=None, progress=0, client=None):
    """roce-peer servers and `clients` clients per server (all in the client
    netns, or `client`'s, distinct client ids so no two share a QPN);
    `during()` runs while the clients run.  Returns {server index: (server
    json, [client json], [client rc])}."""
    rp = e2e.roce_peer_path()
    client = client or rack.client
    d = rack.d
    servers = rack.servers if servers is None else servers
    total = clients * len(servers)
    srvs = []
    for s in servers:
        sj = os.path.join(d, "server%d.json" % s.index)
        ready = os.path.join(d, "server%d.ready" % s.index)
        p = e2e.Proc(t.in_ns(s.ns, [rp, "server", "--iface", s.ifname, "--ip", s.ip,
                                    "--max-qps", str(max(256, total * qps)),
                                    "--dump-locks", str(locks), "--json", sj,
                                    "--ready-file", ready, "--progress", "0"]),
                     d, "server%d" % s.index)
        t.wait_for(lambda: os.path.exists(ready) or p.p.poll() is not None, 30,
                   "memory server %d ready" % s.index)
        if p.p.poll() is not None:
            p.dump()
            raise t.TestFailure("memory server %d exited early" % s.index)
        srvs.append((s, p, sj))
    cls = []
    cid = 0
    for s, _, _ in srvs:
        for _ in range(clients):
            cj = os.path.join(d, "client%d.json" % cid)
            cmd = [rp, "client", "--iface", client.ifname, "--ip", client.ip,
                   "--server-ip", s.ip, "--server-mac", s.mac, "--client-id", str(cid),
                   "--qps", str(qps), "--workload", workload, "--locks", str(locks),
                   "--rto-us", str(rto_us), "--max-retries", str(max_retries),
                   "--json", cj, "--progress", str(progress)]
            if ops:
                cmd += ["--ops", str(ops)]
            if duration:
                cmd += ["--duration", str(duration)]
            if retry_storm:
                cmd += ["--retry-storm", str(retry_storm)]
            cls.append((s, e2e.Proc(t.in_ns(client.ns, cmd), d, "client%d" % cid), cj))
            cid += 1
    rack.clients_started = time.monotonic()
    if during:
        during()
    rcs = [p.wait(client_timeout) for _, p, _ in cls]
    out = {}
    for s, p, sj in srvs:
        p.p.terminate()
        p.wait(30)
        t.check(os.path.exists(sj), "memory server %d wrote no summary" % s.index)
        with open(sj) as f:
            sjs = json.load(f)
        sjs["_dumped_words"] = locks
        out[s.index] = (sjs, [], [])
    for (s, p, cj), rc in zip(cls, rcs):
        if not os.path.exists(cj):
            p.dump()
            raise t.TestFailure("%s wrote no summary (rc %d)" % (p.name, rc))
        with open(cj) as f:
            c = json.load(f)
        if rc != 0:
            p.dump()
        c["_log"] = p.output()
        out[s.index][1].append(c)
        out[s.index][2].append(rc)
    return out


def log_clients(cjs):
    for c in cjs:
        t.log("client %d: ops=%d retries=%d retx=%d timeouts=%d naks=%d implied=%d "
              "violations=%d qp_errors=%d" % (
                  c["client_id"], c["ops"], c["retries"], c["retx_pkts"], c["timeouts"],
                  c["naks_seq"], c["implied_naks"], c["violations"], c["qp_errors"]))


def roce_frames(st):
    return sum(v for k, v in st.items() if k.startswith("opcode_0x"))


# ---------------------------------------------------------------------------
# non-RoCE frames: ARP, ping and TCP each arrive exactly once

TCP_PORT = 7777
# --immediate-mode: a handful of frames never fills a TPACKET_V3 block, and
# tcpdump stopped before the block times out would have captured none
NON_ROCE = ["--immediate-mode", "not", "udp", "port", "4791"]


def check_non_roce_once(rack):
    """With the switch's MAC table flushed before each step, so that NORMAL
    floods (to swordd's ports too): ARP (neighbour tables flushed), ping and
    a TCP connect from the client to every server.  Every frame must arrive
    exactly once at each end: no copy may come back from swordd."""
    c = rack.client
    for s in rack.servers:
        listener = e2e.Proc(t.in_ns(s.ns, ["/usr/bin/python3", "-c",
                                           "import socket\n"
                                           "l=socket.socket(); l.setsockopt(socket.SOL_SOCKET,"
                                           " socket.SO_REUSEADDR, 1)\n"
                                           "l.bind(('%s', %d)); l.listen(4); print('ready', flush=True)\n"
                                           "a, _ = l.accept(); a.recv(16); a.close()\n"
                                           % (s.ip, TCP_PORT)]),
                            rack.d, "tcp-listener%d" % s.index)
        t.wait_for(lambda: "ready" in listener.output() or listener.p.poll() is not None,
                   30, "TCP listener on %s" % s.ip)
        pc = os.path.join(rack.d, "nonroce-c%d.pcap" % s.index)
        ps = os.path.join(rack.d, "nonroce-s%d.pcap" % s.index)
        sn_c = t.Sniffer(c.ns, c.ifname, pc, NON_ROCE)
        sn_s = t.Sniffer(s.ns, s.ifname, ps, NON_ROCE)
        # 1. ARP: broadcast, flooded
        t.sh(["ip", "-n", c.ns, "neigh", "flush", "all"])
        t.sh(["ip", "-n", s.ns, "neigh", "flush", "all"])
        rack.ovs.appctl("fdb/flush", rack.br)
        t.sh(t.in_ns(c.ns, ["ping", "-c", "1", "-W", "2", s.ip]))
        # 2. ping to a MAC the switch has forgotten: flooded
        rack.ovs.appctl("fdb/flush", rack.br)
        t.sh(t.in_ns(c.ns, ["ping", "-c", "1", "-W", "2", s.ip]))
        # 3. TCP connect to a forgotten MAC: the SYN is flooded
        rack.ovs.appctl("fdb/flush", rack.br)
        t.sh(t.in_ns(c.ns, ["/usr/bin/python3", "-c",
                            "import socket\n"
                            "s=socket.create_connection(('%s', %d), timeout=10)\n"
                            "s.send(b'x'); s.close()\n" % (s.ip, TCP_PORT)]))
        listener.wait(30)
        fc, fs = sn_c.stop(), sn_s.stop()
        check_once(fs, "server %s" % s.ip, {
            "ARP who-has from the client": 1, "ICMP echo request": 2, "TCP SYN": 1})
        check_once(fc, "client", {
            "ARP is-at from the server": 1, "ICMP echo reply": 2, "TCP SYN-ACK": 1})
        t.log("non-RoCE to/from %s: ARP, 2 pings and a TCP connection, each frame once "
              "(%d frames at the server, %d at the client)" % (s.ip, len(fs), len(fc)))


def classify(frame):
    from scapy.layers.l2 import Ether, ARP
    from scapy.layers.inet import ICMP, TCP
    p = Ether(frame)
    if ARP in p:
        return "ARP who-has from the client" if p[ARP].op == 1 else "ARP is-at from the server"
    if ICMP in p:
        return {8: "ICMP echo request", 0: "ICMP echo reply"}.get(p[ICMP].type, "ICMP")
    if TCP in p:
        fl = int(p[TCP].flags)
        if fl & 0x12 == 0x12:
            return "TCP SYN-ACK"
        if fl & 0x02:
            return "TCP SYN"
        return "TCP"
    return "other"


def check_once(frames, where, want):
    seen = {}
    for f in frames:
        seen[f] = seen.get(f, 0) + 1
    dups = [(classify(f), n) for f, n in seen.items() if n > 1]
    t.check(not dups, "%s received frames more than once: %r" % (where, dups))
    got = {}
    for f in frames:
        k = classify(f)
        got[k] = got.get(k, 0) + 1
    for k, n in want.items():
        t.check_eq(got.get(k, 0), n, "%s: %s frames" % (where, k))


def check_no_mac_on_sword(rack):
    fdb = rack.ovs.fdb(rack.br)
    t.log("MAC table: %r" % fdb)
    for mac, port in fdb.items():
        t.check(port not in rack.sword_ports(),
                "MAC %s learned on swordd's port %s" % (mac, port))
    for h in rack.hosts:
        if h.mac in fdb:
            t.check_eq(fdb[h.mac], h.ofport, "port of %s's MAC %s" % (h.ip, h.mac))


def check_redirect_counters(rack):
    """Every sword rule that moves RoCE (to swordd, priority 100; from
    swordd to a host, priority 200 with tp_dst) was hit; the drop rules
    counted the flooded copies they killed."""
    fl = rack.ovs.flows(rack.br)
    for prio, match, n, act in fl:
        t.log("flow priority=%d %s actions=%s: n_packets=%d" % (prio, match, act, n))
    # server-to-server RoCE (one server responding to another) is not in
    # the workload
    srv = [s.ip for s in rack.servers]
    fl = [f for f in fl if not (re.search(r"nw_src=([\d.]+)", f[1]) and
                                re.search(r"nw_src=([\d.]+)", f[1]).group(1) in srv and
                                re.search(r"nw_dst=([\d.]+)", f[1]) and
                                re.search(r"nw_dst=([\d.]+)", f[1]).group(1) in srv)]
    to_sword = [f for f in fl if f[0] == 100]
    t.check(to_sword and all(f[2] > 0 for f in to_sword),
            "a redirect rule to swordd was never hit: %r" % to_sword)
    back = [f for f in fl if f[0] == 200]
    t.check(back and all(f[2] > 0 for f in back),
            "a from-swordd RoCE rule was never hit: %r" % back)
    # after check_non_roce_once: NORMAL flooded copies to swordd, and they
    # came back and died here (were they missing, the flooding check
    # proved nothing)
    drops = [f for f in fl if f[0] == 190]
    t.check(sum(f[2] for f in drops) > 0,
            "no flooded copy came back from swordd to its drop rule: %r" % drops)
    return rack.ovs.flows(rack.br)
