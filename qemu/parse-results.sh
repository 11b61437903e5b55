#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# parse-results.sh RESULTS LABEL [LOGDIR]
# Turn the guest's test channel (see init.sh) into one line per test:
# "PASS|FAIL|SKIP LABEL/step/test".  TAP lines of a step count one each;
# a step without TAP output counts by its exit status; a step that exits
# non-zero without a failing TAP line, a step that never ends and a run
# that never completes each count as a failure.  With LOGDIR, each
# failing TAP test's own lines (the last 40 it printed after the TAP
# line before it) go to LOGDIR/<its name, "/" and " " made "_">.log.
set -eu

[ $# -eq 2 ] || [ $# -eq 3 ] || { echo "usage: $0 RESULTS LABEL [LOGDIR]" >&2; exit 2; }
tr -d '\r' < "$1" | awk -v label="$2" -v logdir="${3:-}" '
function emit(verdict, name) { print verdict " " label "/" name }
function keep(name,	f, i) {
	f = label "/" name
	gsub(/[\/ ]/, "_", f)
	f = logdir "/" f ".log"
	for (i = (nbuf > 40 ? nbuf - 40 : 0); i < nbuf; i++)
		print buf[i % 40] > f
	close(f)
}
/^scif-test-begin: / { step = $2; ntap = 0; nfail = 0; nbuf = 0; next }
/^scif-test-end: / {
	rc = $3; sub(/^rc=/, "", rc)
	if (ntap == 0)
		emit(rc == 0 ? "PASS" : "FAIL", step)
	else if (rc != 0 && rc != 4 && nfail == 0)
		emit("FAIL", step " (exit status " rc ")")
	step = ""; next
}
/^scif-run-complete/ { complete = 1; next }
step != "" && /^(not )?ok [0-9]+/ {
	ntap++
	failed = ($1 == "not")
	desc = $0; sub(/^(not )?ok [0-9]+ (- )?/, "", desc)
	skip = (desc ~ /# [Ss][Kk][Ii][Pp]/)
	sub(/ *#.*$/, "", desc); sub(/^global\./, "", desc)
	name = desc == "" ? step : step "/" desc
	if (failed) { nfail++; emit("FAIL", name) }
	else emit(skip ? "SKIP" : "PASS", name)
	if (failed && logdir != "") keep(name)
	nbuf = 0
	next
}
step != "" { buf[nbuf++ % 40] = $0 }
END {
	if (step != "") emit("FAIL", step " (did not finish)")
	if (!complete) emit("FAIL", "run (guest did not complete the test list)")
}'
