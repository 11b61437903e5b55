#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# NFS over RDMA over scif_rdma (Documentation/scif/rdma.rst), with the
# guest kernel's own nfsd, svcrdma and xprtrdma (rpcrdma.ko) and the
# nfs-utils of Debian 12 (scripts/deps.sh unpacks them into
# $SCIF_CACHE/nfs-utils; make check puts them in the initramfs),
# between the two nodes of a 2-node cluster (both run this script).
# Both load scif_net (10.77.0.(node+1)/24 on sn<peer>), the RDMA core,
# scif_rdma, the NFS modules (all from /modules/extra), and make scif0
# on sn<peer>.
#
# Node 0 is the server: NFSv4 only (no rpcbind, no lockd), a 160 MiB
# tmpfs exported as the NFSv4 root to 10.77.0.0/24, rpc.mountd for the
# export cache, nfsd listening on rdma port 20049 and tcp port 2049.
# Node 1 is the client: "mount.nfs -o vers=4.2,proto=rdma" must mount
# it with proto=rdma; a 32 MiB file the client writes must have, read on
# the server's tmpfs, the checksum the client computed; a 32 MiB file
# the server wrote must read back on the client, after a fresh mount,
# with the server's checksum; fio with crc32c verification (direct I/O,
# 4-256 KiB random writes, then a verify-only pass) must report no
# error; the server's scif_rdma counters must show the bytes moved by
# RDMA WRITE (the client's READs) and RDMA READ (its WRITEs).  Then
# figures (TAP comments): fio's 1 MiB sequential read bandwidth and
# 4 KiB random read IOPS over rdma, then over NFS/TCP on the same
# scif_net interface.  Then both unmount, stop and unload everything.
# The nodes wait for each other through busybox httpd, as
# scif_nvmeof_test.sh does.
set -u

# nfs-utils at the host path it was unpacked to ($SCIF_CACHE/nfs-utils,
# /var/cache/scif/nfs-utils by default), wherever that is.
nfs_utils=$(find / -xdev -type d -name nfs-utils 2> /dev/null | head -n 1)
PATH=$PATH:/usr/bin:/usr/sbin:$nfs_utils/sbin:$nfs_utils/usr/sbin
self=${SCIF_NODE:-}
ex=/modules/extra
rdma_mods="configfs ib_core ib_uverbs ib_cm iw_cm rdma_cm"
# Both kernels' NFS modules in load order (6.12 has no fscache.ko).
nfs_mods="sunrpc grace lockd nfs_acl auth_rpcgss nfsd netfs fscache nfs
	dns_resolver nfsv4 rpcrdma"
www=/tmp/nfsrdma-www
exp=/export
mnt=/mnt/nfs
nfsd_fs=/proc/fs/nfsd
fio_out=/tmp/nfsrdma-fio.out
loaded_mods=
n=0
failed=0

# shellcheck disable=SC2034 # read by scif_tap_lib.sh
tap_suite=scif_nfsrdma
# shellcheck source=tools/testing/selftests/scif/scif_tap_lib.sh
. "$(dirname "$0")/scif_tap_lib.sh"

load_mods() {
	for m in $rdma_mods $nfs_mods; do
		[ -e "$ex/$m.ko" ] || continue
		loaded "$(echo "$m" | tr - _)" && continue
		insmod "$ex/$m.ko" || { echo "# insmod $m failed"; return 1; }
		loaded_mods="$(echo "$m" | tr - _) $loaded_mods"
	done
	[ -d /sys/module/nfsd ] && [ -d /sys/module/rpcrdma ]
}

md5() { md5sum "$1" | cut -d' ' -f1; }

# The server: NFSv4 only, so that nfsd needs neither lockd nor rpcbind
# (NFSv4 registers with rpcbind only if one runs); the grace period at
# its 10 s minimum; the export's cache filled by rpc.mountd.
server_up() {
	mkdir -p "$exp" /var/lib/nfs/v4recovery &&
		touch /var/lib/nfs/etab /var/lib/nfs/rmtab &&
		mount -t tmpfs -o size=160m tmpfs "$exp" &&
		mount -t nfsd nfsd "$nfsd_fs" || return 1
	echo -3 > "$nfsd_fs/versions" || return 1
	echo -2 > "$nfsd_fs/versions" 2> /dev/null
	echo 10 > "$nfsd_fs/nfsv4gracetime" &&
		exportfs -i -o rw,no_root_squash,insecure,no_subtree_check,fsid=0 \
			10.77.0.0/24:"$exp" &&
		rpc.mountd -N 2 -N 3 &&
		echo "rdma 20049" > "$nfsd_fs/portlist" &&
		echo "tcp 2049" > "$nfsd_fs/portlist" &&
		echo 8 > "$nfsd_fs/threads" || return 1
	# No client has state to reclaim: new opens need not wait.
	echo Y > "$nfsd_fs/v4_end_grace" 2> /dev/null
	return 0
}

server_listens() {
	sed 's/^/# portlist: /' "$nfsd_fs/portlist"
	grep -q "^rdma 20049" "$nfsd_fs/portlist" &&
		[ "$(cat "$nfsd_fs/threads")" = 8 ]
}

# Each step even if an earlier one failed; then nothing of it is left.
server_down() {
	echo 0 > "$nfsd_fs/threads"
	exportfs -ua
	killall rpc.mountd 2> /dev/null
	wait_for 10 sh -c "! pidof rpc.mountd > /dev/null"
	umount "$nfsd_fs"
	umount "$exp"
	! grep -q " $exp \| $nfsd_fs " /proc/mounts
}

# A 32 MiB file of the server's, published with its checksum.
server_file() {
	dd if=/dev/urandom of="$exp/s2c" bs=1M count=32 2> /dev/null &&
		md5 "$exp/s2c" > "$www/s2c.md5" && [ -s "$www/s2c.md5" ]
}

# peer_sum_matches NAME FILE: the peer published the MD5 of what it
# wrote as NAME.md5; FILE, read here, has it.
peer_sum_matches() {
	http_fetched "http://$peer_ip/$1.md5" "/tmp/$1.md5" || return 1
	want=$(cat "/tmp/$1.md5")
	got=$(md5 "$2")
	echo "# the peer wrote $want, $2 reads $got here"
	[ -n "$want" ] && [ "$want" = "$got" ]
}

# The server moved the client's READs by RDMA WRITE and pulled its
# WRITEs by RDMA READ: of the 32 MiB each way at least 32 MiB in all,
# with at least one of each.
moved_by_rdma() {
	w=$(($(counter_of rdma_write_reqs "$1") - $(counter_of rdma_write_reqs "$2")))
	r=$(($(counter_of rdma_read_reqs "$1") - $(counter_of rdma_read_reqs "$2")))
	b=$(($(counter_of rdma_req_bytes "$1") - $(counter_of rdma_req_bytes "$2")))
	echo "# on the server: RDMA WRITEs +$w, READs +$r, bytes +$b"
	[ "$w" -ge 1 ] && [ "$r" -ge 1 ] && [ "$b" -ge 33554432 ]
}

server() {
	ok carrier_on wait_for 60 carrier_is 1
	ok modules_loaded load_mods
	ok rdma_link_up scif_rdma_up
	ok nfs_server_up server_up
	ok nfs_server_listens server_listens
	ok server_file_written server_file
	scif_rdma_counters > /tmp/nfsrdma-stats0
	touch "$www/ready"
	ok client_wrote wait_for 300 http_fetched "http://$peer_ip/written"
	ok client_file_holds peer_sum_matches c2s "$exp/c2s"
	ok client_done wait_for 400 http_fetched "http://$peer_ip/done"
	scif_rdma_counters > /tmp/nfsrdma-stats1
	ok data_moved_by_rdma moved_by_rdma /tmp/nfsrdma-stats1 /tmp/nfsrdma-stats0
	ok nfs_server_down server_down
	ok rdma_link_down scif_rdma_down
	touch "$www/done"
	server_end
}

server_end() {
	ok peer_unload_takes_carrier_off wait_for 120 carrier_is 0
	kill "$httpd_pid"
	wait "$httpd_pid"
	ok rmmod_scif_net rmmod_client scif_net
	ok modules_unloaded rmmod_loaded
}

# mount_nfs PROTO PORT: the server's root on $mnt.
mount_nfs() {
	mkdir -p "$mnt" &&
		mount.nfs "$peer_ip:/" "$mnt" -n -o "vers=4.2,proto=$1,port=$2"
}

remount() {
	umount "$mnt" && mount_nfs rdma 20049
}

mounted_over() {
	line=$(grep " $mnt nfs4 " /proc/mounts)
	echo "# $line"
	echo "$line" | grep -q "proto=$1"
}

client_write() {
	dd if=/dev/urandom of=/tmp/c2s bs=1M count=32 2> /dev/null &&
		md5 /tmp/c2s > "$www/c2s.md5" &&
		cp /tmp/c2s "$mnt/c2s" && sync && rm /tmp/c2s
}

# fio_run NAME ARGS...: a job on a file of the mount with crc32c
# headers; fio must exit 0 with error 0 (terse version 3, field 5).
fio_run() {
	name=$1
	shift
	fio --name="$name" --directory="$mnt" --direct=1 --thread \
		--ioengine=libaio --verify=crc32c --verify_fatal=1 "$@" \
		--output-format=terse --terse-version=3 > "$fio_out" 2>&1
	rc=$?
	res=$(grep "^3;" "$fio_out" | awk -F';' '{ print $5, $6, $47 }')
	echo "# fio $name: exit $rc, error read-KiB written-KiB: $res"
	[ $rc -eq 0 ] || { sed 's/^/# /' "$fio_out" | head -20; return 1; }
	[ "$(echo "$res" | cut -d' ' -f1)" = 0 ]
}

# The check can fail: 64 KiB of zeros written over the file (through
# NFS, at 4 MiB: a block's header or its body) do not verify: fio
# stops with EILSEQ (84) and says why.
fio_detects_bad_data() {
	dd if=/dev/zero of="$mnt/f1" bs=64k seek=64 count=1 conv=notrunc \
		oflag=direct 2> /dev/null || return 1
	fio --name=rand --directory="$mnt" --filename=f1 --direct=1 --thread \
		--ioengine=libaio --verify=crc32c --rw=randwrite \
		--bsrange=4k-256k --size=16M --iodepth=8 --verify_only \
		--output-format=terse --terse-version=3 > "$fio_out" 2>&1 &&
		return 1
	grep "^verify:" "$fio_out" | head -n 1 | sed 's/^/# /'
	grep -q "^verify: bad" "$fio_out" &&
		[ "$(grep "^3;" "$fio_out" | cut -d';' -f5)" = 84 ]
}

# fio_figure NAME ARGS...: "KIBPS IOPS" of a read job (fields 7, 8).
fio_figure() {
	name=$1
	shift
	fio --name="$name" --directory="$mnt" --direct=1 --thread \
		--ioengine=libaio "$@" --output-format=terse --terse-version=3 \
		2> /dev/null | awk -F';' '/^3;/ { print $7, $8 }'
}

figures() {
	via=$1
	# shellcheck disable=SC2046 # two numbers
	set -- $(fio_figure seqread --filename=c2s --rw=read --bs=1M \
		--size=32M --iodepth=4)
	kibps=${1:-0}
	# shellcheck disable=SC2046 # two numbers
	set -- $(fio_figure randread --filename=c2s --rw=randread --bs=4k \
		--size=32M --iodepth=16 --runtime=3 --time_based)
	echo "# figures $via: 1 MiB sequential read $((kibps * 1024 / 1000000)) MB/s, 4 KiB random read ${2:-0} IOPS"
}

client() {
	ok carrier_on wait_for 120 carrier_is 1
	ok modules_loaded load_mods
	ok rdma_link_up scif_rdma_up
	ok server_ready wait_for 120 http_fetched "http://$peer_ip/ready"
	ok mount_nfs_rdma mount_nfs rdma 20049
	if mounted_over rdma; then
		ok mounted_proto_rdma true
		ok client_file_written client_write
		touch "$www/written"
		ok remount_rdma remount
		# The server's file, read after a fresh mount (nothing cached).
		ok server_file_reads peer_sum_matches s2c "$mnt/s2c"
		ok fio_rand_write_verify fio_run rand --filename=f1 \
			--rw=randwrite --bsrange=4k-256k --size=16M --iodepth=8
		ok fio_rand_verify fio_run rand --filename=f1 \
			--rw=randwrite --bsrange=4k-256k --size=16M --iodepth=8 \
			--verify_only
		ok fio_detects_bad_data fio_detects_bad_data
		figures "NFS over scif_rdma"
		ok umount_rdma umount "$mnt"
		ok mount_nfs_tcp mount_nfs tcp 2049
		if mounted_over tcp; then
			ok mounted_proto_tcp true
			figures "NFS over TCP over scif_net"
		else
			ok mounted_proto_tcp false
		fi
	else
		ok mounted_proto_rdma false
	fi
	ok umount umount "$mnt"
	touch "$www/done"
	ok rdma_link_down scif_rdma_down
	ok told_to_finish wait_for 300 http_fetched "http://$peer_ip/done"
	kill "$httpd_pid"
	wait "$httpd_pid"
	ok rmmod_scif_net rmmod_client scif_net
	ok modules_unloaded rmmod_loaded
}

echo "TAP version 13"
[ "${SCIF_NODES:-}" = 2 ] && [ -n "$self" ] || skip_all "not a node of a 2-node cluster"
[ -e "$ex/scif_net.ko" ] || skip_all "no $ex/scif_net.ko"
[ -e "$ex/scif_rdma.ko" ] || skip_all "no scif_rdma.ko for this kernel"
[ -e "$ex/nfsd.ko" ] && [ -e "$ex/rpcrdma.ko" ] && [ -e "$ex/nfsv4.ko" ] ||
	skip_all "no nfsd / rpcrdma / nfsv4 in /modules/extra (a kernel without NFS over RDMA, or the debug kernel)"
command -v rdma > /dev/null || skip_all "no rdma in the initramfs"
command -v rpc.mountd > /dev/null && command -v mount.nfs > /dev/null &&
	command -v exportfs > /dev/null && command -v fio > /dev/null ||
	skip_all "no nfs-utils (rpc.mountd, exportfs, mount.nfs) or fio in the initramfs"
peer=$((1 - self))
dev=sn$peer
# shellcheck disable=SC2034 # read by scif_tap_lib.sh's sn_addr_up
my_ip=10.77.0.$((self + 1))
peer_ip=10.77.0.$((peer + 1))
ok setup sn_addr_up
mkdir -p "$www"
httpd -f -p 80 -h "$www" &
httpd_pid=$!
if [ "$self" = 0 ]; then
	server
else
	client
fi
echo "1..$n"
[ $failed -eq 0 ]
