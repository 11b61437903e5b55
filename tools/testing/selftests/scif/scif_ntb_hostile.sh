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

n=0
failed=0
# shellcheck disable=SC2034 # read by scif_tap_lib.sh
tap_suite=scif_ntb_hostile
# shellcheck source=tools/testing/selftests/scif/scif_tap_lib.sh
. "$(dirname "$0")/scif_tap_lib.sh"

param() { cat "$p/$1"; }
phase_ok() { [ "$(param phases_ok | cut -c "$1")" = y ]; }

echo "TAP version 13"
[ -f "$mod" ] || skip_all "$mod missing"
echo "# seed $seed"
if ! insmod "$mod" seed="$seed" rounds="${HOSTILE_ROUNDS:-2000}" \
	scribble_ms="${HOSTILE_SCRIBBLE_MS:-5000}"; then
	ok loaded false
	echo "1..$n"
	exit 1
fi
ok loaded true
t=0
while [ "$(param "done")" = 0 ] && [ $t -lt 600 ]; do
	sleep 1
	t=$((t + 1))
done
echo "# done $(param "done") after $t s, phases $(param phases_ok), victim node $(param victim_node), regen $(param regen), $(param scribbled) bytes scribbled"
ok victim_seen_over_the_link sh -c "[ $(param "done") = 1 ] && [ $(param victim_node) = 0 ]"
i=2
for name in garbage_scratchpads_and_doorbells bad_records_good_check \
	    a_generation_per_record scribble_over_windows; do
	ok "victim_alive_after_$name" phase_ok $i
	i=$((i + 1))
done
ok victim_new_generation_when_we_went_quiet [ "$(param regen)" = 1 ]
ok victim_alive_after_quiet phase_ok 6
ok windows_scribbled [ "$(param scribbled)" -gt 0 ]
ok unloaded rmmod scif_ntb_hostile
echo "1..$n"
[ "$failed" -eq 0 ]
