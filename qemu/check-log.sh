#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Scan a QEMU guest serial console log for signs of kernel trouble:
# WARN/BUG/oops/panic, KASAN, UBSAN, lockdep, RCU, kmemleak, hung tasks,
# refcount and list corruption, and unexpected taint reported by the guest
# as "scif-taint: before=N after=M".
#
# Usage: check-log.sh LOGFILE
# Exit:  0 clean (no output), 1 problems found, 2 usage or read error.
# Output on failure: up to 20 lines "check-log: <kind>: <log line>",
# then one summary line.

if [ $# -ne 1 ]; then
	echo "usage: ${0##*/} LOGFILE" >&2
	exit 2
fi
if [ -d "$1" ] || [ ! -r "$1" ]; then
	echo "check-log: cannot read '$1'" >&2
	exit 2
fi

awk -v file="$1" -v max=20 '
# Taint bits are walked by position.  Expected: O=4096 (12), E=8192 (13),
# N=262144 (18).  Always fatal: B=32 (5), D=128 (7), W=512 (9), L=16384 (14).
function taint_bad(before, after,   b, bad) {
	for (b = 0; after > 0; b++) {
		if (after % 2 && ((b in fatal) || (before % 2 == 0 && !(b in expected))))
			bad = 1
		before = int(before / 2)
		after = int(after / 2)
	}
	return bad
}

# Map one kernel message (prefixes already stripped) to a finding kind.
# Order matters: the specific reports come before generic BUG:/WARNING:.
function classify(m,   f) {
	if (m ~ /^BUG: KASAN: /) return "kasan"
	if (m ~ /^(BUG: )?(sleeping function called from invalid context|scheduling while atomic)/)
		return "atomic-sleep"
	if (m ~ /^(WARNING: )?(possible circular locking dependency|possible recursive locking|inconsistent lock state|bad unlock balance)/)
		return "lockdep"
	if (m ~ /^(WARNING: )?suspicious RCU usage/ || m ~ /^rcu: INFO: [a-z_]+ (self-)?detected stall/)
		return "rcu"
	if (m ~ /^(watchdog: )?BUG: / || m ~ /^kernel BUG at /) return "bug"
	if (m ~ /^(Oops: )?general protection fault/) return "gpf"
	# "Oops: 0002 [#1] ..." and other die() headers such as "invalid opcode: 0000 [#1]"
	if (m ~ /^(Internal error: )?Oops/ || m ~ /^[A-Za-z][A-Za-z ]*: [0-9a-f]+ \[#[0-9]+\]/)
		return "oops"
	if (m ~ /^Kernel panic/) return "panic"
	if (m ~ /^UBSAN: /) return "ubsan"
	if (m ~ /^refcount_t: /) return "refcount"
	if (m ~ /^list_(add|del) corruption/) return "list-corruption"
	if (m ~ /^INFO: task .* blocked for more than /) return "hung-task"
	if (m ~ /^(kmemleak: )?unreferenced object 0x/ || m ~ /^kmemleak: [1-9][0-9]* new suspected memory leak/)
		return "kmemleak"
	if (m ~ /^WARNING:/) return "warning"
	if (m ~ /^scif-taint:/) {
		if (m !~ /^scif-taint: before=[0-9]+ after=[0-9]+$/)
			return "taint"		# malformed: fail closed
		split(m, f, /[= ]/)
		return taint_bad(f[3] + 0, f[5] + 0) ? "taint" : ""
	}
	return ""
}

BEGIN {
	expected[12]; expected[13]; expected[18]
	fatal[5]; fatal[7]; fatal[9]; fatal[14]
}

{
	line = $0
	gsub(/\033\[[0-9;?]*[A-Za-z]/, "", line)	# ANSI colour/cursor codes
	gsub(/[\001-\010\013-\037\177\r]/, "", line)
	sub(/^[ \t]+/, "", line)
	sub(/[ \t]+$/, "", line)

	# Strip "<4>", "kern  :warn  : ", "[   12.345678] " and "[    T1] ".
	# Kernel text may follow other console output on the same line, so
	# everything up to the first timestamp is dropped.
	m = line
	sub(/^<[0-9]+>/, "", m)
	sub(/^[a-z]+ *:[a-z]+ *: /, "", m)
	if (match(m, /\[ *[0-9]+\.[0-9]+\]/))
		m = substr(m, RSTART + RLENGTH)
	sub(/^ *\[ *[TC][0-9]+\]/, "", m)
	sub(/^[ \t]+/, "", m)

	kind = classify(m)
	if (kind != "" && ++found <= max)
		printf "check-log: %s: %s\n", kind, line
}

END {
	if (!found)
		exit 0
	more = (found > max) ? " (first " max " shown)" : ""
	printf "check-log: %d problem(s) found in %s%s\n", found, file, more
	exit 1
}
' "$1"
rc=$?
[ "$rc" -le 1 ] || rc=2
exit "$rc"
