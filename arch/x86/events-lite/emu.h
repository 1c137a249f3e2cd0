/* SPDX-License-Identifier: GPL-2.0 */
/*
 * events-lite emulated PMU, a TEST MODEL: the per-CPU register file that
 * emu.c models and emu_foreign.c's second owner of the PMU drives.
 */
#ifndef _ARCH_X86_EVENTS_LITE_EMU_H
#define _ARCH_X86_EVENTS_LITE_EMU_H

#include <linux/hrtimer.h>
#include <linux/irq_work.h>
#include <linux/percpu.h>
#include <asm/ptrace.h>

#include "pmc_x86.h"

/*
 * Counters are slots: the general-purpose ones first, then Intel's
 * fixed counters (instructions, cycles, reference cycles), whose
 * global control and status bits are 32 and up.
 */
#define PMC_EMU_MAX_FIXED	3
#define PMC_EMU_FIXED0		PMC_X86_MAX_COUNTERS
#define PMC_EMU_SLOTS		(PMC_EMU_FIXED0 + PMC_EMU_MAX_FIXED)
/* A fixed counter's field of MSR_CORE_PERF_FIXED_CTR_CTRL. */
#define PMC_EMU_FIXED_EN	0x3	/* count in ring 0, in ring 3 */
#define PMC_EMU_FIXED_PMI	0x8

extern const struct pmc_x86_model *pmc_emu_model;
extern int pmc_emu_nr_fixed;
extern unsigned long pmc_emu_reserved;

static inline u64 pmc_emu_bit(int slot)
{
	if (slot >= PMC_EMU_FIXED0)
		return BIT_ULL(32 + slot - PMC_EMU_FIXED0);
	return BIT_ULL(slot);
}

static inline u64 pmc_emu_fixed_bits(void)
{
	return (BIT_ULL(pmc_emu_nr_fixed) - 1) << 32;
}

/*
 * What the foreign owner runs on one CPU, and what it saw there: written
 * on that CPU by its on_each_cpu() calls and its NMI handler, and wraps
 * by pmc_emu_advance() (any context of that CPU); read without a lock
 * by a read of the parameter.
 */
struct pmc_emu_foreign {
	u64 bits;		/* its counters' global bits */
	u64 enabled;		/* the global enables it set */
	u64 guest;		/* counters it keeps off, for a guest */
	u64 stale;		/* status bits it left at stop, for its NMI */
	u64 period;
	unsigned long pmis;	/* its overflows its NMI handler took */
	unsigned long wraps;	/* its counters' wraps that interrupt */
	unsigned long pending;	/* wraps not yet taken when it stopped */
	unsigned long lost_enables;	/* its enables found cleared */
	unsigned long guest_counted;	/* events its guest counters counted */
};

/*
 * State is per CPU and touched on its CPU only (see emu.c); the
 * foreign owner's too, from on_each_cpu() calls and its NMI handler.
 */
struct pmc_emu_cpu {
	u64 sel[PMC_EMU_SLOTS];		/* general-purpose slots only */
	u64 ctr[PMC_EMU_SLOTS];
	u64 frac[PMC_EMU_SLOTS];	/* events * 1000 not yet counted */
	u64 fixed_ctrl;
	u64 global_ctrl;
	u64 global_status;
	u64 last;			/* local_clock() of the last advance */
	bool online;			/* between cpu_starting and cpu_dying */
	bool nmi_pending;		/* a wrap wants an interrupt */
	unsigned long held;		/* counters whose interrupt is held */
	unsigned long nmis;		/* overflow NMIs handled */
	bool have_regs;			/* regs below are for the last NMI */
	struct pt_regs regs;		/* what the tick interrupted */
	struct hrtimer timer;
	struct irq_work raise_work;	/* the tick's NMI, after the tick */
	struct irq_work arm_work;	/* moves the tick, after a write */
	/* the driver's MSR accesses, and those in NMI context */
	unsigned long lite_msr, lite_nmi_msr;
	struct pmc_emu_foreign foreign;
};

DECLARE_PER_CPU(struct pmc_emu_cpu, pmc_emu_cpu);

void pmc_emu_advance(struct pmc_emu_cpu *e);
unsigned long pmc_emu_stale_here(void);
void pmc_emu_arm(struct pmc_emu_cpu *e);

void pmc_emu_foreign_init(void);
void pmc_emu_foreign_reset(struct pmc_emu_cpu *e);

#endif /* _ARCH_X86_EVENTS_LITE_EMU_H */
