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
libcmocka-dev python3 xz-utils clang libc6-dev-riscv64-cross"
BP_PKGS="qemu-system-misc opensbi"

missing=""
for p in $BASE_PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done

if [ -z "$missing" ] && ! need_qemu; then
	exit 0
fi

# bookworm-backports: derive the entry from the machine's own Debian source
# so that no mirror host name is ever written in this repository.
BP=/etc/apt/sources.list.d/pmuvisor-backports.sources
if need_qemu && [ ! -f "$BP" ]; then
	src=$(grep -l -E '^Suites:.*bookworm( |$)' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1 || true)
	if [ -n "$src" ]; then
		awk '/^Types:|^URIs:|^Components:|^Signed-By:/ {print} /^$/ {exit}' "$src" |
			sed '/^URIs:/a Suites: bookworm-backports' | $SUDO tee "$BP" >/dev/null
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
