#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# make coverage only (scripts/coverage.sh): print the gcov data of the
# modules (<debugfs>/gcov, kept after they are unloaded) as a gzipped tar
# in base64, between the lines "scif-gcov-begin" and "scif-gcov-end", on
# the test channel.  The files are copied first: debugfs reports them
# with size 0, which tar would believe.
src=/sys/kernel/debug/gcov
tmp=/tmp/scif-gcov
[ -d "$src" ] || { echo "no $src: not a gcov kernel" >&2; exit 1; }
rm -rf "$tmp"
mkdir -p "$tmp"
n=0
for f in $(cd "$src" && find . -name '*.gcda'); do
	mkdir -p "$tmp/$(dirname "$f")"
	cat "$src/$f" > "$tmp/$f" || exit 1
	n=$((n + 1))
done
echo "# $n gcda files"
[ "$n" -gt 0 ] || exit 1
echo "scif-gcov-begin"
(cd "$tmp" && tar -cf - . | gzip -c | base64)
echo "scif-gcov-end"
