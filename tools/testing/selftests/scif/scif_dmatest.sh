#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The software dmaengine provider (scif_soft_dma.ko, a test module) under
# the kernel's own dmatest (dmatest.ko, built by scripts/dmatest-module.sh
# from the matching linux-source): every soft channel copies correctly,
# with callbacks and polled (terminate_sync after each copy), large copies
# across pages work, each injected fault (fail_every, delay_ms, max_desc)
# shows in dmatest's results and in the provider's counters, a round trip
# through memory that is not RAM (the VGA BAR) works, terminate_sync drops
# what is queued, and both modules unload.  Expects neither module loaded; leaves
# neither loaded.  Environment: SOFT_DMA_MODULE, DMATEST_MODULE (paths),
# DMATEST_ITERATIONS (200), SOFT_DMA_IVSHMEM=1 (see test 8).
soft=${SOFT_DMA_MODULE:-/modules/extra/scif_soft_dma.ko}
dmatest=${DMATEST_MODULE:-/modules/extra/dmatest.ko}
iterations=${DMATEST_ITERATIONS:-200}
nchan=4
params=/sys/module/scif_soft_dma/parameters

echo "TAP version 13"
if [ ! -f "$soft" ] || [ ! -f "$dmatest" ]; then
	echo "1..0 # SKIP $soft or $dmatest missing"
	exit 4
fi
echo "1..10"

n=0
failed=0
result() { # ok-flag name
	n=$((n + 1))
	if [ "$1" = 1 ]; then
		echo "ok $n $2"
	else
		echo "not ok $n $2"
		failed=1
	fi
}

counter() { cat "$params/$1"; }

# Centiseconds since boot.
now_cs() { awk '{ sub(/\./, "", $1); print $1 + 0 }' /proc/uptime; }

# The soft channels' names (dmaNchanM), from /sys/class/dma.
soft_channels() {
	for c in /sys/class/dma/*; do
		[ -e "$c/device" ] || continue
		case "$(readlink -f "$c/device")" in
		*/scif_soft_dma) basename "$c" ;;
		esac
	done
}

# run_dmatest NAME [dmatest parameters...]: load dmatest on the soft
# device, run it to the end, unload it; its summary lines, as
# "channel tests failures", go to /tmp/dmatest.NAME and its part of the
# kernel log to /tmp/dmesg.NAME.  Fails if dmatest
# cannot be loaded, run or unloaded.
run_dmatest() {
	name=$1
	shift
	mark="scif_dmatest: run $name $$"
	echo "$mark" > /dev/kmsg
	insmod "$dmatest" device=scif_soft_dma timeout=30000 "$@" || return 1
	echo 1 > /sys/module/dmatest/parameters/run || { rmmod dmatest; return 1; }
	cat /sys/module/dmatest/parameters/wait > /dev/null
	# "wait" returns at once if the threads have not begun yet (dmatest
	# counts a pending thread as not running; seen on 6.1), and unloading
	# would stop them: wait for a summary from every thread it added.
	tries=0
	while :; do
		dmesg | sed -n "/$mark/,\$p" > "/tmp/dmesg.$name"
		added=$(sed -n 's/.*dmatest: Added \([0-9]*\) threads using .*/\1/p' \
			"/tmp/dmesg.$name" | awk '{ s += $1 } END { print s + 0 }')
		ended=$(grep -c ': summary ' "/tmp/dmesg.$name")
		[ "$added" -gt 0 ] && [ "$ended" -ge "$added" ] && break
		tries=$((tries + 1))
		if [ "$tries" -gt 300 ]; then
			echo "# $name: $ended of $added dmatest threads ended in 300 s"
			break
		fi
		sleep 1
	done
	rmmod dmatest || return 1
	dmesg | sed -n "/$mark/,\$p" > "/tmp/dmesg.$name"
	sed -n 's/.* \(dma[0-9]*chan[0-9]*\)-copy[0-9]*: summary \([0-9]*\) tests, \([0-9]*\) failures.*/\1 \2 \3/p' \
		"/tmp/dmesg.$name" > "/tmp/dmatest.$name"
	sed "s/^/# $name: /" "/tmp/dmatest.$name"
}

# Sums over a run's summary lines.
tests_of() { awk '{ s += $2 } END { print s + 0 }' "/tmp/dmatest.$1"; }
failures_of() { awk '{ s += $3 } END { print s + 0 }' "/tmp/dmatest.$1"; }
lines_of() { wc -l < "/tmp/dmatest.$1"; }

# 1: the provider loads with its channels
ok=0
if insmod "$soft" channels=$nchan; then
	chans=$(soft_channels)
	count=$(echo "$chans" | grep -c chan)
	echo "# soft channels: $(echo "$chans" | tr "\n" " ")"
	[ "$count" = $nchan ] && ok=1
fi
result $ok "provider_loads_with_${nchan}_channels"
if [ "$ok" = 0 ]; then
	rmmod scif_soft_dma 2>/dev/null
	exit 1
fi

# 2: dmatest on every soft channel: no failure, every test completed here
ok=0
c0=$(counter completed)
f0=$(counter failed)
if run_dmatest all iterations="$iterations" threads_per_chan=1 \
	max_channels=$nchan; then
	c1=$(counter completed)
	f1=$(counter failed)
	echo "# completed $c0 -> $c1, failed $f0 -> $f1"
	ok=1
	for c in $chans; do
		grep -q "^$c $iterations 0\$" /tmp/dmatest.all ||
			{ echo "# $c: no clean summary of $iterations tests"; ok=0; }
	done
	[ $((c1 - c0)) -ge $((nchan * iterations)) ] && [ "$f1" = "$f0" ] ||
		ok=0
fi
result $ok dmatest_all_channels

# 3: copies of 1100000 bytes at random offsets (unaligned, crossing
# pages at both ends); exactly those bytes are copied
ok=0
b0=$(counter bytes_copied)
if run_dmatest large iterations=20 threads_per_chan=1 max_channels=1 \
	test_buf_size=1200000 transfer_size=1100000; then
	b1=$(counter bytes_copied)
	echo "# bytes_copied $b0 -> $b1"
	[ "$(lines_of large)" = 1 ] && [ "$(failures_of large)" = 0 ] &&
		[ "$(tests_of large)" = 20 ] &&
		[ $((b1 - b0)) = $((20 * 1100000)) ] && ok=1
fi
result $ok dmatest_large_copies

# 4: polled: dmatest waits with dma_sync_wait() and calls
# dmaengine_terminate_sync() after every copy.  One thread only:
# dma_sync_wait() spins without yielding, and spinners on every CPU of a
# kernel without preemption starve the work that would complete them.
ok=0
if run_dmatest polled iterations=50 threads_per_chan=1 max_channels=1 \
	polled=1; then
	[ "$(lines_of polled)" = 1 ] && [ "$(failures_of polled)" = 0 ] &&
		[ "$(tests_of polled)" = 50 ] && ok=1
fi
result $ok dmatest_polled_terminate_sync

# 5: fail_every=5: dmatest sees exactly the failures the provider injected
ok=0
f0=$(counter failed)
echo 5 > "$params/fail_every"
if run_dmatest fail iterations=100 threads_per_chan=1 max_channels=$nchan; then
	f1=$(counter failed)
	bad=$(failures_of fail)
	echo "# dmatest failures $bad, provider failed $f0 -> $f1"
	[ "$bad" -ge $((nchan * 100 / 5 - nchan)) ] &&
		[ "$bad" = $((f1 - f0)) ] && ok=1
fi
echo 0 > "$params/fail_every"
result $ok fail_every_reported_by_dmatest

# 6: delay_ms=20: still no failure, and 50 descriptors take >= 1 s
ok=0
echo 20 > "$params/delay_ms"
t0=$(now_cs)
if run_dmatest delay iterations=50 threads_per_chan=1 max_channels=1; then
	t1=$(now_cs)
	echo "# 50 descriptors at delay_ms=20: $((t1 - t0)) cs"
	[ "$(failures_of delay)" = 0 ] && [ "$(tests_of delay)" = 50 ] &&
		[ $((t1 - t0)) -ge 100 ] && ok=1
fi
echo 0 > "$params/delay_ms"
result $ok delay_ms_slows_but_passes

# 7: max_desc=1 with 4 threads on one channel: preps are refused, and
# dmatest counts each refusal as one "prep error".  A thread that ends
# with failures calls dmaengine_terminate_sync() on the channel it shares
# with the others, which drops their copy in flight: each such drop is
# one "test timed out" (so a short timeout) and one "terminated".
# Nothing else may fail.
ok=0
r0=$(counter prep_refused)
t0=$(counter terminated)
echo 1 > "$params/max_desc"
echo 5 > "$params/delay_ms"
if run_dmatest maxdesc iterations=20 threads_per_chan=4 max_channels=1 \
	timeout=5000; then
	r1=$(counter prep_refused)
	t1=$(counter terminated)
	bad=$(failures_of maxdesc)
	prep=$(grep -c "'prep error'" /tmp/dmesg.maxdesc)
	late=$(grep -c "'test timed out'" /tmp/dmesg.maxdesc)
	echo "# prep_refused $r0 -> $r1, terminated $t0 -> $t1;" \
		"dmatest failures $bad: $prep prep errors, $late timed out"
	[ $((r1 - r0)) -gt 0 ] && [ "$prep" = $((r1 - r0)) ] &&
		[ "$late" = $((t1 - t0)) ] && [ "$bad" = $((prep + late)) ] &&
		ok=1
fi
echo 0 > "$params/max_desc"
echo 0 > "$params/delay_ms"
result $ok max_desc_refuses_prep

# 8: RAM -> memory that is not RAM -> RAM, through a channel: the
# framebuffer BAR of the guest's VGA device (class 0x0300xx), if any; or,
# with SOFT_DMA_IVSHMEM=1, BAR2 of the first ivshmem device (1af4:1110)
# no driver holds.  Only for a guest whose ivshmem memory nobody else
# uses: in a SCIF cluster it is a peer's RAM.
ok=0
bar=
for d in /sys/bus/pci/devices/*; do
	if [ "${SOFT_DMA_IVSHMEM:-0}" = 1 ]; then
		if [ "$(cat "$d/vendor"):$(cat "$d/device")" = 0x1af4:0x1110 ] &&
		   [ ! -e "$d/driver" ]; then
			bar=$(sed -n 3p "$d/resource")
			break
		fi
		continue
	fi
	case "$(cat "$d/class")" in
	0x0300*) bar=$(sed -n 1p "$d/resource"); break ;;
	esac
done
# "start end flags": the test needs 1 MiB + 5000 bytes of it
# shellcheck disable=SC2086 # split "start end flags"
set -- $bar
if [ $# -lt 2 ] || [ "$(($1))" = 0 ] || [ $(($2 - $1 + 1)) -lt 1053576 ]; then
	n=$((n + 1))
	echo "ok $n mmio_roundtrip # SKIP no BAR to use in this guest"
else
	i0=$(counter io_bytes_copied)
	if echo "$1" > "$params/mmio_test"; then
		i1=$(counter io_bytes_copied)
		echo "# BAR at $1: io_bytes_copied $i0 -> $i1"
		[ $((i1 - i0)) = $((2 * (1048576 + 5000))) ] && ok=1
	fi
	result $ok mmio_roundtrip
fi

# 9: terminate_sync drops what is queued (the provider's own check)
ok=0
t0=$(counter terminated)
if echo 1 > "$params/terminate_test"; then
	t1=$(counter terminated)
	echo "# terminated $t0 -> $t1"
	[ $((t1 - t0)) -ge 8 ] && ok=1
fi
result $ok terminate_drops_queued

# 10: the provider unloads, and the soft channels are gone
ok=0
if rmmod scif_soft_dma; then
	[ -z "$(soft_channels)" ] && ok=1
fi
result $ok provider_unloads

[ "$failed" = 0 ]
