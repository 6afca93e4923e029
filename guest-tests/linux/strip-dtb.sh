#!/bin/sh
# Make a QEMU virt DTB look like what a pmuvisor guest gets: no PLIC, no
# virtio, no PCI, no RTC, no flash/fw-cfg. The CLINT, UART and test/syscon
# nodes stay because OpenSBI (M-mode) needs them for its own IPIs, console
# and SRST; the guest kernel has no driver for any of them (see
# guest.config), so Linux only sees cpus, memory and the cpu intc nodes.
# Usage: strip-dtb.sh in.dtb out.dtb [--isa-only]
#   --isa-only also drops riscv,isa-extensions/riscv,isa-base from the cpus
#   (exercises RISCV_ISA_FALLBACK: Linux parses riscv,isa only).
set -eu
in=$1 out=$2
cp "$in" "$out"
for n in $(fdtget -l "$out" /); do
	case $n in
	platform-bus@* | fw-cfg@* | flash@*) fdtput -r "$out" "/$n" ;;
	esac
done
for n in $(fdtget -l "$out" /soc); do
	case $n in
	plic@* | virtio_mmio@* | pci@* | rtc@*) fdtput -r "$out" "/soc/$n" ;;
	esac
done
if [ "${3:-}" = --isa-only ]; then
	for c in $(fdtget -l "$out" /cpus); do
		case $c in
		cpu@*)
			fdtput -d "$out" "/cpus/$c" riscv,isa-extensions
			fdtput -d "$out" "/cpus/$c" riscv,isa-base
			;;
		esac
	done
fi
