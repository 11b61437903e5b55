#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Sets up what scif_lend_test needs on a node of make check's VFIO
# cluster (qemu/cluster.sh -I: QEMU's "edu" PCI device on each node):
# binds the edu device (1234:11e8) to scif_lend by driver_override,
# tells the test whether the kernel has a reset method for it
# (reset_method empty: none, so a returned function becomes dirty), runs
# scif_lend_test on both nodes at once, and unbinds it again.  A node
# without the device is a failed setup, not a skip.
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
[ -e "$dev/driver" ] && echo "$bdf" > "$dev/driver/unbind"
echo > "$dev/driver_override"
exit $rc
