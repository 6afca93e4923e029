# The Linux KVM peer of `make bench`: a Linux 6.12 host kernel with KVM and an initramfs whose
# /init is tools/kvm/vmm.c running one bare-metal guest image. Included by the top-level Makefile
# (BUILD, GT_OUT come from there; LG_SRC, LG_OUT, LG_CROSS and lg_kconfig from
# guest-tests/linux/linux.mk, whose extracted source tree this shares with a separate object
# directory). Built on first use by `make bench`, then only when an input changes.
# See docs/performance.md.

KVM_DIR    := tools/kvm
KVM_OUT    := $(abspath $(BUILD))/kvm
KVM_KOBJ   := $(KVM_OUT)/kobj
KVM_JOBS   ?= 2
KVM_KMAKE  := $(MAKE) -C $(LG_SRC) O=$(KVM_KOBJ) ARCH=riscv CROSS_COMPILE=$(LG_CROSS)
KVM_HDR    := $(KVM_OUT)/hdr-obj/usr/include

.PHONY: kvm-peer kvm-kernel kvm-clean
kvm-peer: $(KVM_OUT)/Image $(KVM_OUT)/bench.cpio
kvm-kernel: $(KVM_OUT)/Image

# ---- host kernel: tinyconfig + host.config; rebuilt only when the fragment changes ----
$(KVM_KOBJ)/.config: $(KVM_DIR)/host.config $(LG_SRC)/.pmuvisor-extracted
	$(call lg_kconfig,$(KVM_KMAKE),$(KVM_KOBJ),$(KVM_DIR)/host.config)

# The shared tree carries the guest's errata (linux.mk): build after they are applied, so that
# applying them later does not rebuild this kernel.
$(KVM_OUT)/Image: $(KVM_KOBJ)/.config $(LG_SRC)/.pmuvisor-errata
	+$(KVM_KMAKE) -j$(KVM_JOBS) Image
	cp $(KVM_KOBJ)/arch/riscv/boot/Image $@

# ---- the VMM: static, against this kernel's UAPI headers (Debian's cross headers are 6.1;
# `headers`, not `headers_install`, which needs rsync) ----
$(KVM_HDR)/linux/kvm.h: $(LG_SRC)/.pmuvisor-extracted
	+$(MAKE) -C $(LG_SRC) O=$(KVM_OUT)/hdr-obj ARCH=riscv headers
	@touch $@

$(KVM_OUT)/vmm: $(KVM_DIR)/vmm.c $(KVM_HDR)/linux/kvm.h
	$(LG_CROSS)gcc -O2 -Wall -Wextra -Werror -static -isystem $(KVM_HDR) -o $@ $<
	$(LG_CROSS)strip $@

$(KVM_OUT)/guest.dtb: $(KVM_DIR)/guest.dts
	@mkdir -p $(dir $@)
	dtc -q -I dts -O dtb -o $@ $<

# ---- initramfs per guest image: /init = the VMM, /guest.bin, /guest.dtb, /dev nodes ----
$(KVM_OUT)/%.cpio: $(GT_OUT)/%.bin $(KVM_OUT)/vmm $(KVM_OUT)/guest.dtb $(LG_OUT)/gen_init_cpio \
		   $(KVM_DIR)/kvm.mk
	printf '%s\n' 'dir /dev 0755 0 0' 'nod /dev/console 0600 0 0 c 5 1' \
		'nod /dev/kvm 0600 0 0 c 10 232' 'file /init $(KVM_OUT)/vmm 0755 0 0' \
		'file /guest.bin $(abspath $<) 0644 0 0' \
		'file /guest.dtb $(KVM_OUT)/guest.dtb 0644 0 0' > $@.list
	$(LG_OUT)/gen_init_cpio $@.list > $@.tmp && mv $@.tmp $@

kvm-clean:
	rm -rf $(KVM_OUT)
