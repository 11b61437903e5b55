#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Build (once) the debug 6.1 kernel from Debian's linux-source-6.1 with
# qemu/debug-kernel.config on top of tinyconfig, and print its build
# directory, which is also the KDIR to build modules against.  The result
# is cached and rebuilt only when the fragment or the source version
# changes.  "debug-kernel.sh gcov" builds the same kernel with
# qemu/gcov-kernel.config on top as well (make coverage), in a directory
# of its own.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
cache=${SCIF_CACHE:-/var/cache/scif}
frags=$top/qemu/debug-kernel.config
out=$cache/debug-6.1
if [ "${1:-}" = gcov ]; then
	frags="$frags $top/qemu/gcov-kernel.config"
	out=$cache/debug-gcov-6.1
fi
# One build at a time: a second caller (another make target, a helper's
# run) waits for the first and then finds its result in the cache.
if [ -z "${SCIF_DEBUG_KERNEL_LOCKED:-}" ]; then
	mkdir -p "$cache"
	SCIF_DEBUG_KERNEL_LOCKED=1 exec flock "$out.lock" sh "$0" "$@"
fi
tree=$(sh "$top/scripts/kernel-source.sh")

# shellcheck disable=SC2086
key="$(cat "$tree/.scif-unpacked") $(cat $frags | sha256sum | cut -d' ' -f1)"
if [ -e "$out/.scif-key" ] && [ "$(cat "$out/.scif-key")" = "$key" ] &&
   [ -e "$out/arch/x86/boot/bzImage" ]; then
	echo "$out"
	exit 0
fi

echo "debug-kernel: building in $out (log: $out.log)" >&2
rm -rf "$out"
# The gcov twin starts from a copy of the debug kernel's tree when that is
# built from the same source and fragment: Kbuild then compiles again
# only what the gcov options change (11 minutes here instead of 40), with
# the debug kernel's lock held while it is copied.
base=$cache/debug-6.1
base_key="$(cat "$tree/.scif-unpacked") $(sha256sum < "$top/qemu/debug-kernel.config" | cut -d' ' -f1)"
if [ "$out" != "$base" ] && [ -e "$base/.scif-key" ] &&
   [ "$(cat "$base/.scif-key")" = "$base_key" ]; then
	flock "$base.lock" cp -a "$base" "$out"
	rm -f "$out/.scif-key"
	: > "$out.log"
else
	mkdir -p "$out"
	make -C "$tree" O="$out" tinyconfig > "$out.log" 2>&1
fi
{
	# shellcheck disable=SC2086
	"$tree/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" $frags
	make -C "$tree" O="$out" olddefconfig
} >> "$out.log" 2>&1

# Every option the fragment sets must have survived olddefconfig.
# shellcheck disable=SC2086
missing=$(cat $frags | grep '^CONFIG_' | while read -r line; do
	grep -qx "$line" "$out/.config" || echo "$line"
done)
if [ -n "$missing" ]; then
	echo "debug-kernel: options not satisfied:" $missing >&2
	exit 1
fi

if ! make -C "$tree" O="$out" -j"$(nproc)" bzImage modules >> "$out.log" 2>&1; then
	tail -n 30 "$out.log" >&2
	exit 1
fi
echo "$key" > "$out/.scif-key"
echo "$out"
