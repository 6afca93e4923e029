/* SPDX-License-Identifier: BSD-2-Clause */
/* Exclusive counting's words that core/excl.c owns and core/excl_defer.c reads */
#ifndef CORE_EXCL_INTERNAL_H
#define CORE_EXCL_INTERNAL_H

/* Harts halted while another holds the token (excl_park) */
extern volatile unsigned long excl_parked;
/* Harts that wait with work to do: parked with a live vCPU, or waiting for their turn */
extern volatile unsigned long excl_want;

#endif
