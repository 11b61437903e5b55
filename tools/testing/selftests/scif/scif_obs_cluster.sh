#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Each node's view of the others in sysfs (Documentation/scif/
# observability.rst), on every node of a cluster after scif_cluster_test
# (which echoed messages between every pair): each peer online through
# ivshmem, generation 1 or more, a heartbeat seen lately, and traffic
# counted both ways; this node itself online through loopback, with no
# heartbeat (errors are shown, not judged: pairs finish at different
# times).  TAP output, one line per node of the cluster.
nodes=${SCIF_NODES:-$(sed -n 's/.*scif\.nodes=\([0-9]*\).*/\1/p' /proc/cmdline)}
self=$(cat /sys/class/misc/scif/node_id 2>/dev/null)
dir=/sys/class/misc/scif/nodes

echo "TAP version 13"
if [ -z "$nodes" ] || [ -z "$self" ]; then
	echo "1..0 # SKIP not a cluster node"
	exit 0
fi
echo "1..$nodes"
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
	info="state=$state bus=$bus generation=$gen heartbeat_age_ms=$hb tx_bytes=$tx rx_bytes=$rx errors=$errs"
	if [ "$j" = "$self" ]; then
		[ "$state" = online ] && [ "$bus" = loopback ] &&
			[ "${gen:-0}" -ge 1 ] && [ "$hb" = -1 ]
	else
		# Beats come every 100 ms; a starved TCG guest may lag.
		[ "$state" = online ] && [ "$bus" = ivshmem ] &&
			[ "${gen:-0}" -ge 1 ] && [ "${hb:--1}" -ge 0 ] &&
			[ "$hb" -lt 5000 ] && [ "${tx:-0}" -gt 0 ] &&
			[ "${rx:-0}" -gt 0 ]
	fi
	if [ $? -eq 0 ]; then
		echo "ok $((j + 1)) node_$j # $info"
	else
		echo "not ok $((j + 1)) node_$j # $info"
		failed=$((failed + 1))
	fi
	j=$((j + 1))
done
[ $failed -eq 0 ]
