#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# scif_nvme_test with QEMU's NVMe controller bound to vfio-pci as for
# scif_devmem_test (scif_devmem_test.sh does the binding and runs the
# program SCIF_DEVMEM_PROG names): the drive's DMA into and out of its
# own controller memory buffer, registered as a device window.
SCIF_DEVMEM_PROG=scif_nvme_test exec ./scif_devmem_test.sh
