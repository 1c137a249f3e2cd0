/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The user registers of PMC_RECORD_REGS_USER that a DWARF unwinder
 * starts from, per architecture: pmc-record asks for them, pmc-report
 * (pmc-unwind.c) reads them.
 */
#ifndef _PMC_REGS_H
#define _PMC_REGS_H

#include <elf.h>
#include <stddef.h>
#include <linux/types.h>

/*
 * How a machine's samples start a walk: perf's register numbers (the
 * sample's, from <asm/perf_regs.h> of that architecture, a fixed ABI)
 * of its DWARF registers 0..nr-1, of the PC and of the stack pointer.
 * A recording is unwound as the machine of its files says, so that the
 * host can unwind an arm64 guest's.
 */
struct unwind_arch {
	int machine;			/* EM_* */
	const int *dwarf_regs;
	size_t nr;
	int pc, sp;
};

static const int x86_64_regs[] = {
	0 /* AX */, 3 /* DX */, 2 /* CX */, 1 /* BX */, 4 /* SI */, 5 /* DI */,
	6 /* BP */, 7 /* SP */, 16, 17, 18, 19, 20, 21, 22, 23 /* R8-R15 */,
};

/* X0-X30 (X30 is LR), SP: perf's numbers are DWARF's. */
static const int arm64_regs[] = {
	0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19,
	20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31,
};

static const struct unwind_arch arches[] = {
	{ EM_X86_64, x86_64_regs, sizeof(x86_64_regs) / sizeof(int), 8, 7 },
	{ EM_AARCH64, arm64_regs, sizeof(arm64_regs) / sizeof(int), 32, 31 },
};

#define MAX_DWARF_REGS	32

#if defined(__x86_64__)
#define NATIVE		EM_X86_64
#elif defined(__aarch64__)
#define NATIVE		EM_AARCH64
#else
#define NATIVE		EM_NONE
#endif

static inline const struct unwind_arch *arch_of(int machine)
{
	size_t i;

	for (i = 0; i < sizeof(arches) / sizeof(arches[0]); i++)
		if (arches[i].machine == machine)
			return &arches[i];
	return NULL;
}

/* The registers pmc-record asks for: those a walk starts from. */
static inline __u64 unwind_regs_mask(void)
{
	const struct unwind_arch *arch = arch_of(NATIVE);
	__u64 mask;
	size_t i;

	if (!arch)
		return 0;
	mask = (1ULL << arch->pc) | (1ULL << arch->sp);
	for (i = 0; i < arch->nr; i++)
		mask |= 1ULL << arch->dwarf_regs[i];
	return mask;
}

#endif /* _PMC_REGS_H */
