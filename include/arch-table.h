/* SPDX-License-Identifier: GPL-2.0-or-later */
/* arch-table.h: the architectures arch.c knows; one arch-<name>.c each. */
#ifndef WALLPROF_ARCH_TABLE_H
#define WALLPROF_ARCH_TABLE_H

#include "arch.h"

extern const struct wp_arch wp_arch_x86_64;

#endif
