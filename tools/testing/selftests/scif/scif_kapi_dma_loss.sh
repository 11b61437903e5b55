#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# kapi_dma's node loss, on node 0 of a 2-node ivshmem cluster whose
# node 1 runs "scif_kapi_test.sh cross_serve=1 cross_loss=1": the kernel-
# API test module maps node 1's window for its device (cross_peer=1
# cross_loss=1) and keeps the mapping; this node then unloads its bus,
# which reports node 1 down: the mapping's revoke must have been called,
# with -ENODEV, once, by the time the unload returns.  The bus is loaded
# again (with this node's scif_ivshmem.* parameters of the kernel command
# line), the module unloaded (scif_dma_unmap() of the revoked mapping
# only frees it).  Argument: the peer's node (1).
mod=${SCIF_KAPI_MODULE:-/modules/extra/scif_kapi_test.ko}
peer=${1:-1}
dbg=/sys/kernel/debug/scif_kapi_test
if ! insmod "$mod" cross_peer="$peer" cross_loss=1; then
	echo "not ok 1 kapi_dma_node_loss_load"
	exit 1
fi
# The module's own rows (its TAP header and plan are left out: the
# rows below continue the numbering).
grep '^\(not \)\{0,1\}ok ' $dbg/results > /tmp/kapi-dma-loss.tap
cat /tmp/kapi-dma-loss.tap
n=$(wc -l < /tmp/kapi-dma-loss.tap)
before=$(cat $dbg/dma_lost)
rmmod scif_ivshmem
rc=$?
after=$(cat $dbg/dma_lost)
n=$((n + 1))
if [ "$before" = "0 0" ] && [ "$after" = "1 -19" ] && [ $rc -eq 0 ]; then
	echo "ok $n kapi_dma_revoke_node_loss_enodev"
else
	echo "not ok $n kapi_dma_revoke_node_loss_enodev # before '$before' after '$after' rmmod $rc"
fi
# shellcheck disable=SC2046 # one word per parameter
insmod /modules/scif_ivshmem.ko $(tr ' ' '\n' < /proc/cmdline |
	sed -n 's/^scif_ivshmem\.//p')
n=$((n + 1))
if rmmod scif_kapi_test; then
	echo "ok $n kapi_dma_unmap_after_node_loss"
else
	echo "not ok $n kapi_dma_unmap_after_node_loss"
fi
echo "1..$n"
