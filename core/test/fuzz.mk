# libFuzzer target for config_parse (core/config.c): build/unit/config_fuzz,
# with a seed corpus generated from every configuration in dts/ into
# build/unit/config_fuzz_corpus/. tools/run-tests.py replays the corpus and
# fuzzes briefly (it runs every build/unit/*_fuzz); `make fuzz` runs it longer
# (tools/fuzz.py). Needs clang and libfdt-dev.
CONFIG_FUZZ_CC     ?= clang
CONFIG_FUZZ_CFLAGS := -std=gnu11 -Wall -Wextra -Werror -g -O1 -fno-omit-frame-pointer \
		      -fsanitize=fuzzer $(HOST_SANITIZE)
CONFIG_FUZZ_SRCS   := core/test/fuzz_config.c core/config.c
CONFIG_FUZZ_DTS    := $(wildcard dts/*.dts dts/*/*.dts)

$(BUILD)/unit/config_fuzz: $(CONFIG_FUZZ_SRCS) core/config.h core/lib.h vpmu/vpmu.h core/test/fuzz.mk
	@mkdir -p $(dir $@)
	@echo "  FUZZCC  $@"
	@$(CONFIG_FUZZ_CC) $(CONFIG_FUZZ_CFLAGS) -I core -I arch/riscv -I vpmu -I . \
		-o $@ $(CONFIG_FUZZ_SRCS) -lfdt

$(BUILD)/unit/config_fuzz_corpus/.stamp: $(CONFIG_FUZZ_DTS) tools/fuzz.py
	@mkdir -p $(dir $@)
	@$(PYTHON) tools/fuzz.py --make-corpus $(dir $@)
	@touch $@

UNIT_TESTS += $(BUILD)/unit/config_fuzz $(BUILD)/unit/config_fuzz_corpus/.stamp
