#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# realvm_guest.sh: runs inside the Debian 12 guest of scripts/debian-guest.sh
# (as its scif-guest-hook, from the "scifdata" disk on /mnt/scifdata, output
# on ttyS1), for scripts/test-realvm.sh.  Prints "PASS name", "FAIL name"
# or "INFO text" lines and "realvm-done ROLE" at the end of each boot.
#
# /mnt/scifdata/role says what this guest does:
#   install  boot 1: apt install the .debs in /mnt/scifdata/debs (DKMS
#            builds the modules here), add scifuser to group scif, reboot;
#            boot 2: check what the packages set up (modules-load.d, the
#            udev rule, scif-info and hello-server/-client as scifuser
#            on the loopback node), power off
#   server   a booted node with the packages: run hello-server for one
#            client, as scifuser, then power off
#   client   wait for node 0, greet its hello-server, power off
# The packages being installed already (roles server and client) and the
# second boot of "install" are told apart by /mnt/scifdata/state.
set -u

D=/mnt/scifdata
role=$(cat "$D/role" 2> /dev/null || echo none)
U=scifuser
EX=/usr/share/doc/libscif-dev/examples

pass() { echo "PASS $1"; }
fail() { echo "FAIL $1"; [ -z "${2:-}" ] || echo "INFO $1: $2"; }
check() { # name command...: PASS if the command succeeds
	name=$1
	shift
	if out=$("$@" 2>&1); then pass "$name"; else fail "$name" "$(echo "$out" | tail -n 3 | tr '\n' '|')"; fi
}
finish() { # what to do next: reboot or poweroff
	echo "realvm-done $role"
	sync
	umount "$D" 2> /dev/null
	# No D-Bus in a minimal system: systemctl says so, then asks PID 1
	# directly.
	systemctl --no-block "$1" 2> /dev/null
	exit 0
}
as_user() { runuser -u "$U" -- "$@"; }

stage_install() {
	rel=$(uname -r)
	echo "INFO boot 1: kernel $rel, $(nproc) CPU(s)"
	t0=$(date +%s)
	# Local files as "./NAME": apt takes an argument with a slash for a
	# file.  The guest has no network; every dependency is installed.
	if (cd "$D/debs" && apt-get install -y -o Dpkg::Use-Pty=0 ./*.deb) > /tmp/apt.log 2>&1; then
		pass install-debs
	else
		fail install-debs "$(tail -n 5 /tmp/apt.log | tr '\n' '|')"
	fi
	echo "INFO apt install with the DKMS build took $(($(date +%s) - t0)) s"
	check dkms-installed sh -c "dkms status scif | grep -q ', $rel, .*: installed'"
	check modinfo-dkms-module sh -c \
		"modinfo -F filename scif | grep -q '^/lib/modules/$rel/updates/dkms/scif\.ko'"
	check group-scif getent group scif
	# The packages load nothing now: the modules come with the reboot.
	check not-loaded-before-reboot sh -c '! grep -q "^scif " /proc/modules'
	usermod -aG scif "$U" && pass add-user-to-group || fail add-user-to-group
	echo rebooted > "$D/state"
	finish reboot
}

# What the packages promise after a reboot, with nothing loaded by hand.
check_installed() {
	check modules-loaded sh -c 'grep -q "^scif_ivshmem " /proc/modules && grep -q "^scif " /proc/modules'
	# At boot udev may load scif_ivshmem first, for the ivshmem devices
	# (its PCI id table); systemd-modules-load then finds it loaded and
	# logs nothing.  Which one did it is reported; modules_load_d below
	# proves that modules-load.d alone loads it.
	if journalctl -b -u systemd-modules-load --no-pager | grep -q "Inserted module 'scif_ivshmem'"; then
		echo "INFO at boot: scif_ivshmem loaded by systemd-modules-load"
	else
		echo "INFO at boot: scif_ivshmem loaded by udev (ivshmem device) before systemd-modules-load ran"
	fi
	check modules-load-service-ok sh -c \
		'[ "$(systemctl show -P Result systemd-modules-load.service)" = success ]'
	udevadm settle -t 30
	check dev-scif-mode-group sh -c '[ "$(stat -c "%a %G" /dev/scif)" = "660 scif" ]'
	check dev-mic-scif-link sh -c '[ "$(readlink -f /dev/mic/scif)" = /dev/scif ]'
	check user-in-group-scif sh -c "id -nG $U | grep -qw scif"
	check eacces-outside-group sh -c \
		"! runuser -u nobody -- sh -c 'exec 3<> /dev/scif' 2> /tmp/eacces.err &&
		 grep -q 'Permission denied' /tmp/eacces.err"
	check scif-info-as-user sh -c "runuser -u $U -- scif-info nodes | grep -q '(self)'"
	check build-hello-as-user as_user sh -c \
		"cd ~ && cc -Wall -O2 -o hello-server $EX/hello-server.c -lscif &&
		 cc -Wall -O2 -o hello-client $EX/hello-client.c -lscif"
}

hello_loopback() {
	self=$(as_user scif-info self | awk '{ print $NF }')
	as_user sh -c 'cd ~ && exec ./hello-server 2601 1' > /tmp/server.log 2>&1 &
	spid=$!
	sleep 1
	out=$(as_user sh -c "cd ~ && ./hello-client $self 2601 realvm" 2>&1)
	if [ "$out" = "hello, realvm" ]; then pass hello-loopback-as-user; else
		fail hello-loopback-as-user "node $self: $out"; fi
	wait "$spid" && pass hello-server-exit || fail hello-server-exit
}

# Unload the modules, and let systemd-modules-load alone load them again
# from /usr/lib/modules-load.d/scif.conf; udev makes /dev/scif again.
modules_load_d() {
	check unload-modules modprobe -r scif_ivshmem scif
	check modules-load-d-loads-it sh -c \
		"systemctl restart systemd-modules-load.service &&
		 journalctl -b -u systemd-modules-load --no-pager |
			grep -q \"Inserted module 'scif_ivshmem'\" &&
		 grep -q '^scif_ivshmem ' /proc/modules && grep -q '^scif ' /proc/modules"
	udevadm settle -t 30
	check dev-scif-again-mode-group sh -c \
		'[ "$(stat -c "%a %G" /dev/scif)" = "660 scif" ] && [ -L /dev/mic/scif ]'
}

kernel_clean() {
	if dmesg | grep -E 'WARNING:|BUG:|Call Trace|UBSAN|KASAN|kmemleak' > /tmp/bad.log; then
		fail kernel-log-clean "$(head -n 3 /tmp/bad.log | tr '\n' '|')"
	else
		pass kernel-log-clean
	fi
}

# Wait (up to 120 s) until node $1 is online, as scif-info sees it.
wait_node() {
	i=0
	while [ $i -lt 120 ]; do
		as_user scif-info nodes 2> /dev/null | awk -v n="$1" '$1 == n { f = 1 } END { exit !f }' && return 0
		sleep 1
		i=$((i + 1))
	done
	return 1
}

case "$role:$(cat "$D/state" 2> /dev/null)" in
install:)
	stage_install ;;
install:rebooted)
	echo "INFO boot 2: kernel $(uname -r)"
	check_installed
	hello_loopback
	modules_load_d
	kernel_clean
	finish poweroff ;;
server:*)
	check_installed
	check peer-online wait_node 1
	as_user scif-info nodes | sed 's/^/INFO /'
	if as_user sh -c 'cd ~ && timeout 300 ./hello-server 2600 1' > /tmp/server.log 2>&1; then
		pass hello-server-served-peer
	else
		fail hello-server-served-peer "$(tail -n 2 /tmp/server.log | tr '\n' '|')"
	fi
	kernel_clean
	finish poweroff ;;
client:*)
	check_installed
	check peer-online wait_node 0
	as_user scif-info nodes | sed 's/^/INFO /'
	ok=
	i=0
	while [ $i -lt 90 ]; do
		out=$(as_user sh -c 'cd ~ && ./hello-client 0 2600 from-node-1' 2>&1) &&
			{ ok=1; break; }
		sleep 2
		i=$((i + 1))
	done
	if [ -n "$ok" ] && [ "$out" = "hello, from-node-1" ]; then
		pass hello-across-nodes-as-user
	else
		fail hello-across-nodes-as-user "$out"
	fi
	kernel_clean
	finish poweroff ;;
*)
	fail role "unknown role or state: $role:$(cat "$D/state" 2> /dev/null)"
	finish poweroff ;;
esac
