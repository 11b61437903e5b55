#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# What `make bench` runs inside a guest (see scripts/bench.sh), once
# scif.ko (and scif_ivshmem.ko) are loaded:
#   bench-guest.sh serve    node 1 of the 2-node cluster: scif-bench serve
#                           until node 0 stops it
#   bench-guest.sh client   node 0: every mode to node 1 over SCIF and over
#                           TCP (the cluster's Ethernet link), memcpy, and
#                           the shared ivshmem device used raw
#   bench-guest.sh single   one VM: SCIF to itself, TCP over loopback,
#                           AF_UNIX, and memcpy
#   bench-guest.sh a2a      every node of an N-node cluster
#                           ($SCIF_BENCH_NODES, default 8): a server, and
#                           once every node serves, 64 KiB messages to
#                           every other node at once for
#                           $SCIF_BENCH_A2A_SECONDS (default 10): SETUP
#                           a2a rows, one per stream (scripts/bench.sh
#                           adds them up over the nodes)
#   bench-guest.sh ntb-client  node 0 of a 2-node cluster joined by the
#                           emulated NTB (scripts/bench-ntb.sh): the SCIF
#                           modes to node 1 (latency, messaging, connections,
#                           RMA), tagged $SCIF_BENCH_SETUP (default ntb);
#                           with SCIF_BENCH_MMAP=1 (a full-reach window)
#                           the mapped-window round trip too
# Figures go out as "bench: SETUP,<CSV row>" lines (SETUP 2vm or 1vm;
# 2vm-kpath and 1vm-kpath: the same with SCIF_FASTPATH=0 on both sides).
# When the initramfs carries the test build's software DMA provider
# (/modules/extra/scif_soft_dma.ko), the client and the single VM then
# reload scif.ko on top of it and measure RMA again with the copy engine
# on DMA (SETUP 2vm-dma, 1vm-dma; the via "eng" and "eng-a" rows).
# When the initramfs carries scif_net and rdma_rxe (/modules/extra) and
# perftest, the client also measures RDMA over rxe on scif_net
# (Documentation/scif/net.rst) against node 1: ib_write_bw (SETUP 2vm,
# mode writeto, via rxe: beside SCIF's RMA writeto rows) and ib_read_lat
# (mode lat, via rxe: an RDMA read's round trip); node 1 sets rxe up once
# node 0's scif_net connects, serves each run, and takes it down again.
# Before rxe, with iperf3 in the initramfs, node 0 measures TCP with
# iperf3 (one stream, then four) over scif_net (via iperf3-sn) and over
# the virtio-net link (via iperf3), printing iperf3's summary lines as
# "# iperf3-summary VIA: ..." (scripts/bench.sh makes them rows "2vm,bw,
# VIA,131072,SECONDS,,,,MB/s"); node 1 serves iperf3 from the start.
# When it also carries scif_rdma.ko, its test module and rdma_cm, the
# client then measures scif_rdma (Documentation/scif/rdma.rst) the same
# way: scif_rdma_test.ko bench=1 against node 1's serve=1 bench=1 prints
# the rows (via srd: RDMA WRITE and READ bandwidth, modes writeto and
# readfrom, and an 8-byte READ's round trip, mode lat; via kscif: the
# kernel API's own scif_vwriteto/scif_vreadfrom of 1 MiB between the same
# nodes, the same engine).
# Both scif_net.ko and scif_vsock.ko need scif_peer_links.ko there too.
# When it carries scif_vsock.ko, both nodes load it (with the kernel's
# vsock core) before anything else, node 1's scif-bench serves AF_VSOCK
# too, and node 0 measures lat, bw and connect over vsock (CID 4, node 1)
# beside the same modes over TCP.
# $SCIF_BENCH_ARGS is added to every measuring run (e.g. -q).
role=${1:-}
bench="scif-bench ${SCIF_BENCH_ARGS:-}"
rxe_mods="crypto crypto_algapi crypto_hash crc32_generic udp_tunnel
	ip6_udp_tunnel ib_core ib_uverbs rdma_rxe"
rxe_sizes="4096 65536 1048576"
rxe_iters=200
iperf_secs=10
case " ${SCIF_BENCH_ARGS:-} " in
*" -q "*) rxe_sizes=4096 rxe_iters=10 iperf_secs=2 ;;
esac
vsock_mods="vsock vmw_vsock_virtio_transport_common scif_peer_links scif_vsock"
srd_mods="configfs ib_core ib_uverbs ib_cm iw_cm rdma_cm scif_rdma"

# Wait up to 60 s for a server to answer on transport args "$@".
wait_server() {
	i=0
	until scif-bench "$@" -i 1 -q connect > /dev/null 2>&1; do
		i=$((i + 1))
		[ $i -lt 300 ] || { echo "bench: no server ($*)" >&2; return 1; }
		sleep 0.2
	done
}

# Run one measurement, tagging its rows with the setup.
measure() { # setup args...
	setup=$1
	shift
	echo "bench-progress: $setup $*" >&2
	# shellcheck disable=SC2086 # $bench is a command with options
	$bench -f csv "$@" | sed -n "2,\$s/^/bench: $setup,/p"
}

# measure with libscif's user-space data path off (fastpath.rst).
measure_kpath() { # setup args...
	setup=$1
	shift
	echo "bench-progress: $setup $*" >&2
	# shellcheck disable=SC2086 # $bench is a command with options
	SCIF_FASTPATH=0 $bench -f csv "$@" | sed -n "2,\$s/^/bench: $setup,/p"
}

# scif-bench reg takes its huge pages from the hugetlb pool when there are
# some: 40 pages of 2 MiB cover its largest size, 64 MiB.
echo 40 > /proc/sys/vm/nr_hugepages 2> /dev/null

# Reload scif.ko (and the bus module, if any) with the DMA provider
# loaded first; false if there is no provider.
reload_with_dma() {
	[ -e /modules/extra/scif_soft_dma.ko ] || return 1
	for m in $(sed '1!G;h;$!d' /modules/order); do
		rmmod "${m%.ko}" || return 1
	done
	insmod /modules/extra/scif_soft_dma.ko || return 1
	for m in $(cat /modules/order); do
		insmod "/modules/$m" || return 1
	done
	grep -q '^dma [1-9]' /sys/kernel/debug/scif/rma
}

# ---- rxe over scif_net ----

rxe_present() {
	[ -e /modules/extra/scif_net.ko ] && [ -e /modules/extra/rdma_rxe.ko ] &&
		[ -x /usr/bin/ib_write_bw ] && [ -x /usr/bin/ib_read_lat ]
}

# load_extra MODULE...: each that the initramfs carries, unless loaded.
load_extra() {
	for m in "$@"; do
		[ -e "/modules/extra/$m.ko" ] || continue
		grep -q "^$m " /proc/modules || insmod "/modules/extra/$m.ko" || return 1
	done
}

# unload_extra MODULE...: each that the initramfs carries, last first.
unload_extra() {
	for m in $(echo "$@" | awk '{ for (i = NF; i > 0; i--) print $i }'); do
		[ -e "/modules/extra/$m.ko" ] && rmmod "$m"
	done
}

# scif_net and scif_vsock use scif_peer_links.ko, which holds scif.ko:
# it goes once neither holds it.
links_down() {
	[ "$(cat /sys/module/scif_peer_links/refcnt 2> /dev/null)" != 0 ] ||
		rmmod scif_peer_links 2> /dev/null
}

# net_up NODE-ID PEER-ID SECONDS: scif_net loaded, sn<peer> up with
# 10.77.0.<id+1> and, within SECONDS, its carrier on (the peer's
# scif_net connected).
net_up() {
	dev=sn$2
	load_extra scif_peer_links && insmod /modules/extra/scif_net.ko ||
		return 1
	i=0
	until [ -e "/sys/class/net/$dev" ]; do
		i=$((i + 1))
		[ $i -lt 300 ] || return 1
		sleep 0.1
	done
	ip addr add "10.77.0.$(($1 + 1))/24" dev "$dev" && ip link set "$dev" up ||
		return 1
	i=0
	until [ "$(cat "/sys/class/net/$dev/carrier" 2> /dev/null)" = 1 ]; do
		i=$((i + 1))
		[ $i -lt $(($3 * 5)) ] || return 1
		sleep 0.2
	done
}

# rxe_up NODE-ID: rdma_rxe loaded, rxe0 on net_up's $dev; sets $gid to
# the index of the address's RoCE v2 GID.
rxe_up() {
	# shellcheck disable=SC2086 # a list of names
	load_extra $rxe_mods || return 1
	/usr/bin/rdma link add rxe0 type rxe netdev "$dev" || return 1
	want=$(printf '0000:0000:0000:0000:0000:ffff:0a4d:00%02x' $(($1 + 1)))
	p=/sys/class/infiniband/rxe0/ports/1
	i=0
	while [ $i -lt 100 ]; do
		for g in "$p"/gids/*; do
			gid=${g##*/}
			[ "$(cat "$g")" = "$want" ] &&
				[ "$(cat "$p/gid_attrs/types/$gid" 2> /dev/null)" = "RoCE v2" ] &&
				return 0
		done
		i=$((i + 1))
		sleep 0.1
	done
	return 1
}

rxe_down() {
	/usr/bin/rdma link delete rxe0
	# shellcheck disable=SC2086 # a list of names
	unload_extra $rxe_mods
	rmmod scif_net
	links_down
}

# Node 0, scif_net up: iperf3 TCP to node 1 over sn1 and over virtio-net,
# one stream and four.
iperf_client() {
	[ -x /usr/bin/iperf3 ] || return 0
	for streams in 1 4; do
		for link in "iperf3-sn 10.77.0.2" "iperf3 10.99.0.2"; do
			set -- $link
			[ "$streams" = 1 ] || set -- "$1-P4" "$2"
			echo "bench-progress: 2vm $1 -c $2 -P $streams" >&2
			i=0
			# Node 1's server may be busy with the last test a moment.
			until out=$(timeout 120 /usr/bin/iperf3 -4 -f m -c "$2" \
					-t "$iperf_secs" -P "$streams" 2>&1); do
				i=$((i + 1))
				[ $i -lt 10 ] || break
				sleep 1
			done
			# scripts/bench.sh makes the row (bench-lib.sh).
			echo "$out" | grep -E 'sender|receiver' |
				sed "s/^/# iperf3-summary $1: /"
		done
	done
}

# The vsock core and scif_vsock, where the initramfs has them.
vsock_present() {
	[ -e /modules/extra/scif_vsock.ko ]
}

# A closed socket may hold scif_vsock up to the common code's close
# timeout (8 s, vsock.rst): try for 15 s, then the vsock core.
vsock_down() {
	i=0
	until rmmod scif_vsock 2> /dev/null; do
		i=$((i + 1))
		[ $i -lt 75 ] || { echo "bench-progress: scif_vsock stays" >&2; return 1; }
		sleep 0.2
	done
	links_down
	unload_extra vsock vmw_vsock_virtio_transport_common
}

# Node 1: one server per client run, in the client's order.
rxe_serve() {
	if ! { net_up 1 0 1800 && rxe_up 1; }; then
		echo "bench-progress: rxe: no link to node 0" >&2
		rxe_down 2> /dev/null
		return 1
	fi
	for size in $rxe_sizes; do
		timeout 300 /usr/bin/ib_write_bw -d rxe0 -x "$gid" -p 18600 -F -u 20 \
			-s "$size" -n "$rxe_iters" > /dev/null 2>&1
	done
	timeout 300 /usr/bin/ib_read_lat -d rxe0 -x "$gid" -p 18600 -F -u 20 \
		-s 8 -n "$rxe_iters" > /dev/null 2>&1
	rxe_down
}

# ---- scif_rdma ----

srd_present() {
	[ -e /modules/extra/scif_net.ko ] && [ -e /modules/extra/scif_rdma.ko ] &&
		[ -e /modules/extra/scif_rdma_test.ko ] &&
		[ -e /modules/extra/rdma_cm.ko ] && [ -x /usr/bin/rdma ]
}

# srd_up NODE-ID PEER-ID SECONDS: net_up, the RDMA core and scif_rdma,
# and the device scif0 on net_up's $dev.
srd_up() {
	# shellcheck disable=SC2086 # a list of names
	net_up "$1" "$2" "$3" && load_extra $srd_mods &&
		/usr/bin/rdma link add scif0 type scif netdev "$dev"
}

srd_down() {
	/usr/bin/rdma link delete scif0
	# shellcheck disable=SC2086 # a list of names
	unload_extra $srd_mods
	rmmod scif_net
	links_down
}

# srd_test ARGS...: scif_rdma_test.ko on scif0 with ARGS, its bench rows.
srd_test() {
	insmod /modules/extra/scif_rdma_test.ko dev=scif0 netdev="$dev" "$@" ||
		return 1
	grep '^bench: ' /sys/kernel/debug/scif_rdma_test/results
	rmmod scif_rdma_test
}

# Node 1: the server of node 0's one run (its module waits for it).
srd_serve() {
	if ! srd_up 1 0 1800; then
		echo "bench-progress: scif_rdma: no device" >&2
		srd_down 2> /dev/null
		return 1
	fi
	srd_test serve=1 bench=1 my_ip=10.77.0.2 peer_ip=10.77.0.1 > /dev/null
	srd_down
}

srd_client() {
	if ! srd_up 0 1 120; then
		echo "bench-progress: scif_rdma: no device" >&2
		srd_down 2> /dev/null
		return 1
	fi
	echo "bench-progress: 2vm scif_rdma" >&2
	srd_test bench=1 my_ip=10.77.0.1 peer_ip=10.77.0.2
	srd_down
}

# rxe_run PROGRAM ARGS...: the client, tried again while node 1's server
# is not listening yet (up to a minute).
rxe_run() {
	i=0
	while :; do
		out=$(timeout 300 "$@" 10.77.0.2 2>&1) && return 0
		echo "$out" | grep -q "Couldn't connect" || break
		i=$((i + 1))
		[ $i -lt 300 ] || break
		sleep 0.2
	done
	echo "$out" | tail -n 3 | sed 's/^/bench-progress: rxe: /' >&2
	return 1
}

# Node 0: RDMA write bandwidth (perftest's MiB/s as MB/s) and RDMA read
# round trips (min, typical as the median, 99th percentile).
rxe_client() {
	if ! net_up 0 1 60; then
		echo "bench-progress: scif_net: no link to node 1" >&2
		rmmod scif_net 2> /dev/null
		links_down
		return 1
	fi
	# TCP over this link and over virtio-net, before rxe.
	iperf_client
	if ! rxe_up 0; then
		echo "bench-progress: rxe: no link to node 1" >&2
		rxe_down 2> /dev/null
		return 1
	fi
	for size in $rxe_sizes; do
		echo "bench-progress: 2vm ib_write_bw -s $size" >&2
		rxe_run /usr/bin/ib_write_bw -d rxe0 -x "$gid" -p 18600 -F -u 20 \
			-s "$size" -n "$rxe_iters" &&
			echo "$out" | awk -v s="$size" -v n="$rxe_iters" '
				$1 == s && $2 == n && $4 ~ /^[0-9.]+$/ {
					printf "bench: 2vm,writeto,rxe,%d,%d,,,,%.1f\n",
						s, n, $4 * 1.048576 }'
	done
	echo "bench-progress: 2vm ib_read_lat -s 8" >&2
	rxe_run /usr/bin/ib_read_lat -d rxe0 -x "$gid" -p 18600 -F -u 20 \
		-s 8 -n "$rxe_iters" &&
		echo "$out" | awk -v n="$rxe_iters" '
			$1 == 8 && $2 == n && $5 ~ /^[0-9.]+$/ && $5 > 0 {
				printf "bench: 2vm,lat,rxe,8,%d,%s,%s,%s,%.1f\n",
					n, $3, $5, $8, 1e6 / $5 }'
	rxe_down
}

# The comparisons the project tracks, again in $SCIF_BENCH_ROUNDS
# (default 3) interleaved rounds, SETUP 2vm-r<k> (2vm-r<k>-kpath):
# bench-report.sh gives each ratio's median over the rounds and its
# spread, so that a change is judged against the noise.  Messaging
# bandwidth is measured at every size from 256 B (64 B between the VMs)
# to 1 MiB in each round: the worst size's ratio to TCP is one of them,
# and one connection's figure may be an outlier (performance.rst).
rounds() {
	seq "${SCIF_BENCH_ROUNDS:-3}"
}

two_vm_rounds() {
	for r in $(rounds); do
		measure "2vm-r$r" -n 1 -s 8 lat
		measure "2vm-r$r" -n 1 raw-lat
		measure_kpath "2vm-r$r-kpath" -n 1 -p 2301 -s 8 lat
		measure "2vm-r$r" -t tcp -H 10.99.0.2 -s 8 lat
		measure "2vm-r$r" -n 1 -s 64:1M bw
		measure_kpath "2vm-r$r-kpath" -n 1 -p 2301 -s 64 bw
		measure "2vm-r$r" -t tcp -H 10.99.0.2 -s 64:1M bw
		measure "2vm-r$r" -n 1 connect
		measure "2vm-r$r" -t tcp -H 10.99.0.2 connect
	done
}

one_vm_rounds() {
	for r in $(rounds); do
		measure "1vm-r$r" connect
		measure "1vm-r$r" -t tcp connect
		measure "1vm-r$r" -s 8 lat
		measure "1vm-r$r" -t unix -s 8 lat
		measure "1vm-r$r" -s 256:1M bw
		measure "1vm-r$r" -t tcp -s 256:1M bw
	done
}

case "$role" in
serve)
	# shellcheck disable=SC2086 # a list of names
	vsock_present && { load_extra $vsock_mods ||
		echo "bench-progress: scif_vsock did not load" >&2; }
	[ -x /usr/bin/iperf3 ] && /usr/bin/iperf3 -s -D > /dev/null 2>&1
	# rxe over scif_net, once node 0 comes to it (its scif_net connects).
	# Then scif_rdma, the same way.
	{ ! rxe_present || rxe_serve; srd_present && srd_serve; } &
	# A second server without libscif's user-space data path, for the
	# kernel-path figures (SETUP 2vm-kpath; fastpath.rst).
	SCIF_FASTPATH=0 scif-bench serve -p 2301 2> /dev/null &
	scif-bench serve
	vsock_present && vsock_down
	;;
client)
	# shellcheck disable=SC2086 # a list of names
	vsock_present && { load_extra $vsock_mods ||
		echo "bench-progress: scif_vsock did not load" >&2; }
	wait_server -n 1 || exit 1
	wait_server -t tcp -H 10.99.0.2 || exit 1
	measure 2vm -n 1 lat bw connect rma reg
	wait_server -n 1 -p 2301 &&
		measure_kpath 2vm-kpath -n 1 -p 2301 lat bw
	measure 2vm -t tcp -H 10.99.0.2 lat bw connect
	# AF_VSOCK over scif_vsock (node 1 is CID 4), beside TCP.  Not bw
	# at 256 B: the 6.12 kernels' common code resets a connection whose
	# reader lags behind packets of 129 to ~600 bytes (vsock.rst).
	vsock_present && wait_server -t vsock -H 4 &&
		measure 2vm -t vsock -H 4 lat connect &&
		measure 2vm -t vsock -H 4 -s 64 bw &&
		measure 2vm -t vsock -H 4 -s 1K:1M bw
	# 10,000 idle connections held by node 1, and lat with them open.
	measure 2vm -n 1 idle
	measure 2vm memcpy copy64
	measure 2vm -n 1 raw-lat raw-bw mmap-lat
	two_vm_rounds
	# Before the reload below: scif_net and scif_vsock hold scif.ko (by
	# scif_peer_links.ko).
	rxe_present && rxe_client
	srd_present && srd_client
	vsock_present && vsock_down
	# Node 1 keeps serving while this node comes back with DMA.
	if reload_with_dma && wait_server -n 1; then
		measure 2vm-dma -n 1 rma
	fi
	scif-bench -n 1 -p 2301 stop
	scif-bench -n 1 stop
	;;
a2a)
	nodes=${SCIF_BENCH_NODES:-8}
	secs=${SCIF_BENCH_A2A_SECONDS:-10}
	self=$(cat /sys/class/misc/scif/node_id)
	scif-bench serve 2> /dev/null &
	server=$!
	for p in $(seq 0 $((nodes - 1))); do
		[ "$p" = "$self" ] || wait_server -n "$p" || exit 1
	done
	pids=
	for p in $(seq 0 $((nodes - 1))); do
		[ "$p" = "$self" ] && continue
		measure a2a -n "$p" -s 64K -d "$secs" bw > "/tmp/a2a.$p" &
		pids="$pids $!"
	done
	# shellcheck disable=SC2086 # the clients' pids are words
	wait $pids
	cat /tmp/a2a.*
	# The others' streams into this node's server may still run.
	sleep $((secs + 20))
	kill "$server"
	;;
ntb-client)
	setup=${SCIF_BENCH_SETUP:-ntb}
	wait_server -n 1 || exit 1
	# One run per mode: a mode that fails does not cost the others.
	for mode in lat bw connect rma; do
		measure "$setup" -n 1 "$mode"
	done
	# Without a full-reach window no window maps the peer's pages.
	[ "${SCIF_BENCH_MMAP:-0}" = 0 ] || measure "$setup" -n 1 mmap-lat
	scif-bench -n 1 stop
	;;
single)
	scif-bench serve 2> /dev/null &
	server=$!
	wait_server || exit 1
	measure 1vm lat bw connect rma reg
	SCIF_FASTPATH=0 scif-bench serve -p 2301 2> /dev/null &
	kserver=$!
	if wait_server -p 2301; then
		measure_kpath 1vm-kpath -p 2301 lat bw
		scif-bench -p 2301 stop
	fi
	wait $kserver
	measure 1vm -t tcp lat bw connect
	measure 1vm -t unix lat bw connect
	measure 1vm memcpy copy64
	one_vm_rounds
	scif-bench stop
	wait $server
	if reload_with_dma; then
		scif-bench serve 2> /dev/null &
		server=$!
		wait_server || exit 1
		measure 1vm-dma rma
		scif-bench stop
		wait $server
	fi
	;;
*)
	echo "usage: $0 serve|client|ntb-client|single" >&2
	exit 2
	;;
esac
