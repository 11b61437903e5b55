#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The KUnit suites of the SCIF core (drivers/misc/scif/scif_kunit.c):
# load scif_kunit.ko, which runs them, and report each case as a TAP line
# "ok N <suite>.<case>".  The module exists only in the test build for a
# kernel with KUnit (the debug kernel); elsewhere this step reports a
# skip.  scif.ko must be loaded and debugfs mounted.
mod=${SCIF_KUNIT_MOD:-/modules/extra/scif_kunit.ko}
# scif_ivshmem.ko of the test build has a suite of its own (signature
# matching), run when it loads: loaded here if it is not loaded already.
ivmod=${SCIF_KUNIT_IV_MOD:-/modules/extra/scif_ivshmem.ko}
dir=${SCIF_KUNIT_DIR:-/sys/kernel/debug/kunit}
tap=/tmp/scif_kunit.tap

echo "TAP version 13"
if [ ! -e "$mod" ]; then
	echo "1..1"
	echo "ok 1 kunit # SKIP no scif_kunit.ko for this kernel (no KUnit)"
	exit 0
fi
if ! insmod "$mod"; then
	echo "1..1"
	echo "not ok 1 kunit # insmod $mod failed"
	exit 1
fi

iv_loaded=
if [ -e "$ivmod" ] && ! grep -q '^scif_ivshmem ' /proc/modules &&
	insmod "$ivmod"; then
	iv_loaded=1
fi

# Indented "ok N case" / "not ok N case" lines are a suite's cases.
for d in "$dir"/scif_*; do
	[ -e "$d/results" ] || continue
	suite=$(basename "$d")
	sed -n 's/^[[:space:]]\{1,\}\(not ok\|ok\) [0-9]\{1,\} \([^ #]*\).*/\1 \2/p' \
		"$d/results" | while read -r verdict name; do
		case $verdict in
		not) echo "not ok - $suite.${name#ok }" ;;
		*) echo "ok - $suite.$name" ;;
		esac
	done
done > "$tap"
rmmod scif_kunit
[ -z "$iv_loaded" ] || rmmod scif_ivshmem
n=$(grep -c '' "$tap")
if [ "$n" -eq 0 ]; then
	echo "1..1"
	echo "not ok 1 kunit # no results under $dir"
	exit 1
fi
echo "1..$n"
awk '{ sub(/ok - /, "ok " NR " "); print }' "$tap"
! grep -q '^not ok' "$tap"
