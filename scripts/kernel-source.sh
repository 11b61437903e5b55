#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Unpack Debian's linux-source-6.1 tarball into the cache (once per
# package version) and print the tree's path.  The tree provides
# checkpatch.pl, the kselftest harness headers and the debug kernel.
set -eu

cache=${SCIF_CACHE:-/var/cache/scif}
tarball=/usr/src/linux-source-6.1.tar.xz
[ -r "$tarball" ] || { echo "kernel-source: $tarball missing (make deps)" >&2; exit 1; }

version=$(dpkg-query -W -f '${Version}' linux-source-6.1)
tree=$cache/src/linux-source-6.1
stamp=$tree/.scif-unpacked

if [ ! -e "$stamp" ] || [ "$(cat "$stamp")" != "$version" ]; then
	echo "kernel-source: unpacking linux-source-6.1 $version" >&2
	rm -rf "$tree"
	mkdir -p "$cache/src"
	tar -C "$cache/src" -xJf "$tarball"
	echo "$version" > "$stamp"
fi
echo "$tree"
