#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# scif-bench(1) smoke run in the guest, so that the tool cannot rot: each
# mode with tiny sizes (-q) over SCIF to this node, TCP over loopback and
# AF_UNIX; every row it prints must be there, with numbers above zero.
# Not a performance gate.  scif.ko must be loaded; scif-bench on $PATH.
bench=${SCIF_BENCH:-scif-bench}
port=2399

echo "TAP version 13"
echo "1..9"

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

ip link set lo up 2>/dev/null || ifconfig lo 127.0.0.1 up 2>/dev/null

"$bench" -p $port serve 2> /tmp/bench-serve.log &
server=$!
# Ready when the SCIF listener answers.
i=0
until "$bench" -p $port -q -i 1 connect > /dev/null 2>&1 || [ $i -ge 50 ]; do
	sleep 0.1
	i=$((i + 1))
done

run() { # name mode via rows args...
	name=$1 mode=$2 via=$3 rows=$4
	shift 4
	out=$("$bench" -p $port -q -f csv "$@" "$mode" 2>&1)
	rc=$?
	echo "$out" | sed 's/^/# /'
	[ $rc -eq 0 ] && check_csv "$mode" "$via" "$rows" "$out"
	result $? "$name" "rc=$rc"
}

run scif_lat lat scif 3 -t scif
run scif_bw bw scif 6 -t scif
run scif_connect connect scif 1 -t scif
run tcp_lat lat tcp 3 -t tcp -H 127.0.0.1
run tcp_bw bw tcp 6 -t tcp -H 127.0.0.1
run unix_lat lat unix 3 -t unix
run memcpy memcpy - 5

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

kill $server 2>/dev/null
wait $server 2>/dev/null
sed 's/^/# server: /' /tmp/bench-serve.log
