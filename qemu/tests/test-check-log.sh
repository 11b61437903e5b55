#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Self-test for qemu/check-log.sh, run against the canned logs in logcheck/:
#   clean-*.log                   must exit 0 and print nothing;
#   fail-<kind>[.<variant>].log   must exit 1 and report "check-log: <kind>:".
# Plus interface cases: missing file (exit 2) and the 20-finding cap.
# Prints TAP lines, then "logcheck: P passed, F failed"; exits 0 iff F == 0.

here=$(cd "$(dirname "$0")" && pwd)
check=$here/../check-log.sh
n=0 pass=0 fail=0

# result OK NAME [OUTPUT]: print a TAP line, with OUTPUT as diagnostics on failure
result() {
	n=$((n + 1))
	if [ "$1" -eq 1 ]; then
		pass=$((pass + 1))
		echo "ok $n - $2"
	else
		fail=$((fail + 1))
		echo "not ok $n - $2"
		[ -z "$3" ] || printf '%s\n' "$3" | sed 's/^/#   /'
	fi
}

for log in "$here"/logcheck/*.log; do
	name=${log##*/}
	out=$("$check" "$log")
	rc=$?
	ok=0
	case $name in
	clean-*)
		[ "$rc" -eq 0 ] && [ -z "$out" ] && ok=1
		;;
	fail-*)
		kind=${name#fail-}
		kind=${kind%%.*}
		case $kind in
		list)	want=list-corruption ;;
		oops)	want='oops|bug' ;;
		*)	want=$kind ;;
		esac
		[ "$rc" -eq 1 ] && grep -Eq "^check-log: ($want): " <<<"$out" && ok=1
		;;
	esac
	result "$ok" "$name" "exit $rc${out:+$'\n'$out}"
done

# A missing file is a usage error: exit 2, nothing on stdout.
out=$("$check" "$here/logcheck/no-such-file.log" 2>/dev/null)
rc=$?
ok=0
[ "$rc" -eq 2 ] && [ -z "$out" ] && ok=1
result "$ok" "missing file exits 2" "exit $rc"

# 25 warnings: exit 1, 20 findings plus the summary line.
tmp=$(mktemp) || exit 1
trap 'rm -f "$tmp"' EXIT
for i in $(seq 25); do
	echo "[   $i.000000] WARNING: CPU: 0 PID: 1 at drivers/x.c:$i f+0x1/0x2"
done >"$tmp"
out=$("$check" "$tmp")
rc=$?
ok=0
[ "$rc" -eq 1 ] && [ "$(grep -c '^check-log: warning: ' <<<"$out")" -eq 20 ] &&
	[ "$(wc -l <<<"$out")" -eq 21 ] &&
	tail -n 1 <<<"$out" | grep -q '^check-log: 25 problem' && ok=1
result "$ok" "output capped at 20 findings" "exit $rc"

echo "1..$n"
echo "logcheck: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
