#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0
#
# /init of the test initramfs.  Runs the steps of /tests/list in order
# and reports on two serial ports:
#   ttyS0 (console)  kernel messages and the scif-taint line, for the
#                    host's log checker
#   ttyS1            test output framed by scif-test-begin/-end lines,
#                    then scif-run-complete, for the host's result parser
# A step is a program in /tests, or one of the words "insmod" (load the
# modules named in /modules/order) and "rmmod" (unload them in reverse).
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

load_modules() {
	for m in $(cat /modules/order); do
		insmod "/modules/$m" || return 1
	done
}

unload_modules() {
	for m in $(sed '1!G;h;$!d' /modules/order); do
		rmmod "${m%.ko}" || return 1
	done
}

run_step() {
	echo "scif-test-begin: $1"
	case "$1" in
	insmod) load_modules; rc=$? ;;
	rmmod) unload_modules; rc=$? ;;
	*) (cd /tests && timeout "$step_timeout" "./$1") 2>&1; rc=$? ;;
	esac
	echo "scif-test-end: $1 rc=$rc"
}

echo "scif-guest: $(uname -r) running $(grep -cv "^#" /tests/list) steps"
while read -r step; do
	case "$step" in ''|'#'*) continue ;; esac
	run_step "$step" > "$out" < /dev/null
done < /tests/list
echo "scif-run-complete" > "$out"

# Leaks: kmemleak only reports objects that are a few seconds old.
if [ -w /sys/kernel/debug/kmemleak ]; then
	sleep 6
	echo scan > /sys/kernel/debug/kmemleak
	echo scan > /sys/kernel/debug/kmemleak
	cat /sys/kernel/debug/kmemleak
fi
echo "scif-taint: before=$taint_before after=$(cat /proc/sys/kernel/tainted)"
echo "scif-guest: done"
sync
reboot -f
