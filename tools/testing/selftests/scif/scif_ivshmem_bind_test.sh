#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# scif_ivshmem binds only the ivshmem devices that are provably SCIF's
# (Documentation/scif/ivshmem.rst).  Run on every node of a cluster
# started with cluster.sh -R, after insmod: the N-1 apertures (peer RAM
# showing a SCIF signature) and the doorbell device (its memory carries
# the table header laid down by the ivshmem server) are bound; the
# scratch ivshmem-plain device at 0000:00:10.0, which shows no signature,
# is left unbound (another driver could take it).  TAP output.

nodes=$(sed -n 's/.*scif\.nodes=\([0-9]*\).*/\1/p' /proc/cmdline)
scratch=/sys/bus/pci/devices/0000:00:10.0
drv=/sys/bus/pci/drivers/scif_ivshmem

echo "1..3"
if [ -z "$nodes" ] || [ ! -d "$scratch" ]; then
	echo "ok 1 # SKIP not a cluster node with a scratch device (cluster.sh -R)"
	echo "ok 2 # SKIP"
	echo "ok 3 # SKIP"
	exit 0
fi

# Apertures are bound once their node is up: wait for all of them.
bound=0
i=0
while [ $i -lt 600 ]; do
	bound=0
	for d in "$drv"/0000:*; do
		[ -e "$d" ] || continue
		[ "$(cat "$d/class")" = 0x050000 ] || continue
		bound=$((bound + 1))
	done
	# The doorbell device is bound too: N-1 apertures + 1.
	[ "$bound" -ge "$nodes" ] && break
	sleep 0.1
	i=$((i + 1))
done
if [ "$bound" -eq "$nodes" ]; then
	echo "ok 1 - $((nodes - 1)) apertures and the doorbell are bound"
else
	echo "not ok 1 - $bound ivshmem devices bound, want $nodes"
fi

if [ -e "$scratch/driver" ]; then
	echo "not ok 2 - the scratch device is bound to $(basename "$(readlink "$scratch/driver")")"
else
	echo "ok 2 - the scratch device (no SCIF signature) is left unbound"
fi

# Offered again (as while a peer lacks its aperture): still refused.
echo 0000:00:10.0 > "$drv/bind" 2>/dev/null
if [ -e "$scratch/driver" ]; then
	echo "not ok 3 - an explicit bind took the scratch device"
else
	echo "ok 3 - an explicit bind without devices= or driver_override is refused"
fi
