#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# scif_net (Documentation/scif/net.rst) across every pair of a cluster of
# three nodes or more (cluster-steps; make check's 4-node cluster): one
# sn<peer> device per peer, and the shared device sn.  Each node loads
# /modules/extra/scif_net.ko and gives each sn<peer> an address on a
# subnet of its own pair, 10.80.<pair>.<node+1>/24 (pair = 16 * lower id
# + higher id), and sn (whose MAC must be 02:53:4e:00:<node>:ff) an
# address on the one subnet of all, 10.81.0.<node+1>/24.  In TAP: a
# device per peer, carrier on the links to the higher nodes, which this
# node pings once the peer answers (3 pings, then 3 of 8000 bytes, each
# answered within 10 s, one frame each at scif_net's 64 KiB MTU), on the pair's device
# and on sn, whose neighbour table must then hold the peer's sn MAC;
# node 0 sends node 1 five frames on sn with node 2's source, which node
# 1 must refuse (sn's rx_errors 5 there, 0 elsewhere); then it waits for
# each lower node to have been there and gone (its carrier on, or
# packets from it, and then off), since a lower node pings this one
# before it unloads, and unloads scif_net itself (sn goes with it).
# With fewer than three nodes it skips (node-loss-steps runs
# scif_net_test.sh between two).  "scif_net_mesh.sh mpi-bench" is make
# bench's MPI part instead (mpi_bench, below).
set -u

self=${SCIF_NODE:-}
nodes=${SCIF_NODES:-0}
ex=/modules/extra
ko=$ex/scif_net.ko
tests=$(dirname "$0")
n=0
failed=0

# shellcheck disable=SC2034 # read by scif_tap_lib.sh
tap_suite=scif_net_mesh
# shellcheck source=tools/testing/selftests/scif/scif_tap_lib.sh
. "$(dirname "$0")/scif_tap_lib.sh"

echo "TAP version 13"
[ -n "$self" ] || skip_all "no node id (SCIF_NODE)"
[ "$nodes" -ge 3 ] || skip_all "fewer than three nodes"
[ -e "$ko" ] || skip_all "no scif_net.ko in this initramfs"

# addr NODE PEER: NODE's address on its link to PEER
addr() {
	if [ "$1" -lt "$2" ]; then pair=$((16 * $1 + $2)); else pair=$((16 * $2 + $1)); fi
	echo "10.80.$pair.$(($1 + 1))"
}

dev_of() { # peer
	echo "sn$1"
}

has_dev() {
	[ -e "/sys/class/net/$(dev_of "$1")" ]
}

carrier_of() { # peer 0|1
	[ "$(cat "/sys/class/net/$(dev_of "$1")/carrier" 2> /dev/null)" = "$2" ]
}

# The lower node was there: its carrier is on now, or it sent packets.
seen() { # peer
	carrier_of "$1" 1 ||
		[ "$(cat "/sys/class/net/$(dev_of "$1")/statistics/rx_packets")" -gt 0 ]
}

# ping_to DEVICE ADDRESS COUNT [ARGS...]: COUNT pings, one at a time, each
# answered within 10 s (busybox's ping waits for its last answer only as
# long as two round trips, or a second, which a loaded TCG guest exceeds;
# with four guests on two host cores, a CI run of 2026-12-02 saw node 3
# answer one of node 1's pings after more than 5 s, its reply counted by
# the device, none dropped: slow, not lost).
ping_to() {
	d=$1
	a=$2
	count=$3
	shift 3
	got=0
	for i in $(seq "$count"); do
		ping -c 1 -W 10 "$@" "$a" > /dev/null 2>&1 && got=$((got + 1))
	done
	echo "# $a: $got of $count pings answered"
	[ "$got" = "$count" ] && return 0
	# Lost: what the device counted, for the report.
	for c in tx_packets tx_dropped rx_packets rx_dropped rx_errors; do
		echo "# $d $c $(cat "/sys/class/net/$d/statistics/$c")"
	done
	return 1
}

pings() { # peer count [args...]
	p=$1
	shift
	ping_to "$(dev_of "$p")" "$(addr "$p" "$self")" "$@"
}

# The shared device sn: one subnet for every node, 10.81.0.<node + 1>/24.
saddr() { # node
	echo "10.81.0.$(($1 + 1))"
}

smac() { # node
	printf '02:53:4e:00:%02x:ff' "$1"
}

spings() { # peer count [args...]
	p=$1
	shift
	ping_to sn "$(saddr "$p")" "$@"
}

sanswers() { # peer
	ping -c 1 -W 1 "$(saddr "$1")" > /dev/null 2>&1
}

shared_setup() {
	[ "$(cat /sys/class/net/sn/address)" = "$(smac "$self")" ] &&
		ip addr add "$(saddr "$self")/24" dev sn && ip link set sn up
}

# The kernel's neighbour table maps the peer's address to its node's MAC.
neighbour_is() { # peer
	mac=$(awk -v a="$(saddr "$1")" '$1 == a && $6 == "sn" { print $4 }' /proc/net/arp)
	echo "# $(saddr "$1") is at ${mac:-nothing} on sn"
	[ "$mac" = "$(smac "$1")" ]
}

# sn refused exactly $2 frames (node 0 forges 5 to node 1, below).
refused() { # count
	got=$(cat /sys/class/net/sn/statistics/rx_errors)
	echo "# sn: $got frames refused, $1 expected"
	[ "$got" = "$1" ]
}

answers() { # peer
	ping -c 1 -W 1 "$(addr "$1" "$self")" > /dev/null 2>&1
}

setup() { # peer
	d=$(dev_of "$1")
	ip addr add "$(addr "$self" "$1")/24" dev "$d" && ip link set "$d" up
}

# ---- scif_rdma's device on sn: one RDMA device that reaches every node ----

# rdma and rping are in /usr/bin (qemu/mkinitramfs.sh's EXTRA_PROGRAMS).
PATH=$PATH:/usr/bin:/usr/sbin
rdma_mods="configfs ib_core ib_uverbs ib_cm iw_cm rdma_cm rdma_ucm"
provider=libscif_rdma-rdmav34.so
loaded_mods=
rping_port=7174

# What the RDMA part needs: this kernel's scif_rdma, rping, the provider.
rdma_here() {
	[ -e "$ex/scif_rdma.ko" ] && command -v rping > /dev/null &&
		command -v ibv_rc_pingpong > /dev/null && [ -e "$tests/$provider" ]
}

rdma_sn_up() {
	load_rdma && insmod "$ex/scif_rdma.ko" &&
		rdma link add scif0 type scif netdev sn &&
		wait_for 10 sh -c "rdma link show scif0/1 | grep -q 'state ACTIVE.*netdev sn '" &&
		provider_install
}

# rping: each node serves every lower node by a server of its own (a
# port each: $rping_port + the client's node), and runs a client to
# every higher node, all at once (one process each, all through scif0):
# 50 exchanges of 32 KiB, the data validated by the client (-V).  Each
# server serves one client (with one persistent server, -P, for all, a
# client once waited for ever while another connected: rdma.rst); every
# run is bounded by timeout.  A server lives until its client's node is
# done (not a fixed time: the nodes reach this step minutes apart).
rping_args="-C 50 -S 32768"
# Within the step's 600 s (qemu/init.sh); ended_or_killed ends them first.
serve_limit=540

rping_serve() {
	rping_pids=
	for c in $peers; do
		[ "$c" -lt "$self" ] || continue
		# shellcheck disable=SC2086 # the arguments are words
		timeout $serve_limit rping -s -a "$(saddr "$self")" -p $((rping_port + c)) \
			$rping_args > "/tmp/rping-server-$c.log" 2>&1 &
		rping_pids="$rping_pids $!:$c"
	done
}

# retry_while LOG PATTERN COMMAND...: COMMAND (bounded by timeout, its
# output in LOG) again, for at most 180 s, while it fails with PATTERN (an
# extended regular expression) in LOG (its server is not listening yet);
# its last status.
retry_while() {
	log=$1
	pat=$2
	shift 2
	limit=$(($(now_ms) + 180000))
	while :; do
		timeout 120 "$@" > "$log" 2>&1
		rc=$?
		if [ $rc -eq 0 ] || [ "$(now_ms)" -ge "$limit" ] ||
			! grep -Eq "$pat" "$log"; then
			return "$rc"
		fi
		sleep 0.5
	done
}

# waited WHAT LOG_PREFIX PID:NODE...: each process ended well; else its
# log's tail (LOG_PREFIX<node>.log) in the report.
waited() {
	what=$1
	prefix=$2
	shift 2
	bad=0
	for pp in "$@"; do
		wait "${pp%%:*}" && continue
		echo "# $what ${pp#*:} failed:"
		sed 's/^/#   /' "$prefix${pp#*:}.log" | tail -n 5
		bad=1
	done
	return $bad
}

rping_higher() {
	pids=
	for p in $peers; do
		[ "$p" -gt "$self" ] || continue
		# shellcheck disable=SC2086 # the arguments are words
		# Refused: by the CM (REJECTED) or at once, by rdma_connect.
		retry_while "/tmp/rping-$p.log" "REJECTED|Connection refused" \
			rping -c -V -a "$(saddr "$p")" \
			-p $((rping_port + self)) $rping_args &
		pids="$pids $!:$p"
	done
	# shellcheck disable=SC2086 # PID:NODE words
	waited "rping to node" /tmp/rping- $pids
}

# ended_or_killed PID[:NODE]...: each process waited for, 60 s at most
# in all (what it serves is done by now), and killed if still running.
ended_or_killed() {
	limit=$(($(now_ms) + 60000))
	for pp in "$@"; do
		while kill -0 "${pp%%:*}" 2> /dev/null &&
			[ "$(now_ms)" -lt "$limit" ]; do
			sleep 0.2
		done
		kill "${pp%%:*}" 2> /dev/null
	done
	return 0
}

# Each of this node's servers ended well (its client's node is done).
rping_served() {
	# shellcheck disable=SC2086 # PID:NODE words
	ended_or_killed $rping_pids
	# shellcheck disable=SC2086 # PID:NODE words
	waited "rping server for node" /tmp/rping-server- $rping_pids
}

# QPs connected by modify_qp (ibv_rc_pingpong, no CM): node 2 serves
# with GID 1 (fe80:: and the MAC's EUI-64), 200 exchanges of 4 KiB, the
# data checked (-c): the address handle's GID names the node.  Node 1
# serves with GID 0 (the MAC, zero-padded), whose interface id is zero,
# so that ibv_rc_pingpong gives no GRH: on sn no node is named, and the
# server's move to RTR must be refused (then the client fails too).
rc_pingpong="ibv_rc_pingpong -d scif0 -n 200 -c"
rc_gid() { # node: the GID index it uses, or nothing
	case $1 in 1) echo 0 ;; 2) echo 1 ;; esac
}

rc_serve() {
	g=$(rc_gid "$self")
	[ -n "$g" ] || return 0
	# shellcheck disable=SC2086 # the arguments are words
	timeout $serve_limit $rc_pingpong -g "$g" > /tmp/rc-server.log 2>&1 &
	rc_pid=$!
}

rc_client() { # peer
	# The server may not listen yet (its TCP port, after its verbs set-up).
	# shellcheck disable=SC2086 # the arguments are words
	retry_while "/tmp/rc-$1.log" "^Couldn't connect to" \
		$rc_pingpong -g "$(rc_gid "$1")" "$(saddr "$1")"
	rc=$?
	sed 's/^/# /' "/tmp/rc-$1.log" | tail -n 3
	[ "$1" = 1 ] && return $((rc == 0))
	return "$rc"
}

rc_served() {
	ended_or_killed "$rc_pid"
	wait "$rc_pid"
	rc=$?
	sed 's/^/# /' /tmp/rc-server.log | tail -n 3
	[ "$self" = 2 ] && return "$rc"
	[ $rc -ne 0 ] && grep -q "Failed to modify QP to RTR" /tmp/rc-server.log
}

rc_name() { # node
	case $1 in
	1) echo ibv_rc_pingpong_without_grh_refused ;;
	*) echo ibv_rc_pingpong_gid_1 ;;
	esac
}

rdma_sn_down() {
	rdma link delete scif0 && rmmod scif_rdma && rmmod_loaded
}

# ---- an MPI job over scif0 on sn: one rank on each node ----

mpi=/usr/lib/scif-mpi/scif_mpi_test
mpi_www=/tmp/mpi-www
mpi_port=8078

# Names and a user for Open MPI and libfabric (the guest has neither).
mpi_names() {
	grep -q '^root:' /etc/passwd 2> /dev/null ||
		echo 'root:x:0:0:root:/:/bin/sh' >> /etc/passwd
	{
		echo "127.0.0.1 localhost"
		for i in $(seq 0 $((nodes - 1))); do
			echo "$(saddr "$i") scif-mesh$i"
		done
	} > /etc/hosts
	hostname "scif-mesh$self"
}

# Node 0: mpirun of job JOB (a name: its log is /tmp/mpi-JOB.log, the
# daemons' commands go in $mpi_www/JOB), one rank on each of the first
# $mpi_np nodes, its daemons started on the other nodes through
# scif_mpi_agent.sh and node 0's httpd; Open MPI's transport as the
# OMPI_MCA_* words given say.
mpi_np=$nodes
mpi_job() { # job var=value...
	job=$1
	shift
	mkdir -p "$mpi_www/$job"
	for i in $(seq 0 $((mpi_np - 1))); do
		echo "$(saddr "$i") slots=1"
	done > /tmp/mpi-hosts
	env "$@" OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
	OMPI_MCA_plm_rsh_agent="$PWD/scif_mpi_agent.sh" \
	OMPI_MCA_plm_rsh_no_tree_spawn=1 \
	OMPI_MCA_oob_tcp_if_include=10.81.0.0/24 \
	SCIF_MPI_WWW="$mpi_www/$job" FI_PROVIDER=verbs FI_UNIVERSE_SIZE="$mpi_np" \
	SCIF_MPI_BENCH="${SCIF_MPI_BENCH:-0}" \
		timeout 240 mpirun --hostfile /tmp/mpi-hosts -np "$mpi_np" \
		-x FI_PROVIDER -x FI_UNIVERSE_SIZE -x SCIF_MPI_REQUIRE_UVERBS \
		-x SCIF_MPI_BENCH $mpi > "/tmp/mpi-$job.log" 2>&1
	rc=$?
	grep -E "^(library|pingpong|PASS|FAIL|rank)|mtl:ofi:prov" \
		"/tmp/mpi-$job.log" | sed 's/^/# /'
	[ $rc -eq 0 ] || { tail -n 20 "/tmp/mpi-$job.log" | sed 's/^/# /'; return 1; }
	grep -q "^PASS: " "/tmp/mpi-$job.log"
}

# Open MPI pinned to libfabric's "verbs;ofi_rxm" (pml cm, mtl ofi: no
# fall-back to TCP is possible), each rank required to hold a uverbs
# file; the provider each rank uses printed (mtl_ofi_verbose).
mpi_verbs="OMPI_MCA_pml=cm OMPI_MCA_mtl=ofi OMPI_MCA_btl=self
	OMPI_MCA_mtl_ofi_provider_include=verbs;ofi_rxm
	OMPI_MCA_mtl_ofi_verbose=1 SCIF_MPI_REQUIRE_UVERBS=1"
# The same job over TCP on sn (scif_net), for make bench's comparison.
# shellcheck disable=SC2034 # read by mpi_bench's eval
mpi_tcp="OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,tcp
	OMPI_MCA_btl_tcp_if_include=10.81.0.0/24 SCIF_MPI_REQUIRE_UVERBS=0"

mpi_www_start() {
	mkdir -p $mpi_www
	busybox httpd -f -p "$(saddr 0):$mpi_port" -h $mpi_www &
	www_pid=$!
}

# Node 0, make check: the job over verbs.
mpi_run() {
	mpi_www_start
	# shellcheck disable=SC2086 # the words are the variables
	mpi_job verbs $mpi_verbs
	rc=$?
	kill "$www_pid"
	return $rc
}

# Node 0: every rank used libfabric's verbs;ofi_rxm and ran on its node.
mpi_verbs_everywhere() {
	log=/tmp/mpi-verbs.log
	[ "$(grep -c 'mtl:ofi:prov: verbs;ofi_rxm' $log)" = "$nodes" ] ||
		return 1
	for i in $(seq 0 $((nodes - 1))); do
		grep -q "^rank $i of $nodes on scif-mesh$i: [1-9]" $log ||
			return 1
	done
}

# Another node: fetch the daemon's command of job JOB from node 0 and
# run it (within SECONDS of the call).
mpi_daemon() { # job [seconds]
	wait_for "${2:-240}" http_fetched \
		"http://$(saddr 0):$mpi_port/$1/launch-$(saddr "$self").sh" \
		"/tmp/mpi-launch-$1.sh" || return 1
	(cd / && OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
		sh "/tmp/mpi-launch-$1.sh") > "/tmp/mpi-daemon-$1.log" 2>&1
}

orted_gone() {
	wait_for 270 sh -c '! grep -qx orted /proc/[0-9]*/comm'
}

# "scif_net_mesh.sh mpi-bench" (scripts/bench-mpi.sh, for make bench):
# sn and scif0 on it, then the MPI job twice with SCIF_MPI_BENCH=1,
# over verbs and over TCP on sn, with two ranks, on nodes 0 and 1 (the
# ranks poll: with a rank on every node, more busy emulated CPUs than
# the host's two would measure the host's scheduler); node
# 0 prints each ping-pong figure as "# mpi-figures VIA BYTES US MB/S"
# (VIA verbs or tcp); then scif0 and scif_net go.
mpi_bench() {
	if ! rdma_here || [ ! -x "$mpi" ]; then
		skip_all "no scif_rdma.ko, rping, ibv_rc_pingpong, $provider or $mpi here"
	fi
	SCIF_MPI_BENCH=1
	mpi_np=2
	ok load_scif_net insmod_client scif_net
	ok shared_device wait_for 30 test -e /sys/class/net/sn
	ok shared_device_address shared_setup
	ok scif0_on_sn rdma_sn_up
	mpi_names
	for p in $peers; do
		# The other nodes (no rank) are gone soon.
		[ "$self" -lt "$mpi_np" ] && [ "$p" -lt "$mpi_np" ] || continue
		ok "node_${p}_answers_on_sn" wait_for 180 sanswers "$p"
	done
	if [ "$self" = 0 ]; then
		mpi_www_start
		for via in verbs tcp; do
			eval "words=\$mpi_$via"
			# shellcheck disable=SC2086,SC2154 # words: set by eval
			ok "mpi_bench_$via" mpi_job "$via" $words
			awk -v via="$via" '$1 == "mpi-figures" && NF == 4 {
				print "# mpi-figures", via, $2, $3, $4 }' \
				"/tmp/mpi-$via.log"
		done
		kill "$www_pid"
	elif [ "$self" -lt "$mpi_np" ]; then
		for via in verbs tcp; do
			ok "mpi_daemon_$via" mpi_daemon "$via" 480
			ok "mpi_daemon_${via}_done" orted_gone
		done
	fi
	ok scif0_deleted_rdma_unloaded rdma_sn_down
	ok unload_scif_net rmmod_client scif_net
	echo "1..$n"
	[ "$failed" -eq 0 ]
	exit
}

peers=
for p in $(seq 0 $((nodes - 1))); do
	[ "$p" = "$self" ] || peers="$peers $p"
done
[ "${1:-}" != mpi-bench ] || mpi_bench

ok load_scif_net insmod_client scif_net
for p in $peers; do
	ok "device_for_node_$p" wait_for 30 has_dev "$p"
	ok "address_on_link_to_node_$p" setup "$p"
done
# Frames are forged through a packet socket (the debug kernel has none).
forge=
[ -e /proc/net/packet ] && forge=1
ok shared_device wait_for 30 test -e /sys/class/net/sn
ok shared_device_address shared_setup
rdma=
if rdma_here; then
	rdma=1
	ok scif0_on_sn rdma_sn_up
	rc_serve
	rping_serve
fi
for p in $peers; do
	[ "$p" -gt "$self" ] || continue
	ok "carrier_to_node_$p" wait_for 180 carrier_of "$p" 1
	# The carrier is the two scif_nets' connection: the peer may not
	# have its address yet.  Once one ping is answered, none is lost.
	ok "node_${p}_answers" wait_for 60 answers "$p"
	ok "ping_node_$p" pings "$p" 3
	ok "ping_node_${p}_8000_bytes" pings "$p" 3 -s 8000
	ok "node_${p}_answers_on_sn" wait_for 60 sanswers "$p"
	ok "ping_node_${p}_on_sn" spings "$p" 3
	ok "ping_node_${p}_on_sn_8000_bytes" spings "$p" 3 -s 8000
	ok "neighbour_node_${p}_on_sn" neighbour_is "$p"
	if [ -n "$rdma" ]; then
		if [ "$self" = 0 ] && [ -n "$(rc_gid "$p")" ]; then
			ok "$(rc_name "$p")_node_$p" rc_client "$p"
		fi
	fi
	if [ "$self" = 0 ] && [ "$p" = 1 ] && [ -n "$forge" ]; then
		# Node 1 must refuse frames from node 0 with node 2's source;
		# the ping after them is answered once node 1 has read them.
		ok forged_frames_to_node_1 "$tests/scif_net_spoof" sn "$(smac 1)" "$(smac 2)" 5
		ok node_1_answers_after_forged_frames spings 1 1
	fi
done
if [ -n "$rdma" ]; then
	ok rping_every_higher_node_at_once rping_higher
fi
if [ -n "$rdma" ] && [ -x "$mpi" ] && [ -e /proc/net/unix ]; then
	mpi_names
	if [ "$self" = 0 ]; then
		ok mpi_job_over_scif0 mpi_run
		ok mpi_ranks_on_verbs_each_on_its_node mpi_verbs_everywhere
	else
		ok mpi_daemon_started mpi_daemon verbs
		ok mpi_daemon_done orted_gone
	fi
else
	n=$((n + 1))
	echo "ok $n - mpi_job_over_scif0 # SKIP no scif0, no $mpi (Open MPI), or no AF_UNIX (libfabric's event queues need it; the debug kernel has none) here"
fi
for p in $peers; do
	[ "$p" -lt "$self" ] || continue
	ok "node_${p}_came" wait_for 300 seen "$p"
	ok "node_${p}_done" wait_for 300 carrier_of "$p" 0
done
if [ -z "$forge" ]; then
	n=$((n + 1))
	echo "ok $n - forged_frames_refused # SKIP no AF_PACKET (CONFIG_PACKET) to forge them"
elif [ "$self" = 1 ]; then
	ok forged_frames_refused refused 5
else
	ok no_frame_refused refused 0
fi
if [ -n "$rdma" ] && [ -n "$(rc_gid "$self")" ]; then
	ok "$(rc_name "$self")_served" rc_served
fi
if [ -n "$rdma" ]; then
	ok rping_served_every_lower_node rping_served
	ok scif0_deleted_rdma_unloaded rdma_sn_down
else
	n=$((n + 1))
	echo "ok $n - scif0_on_sn # SKIP no scif_rdma.ko, rping, ibv_rc_pingpong or $provider here"
fi
ok unload_scif_net rmmod_client scif_net
ok shared_device_gone test ! -e /sys/class/net/sn
echo "1..$n"
[ "$failed" -eq 0 ]
