#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Sets up what scif_vfio_test needs on a node of a cluster booted with
# an emulated IOMMU and QEMU's "edu" PCI device (qemu/cluster.sh -I):
# loads VFIO from /modules/extra (those of VFIO_MODULES that are there,
# in that order: 6.12 has no vfio_virqfd), binds the edu device
# (1234:11e8) to vfio-pci, then runs scif_vfio_test with its IOMMU
# group.  A node without the IOMMU, the device or the modules is a
# failed setup, not a skip: the cluster was booted for this.
ex=/modules/extra
mods=${VFIO_MODULES:-irqbypass vfio vfio_iommu_type1 vfio_virqfd vfio-pci-core vfio-pci}

fail() {
	echo "TAP version 13"
	echo "1..1"
	echo "not ok 1 vfio_setup # $*"
	exit 1
}

for m in $mods; do
	grep -q "^$(echo "$m" | tr - _) " /proc/modules && continue
	[ -e "$ex/$m.ko" ] || continue
	insmod "$ex/$m.ko" || fail "insmod $m"
done
dev=
for d in /sys/bus/pci/devices/*; do
	if [ "$(cat "$d/vendor")" = 0x1234 ] && [ "$(cat "$d/device")" = 0x11e8 ]; then
		dev=$d
		break
	fi
done
[ -n "$dev" ] || fail "no edu device (1234:11e8)"
[ -e "$dev/iommu_group" ] || fail "${dev##*/} has no IOMMU group: no IOMMU"
echo vfio-pci > "$dev/driver_override"
[ -e "$dev/driver" ] && echo "${dev##*/}" > "$dev/driver/unbind"
echo "${dev##*/}" > /sys/bus/pci/drivers_probe
drv=$(readlink "$dev/driver")
[ "${drv##*/}" = vfio-pci ] || fail "${dev##*/} bound to '${drv##*/}', not vfio-pci"
group=$(readlink "$dev/iommu_group")
group=${group##*/}
[ -e "/dev/vfio/$group" ] || fail "no /dev/vfio/$group"
echo "# ${dev##*/} in IOMMU group $group, bound to vfio-pci"
SCIF_VFIO_GROUP=$group ./scif_vfio_test
rc=$?
echo "${dev##*/}" > "$dev/driver/unbind"
exit $rc
