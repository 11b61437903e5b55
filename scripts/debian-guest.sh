#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# debian-guest.sh: build (once) a Debian 12 disk image for real-VM tests
# and print the directory that holds it:
#
#   DIR/disk.img     raw ext4 file system (label scifroot), the whole root
#   DIR/vmlinuz      the image's own kernel (Debian's linux-image-amd64)
#   DIR/initrd.img   and its initramfs, for QEMU's direct kernel boot
#   DIR/release      the kernel release, DIR/packages the dpkg -l list
#
# The image is an ordinary Debian 12 system: systemd, udev, the stock 6.1
# kernel with its headers, gcc, make and dkms, so that scif-dkms builds in
# the guest without a network.  It also has an unprivileged user
# "scifuser" and one hook for tests, scif-guest-hook.service: at each
# boot, if a disk labelled "scifdata" is attached, it is mounted on
# /mnt/scifdata and its run.sh is run (output to /dev/ttyS1).  Without
# such a disk the hook does nothing.
#
# Packages come from the apt source this machine already uses for
# bookworm (read from /etc/apt/sources.list*; no mirror is named here).
# The result is cached under $SCIF_CACHE (/var/cache/scif) in
# debian12-KEY, KEY being a hash of this script and the sources; it is
# rebuilt only when either changes.  Needs root (mmdebstrap in root mode,
# mkfs.ext4 -d); installs mmdebstrap and e2fsprogs if missing.
set -euo pipefail

export DEBIAN_FRONTEND=noninteractive
cache=${SCIF_CACHE:-/var/cache/scif}
size=${SCIF_GUEST_DISK:-6G}

# What the guest needs: boot, udev, a kernel and what DKMS builds with.
PKGS="systemd systemd-sysv udev kmod linux-image-amd64 linux-headers-amd64
	initramfs-tools dkms gcc make libc6-dev dpkg-dev patch adduser
	openssl e2fsprogs util-linux procps less"

die() { echo "debian-guest: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "must run as root (mmdebstrap, mkfs.ext4 -d)"

host_deps() { # the host's tools, installed idempotently (as scripts/deps.sh)
	local p todo=
	for p in mmdebstrap e2fsprogs qemu-utils; do
		dpkg-query -W -f '${Status}\n' "$p" 2> /dev/null |
			grep -q '^install ok installed$' || todo+=" $p"
	done
	[ -n "$todo" ] || return 0
	local stamp=/var/lib/apt/periodic/scif-deps-updated
	[ -e "$stamp" ] || { apt-get update -q && touch "$stamp"; }
	# shellcheck disable=SC2086
	apt-get install -y -q --no-install-recommends $todo >&2
}

# One-line apt sources for the guest: every Debian suite of bookworm
# (bookworm, -updates, -security) that this machine has configured, from
# the deb822 .sources files and the one-line format alike.
guest_sources() {
	local f
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -r "$f" ] || continue
		awk '
		function flush(i, j) {
			if (uri != "" && deb)
				for (i = 1; i <= ns; i++)
					if (suite[i] ~ /^bookworm(-updates|-security)?$/)
						print "deb " uri " " suite[i] " main"
			uri = ""; ns = 0; deb = 0
		}
		/^[[:space:]]*$/ { flush(); next }
		/^[[:space:]]*#/ { next }
		tolower($1) == "types:" { for (i = 2; i <= NF; i++) if ($i == "deb") deb = 1 }
		tolower($1) == "uris:" { uri = $2 }
		tolower($1) == "suites:" { for (i = 2; i <= NF; i++) suite[++ns] = $i }
		END { flush() }
		' "$f"
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -r "$f" ] || continue
		awk '$1 == "deb" {
			i = 2; if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
			if ($(i + 1) ~ /^bookworm(-updates|-security)?$/)
				print "deb " $i " " $(i + 1) " main" }' "$f"
	done | sort -u
}

host_deps
sources=$(guest_sources | sort -u)
grep -q ' bookworm main$' <<< "$sources" ||
	die "no apt source for bookworm found in /etc/apt/sources.list*"
key=$({ cat "$0"; echo "$sources"; echo "$size"; } | sha256sum | cut -c1-16)
out=$cache/debian12-$key
if [ -e "$out/.scif-key" ] && [ -e "$out/disk.img" ]; then
	echo "$out"
	exit 0
fi

echo "debian-guest: building $out (log: $out.log)" >&2
rm -rf "$out" "$out.tmp"
mkdir -p "$out.tmp"
root=$out.tmp/root

# Set-up inside the new root, after the packages are in.
customize() {
	local r=$1
	echo scif-guest > "$r/etc/hostname"
	printf '127.0.0.1\tlocalhost\n127.0.1.1\tscif-guest\n' > "$r/etc/hosts"
	printf 'LABEL=scifroot\t/\text4\tdefaults\t0\t1\n' > "$r/etc/fstab"
	chroot "$r" useradd -m -s /bin/bash scifuser
	# A root console on ttyS0 for whoever debugs by hand; no password.
	chroot "$r" passwd -d root > /dev/null
	# Nothing that waits for a network or runs maintenance at boot.
	chroot "$r" systemctl mask apt-daily.timer apt-daily-upgrade.timer \
		man-db.timer e2scrub_all.timer e2scrub_reap.service \
		fstrim.timer systemd-timesyncd.service > /dev/null 2>&1 || true
	install -m 0755 /dev/stdin "$r/usr/local/sbin/scif-guest-hook" <<-'EOF'
	#!/bin/sh
	# Run the test hook of an attached disk labelled "scifdata", if any.
	dev=/dev/disk/by-label/scifdata
	udevadm settle -t 30 || true
	[ -e "$dev" ] || exit 0
	mkdir -p /mnt/scifdata
	mount "$dev" /mnt/scifdata || exit 1
	[ -x /mnt/scifdata/run.sh ] || exit 0
	exec /mnt/scifdata/run.sh > /dev/ttyS1 2>&1
	EOF
	cat > "$r/etc/systemd/system/scif-guest-hook.service" <<-'EOF'
	[Unit]
	Description=Run the test hook of a disk labelled scifdata
	After=local-fs.target systemd-modules-load.service systemd-udev-trigger.service systemd-user-sessions.service

	[Service]
	Type=oneshot
	ExecStart=/usr/local/sbin/scif-guest-hook
	StandardOutput=journal+console

	[Install]
	WantedBy=multi-user.target
	EOF
	chroot "$r" systemctl enable scif-guest-hook.service > /dev/null 2>&1
}

# shellcheck disable=SC2086
if ! nice mmdebstrap --variant=minbase --mode=root \
		--include="$(echo $PKGS | tr ' ' ,)" \
		bookworm "$root" - <<< "$sources" > "$out.log" 2>&1; then
	tail -n 30 "$out.log" >&2
	die "mmdebstrap failed (see $out.log)"
fi
customize "$root" >> "$out.log" 2>&1 || die "customising the root failed (see $out.log)"

rel=$(basename "$(ls -d "$root"/lib/modules/* | sort -V | tail -n 1)")
[ -e "$root/boot/vmlinuz-$rel" ] && [ -e "$root/boot/initrd.img-$rel" ] ||
	die "no kernel or initramfs for $rel in the image"
[ -d "$root/usr/src/linux-headers-$rel" ] || die "no headers for $rel in the image"
cp "$root/boot/vmlinuz-$rel" "$out.tmp/vmlinuz"
cp "$root/boot/initrd.img-$rel" "$out.tmp/initrd.img"
echo "$rel" > "$out.tmp/release"
chroot "$root" dpkg -l > "$out.tmp/packages"
nice mkfs.ext4 -q -L scifroot -d "$root" "$out.tmp/disk.img" "$size" >> "$out.log" 2>&1 ||
	die "mkfs.ext4 -d failed (see $out.log)"
rm -rf "$root"
echo "$key" > "$out.tmp/.scif-key"
mv "$out.tmp" "$out"
echo "debian-guest: done, kernel $rel" >&2
echo "$out"
