#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
End to end: roce-peer memory server and contending clients in two network
namespaces joined through swordd (two-port, net_tap).

  test_e2e.py --workload W [--faults] [--accel] [--ack every|ackreq|K] [--direct]
              [--clients N] [--qps Q] [--initial-psn P] [--reconnect-every K]

(--direct: a veth pair instead of swordd, to test the endpoints alone.)

All clients share one IP (the client namespace's), so with --initial-psn
every QP of that IP starts at the same PSN, as Sherman's QPs do (3185).
--reconnect-every K re-creates each client QP after every K ops (same QPNs,
same initial PSN) and additionally checks that every reconnect happened and
the server reset its end once per reconnect.

Asserts: every client exits 0 with zero violations, zero QP errors, no retry
storm, no bad ICRC; memory agrees with the clients (per-lock counters equal
the critical sections all clients completed, every lock word and holder back
to 0; the FAA counter equals the FAAs done); swordd's counters equal what the
endpoints sent (per-opcode total = frames both sides put on the wire, port
rx/tx balance, managed traffic seen, rewrites only when acceleration is on);
every RoCE frame captured on both sides of swordd is valid RoCEv2 according
to scapy (tests/helpers/validate_pcap.py).

roce-peer's QPs are set up out of band: [atomic] out_of_band is on unless
--reconnect-every re-creates them with their QPNs (then swordd's default,
off, and the run checks that nothing was decided; --atomic-out-of-band
chooses).

--accel runs with [features] atomic_replacement = on and additionally
requires rewrites; until swordd has that implementation the test exits 77
(skipped) after the run, saying so.
Needs root (netns, taps, AF_PACKET); exits 77 otherwise.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e  # noqa: E402
from e2e import t  # noqa: E402

FAULTS = {"loss": 0.02, "dup": 0.02, "reorder": 0.02, "reorder_us": 300}


def log_swordd(st):
    t.log("swordd: rx=%s tx=%s managed_rx=%s rewritten=%s" % (
        st.get("rx"), st.get("tx"), st.get("managed_rx"), st.get("rewritten")))
    fn = {k: v for k, v in st.items() if k.startswith("fn_") and v}
    if fn:
        t.log("swordd functions: %s" % fn)


def body():
    t.require_root()
    t.args()
    ap = argparse.ArgumentParser()
    ap.add_argument("--workload", default="sherman-lock")
    ap.add_argument("--faults", action="store_true")
    ap.add_argument("--accel", action="store_true")
    ap.add_argument("--ack", default="every")
    ap.add_argument("--ops", type=int, default=60)
    ap.add_argument("--clients", type=int, default=2)
    ap.add_argument("--qps", type=int, default=2)
    ap.add_argument("--initial-psn", type=int, default=None)
    ap.add_argument("--reconnect-every", type=int, default=None)
    ap.add_argument("--read-before-acquire", action="store_true",
                    help="each acquire is READ record + CAS lock in one batch")
    ap.add_argument("--fault-seed", type=int, default=None,
                    help="server fault seed (clients: +1+c); see e2e.run")
    ap.add_argument("--direct", action="store_true",
                    help="veth pair instead of swordd (the endpoints alone)")
    ap.add_argument("--remap", action="store_true",
                    help="[features] remapping = on: every client QP onto --lanes server QPs")
    ap.add_argument("--lanes", type=int, default=1)
    ap.add_argument("--out-of-band", choices=("on", "off"), default="on",
                    help="[remap] out_of_band (roce-peer's QPs are set up out of band: "
                    "off, the shipped default, leaves every one on its own QP)")
    ap.add_argument("--atomic-out-of-band", choices=("on", "off"), default=None,
                    help="[atomic] out_of_band (default: on, roce-peer's QPs being set up "
                    "out of band, unless --reconnect-every re-creates them with their "
                    "QPNs: then off, the shipped default, and nothing is decided)")
    ap.add_argument("--rewrites-optional", action="store_true",
                    help="with --accel: safety only, rewrites reported, not "
                    "required (see tests/e2e/meson.build)")
    a, _ = ap.parse_known_args()
    aoob = a.atomic_out_of_band or ("off" if a.reconnect_every else "on")
    locks = 130 if a.workload == "rcuckoo-lock" else 4

    topo = e2e.Topology("direct" if a.direct else "swordd", accel=a.accel, pcap=True,
                        remap=a.remap, lanes=a.lanes, out_of_band=a.out_of_band == "on",
                        atomic_out_of_band=aoob == "on")
    try:
        sjs, cjs, rcs = e2e.run(topo, workload=a.workload, clients=a.clients, qps=a.qps,
                                ops=a.ops, locks=locks, faults=FAULTS if a.faults else None,
                                ack=a.ack, ackreq="last", initial_psn=a.initial_psn,
                                reconnect_every=a.reconnect_every,
                                fault_seed=a.fault_seed,
                                read_before_acquire=a.read_before_acquire)
    except t.TestFailure:
        if not a.direct:   # what swordd decided, for the failure report
            log_swordd(topo.stop_swordd())
        raise
    for c in cjs:
        t.log("client %d: ops=%d retries=%d retx=%d timeouts=%d naks=%d implied=%d "
              "p50=%.0fus p99=%.0fus faults lost/dup/reord=%d/%d/%d reconnects=%d"
              % (c["client_id"], c["ops"], c["retries"], c["retx_pkts"], c["timeouts"],
                 c["naks_seq"], c["implied_naks"], c["lat_p50_us"], c["lat_p99_us"],
                 c["link_fault_lost"], c["link_fault_dup"], c["link_fault_reordered"],
                 c["reconnects"]))
    t.log("server: rx=%d writes=%d reads=%d atomics=%d acks=%d coalesced=%d naks_seq=%d "
          "dups=%d/%d/%d" % (sjs["rx_frames"], sjs["writes"], sjs["reads"], sjs["atomics"],
                             sjs["acks"], sjs["coalesced"], sjs["naks_seq"],
                             sjs["dup_writes"], sjs["dup_reads"], sjs["dup_atomics"]))
    # swordd's counters first, so that a failing run shows what it decided
    accel_active = a.accel and topo.accel_available()
    pcaps = topo.stop_sniffers()
    st = None
    if not a.direct:
        st = topo.stop_swordd()
        log_swordd(st)
    e2e.check_run(sjs, cjs, rcs, a.workload, locks)
    if a.reconnect_every:
        e2e.check_reconnects(sjs, cjs, a.reconnect_every, a.ops, a.qps)
    if a.faults:
        t.check(sum(c["link_fault_lost"] for c in cjs) + sjs["link_fault_lost"] > 0,
                "fault injection lost nothing: not a fault test")
        t.check(sum(c["retx_pkts"] for c in cjs) > 0, "faults but no retransmission")
    if st is not None:
        # remapping rewrites every request it stitches and creates frames
        # (expanded ACKs): it counts as acceleration for the port balance
        remapped = a.remap and a.out_of_band == "on"
        # [atomic] out_of_band off: atomics on their own server QPs go
        # there as they came (what remapping leaves on lanes is decided)
        undecided = accel_active and aoob == "off" and not remapped
        e2e.check_swordd_counters(st, sjs, cjs, accel_active or remapped,
                                  accel_on=a.accel or remapped,
                                  require_rewrites=not (a.rewrites_optional or undecided))
        if undecided:
            e2e.check_not_decided(st)
        if remapped:
            e2e.check_remapped(pcaps[1], st, a.clients * a.qps, a.lanes)
        elif a.remap:
            e2e.check_not_remapped(st, a.clients * a.qps)
        if a.rewrites_optional:
            t.log("rewritten (reported, not required): %d" % st.get("rewritten", 0))
    e2e.validate_pcaps(pcaps, min_frames=sjs["rx_frames"] // 2)
    if a.accel and not accel_active:
        t.log("SKIP: swordd has no atomic_replacement implementation yet "
              "(the pass-through checks above passed)")
        t.run_cleanups()
        sys.exit(t.SKIP)


if __name__ == "__main__":
    t.main(body)
