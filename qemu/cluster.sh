#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# cluster.sh -n N -k KERNEL -i INITRD -o OUTDIR [-m MEM] [-t TIMEOUT]
#            [-a "EXTRA KERNEL ARGS"] [-s STEPS0,STEPS1,...] [-S SERVER_BIN]
#            [-N] [-R] [-T ntb|ntb-full] [-D MIB] [-I]
#
# Boot N QEMU guests (2..8) that form an emulated SCIF cluster, wait for
# them to power off, and say whether every node completed its steps.
#
#   -n N        number of nodes, 2..8
#   -k KERNEL   kernel image, e.g. /boot/vmlinuz-6.1.0-NN-amd64
#   -i INITRD   initramfs from qemu/mkinitramfs.sh (its /init is init.sh)
#   -o OUTDIR   logs: OUTDIR/cluster.log, OUTDIR/node<k>/{console,results,
#               qemu}.log; a node's later lives (see "restart") write
#               console.<count>.log and results.<count>.log
#   -m MEM      RAM per node, a power of two from 64M to 8G (a number is in
#               MiB; M and G suffixes); default 512M for 2 nodes, else 256M.
#               Above 2G a node has RAM above the 32-bit PCI hole, which
#               is not at the file offset equal to its address (q35: the
#               first 2 GiB of the file are below 4 GiB, the rest from
#               4 GiB up); each node publishes that layout and its peers
#               translate (Documentation/scif/ivshmem.rst).  Every node
#               maps every other node's RAM as a BAR of that size.
#   -t TIMEOUT  seconds before the nodes still running are killed (900)
#   -a ARGS     appended to every node's kernel command line
#   -s LISTS    comma-separated step lists, one per node (or one for all):
#               node k boots with scif.steps=<LISTk> and runs /tests/<LISTk>
#               instead of /tests/list; an empty entry keeps /tests/list
#   -S BIN      the ivshmem server (default build/qemu/ivshmem-server, which
#               `make -C qemu OUTPUT=build/qemu` builds, else one in PATH)
#   -N          also join the nodes by an Ethernet link (2 nodes only), for
#               comparisons with TCP: a virtio-net device per node on a
#               datagram socket pair (node<k>.net in the cluster directory),
#               and scif.net=10.99.0.<k+1>/24 on the kernel command line
#               (init.sh loads the guest's virtio-net modules, if the
#               initramfs has them, and sets the address on eth0)
#   -R          also give every node one more ivshmem-plain device, at PCI
#               slot 0x10, whose 64 MiB (scratch.shm in the cluster
#               directory) all nodes share: no node's RAM, a place where
#               benchmarks may use the emulated link raw (scif-bench raw)
#   -T ntb      NTB topology (2 nodes only): the nodes are joined by the
#               emulated NTB of drivers/ntb/hw/ivshmem instead of the SCIF
#               ivshmem devices.  A second ivshmem server (-n 2 -v 2, a
#               16 MiB memory file: windows of 4 and 2 MiB) makes
#               ntb/node<k>.sock in the cluster directory; node k gets one
#               ivshmem-doorbell device on it at PCI slot 0x11 (2 vectors,
#               NTB port k) and neither the ivshmem-plain apertures nor
#               the SCIF doorbell device.  The initramfs must load ntb.ko,
#               ntb_ivshmem.ko and scif_ntb.ko (scripts/scif-ntb-check.sh
#               builds one)
#   -D MIB      also give every node a virtio-blk disk of MIB MiB
#               (node<k>.disk in the cluster directory, zeroed at the
#               start), which outlives the node's QEMU: a node killed and
#               restarted finds what it wrote (the guest needs the
#               virtio_blk module; scif_nvmeof_test.sh loss uses it)
#   -I          also give every node QEMU's emulated Intel IOMMU (DMA
#               and interrupt remapping, which VFIO requires; the
#               interrupt controller split, as that needs under KVM;
#               intel_iommu=on iommu=pt on the kernel command line, so
#               only a device given to VFIO is translated) and QEMU's "edu" PCI device
#               (1234:11e8), for scif_vfio_test.sh to bind to vfio-pci,
#               and an NVMe controller (1b36:0010) whose BAR 2 is a
#               1 MiB controller memory buffer, the device memory of
#               scif_devmem_test.sh, with a 16 MiB drive (node<k>.nvme in
#               the cluster directory, a known pattern, which
#               scif_nvme_test.c checks; MDTS 8, commands of up to
#               1 MiB, for its bench mode), moved to OUTDIR at the end
#   -T ntb-full the same, plus the ivshmem-plain device on the other
#               node's RAM (as without -T), which the emulated NTB's
#               full-reach window goes through (ntb_ivshmem full_reach=1)
#
# Environment: SCIF_ACCEL=tcg|kvm (TCG unless kvm is asked for and usable),
# SCIF_VM_CPUS (vCPUs per node, default 1), SCIF_QEMU_LOCK (see run-vm.sh).
#
# The machine: everything lives in /dev/shm/scif-cluster-<launcher pid>:
# node<k>.ram is node k's RAM (a shared file of MEM bytes), and the ivshmem
# server (started first, with -n N -v N -s 1M) makes doorbell.shm and
# node<k>.sock there.  Node k's QEMU has its RAM in node<k>.ram, one
# ivshmem-plain device per other node j whose BAR2 is node<j>.ram (the
# aperture to j: guest-physical address P of j below 4 GiB is BAR2 + P,
# above it BAR2 + P - 2 GiB on a node of more than 2 GiB), and one
# ivshmem-doorbell device on node<k>.sock (IVPosition k, N vectors:
# vector j can mean "from node j").  Kernel command line: the one of
# run-vm.sh plus scif.node=<k> scif.nodes=<N> [scif.steps=<LISTk>]
# [scif.restart=<count>] and the -a arguments.
#
# Serial ports of node k: ttyS0 -> console.log, ttyS1 -> results.log (as in
# run-vm.sh), ttyS2 -> the control channel, a pair of FIFOs
# (node<k>.ctl.in/.out) that one background reader per node forwards to
# the launcher.  The guest writes one request per line:
#   scif-cluster: kill <j>      SIGKILL node j's QEMU at once (a crashed
#                               machine); its RAM file stays
#   scif-cluster: restart <j>   boot node j again (it must not be running)
#                               with the same RAM file and socket, the
#                               same arguments plus scif.restart=<count>
#   scif-cluster: pause <j>     SIGSTOP node j's QEMU (a machine that
#                               stalls: its memory and devices stay)
#   scif-cluster: resume <j>    SIGCONT it
#   scif-cluster: log <text>    copy <text> into cluster.log
# and the launcher answers each but log on the same node's ttyS2 with
#   scif-cluster-ack: <kill|restart|pause|resume> <j> ok|error
# once done (the node j being dead, or its new QEMU started).  Inside the
# guest, init.sh provides /bin/scif-cluster for this (see there).
#
# The launcher logs every event with a timestamp to OUTDIR/cluster.log
# (and to stderr).  It waits until every node has powered off or TIMEOUT
# passes, kills what is left (SIGTERM, then SIGKILL), stops the server
# and removes the cluster directory; likewise on an error, SIGINT or
# SIGTERM.  QEMU and the server also get SIGKILL if the launcher itself
# is killed (setpriv --pdeathsig), and a later launcher removes cluster
# directories that dead launchers left behind.
#
# A QEMU that exits with a non-zero status on its own (e.g. aborts) is
# logged as "WARNING: QEMU exited abnormally" in cluster.log.
#
# Exit status: 0 if every node completed (the results log of its last life
# has scif-run-complete; a node killed on request and not restarted does
# not count), 1 if not or on any failure or signal, 2 on a usage error.
# Note: a non-interactive shell starts background jobs with SIGINT
# ignored, which no trap can undo; stop such a launcher with SIGTERM.

set -u

# SCIF_QEMU_LOCK=FILE: one guest or cluster at a time on a shared machine.
# The lock is on descriptor 9, which the guests inherit: it is held until
# the launcher and every QEMU it started are gone, however they end.
if [ -n "${SCIF_QEMU_LOCK:-}" ] && [ -z "${SCIF_QEMU_LOCKED:-}" ]; then
	export SCIF_QEMU_LOCKED=1
	exec 9> "$SCIF_QEMU_LOCK"
	flock 9
fi

usage() {
	sed -n '4,5s/^# \{0,1\}//p' "$0" >&2
	echo "see the header of $0 for details" >&2
	exit 2
}

die() {
	log "error: $*"
	exit 1
}

top=$(cd "$(dirname "$0")/.." && pwd)
nodes='' kernel='' initrd='' outdir='' mem='' timeout=900 extra='' steps_opt='' server='' net=0 scratch=0 topo=ivshmem disk=0 iommu=0
while getopts "n:k:i:o:m:t:a:s:S:NRT:D:Ih" opt; do
	case $opt in
	n) nodes=$OPTARG ;;
	k) kernel=$OPTARG ;;
	i) initrd=$OPTARG ;;
	o) outdir=$OPTARG ;;
	m) mem=$OPTARG ;;
	t) timeout=$OPTARG ;;
	a) extra=$OPTARG ;;
	s) steps_opt=$OPTARG ;;
	S) server=$OPTARG ;;
	N) net=1 ;;
	R) scratch=1 ;;
	T) topo=$OPTARG ;;
	D) disk=$OPTARG ;;
	I) iommu=1 ;;
	*) usage ;;
	esac
done
[ $OPTIND -gt $# ] || usage
if [ -z "$nodes" ] || [ -z "$kernel" ] || [ -z "$initrd" ] || [ -z "$outdir" ]; then
	usage
fi

bad() { echo "cluster: $*" >&2; exit 2; }
[[ $nodes =~ ^[2-8]$ ]] || bad "-n must be 2..8, not '$nodes'"
[ "$net" = 0 ] || [ "$nodes" -eq 2 ] || bad "-N needs -n 2"
case $topo in
ivshmem) ;;
ntb|ntb-full) [ "$nodes" -eq 2 ] || bad "-T $topo needs -n 2 (an NTB joins a pair)" ;;
*) bad "-T must be ntb or ntb-full, not '$topo'" ;;
esac
[[ $timeout =~ ^[1-9][0-9]*$ ]] || bad "-t must be a number of seconds, not '$timeout'"
[[ $disk =~ ^[0-9]+$ ]] && [ "$disk" -le 4096 ] || bad "-D must be MiB, 0..4096, not '$disk'"
[ -n "$mem" ] || { [ "$nodes" -eq 2 ] && mem=512M || mem=256M; }
[[ $mem =~ ^([1-9][0-9]*)([MmGg]?)$ ]] || bad "-m: bad size '$mem'"
mib=${BASH_REMATCH[1]}
case ${BASH_REMATCH[2]} in [Gg]) mib=$((mib * 1024)) ;; esac
# A power of two (ivshmem BARs must be); at most 8 GiB (the host's
# memory: the files are sparse, but a guest may fill its RAM).
if [ $((mib & (mib - 1))) -ne 0 ] || [ "$mib" -lt 64 ] || [ "$mib" -gt 8192 ]; then
	bad "-m: RAM per node must be a power of two from 64M to 8G, not '$mem'"
fi
# The emulated NTB's full-reach window assumes offset == address.
[ "$topo" = ivshmem ] || [ "$mib" -le 2048 ] || bad "-T $topo needs -m 2G or less"
declare -a steps
if [ -n "$steps_opt" ]; then
	IFS=, read -r -a steps <<< "$steps_opt,"
	if [ ${#steps[@]} -eq 1 ]; then
		for ((k = 1; k < nodes; k++)); do steps[k]=${steps[0]}; done
	fi
	[ ${#steps[@]} -eq "$nodes" ] || bad "-s needs 1 or $nodes lists, got ${#steps[@]}"
	for s in "${steps[@]}"; do
		[[ $s =~ ^[A-Za-z0-9._-]*$ ]] || bad "-s: bad list name '$s'"
	done
fi
[ -r "$kernel" ] || bad "kernel $kernel not readable"
[ -r "$initrd" ] || bad "initrd $initrd not readable"
if [ -z "$server" ]; then
	server=$top/build/qemu/ivshmem-server
	[ -x "$server" ] || server=$(command -v ivshmem-server) ||
		bad "no ivshmem-server: make -C qemu OUTPUT=build/qemu, or use -S"
fi
[ -x "$server" ] || bad "$server is not executable"
command -v qemu-system-x86_64 > /dev/null || bad "qemu-system-x86_64 missing"

# The CPU: tcg-cpu.sh; the clock: tcg-clock.sh.
accel=(-accel tcg -cpu "$(sh "$top/qemu/tcg-cpu.sh")")
clock=$(sh "$top/qemu/tcg-clock.sh")
if [ "${SCIF_ACCEL:-tcg}" = kvm ]; then
	if [ -w /dev/kvm ]; then
		accel=(-accel kvm -cpu host)
		clock=
	else
		echo "cluster: /dev/kvm not usable, falling back to TCG" >&2
	fi
fi
cpus=${SCIF_VM_CPUS:-1}
# QEMU and the server die with the launcher, even if it is SIGKILLed.
pdeath=()
command -v setpriv > /dev/null && pdeath=(setpriv --pdeathsig KILL --)

mkdir -p "$outdir" || exit 1
outdir=$(cd "$outdir" && pwd)
clog=$outdir/cluster.log
: > "$clog" || exit 1
for ((k = 0; k < nodes; k++)); do
	mkdir -p "$outdir/node$k" || exit 1
	rm -f "$outdir/node$k"/console*.log "$outdir/node$k"/results*.log \
		"$outdir/node$k/qemu.log"
done

t0=$EPOCHREALTIME
log() { # message: to cluster.log with wall clock and seconds since start
	local now=$EPOCHREALTIME ts rel
	printf -v ts '%(%F %T)T.%s' "${now%[.,]*}" "${now#*[.,]}"
	rel=$(( (${now/[.,]/} - ${t0/[.,]/}) / 1000 ))
	printf -v rel '+%d.%03d' $((rel / 1000)) $((rel % 1000))
	printf '%s %9s %s\n' "${ts:0:23}" "$rel" "$*" >> "$clog"
	printf 'cluster: %s\n' "$*" >&2
}

# ---- state ----
dir=
server_pid=
ntb_pid=
evfd=
declare -a pid state lives infd reader
# state[k]: running | exited | killed (on request) | timeout
for ((k = 0; k < nodes; k++)); do
	lives[k]=0 state[k]=new pid[k]='' reader[k]='' infd[k]=''
done

stop_pid() { # pid...: SIGTERM, up to 5 s, then SIGKILL; reap
	local p i left
	# (SIGCONT: a node paused on request cannot act on SIGTERM.)
	for p in "$@"; do kill -TERM "$p" 2> /dev/null; kill -CONT "$p" 2> /dev/null; done
	for ((i = 0; i < 50; i++)); do
		left=
		for p in "$@"; do kill -0 "$p" 2> /dev/null && left=1; done
		[ -n "$left" ] || break
		sleep 0.1
	done
	for p in "$@"; do
		kill -0 "$p" 2> /dev/null && kill -KILL "$p" 2> /dev/null
		wait "$p" 2> /dev/null
	done
}

stop_nodes() { # why: stop every QEMU still running
	local k p=()
	for ((k = 0; k < nodes; k++)); do
		[ "${state[k]}" = running ] || continue
		log "node $k: $1, stopping it (pid ${pid[k]})"
		p+=("${pid[k]}")
		state[k]=$1
	done
	[ ${#p[@]} -eq 0 ] || stop_pid "${p[@]}"
}

cleaned=''
# shellcheck disable=SC2317 # (run by the EXIT trap)
cleanup() {
	[ -z "$cleaned" ] || return 0
	cleaned=1
	trap '' INT TERM
	stop_nodes interrupted
	local k p=()
	for ((k = 0; k < nodes; k++)); do
		[ -z "${reader[k]}" ] || p+=("${reader[k]}")
	done
	[ ${#p[@]} -eq 0 ] || stop_pid "${p[@]}"
	if [ -n "$server_pid" ]; then
		stop_pid "$server_pid"
		log "server stopped"
	fi
	if [ -n "$ntb_pid" ]; then
		stop_pid "$ntb_pid"
		log "NTB server stopped"
	fi
	if [ -n "$dir" ] && [ -d "$dir" ]; then
		# -I: the drives' images stay, for the host to read them.
		for ((k = 0; k < nodes && iommu > 0; k++)); do
			[ ! -e "$dir/node$k.nvme" ] || mv "$dir/node$k.nvme" "$outdir/"
		done
		rm -rf "$dir"
		log "removed $dir"
	fi
}
trap cleanup EXIT
trap 'log "interrupted (SIGINT)"; exit 1' INT
trap 'log "interrupted (SIGTERM)"; exit 1' TERM
trap 'log "interrupted (SIGHUP)"; exit 1' HUP

# Cluster directories of launchers that died without cleaning up.
for d in /dev/shm/scif-cluster-*; do
	if [ ! -d "$d" ] || [ ! -O "$d" ]; then continue; fi
	lpid=${d##*-}
	[[ $lpid =~ ^[0-9]+$ ]] || continue
	[ "$lpid" != $$ ] || continue
	kill -0 "$lpid" 2> /dev/null && continue
	log "removing stale $d"
	rm -rf "$d"
done

dir=/dev/shm/scif-cluster-$$
mkdir -m 0700 "$dir" || { dir=; die "cannot create the cluster directory"; }
log "cluster of $nodes nodes, ${mib}M each, in $dir; kernel $kernel, initrd $initrd"
avail=$(df -Pk /dev/shm | awk 'NR == 2 { print $4 }')
[ "${avail:-0}" -ge $((nodes * mib * 1024)) ] ||
	die "/dev/shm has ${avail}K free, the nodes' RAM needs $((nodes * mib))M"
for ((k = 0; k < nodes; k++)); do
	truncate -s "${mib}M" "$dir/node$k.ram" || die "cannot create $dir/node$k.ram"
	mkfifo "$dir/node$k.ctl.in" "$dir/node$k.ctl.out" || die "mkfifo failed"
done
mkfifo "$dir/events" || die "mkfifo failed"
[ "$scratch" = 0 ] || truncate -s 64M "$dir/scratch.shm" || die "cannot create $dir/scratch.shm"
for ((k = 0; k < nodes && disk > 0; k++)); do
	truncate -s "${disk}M" "$dir/node$k.disk" || die "cannot create $dir/node$k.disk"
done
# -I: the NVMe drive's image, 16 MiB in 512-byte blocks whose 8-byte
# words are 0x5c1f36 << 40 | block << 8 | word (scif_nvme_test.c).
for ((k = 0; k < nodes && iommu > 0; k++)); do
	perl -e 'for my $b (0 .. 32767) {
		print pack("Q<*", map { 0x5c1f360000000000 | $b << 8 | $_ } 0 .. 63);
	}' > "$dir/node$k.nvme" || die "cannot create $dir/node$k.nvme"
done

# ---- the ivshmem server: sockets node<k>.sock, peer id k on node<k>.sock ----
log "starting $server -d $dir -n $nodes -v $nodes -s 1048576 -F"
"${pdeath[@]}" "$server" -d "$dir" -n "$nodes" -v "$nodes" -s 1048576 -F \
	< /dev/null >> "$outdir/server.log" 2>&1 &
server_pid=$!
for ((i = 0; ; i++)); do
	up=1
	for ((k = 0; k < nodes; k++)); do [ -S "$dir/node$k.sock" ] || up=; done
	[ -z "$up" ] || break
	if ! kill -0 "$server_pid" 2> /dev/null; then
		wait "$server_pid"
		rc=$?
		server_pid=
		die "the server exited (status $rc), see $outdir/server.log"
	fi
	[ $i -lt 100 ] || die "the server made no sockets in 10 s, see $outdir/server.log"
	sleep 0.1
done
log "server up (pid $server_pid)"

# ---- -T ntb: the emulated NTB's own server, ports 0 and 1 ----
if [ "$topo" != ivshmem ]; then
	mkdir "$dir/ntb" || die "cannot create $dir/ntb"
	log "starting $server -d $dir/ntb -n 2 -v 2 -s 16777216 -F (NTB)"
	"${pdeath[@]}" "$server" -d "$dir/ntb" -n 2 -v 2 -s 16777216 -F \
		< /dev/null >> "$outdir/ntb-server.log" 2>&1 &
	ntb_pid=$!
	for ((i = 0; i < 100; i++)); do
		[ -S "$dir/ntb/node0.sock" ] && [ -S "$dir/ntb/node1.sock" ] && break
		kill -0 "$ntb_pid" 2> /dev/null ||
			die "the NTB server exited, see $outdir/ntb-server.log"
		sleep 0.1
	done
	[ -S "$dir/ntb/node1.sock" ] || die "the NTB server made no sockets in 10 s"
	log "NTB server up (pid $ntb_pid)"
fi

# ---- control channel ----
# Every request goes, as "<from> <request>", into one FIFO that only the
# main loop reads.  Each FIFO is held open read-write, so nothing blocks
# on open and no reader sees end-of-file while QEMU restarts.
exec {evfd}<> "$dir/events"
for ((k = 0; k < nodes; k++)); do
	exec {fd}<> "$dir/node$k.ctl.in"
	infd[k]=$fd
done

ctl_reader() { # k: forward node k's requests; ends with the launcher
	local k=$1 line buf='' rc
	exec <> "$dir/node$k.ctl.out"
	while :; do
		if IFS= read -r -t 2 line; then
			line=$buf$line buf=
			line=${line%$'\r'}
			case $line in
			*"scif-cluster: "*) printf '%s %s\n' "$k" "${line##*scif-cluster: }" ;;
			esac
		else
			rc=$?
			[ $rc -gt 128 ] || exit 0
			buf+=$line
			kill -0 $$ 2> /dev/null || exit 0
		fi
	done >&"$evfd"
}
for ((k = 0; k < nodes; k++)); do
	ctl_reader "$k" &
	reader[k]=$!
done

# ---- nodes ----
start_node() { # k: boot node k's next life (lives[k] = 0 for the first)
	local k=$1 life=${lives[$1]} sfx='' j fd
	local -a cmd closefds=()
	[ "$life" -eq 0 ] || sfx=.$life
	local console=$outdir/node$k/console$sfx.log
	local results=$outdir/node$k/results$sfx.log
	: > "$console"
	: > "$results"
	local append="console=ttyS0 loglevel=7 panic=-1 oops=panic $clock"
	append+=" scif.node=$k scif.nodes=$nodes"
	[ "$net" = 0 ] || append+=" scif.net=10.99.0.$((k + 1))/24"
	[ -z "${steps[k]:-}" ] || append+=" scif.steps=${steps[k]}"
	[ "$life" -eq 0 ] || append+=" scif.restart=$life"
	[ "$iommu" = 0 ] || append+=" intel_iommu=on iommu=pt"
	[ -z "$extra" ] || append+=" $extra"
	local machine=q35,memory-backend=ram0
	[ "$iommu" = 0 ] || machine+=,kernel-irqchip=split
	cmd=(qemu-system-x86_64 -M "$machine" "${accel[@]}"
		-m "${mib}M" -smp "$cpus" -nodefaults
		-object "memory-backend-file,id=ram0,size=${mib}M,share=on,mem-path=$dir/node$k.ram")
	# The IOMMU first: the devices after it are behind it.
	[ "$iommu" = 0 ] || cmd+=(-device "intel-iommu,intremap=on" -device edu
		-drive "file=$dir/node$k.nvme,if=none,id=nvme0,format=raw"
		-device "nvme,serial=scif36,cmb_size_mb=1,mdts=8,drive=nvme0")
	if [ "$topo" != ntb ]; then
		for ((j = 0; j < nodes; j++)); do
			[ "$j" -ne "$k" ] || continue
			cmd+=(-object "memory-backend-file,id=peer$j,size=${mib}M,share=on,mem-path=$dir/node$j.ram"
				-device "ivshmem-plain,memdev=peer$j")
		done
	fi
	if [ "$topo" = ivshmem ]; then
		cmd+=(-chardev "socket,path=$dir/node$k.sock,id=db"
			-device "ivshmem-doorbell,chardev=db,vectors=$nodes")
	else
		cmd+=(-chardev "socket,path=$dir/ntb/node$k.sock,id=ntb"
			-device "ivshmem-doorbell,chardev=ntb,vectors=2,addr=0x11")
	fi
	cmd+=(-display none -no-reboot -monitor none
		-serial "file:$console" -serial "file:$results"
		-serial "pipe:$dir/node$k.ctl"
		-kernel "$kernel" -initrd "$initrd" -append "$append")
	if [ "$net" = 1 ]; then
		# A datagram to a socket not bound yet is just lost, so the
		# two nodes need not start in any order.
		rm -f "$dir/node$k.net"
		cmd+=(-netdev "dgram,id=net0,local.type=unix,local.path=$dir/node$k.net,remote.type=unix,remote.path=$dir/node$((1 - k)).net"
			-device "virtio-net-pci,netdev=net0,mac=52:54:00:5c:1f:0$k")
	fi
	if [ "$disk" -gt 0 ]; then
		# Writeback: a write the guest saw complete is in the host's
		# page cache, which a SIGKILLed QEMU does not take along.
		cmd+=(-drive "file=$dir/node$k.disk,if=none,id=disk0,format=raw,cache=writeback"
			-device "virtio-blk-pci,drive=disk0")
	fi
	if [ "$scratch" = 1 ]; then
		cmd+=(-object "memory-backend-file,id=scratch,size=64M,share=on,mem-path=$dir/scratch.shm"
			-device "ivshmem-plain,memdev=scratch,addr=0x10")
	fi
	echo "== life $life: ${cmd[*]}" >> "$outdir/node$k/qemu.log"
	# QEMU gets none of the launcher's FIFO descriptors.
	closefds=("$evfd" "${infd[@]}")
	(
		for fd in "${closefds[@]}"; do eval "exec $fd>&-"; done
		exec "${pdeath[@]}" "${cmd[@]}" < /dev/null >> "$outdir/node$k/qemu.log" 2>&1
	) &
	pid[k]=$!
	state[k]=running
	log "node $k: started, life $life (pid ${pid[k]}): $append"
}

status_name() { # exit status: "status N" or "signal NAME"
	if [ "$1" -gt 128 ] && kill -l $(($1 - 128)) > /dev/null 2>&1; then
		echo "signal SIG$(kill -l $(($1 - 128)))"
	else
		echo "status $1"
	fi
}

abnormal=0
reap() { # note the nodes whose QEMU has exited
	local k rc
	for ((k = 0; k < nodes; k++)); do
		[ "${state[k]}" = running ] || continue
		kill -0 "${pid[k]}" 2> /dev/null && continue
		wait "${pid[k]}"
		rc=$?
		state[k]=exited
		log "node $k: powered off, life ${lives[k]} (QEMU exit status $rc)"
		if [ $rc -ne 0 ]; then
			# Not counted against completion, but never silent: a QEMU
			# that aborts may have misbehaved before it did.
			abnormal=$((abnormal + 1))
			log "node $k: WARNING: QEMU exited abnormally ($(status_name $rc)), see $outdir/node$k/qemu.log"
		fi
	done
}

ack() { # from request node status: answer a request on its node's ttyS2
	reap
	[ "${state[$1]}" = running ] || return 0
	printf 'scif-cluster-ack: %s %s %s\n' "$2" "$3" "$4" >&"${infd[$1]}"
}

request() { # from request [arg...]
	local from=$1 req=${2:-} j=${3:-} rest sig
	shift
	rest=$*
	if ! [[ $from =~ ^[0-9]+$ ]] || [ "$from" -ge "$nodes" ]; then
		log "a request from no node: '$from $rest', ignored"
		return
	fi
	case $req in
	log)
		log "node $from says: ${rest#log }"
		return ;;
	kill|restart|pause|resume)
		if ! [[ $j =~ ^[0-9]+$ ]] || [ "$j" -ge "$nodes" ] || [ $# -ne 2 ]; then
			log "node $from: bad request '$rest'"
			ack "$from" "$req" "$j" error
			return
		fi ;;
	*)
		log "node $from: unknown request '$rest'"
		ack "$from" "$req" "$j" error
		return ;;
	esac
	reap
	if [ "$req" = pause ] || [ "$req" = resume ]; then
		if [ "${state[j]}" != running ]; then
			log "node $from: $req $j refused, node $j is not running"
			ack "$from" "$req" "$j" error
			return
		fi
		sig=CONT
		[ "$req" = pause ] && sig=STOP
		kill -"$sig" "${pid[j]}"
		log "node $j: ${req}d (SIG$sig) at node $from's request"
		ack "$from" "$req" "$j" ok
	elif [ "$req" = kill ]; then
		if [ "${state[j]}" != running ]; then
			log "node $from: kill $j refused, node $j is not running"
			ack "$from" kill "$j" error
			return
		fi
		kill -KILL "${pid[j]}"
		wait "${pid[j]}" 2> /dev/null
		state[j]=killed
		log "node $j: killed (SIGKILL) at node $from's request, life ${lives[j]}"
		ack "$from" kill "$j" ok
	else
		if [ "${state[j]}" = running ]; then
			log "node $from: restart $j refused, node $j is running"
			ack "$from" restart "$j" error
			return
		fi
		# Answers that the previous life never read must not reach this one.
		while read -r -t 0.05 -u "${infd[j]}" _; do :; done
		lives[j]=$((lives[j] + 1))
		log "node $j: restarting at node $from's request"
		start_node "$j"
		ack "$from" restart "$j" ok
	fi
}

for ((k = 0; k < nodes; k++)); do start_node "$k"; done

# A read that times out in the middle of a line returns what it read so
# far: keep it for the next read instead of losing the line's start (a
# request "0 kill 1" would otherwise arrive as "1").
evbuf=
next_event() { # timeout: fill ev with the next whole request line
	local line rc
	IFS= read -r -t "$1" -u "$evfd" line
	rc=$?
	if [ $rc -eq 0 ]; then
		read -r -a ev <<< "$evbuf$line"
		evbuf=
		[ ${#ev[@]} -gt 0 ]
		return
	fi
	# (After an "if" whose condition failed, $? is 0, not read's status.)
	[ $rc -le 128 ] || evbuf+=$line
	return 1
}

deadline=$((SECONDS + timeout))
while :; do
	if next_event 1; then
		request "${ev[@]}"
		continue
	fi
	if ! kill -0 "$server_pid" 2> /dev/null; then
		wait "$server_pid"
		rc=$?
		server_pid=
		die "the server exited (status $rc), see $outdir/server.log"
	fi
	if [ -n "$ntb_pid" ] && ! kill -0 "$ntb_pid" 2> /dev/null; then
		wait "$ntb_pid"
		rc=$?
		ntb_pid=
		die "the NTB server exited (status $rc), see $outdir/ntb-server.log"
	fi
	reap
	running=0
	for ((k = 0; k < nodes; k++)); do
		[ "${state[k]}" != running ] || running=$((running + 1))
	done
	if [ $running -eq 0 ]; then
		# A last request may still be on its way from a node's FIFO.
		if next_event 0.5; then
			request "${ev[@]}"
			continue
		fi
		break
	fi
	if [ $SECONDS -ge $deadline ]; then
		log "timeout: $running node(s) still running after $timeout s"
		stop_nodes timeout
		break
	fi
done

# ---- verdict ----
incomplete=0
for ((k = 0; k < nodes; k++)); do
	sfx=
	[ "${lives[k]}" -eq 0 ] || sfx=.${lives[k]}
	results=$outdir/node$k/results$sfx.log
	if [ "${state[k]}" = killed ]; then
		log "node $k: killed on request and not restarted (not counted)"
	elif grep -q '^scif-run-complete' "$results"; then
		log "node $k: complete ($results)"
	else
		log "node $k: INCOMPLETE, ${state[k]} ($results has no scif-run-complete)"
		incomplete=$((incomplete + 1))
	fi
done
[ $abnormal -eq 0 ] || log "WARNING: $abnormal QEMU process(es) exited abnormally"
if [ $incomplete -eq 0 ]; then
	log "all nodes completed"
	exit 0
fi
log "$incomplete node(s) did not complete"
exit 1
