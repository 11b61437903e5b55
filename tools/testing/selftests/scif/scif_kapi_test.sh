#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Load the kernel-API test module (its tests run as it loads), print its
# TAP results and unload it.  scif.ko must be loaded.  Arguments are
# module parameters: cross_peer=N on one node of a cluster and
# cross_serve=1 on node N test scif_get_pages() across the two.
mod=${SCIF_KAPI_MODULE:-/modules/extra/scif_kapi_test.ko}
if ! insmod "$mod" "$@"; then
	echo "not ok 1 load scif_kapi_test.ko"
	exit 1
fi
cat /sys/kernel/debug/scif_kapi_test/results
rmmod scif_kapi_test
