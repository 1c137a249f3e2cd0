// SPDX-License-Identifier: GPL-2.0
/*
 * events-lite x86: user call chains. The generic walker
 * (arch_stack_walk_user()) reads frames as longs; a 32-bit task's are
 * { u32 next, u32 ret }, and read as longs two words would make one
 * bogus address. So x86 walks the frame pointers itself, in the task's
 * word size. Safe in NMI context: copy_from_user_nofault() never sleeps.
 */
#include <linux/pmc.h>
#include <linux/ptrace.h>
#include <linux/uaccess.h>

static bool pmc_x86_user_compat(struct pt_regs *regs)
{
	return IS_ENABLED(CONFIG_COMPAT) && !user_64bit_mode(regs);
}

/*
 * Segments are assumed flat, as Linux sets them up; a task with
 * segments of its own (an LDT) gets wrong but safely read frames.
 */
unsigned int pmc_arch_user_callchain(struct pt_regs *regs, u64 *ips,
				     unsigned int max)
{
	union {
		struct { u32 next, ret; } w32;
		struct { unsigned long next, ret; } w;
	} frame;
	bool compat = pmc_x86_user_compat(regs);
	unsigned int nr = 0, word = compat ? sizeof(u32) : sizeof(long);
	unsigned long fp = compat ? (u32)regs->bp : regs->bp, next;

	ips[nr++] = regs->ip;
	while (nr < max && fp && !(fp & (word - 1))) {
		if (copy_from_user_nofault(&frame, (void __user *)fp, 2 * word))
			break;
		ips[nr++] = compat ? frame.w32.ret : frame.w.ret;
		next = compat ? frame.w32.next : frame.w.next;
		if (next <= fp)
			break;
		fp = next;
	}
	return nr;
}
