# Third-party user space of the Linux guest, built for riscv64 from Debian source packages
# (bookworm): zlib and libelf (elfutils) for perf's symbol resolution, BusyBox for the shell.
# Included by linux.mk. Nothing of it is committed: `apt-get source --download-only` fetches
# each package into build/debsrc/dl once (`make deps` adds the deb-src entry it needs),
# `dpkg-source -x` unpacks it with Debian's patches, and every product is cached under
# build/ like the kernel. A stamp depends on this file only, so edits elsewhere rebuild nothing.

LG_DEB       := $(abspath $(BUILD))/debsrc
LG_DEB_DL    := $(LG_DEB)/dl
# headers and static libraries (libz.a, libelf.a) for perf
LG_SYSROOT   := $(LG_DEB)/sysroot
LG_DEB_SUITE := bookworm
LG_DEB_MK    := $(LG_DIR)/debsrc.mk

# $(LG_DEB)/<package>/.pmuvisor-unpacked: download (once) and unpack a source package
# (flock: parallel make downloads one package at a time)
$(LG_DEB)/%/.pmuvisor-unpacked: $(LG_DEB_MK)
	@mkdir -p $(LG_DEB_DL)
	cd $(LG_DEB_DL) && { ls $*_*.dsc >/dev/null 2>&1 || \
		flock .lock apt-get source --download-only $*/$(LG_DEB_SUITE) || \
		{ echo "debsrc.mk: cannot download the $* source package (run make deps)" >&2; \
		  exit 1; }; } && \
	rm -rf $(LG_DEB)/$* && dpkg-source -x "$$(ls $*_*.dsc | sort -V | tail -1)" $(LG_DEB)/$*
	@touch $@

# ---- zlib: libz.a ----
$(LG_SYSROOT)/lib/libz.a: $(LG_DEB)/zlib/.pmuvisor-unpacked
	cd $(LG_DEB)/zlib && CHOST=$(LG_CROSS:-=) CC=$(LG_CROSS)gcc CFLAGS=-O2 \
		./configure --static --prefix=$(LG_SYSROOT) >/dev/null && \
		$(MAKE) -j$(LG_JOBS) libz.a && $(MAKE) install

# ---- libelf of elfutils: libelf.a (only the library; no libdw, no tools) ----
# The static libelf needs zlib: libelf.a is a linker script naming both archives,
# so that `-lelf` (perf's feature test and its link line) pulls zlib in too.
$(LG_SYSROOT)/lib/libelf.a: $(LG_DEB)/elfutils/.pmuvisor-unpacked $(LG_SYSROOT)/lib/libz.a
	cd $(LG_DEB)/elfutils && ./configure --host=$(LG_CROSS:-=) --prefix=$(LG_SYSROOT) \
		--disable-debuginfod --disable-libdebuginfod --without-bzlib --without-lzma \
		--without-zstd --disable-nls CFLAGS="-O2 -I$(LG_SYSROOT)/include" \
		LDFLAGS="-L$(LG_SYSROOT)/lib" >/dev/null && \
		$(MAKE) -C lib -j$(LG_JOBS) && $(MAKE) -C libelf -j$(LG_JOBS) libelf.a
	mkdir -p $(LG_SYSROOT)/include
	cp $(LG_DEB)/elfutils/libelf/libelf.h $(LG_DEB)/elfutils/libelf/gelf.h \
		$(LG_DEB)/elfutils/libelf/nlist.h $(LG_SYSROOT)/include/
	cp $(LG_DEB)/elfutils/libelf/libelf.a $(LG_SYSROOT)/lib/libelf-elfutils.a
	echo 'GROUP ( $(LG_SYSROOT)/lib/libelf-elfutils.a $(LG_SYSROOT)/lib/libz.a )' > $@

# ---- BusyBox: Debian's busybox-static configuration, cross-compiled ----
LG_BB_SRC := $(LG_DEB)/busybox
LG_BB_OBJ := $(LG_DEB)/busybox-obj
LG_BB_MAKE = $(MAKE) -C $(LG_BB_OBJ) -f $(LG_BB_SRC)/Makefile KBUILD_SRC=$(LG_BB_SRC) \
	CROSS_COMPILE=$(LG_CROSS)

$(LG_OUT)/busybox $(LG_OUT)/busybox.links &: $(LG_DEB)/busybox/.pmuvisor-unpacked
	rm -rf $(LG_BB_OBJ) && mkdir -p $(LG_BB_OBJ) $(LG_OUT)
	cat $(LG_BB_SRC)/debian/config/os/linux $(LG_BB_SRC)/debian/config/pkg/static \
		> $(LG_BB_OBJ)/.config
	yes "" | env -u MAKEFLAGS $(LG_BB_MAKE) silentoldconfig >/dev/null
	env -u MAKEFLAGS $(LG_BB_MAKE) -j$(LG_JOBS) busybox
	env -u MAKEFLAGS $(LG_BB_MAKE) busybox.links
	grep -qx 'CONFIG_ASH_JOB_CONTROL=y' $(LG_BB_OBJ)/.config
	$(LG_CROSS)objcopy --strip-debug --wildcard --strip-symbol='$$x*' --strip-symbol='$$d*' \
		$(LG_BB_OBJ)/busybox_unstripped $(LG_OUT)/busybox
	cp $(LG_BB_OBJ)/busybox.links $(LG_OUT)/busybox.links
