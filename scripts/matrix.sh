#!/usr/bin/env bash
# The I9 ("no harm") matrix of issue 29 through the real daemon: every cell
# (workload x swordd features x QP re-creation x faults x atomic unit x
# remap.out_of_band) runs twice with the same seeds, with the features and
# in pass-through, and nothing may be worse with them (tests/e2e/matrix.py
# says what is counted and how).  Prints one table row per cell and a final
# verdict; exits non-zero if any cell breaks I9.
#
#   scripts/matrix.sh [--build DIR] [--short] [--table FILE] [matrix.py options...]
#       --short          the e2e suite's selection (e2e-matrix-short)
#       --table FILE     the table as markdown (default: matrix-DATE.md here)
#       --json FILE      every measure of every run
#       --out DIR        keep the captures and logs of every run
#       --list           the selected cells, nothing run
#       --only REGEX, --cell NAME, --workloads/--features/--recreate/--faults/
#       --aunit/--oob ...  a part of the matrix (see matrix.py --help)
#
# Needs root (network namespaces, taps) and a build (scripts/setup.sh).  The
# full matrix is 360 cells of two runs, about 40 s per cell on a 2-core
# machine: about four hours; take a part with the filters.
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$top/build
table=
args=()
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$(realpath -m "$2"); shift ;;
	--table) table=$(realpath -m "$2"); shift ;;
	-h|--help) sed -n '2,20p' "$0"; exit 0 ;;
	*) args+=("$1") ;;
	esac
	shift
done
[ -x "$build/app/swordd/swordd" ] || { echo "matrix: no swordd in $build (scripts/setup.sh)" >&2; exit 1; }
[ -n "$table" ] || table=$PWD/matrix-$(date +%Y%m%d-%H%M%S).md
export SWORDD=$build/app/swordd/swordd ROCE_PEER=$build/app/roce-peer/roce-peer
export TEST_HELPERS=$top/tests/helpers SOURCE_ROOT=$top BUILD_ROOT=$build PYTHONNOUSERSITE=1
echo "matrix: table -> $table" >&2
exec /usr/bin/python3 "$top/tests/e2e/matrix.py" --table "$table" "${args[@]}"
