#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# ntb-deps.sh: the packages the NTB tests need on top of scripts/deps.sh
# (which enables bookworm-backports).  Idempotent: returns without
# touching apt when everything is present.
#   linux-source-6.12  at exactly the version of the 6.12 build tree
#                      (apt's candidate may be a newer security build)
#   iperf3             ntb_netdev's throughput test (copied into the
#                      guests' initramfs with the libraries it needs)
#   bash-static        ntb_test.sh is a bash script; the guests run busybox
set -eu

export DEBIAN_FRONTEND=noninteractive

die() { echo "ntb-deps: $*" >&2; exit 1; }

installed() { # package [version]
	v=$(dpkg-query -W -f '${Status} ${Version}\n' "$1" 2>/dev/null) || return 1
	case "$v" in
	"install ok installed "*) ;;
	*) return 1 ;;
	esac
	[ -z "${2:-}" ] || [ "${v##* }" = "$2" ]
}

todo=
for p in iperf3 bash-static; do
	installed "$p" || todo="$todo $p"
done

kernels=$(dirname "$0")/kernels.sh
src_ver=
if rel=$(sh "$kernels" resolve 6.12 2> /dev/null | cut -d' ' -f3) &&
	[ -n "$rel" ]; then
	src_ver=$(sh "$kernels" headers-version "$rel")
	[ -z "$src_ver" ] || installed linux-source-6.12 "$src_ver" ||
		todo="$todo linux-source-6.12=$src_ver"
fi

if [ -n "$todo" ]; then
	[ "$(id -u)" -eq 0 ] || die "must run as root to install:$todo"
	# shellcheck disable=SC2086
	apt-get install -y -q --no-install-recommends -t bookworm-backports $todo ||
		{ apt-get update -q && apt-get install -y -q --no-install-recommends \
			-t bookworm-backports $todo; } ||
		die "cannot install:$todo"
fi
echo "ntb-deps: all present"
