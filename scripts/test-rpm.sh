#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-rpm.sh OUT: the RPM packaging (packaging/rpm/scif.spec) on the
# Debian test host, in TAP; OUT takes everything built.  Needs rpm and
# rpmlint (scripts/pkg-deps.sh).  Seconds:
#
#  - the spec's version is dkms.conf's
#  - rpmbuild -bb (build dependencies not checked: this is Debian) of a
#    tarball of the tracked files makes scif-dkms, libscif0,
#    libscif-devel and scif-tools, each holding what it should
#  - rpmlint finds no error in them or in the spec (with
#    packaging/rpm/scif.rpmlintrc, which says why it filters what it does)
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: test-rpm.sh OUT}
spec=$top/packaging/rpm/scif.spec
rm -rf "$out"
mkdir -p "$out/SOURCES"
out=$(cd "$out" && pwd)
# shellcheck source=scripts/host-tap.sh
. "$top/scripts/host-tap.sh"

version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$top/dkms.conf")
spec_version() {
	grep -Eq "^Version: +$version\$" "$spec"
}

build_rpms() {
	local src=$out/src/scif-$version
	mkdir -p "$src"
	if git -C "$top" rev-parse --git-dir > /dev/null 2>&1; then
		git -C "$top" ls-files -co --exclude-standard -z |
			rsync -a --from0 --files-from=- "$top/" "$src/"
	else
		rsync -a --exclude=/build --exclude=.git "$top/" "$src/"
	fi
	tar -C "$out/src" -czf "$out/SOURCES/scif-$version.tar.gz" "scif-$version" &&
		rpmbuild -bb --nodeps --define "_topdir $out" "$spec"
}

rpm_has() { # package path...: each path is in the package
	local list f
	list=$(rpm -qlp "$out"/RPMS/*/"$1-$version"-*.rpm) || return 1
	shift
	for f in "$@"; do
		grep -qx "$f" <<< "$list" || { echo "no $f"; return 1; }
	done
}
contents() {
	rpm_has scif-dkms "/usr/src/scif-$version/dkms.conf" \
		"/usr/src/scif-$version/Kbuild" \
		"/usr/src/scif-$version/drivers/misc/scif/scif_main.c" \
		/usr/lib/udev/rules.d/60-scif.rules /usr/lib/modprobe.d/scif.conf \
		/usr/lib/modules-load.d/scif.conf &&
	rpm_has libscif0 /usr/lib64/libscif.so.0 "/usr/lib64/libscif.so.$version" &&
	rpm_has libscif-devel /usr/include/scif.h /usr/include/scif/scif_ioctl.h \
		/usr/lib64/libscif.so /usr/lib64/pkgconfig/scif.pc \
		/usr/lib64/pkgconfig/libscif.pc /usr/share/man/man3/scif_open.3 &&
	rpm_has scif-tools /usr/bin/scif-info /usr/bin/scif-bench \
		/usr/bin/scif-vm-config /usr/bin/scif-ivshmem-server \
		/usr/lib/systemd/system/scif-ivshmem-server@.service
}

lint() {
	rpmlint -r "$top/packaging/rpm/scif.rpmlintrc" "$out"/RPMS/*/*.rpm "$spec" |
		tee "$out/rpmlint.txt" | grep ': E: '
	grep -q ' 0 errors,' "$out/rpmlint.txt"
}

check rpm-spec-version spec_version
check rpm-build build_rpms
check rpm-contents contents
check rpmlint-no-errors lint
tap_end
