#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
The rack on a real Open vSwitch (tests/tor/tor.py): clients and memory
servers in netns, swordd instances on their own ports, flows only from
sword-openflow.

  test_tor.py --mode one-port|two-port     one instance, one server
  test_tor.py --scale-out                  2 instances, each owning 1 of 2 servers
  test_tor.py --failover                   fast-failover groups, an instance
                                           stopped mid-load

Checks (all shapes): the lock workload with acceleration passes (0
violations, memory equals the clients' critical sections); the redirect
rules were hit; no host MAC learned on swordd's ports; ARP, ping and a TCP
connect arrive exactly once even with the MAC table flushed (flooding).
Needs root and Open vSwitch; exits 77 (a failure for scripts/test.sh)
without them.
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tor  # noqa: E402
from tor import t, e2e  # noqa: E402

LOCKS = 4


def check_workload(res):
    for idx, (sjs, cjs, rcs) in sorted(res.items()):
        tor.log_clients(cjs)
        t.log("server %d: rx=%d writes=%d reads=%d atomics=%d records=%r" % (
            idx, sjs["rx_frames"], sjs["writes"], sjs["reads"], sjs["atomics"],
            sjs["records"][:LOCKS]))
        e2e.check_run(sjs, cjs, rcs, "sherman-lock", LOCKS)


def check_instance_saw_only_its_servers(rack, res, stats):
    """Each instance's RoCE frames are exactly those of the endpoints of the
    servers it owns (every frame they sent, nothing of the others)."""
    for inst, st in zip(rack.instances, stats):
        want = 0
        for s in inst.servers:
            sjs, cjs, _ = res[s.index]
            want += sjs["link_tx"] + sum(c["link_tx"] for c in cjs)
        got = tor.roce_frames(st)
        t.log("swordd %d (servers %s): RoCE frames %d, managed_rx %d, rewritten %d; "
              "its endpoints sent %d" % (inst.k, [s.ip for s in inst.servers], got,
                                         st.get("managed_rx", 0), st.get("rewritten", 0), want))
        t.check_eq(got, want, "swordd %d RoCE frames vs frames sent by its servers' "
                   "endpoints" % inst.k)
        t.check(st.get("managed_rx", 0) > 0, "swordd %d managed nothing" % inst.k)
        t.check(st.get("rewritten", 0) > 0, "swordd %d rewrote nothing (acceleration on)"
                % inst.k)


def shape(a):
    if a.scale_out:
        return dict(mode=a.mode, n_servers=2, owners=(0, 1))
    return dict(mode=a.mode, n_servers=1, owners=(0,))


def body():
    tor.require_ovs()
    t.args()
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", default="two-port")
    ap.add_argument("--scale-out", action="store_true")
    ap.add_argument("--ops", type=int, default=120)
    a, _ = ap.parse_known_args()

    rack = tor.Rack(accel=True, **shape(a))
    res = tor.run_workload(rack, ops=a.ops, locks=LOCKS)
    check_workload(res)
    tor.check_non_roce_once(rack)
    tor.check_redirect_counters(rack)
    tor.check_no_mac_on_sword(rack)
    stats = rack.stop_instances()
    check_instance_saw_only_its_servers(rack, res, stats)


if __name__ == "__main__":
    t.main(body)
