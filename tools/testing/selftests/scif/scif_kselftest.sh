#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The SCIF selftests run the kernel's way: the kselftest runner of the
# install that "make selftests" made with the kernel's own selftest
# Makefile (make TARGETS=scif install), run_kselftest.sh -c scif, with
# scif.ko loaded.  The install's frame (run_kselftest.sh, kselftest/,
# kselftest-list.txt) is in ksft-frame/ next to this script, and its
# scif/ directory is this one (make selftests checked that the files are
# the same).  Prints the runner's TAP (one line per test; each test's
# own output follows as "# " comments), then each test's own result
# lines again as results of this step ("ok N TEST/CASE"), so that make
# check counts every case as when the tests ran as steps of their own,
# then checks of the run itself.  Exit status 0 only if every check
# passed.
here=$(cd "$(dirname "$0")" && pwd)
frame=$here/ksft-frame
run=/tmp/kselftest.$$
out=/tmp/kselftest.$$.out

[ -x "$frame/run_kselftest.sh" ] || { echo "1..0 # SKIP no ksft-frame"; exit 4; }
# The runner sends the tests' output to /dev/stdout, a link that udev
# makes and the busybox guest's devtmpfs lacks: without it the output
# would go to a new plain file of that name.
if [ ! -L /dev/stdout ]; then
	rm -f /dev/stdout
	ln -s /proc/self/fd/1 /dev/stdout || exit 1
fi
start=$(date +%s)
rm -rf "$run"
mkdir -p "$run" && cp -r "$frame/." "$run/" && ln -s "$here" "$run/scif" || exit 1
# The scripts find scif-info and the other tools next to them.
# Appending: the runner opens /dev/stdout again for the tests' output,
# which must land after its own lines, not over them.
: > "$out"
PATH=$here:$PATH "$run/run_kselftest.sh" -c scif < /dev/null >> "$out" 2>&1
rc=$?
secs=$(($(date +%s) - start))
# The runner's lines, unchanged (parse-results.sh counts each ok line).
cat "$out"

# Each test's own result lines, named after the test.
awk '
/^# selftests: scif: / { t = $4; next }
t != "" && /^# (not )?ok [0-9]+ / {
	line = substr($0, 3); verdict = "ok"
	if (line ~ /^not /) { verdict = "not ok"; line = substr(line, 5) }
	sub(/^ok [0-9]+ (- )?/, "", line); sub(/^global\./, "", line)
	print verdict " " ++n " " t "/" line
}
/^(not )?ok [0-9]+ selftests: scif: / { t = "" }' "$out"

want=$(grep -c '^scif:' "$run/kselftest-list.txt")
plan=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$out" | head -n 1)
oks=$(grep -c '^ok [0-9]* selftests: scif: ' "$out")
bad=$(grep -c '^not ok [0-9]* selftests: scif: ' "$out")
# Outside a cluster the cluster tests skip, and only they.
skips=$(grep '^ok [0-9]* selftests: scif: .* # SKIP' "$out" |
	grep -cv 'cluster_test # SKIP')
n=0 fail=0
check() { # condition-status name
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "# kselftest check $n ok: $2"
	else
		echo "# kselftest check $n FAILED: $2"
		fail=$((fail + 1))
	fi
}
[ "$want" -ge 10 ]; check $? "kselftest-list.txt names $want scif tests (at least 10)"
[ "$plan" = "$want" ]; check $? "the runner's plan (1..$plan) is every test of the list"
[ "$((oks + bad))" -eq "$want" ]; check $? "one result line per test ($oks ok, $bad not ok)"
[ "$bad" -eq 0 ]; check $? "no test failed"
[ "$skips" -eq 0 ]; check $? "only cluster tests skipped ($skips others)"
grep -q '^TAP version 13$' "$out"; check $? "TAP version 13 header"
[ "$rc" -eq 0 ]; check $? "run_kselftest.sh exit status $rc"
echo "# kselftest run: $secs s"
rm -rf "$run" "$out"
[ "$fail" -eq 0 ]
