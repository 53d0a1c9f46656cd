#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
/sword/lock,SERVER,VA[,RKEY]: a lock word as atomic replacement sees it,
live on the telemetry socket.

The first 16 frames of rcuckoo-connectx.pcap go through swordd (net_pcap,
one port, learning at once) with the lock regions of test_daemon_replay.py.
Once they are counted: the masked-CAS word (va 0, rkey 0x2521) was learned
from the capture's ATOMIC ACKs, so it is "known" with a shadow value, and the
16th frame, a masked CAS swordd granted and forwarded as a WRITE, is still
un-ACKed: one write in flight (frame 17, the server's answer, would make the
open-loop capture disagree with swordd and the word is relearned).  A word of the
other region that no atomic touched is "unknown"; an address outside every
region is "none"; the server can be named or given by address; a bad
request is refused.
"""

import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "daemon"))
import swordtest as t  # noqa: E402
from test_daemon_replay import SERVER, opts  # noqa: E402


N = 16          # frames replayed (see above)


def body():
    t.require_root()
    frames = t.read_frames(os.path.join(t.args().captures, "rcuckoo-connectx.pcap"))
    d = t.tmpdir()
    cap = os.path.join(d, "in.pcap")
    t.write_frames(cap, frames[:N])
    sw = t.Swordd(["net_pcap0,rx_pcap=%s,tx_pcap=%s" % (cap, os.path.join(d, "out.pcap"))],
                  opts(["--set", "atomic.learn_holdoff_ms=0"]), name="lck", workdir=d).start()
    try:
        t.wait_for(lambda: (sw.telemetry("/sword/stats") or {}).get("rx") == N, 60,
                   "%d frames counted" % N, interval=0.2)
        st = sw.telemetry("/sword/stats")
        t.check(st.get("fn_atomic_learned", 0) >= 1, "nothing learned: %r" % st)
        t.check_eq(st.get("fn_atomic_granted"), 1, "CAS granted by swordd")
        # per-server counters: the one managed server has all managed frames
        srv = sw.telemetry("/sword/servers")
        t.log("/sword/servers:", srv)
        t.check_eq(srv["server0"]["name"], "m", "/sword/servers name")
        t.check_eq(srv["server0"]["managed_rx"], st["managed_rx"], "server managed_rx")
        t.check_eq(srv["server0"]["rewritten"], st["rewritten"], "server rewritten")
        t.check(st["rewritten"] >= 1, "the granted CAS was not rewritten")
        # the connection: identified exactly by the capture's RDMA CM REQ/REP
        # (lib/rc); its DREQ is frame 21, beyond the replayed frames
        t.check_eq(st.get("fn_atomic_cm_paired"), 1, "connection paired by CM")
        conns = sw.telemetry("/sword/conns")
        t.log("/sword/conns:", conns)
        t.check_eq(conns.get("connections"), 1, "connections tracked")
        lines = [v for k, v in conns.items() if k != "connections"]
        t.check(len(lines) == 1 and "qpn 0x366" in lines[0] and "qpn 0x1f0" in lines[0]
                and "paired by cm" in lines[0],
                "the CM-identified connection (client QPN 0x366, server QPN 0x1f0): %r"
                % lines)
        t.check_eq(sw.telemetry("/sword/conns,m").get("connections"), 1,
                   "connections of server m")

        known = sw.telemetry("/sword/lock,m,0,0x2521")
        t.log("/sword/lock,m,0,0x2521:", known)
        t.check_eq(known.get("state"), "known", "masked-CAS word state")
        t.check_eq(known.get("region"), "masked", "region")
        t.check("shadow" in known, "no shadow value: %r" % known)
        t.check_eq(known.get("worker"), 0, "owner worker")
        t.check_eq(known.get("in_flight"), 1, "the granted CAS's WRITE, un-ACKed")

        # the rkey comes from the region when the request leaves it out
        t.check_eq(sw.telemetry("/sword/lock,m,0").get("state"), "known",
                   "state with the region's rkey")
        by_ip = sw.telemetry("/sword/lock,%s,0x0" % SERVER)
        t.check_eq(by_ip.get("shadow"), known.get("shadow"), "same word by server address")

        untouched = sw.telemetry("/sword/lock,m,0x5562cc8a7ff8")
        t.log("untouched:", untouched)
        t.check_eq(untouched.get("state"), "unknown", "never-touched word in a region")
        t.check("shadow" not in untouched, "shadow for an unknown word")

        outside = sw.telemetry("/sword/lock,m,0x100000")
        t.check_eq(outside.get("state"), "none", "address outside every region")

        for bad in ("/sword/lock", "/sword/lock,nosuch,0", "/sword/lock,m,zz",
                    "/sword/conns,nosuch"):
            try:
                reply = sw.telemetry(bad)
            except t.TestFailure:
                reply = None          # an error reply has no data for cmd
            # no data: nothing, or one clear error (issue #32: it answered null)
            t.check(not reply or (isinstance(reply, dict) and list(reply) == ["error"]
                                  and reply["error"]),
                    "%s answered %r" % (bad, reply))
        t.check_eq(sw.stop(), 0, "exit status")
    except BaseException:
        sw.dump()
        raise


if __name__ == "__main__":
    t.main(body)
