#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make fuzz / make peer-fuzz: the fuzzers, long runs, with figures.
#
#   fuzz.sh [user] [peer] [msg] [link] [dma]   (default: user peer dma;
#                                  peer is msg and link)
#
#   user   scif_fuzz in a guest of $FUZZ_KERNEL (default debug): $FUZZ_CALLS
#          calls (default 1000000) in $FUZZ_STEPS runs of one guest (default
#          10), each with its own seed ($FUZZ_SEED + i; default: the time)
#          and $FUZZ_THREADS threads (4); then the figures: calls, calls/s,
#          the errno histogram, the seeds, and whether the kernel log is
#          clean; then, in the same guest, scif_fp_fuzz (a user writing
#          anything into its mapped data path): $FP_FUZZ_OPS operations
#          (calls and word writes, default 2000000) in at most
#          $FP_FUZZ_SECS seconds (default 480), seed $FUZZ_SEED, and its
#          figures
#   dma    scif_fuzz -D in a guest of $FUZZ_KERNEL whose copy engine uses
#          the test build's software DMA provider, which fails one
#          transfer in $DMA_FUZZ_FAIL_EVERY (default 7): $DMA_FUZZ_CALLS
#          calls (default 100000) in $DMA_FUZZ_STEPS runs (default 2),
#          then scif_dma_used.sh checks the engine did copy by DMA and
#          saw the failures; its figures
#   peer   msg, then link:
#   msg    scif_peer_fuzz_test in a 3-node cluster of $FUZZ_KERNEL: node 1
#          sends $PEER_FUZZ_COUNT (default 200000) random and mutated node
#          messages to node 0, seed $PEER_FUZZ_SEED, while node 0 keeps a
#          stream to node 2 going; node 0's memory must return to its
#          baseline.  The nodes' heartbeat timeout is $PEER_FUZZ_HB_MS
#          (default 5000): a node busy with the bursts is slow, not lost
#   link   scif_link_fuzz.sh in a 2-node cluster of
#          $FUZZ_KERNEL: a root of node 1, then one of node 0, is the
#          other's scif_net and scif_vsock links and sends each
#          $LINK_FUZZ_COUNT (default 100000) random frames (seed
#          $PEER_FUZZ_SEED, at most $LINK_FUZZ_SECS seconds a phase,
#          default 1200); the victim's links must survive, come back to
#          the modules, and leak nothing
#
# Ends with "N passed, N failed"; exits non-zero if anything failed.
# Every guest waits for $SCIF_QEMU_LOCK if set (see qemu/run-vm.sh).  The
# long runs are where QEMU 7.2's garbage RFLAGS after CMPXCHG16B killed a
# guest; on 7.2 (not what scripts/deps.sh installs) run them with
# SCIF_TCG_CX16=off (Documentation/scif/testing.rst, "The guest").
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$top/build}
k=${FUZZ_KERNEL:-debug}
calls=${FUZZ_CALLS:-1000000}
nsteps=${FUZZ_STEPS:-10}
threads=${FUZZ_THREADS:-4}
seed0=${FUZZ_SEED:-$(date +%s)}
peer_count=${PEER_FUZZ_COUNT:-200000}
peer_seed=${PEER_FUZZ_SEED:-$seed0}
link_count=${LINK_FUZZ_COUNT:-100000}
link_secs=${LINK_FUZZ_SECS:-1200}
peer_hb=${PEER_FUZZ_HB_MS:-5000}
fp_ops=${FP_FUZZ_OPS:-2000000}
fp_secs=${FP_FUZZ_SECS:-480}
dma_calls=${DMA_FUZZ_CALLS:-100000}
dma_steps=${DMA_FUZZ_STEPS:-2}
dma_fail=${DMA_FUZZ_FAIL_EVERY:-7}
out=$BUILD/fuzz
sd=$top/tools/testing/selftests/scif
what=${*:-user peer dma}
passed=0
failed=0

verdict() { # PASS|FAIL name
	echo "$1 $2"
	if [ "$1" = PASS ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
}

parse() { # results.log label: one verdict per test
	local v n
	while read -r v n; do verdict "$v" "$n"; done \
		< <(sh "$top/qemu/parse-results.sh" "$1" "$2")
}

log_clean() { # console.log name
	if bash "$top/qemu/check-log.sh" "$1" > "$1.check" 2>&1; then
		verdict PASS "$2"
	else
		verdict FAIL "$2"
		sed 's/^/    /' "$1.check" | head -n 60
	fi
}

read -r kdir image rel < <(sh "$top/scripts/kernels.sh" resolve "$k") ||
	{ echo "fuzz: kernel $k not available"; echo "0 passed, 1 failed"; exit 1; }
moddir=$BUILD/modules/$k
mkdir -p "$out"
make -s -C "$top" test-modules STRICT=1 SCIF_TEST=1 KDIR="$kdir" \
	MODDIR="$moddir" > "$out/build.log" 2>&1 &&
	make -s -C "$top" lib selftests >> "$out/build.log" 2>&1 ||
	{ tail -n 30 "$out/build.log"; echo "0 passed, 1 failed"; exit 1; }

# The step lines of RUNS scif_fuzz runs, CALLS calls in all, each with
# its own seed, with the options given besides.
fuzz_runs() { # runs calls [option ...]
	local n=$1 per=$(( ($2 + $1 - 1) / $1 )) i
	shift 2
	for i in $(seq 0 $((n - 1))); do
		echo "scif_fuzz ${*:+$* }-s $((seed0 + i)) -n $per -t $threads -T 580"
	done
}

user_fuzz() {
	local vm=$out/user-$k steps=$out/user-steps
	{
		echo insmod
		fuzz_runs "$nsteps" "$calls"
		echo "scif_fp_fuzz -s $seed0 -n $fp_ops -T $fp_secs"
		echo rmmod
	} > "$steps"
	sh "$top/qemu/mkinitramfs.sh" "$vm.cpio" "$steps" "$BUILD/selftests" \
		"$moddir/drivers/misc/scif/scif.ko" > /dev/null
	echo "fuzz: $calls calls in $nsteps runs on $k ($rel), seeds $seed0.."$((seed0 + nsteps - 1))
	SCIF_VM_MEM=2G SCIF_VM_TIMEOUT=$((nsteps * 600 + fp_secs + 480)) \
		sh "$top/qemu/run-vm.sh" "$image" "$vm.cpio" "$vm" > "$vm.out" 2>&1 ||
		echo "fuzz: guest exited with status $?"
	parse "$vm/results.log" "$k/fuzz"
	log_clean "$vm/console.log" "$k/fuzz/kernel-log-clean"
	# Figures: the runs' summary lines added up.
	tr -d '\r' < "$vm/results.log" | awk '
	/^# fuzz: seed / {
		runs++; seeds = seeds " " $4; n += $8; ms += $10
	}
	/^# fuzz-errno:/ {
		for (i = 3; i <= NF; i++) {
			split($i, kv, "="); hist[kv[1]] += kv[2]
		}
	}
	/^# fuzz: failed calls/ { line[runs] = $0 }
	END {
		printf "fuzz: %d runs, %d calls in %.1f s of fuzzing: %.0f calls/s\n",
		       runs, n, ms / 1000, ms ? n * 1000 / ms : 0
		printf "fuzz: seeds%s\n", seeds
		printf "fuzz: errno histogram:"
		for (e in hist) printf " %s=%d", e, hist[e]
		printf "\n"
	}' | tee "$out/user-figures.txt"
	tr -d '\r' < "$vm/results.log" | grep '^# fp-fuzz' |
		tee "$out/fp-figures.txt"
}

# The user fuzzer with the copy engine on a DMA provider that fails
# transfers (issue 31 item 8): RMAs may fail with EIO, nothing else.
dma_fuzz() {
	local vm=$out/dma-$k steps=$out/dma-steps
	local soft=$moddir/tools/testing/selftests/scif/kmod/scif_soft_dma.ko
	{
		echo insmod
		fuzz_runs "$dma_steps" "$dma_calls" -D
		echo "SCIF_DMA_FAULTS=1 scif_dma_used.sh"
		echo rmmod
	} > "$steps"
	sh "$top/qemu/mkinitramfs.sh" "$vm.cpio" "$steps" "$BUILD/selftests" \
		"$soft" "$moddir/drivers/misc/scif/scif.ko" > /dev/null
	echo "fuzz: dma, $dma_calls calls in $dma_steps runs on $k ($rel), one DMA transfer in $dma_fail failed, seeds $seed0.."$((seed0 + dma_steps - 1))
	SCIF_VM_MEM=2G SCIF_VM_TIMEOUT=$((dma_steps * 600 + 480)) \
		sh "$top/qemu/run-vm.sh" "$image" "$vm.cpio" "$vm" \
		"scif_soft_dma.fail_every=$dma_fail" > "$vm.out" 2>&1 ||
		echo "fuzz: guest exited with status $?"
	parse "$vm/results.log" "$k/dma-fuzz"
	log_clean "$vm/console.log" "$k/dma-fuzz/kernel-log-clean"
	tr -d '\r' < "$vm/results.log" |
		grep -E '^# (fuzz: (seed|failed calls|checks failed)|dma-fuzz)' |
		tee "$out/dma-figures.txt"
}

peer_fuzz() {
	local cdir=$out/peer-$k j
	rm -rf "$cdir"
	mkdir -p "$cdir"
	sh "$top/qemu/mkinitramfs.sh" "$cdir.cpio" "$sd/peer-fuzz-steps" \
		"$BUILD/selftests" "$moddir/drivers/misc/scif/scif.ko" \
		"$moddir/drivers/misc/scif/scif_ivshmem.ko" > /dev/null
	echo "fuzz: peer fuzz, $peer_count messages, seed $peer_seed, 3-node cluster of $k ($rel)"
	bash "$top/qemu/cluster.sh" -n 3 -k "$image" -i "$cdir.cpio" -o "$cdir" \
		-t 1500 -S "$BUILD/qemu/ivshmem-server" \
		-a "peerfuzz=$peer_seed,$peer_count scif_ivshmem.hb_timeout_ms=$peer_hb" \
		> "$cdir/launcher.log" 2>&1 ||
		echo "fuzz: peer-fuzz cluster: launcher reported failure"
	for j in 0 1 2; do
		parse "$cdir/node$j/results.log" "$k/peer-fuzz/node$j"
		log_clean "$cdir/node$j/console.log" "$k/peer-fuzz/node$j/kernel-log-clean"
	done
	grep -h '^# peer-fuzz' "$cdir"/node*/results.log | tr -d '\r' |
		tee "$out/peer-figures.txt"
}

# scif_link_fuzz.sh's long run: scif_peer_links, scif_net, scif_vsock and
# the guest's vsock modules as in make check's node-loss cluster.
link_fuzz() {
	local cdir=$out/link-$k vs=$BUILD/vsock/$k steps=$out/link-steps vsmods='' j
	rm -rf "$cdir"
	mkdir -p "$cdir"
	if [ -e "$moddir/net/vmw_vsock/scif_vsock.ko" ] &&
		sh "$top/scripts/vsock-test-build.sh" "$k" "$vs" > "$out/vsock-build.log" 2>&1; then
		vsmods="$moddir/net/vmw_vsock/scif_vsock.ko $(ls "$vs"/modules/*.ko)"
	fi
	printf 'insmod\nLINKFUZZ_LIFE=0 LINKFUZZ_SEED=%s LINKFUZZ_COUNT=%s LINKFUZZ_SECS=%s scif_link_fuzz.sh\nrmmod\n' \
		"$peer_seed" "$link_count" "$link_secs" > "$steps"
	EXTRA_MODULES="$moddir/net/scif/scif_peer_links.ko
		$moddir/drivers/net/scif/scif_net.ko $vsmods" \
	sh "$top/qemu/mkinitramfs.sh" "$cdir.cpio" "$steps" "$BUILD/selftests" \
		"$moddir/drivers/misc/scif/scif.ko" \
		"$moddir/drivers/misc/scif/scif_ivshmem.ko" > /dev/null
	echo "fuzz: link fuzz, $link_count frames a link, seed $peer_seed, 2-node cluster of $k ($rel)"
	bash "$top/qemu/cluster.sh" -n 2 -k "$image" -i "$cdir.cpio" -o "$cdir" \
		-t $((2 * link_secs + 900)) -S "$BUILD/qemu/ivshmem-server" \
		-a "scif.step_timeout=$((2 * link_secs + 600))" \
		> "$cdir/launcher.log" 2>&1 ||
		echo "fuzz: link-fuzz cluster: launcher reported failure"
	for j in 0 1; do
		parse "$cdir/node$j/results.log" "$k/link-fuzz/node$j"
		log_clean "$cdir/node$j/console.log" "$k/link-fuzz/node$j/kernel-log-clean"
	done
	grep -h '^# linkfuzz' "$cdir"/node0/results.log | tr -d '\r' |
		tee "$out/link-figures.txt"
}

for w in $what; do
	case "$w" in
	user) user_fuzz ;;
	dma) dma_fuzz ;;
	peer) make -s -C "$top/qemu" OUTPUT="$BUILD/qemu" > /dev/null &&
		{ peer_fuzz; link_fuzz; } ;;
	msg) make -s -C "$top/qemu" OUTPUT="$BUILD/qemu" > /dev/null && peer_fuzz ;;
	link) make -s -C "$top/qemu" OUTPUT="$BUILD/qemu" > /dev/null && link_fuzz ;;
	*) echo "fuzz: unknown part $w"; failed=$((failed + 1)) ;;
	esac
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
