#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The kernel-API test module across a 2-node cluster whose nodes run one
# step list (ntb-full-steps): node 0 tests scif_get_pages() and
# scif_dma_map() of node 1's window (scif_kapi_test.sh cross_peer=1:
# over the NTB, the device's DMA addresses through the outbound window),
# node 1 serves that window (cross_serve=1).  TAP output.
if [ "${SCIF_NODE:-0}" = 0 ]; then
	exec ./scif_kapi_test.sh cross_peer=1
fi
exec ./scif_kapi_test.sh cross_serve=1
