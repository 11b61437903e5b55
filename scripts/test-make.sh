#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-make.sh BUILD: the top Makefile's user-facing targets and what the
# tools do without SCIF, on the host (prints TAP, exits non-zero on a
# failure; seconds, boots no guest):
#
#  - make help lists every target of .PHONY (but "all")
#  - make tools builds scif-info, scif-bench and the examples into
#    BUILD/tools, and scif-info --version prints a version
#  - pkg-config finds the library by the API's name (scif) and by its
#    own (libscif) in BUILD/lib, both giving -lscif
#  - make docs builds Documentation/scif with Sphinx, warnings as
#    errors, a page for each .rst
#  - the tools' JSON writer keeps valid UTF-8 and replaces the rest
#    (tools/scif/test-json.c)
#  - scif-bench over TCP to a host name (localhost); a name that cannot
#    be resolved is refused with exit status 2 and says so
#  - a second "scif-bench serve" on a port a server holds is refused
#    (exit status 1) and leaves the first server's AF_UNIX socket alone;
#    the socket a stopped server left behind is taken over
#  - the selftests from a kernel tree, as their Makefile says (make -C
#    tools/testing/selftests TARGETS=scif run_tests, in a tree of the
#    kernel's selftest frame and our files, without libibverbs'
#    headers): libscif built on the way, every test run, each skipping
#    on a host without /dev/scif (none failing; on a host with it, built
#    only); about a minute
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:?usage: test-make.sh BUILD}
out=$build/test-make
mkdir -p "$out"
# shellcheck source=scripts/host-tap.sh
. "$top/scripts/host-tap.sh"

help_lists_targets() {
	local help t missing=
	help=$(make -s -C "$top" help) || return 1
	for t in $(sed -n '/^\.PHONY:/,/[^\\]$/p' "$top/Makefile" |
		tr -d '\\' | sed 's/^\.PHONY://'); do
		[ "$t" = all ] && continue
		grep -Eq "^ *make $t( |\$)" <<< "$help" || missing="$missing $t"
	done
	[ -z "$missing" ] || { echo "not in make help:$missing"; return 1; }
}

tools_built() {
	local p
	make -s -C "$top" tools BUILD="$build" || return 1
	for p in scif-info scif-bench mmap-pingpong fence-signal hello-server \
		hello-client; do
		[ -x "$build/tools/$p" ] || { echo "no $p"; return 1; }
	done
	"$build/tools/scif-info" --version | grep -q '[0-9a-f]'
}

pkg_config_names() {
	local name
	for name in scif libscif; do
		PKG_CONFIG_LIBDIR=$build/lib pkg-config --libs "$name" |
			grep -qw -- -lscif || { echo "pkg-config $name"; return 1; }
	done
}

docs_built() {
	local f
	rm -rf "$build/docs"
	make -s -C "$top" docs BUILD="$build" || return 1
	for f in "$top"/Documentation/scif/*.rst; do
		f=$(basename "$f" .rst)
		[ -s "$build/docs/$f.html" ] || { echo "no $f.html"; return 1; }
	done
}

check help-lists-every-target help_lists_targets
check tools-built tools_built
check pkg-config-scif-and-libscif pkg_config_names
bench=$build/tools/scif-bench
port=$((20000 + $$ % 10000))
bench_serve() { # log: a server on $port in the background, $srv its pid
	"$bench" -p "$port" serve > "$1" 2>&1 &
	srv=$!
	for _ in $(seq 50); do
		grep -q "serving unix" "$1" && return 0
		sleep 0.1
	done
	return 1
}
bench_stop() { # the server of $srv, by "scif-bench stop", else killed
	"$bench" -t tcp -p "$port" stop > /dev/null 2>&1
	for _ in $(seq 50); do
		kill -0 "$srv" 2> /dev/null || break
		sleep 0.1
	done
	kill -9 "$srv" 2> /dev/null
	wait "$srv"
}
bench_by_name() {
	"$bench" -t tcp -H localhost -p "$port" -q lat
}
bench_bad_name() {
	local rc=0
	"$bench" -t tcp -H no-such-host.invalid -p "$port" -q lat 2> "$out/badname.err" ||
		rc=$?
	cat "$out/badname.err"
	[ "$rc" -eq 2 ] && grep -q 'cannot resolve host "no-such-host.invalid"' "$out/badname.err"
}
bench_second_refused() {
	local rc=0
	timeout 10 "$bench" -p "$port" serve > "$out/second.err" 2>&1 || rc=$?
	cat "$out/second.err"
	[ "$rc" -eq 1 ] && grep -q "port $port is in use" "$out/second.err" &&
		"$bench" -t unix -p "$port" -q lat
}
bench_stale_socket() {
	[ -S "/tmp/scif-bench.$port" ] && bench_serve "$out/third.log" &&
		"$bench" -t unix -p "$port" -q lat
}
if bench_serve "$out/first.log"; then
	check bench-tcp-host-name bench_by_name
	check bench-unresolvable-host-refused bench_bad_name
	check bench-second-server-refused bench_second_refused
	bench_stop
	check bench-stale-socket-taken-over bench_stale_socket
	bench_stop
else
	check bench-server-started false
fi
rm -f "/tmp/scif-bench.$port"
kselftest_from_kernel_tree() {
	local ksrc tree=$out/ktree log=$out/ktree-run.log
	ksrc=$(sh "$top/scripts/kernel-source.sh") || return 1
	rm -rf "$tree"
	mkdir -p "$tree/tools/testing/selftests" "$tree/scripts"
	(cd "$ksrc/tools/testing/selftests" &&
		cp --parents lib.mk kselftest_harness.h kselftest.h Makefile \
			run_kselftest.sh kselftest/runner.sh kselftest/prefix.pl \
			kselftest/module.sh "$tree/tools/testing/selftests/") &&
		cp "$ksrc/scripts/subarch.include" "$tree/scripts/" || return 1
	(cd "$top" && git ls-files -co --exclude-standard -z tools/testing/selftests/scif \
		tools/lib/scif tools/lib/scif_rdma tools/scif include/uapi dkms.conf |
		rsync -a --from0 --files-from=- ./ "$tree/") || return 1
	# A host with SCIF of its own: built, not run against it.
	if [ -c /dev/scif ]; then
		make -s -j2 -C "$tree/tools/testing/selftests" TARGETS=scif \
			HAVE_VERBS=0 > "$log" 2>&1 || { tail -n 20 "$log"; return 1; }
		echo "this host has /dev/scif: built only"
		return 0
	fi
	make -s -j2 -C "$tree/tools/testing/selftests" TARGETS=scif HAVE_VERBS=0 \
		run_tests > "$log" 2>&1 || { tail -n 20 "$log"; return 1; }
	grep -E '^(not )?ok [0-9]+ selftests: scif:' "$log"
	! grep -q '^not ok' "$log" &&
		grep -q '^ok [0-9]* selftests: scif: scif_dev_test # SKIP' "$log" &&
		grep -q '^ok [0-9]* selftests: scif: scif_info_test.sh # SKIP' "$log" &&
		[ "$(grep -c '^ok [0-9]* selftests: scif:' "$log")" -ge 15 ]
}
check kselftest-from-kernel-tree kselftest_from_kernel_tree
check docs-sphinx-no-warnings docs_built
check json-writer make -s -C "$top/tools/scif" check OUTPUT="$build/tools"
tap_end
