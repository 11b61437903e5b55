#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# bench-report.sh DIR: from DIR/results.csv (scripts/bench.sh), print the
# figures as tables and the ratios the project tracks, and draw
# DIR/bandwidth.png, DIR/clients.png (scif_net, rxe and scif_vsock) and
# DIR/latency.png with gnuplot (if installed), and
# DIR/ntb.png when the NTB part ran (scripts/bench-ntb.sh).  A figure a
# run did not measure is left out (n/a in the tables).
set -eu

dir=$1
csv=$dir/results.csv
[ -r "$csv" ] || { echo "bench-report: no $csv" >&2; exit 1; }
[ ! -s "$dir/guest-args" ] ||
	{ echo "Guests' extra kernel arguments: $(cat "$dir/guest-args")"; echo; }

# value SETUP MODE VIA SIZE COLUMN: one figure, or empty.
value() {
	awk -F, -v s="$1" -v m="$2" -v v="$3" -v z="$4" -v c="$5" \
		'$1 == s && $2 == m && $3 == v && $4 == z { print $c; exit }' "$csv"
}

# ratio NAME A B: A / B, or a note that a figure is missing.
ratio() {
	if [ -n "$2" ] && [ -n "$3" ]; then
		awk -v n="$1" -v a="$2" -v b="$3" \
			'BEGIN { if (b > 0) printf "  %-62s %8.2f\n", n, a / b }'
	else
		printf '  %-62s %8s\n' "$1" "n/a"
	fi
}

echo "Latency (round trip, microseconds)"
# (The interleaved rounds, SETUP *-r<k>, appear only as ratios below.)
awk -F, 'NR > 1 && $1 ~ /-r[0-9]+(-|$)/ { next }
	NR > 1 && ($2 == "lat" || $2 == "lat-idle" || $2 == "lat-base") {
	printf "  %-14s %-5s %6d B   min %9.1f   median %9.1f   p99 %9.1f\n",
		$1 ($2 == "lat-idle" ? "+idle" : $2 == "lat-base" ? "+0idle" : ""),
		$3, $4, $6, $7, $8 }' "$csv"
echo
echo "Bandwidth (MB/s) and connection rate (per second)"
awk -F, 'NR > 1 && $1 ~ /-r[0-9]+(-|$)/ { next }
	NR > 1 && ($2 == "bw" || $2 == "memcpy" || $2 == "copy64" || $2 ~ /^raw-/) {
	printf "  %-9s %-7s %-5s %9d B   %10.1f MB/s\n", $1, $2, $3, $4, $9 }
	NR > 1 && $2 ~ /^v?(writeto|readfrom)(-c)?$/ {
	printf "  %-9s %-11s %-5s %9d B   %10.1f MB/s\n", $1, $2, $3, $4, $9 }
	NR > 1 && $2 == "perf" {
	printf "  %-9s ntb_perf %-5s %9d B chunks %10.1f MB/s\n", $1, $3, $4, $9 }
	NR > 1 && $2 == "reg" {
	printf "  %-9s register %-7s %9d B   %10.1f us median, %8.1f us/MiB\n",
		$1, $3, $4, $7, $7 * 1048576 / $4 }
	NR > 1 && $2 == "connect" {
	printf "  %-9s connect %-5s              %10.1f /s\n", $1, $3, $9 }
	NR > 1 && $2 == "idle" {
	printf "  %-9s %d idle connections set up at %.1f /s\n", $1, $5, $9 }
	NR > 1 && $2 == "idle-mem" {
	printf "  %-9s memory per idle connection, each node: %.1f KiB\n", $1, $9 }
	NR > 1 && $2 == "seqread" {
	printf "  %-9s NVMe read %-7s %9d B   %10.1f MB/s\n", $1, $3, $4, $9 }
	NR > 1 && $2 == "randread" {
	printf "  %-9s NVMe read %-7s %9d B   %10.0f IOPS\n", $1, $3, $4, $9 }' "$csv"
# summary NAME: from lines "A B [SIZE]" on stdin, one per round, the
# ratio A / B as the median and the range over the rounds, and the SIZE
# of each round (if given) in the order of their ratios, lowest first.
summary() {
	awk -v n="$1" '
		NF >= 2 && $2 > 0 { v[++k] = $1 / $2; at[k] = $3 }
		END {
			if (!k) { printf "  %-62s %8s\n", n, "n/a"; exit }
			for (i = 1; i <= k; i++)	# insertion sort: a few rounds
				for (j = i; j > 1 && v[j - 1] > v[j]; j--) {
					t = v[j]; v[j] = v[j - 1]; v[j - 1] = t
					t = at[j]; at[j] = at[j - 1]; at[j - 1] = t
				}
			m = k % 2 ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2
			printf "  %-62s %8.2f  (%d rounds, %.2f .. %.2f", n, m, k, v[1], v[k]
			for (i = 1; i <= k && at[1] != ""; i++)
				printf "%s %s", (i > 1 ? "," : "; at"), at[i]
			printf "%s)\n", (at[1] != "" ? " B" : "")
		}'
}

# ratio_rounds NAME "A" "B": A / B in each interleaved round (A and B:
# SETUP MODE VIA SIZE COLUMN, with % in SETUP for the round's number),
# as the median and the range over the rounds.
ratio_rounds() {
	r=1
	while :; do
		# shellcheck disable=SC2046 # the specs are words
		a=$(value $(echo "$2" | sed "s/%/$r/"))
		# shellcheck disable=SC2046
		b=$(value $(echo "$3" | sed "s/%/$r/"))
		[ -n "$a" ] && [ -n "$b" ] || break
		echo "$a $b"
		r=$((r + 1))
	done | summary "$1"
}

# worst_rounds NAME SETUP: in each interleaved round (% in SETUP for its
# number), the size of 256 B .. 1 MiB that both measured whose SCIF / TCP
# messaging bandwidth ratio is the lowest; then, as ratio_rounds, the
# median of those ratios and their range, with the sizes.
worst_rounds() {
	r=1
	while :; do
		w=$(awk -F, -v s="$(echo "$2" | sed "s/%/$r/")" '
			$1 == s && $2 == "bw" && $4 >= 256 && $4 <= 1048576 &&
			($3 == "scif" || $3 == "tcp") { v[$3, $4] = $9; z[$4] = 1 }
			END {
				for (k in z)
					if (v["scif", k] != "" && v["tcp", k] > 0 &&
					    (at == "" || v["scif", k] / v["tcp", k] < w)) {
						w = v["scif", k] / v["tcp", k]; at = k
					}
				if (at != "") print v["scif", at], v["tcp", at], at
			}' "$csv")
		[ -n "$w" ] || break
		echo "$w"
		r=$((r + 1))
	done | summary "$1"
}

echo
echo "Ratios over interleaved rounds: median (rounds, lowest .. highest)"
ratio_rounds "SCIF message / raw link round trip, 8 B" \
	"2vm-r% lat scif 8 7" "2vm-r% lat raw 8 7"
ratio_rounds "SCIF kernel path / raw link round trip, 8 B" \
	"2vm-r%-kpath lat scif 8 7" "2vm-r% lat raw 8 7"
ratio_rounds "TCP / SCIF round trip, 8 B" \
	"2vm-r% lat tcp 8 7" "2vm-r% lat scif 8 7"
ratio_rounds "SCIF / TCP bandwidth, 64 B messages" \
	"2vm-r% bw scif 64 9" "2vm-r% bw tcp 64 9"
ratio_rounds "SCIF kernel path / TCP bandwidth, 64 B messages" \
	"2vm-r%-kpath bw scif 64 9" "2vm-r% bw tcp 64 9"
worst_rounds "SCIF / TCP bandwidth, the worst size of 256 B .. 1 MiB" "2vm-r%"
worst_rounds "one VM: SCIF / TCP bandwidth, the worst size of 256 B .. 1 MiB" \
	"1vm-r%"
ratio_rounds "SCIF / TCP connections per second" \
	"2vm-r% connect scif 0 9" "2vm-r% connect tcp 0 9"
ratio_rounds "one VM: SCIF / TCP connections per second" \
	"1vm-r% connect scif 0 9" "1vm-r% connect tcp 0 9"
ratio_rounds "one VM: AF_UNIX / SCIF round trip, 8 B" \
	"1vm-r% lat unix 8 7" "1vm-r% lat scif 8 7"

echo
echo "Ratios (between the two VMs unless noted; one run)"
ratio "SCIF / TCP bandwidth, 1 MiB messages" \
	"$(value 2vm bw scif 1048576 9)" "$(value 2vm bw tcp 1048576 9)"
ratio "TCP / SCIF round trip, 8 B (median)" \
	"$(value 2vm lat tcp 8 7)" "$(value 2vm lat scif 8 7)"
ratio "SCIF messaging / memcpy bandwidth, 1 MiB" \
	"$(value 2vm bw scif 1048576 9)" "$(value 2vm memcpy - 1048576 9)"
ratio "SCIF / TCP connections per second" \
	"$(value 2vm connect scif 0 9)" "$(value 2vm connect tcp 0 9)"
awk -F, '$1 == "a2a" && $2 == "bw" { n++; sum += $9 }
	END { if (n) printf "  %-62s %8.1f MB/s (%d streams)\n",
		"all to all, 64 KiB messages: the streams added up", sum, n }' "$csv"
# Both measured by the idle mode, one just before the other.
ratio "round trip 8 B with the idle connections open / just before" \
	"$(value 2vm lat-idle scif 8 7)" "$(value 2vm lat-base scif 8 7)"
ratio "SCIF message / raw link round trip, 8 B" \
	"$(value 2vm lat scif 8 7)" "$(value 2vm lat raw 8 7)"
ratio "SCIF message, kernel path / raw link round trip, 8 B" \
	"$(value 2vm-kpath lat scif 8 7)" "$(value 2vm lat raw 8 7)"
ratio "SCIF kernel path / user-space path round trip, 8 B" \
	"$(value 2vm-kpath lat scif 8 7)" "$(value 2vm lat scif 8 7)"
ratio "SCIF / TCP bandwidth, 64 B messages" \
	"$(value 2vm bw scif 64 9)" "$(value 2vm bw tcp 64 9)"
ratio "SCIF kernel path / TCP bandwidth, 64 B messages" \
	"$(value 2vm-kpath bw scif 64 9)" "$(value 2vm bw tcp 64 9)"
ratio "one VM: SCIF kernel path / user-space path round trip, 8 B" \
	"$(value 1vm-kpath lat scif 8 7)" "$(value 1vm lat scif 8 7)"
ratio "mmap / raw link round trip, 8 B" \
	"$(value 2vm lat mmap 8 7)" "$(value 2vm lat raw 8 7)"
ratio "raw link write / memcpy bandwidth, 1 MiB" \
	"$(value 2vm raw-wr raw 1048576 9)" "$(value 2vm memcpy - 1048576 9)"
ratio "one VM: AF_UNIX / SCIF round trip, 8 B" \
	"$(value 1vm lat unix 8 7)" "$(value 1vm lat scif 8 7)"
ratio "RMA writeto (engine, sync) / memcpy, 1 MiB" \
	"$(value 2vm writeto eng 1048576 9)" "$(value 2vm memcpy - 1048576 9)"
ratio "RMA writeto (engine, sync) / memcpy, 16 MiB" \
	"$(value 2vm writeto eng 16777216 9)" "$(value 2vm memcpy - 16777216 9)"
ratio "RMA writeto (CPU) / memcpy, 1 MiB" \
	"$(value 2vm writeto cpu 1048576 9)" "$(value 2vm memcpy - 1048576 9)"
ratio "one VM: RMA writeto (engine) / memcpy, 1 MiB" \
	"$(value 1vm writeto eng 1048576 9)" "$(value 1vm memcpy - 1048576 9)"
ratio "RMA writeto by DMA / by CPU, 1 MiB (software DMA provider)" \
	"$(value 2vm-dma writeto eng 1048576 9)" "$(value 2vm writeto cpu 1048576 9)"
ratio "RMA readfrom by DMA / by CPU, 1 MiB (software DMA provider)" \
	"$(value 2vm-dma readfrom eng 1048576 9)" "$(value 2vm readfrom cpu 1048576 9)"
ratio "one VM: RMA writeto by DMA / by CPU, 1 MiB (software DMA provider)" \
	"$(value 1vm-dma writeto eng 1048576 9)" "$(value 1vm writeto cpu 1048576 9)"
ratio "RMA writeto (CPU) / 8-byte copy loop, 1 MiB" \
	"$(value 2vm writeto cpu 1048576 9)" "$(value 2vm copy64 - 1048576 9)"
ratio "RMA writeto (CPU) / 8-byte copy loop, 16 MiB" \
	"$(value 2vm writeto cpu 16777216 9)" "$(value 2vm copy64 - 16777216 9)"
ratio "RMA writeto (CPU) / RDMA write over rxe on scif_net, 1 MiB" \
	"$(value 2vm writeto cpu 1048576 9)" "$(value 2vm writeto rxe 1048576 9)"
ratio "RDMA read over rxe / SCIF message round trip, 8 B (median)" \
	"$(value 2vm lat rxe 8 7)" "$(value 2vm lat scif 8 7)"
ratio "RDMA write over scif_rdma / kernel SCIF RMA writeto, 1 MiB" \
	"$(value 2vm writeto srd 1048576 9)" "$(value 2vm writeto kscif 1048576 9)"
ratio "RDMA read over scif_rdma / kernel SCIF RMA readfrom, 1 MiB" \
	"$(value 2vm readfrom srd 1048576 9)" "$(value 2vm readfrom kscif 1048576 9)"
ratio "RDMA write over scif_rdma / over rxe on scif_net, 1 MiB" \
	"$(value 2vm writeto srd 1048576 9)" "$(value 2vm writeto rxe 1048576 9)"
ratio "RDMA read round trip, rxe / scif_rdma, 8 B (median)" \
	"$(value 2vm lat rxe 8 7)" "$(value 2vm lat srd 8 7)"
ratio "RDMA write, user verbs over scif_rdma / SCIF RMA writeto (CPU), 1 MiB (goal 0.8)" \
	"$(value 2vm writeto srd-user 1048576 9)" "$(value 2vm writeto cpu 1048576 9)"
ratio "RDMA write, user verbs over scif_rdma / over rxe on scif_net, 1 MiB (goal 20)" \
	"$(value 2vm writeto srd-user 1048576 9)" "$(value 2vm writeto rxe 1048576 9)"
ratio "ib_send_lat round trip over scif_rdma / SCIF message round trip, 8 B (goal 2)" \
	"$(value 2vm lat srd-user-send 8 7)" "$(value 2vm lat scif 8 7)"
ratio "ib_write_lat round trip over scif_rdma / SCIF message round trip, 8 B (goal 2)" \
	"$(value 2vm lat srd-user-write 8 7)" "$(value 2vm lat scif 8 7)"
ratio "RDMA read round trip, rxe / user verbs over scif_rdma, 8 B (goal 20)" \
	"$(value 2vm lat rxe 8 7)" "$(value 2vm lat srd-user-read 8 7)"
ratio "MPI ping-pong over scif_rdma / SCIF RMA writeto (CPU), 1 MiB (goal 0.7)" \
	"$(value 3vm bw mpi-verbs 1048576 9)" "$(value 2vm writeto cpu 1048576 9)"
ratio "MPI ping-pong over scif_rdma / over TCP on scif_net, 1 MiB" \
	"$(value 3vm bw mpi-verbs 1048576 9)" "$(value 3vm bw mpi-tcp 1048576 9)"
ratio "MPI round trip over TCP on scif_net / over scif_rdma, 8 B" \
	"$(value 3vm lat mpi-tcp 8 7)" "$(value 3vm lat mpi-verbs 8 7)"
ratio "TCP (iperf3) over scif_net / over virtio-net, 1 stream" \
	"$(value 2vm bw iperf3-sn 131072 9)" "$(value 2vm bw iperf3 131072 9)"
ratio "TCP (iperf3) over scif_net / over virtio-net, 4 streams" \
	"$(value 2vm bw iperf3-sn-P4 131072 9)" "$(value 2vm bw iperf3-P4 131072 9)"
ratio "SCIF messages of 1 MiB / TCP (iperf3) over scif_net" \
	"$(value 2vm bw scif 1048576 9)" "$(value 2vm bw iperf3-sn 131072 9)"
ratio "NVMe-oF over scif_rdma / NVMe/TCP over scif_net, 1 MiB read" \
	"$(value 2vm-nvme seqread srd 1048576 9)" "$(value 2vm-nvme seqread tcp-sn 1048576 9)"
ratio "NVMe-oF over scif_rdma / NVMe/TCP over virtio-net, 1 MiB read" \
	"$(value 2vm-nvme seqread srd 1048576 9)" "$(value 2vm-nvme seqread tcp-eth 1048576 9)"
ratio "NVMe-oF over scif_rdma / NVMe/TCP over scif_net, 4 KiB IOPS" \
	"$(value 2vm-nvme randread srd 4096 9)" "$(value 2vm-nvme randread tcp-sn 4096 9)"
ratio "NVMe-oF over scif_rdma / NVMe/TCP over virtio-net, 4 KiB IOPS" \
	"$(value 2vm-nvme randread srd 4096 9)" "$(value 2vm-nvme randread tcp-eth 4096 9)"
ratio "AF_VSOCK over scif_vsock / TCP round trip, 8 B" \
	"$(value 2vm lat vsock 8 7)" "$(value 2vm lat tcp 8 7)"
ratio "AF_VSOCK over scif_vsock / TCP bandwidth, 64 KiB messages" \
	"$(value 2vm bw vsock 65536 9)" "$(value 2vm bw tcp 65536 9)"
ratio "AF_VSOCK over scif_vsock / TCP connections per second" \
	"$(value 2vm connect vsock 0 9)" "$(value 2vm connect tcp 0 9)"
ratio "SCIF / AF_VSOCK over scif_vsock bandwidth, 64 KiB messages" \
	"$(value 2vm bw scif 65536 9)" "$(value 2vm bw vsock 65536 9)"
# Registration: the cost of a MiB beyond the fixed cost of one call
# (the window exchange with the peer), from the 1 MiB and 64 MiB rows; the
# huge-page rows are hugetlb or THP, whichever the guest gave.
per_mib() { # SETUP VIA-PATTERN: microseconds per MiB, or empty
	awk -F, -v s="$1" -v v="$2" '$1 == s && $2 == "reg" && $3 ~ v {
		if ($4 == 1048576) a = $7; if ($4 == 67108864) b = $7 }
		END { if (a != "" && b != "") printf "%.3f", (b - a) / 63 }' "$csv"
}
ratio "register, per MiB: 4 KiB pages / huge pages" \
	"$(per_mib 2vm '^4k$')" "$(per_mib 2vm '^(hugetlb|thp)$')"

# The NTB part: SCIF over the emulated NTB (full-reach window, and the
# 4 MiB windows only, staged) beside SCIF over ivshmem, and the upstream
# figures on the same NTB.
ntb=0
awk -F, '$1 ~ /^ntb-/ { f = 1 } END { exit !f }' "$csv" && ntb=1
if [ "$ntb" = 1 ]; then
	echo
	echo "SCIF over NTB beside SCIF over ivshmem (two VMs; MB/s unless noted)"
	printf '  %-36s %10s %10s %10s\n' "" "ivshmem" "NTB full" "NTB 4 MiB"
	cell() { # SETUP MODE VIA SIZE COLUMN
		v=$(value "$@")
		if [ -n "$v" ]; then printf ' %10.1f' "$v"; else printf ' %10s' n/a; fi
	}
	line() { # NAME MODE VIA SIZE COLUMN: the three setups
		printf '  %-36s' "$1"
		shift
		cell 2vm "$@"
		cell ntb-full "$@"
		cell ntb-stage "$@"
		echo
	}
	line "round trip 8 B, median us" lat scif 8 7
	line "round trip 1 KiB, median us" lat scif 1024 7
	line "mapped window round trip 8 B, us" lat mmap 8 7
	line "messages of 64 B" bw scif 64 9
	line "messages of 1 MiB" bw scif 1048576 9
	line "connections per second" connect scif 0 9
	line "writeto (CPU), 4 KiB" writeto cpu 4096 9
	line "writeto (CPU), 1 MiB" writeto cpu 1048576 9
	line "writeto (CPU), 16 MiB" writeto cpu 16777216 9
	line "writeto (engine, sync), 1 MiB" writeto eng 1048576 9
	line "writeto (engine, async), 1 MiB" writeto eng-a 1048576 9
	line "readfrom (CPU), 1 MiB" readfrom cpu 1048576 9
	line "vwriteto (CPU), 1 MiB" vwriteto cpu 1048576 9
	line "vreadfrom (CPU), 1 MiB" vreadfrom cpu 1048576 9
	echo
	echo "The upstream figures on the same emulated NTB (MB/s)"
	for pv in cpu dma; do
		printf '  %-36s' "ntb_perf ($pv), 4 KiB / 1 MiB chunks"
		cell ntb-perf perf "$pv" 4096 9
		cell ntb-perf perf "$pv" 1048576 9
		echo
	done
	printf '  %-36s' "TCP over ntb_netdev, iperf3"
	cell ntb-net bw iperf3 131072 9
	echo
	printf '  %-36s' "TCP over ntb_netdev, 64 B / 1 MiB msgs"
	cell ntb-net bw tcp 64 9
	cell ntb-net bw tcp 1048576 9
	echo
	printf '  %-36s' "TCP over ntb_netdev, round trip 8 B"
	cell ntb-net lat tcp 8 7
	echo "  us (median)"
	printf '  %-36s' "TCP over virtio-net, 64 B / 1 MiB msgs"
	cell 2vm bw tcp 64 9
	cell 2vm bw tcp 1048576 9
	echo
	printf '  %-36s' "TCP over virtio-net, round trip 8 B"
	cell 2vm lat tcp 8 7
	echo "  us (median)"
	echo
	echo "Ratios (NTB)"
	ratio "NTB full reach / ivshmem: writeto (CPU), 1 MiB" \
		"$(value ntb-full writeto cpu 1048576 9)" "$(value 2vm writeto cpu 1048576 9)"
	ratio "NTB full reach / ivshmem: round trip 8 B" \
		"$(value ntb-full lat scif 8 7)" "$(value 2vm lat scif 8 7)"
	ratio "NTB full reach / ivshmem: messages of 1 MiB" \
		"$(value ntb-full bw scif 1048576 9)" "$(value 2vm bw scif 1048576 9)"
	ratio "NTB 4 MiB windows (staged) / full reach: writeto (CPU), 1 MiB" \
		"$(value ntb-stage writeto cpu 1048576 9)" "$(value ntb-full writeto cpu 1048576 9)"
	ratio "NTB 4 MiB windows (staged) / full reach: readfrom (CPU), 1 MiB" \
		"$(value ntb-stage readfrom cpu 1048576 9)" "$(value ntb-full readfrom cpu 1048576 9)"
	ratio "NTB full reach: writeto (CPU) / ntb_perf (CPU), 1 MiB" \
		"$(value ntb-full writeto cpu 1048576 9)" "$(value ntb-perf perf cpu 1048576 9)"
	ratio "NTB full reach: writeto (CPU) / ntb_perf (CPU), 4 KiB" \
		"$(value ntb-full writeto cpu 4096 9)" "$(value ntb-perf perf cpu 4096 9)"
	ratio "NTB: SCIF / TCP over ntb_netdev, messages of 1 MiB" \
		"$(value ntb-full bw scif 1048576 9)" "$(value ntb-net bw tcp 1048576 9)"
	ratio "NTB: TCP over ntb_netdev / SCIF round trip, 8 B (median)" \
		"$(value ntb-net lat tcp 8 7)" "$(value ntb-full lat scif 8 7)"
	ratio "NTB: SCIF messages of 1 MiB / iperf3 over ntb_netdev" \
		"$(value ntb-full bw scif 1048576 9)" "$(value ntb-net bw iperf3 131072 9)"
	ratio "NTB full reach: writeto (CPU) 1 MiB / iperf3 over ntb_netdev" \
		"$(value ntb-full writeto cpu 1048576 9)" "$(value ntb-net bw iperf3 131072 9)"
	ratio "TCP over ntb_netdev / over virtio-net, messages of 1 MiB" \
		"$(value ntb-net bw tcp 1048576 9)" "$(value 2vm bw tcp 1048576 9)"
	ratio "ntb_perf with DMA / by CPU, 1 MiB chunks (software DMA)" \
		"$(value ntb-perf perf dma 1048576 9)" "$(value ntb-perf perf cpu 1048576 9)"
fi

command -v gnuplot > /dev/null || { echo "bench-report: no gnuplot, no plots" >&2; exit 0; }
series() { # SETUP MODE VIA COLUMN: "size value" lines
	awk -F, -v s="$1" -v m="$2" -v v="$3" -v c="$4" \
		'$1 == s && $2 == m && $3 == v { print $4, $c }' "$csv"
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# add FILE TITLE [STYLE]: a plot item for FILE's series, if it has points.
items=
add() {
	[ -s "$1" ] || return 0
	items="$items${items:+, }\"$1\" with ${3:-linespoints} title \"$2\""
}
# plot OUTPUT TITLE YLABEL: the items added since the last plot.
plot() {
	[ -n "$items" ] || { echo "bench-report: nothing to plot in $1" >&2; return 0; }
	gnuplot <<-EOF
	set terminal pngcairo size 900,560 noenhanced
	set logscale xy 2
	set grid
	set key bottom right
	set xlabel "transfer size (bytes)"
	set format x "%.0b%BB"
	${4:-}
	set output "$1"
	set title "$2"
	set ylabel "$3"
	plot $items
	EOF
	echo "$1" >> "$tmp/plots"
	items=
}
series 2vm memcpy - 9 > "$tmp/memcpy"
series 2vm copy64 - 9 > "$tmp/copy64"
series 2vm raw-wr raw 9 > "$tmp/rawwr"
series 2vm writeto eng 9 > "$tmp/rma2"
series 2vm vwriteto cpu 9 > "$tmp/vrma2"
series 2vm bw scif 9 > "$tmp/scif2"
series 2vm bw tcp 9 > "$tmp/tcp2"
series 1vm bw scif 9 > "$tmp/scif1"
series ntb-full writeto cpu 9 > "$tmp/rmafull"
series ntb-stage writeto cpu 9 > "$tmp/rmastage"
series ntb-full bw scif 9 > "$tmp/scifntb"
series ntb-perf perf cpu 9 > "$tmp/perfcpu"
series ntb-perf perf dma 9 > "$tmp/perfdma"
series ntb-net bw iperf3 9 > "$tmp/netdev"
series ntb-net bw tcp 9 > "$tmp/tcpntb"
series 2vm writeto cpu 9 > "$tmp/rmacpu2"
series 2vm bw vsock 9 > "$tmp/vsock2"
series 2vm writeto rxe 9 > "$tmp/rxe2"
series 2vm bw iperf3-sn 9 > "$tmp/iperfsn"
series 2vm bw iperf3-sn-P4 9 > "$tmp/iperfsn4"
series 2vm bw iperf3 9 > "$tmp/iperfeth"
series 2vm bw iperf3-P4 9 > "$tmp/iperfeth4"
add "$tmp/memcpy" "memcpy, libc (one VM)"
add "$tmp/copy64" "copy by 8-byte moves (one VM)"
add "$tmp/rawwr" "raw link, memcpy into it (2 VMs)"
add "$tmp/rma2" "SCIF RMA writeto, engine (2 VMs)"
add "$tmp/vrma2" "SCIF RMA vwriteto, CPU (2 VMs)"
add "$tmp/scif2" "SCIF send/recv (2 VMs)"
add "$tmp/tcp2" "TCP over virtio-net (2 VMs)"
add "$tmp/scif1" "SCIF send/recv (one VM)"
add "$tmp/rmafull" "NTB: SCIF RMA writeto, CPU, full-reach window (2 VMs)"
add "$tmp/rmastage" "NTB: SCIF RMA writeto, CPU, 4 MiB windows, staged (2 VMs)"
add "$tmp/perfcpu" "NTB: ntb_perf by CPU (chunk size)"
add "$tmp/netdev" "NTB: TCP over ntb_netdev, iperf3 (2 VMs)" "points pointsize 2"
plot "$dir/bandwidth.png" "Bandwidth between two QEMU VMs (TCG), and the in-VM memcpy ceiling" "MB/s" \
	"set terminal pngcairo size 900,680 noenhanced; set key font ',9'"

add "$tmp/rmacpu2" "SCIF RMA writeto, CPU, over ivshmem"
add "$tmp/rmafull" "SCIF RMA writeto, CPU, NTB full-reach window"
add "$tmp/rmastage" "SCIF RMA writeto, CPU, NTB 4 MiB windows (staged)"
add "$tmp/scif2" "SCIF send/recv over ivshmem"
add "$tmp/scifntb" "SCIF send/recv over NTB"
add "$tmp/perfcpu" "ntb_perf by CPU (chunk size)"
add "$tmp/perfdma" "ntb_perf with DMA, software provider (chunk size)"
add "$tmp/tcpntb" "TCP over ntb_netdev (scif-bench)"
add "$tmp/netdev" "TCP over ntb_netdev, iperf3" "points pointsize 2"
[ "$ntb" = 0 ] || plot "$dir/ntb.png" "SCIF over the emulated NTB, ntb_perf and ntb_netdev (QEMU, TCG)" "MB/s" \
	"set key bottom right font ',9'"
items=

# The kernel clients (net.rst, vsock.rst) beside SCIF itself.
add "$tmp/scif2" "SCIF send/recv"
add "$tmp/rmacpu2" "SCIF RMA writeto, CPU"
add "$tmp/vsock2" "AF_VSOCK over scif_vsock (scif-bench)"
add "$tmp/tcp2" "TCP over virtio-net (scif-bench)"
add "$tmp/rxe2" "RDMA write, rxe over scif_net (ib_write_bw)"
add "$tmp/iperfsn" "TCP over scif_net, iperf3" "points pointsize 2"
add "$tmp/iperfsn4" "TCP over scif_net, iperf3 -P 4" "points pointsize 2"
add "$tmp/iperfeth" "TCP over virtio-net, iperf3" "points pointsize 2"
add "$tmp/iperfeth4" "TCP over virtio-net, iperf3 -P 4" "points pointsize 2"
plot "$dir/clients.png" "scif_net, rxe and scif_vsock beside SCIF and virtio-net (2 VMs, TCG)" "MB/s" \
	"set key bottom right font ',9'"
items=

series 2vm lat scif 7 > "$tmp/lscif2"
series 2vm lat vsock 7 > "$tmp/lvsock2"
series 2vm lat tcp 7 > "$tmp/ltcp2"
series 1vm lat scif 7 > "$tmp/lscif1"
series 1vm lat tcp 7 > "$tmp/ltcp1"
series 1vm lat unix 7 > "$tmp/lunix1"
series 2vm lat mmap 7 > "$tmp/lmmap2"
series 2vm lat raw 7 > "$tmp/lraw2"
series ntb-full lat scif 7 > "$tmp/lntbfull"
series ntb-stage lat scif 7 > "$tmp/lntbstage"
series ntb-full lat mmap 7 > "$tmp/lntbmmap"
series ntb-net lat tcp 7 > "$tmp/lntbtcp"
add "$tmp/lscif2" "SCIF (2 VMs)"
add "$tmp/ltcp2" "TCP (2 VMs)"
add "$tmp/lvsock2" "AF_VSOCK over scif_vsock (2 VMs)"
add "$tmp/lscif1" "SCIF (one VM)"
add "$tmp/ltcp1" "TCP loopback (one VM)"
add "$tmp/lunix1" "AF_UNIX (one VM)"
add "$tmp/lmmap2" "8 B through a mapped window, scif_mmap (2 VMs)" "points pointsize 2"
add "$tmp/lraw2" "8 B through the raw link (2 VMs)" "points pointsize 2"
add "$tmp/lntbfull" "SCIF over NTB, full-reach window (2 VMs)"
add "$tmp/lntbstage" "SCIF over NTB, 4 MiB windows (2 VMs)"
add "$tmp/lntbmmap" "8 B through a mapped window over NTB (2 VMs)" "points pointsize 2"
add "$tmp/lntbtcp" "TCP over ntb_netdev (2 VMs)"
plot "$dir/latency.png" "Message round trip" "median round trip (us)" "set logscale y 10"
echo
echo "Plots: $(tr '\n' ' ' < "$tmp/plots" 2> /dev/null)"
