#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ntb-check-standalone.sh [KERNEL...]: the NTB part of make check on its
# own (scripts/ntb-check.sh's ntb_run for each KERNEL, default "6.1 6.12
# debug"), with record/run_test as scripts/check.sh defines them.  Results
# in $BUILD/ntb-check/results.txt; ends with "N passed, N failed, N
# skipped".  CLUSTERS="" leaves out the two-VM ntb_netdev run.  Set
# SCIF_QEMU_LOCK=FILE to share the machine with other QEMU runs.
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$top/build}
CLUSTERS=${CLUSTERS-2}
out=$BUILD/ntb-check
results=$out/results.txt

# shellcheck source=scripts/check-lib.sh
. "$top/scripts/check-lib.sh"

# shellcheck source=scripts/ntb-check.sh
. "$top/scripts/ntb-check.sh"

mkdir -p "$out"
: > "$results"
[ $# -gt 0 ] || set -- 6.1 6.12 debug
for k in "$@"; do
	s=$(date +%s)
	ntb_run "$k"
	echo "ntb-check: $k took $(($(date +%s) - s)) s"
done
passed=$(grep -c '^PASS' "$results")
failed=$(grep -c '^FAIL' "$results")
skipped=$(grep -c '^SKIP' "$results")
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
