#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# scif_net (Documentation/scif/net.rst) between the two nodes of the
# node-loss cluster (node-loss-steps), before scif_node_loss_test.  Both
# nodes load /modules/extra/scif_net.ko and put 10.77.0.(node+1)/24 on
# their sn<peer> device.  Node 1 serves: iperf3 -s, and busybox httpd with
# 8 MiB of random bytes and their SHA-256.  Node 0 drives, in TAP: the
# device, its MAC address and MTU, carrier, ping (count, sizes up to the
# MTU, 1000 back-to-back pings with -A: busybox has no -f), the file
# fetched and compared, iperf3 TCP (4 streams, and reversed) and UDP
# (2 streams, loss counted); then node 1 killed under an iperf3 stream
# (carrier off within 10 s, the device stays), restarted (carrier back,
# ping and a new file compared); then scif_net unloaded while iperf3 and
# ping run.  Between the restart and the unload, an unprivileged process
# on node 0 (scif_link_intruder, as nobody) connects to scif_net's port
# 700 on node 1 three times: node 1 must close each connection at once
# (and log it), and node 0's link must keep its connection (sn1's
# carrier_changes unchanged, ping answered).  Node 1 serves in its first
# two lives (the one killed here and the next); in the lives
# scif_node_loss_test gives it later it skips.
# Node 1 ends when node 0's unload takes its carrier away, and unloads
# scif_net in turn.
set -u

self=${SCIF_NODE:-}
ex=/modules/extra
ko=$ex/scif_net.ko
iperf=/usr/bin/iperf3
intruder=/tests/scif_link_intruder
www=/tmp/www
n=0
failed=0

# shellcheck disable=SC2034 # read by scif_tap_lib.sh
tap_suite=scif_net
# shellcheck source=tools/testing/selftests/scif/scif_tap_lib.sh
. "$(dirname "$0")/scif_tap_lib.sh"

fetched() { # URL: it is there (a 404 is expected until it is)
	timeout 5 wget -q -O /dev/null "$1" 2> /dev/null
}

reachable() {
	ping -c 1 -W 1 "$peer_ip" > /dev/null 2>&1
}

# pings ARGS...: ping; succeeds if every ping was answered.
pings() {
	out=$(ping "$@" "$peer_ip" 2>&1)
	echo "$out" | tail -n 2 | sed 's/^/# /'
	echo "$out" | awk '/packets transmitted/ {
		exit !($1 > 0 && $1 == $4) }'
}

fetch_and_compare() { # tag
	rm -f /tmp/blob
	timeout 60 wget -q -O /tmp/blob "http://$peer_ip/blob" &&
		want=$(timeout 20 wget -q -O - "http://$peer_ip/blob.sha256") &&
		got=$(sha256sum /tmp/blob | cut -d ' ' -f 1) &&
		echo "# $1: $(wc -c < /tmp/blob) bytes, sha256 $got" &&
		[ "$(wc -c < /tmp/blob)" -eq 8388608 ] && [ "$got" = "$want" ]
}

# iperf ARGS...: an iperf3 client run; succeeds if it did and the
# receiver's total is there (UDP: and no more than 5% was lost).
iperf() {
	out=$("$iperf" -c "$peer_ip" "$@" 2>&1)
	rc=$?
	sum=$(echo "$out" | grep 'SUM.*receiver')
	echo "# iperf3 $*: ${sum:-no receiver total} (rc $rc)"
	[ $rc -eq 0 ] && [ -n "$sum" ] || { echo "$out" | tail -n 5 | sed 's/^/# /'; return 1; }
	echo "$sum" | awk '{
		for (i = 1; i <= NF; i++)
			if ($i ~ /^[0-9]+\/[0-9]+$/) {
				split($i, a, "/")
				exit !(a[2] > 0 && a[1] * 20 <= a[2])
			}
	}'
}

setup() {
	insmod_client scif_net &&
		wait_for 30 test -e "/sys/class/net/$dev" &&
		ip addr add "$my_ip/24" dev "$dev" && ip link set "$dev" up
}

# Node 1's servers, started before its address is up (node 0 waits for
# the checksum file too: the debug kernel takes a while over the file).
serve_start() {
	"$iperf" -s > /tmp/iperf3-server.log 2>&1 &
	iperf_pid=$!
	mkdir -p "$www"
	dd if=/dev/urandom of="$www/blob.tmp" bs=65536 count=128 2> /dev/null
	sha256sum "$www/blob.tmp" | cut -d ' ' -f 1 > "$www/blob.sha256.tmp"
	mv "$www/blob.tmp" "$www/blob"
	mv "$www/blob.sha256.tmp" "$www/blob.sha256"
	httpd -f -p 80 -h "$www" &
	httpd_pid=$!
}

serve() {
	ok carrier_on wait_for 120 carrier_is 1
	ok told_to_finish wait_for 500 fetched "http://$peer_ip/done"
	touch "$www/ack"
	ok unprivileged_link_refused_logged \
		sh -c "dmesg | grep -q 'scif_net: refused a link from node 0 port [0-9]*: not a privileged port'"
	ok peer_unload_takes_carrier_off wait_for 60 carrier_is 0
	kill -9 "$httpd_pid" "$iperf_pid"
	wait
	ok rmmod rmmod_client scif_net
}

# ---- node 0 ----

basics() {
	ok mac_address [ "$(cat "/sys/class/net/$dev/address")" = 02:53:4e:00:00:01 ]
	ok mtu_64k [ "$(cat "/sys/class/net/$dev/mtu")" = 65535 ]
	ok carrier_on wait_for 60 carrier_is 1
	ok peer_reachable wait_for 60 reachable
	ok peer_serving wait_for 60 fetched "http://$peer_ip/blob.sha256"
	ok ping_10 pings -c 10 -W 5
	for s in 1472 9000 32768 65507; do
		ok "ping_size_$s" pings -c 3 -W 5 -s "$s"
	done
	ok ping_1000_back_to_back pings -A -q -c 1000 -w 90
	ok fetch_8MiB_compare fetch_and_compare first
	ok iperf3_tcp_4_streams iperf -t 3 -P 4
	ok iperf3_tcp_reverse_2_streams iperf -t 3 -P 2 -R
	ok iperf3_udp_2_streams iperf -u -b 20M -l 1400 -t 3 -P 2
}

kill_peer() {
	"$iperf" -c "$peer_ip" -t 60 -P 2 > /tmp/iperf3-kill.log 2>&1 &
	bg=$!
	sleep 3
	ok node_1_killed_mid_stream scif-cluster kill 1
	ok carrier_off_within_10s wait_for 10 carrier_is 0
	ok device_survives test -e "/sys/class/net/$dev"
	kill -9 "$bg" 2> /dev/null
	wait "$bg"
	ok node_1_restarted scif-cluster restart 1
	ok carrier_back wait_for 120 carrier_is 1
	ok peer_reachable_again wait_for 60 reachable
	ok peer_serving_again wait_for 60 fetched "http://$peer_ip/blob.sha256"
	ok ping_after_restart pings -A -c 50 -W 5
	ok fetch_compare_after_restart fetch_and_compare second
	ok iperf3_after_restart iperf -t 2 -P 2
}

# intruder: verdict lines of scif_link_intruder turned into TAP.
intruder() {
	"$intruder" "$@" > /tmp/intruder.log 2>&1
	grep '^#' /tmp/intruder.log
	while read -r verdict name; do
		case "$verdict" in
		PASS) ok "$name" true ;;
		FAIL) ok "$name" false ;;
		esac
	done < /tmp/intruder.log
}

# An unprivileged process of node 0 cannot take node 1's end of the link.
no_takeover() {
	changes=$(cat "/sys/class/net/$dev/carrier_changes")
	intruder 1 700 3
	sleep 2
	now=$(cat "/sys/class/net/$dev/carrier_changes")
	echo "# $dev carrier changes: $changes before, $now after"
	ok link_kept_its_connection [ "$now" = "$changes" ]
	ok ping_after_intruder pings -c 5 -W 5
}

unload_under_traffic() {
	touch "$www/done"
	ok node_1_told_to_finish wait_for 30 fetched "http://$peer_ip/ack"
	kill "$httpd_pid"
	"$iperf" -c "$peer_ip" -t 30 -P 2 > /tmp/iperf3-rmmod.log 2>&1 &
	bg1=$!
	ping -A -q -w 30 "$peer_ip" > /dev/null 2>&1 &
	bg2=$!
	sleep 3
	grep -h 'sn1:' /proc/net/dev | sed 's/^ */# /'
	ok rmmod_under_traffic rmmod_client scif_net
	ok device_gone test ! -e "/sys/class/net/$dev"
	kill -9 "$bg1" "$bg2" 2> /dev/null
	wait
	# Node 1 unloads next, then starts scif_node_loss_test's server.
	sleep 2
}

drive() {
	mkdir -p "$www"
	httpd -f -p 80 -h "$www" &
	httpd_pid=$!
	basics
	kill_peer
	no_takeover
	unload_under_traffic
}

echo "TAP version 13"
[ "${SCIF_NODES:-}" = 2 ] && [ -n "$self" ] || skip_all "not a node of a 2-node cluster"
[ -e "$ko" ] || skip_all "no $ko"
[ -x "$iperf" ] || skip_all "no $iperf in the initramfs"
if [ "$self" = 1 ] && [ "${SCIF_RESTART:-0}" -gt 1 ]; then
	skip_all "node 1 serves scif_net in its first two lives only"
fi
peer=$((1 - self))
dev=sn$peer
my_ip=10.77.0.$((self + 1))
peer_ip=10.77.0.$((peer + 1))
[ "$self" = 1 ] && serve_start
ok setup setup
if [ "$self" = 0 ]; then
	drive
else
	serve
fi
echo "1..$n"
[ $failed -eq 0 ]
