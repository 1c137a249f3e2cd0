// SPDX-License-Identifier: GPL-2.0
/*
 * events-lite emulated PMU: a TEST MODEL, not hardware.
 *
 * Booted with pmc_emu=CPU (p6, k7, fam15h, fam17h, archperf, zen4), the
 * x86 driver derives its model from that CPU's CPUID description, as on
 * hardware, and talks to this file instead of rdmsr/wrmsr. It models
 * the register file of the model: its counter count and width, P6's
 * shared enable bit in EVNTSEL0, 32-bit sign-extended counter writes,
 * and the global control, status and acknowledge registers of Intel
 * arch-perfmon v2+ and AMD PerfMonV2, with Intel's three fixed counters
 * (instructions, cycles, reference cycles), which events-lite leaves to
 * perf. An enabled counter (EN, USR or OS, and its global enable bit
 * where there is one) advances with
 * local_clock() at a fixed rate per event, so a workload's true count
 * is known: cycles run at 1 GHz, instructions at 0.5 per ns, and so on
 * (pmc_emu_rate). A per-CPU hrtimer fires when the next
 * interrupt-enabled counter wraps, sets its global status bit and
 * raises the overflow interrupt as a real self-NMI (from an irq_work
 * right after the tick), so the driver's NMI handler runs unchanged.
 *
 * Parameters (/sys/module/pmc_emu/parameters/, or pmc_emu.NAME= at
 * boot), for tests:
 *  min_ns	the shortest time between two overflow interrupts
 *		(default 100 us); lower gives interrupt storms. Each
 *		interrupt costs the guest the model's own timer and
 *		irq_work besides the NMI: some 40,000 instructions on a
 *		debug kernel, 80 us of guest time when QEMU counts 2 ns
 *		per instruction (scripts/vm-run). Interrupts closer than
 *		that would leave a counter that counts kernel mode
 *		nothing but its own overflows to count.
 *  late_pmis	hold this many overflow interrupts until software stops
 *		the counter that overflowed, then raise them: the late
 *		PMI that hardware delivers when a counter is stopped while
 *		its interrupt is in flight. Counts down as they are raised.
 *  foreign	another owner of the PMU beside events-lite, a stand-in
 *		for perf, the NMI watchdog and KVM (emu_foreign.c).
 *
 * It also models the perfctr reservation that perf and the watchdog
 * share with the driver (pmc_x86_msr_ops.reserve), and counts the
 * driver's MSR accesses, those in NMI context apart, for the tests.
 *
 * A CPU that goes down loses its PMU state, and one that comes up finds
 * every register 0, global enables included, as firmware leaves them.
 *
 * State is per CPU and touched on its CPU only: with IRQs off by the
 * driver, the hrtimer, its irq_works and CPU hotplug, and by the NMIs
 * that the model raises at the very end of those. So the NMI handler finds the state
 * consistent; in NMI context reads do not advance time and writes do
 * not touch the hrtimer.
 */
#define pr_fmt(fmt) "events-lite emu: " fmt

#include <linux/hrtimer.h>
#include <linux/irq_work.h>
#include <linux/math64.h>
#include <linux/moduleparam.h>
#include <linux/nmi.h>
#include <linux/percpu.h>
#include <linux/pmc.h>
#include <linux/sched/clock.h>
#include <asm/apic.h>
#include <asm/irq_regs.h>
#include <asm/nmi.h>

#include "emu.h"
#include "emu_rate.h"

#undef MODULE_PARAM_PREFIX
#define MODULE_PARAM_PREFIX "pmc_emu."

#define PMC_EMU_MAX_NS		(10 * NSEC_PER_MSEC)
#define PMC_EMU_FLOOR_NS	100

static unsigned int pmc_emu_min_ns = 100 * NSEC_PER_USEC;
static int pmc_emu_late_pmis;

static int pmc_emu_set_min_ns(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, PMC_EMU_FLOOR_NS, PMC_EMU_MAX_NS);
}

static const struct kernel_param_ops pmc_emu_min_ns_ops = {
	.set	= pmc_emu_set_min_ns,
	.get	= param_get_uint,
};

module_param_cb(min_ns, &pmc_emu_min_ns_ops, &pmc_emu_min_ns, 0644);
MODULE_PARM_DESC(min_ns, "shortest time between overflow interrupts (ns)");
module_param_named(late_pmis, pmc_emu_late_pmis, int, 0644);
MODULE_PARM_DESC(late_pmis, "overflow interrupts to raise only after their counter stops");

DEFINE_PER_CPU(struct pmc_emu_cpu, pmc_emu_cpu);
const struct pmc_x86_model *pmc_emu_model __ro_after_init;
int pmc_emu_nr_fixed __ro_after_init;
/*
 * The reservation: a bit per general-purpose counter, whoever holds it,
 * set and cleared atomically by the driver (IRQs off, any CPU) and the
 * foreign owner (process context).
 */
unsigned long pmc_emu_reserved;

/* Fixed counters count these, at these rates. */
static const u32 pmc_emu_fixed_rate[PMC_EMU_MAX_FIXED] = {
	[0] = 500,	/* instructions */
	[1] = 1000,	/* cycles */
	[2] = 1000,	/* reference cycles */
};

static u32 pmc_emu_rate_of(struct pmc_emu_cpu *e, int slot)
{
	const struct pmc_x86_model *model = pmc_emu_model;
	u64 code = e->sel[slot] & (ARCH_PERFMON_EVENTSEL_EVENT |
				   ARCH_PERFMON_EVENTSEL_UMASK);
	int id;

	if (slot >= PMC_EMU_FIXED0)
		return pmc_emu_fixed_rate[slot - PMC_EMU_FIXED0];
	for (id = 0; id < PMC_HW_MAX; id++)
		if (model->event_map[id] && model->event_map[id] == code)
			return pmc_emu_rate[id];
	return PMC_EMU_RAW_RATE;
}

/* Fixed counter @slot's 4-bit field of the fixed control register. */
static u64 pmc_emu_fixed_field(struct pmc_emu_cpu *e, int slot)
{
	return e->fixed_ctrl >> (4 * (slot - PMC_EMU_FIXED0)) & 0xf;
}

/* Does counter @slot exist on this model? */
static bool pmc_emu_exists(int slot)
{
	if (slot >= PMC_EMU_FIXED0)
		return slot - PMC_EMU_FIXED0 < pmc_emu_nr_fixed;
	return slot < pmc_emu_model->nr_counters;
}

/* Does it interrupt when it wraps? */
static bool pmc_emu_interrupts(struct pmc_emu_cpu *e, int slot)
{
	if (slot >= PMC_EMU_FIXED0)
		return pmc_emu_fixed_field(e, slot) & PMC_EMU_FIXED_PMI;
	return e->sel[slot] & PMC_X86_SEL_INT;
}

static bool pmc_emu_counting(struct pmc_emu_cpu *e, int slot)
{
	const struct pmc_x86_model *model = pmc_emu_model;
	u64 en;

	if (!pmc_emu_exists(slot))
		return false;
	if (model->global_ctrl && !(e->global_ctrl & pmc_emu_bit(slot)))
		return false;
	if (slot >= PMC_EMU_FIXED0)
		return pmc_emu_fixed_field(e, slot) & PMC_EMU_FIXED_EN;
	en = model->en_only_in_sel0 ? e->sel[0] : e->sel[slot];
	return en & PMC_X86_SEL_EN &&
	       e->sel[slot] & (PMC_X86_SEL_USR | PMC_X86_SEL_OS);
}

/*
 * The general-purpose counters of this CPU that hold a count but do not
 * count: what a task that may execute rdpmc could read of counters that
 * stopped (the driver zeroes its own before such a task runs).
 */
unsigned long pmc_emu_stale_here(void)
{
	struct pmc_emu_cpu *e;
	unsigned long stale = 0;
	int idx;

	guard(irqsave)();
	e = this_cpu_ptr(&pmc_emu_cpu);
	for (idx = 0; idx < pmc_emu_model->nr_counters; idx++)
		if (e->ctr[idx] && !pmc_emu_counting(e, idx))
			stale |= BIT(idx);
	return stale;
}

/* Count the events since the last advance; note wraps that interrupt. */
void pmc_emu_advance(struct pmc_emu_cpu *e)
{
	const struct pmc_x86_model *model = pmc_emu_model;
	u64 limit = BIT_ULL(model->width), now = local_clock();
	u64 dt = now > e->last ? now - e->last : 0, events, old, new;
	int idx;

	e->last = now;
	for (idx = 0; idx < PMC_EMU_SLOTS; idx++) {
		if (!pmc_emu_counting(e, idx))
			continue;
		events = dt * pmc_emu_rate_of(e, idx) + e->frac[idx];
		e->frac[idx] = events % 1000;
		events /= 1000;
		/*
		 * An add, as hardware's increment: an overflow NMI that
		 * lands here reads the counter without these events and
		 * writes the next period, and the events go on top of
		 * that. A plain store would put back the old period and
		 * count it twice.
		 */
		do {
			old = READ_ONCE(e->ctr[idx]);
			new = (old + events) & (limit - 1);
		} while (cmpxchg64(&e->ctr[idx], old, new) != old);
		if (old + events >= limit && pmc_emu_interrupts(e, idx)) {
			e->nmi_pending = true;
			e->global_status |= pmc_emu_bit(idx);
			if (e->foreign.bits & pmc_emu_bit(idx))
				e->foreign.wraps++;
		}
	}
}

/* Nanoseconds until the first interrupt-enabled counter wraps, or 0. */
static u64 pmc_emu_next_wrap(struct pmc_emu_cpu *e)
{
	const struct pmc_x86_model *model = pmc_emu_model;
	u64 best = 0, left, ns;
	u32 rate;
	int idx;

	for (idx = 0; idx < PMC_EMU_SLOTS; idx++) {
		if (!pmc_emu_counting(e, idx) || !pmc_emu_interrupts(e, idx))
			continue;
		rate = pmc_emu_rate_of(e, idx);
		left = BIT_ULL(model->width) - e->ctr[idx];
		ns = div64_u64(left * 1000 - min(left * 1000, e->frac[idx]) +
			       rate - 1, rate);
		if (!best || ns < best)
			best = ns;
	}
	return best ? clamp_t(u64, best, READ_ONCE(pmc_emu_min_ns),
			      PMC_EMU_MAX_NS) : 0;
}

/* Would a tick for @when come sooner than the one queued, if any? */
static bool pmc_emu_tick_late(struct pmc_emu_cpu *e, ktime_t when)
{
	return e->online && (!hrtimer_is_queued(&e->timer) ||
			     ktime_compare(hrtimer_get_expires(&e->timer),
					   when) > 0);
}

/* When the tick must come by, or 0 if nothing needs one. */
static ktime_t pmc_emu_tick_due(struct pmc_emu_cpu *e)
{
	u64 ns = pmc_emu_next_wrap(e);

	/*
	 * A wrap that a read or write found, outside the tick, interrupts
	 * as soon as IRQs are on, as hardware's would at once: not at a
	 * tick queued for later, when the driver has long forgotten the
	 * counter and would take the NMI for an unknown one.
	 */
	if (e->nmi_pending && !e->held)
		ns = 1;
	return ns ? ktime_add_ns(ktime_get(), ns) : 0;
}

/*
 * Make sure the tick comes no later than the next wrap. A queued tick
 * that is early enough stays, and one with nothing left to count just
 * ends: so counters going on and off at context switches rarely touch
 * the hrtimer. When it must move, an irq_work moves it once the caller
 * has IRQs on again. The driver starts a group's counters one register
 * write after another with IRQs off, as hardware takes them, at once;
 * an hrtimer_start() between two of those writes (up to milliseconds
 * on a debug kernel, when lockdep checks a new lock chain) would start
 * the members that far apart, which no hardware does.
 */
void pmc_emu_arm(struct pmc_emu_cpu *e)
{
	ktime_t when = pmc_emu_tick_due(e);

	if (when && pmc_emu_tick_late(e, when))
		irq_work_queue(&e->arm_work);
}

static void pmc_emu_arm_work(struct irq_work *work)
{
	struct pmc_emu_cpu *e = container_of(work, struct pmc_emu_cpu,
					     arm_work);
	ktime_t when;

	pmc_emu_advance(e);
	when = pmc_emu_tick_due(e);
	if (when && pmc_emu_tick_late(e, when))
		hrtimer_start(&e->timer, when, HRTIMER_MODE_ABS_PINNED_HARD);
}

/* Raise the overflow interrupt, as the LVTPC would: a self-NMI. */
static void pmc_emu_raise(struct pmc_emu_cpu *e)
{
	e->nmi_pending = false;
	__apic_send_IPI(smp_processor_id(), NMI_VECTOR);
}

/*
 * The tick raises its NMI from an irq_work, once the hrtimer interrupt
 * is over: an NMI taken inside the hrtimer callback counts as hrtimer
 * time, and a run of them trips the hrtimer hang detection, which then
 * holds back every timer on the CPU for milliseconds. The NMI handler
 * writes the next period without touching the hrtimer. A self-NMI is
 * taken as soon as it is sent, so once it has run, tick at the next
 * wrap it programmed; if it has not run yet, tick again soon after it,
 * to find the next wrap.
 */
static void pmc_emu_raise_work(struct irq_work *work)
{
	struct pmc_emu_cpu *e = container_of(work, struct pmc_emu_cpu,
					     raise_work);
	unsigned long nmis = READ_ONCE(e->nmis);
	u64 ns = READ_ONCE(pmc_emu_min_ns);
	ktime_t when;

	__apic_send_IPI(smp_processor_id(), NMI_VECTOR);
	if (!e->online)
		return;
	if (READ_ONCE(e->nmis) != nmis) {
		ns = pmc_emu_next_wrap(e);
		if (!ns)
			return;
		hrtimer_start(&e->timer, ktime_add_ns(ktime_get(), ns),
			      HRTIMER_MODE_ABS_PINNED_HARD);
		return;
	}
	when = ktime_add_ns(ktime_get(), ns);
	if (pmc_emu_tick_late(e, when))
		hrtimer_start(&e->timer, when, HRTIMER_MODE_ABS_PINNED_HARD);
}

/*
 * While late_pmis lasts, hold the interrupt of every counting counter
 * that wrapped, until software stops one of them. True if any is held.
 */
static bool pmc_emu_hold(struct pmc_emu_cpu *e)
{
	int left = READ_ONCE(pmc_emu_late_pmis);
	int idx;

	if (left <= 0)
		return false;
	for (idx = 0; idx < pmc_emu_model->nr_counters; idx++)
		if (!(e->foreign.bits & BIT_ULL(idx)) &&
		    pmc_emu_counting(e, idx) && e->sel[idx] & PMC_X86_SEL_INT &&
		    !(e->ctr[idx] & BIT_ULL(pmc_emu_model->width - 1)))
			e->held |= BIT(idx);
	return e->held;
}

static enum hrtimer_restart pmc_emu_tick(struct hrtimer *timer)
{
	struct pmc_emu_cpu *e = container_of(timer, struct pmc_emu_cpu, timer);
	u64 ns, min_ns = READ_ONCE(pmc_emu_min_ns);

	pmc_emu_advance(e);
	ns = pmc_emu_next_wrap(e);
	/*
	 * A global status that an NMI since has acknowledged wants no
	 * more: the overflows it took merged into that NMI's, as the APIC
	 * merges a PMI into one pending.
	 */
	if (pmc_emu_model->global_status && !e->global_status)
		e->nmi_pending = false;
	if (e->nmi_pending && !e->held && !pmc_emu_hold(e)) {
		struct pt_regs *regs = get_irq_regs();

		/* The overflow "happened" where the tick came in. */
		e->have_regs = regs;
		if (regs)
			e->regs = *regs;
		e->nmi_pending = false;
		irq_work_queue(&e->raise_work);
		ns = ns ? min_t(u64, ns, min_ns) : min_ns;
	}
	if (!ns)
		return HRTIMER_NORESTART;
	hrtimer_forward_now(timer, ns_to_ktime(ns));
	return HRTIMER_RESTART;
}

/*
 * Software stopped a counter whose interrupt the model holds: raise it
 * now, after the stop, as a PMI that was in flight would arrive.
 */
static void pmc_emu_release_held(struct pmc_emu_cpu *e)
{
	int idx;

	for (idx = 0; idx < pmc_emu_model->nr_counters; idx++) {
		if (!(e->held & BIT(idx)) || pmc_emu_counting(e, idx))
			continue;
		e->held = 0;
		e->have_regs = false;
		WRITE_ONCE(pmc_emu_late_pmis, READ_ONCE(pmc_emu_late_pmis) - 1);
		pmc_emu_raise(e);
		return;
	}
}

/* Global registers, where the model has them. */
enum pmc_emu_reg { PMC_EMU_NONE, PMC_EMU_SEL, PMC_EMU_CTR, PMC_EMU_GCTRL,
		   PMC_EMU_GSTATUS, PMC_EMU_GACK, PMC_EMU_FCTRL };

/* Which register @msr is, and for a counter's, which slot. */
static enum pmc_emu_reg pmc_emu_decode(u32 msr, int *idx)
{
	const struct pmc_x86_model *model = pmc_emu_model;
	int i;

	for (i = 0; i < model->nr_counters; i++) {
		*idx = i;
		if (msr == pmc_x86_sel_msr(model, i))
			return PMC_EMU_SEL;
		if (msr == pmc_x86_ctr_msr(model, i))
			return PMC_EMU_CTR;
	}
	for (i = 0; i < pmc_emu_nr_fixed; i++) {
		*idx = PMC_EMU_FIXED0 + i;
		if (msr == MSR_CORE_PERF_FIXED_CTR0 + i)
			return PMC_EMU_CTR;
	}
	if (pmc_emu_nr_fixed && msr == MSR_CORE_PERF_FIXED_CTR_CTRL)
		return PMC_EMU_FCTRL;
	if (!model->global_ctrl)
		return PMC_EMU_NONE;
	if (msr == model->global_ctrl)
		return PMC_EMU_GCTRL;
	if (msr == model->global_status)
		return PMC_EMU_GSTATUS;
	if (msr == model->global_ack)
		return PMC_EMU_GACK;
	return PMC_EMU_NONE;
}

/* The driver's accesses, for the tests: none in an NMI not its own. */
static void pmc_emu_count_access(struct pmc_emu_cpu *e)
{
	e->lite_msr++;
	if (in_nmi())
		e->lite_nmi_msr++;
}

static int pmc_emu_read(u32 msr, u64 *val)
{
	struct pmc_emu_cpu *e = this_cpu_ptr(&pmc_emu_cpu);
	int idx;

	pmc_emu_count_access(e);
	switch (pmc_emu_decode(msr, &idx)) {
	case PMC_EMU_SEL:
		*val = e->sel[idx];
		return 0;
	case PMC_EMU_CTR:
		if (!in_nmi()) {
			pmc_emu_advance(e);
			if (e->nmi_pending)
				pmc_emu_arm(e);
		}
		*val = e->ctr[idx];
		return 0;
	case PMC_EMU_GCTRL:
		*val = e->global_ctrl;
		return 0;
	case PMC_EMU_FCTRL:
		*val = e->fixed_ctrl;
		return 0;
	case PMC_EMU_GSTATUS:
		if (!in_nmi())
			pmc_emu_advance(e);
		*val = e->global_status;
		return 0;
	case PMC_EMU_GACK:
		*val = 0;	/* write-only on Intel; reads as 0 */
		return 0;
	default:
		return -EIO;	/* rdmsr would #GP */
	}
}

static int pmc_emu_write(u32 msr, u64 val)
{
	const struct pmc_x86_model *model = pmc_emu_model;
	struct pmc_emu_cpu *e = this_cpu_ptr(&pmc_emu_cpu);
	u64 counters = GENMASK_ULL(model->nr_counters - 1, 0) |
		       pmc_emu_fixed_bits();
	int idx;
	enum pmc_emu_reg reg = pmc_emu_decode(msr, &idx);

	pmc_emu_count_access(e);
	if (reg == PMC_EMU_NONE || reg == PMC_EMU_GSTATUS)
		return -EIO;	/* wrmsr would #GP: status is read-only */
	if (!in_nmi())
		pmc_emu_advance(e);	/* count up to now under the old setting */
	switch (reg) {
	case PMC_EMU_SEL:
		e->sel[idx] = val;
		break;
	case PMC_EMU_CTR:
		if (model->write_sext32)
			val = (u64)(s64)(s32)val;
		e->ctr[idx] = val & GENMASK_ULL(model->width - 1, 0);
		e->frac[idx] = 0;
		break;
	case PMC_EMU_GCTRL:
		e->global_ctrl = val & counters;
		break;
	case PMC_EMU_FCTRL:
		e->fixed_ctrl = val & (BIT_ULL(4 * pmc_emu_nr_fixed) - 1);
		break;
	default:	/* PMC_EMU_GACK: write 1 to clear */
		e->global_status &= ~val;
		break;
	}
	/*
	 * Only an enable can bring a wrap closer, and the advance above may
	 * have found one; a stop may end a hold.
	 */
	if (!in_nmi() && (reg == PMC_EMU_SEL || reg == PMC_EMU_GCTRL ||
			  reg == PMC_EMU_FCTRL || e->nmi_pending)) {
		if (e->held)
			pmc_emu_release_held(e);
		pmc_emu_arm(e);
	}
	return 0;
}

/* The overflow NMI is over: its registers are stale. */
static void pmc_emu_nmi_end(void)
{
	struct pmc_emu_cpu *e = this_cpu_ptr(&pmc_emu_cpu);

	e->have_regs = false;
	WRITE_ONCE(e->nmis, e->nmis + 1);
}

static struct pt_regs *pmc_emu_sample_regs(void)
{
	struct pmc_emu_cpu *e = this_cpu_ptr(&pmc_emu_cpu);

	return e->have_regs ? &e->regs : NULL;
}

/* Power-up, IRQs off: every register reads 0, as firmware leaves it. */
static void pmc_emu_cpu_starting(void)
{
	struct pmc_emu_cpu *e = this_cpu_ptr(&pmc_emu_cpu);

	memset(e->sel, 0, sizeof(e->sel));
	memset(e->ctr, 0, sizeof(e->ctr));
	memset(e->frac, 0, sizeof(e->frac));
	e->fixed_ctrl = 0;
	e->global_ctrl = 0;
	e->global_status = 0;
	pmc_emu_foreign_reset(e);
	e->nmi_pending = false;
	e->held = 0;
	e->have_regs = false;
	e->last = local_clock();
	e->online = true;
}

/* The CPU goes down, IRQs off: its timer must not move to another CPU. */
static void pmc_emu_cpu_dying(void)
{
	struct pmc_emu_cpu *e = this_cpu_ptr(&pmc_emu_cpu);

	e->online = false;
	hrtimer_try_to_cancel(&e->timer);
}

static bool pmc_emu_reserve(int idx)
{
	return !test_and_set_bit(idx, &pmc_emu_reserved);
}

static void pmc_emu_release(int idx)
{
	clear_bit(idx, &pmc_emu_reserved);
}

static const struct pmc_x86_msr_ops pmc_emu_msr = {
	.read		= pmc_emu_read,
	.write		= pmc_emu_write,
	.reserve	= pmc_emu_reserve,
	.release	= pmc_emu_release,
	.nmi_end	= pmc_emu_nmi_end,
	.sample_regs	= pmc_emu_sample_regs,
	.cpu_starting	= pmc_emu_cpu_starting,
	.cpu_dying	= pmc_emu_cpu_dying,
};

const struct pmc_x86_msr_ops *
__init pmc_x86_emu_setup(const struct pmc_x86_model *model)
{
	int cpu;

	pmc_emu_model = model;
	/* Intel arch-perfmon v2+: three fixed counters; AMD has none. */
	if (model->global_ctrl == MSR_CORE_PERF_GLOBAL_CTRL)
		pmc_emu_nr_fixed = PMC_EMU_MAX_FIXED;
	for_each_possible_cpu(cpu) {
		struct pmc_emu_cpu *e = per_cpu_ptr(&pmc_emu_cpu, cpu);

		hrtimer_setup(&e->timer, pmc_emu_tick, CLOCK_MONOTONIC,
			      HRTIMER_MODE_ABS_PINNED_HARD);
		e->raise_work = IRQ_WORK_INIT_HARD(pmc_emu_raise_work);
		e->arm_work = IRQ_WORK_INIT_HARD(pmc_emu_arm_work);
	}
	pmc_emu_foreign_init();
	return &pmc_emu_msr;
}
