#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Sets up what scif_lend_test needs on a node of make check's VFIO
# cluster (qemu/cluster.sh -I: QEMU's "edu" PCI device on each node):
# binds the edu device (1234:11e8) to scif_lend by driver_override,
# tells the test whether the kernel has a reset method for it
# (reset_method empty: none, so a returned function becomes dirty), runs
# scif_lend_test on both nodes at once, then the kernel calls from a
# kernel client (scif_kapi_test.ko lend=1: list, borrow, info, return,
# and a kept borrow whose lost() must be called with -EREMOTEIO when the
# function is unbound), and unbinds it again.  A node without the device
# or the module is a failed setup, not a skip.
fail() {
	echo "TAP version 13"
	echo "1..1"
	echo "not ok 1 lend_setup # $*"
	exit 1
}

dev=
for d in /sys/bus/pci/devices/*; do
	if [ "$(cat "$d/vendor")" = 0x1234 ] && [ "$(cat "$d/device")" = 0x11e8 ]; then
		dev=$d
		break
	fi
done
[ -n "$dev" ] || fail "no edu device (1234:11e8)"
bdf=${dev##*/}
[ -e "$dev/driver" ] && echo "$bdf" > "$dev/driver/unbind"
echo scif_lend > "$dev/driver_override"
echo "$bdf" > /sys/bus/pci/drivers_probe
drv=$(readlink "$dev/driver")
[ "${drv##*/}" = scif_lend ] || fail "$bdf bound to '${drv##*/}', not scif_lend"
methods=$(cat "$dev/reset_method" 2>/dev/null)
reset=0
[ -n "$methods" ] && reset=1
echo "# $bdf bound to scif_lend; reset_method: '${methods}'"
SCIF_LEND_BDF=$bdf SCIF_LEND_RESET=$reset ./scif_lend_test
rc=$?

# bound again: a fresh function (the test may leave it dirty)
rebind() {
	[ -e "$dev/driver" ] && echo "$bdf" > "$dev/driver/unbind"
	echo "$bdf" > /sys/bus/pci/drivers_probe
}
kapi=${SCIF_KAPI_MODULE:-/modules/extra/scif_kapi_test.ko}
dbg=/sys/kernel/debug/scif_kapi_test
rebind
if ! insmod "$kapi" lend=1; then
	echo "not ok 100 kapi_lend_load # insmod $kapi lend=1 failed"
	rc=1
else
	grep -E "^(not )?ok " "$dbg/results"
	grep -q "^not ok" "$dbg/results" && rc=1
	rebind
	lost=none
	if echo 1 > "$dbg/borrow"; then
		echo "$bdf" > "$dev/driver/unbind"
		lost=$(cat "$dbg/lost")
	fi
	if [ "$lost" = "1 -121" ]; then
		echo "ok 101 kapi_dev_lost_withdrawn"
	else
		echo "not ok 101 kapi_dev_lost_withdrawn # lost() calls and why: $lost, want '1 -121'"
		rc=1
	fi
	rmmod scif_kapi_test
	rebind
fi
[ -e "$dev/driver" ] && echo "$bdf" > "$dev/driver/unbind"
echo > "$dev/driver_override"

# A function with a reset method: QEMU's NVMe controller (1b36:0010,
# which cluster.sh -I gives each node), lent alone, borrowed and
# returned twice: reset each time, lent again free under the same fdid.
nvme=
for d in /sys/bus/pci/devices/*; do
	if [ "$(cat "$d/vendor")" = 0x1b36 ] && [ "$(cat "$d/device")" = 0x0010 ]; then
		nvme=$d
		break
	fi
done
if [ -z "$nvme" ]; then
	echo "not ok 102 return_reset_free # no NVMe controller (1b36:0010)"
	exit 1
fi
nbdf=${nvme##*/}
[ -e "$nvme/driver" ] && echo "$nbdf" > "$nvme/driver/unbind"
echo scif_lend > "$nvme/driver_override"
echo "$nbdf" > /sys/bus/pci/drivers_probe
methods=$(cat "$nvme/reset_method" 2>/dev/null)
echo "# $nbdf lent; reset_method: '${methods}'"
if [ -z "$methods" ]; then
	echo "not ok 102 return_reset_free # $nbdf has no reset method"
	rc=1
else
	if ! out=$(SCIF_LEND_BDF=$nbdf SCIF_LEND_RESET=1 \
		SCIF_LEND_RESET_ONLY=1 ./scif_lend_test); then
		rc=1
	fi
	echo "$out" | grep -v '^TAP\|^1\.\.'
fi
[ -e "$nvme/driver" ] && echo "$nbdf" > "$nvme/driver/unbind"
echo > "$nvme/driver_override"
exit $rc
