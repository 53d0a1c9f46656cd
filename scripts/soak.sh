#!/usr/bin/env bash
# Soak: >= 1M lock operations through swordd with acceleration on, lossy
# links (1% loss, dup, reorder), 4 clients x 4 QPs all at Sherman's initial
# PSN 3185; judged at the end (tests/e2e/soak.py says what and how).
#
#   scripts/soak.sh [--build DIR] [--short] [soak.py options...]
#       --short         30,000 ops: the e2e suite's version (e2e-soak-short)
#       --ops-total N   lock operations (default 1,000,000)
#       --remap         connection remapping on too (--lanes N, default 1)
#       --json FILE     the figures
#
# Needs root (network namespaces, taps) and a build (scripts/setup.sh).
# The long run takes tens of minutes on a 2-core machine.
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$top/build
args=()
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$(realpath -m "$2"); shift ;;
	--short) args+=(--ops-total 30000) ;;
	-h|--help) sed -n '2,14p' "$0"; exit 0 ;;
	*) args+=("$1") ;;
	esac
	shift
done
[ -x "$build/app/swordd/swordd" ] || { echo "soak: no swordd in $build (scripts/setup.sh)" >&2; exit 1; }
export SWORDD=$build/app/swordd/swordd ROCE_PEER=$build/app/roce-peer/roce-peer
export TEST_HELPERS=$top/tests/helpers SOURCE_ROOT=$top BUILD_ROOT=$build PYTHONNOUSERSITE=1
exec /usr/bin/python3 "$top/tests/e2e/soak.py" --progress 30 "${args[@]}"
