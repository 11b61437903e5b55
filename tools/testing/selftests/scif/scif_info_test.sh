#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# scif-info(8) in the guest: the local node, the driver's version, the
# node list (state, bus, the bus's device and driver, generation from
# sysfs), the counters, endpoints coming and going, an endpoint's
# /proc/PID/fdinfo, "scif-info ps" as the endpoints' owner (uid 65534),
# as another user and as root, with the window counts before and after
# a registration, the JSON output (checked by scif_json_check), and the
# exit status of usage errors.  scif.ko must be loaded, debugfs mounted
# and scif-info, scif_json_check and scif_ep_hold on $PATH (/tests in
# the guest).
info=${SCIF_INFO:-scif-info}

echo "TAP version 13"
if [ ! -c /dev/scif ]; then
	echo "1..0 # SKIP /dev/scif: no such device (load scif.ko)"
	exit 4
fi
echo "1..19"

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
	$1 == 0 && $2 == "online" && $3 == "loopback" && $6 == gen &&
	$7 == "-" && $8 == "(self)" { found = 1 }
	END { exit !found }'
result $? nodes_lists_loopback_node_0_online

# The loopback bus's device is a platform device of its own, which no
# driver is bound to: sysfs links it, scif-info shows it and "-".
node0=/sys/class/misc/scif/nodes/0
dev=$(readlink "$node0/device")
echo "# nodes/0/device -> ${dev:-nothing}; driver: $(readlink "$node0/device/driver")"
[ "${dev##*/}" = scif_loopback ] && [ -e "$node0/device/uevent" ] &&
	[ ! -e "$node0/device/driver" ] && echo "$out" | awk '
	$1 == 0 && $4 == "scif_loopback" && $5 == "-" { found = 1 }
	END { exit !found }'
result $? nodes_shows_loopback_device_and_no_driver

# The driver's version: /sys/module/scif/version, in "all" and JSON.
version=$(cat /sys/module/scif/version)
out=$("$info"); rc=$?
echo "$out" | sed -n '1,3s/^/# /p'
[ "$rc" -eq 0 ] && [ -n "$version" ] &&
	[ "$(echo "$out" | sed -n 's/^driver version: //p')" = "$version" ] &&
	[ "$(echo "$out" | sed -n 's/^windows: \([0-9]*\) local, \([0-9]*\) remote$/\1 \2/p')" = \
	  "$(cat /sys/class/misc/scif/windows) $(cat /sys/class/misc/scif/remote_windows)" ] &&
	[ "$("$info" --json self | scif_json_check get version)" = "$version" ]
result $? version_is_the_modules

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

# An endpoint's fdinfo: its fields, and no kernel address.
exec 7<>/dev/scif
fdinfo=$(cat /proc/$$/fdinfo/7)
echo "$fdinfo" | sed 's/^/# fdinfo: /'
echo "$fdinfo" | grep -q "^scif-state:	unbound$" &&
	echo "$fdinfo" | grep -q "^scif-local:	-$" &&
	echo "$fdinfo" | grep -q "^scif-peer:	-$" &&
	echo "$fdinfo" | grep -q "^scif-windows:	0$" &&
	echo "$fdinfo" | grep -q "^scif-remote-windows:	0$" &&
	echo "$fdinfo" | grep -Eq "^scif-handle:	0x[0-9a-f]{1,12}$" &&
	echo "$fdinfo" | grep -q "^scif-errors:	0$" &&
	! echo "$fdinfo" | grep -Eiq 'ffff[0-9a-f]{12}'
result $? fdinfo_shows_the_endpoint
exec 7>&-

# "scif-info ps": two processes hold a listener, a client and the
# accepted endpoint each, one as root, one as uid 65534.
hold=$(command -v scif_ep_hold)
infop=$(command -v "$info")
tmp=/tmp/scif_info_test.$$
"$hold" > "$tmp.root" 2>&1 &
rpid=$!
"$hold" -u 65534 > "$tmp.user" 2>&1 &
upid=$!
# Wait (up to 20 s) for a line of file $1 that matches $2.
wait_line() {
	tries=0
	while ! grep -q "$2" "$1" 2> /dev/null; do
		tries=$((tries + 1))
		[ $tries -ge 100 ] && return 1
		sleep 0.2
	done
}
wait_line "$tmp.root" '^ready ' && wait_line "$tmp.user" '^ready '
ready=$?
echo "# holders: root pid $rpid ($(cat "$tmp.root")), uid 65534 pid $upid ($(cat "$tmp.user"))"
# Rows of the ps table $1 of pid $2 (PID UID FD STATE LOCAL PEER
# WINDOWS PEER_WINDOWS TX_BYTES RX_BYTES COMMAND).
rows() { echo "$1" | awk -v pid="$2" 'NR > 1 && $1 == pid'; }
# "STATES UID COMMAND WINDOWS PEER_WINDOWS" of the rows $1, summed.
summary() {
	echo "$1" | awk '{ s[$4]++; u = u " " $2; c = c " " $NF; w += $7; p += $8 }
		END { printf "%d/%d/%d%s%s %d %d\n", s["listening"],
		      s["connected"], NR, u, c, w, p }'
}
user_ps=$("$hold" -u 65534 "$infop" ps); rc=$?
echo "$user_ps" | sed 's/^/# ps as 65534: /'
urows=$(rows "$user_ps" "$upid")
[ "$ready" -eq 0 ] && [ "$rc" -eq 0 ] &&
	[ "$(summary "$urows")" = "1/2/3 65534 65534 65534 scif_ep_hold scif_ep_hold scif_ep_hold 0 0" ] &&
	[ -z "$(rows "$user_ps" "$rpid")" ]
result $? ps_unprivileged_lists_its_own_only

root_ps=$("$info" ps); rc=$?
echo "$root_ps" | sed 's/^/# ps as root: /'
[ "$rc" -eq 0 ] &&
	[ "$(summary "$(rows "$root_ps" "$rpid")")" = "1/2/3 0 0 0 scif_ep_hold scif_ep_hold scif_ep_hold 0 0" ] &&
	[ "$(summary "$(rows "$root_ps" "$upid")")" = "1/2/3 65534 65534 65534 scif_ep_hold scif_ep_hold scif_ep_hold 0 0" ]
result $? ps_root_lists_both

# One page registered on the client: 1 window there, 1 peer's window
# on the accepted endpoint.
kill -USR1 "$upid"
wait_line "$tmp.user" '^register'
user_ps=$("$hold" -u 65534 "$infop" ps); rc=$?
echo "$user_ps" | sed 's/^/# after scif_register: /'
urows=$(rows "$user_ps" "$upid")
[ "$rc" -eq 0 ] && grep -q '^registered ' "$tmp.user" &&
	[ "$(summary "$urows" | awk '{ print $(NF - 1), $NF }')" = "1 1" ] &&
	echo "$urows" | awk '$4 == "connected" && $7 == 1 && $8 == 0 { c++ }
		$4 == "connected" && $7 == 0 && $8 == 1 { a++ }
		END { exit !(c == 1 && a == 1) }'
result $? ps_window_counts_after_register

out=$("$hold" -u 65534 "$infop" --json ps); rc=$?
echo "$out" | head -n 6 | sed 's/^/# /'
[ "$rc" -eq 0 ] && echo "$out" | scif_json_check &&
	[ "$(echo "$out" | scif_json_check count ps)" -eq 3 ] &&
	[ "$(echo "$out" | scif_json_check get ps/0/pid)" = "$upid" ] &&
	[ "$(echo "$out" | scif_json_check get ps/0/comm)" = scif_ep_hold ] &&
	[ "$(echo "$out" | scif_json_check get ps/0/uid)" = 65534 ]
result $? ps_json_as_unprivileged

# "all" as an unprivileged user: no debugfs table, its own endpoints,
# exit 0.
out=$("$hold" -u 65534 "$infop"); rc=$?
[ "$rc" -eq 0 ] && ! echo "$out" | grep -q '^HANDLE' &&
	echo "$out" | grep -q '^PID ' && [ -n "$(rows "$out" "$upid")" ]
result $? all_unprivileged_shows_its_endpoints "rc=$rc"

kill "$rpid" "$upid" 2> /dev/null
wait "$rpid" "$upid" 2> /dev/null
rm -f "$tmp.root" "$tmp.user"

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
	[ "$(echo "$out" | scif_json_check get nodes/0/device)" = scif_loopback ] &&
	[ "$(echo "$out" | scif_json_check get nodes/0/driver)" = null ] &&
	[ "$(echo "$out" | scif_json_check get version)" = "$version" ] &&
	[ "$(echo "$out" | scif_json_check count endpoints)" -ge 0 ] &&
	[ "$(echo "$out" | scif_json_check count ps)" -ge 0 ]
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
