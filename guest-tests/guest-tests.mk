# Bare-metal guest test images: guest-tests/images/<name>.c, or the files of
# guest-tests/images/<name>/, + guest-tests/lib
# -> $(BUILD)/guest-tests/<name>.{elf,bin}, linked at 0x80200000.
GT_DIR     := guest-tests
GT_OUT     := $(BUILD)/guest-tests
GT_MULTI   := $(sort $(patsubst $(GT_DIR)/images/%/,%,$(dir $(wildcard $(GT_DIR)/images/*/*.c))))
GT_IMAGES  := $(patsubst $(GT_DIR)/images/%.c,%,$(wildcard $(GT_DIR)/images/*.c)) $(GT_MULTI)
GT_LIB_SRC := $(wildcard $(GT_DIR)/lib/*.c $(GT_DIR)/lib/*.S)
GT_LIB_OBJ := $(patsubst $(GT_DIR)/lib/%,$(GT_OUT)/lib/%.o,$(GT_LIB_SRC))
GT_CFLAGS  := $(RV_CFLAGS) -I. -I$(LIBFDT_DIR) -fno-builtin-printf
GT_LDSCRIPT := $(GT_DIR)/lib/guest.ld

$(GT_OUT)/lib/%.c.o: $(GT_DIR)/lib/%.c $(LIBFDT_DIR)/.stamp
	@mkdir -p $(dir $@)
	$(CC_RV) $(GT_CFLAGS) -c $< -o $@
$(GT_OUT)/lib/%.S.o: $(GT_DIR)/lib/%.S
	@mkdir -p $(dir $@)
	$(CC_RV) $(GT_CFLAGS) -D__ASSEMBLER__ -c $< -o $@
$(GT_OUT)/obj/%.o: $(GT_DIR)/images/%.c
	@mkdir -p $(dir $@)
	$(CC_RV) $(GT_CFLAGS) -c $< -o $@
# libfdt: the same objects as the hypervisor's (Makefile, extracted from linux-source)
GT_LINK = $(CC_RV) $(RV_ARCH) -nostdlib -nostartfiles -static -Wl,--gc-sections \
	-Wl,--no-warn-rwx-segments -T $(GT_LDSCRIPT)
$(GT_OUT)/%.elf: $(GT_OUT)/obj/%.o $(GT_LIB_OBJ) $(LIBFDT_OBJS) $(GT_LDSCRIPT)
	$(GT_LINK) -o $@ $< $(GT_LIB_OBJ) $(LIBFDT_OBJS) $(RV_LIBS)
# an image of several files: its own rule, ahead of the pattern
define GT_MULTI_ELF
GT_OBJ_$(1) := $(patsubst $(GT_DIR)/images/%.c,$(GT_OUT)/obj/%.o,$(wildcard $(GT_DIR)/images/$(1)/*.c))
$(GT_OUT)/$(1).elf: $$(GT_OBJ_$(1)) $(GT_LIB_OBJ) $(LIBFDT_OBJS) $(GT_LDSCRIPT)
	$$(GT_LINK) -o $$@ $$(GT_OBJ_$(1)) $(GT_LIB_OBJ) $(LIBFDT_OBJS) $(RV_LIBS)
endef
$(foreach m,$(GT_MULTI),$(eval $(call GT_MULTI_ELF,$(m))))
$(GT_OUT)/%.bin: $(GT_OUT)/%.elf
	$(OBJCOPY) -O binary $< $@

.PRECIOUS: $(GT_OUT)/%.elf $(GT_OUT)/obj/%.o $(GT_OUT)/lib/%.c.o $(GT_OUT)/lib/%.S.o

guest-images:: $(addprefix $(GT_OUT)/,$(addsuffix .bin,$(GT_IMAGES)))

# 4 MiB of zeros: an initrd that makes a guest's (re)load long (dts/tests/reboot-elsewhere.dts)
$(GT_OUT)/blob-4m.bin:
	@mkdir -p $(dir $@)
	head -c 4194304 /dev/zero > $@
guest-images:: $(GT_OUT)/blob-4m.bin

-include $(shell find $(GT_OUT) -name '*.d' 2>/dev/null)

# prof-target: frame pointers and real calls, so that the hypervisor's profiler walks its chains
$(GT_OUT)/obj/prof-target.o: GT_CFLAGS += -fno-omit-frame-pointer -fno-optimize-sibling-calls
