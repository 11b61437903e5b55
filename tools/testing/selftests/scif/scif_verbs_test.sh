#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# User verbs over scif_rdma (Documentation/scif/rdma.rst, "User
# verbs"): the project's libibverbs provider, libscif_rdma, with
# unmodified programs of Debian's ibverbs-utils, rdmacm-utils and
# perftest, between the two nodes of a 2-node cluster (both run this
# script).  Both load scif_net (10.77.0.(node+1)/24 on sn<peer>), the
# RDMA core with its user-space parts (ib_uverbs, rdma_ucm) and
# scif_rdma, make scif0 on sn<peer>, and install the provider from
# /tests (its .so where libibverbs looks, its .driver file).
#
# Both: ibv_devices lists scif0 and ibv_devinfo shows it an iWARP
# device whose port is ACTIVE.  Node 1 runs scif_verbs_limits (what the
# device refuses a user program, with the exact errno: MR rights,
# lengths, an unprivileged caller's RLIMIT_MEMLOCK, CQ and QP bounds,
# SRQs, and user space's half of the PDs, CQs, QPs and MRs; a mapped
# CQ's driver data and ring mappings).  Node 0
# runs the servers, node 1 the clients, each with a bound in time:
#   rping -V (RDMA READ and WRITE between user MRs, the data verified
#   by the client) of 4 KiB and of 64 KiB;
#   scif_verbs_dmabuf: an MR over a SCIF dma-buf of node 0's window
#   (ibv_reg_dmabuf_mr), node 1's RDMA WRITE found in the window and
#   the window's bytes RDMA READ back; the registrations refused (a
#   remote range, a pipe, no descriptor, bad offsets, a read-only
#   export); the window unregistered: nothing pinned, node 1's next
#   WRITE an error completion, node 0's QP an access error, the
#   window's bytes untouched (the program's rows, prefixed
#   dmabuf_server_ and dmabuf_client_);
#   scif_verbs_direct: WRITEs and READs that the provider does itself
#   through its mapping of the server's window, from a thread that may
#   not enter the kernel (seccomp: no ioctl, read or write), the bytes
#   checked on both sides; a SEND the send worker sends and four
#   WRITEs after it, completing in order (the provider waits for the
#   SEND); the server's MR deregistered, the client's
#   next WRITE an error completion (no signal), the server's memory
#   untouched (rows prefixed direct_server_ and direct_client_); the
#   kernel's counters: the window mapped, at most the 4 WRITEs of the
#   kernel's own counted (rdma_user_win_maps, rdma_write_reqs);
#   scif_verbs_inline: inline SENDs and WRITEs, the sender's buffer
#   overwritten right after each post, their bytes checked by the
#   server; then RDMA READs of them back across the server's pages,
#   checked by the client; completions polled under a seccomp filter
#   that denies ioctl, read and write; its CQ rings corrupted, its send
#   CQ overrunning;
#   ibv_rc_pingpong -c (ibverbs-utils), 200 round trips of 4 KiB with
#   the data checked, and ib_write_bw and ib_read_bw without -R, 64 KiB
#   messages: QPs connected without the CM, by modify_qp to RTR with
#   the peer's QP number, traded over TCP;
#   libfabric (libfabric-bin): fi_info -p verbs lists the domain
#   scif0 on both nodes, and fi_pingpong over "verbs;ofi_rxm" (RDM
#   endpoints over the provider's RC QPs) passes, 100 round trips of
#   4 KiB with the data checked (not on a kernel without AF_UNIX, as
#   the debug kernel is: libfabric's event queues need it);
#   ucmatose (rdmacm-utils): 2 connections by rdma_cm, 100 SENDs of
#   4 KiB each way on each, both ends exit 0;
#   ib_write_lat, ib_read_lat and ib_send_lat with -R: both ends exit 0
#   and the client prints its figures (perftest turns inline data off
#   for a device it does not know: scif_verbs_inline tests it); at
#   least half of the 8-byte SENDs were sent, and of the WRITEs and
#   READs moved straight into the server's window, by the thread that
#   posted them (node 1's rdma_poster_reqs counter), and at least half
#   of the SENDs node 1 received were taken in by its poll of an empty
#   CQ (rdma_poller_frames); ib_send_lat again with
#   SCIF_RDMA_BUSY_POLL=0 on both ends: it passes and no frame is
#   counted to a poller;
#   ib_write_bw, ib_read_bw and ib_send_bw with -R (rdma_cm), 64 KiB
#   and 1 MiB messages, and ib_send_bw --use-srq (the server's receives
#   from a shared receive queue) of 64 KiB: both ends must exit 0 and
#   the client print its figures (TAP comments);
#   scif1 on sn, scif_net's interface that reaches every node, beside
#   scif0: rping -V over it (20 exchanges of 4 KiB, the data verified);
#   a client killed (SIGKILL) in the middle of an rping run: the server
#   must see its end within 30 s, and on both nodes "rdma resource"
#   must then count no PD, CQ, QP, MR, context or cm_id left on scif0
#   (nothing pinned stays behind);
#   node 1's device counters must show the WRITEs and READs its
#   perftest clients posted (at least 200 of each; 50 under lockdep,
#   where perftest runs a quarter of the iterations), those of 1 MiB
#   all done straight into the server's window over its MR (its
#   rdma_direct_reqs counter).
# The nodes wait for each other through busybox httpd on both: a file
# "<step>" on node 0 when its server for that step listens, "done" on
# node 1 when its clients are over.
#
# "scif_verbs_test.sh bench" (scripts/bench-verbs.sh, part of make
# bench): the same setup, then figures instead of the checks, as TAP
# comments "# verbs-figures MODE SIZE VALUE" of node 1 (the clients):
# perftest with -R, ib_write_bw, ib_read_bw and ib_send_bw (modes
# writeto, readfrom, send; MB/s) of 8 B, 4 KiB, 64 KiB and 1 MiB, and
# the round trip of 8 B (mode lat-write, lat-send, lat-read; the
# typical microseconds, the round trip: twice what ib_write_lat and
# ib_send_lat print, which is half of it; ib_read_lat's as printed).
# ib_write_lat and ib_send_lat run without inline data, which perftest
# turns off for a device it does not know.
set -u

PATH=$PATH:/usr/bin:/usr/sbin
self=${SCIF_NODE:-}
ex=/modules/extra
rdma_mods="configfs ib_core ib_uverbs ib_cm iw_cm rdma_cm rdma_ucm"
www=/tmp/verbs-www
provider=libscif_rdma-rdmav34.so
mode=${1:-}
bench_sizes="8 4096 65536 1048576"
# perftest's iterations of each size: a quarter under lockdep (the debug
# kernel), where the data path is several times slower.
iters=100
[ -e /proc/lockdep ] && iters=25
n=0
failed=0
loaded_mods=

# shellcheck disable=SC2034 # read by scif_tap_lib.sh
tap_suite=scif_verbs
# shellcheck source=tools/testing/selftests/scif/scif_tap_lib.sh
. "$(dirname "$0")/scif_tap_lib.sh"

devinfo_ok() {
	out=$(ibv_devinfo -d scif0 2>&1)
	echo "$out" | sed 's/^/# /'
	echo "$out" | grep -q "transport:.*iWARP" &&
		echo "$out" | grep -q "state:.*PORT_ACTIVE"
}

# run_bound SECONDS LOG command...: the command, killed after SECONDS,
# its output in LOG (and as TAP comments); its status.  A command that a
# signal ended (status 128 + the signal; timeout's own is 124) gets the
# kernel's report of the fault as TAP comments too: the faulting
# address, instruction pointer and the mapping it was in.
run_bound() {
	secs=$1 log=$2
	shift 2
	timeout "$secs" "$@" > "$log" 2>&1 < /dev/null
	rc=$?
	sed 's/^/# /' "$log" | tail -n 25
	[ $rc -eq 0 ] || echo "# $1 exited $rc"
	[ $rc -gt 128 ] && signal_report "$1"
	return $rc
}

# The kernel's last lines about a program that a signal killed (those
# of x86's show_unhandled_signals: "segfault at", "trap", "general
# protection"), and the code bytes after them.
signal_report() { # program
	dmesg 2> /dev/null |
		grep -E -A1 "${1##*/}\\[[0-9]+\\]: (segfault|trap|general protection)" |
		tail -n 6 | sed 's/^/# kernel: /'
}

# A server of node 0 for step $1 (the command after it), in the
# background; "$www/$1" tells node 1 it listens (the port is open
# once rdma resource shows its cm_id).
serve_step() {
	step=$1
	shift
	run_bound 180 "/tmp/verbs-$step.log" "$@" &
	srv_pid=$!
	wait_for 20 sh -c "rdma resource show cm_id 2> /dev/null | grep -q LISTEN"
	touch "$www/$step"
}

# The client of node 1 for step $1, once node 0's server listens.
client_step() {
	step=$1
	shift
	wait_for 240 http_fetched "http://$peer_ip/$step" || return 1
	run_bound 120 "/tmp/verbs-$step.log" "$@"
}

# perftest's client printed its figures: a line that starts with the
# message size.
bw_printed() { # log size
	grep -Eq "^ *$2 +[0-9]+ +[0-9.]+" "$1"
}

# scif0's user objects: "rdma resource show" counts 0 PDs, CQs, QPs,
# cm_ids and MRs (and contexts, where it counts them).
resources_gone() {
	l=$(rdma resource show 2> /dev/null | grep "scif0:")
	echo "# $l"
	for w in pd cq qp cm_id mr; do
		echo "$l" | grep -Eq " $w 0( |\$)" || return 1
	done
	! echo "$l" | grep -Eq " ctx [1-9]"
}

rping_args() { # size
	echo "-a 10.77.0.1 -p 7174 -C 20 -S $1"
}

# libfabric resolves this node's name to its address (the guest has
# no resolver): a name for each node in /etc/hosts, and ours set.
name_nodes() {
	[ -e /etc/hosts ] && return 0
	printf '127.0.0.1 localhost\n10.77.0.1 scif-verbs0\n10.77.0.2 scif-verbs1\n' \
		> /etc/hosts
	hostname "scif-verbs$self"
}

# libfabric's verbs provider finds scif0 (fi_info lists its domain),
# alone and under ofi_rxm (RDM endpoints).
fi_info_ok() {
	name_nodes
	fi_info -p verbs > /tmp/verbs-fi_info.log 2>&1 &&
		fi_info -p "verbs;ofi_rxm" -e rdm >> /tmp/verbs-fi_info.log 2>&1
	rc=$?
	grep -E "^ *(provider|domain|fabric):" /tmp/verbs-fi_info.log | sort -u |
		head -n 8 | sed 's/^/# /'
	[ $rc -eq 0 ] && grep -q "domain: *scif0" /tmp/verbs-fi_info.log &&
		grep -q "provider: verbs;ofi_rxm" /tmp/verbs-fi_info.log
}

# One TAP line for a test that cannot run here.
skip_test() { # name reason
	n=$((n + 1))
	echo "ok $n - $1 # SKIP $2"
}

# libfabric's event queues need AF_UNIX sockets, which the debug
# kernel's configuration leaves out.
have_unix() {
	[ -e /proc/net/unix ]
}

# fi_pingpong's control socket (TCP 47592, 0xB9E8) listens.
pingpong_listens() {
	grep -q ":B9E8 00000000:0000 0A" /proc/net/tcp
}

# fi_pingpong over libfabric's verbs provider under ofi_rxm (reliable
# datagrams), 4 KiB messages, each received message checked (-c).
# ofi_rxm sizes its CQs for FI_UNIVERSE_SIZE processes (256 by
# default: more entries than a CQ of the device holds); the job has 2.
pingpong="env FI_UNIVERSE_SIZE=2 fi_pingpong -p verbs;ofi_rxm -e rdm -I 100 -S 4096 -c"

# ibv_rc_pingpong's server, and perftest's without -R, listen on TCP
# 18515 (0x4853) for the QP numbers: QPs connected by modify_qp, without
# the CM.
oob_listens() {
	grep -q ':4853 00000000:0000 0A' /proc/net/tcp
}
rc_pingpong="ibv_rc_pingpong -d scif0 -n 200 -c"
# ucmatose's arguments but the server's address (the client's -s):
# 2 connections, 100 messages of 4 KiB each way on each.
ucmatose="-c 2 -C 100 -S 4096"

# scif1 on sn, scif_net's interface that reaches every node (rdma.rst,
# "One device for every node"), beside scif0 on sn<peer>: sn gets
# 10.81.0.<node + 1>/24 and scif1's port must be ACTIVE on it.
sn_scif1_up() {
	ip addr add "10.81.0.$((self + 1))/24" dev sn && ip link set sn up &&
		rdma link add scif1 type scif netdev sn &&
		wait_for 10 sh -c "rdma link show scif1/1 | grep -q 'state ACTIVE.*netdev sn '"
}

# Node 0: the servers, one after another.
servers() {
	for s in 4096 32768; do
		# shellcheck disable=SC2046 # the arguments are words
		serve_step "rping-$s" rping -s $(rping_args "$s")
		ok "rping_server_$s" wait "$srv_pid"
	done
	serve_step inline /tests/scif_verbs_inline -s 10.77.0.1 7176
	ok inline_server_checked wait "$srv_pid"
	serve_step dmabuf /tests/scif_verbs_dmabuf -s 10.77.0.1 7178
	ok dmabuf_server wait "$srv_pid"
	tap_rows dmabuf_server /tmp/verbs-dmabuf.log
	serve_step direct /tests/scif_verbs_direct -s 10.77.0.1 7180
	ok direct_server wait "$srv_pid"
	tap_rows direct_server /tmp/verbs-direct.log
	# shellcheck disable=SC2086 # the arguments are words
	serve_step ucmatose ucmatose $ucmatose
	ok ucmatose_server wait "$srv_pid"
	# shellcheck disable=SC2086 # the arguments are words
	run_bound 120 /tmp/verbs-rc-pingpong.log $rc_pingpong &
	srv_pid=$!
	wait_for 20 oob_listens
	touch "$www/rc-pingpong"
	ok ibv_rc_pingpong_server wait "$srv_pid"
	for t in write read; do
		run_bound 120 "/tmp/verbs-oob-$t.log" "ib_${t}_bw" -d scif0 \
			-s 65536 -n "$iters" -F &
		srv_pid=$!
		wait_for 20 oob_listens
		touch "$www/oob-$t"
		ok "ib_${t}_bw_oob_server" wait "$srv_pid"
	done
	ok fi_info_lists_scif0 fi_info_ok
	if have_unix; then
		# shellcheck disable=SC2086 # the arguments are words
		run_bound 180 /tmp/verbs-fabric.log env FI_LOG_LEVEL=warn \
			$pingpong &
		srv_pid=$!
		wait_for 20 pingpong_listens
		touch "$www/fabric"
		ok fi_pingpong_rxm_server wait "$srv_pid"
	else
		skip_test fi_pingpong_rxm_server "no AF_UNIX in this kernel"
	fi
	for t in write read send; do
		serve_step "lat-$t" "ib_${t}_lat" -R -d scif0 -s 8 -n "$iters" -F
		ok "ib_${t}_lat_server" wait "$srv_pid"
	done
	serve_step lat-ring env SCIF_RDMA_BUSY_POLL=0 ib_send_lat -R -d scif0 \
		-s 8 -n "$iters" -F
	ok ib_send_lat_ring_only_server wait "$srv_pid"
	for t in write read send; do
		for s in 65536 1048576; do
			serve_step "$t-$s" "ib_${t}_bw" -R -d scif0 -s "$s" -n "$iters" -F
			ok "ib_${t}_bw_server_$s" wait "$srv_pid"
		done
	done
	# The receives from a shared receive queue.
	serve_step send-srq ib_send_bw -R -d scif0 -s 65536 -n "$iters" -F \
		--use-srq
	ok ib_send_bw_server_srq wait "$srv_pid"
	ok scif1_on_sn sn_scif1_up
	serve_step sn-rping rping -s -a 10.81.0.1 -p 7177 -C 20 -S 4096
	ok rping_server_on_sn wait "$srv_pid"
	ok scif1_deleted rdma link delete scif1
	timeout 60 rping -s -a 10.77.0.1 -p 7175 -C 100000 -S 32768 \
		> /tmp/verbs-kill.log 2>&1 &
	srv_pid=$!
	wait_for 20 sh -c "rdma resource show cm_id 2> /dev/null | grep -q LISTEN"
	touch "$www/kill"
	ok killed_client_seen wait_for 60 sh -c "! kill -0 $srv_pid 2> /dev/null"
	wait "$srv_pid"
	ok resources_gone_server wait_for 30 resources_gone
	ok told_to_finish wait_for 300 http_fetched "http://$peer_ip/done"
}

# A program's TAP rows ("ok N name", "not ok N name # why"), each one
# of ours, prefixed $1_.
# (The loop reads a file, not a pipe: ok counts in this shell.)
tap_rows() { # prefix log
	grep -E "^(not )?ok [0-9]+ " "$2" > "$2.rows"
	while read -r w1 w2 w3 rest; do
		if [ "$w1" = not ]; then
			echo "# $w2 $w3 $rest"
			ok "$1_${rest%% *}" false
		else
			ok "$1_$w3" true
		fi
	done < "$2.rows"
	grep -q "^1\.\.[0-9]" "$2" || ok "$1_ran_to_the_end" false
}

# scif_verbs_limits' PASS/FAIL lines, each one of ours (prefixed
# limits_).
limits_tests() {
	tmp=/tmp/verbs-limits.$$
	/tests/scif_verbs_limits scif0 > "$tmp" 2>&1
	echo "# scif_verbs_limits exited $?"
	while read -r verdict name rest; do
		[ -n "$rest" ] && echo "# $name $rest"
		case "$verdict" in
		PASS) ok "limits_$name" true ;;
		FAIL) ok "limits_$name" false ;;
		*) echo "# $verdict $name $rest" ;;
		esac
	done < "$tmp"
	grep -q "^PASS mr_memlock_unprivileged" "$tmp" ||
		ok limits_ran_to_the_end false
	rm -f "$tmp"
}

# This node's counter $1 grew by at least $2 since /tmp/verbs-before:
# rdma_direct_reqs, the WRITEs or READs of the last run that went
# straight into the server's window over its MR (a perftest MR is
# larger than 1 MiB); rdma_poster_reqs, those of them that the thread
# posting them moved itself, in ibv_post_send(); rdma_poller_frames,
# the SENDs and answers a poll of an empty mapped CQ took in itself.
# (The growth goes to $grown: $n is the TAP lines' count.)
counted_since() { # counter
	scif_rdma_counters > /tmp/verbs-after
	grown=$(($(counter_of "$1" /tmp/verbs-after) -
		$(counter_of "$1" /tmp/verbs-before)))
	echo "# $1: +$grown"
}
counted_at_least() { # counter count
	counted_since "$1"
	[ "$grown" -ge "$2" ]
}
counted_at_most() { # counter count
	counted_since "$1"
	[ "$grown" -le "$2" ]
}

# Node 1: the clients, after the limits (no other user object there).
clients() {
	limits_tests
	for s in 4096 32768; do
		# shellcheck disable=SC2046 # the arguments are words
		ok "rping_client_verified_$s" client_step "rping-$s" \
			rping -c -V $(rping_args "$s")
	done
	ok inline_client client_step inline \
		/tests/scif_verbs_inline -c 10.77.0.1 7176
	ok dmabuf_client client_step dmabuf \
		/tests/scif_verbs_dmabuf -c 10.77.0.1 7178
	tap_rows dmabuf_client /tmp/verbs-dmabuf.log
	scif_rdma_counters > /tmp/verbs-before
	ok direct_client client_step direct \
		/tests/scif_verbs_direct -c 10.77.0.1 7180
	tap_rows direct_client /tmp/verbs-direct.log
	# The client mapped the server's window, and the kernel moved at
	# most its first three WRITEs and the one after the window went:
	# the rest, and every READ, the provider did itself.
	ok direct_window_mapped counted_at_least rdma_user_win_maps 1
	ok direct_kernel_writes_at_most_4 counted_at_most rdma_write_reqs 4
	ok direct_kernel_reads_none counted_at_most rdma_read_reqs 0
	# shellcheck disable=SC2086 # the arguments are words
	ok ucmatose_client client_step ucmatose ucmatose $ucmatose \
		-s 10.77.0.1
	# shellcheck disable=SC2086 # the arguments are words
	ok ibv_rc_pingpong_client client_step rc-pingpong $rc_pingpong \
		"$peer_ip"
	for t in write read; do
		ok "ib_${t}_bw_oob_client" client_step "oob-$t" "ib_${t}_bw" \
			-d scif0 -s 65536 -n "$iters" -F "$peer_ip"
		ok "ib_${t}_bw_oob_figures" bw_printed "/tmp/verbs-oob-$t.log" 65536
	done
	ok fi_info_lists_scif0 fi_info_ok
	if have_unix; then
		# shellcheck disable=SC2086 # the arguments are words
		ok fi_pingpong_rxm_client client_step fabric $pingpong "$peer_ip"
	else
		skip_test fi_pingpong_rxm_client "no AF_UNIX in this kernel"
	fi
	for t in write read send; do
		scif_rdma_counters > /tmp/verbs-before
		ok "ib_${t}_lat_client" client_step "lat-$t" \
			"ib_${t}_lat" -R -d scif0 -s 8 -n "$iters" -F "$peer_ip"
		ok "ib_${t}_lat_figures" bw_printed "/tmp/verbs-lat-$t.log" 8
		# Its 8-byte SENDs, or its WRITEs from the third on (the
		# first to a key goes in a frame, the second asks for the
		# key's window; perftest's MR for WRITEs allows no remote
		# read, so the provider cannot map it), done by the kernel
		# in ibv_post_send(): at least half of them (one posted
		# while the worker still ends the one before goes to the
		# worker).
		if [ "$t" = read ]; then
			# Its READs (perftest's MR allows remote read, so
			# the provider maps the window), but the first few,
			# done by the provider: not the kernel's.
			ok ib_read_lat_by_provider counted_at_most \
				rdma_read_reqs $((iters / 2))
		else
			ok "ib_${t}_lat_by_poster" counted_at_least \
				rdma_poster_reqs $((iters / 2))
		fi
		[ "$t" = send ] || continue
		# Its SENDs taken in by the poll that found the CQ empty:
		# at least half (one that comes during the call may be
		# the receive thread's).
		ok ib_send_lat_by_poller counted_at_least \
			rdma_poller_frames $((iters / 2))
	done
	# The ring alone (SCIF_RDMA_BUSY_POLL=0): the receive threads
	# take every SEND in, none is counted to a poller.
	scif_rdma_counters > /tmp/verbs-before
	ok ib_send_lat_ring_only client_step lat-ring env SCIF_RDMA_BUSY_POLL=0 \
		ib_send_lat -R -d scif0 -s 8 -n "$iters" -F "$peer_ip"
	ok ib_send_lat_ring_only_no_poller counted_at_most rdma_poller_frames 0
	for t in write read send; do
		for s in 65536 1048576; do
			scif_rdma_counters > /tmp/verbs-before
			# The kernel's path alone (SCIF_RDMA_DIRECT=0: the
			# provider's READs are ib_read_lat's and
			# scif_verbs_direct's), whose WRITEs and READs of
			# 1 MiB go straight into the window over the MR.
			ok "ib_${t}_bw_client_$s" client_step "$t-$s" \
				env SCIF_RDMA_DIRECT=0 \
				"ib_${t}_bw" -R -d scif0 -s "$s" -n "$iters" -F "$peer_ip"
			ok "ib_${t}_bw_figures_$s" bw_printed "/tmp/verbs-$t-$s.log" "$s"
			[ "$t" != send ] && [ "$s" = 1048576 ] || continue
			ok "ib_${t}_bw_direct_$s" counted_at_least \
				rdma_direct_reqs "$iters"
		done
	done
	ok ib_send_bw_client_srq client_step send-srq \
		ib_send_bw -R -d scif0 -s 65536 -n "$iters" -F --use-srq "$peer_ip"
	ok ib_send_bw_figures_srq bw_printed /tmp/verbs-send-srq.log 65536
	ok scif1_on_sn sn_scif1_up
	ok rping_client_verified_on_sn client_step sn-rping \
		rping -c -V -a 10.81.0.1 -p 7177 -C 20 -S 4096
	ok scif1_deleted rdma link delete scif1
	ok killed_client_started wait_for 240 http_fetched "http://$peer_ip/kill"
	rping -c -a 10.77.0.1 -p 7175 -C 100000 -S 32768 > /dev/null 2>&1 &
	cli=$!
	sleep 3
	ok killed_client_ran kill -0 "$cli"
	kill -9 "$cli"
	wait "$cli"
	ok resources_gone_client wait_for 30 resources_gone
	scif_rdma_counters > /tmp/verbs-stats1
	w=$(($(counter_of rdma_write_reqs /tmp/verbs-stats1) -
		$(counter_of rdma_write_reqs /tmp/verbs-stats0)))
	r=$(($(counter_of rdma_read_reqs /tmp/verbs-stats1) -
		$(counter_of rdma_read_reqs /tmp/verbs-stats0)))
	echo "# posted by node 1: $w RDMA WRITEs, $r RDMA READs"
	ok rdma_writes_counted test "$w" -ge $((2 * iters))
	ok rdma_reads_counted test "$r" -ge $((2 * iters))
	touch "$www/done"
}

# The figures' runs, in the same order on both nodes: "kind size".
bench_runs() {
	for t in write read send; do
		for s in $bench_sizes; do echo "bw-$t $s"; done
	done
	for t in write send read; do echo "lat-$t 8"; done
}

# One perftest of the figures' runs (node 1 adds the server's address).
perftest_args() { # kind size
	case $1 in
	bw-*) n=1000
	      [ "$2" -ge 65536 ] && n=200
	      echo "ib_${1#bw-}_bw -R -d scif0 -F -s $2 -n $n" ;;
	lat-read) echo "ib_read_lat -R -d scif0 -F -s $2 -n 1000" ;;
	lat-*) echo "ib_${1#lat-}_lat -R -d scif0 -F -s $2 -n 1000" ;;
	esac
}

# Node 0: a server for each of the figures' runs.
bench_servers() {
	bench_runs | while read -r kind s; do
		# shellcheck disable=SC2046 # the arguments are words
		serve_step "$kind-$s" $(perftest_args "$kind" "$s")
		wait "$srv_pid"
	done
	ok told_to_finish wait_for 600 http_fetched "http://$peer_ip/done"
}

# A figure from perftest's output: bandwidth (its MiB/s as MB/s) or the
# typical round trip in microseconds.
figure_of() { # kind size log
	case $1 in
	bw-*) awk -v s="$2" '$1 == s && $4 ~ /^[0-9.]+$/ {
		printf "%.3f\n", $4 * 1.048576 }' "$3" ;;
	lat-read) awk -v s="$2" '$1 == s && $5 ~ /^[0-9.]+$/ {
		printf "%.2f\n", $5 }' "$3" ;;
	lat-*) awk -v s="$2" '$1 == s && $5 ~ /^[0-9.]+$/ {
		printf "%.2f\n", 2 * $5 }' "$3" ;;
	esac
}

# Node 1: the clients, each figure printed (a run without one fails).
bench_clients() {
	bench_runs > /tmp/verbs-runs
	while read -r kind s; do
		# shellcheck disable=SC2046 # the arguments are words
		client_step "$kind-$s" $(perftest_args "$kind" "$s") "$peer_ip"
		v=$(figure_of "$kind" "$s" "/tmp/verbs-$kind-$s.log")
		case $kind in
		bw-write) m=writeto ;;
		bw-read) m=readfrom ;;
		bw-send) m=send ;;
		*) m=$kind ;;
		esac
		[ -n "$v" ] && echo "# verbs-figures $m $s $v"
		ok "figure_${kind}_$s" test -n "$v"
	done < /tmp/verbs-runs
	touch "$www/done"
}

echo "TAP version 13"
user_verbs_require
for p in rdma ibv_devices ibv_devinfo rping ib_write_bw ib_read_bw ib_send_bw; do
	command -v $p > /dev/null || skip_all "no $p in the initramfs"
done
user_verbs_up
ok ibv_devices_lists_scif0 sh -c "ibv_devices | grep -q scif0"
ok ibv_devinfo_iwarp_active devinfo_ok
mkdir -p "$www"
httpd -f -p 80 -h "$www" &
httpd_pid=$!
scif_rdma_counters > /tmp/verbs-stats0
if [ "$mode" = bench ]; then
	if [ "$self" = 0 ]; then bench_servers; else bench_clients; sleep 2; fi
elif [ "$self" = 0 ]; then
	servers
else
	clients
	# Node 0 has fetched "done" before it tears down.
	sleep 2
fi
kill "$httpd_pid"
wait "$httpd_pid"
ok scif_rdma_down scif_rdma_down
ok rmmod_scif_net rmmod_client_soon scif_net
ok rdma_modules_unloaded rmmod_loaded
echo "1..$n"
[ $failed -eq 0 ]
