#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make demo: install what is needed, build scif.ko for the newest Debian
# kernel, boot it in QEMU, load the module and show what it offers.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$top/build}
out=$BUILD/demo

sh "$top/scripts/deps.sh"
rel=$(sh "$top/scripts/kernels.sh" default)
make -s -C "$top" modules KVER="$rel" MODDIR="$BUILD/modules/$rel"

mkdir -p "$out/guest"
cp "$top/qemu/demo-guest.sh" "$out/guest/"
sh "$top/qemu/mkinitramfs.sh" "$out/demo.cpio" "$top/qemu/demo-steps" \
	"$out/guest" "$BUILD/modules/$rel/drivers/misc/scif/scif.ko"
echo "demo: booting $rel under QEMU (console log: $out/vm/console.log)"
sh "$top/qemu/run-vm.sh" "/boot/vmlinuz-$rel" "$out/demo.cpio" "$out/vm"

tr -d '\r' < "$out/vm/results.log" | grep -v '^scif-'
sh "$top/qemu/parse-results.sh" "$out/vm/results.log" demo | grep -q '^FAIL' &&
	{ echo "demo: a step failed"; exit 1; }
bash "$top/qemu/check-log.sh" "$out/vm/console.log"
echo "demo: done, kernel log clean"
