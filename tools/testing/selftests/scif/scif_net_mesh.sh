#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# scif_net (Documentation/scif/net.rst) across every pair of a cluster of
# three nodes or more (cluster-steps; make check's 4-node cluster): one
# sn<peer> device per peer.  Each node loads /modules/extra/scif_net.ko
# and gives each device an address on a subnet of its own pair,
# 10.80.<pair>.<node+1>/24 (pair = 16 * lower id + higher id).  In TAP:
# a device per peer, carrier on the links to the higher nodes, which this
# node pings once the peer answers (3 pings, then 3 of 8000 bytes, none
# lost, one frame each at scif_net's 64 KiB MTU); then it waits for each
# lower node to have been there and gone (its carrier on, or packets from
# it, and then off), since a lower node pings this one before it unloads,
# and unloads scif_net itself.  With fewer than three nodes it skips
# (node-loss-steps runs scif_net_test.sh between two).
set -u

self=${SCIF_NODE:-}
nodes=${SCIF_NODES:-0}
ex=/modules/extra
ko=$ex/scif_net.ko
n=0
failed=0

# shellcheck disable=SC2034 # read by scif_tap_lib.sh
tap_suite=scif_net_mesh
# shellcheck source=tools/testing/selftests/scif/scif_tap_lib.sh
. "$(dirname "$0")/scif_tap_lib.sh"

echo "TAP version 13"
[ -n "$self" ] || skip_all "no node id (SCIF_NODE)"
[ "$nodes" -ge 3 ] || skip_all "fewer than three nodes"
[ -e "$ko" ] || skip_all "no scif_net.ko in this initramfs"

# addr NODE PEER: NODE's address on its link to PEER
addr() {
	if [ "$1" -lt "$2" ]; then pair=$((16 * $1 + $2)); else pair=$((16 * $2 + $1)); fi
	echo "10.80.$pair.$(($1 + 1))"
}

dev_of() { # peer
	echo "sn$1"
}

has_dev() {
	[ -e "/sys/class/net/$(dev_of "$1")" ]
}

carrier_of() { # peer 0|1
	[ "$(cat "/sys/class/net/$(dev_of "$1")/carrier" 2> /dev/null)" = "$2" ]
}

# The lower node was there: its carrier is on now, or it sent packets.
seen() { # peer
	carrier_of "$1" 1 ||
		[ "$(cat "/sys/class/net/$(dev_of "$1")/statistics/rx_packets")" -gt 0 ]
}

pings() { # peer args...
	p=$1
	shift
	out=$(ping "$@" "$(addr "$p" "$self")" 2>&1)
	echo "$out" | tail -n 2 | sed 's/^/# /'
	echo "$out" | awk '/packets transmitted/ { exit !($1 > 0 && $1 == $4) }' &&
		return 0
	# Lost: what each side of the device counted, for the report.
	ip -s link show dev "$(dev_of "$p")" 2>&1 | sed 's/^/# /'
	return 1
}

answers() { # peer
	ping -c 1 -W 1 "$(addr "$1" "$self")" > /dev/null 2>&1
}

setup() { # peer
	d=$(dev_of "$1")
	ip addr add "$(addr "$self" "$1")/24" dev "$d" && ip link set "$d" up
}

peers=
for p in $(seq 0 $((nodes - 1))); do
	[ "$p" = "$self" ] || peers="$peers $p"
done

ok load_scif_net insmod_client scif_net
for p in $peers; do
	ok "device_for_node_$p" wait_for 30 has_dev "$p"
	ok "address_on_link_to_node_$p" setup "$p"
done
for p in $peers; do
	[ "$p" -gt "$self" ] || continue
	ok "carrier_to_node_$p" wait_for 180 carrier_of "$p" 1
	# The carrier is the two scif_nets' connection: the peer may not
	# have its address yet.  Once one ping is answered, none is lost.
	ok "node_${p}_answers" wait_for 60 answers "$p"
	ok "ping_node_$p" pings "$p" -A -c 3 -W 5
	ok "ping_node_${p}_8000_bytes" pings "$p" -A -c 3 -W 5 -s 8000
done
for p in $peers; do
	[ "$p" -lt "$self" ] || continue
	ok "node_${p}_came" wait_for 300 seen "$p"
	ok "node_${p}_done" wait_for 300 carrier_of "$p" 0
done
ok unload_scif_net rmmod_client scif_net
echo "1..$n"
[ "$failed" -eq 0 ]
