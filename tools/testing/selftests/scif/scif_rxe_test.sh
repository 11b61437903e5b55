#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# RDMA verbs over scif_net (Documentation/scif/net.rst): the kernel's soft
# RoCE driver, rdma_rxe, on the sn<peer> device between the two nodes of
# the node-loss cluster (node-loss-steps), right after scif_net_test.sh,
# which leaves scif_net unloaded on both nodes.  Both nodes load the
# guest kernel's rdma_rxe and what it needs (/modules/extra), scif_net,
# put 10.77.0.(node+1)/24 on sn<peer> and create rxe0 on it (rdma link
# add).  Node 1 serves the upstream programs, unmodified, one after the
# other: ibv_rc_pingpong (which checks the data it receives with -c),
# then perftest's ib_write_bw, ib_read_lat and ib_send_bw; busybox httpd
# tells node 0 when each server listens and then how it ended.  Node 0
# runs the clients against them and checks, in TAP, both sides' exit
# status and that the client reported its figures.  Then the teardown:
# rdma link delete, the RDMA modules unloaded, scif_net unloaded (node 1
# first: node 0 sees its carrier go off, then unloads in turn).
#
# RoCEv2 over IPv4: the GID of each node's IPv4 address is looked up in
# sysfs (the debug kernel has no IPv6, so there is no GID of a link-local
# IPv6 address there).  scif_net's MTU of 65535 gives rxe its largest
# path MTU, 4096.
#
# Node 1 runs this in its second life (scif_net_test.sh kills the
# first); in the lives scif_node_loss_test gives it later it skips.
set -u

# The upstream programs are at their host paths (mkinitramfs.sh).
PATH=$PATH:/usr/bin:/usr/sbin
self=${SCIF_NODE:-}
ex=/modules/extra
ko=$ex/scif_net.ko
# rdma_rxe and what it needs, in load order (crc32_generic: rxe asks the
# crypto API for "crc32", and there is no modprobe here to load it on
# demand); those built into the kernel are not in /modules/extra.
rdma_mods="crypto crypto_algapi crypto_hash crc32_generic udp_tunnel
	ip6_udp_tunnel ib_core ib_uverbs rdma_rxe"
www=/tmp/rxe-www
rxe=rxe0
gid=
n=0
failed=0
loaded=

# shellcheck disable=SC2034 # read by scif_tap_lib.sh
tap_suite=scif_rxe
# shellcheck source=tools/testing/selftests/scif/scif_tap_lib.sh
. "$(dirname "$0")/scif_tap_lib.sh"

fetched() { # URL: it is there (a 404 is expected until it is)
	timeout 5 wget -q -O /dev/null "$1" 2> /dev/null
}

# listening PORT: a TCP socket listens on it (state 0A in
# /proc/net/tcp, or tcp6 where there is IPv6).
listening() {
	cat /proc/net/tcp /proc/net/tcp6 2> /dev/null | awk -v p="$(printf ':%04X' "$1")" \
		'substr($2, length($2) - 4) == p && $4 == "0A" { f = 1 }
		 END { exit !f }'
}

listening_or_ended() { # port pid
	listening "$1" || ! kill -0 "$2" 2> /dev/null
}

load_rdma() {
	for m in $rdma_mods; do
		[ -e "/modules/extra/$m.ko" ] || continue
		grep -q "^$m " /proc/modules && continue
		insmod "/modules/extra/$m.ko" || return 1
		loaded="$m $loaded"
	done
	grep -q '^rdma_rxe ' /proc/modules
}

unload_rdma() {
	for m in $loaded; do
		rmmod "$m" || return 1
	done
	loaded=
}

# The sysfs index of the RoCEv2 GID of our IPv4 address on rxe0 (the
# address as an IPv4-mapped IPv6 one), once ib_core has added it.
gid_index() {
	want=$(echo "$my_ip" | awk -F. \
		'{ printf "0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x\n", $1, $2, $3, $4 }')
	p=/sys/class/infiniband/$rxe/ports/1
	for g in "$p"/gids/*; do
		i=${g##*/}
		[ "$(cat "$g" 2>/dev/null)" = "$want" ] &&
			[ "$(cat "$p/gid_attrs/types/$i" 2>/dev/null)" = "RoCE v2" ] &&
			{ echo "$i"; return 0; }
	done
	return 1
}

have_gid() {
	gid=$(gid_index)
}

link_active() {
	rdma link show "$rxe/1" 2>/dev/null | grep -q "state ACTIVE .*netdev $dev"
}

setup() {
	insmod_client scif_net &&
		wait_for 30 test -e "/sys/class/net/$dev" &&
		ip addr add "$my_ip/24" dev "$dev" && ip link set "$dev" up
}

rxe_add() {
	rdma link add "$rxe" type rxe netdev "$dev" &&
		wait_for 30 have_gid && echo "# $rxe: RoCEv2 GID index $gid"
}

# mtu_4096: the port's active MTU (rxe takes the largest that fits in
# the device's MTU), as libibverbs reports it through the provider.
mtu_4096() {
	out=$(ibv_devinfo -d "$rxe" 2>&1)
	echo "$out" | grep -E 'transport|active_mtu|link_layer' | sed 's/^[[:space:]]*/# /'
	echo "$out" | grep -q 'active_mtu:[[:space:]]*4096'
}

# The teardown the other way round: rxe0 goes before its device.
rxe_delete() {
	rdma link delete "$rxe" && [ ! -e "/sys/class/infiniband/$rxe" ]
}

# ---- node 1: the servers ----

# serve_one NAME PORT COMMAND...: start a server; NAME.ready once it
# listens (or has ended), NAME.rc and NAME.out when it has ended.
serve_one() {
	name=$1 port=$2
	shift 2
	timeout 60 "$@" > "/tmp/$name.out" 2>&1 &
	pid=$!
	wait_for 60 listening_or_ended "$port" "$pid"
	touch "$www/$name.ready"
	wait "$pid"
	rc=$?
	cp "/tmp/$name.out" "$www/$name.out"
	echo "$rc" > "$www/$name.rc"
	echo "# $name server: rc $rc (its output is in node 0's log)"
	[ "$rc" -eq 0 ]
}

serve() {
	ok carrier_on wait_for 120 carrier_is 1
	ok rxe_add rxe_add
	ok rxe_active wait_for 30 link_active
	ok rc_pingpong_server serve_one rc_pingpong 18515 \
		ibv_rc_pingpong -d "$rxe" -g "$gid" -p 18515 -n 200 -c
	ok write_bw_server serve_one write_bw 18516 \
		ib_write_bw -d "$rxe" -x "$gid" -p 18516 -n 100 -F -u 20
	ok read_lat_server serve_one read_lat 18517 \
		ib_read_lat -d "$rxe" -x "$gid" -p 18517 -n 200 -F -u 20
	ok send_bw_server serve_one send_bw 18518 \
		ib_send_bw -d "$rxe" -x "$gid" -p 18518 -n 100 -F -u 20
	ok told_to_finish wait_for 300 fetched "http://$peer_ip/done"
	kill "$httpd_pid"
	wait "$httpd_pid"
	ok rdma_link_delete rxe_delete
	ok rdma_modules_unloaded unload_rdma
	ok rmmod_scif_net rmmod_client scif_net
}

# ---- node 0: the clients ----

# client NAME COMMAND...: once node 1's server listens, run the client;
# it must succeed and print its figures (checked by the
# NAME_figures function), and the server must end well too.
client() {
	name=$1
	shift
	ok "${name}_server_ready" wait_for 90 fetched "http://$peer_ip/$name.ready"
	out=$(timeout 120 "$@" 2>&1)
	rc=$?
	echo "$out" | sed 's/^/# /'
	ok "${name}_server_ended" wait_for 150 fetched "http://$peer_ip/$name.rc"
	srv=$(timeout 10 wget -q -O - "http://$peer_ip/$name.out")
	echo "$srv" | sed 's/^/# server: /'
	ok "$name" [ "$rc" -eq 0 ]
	ok "${name}_figures" "${name}_figures"
	ok "${name}_server_ok" [ "$(timeout 10 wget -q -O - "http://$peer_ip/$name.rc")" = 0 ]
	counters
}

# rxe's counters that are not zero (retransmissions, duplicates, NAKs).
counters() {
	for c in /sys/class/infiniband/$rxe/ports/1/hw_counters/*; do
		v=$(cat "$c" 2> /dev/null) && [ "$v" != 0 ] && printf '%s=%s ' "${c##*/}" "$v"
	done | sed 's/^/# rxe counters: /'
	echo
}

# ibv_rc_pingpong: the bandwidth and latency lines, for all 200
# iterations, on both sides; the server found no bad data (-c).
rc_pingpong_figures() {
	echo "$out" | grep -Eq '^[0-9]+ bytes in [0-9.]+ seconds = [0-9.]+ Mbit/sec' &&
		echo "$out" | grep -Eq '^200 iters in [0-9.]+ seconds = [0-9.]+ usec/iter' &&
		! echo "$srv" | grep -q 'invalid data'
}

# perftest: the line of figures under the table's header, for the size
# asked (bandwidth: 65536 bytes, the default; latency: 2 bytes), with a
# bandwidth or latency above zero.
perf_line() { # size column
	echo "$out" | awk -v s="$1" -v c="$2" '
		$1 == s && $2 ~ /^[0-9]+$/ && $c ~ /^[0-9.]+$/ && $c > 0 { f = 1 }
		END { exit !f }'
}

write_bw_figures() { perf_line 65536 4; }
read_lat_figures() { perf_line 2 6; }
send_bw_figures() { perf_line 65536 4; }

drive() {
	ok carrier_on wait_for 60 carrier_is 1
	ok rxe_add rxe_add
	ok rxe_active wait_for 30 link_active
	ok rxe_mtu_4096 mtu_4096
	client rc_pingpong ibv_rc_pingpong -d "$rxe" -g "$gid" -p 18515 -n 200 -c "$peer_ip"
	client write_bw ib_write_bw -d "$rxe" -x "$gid" -p 18516 -n 100 -F -u 20 "$peer_ip"
	client read_lat ib_read_lat -d "$rxe" -x "$gid" -p 18517 -n 200 -F -u 20 "$peer_ip"
	client send_bw ib_send_bw -d "$rxe" -x "$gid" -p 18518 -n 100 -F -u 20 "$peer_ip"
	touch "$www/done"
	ok rdma_link_delete rxe_delete
	ok rdma_modules_unloaded unload_rdma
	# Node 1 unloads scif_net last; then its scif_node_loss_test serves.
	ok peer_unload_takes_carrier_off wait_for 120 carrier_is 0
	kill "$httpd_pid"
	wait "$httpd_pid"
	ok rmmod_scif_net rmmod_client scif_net
	ok device_gone test ! -e "/sys/class/net/$dev"
}

echo "TAP version 13"
[ "${SCIF_NODES:-}" = 2 ] && [ -n "$self" ] || skip_all "not a node of a 2-node cluster"
[ -e "$ko" ] || skip_all "no $ko"
[ -e /modules/extra/rdma_rxe.ko ] || [ -d /sys/module/rdma_rxe ] ||
	skip_all "no rdma_rxe for this kernel"
for p in rdma ibv_devinfo ibv_rc_pingpong ib_write_bw ib_read_lat ib_send_bw; do
	command -v "$p" > /dev/null || skip_all "no $p in the initramfs"
done
# SCIF_RXE_LIFE: the life in which node 1 serves (a step list without
# scif_net_test.sh before this one sets 0).
if [ "$self" = 1 ] && [ "${SCIF_RESTART:-0}" -ne "${SCIF_RXE_LIFE:-1}" ]; then
	skip_all "node 1 serves rxe in life ${SCIF_RXE_LIFE:-1} only"
fi
peer=$((1 - self))
dev=sn$peer
my_ip=10.77.0.$((self + 1))
peer_ip=10.77.0.$((peer + 1))
mkdir -p "$www"
httpd -f -p 80 -h "$www" &
httpd_pid=$!
ok rdma_modules_loaded load_rdma
ok setup setup
if [ "$self" = 0 ]; then
	drive
else
	serve
fi
echo "1..$n"
[ $failed -eq 0 ]
