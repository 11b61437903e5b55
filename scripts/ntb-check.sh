# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# shellcheck disable=SC2154 # $top, $out, $BUILD, $CLUSTERS: check.sh's
#
# The NTB part of make check, sourced by scripts/check.sh (called for
# every kernel, after the DMA runs) and scripts/ntb-check-standalone.sh
# (make ntb-check): defines
# ntb_run KERNEL (6.1 | 6.12 | debug), which uses check.sh's record and
# run_test helpers and its $top, $BUILD, $out and $CLUSTERS.
#
#   1. scripts/ntb-deps.sh, then scripts/ntb-modules.sh KERNEL: ntb.ko and
#      the upstream clients from the matching Debian source, into
#      $BUILD/ntb/KERNEL
#   2. make ntb-modules STRICT=1: the emulated NTB driver against them
#   3. one VM with both ports of the emulated NTB (qemu/ntb-vm.sh): the
#      upstream ntb_test.sh, unchanged, one result per test it runs; with
#      ntb_perf over DMA too if the SCIF test build (make test-modules,
#      run by check.sh's vm_run first) made the software DMA provider
#      $BUILD/modules/KERNEL/.../scif_soft_dma.ko
#   4. unless $CLUSTERS is empty: two VMs, one port each, each with its
#      RAM in a shared file and an ivshmem-plain device on the other's
#      (ntb-vm.sh -2 -R): ntb_transport + ntb_netdev, ping and iperf3
#      (step ntb-netdev), then the full-reach window with ntb_tool (step
#      ntb-fullreach: ntb_ivshmem full_reach=1, a page written into the
#      peer's RAM through window 2 and checked there)
# Every VM's kernel log must be clean (qemu/check-log.sh).
#
# The debug kernel is used only if it is already built (this does not
# start its build).  All three kernels can have both VM runs (the debug
# kernel with NTB_TEST_ON_DEBUG=1 and NTB_NETDEV_ON_DEBUG=1): the debug
# kernel's fragment (qemu/debug-kernel.config) turns on IOMMU_SUPPORT for
# per-device DMA operations and IPv4 networking for ntb_netdev.  A kernel
# without per-device DMA operations (CONFIG_DMA_OPS /
# CONFIG_ARCH_HAS_DMA_OPS unset) would get no inbound memory windows from
# the driver, so the VM runs are skipped there, with the reason recorded;
# one without CONFIG_NET skips the ntb_netdev run.

ntb_run() { # kernel-name
	local k=$1 kdir image rel ntb vmdir j conf soft list
	if [ "$k" = debug ] &&
	   [ ! -e "${SCIF_CACHE:-/var/cache/scif}/debug-6.1/arch/x86/boot/bzImage" ]; then
		record SKIP "$k/ntb (the debug kernel is not built)"
		return 0
	fi
	read -r kdir image rel < <(sh "$top/scripts/kernels.sh" resolve "$k") ||
		{ record FAIL "$k/ntb (kernel not available)"; return 0; }
	ntb=$BUILD/ntb/$k
	run_test "$k/ntb/deps" sh "$top/scripts/ntb-deps.sh" || return 0
	run_test "$k/ntb/upstream-modules" sh "$top/scripts/ntb-modules.sh" "$k" || return 0
	run_test "$k/ntb/build-strict" make -s -j"$(nproc)" -C "$top" ntb-modules STRICT=1 \
		KDIR="$kdir" NTB_SYMVERS="$ntb/Module.symvers" NTB_MODDIR="$ntb/hw" ||
		return 0
	conf=$kdir/include/config/auto.conf
	if ! grep -qE '^CONFIG_(ARCH_HAS_)?DMA_OPS=y' "$conf"; then
		record SKIP "$k/ntb (no per-device DMA operations in this kernel: no inbound memory windows)"
		return 0
	fi
	[ -x "$BUILD/qemu/ivshmem-server" ] ||
		make -s -C "$top/qemu" OUTPUT="$BUILD/qemu" > /dev/null ||
		{ record FAIL "$k/ntb/ivshmem-server"; return 0; }
	# The software DMA provider, if the SCIF test build made it.
	soft=$BUILD/modules/$k/tools/testing/selftests/scif/kmod/scif_soft_dma.ko
	[ -e "$soft" ] || soft=
	NTB_DMA_MODULE=$soft \
	run_test "$k/ntb/initramfs" sh "$top/scripts/ntb-initramfs.sh" \
		"$ntb/initrd.cpio" "$rel" "$ntb" || return 0

	vmdir=$out/ntb-$k
	rm -rf "$vmdir"
	# Not on the debug kernel, for make check's time: its scif_ntb_run
	# loads the same driver under KASAN, and 6.1 runs ntb_test.sh on
	# the same source.
	if [ "$k" = debug ] && [ -z "${NTB_TEST_ON_DEBUG:-}" ]; then
		record SKIP "$k/ntb (NTB_TEST_ON_DEBUG=1 runs ntb_test.sh: see testing.rst)"
	else
		echo "check: ntb_test.sh on the emulated NTB, $k ($rel)"
		bash "$top/qemu/ntb-vm.sh" -k "$image" -i "$ntb/initrd.cpio" -o "$vmdir" \
			-t 400 -S "$BUILD/qemu/ivshmem-server" > "$vmdir.log" 2>&1 ||
			echo "check: ntb VM of $k: launcher reported failure"
		guest_results "$vmdir/results.log" "$k/ntb"
		run_test "$k/ntb/kernel-log-clean" bash "$top/qemu/check-log.sh" \
			"$vmdir/console.log"
	fi

	[ -n "$CLUSTERS" ] || return 0
	# Not on the debug kernel, for make check's hour: the same two VMs
	# with SCIF over them run there (scif_ntb_run's windows).
	if [ "$k" = debug ] && [ -z "${NTB_NETDEV_ON_DEBUG:-}" ]; then
		record SKIP "$k/ntb-netdev (NTB_NETDEV_ON_DEBUG=1 runs it: see testing.rst)"
		return 0
	fi
	if [ ! -e "$ntb/ntb_netdev.ko" ]; then
		record SKIP "$k/ntb-netdev (no networking in this kernel)"
		return 0
	fi
	vmdir=$out/ntb-netdev-$k
	rm -rf "$vmdir"
	# Half a minute of TCP, then link flaps (issue 31 item 9) on 6.12,
	# where a guest once died of a corrupt slab after such traffic (the
	# emulator's bug, which scif_guest_cpu_test now guards against; it
	# ran two minutes until then); the other kernels run the short
	# traffic, for make check's time.
	list="ntb-net-steps"
	[ "$k" = 6.12 ] && list="ntb-net-long-steps"
	echo "check: ntb_netdev and the full-reach window between two VMs, $k ($list)"
	SCIF_VM_MEM=512M bash "$top/qemu/ntb-vm.sh" -2 -R -s "$list" \
		-k "$image" -i "$ntb/initrd.cpio" -o "$vmdir" -t 900 \
		-S "$BUILD/qemu/ivshmem-server" > "$vmdir.log" 2>&1 ||
		echo "check: ntb_netdev VMs of $k: launcher reported failure"
	for j in 0 1; do
		guest_results "$vmdir/node$j/results.log" "$k/ntb-netdev/node$j"
		run_test "$k/ntb-netdev/node$j/kernel-log-clean" \
			bash "$top/qemu/check-log.sh" "$vmdir/node$j/console.log"
	done
	return 0
}
