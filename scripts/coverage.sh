#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make coverage: line and branch coverage of drivers/ by the test suite.
# Builds the debug kernel with gcov (scripts/debug-kernel.sh gcov) and
# the modules with GCOV_PROFILE, runs the single-VM steps and, for each
# size in $CLUSTERS (default "2"), a cluster with the cross-node steps,
# then the node-loss, corrupt and DMA clusters (and, before them, the
# single VM's DMA run), each list followed by
# scif_gcov_dump.sh, which prints the guest's gcov data on the test
# channel.  lcov adds it all up; the summary is printed and the report is
# in build/coverage/html.  CLUSTERS="" runs the single VM only.
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$top/build}
CLUSTERS=${CLUSTERS-2}
out=$BUILD/coverage
sd=$top/tools/testing/selftests/scif
rc_branch="--rc lcov_branch_coverage=1"

die() { echo "coverage: $*" >&2; exit 1; }

sh "$top/scripts/deps.sh" || die "installing dependencies failed"
if ! command -v lcov > /dev/null; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
		--no-install-recommends lcov || die "cannot install lcov"
fi
kdir=$(sh "$top/scripts/debug-kernel.sh" gcov) || die "no gcov kernel"
image=$kdir/arch/x86/boot/bzImage
rm -rf "$out"
mkdir -p "$out/lists" "$out/data"
moddir=$out/modules
objdir=$moddir/drivers/misc/scif
make -s -C "$top" test-modules SCIF_TEST=1 SCIF_GCOV=1 KDIR="$kdir" \
	MODDIR="$moddir" > "$out/build.log" 2>&1 || die "module build failed"
make -s -C "$top" lib selftests >> "$out/build.log" 2>&1 ||
	die "selftests build failed"

# Each step list, with the dump at the end.
for l in steps cluster-steps cross-steps agent-steps node-loss-steps \
	 corrupt-steps dma-steps dma-cluster-steps; do
	{ cat "$sd/$l"; echo scif_gcov_dump.sh; } > "$out/lists/$l"
done
# The DMA runs without the kernel's dmatest (nothing of scif.ko in it).
sed -i '/^scif_dmatest.sh$/d' "$out/lists/dma-steps"
# The gcov kernel is several times slower than the debug kernel: the
# tests' long loops run a tenth of their rounds (SCIF_TEST_SLOW, see
# scif_test_util.h).
sed -i '/^[^#]/s/^/SCIF_TEST_SLOW=1 /' "$out"/lists/*

runs=0
collect() { # results.log name: the run's gcov data into data/<name>.info
	local log=$1 name=$2 d=$out/data/$2
	mkdir -p "$d"
	if ! tr -d '\r' < "$log" |
	     awk '/^scif-gcov-end/ { f = 0 } f { print } /^scif-gcov-begin/ { f = 1 }' |
	     base64 -d | tar -xzf - -C "$d"; then
		echo "coverage: no gcov data from $name" >&2
		return
	fi
	find "$objdir" -name '*.gcda' -delete
	find "$d" -path "*${objdir}/*.gcda" -exec cp {} "$objdir/" \;
	if lcov -q -c -d "$objdir" -o "$d.info" $rc_branch > "$d.log" 2>&1; then
		runs=$((runs + 1))
		echo "coverage: $name: $(grep -c '^SF:' "$d.info") files"
	else
		echo "coverage: lcov failed on $name (see $d.log)" >&2
	fi
}

export SCIF_QEMU_LOCK=${SCIF_QEMU_LOCK:-}
mods=("$objdir/scif.ko" "$objdir/scif_ivshmem.ko")
extra="$moddir/tools/testing/selftests/scif/kmod/scif_kapi_test.ko"
[ -e "$objdir/scif_kunit.ko" ] && extra="$extra $objdir/scif_kunit.ko"

echo "coverage: single VM"
# The gcov debug kernel runs the steps several times slower than the
# plain one: 900 s (run-vm.sh's default) was not enough on a loaded host.
EXTRA_MODULES=$extra sh "$top/qemu/mkinitramfs.sh" "$out/vm.cpio" \
	"$out/lists/steps" "$BUILD/selftests" "$objdir/scif.ko"
SCIF_VM_MEM=2G SCIF_VM_TIMEOUT=${SCIF_VM_TIMEOUT:-2400} \
	sh "$top/qemu/run-vm.sh" "$image" "$out/vm.cpio" "$out/vm"
collect "$out/vm/results.log" vm

# The copy engine on the test build's software DMA provider (check.sh's
# dma_run).
soft=$moddir/tools/testing/selftests/scif/kmod/scif_soft_dma.ko
echo "coverage: single VM with DMA"
sh "$top/qemu/mkinitramfs.sh" "$out/dma.cpio" "$out/lists/dma-steps" \
	"$BUILD/selftests" "$soft" "$objdir/scif.ko"
SCIF_VM_MEM=2G sh "$top/qemu/run-vm.sh" "$image" "$out/dma.cpio" "$out/dma"
collect "$out/dma/results.log" dma

# $LISTS: cluster.sh -s (per-node lists), $OPTS: more cluster.sh options.
cluster() { # name nodes timeout list [EXTRA_LISTS...]
	local name=$1 n=$2 t=$3 list=$4 j log
	shift 4
	EXTRA_MODULES=$extra EXTRA_LISTS="$*" sh "$top/qemu/mkinitramfs.sh" "$out/$name.cpio" \
		"$out/lists/$list" "$BUILD/selftests" "${mods[@]}"
	echo "coverage: $name"
	# shellcheck disable=SC2086
	bash "$top/qemu/cluster.sh" -n "$n" -k "$image" -i "$out/$name.cpio" \
		-o "$out/$name" -t "$t" ${LISTS:+-s "$LISTS"} ${OPTS:-} \
		-S "$BUILD/qemu/ivshmem-server" > "$out/$name.log" 2>&1
	for j in $(seq 0 $((n - 1))); do
		log=$(ls "$out/$name/node$j"/results*.log 2>/dev/null |
		      sort -V | tail -n 1)
		[ -n "$log" ] && collect "$log" "$name-node$j"
	done
}

if [ -n "$CLUSTERS" ]; then
	make -s -C "$top/qemu" OUTPUT="$BUILD/qemu" > /dev/null ||
		die "ivshmem server build failed"
	for n in $CLUSTERS; do
		lists=cross-steps,agent-steps
		for j in $(seq 2 $((n - 1))); do lists=$lists,; done
		LISTS=$lists OPTS="-m 512M -R" cluster "cluster$n" "$n" 900 \
			cluster-steps \
			"$out/lists/cross-steps" "$out/lists/agent-steps"
	done
	LISTS="" cluster node-loss 2 600 node-loss-steps
	LISTS="" cluster corrupt 3 400 corrupt-steps
	mods=("$soft" "$objdir/scif.ko" "$objdir/scif_ivshmem.ko")
	LISTS="" cluster dma-cluster 2 600 dma-cluster-steps
fi

[ "$runs" -gt 0 ] || die "no coverage data collected"
infos=()
for f in "$out"/data/*.info; do infos+=(-a "$f"); done
lcov -q "${infos[@]}" -o "$out/all.info" $rc_branch
# The driver's own sources; the KUnit suites and the test build's hooks
# (*_kunit.c, *testhooks.c: the peer fuzzer's hooks among them) are
# tests, not driver code.
lcov -q -e "$out/all.info" "$objdir/*.c" -o "$out/drivers.info" $rc_branch
lcov -q -r "$out/drivers.info" '*_kunit.c' '*testhooks.c' \
	-o "$out/drivers.info" \
	$rc_branch
genhtml -q --branch-coverage -o "$out/html" "$out/drivers.info" \
	> "$out/genhtml.log" 2>&1
lcov --list "$out/drivers.info" $rc_branch | tee "$out/list.txt"
echo "coverage: $runs runs; drivers/misc/scif/*.c:"
lcov --summary "$out/drivers.info" $rc_branch 2>&1 | grep -E 'lines|branches|functions' |
	tee "$out/summary.txt"
echo "coverage: report in $out/html/index.html"
