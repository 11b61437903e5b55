#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# scif-ntb-check.sh KERNEL [RUN...]   (KERNEL = 6.1 | 6.12 | debug)
# SCIF over the Linux NTB API (scif_ntb.ko) in a 2-node cluster joined by
# the emulated NTB (qemu/cluster.sh -T ntb).  Builds, for KERNEL: ntb.ko
# (scripts/ntb-modules.sh), ntb_ivshmem.ko and scif.ko + scif_ntb.ko, all
# strict (W=1, sparse, -Werror); then runs each RUN (default "cross
# node-loss full corrupt windows"):
#   cross      node 0 runs ntb-cross-steps, node 1 ntb-agent-steps
#   node-loss  -T ntb-full: both run ntb-node-loss-steps (node 1 killed
#              and restarted)
#   full       -T ntb-full (the full-reach window, ntb_ivshmem
#              full_reach=1): both run ntb-full-steps (RMA, mmap, fences)
#   corrupt    -T ntb (4 MiB windows): both run ntb-corrupt-steps, node 1
#              the misbehaving peer of scif_corrupt_test (garbage node
#              messages, ring counts, node queue count; it reloads its
#              modules after the loss), node 0 the victim that checks
#   windows    -T ntb (two windows of 4 and 2 MiB, no full reach): both
#              run ntb-windows-steps (RMA and fences through staging
#              buffers, remote mmap fails with ENXIO)
#   hostile    -T ntb: node 1 is first a hostile peer at the NTB level
#              (kmod/scif_ntb_hostile.c: garbage scratchpads and
#              doorbells, bad records, a generation per record, random
#              bytes over the windows), then runs scif_ntb and node 0's
#              selftests against node 0 (ntb-hostile-steps); node 0
#              (ntb-victim-steps) serves them
# Prints one "PASS|FAIL|SKIP name" line per result and ends with
# "N passed, N failed, N skipped"; exit status 0 if nothing failed.
# Environment: BUILD (default build/), SCIF_QEMU_LOCK (qemu/cluster.sh).
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$top/build}
export BUILD
k=${1:-}
[ -n "$k" ] || { echo "usage: $0 6.1|6.12|debug [cross|node-loss|full|corrupt|windows|hostile...]" >&2; exit 2; }
shift
runs=${*:-cross node-loss full corrupt windows hostile}
out=$BUILD/scif-ntb/$k
mkdir -p "$out"
results=$out/results.txt
: > "$results"

# shellcheck source=scripts/check-lib.sh
. "$top/scripts/check-lib.sh"

summary() {
	local p f s
	p=$(grep -c '^PASS' "$results") f=$(grep -c '^FAIL' "$results")
	s=$(grep -c '^SKIP' "$results")
	echo "$p passed, $f failed, $s skipped"
	[ "$f" -eq 0 ]
}

read -r kdir image rel < <(sh "$top/scripts/kernels.sh" resolve "$k") ||
	{ record FAIL "$k/kernel (not available)"; summary; exit; }
ntb=$BUILD/ntb/$k
moddir=$BUILD/modules/$k
sd=$top/tools/testing/selftests/scif
[ -e "$ntb/Module.symvers" ] ||
	run_test "$k/scif-ntb/ntb-core" sh "$top/scripts/ntb-modules.sh" "$k" ||
	{ summary; exit; }
run_test "$k/scif-ntb/ntb-hw-build-strict" make -s -j"$(nproc)" -C "$top" ntb-modules STRICT=1 \
	KDIR="$kdir" NTB_SYMVERS="$ntb/Module.symvers" NTB_MODDIR="$ntb/hw" ||
	{ summary; exit; }
run_test "$k/scif-ntb/build-strict" make -s -j"$(nproc)" -C "$top" test-modules STRICT=1 \
	SCIF_TEST=1 KDIR="$kdir" MODDIR="$moddir" \
	SCIF_NTB_SYMVERS="$ntb/Module.symvers" || { summary; exit; }
if ! grep -qE '^CONFIG_(ARCH_HAS_)?DMA_OPS=y' "$kdir/include/config/auto.conf"; then
	record SKIP "$k/scif-ntb (no per-device DMA operations: the emulated NTB has no inbound windows)"
	summary
	exit
fi
[ -x "$BUILD/qemu/ivshmem-server" ] ||
	make -s -C "$top/qemu" OUTPUT="$BUILD/qemu" > /dev/null ||
	{ record FAIL "$k/scif-ntb/ivshmem-server"; summary; exit; }
[ -x "$BUILD/selftests/scif_cluster_test" ] ||
	{ make -s -C "$top" lib selftests > "$out/selftests.log" 2>&1 &&
	  record PASS "$k/scif-ntb/selftests-build"; } ||
	{ record FAIL "$k/scif-ntb/selftests-build"; summary; exit; }

mods="$moddir/drivers/misc/scif/scif.ko $ntb/ntb.ko $ntb/hw/ntb_ivshmem.ko
	$moddir/drivers/misc/scif/scif_ntb.ko"

cluster() { # name lists [topology]
	local name=$1 lists=$2 topo=${3:-ntb} cdir=$out/$1 j log last m=$mods
	local extra="$moddir/tools/testing/selftests/scif/kmod/scif_kapi_test.ko"
	rm -rf "$cdir"
	mkdir -p "$cdir"
	if [ "$topo" = ntb-full ] || [ "$name" = hostile ]; then
		# ntb-load.sh loads these two (full_reach=1 on ntb-full), and
		# on the hostile node before scif_ntb_hostile.ko, not scif_ntb.
		extra="$extra $ntb/ntb.ko $ntb/hw/ntb_ivshmem.ko"
		extra="$extra $moddir/tools/testing/selftests/scif/kmod/scif_ntb_hostile.ko"
		m="$moddir/drivers/misc/scif/scif.ko $moddir/drivers/misc/scif/scif_ntb.ko"
	fi
	# shellcheck disable=SC2086 # $m are words
	EXTRA_MODULES=$extra \
	EXTRA_LISTS="$sd/ntb-cross-steps $sd/ntb-agent-steps $sd/ntb-node-loss-steps $sd/ntb-full-steps $sd/ntb-corrupt-steps $sd/ntb-windows-steps $sd/ntb-load.sh $sd/ntb-victim-steps $sd/ntb-hostile-steps $sd/scif_ntb_hostile.sh $sd/scif_ntb_victim_log.sh" \
	sh "$top/qemu/mkinitramfs.sh" "$cdir.cpio" "$sd/ntb-agent-steps" \
		"$BUILD/selftests" $m
	echo "scif-ntb: $name, a 2-node NTB cluster of $k ($rel)" >&2
	bash "$top/qemu/cluster.sh" -n 2 -T "$topo" -k "$image" -i "$cdir.cpio" \
		-o "$cdir" -m 512M -t 600 -s "$lists" \
		-S "$BUILD/qemu/ivshmem-server" > "$cdir/launcher.log" 2>&1 ||
		echo "scif-ntb: $name: launcher reported failure" >&2
	guest_results "$cdir/node0/results.log" "$k/ntb-$name/node0"
	last=$(ls "$cdir/node1"/results.*.log 2>/dev/null | sort -V | tail -n 1)
	guest_results "${last:-$cdir/node1/results.log}" "$k/ntb-$name/node1"
	for log in "$cdir"/node*/console*.log; do
		j=$(basename "$(dirname "$log")")
		run_test "$k/ntb-$name/$j/$(basename "$log" .log)-clean" \
			bash "$top/qemu/check-log.sh" "$log"
	done
}

for r in $runs; do
	case $r in
	cross) cluster cross ntb-cross-steps,ntb-agent-steps ;;
	node-loss) cluster node-loss ntb-node-loss-steps ntb-full ;;
	full) cluster full ntb-full-steps ntb-full ;;
	corrupt) cluster corrupt ntb-corrupt-steps ;;
	windows) cluster windows ntb-windows-steps ;;
	hostile) cluster hostile ntb-victim-steps,ntb-hostile-steps ;;
	*) record FAIL "$k/scif-ntb/unknown-run-$r" ;;
	esac
done
summary
