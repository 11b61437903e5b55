#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-compat.sh LIBDIR OUT: host-side tests of the compatibility with
# Intel's MPSS stack, in TAP.  LIBDIR holds our built libscif.so.0 ("make
# lib": build/lib); OUT takes the build.  Needs no module and no VM.
#
#  - source: mpss-style.c, written with MPSS's names, compiles with
#    -Werror against the tree's headers and against a "make install-dev"
#    into a scratch DESTDIR (whose scif/scif_ioctl.h it must use, not the
#    distribution's stale linux/scif_ioctl.h), and links with -lscif;
#    SCIF_NO_MPSS_COMPAT leaves the old names out; the header is C++-clean.
#  - binary: abi-user.c linked against a stand-in libscif.so.0 whose
#    symbols carry Intel's version SCIF_0.0 runs with ours in its place,
#    every symbol bound at start (LD_BIND_NOW=1); the same program does
#    not start with a library tagged otherwise (the check can fail).
set -u

src=$(cd "$(dirname "$0")" && pwd)
lib=$(cd "$src/.." && pwd)
top=$(cd "$src/../../../.." && pwd)
libdir=$(cd "${1:?usage: test-compat.sh LIBDIR OUT}" && pwd)
out=${2:?usage: test-compat.sh LIBDIR OUT}
rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd)
CC=${CC:-cc}
W="-Wall -Wextra -Werror"
INC="-I$lib -I$top/include/uapi"
n=0
fails=0

ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; }
check() { # name command...: ok if the command succeeds (output in $out/NAME.log)
	local name=$1
	shift
	if "$@" > "$out/$name.log" 2>&1; then ok "$name"; else
		not_ok "$name"; sed 's/^/# /' "$out/$name.log" | head -n 20; fi
}

# Source compatibility.
check mpss-source-builds $CC -std=gnu11 $W $INC -o "$out/mpss-style" \
	"$src/mpss-style.c" -L"$libdir" -lscif
check mpss-source-runs-no-op env LD_LIBRARY_PATH="$libdir" "$out/mpss-style"

no_compat() {
	printf '#define SCIF_NO_MPSS_COMPAT\n#include <scif.h>\nportID_t p;\n' |
		$CC $W $INC -x c -c -o /dev/null - 2>/dev/null && return 1
	printf '#define SCIF_NO_MPSS_COMPAT\n#include <scif.h>\nstruct scif_portID p;\n' |
		$CC $W $INC -x c -c -o /dev/null -
}
check no-mpss-compat-hides-old-names no_compat

cxx() {
	printf '#include <scif.h>\nint main() { portID_t p = {}; return p.node + SCIF_POLLIN - 1; }\n' |
		g++ $W $INC -x c++ -o /dev/null -
}
if command -v g++ > /dev/null; then check header-cxx cxx; fi

installed_headers() {
	local d=$out/destdir deps
	make -s -C "$lib" OUTPUT="$out/libbuild" DESTDIR="$d" PREFIX=/usr \
		install-dev || return 1
	[ -e "$d/usr/include/scif/scif_ioctl.h" ] || return 1
	[ ! -e "$d/usr/include/linux/scif_ioctl.h" ] || return 1
	deps=$($CC -std=gnu11 $W -I"$d/usr/include" -M "$src/mpss-style.c") || return 1
	echo "$deps"
	grep -q "$d/usr/include/scif/scif_ioctl.h" <<< "$deps" &&
		! grep -q '/usr/include/linux/scif_ioctl.h' <<< "$deps"
}
check installed-headers-own-uapi installed_headers

# Binary compatibility.
standin() { # dir node: the stand-in libscif.so.0, its symbols at version NODE
	mkdir -p "$1"
	printf '%s {\n\tglobal: scif_*;\n\tlocal: *;\n};\n' "$2" > "$1/map"
	$CC -O2 -fPIC -shared $W $INC -Wno-unused-parameter \
		-Wl,-soname,libscif.so.0 -Wl,--version-script="$1/map" \
		-o "$1/libscif.so.0" "$src/standin.c" &&
	ln -sf libscif.so.0 "$1/libscif.so"
}
check standin-builds standin "$out/intel" SCIF_0.0
check abi-user-links $CC -O2 $W $INC -o "$out/abi-user" "$src/abi-user.c" \
	-L"$out/intel" -lscif

needs_scif00() {
	local refs
	refs=$(objdump -T "$out/abi-user" | grep -c ' scif_' )
	echo "scif_ references: $refs"
	[ "$refs" -eq 22 ] &&
		[ "$(objdump -T "$out/abi-user" | grep ' scif_' | grep -c 'SCIF_0\.0')" -eq 22 ]
}
check abi-user-asks-scif-0.0 needs_scif00

runs_with() { # libdir expected-library
	local o
	o=$(env -u LD_PRELOAD LD_LIBRARY_PATH="$1" LD_BIND_NOW=1 "$out/abi-user" 2>&1) ||
		{ echo "$o"; return 1; }
	echo "$o"
	grep -qx 'functions: 22' <<< "$o" && grep -qx "library: $2" <<< "$o"
}
check abi-user-runs-with-standin runs_with "$out/intel" stand-in
check abi-user-runs-with-ours runs_with "$libdir" ours

ours_tagged() {
	[ "$(objdump -T "$libdir/libscif.so.0" | grep ' scif_' | grep -c ' SCIF_0\.0 ')" -eq 22 ]
}
check ours-exports-22-at-scif-0.0 ours_tagged

refused() {
	local o
	standin "$out/other" LIBSCIF_0 || return 1
	o=$(LD_LIBRARY_PATH="$out/other" LD_BIND_NOW=1 "$out/abi-user" 2>&1) && return 1
	echo "$o"
	grep -q "version .SCIF_0.0. not found" <<< "$o"
}
check other-version-node-refused refused

echo "1..$n"
[ "$fails" -eq 0 ]
