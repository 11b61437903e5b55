# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# TAP for the host-side test scripts (sourced): check NAME COMMAND... runs
# the command with its output in $out/NAME.log and prints one TAP line,
# with the log's last lines as comments when it fails; tap_end prints the
# plan and returns non-zero if anything failed.  The sourcing script sets
# $out.
n=0
fails=0

# shellcheck disable=SC2154 # $out is the sourcing script's
check() { # name command...
	local name=$1
	shift
	n=$((n + 1))
	if "$@" > "$out/$name.log" 2>&1; then
		echo "ok $n - $name"
	else
		fails=$((fails + 1))
		echo "not ok $n - $name"
		tail -n 15 "$out/$name.log" | sed 's/^/# /'
	fi
}

tap_end() {
	echo "1..$n"
	[ "$fails" -eq 0 ]
}
