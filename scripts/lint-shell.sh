#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# lint-shell.sh: shellcheck (warnings and errors) on every shell script of
# the tree: the files git tracks whose name ends in .sh or whose first
# line runs sh, bash or busybox sh.  Exit status: shellcheck's.
set -eu

cd "$(dirname "$0")/.."
files=()
while IFS= read -r f; do
	[ -f "$f" ] || continue
	case $f in
	*.sh) files+=("$f") ;;
	*) head -n 1 "$f" | grep -qE '^#!(/bin/(busybox )?sh|/bin/bash|/usr/bin/env (ba)?sh)( |$)' &&
		files+=("$f") ;;
	esac
done < <(git ls-files)
shellcheck -S warning "${files[@]}"
