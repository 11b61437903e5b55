# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# Sourced by the shell tests of the SCIF clients (scif_net_test.sh,
# scif_rxe_test.sh, scif_vsock_test.sh, the scif_rdma tests...): TAP
# lines, a clock in ms, polling with a bound, the carrier of the
# sn<peer> device $dev, the loading of the clients' modules, and
# scif_rdma's device scif0 and its counters.
# The sourcing script sets $tap_suite (its name in a skip line) and
# starts n and failed at 0.
# shellcheck disable=SC2154 # tap_suite, dev, my_ip, loaded_mods, rdma_mods: set by the sourcing script

ok() { # name command...: one TAP line for the command's status
	tap_name=$1
	shift
	n=$((n + 1))
	if "$@"; then
		echo "ok $n - $tap_name"
	else
		echo "not ok $n - $tap_name"
		failed=$((failed + 1))
	fi
}

skip_all() {
	echo "ok 1 - $tap_suite # SKIP $1"
	echo "1..1"
	exit 0
}

now_ms() {
	awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime
}

# wait_for SECONDS command...: until the command succeeds, polling each
# 0.2 s; prints how long it took.
wait_for() {
	limit=$(($(now_ms) + $1 * 1000))
	start=$(now_ms)
	shift
	until "$@"; do
		[ "$(now_ms)" -lt "$limit" ] || return 1
		sleep 0.2
	done
	echo "# $* after $(($(now_ms) - start)) ms"
}

carrier_is() { # 0|1
	[ "$(cat "/sys/class/net/$dev/carrier" 2>/dev/null)" = "$1" ]
}

# Modules the test build puts in /modules/extra ($ex, set by the script).
loaded() { grep -q "^$1 " /proc/modules; }

# insmod_list NAME...: load $ex/NAME.ko for each present (a module may be
# built in), in order.
insmod_list() {
	for m in "$@"; do
		[ -e "$ex/$m.ko" ] || continue
		loaded "$m" || insmod "$ex/$m.ko" || return 1
	done
}

rmmod_list() {
	for m in "$@"; do
		! loaded "$m" || rmmod "$m" || return 1
	done
}

# The clients (scif_net, scif_vsock) use scif_peer_links.ko's functions:
# insmod_client NAME loads it first, unless loaded, then $ex/NAME.ko
# unless loaded; rmmod_client NAME unloads NAME, then scif_peer_links.ko
# once no client holds it (it holds scif.ko: the "rmmod" step unloads
# that after the test).
insmod_client() {
	insmod_list scif_peer_links && { loaded "$1" || insmod "$ex/$1.ko"; }
}

rmmod_links() {
	[ "$(cat /sys/module/scif_peer_links/refcnt 2> /dev/null)" != 0 ] ||
		rmmod scif_peer_links
}

rmmod_client() {
	rmmod "$1" && rmmod_links
}

# rmmod_soon MODULE: closed sockets may linger a few seconds (the common
# code's close timeout) and hold the module till then.
rmmod_soon() {
	wait_for 20 rmmod "$1" 2> /dev/null || ! loaded "$1"
}

# rmmod_list_soon NAME...: rmmod_soon each loaded one, in order.  The
# vsock core is held by every AF_VSOCK socket, and a socket closed by a
# process just killed is freed a moment later (its pending connections'
# work, a transport's close timeout), after the transport's own module.
rmmod_list_soon() {
	for m in "$@"; do
		! loaded "$m" || rmmod_soon "$m" || return 1
	done
}

# rmmod_client_soon MODULE: rmmod_soon, then rmmod_links.
rmmod_client_soon() {
	rmmod_soon "$1" && rmmod_links
}

# load_rdma_mods: each module of $rdma_mods that $ex has and that is not
# loaded yet, in order, added to $loaded_mods.
load_rdma_mods() {
	for m in $rdma_mods; do
		[ -e "$ex/$m.ko" ] || continue
		loaded "$m" && continue
		insmod "$ex/$m.ko" || return 1
		loaded_mods="$m $loaded_mods"
	done
}

# load_rdma: load_rdma_mods, then the user-space parts (ib_uverbs,
# rdma_ucm) must be there (loaded, or built into the kernel).
load_rdma() {
	load_rdma_mods && [ -d /sys/module/ib_uverbs ] &&
		[ -d /sys/module/rdma_ucm ]
}

# provider_install: the libibverbs provider /tests/$provider where
# libibverbs looks for it (its compiled-in /usr/lib/<multiarch>/libibverbs;
# the library itself may be in /lib), and its .driver file.
provider_install() {
	lib=$(ls /usr/lib/*/libibverbs.so.1 /lib/*/libibverbs.so.1 2> /dev/null |
		head -n 1)
	[ -n "$lib" ] || return 1
	d=/usr/lib/$(basename "$(dirname "$lib")")/libibverbs
	mkdir -p "$d" /etc/libibverbs.d &&
		cp "/tests/$provider" "$d/" &&
		echo "driver scif_rdma" > /etc/libibverbs.d/scif_rdma.driver
}

# user_verbs_require: skip_all unless this is a node of a 2-node cluster
# with scif_net, scif_rdma, ib_uverbs and the provider /tests/$provider;
# then $peer, $dev (sn<peer>), $my_ip and $peer_ip (10.77.0.<node+1>).
user_verbs_require() {
	[ "${SCIF_NODES:-}" = 2 ] && [ -n "$self" ] ||
		skip_all "not a node of a 2-node cluster"
	[ -e "$ex/scif_net.ko" ] || skip_all "no $ex/scif_net.ko"
	[ -e "$ex/scif_rdma.ko" ] || skip_all "no scif_rdma.ko for this kernel"
	[ -e "$ex/ib_uverbs.ko" ] || [ -d /sys/module/ib_uverbs ] ||
		skip_all "no ib_uverbs for this kernel"
	[ -e "/tests/$provider" ] || skip_all "no $provider in /tests"
	peer=$((1 - self))
	dev=sn$peer
	my_ip=10.77.0.$((self + 1))
	# shellcheck disable=SC2034 # the caller's
	peer_ip=10.77.0.$((peer + 1))
}

# user_verbs_up: TAP steps: scif_net with $my_ip on $dev and its carrier,
# the RDMA core's modules, scif0 on $dev, the provider installed.
user_verbs_up() {
	ok setup sn_addr_up
	ok carrier_on wait_for 120 carrier_is 1
	ok rdma_modules_loaded load_rdma
	ok scif_rdma_up scif_rdma_up
	ok provider_installed provider_install
}

# rmmod_loaded: unload $loaded_mods (what the script loaded, newest
# first), stopping at the first that fails.
rmmod_loaded() {
	for m in $loaded_mods; do
		rmmod "$m" || return 1
	done
}

# sn_addr_up: scif_net loaded, $my_ip/24 on $dev, $dev up.
sn_addr_up() {
	insmod_client scif_net &&
		wait_for 30 test -e "/sys/class/net/$dev" &&
		ip addr add "$my_ip/24" dev "$dev" && ip link set "$dev" up
}

# http_fetched URL [FILE]: the peer's busybox httpd has URL (saved in FILE).
http_fetched() {
	timeout 5 wget -q -O "${2:-/dev/null}" "$1" 2> /dev/null
}

# scif_rdma_up: scif_rdma loaded (from $ex) and its device scif0 made
# on $dev, its port ACTIVE within 10 s.
scif_rdma_up() {
	insmod "$ex/scif_rdma.ko" &&
		rdma link add scif0 type scif netdev "$dev" &&
		wait_for 10 sh -c "rdma link show scif0/1 | grep -q 'state ACTIVE'"
}

# scif_rdma_down: scif0 deleted, scif_rdma unloaded.
scif_rdma_down() {
	rdma link delete scif0 && rmmod scif_rdma
}

# scif_rdma_counters: scif0's counters, "name value" a line.
scif_rdma_counters() {
	rdma statistic show link scif0/1 2> /dev/null | tr ' ' '\n' |
		awk 'NR > 2 && NR % 2 == 1 { name = $1 } NR > 2 && NR % 2 == 0 { print name, $1 }'
}

# counter_of NAME FILE: counter NAME in FILE, a scif_rdma_counters
# output (0 if absent).
counter_of() {
	awk -v n="$1" '$1 == n { v = $2 } END { print v + 0 }' "$2"
}
