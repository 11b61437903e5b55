#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# kernels.sh default        newest installed kernel release with a build tree
# kernels.sh resolve NAME   "KDIR IMAGE RELEASE" for NAME = 6.1 | 6.12 | debug
#                           | gcov (debug and gcov build the cached debug
#                           kernel, or its gcov twin of make coverage, if
#                           needed)
# kernels.sh image RELEASE  the guest kernel image of a Debian release
# kernels.sh modbase RELEASE  the root under which its lib/modules/RELEASE
#                           lies ("/" for an installed kernel), for
#                           modprobe -d
#
# A Debian kernel's image is the one scripts/deps.sh unpacked into
# $SCIF_CACHE/kernels/RELEASE (the 6.12 guests' kernel, never installed on
# the host), or else the installed /boot/vmlinuz-RELEASE.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
cache=${SCIF_CACHE:-/var/cache/scif}/kernels

image() { # release
	if [ -e "$cache/$1/boot/vmlinuz-$1" ]; then
		echo "$cache/$1/boot/vmlinuz-$1"
	elif [ -e "/boot/vmlinuz-$1" ]; then
		echo "/boot/vmlinuz-$1"
	else
		echo "kernels: no image for $1 (make deps)" >&2
		return 1
	fi
}

modbase() { # release
	if [ -e "$cache/$1/boot/vmlinuz-$1" ]; then echo "$cache/$1"; else echo /; fi
}

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
		img=$(image "$rel") || exit 1
		echo "/lib/modules/$rel/build $img $rel"
		;;
	debug|gcov)
		dir=$(sh "$top/scripts/debug-kernel.sh" "${2#debug}")
		echo "$dir $dir/arch/x86/boot/bzImage $(cat "$dir/include/config/kernel.release")"
		;;
	*) echo "kernels: unknown kernel '${2:-}' (6.1, 6.12, debug or gcov)" >&2; exit 2 ;;
	esac
	;;
image) image "${2:?usage: $0 image RELEASE}" ;;
modbase) modbase "${2:?usage: $0 modbase RELEASE}" ;;
*) echo "usage: $0 default | resolve NAME | image RELEASE | modbase RELEASE" >&2; exit 2 ;;
esac
