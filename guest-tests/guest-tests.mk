# Bare-metal guest test images: guest-tests/images/<name>.c + guest-tests/lib
# -> $(BUILD)/guest-tests/<name>.{elf,bin}, linked at 0x80200000.
GT_DIR     := guest-tests
GT_OUT     := $(BUILD)/guest-tests
GT_IMAGES  := $(patsubst $(GT_DIR)/images/%.c,%,$(wildcard $(GT_DIR)/images/*.c))
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
$(GT_OUT)/%.elf: $(GT_OUT)/obj/%.o $(GT_LIB_OBJ) $(LIBFDT_OBJS) $(GT_LDSCRIPT)
	$(CC_RV) $(RV_ARCH) -nostdlib -nostartfiles -static -Wl,--gc-sections -Wl,--no-warn-rwx-segments \
		-T $(GT_LDSCRIPT) -o $@ $< $(GT_LIB_OBJ) $(LIBFDT_OBJS) $(RV_LIBS)
$(GT_OUT)/%.bin: $(GT_OUT)/%.elf
	$(OBJCOPY) -O binary $< $@

.PRECIOUS: $(GT_OUT)/%.elf $(GT_OUT)/obj/%.o $(GT_OUT)/lib/%.c.o $(GT_OUT)/lib/%.S.o

guest-images:: $(addprefix $(GT_OUT)/,$(addsuffix .bin,$(GT_IMAGES)))

-include $(shell find $(GT_OUT) -name '*.d' 2>/dev/null)

# prof-target: frame pointers and real calls, so that the hypervisor's profiler walks its chains
$(GT_OUT)/obj/prof-target.o: GT_CFLAGS += -fno-omit-frame-pointer -fno-optimize-sibling-calls
