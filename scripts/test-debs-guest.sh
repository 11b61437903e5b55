#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-debs-guest.sh KERNEL PKGOUT OUT [ntb]: boot KERNEL (6.1 or 6.12)
# with the Debian packages installed and SCIF used from the installed
# paths (packaging/tests/pkg_installed_test.sh); prints TAP.  PKGOUT is
# the output of scripts/test-packaging.sh: its .debs (PKGOUT/debs) and
# the modules DKMS built from scif-dkms's source for KERNEL
# (PKGOUT/dkms-KERNEL/built).  The guest has no compiler, so DKMS's build
# is taken from the host, and no udev, so the rule is not exercised here.
# With "ntb": two such guests joined by the emulated NTB (qemu/cluster.sh
# -T ntb), with scif-ntb-dkms installed too and the NTB core, ntb_ivshmem
# and scif_ntb that DKMS built from it (PKGOUT/dkms-KERNEL/built-ntb)
# loaded by modprobe (packaging/tests/pkg_ntb_test.sh); then messaging
# and RMA across (scif_cluster_test, scif_ntb_test) on those modules.
# Exits non-zero if a test failed.
# Runs under $SCIF_QEMU_LOCK like every guest.
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
k=${1:?usage: test-debs-guest.sh KERNEL PKGOUT OUT [ntb]}
pkgout=${2:?usage}
out=${3:?usage}
mode=${4:-}
build=${BUILD:-$top/build}
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$top/dkms.conf")
ma=x86_64-linux-gnu
n=0
fails=0

tap() { # verdict name
	n=$((n + 1))
	[ "$1" = ok ] || fails=$((fails + 1))
	echo "$1 $n - $2"
}
label=$k/debs-guest${mode:+-$mode}
die() { tap "not ok" "$label/$1"; echo "1..$n"; exit 1; }

read -r _ image rel < <(sh "$top/scripts/kernels.sh" resolve "$k") || die "kernel"
ls "$pkgout/debs/libscif0_${version}"_*.deb > /dev/null 2>&1 || die "debs (none built)"
ls "$pkgout/dkms-$k/built/scif.ko"* > /dev/null 2>&1 || die "dkms-modules (none built)"

rm -rf "$out"
stage=$out/stage
root=$stage/pkgroot
mkdir -p "$root/lib/modules/$rel/updates/dkms" "$out/dev"
debs="libscif0 scif-tools scif-dkms"
mods=("$pkgout/dkms-$k/built"/scif*.ko*)
if [ "$mode" = ntb ]; then
	ls "$pkgout/dkms-$k/built-ntb/scif_ntb.ko"* > /dev/null 2>&1 ||
		die "dkms-ntb-modules (none built)"
	debs="$debs scif-ntb-dkms"
	mods+=("$pkgout/dkms-$k/built-ntb"/*.ko*)
fi
for p in $debs; do
	dpkg-deb -x "$pkgout/debs/${p}_${version}"_*.deb "$root" || die "unpack-$p"
done
dpkg-deb -x "$pkgout/debs/libscif-dev_${version}"_*.deb "$out/dev" || die "unpack-libscif-dev"
rm -rf "${root:?}/usr/src" "${root:?}/usr/share"
# As "dkms install" puts them, decompressed for busybox's insmod.
for m in "${mods[@]}"; do
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
echo "$version" > "$stage/pkg-version"

# Each result line of a guest's TAP as ours, then its kernel log's.
results() { # results.log console.log label
	local verdict name
	while read -r verdict name; do
		case "$verdict" in
		PASS) tap ok "$name" ;;
		SKIP) tap ok "$name # SKIP" ;;
		*) tap "not ok" "$name" ;;
		esac
	done < <(sh "$top/qemu/parse-results.sh" "$1" "$3")
	if bash "$top/qemu/check-log.sh" "$2" > "$out/check-log-${3//\//_}.txt" 2>&1; then
		tap ok "$3/kernel-log-clean"
	else
		tap "not ok" "$3/kernel-log-clean"
	fi
}

if [ "$mode" = ntb ]; then
	cp "$top/packaging/tests/pkg_ntb_test.sh" "$stage/"
	cp "$build/selftests/scif_cluster_test" "$build/selftests/scif_ntb_test" \
		"$stage/" || die "selftests (make selftests)"
	printf '%s\n' "pkg_ntb_test.sh load" scif_cluster_test scif_ntb_test \
		"pkg_ntb_test.sh unload" > "$stage/pkg-ntb-steps"
	echo pkg-ntb-steps > "$out/list"
	sh "$top/qemu/mkinitramfs.sh" "$out/guest.cpio" "$out/list" "$stage" ||
		die "initramfs"
	[ -x "$build/qemu/ivshmem-server" ] ||
		make -s -C "$top/qemu" OUTPUT="$build/qemu" > /dev/null || die "ivshmem-server"
	echo "# booting two $k ($rel) guests with the packages, joined by the emulated NTB" >&2
	bash "$top/qemu/cluster.sh" -n 2 -T ntb -k "$image" -i "$out/guest.cpio" \
		-o "$out/vm" -m 512M -t 600 -s pkg-ntb-steps \
		-S "$build/qemu/ivshmem-server" > "$out/cluster.log" 2>&1 ||
		echo "# the launcher reported failure"
	for j in 0 1; do
		results "$out/vm/node$j/results.log" "$out/vm/node$j/console.log" \
			"$label/node$j"
	done
else
	cp "$top/packaging/tests/pkg_installed_test.sh" "$stage/"
	echo pkg_installed_test.sh > "$out/list"
	sh "$top/qemu/mkinitramfs.sh" "$out/guest.cpio" "$out/list" "$stage" ||
		die "initramfs"
	echo "# booting $k ($rel) with the packages" >&2
	sh "$top/qemu/run-vm.sh" "$image" "$out/guest.cpio" "$out/vm" > "$out/run-vm.log" 2>&1 ||
		echo "# guest exited with status $?"
	results "$out/vm/results.log" "$out/vm/console.log" "$label"
fi
echo "1..$n"
[ "$fails" -eq 0 ]
