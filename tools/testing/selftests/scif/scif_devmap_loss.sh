#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A node lost while a device-map file of its window is open
# (Documentation/scif/devices.rst, "When the peer goes"), in the 2-node
# VFIO cluster: node 0's drive reads into node 1's window through the
# file (mapped into the drive's IOMMU domain), then node 1 leaves (its
# bus unloaded) and comes back as a new life.  Node 0's file must be
# revoked with ENODEV, node 1 held out ("held") while the file is open
# and the drive's DMA through the closed aperture refused, and node 1
# let in once the file is released.  scif_nvme_test's "loss" mode, run
# as scif_nvme.sh runs it (scif_devmem_test.sh binds the drive).
SCIF_DEVMEM_PROG=scif_nvme_test SCIF_DEVMEM_ARGS=loss exec ./scif_devmem_test.sh
