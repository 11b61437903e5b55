#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# lint-test-code.sh [DIR]: the shipped sources of the SCIF core carry no
# test code.  Test code lives in test files of their own (named *_kunit.c
# or *testhooks.c, built or included only in the test build); every other
# .c file under DIR (default drivers/misc/scif, with its bus/) is shipped,
# and may hold a block under a test macro (#ifdef SCIF_TEST_HOOKS,
# #ifdef SCIF_KUNIT, or any #if naming them) of at most one line and no #else: the kernel's
# one-line hook, such as the #include of a test file at the end of the
# file.  Calls into the test hooks go through headers whose stubs compile
# to nothing without SCIF_TEST_HOOKS (scif_fault.h).
#
# Prints each offending block as FILE:LINE and exits 1 if there is one.
set -eu

cd "$(dirname "$0")/.."
dir=${1:-drivers/misc/scif}
status=0
for f in $(find "$dir" -name "*.c" | sort); do
	case ${f##*/} in
	*_kunit.c | *testhooks.c) continue ;;
	esac
	awk -v file="$f" '
	function directive(line) {
		sub(/^[ \t]*#[ \t]*/, "", line)
		return line
	}
	/^[ \t]*#[ \t]*if/ {
		d = directive($0)
		depth++
		if (!open && d ~ /(^|[^A-Za-z0-9_])SCIF_(TEST_HOOKS|KUNIT)([^A-Za-z0-9_]|$)/) {
			open = depth; start = FNR; body = 0; other = 0
			next
		}
	}
	/^[ \t]*#[ \t]*(else|elif)/ {
		if (open == depth) {
			other = 1
			next
		}
	}
	/^[ \t]*#[ \t]*endif/ {
		if (open && open == depth) {
			if (body > 1 || other) {
				printf "%s:%d: test-only block of %d lines%s in a shipped file (at most one line: move it to a test file)\n",
					file, start, body, other ? " with #else" : ""
				bad = 1
			}
			open = 0
		}
		depth--
		next
	}
	open && NF { body++ }
	END { exit bad }
	' "$f" || status=1
done
exit $status
