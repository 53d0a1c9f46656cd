#!/usr/bin/env bash
# Sets up, builds and runs sword's whole test suite: once on the normal
# build, once on the ASan+UBSan build.  Ends with "N passed, N failed".
#
#   scripts/test.sh [--no-setup] [--no-sanitize] [--suite NAME]... [meson test args]
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
setup=1
sanitize=1
suites=()
extra=()
while [ $# -gt 0 ]; do
	case "$1" in
	--no-setup) setup=0 ;;
	--no-sanitize) sanitize=0 ;;
	--suite) suites+=(--suite "$2"); shift ;;
	-h|--help) sed -n '2,6p' "$0"; exit 0 ;;
	*) extra+=("$1") ;;
	esac
	shift
done

if [ "$setup" -eq 1 ]; then
	args=()
	[ "$sanitize" -eq 1 ] && args+=(--sanitize)
	"$top/scripts/setup.sh" "${args[@]}" || { echo "setup failed"; echo "0 passed, 1 failed"; exit 1; }
fi

builds=("$top/build")
[ "$sanitize" -eq 1 ] && builds+=("$top/build-asan")

passed=0; failed=0; skipped=0
for b in "${builds[@]}"; do
	echo "== meson test -C $b"
	meson test -C "$b" --print-errorlogs --num-processes 2 "${suites[@]}" "${extra[@]}"
	log="$b/meson-logs/testlog.json"
	if [ ! -s "$log" ]; then
		echo "no test log in $b"; failed=$((failed + 1)); continue
	fi
	read -r p f s < <(/usr/bin/python3 - "$log" <<'PY'
import json, sys
p = f = s = 0
for line in open(sys.argv[1]):
    r = json.loads(line).get("result")
    if r in ("OK", "EXPECTEDFAIL"): p += 1
    elif r == "SKIP": s += 1
    else: f += 1
print(p, f, s)
PY
)
	echo "== $b: $p passed, $f failed, $s skipped"
	passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
done

# A skipped test is a test that did not run: count it as a failure so
# nothing is silently skipped.
failed=$((failed + skipped))
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
