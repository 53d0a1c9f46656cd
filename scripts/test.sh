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
	# A log left over from an earlier run would report that run's counts
	# (e.g. after a failed rebuild): remove it, and trust meson's exit code.
	log="$b/meson-logs/testlog.json"
	rm -f "$log"
	meson test -C "$b" --print-errorlogs --num-processes 2 "${suites[@]}" "${extra[@]}"
	rc=$?
	if [ ! -s "$log" ]; then
		echo "== $b: meson test exited $rc and wrote no test log (build failed, or no test matched)"
		failed=$((failed + 1)); continue
	fi
	read -r p f s < <("$top/scripts/testlog-count.py" "$log")
	if [ -z "$p" ]; then
		echo "== $b: $log could not be read (written to by another run?): counted as a failure"
		failed=$((failed + 1)); continue
	fi
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "== $b: meson test exited $rc with no failed test in its log: counted as a failure"
		f=1
	fi
	echo "== $b: $p passed, $f failed, $s skipped"
	passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
done

# A skipped test is a test that did not run: count it as a failure so
# nothing is silently skipped.
failed=$((failed + skipped))
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
