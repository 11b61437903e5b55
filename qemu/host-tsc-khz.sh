#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# host-tsc-khz.sh: print the host's TSC frequency in kHz, or nothing.
# Under TCG a guest's TSC counts at the host's rate; a guest that
# calibrates it while the host is busy can get it wildly wrong (a debug
# guest of a 4-node cluster once found "28.948 MHz" instead of 2096, so
# its clock ran 72 times too fast: soft lockups, timeouts everywhere).
# run-vm.sh, cluster.sh and ntb-vm.sh give the guest this figure as
# tsc_early_khz= instead.  Read from the host kernel's own calibration.
dmesg 2>/dev/null | sed -n \
	-e 's/.*tsc: Refined TSC clocksource calibration: \([0-9]*\)\.\([0-9]\{3\}\).* MHz.*/\1\2/p' \
	-e 's/.*tsc: Detected \([0-9]*\)\.\([0-9]\{3\}\).* MHz processor.*/\1\2/p' |
	tail -n 1
