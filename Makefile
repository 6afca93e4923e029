# pmuvisor top-level Makefile. `make run` and `make test` do all set-up.
BUILD     ?= build
CROSS     ?= riscv64-unknown-elf-
CC_RV     := $(CROSS)gcc
OBJCOPY   := $(CROSS)objcopy
QEMU      ?= qemu-system-riscv64
LINUX_TAR ?= /usr/src/linux-source-6.12.tar.xz
PICOLIBC  := /usr/lib/picolibc/riscv64-unknown-elf
# Debian's interpreter: the tools need its python3-libfdt (a pyenv or venv python3 on PATH lacks it)
PYTHON    ?= /usr/bin/python3
# The sanitizers of every host unit test and fuzzer (core/test, vpmu/test)
HOST_SANITIZE := -fsanitize=address,undefined -fno-sanitize-recover=undefined
CONFIG    ?= default

RV_ISA    := rv64imac_zicsr_zifencei
RV_ARCH   := -march=$(RV_ISA) -mabi=lp64 -mcmodel=medany
RV_CFLAGS := $(RV_ARCH) -O2 -g -ffreestanding -fno-common -fno-pie -fno-stack-protector \
	     -nostdinc -isystem $(PICOLIBC)/include -isystem $(shell $(CC_RV) -print-file-name=include) \
	     -isystem $(shell $(CC_RV) -print-file-name=include-fixed) -Wall -Wextra -Werror -MMD -MP
RV_LIBS   := -L$(PICOLIBC)/lib/rv64imac/lp64 -lc $(shell $(CC_RV) -march=rv64imac -mabi=lp64 -print-libgcc-file-name)

.PHONY: all deps hv hv-debug run test unit guest-images bundles bench bench-linux fuzz soak sampling \
	parity profile walltime clean format lint
all: hv bundles

deps:
	@bash tools/deps.sh

# ---- libfdt, extracted at build time from Debian's linux-source-6.12 ----
LIBFDT_DIR  := $(BUILD)/libfdt
LIBFDT_SRCS := fdt.c fdt_ro.c fdt_rw.c fdt_wip.c fdt_sw.c fdt_strerror.c fdt_empty_tree.c fdt_addresses.c
$(LIBFDT_DIR)/.stamp: $(LINUX_TAR)
	@mkdir -p $(LIBFDT_DIR)
	tar -xJf $(LINUX_TAR) -C $(LIBFDT_DIR) --strip-components=4 \
		--wildcards 'linux-source-6.12/scripts/dtc/libfdt/*'
	@touch $@
LIBFDT_OBJS := $(addprefix $(BUILD)/hv/libfdt/,$(LIBFDT_SRCS:.c=.o))
$(BUILD)/hv/libfdt/%.o: $(LIBFDT_DIR)/.stamp
	@mkdir -p $(dir $@)
	@echo "  CC      libfdt/$*.c"
	@$(CC_RV) $(RV_CFLAGS) -I$(LIBFDT_DIR) -Wno-sign-compare -c $(LIBFDT_DIR)/$*.c -o $@

# ---- the hypervisor ----
# core/offsets.c is never linked: it only yields the generated offsets header below
HV_SRCS := $(filter-out core/offsets.c,$(wildcard arch/riscv/*.c arch/riscv/*.S core/*.c vpmu/*.c \
	   vpmu/phys/*.c))
HV_OBJS := $(patsubst %,$(BUILD)/hv/%.o,$(HV_SRCS))
# One include root: headers are named by folder ("core/vcpu.h"), so the includes show the
# dependencies (tools/layering.py checks them); generated headers under $(BUILD)/gen
# With RVA22's bit manipulation (Zba, Zbb, Zbs), which arch/riscv/entry.S probes on every hart
HV_CFLAGS := $(RV_CFLAGS) -march=$(RV_ISA)_zba_zbb_zbs -I$(LIBFDT_DIR) -I. -I$(BUILD)/gen

# Where struct hart keeps the vPMU's per-hart tables (core/offsets.c), as #defines for its
# inline accessors: each `const unsigned long name_offset = N;` becomes NAME_OFFSET N
HV_OFFSETS := $(BUILD)/gen/vpmu/host_offsets.h
$(HV_OFFSETS): core/offsets.c $(LIBFDT_DIR)/.stamp
	@mkdir -p $(dir $@)
	@echo "  GEN     $@"
	@$(CC_RV) $(HV_CFLAGS) -MT $@ -MF $@.d -S -o $@.s $<
	@{ echo "/* Generated from core/offsets.c: do not edit */"; \
	  echo "#ifndef VPMU_HOST_OFFSETS_H"; echo "#define VPMU_HOST_OFFSETS_H"; \
	  sed -n '/^[a-z_]*_offset:$$/{N;s/^\([a-z_]*\):\n\t\.dword\t\([0-9]*\)$$/#define \U\1\E \2/p}' $@.s; \
	  echo "#endif"; } > $@.tmp
	@test $$(grep -c '^#define [A-Z_]*_OFFSET [0-9]' $@.tmp) -eq 2 || \
		{ echo "$@: offsets not found in $@.s" >&2; rm -f $@.tmp; exit 1; }
	@mv $@.tmp $@
$(HV_OBJS): $(HV_OFFSETS)

$(BUILD)/hv/%.c.o: %.c $(LIBFDT_DIR)/.stamp
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC_RV) $(HV_CFLAGS) -c $< -o $@
$(BUILD)/hv/%.S.o: %.S
	@mkdir -p $(dir $@)
	@echo "  AS      $<"
	@$(CC_RV) $(HV_CFLAGS) -D__ASSEMBLER__ -c $< -o $@

$(BUILD)/pmuvisor.elf: $(HV_OBJS) $(LIBFDT_OBJS) arch/riscv/pmuvisor.ld
	@echo "  LD      $@"
	@$(CC_RV) $(RV_ARCH) -nostdlib -nostartfiles -static -Wl,--gc-sections -Wl,--no-warn-rwx-segments \
		-T arch/riscv/pmuvisor.ld -o $@ $(HV_OBJS) $(LIBFDT_OBJS) $(RV_LIBS)
$(BUILD)/pmuvisor.bin: $(BUILD)/pmuvisor.elf
	$(OBJCOPY) -O binary $< $@
hv: $(BUILD)/pmuvisor.bin

# The debug hypervisor, beside the normal one: the vPMU's invariants are checked after every
# PMU call and vCPU switch (vpmu_check; a broken one panics), the scheduler's at every guest
# entry (HV_DEBUG). `make DEBUG=1 run` boots it;
# make test runs the configurations marked `// test: debug` with it too.
HV_DEBUG_OBJS := $(patsubst %,$(BUILD)/hv-debug/%.o,$(HV_SRCS))
$(HV_DEBUG_OBJS): $(HV_OFFSETS)
$(BUILD)/hv-debug/%.c.o: %.c $(LIBFDT_DIR)/.stamp
	@mkdir -p $(dir $@)
	@echo "  CC      $< (debug)"
	@$(CC_RV) $(HV_CFLAGS) -DVPMU_DEBUG -DHV_DEBUG -c $< -o $@
$(BUILD)/hv-debug/%.S.o: %.S
	@mkdir -p $(dir $@)
	@$(CC_RV) $(HV_CFLAGS) -DVPMU_DEBUG -DHV_DEBUG -D__ASSEMBLER__ -c $< -o $@
$(BUILD)/pmuvisor-debug.elf: $(HV_DEBUG_OBJS) $(LIBFDT_OBJS) arch/riscv/pmuvisor.ld
	@echo "  LD      $@"
	@$(CC_RV) $(RV_ARCH) -nostdlib -nostartfiles -static -Wl,--gc-sections -Wl,--no-warn-rwx-segments \
		-T arch/riscv/pmuvisor.ld -o $@ $(HV_DEBUG_OBJS) $(LIBFDT_OBJS) $(RV_LIBS)
$(BUILD)/pmuvisor-debug.bin: $(BUILD)/pmuvisor-debug.elf
	$(OBJCOPY) -O binary $< $@
hv-debug: $(BUILD)/pmuvisor-debug.bin

# ---- configurations and bundles (dts/*.dts, dts/tests/*.dts) ----
CONFIGS := $(wildcard dts/*.dts dts/tests/*.dts dts/sampling/*.dts)
BUNDLES := $(patsubst dts/%.dts,$(BUILD)/bundles/%.bundle,$(CONFIGS))
# Images are built first (order only); mkbundle writes a .d file naming the
# blobs each bundle holds, so a bundle is rebuilt only when one of them changes.
$(BUILD)/bundles/%.bundle: dts/%.dts tools/mkbundle.py | guest-images
	@mkdir -p $(dir $@)
	@$(PYTHON) tools/mkbundle.py $< $@
bundles: $(BUNDLES)
-include $(BUNDLES:.bundle=.d)
FORCE:

# ---- fragments owned by each area ----
UNIT_TESTS :=
-include guest-tests/guest-tests.mk
-include guest-tests/linux/linux.mk
-include tools/kvm/kvm.mk
-include $(wildcard core/test/*.mk vpmu/test/*.mk)
guest-images::

unit: $(UNIT_TESTS)

# ---- the two user commands ----
# make run CONFIG=linux-shell QEMU_ARGS="-smp 4" ICOUNT=0 DEBUG=1: QEMU_ARGS are added to QEMU's
# command line; Linux configurations run under -icount shift=0 unless ICOUNT=0 (ICOUNT=1
# adds it to any configuration). See tools/run.py.
RUN_ARGS = $(if $(QEMU_ARGS),--qemu-args "$(QEMU_ARGS)") $(if $(filter 1,$(DEBUG)),--debug) \
	   $(if $(filter 0 no off,$(ICOUNT)),--no-icount)$(if $(filter 1 yes on,$(ICOUNT)),--icount)
run: deps
	@$(MAKE) --no-print-directory all $(if $(filter 1,$(DEBUG)),hv-debug)
	@$(PYTHON) tools/run.py $(CONFIG) $(RUN_ARGS)

# make profile CONFIG=default GUEST=alpha EVENT=cycles PERIOD=100000 (or FREQ=1000): boot the
# configuration with that guest profiled by the hypervisor, then write perf.data, a flame graph
# and a report under build/profile/ (docs/profiling.md, tools/profile_run.py)
PROFILE_ARGS = --config $(or $(CONFIG),default) --guest $(or $(GUEST),alpha) \
	       --event $(or $(EVENT),cycles) $(if $(FREQ),--freq $(FREQ),--period $(or $(PERIOD),100000))
profile: deps
	@$(MAKE) --no-print-directory all
	@$(PYTHON) tools/profile_run.py $(PROFILE_ARGS)

test: deps
	@$(MAKE) --no-print-directory all hv-debug unit
	@$(PYTHON) tools/run-tests.py

# The KVM peer (tools/kvm/kvm.mk) is built on first use; if that fails, bench.py still runs the
# other columns and reports the KVM column as failed (exit status 1).
bench: deps
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory kvm-peer && kvm= || kvm=--kvm-build-failed; \
	$(PYTHON) tools/bench.py $$kvm $(BENCH_ARGS)

# What profiling costs a Linux guest next to bare metal (tools/e2e.py, about 8 min on 2 cores):
# regenerates its table in docs/performance.md; BENCH_LINUX_ARGS=--breakdown traces where the
# instructions go instead (about 15 min)
bench-linux: deps
	@$(MAKE) --no-print-directory all
	@$(PYTHON) tools/e2e.py --update docs/performance.md $(BENCH_LINUX_ARGS)

# perf natively and in a guest, the same commands: regenerates the table in docs/linux-guest.md
parity: deps
	@$(MAKE) --no-print-directory all
	@$(PYTHON) tools/parity.py --update docs/linux-guest.md

# Wall-clock time of a perf user's shell session, natively and in a guest on both backends,
# command by command (tools/walltime.py; WALLTIME_ARGS=--rounds 3, ...)
walltime: deps
	@$(MAKE) --no-print-directory all
	@$(PYTHON) tools/walltime.py $(WALLTIME_ARGS)

# Longer runs on demand, not part of make test
fuzz: deps
	@$(MAKE) --no-print-directory all unit
	@$(PYTHON) tools/fuzz.py $(FUZZ_ARGS)

soak: deps
	@$(MAKE) --no-print-directory all
	@$(PYTHON) tools/soak.py $(SOAK_ARGS)

# Boot CONFIG N times and judge every perf recording of its Linux guests (docs/linux-guest.md)
N ?= 20
sampling: deps
	@$(MAKE) --no-print-directory all
	@$(PYTHON) tools/sampling.py $(CONFIG) -n $(N) $(SAMPLING_ARGS)

format:
	clang-format -i $(shell git ls-files '*.c' '*.h')

# ---- make lint: layering rules, clang-format (check only), cppcheck, clang-tidy; changes no file ----
# The C files git tracks, and new ones it does not ignore (linted before their first commit).
LINT_FILES = $(sort $(wildcard $(shell git ls-files --cached --others --exclude-standard '*.c' '*.h')))
LINT_C     = $(filter %.c,$(LINT_FILES))
# cppcheck: every C file, as the RISC-V configuration (freestanding, LP64)
LINT_CPPCHECK := cppcheck --enable=warning,performance,portability --error-exitcode=1 --inline-suppr \
		 --quiet --platform=unix64 --std=c11 -D__riscv -D__riscv_xlen=64 -D__CPPCHECK__ \
		 -I . -I guest-tests/lib -I arch/riscv
LINT_CHECKS := -*,bugprone-*,-bugprone-easily-swappable-parameters,-bugprone-reserved-identifier,clang-analyzer-*,-clang-analyzer-security.insecureAPI.*
LINT_TIDY  := clang-tidy --quiet --warnings-as-errors='*'
# clang-tidy on the host: core/ and vpmu/ with the unit tests' flags (core/test/core-test.mk,
# vpmu/test/vpmu-test.mk); core/test/stubs gives the host sbi_call.h instead of the ecall.
# valist.Uninitialized misreads x86-64's array va_list passed to vsnprintf (the RISC-V run
# of the same code is clean).
LINT_TIDY_HOST_C     = $(filter-out core/test/% vpmu/test/%,$(filter core/% vpmu/%,$(LINT_C)))
LINT_TIDY_HOST_FLAGS := -std=gnu11 -I core/test/stubs -I vpmu/test/stubs -I .
# clang-tidy for the RISC-V target: arch/riscv and the bare-metal guest tests (not
# guest-tests/linux: Linux user programs). Clang 14 knows no zicsr/zifencei: plain rv64imac.
LINT_TIDY_RV_C       = $(filter arch/riscv/% guest-tests/lib/% guest-tests/images/%,$(LINT_C))
LINT_TIDY_RV_FLAGS   := --target=riscv64-unknown-elf -march=rv64imac -mabi=lp64 -ffreestanding \
			-std=gnu11 -isystem $(PICOLIBC)/include -I $(LIBFDT_DIR) -I . -I guest-tests/lib -I arch/riscv
lint: $(LIBFDT_DIR)/.stamp
	@st=0; \
	echo "  LINT    layering"; $(PYTHON) tools/layering.py || st=1; \
	echo "  LINT    clang-format"; clang-format --dry-run --Werror $(LINT_FILES) || st=1; \
	echo "  LINT    cppcheck"; $(LINT_CPPCHECK) $(LINT_C) || st=1; \
	echo "  LINT    clang-tidy (host)"; \
	$(LINT_TIDY) --checks='$(LINT_CHECKS),-clang-analyzer-valist.Uninitialized' \
		$(LINT_TIDY_HOST_C) -- $(LINT_TIDY_HOST_FLAGS) || st=1; \
	echo "  LINT    clang-tidy (riscv64)"; \
	$(LINT_TIDY) --checks='$(LINT_CHECKS)' $(LINT_TIDY_RV_C) -- $(LINT_TIDY_RV_FLAGS) || st=1; \
	exit $$st

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD)/hv $(BUILD)/hv-debug $(BUILD)/gen -name '*.d' 2>/dev/null)
