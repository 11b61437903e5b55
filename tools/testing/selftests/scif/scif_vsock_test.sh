#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# scif_vsock (Documentation/scif/vsock.rst) between the two nodes of the
# node-loss cluster (node-loss-steps), after scif_net_test.sh and before
# scif_node_loss_test.  Node N is CID N+3.  scif_net carries the control
# traffic: both nodes load /modules/extra/scif_net.ko again and put
# 10.77.0.(node+1)/24 on sn<peer>; each runs busybox httpd on /tmp/vsw,
# where flag files tell the other how far it got.  Node 0 drives, in TAP:
#   - the slot test: with vmw_vsock_virtio_transport loaded, scif_vsock
#     refuses to load and names it; without, it loads (skipped where the
#     kernel has no virtio vsock transport: the debug kernel);
#   - forged packet headers: node 1, in its first life, takes
#     scif_vsock's port with scif_vsock_forge before it loads
#     scif_vsock, and sends node 0's connections four headers to refuse
#     (payload over 64 KiB, wrong source or destination CID, unknown
#     type); node 0 logs each, resets the link, and connects again;
#   - then the forger is a silent peer: it accepts a vsock connection of
#     node 0, ignores its shutdown and keeps the link down 15 s; 12 s
#     after the close (past the socket's 8 s close timeout, whose reset
#     finds no connection), nothing holds scif_vsock on node 0;
#   - 8 MiB echoed over SOCK_STREAM and compared (scif_vsock_peer);
#   - then an unprivileged process (scif_link_intruder, as nobody)
#     connects to scif_vsock's port 701 on node 1 three times: node 1
#     closes each at once and node 0's link keeps its connection (no
#     "connection to node 1 down" logged);
#   - 8 MiB through socat (VSOCK-CONNECT) to the same echo server;
#   - 40,000 messages of 64 bytes, a send() each, echoed and compared:
#     many more packets than the transmit budget, whose senders wait;
#   - the kernel's vsock_test (tools/testing/vsock, built unmodified by
#     scripts/vsock-test-build.sh) as client, node 1 as server, over its
#     control connection on scif_net; $VSOCK_TEST_SKIP names the cases
#     skipped (none);
#   - rmmod scif_vsock while a connection carries traffic: refused (the
#     sockets hold the module), the traffic intact;
#   - node 1 killed under a connection: ECONNRESET, a connect() to it
#     fails; node 1 restarted: a new connection echoes;
#   - both nodes unload scif_vsock, the vsock core and scif_net.
# Node 1 serves in its lives 1 (after scif_net_test.sh's restart; killed
# here) and 2; in the lives scif_node_loss_test gives it later it skips.
set -u

self=${SCIF_NODE:-}
ex=/modules/extra
peer_prog=/tests/scif_vsock_peer
forge=/tests/scif_vsock_forge
intruder=/tests/scif_link_intruder
www=/tmp/vsw
ECHO_PORT=5000
CTRL_PORT=4000
# vsock_test cases skipped with its own --skip (IDs): none.
VSOCK_TEST_SKIP=
n=0
failed=0

# shellcheck disable=SC2034 # read by scif_tap_lib.sh
tap_suite=scif_vsock
# shellcheck source=tools/testing/selftests/scif/scif_tap_lib.sh
. "$(dirname "$0")/scif_tap_lib.sh"

fetched() { # NAME: the peer has put up flag file NAME
	timeout 5 wget -q -O /dev/null "http://$peer_ip/$1" 2> /dev/null
}

flag() { touch "$www/$1"; }


net_setup() {
	insmod_client scif_net &&
		wait_for 30 test -e "/sys/class/net/$dev" &&
		{ ip addr show dev "$dev" | grep -q "$my_ip/" ||
		  ip addr add "$my_ip/24" dev "$dev"; } &&
		ip link set "$dev" up && wait_for 120 carrier_is 1
}

www_start() {
	mkdir -p "$www"
	httpd -f -p 80 -h "$www" &
	httpd_pid=$!
}

# ---- node 0 ----

# scif_vsock.ko does not load: its links' module did, so it is the slots.
load_refused() {
	insmod_list scif_peer_links && ! insmod "$ex/scif_vsock.ko" 2> /dev/null
}

slot_test() {
	if [ ! -e "$ex/vmw_vsock_virtio_transport.ko" ]; then
		n=$((n + 1))
		echo "ok $n - slot_conflict # SKIP no vmw_vsock_virtio_transport.ko for this kernel"
		return
	fi
	# virtio and virtio_ring are unloaded after only if loaded here.
	mine=
	for m in virtio_ring virtio; do
		loaded "$m" || mine="$m $mine"
	done
	ok virtio_vsock_takes_the_slots insmod_list virtio_ring virtio \
		vmw_vsock_virtio_transport
	ok load_refused_while_virtio_vsock_holds_them load_refused
	dmesg | grep 'scif_vsock: the vsock slots' | tail -n 1 | sed 's/^/# /'
	ok refusal_names_the_holder \
		sh -c "dmesg | grep -q 'slots for remote CIDs are taken by vmw_vsock_virtio_transport'"
	# shellcheck disable=SC2086 # one word per module
	ok virtio_vsock_unloaded rmmod_list vmw_vsock_virtio_transport $mine
}

vsock_test_run() {
	vt=$(find / -xdev -path '*/vsock/*' -name vsock_test -type f 2> /dev/null |
		head -n 1)
	[ -n "$vt" ] || { echo "# no vsock_test in the initramfs"; return 1; }
	out=$(timeout 900 "$vt" --mode=client --control-host="$peer_ip" \
		--control-port=$CTRL_PORT --peer-cid=$peer_cid \
		${VSOCK_TEST_SKIP:+--skip=$VSOCK_TEST_SKIP} 2>&1)
	rc=$?
	echo "$out" | sed 's/^/# /'
	echo "# vsock_test: rc $rc, $(echo "$out" | grep -c '^[0-9]* - .*\.\.\.ok$') cases ok"
	[ $rc -eq 0 ]
}

socat_echo() {
	[ -x /usr/bin/socat ] || { echo "# no /usr/bin/socat in the initramfs"; return 1; }
	dd if=/dev/urandom of=/tmp/blob bs=65536 count=128 2> /dev/null
	/usr/bin/socat -t 30 - "VSOCK-CONNECT:$peer_cid:$ECHO_PORT" \
		< /tmp/blob > /tmp/blob.back &&
		echo "# socat: $(wc -c < /tmp/blob.back) bytes back" &&
		cmp /tmp/blob /tmp/blob.back
}

rmmod_under_traffic() {
	"$peer_prog" flood "$peer_cid" $ECHO_PORT 8 > /tmp/flood.log 2>&1 &
	fl=$!
	sleep 3
	echo "# scif_vsock refcnt $(cat /sys/module/scif_vsock/refcnt)"
	ok rmmod_refused_with_sockets_open sh -c '! rmmod scif_vsock 2> /dev/null'
	ok module_still_there loaded scif_vsock
	wait "$fl"
	rc=$?
	sed 's/^/# /' /tmp/flood.log
	ok traffic_intact_across_rmmod [ $rc -eq 0 ]
}

node_loss() {
	"$peer_prog" loss "$peer_cid" $ECHO_PORT > /tmp/loss.log 2>&1
	grep '^#' /tmp/loss.log
	while read -r verdict name; do
		case "$verdict" in
		PASS) ok "$name" true ;;
		FAIL) ok "$name" false ;;
		esac
	done < /tmp/loss.log
}

drive() {
	ok vsock_core_loads insmod_list vsock vmw_vsock_virtio_transport_common
	slot_test
	ok scif_vsock_loads insmod_client scif_vsock
	ok cid_is_node_plus_3 sh -c "dmesg | grep -q 'scif_vsock: node 0 is CID 3'"
	# Before scif_net: node 1 loads it once its forger is done.
	ok closed_socket_lets_go_with_link_down silent_peer_close
	ok net_setup net_setup
	www_start
	ok peer_ready wait_for 180 fetched ready1
	ok forged_headers_refused forged_refused
	ok echo_8MiB_compared "$peer_prog" echo "$peer_cid" $ECHO_PORT 8388608
	no_takeover
	ok socat_8MiB_compared socat_echo
	ok small_messages_40000x64B_compared "$peer_prog" small "$peer_cid" $ECHO_PORT 40000 64
	ok vsock_test vsock_test_run
	rmmod_under_traffic
	node_loss
	ok peer_ready_after_restart wait_for 180 fetched ready2
	ok echo_1MiB_new_connection "$peer_prog" echo "$peer_cid" $ECHO_PORT 1048576
	flag finish
	ok peer_unloaded_scif_vsock wait_for 60 fetched unloaded
	ok rmmod_scif_vsock rmmod_client_soon scif_vsock
	ok rmmod_vsock_core rmmod_list_soon vmw_vsock_virtio_transport_common vsock
	kill "$httpd_pid"
	ok rmmod_scif_net rmmod_client scif_net
	wait
	# Node 1 unloads scif_net next, then starts scif_node_loss_test.
	sleep 2
}

# Node 1's forger answers a connection, ignores its shutdown and keeps
# the link down: once the socket's close timeout (8 s) has passed, its
# reset must not hold it (and scif_vsock) waiting for a connection.
silent_peer_close() {
	"$peer_prog" connclose "$peer_cid" $ECHO_PORT 150 || return 1
	sleep 12
	r=$(cat /sys/module/scif_vsock/refcnt)
	echo "# scif_vsock's refcnt 12 s after the close: $r"
	[ "$r" = 0 ]
}

# Node 0 refused the four forged headers of node 1's first life, one
# connection each.
forged_refused() {
	c=$(dmesg | grep -c 'scif_vsock: bad packet header from node 1')
	echo "# $c forged headers refused"
	[ "$c" -ge 4 ]
}

# An unprivileged process of node 0 cannot take node 1's end of the
# link: scif_link_intruder's verdicts in TAP, then node 0's link must not
# have gone down.
no_takeover() {
	downs=$(dmesg | grep -c 'scif_vsock: connection to node 1 down')
	"$intruder" 1 701 3 > /tmp/intruder.log 2>&1
	grep '^#' /tmp/intruder.log
	while read -r verdict name; do
		case "$verdict" in
		PASS) ok "$name" true ;;
		FAIL) ok "$name" false ;;
		esac
	done < /tmp/intruder.log
	sleep 2
	now=$(dmesg | grep -c 'scif_vsock: connection to node 1 down')
	echo "# link to node 1 down $downs times before, $now after"
	ok link_kept_its_connection [ "$now" = "$downs" ]
}

# ---- node 1 ----

serve() {
	life=$1
	ok vsock_loads insmod_list vsock vmw_vsock_virtio_transport_common
	# Node 0's scif_vsock connects to this node's port 701: the forger's
	# first.  (This life's TAP is not collected: node 0 checks its side.)
	if [ "$life" = 1 ]; then
		"$forge" 120 | sed 's/^/# forge: /'
	fi
	ok scif_vsock_loads insmod_client scif_vsock
	ok net_setup net_setup
	www_start
	"$peer_prog" serve $ECHO_PORT &
	srv=$!
	if [ "$life" = 1 ]; then
		vt=$(find / -xdev -path '*/vsock/*' -name vsock_test -type f 2> /dev/null |
			head -n 1)
		"$vt" --mode=server --control-port=$CTRL_PORT \
			--peer-cid=$peer_cid > /tmp/vsock_test.log 2>&1 &
		sleep 1
		flag ready1
		# Node 0 kills this life.
		wait_for 1500 fetched finish
		return
	fi
	flag ready2
	ok told_to_finish wait_for 300 fetched finish
	kill -9 "$srv"
	ok rmmod_scif_vsock rmmod_client_soon scif_vsock
	ok rmmod_vsock_core rmmod_list_soon vmw_vsock_virtio_transport_common vsock
	flag unloaded
	ok peer_unload_takes_carrier_off wait_for 60 carrier_is 0
	kill "$httpd_pid"
	wait
	ok rmmod_scif_net rmmod_client scif_net
}

echo "TAP version 13"
[ "${SCIF_NODES:-}" = 2 ] && [ -n "$self" ] || skip_all "not a node of a 2-node cluster"
[ -e "$ex/scif_vsock.ko" ] || skip_all "no $ex/scif_vsock.ko"
[ -e "$ex/vsock.ko" ] || skip_all "no vsock.ko for this kernel"
life=${SCIF_RESTART:-0}
if [ "$self" = 1 ] && { [ "$life" -lt 1 ] || [ "$life" -gt 2 ]; }; then
	skip_all "node 1 serves scif_vsock in its lives 1 and 2 only"
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
	serve "$life"
fi
echo "# scif_vsock_test.sh took $((($(now_ms) - t0) / 1000)) s"
echo "1..$n"
[ $failed -eq 0 ]
