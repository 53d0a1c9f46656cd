#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
matrix.py — issue #29's e2e matrix: a judge of I9 ("no harm") through the
real daemon.

Why it exists: every e2e test judges one configuration against zero
(no QP error, no leaked lock).  I9 asks something else: no client is worse
off with swordd's features than in the same run without them.  So each
cell runs twice with the same seeds and the same clients: once through
swordd with the cell's features, once through swordd in pass-through
(every feature off, the baseline), and every harm counted in the first
must be no more than in the second.

A cell = workload (sherman-lock, rcuckoo-lock, cas-bench)
       x swordd features (accel, remap1, remap2, accel+remap1, accel+remap2)
       x QP re-creation out of band (none, owners = client 0's QPs, the first
         to bind and so the lanes' owners, riders = every other client's,
         both; roce-peer --reconnect-every/--reconnect-qps)
       x faults (none, clients, server: 2% loss/dup/reorder on what that
         side sends)
       x the server's modelled RNIC atomic unit (off, 500/s per word)
       x for remap cells: [remap] out_of_band (on: roce-peer's out-of-band
         QPs are remapped at all; default: the key left at swordd's
         default).  Cells without re-creation run with on only; the
         re-creation cells with the default only: roce-peer re-creates a
         QP with its old QPN, which "on" promises never happens (such a
         cell can still be run by name, --cell .../oob=on).  [atomic]
         out_of_band (the same promise for atomic replacement) follows:
         on for a remap cell at oob=on, and for an accel cell without
         re-creation; else the default (off: the atomics of roce-peer's
         out-of-band QPs go to the server as they came)

What each run yields (the same for the baseline):
  qp_err      QP errors over all clients      cli_fail  clients exiting != 0
  stalled     clients stopped after the time limit
  storm       clients that gave up after --retry-storm consecutive failed
              acquires (a lock nobody releases)
  viol        violations the clients saw (overlapping critical sections,
              a READ not returning what was written, FAA going back ...)
  leaked      lock words not 0 at the end + records with a holder left
  lost/dbl    locks whose counter is below the critical sections all
              clients completed / above them plus those in doubt
  cnt_ne      locks whose counter != critical sections (strict)
  faa_*       cas-bench: the counter vs FAAs completed; the FAA originals
              all clients saw must be 0..n-1, each once (dup: one value
              seen twice = an FAA doubled; out: a value >= n; miss: values
              never seen: an FAA ran whose answer no client got)
  i1          frames scapy finds invalid on either capture (validate_pcap.py)
  i2          tshark on the server-side capture, per server QP and life
              (a life starts at a RECONNECT for that QP on the wire):
              request PSNs that stay missing (a hole never filled) and
              duplicates that are not retransmissions (same PSN, other
              opcode/address/operands/payload); swordd's asks (a zero-length
              WRITE 2^22 PSNs ahead, lib/serializer/ser_ask.c, which the
              server NAKs and never executes) are counted apart (a note)
  i3          tshark on the client-side capture, per client QP and life
              (from the server's RECONNECTED): an MSN going back, a
              response PSN going back without a retransmission of that
              PSN by the client before it (a NAK, RNR or sequence, stands
              at the PSN before its own: it completes only that; swordd's
              asks are RNR NAKs), an ACK past every request of the life;
              a step the server made itself is not counted:
              each is matched to the server-side capture, where the
              server sent the same PSN (MSN) to that QP in that life
              after one at or beyond where the client stood (its fault
              injection reorders; swordd passes that on).  In a run
              where requests rode lanes nothing can be matched (the
              server names lane PSNs to the owners and answers the
              riders through them): there the run's count less the
              server's own count (cells with faults on the server), the
              rule of every run until 2026-11-28, which was off by one
              both ways in re-creation cells with faults (3 featured
              runs of 360 failed on it, none of them with a lane used;
              with the match, every kept run, 65 cells, counts 0).
A cell breaks I9 if any of these is larger with the features than in the
baseline, or the featured run has an invalid frame (I1 is absolute).
Config refused (swordd exits 2 on an unknown key, e.g. remap.out_of_band
before it exists) is reported per cell as REFUSED, not run.

  matrix.py [--short] [--only REGEX] [--workloads ...] [--features ...]
            [--recreate ...] [--faults ...] [--aunit ...] [--table FILE]
            [--json FILE] [--set KEY=VALUE ...] [--refused fail|skip]

--short: the CI selection (SHORT below).  Exit: 0 every cell holds I9;
1 a cell breaks it (or a run could not be judged); 77 with --refused skip
when nothing broke but some cells were refused.  Needs root.

Environment: SWORDD, ROCE_PEER, TEST_HELPERS, SOURCE_ROOT (meson sets them;
scripts/matrix.sh too).
"""

import argparse
import itertools
import json
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e  # noqa: E402
from e2e import t  # noqa: E402

FAULTS = {"loss": 0.02, "dup": 0.02, "reorder": 0.02, "reorder_us": 300}
WORKLOADS = {"sherman": "sherman-lock", "rcuckoo": "rcuckoo-lock", "casbench": "cas-bench"}
FEATURES = {  # name: (accel, lanes; 0 = no remapping)
    "accel": (True, 0), "remap1": (False, 1), "remap2": (False, 2),
    "accel+remap1": (True, 1), "accel+remap2": (True, 2),
}
RECREATE = ("none", "owners", "riders", "both")
FAULT_SIDES = ("none", "clients", "server")
AUNIT = (0, 500)

# The CI selection: cells expected to hold I9 with swordd's defaults, a few
# minutes in all.  (The remap cells need [remap] out_of_band = on for
# roce-peer's out-of-band QPs to be remapped at all; with the re-creation
# cells the default -- off -- is what is expected to hold.)
SHORT = [
    "sherman/accel/re=none/f=clients/au=0",
    "casbench/accel+remap1/re=none/f=none/au=0/oob=on",
    "rcuckoo/remap2/re=none/f=server/au=0/oob=on",
    "sherman/accel+remap1/re=both/f=none/au=0/oob=default",
    "sherman/accel/re=none/f=none/au=500",
]

HARMS = ("qp_err", "cli_fail", "stalled", "storm", "viol", "leaked", "lost", "dbl", "cnt_ne",
         "faa_ne", "faa_dup", "faa_out", "faa_miss", "i1", "i2", "i3")


class Cell:
    def __init__(self, wl, feat, recreate, faults, aunit, oob=None):
        self.wl, self.feat, self.recreate, self.faults, self.aunit = wl, feat, recreate, faults, aunit
        self.accel, self.lanes = FEATURES[feat]
        self.oob = oob if self.lanes else None

    @property
    def name(self):
        n = "%s/%s/re=%s/f=%s/au=%d" % (self.wl, self.feat, self.recreate, self.faults, self.aunit)
        return n + ("/oob=%s" % self.oob if self.oob else "")


def all_cells():
    out = []
    for wl, feat, re_, f, au in itertools.product(WORKLOADS, FEATURES, RECREATE,
                                                  FAULT_SIDES, AUNIT):
        if FEATURES[feat][1] == 0:
            out.append(Cell(wl, feat, re_, f, au))
        elif re_ == "none":
            out.append(Cell(wl, feat, re_, f, au, "on"))
        else:
            # roce-peer re-creates a QP with its old QPN: [remap]
            # out_of_band = on is the promise that no QPN is reused, so
            # such a cell is outside what swordd accepts to get right;
            # the shipped default (off) is what these cells judge
            out.append(Cell(wl, feat, re_, f, au, "default"))
    return out


def parse_cell(name):
    """A cell from its name (any combination, e.g. a remap cell without
    re-creation at oob=default, which all_cells leaves out)."""
    m = re.fullmatch(r"(\w+)/([\w+]+)/re=(\w+)/f=(\w+)/au=(\d+)(?:/oob=(on|default))?", name)
    if not m or m.group(1) not in WORKLOADS or m.group(2) not in FEATURES or \
            m.group(3) not in RECREATE or m.group(4) not in FAULT_SIDES or \
            bool(m.group(6)) != bool(FEATURES[m.group(2)][1]):
        raise t.TestFailure("bad cell name %r (WORKLOAD/FEATURES/re=R/f=F/au=N[/oob=on|default],"
                            " oob for remap cells only; see --list)" % name)
    return Cell(m.group(1), m.group(2), m.group(3), m.group(4), int(m.group(5)), m.group(6))


# ---------------------------------------------------------------------------
# tshark: I2 on the server side, I3 on the client side

TS_FIELDS = ["frame.number", "ip.src", "ip.dst", "udp.dstport", "udp.srcport",
             "infiniband.bth.opcode", "infiniband.bth.destqp", "infiniband.bth.psn",
             "infiniband.aeth.msn", "infiniband.aeth.syndrome", "infiniband.reth.va", "infiniband.reth.dmalen", "infiniband.atomiceth.swapdt",
             "infiniband.atomiceth.cmpdt", "infiniband.payload", "udp.payload"]
RESPONSES = set(range(13, 19))   # READ response FIRST..ONLY, ACK, ATOMIC ACK


def tshark_rows(pcap):
    # tshark decodes RoCEv2 on UDP 4791 by itself (infiniband); the control
    # datagrams on 4792 are plain data
    r = t.sh(["tshark", "-r", pcap, "-d", "udp.port==%d,data" % e2e.CTL_PORT,
              "-Y", "infiniband || udp.port == %d" % e2e.CTL_PORT,
              "-T", "fields", "-E", "separator=\t", "-E", "occurrence=f"] +
             sum((["-e", f] for f in TS_FIELDS), []), check_rc=False)
    if r.returncode != 0:
        raise t.TestFailure("tshark on %s: %s" % (pcap, r.stderr[-1000:]))
    rows = []
    for line in r.stdout.splitlines():
        v = line.split("\t")
        v += [""] * (len(TS_FIELDS) - len(v))
        rows.append(dict(zip(TS_FIELDS, v)))
    return rows


def ctl_msg(row):
    """(type, incarnation, client_qpn, server_qpn) of a RECONNECT (1) or
    RECONNECTED (2) datagram, or None."""
    p = row["udp.payload"].replace(":", "")
    if not p:
        return None
    b = bytes.fromhex(p)
    if len(b) < 24 or b[:4] != b"SWQP":
        return None
    return (b[5], int.from_bytes(b[8:12], "big"), int.from_bytes(b[12:16], "big"),
            int.from_bytes(b[16:20], "big"))


def _i(x):
    return int(x, 0) if x else None


def done_psn(row):
    """The newest PSN a response says is done: its own, but for a NAK
    (RNR or sequence error), which names the PSN not executed and
    completes the one before; swordd's own asks are RNR NAKs."""
    psn = _i(row["infiniband.bth.psn"])
    syn = _i(row.get("infiniband.aeth.syndrome") or "")
    if syn is not None and (syn >> 5) & 3:
        return (psn - 1) & 0xffffff
    return psn


def psn_rel(p, base):
    """p relative to base in 24-bit serial arithmetic (-2^23 .. 2^23-1)."""
    d = (p - base) & 0xffffff
    return d - (1 << 24) if d >= (1 << 23) else d


def request_psns(pcap):
    """{server QPN: set of request PSNs} over the whole capture."""
    out = {}
    for row in tshark_rows(pcap):
        if row["ip.dst"] == e2e.SERVER_IP and row["infiniband.bth.opcode"] and \
                _i(row["infiniband.bth.opcode"]) not in RESPONSES:
            out.setdefault(_i(row["infiniband.bth.destqp"]), set()).add(
                _i(row["infiniband.bth.psn"]))
    return out


def lane_owners(client_pcap, server_pcap):
    """g of the client QPs whose server QP was a lane at some time: it
    carried request PSNs its own client never sent (riders' requests
    stitched in; in pass-through the server sees only PSNs its client
    sent).  roce-peer's server QPN is 0x100 + g.  A re-created owner
    reuses its PSNs in each life, which can cover the riders' lane PSNs:
    it may be missed then (role_note says so)."""
    cli, srv = request_psns(client_pcap), request_psns(server_pcap)
    return sorted(q - 0x100 for q, ps in srv.items() if len(ps - cli.get(q, set())) > 2)


def judge_server_side(pcap):
    """I2 per server QP and life: {"holes", "bad_dups", "detail"}."""
    lives = {}          # server qpn -> {"base", "seen": {rel: signature}}
    per_qp = {}         # server qpn -> requests (the lanes carry the most)
    bad_dups, holes, pokes, detail = 0, 0, 0, []

    def close(qpn):
        nonlocal holes
        lf = lives.pop(qpn, None)
        if not lf or not lf["seen"]:
            return
        rels = lf["seen"].keys()
        lo, hi = min(rels), max(rels)
        miss = (hi - lo + 1) - len(lf["seen"])
        if miss:
            holes += miss
            if len(detail) < 8:
                detail.append("server QP %#x: %d request PSNs never seen in %d..%d" %
                              (qpn, miss, lo, hi))

    for row in tshark_rows(pcap):
        m = ctl_msg(row) if _i(row["udp.dstport"]) == e2e.CTL_PORT else None
        if m:
            if m[0] == 1 and row["ip.dst"] == e2e.SERVER_IP:   # RECONNECT reaches the server
                close(m[3])
            continue
        if row["ip.dst"] != e2e.SERVER_IP or not row["infiniband.bth.opcode"]:
            continue
        op = _i(row["infiniband.bth.opcode"])
        if op in RESPONSES:
            continue
        qpn, psn = _i(row["infiniband.bth.destqp"]), _i(row["infiniband.bth.psn"])
        per_qp[qpn] = per_qp.get(qpn, 0) + 1
        if op == 10 and row["infiniband.reth.dmalen"] and \
                _i(row["infiniband.reth.dmalen"]) == 0 and _i(row["infiniband.reth.va"]) == 0:
            # swordd's ask (lib/serializer/ser_ask.c): a zero-length WRITE
            # to VA 0, 2^22 PSNs ahead, that the server NAKs as a sequence
            # error and never executes (roce-peer never sends one); counted
            # apart, not as a gap
            pokes += 1
            continue
        sig = (op, row["infiniband.reth.va"], row["infiniband.atomiceth.swapdt"],
               row["infiniband.atomiceth.cmpdt"], row["infiniband.payload"])
        lf = lives.setdefault(qpn, {"base": psn, "seen": {}})
        rel = psn_rel(psn, lf["base"])
        old = lf["seen"].get(rel)
        if old is None:
            lf["seen"][rel] = sig
        elif old != sig:
            bad_dups += 1
            if len(detail) < 8:
                detail.append("server QP %#x PSN %#x (frame %s): a duplicate that is not "
                              "the same request (%r vs %r)" % (qpn, psn, row["frame.number"],
                                                              sig[:4], old[:4]))
    for q in list(lives):
        close(q)
    return {"holes": holes, "bad_dups": bad_dups, "pokes": pokes, "detail": detail,
            "per_qp": per_qp}


def server_response_order(pcap):
    """{(client qpn, life): [(psn, msn), ...]}: the responses the server
    sent each client QP, in the order it sent them, per life of that QP
    (the server's RECONNECTED starts the next, as on the client side: the
    server may still answer the old QP after the RECONNECT reached it)."""
    life, out = {}, {}
    for row in tshark_rows(pcap):
        m = ctl_msg(row) if e2e.CTL_PORT in (_i(row["udp.srcport"]), _i(row["udp.dstport"])) \
            else None
        if m:
            if m[0] == 2 and row["ip.src"] == e2e.SERVER_IP:
                life[m[2]] = life.get(m[2], 0) + 1
            continue
        if row["ip.dst"] != e2e.CLIENT_IP or not row["infiniband.bth.opcode"] or \
                _i(row["infiniband.bth.opcode"]) not in RESPONSES:
            continue
        q = _i(row["infiniband.bth.destqp"])
        out.setdefault((q, life.get(q, 0)), []).append(
            (done_psn(row), _i(row["infiniband.aeth.msn"])))
    return out


def server_sent_back(order, key, field, val, hi):
    """Did the server itself send a response with this PSN (field 0) or
    MSN (field 1) after one at or beyond hi, in that life?  Then the
    client seeing it go back is the server's doing (its fault injection
    reorders), passed on, not swordd's."""
    top = None
    for r in order.get(key, ()):
        if r[field] is None:
            continue
        if r[field] == val and top is not None and psn_rel(top, hi) >= 0:
            return True
        if top is None or psn_rel(r[field], top) > 0:
            top = r[field]
    return False


def judge_client_side(pcap, server_order=None):
    """I3 per client QP and life: {"msn_back", "psn_back", "detail"}.
    psn_back includes ACKs and atomic ACKs for a PSN past every request the
    client sent in that life.

    With server_order (server_response_order of the server-side capture),
    a step back the server itself made in that life (the same PSN or MSN
    sent after one at or beyond where the client stood) is not counted
    but returned apart ("server_back"), event by event.

    A response whose PSN or MSN goes back is an answer to a retransmission
    (the responder replays a READ or atomic with its original PSN and MSN)
    when the client had sent that PSN more than once before it; otherwise
    it is counted.  Requests name the server QP: roce-peer pairs client QP
    0x10000+g with server QP 0x100+g, and the client-side capture shows the
    client's own view also through swordd's remapping."""
    st = {}             # client qpn -> {"max_psn", "msn"}
    sent = {}           # (server qpn, psn) -> requests the client sent
    top = {}            # server qpn -> highest request PSN sent in this life
    life = {}           # client qpn -> lives begun (RECONNECTED seen)
    msn_back, psn_back, ahead, server_back, detail = 0, 0, 0, 0, []
    per_qp = {}         # client qpn -> steps counted

    def servers(qpn, field, val, hi):
        nonlocal server_back
        if server_order is None or \
                not server_sent_back(server_order, (qpn, life.get(qpn, 0)), field, val, hi):
            return False
        server_back += 1
        return True
    for row in tshark_rows(pcap):
        m = ctl_msg(row) if e2e.CTL_PORT in (_i(row["udp.srcport"]), _i(row["udp.dstport"])) \
            else None
        if m:
            if m[0] == 2:       # RECONNECTED: the client QP starts a new life
                st.pop(m[2], None)
                life[m[2]] = life.get(m[2], 0) + 1
                for k in [k for k in sent if k[0] == m[3]]:
                    del sent[k]
                top.pop(m[3], None)
            continue
        if not row["infiniband.bth.opcode"]:
            continue
        op = _i(row["infiniband.bth.opcode"])
        psn = _i(row["infiniband.bth.psn"])
        if row["ip.dst"] == e2e.SERVER_IP and op not in RESPONSES:
            k = (_i(row["infiniband.bth.destqp"]), psn)
            sent[k] = sent.get(k, 0) + 1
            if k[0] not in top or psn_rel(psn, top[k[0]]) > 0:
                top[k[0]] = psn
            continue
        if row["ip.dst"] != e2e.CLIENT_IP or op not in RESPONSES:
            continue
        qpn = _i(row["infiniband.bth.destqp"])
        sq = 0x100 + (qpn - 0x10000)
        retx = sent.get((sq, psn), 0) >= 2
        if op in (17, 18) and sq in top and psn_rel(psn, top[sq]) > 0:
            # an ACK or atomic ACK for a PSN this life never sent (an old
            # life's answer, or another connection's): counted once, and
            # not taken as the QP's new high mark
            ahead += 1
            per_qp[qpn] = per_qp.get(qpn, 0) + 1
            if len(detail) < 8:
                detail.append("client QP %#x: %s at PSN %#x, past the last request sent "
                              "in this life %#x (frame %s)" % (
                                  qpn, "ACK" if op == 17 else "atomic ACK", psn, top[sq],
                                  row["frame.number"]))
            continue
        s = st.setdefault(qpn, {"max_psn": done_psn(row), "msn": None})
        msn = _i(row["infiniband.aeth.msn"])
        if msn is not None:
            if s["msn"] is not None and psn_rel(msn, s["msn"]) < 0 and not retx and \
                    not servers(qpn, 1, msn, s["msn"]):
                msn_back += 1
                per_qp[qpn] = per_qp.get(qpn, 0) + 1
                if len(detail) < 8:
                    detail.append("client QP %#x: MSN %d after %d, PSN %#x never resent "
                                  "(frame %s)" % (qpn, msn, s["msn"], psn, row["frame.number"]))
            if s["msn"] is None or psn_rel(msn, s["msn"]) > 0:
                s["msn"] = msn
        done = done_psn(row)
        rel = psn_rel(done, s["max_psn"])
        if rel > 0:
            s["max_psn"] = done
        elif rel < 0 and not retx and not servers(qpn, 0, done, s["max_psn"]):
            psn_back += 1
            per_qp[qpn] = per_qp.get(qpn, 0) + 1
            if len(detail) < 8:
                detail.append("client QP %#x: response PSN %#x after %#x, never resent "
                              "(frame %s)" % (qpn, psn, s["max_psn"], row["frame.number"]))
    return {"msn_back": msn_back, "psn_back": psn_back + ahead, "server_back": server_back,
            "per_qp": per_qp, "detail": detail}


def judge_i3(pcaps, server_faults, lanes_used):
    """I3 of a run from its (client-side, server-side) captures: the
    client's steps back that the server did not make itself.  Each step
    is matched to the server's own frames (server_sent_back) in a run
    where no request rode a lane.  Where some did (lanes_used: swordd
    bound requests to lanes), the server names lane PSNs to the lanes'
    owners and answers the riders through them, so neither can be
    matched: the run's count less the server's own count of steps back
    (only where the server has faults), as before 2026-11-28 (off by one
    both ways in re-creation cells with faults)."""
    if lanes_used:
        cli = judge_client_side(pcaps[0])
        own = judge_client_side(pcaps[1]) if server_faults else {"msn_back": 0, "psn_back": 0}
        i3 = max(0, cli["msn_back"] + cli["psn_back"] - own["msn_back"] - own["psn_back"])
    else:
        cli = judge_client_side(pcaps[0], server_response_order(pcaps[1]))
        i3 = cli["msn_back"] + cli["psn_back"]
    return {"i3": i3, "i3_detail": cli["detail"], "i3_server_back": cli.get("server_back", 0),
            "i3_msn_back": cli["msn_back"], "i3_psn_back": cli["psn_back"]}


# ---------------------------------------------------------------------------
# one run

def settle_captures(paths, timeout=60):
    """tcpdump on a loaded machine writes behind the wire: wait until no
    capture file grew for a second before stopping them (a capture cut
    short would show holes and lanes that were not)."""
    last, still, deadline = None, 0, time.monotonic() + timeout
    while time.monotonic() < deadline and still < 4:
        now = [os.path.getsize(p) if os.path.exists(p) else 0 for p in paths]
        still = still + 1 if now == last else 0
        last = now
        time.sleep(0.25)


def capture_missed(pcap):
    """Frames tcpdump's filter took but it did not write (its own report)."""
    try:
        txt = open(pcap + ".err").read()
    except OSError:
        return 0
    cap = re.search(r"(\d+) packets? captured", txt)
    rec = re.search(r"(\d+) packets? received by filter", txt)
    drop = re.search(r"(\d+) packets? dropped by kernel", txt)
    n = int(drop.group(1)) if drop else 0
    if cap and rec:
        n += max(0, int(rec.group(1)) - int(cap.group(1)))
    return n

def measure(sjs, cjs, rcs, workload, locks):
    m = {h: 0 for h in HARMS}
    m["qp_err"] = sum(c["qp_errors"] for c in cjs)
    m["cli_fail"] = sum(1 for rc in rcs if rc != 0)
    m["stalled"] = sum(1 for c in cjs if c.get("_timed_out"))
    m["storm"] = sum(1 for c in cjs if c.get("retry_storm"))
    m["viol"] = sum(c["violations"] for c in cjs)
    m["ops"] = sum(c["ops"] for c in cjs)
    m["reconnects"] = sum(c["reconnects"] for c in cjs)
    m["errors"] = [e for c in cjs for e in c["errors"]][:6]
    if workload in ("sherman-lock", "rcuckoo-lock"):
        words = sjs["lock_words"][:sjs["_dumped_words"]]
        recs = sjs["records"]
        m["leaked"] = sum(1 for w in words if w) + sum(1 for r in recs[:locks] if r[0])
        for i in range(locks):
            cs = sum(c["cs_per_lock"][i] for c in cjs)
            doubt = sum(c["cs_in_doubt_per_lock"][i] for c in cjs)
            m["lost"] += recs[i][1] < cs
            m["dbl"] += recs[i][1] > cs + doubt
            m["cnt_ne"] += recs[i][1] != cs
    if workload == "cas-bench":
        n = sjs["bench_counter"]
        origs = [o for c in cjs for o in c.get("faa_origs", [])]
        m["faa_ne"] = int(n != sum(c["faa_total"] for c in cjs))
        m["faa_dup"] = len(origs) - len(set(origs))
        m["faa_out"] = sum(1 for o in set(origs) if o >= n)
        m["faa_miss"] = n - sum(1 for o in set(origs) if o < n)
        m["faa_n"] = n
        if not all(c.get("faa_origs_complete", False) for c in cjs):
            m["faa_note"] = "a client's faa_origs incomplete (or roce-peer without them)"
    return m


def one_run(cell, baseline, a, d):
    """Run the cell's workload through swordd, with the cell's features or
    (baseline) in pass-through; returns the measures."""
    wl = WORKLOADS[cell.wl]
    locks = 130 if wl == "rcuckoo-lock" else 4
    accel = cell.accel and not baseline
    lanes = 0 if baseline else cell.lanes
    sets = list(a.set)
    if lanes and cell.oob == "on":
        sets.append("remap.out_of_band=on")
    os.makedirs(d, exist_ok=True)
    t._tag = "%d%02d" % (os.getpid(), one_run.n % 100)   # fresh names per run
    one_run.n += 1
    # oob=default: the file leaves [remap] out_of_band at swordd's default
    # [atomic] out_of_band: the same promise as [remap]'s (module doc)
    aoob = cell.oob == "on" if cell.lanes else cell.recreate == "none"
    topo = e2e.Topology("swordd", accel=accel, pcap=True, d=d, remap=bool(lanes),
                        lanes=max(lanes, 1), swordd_set=sets, ctl_pcap=True,
                        out_of_band=bool(lanes) and cell.oob == "on",
                        atomic_out_of_band=aoob)
    recon_qps = {"none": None, "owners": "0-%d" % (a.qps - 1),
                 "riders": "%d-65535" % a.qps, "both": "0-65535"}[cell.recreate]
    m = {"dir": d, "recreated": recon_qps or ""}
    st = None
    try:
        sjs, cjs, rcs = e2e.run(
            topo, workload=wl, clients=a.clients, qps=a.qps, ops=a.ops, locks=locks,
            faults=None, client_faults=FAULTS if cell.faults == "clients" else None,
            server_faults=FAULTS if cell.faults == "server" else None,
            initial_psn=a.initial_psn, fault_seed=a.seed,
            reconnect_every=a.reconnect_every if recon_qps else None,
            reconnect_qps=recon_qps, atomic_unit=cell.aunit or None,
            client_timeout=a.client_timeout, stall_ok=True, lead_ops=2 * a.qps,
            retry_storm=a.retry_storm)
        settle_captures([sn.path for sn in topo.sniffers])
        pcaps = topo.stop_sniffers()
        m["capture_missed"] = sum(capture_missed(pc) for pc in pcaps)
        try:
            st = topo.stop_swordd()
        except t.TestFailure as e:
            m["swordd_error"] = str(e)
        m.update(measure(sjs, cjs, rcs, wl, locks))
        helpers = os.environ.get("TEST_HELPERS") or os.path.join(e2e.HERE, "..", "helpers")
        r = t.sh(["/usr/bin/python3", os.path.join(helpers, "validate_pcap.py")] + pcaps,
                 check_rc=False)
        m["i1"] = len([ln for ln in r.stdout.splitlines() if ": " in ln and ".pcap" in ln]) \
            if r.returncode else 0
        if r.returncode and not m["i1"]:
            m["i1"] = 1
        m["i1_note"] = (r.stdout.strip().splitlines() or [""])[-1][:200]
        srv = judge_server_side(pcaps[1])
        # the lanes' owners (lanes that closed and opened again count too)
        m["lane_owners"] = lane_owners(pcaps[0], pcaps[1]) if lanes else []
        m.update(judge_i3(pcaps, cell.faults == "server",
                          bool((st or {}).get("fn_remap_bound", 0))))
        m["i2"] = srv["holes"] + srv["bad_dups"]
        m["i2_detail"] = srv["detail"]
        m["i2_holes"], m["i2_bad_dups"] = srv["holes"], srv["bad_dups"]
        m["pokes"] = srv["pokes"]
    finally:
        if st is None and topo.sw and topo.sw.alive():
            try:
                st = topo.stop_swordd()
            except Exception as e:  # noqa: BLE001 -- reported, not fatal
                m.setdefault("swordd_error", str(e))
        t.run_cleanups()
    st = st or {}
    m["rewritten"] = st.get("rewritten", 0)
    m["bound"] = st.get("fn_remap_bound", 0)
    m["lanes_opened"] = st.get("fn_remap_lanes_opened", 0)
    m["fn"] = {k: v for k, v in st.items() if k.startswith("fn_") and v}
    return m


one_run.n = 0


def judge(cell, feat, base):
    """I9: every harm no larger with the features than in the baseline; I1
    absolute.  Returns (ok, [reasons])."""
    why = []
    for h in HARMS:
        if feat.get(h, 0) > base.get(h, 0):
            why.append("%s %d > baseline %d" % (h, feat[h], base.get(h, 0)))
    if feat.get("i1"):
        why.append("I1: %s" % feat.get("i1_note"))
    if "swordd_error" in feat:
        why.append("swordd: %s" % feat["swordd_error"][:120])
    return not why, why


def role_note(cell, feat, qps):
    """Did the run re-create what the cell meant to?  (Which QPs own the
    lanes is the run's doing; client 0 starts first to make it its own.)"""
    owners = set(feat.get("lane_owners", []))
    if not cell.lanes or cell.recreate in ("none", "both") or not owners:
        return None
    if feat.get("fn", {}).get("fn_remap_lanes_closed"):
        # a re-created owner closes its lane; its PSNs, reused by the new
        # life, then hide it from lane_owners: no claim
        return "note: %d lane(s) closed; lanes at the end owned by g=%s" % (
            feat["fn"]["fn_remap_lanes_closed"], sorted(owners))
    mine = set(range(qps))
    if cell.recreate == "owners" and not owners & mine:
        return "note: lanes owned by g=%s, not client 0's: no owner was re-created" % sorted(owners)
    if cell.recreate == "riders" and owners - mine:
        return "note: lanes owned by g=%s: some re-created QPs were owners" % sorted(owners)
    return None


# ---------------------------------------------------------------------------

def fmt_pair(f, b):
    return "%d/%d" % (f, b)


TABLE_HEAD = ("| cell | verdict | ops f/b | QP errors f/b | failed clients f/b | "
              "leaked locks f/b | counters ok f/b | I2 (tshark) f/b | I3 (tshark) f/b | "
              "I1 scapy | rewritten | bound | lanes | lane owners (g) | why |")


def table_row(name, res):
    if res["verdict"] in ("REFUSED", "ERROR"):
        return "| %s | %s | | | | | | | | | | | | | %s |" % (
            name, res["verdict"], res["why"][0].replace("|", "/")[:200])
    f, b = res["feat"], res["base"]

    def ctr(m):
        bad = m["lost"] + m["dbl"] + m["cnt_ne"] + m["faa_ne"] + m["faa_dup"] + \
            m["faa_out"] + m["faa_miss"] + m["viol"]
        return "ok" if not bad else "BAD(%d)" % bad
    return "| %s | %s | %d/%d | %s | %s | %s | %s/%s | %s | %s | %s | %d | %d | %d | %s | %s |" % (
        name, res["verdict"], f["ops"], b["ops"], fmt_pair(f["qp_err"], b["qp_err"]),
        fmt_pair(f["cli_fail"] + f["stalled"], b["cli_fail"] + b["stalled"]),
        fmt_pair(f["leaked"], b["leaked"]), ctr(f), ctr(b),
        fmt_pair(f["i2"], b["i2"]), fmt_pair(f["i3"], b["i3"]),
        "ok" if not f["i1"] and not b["i1"] else "BAD %d/%d" % (f["i1"], b["i1"]),
        f["rewritten"], f["bound"], f["lanes_opened"],
        ",".join(map(str, f.get("lane_owners", []))) or "-",
        "; ".join(res["why"]).replace("|", "/")[:300])


def table_lines(results):
    return [TABLE_HEAD, "|" + "---|" * TABLE_HEAD.count(" | ") + "---|"] + \
        [table_row(n, r) for n, r in results.items()]


def body():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--short", action="store_true", help="the CI selection")
    ap.add_argument("--only", action="append", default=[],
                    help="cells whose name matches REGEX (repeatable; any)")
    ap.add_argument("--cell", action="append", default=[], help="exact cell name (repeatable)")
    ap.add_argument("--workloads", nargs="+", default=list(WORKLOADS), choices=list(WORKLOADS))
    ap.add_argument("--features", nargs="+", default=list(FEATURES), choices=list(FEATURES))
    ap.add_argument("--recreate", nargs="+", default=list(RECREATE), choices=RECREATE)
    ap.add_argument("--faults", nargs="+", default=list(FAULT_SIDES), choices=FAULT_SIDES)
    ap.add_argument("--aunit", nargs="+", type=int, default=list(AUNIT))
    ap.add_argument("--oob", nargs="+", default=["on", "default"], choices=["on", "default"])
    ap.add_argument("--list", action="store_true", help="print the selected cells and exit")
    ap.add_argument("--clients", type=int, default=3)
    ap.add_argument("--qps", type=int, default=2)
    ap.add_argument("--ops", type=int, default=40)
    ap.add_argument("--reconnect-every", type=int, default=10)
    ap.add_argument("--initial-psn", type=int, default=None,
                    help="every QP at this PSN (Sherman: 3185); default: roce-peer's "
                    "per-QP PSNs (same-PSN QPs are never remapped out of band)")
    ap.add_argument("--seed", type=int, default=1000, help="fault seed (both runs)")
    ap.add_argument("--client-timeout", type=int, default=60,
                    help="a client still running then is stopped and counted stalled (a lock "
                    "leaked by a dead QP makes the others spin on it for ever)")
    ap.add_argument("--retry-storm", type=int, default=5000,
                    help="a client stops after that many consecutive failed acquires "
                    "(counted: storm); keeps runs with a leaked lock short")
    ap.add_argument("--set", action="append", default=[],
                    help="extra swordd --set SECTION.KEY=VALUE for the featured runs "
                    "and the baseline (repeatable)")
    ap.add_argument("--table", help="write the table as markdown to FILE")
    ap.add_argument("--json", help="write every measure as JSON to FILE")
    ap.add_argument("--out", help="keep captures and logs under DIR (default: removed)")
    ap.add_argument("--refused", choices=["fail", "skip"], default="fail",
                    help="a cell swordd refuses to configure: counts as a failure, or "
                    "(skip) exit 77 when nothing else failed")
    a, _ = ap.parse_known_args()
    oob_sets = [s for s in a.set if s.startswith("remap.out_of_band")]
    if oob_sets:
        raise t.TestFailure("--set remap.out_of_band: the cells choose it (oob=on/default)")

    cells = [c for c in all_cells() if c.wl in a.workloads and c.feat in a.features and
             c.recreate in a.recreate and c.faults in a.faults and c.aunit in a.aunit and
             (c.oob is None or c.oob in a.oob)]
    if a.short:
        by = {c.name: c for c in all_cells()}
        cells = [by[n] for n in SHORT]
    if a.cell:
        cells = [parse_cell(n) for n in a.cell]
    if a.only:
        cells = [c for c in cells if any(re.search(r, c.name) for r in a.only)]
    if a.list:
        for c in cells:
            print(c.name)
        sys.exit(0)
    t.require_root()
    t.log("matrix: %d cells, 2 runs each (%d clients x %d QPs, %d ops per QP)" %
          (len(cells), a.clients, a.qps, a.ops))
    out = a.out or t.tmpdir()
    results = {}
    refusals = {}
    for k, cell in enumerate(cells):
        t0 = time.monotonic()
        sets = list(a.set) + (["remap.out_of_band=on"] if cell.oob == "on" else [])
        key = tuple(sets)
        if a.short and cell.oob == "default":
            # the CI expects the shipped default (out_of_band = off) to keep
            # swordd out of the way of re-created out-of-band QPs; a swordd
            # without the key remaps them (the known bug), so such a cell is
            # not run there
            key = tuple(sets) + ("probe:remap.out_of_band=off",)
            if key not in refusals:
                why = e2e.check_swordd_config(remap=True, swordd_set=sets + [
                    "remap.out_of_band=off"])
                refusals[key] = why and ("swordd has no [remap] out_of_band, so its default "
                                         "remaps out-of-band QPs; this CI cell expects the "
                                         "safe default off: %s" % why)
        if key not in refusals:
            refusals[key] = e2e.check_swordd_config(accel=cell.accel, remap=bool(cell.lanes),
                                                    lanes=max(cell.lanes, 1), swordd_set=sets)
        if refusals[key]:
            results[cell.name] = {"verdict": "REFUSED", "why": [refusals[key]]}
            t.log("[%d/%d] %s: REFUSED: %s" % (k + 1, len(cells), cell.name, refusals[key]))
            continue
        d = os.path.join(out, re.sub(r"[^A-Za-z0-9=+.-]", "_", cell.name))
        try:
            feat = one_run(cell, False, a, os.path.join(d, "features"))
            base = one_run(cell, True, a, os.path.join(d, "baseline"))
        except t.TestFailure as e:
            t.run_cleanups()
            results[cell.name] = {"verdict": "ERROR", "why": [str(e)[:500]]}
            t.log("[%d/%d] %s: ERROR (the run could not be judged): %s" %
                  (k + 1, len(cells), cell.name, e))
            continue
        ok, why = judge(cell, feat, base)
        note = role_note(cell, feat, a.qps)
        if note:
            why.append(note)
        if feat.get("pokes"):
            why.append("note: %d zero-length WRITEs 2^22 ahead (swordd's ask, "
                       "ser_ask.c), not counted as I2 gaps" % feat["pokes"])
        for side, mm in (("features", feat), ("baseline", base)):
            if mm.get("capture_missed"):
                why.append("note: the %s run's captures miss %d frames (tcpdump): I2/I3 "
                           "and the lane owners are judged on what they hold" %
                           (side, mm["capture_missed"]))
        results[cell.name] = {"verdict": "pass" if ok else "FAIL", "why": why,
                              "feat": feat, "base": base}
        t.log("[%d/%d] %s: %s in %.0fs %s" % (k + 1, len(cells), cell.name,
                                              results[cell.name]["verdict"],
                                              time.monotonic() - t0, "; ".join(why)))
        for side, m in (("features", feat), ("baseline", base)):
            for ln in m.get("i2_detail", []) + m.get("i3_detail", []) + m.get("errors", []):
                t.log("    %s: %s" % (side, ln))
        if a.table and k + 1 < len(cells):
            # the table so far: a run of hours stopped part way still
            # leaves every cell it judged
            with open(a.table, "w") as f:
                f.write("\n".join(table_lines(results)) + "\n\n(%d of %d cells so far)\n" %
                        (k + 1, len(cells)))
    lines = table_lines(results)
    n_fail = sum(1 for r in results.values() if r["verdict"] == "FAIL")
    n_err = sum(1 for r in results.values() if r["verdict"] == "ERROR")
    n_ref = sum(1 for r in results.values() if r["verdict"] == "REFUSED")
    n_pass = sum(1 for r in results.values() if r["verdict"] == "pass")
    verdict = ("I9 BROKEN" if n_fail else "NOT ALL JUDGED" if n_err else
               "I9 holds in every cell run" + (" (refused cells not run)" if n_ref else ""))
    summary = ("%s: %d cells: %d pass, %d FAIL (I9 broken), %d ERROR (not judged), "
               "%d REFUSED by swordd's configuration" % (verdict, len(results), n_pass,
                                                         n_fail, n_err, n_ref))
    lines += ["", "(f/b: with the cell's features / baseline: the same run through swordd "
              "in pass-through)", "", "**%s**" % summary]
    print("\n".join(lines))
    if a.table:
        with open(a.table, "w") as f:
            f.write("\n".join(lines) + "\n")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1, default=str)
    if n_fail or n_err:
        raise t.TestFailure(summary)
    if n_ref and a.refused == "fail":
        raise t.TestFailure(summary + " (--refused skip to let that pass)")
    if n_ref:
        t.log("SKIP: " + summary)
        t.run_cleanups()
        sys.exit(t.SKIP)


if __name__ == "__main__":
    t.main(body)
