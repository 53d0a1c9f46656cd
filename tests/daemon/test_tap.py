#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
Two-port bump-in-the-wire over net_tap between two network namespaces.

  netns C (198.18.0.1/24) -- tap swc<pid> == swordd two-port == tap sws<pid> -- netns S (198.18.0.2/24)

swordd creates both taps (in its own netns) and starts its ports; only then
are the kernel sides moved into C and S (see swordtest.wait_tap_started).
Checks:
  - ping C -> S works (ARP and ICMP both ways through swordd);
  - RoCEv2 frames sent by scapy in C (requests) and in S (responses) are
    sniffed on the other side byte for byte unchanged (no managed servers);
  - the per-opcode counters equal exactly the RoCE frames we sent (nothing
    else in the namespaces speaks UDP/4791), port 0 rx == port 1 tx and
    port 1 rx == port 0 tx + tx drops and the other way round;
  - swordd exits 0 on SIGTERM.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import swordtest as t  # noqa: E402

# Raw AF_PACKET: the frames leave exactly as built.
SENDER = r"""
import socket, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((sys.argv[1], 0))
for h in open(sys.argv[2]).read().split():
    s.send(bytes.fromhex(h))
"""


def roce_frames(src_mac, dst_mac, src_ip, dst_ip, requests):
    import roce_scapy as rs
    kw = dict(src_mac=src_mac, dst_mac=dst_mac, src_ip=src_ip, dst_ip=dst_ip,
              qpn=0x11, udp_chksum=0)
    if requests:
        return [rs.make_frame(0x13, psn=100, swap=1, compare=0, va=0x10000, rkey=7, **kw),
                rs.make_frame(0x0A, psn=101, payload=bytes(range(64)), va=0x20000, rkey=7, **kw),
                rs.make_frame(0x0C, psn=102, va=0x20000, rkey=7, dma_len=64, **kw),
                rs.make_frame(0x18, psn=103, swap=1, compare=0, swap_mask=1,
                              compare_mask=1, va=0x10008, rkey=7, **kw),
                rs.make_frame(0x14, psn=104, swap=5, va=0x10010, rkey=7, **kw)]
    return [rs.make_frame(0x12, psn=100, orig=0, msn=1, **kw),
            rs.make_frame(0x11, psn=101, msn=2, **kw),
            rs.make_frame(0x10, psn=102, payload=bytes(64), msn=3, **kw)]


def send_from(ns, ifname, frames, d, name):
    p = os.path.join(d, name + ".hex")
    with open(p, "w") as f:
        f.write("\n".join(fr.hex() for fr in frames))
    t.sh(t.in_ns(ns, ["/usr/bin/python3", "-c", SENDER, ifname, p]))


def body():
    t.require_root()
    t.args()
    d = t.tmpdir()
    tg = t.tag()
    ns_c, ns_s = "swtc%s" % tg, "swts%s" % tg
    if_c, if_s = "swc%s" % tg, "sws%s" % tg
    sj = os.path.join(d, "stats.json")

    # namespaces first: cleanup runs in reverse, so swordd (and its taps)
    # goes away before the namespaces are deleted
    t.netns(ns_c)
    t.netns(ns_s)
    sw = t.Swordd(["net_tap0,iface=%s" % if_c, "net_tap1,iface=%s" % if_s],
                  ["--mode", "two-port", "--stats-interval", "1", "--stats-json", sj],
                  name="tap", workdir=d).start()
    t.wait_tap_started(sw, if_c)
    t.wait_tap_started(sw, if_s)
    t.move_iface(if_c, ns_c, "198.18.0.1/24")
    t.move_iface(if_s, ns_s, "198.18.0.2/24")
    mac_c, mac_s = t.iface_mac(if_c, ns_c), t.iface_mac(if_s, ns_s)

    # ping through swordd (ARP + ICMP in both directions)
    r = t.sh(t.in_ns(ns_c, ["ping", "-c", "3", "-i", "0.2", "-W", "5", "198.18.0.2"]),
             check_rc=False)
    t.log(r.stdout.strip().splitlines()[-2] if r.stdout.strip() else r.stderr)
    if r.returncode != 0:
        sw.dump()
    t.check(r.returncode == 0, "ping 198.18.0.2 from %s through swordd failed:\n%s%s"
            % (ns_c, r.stdout, r.stderr))

    # RoCE frames both ways, sniffed on the far side
    req = roce_frames(mac_c, mac_s, "198.18.0.1", "198.18.0.2", True)
    rsp = roce_frames(mac_s, mac_c, "198.18.0.2", "198.18.0.1", False)
    sn_s = t.Sniffer(ns_s, if_s, os.path.join(d, "at_server.pcap"), ["udp", "port", "4791"])
    sn_c = t.Sniffer(ns_c, if_c, os.path.join(d, "at_client.pcap"), ["udp", "port", "4791"])
    send_from(ns_c, if_c, req, d, "req")
    send_from(ns_s, if_s, rsp, d, "rsp")

    def arrived(sn, n):
        return lambda: len(t.read_frames(sn.path)) >= n
    t.wait_for(arrived(sn_s, len(req)), 30, "RoCE requests at the server side")
    t.wait_for(arrived(sn_c, len(rsp)), 30, "RoCE responses at the client side")
    got_s, got_c = sn_s.stop(), sn_c.stop()
    # The sniffers also see what their own side sent: keep the arrivals.
    got_s = [f for f in got_s if f[6:12] == bytes.fromhex(mac_c.replace(":", ""))]
    got_c = [f for f in got_c if f[6:12] == bytes.fromhex(mac_s.replace(":", ""))]
    t.compare_frames(got_s, req, "requests C->S through swordd")
    t.compare_frames(got_c, rsp, "responses S->C through swordd")

    rc = sw.stop()
    if rc != 0:
        sw.dump()
    t.check_eq(rc, 0, "swordd exit code on SIGTERM")
    st = t.read_stats_json(sj)
    want_ops = {}
    for f in req + rsp:
        want_ops[f[42]] = want_ops.get(f[42], 0) + 1
    t.check_eq(t.opcode_counts(st), want_ops, "per-opcode counters vs RoCE frames sent")
    ports = st["ports"]
    t.check_eq(len(ports), 2, "number of ports in stats")
    # Every frame received on one side was sent out of the other or counted
    # as a tx drop.  (Drops do happen here, honestly: while a tap's kernel
    # side is still in the root netns and UP, the root netns may send IPv6
    # router solicitations/MLD reports into it, and writing those to the
    # other tap fails until we have moved it and brought it up.)
    t.check_eq(ports[1]["tx"] + ports[1].get("tx_dropped", 0), ports[0]["rx"],
               "port 1 tx + tx_dropped vs port 0 rx")
    t.check_eq(ports[0]["tx"] + ports[0].get("tx_dropped", 0), ports[1]["rx"],
               "port 0 tx + tx_dropped vs port 1 rx")
    t.check_eq(st["tx"] + st["dropped"], st["rx"], "tx + dropped vs rx")
    t.check_eq(st["rx"], ports[0]["rx"] + ports[1]["rx"], "rx vs sum of ports")
    # 3 pings + ARP both ways + the RoCE frames, at least
    t.check(ports[0]["rx"] >= 3 + 1 + len(req), "port 0 rx too small: %r" % ports[0])
    t.check(ports[1]["rx"] >= 3 + 1 + len(rsp), "port 1 rx too small: %r" % ports[1])
    t.check_eq(st.get("malformed"), 0, "malformed")
    t.check_eq(st.get("managed_rx"), 0, "managed_rx")
    # stats lines are rte_log messages (sword.stats), on stderr
    out = sw.stderr()
    t.check("sword.stats: rx=" in out,
            "no stats lines in the log with --stats-interval 1:\n" + out[-1000:])


if __name__ == "__main__":
    t.main(body)
