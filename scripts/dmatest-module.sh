#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# dmatest-module.sh KDIR OUTDIR [6.1|6.12|debug]
# Build the kernel's own dmatest module (drivers/dma/dmatest.c; Debian
# builds it for neither kernel) as an external module against KDIR, into
# OUTDIR/dmatest.ko, from the Debian linux-source package of the same
# version as KDIR's kernel.  Nothing of it is committed:
#   6.1, debug  the tree of linux-source-6.1 (scripts/kernel-source.sh)
#   6.12        linux-source-6.12 from bookworm-backports at exactly the
#               version of the 6.12 build tree (scripts/deps.sh unpacks
#               the tree and installs the source); only dmatest.c is
#               unpacked, into
#               $SCIF_CACHE/src/dmatest-6.12/VERSION
set -eu

[ $# -ge 2 ] || { echo "usage: $0 KDIR OUTDIR [6.1|6.12|debug]" >&2; exit 2; }
kdir=$1 out=$2 which=${3:-6.1}
here=$(cd "$(dirname "$0")" && pwd)
cache=${SCIF_CACHE:-/var/cache/scif}

die() { echo "dmatest-module: $*" >&2; exit 1; }

installed_version() { # package
	dpkg-query -W -f '${Status} ${Version}\n' "$1" 2>/dev/null |
		awk '$1 == "install" && $3 == "installed" { print $4 }'
}

# The version of the Debian headers package KDIR belongs to, if it is one:
# installed (/lib/modules/RELEASE/build) or unpacked by deps.sh
# (.../usr/src/linux-headers-RELEASE).
headers_version() {
	case "${kdir%/}" in
	/lib/modules/*/build) rel=$(basename "$(dirname "$kdir")") ;;
	*/usr/src/linux-headers-*) rel=${kdir%/}; rel=${rel##*/linux-headers-} ;;
	*) return 0 ;;
	esac
	sh "$here/kernels.sh" headers-version "$rel"
}

[ -f "$kdir/Makefile" ] || die "$kdir is not a kernel build tree"
case "$which" in
6.1|debug)
	src=$(sh "$here/kernel-source.sh")/drivers/dma/dmatest.c
	if [ "$which" = 6.1 ]; then
		hv=$(headers_version)
		sv=$(installed_version linux-source-6.1)
		[ -z "$hv" ] || [ "$hv" = "$sv" ] ||
			die "linux-source-6.1 is $sv, the headers in $kdir are $hv"
	fi
	;;
6.12)
	hv=$(headers_version)
	[ -n "$hv" ] || die "$kdir: not the build tree of a linux-headers-6.12 package"
	sv=$(installed_version linux-source-6.12)
	[ "$sv" = "$hv" ] ||
		die "linux-source-6.12 ${sv:-missing}, headers $hv: run scripts/deps.sh"
	dir=$cache/src/dmatest-6.12/$hv
	src=$dir/dmatest.c
	if [ ! -s "$src" ]; then
		echo "dmatest-module: unpacking dmatest.c of linux-source-6.12 $hv" >&2
		rm -rf "$dir.tmp"
		mkdir -p "$dir.tmp"
		tar -C "$dir.tmp" -xJf /usr/src/linux-source-6.12.tar.xz \
			--wildcards '*/drivers/dma/dmatest.c'
		mv "$dir.tmp"/*/drivers/dma/dmatest.c "$dir.tmp/dmatest.c"
		mkdir -p "$dir"
		mv "$dir.tmp/dmatest.c" "$src"
		rm -rf "$dir.tmp"
	fi
	;;
*)
	die "unknown kernel '$which' (6.1, 6.12 or debug)"
	;;
esac
[ -s "$src" ] || die "$src missing"

mkdir -p "$out"
out=$(cd "$out" && pwd)
cp "$src" "$out/dmatest.c"
echo 'obj-m += dmatest.o' > "$out/Kbuild"
rm -f "$out/dmatest.ko"
make -s -C "$kdir" M="$out" W=1 KCFLAGS=-Werror modules 2>&1 |
	grep -v '^Skipping BTF generation' >&2 || true
[ -s "$out/dmatest.ko" ] || die "build failed"
echo "$out/dmatest.ko"
