# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# Sourced by scripts/bench.sh, scripts/bench-ntb.sh, scripts/bench-nvmeof.sh,
# scripts/bench-verbs.sh and scripts/bench-mpi.sh.

# Every bench guest's kernel command line gets $BENCH_GUEST_ARGS (default
# none), for experiments with the guests' configuration: nogbpages, say,
# in the search for RMA by CPU's two speeds
# (Documentation/scif/performance.rst, "RMA by CPU's two speeds,
# narrowed down").
# shellcheck disable=SC2034 # used by the scripts that source this one
guest_args=${BENCH_GUEST_ARGS-}

# iperf3_rows SETUP: a guest's results.log on stdin; for each test whose
# summary the guest printed as "# iperf3-summary[ VIA]: <iperf3 line>"
# (VIA iperf3 when the line names none), one bench row from its last
# receiver line (the [SUM] line of a run with -P):
# "SETUP,bw,VIA,131072,SECONDS,,,,MB/s" (iperf3's 128 KiB writes; its
# bit rate over 8).
iperf3_rows() {
	tr -d '\r' | awk -v setup="$1" '
		$1 == "#" && $2 ~ /^iperf3-summary/ && /receiver/ {
			via = "iperf3"
			if ($2 != "iperf3-summary:") { via = $3; sub(/:$/, "", via) }
			r = ""
			for (i = 1; i < NF; i++) {
				if ($i ~ /^[0-9.]+-[0-9.]+$/) { split($i, t, "-"); secs = t[2] }
				if ($(i + 1) ~ /bits\/sec$/) {
					r = $i; u = substr($(i + 1), 1, 1)
					if (u == "K") r /= 1000
					else if (u == "G") r *= 1000
					else if (u != "M") r /= 1000000
				}
			}
			if (r == "") next
			if (!(via in row)) order[++n] = via
			row[via] = sprintf("%s,bw,%s,131072,%g,,,,%.1f", setup, via, secs, r / 8)
		}
		END { for (k = 1; k <= n; k++) print row[order[k]] }'
}

# shellcheck disable=SC2154 # top and BUILD: set by the sourcing script
# bench_rdma_build NAME: the build of the 2-node RDMA parts (bench-nvmeof.sh,
# bench-verbs.sh) for the kernel of the rest of the bench: sets $rel,
# $image and $moddir ($BUILD/modules/<release>, which check-lib.sh's
# lists take as the kernel's name); fails, saying so as NAME, for a
# kernel without RDMA.
bench_rdma_build() {
	rel=$(sh "$top/scripts/kernels.sh" default)
	image=$(sh "$top/scripts/kernels.sh" image "$rel")
	moddir=$BUILD/modules/$rel
	make -s -C "$top" test-modules KVER="$rel" MODDIR="$moddir"
	make -s -C "$top" selftests
	make -s -C "$top/qemu" OUTPUT="$BUILD/qemu"
	[ -e "$moddir/drivers/infiniband/hw/scif/scif_rdma.ko" ] ||
		{ echo "$1: no scif_rdma.ko for $rel (a kernel without RDMA)" >&2; return 1; }
}

# bench_nodes_ok NAME DIR [NODES]: every node of the cluster in DIR (2
# by default) passed its checks and has a clean kernel log (else say
# which, as NAME).
bench_nodes_ok() {
	ok=0
	for j in $(seq 0 $((${3:-2} - 1))); do
		if sh "$top/qemu/parse-results.sh" "$2/node$j/results.log" \
			"$1/node$j" | grep -q '^FAIL '; then
			echo "$1: a check failed on node $j (see $2/node$j/results.log)" >&2
			ok=1
		fi
		bash "$top/qemu/check-log.sh" "$2/node$j/console.log" > /dev/null ||
			{ echo "$1: kernel log not clean: $2/node$j/console.log" >&2; ok=1; }
	done
	return $ok
}
