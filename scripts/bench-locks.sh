#!/usr/bin/env bash
# bench-locks.sh — lock throughput against the number of clients, the shape
# of the seed paper's experiment: direct (a veth pair, no swordd),
# swordd pass-through, lock acceleration, acceleration + remapping, each
# through scripts/run.sh (same endpoints, same checks, the memory server's
# modelled atomic unit at run.sh's default unless --atomic-unit says
# otherwise).  Writes the numbers as JSON and draws them (SVG or PNG).
#
#   scripts/bench-locks.sh [--clients "1 2 4 8"] [--repeat N] [--duration SEC]
#       [--locks N] [--atomic-unit RATE | --no-atomic-unit]
#       [--modes direct,passthrough,accel,accel-remap] [--build DIR]
#       [--json FILE] [--plot FILE.svg|FILE.png]
#
# Defaults: clients 1 2 4 8, 3 runs of 5 s per point (about 9 minutes
# here), bench-locks.json and bench-locks.svg in the current directory.
# As root, after scripts/setup.sh (it does not run it).  Exit 1 if a run's
# checks failed (the numbers are still written).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
clients="1 2 4 8"
repeat=3
duration=5
locks=4
modes=direct,passthrough,accel,accel-remap
build="$top/build"
json=bench-locks.json
plot=bench-locks.svg
aunit=()
while [ $# -gt 0 ]; do
	case "$1" in
	--clients) clients=$2; shift ;;
	--repeat) repeat=$2; shift ;;
	--duration) duration=$2; shift ;;
	--locks) locks=$2; shift ;;
	--modes) modes=$2; shift ;;
	--atomic-unit) aunit=(--atomic-unit "$2"); shift ;;
	--no-atomic-unit) aunit=(--no-atomic-unit) ;;
	--build) build=$2; shift ;;
	--json) json=$2; shift ;;
	--plot) plot=$2; shift ;;
	-h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
	*) echo "bench-locks.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
	esac
	shift
done
case "$plot" in *.svg|*.png) ;; *) echo "bench-locks.sh: --plot wants FILE.svg or FILE.png" >&2; exit 2 ;; esac
work=$(mktemp -d /tmp/sword-bench-locks-XXXX)
trap 'rm -rf "$work"' EXIT
rc=0
for n in $clients; do
	echo "== $n client(s): $modes, $repeat run(s) of ${duration}s each"
	"$top/scripts/run.sh" --no-setup --build "$build" --mode "$modes" --clients "$n" \
		--locks "$locks" --repeat "$repeat" --duration "$duration" "${aunit[@]}" \
		--json "$work/$n.json" | sed -n '/mode: median/,$p' || rc=1
	[ -s "$work/$n.json" ] || { echo "bench-locks.sh: no summary for $n clients" >&2; exit 1; }
done
# shellcheck disable=SC2086  # $clients is a list of counts
/usr/bin/python3 - "$work" "$json" "$repeat" "$locks" $clients <<'EOF'
import json, sys
work, out, repeat, locks, ns = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5:]
res = {"repeat": repeat, "locks": locks, "ok": True, "series": {}}
for n in ns:
    with open("%s/%s.json" % (work, n)) as f:
        js = json.load(f)
    res["ok"] = res["ok"] and js["ok"]
    res["atomic_unit"] = js["atomic_unit"]
    for m in js["modes"]:
        res["series"].setdefault(m["mode"], []).append({
            "clients": int(n), "ok": m["ok"], "lock_ops_per_s": m["lock_ops_per_s"],
            "server_atomics_per_s": m["server_atomics_per_s"],
            "ratio_to_passthrough": m["ratio_to_passthrough"]})
with open(out, "w") as f:
    json.dump(res, f, indent=1)
EOF
/usr/bin/python3 "$top/scripts/run_plot.py" --sweep "$json" "$plot"
echo "bench-locks.sh: numbers in $json, picture in $plot"
exit "$rc"
