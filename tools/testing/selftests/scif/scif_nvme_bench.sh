#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# scif_nvme_test's "bench" mode, run as scif_nvme.sh runs the test
# (scif_devmem_test.sh binds the drive): node 0's drive reads blocks into
# and writes blocks from node 1's window through a device-map file,
# beside the same into and from its own memory and by the CPU path (into
# memory, then RMA), every figure's bytes checked; the figures are
# "# nvme-bench" lines (scripts/bench-nvme.sh, make bench-nvme).  With
# SCIF_NVME_BENCH=quick (vfio-steps, make check) one batch a figure and
# two sizes: the mode runs and its bytes are right.
SCIF_DEVMEM_PROG=scif_nvme_test SCIF_DEVMEM_ARGS="bench ${SCIF_NVME_BENCH:-}" \
	exec ./scif_devmem_test.sh
