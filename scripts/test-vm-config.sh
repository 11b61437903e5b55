#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test-vm-config.sh OUT: tests of tools/scif/scif-vm-config, the generator
# of the user guide's QEMU command lines and libvirt XML
# (Documentation/scif/vms.rst); prints TAP, exits non-zero on a failure.
# Takes a few seconds and boots no guest:
#
#  - bad options are refused with status 2 and a message
#  - the domain XML validates with virt-xml-validate (libvirt-clients;
#    SKIP without it) for 2, 4 and 8 nodes, KVM, TCG and direct boot,
#    and has one aperture per other node (at slot 0x10 + its number) and
#    the node's own socket
#  - the QEMU command line has the node's RAM file as its memory backend
#    and one ivshmem-plain device per other node
#  - -C: serial ports on files, in order, in the XML (valid, no pty) and
#    on the QEMU command line
#  - QEMU itself, started paused (-S, no guest code runs) from the
#    generated command line with the generated server running, shows
#    the devices (info pci) and its RAM in the node's file (info mtree);
#    and QEMU given the arguments libvirt would give with the XML's
#    <qemu:commandline> takes the RAM from the SCIF file, not from
#    libvirt's own backend
# The QEMU part runs under $SCIF_QEMU_LOCK like every guest.
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: test-vm-config.sh OUT}
cfg=$top/tools/scif/scif-vm-config
n=0
fails=0

ok() { n=$((n + 1)); echo "ok $n - vm-config/$1"; }
not_ok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - vm-config/$1"; }
check() { # name command...
	local name=$1
	shift
	if "$@" > "$out/$name.log" 2>&1; then ok "$name"; else
		not_ok "$name"; tail -n 10 "$out/$name.log" | sed 's/^/# /'; fi
}

rm -rf "$out"
mkdir -p "$out" || exit 1
out=$(cd "$out" && pwd)

refused() { # args...: status 2 and a message on stderr
	local rc
	"$cfg" "$@" > /dev/null 2> "$out/err"
	rc=$?
	[ $rc -eq 2 ] && [ -s "$out/err" ] || { echo "$*: status $rc"; return 1; }
}
bad_options() {
	refused -n 1 setup && refused -n 9 setup && refused -m 1000 setup &&
		refused -m 16384 setup && refused -m 32 setup && refused qemu 2 &&
		refused qemu && refused -A xen qemu 0 && refused -d rel/dir setup &&
		refused -d '/a b' setup && refused -N '1x' libvirt 0 &&
		refused -k /vmlinuz qemu 0 && refused frobnicate &&
		refused -F vmdk qemu 0 && refused -n 3 libvirt 3 &&
		refused -C rel/con.log qemu 0 &&
		refused -C /a -C /b -C /c -C /d -C /e libvirt 0
}
check bad-options bad_options

xml_ok() { # nodes node args...: valid XML, n-1 apertures, own socket and RAM
	local nn=$1 k=$2 f=$out/x.xml
	shift 2
	"$cfg" -n "$nn" "$@" libvirt "$k" > "$f" || return 1
	virt-xml-validate "$f" domain || return 1
	[ "$(grep -c "value='ivshmem-plain,memdev=scifpeer" "$f")" -eq $((nn - 1)) ] &&
		grep -q "<server path='/dev/shm/scif/node$k.sock'/>" "$f" &&
		grep -q "mem-path=/dev/shm/scif/node$k.ram'/>" "$f" &&
		grep -q "<msi vectors='$nn'" "$f"
}
xml_all() {
	local nn
	for nn in 2 4 8; do
		xml_ok "$nn" 0 && xml_ok "$nn" $((nn - 1)) -A tcg || return 1
	done
	# Aperture to node j at slot 0x10 + j of pcie.0 (libvirt's first
	# root port takes slot 1).
	"$cfg" -n 8 libvirt 0 > "$out/x8.xml" &&
		[ "$(grep -c "value='ivshmem-plain,memdev=scifpeer\([1-7]\),bus=pcie.0,addr=0x1\1'/>" "$out/x8.xml")" -eq 7 ] ||
		return 1
	xml_ok 2 1 -A tcg -k /boot/vm -i /boot/in -a "root=LABEL=r console=ttyS0 x='<&>'" &&
		grep -q "<cmdline>root=LABEL=r console=ttyS0 x='&lt;&amp;&gt;'</cmdline>" "$out/x.xml" &&
		grep -q "<domain type='qemu'" "$out/x.xml"
}
if command -v virt-xml-validate > /dev/null; then
	check libvirt-xml-validates xml_all
else
	n=$((n + 1)); echo "ok $n - vm-config/libvirt-xml-validates # SKIP no virt-xml-validate"
fi

cmdline_ok() {
	local a planes=0 ram=
	eval "set -- $("$cfg" -n 4 -m 64 qemu 2)" || return 1
	for a in "$@"; do
		case $a in
		ivshmem-plain,memdev=peer*) planes=$((planes + 1)) ;;
		memory-backend-file,id=ram0,*) ram=$a ;;
		esac
	done
	echo "apertures $planes, RAM $ram"
	[ "$planes" -eq 3 ] && [[ $ram = *mem-path=/dev/shm/scif/node2.ram ]] &&
		[[ $ram = *share=on* ]] && [ "$1" = qemu-system-x86_64 ]
}
check qemu-cmdline cmdline_ok

serial_ok() { # -C: the node's files, ttyS0 then ttyS1
	local f=$out/serial.xml a ports=()
	local opts=(-A tcg -C /var/log/scif/con%k.log -C /var/log/scif/res%k.log)
	"$cfg" "${opts[@]}" libvirt 1 > "$f" || return 1
	if command -v virt-xml-validate > /dev/null; then
		virt-xml-validate "$f" domain || return 1
	fi
	cat "$f"
	[ "$(grep -c "<serial type='file'>" "$f")" -eq 2 ] &&
		! grep -q "type='pty'" "$f" &&
		[ "$(grep -A 2 "<serial type='file'>" "$f" | tr -d ' \n')" = \
"<serialtype='file'><sourcepath='/var/log/scif/con1.log'/><targetport='0'/>--\
<serialtype='file'><sourcepath='/var/log/scif/res1.log'/><targetport='1'/>" ] ||
		return 1
	eval "set -- $("$cfg" "${opts[@]}" qemu 1)" || return 1
	while [ $# -gt 1 ]; do
		[ "$1" != -serial ] || ports+=("$2")
		shift
	done
	echo "QEMU: ${ports[*]}"
	[ "${ports[*]}" = "file:/var/log/scif/con1.log file:/var/log/scif/res1.log" ]
}
check serial-files serial_ok

# ---- QEMU, paused ----
shm=/dev/shm/scif-vmcfg-$$
srv=
cleanup() {
	[ -z "$srv" ] || { kill "$srv" 2> /dev/null; wait "$srv" 2> /dev/null; }
	rm -rf "$shm"
}
trap cleanup EXIT

monitor() { # commands, then the QEMU command line: its monitor's answers
	local cmds=$1
	shift
	printf '%s\nquit\n' "$cmds" |
		timeout 60 "$@" -S -nodefaults -display none -monitor stdio 2>&1 |
		tr -d '\r'
}

qemu_paused() {
	local opts=(-n 2 -m 64 -A tcg -d "$shm" -D "$out/disk%k.qcow2" -C "$out/con%k.log")
	make -s -C "$top/qemu" OUTPUT="$out/qemu" || return 1
	qemu-img create -q -f qcow2 "$out/disk0.qcow2" 64M || return 1
	eval "$("$cfg" "${opts[@]}" setup)" || return 1
	# exec: $! is the server itself, which must not hold the QEMU lock
	# (descriptor 9).
	(eval "exec $("$cfg" "${opts[@]}" -S "$out/qemu/ivshmem-server" server)") \
		< /dev/null > "$out/server.log" 2>&1 9>&- &
	srv=$!
	for ((i = 0; i < 50; i++)); do [ -S "$shm/node0.sock" ] && break; sleep 0.1; done
	eval "set -- $("$cfg" "${opts[@]}" qemu 0)" || return 1
	monitor $'info pci\ninfo mtree -f' "$@" > "$out/monitor.txt"
	cat "$out/monitor.txt"
	# Node 0 of 2: one aperture and the doorbell device, both 1af4:1110.
	# -C: QEMU made the console's file.
	[ "$(grep -c 'PCI device 1af4:1110$' "$out/monitor.txt")" -eq 2 ] &&
		grep -q '(prio 0, ram): ram0$' "$out/monitor.txt" &&
		[ -e "$out/con0.log" ]
}

libvirt_override() {
	mkdir -p "$shm" && truncate -s 64M "$shm/node0.ram" || return 1
	# What libvirt 9 gives QEMU for <memory> 64 MiB, then the XML's
	# <qemu:commandline> arguments.
	monitor 'info mtree -f' qemu-system-x86_64 -accel tcg \
		-machine q35,memory-backend=pc.ram \
		-object memory-backend-ram,id=pc.ram,size=64M -m 64M \
		-object "memory-backend-file,id=scifram,size=64M,share=on,mem-path=$shm/node0.ram" \
		-machine memory-backend=scifram > "$out/override.txt"
	cat "$out/override.txt"
	grep -q '(prio 0, ram): scifram$' "$out/override.txt" &&
		! grep -q 'ram): pc.ram' "$out/override.txt"
}

qemu_checks() {
	check qemu-paused-devices-and-ram qemu_paused
	check libvirt-ram-override libvirt_override
}
if command -v qemu-system-x86_64 > /dev/null; then
	if [ -n "${SCIF_QEMU_LOCK:-}" ]; then
		exec 9> "$SCIF_QEMU_LOCK"
		flock 9
	fi
	qemu_checks
	exec 9>&-
else
	n=$((n + 1)); echo "ok $n - vm-config/qemu # SKIP no qemu-system-x86_64"
fi
echo "1..$n"
[ "$fails" -eq 0 ]
