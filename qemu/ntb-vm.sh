#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ntb-vm.sh [-2 [-R]] -k KERNEL -i INITRD -o OUTDIR [-w MW_SIZE] [-t TIMEOUT]
#           [-a "EXTRA KERNEL ARGS"] [-s STEPS] [-S SERVER_BIN]
#
# Boot guests joined by the emulated NTB of drivers/ntb/hw/ivshmem: two
# ivshmem-doorbell devices (2 MSI-X vectors each) on one memory file of
# 4 * MW_SIZE bytes handed out by our ivshmem server (qemu/ivshmem-server.c,
# peer ids 0 and 1), which are the two ports of the NTB, each with memory
# windows of MW_SIZE and MW_SIZE / 2 bytes.
#
#   (default)   loopback: ONE guest with both devices, port 0 at PCI
#               00:10.0 and port 1 at 00:11.0, so that the upstream
#               ntb_test.sh runs in one VM; logs in OUTDIR/{console,
#               results}.log
#   -2          two guests, one port each (at 00:10.0); guest k gets
#               ntbvm.node=K on its command line; logs in OUTDIR/node<k>/
#   -R          with -2: each guest's RAM is a shared file (node<k>.ram in
#               the run's directory) and the other guest has an
#               ivshmem-plain device on it at PCI 00:11.0, whose BAR2 shows
#               guest-physical address P at offset P: what the driver's
#               full-reach window (ntb_ivshmem full_reach=1) goes through.
#               SCIF_VM_MEM must then be a power of two from 64M to 2G
#   -w MW_SIZE  window 0's size in bytes, or with an M suffix: a power
#               of two from 4M to 256M (default 4M)
#   -t TIMEOUT  seconds before the guests are killed (default 600)
#   -s STEPS    scif.steps=STEPS: the guests run /tests/STEPS (init.sh)
#   -S BIN      the ivshmem server (default build/qemu/ivshmem-server)
# The kernel command line is run-vm.sh's plus the -a arguments.
# Environment: SCIF_VM_MEM (default 1G), SCIF_VM_CPUS (default 2),
# SCIF_QEMU_LOCK (as in run-vm.sh: one QEMU run at a time).
# Exit status: 0 if every guest completed its steps (scif-run-complete),
# 1 if not, 2 on a usage error.
set -u

if [ -n "${SCIF_QEMU_LOCK:-}" ] && [ -z "${SCIF_QEMU_LOCKED:-}" ]; then
	export SCIF_QEMU_LOCKED=1
	exec 9> "$SCIF_QEMU_LOCK"
	flock 9
fi

usage() {
	sed -n '4,5s/^# \{0,1\}//p' "$0" >&2
	exit 2
}

top=$(cd "$(dirname "$0")/.." && pwd)
two=0 reach=0 kernel='' initrd='' outdir='' mw=4M timeout=600 extra='' steps='' server=''
while getopts "2Rk:i:o:w:t:a:s:S:h" opt; do
	case $opt in
	2) two=1 ;;
	R) reach=1 ;;
	k) kernel=$OPTARG ;;
	i) initrd=$OPTARG ;;
	o) outdir=$OPTARG ;;
	w) mw=$OPTARG ;;
	t) timeout=$OPTARG ;;
	a) extra=$OPTARG ;;
	s) steps=$OPTARG ;;
	S) server=$OPTARG ;;
	*) usage ;;
	esac
done
[ -n "$kernel" ] && [ -n "$initrd" ] && [ -n "$outdir" ] || usage
[[ $mw =~ ^([1-9][0-9]*)([Mm]?)$ ]] || { echo "ntb-vm: bad -w '$mw'" >&2; exit 2; }
bytes=${BASH_REMATCH[1]}
[ -z "${BASH_REMATCH[2]}" ] || bytes=$((bytes << 20))
if [ $((bytes & (bytes - 1))) -ne 0 ] || [ "$bytes" -lt $((4 << 20)) ] ||
   [ "$bytes" -gt $((256 << 20)) ]; then
	echo "ntb-vm: -w must be a power of two from 4M to 256M" >&2
	exit 2
fi
[[ $timeout =~ ^[1-9][0-9]*$ ]] || usage
mem=${SCIF_VM_MEM:-1G}
if [ "$reach" = 1 ]; then
	[ "$two" = 1 ] || { echo "ntb-vm: -R needs -2" >&2; exit 2; }
	[[ $mem =~ ^([1-9][0-9]*)([MmGg]?)$ ]] || { echo "ntb-vm: bad SCIF_VM_MEM '$mem'" >&2; exit 2; }
	mib=${BASH_REMATCH[1]}
	case ${BASH_REMATCH[2]} in [Gg]) mib=$((mib * 1024)) ;; esac
	# A power of two (a BAR's size) and at most 2 GiB: all of the RAM
	# below the PCI hole, guest-physical address == file offset.
	if [ $((mib & (mib - 1))) -ne 0 ] || [ "$mib" -lt 64 ] || [ "$mib" -gt 2048 ]; then
		echo "ntb-vm: -R: SCIF_VM_MEM must be a power of two from 64M to 2G" >&2
		exit 2
	fi
	mem=${mib}M
fi
[ -n "$server" ] || server=$top/build/qemu/ivshmem-server
[ -x "$server" ] || { echo "ntb-vm: no $server (make -C qemu OUTPUT=build/qemu)" >&2; exit 2; }

# The CPU: tcg-cpu.sh.
accel=(-accel tcg -cpu "$(sh "$top/qemu/tcg-cpu.sh")")
clock=$(sh "$top/qemu/tcg-clock.sh")
if [ "${SCIF_ACCEL:-tcg}" = kvm ] && [ -w /dev/kvm ]; then
	accel=(-accel kvm -cpu host)
	clock=
fi

mkdir -p "$outdir" || exit 1
dir=$(mktemp -d /dev/shm/scif-ntb.XXXXXX) || exit 1
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill -TERM "$p" 2> /dev/null; done
	for p in "${pids[@]}"; do wait "$p" 2> /dev/null; done
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

pdeath=()
command -v setpriv > /dev/null && pdeath=(setpriv --pdeathsig KILL --)
"${pdeath[@]}" "$server" -d "$dir" -n 2 -v 2 -s $((4 * bytes)) -F \
	< /dev/null > "$outdir/server.log" 2>&1 &
pids+=($!)
for ((i = 0; i < 100; i++)); do
	[ -S "$dir/node0.sock" ] && [ -S "$dir/node1.sock" ] && break
	sleep 0.1
done
[ -S "$dir/node1.sock" ] || { echo "ntb-vm: the server did not start" >&2; exit 1; }

append="console=ttyS0 loglevel=7 panic=-1 oops=panic $clock"
[ -z "$steps" ] || append+=" scif.steps=$steps"
[ -z "$extra" ] || append+=" $extra"

port() { # k slot: the ivshmem-doorbell device of port k at PCI slot
	echo "-chardev socket,path=$dir/node$1.sock,id=ntb$1" \
		"-device ivshmem-doorbell,chardev=ntb$1,vectors=2,addr=$2"
}

ram() { # k: (-R) guest k's RAM in node<k>.ram, the other's RAM at 00:11.0
	local j=$((1 - $1))
	echo "-machine memory-backend=ram$1" \
		"-object memory-backend-file,id=ram$1,size=$mem,share=on,mem-path=$dir/node$1.ram" \
		"-object memory-backend-file,id=peer$j,size=$mem,share=on,mem-path=$dir/node$j.ram" \
		"-device ivshmem-plain,memdev=peer$j,addr=0x11"
}

boot() { # logdir append port-devices...
	local logs=$1 args=$2
	shift 2
	mkdir -p "$logs"
	: > "$logs/console.log"
	: > "$logs/results.log"
	# shellcheck disable=SC2068 # the device words split on purpose
	"${pdeath[@]}" timeout -k 10 "$timeout" \
		qemu-system-x86_64 -M q35 "${accel[@]}" -m "$mem" \
		-smp "${SCIF_VM_CPUS:-2}" -display none -no-reboot -monitor none \
		-serial "file:$logs/console.log" -serial "file:$logs/results.log" \
		$@ -kernel "$kernel" -initrd "$initrd" -append "$args" \
		< /dev/null > "$logs/qemu.log" 2>&1 &
	pids+=($!)
}

if [ "$two" = 0 ]; then
	# shellcheck disable=SC2046 # port prints options: words
	boot "$outdir" "$append" $(port 0 0x10) $(port 1 0x11)
	logs=("$outdir")
else
	if [ "$reach" = 1 ]; then
		for k in 0 1; do
			truncate -s "$mem" "$dir/node$k.ram" || exit 1
		done
	fi
	# shellcheck disable=SC2046 # the device words split on purpose
	boot "$outdir/node0" "$append ntbvm.node=0" $(port 0 0x10) \
		$([ "$reach" = 0 ] || ram 0)
	# shellcheck disable=SC2046
	boot "$outdir/node1" "$append ntbvm.node=1" $(port 1 0x10) \
		$([ "$reach" = 0 ] || ram 1)
	logs=("$outdir/node0" "$outdir/node1")
fi
rc=0
for p in "${pids[@]:1}"; do wait "$p" || rc=$?; done
[ "$rc" -eq 0 ] || echo "ntb-vm: a guest exited with status $rc" >&2
status=0
for l in "${logs[@]}"; do
	grep -q '^scif-run-complete' "$l/results.log" || {
		echo "ntb-vm: $l: the guest did not complete its steps" >&2
		status=1
	}
done
exit $status
