#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-libvirt.sh OUT: the user guide's libvirt steps
# (Documentation/scif/vms.rst) under a running libvirtd: two domains from
# scif-vm-config's XML, defined and started with virsh, talk SCIF to
# each other; scif-vm-config and scif-ivshmem-server as installed (make
# install-user into OUT/inst, the paths of the scif-tools package).  Prints TAP, exits non-zero if a test failed.
# Runs as root on a Debian 12 host; KVM is not needed (TCG).
#
#  1. installs what it needs with apt, idempotently (scripts/deps.sh for
#     the kernels and the build, then libvirt-daemon-system and
#     qemu-utils); builds scif.ko and scif_ivshmem.ko for the guests'
#     kernel (SCIF_LIBVIRT_KERNEL, 6.1 or 6.12, default 6.1) and an
#     initramfs that runs qemu/demo-steps (the steps of make demo):
#     scif-info once both nodes are up, then scif_cluster_test (messages
#     of 1 byte to 1 MiB both ways between the nodes)
#  2. under the QEMU lock ($SCIF_QEMU_LOCK, else /tmp/scif-qemu.lock),
#     held until the domains and any daemon it started are gone (libvirt's
#     QEMU does not take the lock itself): starts libvirtd (and virtlogd)
#     if they are not running; as the guide says, makes the shared files
#     (scif-vm-config setup), starts the ivshmem server and then gives
#     the directory to libvirt's QEMU user; generates each node's domain with
#     scif-vm-config -A tcg, direct boot of the initramfs and two serial
#     ports on files (-C: ttyS0 the console, ttyS1 the results); sets
#     each domain's reboot action to destroy (virsh set-lifecycle-action:
#     the guest reboots when its steps are done) and starts both
#  3. checks, for each node: that QEMU runs as libvirt's user with its RAM
#     in the node's file and its two ivshmem devices (virsh
#     qemu-monitor-command), that the domain shut off by itself within
#     SCIF_LIBVIRT_TIMEOUT seconds (default 600), the guest's results
#     (qemu/parse-results.sh), that the cluster formed and the node
#     served its peer, and its kernel log (qemu/check-log.sh)
#
# The domains are scif-lvt<pid>-0 and -1 and the shared directory
# /dev/shm/scif-lvt<pid>; on every exit the domains are destroyed and
# undefined, the server stopped, the directory removed and a libvirtd or
# virtlogd that this script started stopped again; libvirt's log of each
# domain (its QEMU command line) moves to OUT/<domain>.libvirt.log.
# Domains and directories of a run that was killed (its pid gone) are
# removed by the next run; a daemon that such a run started stays.
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: test-libvirt.sh OUT}
BUILD=${BUILD:-$top/build}
kname=${SCIF_LIBVIRT_KERNEL:-6.1}
tmo=${SCIF_LIBVIRT_TIMEOUT:-600}
lock=${SCIF_QEMU_LOCK:-/tmp/scif-qemu.lock}
export LIBVIRT_DEFAULT_URI=qemu:///system
n=0
fails=0
t_start=$SECONDS

tap() { # verdict name
	n=$((n + 1))
	[ "$1" = ok ] || fails=$((fails + 1))
	echo "$1 $n - libvirt/$2"
}
die() { tap "not ok" "$1"; echo "1..$n"; exit 1; }
check() { # name command...: a test from a command's status; log in OUT
	local name=$1 log
	shift
	log=$out/${name//[^A-Za-z0-9._-]/-}.log
	if "$@" > "$log" 2>&1; then tap ok "$name"; return 0; fi
	tap "not ok" "$name"
	tail -n 10 "$log" | sed 's/^/# /'
	return 1
}

[ "$(id -u)" -eq 0 ] || die "root (apt, libvirtd and virsh define need it)"
rm -rf "$out"
mkdir -p "$out" || exit 1
out=$(cd "$out" && pwd)
# The guide's commands as installed (make install-user into OUT/inst,
# as scif-tools lays them out): scif-vm-config and scif-ivshmem-server.
inst=$out/inst
cfg=$inst/usr/bin/scif-vm-config

# ---- 1. packages, modules, initramfs ----
PKGS="libvirt-daemon-system libvirt-clients qemu-system-x86 qemu-utils"
missing() {
	local p
	for p in "$@"; do
		dpkg-query -W -f '${Status}\n' "$p" 2> /dev/null |
			grep -q '^install ok installed$' || echo "$p"
	done
}
install_deps() {
	local todo stamp=/var/lib/apt/periodic/scif-deps-updated
	sh "$top/scripts/deps.sh" || return 1
	# shellcheck disable=SC2086 # one word per package
	todo=$(missing $PKGS)
	[ -n "$todo" ] || return 0
	[ -e "$stamp" ] || { apt-get update -q && touch "$stamp"; } || return 1
	# shellcheck disable=SC2086
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $todo
}
check packages install_deps

read -r _ image rel < <(sh "$top/scripts/kernels.sh" resolve "$kname") ||
	die "kernel $kname (make deps)"
mod=$out/modules/drivers/misc/scif
build() {
	make -s -C "$top" modules KVER="$rel" MODDIR="$out/modules" &&
		make -s -C "$top" lib selftests &&
		make -s -C "$top" install-user DESTDIR="$inst" PREFIX=/usr &&
		[ -x "$cfg" ] && [ -x "$inst/usr/bin/scif-ivshmem-server" ] &&
		mkdir -p "$out/guest" &&
		cp "$BUILD/selftests/scif-info" "$BUILD/selftests/scif_cluster_test" \
			"$top/qemu/demo-guest.sh" "$out/guest/" &&
		sh "$top/qemu/mkinitramfs.sh" "$out/guest.cpio" "$top/qemu/demo-steps" \
			"$out/guest" "$mod/scif.ko" "$mod/scif_ivshmem.ko"
}
check "build ($rel)" build
# (A copy: libvirt hands the kernel to QEMU's user while the domain
# runs, and the host's own image is better left alone.)
{ cp "$image" "$out/vmlinuz" && [ -s "$out/guest.cpio" ]; } || die "nothing to boot"

# ---- 2. libvirt ----
pid=$$
name=scif-lvt$pid-
shm=/dev/shm/scif-lvt$pid
doms=("${name}0" "${name}1")
defined=()
srv_pid=
lock_pid=
our_libvirtd=
our_virtlogd=
sysd=
[ -d /run/systemd/system ] && sysd=1

running() { # pidfile name: the daemon of that pid file runs
	local p
	p=$(cat "$1" 2> /dev/null) || return 1
	[ "$(cat "/proc/$p/comm" 2> /dev/null)" = "$2" ]
}

stop_pid() { # pid: SIGTERM, up to 10 s, then SIGKILL
	local i
	kill "$1" 2> /dev/null || return 0
	for ((i = 0; i < 100; i++)); do
		kill -0 "$1" 2> /dev/null || return 0
		sleep 0.1
	done
	kill -KILL "$1" 2> /dev/null
}

cleaned=
# shellcheck disable=SC2317 # (run by the EXIT trap)
cleanup() {
	local d
	[ -z "$cleaned" ] || return 0
	cleaned=1
	[ -z "$lock_pid" ] || kill "$lock_pid" 2> /dev/null
	for d in "${defined[@]}"; do
		virsh -q destroy "$d" > /dev/null 2>&1
		virsh -q undefine "$d" > /dev/null 2>&1
		# libvirt's log of the domain (its QEMU command line) to OUT
		mv "/var/log/libvirt/qemu/$d.log" "$out/$d.libvirt.log" 2> /dev/null
	done
	if [ -n "$srv_pid" ]; then
		kill "$srv_pid" 2> /dev/null
		wait "$srv_pid" 2> /dev/null
	fi
	rm -rf "$shm"
	if [ "$our_libvirtd" = systemd ]; then
		systemctl stop libvirtd.service
	elif [ -n "$our_libvirtd" ]; then
		stop_pid "$our_libvirtd"
	fi
	[ -z "$our_virtlogd" ] || stop_pid "$our_virtlogd"
	# Last: the lock goes when every QEMU of ours is gone.
	exec 9>&-
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# (flock in the background: a signal ends the wait for the lock.)
echo "# waiting for the QEMU lock $lock" >&2
exec 9> "$lock" || die "lock $lock"
flock 9 &
lock_pid=$!
t_wait=$SECONDS
wait "$lock_pid" || die "lock $lock"
lock_pid=
t_lock=$SECONDS
echo "# waited $((t_lock - t_wait)) s for the lock"

daemon_pid() { # name: its pid, once its pid file has it (up to 10 s)
	local i
	for ((i = 0; i < 100; i++)); do
		running "/run/$1.pid" "$1" && { cat "/run/$1.pid"; return 0; }
		sleep 0.1
	done
	return 1
}

# libvirtd (and virtlogd, which libvirt's QEMU logs go through), started
# only if not running.  The daemons must not inherit the lock.
start_daemons() {
	local i
	if [ -n "$sysd" ]; then
		if ! systemctl -q is-active libvirtd.service; then
			systemctl start libvirtd.service 9>&- || return 1
			our_libvirtd=systemd
		fi
	else
		if ! running /run/virtlogd.pid virtlogd; then
			virtlogd -d 9>&- || return 1
			our_virtlogd=$(daemon_pid virtlogd) || return 1
		fi
		if ! running /run/libvirtd.pid libvirtd; then
			libvirtd -d 9>&- || return 1
			our_libvirtd=$(daemon_pid libvirtd) || return 1
		fi
	fi
	for ((i = 0; i < 300; i++)); do
		virsh -q version && return 0
		sleep 0.1
	done
	return 1
}
check "libvirtd" start_daemons
echo "# libvirtd: ${our_libvirtd:+started by this test, }$(virsh -q version 2>&1 | tr '\n' ' ')"

# Leftovers of runs that died: their domains and directories.
stale() {
	local d p
	for d in $(virsh -q list --all --name); do
		[[ $d =~ ^scif-lvt([0-9]+)-[0-9]$ ]] || continue
		p=${BASH_REMATCH[1]}
		if [ "$p" = "$pid" ] || kill -0 "$p" 2> /dev/null; then continue; fi
		echo "removing stale domain $d"
		virsh -q destroy "$d" > /dev/null 2>&1
		virsh -q undefine "$d" || return 1
	done
	for d in /dev/shm/scif-lvt*; do
		[[ -d $d && $d =~ /scif-lvt([0-9]+)$ ]] || continue
		p=${BASH_REMATCH[1]}
		kill -0 "$p" 2> /dev/null && continue
		echo "removing stale $d"
		rm -rf "$d"
	done
}
check stale-leftovers stale

# QEMU's user and group, as libvirt runs it (qemu.conf, else Debian's).
quser=$(sed -n 's/^[[:space:]]*user[[:space:]]*=[[:space:]]*"\(.*\)".*/\1/p' /etc/libvirt/qemu.conf)
qgroup=$(sed -n 's/^[[:space:]]*group[[:space:]]*=[[:space:]]*"\(.*\)".*/\1/p' /etc/libvirt/qemu.conf)
quser=${quser:-libvirt-qemu} qgroup=${qgroup:-kvm}

append="console=ttyS0 loglevel=7 panic=-1 oops=panic $(sh "$top/qemu/tcg-clock.sh") scif.nodes=2"
vmcfg=(-n 2 -m 512 -A tcg -E "$(command -v qemu-system-x86_64)" -d "$shm" -N "$name"
	-D "$out/disk%k.qcow2" -S "$inst/usr/bin/scif-ivshmem-server"
	-k "$out/vmlinuz" -i "$out/guest.cpio" -a "$append"
	-C "$out/node%k.console" -C "$out/node%k.results")

# The guide's steps 1 and 2 and its permissions (vms.rst): the shared
# files, the server, then the directory to QEMU's user.  The disks,
# kernel, initramfs and serial files stay root's in OUT: libvirt gives
# them to QEMU itself.
setup() {
	local i k
	eval "$("$cfg" "${vmcfg[@]}" setup)" || return 1
	# exec: $! is the server itself.
	(eval "exec $("$cfg" "${vmcfg[@]}" server)") \
		< /dev/null > "$out/server.log" 2>&1 9>&- &
	srv_pid=$!
	for ((i = 0; i < 100; i++)); do
		[ -S "$shm/node1.sock" ] && break
		kill -0 "$srv_pid" 2> /dev/null || return 1
		sleep 0.1
	done
	[ -S "$shm/node1.sock" ] || return 1
	chown -R "$quser:$qgroup" "$shm" || return 1
	ls -l "$shm"
	for k in 0 1; do
		qemu-img create -q -f qcow2 "$out/disk$k.qcow2" 16M || return 1
		: > "$out/node$k.console" && : > "$out/node$k.results" || return 1
	done
}
check "setup-and-server" setup
[ -S "$shm/node1.sock" ] || die "no ivshmem server"

define() { # k
	"$cfg" "${vmcfg[@]}" libvirt "$1" > "$out/node$1.xml" || return 1
	cat "$out/node$1.xml"
	defined+=("${doms[$1]}")
	virsh -q define "$out/node$1.xml" &&
		virsh -q set-lifecycle-action "${doms[$1]}" reboot destroy --config &&
		virsh -q dumpxml --inactive "${doms[$1]}" | grep -q '<on_reboot>destroy</on_reboot>'
}
for k in 0 1; do
	check "node$k/define" define "$k"
done
t_boot=$SECONDS
declare -a started
for k in 0 1; do
	check "node$k/start" virsh -q start "${doms[$k]}" && started[k]=1
done

# QEMU as libvirt started it: its user, its RAM in the node's file (the
# XML's -machine override) and its two ivshmem devices (aperture and
# doorbell, 1af4:1110).
qemu_ok() { # k
	local d=${doms[$1]} p u
	p=$(cat "/run/libvirt/qemu/$d.pid") || return 1
	u=$(ps -o user= -p "$p") || return 1
	echo "QEMU pid $p runs as $u, group $(ps -o group= -p "$p"), groups" \
		"$(ps -o supgrp= -p "$p"): $(tr '\0' ' ' < "/proc/$p/cmdline")"
	# What libvirt handed to QEMU's user itself, and what the guide did.
	ls -l "$out/disk$1.qcow2" "$out/vmlinuz" "$out/guest.cpio" "$shm"
	virsh -q qemu-monitor-command "$d" --hmp 'info mtree -f' > "$out/node$1.mtree" &&
		virsh -q qemu-monitor-command "$d" --hmp 'info pci' > "$out/node$1.pci" ||
		return 1
	[ "$u" = "$quser" ] &&
		grep -q "(prio 0, ram): scifram" "$out/node$1.mtree" &&
		[ "$(grep -c 'PCI device 1af4:1110' "$out/node$1.pci")" -eq 2 ]
}
for k in 0 1; do
	check "node$k/qemu-as-$quser-ram-in-file-2-ivshmem" qemu_ok "$k"
done

# The guests power off (reboot, then destroy) when their steps are done.
deadline=$((t_boot + tmo))
declare -a off
for k in 0 1; do off[k]=; [ -n "${started[k]:-}" ] || off[k]=-; done
while :; do
	left=0
	for k in 0 1; do
		[ -z "${off[k]}" ] || continue
		if [ "$(virsh -q domstate "${doms[$k]}" 2> /dev/null)" = "shut off" ]; then
			off[k]=$((SECONDS - t_boot))
		else
			left=$((left + 1))
		fi
	done
	if [ "$left" -eq 0 ] || [ "$SECONDS" -ge "$deadline" ]; then break; fi
	sleep 2
done
for k in 0 1; do
	if [ "${off[k]}" = - ]; then
		tap "not ok" "node$k/shut-off-by-itself (not started)"
	elif [ -n "${off[k]}" ]; then
		tap ok "node$k/shut-off-by-itself (${off[k]} s)"
	else
		tap "not ok" "node$k/shut-off-by-itself (still running after $tmo s)"
	fi
done
cleanup
echo "# under the lock for $((SECONDS - t_lock)) s"

# ---- 3. what the guests wrote ----
for k in 0 1; do
	r=$out/node$k.results
	while read -r v label; do
		case $v in
		PASS) tap ok "$label" ;;
		SKIP) tap ok "$label # SKIP" ;;
		*) tap "not ok" "$label" ;;
		esac
	done < <(sh "$top/qemu/parse-results.sh" "$r" "node$k")
	# scif_cluster_test skips outside a cluster: it must have run.
	if tr -d '\r' < "$r" | grep -q '^ok [0-9]* cluster_formed' &&
		tr -d '\r' < "$r" | grep -q '^ok [0-9]* served_every_peer'; then
		tap ok "node$k/cluster-formed-and-served-peer"
	else
		tap "not ok" "node$k/cluster-formed-and-served-peer"
		tail -n 5 "$out/node$k.console" | sed 's/^/# console: /'
	fi
	check "node$k/kernel-log-clean" bash "$top/qemu/check-log.sh" "$out/node$k.console"
done
tr -d '\r' < "$out/node1.results" | grep -E '^(NODE +STATE|[0-9]+ +[a-z]+ +[a-z]+ )' |
	sed 's/^/# node1: scif-info: /'
echo "# test-libvirt: $((SECONDS - t_start)) s in all"
echo "1..$n"
[ "$fails" -eq 0 ]
