#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The scif tracepoints (Documentation/scif/observability.rst), recorded
# through tracefs during a run, as perf or trace-cmd would: a hello
# exchange (connect, accept, send, recv, close), fence-signal (register,
# RMA submit and complete, fence signal, unregister), and the loopback
# node taken through failed, down and up again by the test build's hooks
# (node failed, down, up; the node's state and generation in sysfs; the
# dynamic debug messages of each transition).  Every event's fields are
# checked against what the run did.  Needs scif.ko of the test build,
# loaded with nothing open, and hello-server, hello-client, fence-signal
# on $PATH.  Leaves scif.ko loaded and its node online.  TAP output.
tr=/sys/kernel/tracing
dbg=/sys/kernel/debug/scif
self=$(cat /sys/class/misc/scif/node_id 2>/dev/null)
node=/sys/class/misc/scif/nodes/$self
port=2600
total=17

echo "TAP version 13"
echo "1..$total"

n=0
failed=0
result() { # status name [comment]: status 0 passes
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n $2"
	else
		echo "not ok $n $2${3:+ # $3}"
		failed=$((failed + 1))
	fi
}

skip_rest() { # reason
	while [ $n -lt $total ]; do
		n=$((n + 1))
		echo "ok $n # SKIP $1"
	done
	exit 0
}

[ -d "$tr/events" ] || mount -t tracefs nodev "$tr" 2>/dev/null
[ -d "$tr/events" ] || skip_rest "no tracefs in this kernel (CONFIG_TRACING)"
[ -d "$tr/events/scif" ] || skip_rest "no scif events (CONFIG_EVENT_TRACING?)"

echo 0 > "$tr/tracing_on"
echo > "$tr/trace"
echo 1 > "$tr/events/scif/enable"
echo 1 > "$tr/tracing_on"

# -- endpoints: one hello exchange ----------------------------------------
hello-server $port 1 > /tmp/hello-server.log 2>&1 &
server=$!
i=0
until grep -q listening /tmp/hello-server.log || [ $i -ge 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
answer=$(hello-client "$self" $port tracer)
rc=$?
wait $server
src=$?
[ $rc -eq 0 ] && [ $src -eq 0 ] && [ "$answer" = "hello, tracer" ]
result $? hello_exchange "client rc=$rc server rc=$src answer '$answer'"

# -- windows, RMAs and fences ----------------------------------------------
fence-signal 2 > /tmp/fence-signal.log 2>&1
result $? fence_signal_runs "$(cat /tmp/fence-signal.log)"

# -- the node: failed, down, up --------------------------------------------
dyn=/proc/dynamic_debug/control
[ -w "$dyn" ] || dyn=/sys/kernel/debug/dynamic_debug/control
[ -w "$dyn" ] && echo 'module scif +p' > "$dyn"
gen0=$(cat "$node/generation")
state_is() { # state: wait up to 5 s for the node's sysfs state
	i=0
	until [ "$(cat "$node/state")" = "$1" ] || [ $i -ge 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	[ "$(cat "$node/state")" = "$1" ]
}
if [ -e "$dbg/corrupt" ] && [ -e "$dbg/node_test" ]; then
	echo "count $self" > "$dbg/corrupt"
	state_is failed
	s1=$?
	echo "loopback down" > "$dbg/node_test"
	state_is absent
	s2=$?
	echo "loopback up" > "$dbg/node_test"
	state_is online
	s3=$?
	gen1=$(cat "$node/generation")
	[ $s1 -eq 0 ] && [ $s2 -eq 0 ] && [ $s3 -eq 0 ] &&
		[ "$gen1" -eq $((gen0 + 1)) ]
	result $? sysfs_state_failed_absent_online \
		"failed $s1 absent $s2 online $s3 generation $gen0 -> $gen1"
	hooks=1
else
	result 0 "sysfs_state_failed_absent_online # SKIP not the test build"
	hooks=0
fi
[ -w "$dyn" ] && echo 'module scif -p' > "$dyn"

echo 0 > "$tr/tracing_on"
echo 0 > "$tr/events/scif/enable"
cat "$tr/trace" > /tmp/scif-trace.txt
echo > "$tr/trace"
echo 1 > "$tr/tracing_on"
echo "# $(grep -c ' scif_' /tmp/scif-trace.txt) scif events recorded"

# has NAME PATTERN [MIN]: at least MIN (1) events NAME whose fields match
# the extended regular expression PATTERN.
has() {
	c=$(grep -E " $1: $2\$" /tmp/scif-trace.txt | wc -l)
	[ "$c" -ge "${3:-1}" ] || {
		echo "# $1: $c events match '$2'; all of them:"
		grep " $1: " /tmp/scif-trace.txt | head -n 5 | sed 's/^/#   /'
		return 1
	}
}
ep='ep=0x[0-9a-f]+'
hex='0x[0-9a-f]+'	# (the kernel's %#x prints 0 as 0x0)

has scif_connect "$ep port=[1-9][0-9]* dnode=$self dport=$port err=0"
result $? connect_fields
cport=$(sed -n "s/.* scif_connect: .* port=\([0-9]*\) dnode=$self dport=$port err=0\$/\1/p" \
	/tmp/scif-trace.txt | head -n 1)
has scif_accept "$ep port=$port pnode=$self pport=${cport:-none} err=0"
result $? accept_fields_name_the_connecting_port
# Length-prefixed: 4 bytes, then "tracer" (6), answered "hello, tracer" (13).
has scif_send "$ep len=4 flags=0x1 ret=4" 2 &&
	has scif_send "$ep len=6 flags=0x1 ret=6" &&
	has scif_send "$ep len=13 flags=0x1 ret=13"
result $? send_fields
has scif_recv "$ep len=4 flags=0x1 ret=4" 2 &&
	has scif_recv "$ep len=6 flags=0x1 ret=6" &&
	has scif_recv "$ep len=13 flags=0x1 ret=13"
result $? recv_fields
# The client sent 10 bytes and received 17; the server the reverse.
# Whichever closes second finds the connection closed by the other.
has scif_close "$ep state=(connected|disconnected) tx_bytes=10 rx_bytes=17" &&
	has scif_close "$ep state=(connected|disconnected) tx_bytes=17 rx_bytes=10"
result $? close_fields_carry_the_counters
# fence-signal: two windows of 100 KiB + 4 KiB, at offset 0.
has scif_register "$ep offset=0x0 len=106496 ret=0" 2
result $? register_fields
has scif_unregister "$ep offset=0x0 len=106496 ret=0"
result $? unregister_fields
# 2 batches of 100 asynchronous 1 KiB writes, window to window.
has scif_rma_submit "$ep write=1 loffset=$hex roffset=$hex len=1024 flags=0x0" 200
result $? rma_submit_fields
has scif_rma_complete "$ep len=1024 signal=0 engine=[01] err=0" 200 &&
	has scif_rma_complete "$ep len=8 signal=1 engine=[01] err=0" 2
result $? rma_complete_fields
has scif_fence "$ep op=signal value=0x[12] flags=$hex ret=0" 2
result $? fence_fields
if [ $hooks -eq 1 ]; then
	has scif_node_failed "node=$self bus=loopback generation=$gen0 why=.+"
	result $? node_failed_fields
	has scif_node_down "node=$self bus=loopback generation=$gen0 why=failed"
	result $? node_down_fields
	has scif_node_up "node=$self bus=loopback generation=$((gen0 + 1)) why="
	result $? node_up_fields
else
	for t in node_failed_fields node_down_fields node_up_fields; do
		result 0 "$t # SKIP not the test build"
	done
fi
if [ $hooks -eq 1 ] && [ -w "$dyn" ]; then
	log=$(dmesg | grep "scif: node $self: ")
	echo "$log" | grep -q "online -> failed" &&
		echo "$log" | grep -q "failed -> absent" &&
		echo "$log" | grep -q "joining -> online"
	result $? dynamic_debug_at_each_transition "$(echo "$log" | tail -n 3 | tr '\n' '|')"
else
	result 0 "dynamic_debug_at_each_transition # SKIP no dynamic debug control or not the test build"
fi

[ "$failed" -eq 0 ]
