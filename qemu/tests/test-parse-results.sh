#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Tests of qemu/parse-results.sh on canned guest result logs: each
# results/NAME.results must give exactly results/NAME.expected; and where
# results/NAME.failed exists, the failing tests' own lines it keeps with
# a LOGDIR must be exactly those ("== FILE" before each file's lines).
here=$(cd "$(dirname "$0")" && pwd)
n=0 failed=0

kept() { # results
	local d f
	d=$(mktemp -d)
	sh "$here/../parse-results.sh" "$1" k "$d" > /dev/null
	for f in "$d"/*.log; do
		[ -e "$f" ] || continue
		echo "== ${f##*/}"
		cat "$f"
	done
	rm -rf "$d"
}

for r in "$here"/results/*.results; do
	n=$((n + 1))
	name=$(basename "$r" .results)
	if diff -u "${r%.results}.expected" <(sh "$here/../parse-results.sh" "$r" k) > /tmp/parse-results.$$ 2>&1; then
		echo "ok $n - $name"
	else
		echo "not ok $n - $name"
		sed 's/^/# /' /tmp/parse-results.$$
		failed=$((failed + 1))
	fi
	[ -e "${r%.results}.failed" ] || continue
	n=$((n + 1))
	if diff -u "${r%.results}.failed" <(kept "$r") > /tmp/parse-results.$$ 2>&1; then
		echo "ok $n - ${name}_kept_lines"
	else
		echo "not ok $n - ${name}_kept_lines"
		sed 's/^/# /' /tmp/parse-results.$$
		failed=$((failed + 1))
	fi
done
rm -f /tmp/parse-results.$$
echo "1..$n"
echo "parse-results: $((n - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
