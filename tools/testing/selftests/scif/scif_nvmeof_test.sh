#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# NVMe over Fabrics over scif_rdma (Documentation/scif/rdma.rst), with
# the guest kernel's own nvmet, nvmet-rdma and nvme-rdma, between the
# two nodes of a 2-node cluster (both run this script).  Both load
# scif_net (10.77.0.(node+1)/24 on sn<peer>), the RDMA core, scif_rdma
# and the NVMe modules (all from /modules/extra), and make scif0 on
# sn<peer>.
#
# Node 0 is the target: a 64 MiB brd RAM disk as namespace 1 of the
# subsystem $nqn, on an rdma port at its address, port 4420, through
# configfs; nvmet-rdma with use_srq=1, and its shared receive queues on
# scif0 must show while the host is connected.  Node 1 is the host:
# "nvme discover" must list the subsystem, "nvme connect -t rdma" must
# give a namespace of 64 MiB,
# then fio with crc32c verification (1 MiB sequential writes, 4 KiB
# and 4-256 KiB random writes, each read back by a verify-only pass)
# must report no error and the expected byte counts, a verify-only pass
# over never-written blocks must fail (the check can fail), the first
# 32 MiB read back through NVMe must have the checksum the target's RAM
# disk has (under lockdep an eighth of each job, the first 4 MiB).
# Then figures (TAP comments, no pass/fail; none under lockdep): fio's
# 1 MiB sequential read bandwidth and 4 KiB random read IOPS over rdma,
# then, where the kernel has nvme-tcp and nvmet-tcp, the same over
# NVMe/TCP on the same scif_net interface (a second port of the target,
# tcp at its address, port 4421, which "nvme connect -t tcp" must
# reach), and, when the nodes are also joined by virtio-net (eth0 at
# 10.99.0.(node+1), qemu/cluster.sh -N: make bench), over that (a third
# port, port 4422).
# "nvme disconnect" must remove the controller.  Then the target tears
# its configfs down and removes scif0 (under lockdep the other way
# round: see target_end), and both unload everything.  The
# nodes wait for each other through busybox httpd (a file "ready" on
# node 0, "done" on node 1, then "done" on node 0).
#
# "scif_nvmeof_test.sh loss" (the nvmeof-loss cluster of make check,
# qemu/cluster.sh -D: a virtio-blk disk per node that outlives the
# node's QEMU): node 1 is the target, on its disk, and is killed in the
# middle of a write; node 0, the host, connected with a controller loss
# timeout of 600 s, asks the launcher to kill node 1 while fio writes
# 48 MiB with crc32c headers (under lockdep 8 MiB), then to boot it
# again.  Node 1's second life sets the same target up on the same
# disk; the host's nvme-rdma must reconnect by itself and fio end
# without an error, having written everything; a verify-only pass must
# find every block fio wrote (none acknowledged was lost; none went in
# twice over a newer one), and the disk's first 48 MiB (8) must read
# the same on the target.
set -u

PATH=$PATH:/usr/bin:/usr/sbin
self=${SCIF_NODE:-}
ex=/modules/extra
# Load order, both kernels (6.1's T10-PI and CRC helpers, 6.12's
# keyring and auth); those absent for a kernel are skipped.
rdma_mods="configfs ib_core ib_uverbs ib_cm iw_cm rdma_cm"
crc_mods="crct10dif_common crc64 crct10dif-pclmul crct10dif_generic
	crc-t10dif crc64-rocksoft t10-pi"
nvme_mods="nvme-keyring nvme-auth nvme-core nvme-fabrics nvmet nvmet-rdma
	nvme-rdma nvmet-tcp nvme-tcp brd"
# The loss run's disk (6.12 has virtio and its PCI transport built in).
disk_mods="virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev
	virtio_pci virtio_blk"
mode=${1:-}
nqn=nqn.2026-11.org.scif:nvmeof-test
hostnqn=nqn.2014-08.org.nvmexpress:uuid:5cf1f000-0000-4000-8000-000000000001
hostid=5cf1f000-0000-4000-8000-000000000001
cfg=/sys/kernel/config/nvmet
www=/tmp/nvmeof-www
fio_out=/tmp/nvmeof-fio.out
loaded_mods=
n=0
failed=0
# The fio jobs' sizes (MiB; at offsets 0, 32M and 40M), and the loss
# run's writes (MiB, at most MB/s).  Under lockdep (the debug kernel,
# where NVMe-oF moves about 1 MB/s here) an eighth, and the loss run's
# writes a sixth at a sixth of the rate: still under way at the kill.
if [ -e /proc/lockdep ]; then
	seq_mib=4 rnd_mib=1 mix_mib=2 loss_mib=8 loss_rate=1
else
	seq_mib=32 rnd_mib=8 mix_mib=16 loss_mib=48 loss_rate=6
fi

# shellcheck disable=SC2034 # read by scif_tap_lib.sh
tap_suite=scif_nvmeof
# shellcheck source=tools/testing/selftests/scif/scif_tap_lib.sh
. "$(dirname "$0")/scif_tap_lib.sh"

mod_loaded() { loaded "$(echo "$1" | tr - _)"; }

# A module of the list that is present and not loaded is loaded; the
# CRC helpers may refuse a CPU without their instructions (the generic
# ones then serve), so their failure is not one.
load_mods() {
	for m in $rdma_mods $crc_mods $nvme_mods $disk_mods; do
		[ -e "$ex/$m.ko" ] || continue
		mod_loaded "$m" && continue
		args=
		[ "$m" = brd ] && args="rd_nr=1 rd_size=65536"
		# The target's queues take their receives from shared
		# receive queues, but in the loss run (rdma.rst).
		[ "$m" = nvmet-rdma ] && [ "$mode" != loss ] && args=use_srq=1
		# shellcheck disable=SC2086 # the module's parameters are words
		if insmod "$ex/$m.ko" $args 2> /dev/null; then
			loaded_mods="$m $loaded_mods"
		else
			case "$m" in
			crc*|t10-pi) ;;
			*) echo "# insmod $m failed"; return 1 ;;
			esac
		fi
	done
	[ -d /sys/module/nvmet_rdma ] && [ -d /sys/module/nvme_rdma ]
}

# The target: namespace 1 of $nqn on $1 (default /dev/ram0), any host,
# on an rdma port at my_ip:4420.
target_up() {
	bdev=${1:-/dev/ram0}
	mount -t configfs none /sys/kernel/config 2> /dev/null
	[ -d "$cfg" ] && [ -b "$bdev" ] || return 1
	# Fixed identities: nvmet draws the serial and the namespace's
	# UUID and NGUID at random, and a host that reconnects to a
	# namespace whose identifiers changed drops it ("identifiers
	# changed"), failing the I/O it held.
	mkdir "$cfg/subsystems/$nqn" &&
		echo 1 > "$cfg/subsystems/$nqn/attr_allow_any_host" &&
		echo 5c1f00000001 > "$cfg/subsystems/$nqn/attr_serial" &&
		mkdir "$cfg/subsystems/$nqn/namespaces/1" &&
		echo 5cf1f000-0000-4000-8000-0000000000aa > "$cfg/subsystems/$nqn/namespaces/1/device_uuid" &&
		echo 5cf1f000-0000-4000-8000-0000000000bb > "$cfg/subsystems/$nqn/namespaces/1/device_nguid" &&
		echo "$bdev" > "$cfg/subsystems/$nqn/namespaces/1/device_path" &&
		echo 1 > "$cfg/subsystems/$nqn/namespaces/1/enable" &&
		mkdir "$cfg/ports/1" &&
		echo rdma > "$cfg/ports/1/addr_trtype" &&
		echo ipv4 > "$cfg/ports/1/addr_adrfam" &&
		echo "$my_ip" > "$cfg/ports/1/addr_traddr" &&
		echo 4420 > "$cfg/ports/1/addr_trsvcid" &&
		ln -s "$cfg/subsystems/$nqn" "$cfg/ports/1/subsystems/$nqn" ||
		return 1
	mod_loaded nvmet-tcp || return 0
	tcp_port 2 "$my_ip" 4421 || return 1
	[ -z "$eth_ip" ] || tcp_port 3 "$eth_ip" 4422
}

# tcp_port N ADDR PORT: port N of the target, NVMe/TCP at ADDR:PORT.
tcp_port() {
	mkdir "$cfg/ports/$1" &&
		echo tcp > "$cfg/ports/$1/addr_trtype" &&
		echo ipv4 > "$cfg/ports/$1/addr_adrfam" &&
		echo "$2" > "$cfg/ports/$1/addr_traddr" &&
		echo "$3" > "$cfg/ports/$1/addr_trsvcid" &&
		ln -s "$cfg/subsystems/$nqn" "$cfg/ports/$1/subsystems/$nqn"
}

# Each step even if an earlier one failed (a half-made target is
# taken down as far as it goes); then nothing of it may be left.
target_down() {
	for p in 3 2; do
		rm -f "$cfg/ports/$p/subsystems/$nqn"
		[ ! -d "$cfg/ports/$p" ] || rmdir "$cfg/ports/$p"
	done
	rm -f "$cfg/ports/1/subsystems/$nqn"
	rmdir "$cfg/ports/1"
	echo 0 > "$cfg/subsystems/$nqn/namespaces/1/enable"
	rmdir "$cfg/subsystems/$nqn/namespaces/1"
	rmdir "$cfg/subsystems/$nqn"
	[ ! -e "$cfg/ports/1" ] && [ ! -e "$cfg/ports/2" ] &&
		[ ! -e "$cfg/ports/3" ] && [ ! -e "$cfg/subsystems/$nqn" ] &&
		umount /sys/kernel/config
}

# md5 of the first $2 MiB of block device $1, read past the page cache.
sum_mib() {
	dd if="$1" bs=1M count="$2" iflag=direct 2> /dev/null | md5sum |
		cut -d' ' -f1
}

# nvmet-rdma made its shared receive queues on scif0 (once a host
# connected; they go with its last queue).
srq_in_use() {
	out=$(rdma resource show srq dev scif0 2> /dev/null)
	echo "$out" | grep -q srqn || return 1
	echo "$out" | head -n 2 | sed 's/^/# /'
}

# The host's md5 of the first $2 MiB is that of the target's device $1.
target_sum_matches() {
	http_fetched "http://$peer_ip/sum" /tmp/nvmeof-sum || return 1
	want=$(cat /tmp/nvmeof-sum)
	got=$(sum_mib "$1" "$2")
	echo "# host read $want, target's $1 has $got"
	[ -n "$want" ] && [ "$want" = "$got" ]
}

# The target's end, once the host is done: configfs and the link down,
# then, once the host unloaded, everything unloaded here.  Under
# lockdep (the debug kernel) the device goes first: rdma_cm's device
# removal then destroys the port's listener (nvmet-rdma hands it over),
# so the configfs teardown, which holds nvmet_config_sem, no longer
# takes rdma_cm's handler_mutex to destroy it.  nvmet-rdma takes the
# two the other way round when a host's connect command reaches it
# before its CM handler saw the connection established, and lockdep
# would report the kernel's own inversion (rdma.rst, "NVMe over
# Fabrics").
target_end() {
	if [ -e /proc/lockdep ]; then
		ok rdma_link_down scif_rdma_down
		ok nvmet_teardown target_down
	else
		ok nvmet_teardown target_down
		ok rdma_link_down scif_rdma_down
	fi
	touch "$www/done"
	ok peer_unload_takes_carrier_off wait_for 120 carrier_is 0
	kill "$httpd_pid"
	wait "$httpd_pid"
	ok rmmod_scif_net rmmod_client scif_net
	ok modules_unloaded rmmod_loaded
}

# The target's side; the host says when it is done with it.
target() {
	ok carrier_on wait_for 60 carrier_is 1
	ok modules_loaded load_mods
	ok rdma_link_up scif_rdma_up
	ok brd_ram_disk test -b /dev/ram0
	ok nvmet_configfs target_up
	touch "$www/ready"
	ok target_queues_use_srq wait_for 120 srq_in_use
	ok host_done wait_for 400 http_fetched "http://$peer_ip/done"
	ok namespace_holds_the_host_writes target_sum_matches /dev/ram0 "$seq_mib"
	target_end
}

discover() {
	out=$(nvme discover -t rdma -a "$peer_ip" -s 4420 -q "$hostnqn" \
		-I "$hostid" 2>&1)
	echo "$out" | sed 's/^/# /'
	echo "$out" | grep -q "subnqn: *$nqn" &&
		echo "$out" | grep -q "trtype: *rdma"
}

# The namespace of $nqn: its block device's name in $ns (its "device"
# is the controller, or with native multipath the subsystem: both show
# the subsystem NQN).
find_ns() {
	ns=
	for b in /sys/block/nvme*n1; do
		[ "$(cat "$b/device/subsysnqn" 2> /dev/null)" = "$nqn" ] &&
			ns=${b##*/}
	done
	[ -n "$ns" ] && [ -b "/dev/$ns" ]
}

connect() {
	nvme connect -t rdma -a "$peer_ip" -s 4420 -n "$nqn" -q "$hostnqn" \
		-I "$hostid" && wait_for 20 find_ns
}

ns_is_64mib() {
	find_ns && [ "$(cat "/sys/block/$ns/size")" = 131072 ]
}

# fio_run NAME READ-KIB WRITE-KIB ARGS...: a job on the namespace with
# crc32c headers (--output-format=terse, version 3: field 5 the error,
# 6 the KiB read, 47 the KiB written); fio must exit 0 with error 0 and
# have read and written what is asked ("-": not checked).
fio_run() {
	name=$1 rkib=$2 wkib=$3
	shift 3
	fio --name="$name" --filename="/dev/$ns" --direct=1 --thread \
		--ioengine=libaio --verify=crc32c --verify_fatal=1 "$@" \
		--output-format=terse --terse-version=3 > "$fio_out" 2>&1
	rc=$?
	res=$(grep "^3;" "$fio_out" | awk -F';' '{ print $5, $6, $47 }')
	echo "# fio $name: exit $rc, error read-KiB written-KiB: $res"
	[ $rc -eq 0 ] || { sed 's/^/# /' "$fio_out" | head -20; return 1; }
	# shellcheck disable=SC2086 # three numbers
	set -- $res
	[ $# -eq 3 ] && [ "$1" = 0 ] && [ "$2" = "$rkib" ] &&
		{ [ "$wkib" = - ] || [ "$3" = "$wkib" ]; }
}

# The check can fail: blocks no job wrote (the last 8 MiB) do not
# verify: fio stops at the first with EILSEQ (84) and "bad magic".
fio_detects_bad_data() {
	fio --name=unwritten --filename="/dev/$ns" --direct=1 --thread \
		--ioengine=libaio --verify=crc32c --rw=read --bs=4k \
		--offset=56M --size=8M --verify_only \
		--output-format=terse --terse-version=3 > "$fio_out" 2>&1 &&
		return 1
	grep -q "^verify: bad magic header" "$fio_out" &&
		[ "$(grep "^3;" "$fio_out" | cut -d';' -f5)" = 84 ]
}

# fio_figure NAME ARGS...: a read job's bandwidth (KiB/s) and IOPS,
# "KIBPS IOPS" (terse version 3, fields 7 and 8); no verification.
fio_figure() {
	name=$1
	shift
	fio --name="$name" --filename="/dev/$ns" --direct=1 --thread \
		--ioengine=libaio "$@" --output-format=terse --terse-version=3 \
		2> /dev/null | awk -F';' '/^3;/ { print $7, $8 }'
}

# figures ID VIA: 1 MiB sequential read bandwidth and 4 KiB random read
# IOPS on the namespace, as a TAP comment, and again for make bench
# (scripts/bench-nvmeof.sh) as "# nvme-figures ID MB/s IOPS".
figures() {
	id=$1 via=$2
	# shellcheck disable=SC2046 # two numbers
	set -- $(fio_figure seqread --rw=read --bs=1M --offset=0 --size=32M \
		--iodepth=4)
	kibps=${1:-0}
	# shellcheck disable=SC2046 # two numbers
	set -- $(fio_figure randread --rw=randread --bs=4k --offset=0 \
		--size=32M --iodepth=16 --runtime=5 --time_based)
	mbps=$((kibps * 1024 / 1000000))
	echo "# figures $via: 1 MiB sequential read $mbps MB/s, 4 KiB random read ${2:-0} IOPS"
	echo "# nvme-figures $id $mbps ${2:-0}"
}

tcp_connect() { # address port
	nvme connect -t tcp -a "$1" -s "$2" -n "$nqn" -q "$hostnqn" \
		-I "$hostid" && wait_for 20 find_ns
}

# The figures over rdma, then over NVMe/TCP on the same interface, then,
# with the nodes also joined by virtio-net (make bench), over that (none
# under lockdep: they would measure the debug kernel).
compare() {
	[ ! -e /proc/lockdep ] || { echo "# figures: none under lockdep"; return 0; }
	figures srd "NVMe-oF over scif_rdma"
	mod_loaded nvme-tcp || return 0
	ok nvme_disconnect_rdma disconnect
	ok nvme_tcp_connect tcp_connect "$peer_ip" 4421 || return 0
	figures tcp-sn "NVMe/TCP over scif_net"
	[ -n "$eth_ip" ] || return 0
	ok nvme_disconnect_tcp disconnect
	ok nvme_tcp_connect_virtio_net \
		tcp_connect "10.99.0.$((peer + 1))" 4422 || return 0
	figures tcp-eth "NVMe/TCP over virtio-net"
}

publish_sum() { # MiB
	sum_mib "/dev/$ns" "$1" > "$www/sum" && [ -s "$www/sum" ]
}

disconnect() {
	nvme disconnect -n "$nqn" | sed 's/^/# /'
	wait_for 20 sh -c "! ls /sys/class/nvme/nvme* > /dev/null 2>&1"
}

fio_jobs() {
	seq="--rw=write --bs=1M --offset=0 --size=${seq_mib}M --iodepth=4"
	rnd="--rw=randwrite --bs=4k --offset=32M --size=${rnd_mib}M --iodepth=16"
	mix="--rw=randwrite --bsrange=4k-256k --offset=40M --size=${mix_mib}M --iodepth=8"
	sk=$((seq_mib * 1024)) rk=$((rnd_mib * 1024)) mk=$((mix_mib * 1024))
	# shellcheck disable=SC2086 # the job arguments are words
	{
		ok fio_seq_1m_write fio_run seq1m 0 $sk $seq --do_verify=0
		ok fio_seq_1m_verify fio_run seq1m $sk - $seq --verify_only
		ok fio_rand_4k_write_verify fio_run rand4k $rk $rk $rnd
		ok fio_rand_4k_verify fio_run rand4k $rk - $rnd --verify_only
		ok fio_rand_mixed_write_verify fio_run mixed $mk $mk $mix
		ok fio_rand_mixed_verify fio_run mixed $mk - $mix --verify_only
	}
}

# The host's side.
host() {
	ok carrier_on wait_for 120 carrier_is 1
	ok modules_loaded load_mods
	ok rdma_link_up scif_rdma_up
	ok target_ready wait_for 120 http_fetched "http://$peer_ip/ready"
	ok nvme_discover discover
	ok nvme_connect connect
	if ns_is_64mib; then
		ok namespace_64mib true
		fio_jobs
		ok fio_detects_bad_data fio_detects_bad_data
		ok checksum_published publish_sum "$seq_mib"
		compare
	else
		ok namespace_64mib false
	fi
	host_end
}

# The host's end: disconnected and the link down, then, once the target
# is done too, everything unloaded.
host_end() {
	ok nvme_disconnect disconnect
	touch "$www/done"
	ok rdma_link_down scif_rdma_down
	ok told_to_finish wait_for 300 http_fetched "http://$peer_ip/done"
	kill "$httpd_pid"
	wait "$httpd_pid"
	ok rmmod_scif_net rmmod_client scif_net
	ok modules_unloaded rmmod_loaded
}

# ---- the loss run ----

# Node 1: the target on its disk; its first life is killed by the host.
target_loss() {
	life=${SCIF_RESTART:-0}
	ok carrier_on wait_for 120 carrier_is 1
	ok modules_loaded load_mods
	ok rdma_link_up scif_rdma_up
	ok disk_present test -b /dev/vda
	ok nvmet_configfs target_up /dev/vda
	touch "$www/ready$life"
	if [ "$life" = 0 ]; then
		# The host has this life killed in the middle of its writes.
		wait_for 900 http_fetched "http://$peer_ip/never"
		return
	fi
	ok host_done wait_for 600 http_fetched "http://$peer_ip/done"
	ok disk_holds_the_host_writes target_sum_matches /dev/vda "$loss_mib"
	target_end
}

# nvme-rdma gives up on a lost controller after ctrl-loss-tmo seconds
# and retries every reconnect-delay seconds until then.
connect_lossy() {
	nvme connect -t rdma -a "$peer_ip" -s 4420 -n "$nqn" -q "$hostnqn" \
		-I "$hostid" --ctrl-loss-tmo=600 --reconnect-delay=2 &&
		wait_for 20 find_ns
}

ctrl_state() { cat /sys/class/nvme/nvme*/state 2> /dev/null | head -n 1; }
ctrl_live() { [ "$(ctrl_state)" = live ]; }
ctrl_not_live() { [ "$(ctrl_state)" != live ]; }

# Kill node 1 while fio writes; boot it again; fio must end cleanly.
write_through_loss() {
	fio --name=loss --filename="/dev/$ns" --direct=1 --thread \
		--ioengine=libaio --verify=crc32c --do_verify=0 \
		--rw=write --bs=64k --offset=0 --size="${loss_mib}M" --iodepth=4 \
		--rate="${loss_rate}m" --output-format=terse --terse-version=3 \
		> "$fio_out" 2>&1 &
	fio_pid=$!
	sleep 3
	ok target_killed_mid_write scif-cluster kill 1
	ok fio_still_running kill -0 "$fio_pid"
	ok controller_left_live wait_for 60 ctrl_not_live
	echo "# controller state after the kill: $(ctrl_state)"
	ok target_restarted scif-cluster restart 1
	ok target_ready_again wait_for 600 http_fetched "http://$peer_ip/ready1"
	ok controller_live_again wait_for 300 ctrl_live
	wait "$fio_pid"
	rc=$?
	res=$(grep "^3;" "$fio_out" | awk -F';' '{ print $5, $47 }')
	echo "# fio loss: exit $rc, error written-KiB: $res"
	[ $rc -eq 0 ] || sed 's/^/# /' "$fio_out" | head -20
	# shellcheck disable=SC2086 # two numbers
	ok fio_wrote_everything_without_error fio_ended_well $rc $res
}

fio_ended_well() { # status error written-KiB
	[ "$1" = 0 ] && [ "${2:-}" = 0 ] && [ "${3:-}" = $((loss_mib * 1024)) ]
}

# Node 0: the host.
host_loss() {
	ok carrier_on wait_for 120 carrier_is 1
	ok modules_loaded load_mods
	ok rdma_link_up scif_rdma_up
	ok target_ready wait_for 120 http_fetched "http://$peer_ip/ready0"
	ok nvme_connect connect_lossy
	if find_ns; then
		write_through_loss
		ok reconnected_in_kernel_log sh -c "dmesg | grep -q 'Successfully reconnected'"
		ok fio_verify_after_loss fio_run loss $((loss_mib * 1024)) - \
			--rw=write --bs=64k --offset=0 --size="${loss_mib}M" \
			--iodepth=4 --verify_only
		ok checksum_published publish_sum "$loss_mib"
	else
		ok namespace_found false
	fi
	host_end
}

echo "TAP version 13"
[ "${SCIF_NODES:-}" = 2 ] && [ -n "$self" ] || skip_all "not a node of a 2-node cluster"
[ -e "$ex/scif_net.ko" ] || skip_all "no $ex/scif_net.ko"
[ -e "$ex/scif_rdma.ko" ] || skip_all "no scif_rdma.ko for this kernel"
[ -e "$ex/nvmet-rdma.ko" ] && [ -e "$ex/nvme-rdma.ko" ] ||
	skip_all "no nvmet-rdma / nvme-rdma in /modules/extra (a kernel without NVMe-oF)"
command -v rdma > /dev/null || skip_all "no rdma in the initramfs"
command -v nvme > /dev/null && command -v fio > /dev/null ||
	skip_all "no nvme-cli or fio in the initramfs"
peer=$((1 - self))
dev=sn$peer
my_ip=10.77.0.$((self + 1))
peer_ip=10.77.0.$((peer + 1))
# The virtio-net link of qemu/cluster.sh -N (make bench), if any.
eth_ip=$(ip -4 -o addr show dev eth0 2> /dev/null |
	awk '{ sub(/\/.*/, "", $4); print $4 }' | grep '^10\.99\.0\.' || true)
ok setup sn_addr_up
mkdir -p "$www"
httpd -f -p 80 -h "$www" &
httpd_pid=$!
if [ "$mode" = loss ]; then
	if [ "$self" = 0 ]; then
		host_loss
	else
		target_loss
	fi
elif [ "$self" = 0 ]; then
	target
else
	host
fi
echo "1..$n"
[ $failed -eq 0 ]
