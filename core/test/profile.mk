# Host test of the guest profiler's host side (docs/profiling.md): build/unit/profile-host runs
# tools/test_profile.py, which writes a stream with profile-synth (core/test/profile_synth.c,
# the C structs of core/profile_format.h), converts it with tools/profile.py and checks what
# the host's perf shows. It needs the Linux guest's vmlinux, BusyBox and workloads (make
# linux-guest; make test builds them first). Included by the top-level Makefile.
PROFILE_SYNTH  := $(BUILD)/profile/profile-synth
PROFILE_CFLAGS := -std=gnu11 -Wall -Wextra -Werror -pedantic -g -O1 -fno-omit-frame-pointer \
		  $(HOST_SANITIZE)

$(PROFILE_SYNTH): core/test/profile_synth.c core/profile_format.h core/test/profile.mk
	@mkdir -p $(dir $@)
	@echo "  HOSTCC  $@"
	@gcc $(PROFILE_CFLAGS) -I . -o $@ $<

$(BUILD)/unit/profile-host: $(PROFILE_SYNTH) core/test/profile.mk
	@mkdir -p $(dir $@)
	@echo "  GEN     $@"
	@printf '#!/bin/sh\nexec %s %s --build %s --synth %s "$$@"\n' '$(PYTHON)' \
		'$(abspath tools/test_profile.py)' '$(abspath $(BUILD))' '$(abspath $(PROFILE_SYNTH))' \
		> $@.tmp && chmod +x $@.tmp && mv $@.tmp $@

UNIT_TESTS += $(BUILD)/unit/profile-host
