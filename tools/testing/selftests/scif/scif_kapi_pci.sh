#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# scif_kapi_test.ko pci=<function>: a kernel client's
# scif_register_pci() on QEMU's NVMe controller memory buffer, bound to
# vfio-pci as for scif_devmem_test (scif_devmem_test.sh does the binding
# and runs the program SCIF_DEVMEM_PROG names; scif_kapi_test.sh, with
# SCIF_KAPI_PCI set, loads the module with pci=$SCIF_DEVMEM_BDF).
SCIF_KAPI_PCI=1 SCIF_DEVMEM_PROG=scif_kapi_test.sh exec ./scif_devmem_test.sh
