#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Tests of qemu/parse-results.sh on canned guest result logs: each
# results/NAME.results must give exactly results/NAME.expected.
here=$(cd "$(dirname "$0")" && pwd)
n=0 failed=0
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
done
rm -f /tmp/parse-results.$$
echo "1..$n"
echo "parse-results: $((n - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
