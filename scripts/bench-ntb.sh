#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench-ntb.sh [OUT]: the NTB part of make bench (scripts/bench.sh calls
# it; it also runs alone), on the kernel and the emulated machines of the
# rest of the bench (TCG, 1 vCPU and 512 MiB per node):
#   ntb-full   SCIF over NTB (scif_ntb.ko) between two VMs joined by the
#              emulated NTB with its full-reach window (qemu/cluster.sh -T
#              ntb-full, ntb_ivshmem full_reach=1): the SCIF modes of the
#              2vm setup over ivshmem (bench-guest.sh ntb-client: latency,
#              messaging, connections, RMA, the mapped-window round trip)
#   ntb-stage  the same with the two windows of 4 and 2 MiB only
#              (cluster.sh -T ntb): RMA goes through staging buffers, and
#              no window maps the peer's pages (no mmap row)
#   ntb-perf   the upstream ntb_perf on the same emulated device in one VM
#              holding both ports, as ntb_test.sh runs it
#              (qemu/ntb-guest/ntb-perf-bench): 4 KiB to 1 MiB chunks, by
#              CPU and with the test build's software DMA provider
#   ntb-net    TCP over ntb_transport + ntb_netdev between two VMs joined by
#              the same device (ntb-vm.sh -2, qemu/ntb-guest/ntb-netdev):
#              iperf3's receiver figure, one row "ntb-net,bw,iperf3,131072,
#              SECONDS,,,,MB/s" (iperf3's default 128 KiB writes; MB/s
#              is its bit rate / 8), then scif-bench's TCP modes (lat, bw,
#              connect) over the same link, as over virtio-net in the 2vm
#              setup but for 3 s a size (-d 3)
# Rows (results.csv's columns, no header) go to OUT/ntb/results.rows; logs
# under OUT/ntb/.  OUT defaults to build/bench.  BENCH_QUICK=1: tiny sizes
# and short runs (a smoke run).  BENCH_NTB_RUNS: the setups to run (default
# "ntb-full ntb-stage ntb-perf ntb-net").  Exit status 0 if every run gave its
# figures and every kernel log is clean.  Needs SCIF_QEMU_LOCK like the
# rest (cluster.sh and ntb-vm.sh take it themselves).
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/bench-lib.sh
. "$top/scripts/bench-lib.sh"
BUILD=${BUILD:-$top/build}
export BUILD
out=${1:-${BENCH_OUT:-$BUILD/bench}}
quick=${BENCH_QUICK:-0}
args=
[ "$quick" = 0 ] || args=-q

say() { echo "bench-ntb: $*" >&2; }
runs=${BENCH_NTB_RUNS:-ntb-full ntb-stage ntb-perf ntb-net}
want_run() { case " $runs " in *" $1 "*) ;; *) return 1 ;; esac; }

rel=$(sh "$top/scripts/kernels.sh" default)
case $rel in
6.12.*) k=6.12 ;;
6.1.*) k=6.1 ;;
*) say "no NTB build for kernel $rel (6.1 or 6.12 only)"; exit 1 ;;
esac
image=$(sh "$top/scripts/kernels.sh" image "$rel")
kdir=/lib/modules/$rel/build
ntb=$BUILD/ntb/$k
moddir=$BUILD/modules/$rel
mod=$moddir/drivers/misc/scif
soft=$moddir/tools/testing/selftests/scif/kmod/scif_soft_dma.ko

say "building the NTB modules and scif_ntb.ko for $rel"
sh "$top/scripts/ntb-deps.sh"
[ -e "$ntb/Module.symvers" ] || sh "$top/scripts/ntb-modules.sh" "$k" > /dev/null
make -s -C "$top" ntb-modules KDIR="$kdir" NTB_SYMVERS="$ntb/Module.symvers" \
	NTB_MODDIR="$ntb/hw"
# scif.ko as bench.sh builds it (no test hooks), plus scif_ntb.ko.
make -s -C "$top" test-modules KVER="$rel" MODDIR="$moddir" \
	SCIF_NTB_SYMVERS="$ntb/Module.symvers"
[ -x "$BUILD/selftests/scif-bench" ] || make -s -C "$top" lib selftests
[ -x "$BUILD/qemu/ivshmem-server" ] || make -s -C "$top/qemu" OUTPUT="$BUILD/qemu"

dir=$out/ntb
rm -rf "$dir"
mkdir -p "$dir/guest" "$dir/lists"
rows=$dir/results.rows
: > "$rows"
status=0

# ---- SCIF over NTB: one initramfs for both clusters.  ntb-load.sh loads
# the NTB core and the emulated device (with full_reach=1 or not) before
# the insmod step loads scif.ko and scif_ntb.ko.
cp -a "$BUILD/selftests/." "$dir/guest/"
cp "$top/qemu/bench-guest.sh" "$dir/guest/"
for setup in ntb-full ntb-stage; do
	load=ntb-load.sh mmap=0
	[ "$setup" = ntb-stage ] || load="ntb-load.sh full_reach=1" mmap=1
	printf '%s\ninsmod\nSCIF_BENCH_ARGS=%s SCIF_BENCH_SETUP=%s SCIF_BENCH_MMAP=%s bench-guest.sh ntb-client\nrmmod\nntb-load.sh unload\n' \
		"$load" "$args" "$setup" "$mmap" > "$dir/guest/bench-$setup-client"
	printf '%s\ninsmod\nbench-guest.sh serve\nrmmod\nntb-load.sh unload\n' \
		"$load" > "$dir/guest/bench-$setup-serve"
done
EXTRA_MODULES="$ntb/ntb.ko $ntb/hw/ntb_ivshmem.ko" \
	sh "$top/qemu/mkinitramfs.sh" "$dir/scif-ntb.cpio" \
	"$dir/guest/bench-ntb-full-client" "$dir/guest" "$mod/scif.ko" "$mod/scif_ntb.ko"

limit=1800
[ "$quick" = 0 ] || limit=400
for setup in ntb-full ntb-stage; do
	want_run "$setup" || continue
	topo="ntb-full"
	[ "$setup" = ntb-full ] || topo=ntb
	say "two VMs: SCIF over the emulated NTB ($setup, cluster.sh -T $topo)"
	bash "$top/qemu/cluster.sh" -n 2 -T "$topo" -k "$image" -i "$dir/scif-ntb.cpio" \
		-o "$dir/$setup" -t "$limit" -a "scif.step_timeout=$limit $guest_args" \
		-s "bench-$setup-client,bench-$setup-serve" \
		-S "$BUILD/qemu/ivshmem-server" > "$dir/$setup.log" 2>&1 ||
		{ say "$setup: the cluster launcher reported a failure (see $dir/$setup.log)"; status=1; }
	tr -d '\r' < "$dir/$setup/node0/results.log" | sed -n 's/^bench: //p' >> "$rows"
	for j in 0 1; do
		bash "$top/qemu/check-log.sh" "$dir/$setup/node$j/console.log" > /dev/null ||
			{ say "kernel log not clean: $dir/$setup/node$j/console.log"; status=1; }
	done
done

# ---- ntb_perf in one VM, and ntb_netdev between two, on the NTB tests'
# initramfs with two more step lists.
if [ "$quick" = 0 ]; then
	echo "NTB_PERF_TOTAL=30 NTB_PERF_DMA_TOTAL=28 ntb-perf-bench" > "$dir/lists/bench-ntb-perf-steps"
	# scif-bench for 3 s a size: TCP over ntb_netdev is too slow for its
	# fixed 64 MiB a size (the first run took more than 10 minutes).
	echo "NTB_IPERF_TIME=10 NTB_SCIF_BENCH=1 NTB_BENCH_ARGS=-d3 ntb-netdev" > "$dir/lists/bench-ntb-net-steps"
else
	echo "NTB_PERF_TOTAL=24 NTB_PERF_CHUNKS=12,20 ntb-perf-bench" > "$dir/lists/bench-ntb-perf-steps"
	echo "NTB_IPERF_TIME=2 NTB_SCIF_BENCH=1 NTB_BENCH_ARGS=-q ntb-netdev" > "$dir/lists/bench-ntb-net-steps"
fi
NTB_DMA_MODULE=$soft NTB_EXTRA_FILES=$BUILD/selftests/scif-bench \
NTB_EXTRA_LISTS="$dir/lists/bench-ntb-perf-steps $dir/lists/bench-ntb-net-steps" \
	sh "$top/scripts/ntb-initramfs.sh" "$dir/ntb-tests.cpio" "$rel" "$ntb"

if want_run ntb-perf; then
	say "one VM: ntb_perf on the emulated NTB, by CPU and with DMA"
	SCIF_VM_CPUS=1 SCIF_VM_MEM=512M bash "$top/qemu/ntb-vm.sh" -k "$image" \
		-i "$dir/ntb-tests.cpio" -o "$dir/ntb-perf" -t "$limit" -a "scif.step_timeout=$limit $guest_args" \
		-s bench-ntb-perf-steps \
		-S "$BUILD/qemu/ivshmem-server" > "$dir/ntb-perf.log" 2>&1 ||
		{ say "ntb-perf: the VM reported a failure (see $dir/ntb-perf.log)"; status=1; }
	tr -d '\r' < "$dir/ntb-perf/results.log" | sed -n 's/^bench: //p' >> "$rows"
	bash "$top/qemu/check-log.sh" "$dir/ntb-perf/console.log" > /dev/null ||
		{ say "kernel log not clean: $dir/ntb-perf/console.log"; status=1; }
fi

if want_run ntb-net; then
	say "two VMs: TCP over ntb_netdev (iperf3, scif-bench)"
	SCIF_VM_CPUS=1 SCIF_VM_MEM=512M bash "$top/qemu/ntb-vm.sh" -2 -k "$image" \
		-i "$dir/ntb-tests.cpio" -o "$dir/ntb-net" -t "$limit" -a "scif.step_timeout=$limit $guest_args" \
		-s bench-ntb-net-steps \
		-S "$BUILD/qemu/ivshmem-server" > "$dir/ntb-net.log" 2>&1 ||
		{ say "ntb-net: the VMs reported a failure (see $dir/ntb-net.log)"; status=1; }
	tr -d '\r' < "$dir/ntb-net/node0/results.log" | sed -n 's/^bench: //p' >> "$rows"
	# "# iperf3-summary: [  5]   0.00-10.00  sec   612 MBytes   513 Mbits/sec   receiver"
	iperf3_rows ntb-net < "$dir/ntb-net/node0/results.log" >> "$rows"
	for j in 0 1; do
		bash "$top/qemu/check-log.sh" "$dir/ntb-net/node$j/console.log" > /dev/null ||
			{ say "kernel log not clean: $dir/ntb-net/node$j/console.log"; status=1; }
	done
fi

# Every setup must have measured every mode it runs.
for want in "ntb-full lat scif" "ntb-full bw scif" "ntb-full connect scif" \
	    "ntb-full writeto cpu" "ntb-full writeto eng" "ntb-full lat mmap" \
	    "ntb-stage lat scif" "ntb-stage bw scif" "ntb-stage writeto cpu" \
	    "ntb-stage readfrom eng-a" "ntb-perf perf cpu" "ntb-net bw iperf3" \
	    "ntb-net lat tcp" "ntb-net bw tcp"; do
	read -r s m v <<< "$want"
	want_run "$s" || continue
	awk -F, -v s="$s" -v m="$m" -v v="$v" \
		'$1 == s && $2 == m && $3 == v { found = 1 } END { exit !found }' "$rows" ||
		{ say "missing: $want"; status=1; }
done
if want_run ntb-perf && [ -n "$soft" ] && [ -e "$soft" ] &&
   ! awk -F, '$1 == "ntb-perf" && $3 == "dma" { f = 1 } END { exit !f }' "$rows"; then
	say "missing: ntb-perf perf dma"
	status=1
fi
say "$(wc -l < "$rows") rows in $rows"
exit "$status"
