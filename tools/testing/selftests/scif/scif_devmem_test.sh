#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Sets up what scif_devmem_test needs on a node of make check's VFIO
# cluster (qemu/cluster.sh -I: QEMU's NVMe controller, 1b36:0010, with
# a 1 MiB controller memory buffer in BAR 2): binds the controller to
# vfio-pci by driver_override, keeps it out of runtime suspend (vfio-pci
# puts an idle function in D3hot, where QEMU stops decoding its BARs),
# names a function bound to another driver for the EBUSY check, runs
# scif_devmem_test (or the program SCIF_DEVMEM_PROG names:
# scif_stage_devmem.sh) and unbinds the controller again.  A kernel without
# VFIO (the debug kernel, lend-steps) binds it to scif_lend instead, the
# other driver SCIF_REG_PCI accepts.  A node without the controller is
# a failed setup, not a skip.
fail() {
	echo "TAP version 13"
	echo "1..1"
	echo "not ok 1 devmem_setup # $*"
	exit 1
}

ex=/modules/extra
mods=${VFIO_MODULES:-irqbypass vfio vfio_iommu_type1 vfio_virqfd vfio-pci-core vfio-pci}
for m in $mods; do
	grep -q "^$(echo "$m" | tr - _) " /proc/modules && continue
	[ -e "$ex/$m.ko" ] || continue
	insmod "$ex/$m.ko" || fail "insmod $m"
done
dev=
other=
for d in /sys/bus/pci/devices/*; do
	if [ "$(cat "$d/vendor")" = 0x1b36 ] && [ "$(cat "$d/device")" = 0x0010 ]; then
		dev=$d
	elif [ -z "$other" ] && [ -e "$d/driver" ]; then
		drv=$(readlink "$d/driver")
		case ${drv##*/} in
		vfio-pci|scif_lend) ;;
		*) other=${d##*/} ;;
		esac
	fi
done
[ -n "$dev" ] || fail "no NVMe controller (1b36:0010)"
bdf=${dev##*/}
want=vfio-pci
[ -d /sys/bus/pci/drivers/vfio-pci ] || want=scif_lend
[ -e "$dev/driver" ] && echo "$bdf" > "$dev/driver/unbind"
echo "$want" > "$dev/driver_override"
echo "$bdf" > /sys/bus/pci/drivers_probe
drv=$(readlink "$dev/driver")
[ "${drv##*/}" = "$want" ] || fail "$bdf bound to '${drv##*/}', not $want"
# What a VFIO user's open would do: the function awake, decoding its BARs.
echo on > "$dev/power/control"
echo 1 > "$dev/enable"
echo "# $bdf bound to $want, enabled: $(cat "$dev/enable"), power $(cat "$dev/power_state" 2>/dev/null); $other for EBUSY"
# shellcheck disable=SC2086 # the program's arguments, one word each
SCIF_DEVMEM_BDF=$bdf SCIF_DEVMEM_OTHER=$other "./${SCIF_DEVMEM_PROG:-scif_devmem_test}" $SCIF_DEVMEM_ARGS
rc=$?
echo 0 > "$dev/enable"
[ -e "$dev/driver" ] && echo "$bdf" > "$dev/driver/unbind"
echo > "$dev/driver_override"
exit $rc
