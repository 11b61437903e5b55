#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The soak run (make soak): for each cluster size in $NODES (default
# "2 4"), boot a cluster of $KERNEL (default debug) whose node 1 is killed
# and restarted $ROUNDS times (default 50) under mixed traffic (see
# tools/testing/selftests/scif/scif_soak_test.c), then print the figures
# that node 0 measured and check every node's logs.  Logs stay under
# $BUILD/soak/<kernel>-<nodes>.  Ends with "N passed, N failed, N skipped";
# exits non-zero if anything failed.
#
# $SOAK_ROUND_S (default 120) is the time allowed per round: the cluster
# and its steps get ROUNDS * SOAK_ROUND_S + 600 seconds.
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$top/build}
KERNEL=${KERNEL:-debug}
NODES=${NODES:-2 4}
ROUNDS=${ROUNDS:-50}
round_s=${SOAK_ROUND_S:-120}
out=$BUILD/soak
results=$out/results.txt
sd=$top/tools/testing/selftests/scif

if ! [[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || [ "$ROUNDS" -gt 1000 ]; then
	echo "soak: ROUNDS must be 1..1000, not '$ROUNDS'" >&2
	exit 2
fi
for n in $NODES; do
	[[ $n =~ ^[2-8]$ ]] || { echo "soak: NODES: '$n' is not 2..8" >&2; exit 2; }
done

# shellcheck source=scripts/check-lib.sh
. "$top/scripts/check-lib.sh"

# Quieter than check-lib.sh's: a soak records thousands of passes.
record() { # PASS|FAIL|SKIP name
	echo "$1 $2" >> "$results"
	[ "$1" = PASS ] || echo "$1 $2"
}

mkdir -p "$out"
: > "$results"
start=$(date +%s)

read -r kdir image rel < <(sh "$top/scripts/kernels.sh" resolve "$KERNEL") ||
	{ echo "soak: kernel $KERNEL not available"; echo "0 passed, 1 failed"; exit 1; }
moddir=$BUILD/modules/$KERNEL
if ! make -s -C "$top" test-modules STRICT=1 SCIF_TEST=1 KDIR="$kdir" MODDIR="$moddir" ||
	! make -s -C "$top" lib || ! make -s -C "$top" selftests ||
	! make -s -C "$top/qemu" OUTPUT="$BUILD/qemu"; then
	echo "soak: build failed"
	echo "0 passed, 1 failed"
	exit 1
fi

timeout=$((ROUNDS * round_s + 600))
for n in $NODES; do
	cdir=$out/$KERNEL-$n
	rm -rf "$cdir"
	mkdir -p "$cdir"
	sh "$top/qemu/mkinitramfs.sh" "$cdir.cpio" "$sd/soak-steps" \
		"$BUILD/selftests" "$moddir/drivers/misc/scif/scif.ko" \
		"$moddir/drivers/misc/scif/scif_ivshmem.ko"
	echo "soak: $n-node cluster of $KERNEL ($rel), $ROUNDS rounds, logs in $cdir"
	# 512M per node: a debug-kernel node with a connect storm needs it.
	bash "$top/qemu/cluster.sh" -n "$n" -k "$image" -i "$cdir.cpio" \
		-o "$cdir" -m 512M -t "$timeout" \
		-a "scif.soak_rounds=$ROUNDS scif.step_timeout=$timeout" \
		-S "$BUILD/qemu/ivshmem-server" > "$cdir/launcher.log" 2>&1 ||
		echo "soak: $n-node cluster: launcher reported failure (see $cdir/cluster.log)"
	# Node 1's earlier lives end by design; only its last one counts.
	for ((j = 0; j < n; j++)); do
		res=$cdir/node$j/results.log
		[ "$j" -ne 1 ] ||
			res=$(ls "$cdir/node1"/results*.log 2>/dev/null | sort -V | tail -n 1)
		guest_results "${res:-$cdir/node$j/results.log}" "$KERNEL/soak$n/node$j"
	done
	for log in "$cdir"/node*/console*.log; do
		name=$KERNEL/soak$n/$(basename "$(dirname "$log")")/$(basename "$log" .log)-clean
		if bash "$top/qemu/check-log.sh" "$log" > "$cdir/check-log.tmp" 2>&1; then
			record PASS "$name"
		else
			record FAIL "$name"
			sed 's/^/    /' "$cdir/check-log.tmp" | tail -n 20
		fi
	done
	rm -f "$cdir/check-log.tmp"
	echo "soak: figures of the $n-node cluster (node 0):"
	tr -d '\r' < "$cdir/node0/results.log" | sed -n 's/^# soak: /  /p' |
		tee "$cdir/figures.txt"
	tr -d '\r' < "$cdir/node0/results.log" | grep '^not ok' | head -n 20
done

passed=$(grep -c '^PASS' "$results")
failed=$(grep -c '^FAIL' "$results")
skipped=$(grep -c '^SKIP' "$results")
echo "soak: finished in $(( $(date +%s) - start )) s; results in $results"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
