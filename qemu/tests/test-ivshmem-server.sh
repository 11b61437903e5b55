#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-ivshmem-server.sh [BUILD_DIR]
# Build qemu/ivshmem-server and its test client into BUILD_DIR (default: a
# temporary directory, removed afterwards) and run the test against the
# server.  Passes the test's TAP output and exit status through.
# IVSHMEM_SERVER_WRAPPER (e.g. "valgrind --error-exitcode=1 -q") wraps the
# server processes the test starts.

here=$(cd "$(dirname "$0")" && pwd)
if [ $# -ge 1 ]; then
	build=$1
	mkdir -p "$build" || exit 2
	build=$(cd "$build" && pwd)
else
	build=$(mktemp -d "${TMPDIR:-/tmp}/ivshmem-build.XXXXXX") || exit 2
	trap 'rm -rf "$build"' EXIT
fi

if ! make -s -C "$here/.." OUTPUT="$build" >&2; then
	echo "ivshmem-server: build failed" >&2
	exit 2
fi
"$build/test-ivshmem-server" "$build/ivshmem-server"
