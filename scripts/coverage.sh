#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make coverage: line and branch coverage of the driver by the test suite.
# Builds the debug kernel with gcov (scripts/debug-kernel.sh gcov), the
# NTB core for it (scripts/ntb-modules.sh gcov) and our modules with
# GCOV_PROFILE, runs the single-VM steps and, for each size in $CLUSTERS
# (default "2 3"), a cluster with the cross-node steps (and scif_net's
# mesh with three nodes or more), then the node-loss
# cluster (with scif_net, scif_vsock and their links), the corrupt and DMA
# clusters (and, before them, the single VM's DMA run) and four NTB
# clusters (cross, windows, full, hostile), each list followed by
# scif_gcov_dump.sh, which prints the guest's gcov data on the test
# channel.  lcov adds it all up; the summary of each part (the core and
# its buses, the peer links, scif_net, scif_vsock) and of all of them is
# printed and the report is in build/coverage/html.  CLUSTERS="" runs the
# single VM only.
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$top/build}
CLUSTERS=${CLUSTERS-2 3}
out=$BUILD/coverage
sd=$top/tools/testing/selftests/scif
rc_branch="--rc lcov_branch_coverage=1"
# shellcheck source=scripts/check-lib.sh
. "$top/scripts/check-lib.sh"

die() { echo "coverage: $*" >&2; exit 1; }

sh "$top/scripts/deps.sh" || die "installing dependencies failed"
if ! command -v lcov > /dev/null; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
		--no-install-recommends lcov || die "cannot install lcov"
fi
read -r kdir image rel < <(sh "$top/scripts/kernels.sh" resolve gcov) ||
	die "no gcov kernel"
rm -rf "$out"
mkdir -p "$out/lists" "$out/data"
moddir=$out/modules
objdir=$moddir/drivers/misc/scif
# The NTB core and the emulated NTB for scif_ntb.ko; without them the NTB
# clusters are left out, and the report says so.
ntb=$BUILD/ntb/gcov ntbflags=
if { sh "$top/scripts/ntb-modules.sh" gcov &&
     make -s -C "$top" ntb-modules KDIR="$kdir" \
	NTB_SYMVERS="$ntb/Module.symvers" NTB_MODDIR="$ntb/hw"; } \
	> "$out/ntb-build.log" 2>&1; then
	ntbflags=SCIF_NTB_SYMVERS=$ntb/Module.symvers
else
	echo "coverage: no NTB core for the gcov kernel (see $out/ntb-build.log)" >&2
fi
# shellcheck disable=SC2086 # $ntbflags: no word or one
make -s -C "$top" test-modules SCIF_TEST=1 SCIF_GCOV=1 KDIR="$kdir" \
	MODDIR="$moddir" $ntbflags > "$out/build.log" 2>&1 ||
	die "module build failed"
make -s -C "$top" lib selftests >> "$out/build.log" 2>&1 ||
	die "selftests build failed"

# Each step list, with the dump at the end.
for l in steps cluster-steps cross-steps agent-steps node-loss-steps \
	 corrupt-steps dma-steps dma-cluster-steps ntb-cross-steps \
	 ntb-agent-steps ntb-windows-steps ntb-full-steps ntb-victim-steps \
	 ntb-hostile-steps; do
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
	# Each .gcda next to its .gcno: the guest names them by the build
	# directory's path.
	find "$moddir" -name '*.gcda' -delete
	find "$d" -path "*${moddir}/*.gcda" | while read -r f; do
		cp "$f" "$moddir/${f#*"$moddir"/}"
	done
	if lcov -q -c -d "$moddir" -o "$d.info" $rc_branch > "$d.log" 2>&1; then
		runs=$((runs + 1))
		echo "coverage: $name: $(grep -c '^SF:' "$d.info") files"
	else
		echo "coverage: lcov failed on $name (see $d.log)" >&2
	fi
}

export SCIF_QEMU_LOCK=${SCIF_QEMU_LOCK:-}
mods=("$objdir/scif.ko" "$objdir/scif_ivshmem.ko")
extra="$moddir/tools/testing/selftests/scif/kmod/scif_kapi_test.ko
	$moddir/tools/testing/selftests/scif/kmod/scif_soft_dma.ko
	$moddir/tools/testing/selftests/scif/kmod/scif_dmabuf_import.ko
	$moddir/tools/testing/selftests/scif/kmod/scif_kmap_client.ko"
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

# Each node's data: from its last life's results (a node that was
# killed and booted again gives only that life's).
collect_nodes() { # name nodes
	local j log
	for j in $(seq 0 $(($2 - 1))); do
		log=$(ls "$out/$1/node$j"/results*.log 2>/dev/null |
		      sort -V | tail -n 1)
		[ -n "$log" ] && collect "$log" "$1-node$j"
	done
}

# $LISTS: cluster.sh -s (per-node lists), $OPTS: more cluster.sh options,
# $MORE: more modules for the initramfs.
cluster() { # name nodes timeout list [EXTRA_LISTS...]
	local name=$1 n=$2 t=$3 list=$4
	shift 4
	EXTRA_MODULES="$extra ${MORE:-}" EXTRA_LISTS="$*" \
	sh "$top/qemu/mkinitramfs.sh" "$out/$name.cpio" \
		"$out/lists/$list" "$BUILD/selftests" "${mods[@]}"
	echo "coverage: $name"
	# shellcheck disable=SC2086
	bash "$top/qemu/cluster.sh" -n "$n" -k "$image" -i "$out/$name.cpio" \
		-o "$out/$name" -t "$t" ${LISTS:+-s "$LISTS"} ${OPTS:-} \
		-S "$BUILD/qemu/ivshmem-server" > "$out/$name.log" 2>&1
	collect_nodes "$name" "$n"
}

# A 2-node cluster joined by the emulated NTB (as scif-ntb-check.sh's).
ntb_cluster() { # name topology lists
	local name=ntb-$1 topo=$2 lists=$3 j l
	local m=("$objdir/scif.ko" "$ntb/ntb.ko" "$ntb/hw/ntb_ivshmem.ko" "$objdir/scif_ntb.ko")
	local x="$extra"
	if [ "$topo" = ntb-full ] || [ "$1" = hostile ]; then
		# ntb-load.sh loads these two (with full_reach=1 on ntb-full),
		# and on the hostile node before the hostile peer's module.
		x="$x $ntb/ntb.ko $ntb/hw/ntb_ivshmem.ko"
		x="$x $moddir/tools/testing/selftests/scif/kmod/scif_ntb_hostile.ko"
		m=("$objdir/scif.ko" "$objdir/scif_ntb.ko")
	fi
	l="$sd/ntb-load.sh $sd/scif_ntb_hostile.sh $sd/scif_ntb_victim_log.sh"
	for j in ntb-cross-steps ntb-agent-steps ntb-windows-steps ntb-full-steps \
		 ntb-victim-steps ntb-hostile-steps; do
		l="$l $out/lists/$j"
	done
	EXTRA_MODULES=$x EXTRA_LISTS=$l sh "$top/qemu/mkinitramfs.sh" \
		"$out/$name.cpio" "$out/lists/ntb-agent-steps" "$BUILD/selftests" "${m[@]}"
	echo "coverage: $name"
	bash "$top/qemu/cluster.sh" -n 2 -T "$topo" -k "$image" \
		-i "$out/$name.cpio" -o "$out/$name" -m 512M -t 1200 -s "$lists" \
		-S "$BUILD/qemu/ivshmem-server" > "$out/$name.log" 2>&1
	collect_nodes "$name" 2
}

if [ -n "$CLUSTERS" ]; then
	make -s -C "$top/qemu" OUTPUT="$BUILD/qemu" > /dev/null ||
		die "ivshmem server build failed"
	# scif_net.ko and its links: scif_net_mesh.sh, with three nodes.
	netmods="$moddir/net/scif/scif_peer_links.ko
		$moddir/drivers/net/scif/scif_net.ko"
	for n in $CLUSTERS; do
		lists=cross-steps,agent-steps
		for j in $(seq 2 $((n - 1))); do lists=$lists,; done
		LISTS=$lists OPTS="-m 512M -R" MORE=$netmods \
			cluster "cluster$n" "$n" 900 cluster-steps \
			"$out/lists/cross-steps" "$out/lists/agent-steps"
	done
	# As check.sh's node_loss_run: scif_net.ko and its links, rxe for
	# scif_rxe_test.sh, scif_vsock.ko with the kernel's vsock_test.
	vs=$BUILD/vsock/gcov
	sh "$top/scripts/vsock-test-build.sh" gcov "$vs" > "$out/vsock-build.log" 2>&1 ||
		echo "coverage: vsock_test did not build (see $out/vsock-build.log)" >&2
	EXTRA_PROGRAMS="$(command -v iperf3) $(rxe_programs) $vs/vsock_test $(command -v socat)" \
	EXTRA_FILES=/etc/libibverbs.d/rxe.driver \
	LISTS="" OPTS="-a scif_ivshmem.hb_timeout_ms=3000" \
	MORE="$netmods $(rxe_modules gcov "$kdir" "$rel")
		$moddir/net/vmw_vsock/scif_vsock.ko $(ls "$vs"/modules/*.ko 2>/dev/null)" \
		cluster node-loss 2 1800 node-loss-steps
	LISTS="" cluster corrupt 3 400 corrupt-steps
	mods=("$soft" "$objdir/scif.ko" "$objdir/scif_ivshmem.ko")
	LISTS="" cluster dma-cluster 2 600 dma-cluster-steps
	if [ -n "$ntbflags" ]; then
		ntb_cluster cross ntb ntb-cross-steps,ntb-agent-steps
		ntb_cluster windows ntb ntb-windows-steps
		ntb_cluster full ntb-full ntb-full-steps
		ntb_cluster hostile ntb ntb-victim-steps,ntb-hostile-steps
	fi
fi

[ "$runs" -gt 0 ] || die "no coverage data collected"
infos=()
for f in "$out"/data/*.info; do infos+=(-a "$f"); done
lcov -q "${infos[@]}" -o "$out/all.info" $rc_branch
# The driver's own sources, by part; the KUnit suites and the test
# build's hooks (*_kunit.c, *testhooks.c: the peer fuzzer's hooks among
# them) are tests, not driver code.
part() { # name pattern...: data/part-<name>.info
	local name=$1 p args=()
	shift
	for p in "$@"; do args+=("$moddir/$p"); done
	lcov -q -e "$out/all.info" "${args[@]}" -o "$out/part-$name.info" $rc_branch &&
	lcov -q -r "$out/part-$name.info" '*_kunit.c' '*testhooks.c' \
		-o "$out/part-$name.info" $rc_branch
}
part core 'drivers/misc/scif/*.c'
part links 'net/scif/*.c'
part net 'drivers/net/scif/*.c'
part vsock 'net/vmw_vsock/*.c'
part drivers 'drivers/misc/scif/*.c' 'net/scif/*.c' 'drivers/net/scif/*.c' \
	'net/vmw_vsock/*.c'
genhtml -q --branch-coverage -o "$out/html" "$out/part-drivers.info" \
	> "$out/genhtml.log" 2>&1
lcov --list "$out/part-drivers.info" $rc_branch | tee "$out/list.txt"
: > "$out/summary.txt"
for p in core links net vsock drivers; do
	echo "coverage: $p:"
	lcov --summary "$out/part-$p.info" $rc_branch 2>&1 |
		grep -E 'lines|branches|functions'
done | tee "$out/summary.txt"
echo "coverage: $runs runs; report in $out/html/index.html"
