#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Install everything the build, the static checks and the QEMU test runs
# need on a Debian 12 (bookworm) machine.  Idempotent: when every package
# is already present it returns without touching apt.
#
# The 6.12 kernel comes from bookworm-backports.  That suite is enabled by
# reusing the mirror URI this machine already uses for bookworm; no mirror
# host is named here.
#
# The guests' 6.12 kernel is not installed: its image, headers and kbuild
# packages (one release, one version) are downloaded and unpacked into
# $SCIF_CACHE/kernels/RELEASE (boot/vmlinuz-RELEASE, lib/modules/RELEASE
# with the modules' index, usr/src/linux-headers-RELEASE and -common,
# usr/lib/linux-kbuild-*), where scripts/kernels.sh finds the image and
# the build tree.  Installing Debian's 6.12 headers package would install
# its image too (it depends on it), and on a host that boots with GRUB
# the newest kernel becomes the default entry: the host's boot stays as
# it was (make check checks /boot and the installed images before and
# after this script).  A host where an earlier version of this script
# installed the 6.12 headers keeps them, and that release is unpacked.
# The guests' 6.1 kernel is linux-image-amd64, Debian 12's own, which a
# Debian 12 host boots already; if apt has to install it, the script
# says so.
set -eu

export DEBIAN_FRONTEND=noninteractive

TOOLS="build-essential bc bison flex libelf-dev libssl-dev dwarves
	kmod cpio xz-utils zstd rsync busybox-static
	sparse shellcheck gnuplot-nox linux-source-6.1 linux-headers-amd64
	linux-image-amd64 libvirt-clients iperf3 socat
	iproute2 ibverbs-utils ibverbs-providers perftest nvme-cli fio
	libibverbs-dev librdmacm-dev rdmacm-utils libfabric-bin
	openmpi-bin libopenmpi-dev
	libtirpc3 libwrap0 python3-sphinx python3.11 libpython3.11"
# QEMU comes from bookworm-backports (10.0): Debian 12's own, 7.2, leaves
# garbage in RFLAGS after a CMPXCHG16B under TCG, and the guests' SLUB
# runs that instruction: they died of double faults now and then
# (Documentation/scif/testing.rst, "The guest"; scif_guest_cpu_test
# checks the emulator in every make check).  Installed by pkg/release,
# all five together (their versions must match).
QEMU_BPO="qemu-system-x86 qemu-system-common qemu-system-data qemu-utils
	seabios"
BPO_LIST=/etc/apt/sources.list.d/scif-bookworm-backports.list
SCIF_CACHE=${SCIF_CACHE:-/var/cache/scif}

die() { echo "deps: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "must run as root (apt-get install)"

# The URI configured for the plain "bookworm" suite, from either the
# deb822 .sources files or the one-line sources.list format.
bookworm_uri() {
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -r "$f" ] || continue
		awk '
			/^[[:space:]]*$/ { if (uri != "" && ok) { print uri; exit }
					   uri = ""; ok = 0; next }
			tolower($1) == "uris:" { uri = $2 }
			tolower($1) == "suites:" {
				for (i = 2; i <= NF; i++) if ($i == "bookworm") ok = 1 }
			END { if (uri != "" && ok) print uri }
		' "$f"
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -r "$f" ] || continue
		awk '$1 == "deb" {
			i = 2; if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
			if ($(i + 1) == "bookworm") print $i }' "$f"
	done
}

enable_backports() {
	[ -s "$BPO_LIST" ] && return 0
	uri=$(bookworm_uri | head -n 1)
	[ -n "$uri" ] || die "no apt source for bookworm found to derive backports from"
	echo "deb $uri bookworm-backports main" > "$BPO_LIST"
	NEED_UPDATE=1
}

missing() {
	for p in "$@"; do
		dpkg-query -W -f '${Status}\n' "$p" 2>/dev/null |
			grep -q '^install ok installed$' || echo "$p"
	done
}

NEED_UPDATE=0
enable_backports
stamp=/var/lib/apt/periodic/scif-deps-updated
if [ "$NEED_UPDATE" = 1 ] || [ ! -e "$stamp" ]; then
	apt-get update -q
	touch "$stamp"
fi

todo=$(missing $TOOLS)
if [ -n "$todo" ]; then
	# shellcheck disable=SC2086
	apt-get install -y -q --no-install-recommends $todo
fi
case " $(echo $todo) " in
*" linux-image-amd64 "*) image_note=1 ;;
*) image_note=0 ;;
esac

# QEMU from backports unless a QEMU of 8 or later is there already.
qemu_major=$(dpkg-query -W -f '${Status} ${Version}\n' qemu-system-x86 2>/dev/null |
	awk '$3 == "installed" { v = $4; sub(/^[0-9]+:/, "", v); sub(/\..*/, "", v); print v }')
if [ "${qemu_major:-0}" -lt 8 ]; then
	# shellcheck disable=SC2046
	apt-get install -y -q --no-install-recommends \
		$(for p in $QEMU_BPO; do echo "$p/bookworm-backports"; done)
	echo "deps: installed QEMU from bookworm-backports (Debian 12's 7.2 miscomputes RFLAGS after CMPXCHG16B under TCG)"
fi

# The 6.12 release to unpack, "RELEASE VERSION": one unpacked already;
# else that of 6.12 headers installed here (by an earlier version of this
# script); else the newest in bookworm-backports, by the versioned name
# the meta package there depends on.
kernel_612() {
	for f in "$SCIF_CACHE"/kernels/6.12*/.scif-version; do
		[ -e "$f" ] && cat "$f"
	done | sort -V | tail -n 1 | grep . && return 0
	dpkg-query -W -f '${Status} ${Package} ${Version}\n' 'linux-headers-6.12*-amd64' 2>/dev/null |
		awk '$1 == "install" && $3 == "installed" {
			sub(/^linux-headers-/, "", $4); print $4, $5 }' |
		sort -V | tail -n 1 | grep . && return 0
	apt-get -s -o Debug::NoLocking=1 -t bookworm-backports install \
		linux-headers-amd64 2>/dev/null |
		awk '$1 == "Inst" && $2 ~ /^linux-headers-6\.12.*-amd64$/ {
			for (i = 3; i <= NF && $i !~ /^\(/; i++) ;
			v = $i; sub(/^\(/, "", v); sub(/^linux-headers-/, "", $2)
			print $2, v; exit }'
}

# The image, headers and kbuild packages of 6.12 RELEASE at VERSION,
# unpacked into $SCIF_CACHE/kernels/RELEASE (not installed).
unpack_kernel() { # release version
	dir=$SCIF_CACHE/kernels/$1 base=${1%-amd64}
	[ -e "$dir/.scif-version" ] && return 0
	dl=$(mktemp -d "$SCIF_CACHE/download.XXXXXX")
	# apt downloads as _apt where that user can write the directory.
	chown _apt "$dl" 2>/dev/null || true
	(cd "$dl" && apt-get download -q "linux-image-$1=$2" "linux-headers-$1=$2" \
		"linux-headers-$base-common=$2" "linux-kbuild-$base=$2") ||
		die "cannot download the 6.12 kernel $1 at $2"
	rm -rf "$dir.tmp"
	for d in "$dl"/*.deb; do dpkg-deb -x "$d" "$dir.tmp"; done
	rm -rf "$dl"
	hdr=$dir.tmp/usr/src/linux-headers-$1
	[ -e "$dir.tmp/boot/vmlinuz-$1" ] || die "no vmlinuz-$1 in linux-image-$1"
	[ -f "$hdr/Makefile" ] && [ -d "$hdr/scripts/" ] ||
		die "no build tree in linux-headers-$1"
	# Its Makefile includes the common part by the installed path.
	sed -i "s|^include /usr/src/|include $dir/usr/src/|" "$hdr/Makefile"
	rm -f "$dir.tmp/lib/modules/$1/build"
	depmod -b "$dir.tmp" "$1"
	echo "$1 $2" > "$dir.tmp/.scif-version"
	rm -rf "$dir"
	mv "$dir.tmp" "$dir"
	echo "deps: unpacked the guests' kernel $1 and its build tree into $dir (not installed: the host's boot is unchanged)"
}
mkdir -p "$SCIF_CACHE/kernels"
k612=$(kernel_612)
[ -n "$k612" ] || die "no 6.12 kernel found in bookworm-backports"
# shellcheck disable=SC2086 # "release version"
unpack_kernel $k612

# linux-source-6.12 at exactly the version of the 6.12 build tree
# (scripts/dmatest-module.sh builds dmatest from it); apt's candidate may
# be a newer bookworm-security build, so the version is asked for.
hver=${k612#* }
sver=$(dpkg-query -W -f '${Status} ${Version}\n' linux-source-6.12 2>/dev/null |
	awk '$1 == "install" && $3 == "installed" { print $4 }')
if [ -n "$hver" ] && [ "$sver" != "$hver" ]; then
	apt-get install -y -q --no-install-recommends --allow-downgrades \
		"linux-source-6.12=$hver"
fi
# The guests' NFS server and client programs (scif_nfsrdma_test.sh):
# nfs-kernel-server and nfs-common unpacked into $SCIF_CACHE/nfs-utils,
# not installed (installing them would start rpcbind and an NFS server
# on this host at every boot).  Their shared libraries are those of
# TOOLS' packages (libtirpc3, libwrap0 come with them).
unpack_nfs_utils() {
	dir=$SCIF_CACHE/nfs-utils
	[ -x "$dir/usr/sbin/rpc.mountd" ] && [ -x "$dir/sbin/mount.nfs" ] &&
		return 0
	dl=$(mktemp -d "$SCIF_CACHE/download.XXXXXX")
	chown _apt "$dl" 2>/dev/null || true
	(cd "$dl" && apt-get download -q nfs-kernel-server nfs-common) ||
		die "cannot download nfs-kernel-server and nfs-common"
	rm -rf "$dir.tmp"
	for d in "$dl"/*.deb; do dpkg-deb -x "$d" "$dir.tmp"; done
	rm -rf "$dl"
	[ -x "$dir.tmp/usr/sbin/rpc.mountd" ] || die "no rpc.mountd in nfs-kernel-server"
	rm -rf "$dir"
	mv "$dir.tmp" "$dir"
	echo "deps: unpacked the guests' NFS programs into $dir (not installed)"
}
unpack_nfs_utils

# rdma-core's own Python tests and pyverbs, for the guests
# (scif_pyverbs_test.sh): python3-pyverbs of the installed rdma-core
# version, unpacked into $SCIF_CACHE/pyverbs, not installed (it would
# pull rdma-core's boot-time services onto this host).  Its Python is
# TOOLS' python3.11.
unpack_pyverbs() {
	dir=$SCIF_CACHE/pyverbs
	ver=$(dpkg-query -W -f '${Version}' libibverbs1)
	[ -e "$dir/usr/share/doc/rdma-core/tests/run_tests.py" ] &&
		[ "$(cat "$dir/version" 2>/dev/null)" = "$ver" ] && return 0
	dl=$(mktemp -d "$SCIF_CACHE/download.XXXXXX")
	chown _apt "$dl" 2>/dev/null || true
	(cd "$dl" && apt-get download -q "python3-pyverbs=$ver") ||
		die "cannot download python3-pyverbs $ver"
	rm -rf "$dir.tmp"
	dpkg-deb -x "$dl"/python3-pyverbs_*.deb "$dir.tmp"
	rm -rf "$dl"
	[ -e "$dir.tmp/usr/share/doc/rdma-core/tests/run_tests.py" ] ||
		die "no rdma-core tests in python3-pyverbs"
	# Debian compresses some of the test files.
	find "$dir.tmp/usr/share/doc/rdma-core/tests" -name '*.py.gz' \
		-exec gunzip -f {} +
	echo "$ver" > "$dir.tmp/version"
	rm -rf "$dir"
	mv "$dir.tmp" "$dir"
	echo "deps: unpacked python3-pyverbs $ver into $dir (not installed)"
}
unpack_pyverbs
if [ "$image_note" = 1 ]; then
	echo "deps: NOTE: installed linux-image-amd64, Debian 12's 6.1 kernel, for the"
	echo "deps: NOTE: guests.  A Debian 12 host boots it already; if this one booted"
	echo "deps: NOTE: another kernel, check its boot menu's default."
fi
echo "deps: all present"
