#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# tcg-cpu.sh: print the -cpu value of a TCG guest; run-vm.sh, cluster.sh
# and ntb-vm.sh use it.
# - max: every feature the emulator has, so the guests' kernels take the
#   paths of a modern CPU;
# - la57=off: with 5-level paging, 6.1's KASAN took 5-level direct-map
#   addresses for wild ones while it identified the boot CPU, and
#   reported any interrupt that landed then;
# - fsrm, fsrs and fzrm off where the emulator has them (QEMU 8 and
#   later give them to max): with them the kernel copies and clears with
#   REP MOVSB and REP STOSB, which TCG runs a byte at a time.  QEMU
#   10.0's guests ran scif_msg_test, scif_rma_test, scif_engine_test and
#   scif_node_test in 133 s with them and 122 s without (QEMU 7.2, which
#   had none of them on: 118 s);
# - cx16=$SCIF_TCG_CX16 if set (off: no CMPXCHG16B, for an emulator that
#   miscomputes RFLAGS after it, as QEMU 7.2 does; see run-vm.sh).
cpu=max,la57=off
flags=$(qemu-system-x86_64 -cpu help 2>/dev/null)
for f in fsrm fsrs fzrm; do
	echo "$flags" | grep -qw "$f" && cpu=$cpu,$f=off
done
echo "$cpu${SCIF_TCG_CX16:+,cx16=$SCIF_TCG_CX16}"
