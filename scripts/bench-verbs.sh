#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench-verbs.sh [OUT]: the user verbs part of make bench
# (scripts/bench.sh calls it; it also runs alone), on the kernel and the
# emulated machines of the rest of the bench (TCG, 1 vCPU a node): a
# 2-node cluster joined by ivshmem, both nodes running
# "scif_verbs_test.sh bench" (node 0 perftest's servers, node 1 its
# clients, over scif_rdma through the provider libscif_rdma;
# Documentation/scif/rdma.rst, "User verbs").  Rows (results.csv's
# columns, no header) go to OUT/verbs/results.rows:
# "2vm,MODE,srd-user,SIZE,,,,,MB/s" for ib_write_bw, ib_read_bw and
# ib_send_bw (MODE writeto, readfrom, send) and
# "2vm,lat,srd-user-KIND,8,,,US,," for the 8-byte round trips of
# ib_write_lat, ib_send_lat and ib_read_lat (KIND write, send, read),
# beside SCIF's own rows and rxe's (2vm).  OUT defaults to build/bench.
# Exit status 0 if every figure was taken, the test passed on both
# nodes and both kernel logs are clean.  Needs SCIF_QEMU_LOCK like the
# rest (cluster.sh takes it).
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/bench-lib.sh
. "$top/scripts/bench-lib.sh"
# shellcheck source=scripts/check-lib.sh
. "$top/scripts/check-lib.sh"
BUILD=${BUILD:-$top/build}
bench_out=${1:-${BENCH_OUT:-$BUILD/bench}}
out=$bench_out/verbs

say() { echo "bench-verbs: $*" >&2; }

bench_rdma_build bench-verbs

rm -rf "$out"
mkdir -p "$out"
printf 'insmod\nscif_verbs_test.sh bench\nrmmod\n' > "$out/steps"
EXTRA_MODULES="$moddir/net/scif/scif_peer_links.ko
	$moddir/drivers/net/scif/scif_net.ko
	$(rdma_modules "$rel" - "$rel")" \
EXTRA_PROGRAMS="/usr/bin/rdma $(verbs_programs "$rel" 2)
	$(command -v ib_write_lat ib_send_lat ib_read_lat | tr '\n' ' ')" \
sh "$top/qemu/mkinitramfs.sh" "$out/verbs.cpio" "$out/steps" \
	"$BUILD/selftests" "$moddir/drivers/misc/scif/scif.ko" \
	"$moddir/drivers/misc/scif/scif_ivshmem.ko" > /dev/null
say "two VMs: perftest over scif_rdma through libscif_rdma"
status=0
bash "$top/qemu/cluster.sh" -n 2 -m 1G -k "$image" -i "$out/verbs.cpio" \
	-o "$out/cluster" -t 1200 -a "$guest_args" \
	-S "$BUILD/qemu/ivshmem-server" > "$out/cluster.log" 2>&1 ||
	{ say "the cluster launcher reported a failure (see $out/cluster.log)"; status=1; }

bench_nodes_ok verbs "$out/cluster" || status=1

tr -d '\r' < "$out/cluster/node1/results.log" 2> /dev/null |
	awk '$1 == "#" && $2 == "verbs-figures" && NF == 5 {
		if ($3 ~ /^lat-/)
			printf "2vm,lat,srd-user-%s,%s,,,%s,,\n", substr($3, 5), $4, $5
		else
			printf "2vm,%s,srd-user,%s,,,,,%s\n", $3, $4, $5 }' \
	> "$out/results.rows"
for want in "writeto,srd-user,1048576" "readfrom,srd-user,1048576" \
	"send,srd-user,1048576" "lat,srd-user-write,8" "lat,srd-user-send,8" \
	"lat,srd-user-read,8"; do
	grep -q "^2vm,$want," "$out/results.rows" ||
		{ say "missing: $want"; status=1; }
done
cat "$out/results.rows" >&2
exit "$status"
