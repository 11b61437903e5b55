#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make demo: install what is needed, build everything for the newest
# Debian kernel, boot a 2-node cluster of VMs joined by ivshmem, and show
# each node's view (scif-info) and connections crossing between them
# (scif_cluster_test: every size from 1 byte to 1 MiB, both ways).
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$top/build}
out=$BUILD/demo

sh "$top/scripts/deps.sh"
rel=$(sh "$top/scripts/kernels.sh" default)
mod=$BUILD/modules/$rel/drivers/misc/scif
make -s -C "$top" modules KVER="$rel" MODDIR="$BUILD/modules/$rel"
make -s -C "$top" lib selftests
make -s -C "$top/qemu" OUTPUT="$BUILD/qemu"

rm -rf "$out"
mkdir -p "$out/guest"
cp -a "$BUILD/selftests/." "$out/guest/"
cp "$top/qemu/demo-guest.sh" "$out/guest/"
sh "$top/qemu/mkinitramfs.sh" "$out/demo.cpio" "$top/qemu/demo-steps" \
	"$out/guest" "$mod/scif.ko" "$mod/scif_ivshmem.ko"
echo "demo: booting two VMs ($rel) joined by ivshmem; logs in $out"
status=0
bash "$top/qemu/cluster.sh" -n 2 -k "$(sh "$top/scripts/kernels.sh" image "$rel")" -i "$out/demo.cpio" \
	-o "$out" -t 300 -S "$BUILD/qemu/ivshmem-server" > "$out/launcher.log" 2>&1 ||
	status=1

for k in 0 1; do
	echo
	tr -d '\r' < "$out/node$k/results.log" |
		grep -v -e '^scif-' -e '^TAP version' -e '^1\.\.'
	if sh "$top/qemu/parse-results.sh" "$out/node$k/results.log" demo |
	   grep -q '^FAIL'; then
		status=1
	fi
	bash "$top/qemu/check-log.sh" "$out/node$k/console.log" || status=1
done
echo
[ "$status" = 0 ] && echo "demo: done; both nodes talked, kernel logs clean" ||
	echo "demo: something failed; see $out"
exit "$status"
