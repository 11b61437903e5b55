#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# bench-report.sh DIR: from DIR/results.csv (scripts/bench.sh), print the
# figures as tables and the ratios the project tracks, and draw
# DIR/bandwidth.png and DIR/latency.png with gnuplot (if installed).
set -eu

dir=$1
csv=$dir/results.csv
[ -r "$csv" ] || { echo "bench-report: no $csv" >&2; exit 1; }

# value SETUP MODE VIA SIZE COLUMN: one figure, or empty.
value() {
	awk -F, -v s="$1" -v m="$2" -v v="$3" -v z="$4" -v c="$5" \
		'$1 == s && $2 == m && $3 == v && $4 == z { print $c; exit }' "$csv"
}

# ratio NAME A B: A / B, or a note that a figure is missing.
ratio() {
	if [ -n "$2" ] && [ -n "$3" ]; then
		awk -v n="$1" -v a="$2" -v b="$3" \
			'BEGIN { if (b > 0) printf "  %-44s %8.2f\n", n, a / b }'
	else
		printf '  %-44s %8s\n' "$1" "n/a"
	fi
}

echo "Latency (round trip, microseconds)"
awk -F, 'NR > 1 && $2 == "lat" {
	printf "  %-4s %-5s %6d B   min %9.1f   median %9.1f   p99 %9.1f\n",
		$1, $3, $4, $6, $7, $8 }' "$csv"
echo
echo "Bandwidth (MB/s) and connection rate (per second)"
awk -F, 'NR > 1 && ($2 == "bw" || $2 == "memcpy" || $2 == "copy64" || $2 ~ /^raw-/) {
	printf "  %-4s %-7s %-5s %9d B   %10.1f MB/s\n", $1, $2, $3, $4, $9 }
	NR > 1 && $2 ~ /^v?(writeto|readfrom)(-c)?$/ {
	printf "  %-7s %-11s %-5s %9d B   %10.1f MB/s\n", $1, $2, $3, $4, $9 }
	NR > 1 && $2 == "reg" {
	printf "  %-4s register %-7s %9d B   %10.1f us median, %8.1f us/MiB\n",
		$1, $3, $4, $7, $7 * 1048576 / $4 }
	NR > 1 && $2 == "connect" {
	printf "  %-4s connect %-5s              %10.1f /s\n", $1, $3, $9 }' "$csv"
echo
echo "Ratios (between the two VMs unless noted)"
ratio "SCIF / TCP bandwidth, 1 MiB messages" \
	"$(value 2vm bw scif 1048576 9)" "$(value 2vm bw tcp 1048576 9)"
ratio "TCP / SCIF round trip, 8 B (median)" \
	"$(value 2vm lat tcp 8 7)" "$(value 2vm lat scif 8 7)"
ratio "SCIF messaging / memcpy bandwidth, 1 MiB" \
	"$(value 2vm bw scif 1048576 9)" "$(value 2vm memcpy - 1048576 9)"
ratio "SCIF / TCP connections per second" \
	"$(value 2vm connect scif 0 9)" "$(value 2vm connect tcp 0 9)"
ratio "SCIF message / raw link round trip, 8 B" \
	"$(value 2vm lat scif 8 7)" "$(value 2vm lat raw 8 7)"
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

command -v gnuplot > /dev/null || { echo "bench-report: no gnuplot, no plots" >&2; exit 0; }
series() { # SETUP MODE VIA COLUMN: "size value" lines
	awk -F, -v s="$1" -v m="$2" -v v="$3" -v c="$4" \
		'$1 == s && $2 == m && $3 == v { print $4, $c }' "$csv"
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
series 2vm bw scif 9 > "$tmp/scif2"
series 2vm bw tcp 9 > "$tmp/tcp2"
series 1vm bw scif 9 > "$tmp/scif1"
series 2vm memcpy - 9 > "$tmp/memcpy"
series 2vm copy64 - 9 > "$tmp/copy64"
series 2vm raw-wr raw 9 > "$tmp/rawwr"
series 2vm writeto eng 9 > "$tmp/rma2"
series 2vm vwriteto cpu 9 > "$tmp/vrma2"
series 2vm lat scif 7 > "$tmp/lscif2"
series 2vm lat tcp 7 > "$tmp/ltcp2"
series 1vm lat scif 7 > "$tmp/lscif1"
series 1vm lat tcp 7 > "$tmp/ltcp1"
series 1vm lat unix 7 > "$tmp/lunix1"
series 2vm lat mmap 7 > "$tmp/lmmap2"
series 2vm lat raw 7 > "$tmp/lraw2"
gnuplot <<EOF
set terminal pngcairo size 900,560 noenhanced
set logscale xy 2
set grid
set key bottom right
set xlabel "transfer size (bytes)"
set format x "%.0b%BB"
set output "$dir/bandwidth.png"
set ylabel "MB/s"
set title "Bandwidth between two QEMU VMs (TCG), and the in-VM memcpy ceiling"
plot "$tmp/memcpy" with linespoints title "memcpy, libc (one VM)", \
     "$tmp/copy64" with linespoints title "copy by 8-byte moves (one VM)", \
     "$tmp/rawwr" with linespoints title "raw link, memcpy into it (2 VMs)", \
     "$tmp/rma2" with linespoints title "SCIF RMA writeto, engine (2 VMs)", \
     "$tmp/vrma2" with linespoints title "SCIF RMA vwriteto, CPU (2 VMs)", \
     "$tmp/scif2" with linespoints title "SCIF send/recv (2 VMs)", \
     "$tmp/tcp2" with linespoints title "TCP over virtio-net (2 VMs)", \
     "$tmp/scif1" with linespoints title "SCIF send/recv (one VM)"
set output "$dir/latency.png"
set ylabel "median round trip (us)"
set logscale y 10
set title "Message round trip"
plot "$tmp/lscif2" with linespoints title "SCIF (2 VMs)", \
     "$tmp/ltcp2" with linespoints title "TCP (2 VMs)", \
     "$tmp/lscif1" with linespoints title "SCIF (one VM)", \
     "$tmp/ltcp1" with linespoints title "TCP loopback (one VM)", \
     "$tmp/lunix1" with linespoints title "AF_UNIX (one VM)", \
     "$tmp/lmmap2" with points pointsize 2 title "8 B through a mapped window, scif_mmap (2 VMs)", \
     "$tmp/lraw2" with points pointsize 2 title "8 B through the raw link (2 VMs)"
EOF
echo
echo "Plots: $dir/bandwidth.png $dir/latency.png"
