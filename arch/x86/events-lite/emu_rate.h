/* SPDX-License-Identifier: GPL-2.0 */
/*
 * events-lite emulated PMU, a TEST MODEL: the rates its counters count
 * at. tools/testing/selftests/pmc/pmc_hw_test.c includes this file too,
 * to know what a workload's true count is, so it may use nothing but
 * the UAPI <linux/pmc.h>: one table for the model and its tests.
 */
#ifndef _ARCH_X86_EVENTS_LITE_EMU_RATE_H
#define _ARCH_X86_EVENTS_LITE_EMU_RATE_H

#include <linux/pmc.h>

/* Events per microsecond of counting, by generic event. */
static const unsigned int pmc_emu_rate[PMC_HW_MAX] = {
	[PMC_HW_CPU_CYCLES]		= 1000,
	[PMC_HW_INSTRUCTIONS]		= 500,
	[PMC_HW_CACHE_REFERENCES]	= 40,
	[PMC_HW_CACHE_MISSES]		= 4,
	[PMC_HW_BRANCH_INSTRUCTIONS]	= 100,
	[PMC_HW_BRANCH_MISSES]		= 5,
	[PMC_HW_BUS_CYCLES]		= 125,
};

/* Any other event select: a raw one that no generic event maps to. */
#define PMC_EMU_RAW_RATE	100

#endif /* _ARCH_X86_EVENTS_LITE_EMU_RATE_H */
