/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shorthands the pmc-* tools share; the rest comes from libpmc.h.
 */
#ifndef _PMC_TOOLS_H
#define _PMC_TOOLS_H

#include "libpmc.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* The config of a generic event, for tables: HW(CPU_CYCLES). */
#define HW(id)	PMC_CONFIG(PMC_TYPE_HARDWARE, PMC_HW_##id)
#define SW(id)	PMC_CONFIG(PMC_TYPE_SOFTWARE, PMC_SW_##id)

#endif /* _PMC_TOOLS_H */
