#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench-mpi.sh [OUT]: the MPI part of make bench (scripts/bench.sh calls
# it; it also runs alone), on the kernel and the emulated machines of the
# rest of the bench (TCG, 1 vCPU a node): a 3-node cluster (the fewest
# scif_net_mesh.sh runs with) joined by
# ivshmem, every node running "scif_net_mesh.sh mpi-bench" (scif_net's
# sn and scif_rdma's scif0 on it; node 0 runs scif_mpi_test, a rank on
# node 0 and one on node 1 (node 2 idle: ranks poll, and three busy
# emulated CPUs on the host's two would measure the host's scheduler),
# with SCIF_MPI_BENCH=1, first over libfabric's "verbs;ofi_rxm"
# through libscif_rdma, then over TCP on sn; Documentation/scif/rdma.rst,
# "MPI across nodes").  Rows (results.csv's columns, no header) go to
# OUT/mpi/results.rows, for the ping-pong between ranks 0 and 1:
# "3vm,lat,mpi-VIA,BYTES,,,US,," (the round trip) and
# "3vm,bw,mpi-VIA,BYTES,,,,,MB/s" (both directions' bytes over the
# time), VIA verbs or tcp, BYTES 8, 4096, 65536 and 1048576.  OUT
# defaults to build/bench.  Exit status 0 if every figure was taken, the
# test passed on every node and every kernel log is clean.  Needs
# SCIF_QEMU_LOCK like the rest (cluster.sh takes it).
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/bench-lib.sh
. "$top/scripts/bench-lib.sh"
# shellcheck source=scripts/check-lib.sh
. "$top/scripts/check-lib.sh"
BUILD=${BUILD:-$top/build}
bench_out=${1:-${BENCH_OUT:-$BUILD/bench}}
out=$bench_out/mpi
nodes=3

say() { echo "bench-mpi: $*" >&2; }

bench_rdma_build bench-mpi
tree=$(mpi_tree "$rel" "$nodes")
[ -n "$tree" ] || { say "no Open MPI or no scif_mpi_test (make selftests with mpicc)"; exit 1; }

rm -rf "$out"
mkdir -p "$out"
printf 'insmod\nscif_net_mesh.sh mpi-bench\nrmmod\n' > "$out/steps"
EXTRA_MODULES="$moddir/net/scif/scif_peer_links.ko
	$moddir/drivers/net/scif/scif_net.ko
	$(rdma_modules "$rel" - "$rel")" \
EXTRA_PROGRAMS="/usr/bin/rdma $(verbs_programs "$rel" "$nodes")" \
EXTRA_TREES=$tree \
sh "$top/qemu/mkinitramfs.sh" "$out/mpi.cpio" "$out/steps" \
	"$BUILD/selftests" "$moddir/drivers/misc/scif/scif.ko" \
	"$moddir/drivers/misc/scif/scif_ivshmem.ko" > /dev/null
say "three VMs: an MPI ping-pong over scif_rdma (verbs;ofi_rxm) and over TCP on scif_net"
status=0
bash "$top/qemu/cluster.sh" -n "$nodes" -m 512M -k "$image" -i "$out/mpi.cpio" \
	-o "$out/cluster" -t 1200 -a "$guest_args" \
	-S "$BUILD/qemu/ivshmem-server" > "$out/cluster.log" 2>&1 ||
	{ say "the cluster launcher reported a failure (see $out/cluster.log)"; status=1; }

bench_nodes_ok mpi "$out/cluster" "$nodes" || status=1

tr -d '\r' < "$out/cluster/node0/results.log" 2> /dev/null |
	awk '$1 == "#" && $2 == "mpi-figures" && NF == 6 {
		printf "3vm,lat,mpi-%s,%s,,,%s,,\n", $3, $4, $5
		printf "3vm,bw,mpi-%s,%s,,,,,%s\n", $3, $4, $6 }' \
	> "$out/results.rows"
for via in verbs tcp; do
	for want in "lat,mpi-$via,8" "bw,mpi-$via,1048576"; do
		grep -q "^3vm,$want," "$out/results.rows" ||
			{ say "missing: $want"; status=1; }
	done
done
cat "$out/results.rows" >&2
exit "$status"
