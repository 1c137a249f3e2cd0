// SPDX-License-Identifier: GPL-2.0
/*
 * events-lite x86 PMU driver: P6/Intel architectural perfmon and AMD
 * counters, driven through a model table (model.c) and an MSR access
 * layer that the emulated PMU (emu.c) can replace.
 *
 * Per-CPU state (struct pmc_x86_cpu) is changed only on its own CPU
 * with IRQs off: by add()/del(), called under a context lock from the
 * scheduler or from pmc_ctx_call(), and by the unthrottle hrtimer. The
 * overflow NMI reads it at any time, so add() publishes a slot only
 * after programming the counter, and del() unpublishes it before
 * folding the last count.
 *
 * The driver picks its code paths from the model, which it derives from
 * CPUID (or from the emulated CPU's description): PMUs with a global
 * control and status register (Intel arch-perfmon v2+, AMD PerfMonV2)
 * have their overflow status acknowledged until it is clear; older ones
 * are polled counter by counter.
 *
 * The PMU is shared with perf, the NMI watchdog (a perf counter) and
 * KVM's vPMU (perf counters too), so this driver touches only what it
 * owns. Its NMI handler returns at once, with no MSR access, on a CPU
 * where it has no counter and no interrupt of its own in flight. It
 * stops, acknowledges and restarts only its own counters' bits of the
 * global registers (read-modify-write), so perf's fixed counters and
 * the counters perf keeps disabled for a guest stay as perf left them.
 * CPU bring-up touches nothing: a counter is set up when it is placed.
 *
 * A counter is reserved from the perfctr reservation that x86 perf and
 * the NMI watchdog use (reserve_perfctr_nmi()) only while some CPU has
 * an events-lite counter programmed on it, not while a file descriptor
 * is merely open: an idle user never keeps perf, KVM or the watchdog
 * off the PMU. A counter someone else holds is no room, as a full PMU
 * is: pinned groups go to their error state, flexible ones wait. So is
 * every counter while perf's PMI handler is live without holding them
 * (PT, BTS and LBR users): it would ack our overflows.
 *
 * A counter taken from perf leaves perf's dirty set (perf would zero it
 * at a switch to a task that may execute rdpmc); this driver zeroes a
 * counter itself when this CPU stops using it, so that no count is left
 * for the next owner's rdpmc.
 */
#define pr_fmt(fmt) "events-lite: " fmt

#include <linux/bitops.h>
#include <linux/cpufeature.h>
#include <linux/cpuhotplug.h>
#include <linux/hrtimer.h>
#include <linux/init.h>
#include <linux/irq_work.h>
#include <linux/jiffies.h>
#include <linux/mmu_context.h>
#include <linux/nmi.h>
#include <linux/percpu.h>
#include <linux/sched/clock.h>
#include <linux/pmc.h>
#include <linux/processor.h>
#include <linux/smp.h>
#include <linux/spinlock.h>
#include <asm/apic.h>
#include <asm/cpuid/api.h>
#include <asm/msr.h>
#include <asm/nmi.h>
#include <asm/perf_event.h>
#include <asm/tlbflush.h>

#include "pmc_x86.h"

/*
 * How long after a counter stopped, or an overflow was handled, an NMI
 * that finds no overflowed counter is taken as that counter's late PMI
 * (PMUs without a global status only; see pmc_x86_nmi()). In time, not
 * ticks: a vCPU that the host stalls delivers its PMI many ticks late.
 */
#define PMC_X86_LATE_MS		100
/* Rounds of a global status that keeps coming back, before giving up. */
#define PMC_X86_MAX_NMI_LOOPS	100

struct pmc_x86_cpu {
	/*
	 * Written by add()/del() and the unthrottle timer with IRQs off,
	 * on this CPU; read by the NMI, which may come between any two
	 * writes (see start() and stop() for the order).
	 */
	struct pmc_counter *slots[PMC_X86_MAX_COUNTERS];
	unsigned long active;		/* published slots */
	/*
	 * Counters that stopped with a count in them: zeroed before a task
	 * that may execute rdpmc runs here (pmc_x86_clear_dirty_counters(),
	 * from switch_mm or its IPI). Own CPU, IRQs off; not the NMI.
	 */
	unsigned long dirty;
	/*
	 * Interrupts of our own that may still come for counters that
	 * stopped: written by stop() (IRQs off) and the NMI, own CPU only.
	 * Global status: the stopped counters whose status bit the next
	 * NMI must look at. Otherwise: PMIs to claim, until late_until.
	 */
	unsigned long stale;
	atomic_t late_pmis;
	unsigned long late_until;	/* jiffies */
	bool lvtpc_set;
	/* The HostOnly bit event selects get here; refreshed by add(). */
	u64 host_only;
	/* NMI only: its time charged so far, and to which counter last */
	u64 nmi_mark;
	struct pmc_counter *nmi_last;
	struct irq_work throttle_work;	/* from the NMI: arm the timer */
	struct hrtimer unthrottle_timer;	/* the next tick */
};

static DEFINE_PER_CPU(struct pmc_x86_cpu, pmc_x86_cpu);

static const struct pmc_x86_model *pmc_x86_model __ro_after_init;
static struct pmc_x86_model pmc_x86_cpuid_model __ro_after_init;
static const struct pmc_x86_msr_ops *pmc_x86_msr __ro_after_init;
static bool pmc_x86_emulated __ro_after_init;
static char pmc_x86_emu_name[16] __initdata;

/*
 * For each hardware counter, on how many CPUs an events-lite counter
 * is programmed on it (on P6, whose counters share one enable bit, the
 * two count as one, counter 0). The first one reserves it, the last one releases it,
 * under pmc_x86_hold_lock; add() and del() run with IRQs off, never in
 * NMI.
 */
static atomic_t pmc_x86_holders[PMC_X86_MAX_COUNTERS];
static DEFINE_RAW_SPINLOCK(pmc_x86_hold_lock);

static int __init pmc_x86_emu_param(char *str)
{
	strscpy(pmc_x86_emu_name, str, sizeof(pmc_x86_emu_name));
	return 1;
}
__setup("pmc_emu=", pmc_x86_emu_param);

static u64 pmc_x86_rd(u32 msr)
{
	u64 val = 0;

	pmc_x86_msr->read(msr, &val);
	return val;
}

static void pmc_x86_wr(u32 msr, u64 val)
{
	pmc_x86_msr->write(msr, val);
}

static int pmc_x86_real_read(u32 msr, u64 *val)
{
	return rdmsrq_safe(msr, val);
}

static int pmc_x86_real_write(u32 msr, u64 val)
{
	return wrmsrq_safe(msr, val);
}

static bool pmc_x86_real_reserve(int idx)
{
	u32 ctr = pmc_x86_ctr_msr(pmc_x86_model, idx);

	if (!reserve_perfctr_nmi(ctr))
		return false;
	if (reserve_evntsel_nmi(pmc_x86_sel_msr(pmc_x86_model, idx)))
		return true;
	release_perfctr_nmi(ctr);
	return false;
}

static void pmc_x86_real_release(int idx)
{
	release_evntsel_nmi(pmc_x86_sel_msr(pmc_x86_model, idx));
	release_perfctr_nmi(pmc_x86_ctr_msr(pmc_x86_model, idx));
}

static const struct pmc_x86_msr_ops pmc_x86_real_msr = {
	.read		= pmc_x86_real_read,
	.write		= pmc_x86_real_write,
	.reserve	= pmc_x86_real_reserve,
	.release	= pmc_x86_real_release,
};

/* P6's EVNTSEL0 enables both counters: the two are one unit to hold. */
static int pmc_x86_unit(int idx)
{
	return pmc_x86_model->en_only_in_sel0 ? 0 : idx;
}

static int pmc_x86_unit_size(void)
{
	return pmc_x86_model->en_only_in_sel0 ? pmc_x86_model->nr_counters : 1;
}

static bool pmc_x86_reserve_unit(int unit)
{
	int i;

	for (i = 0; i < pmc_x86_unit_size(); i++) {
		if (!pmc_x86_msr->reserve(unit + i)) {
			while (i--)
				pmc_x86_msr->release(unit + i);
			return false;
		}
	}
	return true;
}

/* This CPU is about to program counter @idx: false if someone holds it. */
static bool pmc_x86_hold(int idx)
{
	atomic_t *holders = &pmc_x86_holders[pmc_x86_unit(idx)];
	bool ok = true;

	if (atomic_inc_not_zero(holders))
		return true;
	raw_spin_lock(&pmc_x86_hold_lock);
	if (atomic_read(holders) || pmc_x86_reserve_unit(pmc_x86_unit(idx)))
		atomic_inc(holders);
	else
		ok = false;
	raw_spin_unlock(&pmc_x86_hold_lock);
	return ok;
}

/* perf's PMI handler takes every overflow: no counter of ours now. */
static bool pmc_x86_perf_pmi(void)
{
	return !pmc_x86_emulated && x86_perf_pmi_active();
}

static void pmc_x86_unhold(int idx)
{
	int unit = pmc_x86_unit(idx), i;

	if (!atomic_dec_and_raw_lock(&pmc_x86_holders[unit],
				     &pmc_x86_hold_lock))
		return;
	for (i = 0; i < pmc_x86_unit_size(); i++)
		pmc_x86_msr->release(unit + i);
	raw_spin_unlock(&pmc_x86_hold_lock);
}

/* Fold the events since the last fold into the 64-bit count; NMI-safe. */
static u64 pmc_x86_update(struct pmc_counter *counter)
{
	const struct pmc_x86_model *model = pmc_x86_model;
	u64 prev, now, delta;

	do {
		prev = local64_read(&counter->hw.prev_count);
		now = pmc_x86_rd(pmc_x86_ctr_msr(model, counter->hw.idx));
	} while (local64_cmpxchg(&counter->hw.prev_count, prev, now) != prev);

	delta = pmc_x86_delta(model, prev, now);
	local64_add(delta, &counter->count);
	local64_sub(delta, &counter->hw.period_left);
	return now;
}

/*
 * The period to program: the sample period, or for a counting counter
 * the longest, so that it folds its count before a wrap.
 */
static u64 pmc_x86_period(struct pmc_counter *counter)
{
	u64 max = pmc_x86_max_period(pmc_x86_model);

	return counter->attr.irq_period ? min(READ_ONCE(counter->period), max) :
					  max;
}

/* The longest period the model's counters hold, for attr.freq. */
static u64 pmc_x86_freq_max_period(void)
{
	return pmc_x86_max_period(pmc_x86_model);
}

/*
 * Program counter @idx to overflow at the end of @counter's period:
 * write minus the events left. The counter first, then prev_count: a
 * read from the NMI in between folds nothing it should not.
 */
static void pmc_x86_set_period(struct pmc_counter *counter, int idx)
{
	const struct pmc_x86_model *model = pmc_x86_model;
	s64 left = local64_read(&counter->hw.period_left);
	u64 val;

	left = pmc_x86_next_left(model, left,
				 pmc_next_period(counter, pmc_x86_period(counter)),
				 READ_ONCE(counter->throttled));
	local64_set(&counter->hw.period_left, left);

	val = -(u64)left & GENMASK_ULL(model->width - 1, 0);
	pmc_x86_wr(pmc_x86_ctr_msr(model, idx), val);
	local64_set(&counter->hw.prev_count, val);
}

/*
 * A counter must not count a KVM guest's execution for its host task. On
 * AMD that is the HostOnly bit, but only with SVM on: with EFER.SVME
 * clear, a HostOnly counter counts nothing. Intel needs KVM to switch
 * GLOBAL_CTRL at VM entry, which it does for perf only.
 *
 * EFER is read at each add() on the CPU, not at every event-select write
 * (the NMI writes them too). perf learns of SVM going on or off from
 * KVM itself (amd_pmu_enable_virt()); events-lite does not, so a
 * counter that stays on the PMU (a pinned CPU counter, or any while
 * nothing multiplexes) keeps the HostOnly setting it started with until
 * it is next scheduled in: loading kvm_amd under it counts guests as
 * host, unloading it stops the count. KVM turns SVM on at module load,
 * normally at boot, before any counter.
 */
static u64 pmc_x86_host_only(void)
{
	u64 efer;

	if (!pmc_x86_model->amd_host_only || pmc_x86_emulated ||
	    rdmsrq_safe(MSR_EFER, &efer) || !(efer & EFER_SVME))
		return 0;
	return AMD64_EVENTSEL_HOSTONLY;
}

static void pmc_x86_write_sel(struct pmc_x86_cpu *cpuc, int idx)
{
	const struct pmc_x86_model *model = pmc_x86_model;
	struct pmc_counter *counter = cpuc->slots[idx];
	u64 sel = 0;

	if (counter && test_bit(idx, &cpuc->active))
		sel = counter->hw.sel | cpuc->host_only;
	pmc_x86_wr(pmc_x86_sel_msr(model, idx),
		   pmc_x86_sel_value(model, idx, sel, cpuc->active));
}

/* Event selects change: idx itself, and P6's shared enable in sel 0. */
static void pmc_x86_write_sels(struct pmc_x86_cpu *cpuc, int idx)
{
	pmc_x86_write_sel(cpuc, idx);
	if (pmc_x86_model->en_only_in_sel0 && idx != 0)
		pmc_x86_write_sel(cpuc, 0);
}

/*
 * No global status: up to @n PMIs of ours may come and find no counter
 * overflowed (one was stopped or handled while its PMI was in flight).
 * Claim that many NMIs that find nothing, within PMC_X86_LATE_MS.
 */
static void pmc_x86_late_pmis(struct pmc_x86_cpu *cpuc, int n)
{
	WRITE_ONCE(cpuc->late_until,
		   jiffies + msecs_to_jiffies(PMC_X86_LATE_MS));
	if (atomic_add_return(n, &cpuc->late_pmis) > PMC_X86_MAX_COUNTERS)
		atomic_set(&cpuc->late_pmis, PMC_X86_MAX_COUNTERS);
}

/*
 * Counters count only with their global enable bit: set ours alone, if
 * it is clear (a CPU may come up with every bit clear). It stays set
 * after the counter stops, which its event select's enable bit does:
 * the next owner of that counter, perf, writes the global control
 * whole when it enables its events, guest bits clear.
 */
static void pmc_x86_global_enable(int idx)
{
	const struct pmc_x86_model *model = pmc_x86_model;
	u64 ctrl;

	if (!model->global_ctrl)
		return;
	ctrl = pmc_x86_rd(model->global_ctrl);
	if (!(ctrl & BIT_ULL(idx)))
		pmc_x86_wr(model->global_ctrl, ctrl | BIT_ULL(idx));
}

/*
 * Program @counter on @idx, then publish it: hw.idx last, so that an
 * NMI that reads the counter as a group member (sample_read) never
 * pairs the new counter with the old prev_count.
 */
static void pmc_x86_start(struct pmc_x86_cpu *cpuc,
			  struct pmc_counter *counter, int idx)
{
	if (!pmc_x86_emulated)
		x86_perf_counter_taken(idx);
	pmc_x86_set_period(counter, idx);
	barrier();
	WRITE_ONCE(counter->hw.idx, idx);
	WRITE_ONCE(cpuc->slots[idx], counter);
	barrier();		/* the NMI sees a programmed counter */
	if (!pmc_x86_emulated && !cpuc->lvtpc_set) {
		apic_write(APIC_LVTPC, APIC_DM_NMI);
		cpuc->lvtpc_set = true;
	}
	/* before it is active: the NMI restores the control it found */
	pmc_x86_global_enable(idx);
	__set_bit(idx, &cpuc->active);
	pmc_x86_write_sels(cpuc, idx);
	/* Throttled elsewhere: this CPU's tick lets it sample again. */
	if (READ_ONCE(counter->throttled))
		irq_work_queue(&cpuc->throttle_work);
	pmc_userpage_reprogrammed(counter);	/* if it moved, or the tick */
}

/*
 * Its PMI may be in flight, and arrive at any time after the stop to
 * find it gone. With a global status, its status bit says so: the next
 * NMI looks at it if it is set once the counter is off (set again
 * then, as an NMI during the stop may have taken it, and cleared if
 * the bit is clear). Otherwise a PMI is claimed for it from the start
 * of the stop, and given back if the counter turns out not to have
 * overflowed; someone else's NMI that finds nothing during the stop
 * takes that claim, and the counter's own PMI may then be reported as
 * unknown: a window of a few MSR writes.
 */
static void pmc_x86_stop(struct pmc_x86_cpu *cpuc, struct pmc_counter *counter)
{
	const struct pmc_x86_model *model = pmc_x86_model;
	int idx = counter->hw.idx;
	u64 now;

	if (model->global_status)
		set_bit(idx, &cpuc->stale);
	else
		pmc_x86_late_pmis(cpuc, 1);
	barrier();
	__clear_bit(idx, &cpuc->active);
	pmc_x86_write_sels(cpuc, idx);
	if (model->global_status) {
		set_bit(idx, &cpuc->stale);
		if (!(pmc_x86_rd(model->global_status) & BIT_ULL(idx)))
			clear_bit(idx, &cpuc->stale);
	}
	barrier();		/* the NMI is done with the slot */
	WRITE_ONCE(cpuc->slots[idx], NULL);
	__set_bit(idx, &cpuc->dirty);
	now = pmc_x86_update(counter);
	WRITE_ONCE(counter->hw.idx, -1);
	if (!model->global_status && now & BIT_ULL(model->width - 1))
		atomic_dec_if_positive(&cpuc->late_pmis);
}

/* This CPU is done with counter @idx: zero it, and let it go. */
static void pmc_x86_leave(struct pmc_x86_cpu *cpuc, int idx)
{
	pmc_x86_wr(pmc_x86_ctr_msr(pmc_x86_model, idx), 0);
	__clear_bit(idx, &cpuc->dirty);
	pmc_x86_unhold(idx);
}

/*
 * Solve the assignment of @list on the counters not in @busy, and hold
 * the counters it needs that this CPU does not hold yet. A counter that
 * someone else holds joins @busy, and the assignment is solved again.
 */
static int pmc_x86_assign_held(struct pmc_x86_cpu *cpuc,
			       struct pmc_counter **list, int n, int *assign)
{
	const struct pmc_x86_model *model = pmc_x86_model;
	u32 masks[PMC_X86_MAX_COUNTERS], busy = 0;
	unsigned long held;
	int i, idx;

	for (;;) {
		for (i = 0; i < n; i++)
			masks[i] = pmc_x86_counter_mask(model, list[i]->hw.sel) &
				   ~busy;
		if (pmc_x86_assign(masks, n, model->nr_counters, assign))
			return -EAGAIN;
		held = 0;
		for (i = 0; i < n; i++) {
			idx = assign[i];
			if (test_bit(idx, &cpuc->active))
				continue;
			if (!pmc_x86_hold(idx)) {
				busy |= BIT(idx);
				break;
			}
			__set_bit(idx, &held);
		}
		if (i == n)
			return 0;
		for_each_set_bit(idx, &held, model->nr_counters)
			pmc_x86_unhold(idx);
	}
}

/*
 * Put @counter on this CPU's PMU. The counters already there may have
 * to move to make room for a constrained event: solve the assignment
 * for all of them, then move the ones whose counter changed. A moving
 * counter is stopped (unpublished, its count folded) before it starts
 * on its new counter, so the NMI never sees it half moved.
 */
static int pmc_x86_add(struct pmc_counter *counter)
{
	const struct pmc_x86_model *model = pmc_x86_model;
	struct pmc_x86_cpu *cpuc = this_cpu_ptr(&pmc_x86_cpu);
	struct pmc_counter *list[PMC_X86_MAX_COUNTERS];
	int assign[PMC_X86_MAX_COUNTERS];
	unsigned long old = cpuc->active, new = 0;
	int i, n = 0, idx;

	for_each_set_bit(idx, &old, model->nr_counters)
		list[n++] = cpuc->slots[idx];
	if (n == model->nr_counters || pmc_x86_perf_pmi())
		return -EAGAIN;
	list[n++] = counter;
	if (pmc_x86_assign_held(cpuc, list, n, assign))
		return -EAGAIN;
	cpuc->host_only = pmc_x86_host_only();

	for (i = 0; i < n; i++)
		__set_bit(assign[i], &new);
	for (i = 0; i < n - 1; i++)
		if (assign[i] != list[i]->hw.idx)
			pmc_x86_stop(cpuc, list[i]);
	for (i = 0; i < n; i++)
		if (list[i]->hw.idx < 0)
			pmc_x86_start(cpuc, list[i], assign[i]);
	/* Counters this CPU left in the move. */
	for_each_set_bit(idx, &old, model->nr_counters)
		if (!test_bit(idx, &new))
			pmc_x86_leave(cpuc, idx);
	return 0;
}

static void pmc_x86_del(struct pmc_counter *counter)
{
	struct pmc_x86_cpu *cpuc = this_cpu_ptr(&pmc_x86_cpu);
	int idx = counter->hw.idx;

	pmc_x86_stop(cpuc, counter);
	pmc_x86_leave(cpuc, idx);
}

static void pmc_x86_read(struct pmc_counter *counter)
{
	if (counter->hw.idx >= 0)
		pmc_x86_update(counter);
}

/* pmc_x86_update() is NMI-safe: a sample may fold an active member. */
static u64 pmc_x86_sample_read(struct pmc_counter *counter)
{
	pmc_x86_read(counter);
	return local64_read(&counter->count);
}

static const struct pmc_pmu pmc_x86_pmu;

/*
 * Could the hardware counters of @leader's group, with @counter, all be
 * on the PMU at once? The same assignment that add() solves, on an
 * empty PMU; a group that fails it would never count.
 */
static int pmc_x86_validate_group(struct pmc_counter *leader,
				  struct pmc_counter *counter)
{
	const struct pmc_x86_model *model = pmc_x86_model;
	u32 masks[PMC_X86_MAX_COUNTERS];
	int assign[PMC_X86_MAX_COUNTERS];
	struct pmc_counter *pos;
	int n = 0;

	if (counter->pmu != &pmc_x86_pmu)
		return 0;
	for_each_group_counter(pos, leader) {
		if (pos->pmu != &pmc_x86_pmu)
			continue;
		if (n == model->nr_counters)
			return -EINVAL;
		masks[n++] = pmc_x86_counter_mask(model, pos->hw.sel);
	}
	if (n == model->nr_counters)
		return -EINVAL;
	masks[n++] = pmc_x86_counter_mask(model, counter->hw.sel);
	return pmc_x86_assign(masks, n, model->nr_counters, assign) ? -EINVAL : 0;
}

/*
 * Samples take the registers of the interrupted code. An emulated
 * overflow is raised from a timer, so the model supplies the registers
 * that timer interrupted.
 */
static struct pt_regs *pmc_x86_sample_regs(struct pt_regs *regs)
{
	if (pmc_x86_msr->sample_regs)
		return pmc_x86_msr->sample_regs() ?: regs;
	return regs;
}

/*
 * An overflowed counter, in the NMI: sample, then the next period. The
 * NMI's time up to here is charged to it (the first one also pays for
 * the NMI's start, the last for its end), to its owner's share of the
 * time bound.
 */
static void pmc_x86_overflow(struct pmc_x86_cpu *cpuc,
			     struct pmc_counter *counter, struct pt_regs *regs)
{
	u64 now;

	if (local64_read(&counter->hw.period_left) <= 0 &&
	    counter->attr.irq_period)
		pmc_counter_overflow(counter, pmc_x86_sample_regs(regs), 0);
	/* after the overflow, which may have throttled the counter */
	pmc_x86_set_period(counter, counter->hw.idx);
	pmc_userpage_reprogrammed(counter);
	now = local_clock();
	pmc_overflow_took(counter, now - cpuc->nmi_mark);
	cpuc->nmi_mark = now;
	cpuc->nmi_last = counter;
}

/* No global status: counters start negative, the top bit clears on wrap. */
static int pmc_x86_poll_counters(struct pmc_x86_cpu *cpuc,
				 struct pt_regs *regs)
{
	const struct pmc_x86_model *model = pmc_x86_model;
	unsigned long active = READ_ONCE(cpuc->active);
	struct pmc_counter *counter;
	int idx, handled = 0;

	for_each_set_bit(idx, &active, model->nr_counters) {
		counter = READ_ONCE(cpuc->slots[idx]);
		if (!counter)
			continue;
		if (pmc_x86_update(counter) & BIT_ULL(model->width - 1))
			continue;
		handled++;
		pmc_x86_overflow(cpuc, counter, regs);
	}
	return handled;
}

/*
 * Global status: stop our counters, then acknowledge and handle our
 * status bits until none is left, as new overflows may set more. A bit
 * of a counter that stopped is a late PMI: claimed, nothing to sample.
 * Every other bit, of the global control and of the status, is someone
 * else's (perf's fixed counters, the watchdog's, a guest's): left as
 * it is.
 */
static int pmc_x86_ack_status(struct pmc_x86_cpu *cpuc, struct pt_regs *regs)
{
	const struct pmc_x86_model *model = pmc_x86_model;
	unsigned long active = READ_ONCE(cpuc->active);
	u64 mine = active | xchg(&cpuc->stale, 0);
	struct pmc_counter *counter;
	unsigned long status;
	int idx, loops = 0, handled = 0;
	u64 ctrl = 0;

	if (active) {
		ctrl = pmc_x86_rd(model->global_ctrl);
		pmc_x86_wr(model->global_ctrl, ctrl & ~(u64)active);
	}
	while ((status = pmc_x86_rd(model->global_status) & mine)) {
		if (++loops > PMC_X86_MAX_NMI_LOOPS) {
			pr_warn_once("overflow status %#lx stuck: cleared\n",
				     status);
			pmc_x86_wr(model->global_ack, mine);
			break;
		}
		pmc_x86_wr(model->global_ack, status);
		for_each_set_bit(idx, &status, model->nr_counters) {
			handled++;
			counter = READ_ONCE(cpuc->slots[idx]);
			if (!counter || !test_bit(idx, &cpuc->active))
				continue;
			pmc_x86_update(counter);
			pmc_x86_overflow(cpuc, counter, regs);
		}
	}
	if (active)
		pmc_x86_wr(model->global_ctrl, ctrl);
	return handled;
}

/* No global status, and the NMI found nothing: a late PMI of ours? */
static int pmc_x86_claim_late(struct pmc_x86_cpu *cpuc)
{
	if (!atomic_read(&cpuc->late_pmis))
		return 0;
	if (time_after(jiffies, READ_ONCE(cpuc->late_until))) {
		atomic_set(&cpuc->late_pmis, 0);
		return 0;
	}
	return atomic_dec_if_positive(&cpuc->late_pmis) >= 0;
}

/*
 * Returns the overflows handled: more than one lets the NMI core swallow
 * a back-to-back NMI that they had latched. Without a global status, a
 * PMI of a counter that was stopped while it had overflowed, or whose
 * overflow an earlier NMI handled, finds nothing: each such PMI is
 * claimed once, within PMC_X86_LATE_MS (AMD perf keeps a 100 ms
 * window), so that it does not become an unknown NMI (a panic with
 * unknown_nmi_panic). Only that many: the other NMIs that find nothing
 * are someone else's.
 */
static int pmc_x86_nmi(unsigned int cmd, struct pt_regs *regs)
{
	struct pmc_x86_cpu *cpuc = this_cpu_ptr(&pmc_x86_cpu);
	bool global = pmc_x86_model->global_status;
	int handled;

	/* Nothing of ours on this CPU: not ours, and no MSR touched. */
	if (!READ_ONCE(cpuc->active) && !READ_ONCE(cpuc->stale) &&
	    !atomic_read(&cpuc->late_pmis))
		return NMI_DONE;
	cpuc->nmi_mark = local_clock();
	cpuc->nmi_last = NULL;
	if (global) {
		handled = pmc_x86_ack_status(cpuc, regs);
	} else {
		handled = pmc_x86_poll_counters(cpuc, regs);
		if (handled > 1)
			pmc_x86_late_pmis(cpuc, handled - 1);
		else if (!handled)
			handled = pmc_x86_claim_late(cpuc);
	}
	if (pmc_x86_msr->nmi_end)
		pmc_x86_msr->nmi_end();
	/* Our PMI: the APIC masked LVTPC when it delivered it. */
	if (handled && !pmc_x86_emulated)
		apic_write(APIC_LVTPC, APIC_DM_NMI);
	if (cpuc->nmi_last)	/* the status writes and the re-arm */
		pmc_overflow_took(cpuc->nmi_last,
				  local_clock() - cpuc->nmi_mark);
	return handled ?: NMI_DONE;
}

/*
 * Throttling (kernel/events-lite/throttle.c): a throttled counter gets
 * the longest period at its next set_period(), and at the next tick of
 * its CPU this timer unthrottles it and restores its period. The NMI
 * cannot start a timer: an irq_work does.
 */
static void pmc_x86_throttle(struct pmc_counter *counter)
{
	irq_work_queue(&this_cpu_ptr(&pmc_x86_cpu)->throttle_work);
}

static void pmc_x86_throttle_work(struct irq_work *work)
{
	struct pmc_x86_cpu *cpuc = container_of(work, struct pmc_x86_cpu,
						throttle_work);

	if (!hrtimer_is_queued(&cpuc->unthrottle_timer))
		hrtimer_start(&cpuc->unthrottle_timer, ns_to_ktime(TICK_NSEC),
			      HRTIMER_MODE_REL_PINNED_HARD);
}

static enum hrtimer_restart pmc_x86_unthrottle_tick(struct hrtimer *timer)
{
	struct pmc_x86_cpu *cpuc = container_of(timer, struct pmc_x86_cpu,
						unthrottle_timer);
	unsigned long active = cpuc->active;
	struct pmc_counter *counter;
	int idx;

	for_each_set_bit(idx, &active, pmc_x86_model->nr_counters) {
		counter = cpuc->slots[idx];
		if (!READ_ONCE(counter->throttled))
			continue;
		pmc_x86_stop(cpuc, counter);
		pmc_unthrottle(counter);
		local64_set(&counter->hw.period_left, pmc_x86_period(counter));
		pmc_x86_start(cpuc, counter, idx);
	}
	return HRTIMER_NORESTART;
}

/*
 * CPU hotplug STARTING, IRQs off, before any counter: only the emulated
 * PMU's power-up. The hardware's registers are perf's as much as ours;
 * a counter is set up when it is placed.
 */
static int pmc_x86_cpu_starting(unsigned int cpu)
{
	struct pmc_x86_cpu *cpuc = this_cpu_ptr(&pmc_x86_cpu);

	cpuc->stale = 0;
	atomic_set(&cpuc->late_pmis, 0);
	cpuc->lvtpc_set = false;
	if (pmc_x86_msr->cpu_starting)
		pmc_x86_msr->cpu_starting();
	return 0;
}

/* CPU hotplug DYING: its counters are gone; its timer must not move. */
static int pmc_x86_cpu_dying(unsigned int cpu)
{
	hrtimer_try_to_cancel(&this_cpu_ptr(&pmc_x86_cpu)->unthrottle_timer);
	if (pmc_x86_msr->cpu_dying)
		pmc_x86_msr->cpu_dying();
	return 0;
}

static int pmc_x86_init_counter(struct pmc_counter *counter)
{
	const struct pmc_x86_model *model = pmc_x86_model;
	struct pmc_attr *attr = &counter->attr;
	u64 sel;
	int ret;

	ret = pmc_x86_event_config(model, attr->config, &sel);
	if (ret)
		return ret;
	if (!attr->exclude_user)
		sel |= PMC_X86_SEL_USR;
	if (!attr->exclude_kernel)
		sel |= PMC_X86_SEL_OS;
	/* Counting counters take an interrupt too, to fold before a wrap. */
	counter->hw.sel = sel | PMC_X86_SEL_INT;
	counter->hw.idx = -1;
	local64_set(&counter->hw.period_left, pmc_x86_period(counter));
	return 0;
}

/*
 * rdpmc from user space, through page 0 (userpage.c): a task that maps
 * the page of a hardware counter it opened on itself may execute rdpmc
 * (CR4.PCE) while the mapping lasts, as perf lets a task that maps a
 * perf event's page: both count in the same mm->context field, so that
 * switch_mm sets or clears CR4.PCE for either, and perf's sysfs rdpmc
 * setting (0: never, 2: always) governs both.
 *
 * CR4.PCE lets the task read every counter register of its CPU. Before
 * such a task runs, the counters events-lite stopped with a count in
 * them are zeroed (pmc_x86_clear_dirty_counters()), as perf zeroes its
 * own: it reads no other task's counts. The counters running while it
 * does are its own, or this CPU's per-CPU counters, which perf's rdpmc
 * tasks see in the same way. The emulated PMU keeps its counts in
 * memory, where rdpmc cannot reach (and QEMU TCG raises #UD for it): it
 * offers no index, but sets CR4.PCE all the same, so that the path that
 * sets it can be tested.
 */
static int pmc_x86_user_index(struct pmc_counter *counter, u16 *width)
{
	if (pmc_x86_emulated || !(cr4_read_shadow() & X86_CR4_PCE))
		return 0;
	*width = pmc_x86_model->width;
	return READ_ONCE(counter->hw.idx) + 1;
}

static void pmc_x86_mapped(struct mm_struct *mm)
{
	/* one mapping at a time per mm (mmap_lock): see perf's */
	mmap_assert_write_locked(mm);
	if (atomic_inc_return(&mm->context.perf_rdpmc_allowed) == 1)
		on_each_cpu_mask(mm_cpumask(mm), cr4_update_pce, NULL, 1);
}

static void pmc_x86_unmapped(struct mm_struct *mm)
{
	if (atomic_dec_and_test(&mm->context.perf_rdpmc_allowed))
		on_each_cpu_mask(mm_cpumask(mm), cr4_update_pce, NULL, 1);
}

/*
 * A task that may execute rdpmc is about to run on this CPU (switch_mm,
 * or the IPI that sets CR4.PCE); IRQs off. Zero the counters that hold
 * a stopped counter's count. One given back to perf since is zeroed if
 * it can be held again; if perf holds it, it is perf's to program.
 */
void pmc_x86_clear_dirty_counters(void)
{
	struct pmc_x86_cpu *cpuc = this_cpu_ptr(&pmc_x86_cpu);
	unsigned long dirty = cpuc->dirty & ~cpuc->active;
	int idx;

	if (!dirty)
		return;
	for_each_set_bit(idx, &dirty, pmc_x86_model->nr_counters) {
		if (!pmc_x86_hold(idx))
			continue;
		pmc_x86_wr(pmc_x86_ctr_msr(pmc_x86_model, idx), 0);
		pmc_x86_unhold(idx);
	}
	cpuc->dirty &= cpuc->active;
}

static const struct pmc_pmu pmc_x86_pmu = {
	.init		= pmc_x86_init_counter,
	.add		= pmc_x86_add,
	.del		= pmc_x86_del,
	.read		= pmc_x86_read,
	.validate_group	= pmc_x86_validate_group,
	.sample_read	= pmc_x86_sample_read,
	.throttle	= pmc_x86_throttle,
	.user_index	= pmc_x86_user_index,
	.mapped		= pmc_x86_mapped,
	.unmapped	= pmc_x86_unmapped,
	.max_period	= pmc_x86_freq_max_period,
};

/* This CPU as CPUID describes its PMU. */
static void __init pmc_x86_read_cpu(struct pmc_x86_cpu_desc *cpu)
{
	struct cpuinfo_x86 *c = &boot_cpu_data;
	unsigned int ecx, edx;

	cpu->vendor = c->x86_vendor;
	cpu->family = c->x86;
	cpu->perfctr_core = boot_cpu_has(X86_FEATURE_PERFCTR_CORE);
	cpu->arch_perfmon = boot_cpu_has(X86_FEATURE_ARCH_PERFMON);
	cpu->hybrid = boot_cpu_has(X86_FEATURE_HYBRID_CPU);
	if (cpu->arch_perfmon)
		cpuid(0xa, &cpu->leaf_a_eax, &cpu->leaf_a_ebx, &ecx, &edx);
	if (boot_cpu_has(X86_FEATURE_PERFMON_V2))
		cpuid(0x80000022, &cpu->ext_22_eax, &cpu->ext_22_ebx,
		      &ecx, &edx);
}

/*
 * A counter that does not keep a written value means no PMU (QEMU TCG
 * has none) or one we cannot drive. Probe the last counter, the one the
 * NMI watchdog does not use; if it is reserved, someone drives it.
 */
static bool pmc_x86_probe(const struct pmc_x86_model *model)
{
	u32 msr = pmc_x86_ctr_msr(model, model->nr_counters - 1);
	u64 val, old;
	bool ok;

	if (!model->nr_counters || model->width < 32)
		return false;
	if (!reserve_perfctr_nmi(msr))
		return true;
	ok = !rdmsrq_safe(msr, &old) && !wrmsrq_safe(msr, 0x5a5a5) &&
	     !rdmsrq_safe(msr, &val) && val == 0x5a5a5;
	if (ok)
		wrmsrq_safe(msr, old);
	release_perfctr_nmi(msr);
	return ok;
}

static int __init pmc_x86_init(void)
{
	const struct pmc_x86_cpu_desc *emu = NULL;
	const struct pmc_x86_model *model;
	struct pmc_x86_cpu_desc cpu = { };
	int ret, i;

	if (!pmc_direct_pmu_allowed()) {
		pr_info("the PMU is left to perf (pmc_pmu=direct drives it here)\n");
		return 0;
	}
	if (pmc_x86_emu_name[0]) {
		emu = pmc_x86_emu_cpu(pmc_x86_emu_name);
		if (!emu) {
			pr_err("pmc_emu=%s: unknown CPU (p6, k7, fam15h, fam17h, archperf, zen4)\n",
			       pmc_x86_emu_name);
			return 0;
		}
		if (!IS_ENABLED(CONFIG_PMC_X86_EMU)) {
			pr_err("pmc_emu= needs CONFIG_PMC_X86_EMU\n");
			return 0;
		}
	} else {
		pmc_x86_read_cpu(&cpu);
	}
	if (!emu && cpu.hybrid) {
		pr_info("hybrid CPU: its core types have different PMUs, which events-lite does not drive yet; hardware counters return ENODEV\n");
		return 0;
	}
	model = pmc_x86_model_for(emu ?: &cpu, &pmc_x86_cpuid_model);
	if (!model) {
		pr_info("no known PMU: hardware counters return ENODEV\n");
		return 0;
	}
#ifdef CONFIG_PMC_X86_EMU
	if (emu) {
		pmc_x86_msr = pmc_x86_emu_setup(model);
		pmc_x86_emulated = true;
		pr_info("EMULATED %s CPU, a test model, not hardware: %s PMU, %d counters, %d bits\n",
			emu->name, model->name, model->nr_counters,
			model->width);
	}
#endif
	if (!emu) {
		if (!pmc_x86_probe(model)) {
			pr_info("no usable hardware PMU: hardware counters return ENODEV\n");
			return 0;
		}
		pmc_x86_msr = &pmc_x86_real_msr;
		pr_info("%s PMU: %d counters, %d bits\n", model->name,
			model->nr_counters, model->width);
	}
	pmc_x86_model = model;
	for_each_possible_cpu(i) {
		struct pmc_x86_cpu *cpuc = per_cpu_ptr(&pmc_x86_cpu, i);

		cpuc->throttle_work = IRQ_WORK_INIT_HARD(pmc_x86_throttle_work);
		hrtimer_setup(&cpuc->unthrottle_timer, pmc_x86_unthrottle_tick,
			      CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED_HARD);
	}
	ret = cpuhp_setup_state(CPUHP_AP_PMC_X86_STARTING,
				"x86/events-lite:starting",
				pmc_x86_cpu_starting, pmc_x86_cpu_dying);
	if (ret) {
		pr_err("CPU hotplug state: %d; hardware counters return ENODEV\n",
		       ret);
		return 0;
	}
	register_nmi_handler(NMI_LOCAL, pmc_x86_nmi, 0, "pmc_lite");
	pmc_register_hw_pmu(&pmc_x86_pmu);
	return 0;
}
device_initcall(pmc_x86_init);
