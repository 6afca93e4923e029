# vpmu unit tests (native, cmocka) and fuzz target (clang libFuzzer), both with the core
# tests' sanitizers (HOST_SANITIZE, top-level Makefile).
VPMU_TEST_CC     ?= gcc
VPMU_FUZZ_CC     ?= clang
VPMU_TEST_INC    := -Ivpmu/test/stubs -I. -Ivpmu/test
VPMU_TEST_LOGIC  := $(wildcard vpmu/*.c) vpmu/test/fake_host.c
VPMU_TEST_DEPS   := $(VPMU_TEST_LOGIC) $(wildcard vpmu/*.h vpmu/phys/*.h vpmu/test/*.h) \
		    $(wildcard vpmu/test/stubs/*/*.h vpmu/test/stubs/*/*/*.h) \
		    arch/riscv/sbi_spec.h vpmu/test/vpmu-test.mk

# One cmocka binary per file of the logic: vpmu/test/test_<file>.c (the tests of
# vpmu/<file>.c, sharing vpmu/test/helpers.h) -> $(BUILD)/unit/vpmu_<file>_test
VPMU_TEST_FILES  := sbi sets place vcpu overflow event probe profile
VPMU_TESTS       := $(patsubst %,$(BUILD)/unit/vpmu_%_test,$(VPMU_TEST_FILES))

$(VPMU_TESTS): $(BUILD)/unit/vpmu_%_test: vpmu/test/test_%.c $(VPMU_TEST_DEPS)
	@mkdir -p $(dir $@)
	$(VPMU_TEST_CC) -Wall -Wextra -Werror -O1 -g -fno-omit-frame-pointer $(HOST_SANITIZE) \
		$(VPMU_TEST_INC) \
		$< $(VPMU_TEST_LOGIC) -lcmocka -o $@

$(BUILD)/unit/vpmu_fuzz: vpmu/test/fuzz_vpmu.c $(VPMU_TEST_DEPS)
	@mkdir -p $(dir $@)
	$(VPMU_FUZZ_CC) -Wall -Wextra -Werror -O1 -g -fsanitize=fuzzer $(HOST_SANITIZE) \
		$(VPMU_TEST_INC) \
		vpmu/test/fuzz_vpmu.c $(VPMU_TEST_LOGIC) -o $@

# The QEMU quirks' workarounds (vpmu/phys/qemu.c and qemu_tlb.c, included whole) against a fake backend;
# core/test/stubs gives the host arch/riscv/cpu.h
$(BUILD)/unit/vpmu_qemu_test: vpmu/test/test_qemu.c vpmu/phys/qemu.c vpmu/phys/qemu_tlb.c $(VPMU_TEST_DEPS)
	@mkdir -p $(dir $@)
	$(VPMU_TEST_CC) -Wall -Wextra -Werror -O1 -g -fno-omit-frame-pointer $(HOST_SANITIZE) \
		-Ivpmu/test/stubs -Icore/test/stubs -I. vpmu/test/test_qemu.c -lcmocka -o $@

UNIT_TESTS += $(VPMU_TESTS) $(BUILD)/unit/vpmu_fuzz $(BUILD)/unit/vpmu_qemu_test

# A short, bounded fuzzing run (about 30 s)
.PHONY: vpmu-fuzz-smoke
vpmu-fuzz-smoke: $(BUILD)/unit/vpmu_fuzz
	@mkdir -p $(BUILD)/unit/vpmu_fuzz_corpus
	$(BUILD)/unit/vpmu_fuzz -max_total_time=30 -max_len=512 -seed=1 -print_final_stats=1 \
		-artifact_prefix=$(BUILD)/unit/vpmu_fuzz- \
		$(BUILD)/unit/vpmu_fuzz_corpus
