#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash
#
# /init of the test initramfs.  Runs the steps of /tests/list in order
# and reports on two serial ports:
#   ttyS0 (console)  kernel messages and the scif-taint line, for the
#                    host's log checker
#   ttyS1            test output framed by scif-test-begin/-end lines,
#                    then scif-run-complete, for the host's result parser
# A step is a program in /tests, or one of the words "insmod" (load the
# modules named in /modules/order, each but scif.ko with the NAME.PARAM=
# VALUE words of the kernel command line) and "rmmod" (unload them in reverse);
# see run_step for variables and arguments.
/bin/busybox --install -s /bin
export PATH=/bin:/sbin:/tests
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug
mount -t tmpfs tmpfs /tmp

out=/dev/ttyS1
step_timeout=$(sed -n 's/.*scif.step_timeout=\([0-9]*\).*/\1/p' /proc/cmdline)
step_timeout=${step_timeout:-600}
taint_before=$(cat /proc/sys/kernel/tainted)

# ---- Cluster nodes (qemu/cluster.sh); nothing here acts without the
# arguments below, so single-VM runs are unchanged.
#   scif.steps=NAME      run the steps of /tests/NAME instead of /tests/list
#   scif.net=ADDR/LEN    load /modules/net/* and give eth0 that address
#   scif.node=K scif.nodes=N [scif.restart=C]   this guest is node K of an
#                        N-node cluster, booted for the C-th time after a
#                        restart; exported to the steps as SCIF_NODE,
#                        SCIF_NODES and SCIF_RESTART (0 on the first boot)
# On a cluster node SCIF_CONTROL=/dev/ttyS2 is the launcher's control
# channel (raw mode, one request per line) and /bin/scif-cluster uses it:
#   scif-cluster kill J      the launcher SIGKILLs node J's QEMU
#   scif-cluster restart J   the launcher boots node J again
#   scif-cluster pause J     the launcher SIGSTOPs node J's QEMU
#   scif-cluster resume J    ... and SIGCONTs it
#                            (all four wait for the launcher's answer, up to
#                            $SCIF_CLUSTER_WAIT seconds (60); exit 0 if done)
#   scif-cluster log TEXT    TEXT goes to the host's cluster.log
list=/tests/list
lean=0
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	scif.steps=*) list=/tests/${arg#*=} ;;
	scif.node=*) export SCIF_NODE="${arg#*=}" ;;
	scif.nodes=*) export SCIF_NODES="${arg#*=}" ;;
	scif.restart=*) export SCIF_RESTART="${arg#*=}" ;;
	scif.lean=*) lean=${arg#*=} ;;
	scif.net=*) net_addr=${arg#*=} ;;
	esac
done
# scif.net=ADDR/PREFIX (qemu/cluster.sh -N): eth0 gets ADDR, for the
# steps that compare with TCP; the driver comes from /modules/net.
ip link set lo up 2>/dev/null
if [ -n "${net_addr:-}" ]; then
	for m in $(cat /modules/net/order); do
		insmod "/modules/net/$m" 2>/dev/null
	done
	ip link set eth0 up && ip addr add "$net_addr" dev eth0 ||
		echo "scif-guest: no network for scif.net=$net_addr"
fi
if [ ! -f "$list" ]; then
	# A missing list is a failing step, not an empty (passing) run.
	echo "missing-step-list-${list#/tests/}" > /tmp/list
	list=/tmp/list
fi
if [ -n "${SCIF_NODES:-}" ]; then
	export SCIF_RESTART="${SCIF_RESTART:-0}" SCIF_CONTROL=/dev/ttyS2
	stty -F "$SCIF_CONTROL" raw -echo
	cat > /bin/scif-cluster <<-'EOF'
	#!/bin/sh
	# scif-cluster kill|restart|pause|resume J, or scif-cluster log TEXT (see /init)
	exec 9<> "$SCIF_CONTROL" || exit 1
	stty raw -echo <&9
	echo "scif-cluster: $*" >&9
	[ "$1" = log ] && exit 0
	while read -r -t "${SCIF_CLUSTER_WAIT:-60}" tag req node status <&9; do
		[ "$tag $req $node" = "scif-cluster-ack: $1 $2" ] || continue
		[ "$status" = ok ]
		exit
	done
	echo "scif-cluster: no answer to '$*'" >&2
	exit 1
	EOF
	chmod 0755 /bin/scif-cluster
fi
# ---- end of the cluster block

# A module's parameters from the kernel command line (NAME.PARAM=VALUE),
# as modprobe would pass them; not for scif.ko, whose scif.* words on the
# command line are this script's own.
module_params() { # module name
	[ "$1" = scif ] && return
	for arg in $(cat /proc/cmdline); do
		case "$arg" in
		"$1".*=*) echo "${arg#"$1".}" ;;
		esac
	done
}

load_modules() {
	for m in $(cat /modules/order); do
		# shellcheck disable=SC2046 # one word per parameter
		insmod "/modules/$m" $(module_params "${m%.ko}") || return 1
	done
}

unload_modules() {
	for m in $(sed '1!G;h;$!d' /modules/order); do
		rmmod "${m%.ko}" || return 1
	done
}

# A step line: [full] [VAR=value ...] name [argument ...]; the step is
# known by its name, and runs with those variables and arguments.  A step
# marked "full" is left out of a lean run (scif.lean=1 on the kernel
# command line: make check's debug-kernel guests, where the same kernel
# code runs in a step beside it) and reported as one skipped TAP test.
run_step() {
	set -f
	# shellcheck disable=SC2086 # split the line into words, unglobbed
	set -- $1
	set +f
	full=0
	[ "$1" = full ] && full=1 && shift
	line=$*
	vars=''
	while [ $# -gt 1 ]; do
		case "$1" in
		[A-Za-z_]*=*) vars="$vars $1"; shift ;;
		*) break ;;
		esac
	done
	name=$1
	shift
	echo "scif-test-begin: $name"
	if [ "$full" = 1 ] && [ "$lean" = 1 ]; then
		echo "ok 1 - left out of a lean run: $line # SKIP DEBUG_LEAN=0 brings it back"
		echo "scif-test-end: $name rc=0"
		return
	fi
	t0=$(cut -d' ' -f1 /proc/uptime)
	case "$name" in
	insmod) load_modules; rc=$? ;;
	rmmod) unload_modules; rc=$? ;;
	*)
		# shellcheck disable=SC2086 # $vars are words: VAR=value ...
		(cd /tests && env $vars timeout "$step_timeout" "./$name" "$@") 2>&1
		rc=$?
		;;
	esac
	# How long the step took (a TAP comment): make check's budget.
	awk -v a="$t0" '{ printf "# step took %.1f s\n", $1 - a }' /proc/uptime
	echo "scif-test-end: $name rc=$rc"
}

echo "scif-guest: $(uname -r) running $(grep -cv "^#" "$list") steps"
while read -r step; do
	case "$step" in ''|'#'*) continue ;; esac
	run_step "$step" > "$out" < /dev/null
done < "$list"
echo "scif-run-complete" > "$out"

# Leaks: kmemleak reports an object found unreferenced and unchanged by
# two scans, the second starting when it is over 5 s old: a scan takes
# longer than that in our guests (10 to 40 s), or else we wait for it.
if [ -w /sys/kernel/debug/kmemleak ]; then
	t0=$(cut -d. -f1 /proc/uptime)
	echo scan > /sys/kernel/debug/kmemleak
	t1=$(cut -d. -f1 /proc/uptime)
	[ $((t1 - t0)) -ge 6 ] || sleep $((6 - (t1 - t0)))
	echo scan > /sys/kernel/debug/kmemleak
	cat /sys/kernel/debug/kmemleak
fi
echo "scif-taint: before=$taint_before after=$(cat /proc/sys/kernel/tainted)"
echo "scif-guest: done"
sync
reboot -f
