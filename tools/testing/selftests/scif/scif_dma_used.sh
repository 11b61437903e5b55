#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Run after RMA tests, with scif.ko loaded after scif_soft_dma.ko: the
# copy engine took channels, the steps since the modules were loaded
# had copies done by them, and none failed (dma-steps,
# dma-cluster-steps).  With SCIF_DMA_IO=1 (a cluster), also that the
# provider copied to or from another node's aperture (MMIO, not RAM).
# With SCIF_DMA_FAULTS=1 (make fuzz's dma part, faults injected), that
# some transfers did fail, and the figures on a "# dma-fuzz:" line.
# TAP output.
rma=/sys/kernel/debug/scif/rma

echo "TAP version 13"
io=/sys/module/scif_soft_dma/parameters/io_bytes_copied
if [ "${SCIF_DMA_IO:-0}" = 1 ]; then
	echo "1..4"
else
	echo "1..3"
fi

field() {
	awk -v k="$1" '$1 == k { print $2 }' "$rma"
}

n=0
result() { # status name [comment]: status 0 passes
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n $2"
	else
		echo "not ok $n $2${3:+ # $3}"
	fi
}

chans=$(field dma)
[ "${chans:-0}" -gt 0 ]
result $? "the copy engine has DMA channels" "dma ${chans:-none}"
bytes=$(field dma_bytes)
[ "${bytes:-0}" -gt 0 ]
result $? "the RMAs so far were copied by DMA" "dma_bytes ${bytes:-none}"
failed=$(field dma_failed)
if [ "${SCIF_DMA_FAULTS:-0}" = 1 ]; then
	[ "${failed:-0}" -gt 0 ]
	result $? "DMA transfers failed as injected" "dma_failed ${failed:-none}"
	echo "# dma-fuzz: dma_bytes ${bytes:-none} dma_pieces $(field dma_pieces) dma_refused $(field dma_refused) dma_failed ${failed:-none}"
else
	[ "${failed:-1}" -eq 0 ]
	result $? "no DMA transfer failed" "dma_failed ${failed:-none}"
fi
if [ "${SCIF_DMA_IO:-0}" = 1 ]; then
	iob=$(cat "$io" 2>/dev/null)
	[ "${iob:-0}" -gt 0 ]
	result $? "DMA copied to or from a peer's aperture" "io_bytes_copied ${iob:-none}"
fi
