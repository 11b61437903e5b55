#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# scif_ntb_victim_log.sh: node 0 of scripts/scif-ntb-check.sh's "hostile"
# run, after the hostile peer (scif_ntb_hostile.sh on node 1) went and
# scif_ntb served node 1's selftests: the peer's flapping (500 lives, 4 ms
# apart) and bad records left a bounded number of lines in this node's
# kernel log, since a peer must not be able to flood it.
# Environment: VICTIM_MAX_LINES (120; the rate limit lets 10 lines per
# 5 s through at each of two places, and the flapping lasts 3 to 10 s).
max=${VICTIM_MAX_LINES:-120}
echo "TAP version 13"
echo "1..2"
lives=$(dmesg | grep -c -e 'node [0-9]*: new generation' -e 'node [0-9]* up (generation')
all=$(dmesg | grep -c -e 'scif_ntb' -e 'ntb_ivshmem .*node')
echo "# $lives lines about the peer's lives, $all of scif_ntb in all"
rc=0
if [ "$lives" -le "$max" ]; then
	echo "ok 1 peer_lives_logged_boundedly # $lives <= $max"
else
	echo "not ok 1 peer_lives_logged_boundedly # $lives > $max"
	rc=1
fi
if [ "$all" -le $((max * 2)) ]; then
	echo "ok 2 peer_lines_bounded # $all <= $((max * 2))"
else
	echo "not ok 2 peer_lines_bounded # $all > $((max * 2))"
	rc=1
fi
exit $rc
