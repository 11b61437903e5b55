#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# dma-buf export of windows (Documentation/scif/devices.rst, "dma-buf
# export"), with scif.ko loaded: loads the test build's software DMA
# provider (scif_soft_dma.ko) and the test importer on one of its
# channels (scif_dmabuf_import.ko), both from /modules/extra, runs
# scif_dmabuf_test with the arguments given (none: the peer is a process
# of this node, through the loopback node; -p N: the peer is
# "scif_dmabuf_test -s" on node N, which agent-steps runs) and unloads
# both.  TAP output (scif_dmabuf_test's).
ex=/modules/extra
fail() {
	echo "TAP version 13"
	echo "1..1"
	echo "not ok 1 dmabuf_setup # $*"
	exit 1
}

for m in scif_soft_dma scif_dmabuf_import; do
	[ -e "$ex/$m.ko" ] || fail "no $ex/$m.ko"
done
insmod "$ex/scif_soft_dma.ko" || fail "insmod scif_soft_dma"
if ! insmod "$ex/scif_dmabuf_import.ko"; then
	rmmod scif_soft_dma
	fail "insmod scif_dmabuf_import"
fi
./scif_dmabuf_test "$@"
rc=$?
rmmod scif_dmabuf_import || rc=1
rmmod scif_soft_dma || rc=1
exit $rc
