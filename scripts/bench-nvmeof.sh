#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench-nvmeof.sh [OUT]: the NVMe over Fabrics part of make bench
# (scripts/bench.sh calls it; it also runs alone), on the kernel and the
# emulated machines of the rest of the bench (TCG, 1 vCPU a node): a
# 2-node cluster joined by ivshmem and by a virtio-net link
# (qemu/cluster.sh -N), both nodes running scif_nvmeof_test.sh as make
# check does (node 0 the target on a 64 MiB RAM disk, node 1 the host;
# Documentation/scif/rdma.rst).  After its checks the host reads the
# namespace with fio, 1 MiB sequential (4 in flight) and 4 KiB random
# (16 in flight, 5 s), over:
#   srd      NVMe-oF over scif_rdma (nvme-rdma)
#   tcp-sn   NVMe/TCP over scif_net
#   tcp-eth  NVMe/TCP over the virtio-net link
# Rows (results.csv's columns, no header) go to OUT/nvmeof/results.rows:
# "2vm-nvme,seqread,VIA,1048576,,,,,MB/s" and
# "2vm-nvme,randread,VIA,4096,,,,,IOPS".  OUT defaults to build/bench.
# Exit status 0 if the test passed on both nodes, every row was measured
# and both kernel logs are clean.  Needs SCIF_QEMU_LOCK like the rest
# (cluster.sh takes it).
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/bench-lib.sh
. "$top/scripts/bench-lib.sh"
# shellcheck source=scripts/check-lib.sh
. "$top/scripts/check-lib.sh"
BUILD=${BUILD:-$top/build}
bench_out=${1:-${BENCH_OUT:-$BUILD/bench}}
out=$bench_out/nvmeof

say() { echo "bench-nvmeof: $*" >&2; }

# The modules of the rest of the bench (scripts/bench.sh), in
# $BUILD/modules/<release>, which check-lib.sh's lists take as the
# kernel's name.
bench_rdma_build bench-nvmeof

rm -rf "$out"
mkdir -p "$out"
printf 'insmod\nscif_nvmeof_test.sh\nrmmod\n' > "$out/steps"
# The guest's virtio-net driver, for the link's eth0 (init.sh).
net=$(kernel_modules "$rel" virtio_pci virtio_net)
EXTRA_MODULES="$moddir/net/scif/scif_peer_links.ko
	$moddir/drivers/net/scif/scif_net.ko
	$(rdma_modules "$rel" - "$rel")
	$(nvme_modules "$rel" 2 - "$rel")" \
EXTRA_PROGRAMS="/usr/bin/rdma $(nvme_programs "$rel" 2)" \
NET_MODULES=$net sh "$top/qemu/mkinitramfs.sh" "$out/nvmeof.cpio" \
	"$out/steps" "$BUILD/selftests" \
	"$moddir/drivers/misc/scif/scif.ko" \
	"$moddir/drivers/misc/scif/scif_ivshmem.ko" > /dev/null
say "two VMs: NVMe-oF over scif_rdma, NVMe/TCP over scif_net and over virtio-net"
status=0
bash "$top/qemu/cluster.sh" -n 2 -N -m 1G -k "$image" -i "$out/nvmeof.cpio" \
	-o "$out/cluster" -t 1200 -a "$guest_args" \
	-S "$BUILD/qemu/ivshmem-server" > "$out/cluster.log" 2>&1 ||
	{ say "the cluster launcher reported a failure (see $out/cluster.log)"; status=1; }

bench_nodes_ok nvmeof "$out/cluster" || status=1

tr -d '\r' < "$out/cluster/node1/results.log" 2> /dev/null |
	awk '$1 == "#" && $2 == "nvme-figures" && NF == 5 {
		printf "2vm-nvme,seqread,%s,1048576,,,,,%s\n", $3, $4
		printf "2vm-nvme,randread,%s,4096,,,,,%s\n", $3, $5 }' \
	> "$out/results.rows"
for via in srd tcp-sn tcp-eth; do
	grep -q "^2vm-nvme,seqread,$via," "$out/results.rows" ||
		{ say "missing: NVMe figures via $via"; status=1; }
done
cat "$out/results.rows" >&2
exit "$status"
