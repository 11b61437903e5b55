#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# scif_ntb_hostile.sh: node 1 of scripts/scif-ntb-check.sh's "hostile"
# run.  With ntb.ko and ntb_ivshmem.ko loaded and neither scif.ko nor
# scif_ntb.ko, loads the hostile peer (kmod/scif_ntb_hostile.c), which
# attacks node 0's scif_ntb through the NTB (garbage scratchpads and
# doorbells, bad records with good check words, a generation per record,
# random bytes over the windows, then silence), waits for it to end and
# checks that node 0 kept a valid record of its own after every phase and
# drew a new generation when our record went; then unloads it.  The steps
# after it load scif_ntb here and run tests against node 0, which must
# serve them as if nothing had happened.
# Environment: HOSTILE_ROUNDS (2000), HOSTILE_SCRIBBLE_MS (5000),
# HOSTILE_SEED (the time).
mod=/modules/extra/scif_ntb_hostile.ko
p=/sys/module/scif_ntb_hostile/parameters
seed=${HOSTILE_SEED:-$(date +%s)}

echo "TAP version 13"
if [ ! -f "$mod" ]; then
	echo "1..0 # SKIP $mod missing"
	exit 4
fi
echo "1..9"
n=0
failed=0
result() { # ok-flag name [comment]
	n=$((n + 1))
	if [ "$1" = 1 ]; then
		echo "ok $n $2${3:+ # $3}"
	else
		echo "not ok $n $2${3:+ # $3}"
		failed=1
	fi
}

echo "# seed $seed"
if ! insmod "$mod" seed="$seed" rounds="${HOSTILE_ROUNDS:-2000}" \
	scribble_ms="${HOSTILE_SCRIBBLE_MS:-5000}"; then
	result 0 loaded
	exit 1
fi
t=0
while [ "$(cat $p/done)" = 0 ] && [ $t -lt 600 ]; do
	sleep 1
	t=$((t + 1))
done
done=$(cat $p/done)
phases=$(cat $p/phases_ok)
echo "# done $done after $t s, phases $phases, victim node $(cat $p/victim_node)"
result "$([ "$done" = 1 ] && [ "$(cat $p/victim_node)" = 0 ] && echo 1)" \
	victim_seen_over_the_link "done=$done"
i=1
for name in garbage_scratchpads_and_doorbells bad_records_good_check \
	    a_generation_per_record scribble_over_windows; do
	c=$(echo "$phases" | cut -c $((i + 1)))
	result "$([ "$c" = y ] && echo 1)" "victim_alive_after_$name" "phase $i: ${c:-not run}"
	i=$((i + 1))
done
result "$([ "$(cat $p/regen)" = 1 ] && echo 1)" victim_new_generation_when_we_went_quiet \
	"regen=$(cat $p/regen)"
result "$([ "$(echo "$phases" | cut -c 6)" = y ] && echo 1)" victim_alive_after_quiet
result "$([ "$(cat $p/scribbled)" -gt 0 ] && echo 1)" windows_scribbled \
	"$(cat $p/scribbled) bytes"
rmmod scif_ntb_hostile
result "$([ $? = 0 ] && echo 1)" unloaded
exit $failed
