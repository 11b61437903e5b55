#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Install what the packaging checks need on a Debian 12 machine: dkms (the
# DKMS test), debhelper and devscripts (dpkg-buildpackage of debian/) and
# lintian; rpm and rpmlint (the RPM spec's test).  Idempotent: returns
# without touching apt when all are present.
# Installs no kernel and changes nothing about how the host boots.
set -eu

export DEBIAN_FRONTEND=noninteractive

PKGS="dkms debhelper devscripts lintian fakeroot dh-dkms libibverbs-dev rpm rpmlint"

die() { echo "pkg-deps: $*" >&2; exit 1; }

missing() {
	for p in "$@"; do
		dpkg-query -W -f '${Status}\n' "$p" 2>/dev/null |
			grep -q '^install ok installed$' || echo "$p"
	done
}

todo=$(missing $PKGS)
[ -n "$todo" ] || exit 0
[ "$(id -u)" -eq 0 ] || die "must run as root to install:" $todo
stamp=/var/lib/apt/periodic/scif-deps-updated
[ -e "$stamp" ] || { apt-get update -q && touch "$stamp"; }
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $todo
