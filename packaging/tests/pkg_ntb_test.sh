#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# pkg_ntb_test.sh load | unload
# In each guest of a 2-node cluster joined by the emulated NTB
# (scripts/test-debs-ntb.sh): "load" installs the unpacked packages
# (/tests/pkgroot: libscif0, scif-tools, the configuration files of
# scif-dkms and scif-ntb-dkms, and the modules DKMS built from both for
# this kernel), loads the modules from /lib/modules/RELEASE/updates/dkms
# as a user would (modprobe, after depmod), and checks that the other
# node comes online over the bus "ntb"; "unload" removes them again.
# Prints TAP.
rel=$(uname -r)
dkms=/lib/modules/$rel/updates/dkms
n=0
result() { # status name: status 0 passes
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then echo "ok $n $2"; else echo "not ok $n $2"; fi
}
echo "TAP version 13"

# modprobe -r, again for up to 30 s while the module is busy: the rings
# of a connection live in the bus's memory (it lends them, alloc_local),
# so scif_ntb stays in use until the other node's program closes its
# end too, which it may do a little after this node's.
unload() { # module
	i=0
	until modprobe -r "$1" 2> /dev/null; do
		i=$((i + 1))
		[ "$i" -lt 60 ] || { modprobe -r "$1"; return 1; }
		sleep 0.5
	done
	[ "$i" -eq 0 ] || echo "# $1 unloaded after $i tries of 0.5 s"
}

if [ "${1:-}" = unload ]; then
	echo "1..2"
	unload scif_ntb && unload ntb_ivshmem && [ ! -d /sys/module/ntb ]
	result $? ntb_modules_unload
	modprobe -r scif && [ ! -c /dev/scif ]
	result $? scif_unloads
	exit 0
fi
echo "1..6"

cp -a /tests/pkgroot/. /
ok=0
for m in scif ntb ntb_hw_intel ntb_hw_amd ntb_hw_idt ntb_hw_epf ntb_transport \
	ntb_netdev ntb_tool ntb_perf ntb_pingpong ntb_ivshmem scif_ntb; do
	[ -e "$dkms/$m.ko" ] || { echo "# no $dkms/$m.ko"; ok=1; }
done
grep -qx 'blacklist ntb_ivshmem' /etc/modprobe.d/scif-ntb.conf || ok=1
result $ok installed_files_in_place

depmod "$rel" && grep -q "^updates/dkms/scif_ntb.ko:.*ntb.ko" \
	"/lib/modules/$rel/modules.dep"
result $? depmod_finds_dependencies

# The emulated NTB is asked for by name (it is not loaded by alias);
# scif_ntb brings in scif and ntb.
modprobe ntb_ivshmem && modprobe scif_ntb && [ -c /dev/scif ] &&
	[ -d /sys/module/ntb ] && [ -d /sys/module/scif ]
result $? modprobe_loads_the_stack

v=$(cat /sys/module/scif_ntb/version 2> /dev/null)
echo "# scif_ntb version '$v', the packages' '$(cat /tests/pkg-version)'"
[ -n "$v" ] && [ "$v" = "$(cat /tests/pkg-version)" ] &&
	[ "$(cat /sys/module/scif/version)" = "$v" ]
result $? module_versions

# Both nodes online, the other over "ntb" (the link comes up in seconds).
self=$(/usr/bin/scif-info self)
peer=$((1 - self))
i=0
while [ "$i" -lt 60 ]; do
	out=$(/usr/bin/scif-info nodes 2>&1)
	echo "$out" | grep -Eq "^${peer}[[:space:]]+online[[:space:]]+ntb[[:space:]]" && break
	sleep 0.5
	i=$((i + 1))
done
echo "$out" | sed 's/^/# /'
echo "$out" | grep -Eq "^${peer}[[:space:]]+online[[:space:]]+ntb[[:space:]]"
result $? peer_online_over_ntb

# A program built against the packaged library, over the link.
out=$(LD_BIND_NOW=1 /tests/mpss-style run 2>&1)
echo "$out" | sed 's/^/# /'
echo "$out" | grep -q "^self $self, 2 node(s): 0 1\$"
result $? mpss_style_program_sees_both_nodes
exit 0
