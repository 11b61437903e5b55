#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The test machines themselves: a guest that QEMU emulates by TCG
# (qemu/run-vm.sh, qemu/cluster.sh and qemu/ntb-vm.sh boot them so
# unless SCIF_ACCEL=kvm) must have no CMPXCHG16B.  QEMU 7.2's TCG
# computes the flags after that instruction from a stale state and so
# leaves garbage in RFLAGS, which an interrupt that lands just then
# saves and its IRET makes live: guests died of double faults in
# SLUB's allocation fast path (Documentation/scif/testing.rst, "The
# guest").  Under KVM there is nothing to check.  TAP output.
echo "TAP version 13"
echo "1..1"
if ! grep -q "QEMU TCG CPU" /proc/cpuinfo; then
	echo "ok 1 tcg_cpu_without_cmpxchg16b # SKIP not a CPU of QEMU's TCG"
	exit 0
fi
if grep -qw cx16 /proc/cpuinfo; then
	echo "# flags: $(grep -m 1 '^flags' /proc/cpuinfo)"
	echo "not ok 1 tcg_cpu_without_cmpxchg16b"
	exit 1
fi
echo "ok 1 tcg_cpu_without_cmpxchg16b"
