#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# kernels.sh default        newest installed kernel release with a build tree
# kernels.sh resolve NAME   "KDIR IMAGE RELEASE" for NAME = 6.1 | 6.12 | debug
#                           (debug builds the cached debug kernel if needed)
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)

newest() { # release prefix, e.g. "6.1." or ""
	for d in /lib/modules/"$1"*/build; do
		[ -e "$d/Makefile" ] && basename "$(dirname "$d")"
	done | sort -V | tail -n 1
}

case "${1:-}" in
default)
	rel=$(newest "")
	[ -n "$rel" ] || { echo "kernels: no kernel build tree installed (make deps)" >&2; exit 1; }
	echo "$rel"
	;;
resolve)
	case "${2:-}" in
	6.1|6.12)
		rel=$(newest "$2.")
		[ -n "$rel" ] || { echo "kernels: no $2 kernel installed (make deps)" >&2; exit 1; }
		echo "/lib/modules/$rel/build /boot/vmlinuz-$rel $rel"
		;;
	debug)
		dir=$(sh "$top/scripts/debug-kernel.sh")
		echo "$dir $dir/arch/x86/boot/bzImage $(cat "$dir/include/config/kernel.release")"
		;;
	*) echo "kernels: unknown kernel '${2:-}' (6.1, 6.12 or debug)" >&2; exit 2 ;;
	esac
	;;
*) echo "usage: $0 default | resolve NAME" >&2; exit 2 ;;
esac
