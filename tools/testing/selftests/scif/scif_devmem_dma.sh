#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The staged serve items on a DMA channel (Documentation/scif/
# devices.rst, "The owner's copy engine serves staged device windows"),
# a step after vfio-steps' or lend-steps' rmmod: loads the test build's
# software DMA provider (scif_soft_dma.ko, in /modules/extra) and then
# scif.ko alone (the loopback node), with rma_stage_bufs=16 so that this
# node sends more STAGE_* requests at once than it serves, runs
# scif_devmem_test.sh with SCIF_DEVMEM_DMA=1 (the items must copy by
# DMA) and unloads both.  TAP output (scif_devmem_test's).
ex=/modules/extra
fail() {
	echo "TAP version 13"
	echo "1..1"
	echo "not ok 1 devmem_dma_setup # $*"
	exit 1
}

[ -e "$ex/scif_soft_dma.ko" ] || fail "no $ex/scif_soft_dma.ko"
grep -q '^scif ' /proc/modules && fail "scif.ko is loaded already"
insmod "$ex/scif_soft_dma.ko" || fail "insmod scif_soft_dma"
if ! insmod /modules/scif.ko rma_stage_bufs=16; then
	rmmod scif_soft_dma
	fail "insmod scif rma_stage_bufs=16"
fi
SCIF_DEVMEM_DMA=1 ./scif_devmem_test.sh
rc=$?
rmmod scif || rc=1
rmmod scif_soft_dma || rc=1
exit $rc
