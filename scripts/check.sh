#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The whole test suite (make check): dependencies, static checks, the log
# checker's own tests, the packaging and MPSS-compatibility tests on the
# host, then for each kernel of $KERNELS (default "6.1 6.12 debug") a
# strict module build, a QEMU run of the selftests (and, but on debug,
# one of the installed .debs; on the kernels of $DEBS_NTB_KERNELS, two
# such guests joined by the emulated NTB with the packages' NTB
# modules), runs of clusters of each size in $CLUSTERS (default "2 4";
# on 6.1 those also in $CLUSTERS_6_1, on debug those also in
# $DEBUG_CLUSTERS, default "2"), node loss (kernels of
# $NODE_LOSS_KERNELS), the misbehaving peer (kernels of
# $CORRUPT_KERNELS), device borrows across lost nodes (kernels of
# $LEND_LOSS_KERNELS), the DMA runs (the copy engine on a software DMA
# provider; kernels of $DMA_KERNELS, the 2-node DMA cluster on those of
# $DMA_CLUSTER_KERNELS), the emulated NTB's runs
# (scripts/ntb-check.sh: the upstream ntb_test.sh in one VM,
# ntb_transport + ntb_netdev between two, not on debug) and SCIF over
# that NTB (scripts/scif-ntb-check.sh, the runs of $SCIF_NTB_RUNS; on 6.1
# $SCIF_NTB_RUNS_6_1, on debug $DEBUG_SCIF_NTB_RUNS), whose kernel logs
# must be clean.  What a kernel leaves out is recorded as SKIP with the
# variable that brings it back.  Each stage prints how long it took.
# Ends with the line "N passed, N failed, N skipped"; exits non-zero if
# anything failed.
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$top/build}
KERNELS=${KERNELS:-6.1 6.12 debug}
CLUSTERS=${CLUSTERS-2 4}
# The debug kernel's cluster sizes among $CLUSTERS: four debug guests on
# two cores take too much of make check's hour; make soak NODES=4 runs them.
DEBUG_CLUSTERS=${DEBUG_CLUSTERS-2}
# 6.1's: none.  The debug kernel is the same 6.1 source and runs the
# 2-node cluster under KASAN, 6.12 runs it with NFS over RDMA too; 6.1
# keeps its single VM, the NVMe-oF target's loss and NTB, which are what
# Debian's 6.1 config and modules change.  For make check's time: CI
# stopped the run of 2026-11-30 at its 90 minutes.
CLUSTERS_6_1=${CLUSTERS_6_1-}
# The debug kernel's guests run lean (DEBUG_LEAN=1): the steps marked
# "full" in the step lists, which run kernel code another step runs,
# are left out (qemu/init.sh) and recorded as SKIP.
DEBUG_LEAN=${DEBUG_LEAN-1}
SCIF_NTB_RUNS=${SCIF_NTB_RUNS-windows full node-loss corrupt hostile}
# The debug kernel's: the path only NTB has (staging), and the hostile
# peer below SCIF under KASAN; loss with the link runs on 6.12, node loss
# on the debug kernel over ivshmem, full reach and the corrupt peer
# there over ivshmem too.
DEBUG_SCIF_NTB_RUNS=${DEBUG_SCIF_NTB_RUNS-windows hostile}
# 6.1's: none.  The debug kernel is the same 6.1 source and runs the
# NTB paths under KASAN; 6.1 keeps the NTB core's build and ntb_test.sh
# (ntb_run), which is what a Debian 6.1 host with NTB hardware needs.
SCIF_NTB_RUNS_6_1=${SCIF_NTB_RUNS_6_1-}
# The kernels that run the node-loss cluster (node_loss_run), the
# misbehaving peer's cluster (corrupt_run) and the DMA runs (dma_run):
# not 6.1, whose code is the debug kernel's, to keep make check within
# its hour (testing.rst, "What it runs").  Node loss not on the debug
# kernel either: 12 of its minutes on the machine of 2026-11-29, where
# the whole run came to 86 minutes with it (5181 s), against CI's 90.
NODE_LOSS_KERNELS=${NODE_LOSS_KERNELS-6.12}
CORRUPT_KERNELS=${CORRUPT_KERNELS-6.12 debug}
# The kernels that run the NVMe-oF target's loss (nvmeof_loss_run): not
# the debug kernel, where it took 261 s of the run CI stopped; 6.1 runs
# the same source.
NVMEOF_LOSS_KERNELS=${NVMEOF_LOSS_KERNELS-6.1 6.12}
# The DMA runs not on the debug kernel either, since it took on the
# NVMe-oF loss: 248 to 368 s of its time (DMA_KERNELS="6.12 debug" brings
# them back; make fuzz runs the copy engine's DMA under KASAN).
DMA_KERNELS=${DMA_KERNELS-6.12}
# Of those, the kernels that also run the 2-node DMA cluster (the single
# VM with dmatest and the DMA tests runs on every one of DMA_KERNELS).
DMA_CLUSTER_KERNELS=${DMA_CLUSTER_KERNELS-6.12}
# The kernels whose guests run the packages' NTB modules (scif-ntb-dkms:
# the NTB core built by DKMS from linux-source) between two nodes: 6.1,
# Debian 12's own kernel, which runs no other SCIF-over-NTB cluster here
# (6.12 and the debug kernel run the test build's).
DEBS_NTB_KERNELS=${DEBS_NTB_KERNELS-6.1}
# The kernels whose 2-node cluster with an emulated IOMMU checks that
# VFIO refuses what SCIF maps (vfio_run): Debian's two (the debug kernel
# has neither VFIO nor an IOMMU driver).
VFIO_KERNELS=${VFIO_KERNELS-6.1 6.12}
# The kernels that run the device-borrowing test (scif_lend_test.sh) in a
# cluster of their own (lend_run): the debug kernel, for KASAN and
# lockdep; the kernels of VFIO_KERNELS run it in their VFIO cluster.
LEND_KERNELS=${LEND_KERNELS-debug}
# The kernels that run device borrowing across lost nodes (lend_loss_run:
# a lender killed, restarted, a borrower killed, lenders and a borrower
# failed): 6.12, and the debug kernel for KASAN and lockdep; 6.1 is the
# debug kernel's source.  About 30 s and 80 to 150 s of cluster time.
LEND_LOSS_KERNELS=${LEND_LOSS_KERNELS-6.12 debug}
out=$BUILD/check
results=$out/results.txt

# shellcheck source=scripts/check-lib.sh
. "$top/scripts/check-lib.sh"
# shellcheck source=scripts/ntb-check.sh
. "$top/scripts/ntb-check.sh"

uapi_c90() {
	printf '#include <linux/scif_ioctl.h>\nint main(void) { return SCIF_BIND != 0 ? 0 : 1; }\n' |
		gcc -std=c90 -pedantic-errors -Wall -Werror -I"$top/include/uapi" -x c -o /dev/null -
}

host_tap_tests() { # prefix script [args]: each TAP line of a host-side test
	local prefix=$1 script=$2 line
	shift 2
	while read -r line; do
		case "$line" in
		"ok "*) record PASS "$prefix/${line#ok * - }" ;;
		"not ok "*) record FAIL "$prefix/${line#not ok * - }" ;;
		esac
	done < <(bash "$script" "$@")
}

vm_run() { # kernel-name
	local k=$1 kdir image rel moddir vmdir extra tmo lean
	read -r kdir image rel < <(sh "$top/scripts/kernels.sh" resolve "$k") ||
		{ record FAIL "$k/kernel (not available)"; return; }
	moddir=$BUILD/modules/$k
	run_test "$k/build-strict" make -s -j"$(nproc)" -C "$top" test-modules STRICT=1 SCIF_TEST=1 \
		KDIR="$kdir" MODDIR="$moddir" || return
	vmdir=$out/vm-$k
	# scif_kunit.ko: built only for a kernel with KUnit (scif_kunit.sh).
	# scif_soft_dma.ko and scif_dmabuf_import.ko: scif_dmabuf_test.sh;
	# scif_kmap_client.ko: scif_kmap_test.sh.
	extra="$moddir/tools/testing/selftests/scif/kmod/scif_kapi_test.ko
		$moddir/tools/testing/selftests/scif/kmod/scif_soft_dma.ko
		$moddir/tools/testing/selftests/scif/kmod/scif_dmabuf_import.ko
		$moddir/tools/testing/selftests/scif/kmod/scif_kmap_client.ko"
	[ -e "$moddir/drivers/misc/scif/scif_kunit.ko" ] &&
		extra="$extra $moddir/drivers/misc/scif/scif_kunit.ko"
	# ... and the ivshmem module's own suite, loaded by scif_kunit.sh.
	[ -e "$moddir/drivers/misc/scif/scif_kunit.ko" ] &&
		extra="$extra $moddir/drivers/misc/scif/scif_ivshmem.ko"
	EXTRA_MODULES=$extra \
	sh "$top/qemu/mkinitramfs.sh" "$vmdir.cpio" \
		"$top/tools/testing/selftests/scif/steps" "$BUILD/selftests" \
		"$moddir/drivers/misc/scif/scif.ko"
	echo "check: booting $k ($rel)"
	# 2G: scif_rma_test registers 1 GiB of windows.  The debug kernel's
	# run takes over 10 minutes even alone on the machine: 25 at most.
	tmo=900
	[ "$k" = debug ] && tmo=1500
	lean=$(lean_arg "$k")
	SCIF_VM_TIMEOUT=$tmo SCIF_VM_MEM=2G \
		sh "$top/qemu/run-vm.sh" "$image" "$vmdir.cpio" "$vmdir" ${lean:+"$lean"} ||
		echo "check: $k guest exited with status $?"
	guest_results "$vmdir/results.log" "$k"
	run_test "$k/kernel-log-clean" bash "$top/qemu/check-log.sh" "$vmdir/console.log"
}

# The kernel argument of a lean run (qemu/init.sh) for the debug kernel's
# guests, unless DEBUG_LEAN=0.
lean_arg() { # kernel-name
	[ "$1" = debug ] && [ "$DEBUG_LEAN" = 1 ] && echo scif.lean=1
	return 0
}

cluster_run() { # kernel-name nodes
	local k=$1 n=$2 kdir image rel moddir cdir lists mem args lean
	local sd=$top/tools/testing/selftests/scif
	read -r kdir image rel < <(sh "$top/scripts/kernels.sh" resolve "$k") ||
		return
	moddir=$BUILD/modules/$k
	[ -e "$moddir/drivers/misc/scif/scif_ivshmem.ko" ] || return
	cdir=$out/cluster$n-$k
	rm -rf "$cdir"
	mkdir -p "$cdir"
	# Node 0 also runs the selftests with their peer on node 1; the
	# other nodes run cluster-steps.
	lists=cross-steps,agent-steps
	for j in $(seq 2 $((n - 1))); do lists=$lists,; done
	# scif_kapi_test.ko: node 0 and node 1 test scif_get_pages() across;
	# scif_net.ko, and scif_peer_links.ko that it uses: scif_net_mesh.sh,
	# with three nodes or more; scif_rdma.ko, its test module, the RDMA
	# core and the rdma tool: scif_rdma_test.sh, with two nodes; the
	# NVMe-oF modules, nvme-cli and fio: scif_nvmeof_test.sh, with two
	# nodes (see nvme_modules); the NFS modules, nfs-utils' programs,
	# libtirpc's netconfig and /etc/protocols: scif_nfsrdma_test.sh,
	# with two nodes, not on the debug kernel (see nfs_modules); the
	# RDMA core's user-space modules (rdma_modules), ibverbs-utils',
	# rdmacm-utils' and perftest's programs and the provider
	# libscif_rdma (in the selftests): scif_verbs_test.sh, with two
	# nodes; Python and pyverbs with rdma-core's tests (pyverbs_tree):
	# scif_pyverbs_test.sh, with two nodes; Open MPI and scif_mpi_test
	# (mpi_tree): scif_net_mesh.sh's MPI job, with more nodes;
	# scif_soft_dma.ko and scif_dmabuf_import.ko: scif_dmabuf_test.sh.
	EXTRA_MODULES="$moddir/tools/testing/selftests/scif/kmod/scif_kapi_test.ko
		$moddir/tools/testing/selftests/scif/kmod/scif_soft_dma.ko
		$moddir/tools/testing/selftests/scif/kmod/scif_dmabuf_import.ko
		$moddir/net/scif/scif_peer_links.ko
		$moddir/drivers/net/scif/scif_net.ko
		$(rdma_modules "$k" "$kdir" "$rel")
		$(nvme_modules "$k" "$n" "$kdir" "$rel")
		$(nfs_modules "$k" "$n" "$rel")" \
	EXTRA_PROGRAMS="/usr/bin/rdma $(nvme_programs "$k" "$n")
		$(nfs_programs "$k" "$n") $(verbs_programs "$k" "$n")" \
	EXTRA_FILES="/etc/netconfig /etc/protocols" \
	EXTRA_TREES="$(pyverbs_tree "$k" "$n") $(mpi_tree "$k" "$n")" \
	EXTRA_LISTS="$sd/cross-steps $sd/agent-steps" \
	sh "$top/qemu/mkinitramfs.sh" "$cdir.cpio" "$sd/cluster-steps" \
		"$BUILD/selftests" "$moddir/drivers/misc/scif/scif.ko" \
		"$moddir/drivers/misc/scif/scif_ivshmem.ko"
	# 2 nodes of 4 GiB: RAM above the PCI hole, translated by the layout
	# each node publishes (scif_highmem_cluster_test; ivshmem.rst).  On
	# the debug kernel (KASAN, kmemleak) a 4 GiB node under TCG once
	# stalled past the 1 s heartbeat timeout (testing.rst): 5 s there.
	mem=512M args=
	[ "$n" -eq 2 ] && mem=4G
	[ "$n" -eq 2 ] && [ "$k" = debug ] && args=scif_ivshmem.hb_timeout_ms=5000
	lean=$(lean_arg "$k")
	[ -z "$lean" ] || args="${args:+$args }$lean"
	echo "check: booting a $n-node cluster of $k ($rel), $mem each"
	bash "$top/qemu/cluster.sh" -n "$n" -k "$image" -i "$cdir.cpio" \
		-o "$cdir" -m "$mem" -t 1200 -R -s "$lists" -S "$BUILD/qemu/ivshmem-server" \
		${args:+-a "$args"} \
		> "$cdir/launcher.log" 2>&1 ||
		echo "check: $n-node cluster of $k: launcher reported failure"
	nodes_results "$cdir" "$k/cluster$n" "$n"
}

# What scif_nfsrdma_test.sh loads (after rdma_modules): nfsd, the NFSv4
# client and rpcrdma (svcrdma and xprtrdma), from the guest kernel's
# modules, with two nodes and a scif_rdma.ko.  None for the debug
# kernel, which is built without NFS (scripts/debug-kernel.sh).
nfs_modules() { # kernel-name nodes release
	[ "$2" = 2 ] && [ "$1" != debug ] || return 0
	[ -e "$BUILD/modules/$1/drivers/infiniband/hw/scif/scif_rdma.ko" ] ||
		return 0
	kernel_modules "$3" nfsd nfsv4 rpcrdma
}

# The NFS server's and client's programs (rpc.mountd, exportfs,
# mount.nfs: scripts/deps.sh unpacks them) and libtirpc's
# configuration, for the same clusters.
nfs_programs() { # kernel-name nodes
	local d=${SCIF_CACHE:-/var/cache/scif}/nfs-utils
	[ "$2" = 2 ] && [ "$1" != debug ] || return 0
	[ -x "$d/usr/sbin/rpc.mountd" ] || return 0
	echo "$d/usr/sbin/rpc.mountd $d/usr/sbin/exportfs $d/sbin/mount.nfs"
}

# The results of every node of a cluster, and a check of its console.
nodes_results() { # cluster-dir name nodes
	local j
	for ((j = 0; j < $3; j++)); do
		guest_results "$1/node$j/results.log" "$2/node$j"
		run_test "$2/node$j/kernel-log-clean" \
			bash "$top/qemu/check-log.sh" "$1/node$j/console.log"
	done
}

# The results of a 2-node cluster whose node 1 was restarted: node 0's,
# node 1's last life's (its earlier lives end by design), and a check
# of every console log of every life.
restart_results() { # cluster-dir name
	local cdir=$1 name=$2 last log
	guest_results "$cdir/node0/results.log" "$name/node0"
	last=$(ls "$cdir/node1"/results.*.log 2>/dev/null | sort -V | tail -n 1)
	guest_results "${last:-$cdir/node1/results.log}" "$name/node1-last-life"
	for log in "$cdir"/node*/console*.log; do
		run_test "$name/$(basename "$(dirname "$log")")/$(basename "$log" .log)-clean" \
			bash "$top/qemu/check-log.sh" "$log"
	done
}

# A 2-node cluster in which node 0 runs scif_net's test (node 1 killed
# and restarted once under traffic), rxe's over scif_net, scif_vsock's
# (node 1 killed and restarted once more), then has node 1 killed and
# restarted three times; node 1's earlier lives end by design, so only
# its last counts.
node_loss_run() { # kernel-name
	local k=$1 kdir image rel moddir cdir args
	read -r kdir image rel < <(sh "$top/scripts/kernels.sh" resolve "$k") ||
		return
	moddir=$BUILD/modules/$k
	[ -e "$moddir/drivers/misc/scif/scif_ivshmem.ko" ] || return
	cdir=$out/node-loss-$k
	rm -rf "$cdir"
	mkdir -p "$cdir"
	# scif_net_test.sh runs first: scif_net.ko (with scif_peer_links.ko,
	# which scif_vsock.ko uses too), iperf3 (scripts/deps.sh);
	# then scif_rxe_test.sh: rdma_rxe, the verbs programs; then
	# scif_vsock_test.sh: scif_vsock.ko, the guest's vsock modules,
	# the kernel's vsock_test (scripts/vsock-test-build.sh) and socat.
	local vs=$BUILD/vsock/$k vsmods=
	if [ -e "$moddir/net/vmw_vsock/scif_vsock.ko" ] &&
		run_test "$k/node-loss/vsock-test-build" \
			sh "$top/scripts/vsock-test-build.sh" "$k" "$vs"; then
		vsmods="$moddir/net/vmw_vsock/scif_vsock.ko $(ls "$vs"/modules/*.ko)"
	fi
	EXTRA_MODULES="$moddir/net/scif/scif_peer_links.ko $moddir/drivers/net/scif/scif_net.ko
		$(rxe_modules "$k" "$kdir" "$rel") $vsmods" \
	EXTRA_PROGRAMS="$(command -v iperf3) $(rxe_programs)${vsmods:+ $vs/vsock_test $(command -v socat)}" \
	EXTRA_FILES=/etc/libibverbs.d/rxe.driver \
	sh "$top/qemu/mkinitramfs.sh" "$cdir.cpio" \
		"$top/tools/testing/selftests/scif/node-loss-steps" "$BUILD/selftests" \
		"$moddir/drivers/misc/scif/scif.ko" \
		"$moddir/drivers/misc/scif/scif_ivshmem.ko"
	echo "check: node loss and restart in a 2-node cluster of $k"
	# On the debug kernel a loaded guest under TCG misses the 1 s
	# heartbeat timeout now and then (node 1 was dropped during
	# scif_vsock_test.sh's 40,000 messages, 2026-11-28): 3 s there;
	# scif_node_loss_test takes its bounds from the parameter.
	args=
	[ "$k" = debug ] && args=scif_ivshmem.hb_timeout_ms=3000
	# About 7 minutes on the debug kernel: 15 at most.
	bash "$top/qemu/cluster.sh" -n 2 -k "$image" -i "$cdir.cpio" -o "$cdir" \
		-t 900 -S "$BUILD/qemu/ivshmem-server" ${args:+-a "$args"} \
		> "$cdir/launcher.log" 2>&1 ||
		echo "check: node-loss cluster of $k: launcher reported failure"
	restart_results "$cdir" "$k/node-loss"
}

# The NVMe-oF target killed mid-I/O (scif_nvmeof_test.sh loss): a
# 2-node cluster whose nodes have a virtio-blk disk each (cluster.sh
# -D), node 1 the target on its disk, killed and booted again, node 0
# the host that must reconnect and lose nothing.
nvmeof_loss_run() { # kernel-name
	local k=$1 kdir image rel moddir cdir disk mem args
	read -r kdir image rel < <(sh "$top/scripts/kernels.sh" resolve "$k") ||
		return
	moddir=$BUILD/modules/$k
	[ -e "$moddir/drivers/infiniband/hw/scif/scif_rdma.ko" ] || return
	cdir=$out/nvmeof-loss-$k
	rm -rf "$cdir"
	mkdir -p "$cdir"
	# virtio_blk and, on 6.1, virtio and its PCI transport, in load order
	# (built into the debug kernel).
	disk=
	[ "$k" = debug ] || disk=$(kernel_modules "$rel" virtio_pci virtio_blk)
	EXTRA_MODULES="$moddir/net/scif/scif_peer_links.ko
		$moddir/drivers/net/scif/scif_net.ko
		$(rdma_modules "$k" "$kdir" "$rel")
		$(nvme_modules "$k" 2 "$kdir" "$rel") $disk" \
	EXTRA_PROGRAMS="/usr/bin/rdma $(nvme_programs "$k" 2)" \
	sh "$top/qemu/mkinitramfs.sh" "$cdir.cpio" \
		"$top/tools/testing/selftests/scif/nvmeof-loss-steps" "$BUILD/selftests" \
		"$moddir/drivers/misc/scif/scif.ko" \
		"$moddir/drivers/misc/scif/scif_ivshmem.ko"
	echo "check: the NVMe-oF target killed mid-I/O, a 2-node cluster of $k"
	# The debug kernel's nodes (KASAN's shadow) get 2 GiB and, loaded
	# under TCG, a heartbeat timeout of 5 s (as in cluster_run).
	mem=1G args=
	[ "$k" = debug ] && mem=2G args=scif_ivshmem.hb_timeout_ms=5000
	bash "$top/qemu/cluster.sh" -n 2 -k "$image" -i "$cdir.cpio" -o "$cdir" \
		-m "$mem" -D 64 -t 900 -S "$BUILD/qemu/ivshmem-server" \
		${args:+-a "$args"} > "$cdir/launcher.log" 2>&1 ||
		echo "check: nvmeof-loss cluster of $k: launcher reported failure"
	restart_results "$cdir" "$k/nvmeof-loss"
}

# A 3-node cluster in which node 1 writes garbage into what node 0 reads
# (node messages, ring counts, its bootstrap slot) and reloads its modules
# after each kind that costs it its place; node 0 checks the outcome,
# and that its traffic with node 2, a bystander, carries on.
corrupt_run() { # kernel-name
	local k=$1 kdir image rel moddir cdir
	read -r kdir image rel < <(sh "$top/scripts/kernels.sh" resolve "$k") ||
		return
	moddir=$BUILD/modules/$k
	[ -e "$moddir/drivers/misc/scif/scif_ivshmem.ko" ] || return
	cdir=$out/corrupt-$k
	rm -rf "$cdir"
	mkdir -p "$cdir"
	sh "$top/qemu/mkinitramfs.sh" "$cdir.cpio" \
		"$top/tools/testing/selftests/scif/corrupt-steps" "$BUILD/selftests" \
		"$moddir/drivers/misc/scif/scif.ko" \
		"$moddir/drivers/misc/scif/scif_ivshmem.ko"
	echo "check: a misbehaving peer in a 3-node cluster of $k"
	# 512M: the debug kernel (KASAN's shadow) could not unpack the
	# initramfs, all the selftests, into cluster.sh's 256M for 3 nodes.
	bash "$top/qemu/cluster.sh" -n 3 -m 512M -k "$image" -i "$cdir.cpio" \
		-o "$cdir" -R -t 400 -S "$BUILD/qemu/ivshmem-server" \
		> "$cdir/launcher.log" 2>&1 ||
		echo "check: corrupt cluster of $k: launcher reported failure"
	nodes_results "$cdir" "$k/corrupt" 3
}

# A 2-node cluster whose nodes have QEMU's IOMMU and an edu device
# (cluster.sh -I): remote mmap, then VFIO_IOMMU_MAP_DMA of what SCIF
# maps must fail (scif_vfio_test.sh), with the guest kernel's VFIO;
# device borrowing (scif_lend_test.sh) and device windows over the NVMe
# controller's memory buffer on vfio-pci (scif_devmem_test.sh).
vfio_run() { # kernel-name
	local k=$1 kdir image rel moddir cdir kapi soft
	read -r kdir image rel < <(sh "$top/scripts/kernels.sh" resolve "$k") ||
		return
	moddir=$BUILD/modules/$k
	[ -e "$moddir/drivers/misc/scif/scif_ivshmem.ko" ] || return
	kapi=$moddir/tools/testing/selftests/scif/kmod/scif_kapi_test.ko
	soft=$moddir/tools/testing/selftests/scif/kmod/scif_soft_dma.ko
	cdir=$out/vfio-$k
	rm -rf "$cdir"
	mkdir -p "$cdir"
	EXTRA_MODULES="$(kernel_modules "$rel" vfio_iommu_type1 vfio-pci) $kapi $soft" \
	sh "$top/qemu/mkinitramfs.sh" "$cdir.cpio" \
		"$top/tools/testing/selftests/scif/vfio-steps" "$BUILD/selftests" \
		"$moddir/drivers/misc/scif/scif.ko" \
		"$moddir/drivers/misc/scif/scif_ivshmem.ko"
	echo "check: VFIO and SCIF's mappings in a 2-node cluster of $k"
	bash "$top/qemu/cluster.sh" -n 2 -k "$image" -i "$cdir.cpio" -o "$cdir" \
		-I -t 400 -S "$BUILD/qemu/ivshmem-server" \
		> "$cdir/launcher.log" 2>&1 ||
		echo "check: VFIO cluster of $k: launcher reported failure"
	nodes_results "$cdir" "$k/vfio" 2
	# The host reads each drive's image (cluster.sh -I keeps them): the
	# blocks node j's drive wrote from node 1-j's window are there.
	for j in 0 1; do
		run_test "$k/vfio/node$j/image-holds-write-from-remote" \
			"$BUILD/selftests/scif_nvme_test" image "$cdir/node$j.nvme" $((1 - j))
	done
}

# Device borrowing (scif_lend_test.sh, lend-steps; devices.rst) in the
# VFIO cluster's shape (cluster.sh -I: an edu device per node, which the
# test lends; a kernel without an IOMMU driver ignores the emulated
# IOMMU, which the test does not need), for the debug kernel; then
# device windows (scif_devmem_test.sh) over the NVMe controller's
# memory buffer, on scif_lend.
lend_run() { # kernel-name
	local k=$1 kdir image rel moddir cdir kapi soft
	read -r kdir image rel < <(sh "$top/scripts/kernels.sh" resolve "$k") ||
		return
	moddir=$BUILD/modules/$k
	[ -e "$moddir/drivers/misc/scif/scif_ivshmem.ko" ] || return
	kapi=$moddir/tools/testing/selftests/scif/kmod/scif_kapi_test.ko
	soft=$moddir/tools/testing/selftests/scif/kmod/scif_soft_dma.ko
	cdir=$out/lend-$k
	rm -rf "$cdir"
	mkdir -p "$cdir"
	EXTRA_MODULES="$kapi $soft" \
	sh "$top/qemu/mkinitramfs.sh" "$cdir.cpio" \
		"$top/tools/testing/selftests/scif/lend-steps" "$BUILD/selftests" \
		"$moddir/drivers/misc/scif/scif.ko" \
		"$moddir/drivers/misc/scif/scif_ivshmem.ko"
	echo "check: device borrowing in a 2-node cluster of $k"
	# The heartbeat as in node_loss_run for a loaded debug guest.
	bash "$top/qemu/cluster.sh" -n 2 -k "$image" -i "$cdir.cpio" -o "$cdir" \
		-I -t 600 -S "$BUILD/qemu/ivshmem-server" \
		-a scif_ivshmem.hb_timeout_ms=3000 \
		> "$cdir/launcher.log" 2>&1 ||
		echo "check: lend cluster of $k: launcher reported failure"
	nodes_results "$cdir" "$k/lend" 2
}

# Borrows ended by lost nodes (scif_lend_loss_test.sh, lend-loss-steps;
# devices.rst) in a 2-node cluster of the lend cluster's shape
# (cluster.sh -I, an edu device per node): node 0 drives, node 1 is
# killed as a lender, restarted (a new epoch), killed as a borrower,
# restarted, fails as a lender and as a borrower (bad counts) and as a
# lender again (paused); node 1's earlier lives end by design, so only
# its last counts.
lend_loss_run() { # kernel-name
	local k=$1 kdir image rel moddir cdir
	read -r kdir image rel < <(sh "$top/scripts/kernels.sh" resolve "$k") ||
		return
	moddir=$BUILD/modules/$k
	[ -e "$moddir/drivers/misc/scif/scif_ivshmem.ko" ] || return
	cdir=$out/lend-loss-$k
	rm -rf "$cdir"
	mkdir -p "$cdir"
	sh "$top/qemu/mkinitramfs.sh" "$cdir.cpio" \
		"$top/tools/testing/selftests/scif/lend-loss-steps" "$BUILD/selftests" \
		"$moddir/drivers/misc/scif/scif.ko" \
		"$moddir/drivers/misc/scif/scif_ivshmem.ko"
	echo "check: device borrows across lost nodes in a 2-node cluster of $k"
	# The heartbeat as in lend_run; the test's bounds follow it.  At
	# most about 150 s on the debug kernel (2026-12-03): 400 at most.
	bash "$top/qemu/cluster.sh" -n 2 -k "$image" -i "$cdir.cpio" -o "$cdir" \
		-I -t 400 -S "$BUILD/qemu/ivshmem-server" \
		-a scif_ivshmem.hb_timeout_ms=3000 \
		> "$cdir/launcher.log" 2>&1 ||
		echo "check: lend-loss cluster of $k: launcher reported failure"
	restart_results "$cdir" "$k/lend-loss"
}

# The copy engine on DMA channels: the test build's software DMA provider
# (scif_soft_dma.ko, loaded before scif.ko) in one VM, where the kernel's
# own dmatest (built from the matching Debian source) runs on it first,
# then the RMA, fence and DMA tests; then a 2-node cluster whose engines
# copy to and from each other's apertures by DMA.
dma_run() { # kernel-name
	local k=$1 kdir image rel moddir soft dmat vmdir cdir
	local sd=$top/tools/testing/selftests/scif
	read -r kdir image rel < <(sh "$top/scripts/kernels.sh" resolve "$k") ||
		return
	moddir=$BUILD/modules/$k
	soft=$moddir/tools/testing/selftests/scif/kmod/scif_soft_dma.ko
	[ -e "$soft" ] || return
	dmat=$BUILD/dmatest/$k
	run_test "$k/dma/dmatest-build" \
		sh "$top/scripts/dmatest-module.sh" "$kdir" "$dmat" "$k" || return
	vmdir=$out/dma-$k
	EXTRA_MODULES="$soft $dmat/dmatest.ko" \
	sh "$top/qemu/mkinitramfs.sh" "$vmdir.cpio" "$sd/dma-steps" \
		"$BUILD/selftests" "$soft" "$moddir/drivers/misc/scif/scif.ko"
	echo "check: booting $k with a software DMA provider"
	SCIF_VM_MEM=2G sh "$top/qemu/run-vm.sh" "$image" "$vmdir.cpio" "$vmdir" ||
		echo "check: $k DMA guest exited with status $?"
	guest_results "$vmdir/results.log" "$k/dma"
	run_test "$k/dma/kernel-log-clean" bash "$top/qemu/check-log.sh" "$vmdir/console.log"

	[ -n "$CLUSTERS" ] || return
	if ! [[ " $DMA_CLUSTER_KERNELS " = *" $k "* ]]; then
		record SKIP "$k/dma-cluster (not in DMA_CLUSTER_KERNELS: see testing.rst)"
		return
	fi
	cdir=$out/dma-cluster-$k
	rm -rf "$cdir"
	mkdir -p "$cdir"
	sh "$top/qemu/mkinitramfs.sh" "$cdir.cpio" "$sd/dma-cluster-steps" \
		"$BUILD/selftests" "$soft" "$moddir/drivers/misc/scif/scif.ko" \
		"$moddir/drivers/misc/scif/scif_ivshmem.ko"
	echo "check: a 2-node cluster of $k copying by DMA"
	bash "$top/qemu/cluster.sh" -n 2 -k "$image" -i "$cdir.cpio" -o "$cdir" \
		-t 600 -S "$BUILD/qemu/ivshmem-server" \
		> "$cdir/launcher.log" 2>&1 ||
		echo "check: DMA cluster of $k: launcher reported failure"
	nodes_results "$cdir" "$k/dma-cluster" 2
}

# SCIF over the emulated NTB (scripts/scif-ntb-check.sh prints its own
# result lines; they join ours), after ntb_run built ntb.ko for KERNEL.
scif_ntb_run() { # kernel-name
	local k=$1 runs=$SCIF_NTB_RUNS
	[ "$k" = debug ] && runs=$DEBUG_SCIF_NTB_RUNS
	[ "$k" = 6.1 ] && [ -n "$runs" ] && runs=$SCIF_NTB_RUNS_6_1
	if [ -z "$runs" ] && [ -n "$CLUSTERS" ]; then
		record SKIP "$k/scif-ntb (no runs for this kernel: see testing.rst)"
		return 0
	fi
	[ -n "$CLUSTERS" ] || return 0
	echo "check: SCIF over the emulated NTB, $k: $runs"
	# shellcheck disable=SC2086 # the runs are words
	bash "$top/scripts/scif-ntb-check.sh" "$k" $runs |
		grep -v '^[0-9]* passed, '
	cat "$BUILD/scif-ntb/$k/results.txt" >> "$results"
}

# What the host boots, which scripts/deps.sh must leave as it was: the
# kernel images in /boot and those dpkg has installed, and GRUB's
# default (its setting and its saved entry).
boot_state() {
	ls /boot/vmlinuz-* 2> /dev/null
	dpkg-query -W -f '${Status} ${Package} ${Version}\n' 'linux-image-*' 2> /dev/null |
		awk '$3 == "installed" { print $4, $5 }'
	grep -s '^GRUB_DEFAULT=' /etc/default/grub
	grub-editenv list 2> /dev/null
	return 0
}

# The stages of the run (one guest or cluster each, or the packages'
# guest), planned first: the loop over the kernels runs twice, the first
# time (planning=1) only counting its stages, so that each is announced
# as "stage K of N" with the time so far and an estimate of the time
# left, from the last run's time of each stage left ($BUILD/check-times,
# written at the end of every run; else scripts/check-times, a run's
# figures kept with the sources).
planning=0 stage_n=0 stage_k=0
declare -a stage_keys=()
times_new=$out/times.new

skip() { # name: a SKIP record, but not while planning
	[ "$planning" = 1 ] || record SKIP "$1"
}

stage_key() { # command...: the stage's name, e.g. "cluster_run 6.12 4"
	local w key=
	if [ "$1" = host_tap_tests ]; then set -- "$2" "$4"; else set -- "$1" "${2:-}" "${3:-}"; fi
	for w in "$@"; do
		[ -z "$w" ] || key="${key:+$key }$w"
	done
	echo "$key"
}

# Seconds the stages from index $1 on took last time ("?" if any is unknown).
time_left() { # first index
	local i key t sum=0 unknown=0 file=$BUILD/check-times
	[ -s "$file" ] || file=$top/scripts/check-times
	for ((i = $1; i < ${#stage_keys[@]}; i++)); do
		key=${stage_keys[i]}
		t=$(awk -v k="$key" '{ t = $NF; $NF = ""; sub(/ +$/, "") }
			$0 == k { print t; exit }' "$file" 2> /dev/null)
		if [ -n "$t" ]; then sum=$((sum + t)); else unknown=$((unknown + 1)); fi
	done
	if [ "$unknown" -gt 0 ]; then echo "?"; else echo "$sum"; fi
}

# While a stage runs: each step its guests finish, as it finishes (the
# "scif-test-end" lines of results logs written since the stage began).
watch_steps() { # stamp
	local f n
	declare -A seen=()
	while sleep 15; do
		while read -r f; do
			n=$(wc -l < "$f")
			[ "$n" -gt "${seen[$f]:-0}" ] || continue
			sed -n "$((${seen[$f]:-0} + 1)),${n}p" "$f" | tr -d '\r' |
				awk -v w="${f#"$BUILD"/}" '/^scif-test-end: / {
					print "check:   " w ": " $2 " " $3 }'
			seen[$f]=$n
		done < <(find "$BUILD" -name 'results*.log' -newer "$1" 2> /dev/null)
	done
}

stage() { # command...: counted while planning; else run, announced and timed
	local key t0 left watcher stamp=$out/.stage-start
	key=$(stage_key "$@")
	if [ "$planning" = 1 ]; then
		stage_keys+=("$key")
		stage_n=$((stage_n + 1))
		return 0
	fi
	left=$(time_left "$stage_k")
	stage_k=$((stage_k + 1))
	[ "$left" = "?" ] && left="no estimate" || left="about $(( (left + 59) / 60 )) min left"
	echo "check: stage $stage_k of $stage_n, at $(( ($(date +%s) - start) / 60 )) min ($left): $key"
	t0=$(date +%s)
	touch "$stamp"
	watch_steps "$stamp" &
	watcher=$!
	"$@"
	kill "$watcher" 2> /dev/null
	wait "$watcher" 2> /dev/null
	echo "check: $key took $(( $(date +%s) - t0 )) s"
	echo "$key $(( $(date +%s) - t0 ))" >> "$times_new"
}

mkdir -p "$out"
: > "$results"
start=$(date +%s)

boot_before=$(boot_state)
sh "$top/scripts/deps.sh" || { echo "check: installing dependencies failed"; echo "0 passed, 1 failed"; exit 1; }
boot_after=$(boot_state)
if [ "$boot_before" = "$boot_after" ]; then
	record PASS deps/host-boot-unchanged
else
	record FAIL deps/host-boot-unchanged
	diff <(echo "$boot_before") <(echo "$boot_after") > "$out/deps_host-boot-unchanged.log"
fi
sh "$top/scripts/kernel-source.sh" > /dev/null || { echo "0 passed, 1 failed"; exit 1; }
# Packaging (issue 15): dkms, debhelper, lintian for test-packaging.sh.
sh "$top/scripts/pkg-deps.sh" || { echo "check: installing packaging tools failed"; echo "0 passed, 1 failed"; exit 1; }

run_test lint/checkpatch-and-shellcheck make -s -C "$top" lint
run_test lint/uapi-header-c90 uapi_c90
host_tap_tests logcheck "$top/qemu/tests/test-check-log.sh"
host_tap_tests parse-results "$top/qemu/tests/test-parse-results.sh"
host_tap_tests ivshmem-server "$top/qemu/tests/test-ivshmem-server.sh" "$BUILD/qemu"
run_test lib/build make -s -C "$top" lib
run_test selftests/build make -s -C "$top" selftests
# Packaging and MPSS compatibility, host side (issue 15): a few minutes.
host_tap_tests compat "$top/tools/lib/scif/compat/test-compat.sh" "$BUILD/lib" "$BUILD/compat"
host_tap_tests packaging "$top/scripts/test-packaging.sh" "$BUILD/packaging"
# The RPM spec for RHEL-family hosts: rpmbuild and rpmlint, seconds.
host_tap_tests rpm "$top/scripts/test-rpm.sh" "$BUILD/rpm"
# The VM guide's generator (QEMU command lines, libvirt XML): seconds.
host_tap_tests vm-config "$top/scripts/test-vm-config.sh" "$BUILD/vm-config"
# make help, tools and docs, pkg-config's names: seconds.
host_tap_tests make "$top/scripts/test-make.sh" "$BUILD"
# The launcher's own tests (kill/restart, cleanup on every exit path).
[ -n "$CLUSTERS" ] && host_tap_tests cluster-launcher "$top/qemu/tests/test-cluster.sh"
# Every stage of every kernel, in order (run twice: see stage()).
kernel_stages() {
	for k in $KERNELS; do
		stage vm_run "$k"
		# The .debs of the packaging tests, installed in a guest (issue 15).
		[ "$k" = debug ] ||
			stage host_tap_tests debs "$top/scripts/test-debs-guest.sh" "$k" "$BUILD/packaging" "$out/debs-$k"
		# ... and two joined by the emulated NTB with scif-ntb-dkms's
		# modules (issue 35).
		if [[ " $DEBS_NTB_KERNELS " = *" $k "* ]]; then
			stage host_tap_tests debs-ntb "$top/scripts/test-debs-guest.sh" "$k" "$BUILD/packaging" "$out/debs-ntb-$k" ntb
		elif [ "$k" != debug ]; then
			skip "$k/debs-guest-ntb (not in DEBS_NTB_KERNELS: see testing.rst)"
		fi
		for n in $CLUSTERS; do
			if [ "$k" = debug ] && ! [[ " $DEBUG_CLUSTERS " = *" $n "* ]]; then
				skip "$k/cluster$n (not in DEBUG_CLUSTERS: see testing.rst)"
				continue
			fi
			if [ "$k" = 6.1 ] && ! [[ " $CLUSTERS_6_1 " = *" $n "* ]]; then
				skip "$k/cluster$n (not in CLUSTERS_6_1: see testing.rst)"
				continue
			fi
			stage cluster_run "$k" "$n"
		done
		if [ -n "$CLUSTERS" ] && [[ " $NODE_LOSS_KERNELS " = *" $k "* ]]; then
			stage node_loss_run "$k"
		elif [ -n "$CLUSTERS" ]; then
			skip "$k/node-loss (not in NODE_LOSS_KERNELS: see testing.rst)"
		fi
		if [ -n "$CLUSTERS" ] && [[ " $NVMEOF_LOSS_KERNELS " = *" $k "* ]]; then
			stage nvmeof_loss_run "$k"
		elif [ -n "$CLUSTERS" ]; then
			skip "$k/nvmeof-loss (not in NVMEOF_LOSS_KERNELS: see testing.rst)"
		fi
		if [ -n "$CLUSTERS" ] && [[ " $CORRUPT_KERNELS " = *" $k "* ]]; then
			stage corrupt_run "$k"
		elif [ -n "$CLUSTERS" ]; then
			skip "$k/corrupt (not in CORRUPT_KERNELS: see testing.rst)"
		fi
		if [ -n "$CLUSTERS" ] && [[ " $VFIO_KERNELS " = *" $k "* ]]; then
			stage vfio_run "$k"
		elif [ -n "$CLUSTERS" ]; then
			skip "$k/vfio (not in VFIO_KERNELS: see testing.rst)"
		fi
		if [ -n "$CLUSTERS" ] && [[ " $LEND_KERNELS " = *" $k "* ]]; then
			stage lend_run "$k"
		elif [ -n "$CLUSTERS" ] && ! [[ " $VFIO_KERNELS " = *" $k "* ]]; then
			skip "$k/lend (not in LEND_KERNELS: see testing.rst)"
		fi
		if [ -n "$CLUSTERS" ] && [[ " $LEND_LOSS_KERNELS " = *" $k "* ]]; then
			stage lend_loss_run "$k"
		elif [ -n "$CLUSTERS" ]; then
			skip "$k/lend-loss (not in LEND_LOSS_KERNELS: see testing.rst)"
		fi
		if [[ " $DMA_KERNELS " = *" $k "* ]]; then
			stage dma_run "$k"
		else
			skip "$k/dma (not in DMA_KERNELS: see testing.rst)"
		fi
		stage ntb_run "$k"
		stage scif_ntb_run "$k"
	done
}
: > "$times_new"
planning=1
kernel_stages
planning=0
kernel_stages
mv "$times_new" "$BUILD/check-times"

passed=$(grep -c '^PASS' "$results")
failed=$(grep -c '^FAIL' "$results")
skipped=$(grep -c '^SKIP' "$results")
echo
echo "check: finished in $(( $(date +%s) - start )) s; results in $results"
# Each failure with the last lines its test printed (a guest's test:
# those after the test before it, parse-results.sh's LOGDIR), so that the
# end of a CI log (often all of it that is shown) says why.
n=0
grep '^FAIL' "$results" | while read -r _ name; do
	echo "check: FAIL $name"
	n=$((n + 1))
	log=$out/$(echo "$name" | tr '/ ' '__').log
	{ [ "$n" -le 20 ] && [ -s "$log" ]; } || continue
	tail -n 10 "$log" | cut -c 1-200 | sed 's/^/check:     /'
done
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
