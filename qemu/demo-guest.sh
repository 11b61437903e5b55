#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# What `make demo` shows inside the guest, once scif.ko is loaded.
echo "== kernel: $(uname -r)"
echo "== the device:"
ls -l /dev/scif
echo "== this node's id (/sys/class/misc/scif/node_id): $(cat /sys/class/misc/scif/node_id)"
echo "== module parameters:"
for p in /sys/module/scif/parameters/*; do
	echo "   $(basename "$p") = $(cat "$p")"
done
echo "== three endpoints open; debugfs lists them (id state):"
exec 4<>/dev/scif 5<>/dev/scif 6<>/dev/scif
sed 's/^/   /' /sys/kernel/debug/scif/endpoints
exec 4>&- 5>&- 6>&-
echo "== after closing them: $(wc -l < /sys/kernel/debug/scif/endpoints) endpoints"
