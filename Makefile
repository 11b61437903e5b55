# SPDX-License-Identifier: GPL-2.0
#
# SCIF: build, test and demo entry points.  Everything built goes under
# $(BUILD); the kernel source tree and the debug kernel are cached under
# $(SCIF_CACHE) (default /var/cache/scif).
#
#   make help        this list
#   make deps        install the packages (apt, idempotent; needs root)
#   make modules     build scif.ko for one kernel: KVER= or KDIR=
#                    (default: the newest installed kernel with a build tree)
#   make lib         build libscif (shared, static, pkg-config) and check it
#   make tools       build scif-info, scif-bench and the examples (build/tools)
#   make provider    build libscif_rdma, the libibverbs provider of scif_rdma
#   make install-provider   install it where libibverbs looks (root)
#   make selftests   build the selftest programs
#   make test-modules  scif.ko and the kernel-API test module
#   make lint        checkpatch --strict on drivers/, include/ and net/, shellcheck
#                    on the shell scripts (scripts/lint-shell.sh), no test code
#                    in shipped sources (scripts/lint-test-code.sh), the
#                    layers (scripts/lint-layers.sh), the docs' Sphinx build
#   make docs        Documentation/scif as HTML with Sphinx (build/docs)
#   make check       the whole suite on KERNELS="6.1 6.12 debug"
#   make demo        boot a 2-node cluster of VMs and show them talk
#   make bench       measure SCIF next to TCP, AF_UNIX and memcpy (build/bench)
#   make bench-nvme  a drive's DMA into a remote window beside local memory
#                    (make bench runs it too; BENCH_NVME_KERNEL=, 6.12)
#   make coverage    line and branch coverage of drivers/ by the suite (lcov)
#   make soak        kill and restart a node ROUNDS times under traffic
#   make fuzz        both fuzzers, long runs on the debug kernel, with figures
#   make peer-fuzz   the peer fuzzer only (a 3-node cluster)
#   make ntb-check   the emulated NTB judged by the upstream NTB tests, alone
#                    (make check runs them too: Documentation/scif/ntb.rst)
#   make ntb-modules the emulated NTB driver (drivers/ntb/hw/ivshmem) for
#                    one kernel: KDIR= and NTB_SYMVERS= (the Module.symvers
#                    of scripts/ntb-modules.sh's ntb.ko), into NTB_MODDIR=
#   make install     modules_install, then the user side (below), into
#                    $(DESTDIR); PREFIX (/usr/local) for the user side
#   make modules_install  scif.ko, scif_ivshmem.ko, scif_peer_links.ko,
#                    scif_net.ko, scif_vsock.ko (if the kernel has the virtio vsock
#                    common code), scif_rdma.ko (if it has the RDMA core) and
#                    scif_ntb.ko (with SCIF_NTB_SYMVERS=, as make modules;
#                    the package scif-ntb-dkms builds the NTB core too)
#                    for KVER (without test hooks) to
#                    /lib/modules/KVER/updates, then depmod
#                    (not with a DESTDIR: a packager's depmod does it)
#   make install-user  libscif, its headers (scif.h, scif/scif_ioctl.h),
#                    pkg-config files and man pages, scif-info,
#                    scif-bench, scif-vm-config and scif-ivshmem-server
#                    (with its systemd unit, under PREFIX/lib/systemd),
#                    the examples' sources, and the samples
#                    of packaging/: udev rule, modprobe.d, modules-load.d
#                    (under SYSCONFDIR, /etc; UDEVRULESDIR, /etc/udev/rules.d)
#   make test-realvm  the packages in a real Debian 12 VM (not part of check)
#   make test-vm-config  the VM guide's generator (seconds, boots no guest)
#   make test-libvirt  the user guide's libvirt domains for a 2-node
#                    cluster, started under libvirtd (installs libvirt;
#                    TCG; not part of check: Documentation/scif/testing.rst)
#   make clean       remove $(BUILD)

TOP := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
BUILD ?= $(TOP)/build
export SCIF_CACHE ?= /var/cache/scif

KVER ?= $(shell sh $(TOP)/scripts/kernels.sh default)
KDIR ?= /lib/modules/$(KVER)/build
MODDIR ?= $(BUILD)/modules/$(KVER)
override MODDIR := $(abspath $(MODDIR))
# STRICT=1: sparse on every file and warnings as errors (make check does it)
STRICT ?= 0
# SCIF_TEST=1: build the test hooks into the modules (make check does it;
# installed modules are built without them)
SCIF_TEST ?= 0
# SCIF_GCOV=1: gcov profiling (make coverage, on the gcov debug kernel)
SCIF_GCOV ?= 0
ifeq ($(STRICT),1)
STRICT_FLAGS := C=2 CHECK="sparse -Wsparse-error" KCFLAGS=-Werror
endif

KSRC = $(shell sh $(TOP)/scripts/kernel-source.sh)
KERNEL_SOURCES := Kbuild drivers include net

all: modules

# make install: where things go (DESTDIR is prepended to each).
PREFIX ?= /usr/local
SYSCONFDIR ?= /etc
UDEVRULESDIR ?= $(SYSCONFDIR)/udev/rules.d
MODPROBEDIR ?= $(SYSCONFDIR)/modprobe.d
MODLOADDIR ?= $(SYSCONFDIR)/modules-load.d
EXAMPLESDIR ?= $(PREFIX)/share/doc/scif/examples
INSTALL_MOD_DIR ?= updates

deps:
	sh $(TOP)/scripts/deps.sh
	sh $(TOP)/scripts/pkg-deps.sh

# SCIF_NTB_SYMVERS=<ntb.ko's Module.symvers> (scripts/ntb-modules.sh)
# also builds scif_ntb.ko, the SCIF bus over the Linux NTB API.
SCIF_NTB_FLAGS := $(if $(SCIF_NTB_SYMVERS),SCIF_NTB_SYMVERS=$(abspath $(SCIF_NTB_SYMVERS)) \
	KBUILD_EXTRA_SYMBOLS=$(abspath $(SCIF_NTB_SYMVERS)))

# Build from a copy so that no object file lands next to the sources.
modules:
	@mkdir -p $(MODDIR)
	rsync -a $(addprefix $(TOP)/,$(KERNEL_SOURCES)) $(MODDIR)/
	$(MAKE) -C $(KDIR) M=$(MODDIR) W=1 $(STRICT_FLAGS) SCIF_TEST=$(SCIF_TEST) \
		SCIF_GCOV=$(SCIF_GCOV) $(SCIF_NTB_FLAGS) modules

# The kernel-API test module, built against scif.ko's symbols.  Kbuild
# does not notice when only those symbols' versions change, so it is
# always rebuilt (it is small).
KAPI_DIR := tools/testing/selftests/scif/kmod
test-modules: modules
	cd $(TOP) && rsync -aR $(KAPI_DIR) $(MODDIR)/
	$(MAKE) -C $(KDIR) M=$(MODDIR)/$(KAPI_DIR) clean
	$(MAKE) -C $(KDIR) M=$(MODDIR)/$(KAPI_DIR) W=1 $(STRICT_FLAGS) \
		$(if $(SCIF_NTB_SYMVERS),SCIF_NTB_SYMVERS=$(abspath $(SCIF_NTB_SYMVERS))) \
		KBUILD_EXTRA_SYMBOLS="$(MODDIR)/Module.symvers $(if $(SCIF_NTB_SYMVERS),$(abspath $(SCIF_NTB_SYMVERS)))" \
		modules

# The selftests are a kselftest target (lib.mk).  The kernel's selftest
# frame (lib.mk, the harness, the runner and its Makefile) is staged from
# the installed linux-source under $(BUILD)/ksft, with scif/ linked to our
# directory; the tests are built into $(BUILD)/selftests, then installed
# the kernel's way (make TARGETS=scif install) into $(BUILD)/kselftest,
# reusing that build ($(BUILD)/ksft-out/scif is a link to it).  The guest
# gets $(BUILD)/selftests as /tests, and the frame of the install (run_
# kselftest.sh, kselftest/, kselftest-list.txt) in /tests/ksft-frame, for
# scif_kselftest.sh; the install's scif/ must be the same files.
KSFT_FRAME := $(BUILD)/ksft/tools/testing/selftests
KSFT_FILES := lib.mk kselftest_harness.h kselftest.h Makefile run_kselftest.sh \
	      kselftest/runner.sh kselftest/prefix.pl kselftest/module.sh
KSFT_MAKE := $(MAKE) KSFT_DIR=$(KSFT_FRAME) LIBSCIF=$(BUILD)/lib/libscif.a TOP=$(TOP)
selftests:
	@mkdir -p $(KSFT_FRAME)/kselftest $(BUILD)/ksft/scripts $(BUILD)/ksft-out
	cd $(KSRC)/tools/testing/selftests && cp $(KSFT_FILES) --parents $(KSFT_FRAME)/
	cp $(KSRC)/scripts/subarch.include $(BUILD)/ksft/scripts/
	ln -sfn $(TOP)/tools/testing/selftests/scif $(KSFT_FRAME)/scif
	ln -sfn $(BUILD)/selftests $(BUILD)/ksft-out/scif
	$(KSFT_MAKE) -C $(TOP)/tools/testing/selftests/scif OUTPUT=$(BUILD)/selftests
	rm -rf $(BUILD)/kselftest
	$(KSFT_MAKE) -s -C $(KSFT_FRAME) TARGETS=scif BUILD=$(BUILD)/ksft-out \
		KSFT_INSTALL_PATH=$(BUILD)/kselftest install > /dev/null
	cd $(BUILD)/kselftest/scif && for f in *; do \
		cmp $$f $(BUILD)/selftests/$$f || exit 1; done
	rm -rf $(BUILD)/selftests/ksft-frame
	mkdir -p $(BUILD)/selftests/ksft-frame
	cd $(BUILD)/kselftest && cp -r run_kselftest.sh kselftest kselftest-list.txt \
		$(BUILD)/selftests/ksft-frame/

lib:
	$(MAKE) -C $(TOP)/tools/lib/scif OUTPUT=$(BUILD)/lib all check-symbols compat-check

# The tools and examples, linked with libc shared (as installed).
tools: lib
	$(MAKE) -C $(TOP)/tools/scif OUTPUT=$(BUILD)/tools \
		LIBSCIF=$(BUILD)/lib/libscif.a STATIC=0

# The header comment's list of targets.
help:
	@sed -n '/^#   make /,/^[^#]/{/^#/s/^# \{0,1\}//p}' $(TOP)/Makefile

# Documentation/scif with Sphinx (Debian's python3-sphinx), no conf.py:
# every warning is an error.  make lint builds it with the dummy builder.
SPHINX := sphinx-build -W --keep-going -q -C -D project=SCIF -D master_doc=index
docs:
	$(SPHINX) -b html $(TOP)/Documentation/scif $(BUILD)/docs
	@echo "docs: $(BUILD)/docs/index.html"

# The libibverbs provider of scif_rdma (Documentation/scif/rdma.rst,
# "User verbs"); it installs where libibverbs looks, whatever PREFIX.
provider:
	$(MAKE) -C $(TOP)/tools/lib/scif_rdma OUTPUT=$(BUILD)/lib/scif_rdma all check-symbols

install-provider: provider
	$(MAKE) -C $(TOP)/tools/lib/scif_rdma OUTPUT=$(BUILD)/lib/scif_rdma install

# The emulated NTB hardware driver, against an out-of-tree ntb.ko built by
# scripts/ntb-modules.sh (the Debian kernels have CONFIG_NTB unset).
NTB_SYMVERS ?= $(BUILD)/ntb/$(KVER)/Module.symvers
NTB_MODDIR ?= $(BUILD)/ntb-hw/$(KVER)
ntb-modules:
	@mkdir -p $(NTB_MODDIR)
	rsync -a $(TOP)/drivers/ntb/hw/ivshmem/ $(NTB_MODDIR)/
	$(MAKE) -C $(KDIR) M=$(abspath $(NTB_MODDIR)) W=1 $(STRICT_FLAGS) \
		KBUILD_EXTRA_SYMBOLS=$(abspath $(NTB_SYMVERS)) modules

# The modules are built without test hooks, in their own directory, so
# that a test build of the same KVER is not taken for them.
INSTALL_MODDIR := $(BUILD)/install-modules/$(KVER)
modules_install:
	$(MAKE) -C $(TOP) modules KDIR=$(KDIR) KVER=$(KVER) SCIF_TEST=0 \
		SCIF_GCOV=0 MODDIR=$(INSTALL_MODDIR)
	install -d $(DESTDIR)/lib/modules/$(KVER)/$(INSTALL_MOD_DIR)
	install -m 0644 $(INSTALL_MODDIR)/drivers/misc/scif/scif.ko \
		$(INSTALL_MODDIR)/drivers/misc/scif/scif_ivshmem.ko \
		$(INSTALL_MODDIR)/net/scif/scif_peer_links.ko \
		$(INSTALL_MODDIR)/drivers/net/scif/scif_net.ko \
		$$(ls $(INSTALL_MODDIR)/net/vmw_vsock/scif_vsock.ko 2> /dev/null) \
		$$(ls $(INSTALL_MODDIR)/drivers/infiniband/hw/scif/scif_rdma.ko 2> /dev/null) \
		$$(ls $(INSTALL_MODDIR)/drivers/misc/scif/scif_ntb.ko 2> /dev/null) \
		$(DESTDIR)/lib/modules/$(KVER)/$(INSTALL_MOD_DIR)/
	$(if $(DESTDIR),@echo "install: DESTDIR set: depmod left to the packager",depmod -a $(KVER))

LIB_INSTALL := $(MAKE) -C $(TOP)/tools/lib/scif OUTPUT=$(BUILD)/lib PREFIX=$(PREFIX)
install-user:
	$(LIB_INSTALL) install
	$(MAKE) -C $(TOP)/tools/scif OUTPUT=$(BUILD)/install-tools \
		LIBSCIF=$(BUILD)/lib/libscif.a STATIC=0 PREFIX=$(PREFIX) install
	$(MAKE) -C $(TOP)/qemu OUTPUT=$(BUILD)/install-qemu PREFIX=$(PREFIX) install
	install -d $(DESTDIR)$(EXAMPLESDIR) $(DESTDIR)$(UDEVRULESDIR) \
		$(DESTDIR)$(MODPROBEDIR) $(DESTDIR)$(MODLOADDIR)
	install -m 0644 $(TOP)/tools/scif/examples/*.c $(DESTDIR)$(EXAMPLESDIR)/
	install -m 0644 $(TOP)/packaging/60-scif.rules $(DESTDIR)$(UDEVRULESDIR)/
	install -m 0644 $(TOP)/packaging/scif.modprobe.conf \
		$(DESTDIR)$(MODPROBEDIR)/scif.conf
	install -m 0644 $(TOP)/packaging/scif.modules-load.conf \
		$(DESTDIR)$(MODLOADDIR)/scif.conf

install: modules_install install-user

# scripts/checkpatch-typedefs names the typedefs the SCIF API defines
# (scif_epd_t, the kernel's endpoint handle since the original driver).
lint:
	cd $(TOP) && find drivers include net -name '*.[ch]' | sort | \
		xargs -P $$(nproc) -n 16 perl $(KSRC)/scripts/checkpatch.pl \
		--no-tree --strict --typedefsfile scripts/checkpatch-typedefs \
		--quiet --show-types -f
	bash $(TOP)/scripts/lint-shell.sh
	bash $(TOP)/scripts/lint-test-code.sh
	bash $(TOP)/scripts/lint-layers.sh
	$(SPHINX) -b dummy $(TOP)/Documentation/scif $(BUILD)/docs-lint

check:
	bash $(TOP)/scripts/check.sh

demo:
	bash $(TOP)/scripts/demo.sh

# Coverage of drivers/ by the selftests on a gcov debug kernel (not part
# of check).
coverage:
	bash $(TOP)/scripts/coverage.sh

# Benchmarks side by side with TCP, AF_UNIX and memcpy (not part of check).
bench:
	bash $(TOP)/scripts/bench.sh

bench-nvme:
	bash $(TOP)/scripts/bench-nvme.sh

# Node loss and restart, ROUNDS times (50), in clusters of each size of
# NODES ("2 4") on KERNEL (debug), under mixed traffic (not part of check).
soak:
	bash $(TOP)/scripts/soak.sh

# The fuzzers' long runs (not part of check; see scripts/fuzz.sh).
fuzz:
	bash $(TOP)/scripts/fuzz.sh user dma peer

# The emulated NTB device: ntb_test.sh in one VM, ntb_netdev between two;
# make check runs the same (scripts/ntb-check.sh), this is them alone.
ntb-check:
	bash $(TOP)/scripts/ntb-check-standalone.sh $(KERNELS)

peer-fuzz:
	bash $(TOP)/scripts/fuzz.sh peer

# The packages in a real Debian 12 VM: apt install, DKMS in the guest,
# reboot, then SCIF as a user, on one node and between two (not part of
# check: see Documentation/scif/testing.rst).  test-vm-config: the user
# guide's generator (a few seconds, boots no guest).
test-realvm:
	bash $(TOP)/scripts/test-packaging.sh $(BUILD)/packaging
	SCIF_QEMU_LOCK=$${SCIF_QEMU_LOCK-/tmp/scif-qemu.lock} \
		bash $(TOP)/scripts/test-realvm.sh $(BUILD)/packaging $(BUILD)/realvm

test-vm-config:
	bash $(TOP)/scripts/test-vm-config.sh $(BUILD)/vm-config

# The user guide's libvirt domains under a running libvirtd: two nodes
# talk SCIF (scripts/test-libvirt.sh; needs root; holds the QEMU lock).
test-libvirt:
	BUILD=$(BUILD) bash $(TOP)/scripts/test-libvirt.sh $(BUILD)/libvirt

clean:
	rm -rf $(BUILD)

.PHONY: all help deps modules modules_install install-user install ntb-modules ntb-check test-modules lib tools provider install-provider selftests lint docs check demo bench bench-nvme \
	coverage soak fuzz peer-fuzz test-realvm test-vm-config test-libvirt clean
