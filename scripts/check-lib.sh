# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# What the test scripts share (scripts/check.sh, ntb-check-standalone.sh):
# record and run_test, which write one result line per test into
# $results and keep each test's output in $out/<name>.log.

record() { # PASS|FAIL|SKIP name
	echo "$1 $2" >> "$results"
	echo "$1 $2"
}

run_test() { # name command... (output kept in $out/<name>.log)
	local name=$1 log
	shift
	log=$out/$(echo "$name" | tr '/ ' '__').log
	if "$@" > "$log" 2>&1; then
		record PASS "$name"
	else
		record FAIL "$name"
		sed 's/^/    /' "$log" | tail -n 40
		return 1
	fi
}
