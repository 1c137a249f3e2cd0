// SPDX-License-Identifier: GPL-2.0
/*
 * events-lite emulated PMU: a TEST MODEL, not hardware.
 *
 * Booted with pmc_emu=p6|k7|fam15h|fam17h, the x86 driver talks to this
 * file instead of rdmsr/wrmsr. It models the register file of the chosen
 * family: its counter count and width, P6's shared enable bit in
 * EVNTSEL0, and 32-bit sign-extended counter writes. An enabled counter
 * (EN, and USR or OS set) advances with local_clock() at a fixed rate
 * per event, so a workload's true count is known: cycles run at 1 GHz,
 * instructions at 0.5 per ns, and so on (pmc_emu_rate). A per-CPU
 * hrtimer fires when the next interrupt-enabled counter wraps and raises
 * the overflow interrupt as a real self-NMI, so the driver's NMI handler
 * runs unchanged.
 *
 * State is per CPU and touched on its CPU only: with IRQs off by the
 * driver and the hrtimer, and by the NMI that the hrtimer raises at its
 * very end. That NMI is the only one the model expects while it runs,
 * so it finds the state consistent; in NMI context reads do not advance
 * time and writes do not touch the hrtimer.
 */
#define pr_fmt(fmt) "events-lite emu: " fmt

#include <linux/hrtimer.h>
#include <linux/math64.h>
#include <linux/nmi.h>
#include <linux/percpu.h>
#include <linux/pmc.h>
#include <linux/sched/clock.h>
#include <asm/apic.h>
#include <asm/irq_regs.h>

#include "pmc_x86.h"

/* Events per microsecond of counting, by generic event. */
static const u32 pmc_emu_rate[PMC_HW_MAX] = {
	[PMC_HW_CPU_CYCLES]		= 1000,
	[PMC_HW_INSTRUCTIONS]		= 500,
	[PMC_HW_CACHE_REFERENCES]	= 40,
	[PMC_HW_CACHE_MISSES]		= 4,
	[PMC_HW_BRANCH_INSTRUCTIONS]	= 100,
	[PMC_HW_BRANCH_MISSES]		= 5,
	[PMC_HW_BUS_CYCLES]		= 125,
};

#define PMC_EMU_RAW_RATE	100	/* any other event select */

#define PMC_EMU_MIN_NS		(10 * NSEC_PER_USEC)
#define PMC_EMU_MAX_NS		(10 * NSEC_PER_MSEC)

struct pmc_emu_cpu {
	u64 sel[PMC_X86_MAX_COUNTERS];
	u64 ctr[PMC_X86_MAX_COUNTERS];
	u64 frac[PMC_X86_MAX_COUNTERS];	/* events * 1000 not yet counted */
	u64 last;			/* local_clock() of the last advance */
	bool nmi_pending;		/* raised an NMI, not yet claimed */
	bool have_regs;			/* regs below are for that NMI */
	struct pt_regs regs;		/* what the tick interrupted */
	struct hrtimer timer;
};

static DEFINE_PER_CPU(struct pmc_emu_cpu, pmc_emu_cpu);
static const struct pmc_x86_model *pmc_emu_model __ro_after_init;

static u32 pmc_emu_rate_of(u64 sel)
{
	const struct pmc_x86_model *model = pmc_emu_model;
	u64 code = sel & (ARCH_PERFMON_EVENTSEL_EVENT |
			  ARCH_PERFMON_EVENTSEL_UMASK);
	int id;

	for (id = 0; id < PMC_HW_MAX; id++)
		if (model->event_map[id] && model->event_map[id] == code)
			return pmc_emu_rate[id];
	return PMC_EMU_RAW_RATE;
}

static bool pmc_emu_counting(struct pmc_emu_cpu *e, int idx)
{
	u64 en = pmc_emu_model->en_only_in_sel0 ? e->sel[0] : e->sel[idx];

	return en & PMC_X86_SEL_EN &&
	       e->sel[idx] & (PMC_X86_SEL_USR | PMC_X86_SEL_OS);
}

/* Count the events since the last advance; note wraps that interrupt. */
static void pmc_emu_advance(struct pmc_emu_cpu *e)
{
	const struct pmc_x86_model *model = pmc_emu_model;
	u64 limit = BIT_ULL(model->width), now = local_clock();
	u64 dt = now > e->last ? now - e->last : 0, events;
	int idx;

	e->last = now;
	for (idx = 0; idx < model->nr_counters; idx++) {
		if (!pmc_emu_counting(e, idx))
			continue;
		events = dt * pmc_emu_rate_of(e->sel[idx]) + e->frac[idx];
		e->frac[idx] = events % 1000;
		events /= 1000;
		if (e->ctr[idx] + events >= limit &&
		    e->sel[idx] & PMC_X86_SEL_INT)
			e->nmi_pending = true;
		e->ctr[idx] = (e->ctr[idx] + events) & (limit - 1);
	}
}

/* Nanoseconds until the first interrupt-enabled counter wraps, or 0. */
static u64 pmc_emu_next_wrap(struct pmc_emu_cpu *e)
{
	const struct pmc_x86_model *model = pmc_emu_model;
	u64 best = 0, left, ns;
	u32 rate;
	int idx;

	for (idx = 0; idx < model->nr_counters; idx++) {
		if (!pmc_emu_counting(e, idx) || !(e->sel[idx] & PMC_X86_SEL_INT))
			continue;
		rate = pmc_emu_rate_of(e->sel[idx]);
		left = BIT_ULL(model->width) - e->ctr[idx];
		ns = div64_u64(left * 1000 - min(left * 1000, e->frac[idx]) +
			       rate - 1, rate);
		if (!best || ns < best)
			best = ns;
	}
	return best ? clamp_t(u64, best, PMC_EMU_MIN_NS, PMC_EMU_MAX_NS) : 0;
}

/*
 * Make sure the tick comes no later than the next wrap. A queued tick
 * that is early enough stays (it re-arms itself), and one with nothing
 * left to count just ends: so counters going on and off at context
 * switches rarely touch the hrtimer.
 */
static void pmc_emu_arm(struct pmc_emu_cpu *e)
{
	u64 ns = pmc_emu_next_wrap(e);
	ktime_t when;

	if (!ns)
		return;
	when = ktime_add_ns(ktime_get(), ns);
	if (hrtimer_is_queued(&e->timer) &&
	    ktime_compare(hrtimer_get_expires(&e->timer), when) <= 0)
		return;
	hrtimer_start(&e->timer, when, HRTIMER_MODE_ABS_PINNED_HARD);
}

static enum hrtimer_restart pmc_emu_tick(struct hrtimer *timer)
{
	struct pmc_emu_cpu *e = container_of(timer, struct pmc_emu_cpu, timer);
	u64 ns;

	pmc_emu_advance(e);
	ns = pmc_emu_next_wrap(e);
	if (e->nmi_pending) {
		struct pt_regs *regs = get_irq_regs();

		/* The overflow "happened" where the tick came in. */
		e->have_regs = regs;
		if (regs)
			e->regs = *regs;
		/* The overflow interrupt, delivered like the LVTPC's. */
		__apic_send_IPI(smp_processor_id(), NMI_VECTOR);
		ns = ns ? min_t(u64, ns, PMC_EMU_MIN_NS) : PMC_EMU_MIN_NS;
	}
	if (!ns)
		return HRTIMER_NORESTART;
	hrtimer_forward_now(timer, ns_to_ktime(ns));
	return HRTIMER_RESTART;
}

/* Which register @msr is: 0 event select, 1 counter; -1 none. */
static int pmc_emu_decode(u32 msr, int *idx)
{
	const struct pmc_x86_model *model = pmc_emu_model;
	int i;

	for (i = 0; i < model->nr_counters; i++) {
		*idx = i;
		if (msr == pmc_x86_sel_msr(model, i))
			return 0;
		if (msr == pmc_x86_ctr_msr(model, i))
			return 1;
	}
	return -1;
}

static int pmc_emu_read(u32 msr, u64 *val)
{
	struct pmc_emu_cpu *e = this_cpu_ptr(&pmc_emu_cpu);
	int idx, kind = pmc_emu_decode(msr, &idx);

	if (kind < 0)
		return -EIO;		/* rdmsr would #GP */
	if (kind == 0) {
		*val = e->sel[idx];
		return 0;
	}
	if (!in_nmi())
		pmc_emu_advance(e);
	*val = e->ctr[idx];
	return 0;
}

static int pmc_emu_write(u32 msr, u64 val)
{
	const struct pmc_x86_model *model = pmc_emu_model;
	struct pmc_emu_cpu *e = this_cpu_ptr(&pmc_emu_cpu);
	int idx, kind = pmc_emu_decode(msr, &idx);

	if (kind < 0)
		return -EIO;
	if (!in_nmi())
		pmc_emu_advance(e);	/* count up to now under the old setting */
	if (kind == 0) {
		e->sel[idx] = val;
	} else {
		if (model->write_sext32)
			val = (u64)(s64)(s32)val;
		e->ctr[idx] = val & GENMASK_ULL(model->width - 1, 0);
		e->frac[idx] = 0;
	}
	/* Only an event select starts counting: only then can a wrap move up. */
	if (kind == 0 && !in_nmi())
		pmc_emu_arm(e);
	return 0;
}

static bool pmc_emu_nmi_claim(void)
{
	struct pmc_emu_cpu *e = this_cpu_ptr(&pmc_emu_cpu);
	bool pending = e->nmi_pending;

	e->nmi_pending = false;
	e->have_regs = false;
	return pending;
}

static struct pt_regs *pmc_emu_sample_regs(void)
{
	struct pmc_emu_cpu *e = this_cpu_ptr(&pmc_emu_cpu);

	return e->have_regs ? &e->regs : NULL;
}

static const struct pmc_x86_msr_ops pmc_emu_msr = {
	.read		= pmc_emu_read,
	.write		= pmc_emu_write,
	.nmi_claim	= pmc_emu_nmi_claim,
	.sample_regs	= pmc_emu_sample_regs,
};

const struct pmc_x86_msr_ops *
__init pmc_x86_emu_setup(const struct pmc_x86_model *model)
{
	int cpu;

	pmc_emu_model = model;
	for_each_possible_cpu(cpu) {
		struct pmc_emu_cpu *e = per_cpu_ptr(&pmc_emu_cpu, cpu);

		hrtimer_init(&e->timer, CLOCK_MONOTONIC,
			     HRTIMER_MODE_ABS_PINNED_HARD);
		e->timer.function = pmc_emu_tick;
	}
	return &pmc_emu_msr;
}
