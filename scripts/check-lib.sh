# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# shellcheck disable=SC2154 # $results, $out, $top: set by the caller
#
# What the test scripts share (scripts/check.sh, ntb-check-standalone.sh,
# coverage.sh, bench-nvmeof.sh): record and run_test, which write one
# result line per test into $results and keep each test's output in
# $out/<name>.log; and the lists of a guest kernel's modules the
# clusters load.

record() { # PASS|FAIL|SKIP name
	echo "$1 $2" >> "$results"
	echo "$1 $2"
}

run_test() { # name command... (output kept in $out/<name>.log)
	local name=$1 log
	shift
	log=$out/$(echo "$name" | tr '/ ' '__').log
	if "$@" > "$log" 2>&1; then
		record PASS "$name"
	else
		record FAIL "$name"
		sed 's/^/    /' "$log" | tail -n 40
		return 1
	fi
}

# What a guest said about each test that failed in it: the lines of its
# results channel from the test's start ("#  RUN", a step's begin) to
# its "not ok", at most 30 of them, so that a CI log shows the reason.
fail_context() { # results.log
	[ -e "$1" ] || return 0
	tr -d '\r' < "$1" | awk '
	/^scif-test-begin: |^# +RUN / { n = 0 }
	{ buf[n++ % 30] = $0 }
	/^not ok [0-9]+/ && !/# [Ss][Kk][Ii][Pp]/ {
		for (i = (n > 30 ? n - 30 : 0); i < n; i++)
			print "    | " buf[i % 30]
		n = 0
	}'
}

# Record one line per test of a guest's results channel (parse-results.sh)
# under LABEL; if any failed, show what the guest said about it.
guest_results() { # results.log label
	local verdict name bad=0
	while read -r verdict name; do
		record "$verdict" "$name"
		[ "$verdict" = FAIL ] && bad=1
	done < <(sh "$top/qemu/parse-results.sh" "$1" "$2" "$out")
	[ "$bad" -eq 0 ] || fail_context "$1"
}

# A module of the debug kernel's build tree after the modules it depends
# on (none if it is built in).
debug_module_deps() { # kdir name
	local p d
	p=$(grep -m 1 -E "(^|/)$2\.ko\$" "$1/modules.order") || return 0
	for d in $(modinfo -F depends "$1/$p" | tr , ' '); do
		debug_module_deps "$1" "$d"
	done
	echo "$1/$p"
}

# Modules of a Debian kernel and what they need, each once, in load
# order (modprobe's view of the guest kernel's module tree).
kernel_modules() { # release name...
	local rel=$1 m
	shift
	for m in "$@"; do
		modprobe --show-depends -d "$(sh "$top/scripts/kernels.sh" modbase "$rel")" \
			-S "$rel" "$m" 2> /dev/null
	done | awk '$1 == "insmod" && !seen[$2]++ { print $2 }'
}

# rdma_rxe and the modules it and ib_uverbs need, in load order, from the
# guest kernel's modules or the build tree of the debug kernel (or of its
# gcov twin); and the "crc32" hash it asks the crypto API for (no modprobe
# in the guest to load it).
rxe_modules() { # kernel-name kdir release
	local m
	if [ "$1" = debug ] || [ "$1" = gcov ]; then
		for m in crc32_generic rdma_rxe ib_uverbs; do
			debug_module_deps "$2" "$m"
		done | awk '!seen[$0]++'
		return 0
	fi
	kernel_modules "$3" crc32_generic rdma_rxe ib_uverbs
}

# What scif_rxe_test.sh runs, and the rxe provider libibverbs loads
# (installed by scripts/deps.sh).
rxe_programs() {
	echo /usr/bin/ibv_rc_pingpong /usr/bin/ibv_devinfo /usr/bin/ib_write_bw \
		/usr/bin/ib_read_lat /usr/bin/ib_send_bw /usr/bin/rdma \
		/usr/lib/*/libibverbs/librxe-rdmav*.so
}

# scif_rdma.ko and its test module, after rdma_cm, the user-space
# parts (ib_uverbs, rdma_ucm) and the modules they need (as
# rxe_modules), when the build made them (CONFIG_INFINIBAND).
rdma_modules() { # kernel-name kdir release
	local mod=$BUILD/modules/$1 m
	[ -e "$mod/drivers/infiniband/hw/scif/scif_rdma.ko" ] || return 0
	if [ "$1" = debug ]; then
		for m in rdma_cm ib_uverbs rdma_ucm; do
			debug_module_deps "$2" "$m"
		done | awk '!seen[$0]++'
	else
		kernel_modules "$3" rdma_cm ib_uverbs rdma_ucm
	fi
	echo "$mod/drivers/infiniband/hw/scif/scif_rdma.ko"
	echo "$mod/tools/testing/selftests/scif/kmod/scif_rdma_test.ko"
}

# What scif_nvmeof_test.sh loads (after rdma_modules): the NVMe-oF
# target and host over RDMA, a RAM disk, and what they need, from the
# guest kernel's modules or the debug kernel's build tree (as
# rxe_modules), with two nodes and a scif_rdma.ko.  The debug kernel
# has no NVMe/TCP (nothing to compare with there); its virtio-blk, the
# loss run's disk, is built in.
nvme_modules() { # kernel-name nodes kdir release
	local m
	[ "$2" = 2 ] || return 0
	[ -e "$BUILD/modules/$1/drivers/infiniband/hw/scif/scif_rdma.ko" ] ||
		return 0
	if [ "$1" = debug ]; then
		for m in nvmet-rdma nvme-rdma brd; do
			debug_module_deps "$3" "$m"
		done | awk '!seen[$0]++'
		return 0
	fi
	kernel_modules "$4" nvmet_rdma nvme_rdma nvmet_tcp nvme_tcp brd
}

# What scif_verbs_test.sh runs over libscif_rdma, for 2-node clusters
# (with more nodes, rping and ibv_rc_pingpong: scif_net_mesh.sh):
# ibverbs-utils', rdmacm-utils', perftest's and libfabric-bin's programs,
# and libgcc_s, which glibc loads when a thread exits (rping's do; ldd
# does not list it).
verbs_programs() { # kernel-name nodes
	case $2 in
	2) command -v ibv_devices ibv_devinfo ibv_rc_pingpong rping ib_write_bw \
		ib_read_bw ib_send_bw ib_write_lat ib_send_lat ib_read_lat \
		ucmatose fi_info fi_pingpong ;;
	# scif_net_mesh.sh's, for scif0 on sn
	*) command -v rping ibv_rc_pingpong ;;
	esac | tr '\n' ' '
	/sbin/ldconfig -p | awk '$1 == "libgcc_s.so.1" && /x86-64/ { print $NF; exit }'
}

# What scif_pyverbs_test.sh runs, for 2-node clusters: a tree for the
# guest's root (EXTRA_TREES) with Debian's python3.11 and the part of its
# standard library that unittest and rdma-core's tests use, and pyverbs
# with those tests (scripts/deps.sh unpacks python3-pyverbs), and
# iproute2's ip in /usr/lib/scif-pyverbs/bin; staged
# once in $BUILD/pyverbs-tree, echoed.  Nothing without the unpacked
# package or the interpreter.
pyverbs_tree() { # kernel-name nodes
	local src=${SCIF_CACHE:-/var/cache/scif}/pyverbs t=$BUILD/pyverbs-tree
	[ "$2" = 2 ] || return 0
	[ -x /usr/bin/python3.11 ] && [ -d "$src/usr/lib/python3/dist-packages/pyverbs" ] ||
		return 0
	if [ ! -e "$t/stamp" ] || [ "$src/version" -nt "$t/stamp" ]; then
		rm -rf "$t"
		mkdir -p "$t/usr/bin" "$t/usr/lib/python3/dist-packages" \
			"$t/usr/share/doc/rdma-core"
		cp /usr/bin/python3.11 "$t/usr/bin/"
		rsync -a --exclude test/ --exclude idlelib/ --exclude tkinter/ \
			--exclude turtledemo/ --exclude ensurepip/ --exclude lib2to3/ \
			--exclude pydoc_data/ --exclude 'config-*/' \
			--exclude site-packages/ --exclude dist-packages/ \
			--exclude 'tests/' /usr/lib/python3.11 "$t/usr/lib/"
		cp -a "$src/usr/lib/python3/dist-packages/pyverbs" \
			"$t/usr/lib/python3/dist-packages/"
		cp -a "$src/usr/share/doc/rdma-core/tests" "$t/usr/share/doc/rdma-core/"
		# iproute2's ip, for the tests' "ip -j" (busybox's has no JSON).
		mkdir -p "$t/usr/lib/scif-pyverbs/bin"
		cp /bin/ip "$t/usr/lib/scif-pyverbs/bin/"
		touch "$t/stamp"
	fi
	echo "$t"
}

# What scif_net_mesh.sh's MPI job runs, for clusters of more than two
# nodes: Open MPI's launcher, daemon, components, PMIx's components and
# their data files (Debian's openmpi-bin), and scif_mpi_test, in a tree
# for the guest's root (EXTRA_TREES; qemu/mkinitramfs.sh adds the
# libraries they link), staged once in $BUILD/mpi-tree, echoed.
# Nothing without Open MPI or the program (make selftests with mpicc).
mpi_tree() { # kernel-name nodes
	local t=$BUILD/mpi-tree prog=$BUILD/selftests/scif_mpi_test ma c p
	[ "$2" -gt 2 ] || return 0
	ma=$(gcc -print-multiarch)
	c=/usr/lib/$ma/openmpi/lib/openmpi3 p=/usr/lib/$ma/pmix2
	[ -x /usr/bin/orted ] && [ -d "$c" ] && [ -x "$prog" ] || return 0
	if [ ! -e "$t/stamp" ] || [ "$prog" -nt "$t/stamp" ]; then
		rm -rf "$t"
		mkdir -p "$t/usr/bin" "$t$c" "$t$p/lib/pmix" "$t$p/share" \
			"$t/etc/openmpi" "$t/usr/share/openmpi" "$t/usr/lib/scif-mpi"
		cp /usr/bin/orterun /usr/bin/orted "$t/usr/bin/"
		ln -s orterun "$t/usr/bin/mpirun"
		cp "$c"/*.so "$t$c/"
		cp "$p"/lib/pmix/*.so "$t$p/lib/pmix/"
		cp "$p"/share/pmix-mca-params.conf "$t$p/share/"
		cp /etc/openmpi/openmpi-mca-params.conf \
			/etc/openmpi/openmpi-default-hostfile "$t/etc/openmpi/"
		cp /usr/share/openmpi/help-*.txt "$t/usr/share/openmpi/"
		cp "$prog" "$t/usr/lib/scif-mpi/"
		touch "$t/stamp"
	fi
	echo "$t"
}

# nvme-cli and fio, for the same clusters.
nvme_programs() { # kernel-name nodes
	[ "$2" = 2 ] || return 0
	PATH=$PATH:/usr/sbin command -v nvme fio | tr '\n' ' '
}
