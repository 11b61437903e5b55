#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# mkinitramfs.sh OUT LIST TESTDIR [MODULE.ko...]
# Build an uncompressed initramfs: busybox-static, qemu/init.sh as /init,
# the modules (loaded in the order given), the files of TESTDIR and LIST
# as the steps to run (see init.sh).  Modules named in $EXTRA_MODULES
# (.ko, or a guest kernel's .ko.xz or .ko.zst: uncompressed) go to
# /modules/extra/ for tests to load themselves; the step lists named in
# $EXTRA_LISTS go to /tests/ under their own names (for scif.steps=);
# the modules in $NET_MODULES (.ko, .ko.xz or .ko.zst, in load order: the
# guest's virtio-net driver and what it needs) go to /modules/net/,
# uncompressed, for init.sh's scif.net=; the host programs named in
# $EXTRA_PROGRAMS (e.g. /usr/bin/iperf3; or a library that a program
# dlopens) go in at their host paths (under /opt/host-tmp for those in
# /tmp, which the guest mounts over) with the shared libraries ldd finds
# for them, and the host files named in $EXTRA_FILES (e.g. a
# configuration file) at their host paths, as they are; each directory
# named in $EXTRA_TREES is copied onto the guest's root as it is (a
# staged /usr tree), with the shared libraries ldd finds for the ELF
# files in it.
set -eu

[ $# -ge 3 ] || { echo "usage: $0 OUT LIST TESTDIR [MODULE.ko...]" >&2; exit 2; }
out=$1 list=$2 tests=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
busybox=/bin/busybox
[ -x "$busybox" ] || { echo "mkinitramfs: $busybox missing (make deps)" >&2; exit 1; }

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
# mktemp makes it 0700; it becomes the guest's root, open to every user.
chmod 0755 "$stage"
mkdir -p "$stage/bin" "$stage/sbin" "$stage/proc" "$stage/sys" \
	"$stage/dev" "$stage/tmp" "$stage/modules" "$stage/tests"
cp "$busybox" "$stage/bin/busybox"
install -m 0755 "$here/init.sh" "$stage/init"
: > "$stage/modules/order"
for m in "$@"; do
	cp "$m" "$stage/modules/"
	basename "$m" >> "$stage/modules/order"
done
mkdir -p "$stage/modules/extra"
for m in ${EXTRA_MODULES:-}; do
	base=$(basename "$m")
	case "$m" in
	*.xz) xz -dc "$m" > "$stage/modules/extra/${base%.xz}" ;;
	*.zst) zstd -qdc "$m" > "$stage/modules/extra/${base%.zst}" ;;
	*) cp "$m" "$stage/modules/extra/" ;;
	esac
done
cp -a "$tests/." "$stage/tests/"
mkdir -p "$stage/modules/net"
: > "$stage/modules/net/order"
for m in ${NET_MODULES:-}; do
	base=$(basename "$m")
	case "$m" in
	*.xz) xz -dc "$m" > "$stage/modules/net/${base%.xz}"; base=${base%.xz} ;;
	*.zst) zstd -qdc "$m" > "$stage/modules/net/${base%.zst}"; base=${base%.zst} ;;
	*) cp "$m" "$stage/modules/net/" ;;
	esac
	echo "$base" >> "$stage/modules/net/order"
done
# The guest mounts a tmpfs on /tmp (init.sh): what the host has under
# /tmp (a build directory there) goes under /opt/host-tmp instead.
guest_path() {
	case "$1" in
	/tmp/*) echo "/opt/host-tmp/${1#/tmp/}" ;;
	*) echo "$1" ;;
	esac
}
for p in ${EXTRA_PROGRAMS:-}; do
	for f in "$p" $(ldd "$p" | awk '/=> \// { print $3 } /^\t\// { print $1 }'); do
		g=$(guest_path "$f")
		mkdir -p "$stage$(dirname "$g")"
		cp -L "$f" "$stage$g"
	done
done
for f in ${EXTRA_FILES:-}; do
	mkdir -p "$stage$(dirname "$f")"
	cp -L "$f" "$stage$f"
done
for t in ${EXTRA_TREES:-}; do
	cp -a "$t/." "$stage/"
	find "$t" -type f \( -name '*.so*' -o -perm -u+x \) -exec ldd {} + 2>/dev/null |
		awk '/=> \// { print $3 }' | sort -u |
		while read -r f; do
			g=$(guest_path "$f")
			[ -e "$stage$g" ] && continue
			mkdir -p "$stage$(dirname "$g")"
			cp -L "$f" "$stage$g"
		done
done
for l in ${EXTRA_LISTS:-}; do
	cp "$l" "$stage/tests/"
done
# Debug info is of no use in the guest, and a smaller initramfs keeps the
# 4-node debug-kernel cluster (256M guests) clear of an early-boot KASAN
# report that a ~12 MB one provoked (before any SCIF module was loaded).
for f in "$stage/tests"/*; do
	[ "$(head -c 4 "$f" 2>/dev/null)" = "$(printf '\177ELF')" ] &&
		strip --strip-debug "$f"
done
cp "$list" "$stage/tests/list"
(cd "$stage" && find . | cpio -o -H newc --quiet) > "$out"
