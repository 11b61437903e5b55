#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# rdma-core's own Python tests (pyverbs, the "tests" of Debian's
# python3-pyverbs, the same rdma-core version as the provider's), run
# unmodified with their runner against scif0 (Documentation/scif/rdma.rst,
# "rdma-core's tests").  Both nodes of a 2-node cluster load scif_net,
# the RDMA core and scif_rdma and make scif0 as scif_verbs_test.sh does;
# node 0 runs the suite, node 1 keeps its end of the link up until node
# 0 is done.
#
# Node 0 reports one TAP line per test module of the suite: "ok" when
# every test of the module passed or was skipped, with the counts
# (passed, failed, errors, skipped) in the line and each skip's reason
# as TAP comments; "not ok" when one failed or raised, but for the
# tests of $inapplicable, which no iWARP device can pass (reported as
# expected failures, with why).  The suite is bounded in time, and must
# finish (unittest's "Ran N tests" line) with every failure and error of
# its summary counted to a module.  PYVERBS_TESTS (on the step line) runs
# only the tests it
# names, e.g. "test_rdmacm.CMTestCase"; PYVERBS_SKIP, every test module
# but those it names (comma-separated).  The step lists run a few modules
# (a loopback traffic test among them) in a first step, the others in a
# second, and test_rdmacm, whose processes meet at barriers with 15 s
# timeouts, in a third; a lean run leaves out the last two (225 s on the
# debug kernel).
#
# The suite is run from the tests' directory with its runner,
# run_tests.py, as rdma-core documents.
set -u

PATH=$PATH:/usr/bin:/usr/sbin
self=${SCIF_NODE:-}
ex=/modules/extra
rdma_mods="configfs ib_core ib_uverbs ib_cm iw_cm rdma_cm rdma_ucm"
www=/tmp/pyverbs-www
provider=libscif_rdma-rdmav34.so
tests=/usr/share/doc/rdma-core/tests
python=/usr/bin/python3.11
log=/tmp/pyverbs.log
n=0
failed=0
loaded_mods=

# shellcheck disable=SC2034 # read by scif_tap_lib.sh
tap_suite=scif_pyverbs
# shellcheck source=tools/testing/selftests/scif/scif_tap_lib.sh
. "$(dirname "$0")/scif_tap_lib.sh"

# The test modules to run: $PYVERBS_TESTS, or all but $PYVERBS_SKIP (each
# a comma-separated list; none named: the runner takes them all).
suite_tests() {
	if [ -n "${PYVERBS_TESTS:-}" ] || [ -z "${PYVERBS_SKIP:-}" ]; then
		echo "${PYVERBS_TESTS:-}" | tr ',' ' '
		return
	fi
	skip=$(echo "$PYVERBS_SKIP" | tr ',' ' ')
	for f in "$tests"/test_*.py; do
		m=$(basename "$f" .py)
		case " $skip " in
		*" $m "*) ;;
		*) echo "$m" ;;
		esac
	done
}

# The suite on scif0, verbose (one line per test), bounded; with 2 MiB
# huge pages to allocate (some tests need them before they can find out
# what the device does not support) and a /dev/shm (Python's
# multiprocessing, which the rdma_cm tests' two processes use).
run_suite() {
	echo 32 > /proc/sys/vm/nr_hugepages
	mkdir -p /dev/shm
	grep -q " /dev/shm " /proc/mounts || mount -t tmpfs shm /dev/shm
	# shellcheck disable=SC2046 # the module names are words
	(cd "$tests" && PATH=/usr/lib/scif-pyverbs/bin:$PATH \
		timeout "${PYVERBS_SECS:-900}" "$python" run_tests.py \
		--dev scif0 -v $(suite_tests)) > "$log" 2>&1 < /dev/null
	echo "# run_tests.py exited $?"
	echo 0 > /proc/sys/vm/nr_hugepages
}

# Tests that cannot pass on an iWARP device, whatever the device does,
# and why ("name|reason" a line; rdma.rst, "rdma-core's tests").  Their
# failure or error is reported as expected; their passing, as news.
inapplicable="test_rdmacm_async_traffic|sets rdma_cm's ACK timeout and expects the QP to report it: rdma_cm gives it to InfiniBand and RoCE QPs only (rdma_init_qp_attr), never to an iWARP one
test_rdmacm_async_traffic_external_qp|expects RDMA_CM_EVENT_CONNECT_RESPONSE for an external QP, then rdma_establish(): the InfiniBand CM's; iw_cm reports ESTABLISHED
test_rdmacm_async_udp_traffic|RDMA_PS_UDP needs UD QPs, which no iWARP device has, and the test does not turn the device's EOPNOTSUPP into a skip"

# The counts of each test module, "module passed failed errors skipped
# other expected" a line in /tmp/pyverbs-counts (other: 1 if the counts
# do not add up; expected: failures of $inapplicable tests), and each
# distinct reason for a
# skip as a TAP comment.  From unittest's verbose output: a test is a
# line "test_x (tests.test_mod.Class.test_x)"; its verdict follows on
# that line or a later one (after its docstring, or after what the
# tests' own processes print), so a skip is taken from "skipped 'why'"
# after the last test named, and failures and errors from the summary's
# "FAIL: test_x (tests.test_mod..." and "ERROR: ..." lines; the rest
# passed.
report_modules() {
	awk -v known="$(echo "$inapplicable" | cut -d'|' -f1)" '
	BEGIN { split(known, kl, "\n"); for (i in kl) expect[kl[i]] = 1 }
	/^(FAIL|ERROR): test[a-z0-9_]* \(tests\.[a-z0-9_]+\./ {
		match($0, /\(tests\.[a-z0-9_]+\./)
		mod = substr($0, RSTART + 7, RLENGTH - 8)
		if ($2 in expect) { xfail[mod]++; next }
		if ($1 == "FAIL:") fail[mod]++; else err[mod]++
		next
	}
	/^test[a-z0-9_]* \(tests\.[a-z0-9_]+\./ {
		match($0, /\(tests\.[a-z0-9_]+\./)
		m = substr($0, RSTART + 7, RLENGTH - 8)
		if (!(m in seen)) { seen[m] = 1; order[++k] = m }
		tests[m]++
	}
	m != "" && /(^|\.\.\. )skipped / {
		skip[m]++
		r = $0
		sub(/.*skipped /, "", r)
		if (!((m, r) in why)) wl[m] = wl[m] "\n" r
		why[m, r]++
	}
	END {
		for (i = 1; i <= k; i++) {
			m = order[i]
			pass = tests[m] - fail[m] - err[m] - skip[m] - xfail[m]
			printf "%s %d %d %d %d %d %d\n", m, pass, fail[m], err[m], skip[m], (pass < 0), xfail[m]
			nr = split(wl[m], rs, "\n")
			for (j = 2; j <= nr; j++)
				printf "#   %s: %d skipped: %s\n", m, why[m, rs[j]], rs[j]
		}
	}' "$log" > /tmp/pyverbs-modules
	grep '^#' /tmp/pyverbs-modules
	grep -v '^#' /tmp/pyverbs-modules > /tmp/pyverbs-counts
}

# The module line for TAP: ok when nothing failed but what cannot pass.
module_ok() { # passed failed errors skipped other expected
	[ $(($2 + $3 + $5)) -eq 0 ]
}

# Every failure and error of the summary is one of a module's tests.
failures_counted() {
	[ "$(grep -Ec '^(FAIL|ERROR): ' "$log")" -eq \
		"$(grep -Ec '^(FAIL|ERROR): test[a-z0-9_]* \(tests\.' "$log")" ]
}

# The tests of $inapplicable: why each failed, or that it passed.
report_inapplicable() {
	echo "$inapplicable" | while IFS='|' read -r t why; do
		if grep -Eq "^(FAIL|ERROR): $t " "$log"; then
			echo "# expected on iWARP: $t: $why"
		elif grep -q "^$t .* \.\.\. ok\$" "$log"; then
			echo "# passed, though listed as inapplicable: $t"
		fi
	done
}

echo "TAP version 13"
user_verbs_require
[ -x "$python" ] && [ -e "$tests/run_tests.py" ] ||
	skip_all "no python3.11 or rdma-core's tests in the initramfs"
user_verbs_up
# The nodes meet through busybox httpd on both: "ready-<step>" on node 1
# once its end is up, "done-<step>" on node 0 once the suite is over;
# named by the step, since a step's files would otherwise be found by
# the next one.
step=$(echo "${PYVERBS_TESTS:-all}-${PYVERBS_SKIP:-}" | tr -c 'A-Za-z0-9_.\n-' _)
rm -rf "$www"
mkdir -p "$www"
httpd -f -p 80 -h "$www" &
httpd_pid=$!
if [ "$self" = 0 ]; then
	ok peer_ready wait_for 120 http_fetched "http://$peer_ip/ready-$step"
	ok port_active sh -c "rdma link show scif0/1 | grep -q 'state ACTIVE'"
	run_suite
	report_modules
	report_inapplicable
	while read -r m p f e s o x; do
		n=$((n + 1))
		if module_ok "$p" "$f" "$e" "$s" "$o" "$x"; then
			echo "ok $n - pyverbs_$m # passed $p, skipped $s, expected failures $x"
		else
			failed=$((failed + 1))
			echo "not ok $n - pyverbs_$m # passed $p, failed $f, errors $e, skipped $s"
			grep -E "^(FAIL|ERROR): .*tests\.$m\." "$log" | sed 's/^/# /'
		fi
	done < /tmp/pyverbs-counts
	# The suite finished, every failure of its summary was counted to
	# a module (an import error of a module is "ERROR: name
	# (unittest.loader._FailedTest...)", which no module line shows),
	# and some tests passed (a suite that skipped all, for want of an
	# active port, say, would prove nothing).
	ok suite_finished grep -Eq "^Ran [0-9]+ tests? in" "$log"
	ok failures_all_counted failures_counted
	ok suite_passed_some awk '{ p += $2 } END { exit !(p > 0) }' \
		/tmp/pyverbs-counts
	# What the tests' own processes printed (the rdma_cm tests' two
	# sides), at most 80 lines; the failures' and errors' tracebacks,
	# and the totals.
	sed -n '/^=====/q;/ \.\.\. /d;/^test_.* (tests\./d;p' "$log" |
		head -n 80 | sed 's/^/# /'
	sed -n '/^=====/,$p' "$log" | sed 's/^/# /'
	touch "$www/done-$step"
	sleep 2
else
	touch "$www/ready-$step"
	ok peer_done wait_for "${PYVERBS_SECS:-900}" http_fetched \
		"http://$peer_ip/done-$step"
fi
kill "$httpd_pid"
wait "$httpd_pid"
ok scif_rdma_down scif_rdma_down
ok rmmod_scif_net rmmod_client_soon scif_net
ok rdma_modules_unloaded rmmod_loaded
echo "1..$n"
[ $failed -eq 0 ]
