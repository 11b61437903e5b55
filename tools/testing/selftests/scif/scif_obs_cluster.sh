#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Each node's view of the others in sysfs (Documentation/scif/
# observability.rst), on every node of a cluster after scif_cluster_test
# (which echoed messages between every pair): each peer online through
# ivshmem, generation 1 or more, a heartbeat seen lately, and traffic
# counted both ways, its device link a PCI function bound to
# scif_ivshmem (or, joined by an NTB, through ntb, with no heartbeat,
# its device the NTB device, named as its PCI function, bound to
# scif_ntb); this node itself online through loopback, with no
# heartbeat, its device scif_loopback with no driver (errors are shown,
# not judged: pairs finish at different times).  Then the same devices
# and drivers in "scif-info nodes" (on $PATH).  TAP output, one line
# per node of the cluster and one for scif-info.
nodes=${SCIF_NODES:-$(sed -n 's/.*scif\.nodes=\([0-9]*\).*/\1/p' /proc/cmdline)}
self=$(cat /sys/class/misc/scif/node_id 2>/dev/null)
dir=/sys/class/misc/scif/nodes

echo "TAP version 13"
if [ -z "$nodes" ] || [ -z "$self" ]; then
	echo "1..0 # SKIP not a cluster node"
	exit 0
fi
echo "1..$((nodes + 1))"
failed=0
j=0
while [ $j -lt "$nodes" ]; do
	state=$(cat "$dir/$j/state" 2>/dev/null)
	bus=$(cat "$dir/$j/bus" 2>/dev/null)
	gen=$(cat "$dir/$j/generation" 2>/dev/null)
	hb=$(cat "$dir/$j/heartbeat_age_ms" 2>/dev/null)
	tx=$(cat "$dir/$j/stats/tx_bytes" 2>/dev/null)
	rx=$(cat "$dir/$j/stats/rx_bytes" 2>/dev/null)
	errs=$(cat "$dir/$j/stats/errors" 2>/dev/null)
	dev=$(readlink "$dir/$j/device" 2>/dev/null)
	dev=${dev##*/}
	drv=$(readlink "$dir/$j/device/driver" 2>/dev/null)
	drv=${drv##*/}
	info="state=$state bus=$bus device=$dev driver=$drv generation=$gen heartbeat_age_ms=$hb tx_bytes=$tx rx_bytes=$rx errors=$errs"
	if [ "$j" = "$self" ]; then
		[ "$state" = online ] && [ "$bus" = loopback ] &&
			[ "${gen:-0}" -ge 1 ] && [ "$hb" = -1 ] &&
			[ "$dev" = scif_loopback ] && [ -z "$drv" ]
	elif [ "$bus" = ntb ]; then
		[ "$state" = online ] && [ "${gen:-0}" -ge 1 ] &&
			[ "$hb" = -1 ] && [ "${tx:-0}" -gt 0 ] &&
			[ "${rx:-0}" -gt 0 ] && [ "$drv" = scif_ntb ] &&
			echo "$dev" | grep -Eq '^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$'
	else
		# Beats come every 100 ms; a starved TCG guest may lag.
		[ "$state" = online ] && [ "$bus" = ivshmem ] &&
			[ "${gen:-0}" -ge 1 ] && [ "${hb:--1}" -ge 0 ] &&
			[ "$hb" -lt 5000 ] && [ "${tx:-0}" -gt 0 ] &&
			[ "${rx:-0}" -gt 0 ] && [ "$drv" = scif_ivshmem ] &&
			echo "$dev" | grep -Eq '^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$'
	fi
	if [ $? -eq 0 ]; then
		echo "ok $((j + 1)) node_$j # $info"
	else
		echo "not ok $((j + 1)) node_$j # $info"
		failed=$((failed + 1))
	fi
	j=$((j + 1))
done

# scif-info nodes: NODE STATE BUS DEVICE DRIVER GEN HB_AGE_MS, each
# node's device and driver as sysfs links them ("-" for none).
out=$(scif-info nodes); rc=$?
echo "$out" | sed 's/^/# /'
bad=0
j=0
while [ $j -lt "$nodes" ]; do
	dev=$(readlink "$dir/$j/device" 2>/dev/null)
	drv=$(readlink "$dir/$j/device/driver" 2>/dev/null)
	drv=${drv##*/}
	echo "$out" | awk -v n=$j -v dev="${dev##*/}" -v drv="${drv:--}" '
		$1 == n && $4 == dev && $5 == drv { f = 1 } END { exit !f }' ||
		bad=$((bad + 1))
	j=$((j + 1))
done
if [ "$rc" -eq 0 ] && [ $bad -eq 0 ]; then
	echo "ok $((nodes + 1)) scif_info_nodes_devices"
else
	echo "not ok $((nodes + 1)) scif_info_nodes_devices # rc=$rc, $bad nodes not shown right"
	failed=$((failed + 1))
fi
[ $failed -eq 0 ]
