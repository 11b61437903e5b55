#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# ntb-initramfs.sh OUT RELEASE NTBDIR
# The initramfs of the NTB tests: qemu/mkinitramfs.sh's (busybox, init.sh)
# with the guest steps of qemu/ntb-guest/ (default list ntb-loopback-steps,
# also ntb-net-steps, ntb-net-long-steps, ntb-netdev-steps and
# ntb-fullreach-steps for
# scif.steps=, and the step lists named in $NTB_EXTRA_LISTS and programs
# in $NTB_EXTRA_FILES: make bench's, scripts/bench-ntb.sh),
# the guest
# helper ntb-ram-page (qemu/ntb-guest/ntb-ram-page.c, built static here) and the upstream ntb_test.sh from
# NTBDIR, plus a second cpio archive appended to it (the kernel unpacks
# both) with what busybox lacks:
#   /lib/modules/RELEASE/extra/  ntb.ko, the clients and ntb_ivshmem.ko of
#                                NTBDIR (scripts/ntb-modules.sh and
#                                make ntb-modules NTB_MODDIR=NTBDIR/hw), with
#                                a modules.dep for modprobe (ntb_test.sh
#                                loads the clients with modprobe)
#   /bin/bash                    bash-static (ntb_test.sh is a bash script)
#   /bin/cmp                     GNU cmp: ntb_test.sh passes a hex byte
#                                count to cmp -n, which busybox refuses
#   /bin/modprobe                kmod's: ntb_test.sh's "modprobe -r CLIENT"
#                                must not fail because the NTB core that
#                                CLIENT depends on stays in use
#   $NTB_DMA_MODULE              if set, a DMA_MEMCPY provider module
#                                (scif_soft_dma.ko) beside the NTB modules:
#                                the loopback step then runs ntb_perf with
#                                DMA too (ntb_test.sh -d)
#   iperf3                       Debian's binary and the shared libraries
#                                it needs, at their host paths
set -eu

[ $# -eq 3 ] || { echo "usage: $0 OUT RELEASE NTBDIR" >&2; exit 2; }
out=$1 rel=$2 ntb=$3
top=$(cd "$(dirname "$0")/.." && pwd)
guest=$top/qemu/ntb-guest

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/tests" "$stage/extra/lib/modules/$rel/extra" "$stage/extra/bin"
cp "$guest/ntb-selftest" "$guest/ntb-netdev" "$guest/ntb-fullreach" \
	"$guest/ntb-perf-bench" "$ntb/ntb_test.sh" "$stage/tests/"
for f in ${NTB_EXTRA_FILES:-}; do
	cp "$f" "$stage/tests/"
done
${CC:-cc} -static -O2 -Wall -Wextra -Werror -o "$stage/tests/ntb-ram-page" \
	"$guest/ntb-ram-page.c"
EXTRA_LISTS="$guest/ntb-net-steps $guest/ntb-net-long-steps $guest/ntb-netdev-steps $guest/ntb-fullreach-steps ${NTB_EXTRA_LISTS:-}" \
	sh "$top/qemu/mkinitramfs.sh" "$stage/base.cpio" \
	"$guest/ntb-loopback-steps" "$stage/tests"

x=$stage/extra
cp "$ntb"/*.ko "$ntb"/hw/ntb_ivshmem.ko "$x/lib/modules/$rel/extra/"
[ -z "${NTB_DMA_MODULE:-}" ] || cp "$NTB_DMA_MODULE" "$x/lib/modules/$rel/extra/"
depmod -b "$x" "$rel" 2>/dev/null
cp /bin/bash-static "$x/bin/bash"
cp /usr/bin/cmp "$x/bin/cmp"
cp /bin/kmod "$x/bin/kmod"
ln -s kmod "$x/bin/modprobe"
iperf=$(command -v iperf3) || { echo "ntb-initramfs: no iperf3 (scripts/ntb-deps.sh)" >&2; exit 1; }
for f in "$iperf" $(ldd "$iperf" /usr/bin/cmp /bin/kmod | awk '/=> \// { print $3 } /^\t\// { print $1 }' | sort -u); do
	mkdir -p "$x$(dirname "$f")"
	cp -L "$f" "$x$f"
done
# /lib64 -> usr/lib64 style links are not needed: the files sit at the
# paths the binary names.
(cd "$x" && find . | cpio -o -H newc --quiet) > "$stage/extra.cpio"
cat "$stage/base.cpio" "$stage/extra.cpio" > "$out"
