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
# $SCIF_BENCH_ARGS is added to every measuring run (e.g. -q).
role=${1:-}
bench="scif-bench ${SCIF_BENCH_ARGS:-}"

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

# The comparisons the project tracks, again in $SCIF_BENCH_ROUNDS
# (default 3) interleaved rounds, SETUP 2vm-r<k> (2vm-r<k>-kpath):
# bench-report.sh gives each ratio's median over the rounds and its
# spread, so that a change is judged against the noise.
rounds() {
	seq "${SCIF_BENCH_ROUNDS:-3}"
}

two_vm_rounds() {
	for r in $(rounds); do
		measure "2vm-r$r" -n 1 -s 8 lat
		measure "2vm-r$r" -n 1 raw-lat
		measure_kpath "2vm-r$r-kpath" -n 1 -p 2301 -s 8 lat
		measure "2vm-r$r" -t tcp -H 10.99.0.2 -s 8 lat
		measure "2vm-r$r" -n 1 -s 64 bw
		measure_kpath "2vm-r$r-kpath" -n 1 -p 2301 -s 64 bw
		measure "2vm-r$r" -t tcp -H 10.99.0.2 -s 64 bw
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
	done
}

case "$role" in
serve)
	# A second server without libscif's user-space data path, for the
	# kernel-path figures (SETUP 2vm-kpath; fastpath.rst).
	SCIF_FASTPATH=0 scif-bench serve -p 2301 2> /dev/null &
	exec scif-bench serve
	;;
client)
	wait_server -n 1 || exit 1
	wait_server -t tcp -H 10.99.0.2 || exit 1
	measure 2vm -n 1 lat bw connect rma reg
	wait_server -n 1 -p 2301 &&
		measure_kpath 2vm-kpath -n 1 -p 2301 lat bw
	measure 2vm -t tcp -H 10.99.0.2 lat bw connect
	# 10,000 idle connections held by node 1, and lat with them open.
	measure 2vm -n 1 idle
	measure 2vm memcpy copy64
	measure 2vm -n 1 raw-lat raw-bw mmap-lat
	two_vm_rounds
	# Node 1 keeps serving while this node comes back with DMA.
	if reload_with_dma && wait_server -n 1; then
		measure 2vm-dma -n 1 rma
	fi
	scif-bench -n 1 -p 2301 stop
	scif-bench -n 1 stop
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
