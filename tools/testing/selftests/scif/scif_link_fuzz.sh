#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A hostile root peer as scif_net's and scif_vsock's links, in a 2-node
# cluster (node-loss-steps, after scif_vsock_test.sh; make peer-fuzz),
# in two phases, each $LINKFUZZ_SECS seconds (12) or $LINKFUZZ_COUNT
# frames a link at most, seed $LINKFUZZ_SEED (1); scif_link_fuzz.c says
# what it sends:
#   1. node 1's root, with neither module loaded there, holds ports 700
#      and 701: node 0's links connect to it, and it fuzzes them;
#   2. ($LINKFUZZ_CONNECT=1, the default) node 0's root, with its
#      modules unloaded, connects to node 1's listeners from privileged
#      ports, as node 0's kernel would, and fuzzes node 1's links.
# Node 0 prints both sides' verdicts in TAP (those of node 1's life here
# are not collected in the node-loss cluster): the fuzzer's (every
# refused header ended the connection, the link was taken again each
# time, the victim kept reading, a valid exchange worked after the fuzz)
# and the victim's (its SCIF loopback stream and a bystander stream to
# the fuzzer's node kept echoing during and after the fuzz, that node
# still online), then the victim's device still there, its refusals
# counted (rx_errors, carrier changes, scif_vsock's log); after each
# phase the fuzzer's node loads the modules and the links must come back
# to them (ping over sn<peer>, a vsock echo).  Last, both nodes unload
# the modules and their SCIF endpoints return to their count before the
# test.  Node 1 takes part in its life $LINKFUZZ_LIFE (default: the one
# it is in after scif_net_test.sh and scif_vsock_test.sh restarted it:
# 2, or 1 without scif_vsock); in others it skips.  $LINKFUZZ_VSOCK=0
# leaves scif_vsock's link out.
set -u

self=${SCIF_NODE:-}
ex=/modules/extra
prog=/tests/scif_link_fuzz
vs_peer=/tests/scif_vsock_peer
seed=${LINKFUZZ_SEED:-1}
count=${LINKFUZZ_COUNT:-1000000}
secs=${LINKFUZZ_SECS:-12}
connect=${LINKFUZZ_CONNECT:-1}
DONE_PORT=2414
ECHO_PORT=5000
dbg=/sys/kernel/debug/scif
n=0
failed=0

# shellcheck disable=SC2034 # read by scif_tap_lib.sh
tap_suite=scif_link_fuzz
# shellcheck source=tools/testing/selftests/scif/scif_tap_lib.sh
. "$(dirname "$0")/scif_tap_lib.sh"

endpoints() { wc -l < "$dbg/endpoints"; }

endpoints_at_most() { [ "$(endpoints)" -le "$1" ]; }

reachable() { ping -c 1 -W 1 "$peer_ip" > /dev/null 2>&1; }

net_setup() {
	insmod_client scif_net &&
		wait_for 30 test -e "/sys/class/net/$dev" &&
		{ ip addr show dev "$dev" | grep -q "$my_ip/" ||
		  ip addr add "$my_ip/24" dev "$dev"; } &&
		ip link set "$dev" up
}

vsock_up() {
	[ "$vsock" = 1 ] || return 0
	insmod_list vsock vmw_vsock_virtio_transport_common &&
		insmod_client scif_vsock
}

vsock_down() {
	[ "$vsock" = 1 ] || return 0
	rmmod_client_soon scif_vsock &&
		rmmod_list_soon vmw_vsock_virtio_transport_common vsock
}

modules_up() { vsock_up && net_setup; }

modules_down() { vsock_down && rmmod_client scif_net; }

# unload: modules_down, and when it fails what still holds them.
unload() {
	modules_down && return 0
	echo "# modules_down failed; modules and their users:"
	grep -E '^(scif|vsock|vmw_vsock)' /proc/modules | sed 's/^/#   /'
	echo "# SCIF endpoints:"
	sed 's/^/#   /' "$dbg/endpoints"
	dmesg | tail -n 20 | sed 's/^/#   dmesg: /'
	return 1
}

verdicts() { # prefix log: its PASS / FAIL lines as TAP, its comments
	grep '^#' "$2"
	while read -r verdict name; do
		case "$verdict" in
		PASS) ok "$1$name" true ;;
		FAIL) ok "$1$name" false ;;
		esac
	done < "$2"
}

# count_since SECONDS PATTERN: kernel log lines since SECONDS of uptime
# (the fuzz logs enough for the ring to wrap: earlier lines may be gone).
count_since() {
	dmesg | awk -v t="$1" -v p="$2" '{
		s = $0; sub(/^\[ */, "", s); sub(/\].*/, "", s)
		if (s + 0 >= t && index($0, p)) c++
	} END { print c + 0 }'
}

uptime_s() { cut -d ' ' -f 1 /proc/uptime; }

# victim PREFIX: this node is the victim of the other's fuzzer, then
# checks its side: its device, the refusals counted and logged.
victim() {
	since=$(uptime_s)
	cc0=$(cat "/sys/class/net/$dev/carrier_changes")
	rxe0=$(cat "/sys/class/net/$dev/statistics/rx_errors")
	"$prog" victim $((secs + 300)) "$peer" > /tmp/linkfuzz-victim.log 2>&1
	verdicts "$1" /tmp/linkfuzz-victim.log
	ok "${1}device_survives" test -e "/sys/class/net/$dev"
	rxe=$(cat "/sys/class/net/$dev/statistics/rx_errors")
	echo "# $dev: rx_errors $rxe, rx_packets $(cat "/sys/class/net/$dev/statistics/rx_packets"), rx_dropped $(cat "/sys/class/net/$dev/statistics/rx_dropped")"
	ok "${1}net_refused_headers_counted" [ "$rxe" -gt "$rxe0" ]
	# The carrier goes on and off with each connection.
	cc=$(cat "/sys/class/net/$dev/carrier_changes")
	echo "# $dev: carrier changes $cc0 before, $cc after"
	ok "${1}net_link_reset_and_reconnected" [ "$cc" -gt $((cc0 + 2)) ]
	# Each link logs its first 10 connections, then 10 every 30 s at
	# most (scif_peer_links.c), hundreds as the fuzz went.
	lines=$(count_since "$since" "connected to node $peer")
	most=$((nlinks * 10 * (2 + ($(uptime_s | cut -d . -f 1) - ${since%.*}) / 30)))
	echo "# $lines connections logged, $most at most"
	ok "${1}connection_lines_rate_limited" [ "$lines" -le "$most" ]
	if [ "$vsock" = 1 ]; then
		vbad=$(count_since "$since" "scif_vsock: bad packet header from node $peer")
		echo "# scif_vsock: $vbad bad headers logged (rate-limited)"
		ok "${1}vsock_refused_headers_logged" [ "$vbad" -gt 0 ]
	fi
}

# links_back PREFIX: the other node's modules are the links again.
links_back() {
	ok "${1}link_back_to_the_module" wait_for 120 reachable
	ok "${1}ping_after_fuzz" ping -c 5 -W 5 "$peer_ip"
	if [ "$vsock" = 1 ]; then
		ok "${1}vsock_echo_after_fuzz" wait_for 60 "$vs_peer" echo \
			"$peer_cid" $ECHO_PORT 65536
	fi
}

# fuzzer PREFIX: this node's root is the links' peer.
fuzzer() {
	links=net
	[ "$vsock" = 1 ] && links=both
	"$prog" peer "$seed" "$count" "$secs" $links "$peer" \
		> /tmp/linkfuzz-peer.log 2>&1
	rc=$?
	verdicts "$1" /tmp/linkfuzz-peer.log
	ok "${1}fuzzer_ran" [ $rc -eq 0 ]
}

serve_start() {
	[ "$vsock" = 1 ] || return 0
	"$vs_peer" serve $ECHO_PORT &
	srv=$!
}

serve_stop() {
	[ "$vsock" = 1 ] || return 0
	kill -9 "$srv"
	wait "$srv"
}

baseline() {
	eps0=$(endpoints)
	slab0=$(awk '/^SUnreclaim/ { print $2 }' /proc/meminfo)
}

no_leak() {
	ok endpoints_back_to_baseline wait_for 30 endpoints_at_most "$eps0"
	echo "# endpoints $eps0 before, $(endpoints) after; SUnreclaim $slab0 kB before, $(awk '/^SUnreclaim/ { print $2 }' /proc/meminfo) kB after"
}

# ---- node 0 ----

drive() {
	baseline
	ok modules_load modules_up
	# Node 1 listens as the links' peer; node 0's links connect to it.
	victim ""
	links_back ""
	if [ "$connect" = 1 ]; then
		# Node 0's root connects to node 1's listeners as the links'
		# peer, with node 0's modules unloaded.
		ok modules_unload_for_the_fuzzer unload
		ok node_1_told_to_be_the_victim "$prog" notify 1 $DONE_PORT 60
		fuzzer connect_
		ok modules_load_again modules_up
		links_back connect_
	fi
	ok node_1_told_to_finish "$prog" notify 1 $DONE_PORT 60
	ok modules_unload unload
	no_leak
}

# ---- node 1 ----

serve() {
	baseline
	fuzzer ""
	ok modules_load modules_up
	serve_start
	if [ "$connect" = 1 ]; then
		ok told_to_be_the_victim "$prog" await $DONE_PORT 300
		serve_stop
		victim connect_
		serve_start
	fi
	ok told_to_finish "$prog" await $DONE_PORT 300
	serve_stop
	ok modules_unload unload
	no_leak
}

echo "TAP version 13"
[ "${SCIF_NODES:-}" = 2 ] && [ -n "$self" ] || skip_all "not a node of a 2-node cluster"
[ -e "$ex/scif_net.ko" ] || skip_all "no $ex/scif_net.ko"
[ -d "$dbg" ] || skip_all "no $dbg"
vsmods=0
[ -e "$ex/scif_vsock.ko" ] && [ -e "$ex/vsock.ko" ] && vsmods=1
vsock=$vsmods
[ "${LINKFUZZ_VSOCK:-1}" = 0 ] && vsock=0
nlinks=$((1 + vsock))
life=${SCIF_RESTART:-0}
if [ "$self" = 1 ] && [ "$life" != "${LINKFUZZ_LIFE:-$((1 + vsmods))}" ]; then
	skip_all "node 1 fuzzes in its life ${LINKFUZZ_LIFE:-$((1 + vsmods))} only"
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
	serve
fi
echo "# scif_link_fuzz.sh took $((($(now_ms) - t0) / 1000)) s"
echo "1..$n"
[ $failed -eq 0 ]
