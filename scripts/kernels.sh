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
# kernels.sh headers-version RELEASE  the Debian version of its build tree
#
# A Debian kernel's image is the one scripts/deps.sh unpacked into
# $SCIF_CACHE/kernels/RELEASE (the 6.12 guests' kernel, never installed on
# the host), or else the installed /boot/vmlinuz-RELEASE.  Its build tree
# is the one deps.sh unpacked there too (usr/src/linux-headers-RELEASE,
# with the kbuild tools beside it; marked by .scif-version, "RELEASE
# VERSION"), or else the installed /lib/modules/RELEASE/build.
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

# The newest release unpacked whole into the cache, of a prefix.
newest_cached() { # release prefix, e.g. "6.12."
	for f in "$cache/$1"*/.scif-version; do
		[ -e "$f" ] && basename "$(dirname "$f")"
	done | sort -V | tail -n 1
}

headers_version() { # release
	if [ -e "$cache/$1/.scif-version" ]; then
		cut -d' ' -f2 "$cache/$1/.scif-version"
	else
		dpkg-query -W -f '${Status} ${Version}\n' "linux-headers-$1" 2>/dev/null |
			awk '$1 == "install" && $3 == "installed" { print $4 }'
	fi
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
		rel=$(newest_cached "$2.")
		kdir=$cache/$rel/usr/src/linux-headers-$rel
		if [ -z "$rel" ]; then
			rel=$(newest "$2.")
			kdir=/lib/modules/$rel/build
		fi
		[ -n "$rel" ] || { echo "kernels: no $2 kernel installed (make deps)" >&2; exit 1; }
		img=$(image "$rel") || exit 1
		echo "$kdir $img $rel"
		;;
	debug|gcov)
		dir=$(sh "$top/scripts/debug-kernel.sh" "${2#debug}")
		echo "$dir $dir/arch/x86/boot/bzImage $(cat "$dir/include/config/kernel.release")"
		;;
	*) echo "kernels: unknown kernel '${2:-}' (6.1, 6.12, debug or gcov)" >&2; exit 2 ;;
	esac
	;;
image) image "${2:?usage: $0 image RELEASE}" ;;
headers-version) headers_version "${2:?usage: $0 headers-version RELEASE}" ;;
modbase) modbase "${2:?usage: $0 modbase RELEASE}" ;;
*) echo "usage: $0 default | resolve NAME | image RELEASE | modbase RELEASE | headers-version RELEASE" >&2; exit 2 ;;
esac
