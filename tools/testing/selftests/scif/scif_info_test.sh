#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# scif-info(8) in the guest: the local node, the node list (state, bus,
# generation from sysfs), the counters, endpoints coming and going, the
# JSON output (checked by scif_json_check), and the exit status of usage
# errors.  scif.ko must be loaded, debugfs mounted and scif-info and
# scif_json_check on $PATH (/tests in the guest).
info=${SCIF_INFO:-scif-info}

echo "TAP version 13"
if [ ! -c /dev/scif ]; then
	echo "1..0 # SKIP /dev/scif: no such device (load scif.ko)"
	exit 4
fi
echo "1..11"

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
gen=$(cat /sys/class/misc/scif/nodes/0/generation)
[ "$rc" -eq 0 ] && echo "$out" | awk -v gen="$gen" '
	$1 == 0 && $2 == "online" && $3 == "loopback" && $4 == gen &&
	$5 == "-" && $6 == "(self)" { found = 1 }
	END { exit !found }'
result $? nodes_lists_loopback_node_0_online

out=$("$info" stats); rc=$?
echo "$out" | sed 's/^/# /'
tx=$(cat /sys/class/misc/scif/nodes/0/stats/tx_bytes)
[ "$rc" -eq 0 ] && echo "$out" | awk -v tx="$tx" '
	NR == 1 { ok = ($2 == "tx_bytes" && $8 == "errors" &&
		       $9 == "user_tx_bytes" && $12 == "user_rx_msgs"); next }
	$1 == 0 && $2 == tx { found = 1 }
	END { exit !(ok && found) }'
result $? stats_shows_sysfs_counters

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

out=$("$info" --version); rc=$?
[ "$rc" -eq 0 ] && echo "$out" | grep -Eq '^scif-info [^ ]+$'
result $? version_exits_0 "$out"

out=$("$info" --json); rc=$?
echo "$out" | head -n 5 | sed 's/^/# /'
[ "$rc" -eq 0 ] && echo "$out" | scif_json_check &&
	[ "$(echo "$out" | scif_json_check get self)" = 0 ] &&
	[ "$(echo "$out" | scif_json_check get nodes/0/state)" = online ] &&
	[ "$(echo "$out" | scif_json_check get nodes/0/bus)" = loopback ] &&
	[ "$(echo "$out" | scif_json_check count endpoints)" -ge 0 ]
result $? json_parses_with_node_0 "rc=$rc"

# JSON that is not: the checker itself must refuse it.
echo '{"self": 0,}' | scif_json_check
result $(($? != 1)) json_checker_refuses_bad_json

out=$("$info"); rc=$?
echo "# all: rc=$rc"
[ "$rc" -eq 0 ] && echo "$out" | grep -q '^local node: 0$' &&
	echo "$out" | grep -q '^HANDLE'
result $? all_by_default

[ "$failed" -eq 0 ]
