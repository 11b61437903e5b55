#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Load and unload scif.ko 50 times; /dev/scif must come and go with it,
# the module must refuse to unload while an endpoint is open, and a
# bad msg_ring_size must fail the load.
# Expects the module not loaded on entry; leaves it unloaded.
mod=${SCIF_MODULE:-/modules/scif.ko}
# The debug kernel (kmemleak's file tells it) runs 10 unless
# SCIF_TEST_FULL_ROUNDS=1: a leak or a lost reference shows in the first
# cycles, and each takes 0.7 s there (scif_test_util.h, test_rounds()).
cycles=50
[ -e /sys/kernel/debug/kmemleak ] && [ -z "${SCIF_TEST_FULL_ROUNDS:-}" ] &&
	cycles=10
cycles=${SCIF_LOAD_CYCLES:-$cycles}

echo "TAP version 13"
echo "1..3"

ok=1
i=0
while [ "$i" -lt "$cycles" ]; do
	i=$((i + 1))
	if ! insmod "$mod"; then
		echo "# cycle $i: insmod failed"; ok=0; break
	fi
	if [ ! -c /dev/scif ]; then
		echo "# cycle $i: /dev/scif missing after load"; ok=0
	fi
	if ! rmmod scif; then
		echo "# cycle $i: rmmod failed"; ok=0; break
	fi
	if [ -e /dev/scif ]; then
		echo "# cycle $i: /dev/scif left after unload"; ok=0
	fi
done
[ "$ok" = 1 ] && echo "ok 1 load_unload_cycles" ||
	echo "not ok 1 load_unload_cycles"

ok=0
if insmod "$mod"; then
	exec 7<>/dev/scif
	if rmmod scif 2>/dev/null; then
		echo "# rmmod succeeded with an endpoint open"
	elif [ -c /dev/scif ]; then
		ok=1
	fi
	exec 7>&-
	rmmod scif || ok=0
fi
[ "$ok" = 1 ] && echo "ok 2 unload_refused_while_open" ||
	echo "not ok 2 unload_refused_while_open"

# Not a power of two, below the minimum, above the maximum.
ok=1
for size in 5000 1 1073741824; do
	if insmod "$mod" msg_ring_size=$size 2>/dev/null; then
		echo "# msg_ring_size=$size loaded"; ok=0; rmmod scif
	elif [ -e /dev/scif ]; then
		echo "# /dev/scif left by a failed load"; ok=0
	fi
done
[ "$ok" = 1 ] && echo "ok 3 bad_ring_size_refused" ||
	echo "not ok 3 bad_ring_size_refused"
