# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# shellcheck disable=SC2154 # $results, $out, $top: set by the caller
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

# What a guest said about each test that failed in it: the lines of its
# results channel from the test's start ("#  RUN", a step's begin) to
# its "not ok", at most 30 of them, so that a CI log shows the reason.
fail_context() { # results.log
	[ -e "$1" ] || return 0
	tr -d '\r' < "$1" | awk '
	/^scif-test-begin: |^# +RUN / { n = 0 }
	{ buf[n++ % 30] = $0 }
	/^not ok [0-9]+/ && !/# [Ss][Kk][Ii][Pp]/ {
		for (i = (n > 30 ? n - 30 : 0); i < n; i++)
			print "    | " buf[i % 30]
		n = 0
	}'
}

# Record one line per test of a guest's results channel (parse-results.sh)
# under LABEL; if any failed, show what the guest said about it.
guest_results() { # results.log label
	local verdict name bad=0
	while read -r verdict name; do
		record "$verdict" "$name"
		[ "$verdict" = FAIL ] && bad=1
	done < <(sh "$top/qemu/parse-results.sh" "$1" "$2")
	[ "$bad" -eq 0 ] || fail_context "$1"
}
