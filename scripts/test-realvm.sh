#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-realvm.sh PKGOUT OUT: the Debian packages in a real Debian 12 VM
# (issue 15, "done when"); prints TAP, exits non-zero if a test failed.
#
# PKGOUT is the output of scripts/test-packaging.sh (its .debs in
# PKGOUT/debs).  The guest is scripts/debian-guest.sh's image (systemd,
# udev, Debian's 6.1 kernel, headers, gcc, dkms; no network, no
# repository checkout), booted by the QEMU command lines that
# tools/scif/scif-vm-config generates, under TCG, with the ivshmem server
# and devices of a 2-node cluster.  The test script that runs inside is
# packaging/tests/realvm_guest.sh, on a second disk with the .debs.
#
#  1. install: node 0 alone (its peer is not started) boots, "apt install
#     ./*.deb" (DKMS builds the modules in the guest), reboots, and
#     checks after the reboot that systemd-modules-load loaded the
#     modules, /dev/scif has the udev rule's mode and group and the
#     /dev/mic/scif link, a user outside group scif gets EACCES, and
#     scifuser (in group scif) runs scif-info and hello-server/-client
#     built from libscif-dev's examples, on the loopback node
#  2. cluster (unless SCIF_REALVM_NODES=1): two nodes booted from copies
#     of the installed disk; each checks the same after its boot, they
#     see each other and hello-client on node 1 greets hello-server on
#     node 0, both as scifuser
#
# Each phase is one guest run under $SCIF_QEMU_LOCK.  Environment:
# SCIF_REALVM_TIMEOUT (seconds per phase, default 1800), SCIF_REALVM_MEM
# (MiB per node, default 1024), SCIF_REALVM_CPUS (vCPUs of node 0 in
# phase 1, default 2), SCIF_REALVM_NODES (2, or 1 for phase 1 only).
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
pkgout=${1:?usage: test-realvm.sh PKGOUT OUT}
out=${2:?usage: test-realvm.sh PKGOUT OUT}
tmo=${SCIF_REALVM_TIMEOUT:-1800}
mem=${SCIF_REALVM_MEM:-1024}
cpus=${SCIF_REALVM_CPUS:-2}
nnodes=${SCIF_REALVM_NODES:-2}
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$top/dkms.conf")
cfg=$top/tools/scif/scif-vm-config
n=0
fails=0
t_start=$SECONDS

tap() { # verdict name
	n=$((n + 1))
	[ "$1" = ok ] || fails=$((fails + 1))
	echo "$1 $n - $2"
}
die() { tap "not ok" "realvm/$1"; echo "1..$n"; exit 1; }

rm -rf "$out"
mkdir -p "$out" || exit 1
out=$(cd "$out" && pwd)
for p in scif-dkms libscif0 libscif-dev scif-tools; do
	ls "$pkgout/debs/${p}_${version}"_*.deb > /dev/null 2>&1 ||
		die "debs (no $p in $pkgout/debs: run scripts/test-packaging.sh)"
done
img=$(bash "$top/scripts/debian-guest.sh" 2> "$out/image.log") || {
	sed 's/^/# /' "$out/image.log"; die image; }
tap ok "realvm/image ($(cat "$img/release"))"
make -s -C "$top/qemu" OUTPUT="$out/qemu" > "$out/server-build.log" 2>&1 ||
	die "ivshmem-server build"
server=$out/qemu/ivshmem-server

shm=/dev/shm/scif-realvm-$$
append="root=LABEL=scifroot rw console=ttyS0 loglevel=7 tsc=reliable systemd.show_status=0"
# scif-vm-config's options for every node.
vmcfg=(-n 2 -m "$mem" -A tcg -d "$shm" -D "$out/node%k.qcow2" -S "$server"
	-k "$img/vmlinuz" -i "$img/initrd.img" -a "$append")

srv_pid=
declare -a qpid
pdeath=()
command -v setpriv > /dev/null && pdeath=(setpriv --pdeathsig KILL --)
cleanup() {
	local p
	for p in "${qpid[@]}" $srv_pid; do
		kill "$p" 2> /dev/null && wait "$p" 2> /dev/null
	done
	qpid=() srv_pid=
	rm -rf "$shm"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# data_disk NAME ROLE: an ext4 image labelled scifdata with the .debs,
# the guest script as run.sh and the role.
data_disk() {
	local d=$out/$1.d
	mkdir -p "$d/debs"
	for p in scif-dkms libscif0 libscif-dev scif-tools; do
		cp "$pkgout/debs/${p}_${version}"_*.deb "$d/debs/" || return 1
	done
	install -m 0755 "$top/packaging/tests/realvm_guest.sh" "$d/run.sh"
	echo "$2" > "$d/role"
	mkfs.ext4 -q -F -L scifdata -d "$d" "$out/$1.img" 64M
}

# start_cluster: the shared files and the ivshmem server, as the user
# guide has them (scif-vm-config setup and server).
start_cluster() {
	local i
	rm -rf "$shm"
	eval "$("$cfg" "${vmcfg[@]}" setup)" || return 1
	# exec: $! is the server itself.  It does not hold the QEMU lock
	# (descriptor 9) and dies with this script (pdeathsig).
	(eval "exec ${pdeath[*]} $("$cfg" "${vmcfg[@]}" server)") \
		< /dev/null > "$out/server.log" 2>&1 9>&- &
	srv_pid=$!
	for ((i = 0; i < 100; i++)); do
		[ -S "$shm/node1.sock" ] && return 0
		kill -0 "$srv_pid" 2> /dev/null || return 1
		sleep 0.1
	done
	return 1
}

# boot K DATA LOG [QEMU ARGS...]: node K from scif-vm-config's command
# line, with the data disk, console and results on files; in background.
boot() {
	local k=$1 data=$2 log=$3
	shift 3
	eval "set -- $("$cfg" "${vmcfg[@]}" qemu "$k") \"\$@\"" || return 1
	: > "$log.console" && : > "$log.results"
	echo "$* ..." > "$log.cmd"
	timeout -k 10 "$tmo" "${pdeath[@]}" "$@" -nodefaults -display none -monitor none \
		-drive "file=$out/$data.img,format=raw,if=virtio" \
		-serial "file:$log.console" -serial "file:$log.results" \
		< /dev/null > "$log.qemu" 2>&1 &
	qpid+=($!)
}

# results LOG LABEL DONE: TAP from a guest's PASS/FAIL lines; DONE is how
# many "realvm-done" lines (boots completed) are expected.
results() {
	local v name rest
	tr -d '\r' < "$1.results" | grep '^INFO ' | sed 's/^INFO /# /'
	while read -r v name rest; do
		case $v in
		PASS) tap ok "realvm/$2/$name" ;;
		FAIL) tap "not ok" "realvm/$2/$name"; echo "# $rest" ;;
		esac
	done < <(tr -d '\r' < "$1.results" | grep -E '^(PASS|FAIL) ')
	if bash "$top/qemu/check-log.sh" "$1.console" > "$1.check-log" 2>&1; then
		tap ok "realvm/$2/console-log-clean"
	else
		tap "not ok" "realvm/$2/console-log-clean"
		sed 's/^/# /' "$1.check-log" | head -n 10
	fi
	if [ "$(grep -c '^realvm-done' "$1.results")" -eq "$3" ]; then
		tap ok "realvm/$2/completed"
	else
		tap "not ok" "realvm/$2/completed ($3 boots expected)"
		tail -n 15 "$1.console" | sed 's/^/# console: /'
	fi
}

run_locked() { # phase function, under the QEMU lock
	(
		if [ -n "${SCIF_QEMU_LOCK:-}" ]; then
			exec 9> "$SCIF_QEMU_LOCK"
			flock 9
		fi
		trap cleanup EXIT
		"$@"
	)
}

phase_install() {
	local t0=$SECONDS
	data_disk data-install install || { echo "# data disk"; return 1; }
	start_cluster || { echo "# the ivshmem server did not start"; return 1; }
	boot 0 data-install "$out/install" -smp "$cpus" || return 1
	wait "${qpid[0]}"
	echo "# phase install: QEMU exit $?, $((SECONDS - t0)) s"
	cleanup
}

phase_cluster() {
	local t0=$SECONDS k
	{ data_disk data-server server && data_disk data-client client; } ||
		{ echo "# data disks"; return 1; }
	for k in 0 1; do
		mv "$out/node$k.qcow2" "$out/node$k.prev.qcow2" 2> /dev/null
		qemu-img create -q -f qcow2 -b "$out/installed.qcow2" -F qcow2 \
			"$out/node$k.qcow2" || return 1
	done
	start_cluster || { echo "# the ivshmem server did not start"; return 1; }
	boot 0 data-server "$out/server" -no-reboot || return 1
	boot 1 data-client "$out/client" -no-reboot || return 1
	wait "${qpid[0]}"
	wait "${qpid[1]}"
	echo "# phase cluster: $((SECONDS - t0)) s"
	cleanup
}

qemu-img create -q -f qcow2 -b "$img/disk.img" -F raw "$out/node0.qcow2" ||
	die "overlay"
echo "# phase install: booting node 0 ($cpus vCPUs, ${mem} MiB, TCG)" >&2
run_locked phase_install
results "$out/install" install 2

if [ "$nnodes" = 2 ]; then
	mv "$out/node0.qcow2" "$out/installed.qcow2"
	echo "# phase cluster: booting nodes 0 and 1 (TCG)" >&2
	run_locked phase_cluster
	results "$out/server" cluster/node0 1
	results "$out/client" cluster/node1 1
fi
echo "# test-realvm: $((SECONDS - t_start)) s in all"
echo "1..$n"
[ "$fails" -eq 0 ]
