#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# vsock-test-build.sh KERNEL OUTDIR   (KERNEL = 6.1 | 6.12 | debug | gcov)
# For scif_vsock_test.sh (Documentation/scif/vsock.rst), into OUTDIR:
#   vsock_test   the kernel's own tools/testing/vsock/vsock_test, built
#                unmodified from the Debian linux-source of
#                KERNEL: the 6.1 tree (scripts/kernel-source.sh) for 6.1,
#                debug and gcov; for 6.12, linux-source-6.12 at exactly the
#                installed headers' version, of which tools/testing/vsock,
#                tools/include and the uapi vm_sockets.h are unpacked into
#                $BUILD/vsock-src/6.12/VERSION.  Its uapi <linux/vm_sockets.h>
#                is the tree's; the other headers are the host's.
#   modules/     the guest kernel's vsock core and virtio common code
#                (uncompressed), and for the slot test the virtio vsock
#                transport with the virtio modules it needs, each list
#                in load order: modules/core and modules/virtio.
# Nothing of the kernel's is committed.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$top/build}
k=${1:-} out=${2:-}

die() { echo "vsock-test-build: $*" >&2; exit 1; }
[ -n "$out" ] || { echo "usage: $0 6.1|6.12|debug|gcov OUTDIR" >&2; exit 2; }

read -r kdir _image rel <<-EOT
$(sh "$top/scripts/kernels.sh" resolve "$k")
EOT
[ -n "$kdir" ] || die "no kernel $k"

case "$k" in
6.1|debug|gcov)
	src=$(sh "$top/scripts/kernel-source.sh")
	;;
6.12)
	version=$(dpkg-query -W -f '${Version}' linux-source-6.12) ||
		die "linux-source-6.12 missing (scripts/deps.sh)"
	hv=$(sh "$top/scripts/kernels.sh" headers-version "$rel")
	[ -z "$hv" ] || [ "$hv" = "$version" ] ||
		die "linux-source-6.12 is $version, the headers of $rel are $hv"
	src=$build/vsock-src/6.12/$version
	if [ ! -e "$src/.unpacked" ]; then
		echo "vsock-test-build: unpacking tools/testing/vsock of linux-source-6.12 $version" >&2
		rm -rf "$src"
		mkdir -p "$src"
		tar -C "$src" --strip-components=1 -xJf /usr/src/linux-source-6.12.tar.xz \
			linux-source-6.12/tools/testing/vsock \
			linux-source-6.12/tools/include \
			linux-source-6.12/include/uapi/linux/vm_sockets.h
		: > "$src/.unpacked"
	fi
	;;
*) die "unknown kernel '$k' (6.1, 6.12, debug or gcov)" ;;
esac

mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$out/tree
rm -rf "$work"
mkdir -p "$work/tools/testing" "$work/usr/include/linux"
cp -r "$src/tools/testing/vsock" "$work/tools/testing/"
cp -r "$src/tools/include" "$work/tools/"
cp "$src/include/uapi/linux/vm_sockets.h" "$work/usr/include/linux/"
make -s -C "$work/tools/testing/vsock" vsock_test >&2 ||
	die "vsock_test did not build"
cp "$work/tools/testing/vsock/vsock_test" "$out/vsock_test"

# The guest's modules: a Debian kernel's from its lib/modules, under the
# root scripts/kernels.sh modbase names (the cache deps.sh unpacked the
# 6.12 guests' kernel into, or / for an installed kernel); the debug
# kernel's (and its gcov twin's) from its build tree.
modroot=$(sh "$top/scripts/kernels.sh" modbase "$rel")
mods=$out/modules
rm -rf "$mods"
mkdir -p "$mods"
find_ko() { # name
	if [ "$k" = debug ] || [ "$k" = gcov ]; then
		find "$kdir" -name "$1.ko" | head -n 1
	else
		find "$modroot/lib/modules/$rel/kernel" -name "$1.ko*" | head -n 1
	fi
}
add() { # list name...: copy each (uncompressed) and add it to modules/list
	list=$1
	shift
	: > "$mods/$list"
	for m in "$@"; do
		f=$(find_ko "$m")
		[ -n "$f" ] || continue
		case "$f" in
		*.xz) xz -dc "$f" > "$mods/$m.ko" ;;
		*.zst) zstd -qdc "$f" > "$mods/$m.ko" ;;
		*) cp "$f" "$mods/$m.ko" ;;
		esac
		echo "$m.ko" >> "$mods/$list"
	done
}
add core vsock vmw_vsock_virtio_transport_common
add virtio virtio_ring virtio vmw_vsock_virtio_transport
grep -q vmw_vsock_virtio_transport_common "$mods/core" ||
	die "no vmw_vsock_virtio_transport_common.ko for $k"
echo "$out"
