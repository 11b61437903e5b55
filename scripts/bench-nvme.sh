#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench-nvme.sh [OUT]: a drive's DMA straight into another node's window
# (Documentation/scif/devices.rst, step 8 of its plan; make bench-nvme,
# and scripts/bench.sh calls it).  make check's VFIO cluster (2 nodes,
# qemu/cluster.sh -I: QEMU's emulated IOMMU and NVMe controller), under
# TCG as the rest of the bench (SCIF_ACCEL=kvm asks for KVM), on the
# kernel BENCH_NVME_KERNEL names (6.12 by default; scripts/kernels.sh
# resolve).  Both nodes run scif_nvme_bench.sh (scif_nvme_test's bench
# mode): node 0's drive, bound to vfio-pci, reads and writes blocks
# straight into and from node 1's window through a device-map file
# (remote), into and from node 0's own memory (local), and into memory
# then on by RMA (cpu), 4 KiB to 1 MiB a command, 1 and 4 in flight,
# every figure's bytes checked.  Rows (results.csv's columns) go to
# OUT/nvme/results.rows:
# "2vm-nvmedev,OP-qdQD,VIA,SIZE,BATCHES,,US,,MB/s", US the mean time of
# a batch of QD commands (at depth 1 a command's latency).  OUT defaults
# to build/bench.  Exit status 0 if both nodes passed, every row was
# measured and both kernel logs are clean.  Needs SCIF_QEMU_LOCK like
# the rest (cluster.sh takes it).
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/bench-lib.sh
. "$top/scripts/bench-lib.sh"
# shellcheck source=scripts/check-lib.sh
. "$top/scripts/check-lib.sh"
BUILD=${BUILD:-$top/build}
bench_out=${1:-${BENCH_OUT:-$BUILD/bench}}
out=$bench_out/nvme
k=${BENCH_NVME_KERNEL:-6.12}

say() { echo "bench-nvme: $*" >&2; }

read -r kdir image rel < <(sh "$top/scripts/kernels.sh" resolve "$k") ||
	{ say "no kernel $k (scripts/kernels.sh resolve)"; exit 1; }
moddir=$BUILD/modules/bench-nvme-$k
make -s -C "$top" test-modules KDIR="$kdir" MODDIR="$moddir"
make -s -C "$top" lib selftests
make -s -C "$top/qemu" OUTPUT="$BUILD/qemu"

rm -rf "$out"
mkdir -p "$out"
printf 'insmod\nscif_nvme_bench.sh\nrmmod\n' > "$out/steps"
EXTRA_MODULES="$(kernel_modules "$rel" vfio_iommu_type1 vfio-pci)" \
sh "$top/qemu/mkinitramfs.sh" "$out/nvme.cpio" "$out/steps" \
	"$BUILD/selftests" "$moddir/drivers/misc/scif/scif.ko" \
	"$moddir/drivers/misc/scif/scif_ivshmem.ko" > /dev/null
say "two VMs of $k (${SCIF_ACCEL:-tcg}): NVMe reads and writes into a remote window, local memory, by RMA"
status=0
bash "$top/qemu/cluster.sh" -n 2 -I -k "$image" -i "$out/nvme.cpio" \
	-o "$out/cluster" -t 600 -a "$guest_args" \
	-S "$BUILD/qemu/ivshmem-server" > "$out/cluster.log" 2>&1 ||
	{ say "the cluster launcher reported a failure (see $out/cluster.log)"; status=1; }

bench_nodes_ok nvme "$out/cluster" || status=1

tr -d '\r' < "$out/cluster/node0/results.log" 2> /dev/null |
	awk '$1 == "#" && $2 == "nvme-bench" && NF == 9 && $5 ~ /^[0-9]+$/ {
		printf "2vm-nvmedev,%s-qd%s,%s,%s,%s,,%s,,%s\n", $4, $6, $3, $5, $7, $9, $8 }' \
	> "$out/results.rows"
for via in local remote cpu; do
	for op in read write; do
		grep -q "^2vm-nvmedev,$op-qd1,$via,4096," "$out/results.rows" ||
			{ say "missing: $op by $via"; status=1; }
	done
done
cat "$out/results.rows" >&2
exit "$status"
