#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The hardware bus seam on one node (Documentation/scif/design.rst):
# the bus list in debugfs, every local mapping handed to a peer undone
# once the endpoints that made it are gone, and the node_id parameter.
# Run last, after the other steps of the single VM: scif.ko loaded and
# nothing open.  Leaves scif.ko loaded.  TAP output.
mod=${SCIF_MODULE:-/modules/scif.ko}
dbg=/sys/kernel/debug/scif

echo "TAP version 13"
echo "1..6"

n=0
result() { # status name [comment]: status 0 passes
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n $2"
	else
		echo "not ok $n $2${3:+ # $3}"
	fi
}

local_maps() {
	awk '$1 == "local_maps" { print $2 }' "$dbg/stats"
}

buses=$(cat "$dbg/buses")
[ "$buses" = "loopback scif_loopback 0" ]
result $? "buses lists the loopback bus, its device and node 0" "$buses"

# Every test before this one connected, registered and closed: what was
# mapped for the peer must be unmapped again, but for the loopback
# node's own queue area.  Endpoints are destroyed in the background.
i=0
while [ "$(local_maps)" != 1 ] && [ $i -lt 300 ]; do
	sleep 0.1
	i=$((i + 1))
done
maps=$(local_maps)
[ "$maps" = 1 ]
result $? "local maps back to the node queue area alone" "local_maps $maps, endpoints $(wc -l < "$dbg/endpoints")"

rmmod scif
insmod "$mod" node_id=5
rc=$?
id=$(cat /sys/class/misc/scif/node_id 2>/dev/null)
[ $rc -eq 0 ] && [ "$id" = 5 ]
result $? "node_id=5 makes this node 5" "insmod rc=$rc, node_id $id"
buses=$(cat "$dbg/buses" 2>/dev/null)
[ "$buses" = "loopback scif_loopback 5" ]
result $? "the loopback bus reaches node 5" "$buses"
rmmod scif
if insmod "$mod" node_id=256 2>/dev/null; then
	rmmod scif
	result 1 "node_id=256 is refused"
else
	result 0 "node_id=256 is refused"
fi
insmod "$mod"
result $? "scif.ko loads again without node_id"
