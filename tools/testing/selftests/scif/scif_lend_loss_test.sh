#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Binds this node's edu device (1234:11e8, which qemu/cluster.sh -I
# gives each node) to scif_lend by driver_override and runs
# scif_lend_loss_test (lend-loss-steps: node 0 drives, node 1's role
# follows its life), with the function's PCI name in SCIF_LEND_BDF and
# in SCIF_LEND_RESET whether the kernel has a reset method for it.  A
# node without the device, or where the bind fails, fails the step.
fail() {
	echo "TAP version 13"
	echo "1..1"
	echo "not ok 1 lend_loss_setup # $*"
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
reset=0
[ -n "$(cat "$dev/reset_method" 2>/dev/null)" ] && reset=1
SCIF_LEND_BDF=$bdf SCIF_LEND_RESET=$reset ./scif_lend_loss_test
rc=$?
[ -e "$dev/driver" ] && echo "$bdf" > "$dev/driver/unbind"
echo > "$dev/driver_override"
exit $rc
