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
# scif_kapi_pci.sh: only scif_register_pci(), on the function
# scif_devmem_test.sh bound to vfio-pci for us.
if [ -n "${SCIF_KAPI_PCI:-}" ]; then
	set -- pci="$SCIF_DEVMEM_BDF"
fi
params=/sys/module/scif/parameters
if ! insmod "$mod" "$@"; then
	echo "not ok 1 load scif_kapi_test.ko"
	exit 1
fi
cat /sys/kernel/debug/scif_kapi_test/results
rmmod scif_kapi_test
[ $# -eq 0 ] || exit 0
if [ ! -w $params/eng_delay_ms ] || [ ! -w $params/eng_piece_delay_ms ] ||
	[ ! -w $params/eng_defer ]; then
	echo "ok 1 unregister_kernel_window_waits_for_peer_rma # SKIP needs the test build's engine hooks"
	echo "ok 2 close_kernel_window_nothing_written_after # SKIP needs the test build's engine hooks"
	exit 0
fi

# held HOOK ARG: the module loaded again with ARG while the copy engine
# is held back (eng_defer) and HOOK, one of its delays, is 1500 ms.
held() {
	echo 1500 > "$params/$1"
	echo 1 > $params/eng_defer
	ok=0
	insmod "$mod" "$2" && ok=1
	echo 0 > $params/eng_defer
	echo 0 > "$params/$1"
	if [ $ok -eq 0 ]; then
		echo "not ok 1 load scif_kapi_test.ko $2"
		return 1
	fi
	cat /sys/kernel/debug/scif_kapi_test/results
	rmmod scif_kapi_test
}

held eng_delay_ms withdrawn=1 || exit 1
held eng_piece_delay_ms close_waits=1
