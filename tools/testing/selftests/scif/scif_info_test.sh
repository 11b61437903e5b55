#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# scif-info(8) in the guest: the local node, the node list, endpoints
# coming and going, and the exit status of usage errors.  scif.ko must be
# loaded, debugfs mounted and scif-info on $PATH (/tests in the guest).
info=${SCIF_INFO:-scif-info}

echo "TAP version 13"
echo "1..7"

n=0
failed=0
result() { # status name: status 0 passes
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n $2"
	else
		echo "not ok $n $2"
		failed=$((failed + 1))
	fi
}

# Rows of "scif-info endpoints" in state unbound; empty if it failed.
unbound_rows() {
	out=$("$info" endpoints) || { echo "# scif-info endpoints: rc=$?" >&2; return; }
	echo "$out" | awk 'NR > 1 && $2 == "unbound"' | wc -l
}

out=$("$info" self); rc=$?
echo "# self: '$out' rc=$rc, sysfs node_id $(cat /sys/class/misc/scif/node_id)"
[ "$rc" -eq 0 ] && [ "$out" = 0 ] &&
	[ "$out" = "$(cat /sys/class/misc/scif/node_id)" ]
result $? self_prints_0

out=$("$info" nodes); rc=$?
echo "$out" | sed 's/^/# /'
[ "$rc" -eq 0 ] && echo "$out" | grep -Eq '^0[[:space:]]+loopback \(self\)$'
result $? nodes_lists_loopback_node_0

# A failed redirection of exec would end the script: check first.
[ -c /dev/scif ] && exec 4<>/dev/scif 5<>/dev/scif 6<>/dev/scif
open=$(unbound_rows)
echo "# unbound endpoints with 3 held open: ${open:-none}"
[ -n "$open" ] && [ "$open" -ge 3 ]
result $? endpoints_shows_3_unbound

exec 4>&- 5>&- 6>&-
# A closed endpoint leaves "unbound" at once but its row only when a
# workqueue frees it: allow a few seconds, in case that ever matters.
tries=0
while :; do
	closed=$(unbound_rows)
	fewer=1
	[ -n "$closed" ] && [ -n "$open" ] && [ "$closed" -le $((open - 3)) ] &&
		fewer=0
	tries=$((tries + 1))
	[ "$fewer" -eq 0 ] || [ "$tries" -ge 5 ] && break
	sleep 1
done
echo "# unbound endpoints after closing them: ${closed:-none}"
result "$fewer" endpoints_3_fewer_after_close

"$info" no-such-command > /dev/null 2>&1
result $(($? != 2)) bad_command_exits_2

out=$("$info" -h); rc=$?
[ "$rc" -eq 0 ] && echo "$out" | grep -q '^usage: scif-info'
result $? help_exits_0

out=$("$info"); rc=$?
echo "# all: rc=$rc"
[ "$rc" -eq 0 ] && echo "$out" | grep -q '^local node: 0$' &&
	echo "$out" | grep -q '^HANDLE'
result $? all_by_default

[ "$failed" -eq 0 ]
