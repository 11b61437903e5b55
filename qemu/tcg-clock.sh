#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# tcg-clock.sh: print the clock arguments of a TCG guest's kernel command
# line; run-vm.sh, cluster.sh and ntb-vm.sh use them.
# - tsc=reliable: under TCG on a busy host the clocksource watchdog finds
#   the TSC "skewed" and switches clocks at run time; the code patching
#   that follows races with the other vCPU's translated code (an int3
#   oops seen on 6.12).  The emulated TSC is one clock for every vCPU.
# - tsc_early_khz=<the host's TSC rate>, when the host kernel's log has
#   it: a guest's TSC counts at that rate, and a guest that calibrates it
#   while the host is busy can get it wildly wrong (a debug guest of a
#   4-node cluster once found 28.948 MHz instead of 2096: its clock ran
#   72 times too fast, soft lockups and timeouts everywhere).
khz=$(dmesg 2>/dev/null | sed -n \
	-e 's/.*tsc: Refined TSC clocksource calibration: \([0-9]*\)\.\([0-9]\{3\}\).* MHz.*/\1\2/p' \
	-e 's/.*tsc: Detected \([0-9]*\)\.\([0-9]\{3\}\).* MHz processor.*/\1\2/p' |
	tail -n 1)
echo "tsc=reliable${khz:+ tsc_early_khz=$khz}"
