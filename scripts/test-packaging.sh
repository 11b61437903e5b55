#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-packaging.sh OUT: host-side tests of the packaging, in TAP; OUT
# takes everything built.  Needs root (dkms) and scripts/pkg-deps.sh's
# packages.  Changes nothing outside OUT: DKMS works in trees of its own
# (--dkmstree, --sourcetree, --installtree, --no-depmod) and "make
# install" goes to a DESTDIR.  The one side effect is DKMS's own: on its
# first build it makes /var/lib/dkms/mok.key and mok.pub, the key it
# signs modules with (Documentation/scif/install.rst, Secure Boot).
#
#  - the release number agrees in dkms.conf, debian/changelog, the
#    modules' MODULE_VERSION and libscif; the modprobe.d sample names
#    every module parameter of drivers/; the udev rule sets mode, group
#    and the /dev/mic/scif link
#  - make install DESTDIR=... PREFIX=/usr installs exactly the expected
#    files, the UAPI header as scif/scif_ioctl.h and not linux/
#  - dpkg-buildpackage -us -uc -b builds the six packages, lintian finds
#    no warning or error, each holds what it should (the libibverbs
#    provider depending on exactly the libibverbs it is written for,
#    the tools printing the package's version); a program built
#    against the unpacked libscif-dev runs with the unpacked libscif0
#  - dkms add, build, install and remove of the unpacked scif-dkms source
#    for the 6.1 and 6.12 kernels (PKG_KERNELS to choose), with the built
#    modules' version and vermagic checked; the modules are kept in
#    OUT/dkms-KERNEL/built for scripts/test-debs-guest.sh; then the same
#    of scif-ntb-dkms's source (the NTB core and drivers from Debian's
#    linux-source at the kernel's version, ntb_ivshmem, scif_ntb), kept
#    in OUT/dkms-KERNEL/built-ntb for scripts/test-debs-ntb.sh
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: test-packaging.sh OUT}
KERNELS=${PKG_KERNELS:-6.1 6.12}
rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd)
n=0
fails=0

ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; }
check() { # name command...: ok if the command succeeds (output in $out/NAME.log)
	local name=$1 t0=$SECONDS
	shift
	if "$@" > "$out/$name.log" 2>&1; then ok "$name"; else
		not_ok "$name"; tail -n 20 "$out/$name.log" | sed 's/^/# /'; fi
	echo "# $name: $((SECONDS - t0)) s"
}

version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$top/dkms.conf")

versions_agree() {
	local drv lib deb net vs pl rd iv ntbv
	drv=$(sed -n 's/^#define SCIF_DRIVER_VERSION[[:space:]]*"\(.*\)"$/\1/p' \
		"$top/drivers/misc/scif/scif_hw.h")
	lib=$(sed -n 's/^VERSION := //p' "$top/tools/lib/scif/Makefile")
	net=$(sed -n 's/^MODULE_VERSION("\(.*\)");$/\1/p' \
		"$top/drivers/net/scif/scif_net_main.c")
	vs=$(sed -n 's/^MODULE_VERSION("\(.*\)");$/\1/p' \
		"$top/net/vmw_vsock/scif_vsock.c")
	pl=$(sed -n 's/^MODULE_VERSION("\(.*\)");$/\1/p' \
		"$top/net/scif/scif_peer_links.c")
	rd=$(sed -n 's/^MODULE_VERSION("\(.*\)");$/\1/p' \
		"$top/drivers/infiniband/hw/scif/scif_rdma_main.c")
	iv=$(sed -n 's/^MODULE_VERSION("\(.*\)");$/\1/p' \
		"$top/drivers/ntb/hw/ivshmem/ntb_ivshmem.c")
	ntbv=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' \
		"$top/packaging/ntb-dkms/dkms.conf")
	deb=$(dpkg-parsechangelog -l "$top/debian/changelog" -S Version)
	echo "dkms.conf $version, driver $drv, scif_net $net, scif_vsock $vs, scif_peer_links $pl, scif_rdma $rd, ntb_ivshmem $iv, scif-ntb dkms.conf $ntbv, libscif $lib, debian $deb"
	[ -n "$version" ] && [ "$drv" = "$version" ] && [ "$lib" = "$version" ] &&
		[ "$net" = "$version" ] && [ "$vs" = "$version" ] &&
		[ "$pl" = "$version" ] && [ "$rd" = "$version" ] &&
		[ "$iv" = "$version" ] && [ "$ntbv" = "$version" ] &&
		[ "${deb%%-*}" = "$version" ]
}
check versions-agree versions_agree

every_param() {
	local p bad=0
	for p in $(grep -rhoE 'module_param(_named)?\([a-z0-9_]+' "$top/drivers" |
			sed 's/.*(//' | sort -u); do
		grep -qE "(^#?options [a-z_]+ $p=|(^|[ ,])$p([ ,]|$))" \
			"$top/packaging/scif.modprobe.conf" ||
			{ echo "not in the modprobe.d sample: $p"; bad=1; }
	done
	[ "$bad" -eq 0 ]
}
check modprobe-sample-every-param every_param

udev_rule() {
	local r=$top/packaging/60-scif.rules
	grep -v '^#' "$r" | grep 'KERNEL=="scif"' | grep 'SUBSYSTEM=="misc"' |
		grep 'GROUP="scif"' | grep 'MODE="0660"' | grep -q 'SYMLINK+="mic/scif"'
}
check udev-rule udev_rule

# make install into a DESTDIR, for the 6.1 kernel.
read -r kdir61 _ rel61 < <(sh "$top/scripts/kernels.sh" resolve 6.1)
expected_install() {
	cat <<-EOT
	etc/modprobe.d/scif.conf
	etc/modules-load.d/scif.conf
	etc/udev/rules.d/60-scif.rules
	lib/modules/$rel61/updates/scif.ko
	lib/modules/$rel61/updates/scif_ivshmem.ko
	lib/modules/$rel61/updates/scif_net.ko
	lib/modules/$rel61/updates/scif_peer_links.ko
	lib/modules/$rel61/updates/scif_rdma.ko
	lib/modules/$rel61/updates/scif_vsock.ko
	usr/bin/scif-bench
	usr/bin/scif-info
	usr/bin/scif-ivshmem-server
	usr/bin/scif-vm-config
	usr/include/scif.h
	usr/include/scif/scif_ioctl.h
	usr/lib/libscif.a
	usr/lib/libscif.so
	usr/lib/libscif.so.0
	usr/lib/libscif.so.$version
	usr/lib/pkgconfig/libscif.pc
	usr/lib/pkgconfig/scif.pc
	usr/share/doc/scif/examples/fence-signal.c
	usr/share/doc/scif/examples/hello-client.c
	usr/share/doc/scif/examples/hello-server.c
	usr/share/doc/scif/examples/mmap-pingpong.c
	usr/lib/systemd/system/scif-ivshmem-server@.service
	usr/share/man/man1/scif-bench.1
	usr/share/man/man1/scif-vm-config.1
	usr/share/man/man8/scif-ivshmem-server.8
	EOT
	for m in "$top"/tools/lib/scif/man/*.3; do
		echo "usr/share/man/man3/$(basename "$m")"
	done
	echo usr/share/man/man8/scif-info.8
}
make_install() {
	local d=$out/destdir
	make -s -j2 -C "$top" install BUILD="$out/build" DESTDIR="$d" PREFIX=/usr \
		KVER="$rel61" KDIR="$kdir61" || return 1
	(cd "$d" && find . ! -type d | sed 's|^\./||' | sort) > "$out/installed.txt"
	expected_install | sort > "$out/expected.txt"
	diff -u "$out/expected.txt" "$out/installed.txt" || return 1
	[ "$(modinfo -F version "$d/lib/modules/$rel61/updates/scif.ko")" = "$version" ] &&
		modinfo -F vermagic "$d/lib/modules/$rel61/updates/scif.ko" | grep -q "^$rel61 " &&
		grep -q "^libdir=/usr/lib$" "$d/usr/lib/pkgconfig/libscif.pc" &&
		PKG_CONFIG_LIBDIR="$d/usr/lib/pkgconfig" pkg-config --libs scif |
		grep -qw -- -lscif
}
if [ -n "$rel61" ]; then check make-install-destdir make_install; else
	not_ok "make-install-destdir (no 6.1 kernel)"; fi

# The Debian packages, built from a copy of the tracked files.
debs=$out/debs
build_debs() {
	local src=$debs/scif-$version
	mkdir -p "$src"
	if git -C "$top" rev-parse --git-dir > /dev/null 2>&1; then
		git -C "$top" ls-files -z | rsync -a --from0 --files-from=- "$top/" "$src/"
	else
		rsync -a --exclude=/build --exclude=.git "$top/" "$src/"
	fi
	(cd "$src" && dpkg-buildpackage -us -uc -b)
}
check debs-build build_debs
check debs-lintian lintian --fail-on error,warning "$debs/scif_${version}_amd64.changes"

deb_has() { # package path...: each path is in the package, none under usr/include/linux
	local pkg=$1 list f
	shift
	list=$(dpkg-deb -c "$debs/${pkg}_${version}"_*.deb | awk '{ print $6 }') || return 1
	for f in "$@"; do
		grep -qx "./$f" <<< "$list" || { echo "$pkg: no $f"; return 1; }
	done
	! grep -q '^\./usr/include/linux/' <<< "$list"
}
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
check deb-libscif0-content deb_has libscif0 "usr/lib/$ma/libscif.so.0" \
	"usr/lib/$ma/libscif.so.$version"
check deb-libscif-dev-content deb_has libscif-dev usr/include/scif.h \
	usr/include/scif/scif_ioctl.h "usr/lib/$ma/libscif.so" \
	"usr/lib/$ma/libscif.a" "usr/lib/$ma/pkgconfig/libscif.pc" \
	"usr/lib/$ma/pkgconfig/scif.pc" \
	usr/share/man/man3/scif_open.3.gz
check deb-scif-tools-content deb_has scif-tools usr/bin/scif-info usr/bin/scif-bench \
	usr/bin/scif-vm-config usr/bin/scif-ivshmem-server \
	lib/systemd/system/scif-ivshmem-server@.service \
	usr/share/man/man8/scif-ivshmem-server.8.gz usr/share/man/man1/scif-vm-config.1.gz
# The packaged server, started as its unit starts it (the unit's
# ExecStartPre and ExecStart, with SCIF_DIR in OUT), serves every node's
# socket; systemd-analyze verify finds nothing wrong with the unit (with
# the unpacked package's server in it).
deb_ivshmem_unit() {
	local x=$out/tools-unit unit dir=$out/ivshmem-unit cmd pid ok=1 k
	rm -rf "$x" "$dir"
	dpkg-deb -x "$debs/scif-tools_${version}"_*.deb "$x" || return 1
	unit=$x/lib/systemd/system/scif-ivshmem-server@.service
	mkdir -p "$x/verify"
	sed "s|/usr/bin/scif-ivshmem-server|$x/usr/bin/scif-ivshmem-server|" \
		"$unit" > "$x/verify/scif-ivshmem-server@.service"
	systemd-analyze verify --man=no "$x/verify/scif-ivshmem-server@.service" ||
		return 1
	cmd=$(sed -n 's/^ExecStart=//p' "$unit" |
		sed -e "s|\${SCIF_DIR}|$dir|g" -e 's|\${SCIF_NODES}|2|g' \
			-e "s|^/usr/bin/|$x/usr/bin/|")
	mkdir -p "$dir"
	# shellcheck disable=SC2086 # the unit's command line, in words
	$cmd > "$out/ivshmem-unit.log" 2>&1 &
	pid=$!
	for k in $(seq 50); do
		[ -S "$dir/node0.sock" ] && [ -S "$dir/node1.sock" ] && break
		sleep 0.1
	done
	[ -S "$dir/node0.sock" ] && [ -S "$dir/node1.sock" ] || ok=0
	kill "$pid" 2> /dev/null
	wait "$pid"
	[ "$ok" = 1 ] && [ ! -e "$dir/node0.sock" ]
}
check deb-ivshmem-server-unit deb_ivshmem_unit
# The packaged tools say the package's version (not a commit's name).
deb_tools_version() {
	local x=$out/tools-x debver p
	rm -rf "$x"
	debver=$(dpkg-deb -f "$debs/scif-tools_${version}"_*.deb Version) &&
		dpkg-deb -x "$debs/libscif0_${version}"_*.deb "$x" &&
		dpkg-deb -x "$debs/scif-tools_${version}"_*.deb "$x" || return 1
	for p in scif-info scif-bench; do
		LD_LIBRARY_PATH=$x/usr/lib/$ma "$x/usr/bin/$p" --version |
			grep -qx "$p $debver" || { echo "$p: not $debver"; return 1; }
	done
}
check deb-scif-tools-version deb_tools_version
provider_deb_ok() {
	deb_has ibverbs-provider-scif \
		"usr/lib/$ma/libibverbs/libscif_rdma-rdmav34.so" \
		etc/libibverbs.d/scif_rdma.driver &&
		dpkg-deb -f "$debs/ibverbs-provider-scif_${version}"_*.deb Depends |
		grep -q 'libibverbs1 (>= 44.0), libibverbs1 (<< 45)'
}
check deb-ibverbs-provider-scif-content provider_deb_ok
check deb-scif-ntb-dkms-content deb_has scif-ntb-dkms \
	"usr/src/scif-ntb-$version/dkms.conf" "usr/src/scif-ntb-$version/scif-ntb-build" \
	"usr/src/scif-ntb-$version/drivers/ntb/hw/ivshmem/ntb_ivshmem.c" \
	etc/modprobe.d/scif-ntb.conf
check deb-scif-dkms-content deb_has scif-dkms "usr/src/scif-$version/dkms.conf" \
	"usr/src/scif-$version/Kbuild" lib/udev/rules.d/60-scif.rules \
	etc/modprobe.d/scif.conf usr/lib/modules-load.d/scif.conf

# Unpacked, as installed: build and run against the packaged files only.
root=$out/root
unpacked_works() {
	local p o
	for p in scif-dkms scif-ntb-dkms libscif0 libscif-dev scif-tools; do
		dpkg-deb -x "$debs/${p}_${version}"_*.deb "$root" || return 1
	done
	cc -Wall -Werror -I"$root/usr/include" -o "$out/mpss-style" \
		"$top/tools/lib/scif/compat/mpss-style.c" \
		-L"$root/usr/lib/$ma" -lscif || return 1
	o=$(LD_LIBRARY_PATH="$root/usr/lib/$ma" LD_BIND_NOW=1 ldd "$root/usr/bin/scif-info") || return 1
	echo "$o"
	grep -q "libscif.so.0 => $root/usr/lib/$ma/libscif.so.0" <<< "$o" &&
		LD_LIBRARY_PATH="$root/usr/lib/$ma" "$out/mpss-style"
}
check debs-unpacked-build-and-link unpacked_works

# DKMS on the packaged source (the tree's own if the packages failed).
dkms_cycle() { # kernel-name
	local kdir rel t=$out/dkms-$1 src ko
	read -r kdir _ rel < <(sh "$top/scripts/kernels.sh" resolve "$1") || return 1
	src=$t/src
	mkdir -p "$src" "$t/tree" "$t/lib/modules/$rel"
	if [ -d "$root/usr/src/scif-$version" ]; then
		cp -a "$root/usr/src/scif-$version" "$src/"
	else
		mkdir -p "$src/scif-$version/drivers/misc" "$src/scif-$version/drivers/net"
		cp -a "$top/Kbuild" "$top/dkms.conf" "$top/include" "$src/scif-$version/"
		cp -a "$top/drivers/misc/scif" "$src/scif-$version/drivers/misc/"
		cp -a "$top/drivers/net/scif" "$src/scif-$version/drivers/net/"
		mkdir -p "$src/scif-$version/drivers/infiniband/hw"
		cp -a "$top/drivers/infiniband/hw/scif" "$src/scif-$version/drivers/infiniband/hw/"
		mkdir -p "$src/scif-$version/net"
		cp -a "$top/net/scif" "$top/net/vmw_vsock" "$src/scif-$version/net/"
	fi
	set -- dkms --sourcetree "$src" --dkmstree "$t/tree" \
		--installtree "$t/lib/modules"
	"$@" add -m scif -v "$version" &&
	"$@" build -m scif -v "$version" -k "$rel" --kernelsourcedir "$kdir" &&
	"$@" install -m scif -v "$version" -k "$rel" --kernelsourcedir "$kdir" \
		--no-depmod || return 1
	"$@" status -m scif | tee "$t/status"
	grep -q "^scif/$version, $rel, [^:]*: installed" "$t/status" || return 1
	# DKMS compresses them as the kernel's own modules are (6.12: xz).
	for ko in scif scif_ivshmem scif_peer_links scif_net scif_vsock scif_rdma; do
		ko=$(ls "$t/lib/modules/$rel/updates/dkms/$ko".ko* 2> /dev/null)
		[ -n "$ko" ] && [ -e "$ko" ] || { echo "missing $ko.ko*"; return 1; }
		[ "$(modinfo -F version "$ko")" = "$version" ] || return 1
		modinfo -F vermagic "$ko" | grep -q "^$rel " || return 1
	done
	depmod -b "$t" "$rel" 2> /dev/null &&
		grep -Eq '^updates/dkms/scif_ivshmem\.ko(\.xz|\.zst)?: updates/dkms/scif\.ko' \
			"$t/lib/modules/$rel/modules.dep" &&
		grep -Eq '^updates/dkms/scif_net\.ko(\.xz|\.zst)?: updates/dkms/scif_peer_links\.ko' \
			"$t/lib/modules/$rel/modules.dep" &&
		modinfo -F depends "$t/lib/modules/$rel/updates/dkms/scif_rdma.ko"* |
			tr ',' '\n' | grep -qx scif_net || return 1
	# Kept for scripts/test-debs-guest.sh, which boots them.
	mkdir -p "$t/built"
	cp "$t/lib/modules/$rel/updates/dkms"/scif*.ko* "$t/built/"
	ntb_dkms_cycle "$t" "$kdir" "$rel" "$@" || return 1
	"$@" remove -m scif -v "$version" --all --no-depmod || return 1
	! ls "$t/lib/modules/$rel/updates/dkms/scif.ko"* 2> /dev/null &&
		[ ! -e "$t/tree/scif" ]
}

depends_on() { # module.ko name...: modinfo names each among its dependencies
	local ko=$1 deps m
	shift
	deps=",$(modinfo -F depends "$ko"),"
	for m in "$@"; do
		[[ "$deps" = *",$m,"* ]] || { echo "$ko: depends on $deps, not $m"; return 1; }
	done
}

# scif-ntb-dkms's source beside scif's, in the same trees (dkms_cycle):
# the NTB core, drivers and clients from linux-source at the kernel's
# version, ntb_ivshmem and scif_ntb; their versions, vermagic and
# dependencies; kept in OUT/dkms-KERNEL/built-ntb for
# scripts/test-debs-ntb.sh.
ntb_dkms_cycle() { # dkms-cycle-dir kdir release dkms-command...
	local t=$1 kdir=$2 rel=$3 src ko d m
	shift 3
	src=$t/src/scif-ntb-$version
	if [ -d "$root/usr/src/scif-ntb-$version" ]; then
		cp -a "$root/usr/src/scif-ntb-$version" "$t/src/"
	else
		mkdir -p "$src/drivers/ntb/hw"
		cp -a "$top/packaging/ntb-dkms/dkms.conf" \
			"$top/packaging/ntb-dkms/scif-ntb-build" "$src/"
		cp -a "$top/drivers/ntb/hw/ivshmem" "$src/drivers/ntb/hw/"
	fi
	"$@" add -m scif-ntb -v "$version" &&
	"$@" build -m scif-ntb -v "$version" -k "$rel" --kernelsourcedir "$kdir" &&
	"$@" install -m scif-ntb -v "$version" -k "$rel" --kernelsourcedir "$kdir" \
		--no-depmod || { cat "$t/tree/scif-ntb/$version/build/make.log"; return 1; }
	d=$t/lib/modules/$rel/updates/dkms
	for m in ntb ntb_hw_intel ntb_hw_amd ntb_hw_idt ntb_hw_epf ntb_transport \
		ntb_netdev ntb_tool ntb_perf ntb_pingpong ntb_ivshmem scif_ntb; do
		ko=$(ls "$d/$m".ko* 2> /dev/null)
		[ -n "$ko" ] || { echo "scif-ntb: no $m.ko"; return 1; }
		modinfo -F vermagic "$ko" | grep -q "^$rel " || return 1
	done
	[ "$(modinfo -F version "$d/scif_ntb.ko"*)" = "$version" ] &&
		[ "$(modinfo -F version "$d/ntb_ivshmem.ko"*)" = "$version" ] || return 1
	depends_on "$d/scif_ntb.ko"* scif ntb &&
		depends_on "$d/ntb_hw_intel.ko"* ntb &&
		depends_on "$d/ntb_netdev.ko"* ntb_transport || return 1
	mkdir -p "$t/built-ntb"
	cp "$d"/ntb*.ko* "$d"/scif_ntb.ko* "$t/built-ntb/"
	"$@" remove -m scif-ntb -v "$version" --all --no-depmod &&
		! ls "$d/scif_ntb.ko"* 2> /dev/null && [ ! -e "$t/tree/scif-ntb" ]
}
for k in $KERNELS; do
	check "dkms-$k" dkms_cycle "$k"
done

echo "1..$n"
[ "$fails" -eq 0 ]
