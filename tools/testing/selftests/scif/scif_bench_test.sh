#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# scif_bench_test.sh [PEER]
# scif-bench(1) smoke run, so that the tool cannot rot: each mode with
# tiny sizes (-q); every row it prints must be there, with numbers above
# zero.  Not a performance gate.  scif.ko must be loaded; scif-bench on
# $PATH.
#   without PEER: a server here; SCIF to this node, TCP over loopback,
#                 AF_UNIX, memcpy, mmap ping-pong through a window of
#                 this node
#   with PEER:    the server that node PEER runs (scif-bench serve); SCIF
#                 to it, mmap ping-pong through its window, and the raw
#                 link modes over the shared device of cluster.sh -R; the
#                 server is stopped at the end
bench=${SCIF_BENCH:-scif-bench}
peer=${1:-}
port=2399
[ -z "$peer" ] || port=2300
raw=/sys/bus/pci/devices/0000:00:10.0/resource2

echo "TAP version 13"
if [ -z "$peer" ]; then
	echo "1..13"
else
	echo "1..11"
fi

n=0
result() { # status name [comment]: status 0 passes
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n $2"
	else
		echo "not ok $n $2${3:+ # $3}"
	fi
}

# check_csv MODE VIA ROWS CSV: the header, then ROWS rows of MODE via VIA
# whose counts and figures are all positive.
check_csv() {
	echo "$4" | awk -F, -v mode="$1" -v via="$2" -v rows="$3" '
		NR == 1 { ok = ($0 == "mode,via,size,count,min_us,median_us,p99_us,rate"); next }
		$1 != mode || $2 != via || $4 <= 0 { ok = 0 }
		mode == "lat" && !($5 > 0 && $6 >= $5 && $7 >= $6) { ok = 0 }
		mode != "lat" && !($8 > 0) { ok = 0 }
		END { exit !(ok && NR == rows + 1) }'
}

# wait_server ARGS: until a server answers (10 s at most).
wait_server() {
	i=0
	until "$bench" "$@" -q -i 1 connect > /dev/null 2>&1 || [ $i -ge 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
}

# run_rma ARGS: the rma mode prints 6 calls x 3 ways x 3 sizes, all > 0.
run_rma() {
	out=$("$bench" -p $port -q -f csv "$@" rma 2>&1)
	rc=$?
	echo "$out" | sed 's/^/# /'
	[ $rc -eq 0 ] && echo "$out" | awk -F, '
		NR == 1 { next }
		$1 !~ /^v?(writeto|readfrom)(-c)?$/ { bad = 1 }
		$2 != "cpu" && $2 != "eng" && $2 != "eng-a" { bad = 1 }
		!($4 > 0 && $8 > 0) { bad = 1 }
		END { exit bad || NR != 55 }'
	result $? rma "rc=$rc"
}

# run_reg ARGS: 1 MiB registered in 4 KiB pages, then in huge pages
# (hugetlb or THP; a kernel without THP has no such row).
run_reg() {
	out=$("$bench" -p $port -q -f csv "$@" reg 2>&1)
	rc=$?
	echo "$out" | sed 's/^/# /'
	[ $rc -eq 0 ] && echo "$out" | awk -F, '
		NR == 1 { next }
		$1 != "reg" || $3 != 1048576 || $4 <= 0 { bad = 1 }
		!($5 > 0 && $6 >= $5 && $7 >= $6) { bad = 1 }
		NR == 2 && $2 != "4k" { bad = 1 }
		NR == 3 && $2 != "hugetlb" && $2 != "thp" { bad = 1 }
		END { exit bad || NR < 2 || NR > 3 }'
	result $? reg "rc=$rc"
}

run() { # name mode via rows args...: scif-bench ARGS MODE (MODE's rows
	# are named MODE, but raw-lat's and mmap-lat's are "lat" rows via
	# "raw" and "mmap")
	name=$1 mode=$2 via=$3 rows=$4
	shift 4
	out=$("$bench" -p $port -q -f csv "$@" "$mode" 2>&1)
	rc=$?
	echo "$out" | sed 's/^/# /'
	[ $rc -eq 0 ] && check_csv "${mode#*-}" "$via" "$rows" "$out"
	result $? "$name" "rc=$rc"
}

if [ -n "$peer" ]; then
	wait_server -p $port -n "$peer"
	run scif_lat lat scif 3 -n "$peer"
	run scif_bw bw scif 6 -n "$peer"
	run scif_connect connect scif 1 -n "$peer"
	run mmap_lat mmap-lat mmap 1 -n "$peer"
	run_rma -n "$peer"
	run_reg -n "$peer"
	if [ -e "$raw" ]; then
		run raw_lat raw-lat raw 1 -n "$peer"
		# raw-bw prints two rows per size, raw-wr then raw-rd.
		out=$("$bench" -q -f csv raw-bw 2>&1); rc=$?
		echo "$out" | sed 's/^/# /'
		[ $rc -eq 0 ] &&
			check_csv raw-wr raw 5 "$(echo "$out" | grep -v '^raw-rd,')" &&
			check_csv raw-rd raw 5 "$(echo "$out" | grep -v '^raw-wr,')"
		result $? raw_bw "rc=$rc"
	else
		echo "ok $((n + 1)) raw_lat # SKIP no shared device at $raw"
		echo "ok $((n + 2)) raw_bw # SKIP no shared device at $raw"
		n=$((n + 2))
	fi
	run memcpy memcpy - 5
	run copy64 copy64 - 5
	"$bench" -p $port -n "$peer" stop > /dev/null 2>&1
	result $? server_stopped
	exit 0
fi

ip link set lo up 2>/dev/null || ifconfig lo 127.0.0.1 up 2>/dev/null
"$bench" -p $port serve 2> /tmp/bench-serve.log &
server=$!
wait_server -p $port

run scif_lat lat scif 3 -t scif
run scif_bw bw scif 6 -t scif
run scif_connect connect scif 1 -t scif
run mmap_lat mmap-lat mmap 1 -t scif
run_rma -t scif
run_reg -t scif
# The debug kernel (tinyconfig) has neither TCP/IP nor AF_UNIX.
if [ -e /proc/net/tcp ]; then
	run tcp_lat lat tcp 3 -t tcp -H 127.0.0.1
	run tcp_bw bw tcp 6 -t tcp -H 127.0.0.1
else
	n=$((n + 2))
	echo "ok $((n - 1)) tcp_lat # SKIP no TCP/IP in this kernel"
	echo "ok $n tcp_bw # SKIP no TCP/IP in this kernel"
fi
if [ -e /proc/net/unix ]; then
	run unix_lat lat unix 3 -t unix
else
	n=$((n + 1))
	echo "ok $n unix_lat # SKIP no AF_UNIX in this kernel"
fi
run memcpy memcpy - 5
run copy64 copy64 - 5

out=$("$bench" -p $port -q -f json lat 2>&1); rc=$?
echo "$out" | sed 's/^/# /'
[ $rc -eq 0 ] && [ "$(echo "$out" | head -n 1)" = "[" ] &&
	[ "$(echo "$out" | tail -n 1)" = "]" ] &&
	[ "$(echo "$out" | grep -c '"mode":"lat","via":"scif"')" -eq 3 ]
result $? json_format

# A peer that is not there is an error, not a hang or a zero figure.
"$bench" -p 65000 -q -i 1 lat > /dev/null 2>&1
[ $? -ne 0 ]
result $? no_server_fails

"$bench" -p $port stop > /dev/null 2>&1
wait $server
result $? server_stopped_cleanly
sed 's/^/# server: /' /tmp/bench-serve.log
