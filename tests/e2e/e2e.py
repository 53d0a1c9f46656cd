# SPDX-License-Identifier: BSD-3-Clause
"""
e2e — run roce-peer memory server and clients in network namespaces, either
through swordd (two-port, net_tap) or directly (veth pair), and judge the run.

Why it exists: the end-to-end tests (test_e2e.py) and the load benchmark
(bench_e2e.py) build the same topology and apply the same checks; this is
that code once.  It reuses tests/daemon/swordtest.py for swordd, namespaces,
sniffers and cleanup (everything named after the pid, cleaned up on failure
and on SIGTERM).

  netns C (198.18.0.1) --tap--> swordd two-port --tap--> netns S (198.18.0.2)
  netns C (198.18.0.1) ---------- veth pair -----------> netns S   (direct)
  netns C --veth--> [netns W: swordd net_af_packet] <--veth-- netns S (afpacket)

The afpacket path is the one a restart can be tested on: the veth pairs
are the cables and outlive swordd, whereas net_tap's taps are swordd's own
and vanish with it (restart_swordd, test_restart.py).

Environment (meson sets these): SWORDD, ROCE_PEER, TEST_HELPERS, SOURCE_ROOT.
"""

import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "daemon"))
import swordtest as t  # noqa: E402

CLIENT_IP, SERVER_IP = "198.18.0.1", "198.18.0.2"
CTL_PORT = 4792   # roce-peer's out-of-band RECONNECT/RECONNECTED (lib/peer/peer_ctl.c)

SWORDD_CONF = """\
[ports]
mode = two-port
client = 0
server = 1
mbufs = 8191
[cores]
workers = 1
[server.mem0]
ip = {server_ip}
[lock.table0]
server = mem0
rkey = any
base = 0x10000000
length = 0x10000
word_size = 8
[atomic]
; swordd starts before any RDMA traffic exists, so no answer it sees can be
; a replay of a request executed before it ran: learn word values at once
; (the 1 s default holdoff would cover most of a short test run).  A
; restarted swordd does not start before the traffic: test_restart.py
; keeps the default there.
learn_holdoff_ms = {holdoff}
; roce-peer exchanges QPNs out of band: without this its atomics go to the
; server as they came (off is the shipped default); a run that re-creates
; QPs with their QPNs (--reconnect-every) keeps it off (Topology)
out_of_band = {aoob}
[features]
atomic_replacement = {accel}
remapping = {remap}
[remap]
lanes = {lanes}
; roce-peer exchanges QPNs out of band: without this nothing is remapped
; (off is the shipped default; test_e2e.py --out-of-band off runs it)
out_of_band = {oob}
; swordd starts before any RDMA traffic exists: no connection can have
; ridden a lane of an earlier run
start_holdoff_ms = 0
"""


def check_swordd_config(accel=False, remap=False, lanes=1, swordd_set=()):
    """Would swordd accept this configuration (the generated file plus the
    --set overrides)?  None if so, else swordd's own complaint (it exits 2
    on an unknown key or a bad value), without starting a daemon."""
    import tempfile
    with tempfile.NamedTemporaryFile("w", suffix=".conf", delete=False) as f:
        f.write(SWORDD_CONF.format(server_ip=SERVER_IP, holdoff=0,
                                   accel="on" if accel else "off",
                                   remap="on" if remap else "off", lanes=lanes,
                                   oob="off", aoob="off"))
        path = f.name
    try:
        cmd = [t.swordd_path(), "--", "-c", path, "--check-config"]
        for kv in swordd_set:
            cmd += ["--set", kv]
        r = t.sh(cmd, check_rc=False)
    finally:
        os.unlink(path)
    if r.returncode == 0:
        return None
    return "swordd refuses the configuration (exit %d): %s" % (
        r.returncode, (r.stderr.strip() or r.stdout.strip()).splitlines()[-1:])


def roce_peer_path():
    p = os.environ.get("ROCE_PEER")
    if not p or not os.access(p, os.X_OK):
        raise t.TestFailure("roce-peer binary not found (ROCE_PEER): %r" % p)
    return p


class Topology:
    """Namespaces C and S joined through swordd (path='swordd') or a veth pair."""

    def __init__(self, path="swordd", accel=False, pcap=False, d=None, learn_holdoff_ms=0,
                 remap=False, lanes=1, out_of_band=True, swordd_set=(), ctl_pcap=False,
                 swordd_args=(), eal_base=None, atomic_out_of_band=True):
        """swordd_set: extra swordd --set SECTION.KEY=VALUE overrides (after
        the generated file; swordd refuses an unknown key, exit 2: see
        check_swordd_config).  ctl_pcap: the captures also keep roce-peer's
        out-of-band control datagrams (UDP 4792: RECONNECT/RECONNECTED),
        which mark where a QP's new life starts on the wire.
        out_of_band: [remap] out_of_band; atomic_out_of_band: [atomic]
        out_of_band (both the promise that no QP is re-created with a QPN
        swordd may still know: roce-peer's --reconnect-every breaks it)."""
        self.d = d or t.tmpdir()
        self.swordd_set = list(swordd_set)
        self.swordd_args = list(swordd_args)   # more swordd options (--state PATH)
        # the afpacket path's EAL base arguments (default: the tests'
        # --no-huge; hugepage_eal() gives a production-like start)
        self.eal_base = eal_base
        tg = t.tag()
        self.ns_c, self.ns_s = "e2ec%s" % tg, "e2es%s" % tg
        self.if_c, self.if_s = "e2c%s" % tg, "e2s%s" % tg
        self.path = path
        self.sw = None
        self.t_start = __import__("time").monotonic()
        self.stats_json = os.path.join(self.d, "swordd-stats.json")
        t.netns(self.ns_c)
        t.netns(self.ns_s)
        self.conf = os.path.join(self.d, "swordd.conf")
        self.instances = 0
        if path in ("swordd", "afpacket"):
            with open(self.conf, "w") as f:
                f.write(SWORDD_CONF.format(server_ip=SERVER_IP, holdoff=learn_holdoff_ms,
                                           accel="on" if accel else "off",
                                           remap="on" if remap else "off",
                                           lanes=lanes,
                                           oob="on" if out_of_band else "off",
                                           aoob="on" if atomic_out_of_band else "off"))
        if path == "swordd":
            conf = self.conf
            self.sw = t.Swordd(["net_tap0,iface=%s" % self.if_c,
                                "net_tap1,iface=%s" % self.if_s],
                               ["-c", conf, "--stats-json", self.stats_json] +
                               self.set_args(),
                               eal_extra=["-l", "0-1"], name="e2e",
                               workdir=self.d).start()
            t.wait_tap_started(self.sw, self.if_c)
            t.wait_tap_started(self.sw, self.if_s)
            t.move_iface(self.if_c, self.ns_c, CLIENT_IP + "/24")
            t.move_iface(self.if_s, self.ns_s, SERVER_IP + "/24")
        elif path == "afpacket":
            # swordd in its own namespace W on the outer ends of two veth
            # pairs; IPv6 is off there (t.netns), so W sends nothing itself
            self.ns_w = "e2ew%s" % tg
            t.netns(self.ns_w)
            self.out_c, self.out_s = "e2C%s" % tg, "e2S%s" % tg
            for inner, outer in ((self.if_c, self.out_c), (self.if_s, self.out_s)):
                t.sh(["ip", "link", "add", inner, "type", "veth", "peer", "name", outer])
                t.on_cleanup(t.sh, ["ip", "link", "del", inner], check_rc=False)
                t.sh(["ip", "link", "set", outer, "netns", self.ns_w])
                t.sh(["ip", "-n", self.ns_w, "link", "set", outer, "up"])
            t.move_iface(self.if_c, self.ns_c, CLIENT_IP + "/24")
            t.move_iface(self.if_s, self.ns_s, SERVER_IP + "/24")
            self.start_swordd()
        else:
            t.sh(["ip", "link", "add", self.if_c, "type", "veth", "peer", "name", self.if_s])
            t.on_cleanup(t.sh, ["ip", "link", "del", self.if_c], check_rc=False)
            t.move_iface(self.if_c, self.ns_c, CLIENT_IP + "/24")
            t.move_iface(self.if_s, self.ns_s, SERVER_IP + "/24")
        # The path must carry frames before the clients start: on a loaded
        # machine a tap can take a moment after the move, and a client whose
        # first requests vanish spends its whole retry budget at start-up.
        t.wait_for(lambda: subprocess.run(
            ["ip", "netns", "exec", self.ns_c, "ping", "-c", "1", "-W", "1", SERVER_IP],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0,
            60, "ping from the client namespace to the server through the path")
        self.mac_c = t.iface_mac(self.if_c, self.ns_c)
        self.mac_s = t.iface_mac(self.if_s, self.ns_s)
        self.sniffers = []
        if pcap:
            for ns, ifn, nm in ((self.ns_c, self.if_c, "client-side.pcap"),
                                (self.ns_s, self.if_s, "server-side.pcap")):
                self.sniffers.append(t.Sniffer(ns, ifn, os.path.join(self.d, nm),
                                               ["-B", "32768", "udp", "port", "4791"] +
                                               (["or", "udp", "port", str(CTL_PORT)]
                                                if ctl_pcap else [])))

    def set_args(self):
        out = []
        for kv in self.swordd_set:
            out += ["--set", kv]
        return out + self.swordd_args

    def start_swordd(self):
        """afpacket path: a new swordd on the same ports (the first one, or
        one after restart_swordd), and wait until it forwards.  Each
        instance writes its own --stats-json (swordd-stats-N.json)."""
        self.instances += 1
        n = self.instances
        self.stats_json = os.path.join(self.d, "swordd-stats-%d.json" % n)
        sw = t.Swordd(["net_af_packet0,iface=%s" % self.out_c,
                       "net_af_packet1,iface=%s" % self.out_s],
                      ["-c", self.conf, "--stats-json", self.stats_json] + self.set_args(),
                      eal_extra=["-l", "0-1"], name="e2e%d" % n, workdir=self.d,
                      **({"eal_base": self.eal_base} if self.eal_base else {}))
        sw.cmd = t.in_ns(self.ns_w, sw.cmd)   # ip netns exec execs swordd itself
        self.sw = sw.start()
        # polled often: test_restart.py reports the outage this ends
        t.wait_for(lambda: "running:" in sw.stderr() + sw.stdout() or not sw.alive(),
                   120, "swordd #%d forwarding" % n, interval=0.005)
        if not sw.alive():
            sw.dump()
            raise t.TestFailure("swordd #%d exited at start" % n)
        return sw

    def kill_swordd(self):
        """SIGKILL: no drain, no final counters, sockets closed by the
        kernel; the veths stay."""
        import signal
        self.sw.proc.send_signal(signal.SIGKILL)
        self.sw.proc.wait(30)

    def accel_available(self):
        if not self.sw:
            return False
        return "has no implementation" not in self.sw.stderr() + self.sw.stdout()

    def stop_swordd(self):
        if not self.sw:
            return None
        rc = self.sw.stop()
        if rc != 0:
            self.sw.dump()
        t.check_eq(rc, 0, "swordd exit code on SIGTERM")
        return t.read_stats_json(self.stats_json)

    def stop_sniffers(self):
        paths = []
        for s in self.sniffers:
            s.stop()
            paths.append(s.path)
        return paths


class Proc:
    def __init__(self, cmd, d, name):
        self.name = name
        self.log = os.path.join(d, name + ".log")
        self.f = open(self.log, "w")
        t.log("+", " ".join(cmd))
        self.cpu_s = None
        self.p = subprocess.Popen(cmd, stdout=self.f, stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL)
        t.on_cleanup(self.kill)

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()

    def wait(self, timeout, stall_ok=False):
        """Exit code; self.cpu_s = user+system CPU seconds it used (ip netns
        exec execs the program, so the child is the program itself).
        stall_ok: past the timeout, SIGTERM (roce-peer then writes its
        summary) and return its exit code with self.timed_out set, instead
        of failing the test."""
        self.timed_out = False
        import time
        deadline = time.monotonic() + timeout
        while self.p.returncode is None:
            pid, status, ru = os.wait4(self.p.pid, os.WNOHANG)
            if pid == self.p.pid:
                self.p.returncode = os.waitstatus_to_exitcode(status)
                self.cpu_s = ru.ru_utime + ru.ru_stime
                break
            if time.monotonic() > deadline:
                # SIGTERM first: roce-peer then stops and prints its summary
                # (ops, retries, errors), which says why it did not finish
                self.p.terminate()
                try:
                    self.p.wait(10)
                except subprocess.TimeoutExpired:
                    pass
                self.dump()
                if stall_ok:
                    self.timed_out = True
                    if self.p.returncode is None:
                        self.p.kill()
                        self.p.wait()
                    return self.p.returncode
                raise t.TestFailure("%s did not finish within %ss" % (self.name, timeout))
            time.sleep(0.05)
        return self.p.returncode

    def output(self):
        self.f.flush()
        with open(self.log) as f:
            return f.read()

    def dump(self, lines=30):
        t.log("---- %s (tail)" % self.name)
        t.log("\n".join(self.output().splitlines()[-lines:]))


def fault_args(faults, seed):
    if not faults:
        return []
    return ["--loss", str(faults.get("loss", 0)), "--dup", str(faults.get("dup", 0)),
            "--reorder", str(faults.get("reorder", 0)),
            "--reorder-us", str(faults.get("reorder_us", 300)),
            "--delay-us", str(faults.get("delay_us", 0)), "--fault-seed", str(seed)]


def psn_args(initial_psn):
    return [] if initial_psn is None else ["--initial-psn", str(initial_psn)]


def hugepage_eal(need_mb=256):
    """EAL base arguments on hugepages, as a deployment runs swordd
    (--in-memory: no files left behind), if at least need_mb of them are
    free; else None (the tests' --no-huge default stays)."""
    try:
        with open("/proc/meminfo") as f:
            mi = dict(ln.split(":", 1) for ln in f if ":" in ln)
        free_mb = int(mi["HugePages_Free"]) * int(mi["Hugepagesize"].split()[0]) // 1024
    except (OSError, KeyError, ValueError):
        return None
    if free_mb < need_mb:
        return None
    return ["--no-pci", "--in-memory"]


def run(topo, workload="sherman-lock", clients=2, qps=2, ops=None, duration=None,
        locks=4, faults=None, ack="every", ackreq="last", rto_us=10000,
        client_timeout=300, progress=0, window=16, max_retries=600,
        initial_psn=None, reconnect_every=None, fault_seed=None,
        read_before_acquire=False, during=None, server_faults="same", client_faults="same",
        reconnect_qps=None, atomic_unit=None, stall_ok=False, lead_ops=None,
        retry_storm=None):
    """Server + clients; returns (server_json, [client_json], [client rc]).

    initial_psn: every QP of every client (and the server's end) starts at
    that PSN, as Sherman's do (3185), so QPs of one client IP overlap in PSN.
    reconnect_every: each client QP is re-created (same QPNs, same initial
    PSN, the server told out of band) after every that many ops.
    read_before_acquire: each acquire is READ record + CAS lock, one batch.
    during: called with the client Procs once they all run, before waiting
    for them (test_restart.py kills and restarts swordd there).
    fault_seed: the server's fault seed (clients: fault_seed + 1 + c); the
    default keeps 1000 and 2000 + c.  The faults are a pure function of the
    seed and the frame's index, so a seed picks which early frames are lost.

    max_retries x rto_us (6 s) is the clients' retry budget per request: on
    this 2-core VM a busy-polling forwarder has been seen getting no CPU
    for up to 3.7 s under concurrent load (tests/e2e/BENCHMARK.md), which a
    64 x 10 ms budget turns into QP errors.  A request that is never
    answered still fails, just 6 s later.

    server_faults / client_faults: the faults of one side only (default
    "same": `faults` on both).  reconnect_qps: with reconnect_every, only
    these global QP indexes re-create (roce-peer --reconnect-qps, e.g.
    "0-1").  atomic_unit: the server's modelled RNIC atomic unit
    (atomics/s per word).  stall_ok: a client that does not finish in
    client_timeout is stopped (SIGTERM: it writes its summary) and marked
    "_timed_out" in its JSON instead of failing the run.  lead_ops: client
    0 starts alone and the others once it has completed that many ops
    (its progress lines, every 20 ms), so that with remapping its QPs are
    the first to bind: the lanes' owners.  retry_storm: a client stops
    after that many consecutive failed acquires (roce-peer --retry-storm;
    its JSON says retry_storm), e.g. spinning on a lock a dead QP left."""
    if server_faults == "same":
        server_faults = faults
    if client_faults == "same":
        client_faults = faults
    rp = roce_peer_path()
    d = topo.d
    sj = os.path.join(d, "server.json")
    ready = os.path.join(d, "server.ready")
    n_locks_dump = locks if workload != "rcuckoo-lock" else (locks + 63) // 64
    srv = Proc(t.in_ns(topo.ns_s, [rp, "server", "--iface", topo.if_s, "--ip", SERVER_IP,
                                    "--max-qps", str(max(256, clients * qps)),
                                    "--ack", ack, "--dump-locks", str(max(locks, 1)),
                                    "--json", sj, "--ready-file", ready,
                                    "--progress", "0"] +
                                   psn_args(initial_psn) +
                                   (["--dump-clover", str(locks)] if workload == "clover" else []) +
                                   (["--atomic-unit", str(atomic_unit)] if atomic_unit else []) +
                                   fault_args(server_faults, 1000 if fault_seed is None
                                              else fault_seed)),
               d, "server")
    t.wait_for(lambda: os.path.exists(ready) or srv.p.poll() is not None, 30,
               "memory server ready")
    if srv.p.poll() is not None:
        srv.dump()
        raise t.TestFailure("memory server exited early")
    cls = []
    for c in range(clients):
        cj = os.path.join(d, "client%d.json" % c)
        cmd = [rp, "client", "--iface", topo.if_c, "--ip", CLIENT_IP,
               "--server-ip", SERVER_IP, "--server-mac", topo.mac_s,
               "--client-id", str(c), "--qps", str(qps), "--workload", workload,
               "--locks", str(locks), "--ackreq", ackreq,
               "--rto-us", str(rto_us), "--max-retries", str(max_retries),
               "--json", cj, "--progress", str(0.02 if lead_ops and c == 0 else progress),
               "--window", str(window)]
        cmd += psn_args(initial_psn)
        if reconnect_every:
            cmd += ["--reconnect-every", str(reconnect_every)]
            if reconnect_qps:
                cmd += ["--reconnect-qps", reconnect_qps]
        if read_before_acquire:
            cmd += ["--read-before-acquire"]
        if retry_storm:
            cmd += ["--retry-storm", str(retry_storm)]
        if ops:
            cmd += ["--ops", str(ops)]
        if duration:
            cmd += ["--duration", str(duration)]
        cmd += fault_args(client_faults, 2000 + c if fault_seed is None else fault_seed + 1 + c)
        cls.append((Proc(t.in_ns(topo.ns_c, cmd), d, "client%d" % c), cj))
        if lead_ops and c == 0 and clients > 1:
            import re
            p0 = cls[0][0]

            def lead_done():
                m = re.findall(r"^client 0 t=\S+ ops=(\d+)", p0.output(), re.M)
                return p0.p.poll() is not None or (m and int(m[-1]) >= lead_ops)
            t.wait_for(lead_done, 60, "client 0's first %d ops" % lead_ops, interval=0.005)
    if during is not None:
        during([p for p, _ in cls])
    if stall_ok:
        # one deadline for all clients: a run whose clients all spin (on a
        # leaked lock) ends after client_timeout, not N times that
        import time
        deadline = time.monotonic() + client_timeout
        rcs = [p.wait(max(1, deadline - time.monotonic()), stall_ok=True) for p, _ in cls]
    else:
        rcs = [p.wait(client_timeout) for p, _ in cls]
    srv.p.terminate()
    srv.wait(30)
    cjs = []
    for (p, cj), rc in zip(cls, rcs):
        if not os.path.exists(cj):
            p.dump()
            raise t.TestFailure("%s wrote no summary (rc %d)" % (p.name, rc))
        with open(cj) as f:
            cjs.append(json.load(f))
        if rc != 0:
            p.dump()
    t.check(os.path.exists(sj), "memory server wrote no summary")
    with open(sj) as f:
        sjs = json.load(f)
    sjs["_dumped_words"] = n_locks_dump
    sjs["_cpu_s"] = srv.cpu_s
    for (p, _), c in zip(cls, cjs):
        c["_cpu_s"] = p.cpu_s
        c["_timed_out"] = p.timed_out
    return sjs, cjs, rcs


def check_run(sjs, cjs, rcs, workload, locks):
    """The run's own verdict plus the cross-client memory checks."""
    for c, rc in zip(cjs, rcs):
        t.check_eq(c["violations"], 0, "client %d violations (%r)"
                   % (c["client_id"], c["violation_msgs"]))
        t.check_eq(c["qp_errors"], 0, "client %d QP errors (%r)" % (c["client_id"], c["errors"]))
        t.check(not c["retry_storm"], "client %d retry storm" % c["client_id"])
        t.check_eq(c["errors"], [], "client %d errors" % c["client_id"])
        t.check_eq(rc, 0, "client %d exit code" % c["client_id"])
        t.check_eq(c["rx_bad_icrc"], 0, "client %d frames with a bad ICRC" % c["client_id"])
        t.check(c["ops"] > 0, "client %d did no operations" % c["client_id"])
    t.check_eq(sjs["rx_bad_icrc"], 0, "server frames with a bad ICRC")
    t.check_eq(sjs["rx_malformed"], 0, "server malformed frames")
    t.check_eq(sjs["naks_access"] + sjs["naks_invalid"], 0, "server access/invalid NAKs")
    if workload in ("sherman-lock", "rcuckoo-lock"):
        words = sjs["lock_words"]
        recs = sjs["records"]
        for i in range(locks):
            cs = sum(c["cs_per_lock"][i] for c in cjs)
            t.check_eq(recs[i][1], cs, "lock %d: counter in memory vs critical sections "
                       "completed by all clients" % i)
            t.check_eq(recs[i][0], 0, "lock %d: holder left in the record" % i)
        t.check(all(w == 0 for w in words[:sjs["_dumped_words"]]),
                "lock words not all released: %r" % words[:sjs["_dumped_words"]])
    if workload == "clover":
        for k in range(locks):
            t.check_eq(sjs["clover_chain_len"][k], sum(c["cs_per_lock"][k] for c in cjs),
                       "key %d: version chain length in memory vs commits by all clients" % k)
        t.check_eq(sjs["clover_bad_nodes"], 0, "nodes in a chain holding another key")
    if workload == "cas-bench":
        t.check_eq(sjs["bench_counter"], sum(c["faa_total"] for c in cjs),
                   "FAA counter in memory vs FAAs completed")


def check_reconnects(sjs, cjs, reconnect_every, ops, qps):
    """Every client QP was re-created as often as its ops asked for, and the
    server reset its end exactly once per reconnect."""
    want = (ops - 1) // reconnect_every if ops else None
    total = 0
    for c in cjs:
        if want is not None:
            t.check_eq(c["reconnects"], want * qps, "client %d reconnects (%d ops per QP, "
                       "one every %d)" % (c["client_id"], ops, reconnect_every))
        t.check(c["reconnects"] > 0, "client %d never reconnected" % c["client_id"])
        t.check_eq(c["qp_resets"], c["reconnects"], "client %d QP resets vs reconnects"
                   % c["client_id"])
        total += c["reconnects"]
    t.check_eq(sjs["qp_resets"], total, "server QP resets vs client reconnects")
    t.check_eq(sjs["ctl_bad"], 0, "server: bad control messages")


def check_swordd_counters(st, sjs, cjs, accel_active, accel_on=False,
                          require_rewrites=True):
    """What crossed swordd is what the endpoints put on the wire.  With
    acceleration configured swordd may answer from its own state (replayed
    duplicates, synthesized ACKs), so the per-port balance is not checked
    then; the RoCE frames it received still must be exactly the endpoints'."""
    sent_c = sum(c["link_tx"] for c in cjs)
    sent_s = sjs["link_tx"]
    ports = st["ports"]
    roce = sum(v for k, v in st.items() if k.startswith("opcode_0x"))
    t.check_eq(st.get("malformed", 0), 0, "swordd malformed")
    # every RoCE frame either endpoint sent reached swordd, and nothing else
    # in the namespaces speaks RoCE
    t.check_eq(roce, sent_c + sent_s, "swordd RoCE frames vs frames sent by the endpoints")
    t.check(ports[0]["rx"] >= sent_c, "port 0 rx %d < client frames %d" % (ports[0]["rx"], sent_c))
    t.check(ports[1]["rx"] >= sent_s, "port 1 rx %d < server frames %d" % (ports[1]["rx"], sent_s))
    if not accel_on:
        t.check_eq(ports[1]["tx"] + ports[1].get("tx_dropped", 0), ports[0]["rx"],
                   "port 1 tx + tx_dropped vs port 0 rx")
        t.check_eq(ports[0]["tx"] + ports[0].get("tx_dropped", 0), ports[1]["rx"],
                   "port 0 tx + tx_dropped vs port 1 rx")
    # the server received what swordd forwarded (less any tx drops)
    t.check(sjs["rx_frames"] <= ports[1]["tx"] + 64,
            "server got %d frames, swordd sent %d" % (sjs["rx_frames"], ports[1]["tx"]))
    t.check(st.get("managed_rx", 0) > 0, "swordd managed no traffic (server configured)")
    if accel_active and require_rewrites:
        t.check(st.get("rewritten", 0) > 0, "acceleration on but nothing rewritten")
    elif not accel_active:
        t.check_eq(st.get("rewritten", 0), 0, "rewrites in pass-through")


def validate_pcaps(paths, min_frames):
    helpers = os.environ.get("TEST_HELPERS") or os.path.join(HERE, "..", "helpers")
    r = t.sh(["/usr/bin/python3", os.path.join(helpers, "validate_pcap.py"),
              "--min", str(min_frames)] + paths, check_rc=False)
    if r.returncode != 0:
        raise t.TestFailure("validate_pcap.py:\n%s%s" % (r.stdout[-3000:], r.stderr[-2000:]))
    t.log(r.stdout.strip())


def server_qp_requests(pcap):
    """Requests per destination QPN in a capture (the server side of swordd),
    in capture order: {qpn: count}, and the QPN of each request."""
    r = t.sh(["tshark", "-r", pcap, "-Y", "infiniband.bth.opcode < 16 || "
              "(infiniband.bth.opcode >= 19 && infiniband.bth.opcode <= 20) || "
              "infiniband.bth.opcode == 24",
              "-T", "fields", "-e", "infiniband.bth.destqp"], check_rc=False)
    if r.returncode != 0:
        raise t.TestFailure("tshark on %s: %s" % (pcap, r.stderr[-1000:]))
    order = [int(x, 0) for x in r.stdout.split() if x]
    counts = {}
    for q in order:
        counts[q] = counts.get(q, 0) + 1
    return counts, order


def check_not_decided(st):
    """[atomic] out_of_band off: the atomics of connections set up out of
    band (roce-peer's) went to the server as they came."""
    decided = sum(st.get("fn_atomic_" + k, 0) for k in ("granted", "failed_local", "faa_local"))
    t.check_eq(decided, 0, "atomics decided by swordd with [atomic] out_of_band off")
    # (an unpaired connection's atomics pass real anyway, not counted there)
    t.log("fn_atomic_out_of_band_real %d" % st.get("fn_atomic_out_of_band_real", 0))


def check_not_remapped(st, connections):
    """Remapping on with [remap] out_of_band off: connections set up out
    of band (roce-peer's) stay on their own server QPs, each counted once
    a life."""
    t.check_eq(st.get("fn_remap_bound", 0), 0, "connections bound")
    t.check_eq(st.get("fn_remap_lanes_opened", 0), 0, "lanes opened")
    t.check(st.get("fn_remap_out_of_band_direct", 0) >= connections,
            "out-of-band connections left direct: %d of %d" % (
                st.get("fn_remap_out_of_band_direct", 0), connections))


def check_remapped(pcap, st, connections, lanes):
    """Every connection moved onto a lane, and the server side shows
    requests on `lanes` server QPs, but for those swordd counted as sent
    before a connection's binding (tshark decodes the capture: not our
    parser)."""
    bound = st.get("fn_remap_bound", 0)
    t.check(bound >= connections, "remapping bound %d of %d connections" % (bound, connections))
    t.check_eq(st.get("fn_remap_lanes_opened", 0), lanes, "lanes opened")
    counts, _ = server_qp_requests(pcap)
    ranked = sorted(counts.items(), key=lambda kv: -kv[1])
    on_lanes = sum(n for _, n in ranked[:lanes])
    off_lanes = sum(n for _, n in ranked[lanes:])
    direct = st.get("fn_remap_unbound_direct", 0) + st.get("fn_remap_before_binding", 0)
    t.log("server QPs carrying requests: %d (lanes %s: %d requests; others %d, "
          "swordd passed %d before bindings)" % (
              len(counts), [hex(q) for q, _ in ranked[:lanes]], on_lanes, off_lanes, direct))
    t.check(off_lanes <= direct, "%d requests reached non-lane server QPs, swordd passed "
            "only %d before bindings" % (off_lanes, direct))
    t.check(on_lanes > 10 * off_lanes, "lanes carried %d requests, other QPs %d" %
            (on_lanes, off_lanes))
