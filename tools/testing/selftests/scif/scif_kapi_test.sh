#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Load the kernel-API test module (its tests run as it loads), print its
# TAP results and unload it.  scif.ko must be loaded.  Arguments are
# module parameters: cross_peer=N on one node of a cluster and
# cross_serve=1 on node N test scif_get_pages() across the two.  Without
# arguments, and where scif.ko is the test build, the module is loaded a
# second time with withdrawn=1 while the copy engine is held back
# (eng_defer, eng_delay_ms): scif_unregister() of a kernel window must
# wait for the peer's RMA on it; and a third time with close_waits=1
# while the copy engine pauses in the middle of an RMA
# (eng_piece_delay_ms): scif_close() of an endpoint with such a window
# must wait for it too (nothing written into it after the call).
mod=${SCIF_KAPI_MODULE:-/modules/extra/scif_kapi_test.ko}
params=/sys/module/scif/parameters
if ! insmod "$mod" "$@"; then
	echo "not ok 1 load scif_kapi_test.ko"
	exit 1
fi
cat /sys/kernel/debug/scif_kapi_test/results
rmmod scif_kapi_test
[ $# -eq 0 ] || exit 0
if [ ! -w $params/eng_delay_ms ] || [ ! -w $params/eng_defer ]; then
	echo "ok 1 unregister_kernel_window_waits_for_peer_rma # SKIP needs the test build's engine hooks"
	exit 0
fi
echo 1500 > $params/eng_delay_ms
echo 1 > $params/eng_defer
ok=0
insmod "$mod" withdrawn=1 && ok=1
echo 0 > $params/eng_defer
echo 0 > $params/eng_delay_ms
if [ $ok -eq 0 ]; then
	echo "not ok 1 load scif_kapi_test.ko withdrawn=1"
	exit 1
fi
cat /sys/kernel/debug/scif_kapi_test/results
rmmod scif_kapi_test
if [ ! -w $params/eng_piece_delay_ms ]; then
	echo "ok 1 close_kernel_window_nothing_written_after # SKIP needs the test build's engine hooks"
	exit 0
fi
echo 1500 > $params/eng_piece_delay_ms
echo 1 > $params/eng_defer
ok=0
insmod "$mod" close_waits=1 && ok=1
echo 0 > $params/eng_defer
echo 0 > $params/eng_piece_delay_ms
if [ $ok -eq 0 ]; then
	echo "not ok 1 load scif_kapi_test.ko close_waits=1"
	exit 1
fi
cat /sys/kernel/debug/scif_kapi_test/results
rmmod scif_kapi_test
