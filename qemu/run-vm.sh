#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# run-vm.sh KERNEL INITRD OUTDIR [EXTRA KERNEL ARGS...]
# Boot one QEMU guest and wait for it to power off.  The console goes to
# OUTDIR/console.log, the test channel (ttyS1) to OUTDIR/results.log.
# Environment:
#   SCIF_ACCEL=tcg|kvm    TCG by default; kvm only if asked and usable
#   SCIF_VM_TIMEOUT=900   seconds before the guest is killed
#   SCIF_VM_MEM=1G, SCIF_VM_CPUS=2
#   SCIF_QEMU_LOCK=FILE   wait for an exclusive flock on FILE first
set -eu

# SCIF_QEMU_LOCK=FILE: one guest or cluster at a time on a shared machine.
# The lock is on descriptor 9, which the guests inherit: it is held until
# the launcher and every QEMU it started are gone, however they end.
if [ -n "${SCIF_QEMU_LOCK:-}" ] && [ -z "${SCIF_QEMU_LOCKED:-}" ]; then
	export SCIF_QEMU_LOCKED=1
	exec 9> "$SCIF_QEMU_LOCK"
	flock 9
fi

[ $# -ge 3 ] || { echo "usage: $0 KERNEL INITRD OUTDIR [ARGS...]" >&2; exit 2; }
kernel=$1 initrd=$2 outdir=$3
shift 3
mkdir -p "$outdir"
: > "$outdir/console.log"
: > "$outdir/results.log"

# The CPU: tcg-cpu.sh.  SCIF_TCG_CX16=off takes CMPXCHG16B away.  QEMU
# 7.2's TCG (Debian 12's) leaves garbage in RFLAGS after it, which an
# interrupt that lands just then saves and its IRET makes live: guests
# died of double faults in SLUB now and then.  scripts/deps.sh installs
# QEMU 10.0 from backports, which has no such bug (scif_guest_cpu_test
# checks it); with 7.2, this avoids it at 10 to 60 % of the guest's
# speed (Documentation/scif/testing.rst, "The guest").
# The clock arguments: see tcg-clock.sh.
accel="-accel tcg -cpu $(sh "$(dirname "$0")/tcg-cpu.sh")"
clock=$(sh "$(dirname "$0")/tcg-clock.sh")
if [ "${SCIF_ACCEL:-tcg}" = kvm ]; then
	if [ -w /dev/kvm ]; then
		accel="-accel kvm -cpu host"
		clock=
	else
		echo "run-vm: /dev/kvm not usable, falling back to TCG" >&2
	fi
fi

boot() {
	# shellcheck disable=SC2086
	timeout --foreground -k 10 "${SCIF_VM_TIMEOUT:-900}" \
		qemu-system-x86_64 -M q35 $accel -m "${SCIF_VM_MEM:-1G}" \
		-smp "${SCIF_VM_CPUS:-2}" -display none -no-reboot -monitor none \
		-serial "file:$outdir/console.log" -serial "file:$outdir/results.log" \
		-kernel "$kernel" -initrd "$initrd" \
		-append "console=ttyS0 loglevel=7 panic=-1 oops=panic $clock $*" \
		< /dev/null
}

# A kernel that dies before it runs /init has run none of the project's
# code (init.sh loads every module): under TCG, the kernel's own boot-
# time code patching races now and then with the other vCPU's
# translated code ("Oops: int3" from an initcall; testing.rst, "The
# guest").  Such a boot is kept as console.early-crash.log, said on
# stderr, and booted once more; any other end is the run's result.
rc=0
boot "$@" || rc=$?
if ! grep -q 'Run /init as init process' "$outdir/console.log" &&
   grep -q -e 'Oops: ' -e 'Kernel panic' "$outdir/console.log"; then
	mv "$outdir/console.log" "$outdir/console.early-crash.log"
	echo "run-vm: the kernel crashed before /init (see $outdir/console.early-crash.log); booting again" >&2
	: > "$outdir/results.log"
	rc=0
	boot "$@" || rc=$?
fi
exit $rc
