#!/usr/bin/env bash
# Install everything pmuvisor needs from Debian packages. Idempotent: when
# every tool is present it only checks and returns in well under a second.
set -euo pipefail

SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"

need_qemu() {
	command -v qemu-system-riscv64 >/dev/null || return 0
	local v
	v=$(qemu-system-riscv64 --version | sed -n 's/.*version \([0-9]*\)\..*/\1/p')
	[ "${v:-0}" -lt 10 ]
}

BASE_PKGS="gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf gcc-riscv64-linux-gnu
device-tree-compiler libfdt-dev linux-source-6.12 flex bison bc libssl-dev libelf-dev cpio
libcmocka-dev python3 python3-libfdt xz-utils clang libc6-dev-riscv64-cross dpkg-dev linux-perf dwarves"
BP_PKGS="qemu-system-misc opensbi"

# Source packages (zlib, elfutils, busybox: guest-tests/linux/debsrc.mk) come from
# bookworm's deb-src, which a machine may lack.
SRC=/etc/apt/sources.list.d/pmuvisor-bookworm-src.sources
need_debsrc() {
	[ ! -f "$SRC" ] || return 1
	! grep -qsE '^deb-src [^ ]+ bookworm ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list
}

missing=""
for p in $BASE_PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done

if [ -z "$missing" ] && ! need_qemu && ! need_debsrc; then
	exit 0
fi

# The machine's own Debian entry (deb822), from which the others are derived
# so that no mirror host name is ever written in this repository.
deb_entry() {
	local src
	src=$(grep -l -E '^Suites:.*bookworm( |$)' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1 || true)
	[ -n "$src" ] && awk '/^Types:|^URIs:|^Components:|^Signed-By:/ {print} /^$/ {exit}' "$src"
}

if need_debsrc; then
	if [ -n "$(deb_entry)" ]; then
		deb_entry | sed -e 's/^Types:.*/Types: deb-src/' -e '/^URIs:/a Suites: bookworm' |
			$SUDO tee "$SRC" >/dev/null
	else
		line=$(grep -h -E '^deb [^ ]+ bookworm ' /etc/apt/sources.list 2>/dev/null | head -1 || true)
		[ -n "$line" ] || { echo "deps: no Debian bookworm source found to derive deb-src from" >&2; exit 1; }
		echo "$line" | sed 's/^deb /deb-src /' |
			$SUDO tee /etc/apt/sources.list.d/pmuvisor-bookworm-src.list >/dev/null
	fi
fi

# bookworm-backports, derived the same way
BP=/etc/apt/sources.list.d/pmuvisor-backports.sources
if need_qemu && [ ! -f "$BP" ]; then
	if [ -n "$(deb_entry)" ]; then
		deb_entry | sed '/^URIs:/a Suites: bookworm-backports' | $SUDO tee "$BP" >/dev/null
	else
		# one-line format in sources.list
		line=$(grep -h -E '^deb [^ ]+ bookworm ' /etc/apt/sources.list 2>/dev/null | head -1 || true)
		[ -n "$line" ] || { echo "deps: no Debian bookworm source found to derive backports from" >&2; exit 1; }
		echo "$line" | sed 's/ bookworm / bookworm-backports /' |
			$SUDO tee /etc/apt/sources.list.d/pmuvisor-backports.list >/dev/null
	fi
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
if [ -n "$missing" ]; then
	# shellcheck disable=SC2086
	$SUDO apt-get install -y -qq --no-install-recommends $missing
fi
if need_qemu; then
	# shellcheck disable=SC2086
	$SUDO apt-get install -y -qq --no-install-recommends -t bookworm-backports $BP_PKGS
fi
need_qemu && { echo "deps: QEMU >= 10 could not be installed" >&2; exit 1; }
echo "deps: all installed"
