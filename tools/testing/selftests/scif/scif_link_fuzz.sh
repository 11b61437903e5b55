#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A hostile root peer as scif_net's and scif_vsock's link, in a 2-node
# cluster (node-loss-steps, after scif_vsock_test.sh; make peer-fuzz).
# Node 1, with neither module loaded, runs scif_link_fuzz peer: it holds
# ports 700 and 701, node 0's links connect to it, and it sends them
# $LINKFUZZ_COUNT frames each at most ($LINKFUZZ_SECS seconds at most;
# seed $LINKFUZZ_SEED): valid, refused, garbage, truncated, of every
# length (scif_link_fuzz.c).  Node 0 loads both modules and drives, in
# TAP: node 1's verdicts (every refused header ended the connection,
# node 0 connected again each time from a privileged port, a valid
# exchange worked after the fuzz) and node 0's (its SCIF loopback stream
# and a bystander stream to node 1 kept echoing during and after the
# fuzz, node 1 still online, sn1 still there, the refused headers
# counted and logged); then node 1 loads the modules, and node 0's links
# must come back to them: ping over sn1, a vsock echo; last, both unload
# the modules and node 0's SCIF endpoints return to their count before
# the test.  Node 1 fuzzes in its life $LINKFUZZ_LIFE (default: the one
# it is in after scif_net_test.sh and scif_vsock_test.sh restarted it:
# 2, or 1 without scif_vsock); in others it skips.
set -u

self=${SCIF_NODE:-}
ex=/modules/extra
prog=/tests/scif_link_fuzz
vs_peer=/tests/scif_vsock_peer
seed=${LINKFUZZ_SEED:-1}
count=${LINKFUZZ_COUNT:-1000000}
secs=${LINKFUZZ_SECS:-25}
DONE_PORT=2414
ECHO_PORT=5000
dbg=/sys/kernel/debug/scif
n=0
failed=0

# shellcheck disable=SC2034 # read by scif_tap_lib.sh
tap_suite=scif_link_fuzz
# shellcheck source=tools/testing/selftests/scif/scif_tap_lib.sh
. "$(dirname "$0")/scif_tap_lib.sh"

loaded() { grep -q "^$1 " /proc/modules; }

insmod_list() {
	for m in "$@"; do
		[ -e "$ex/$m.ko" ] || continue
		loaded "$m" || insmod "$ex/$m.ko" || return 1
	done
}

rmmod_list() {
	for m in "$@"; do
		! loaded "$m" || rmmod "$m" || return 1
	done
}

rmmod_soon() {
	wait_for 20 rmmod "$1" 2> /dev/null || ! loaded "$1"
}

endpoints() { wc -l < "$dbg/endpoints"; }

endpoints_at_most() { [ "$(endpoints)" -le "$1" ]; }

reachable() { ping -c 1 -W 1 "$peer_ip" > /dev/null 2>&1; }

net_setup() {
	{ loaded scif_net || insmod "$ex/scif_net.ko"; } &&
		wait_for 30 test -e "/sys/class/net/$dev" &&
		{ ip addr show dev "$dev" | grep -q "$my_ip/" ||
		  ip addr add "$my_ip/24" dev "$dev"; } &&
		ip link set "$dev" up
}

vsock_up() {
	[ "$vsock" = 1 ] || return 0
	insmod_list vsock vmw_vsock_virtio_transport_common &&
		{ loaded scif_vsock || insmod "$ex/scif_vsock.ko"; }
}

vsock_down() {
	[ "$vsock" = 1 ] || return 0
	rmmod_soon scif_vsock &&
		rmmod_list vmw_vsock_virtio_transport_common vsock
}

modules_up() { vsock_up && net_setup; }

modules_down() { vsock_down && rmmod scif_net; }

verdicts() { # log: its PASS / FAIL lines as TAP, its comments as they are
	grep '^#' "$1"
	while read -r verdict name; do
		case "$verdict" in
		PASS) ok "$name" true ;;
		FAIL) ok "$name" false ;;
		esac
	done < "$1"
}

# count_since SECONDS PATTERN: kernel log lines since SECONDS of uptime
# (the fuzz logs enough for the ring to wrap: earlier lines may be gone).
count_since() {
	dmesg | awk -v t="$1" -v p="$2" '{
		s = $0; sub(/^\[ */, "", s); sub(/\].*/, "", s)
		if (s + 0 >= t && index($0, p)) c++
	} END { print c + 0 }'
}

# ---- node 0 ----

drive() {
	eps0=$(endpoints)
	slab0=$(awk '/^SUnreclaim/ { print $2 }' /proc/meminfo)
	since=$(cut -d ' ' -f 1 /proc/uptime)
	ok modules_load modules_up
	"$prog" victim $((secs + 300)) > /tmp/linkfuzz-victim.log 2>&1
	verdicts /tmp/linkfuzz-victim.log
	ok node_0_device_survives test -e "/sys/class/net/$dev"
	rxe=$(cat "/sys/class/net/$dev/statistics/rx_errors")
	echo "# $dev: rx_errors $rxe, rx_packets $(cat "/sys/class/net/$dev/statistics/rx_packets"), rx_dropped $(cat "/sys/class/net/$dev/statistics/rx_dropped")"
	ok net_refused_headers_counted [ "$rxe" -gt 0 ]
	# A new device: its carrier went on and off with each connection.
	cc=$(cat "/sys/class/net/$dev/carrier_changes")
	echo "# $dev: carrier changes $cc"
	ok net_link_reset_and_reconnected [ "$cc" -gt 2 ]
	if [ "$vsock" = 1 ]; then
		vbad=$(count_since "$since" 'scif_vsock: bad packet header from node 1')
		echo "# scif_vsock: $vbad bad headers logged (rate-limited)"
		ok vsock_refused_headers_logged [ "$vbad" -gt 0 ]
	fi
	# Node 1 loads the modules: the links must come back to them.
	ok link_back_to_node_1_module wait_for 120 reachable
	ok ping_after_fuzz ping -c 5 -W 5 "$peer_ip"
	if [ "$vsock" = 1 ]; then
		ok vsock_echo_after_fuzz wait_for 60 "$vs_peer" echo "$peer_cid" \
			$ECHO_PORT 65536
	fi
	ok node_1_told_to_finish "$prog" notify 1 $DONE_PORT 60
	ok modules_unload modules_down
	ok endpoints_back_to_baseline wait_for 30 endpoints_at_most "$eps0"
	echo "# endpoints $eps0 before, $(endpoints) after; SUnreclaim $slab0 kB before, $(awk '/^SUnreclaim/ { print $2 }' /proc/meminfo) kB after"
}

# ---- node 1 ----

fuzz() {
	links=net
	[ "$vsock" = 1 ] && links=both
	"$prog" peer "$seed" "$count" "$secs" $links > /tmp/linkfuzz-peer.log 2>&1
	rc=$?
	# Node 0 prints the verdicts; here they are comments.
	sed 's/^/# /' /tmp/linkfuzz-peer.log
	ok fuzzer_ran [ $rc -eq 0 ]
	ok modules_load modules_up
	if [ "$vsock" = 1 ]; then
		"$vs_peer" serve $ECHO_PORT &
		srv=$!
	fi
	ok told_to_finish "$prog" await $DONE_PORT 300
	[ "$vsock" = 1 ] && kill -9 "$srv"
	wait
	ok modules_unload modules_down
}

echo "TAP version 13"
[ "${SCIF_NODES:-}" = 2 ] && [ -n "$self" ] || skip_all "not a node of a 2-node cluster"
[ -e "$ex/scif_net.ko" ] || skip_all "no $ex/scif_net.ko"
[ -d "$dbg" ] || skip_all "no $dbg"
vsock=0
[ -e "$ex/scif_vsock.ko" ] && [ -e "$ex/vsock.ko" ] && vsock=1
life=${SCIF_RESTART:-0}
if [ "$self" = 1 ] && [ "$life" != "${LINKFUZZ_LIFE:-$((1 + vsock))}" ]; then
	skip_all "node 1 fuzzes in its life ${LINKFUZZ_LIFE:-$((1 + vsock))} only"
fi
peer=$((1 - self))
peer_cid=$((peer + 3))
dev=sn$peer
my_ip=10.77.0.$((self + 1))
peer_ip=10.77.0.$((peer + 1))
t0=$(now_ms)
if [ "$self" = 0 ]; then
	drive
else
	fuzz
fi
echo "# scif_link_fuzz.sh took $((($(now_ms) - t0) / 1000)) s"
echo "1..$n"
[ $failed -eq 0 ]
