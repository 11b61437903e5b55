#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench: install what is needed, build for the newest Debian kernel,
# then measure in one go, on the same emulated machines:
#   - one VM: SCIF to itself, TCP over loopback, AF_UNIX, memcpy;
#   - a 2-node cluster joined by ivshmem and, for the comparison, by an
#     Ethernet link (cluster.sh -N): SCIF and TCP between the VMs, memcpy,
#     and the link itself used raw from user space (cluster.sh -R);
#   - in both, RMA again with the copy engine on the test build's
#     software DMA provider (setups 1vm-dma and 2vm-dma);
#   - between the two VMs, RDMA writes and reads over rxe on scif_net
#     (perftest; via rxe) and over scif_rdma (its test module in bench
#     mode; via srd, beside the kernel API's own RMA, via kscif), TCP by
#     iperf3 over scif_net and over the
#     virtio-net link (via iperf3-sn and iperf3; -P4: four streams), and
#     AF_VSOCK over scif_vsock (via vsock) beside the TCP rows;
#   - user verbs (scripts/bench-verbs.sh; BENCH_VERBS=0 leaves it out):
#     perftest over scif_rdma through libscif_rdma between two VMs
#     (setup 2vm, via srd-user and srd-user-*), beside rxe's and SCIF's;
#   - MPI (scripts/bench-mpi.sh; BENCH_MPI=0 leaves it out): Open MPI's
#     ping-pong between two of three VMs over scif_rdma (libfabric's
#     verbs;ofi_rxm through libscif_rdma) and over TCP on scif_net
#     (setup 3vm, via mpi-verbs and mpi-tcp);
#   - NVMe over Fabrics (scripts/bench-nvmeof.sh; BENCH_NVMEOF=0 leaves
#     it out): fio reading a RAM namespace over scif_rdma, against
#     NVMe/TCP over scif_net and over the virtio-net link (setup 2vm-nvme);
#   - a drive's DMA into a remote window (scripts/bench-nvme.sh;
#     BENCH_NVME=0 leaves it out): QEMU's NVMe drive under VFIO reading
#     and writing blocks into and from another node's window through a
#     device-map file, beside its own memory and the CPU path, in the
#     VFIO cluster (setup 2vm-nvmedev);
#   - $BENCH_A2A_NODES VMs (default 8; 0: none) streaming 64 KiB messages
#     all to all at once (setup a2a; the report adds the streams up);
#   - the NTB part (scripts/bench-ntb.sh): SCIF over the emulated NTB
#     (scif_ntb) between two VMs, with the full-reach window and with the
#     4 MiB windows only (setups ntb-full, ntb-stage), the upstream
#     ntb_perf on the same device (ntb-perf) and TCP over ntb_netdev
#     (ntb-net).
# Results go to $BENCH_OUT (default build/bench): results.csv (every
# figure), results.txt (the same as a table, with the ratios), and the
# plots bandwidth.png and latency.png.  BENCH_QUICK=1 runs tiny sizes
# (a smoke run: the figures mean nothing).  BENCH_ROUNDS (default 3;
# 1 with BENCH_QUICK) is how many interleaved rounds of the tracked
# comparisons each setup repeats; results.txt gives their ratios as a
# median and its spread.  BENCH_NTB=0 leaves the NTB
# part out; BENCH_NTB=only runs nothing else (the report then has only
# the NTB figures).  BENCH_GUEST_ARGS (default none) is added to every
# guest's kernel command line (scripts/bench-lib.sh).
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/bench-lib.sh
. "$top/scripts/bench-lib.sh"
BUILD=${BUILD:-$top/build}
out=${BENCH_OUT:-$BUILD/bench}
args=
rounds=${BENCH_ROUNDS:-3}
a2a_secs=10
[ "${BENCH_QUICK:-0}" = 0 ] || { args=-q; rounds=${BENCH_ROUNDS:-1}; a2a_secs=1; }
A2A_NODES=${BENCH_A2A_NODES:-8}
case $A2A_NODES in
0|[2-8]) ;;
*) echo "bench: BENCH_A2A_NODES must be 2 to 8, or 0 (none)" >&2; exit 2 ;;
esac
case $rounds in
[1-9]|[1-9][0-9]) ;;
*) echo "bench: BENCH_ROUNDS must be 1 to 99" >&2; exit 2 ;;
esac
ntb=${BENCH_NTB:-1}
case $ntb in
0|1|only) ;;
*) echo "bench: BENCH_NTB must be 0, 1 or only" >&2; exit 2 ;;
esac

say() { echo "bench: $*" >&2; }

sh "$top/scripts/deps.sh"
rel=$(sh "$top/scripts/kernels.sh" default)
mod=$BUILD/modules/$rel/drivers/misc/scif
say "building for $rel"
# test-modules: scif.ko, and the software DMA provider for the RMA by
# DMA figures (scif.ko itself is built without test hooks).
make -s -C "$top" test-modules KVER="$rel" MODDIR="$BUILD/modules/$rel"
soft=$BUILD/modules/$rel/tools/testing/selftests/scif/kmod/scif_soft_dma.ko
make -s -C "$top" lib selftests
make -s -C "$top/qemu" OUTPUT="$BUILD/qemu"

rm -rf "$out"
mkdir -p "$out/guest"
[ -z "$guest_args" ] || echo "$guest_args" > "$out/guest-args"
cp -a "$BUILD/selftests/." "$out/guest/"
cp "$top/qemu/bench-guest.sh" "$out/guest/"
for role in single client serve a2a; do
	printf 'insmod\nSCIF_BENCH_ARGS=%s SCIF_BENCH_ROUNDS=%s SCIF_BENCH_NODES=%s SCIF_BENCH_A2A_SECONDS=%s bench-guest.sh %s\nrmmod\n' \
		"$args" "$rounds" "$A2A_NODES" "$a2a_secs" "$role" > "$out/guest/bench-$role"
done
# The guest's virtio-net driver and what it needs, in load order.
net=$(for m in virtio_pci virtio_net; do
	modprobe --show-depends -d "$(sh "$top/scripts/kernels.sh" modbase "$rel")" -S "$rel" "$m"
done | awk '$1 == "insmod" && !seen[$2]++ { print $2 }')

# rxe over scif_net (bench-guest.sh): rdma_rxe and what it needs, in load
# order, perftest and the rxe provider (as scripts/check.sh's node-loss run).
# scif_rdma (the same place) needs rdma_cm and what it needs.
rxe=$(for m in crc32_generic rdma_rxe ib_uverbs rdma_cm; do
	modprobe --show-depends -d "$(sh "$top/scripts/kernels.sh" modbase "$rel")" -S "$rel" "$m"
done | awk '$1 == "insmod" && !seen[$2]++ { print $2 }')

# scif_vsock (bench-guest.sh: vsock against TCP) on the kernel's vsock
# core and virtio common code, where the kernel has them.
vsock=
if [ -e "$BUILD/modules/$rel/net/vmw_vsock/scif_vsock.ko" ]; then
	vsock="$(modprobe --show-depends -d "$(sh "$top/scripts/kernels.sh" modbase "$rel")" \
		-S "$rel" vmw_vsock_virtio_transport_common | awk '$1 == "insmod" { print $2 }')
		$BUILD/modules/$rel/net/vmw_vsock/scif_vsock.ko"
fi

srd=
if [ -e "$BUILD/modules/$rel/drivers/infiniband/hw/scif/scif_rdma.ko" ]; then
	srd="$BUILD/modules/$rel/drivers/infiniband/hw/scif/scif_rdma.ko
		$BUILD/modules/$rel/tools/testing/selftests/scif/kmod/scif_rdma_test.ko"
fi

EXTRA_MODULES="$soft $BUILD/modules/$rel/net/scif/scif_peer_links.ko
	$BUILD/modules/$rel/drivers/net/scif/scif_net.ko $rxe $vsock $srd" \
EXTRA_PROGRAMS="/usr/bin/ib_write_bw /usr/bin/ib_read_lat /usr/bin/rdma
	$(echo /usr/lib/*/libibverbs/librxe-rdmav*.so) $(command -v iperf3)" \
EXTRA_FILES=/etc/libibverbs.d/rxe.driver \
NET_MODULES=$net sh "$top/qemu/mkinitramfs.sh" "$out/bench.cpio" \
	"$out/guest/bench-single" "$out/guest" "$mod/scif.ko" "$mod/scif_ivshmem.ko"

status=0
if [ "$ntb" != only ]; then
	say "one VM: SCIF loopback, TCP loopback, AF_UNIX, memcpy"
	SCIF_VM_TIMEOUT=1800 sh "$top/qemu/run-vm.sh" "$(sh "$top/scripts/kernels.sh" image "$rel")" \
		"$out/bench.cpio" "$out/vm" $guest_args || say "the VM exited with status $?"
	say "two VMs: SCIF over ivshmem, TCP over virtio-net, memcpy"
	# 2G each: the idle mode's 10,000 connections take ~700 MiB a node.
	bash "$top/qemu/cluster.sh" -n 2 -N -R -m 2G -k "$(sh "$top/scripts/kernels.sh" image "$rel")" -i "$out/bench.cpio" \
		-o "$out/cluster" -t 1800 -a "$guest_args" -s bench-client,bench-serve \
		-S "$BUILD/qemu/ivshmem-server" > "$out/cluster.log" 2>&1 ||
		say "the cluster launcher reported a failure (see $out/cluster.log)"
	if [ "${BENCH_NVMEOF:-1}" != 0 ]; then
		bash "$top/scripts/bench-nvmeof.sh" "$out" ||
			{ say "the NVMe-oF part is incomplete (see $out/nvmeof)"; status=1; }
	fi
	if [ "${BENCH_NVME:-1}" != 0 ]; then
		bash "$top/scripts/bench-nvme.sh" "$out" ||
			{ say "the NVMe device-map part is incomplete (see $out/nvme)"; status=1; }
	fi
	if [ "${BENCH_VERBS:-1}" != 0 ]; then
		bash "$top/scripts/bench-verbs.sh" "$out" ||
			{ say "the user verbs part is incomplete (see $out/verbs)"; status=1; }
	fi
	if [ "${BENCH_MPI:-1}" != 0 ]; then
		bash "$top/scripts/bench-mpi.sh" "$out" ||
			{ say "the MPI part is incomplete (see $out/mpi)"; status=1; }
	fi
	[ "$A2A_NODES" = 0 ] ||
		say "$A2A_NODES VMs: SCIF all to all, 64 KiB messages"
	[ "$A2A_NODES" = 0 ] ||
	bash "$top/qemu/cluster.sh" -n "$A2A_NODES" -k "$(sh "$top/scripts/kernels.sh" image "$rel")" \
		-i "$out/bench.cpio" -o "$out/a2a" -t 1200 -a "$guest_args" -s bench-a2a \
		-S "$BUILD/qemu/ivshmem-server" > "$out/a2a.log" 2>&1 ||
		say "the all-to-all cluster reported a failure (see $out/a2a.log)"
fi
if [ "$ntb" != 0 ]; then
	say "the NTB part: SCIF over NTB, ntb_perf, TCP over ntb_netdev"
	bash "$top/scripts/bench-ntb.sh" "$out" ||
		{ say "the NTB part is incomplete (see $out/ntb)"; status=1; }
fi

csv=$out/results.csv
echo "setup,mode,via,size,count,min_us,median_us,p99_us,rate,ctxt,intr" > "$csv"
if [ "$ntb" != only ]; then
	cat "$out/vm/results.log" "$out/cluster/node0/results.log" |
		tr -d '\r' | sed -n 's/^bench: //p' >> "$csv"
	iperf3_rows 2vm < "$out/cluster/node0/results.log" >> "$csv"
	for log in "$out/vm/console.log" "$out/cluster/node0/console.log" \
		   "$out/cluster/node1/console.log"; do
		bash "$top/qemu/check-log.sh" "$log" > /dev/null ||
			{ say "kernel log not clean: $log"; status=1; }
	done
	# The all-to-all rows of every node: bench-report.sh adds them up.
	for n in $(seq 0 $((A2A_NODES - 1))); do
		[ "$A2A_NODES" = 0 ] && break
		tr -d '\r' < "$out/a2a/node$n/results.log" 2> /dev/null |
			sed -n 's/^bench: //p' >> "$csv"
		bash "$top/qemu/check-log.sh" "$out/a2a/node$n/console.log" > /dev/null ||
			{ say "kernel log not clean: $out/a2a/node$n/console.log"; status=1; }
	done
fi
[ "$ntb" = 0 ] || cat "$out/ntb/results.rows" >> "$csv" 2> /dev/null || true
[ "$ntb" = only ] || [ "${BENCH_NVMEOF:-1}" = 0 ] ||
	cat "$out/nvmeof/results.rows" >> "$csv" 2> /dev/null || true
[ "$ntb" = only ] || [ "${BENCH_NVME:-1}" = 0 ] ||
	cat "$out/nvme/results.rows" >> "$csv" 2> /dev/null || true
[ "$ntb" = only ] || [ "${BENCH_VERBS:-1}" = 0 ] ||
	cat "$out/verbs/results.rows" >> "$csv" 2> /dev/null || true
[ "$ntb" = only ] || [ "${BENCH_MPI:-1}" = 0 ] ||
	cat "$out/mpi/results.rows" >> "$csv" 2> /dev/null || true
# Every setup must have measured every mode it runs (bench-ntb.sh checks
# its own).
[ "$ntb" = only ] ||
for want in "1vm lat scif" "1vm bw tcp" "1vm lat unix" "1vm memcpy -" \
	    "2vm lat scif" "2vm bw scif" "2vm lat tcp" "2vm bw tcp" "2vm connect scif" \
	    "2vm lat raw" "2vm raw-wr raw" "2vm raw-rd raw" "2vm-kpath lat scif" \
	    "2vm lat-idle scif" "2vm writeto rxe" "2vm lat rxe" \
	    "2vm writeto srd" "2vm readfrom srd" "2vm lat srd" "2vm writeto kscif" \
	    "2vm bw iperf3-sn" "2vm bw iperf3" "2vm bw iperf3-sn-P4" \
	    "2vm bw iperf3-P4" "2vm lat vsock" "2vm bw vsock" "2vm connect vsock" \
	    "1vm-dma writeto eng" "2vm-dma writeto eng"; do
	set -- $want
	awk -F, -v s="$1" -v m="$2" -v v="$3" \
		'$1 == s && $2 == m && $3 == v { found = 1 } END { exit !found }' "$csv" ||
		{ say "missing: $want"; status=1; }
done

# Each node of the all-to-all streams to every other.
if [ "$ntb" != only ] && [ "$A2A_NODES" != 0 ]; then
	streams=$(awk -F, '$1 == "a2a" && $2 == "bw" && $9 > 0' "$csv" | wc -l)
	[ "$streams" -eq $((A2A_NODES * (A2A_NODES - 1))) ] ||
		{ say "all to all: $streams streams of $((A2A_NODES * (A2A_NODES - 1)))"; status=1; }
fi

sh "$top/scripts/bench-report.sh" "$out" | tee "$out/results.txt"
[ "$status" = 0 ] && say "done; results in $out" ||
	say "incomplete; see $out"
exit "$status"
