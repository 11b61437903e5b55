# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# Sourced by scripts/bench.sh and scripts/bench-ntb.sh.

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
