#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# scif_stage_test with QEMU's NVMe controller bound as for
# scif_devmem_test (scif_devmem_test.sh does the binding and runs the
# program SCIF_DEVMEM_PROG names): forged STAGE_* requests into device
# windows (hostile_stage_into_device_window) beside those into RAM.
SCIF_DEVMEM_PROG=scif_stage_test exec ./scif_devmem_test.sh
