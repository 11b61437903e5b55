#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-cluster.sh: tests of qemu/cluster.sh with real QEMU guests (TCG,
# 2 nodes x 256 MiB, Debian's newest 6.1 kernel from /boot) and the real
# ivshmem server, built by `make -C qemu OUTPUT=$BUILD/qemu`.
#   basic    every node sees one doorbell (BARs 0-2, MSI-X, 1 MiB BAR2,
#            IVPosition = its node id) and one aperture (BARs 0 and 2, BAR2
#            = the node's RAM size); a write through a node's aperture shows
#            up in the other node's physical memory; -s selects the lists
#   restart  node 0 has node 1 paused and resumed (it stops counting, then
#            counts again), killed, checks it is dead, has it restarted
#            and sees its second life (scif.restart=1) complete
#   sigkill  SIGKILL to the launcher: QEMU, server and readers still die,
#            and the next launcher removes the directory it left
#   timeout  hanging nodes are stopped after -t seconds; exit status 1
#   sigint   SIGINT to the launcher stops everything
# After each run: no QEMU, server or reader process of that run remains and
# /dev/shm/scif-cluster-<pid> is gone.  Prints TAP, then
# "cluster: P passed, F failed"; exits 0 iff nothing failed.  Logs stay in
# $BUILD/test-cluster/<scenario>/.
set -u

top=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$top/build}
out=$BUILD/test-cluster
mem=256
work=$(mktemp -d)
launchers=()

tap_n=0 passed=0 failed=0
ok() { tap_n=$((tap_n + 1)) passed=$((passed + 1)); echo "ok $tap_n - $1"; }
not_ok() { tap_n=$((tap_n + 1)) failed=$((failed + 1)); echo "not ok $tap_n - $1"; }
check() { # description command...
	local d=$1
	shift
	if "$@"; then ok "$d"; else not_ok "$d"; fi
}

finish() {
	local p
	# Only if the test itself is interrupted: stop our launchers (they
	# clean up after themselves).
	for p in "${launchers[@]}"; do
		kill -0 "$p" 2> /dev/null || continue
		kill -TERM "$p" 2> /dev/null
		wait "$p" 2> /dev/null
	done
	rm -rf "$work"
}
trap finish EXIT
trap 'exit 1' INT TERM

# ---- guest scripts ----
mkdir -p "$work/guest"
cat > "$work/guest/ivshmem.sh" << 'EOF'
# Sourced by the steps: the ivshmem devices of this node.
bar() { # DEV N: "start size" of BAR N, "0 0" if there is none
	sed -n "$(($2 + 1))p" "$1/resource" | {
		read -r s e f
		if [ $((e)) -eq 0 ]; then echo "0 0"; else echo "$((s)) $((e - s + 1))"; fi
	}
}
cfg() { od -An -tu1 -j "$2" -N1 "$1/config" | tr -d ' \n'; }
has_msix() { # DEV: walk the capability list for MSI-X (id 0x11)
	p=$(cfg "$1" 52) i=0
	while [ "${p:-0}" -ne 0 ] && [ $i -lt 48 ]; do
		[ "$(cfg "$1" "$p")" -eq 17 ] && return 0
		p=$(cfg "$1" $((p + 1))) i=$((i + 1))
	done
	return 1
}
# IVSHMEM: all devices 1af4:1110; DOORBELLS: those with BARs 0, 1, 2 and
# MSI-X; APERTURES: those with BARs 0 and 2 only, without MSI-X.
IVSHMEM= DOORBELLS= APERTURES=
for d in /sys/bus/pci/devices/*; do
	[ "$(cat "$d/vendor")" = 0x1af4 ] && [ "$(cat "$d/device")" = 0x1110 ] || continue
	IVSHMEM="$IVSHMEM $d"
	bars=$(for i in 0 1 2 3 4 5; do bar "$d" $i; done |
		awk '$2 != 0 { printf "%d", NR - 1 }')
	if [ "$bars" = 012 ] && has_msix "$d"; then
		DOORBELLS="$DOORBELLS $d"
	elif [ "$bars" = 02 ] && ! has_msix "$d"; then
		APERTURES="$APERTURES $d"
	else
		echo "# $d: BARs '$bars'"
	fi
	echo 1 > "$d/enable"
done
set -- $DOORBELLS
DB_DEV=${1:-}
DB=0
[ -z "$DB_DEV" ] || DB=$(bar "$DB_DEV" 2 | cut -d' ' -f1)
t=0
check() { # description command...: one TAP line
	d=$1
	shift
	t=$((t + 1))
	if "$@"; then echo "ok $t - $d"; else echo "not ok $t - $d"; fi
}
word() { echo $(($(devmem "$1" 32))); }
wait_word() { # ADDR VALUE SECONDS
	i=0
	while [ "$(word "$1")" -ne $(($2)) ]; do
		i=$((i + 1))
		[ $i -le $(($3 * 5)) ] || return 1
		sleep 0.2
	done
}
EOF

cat > "$work/guest/pci-check" << EOF
#!/bin/sh
# The ivshmem devices of node \$SCIF_NODE of a 2-node cluster of ${mem} MiB.
mem=\$(($mem << 20))
EOF
cat >> "$work/guest/pci-check" << 'EOF'
. ./ivshmem.sh
me=$SCIF_NODE peer=$((1 - SCIF_NODE))
set -- $IVSHMEM
check "2 ivshmem devices (found $#)" [ $# -eq 2 ]
set -- $DOORBELLS
check "1 doorbell: BARs 0, 1 (MSI-X table), 2 and MSI-X (found $#)" [ $# -eq 1 ]
set -- $APERTURES
check "1 aperture: BARs 0 and 2, no MSI-X (found $#)" [ $# -eq 1 ]
ap=${1:-}
dbsize=0 apsize=0 ap2=0 ivpos=-1
if [ -n "$DB_DEV" ]; then
	dbsize=$(bar "$DB_DEV" 2 | cut -d' ' -f2)
	ivpos=$(word $(($(bar "$DB_DEV" 0 | cut -d' ' -f1) + 8)))
fi
if [ -n "$ap" ]; then
	apsize=$(bar "$ap" 2 | cut -d' ' -f2)
	ap2=$(bar "$ap" 2 | cut -d' ' -f1)
fi
check "doorbell BAR2 is 1 MiB ($dbsize)" [ "$dbsize" -eq 1048576 ]
check "aperture BAR2 is the node RAM size ($apsize)" [ "$apsize" -eq "$mem" ]
check "doorbell IVPosition is the node id $me ($ivpos)" [ "$ivpos" -eq "$me" ]
# Through the aperture, write into the peer's physical page 0 (the real-mode
# IVT, unused by Linux), then raise a flag in the shared doorbell memory.
if [ "$ap2" -ne 0 ] && [ "$DB" -ne 0 ]; then
	devmem $((ap2 + 0x100 + 4 * me)) 32 $((0x5c1f0000 + me))
	devmem $((DB + 4 * me)) 32 1
fi
check "node $peer's flag appears in the shared doorbell memory" wait_word $((DB + 4 * peer)) 1 60
got=$(word $((0x100 + 4 * peer)))
check "node $peer's write through its aperture is in our physical memory ($got)" \
	[ "$got" -eq $((0x5c1f0000 + peer)) ]
EOF

for k in 0 1; do
	cat > "$work/guest/is-node$k" << EOF
#!/bin/sh
# Runs from node $k's list only.
[ "\$SCIF_NODE" = $k ] && [ "\$SCIF_NODES" = 2 ] && [ "\$SCIF_RESTART" = 0 ] &&
	grep -q " scif.node=$k scif.nodes=2 scif.steps=steps$k" /proc/cmdline
EOF
done

cat > "$work/guest/kill-restart" << 'EOF'
#!/bin/sh
# Node 0: have node 1 killed and restarted; word 0 of the doorbell memory
# is node 1's state (0xa1 first life, 0xb2 second), word 1 its counter.
. ./ivshmem.sh
refused() { ! scif-cluster "$@"; }
check "node 1 is up" wait_word "$DB" 0xa1 120
c1=$(word $((DB + 4)))
sleep 1
c2=$(word $((DB + 4)))
check "node 1 counts while alive ($c1, $c2)" [ "$c1" -ne "$c2" ]
check "scif-cluster pause 1 is acknowledged" scif-cluster pause 1
c1=$(word $((DB + 4)))
sleep 1
c2=$(word $((DB + 4)))
check "node 1 does not count while paused ($c1, $c2)" [ "$c1" -eq "$c2" ]
check "scif-cluster resume 1 is acknowledged" scif-cluster resume 1
sleep 1
c3=$(word $((DB + 4)))
check "node 1 counts again once resumed ($c2, $c3)" [ "$c2" -ne "$c3" ]
check "scif-cluster pause 5 (no such node) is refused" refused pause 5
check "scif-cluster kill 1 is acknowledged" scif-cluster kill 1
c1=$(word $((DB + 4)))
sleep 1
c2=$(word $((DB + 4)))
check "node 1 stopped counting ($c1, $c2)" [ "$c1" -eq "$c2" ]
check "scif-cluster restart 0 (running) is refused" refused restart 0
check "scif-cluster kill 5 (no such node) is refused" refused kill 5
check "scif-cluster resume 1 (killed) is refused" refused resume 1
check "scif-cluster restart 1 is acknowledged" scif-cluster restart 1
check "node 1's second life is up" wait_word "$DB" 0xb2 120
scif-cluster log "node 0 done"
EOF

cat > "$work/guest/life" << 'EOF'
#!/bin/sh
# Node 1: counts until it is killed in its first life; the second ends.
. ./ivshmem.sh
case "$SCIF_RESTART" in
0)
	devmem "$DB" 32 0xa1
	i=0
	while [ $i -lt 900 ]; do
		i=$((i + 1))
		devmem $((DB + 4)) 32 $i
		sleep 0.2
	done
	echo "not ok 1 - first life was not killed" ;;
*)
	check "second life: SCIF_RESTART=1" [ "$SCIF_RESTART" = 1 ]
	check "second life: scif.restart=1 on the command line" \
		grep -q " scif.restart=1" /proc/cmdline
	devmem "$DB" 32 0xb2 ;;
esac
EOF

cat > "$work/guest/hang" << 'EOF'
#!/bin/sh
echo "# hanging"
sleep 600
EOF
cat > "$work/guest/wrong-list" << 'EOF'
#!/bin/sh
echo "the default /tests/list ran instead of the -s one"
exit 1
EOF
chmod +x "$work/guest"/*
echo wrong-list > "$work/list"
printf 'pci-check\nis-node0\n' > "$work/guest/steps0"
printf 'pci-check\nis-node1\n' > "$work/guest/steps1"
echo kill-restart > "$work/guest/kr0"
echo life > "$work/guest/kr1"
echo hang > "$work/guest/hang-list"

# ---- helpers ----
pids_of() { # launcher-pid outdir: the processes of that run
	# shellcheck disable=SC2009 # (pgrep -f cannot take several patterns)
	ps -eo pid=,args= | grep -F -e "scif-cluster-$1/" -e "scif-cluster-$1 " \
		-e "$2" | grep -v -e grep -e "^ *$$ " | awk '{ print $1 }' | tr '\n' ' '
}

leftovers() { # launcher-pid outdir: processes or files of that run
	local p=$1 o=$2 pids
	pids=$(pids_of "$p" "$o")
	[ -z "$pids" ] || echo "# leftover processes: $pids"
	[ ! -e "/dev/shm/scif-cluster-$p" ] || echo "# leftover /dev/shm/scif-cluster-$p"
	[ -z "$pids" ] && [ ! -e "/dev/shm/scif-cluster-$p" ]
}

lpid='' lrc=0
launch() { # name [cluster.sh args...]: start a launcher in the background
	local name=$1
	shift
	rm -rf "${out:?}/$name"
	mkdir -p "$out/$name"
	# A background job ignores SIGINT unless told otherwise (env execs,
	# so $! is the launcher's pid).
	env --default-signal=INT bash "$top/qemu/cluster.sh" -n 2 -m ${mem}M \
		-k "$kernel" -o "$out/$name" -S "$server" "$@" \
		> "$out/$name/launcher.log" 2>&1 &
	lpid=$!
	launchers+=("$lpid")
}

wait_running() { # name: until both nodes run their "hang" step
	local i
	for ((i = 0; i < 120; i++)); do
		grep -qs "scif-test-begin: hang" "$out/$1/node0/results.log" &&
			grep -qs "scif-test-begin: hang" "$out/$1/node1/results.log" && break
		sleep 0.5
	done
	check "$1: both nodes are running their steps" \
		grep -qs "scif-test-begin: hang" "$out/$1/node1/results.log"
}

finish_run() { # wait for the launcher; lrc = its exit status
	{ wait "$lpid"; lrc=$?; } 2> /dev/null
}

results() { # label results.log: the guest's TAP, via parse-results.sh
	local verdict name
	while read -r verdict name; do
		case $verdict in
		PASS) ok "$name" ;;
		SKIP) ok "$name # SKIP" ;;
		*) not_ok "$name" ;;
		esac
	done < <(sh "$top/qemu/parse-results.sh" "$2" "$1")
}

lacks() { ! grep -q "$@"; }
has_all() { # file pattern...
	local f=$1 p
	shift
	for p in "$@"; do grep -q "$p" "$f" || return 1; done
}

initramfs() { # name list: an initramfs with the guest scripts
	sh "$top/qemu/mkinitramfs.sh" "$work/$1.cpio" "$2" "$work/guest"
}

# ---- setup ----
echo "TAP version 13"
kernel=$(printf '%s\n' /boot/vmlinuz-6.1.0-*-amd64 | sort -V | tail -n 1)
check "Debian 6.1 kernel present (${kernel:-none})" [ -r "$kernel" ]
mkdir -p "$out"
server=$BUILD/qemu/ivshmem-server
build_server() {
	make -s -C "$top/qemu" OUTPUT="$BUILD/qemu" "$server" > "$out/make.log" 2>&1 ||
		{ sed 's/^/# /' "$out/make.log"; return 1; }
}
check "ivshmem-server builds" build_server
if [ ! -r "$kernel" ] || [ ! -x "$server" ]; then
	echo "1..$tap_n"
	echo "cluster: $passed passed, $failed failed"
	exit 1
fi
check "initramfs for basic" initramfs basic "$work/list"
check "initramfs for restart" initramfs restart "$work/list"
check "initramfs for hang" initramfs hang "$work/guest/hang-list"

# ---- basic ----
launch basic -i "$work/basic.cpio" -t 180 -s steps0,steps1
finish_run
check "basic: launcher exit status 0 ($lrc)" [ "$lrc" -eq 0 ]
results basic/node0 "$out/basic/node0/results.log"
results basic/node1 "$out/basic/node1/results.log"
check "basic: cluster.log has both nodes powered off" \
	[ "$(grep -c 'powered off, life 0' "$out/basic/cluster.log")" -eq 2 ]
check "basic: every QEMU exited normally" lacks abnormally "$out/basic/cluster.log"
check "basic: no processes or files left" leftovers "$lpid" "$out/basic"

# ---- restart ----
launch restart -i "$work/restart.cpio" -t 240 -s kr0,kr1
finish_run
check "restart: launcher exit status 0 ($lrc)" [ "$lrc" -eq 0 ]
results restart/node0 "$out/restart/node0/results.log"
results restart/node1.1 "$out/restart/node1/results.1.log"
check "restart: node 1's first life did not complete" \
	lacks scif-run-complete "$out/restart/node1/results.log"
check "restart: node 1's second life has its own console log with scif.restart=1" \
	grep -q "Command line:.* scif.restart=1" "$out/restart/node1/console.1.log"
check "restart: cluster.log has the kill, the restart and node 0's log line" \
	has_all "$out/restart/cluster.log" "node 1: killed (SIGKILL) at node 0" \
		"node 1: started, life 1" "node 0 says: node 0 done"
check "restart: every QEMU exited normally (node 0 saw node 1 leave and rejoin)" \
	lacks abnormally "$out/restart/cluster.log"
check "restart: no processes or files left" leftovers "$lpid" "$out/restart"

# ---- SIGKILL: QEMU and the server die with the launcher (setpriv
# --pdeathsig), its readers soon after; the next launcher removes the
# directory it left.
launch sigkill -i "$work/hang.cpio" -t 300
wait_running sigkill
kill -KILL "$lpid"
finish_run
killed=$lpid
for ((i = 0; i < 20; i++)); do
	[ -n "$(pids_of "$killed" "$out/sigkill")" ] || break
	sleep 0.5
done
check "sigkill: no processes left 10 s after SIGKILL to the launcher" \
	[ -z "$(pids_of "$killed" "$out/sigkill")" ]

# ---- timeout ----
launch timeout -i "$work/hang.cpio" -t 20
finish_run
check "timeout: the launcher removed the SIGKILLed one's directory" \
	[ ! -e "/dev/shm/scif-cluster-$killed" ]
check "timeout: launcher exit status 1 ($lrc)" [ "$lrc" -eq 1 ]
check "timeout: cluster.log reports the timeout" \
	grep -q "timeout: 2 node(s) still running after 20 s" "$out/timeout/cluster.log"
check "timeout: no processes or files left" leftovers "$lpid" "$out/timeout"

# ---- SIGINT ----
launch sigint -i "$work/hang.cpio" -t 300
wait_running sigint
kill -INT "$lpid"
finish_run
check "sigint: launcher exit status 1 ($lrc)" [ "$lrc" -eq 1 ]
check "sigint: cluster.log reports the interruption" \
	grep -q "interrupted (SIGINT)" "$out/sigint/cluster.log"
check "sigint: no processes or files left" leftovers "$lpid" "$out/sigint"

echo "1..$tap_n"
echo "cluster: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
