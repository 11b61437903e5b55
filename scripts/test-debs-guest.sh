#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-debs-guest.sh KERNEL PKGOUT OUT: boot KERNEL (6.1 or 6.12) with the
# Debian packages installed and SCIF used from the installed paths
# (packaging/tests/pkg_installed_test.sh); prints TAP.  PKGOUT is the
# output of scripts/test-packaging.sh: its .debs (PKGOUT/debs) and the
# modules DKMS built from scif-dkms's source for KERNEL
# (PKGOUT/dkms-KERNEL/built).  The guest has no compiler, so DKMS's build
# is taken from the host, and no udev, so the rule is not exercised here.
# Exits non-zero if a test failed.
# Runs under $SCIF_QEMU_LOCK like every guest.
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
k=${1:?usage: test-debs-guest.sh KERNEL PKGOUT OUT}
pkgout=${2:?usage}
out=${3:?usage}
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$top/dkms.conf")
ma=x86_64-linux-gnu
n=0
fails=0

tap() { # verdict name
	n=$((n + 1))
	[ "$1" = ok ] || fails=$((fails + 1))
	echo "$1 $n - $2"
}
die() { tap "not ok" "$k/debs-guest/$1"; echo "1..$n"; exit 1; }

read -r _ image rel < <(sh "$top/scripts/kernels.sh" resolve "$k") || die "kernel"
ls "$pkgout/debs/libscif0_${version}"_*.deb > /dev/null 2>&1 || die "debs (none built)"
ls "$pkgout/dkms-$k/built/scif.ko"* > /dev/null 2>&1 || die "dkms-modules (none built)"

rm -rf "$out"
stage=$out/stage
root=$stage/pkgroot
mkdir -p "$root/lib/modules/$rel/updates/dkms" "$out/dev"
for p in libscif0 scif-tools scif-dkms; do
	dpkg-deb -x "$pkgout/debs/${p}_${version}"_*.deb "$root" || die "unpack-$p"
done
dpkg-deb -x "$pkgout/debs/libscif-dev_${version}"_*.deb "$out/dev" || die "unpack-libscif-dev"
rm -rf "${root:?}/usr/src" "${root:?}/usr/share"
# As "dkms install" puts them, decompressed for busybox's insmod.
for m in "$pkgout/dkms-$k/built"/scif*.ko*; do
	case "$m" in
	*.xz) xz -dc "$m" > "$root/lib/modules/$rel/updates/dkms/$(basename "${m%.xz}")" ;;
	*.zst) zstd -qdc "$m" > "$root/lib/modules/$rel/updates/dkms/$(basename "${m%.zst}")" ;;
	*) cp "$m" "$root/lib/modules/$rel/updates/dkms/" ;;
	esac
done
# The C library the packages depend on (libc6), from this Debian 12 host.
mkdir -p "$root/lib64" "$root/lib/$ma"
cp -L /lib64/ld-linux-x86-64.so.2 "$root/lib64/"
cp -L "/lib/$ma/libc.so.6" "$root/lib/$ma/"

# Programs built against the unpacked libscif-dev, and one against a
# SCIF_0.0-tagged stand-in (tools/lib/scif/compat).
cc -Wall -Werror -I"$out/dev/usr/include" -o "$stage/mpss-style" \
	"$top/tools/lib/scif/compat/mpss-style.c" -L"$out/dev/usr/lib/$ma" -lscif ||
	die "build-mpss-style"
mkdir -p "$out/intel"
printf 'SCIF_0.0 {\n\tglobal: scif_*;\n\tlocal: *;\n};\n' > "$out/intel/map"
cc -O2 -fPIC -shared -I"$out/dev/usr/include" -Wl,-soname,libscif.so.0 \
	-Wl,--version-script="$out/intel/map" -o "$out/intel/libscif.so.0" \
	"$top/tools/lib/scif/compat/standin.c" &&
	ln -sf libscif.so.0 "$out/intel/libscif.so" &&
	cc -O2 -I"$out/dev/usr/include" -o "$stage/abi-user" \
		"$top/tools/lib/scif/compat/abi-user.c" -L"$out/intel" -lscif ||
	die "build-abi-user"
cp "$top/packaging/tests/pkg_installed_test.sh" "$stage/"
echo "$version" > "$stage/pkg-version"
echo pkg_installed_test.sh > "$out/list"

sh "$top/qemu/mkinitramfs.sh" "$out/guest.cpio" "$out/list" "$stage" || die "initramfs"
echo "# booting $k ($rel) with the packages" >&2
sh "$top/qemu/run-vm.sh" "$image" "$out/guest.cpio" "$out/vm" > "$out/run-vm.log" 2>&1 ||
	echo "# guest exited with status $?"
while read -r verdict name; do
	case "$verdict" in
	PASS) tap ok "$name" ;;
	SKIP) tap ok "$name # SKIP" ;;
	*) tap "not ok" "$name" ;;
	esac
done < <(sh "$top/qemu/parse-results.sh" "$out/vm/results.log" "$k/debs-guest")
if bash "$top/qemu/check-log.sh" "$out/vm/console.log" > "$out/check-log.txt" 2>&1; then
	tap ok "$k/debs-guest/kernel-log-clean"
else
	tap "not ok" "$k/debs-guest/kernel-log-clean"
fi
echo "1..$n"
[ "$fails" -eq 0 ]
