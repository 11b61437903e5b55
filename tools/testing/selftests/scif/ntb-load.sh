#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# ntb-load.sh [PARAM=VALUE...] | ntb-load.sh unload
# A step of the NTB full-reach runs (ntb-full-steps): load the NTB core
# and the emulated NTB from /modules/extra with the parameters given
# (full_reach=1), before the "insmod" step loads scif.ko and scif_ntb.ko;
# or unload them after the "rmmod" step.
if [ "${1:-}" = unload ]; then
	rmmod ntb_ivshmem && rmmod ntb
	exit
fi
insmod /modules/extra/ntb.ko && insmod /modules/extra/ntb_ivshmem.ko "$@"
