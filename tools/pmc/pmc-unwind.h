/* SPDX-License-Identifier: GPL-2.0 */
/*
 * DWARF unwinding of user stacks for pmc-report: the registers and the
 * stack copy of a sample (PMC_RECORD_REGS_USER, PMC_RECORD_STACK_USER,
 * as pmc-record --call-graph dwarf records them) and the call frame
 * information of the mapped files (.eh_frame, .debug_frame), through
 * elfutils' libdwfl unwinder, as perf does with libdw.
 */
#ifndef _PMC_UNWIND_H
#define _PMC_UNWIND_H

#include <stddef.h>
#include <linux/types.h>

struct pmc_sample_ext;

/*
 * Unwind the user stack of thread @tid of process @pid from @x, whose
 * registers are those of @regs_mask: the sampled PC, then each return
 * address, innermost first, into @ips (at most @max). Returns how many;
 * 0 if the sample has no registers or the architecture is not known.
 */
size_t unwind_user(__u32 pid, __u32 tid, const struct pmc_sample_ext *x,
		   __u64 regs_mask, __u64 *ips, size_t max);

#endif /* _PMC_UNWIND_H */
