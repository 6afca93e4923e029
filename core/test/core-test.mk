# Host unit tests (cmocka) for core/ and arch/riscv pure logic; included by
# the top-level Makefile. Built natively with ASan + UBSan into $(BUILD)/unit/.
CORE_TEST_CC      ?= gcc
CORE_TEST_CFLAGS  := -std=gnu11 -Wall -Wextra -Werror -g -O1 -fno-omit-frame-pointer \
		     $(HOST_SANITIZE)
CORE_TEST_INC     := -I .
CORE_TEST_LIBS    := -lfdt -lcmocka -lpthread
CORE_TEST_HDRS    := $(wildcard core/*.h arch/riscv/*.h core/test/stubs/arch/riscv/*.h)

CORE_TESTS := core-config core-config-guest core-mm core-gstage core-sbi core-console core-entropy core-lane core-vcpu core-hsm core-excl core-unstarve \
	      core-rfence core-guest-va

core-test-config_SRCS  := core/test/test_config.c core/test/config_dt.c core/config.c \
			  core/test/stubs.c
core-test-config-guest_SRCS := core/test/test_config_guest.c core/test/config_dt.c core/config.c \
			       core/test/stubs.c
core-test-mm_SRCS      := core/test/test_mm.c core/mm.c
core-test-gstage_SRCS  := core/test/test_gstage.c arch/riscv/gstage.c
core-test-sbi_SRCS     := core/test/test_sbi.c core/sbi.c core/sbi_base.c core/sbi_hartmask.c \
			  core/test/stubs.c
core-test-console_SRCS := core/test/test_console.c core/console.c
core-test-entropy_SRCS := core/test/test_entropy.c core/entropy.c
core-test-lane_SRCS    := core/test/test_lane.c core/lane.c
core-test-vcpu_SRCS    := core/test/test_vcpu.c core/vcpu.c
core-test-hsm_SRCS     := core/test/test_hsm.c core/sbi_hsm.c
core-test-rfence_SRCS  := core/test/test_rfence.c core/sbi_rfence.c core/sbi_hartmask.c \
			  core/test/stubs.c
# test_excl.c includes core/excl.c itself: it sets the token and the turn directly
core-test-excl_SRCS    := core/test/test_excl.c core/test/stubs.c
core-test-excl_DEPS    := core/excl.c
core-test-unstarve_SRCS := core/test/test_unstarve.c core/unstarve.c
core-test-guest-va_SRCS := core/test/test_guest_va.c arch/riscv/guest_va.c
# sbi_base.c includes "arch/riscv/sbi_call.h", console.c "arch/riscv/timer.h": take the host
# stubs (found first), not the RISC-V ecall and rdtime
core-test-sbi_INC      := -I core/test/stubs
core-test-console_INC  := -I core/test/stubs
core-test-lane_INC     := -I core/test/stubs
core-test-vcpu_INC     := -I core/test/stubs
core-test-hsm_INC      := -I core/test/stubs
core-test-rfence_INC   := -I core/test/stubs
core-test-excl_INC     := -I core/test/stubs
core-test-unstarve_INC := -I core/test/stubs
core-test-guest-va_INC := -I core/test/stubs

define CORE_TEST_RULE
$(BUILD)/unit/$(1): $$(core-test-$(1:core-%=%)_SRCS) $$(core-test-$(1:core-%=%)_DEPS) $(CORE_TEST_HDRS) \
		core/test/core-test.mk
	@mkdir -p $$(dir $$@)
	@echo "  HOSTCC  $$@"
	@$(CORE_TEST_CC) $(CORE_TEST_CFLAGS) $$(core-test-$(1:core-%=%)_INC) $(CORE_TEST_INC) \
		-o $$@ $$(core-test-$(1:core-%=%)_SRCS) $(CORE_TEST_LIBS)
endef
$(foreach t,$(CORE_TESTS),$(eval $(call CORE_TEST_RULE,$(t))))

UNIT_TESTS += $(addprefix $(BUILD)/unit/,$(CORE_TESTS))

.PHONY: core-unit
core-unit: $(addprefix $(BUILD)/unit/,$(CORE_TESTS))
