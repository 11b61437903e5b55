#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# scif_mmap_vma() (Documentation/scif/mmap.rst, "Mappings of kernel
# clients"), with scif.ko loaded: loads the test client
# scif_kmap_client.ko from /modules/extra, runs scif_kmap_test (whose
# last test unloads the client itself) and unloads the client if it is
# still there.  TAP output (scif_kmap_test's).
mod=/modules/extra/scif_kmap_client.ko
if ! insmod "$mod"; then
	echo "TAP version 13"
	echo "1..1"
	echo "not ok 1 kmap_setup # insmod $mod"
	exit 1
fi
./scif_kmap_test
rc=$?
if [ -d /sys/module/scif_kmap_client ]; then
	rmmod scif_kmap_client || rc=1
fi
exit $rc
