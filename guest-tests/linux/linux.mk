# Linux guest for pmuvisor: kernel Image, static perf, initramfs, workloads.
# Included by the top-level Makefile (BUILD, LINUX_TAR, PYTHON come from there).
# See docs/linux-guest.md.

LG_DIR      := guest-tests/linux
LG_OUT      := $(abspath $(BUILD))/linux
LG_SRC      := $(abspath $(BUILD))/linux-src
LG_KOBJ     := $(LG_OUT)/kobj
LG_CROSS    ?= riscv64-linux-gnu-
LG_JOBS     ?= 2
LG_KMAKE    := $(MAKE) -C $(LG_SRC) O=$(LG_KOBJ) ARCH=riscv CROSS_COMPILE=$(LG_CROSS)
LG_CFLAGS   := -O2 -Wall -Wextra -Werror -static
LG_WLFLAGS  := -nostdlib -static -Wl,--build-id=none

# name:iterations of the no-libc loop workload; it retires 3 * iterations + 4
# user instructions: loop-1k 3,004, loop-1m 3,000,004, loop-5m 5,000,002,
# loop-20m 20,000,002 (background load of perf-busy2), loop-100m 100,000,000.
LG_LOOPS    := loop-1k:1000 loop-1m:1000000 loop-5m:1666666 loop-20m:6666666 \
	       loop-100m:33333332
LG_WL_ELFS  := $(foreach l,$(LG_LOOPS),$(LG_OUT)/workloads/$(firstword $(subst :, ,$(l))).elf) \
	       $(LG_OUT)/workloads/nsleep.elf

include $(LG_DIR)/debsrc.mk

.PHONY: linux-guest linux-kernel linux-perf linux-initramfs linux-workloads linux-guest-clean
linux-guest: $(LG_OUT)/Image $(LG_OUT)/perf $(LG_OUT)/busybox $(LG_OUT)/initramfs.cpio \
	     $(LG_WL_ELFS)
linux-kernel: $(LG_OUT)/Image
linux-perf: $(LG_OUT)/perf
linux-initramfs: $(LG_OUT)/initramfs.cpio
linux-workloads: $(LG_WL_ELFS)

# ---- full source tree, extracted once ----
$(LG_SRC)/.pmuvisor-extracted: $(LINUX_TAR)
	rm -rf $(LG_SRC) && mkdir -p $(LG_SRC)
	tar -xJf $(LINUX_TAR) -C $(LG_SRC) --strip-components=1
	@touch $@

# ---- errata of stock Linux 6.12 guests, fixed in our build (docs/linux-guest.md) ----
# E1: drivers/perf/riscv_pmu_sbi.c, pmu_sbi_start_ovf_ctrs_snapshot() restarts the
# overflowed counters with counter_idx_base = idx * BITS_PER_LONG, read after the
# for_each_set_bit() loop (idx == BITS_PER_LONG there: base 4096, which a conforming
# SBI rejects with INVALID_PARAM). The loop variable is i.
# The sed runs on a pristine copy (<file>.pmuvisor-orig) so a changed expression
# re-derives the file; the key file makes the expression part of the cache key.
LG_ERRATA_FILE := drivers/perf/riscv_pmu_sbi.c
LG_ERRATA_SED  := s/SBI_EXT_PMU_COUNTER_START, idx \* BITS_PER_LONG,/SBI_EXT_PMU_COUNTER_START, i * BITS_PER_LONG,/
LG_ERRATA_KEY  := $(LG_OUT)/errata.key

$(LG_ERRATA_KEY): FORCE
	@mkdir -p $(dir $@)
	@echo '$(LG_ERRATA_FILE) $(LG_ERRATA_SED)' | cmp -s - $@ || \
		echo '$(LG_ERRATA_FILE) $(LG_ERRATA_SED)' > $@

$(LG_SRC)/.pmuvisor-errata: $(LG_ERRATA_KEY) $(LG_SRC)/.pmuvisor-extracted
	cd $(LG_SRC) && f=$(LG_ERRATA_FILE) && \
	{ [ -f $$f.pmuvisor-orig ] || cp $$f $$f.pmuvisor-orig; } && \
	sed -e '$(LG_ERRATA_SED)' $$f.pmuvisor-orig > $$f.tmp && \
	{ ! grep -n 'COUNTER_START, idx \* BITS_PER_LONG' $$f.tmp || \
	  { echo "linux.mk: erratum E1 not fixed in $$f" >&2; rm -f $$f.tmp; exit 1; }; } && \
	{ cmp -s $$f.tmp $$f && rm -f $$f.tmp || mv $$f.tmp $$f; }
	@touch $@

# ---- kernel: tinyconfig + guest.config; rebuilt only when the fragment changes ----
# $(call lg_kconfig,KMAKE,KOBJ,FRAGMENT): recipe of KOBJ/.config (also for tools/kvm/kvm.mk):
# tinyconfig, FRAGMENT merged on top, olddefconfig; fails if an option of FRAGMENT did not stick.
define lg_kconfig
	@mkdir -p $(2)
	+$(1) tinyconfig && cd $(2) && \
		$(LG_SRC)/scripts/kconfig/merge_config.sh -m -O $(2) $(2)/.config $(abspath $(3)) && \
		$(1) olddefconfig || { rm -f $@; exit 1; }
	@grep -E '^CONFIG_.*=|^# CONFIG_.* is not set' $(3) | while read -r opt; do \
		grep -qx "$$opt" $@ || { echo "$(3): $$opt did not stick" >&2; rm -f $@; exit 1; }; \
	done
endef

$(LG_KOBJ)/.config: $(LG_DIR)/guest.config $(LG_SRC)/.pmuvisor-extracted
	$(call lg_kconfig,$(LG_KMAKE),$(LG_KOBJ),$(LG_DIR)/guest.config)

$(LG_OUT)/Image: $(LG_KOBJ)/.config $(LG_SRC)/.pmuvisor-errata
	+$(LG_KMAKE) -j$(LG_JOBS) Image
	cp $(LG_KOBJ)/arch/riscv/boot/Image $@
	cp $(LG_KOBJ)/vmlinux $(LG_OUT)/vmlinux

# ---- perf: static, with libelf (symbol names); the other features off: a small, self-contained binary ----
# libelf (elfutils) and zlib come from debsrc.mk: perf resolves symbols of ELF files
# (`loop` in perf report) and, with CONFIG_KALLSYMS, of the kernel. Built out of tree in
# $(LG_PERF_OBJ); libdw (DWARF) is not built.
LG_PERF_OBJ   := $(LG_OUT)/perf-obj
LG_PERF_FLAGS := ARCH=riscv CROSS_COMPILE=$(LG_CROSS) O=$(LG_PERF_OBJ) WERROR=0 \
	LDFLAGS="-static -L$(LG_SYSROOT)/lib" EXTRA_CFLAGS="-I$(LG_SYSROOT)/include" \
	NO_DWARF=1 NO_LIBDEBUGINFOD=1 NO_SDT=1 NO_LIBTRACEEVENT=1 NO_LIBPYTHON=1 NO_LIBPERL=1 \
	NO_SLANG=1 NO_GTK2=1 NO_LIBNUMA=1 NO_LIBAUDIT=1 NO_LIBUNWIND=1 NO_LIBDW_DWARF_UNWIND=1 \
	NO_LIBBPF=1 NO_JVMTI=1 NO_LIBCRYPTO=1 NO_LIBZSTD=1 NO_LZMA=1 NO_LIBCAP=1 NO_SHELLCHECK=1 \
	NO_LIBBABELTRACE=1 NO_DEMANGLE=1 NO_LIBLLVM=1 NO_CAPSTONE=1 NO_LIBPFM4=1

# MAKEFLAGS is cleared: variables given on our command line (e.g. `make BUILD=out`) would
# otherwise reach tools/build/feature/Makefile, whose compile macro is also called BUILD, and
# every feature test would fail (perf then redeclares glibc functions and does not compile).
# perf must find libelf: a perf without it would print bare addresses again.
$(LG_OUT)/perf: $(LG_SRC)/.pmuvisor-extracted $(LG_SYSROOT)/lib/libelf.a
	@mkdir -p $(LG_PERF_OBJ)
	env -u MAKEFLAGS -u MFLAGS -u MAKEOVERRIDES $(MAKE) -C $(LG_SRC)/tools/perf \
		-f Makefile.perf -j$(LG_JOBS) $(LG_PERF_FLAGS) perf
	grep -qx 'feature-libelf=1' $(LG_PERF_OBJ)/FEATURE-DUMP || \
		{ echo "linux.mk: perf was built without libelf" >&2; exit 1; }
	$(LG_CROSS)strip -o $@ $(LG_PERF_OBJ)/perf

# ---- no-libc workloads (unstripped: their symbols locate the loop for IP checks) ----
define LG_LOOP_RULE
$(LG_OUT)/workloads/$(1).elf: $(LG_DIR)/workloads/loop.S $(LG_DIR)/linux.mk
	@mkdir -p $$(dir $$@)
	$(LG_CROSS)gcc $(LG_WLFLAGS) -DITERATIONS=$(2) -o $$@ $$<
endef
$(foreach l,$(LG_LOOPS),$(eval $(call LG_LOOP_RULE,$(firstword $(subst :, ,$(l))),$(lastword $(subst :, ,$(l))))))

$(LG_OUT)/workloads/nsleep.elf: $(LG_DIR)/workloads/nsleep.S
	@mkdir -p $(dir $@)
	$(LG_CROSS)gcc $(LG_WLFLAGS) -o $@ $<

# ---- /init ----
$(LG_OUT)/init: $(LG_DIR)/init.c
	@mkdir -p $(dir $@)
	$(LG_CROSS)gcc $(LG_CFLAGS) -o $@ $<
	$(LG_CROSS)strip $@

# ---- initramfs: newc cpio written by the kernel's gen_init_cpio, no root needed ----
$(LG_OUT)/gen_init_cpio: $(LG_SRC)/.pmuvisor-extracted
	@mkdir -p $(dir $@)
	cc -O2 -o $@ $(LG_SRC)/usr/gen_init_cpio.c

# BusyBox: /bin/busybox and one link per applet, all in /bin (/sbin, /usr/bin and /usr/sbin
# are links to it); an applet never replaces a file of ours (/init, /bin/perf, workloads).
LG_BB_SKIP := init linuxrc perf $(foreach l,$(LG_LOOPS),$(firstword $(subst :, ,$(l)))) nsleep \
	      timeit mkdata
$(LG_OUT)/initramfs.list: $(LG_DIR)/linux.mk $(LG_OUT)/busybox.links
	@mkdir -p $(dir $@)
	{ \
	echo 'dir /dev 0755 0 0'; \
	echo 'nod /dev/console 0600 0 0 c 5 1'; \
	echo 'dir /proc 0755 0 0'; \
	echo 'dir /sys 0755 0 0'; \
	echo 'dir /tmp 1777 0 0'; \
	echo 'dir /bin 0755 0 0'; \
	echo 'dir /usr 0755 0 0'; \
	echo 'slink /sbin /bin 0777 0 0'; \
	echo 'slink /usr/bin /bin 0777 0 0'; \
	echo 'slink /usr/sbin /bin 0777 0 0'; \
	echo 'file /init $(LG_OUT)/init 0755 0 0'; \
	echo 'slink /bin/timeit /init 0777 0 0'; \
	echo 'slink /bin/mkdata /init 0777 0 0'; \
	echo 'file /bin/perf $(LG_OUT)/perf 0755 0 0'; \
	echo 'file /bin/busybox $(LG_OUT)/busybox 0755 0 0'; \
	$(foreach w,$(LG_WL_ELFS),echo 'file /bin/$(basename $(notdir $(w))) $(w) 0755 0 0';) \
	sed 's|.*/||' $(LG_OUT)/busybox.links | sort -u | grep -vxF $(LG_BB_SKIP:%=-e %) | \
		sed 's|.*|slink /bin/& busybox 0777 0 0|'; \
	} > $@

$(LG_OUT)/initramfs.cpio: $(LG_OUT)/initramfs.list $(LG_OUT)/gen_init_cpio $(LG_OUT)/init \
			  $(LG_OUT)/perf $(LG_OUT)/busybox $(LG_WL_ELFS)
	$(LG_OUT)/gen_init_cpio $< > $@.tmp && mv $@.tmp $@

# The configurations name the guest's files as build/linux/... (mkbundle's .d files too), while
# the rules above name them by LG_OUT's absolute path: these tie the two names, so that a bundle
# waits for its rebuilt initramfs instead of comparing the file's time before the rebuild.
ifneq ($(BUILD),$(abspath $(BUILD)))
$(BUILD)/linux/Image $(BUILD)/linux/initramfs.cpio: $(BUILD)/linux/%: $(LG_OUT)/% ;
$(BUILD)/linux/vmlinux: $(LG_OUT)/Image ;
endif

# Host test of tools/check_linux.py's judgement of a recording (tools/test_check_linux.py, TAP)
$(BUILD)/unit/check-linux: tools/test_check_linux.py $(LG_DIR)/linux.mk
	@mkdir -p $(dir $@)
	@echo "  GEN     $@"
	@printf '#!/bin/sh\nexec %s %s "$$@"\n' '$(PYTHON)' '$(abspath tools/test_check_linux.py)' \
		> $@.tmp && chmod +x $@.tmp && mv $@.tmp $@
UNIT_TESTS += $(BUILD)/unit/check-linux

linux-guest-clean:
	rm -rf $(LG_OUT) $(LG_SRC) $(LG_DEB)

# bundles of configurations that boot Linux (dts/default.dts, dts/linux-*.dts,
# dts/tests/linux-*.dts) need the guest: `make all`, `make run`, `make test` build it
# through the bundles' guest-images prerequisite (a no-op in 0.05 s when cached).
guest-images:: linux-guest
