#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# scif_rdma (Documentation/scif/rdma.rst) between the two nodes of a
# 2-node cluster (rdma-steps on both).  Both load scif_net, put
# 10.77.0.(node+1)/24 on sn<peer>, the guest kernel's RDMA core
# (ib_core, iw_cm, rdma_cm and what they need, from /modules/extra) and
# scif_rdma, and make scif0 on sn<peer> (rdma link add).  Node 0 also
# checks that another netdev and a second device on the interface are
# refused.  The kernel test module scif_rdma_test.ko (its TAP lines
# become ours, prefixed kmod_) runs on both: on node 1 as the server of
# a connection through rdma_cm, on node 0 as the tests of the device's
# objects and then the client (SEND/RECV, RDMA WRITE and READ of 4 KiB
# to 1 MiB and of unaligned and multi-SGE lists, 32 x 1 MiB of each for
# a bandwidth figure, WRITE_WITH_IMM, READ_WITH_INV, SEND_WITH_INV, a bad
# rkey); node 0 checks that its WRITEs and READs went straight into the
# window node 1 opened over its MR, node 1 that the bytes moved by SCIF
# RMA, not in messages (their counters).  Then the hostile peer: node 0's scif_rdma_forge speaks
# scif_rdma's CM and frames itself to node 1's module in hostile=1 mode
# (forged, truncated and over-limit frames, bad keys, ranges and window
# offsets, an unsolicited answer, a READ never answered, then an honest
# WRITE and READ); both sides check their end.  Then "rdma link
# delete", the module's unload with a device present (node 0), and the
# teardown;
# node 1 keeps scif_net up until node 0 says it is done (busybox httpd
# on node 0).
set -u

PATH=$PATH:/usr/bin:/usr/sbin
self=${SCIF_NODE:-}
ex=/modules/extra
rdma_mods="configfs ib_core ib_uverbs ib_cm iw_cm rdma_cm"
www=/tmp/rdma-www
n=0
failed=0
loaded_mods=

# shellcheck disable=SC2034 # read by scif_tap_lib.sh
tap_suite=scif_rdma
# shellcheck source=tools/testing/selftests/scif/scif_tap_lib.sh
. "$(dirname "$0")/scif_tap_lib.sh"

load_rdma() {
	load_rdma_mods && [ -d /sys/module/rdma_cm ]
}

ibdev_is() { # name 0|1: /sys/class/infiniband/name exists or not
	if [ "$2" = 1 ]; then
		test -e "/sys/class/infiniband/$1"
	else
		test ! -e "/sys/class/infiniband/$1"
	fi
}

other_netdev_refused() {
	! rdma link add bad0 type scif netdev lo 2> /dev/null && ibdev_is bad0 0
}

link_add() {
	rdma link add scif0 type scif netdev "$dev" && ibdev_is scif0 1
}

second_device_refused() {
	! rdma link add scif1 type scif netdev "$dev" 2> /dev/null && ibdev_is scif1 0
}

link_active() {
	rdma link show scif0/1 2> /dev/null | grep -q "state ACTIVE .*netdev $dev"
}

# The test module's TAP lines, each one of ours (arguments: its
# parameters besides dev, netdev, peer_ip and my_ip).
kmod_tests() {
	if ! insmod "$ex/scif_rdma_test.ko" dev=scif0 netdev="$dev" \
		peer_ip="$peer_ip" my_ip="$my_ip" "$@"; then
		ok kmod_load false
		return
	fi
	res=$(cat /sys/kernel/debug/scif_rdma_test/results)
	rmmod scif_rdma_test
	echo "$res" | grep -q '^1\.\.[1-9]' || ok kmod_results false
	tmp=/tmp/rdma-kmod.$$
	echo "$res" | grep "^# " || true
	echo "$res" | grep -E '^(not )?ok ' > "$tmp"
	while read -r line; do
		case "$line" in
		"ok "*) ok "kmod_$(echo "$line" | cut -d' ' -f3)" true ;;
		*) echo "# $line"
		   ok "kmod_$(echo "$line" | cut -d' ' -f4)" false ;;
		esac
	done < "$tmp"
	rm -f "$tmp"
}

# scif_rdma_forge against node 1's victim (scif_rdma_test.ko hostile=1):
# its PASS/FAIL lines, each one of ours (prefixed forge_).
forge_tests() {
	tmp=/tmp/rdma-forge.$$
	t0=$(date +%s)
	/tests/scif_rdma_forge "$peer" "$my_ip" "$peer_ip" 18600 > "$tmp"
	echo "# the forge's run took $(($(date +%s) - t0)) s"
	grep "^# " "$tmp" || true
	while read -r verdict name; do
		case "$verdict" in
		PASS) ok "forge_$name" true ;;
		FAIL) ok "forge_$name" false ;;
		esac
	done < "$tmp"
	grep -q "^PASS honest" "$tmp" || ok forge_ran_to_the_end false
	rm -f "$tmp"
}

link_delete() {
	rdma link delete scif0 && ibdev_is scif0 0
}

# rmmod with a device present unregisters it.
unload_with_device() {
	rdma link add scif2 type scif netdev "$dev" && ibdev_is scif2 1 &&
		rmmod scif_rdma && ibdev_is scif2 0
}

drive() {
	ok carrier_on wait_for 60 carrier_is 1
	ok rdma_modules_loaded load_rdma
	ok insmod_scif_rdma insmod "$ex/scif_rdma.ko"
	ok other_netdev_refused other_netdev_refused
	ok rdma_link_add link_add
	ok second_device_refused second_device_refused
	ok port_active wait_for 10 link_active
	scif_rdma_counters > /tmp/rdma-stats0
	kmod_tests
	scif_rdma_counters > /tmp/rdma-stats1
	ok rdma_direct went_direct /tmp/rdma-stats1 /tmp/rdma-stats0
	ok rdma_pipelined pipelined /tmp/rdma-stats1 /tmp/rdma-stats0
	forge_tests
	ok rdma_link_delete link_delete
	ok unload_with_device unload_with_device
	touch "$www/done"
	ok peer_unload_takes_carrier_off wait_for 120 carrier_is 0
	kill "$httpd_pid"
	wait "$httpd_pid"
	ok rmmod_scif_net rmmod_client scif_net
	ok rdma_modules_unloaded rmmod_loaded
}

# This node's SCIF counter for its connections to the peer node.
node_stat() {
	cat "/sys/class/misc/scif/nodes/$peer/stats/$1" 2> /dev/null || echo 0
}

msg_bytes() {
	echo $(($(node_stat tx_bytes) + $(node_stat rx_bytes)))
}

# The responder (this node) let the client's RDMA WRITEs and READs move
# by SCIF RMA: it opened a window over its MR, its message bytes rose by
# far less than the client's 1 MiB ones (more than 64 MiB of them; the
# inline WRITEs and READs, about 1.2 MiB with both_ways' 3 x 384 KiB,
# travel in messages), and its own RMA bytes (the client's WRITEs and
# READs by the responder's RMA, to the MR from byte 8: SGE lists of
# 20000 and 24482 bytes each way) by at least 2 x 44482.
moved_by_rma() {
	d_rma=$(($(node_stat rma_bytes) - rma0))
	d_msg=$(($(msg_bytes) - msg0))
	d_win=$(($(counter_of rdma_windows_opened "$1") - $(counter_of rdma_windows_opened "$2")))
	echo "# on node $self: RMA bytes +$d_rma, message bytes +$d_msg, windows opened +$d_win"
	[ "$d_rma" -ge 88964 ] && [ "$d_msg" -lt 2097152 ] && [ "$d_win" -ge 1 ]
}

# The client (this node) did its 1 MiB WRITEs and READs straight into
# the server's window (at least the 64 of the bandwidth figure), and
# its small ones to the MR without a window inline (at least the four
# of the two inline SGE cases, and the WRITE_WITH_IMM).
went_direct() {
	d=$(($(counter_of rdma_direct_reqs "$1") - $(counter_of rdma_direct_reqs "$2")))
	i=$(($(counter_of rdma_inline_reqs "$1") - $(counter_of rdma_inline_reqs "$2")))
	echo "# on node $self: direct WRITEs and READs +$d, inline +$i"
	[ "$d" -ge 64 ] && [ "$i" -ge 5 ]
}

# The client (this node) had WRITEs and READs leave while others waited
# for their answers: at least 8 of the 24 its pipeline cases and its
# bad key case post in chains (one at a time, the counter stays at 0).
pipelined() {
	p=$(($(counter_of rdma_pipelined_reqs "$1") - $(counter_of rdma_pipelined_reqs "$2")))
	echo "# on node $self: WRITEs and READs pipelined +$p"
	[ "$p" -ge 8 ]
}

# What the hostile run made the victim (this node) count, exactly: a
# SEND of its info for each of the 22 connections, the forge's one SEND
# received, the one READ it posted (inline, never answered: no bytes),
# the forge's WRITE and READ of 64 KiB served by SCIF RMA and of 4 KiB
# inline, five REM_ACCESS_ERR and two REM_INV_REQ_ERR answered, seven
# frames refused (a SEND over 1 GiB, an unknown type, an unknown flag,
# an unsolicited ACK, an inline WRITE over 16 KiB, a MAP_REQ with an
# address, an unsolicited MAP_RESP), one window opened (asked for
# twice), 22 connections, and no WRITE or READ pipelined (its one READ
# waited alone).
counted_exactly() {
	rc=0
	for want in sends:22 recvs:1 rdma_write_reqs:0 rdma_read_reqs:1 \
		rdma_req_bytes:0 rdma_writes_served:2 rdma_reads_served:2 \
		rdma_served_bytes:139264 rem_access_errs:5 \
		rem_inv_req_errs:2 rem_op_errs:0 bad_frames:7 cm_connects:22 \
		rdma_direct_reqs:0 rdma_windows_opened:1 rdma_inline_reqs:1 \
		rdma_pipelined_reqs:0; do
		name=${want%%:*}
		d=$(($(counter_of "$name" "$stats1") - $(counter_of "$name" "$stats0")))
		echo "# counter $name: +$d (want +${want#*:})"
		[ "$d" = "${want#*:}" ] || rc=1
	done
	return $rc
}

# While the hostile run goes on, "rdma resource show" counts the test
# module's PD, CQ, QP, MR and cm_id on scif0: the first such line.
resource_watch() {
	end=$(($(date +%s) + 200))
	while [ "$(date +%s)" -lt $end ]; do
		out=$(rdma resource show 2>&1)
		echo "$out" | tr '\n' ' ' > "$1.last"
		l=$(echo "$out" | grep "scif0:")
		for w in pd cq qp cm_id mr; do
			echo "$l" | grep -q " $w [1-9]" || l=
		done
		if [ -n "$l" ]; then
			echo "$l" > "$1"
			return
		fi
		sleep 1
	done
}

# The server of the connected run: its own scif0 on sn0, the test
# module with serve=1 (it waits for node 0's client, then checks its
# side: the request, the accept, the immediate, the disconnect).
serve() {
	ok carrier_on wait_for 120 carrier_is 1
	ok rdma_modules_loaded load_rdma
	ok insmod_scif_rdma insmod "$ex/scif_rdma.ko"
	ok rdma_link_add link_add
	ok port_active wait_for 10 link_active
	rma0=$(node_stat rma_bytes)
	msg0=$(msg_bytes)
	stats0=/tmp/rdma-stats0
	stats1=/tmp/rdma-stats1
	resf=/tmp/rdma-res
	scif_rdma_counters > "$stats0"
	ok rdma_statistic_shown test -s "$stats0"
	kmod_tests serve=1
	scif_rdma_counters > "$stats1"
	ok rdma_moved_by_rma moved_by_rma "$stats1" "$stats0"
	scif_rdma_counters > "$stats0"
	resource_watch "$resf" &
	watch_pid=$!
	kmod_tests hostile=1
	wait "$watch_pid"
	scif_rdma_counters > "$stats1"
	echo "# rdma resource show, during the hostile run: $(cat "$resf" 2> /dev/null)"
	echo "# (last seen: $(cat "$resf.last" 2> /dev/null))"
	ok rdma_resource_lists_objects test -s "$resf"
	ok rdma_statistic_counted_exactly counted_exactly
	ok rdma_link_delete link_delete
	ok rmmod_scif_rdma rmmod scif_rdma
	ok told_to_finish wait_for 300 http_fetched "http://$peer_ip/done"
	ok rmmod_scif_net rmmod_client scif_net
	ok rdma_modules_unloaded rmmod_loaded
}

echo "TAP version 13"
[ "${SCIF_NODES:-}" = 2 ] && [ -n "$self" ] || skip_all "not a node of a 2-node cluster"
[ -e "$ex/scif_net.ko" ] || skip_all "no $ex/scif_net.ko"
[ -e "$ex/scif_rdma.ko" ] || skip_all "no scif_rdma.ko for this kernel"
[ -e "$ex/ib_core.ko" ] || [ -d /sys/module/ib_core ] ||
	skip_all "no ib_core for this kernel"
command -v rdma > /dev/null || skip_all "no rdma in the initramfs"
peer=$((1 - self))
dev=sn$peer
my_ip=10.77.0.$((self + 1))
peer_ip=10.77.0.$((peer + 1))
ok setup sn_addr_up
if [ "$self" = 0 ]; then
	mkdir -p "$www"
	httpd -f -p 80 -h "$www" &
	httpd_pid=$!
	drive
else
	serve
fi
echo "1..$n"
[ $failed -eq 0 ]
