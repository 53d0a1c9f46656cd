#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
Live sections under load (issue #32): lock regions and a server added and
removed on a running swordd while RDMA lock clients run through it.

  netns C: 2 clients x 2 QPs -> mem0 (198.18.0.2), sherman-lock, 4 locks
           1 client  x 2 QPs -> mem1 (198.18.0.3), sherman-lock, 4 locks
  netns S: two roce-peer memory servers on the one interface

swordd starts accelerating only [lock.a] (mem0's locks 0-1); mem1 is not
a managed server.  Mid-run a SIGHUP adds [lock.b] (mem0's locks 2-3),
[server.mem1] and its [lock.c]; a while later `swordctl reload --wait`
removes mem1 with [lock.c] (drained first) and the clients go on, mem1's
traffic now passing swordd untouched.

Judged: every client ends with 0 QP errors, 0 violations, no retry storm;
on both servers every lock's counter in memory equals the critical
sections the clients completed on it and every lock word and holder is
back to 0 (e2e.check_run); swordd rewrote mem1's atomics after the add
(/sword/servers rewritten grows) and decided on [lock.b]'s words
(/sword/lock region b); no connection swordd tracked was opened
again (fn_atomic_conn_created = the 6 client QPs); the removal drained (nothing retiring) and
mem1 is gone from /sword/servers; swordd exits 0.
"""

import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e  # noqa: E402
from e2e import t  # noqa: E402

SERVER2_IP = "198.18.0.3"
# the generated [lock.table0] cut down to locks 0-1 (--set applies to
# every reload as well); sherman-lock's lock i is at base + 8 i
SETS = ["lock.table0.length=16"]
ADD = """
[lock.b]
server = mem0
base = 0x10000010
length = 16
"""
ADD_MEM1 = """
[server.mem1]
ip = %s

[lock.c]
server = mem1
base = 0x10000000
length = 0x10000
""" % SERVER2_IP

DURATION = 16           # seconds the clients run
T_ADD, T_REMOVE = 3, 9  # when the sections come and go


def servers(sw):
    return {v["name"]: v for v in (sw.telemetry("/sword/servers") or {}).values()}


def swordctl(prefix, *argv):
    r = t.sh(["/usr/bin/python3", os.path.join(t.args().source_root, "scripts", "swordctl"),
              "-f", prefix] + list(argv), check_rc=False)
    t.log("swordctl %s -> %d\n%s%s" % (" ".join(argv), r.returncode, r.stdout, r.stderr))
    return r


def body():
    t.require_root()
    t.args()
    topo = e2e.Topology(accel=True, swordd_set=SETS)
    sw = topo.sw
    base_conf = open(topo.conf).read()
    d = topo.d
    rp = e2e.roce_peer_path()
    mac_s = topo.mac_s

    # the second memory server (same interface, its own IP) and its client
    sj2, ready2 = os.path.join(d, "server2.json"), os.path.join(d, "server2.ready")
    srv2 = e2e.Proc(t.in_ns(topo.ns_s, [rp, "server", "--iface", topo.if_s, "--ip", SERVER2_IP,
                                         "--max-qps", "256", "--ack", "every",
                                         "--dump-locks", "4", "--json", sj2,
                                         "--ready-file", ready2, "--progress", "0"]),
                    d, "server2")
    t.wait_for(lambda: os.path.exists(ready2) or srv2.p.poll() is not None, 30,
               "second memory server ready")
    cj2 = os.path.join(d, "client8.json")
    cl2 = e2e.Proc(t.in_ns(topo.ns_c, [rp, "client", "--iface", topo.if_c, "--ip", e2e.CLIENT_IP,
                                        "--server-ip", SERVER2_IP, "--server-mac", mac_s,
                                        "--client-id", "8", "--qps", "2",
                                        "--workload", "sherman-lock", "--locks", "4",
                                        "--rto-us", "10000", "--max-retries", "600",
                                        "--json", cj2, "--progress", "0",
                                        "--duration", str(DURATION)]),
                   d, "client8")
    seen = {}

    def during(procs):
        t0 = time.monotonic()
        time.sleep(T_ADD)
        r0 = servers(sw)
        t.check_eq(sorted(r0), ["mem0"], "managed servers before the add")
        with open(topo.conf, "w") as f:
            f.write(base_conf + ADD + ADD_MEM1)
        sw.proc.send_signal(signal.SIGHUP)
        t.wait_for(lambda: sw.telemetry("/sword/config")["reloads"] == 1, 20, "the add applied")
        t.check_eq(sw.telemetry("/sword/config")["reloads_refused"], 0, "refused reloads")
        t.check_eq(sorted(servers(sw)), ["mem0", "mem1"], "managed servers after the add")
        # acceleration on what was added: mem1's atomics rewritten, and
        # [lock.b]'s words decided on
        rw = servers(sw)["mem1"]["rewritten"]
        t.wait_for(lambda: servers(sw)["mem1"]["rewritten"] > rw + 50, 5,
                   "mem1's atomics rewritten after its lock region was added")
        seen["mem1_rewritten"] = servers(sw)["mem1"]["rewritten"]
        lk = sw.telemetry("/sword/lock,mem0,0x10000010") or {}
        t.check_eq(lk.get("region"), "b", "region of mem0's lock 2 after the add")
        seen["lock_b"] = lk
        time.sleep(max(0, T_REMOVE - (time.monotonic() - t0)))
        # remove mem1 with its region while its client runs on
        with open(topo.conf, "w") as f:
            f.write(base_conf + ADD)
        r = swordctl(sw.prefix, "reload", "--wait", "20")
        t.check_eq(r.returncode, 0, "swordctl reload --wait exit status")
        t.check("-[server.mem1]" in r.stdout and "-[lock.c]" in r.stdout,
                "swordctl reload does not list the removal:\n" + r.stdout)
        t.check("draining: nothing" in r.stdout, "still draining:\n" + r.stdout)
        t.check_eq(sorted(servers(sw)), ["mem0"], "managed servers after the removal")
        seen["removed_at"] = time.monotonic() - t0
        seen["unmanaged_at_removal"] = sw.telemetry("/sword/stats")["unmanaged"]
        t.check(all(p.p.poll() is None for p in procs) and cl2.p.poll() is None,
                "a client ended before the removal: the run does not cover it")

    sjs, cjs, rcs = e2e.run(topo, workload="sherman-lock", clients=2, qps=2, locks=4,
                            duration=DURATION, client_timeout=120, during=during)
    rc2 = cl2.wait(120)
    srv2.p.terminate()
    srv2.wait(30)
    st_live = sw.telemetry("/sword/stats")
    t.check(st_live["unmanaged"] > seen["unmanaged_at_removal"],
            "mem1's frames did not pass unmanaged after the removal")
    st = topo.stop_swordd()
    import json
    with open(cj2) as f:
        c2 = json.load(f)
    with open(sj2) as f:
        s2 = json.load(f)
    s2["_dumped_words"] = 4
    t.log("mem0: clients ops %s, cs %s; mem1: client ops %s, cs %s" % (
        [c["ops"] for c in cjs], [c["cs_per_lock"] for c in cjs], c2["ops"], c2["cs_per_lock"]))
    t.log("swordd: rewritten %s, %s" % (st.get("rewritten"),
          {k: v for k, v in st.items() if k.startswith("fn_atomic_") and v}))
    e2e.check_run(sjs, cjs, rcs, "sherman-lock", 4)
    e2e.check_run(s2, [c2], [rc2], "sherman-lock", 4)
    t.check_eq(st.get("malformed", 0), 0, "swordd malformed")
    t.check(st.get("fn_atomic_granted", 0) > 0, "nothing granted")
    t.check(seen["mem1_rewritten"] > 0, "mem1 never rewritten")
    # nothing already tracked was lost at the add or the removal: each of
    # the 6 client QPs (4 to mem0, 2 to mem1) opened once
    t.check_eq(st.get("fn_atomic_conn_created", 0), 6, "connections created")


if __name__ == "__main__":
    t.main(body)
