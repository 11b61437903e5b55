#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# In the guest: install the unpacked Debian packages (/tests/pkgroot, laid
# out by scripts/test-debs-guest.sh: libscif0, scif-tools, scif-dkms's
# configuration files, the modules DKMS built from scif-dkms's source and
# the C library they need) and use SCIF from the installed paths only:
# the modules from /lib/modules/RELEASE/updates/dkms, scif-info from
# /usr/bin, libscif.so.0 from /usr/lib/x86_64-linux-gnu, an MPSS-style
# program and a program linked against a SCIF_0.0-tagged stand-in.
echo "TAP version 13"
echo "1..8"

n=0
result() { # status name: status 0 passes
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n $2"; else echo "not ok $n $2"; fi
}

rel=$(uname -r)
dkms=/lib/modules/$rel/updates/dkms
cp -a /tests/pkgroot/. /
[ -e "$dkms/scif.ko" ] && [ -e "$dkms/scif_ivshmem.ko" ] &&
	[ -e "$dkms/scif_peer_links.ko" ] && [ -e "$dkms/scif_vsock.ko" ] &&
	[ -e "$dkms/scif_rdma.ko" ] &&
	[ -e /usr/lib/x86_64-linux-gnu/libscif.so.0 ] && [ -x /usr/bin/scif-info ]
result $? installed_files_in_place

insmod "$dkms/scif.ko" && insmod "$dkms/scif_ivshmem.ko" && [ -c /dev/scif ]
result $? dkms_modules_load

v=$(cat /sys/module/scif/version 2>/dev/null)
echo "# /sys/module/scif/version: '$v', expected '$(cat /tests/pkg-version)'"
[ -n "$v" ] && [ "$v" = "$(cat /tests/pkg-version)" ]
result $? module_version

out=$(/usr/bin/scif-info nodes 2>&1); rc=$?
echo "$out" | sed 's/^/# /'
[ "$rc" -eq 0 ] && echo "$out" | grep -Eq '^0[[:space:]]+online[[:space:]]+loopback[[:space:]].*\(self\)$'
result $? installed_scif_info_lists_node_0

out=$(LD_BIND_NOW=1 /tests/mpss-style run 2>&1); rc=$?
echo "$out" | sed 's/^/# /'
[ "$rc" -eq 0 ] && echo "$out" | grep -q '^self 0, 1 node(s): 0$'
result $? mpss_style_program_runs

out=$(LD_BIND_NOW=1 /tests/abi-user 2>&1); rc=$?
echo "$out" | sed 's/^/# /'
[ "$rc" -eq 0 ] && echo "$out" | grep -qx 'library: ours' &&
	echo "$out" | grep -qx 'nodes: 1, self 0'
result $? scif_0_0_binary_runs_with_ours

# scif_net: one node has no peer, so no device; it loads and unloads,
# after and before the per-peer links it uses.
insmod "$dkms/scif_peer_links.ko" && insmod "$dkms/scif_net.ko" &&
	[ -d /sys/module/scif_net ] &&
	! ls -d /sys/class/net/sn* 2> /dev/null && rmmod scif_net &&
	rmmod scif_peer_links
result $? dkms_scif_net_loads_and_unloads

rmmod scif_ivshmem && rmmod scif
result $? modules_unload
