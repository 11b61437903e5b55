#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# What `make demo` shows inside each node, once scif.ko and
# scif_ivshmem.ko are loaded: the device, and scif-info once every node
# of the cluster is online.
echo "== node ${SCIF_NODE:-?} of ${SCIF_NODES:-?}, kernel $(uname -r)"
ls -l /dev/scif
i=0
while [ "$(scif-info nodes | grep -c '^[0-9]')" -lt "${SCIF_NODES:-1}" ] &&
      [ "$i" -lt 150 ]; do
	sleep 0.2
	i=$((i + 1))
done
scif-info
