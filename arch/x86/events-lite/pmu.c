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
 * are stopped as a whole in the NMI and acknowledged until the status
 * is clear; older ones are polled counter by counter.
 *
 * Each CPU is set up (event selects cleared, global enables set, LVTPC
 * pointed at the NMI) from a CPU hotplug STARTING state, so that CPUs
 * that come online later or after resume are set up too, before the
 * core schedules counters on them.
 *
 * Counters are reserved through the perfctr reservation that x86 perf
 * and the NMI watchdog use (reserve_perfctr_nmi()), from the first
 * hardware counter to the last, so both subsystems never drive the same
 * counter: the second one gets EBUSY. With the hardlockup detector on,
 * its perf counter holds one counter and pmc_open() of a hardware event
 * fails with EBUSY until it is turned off (nmi_watchdog=0).
 */
#define pr_fmt(fmt) "events-lite: " fmt

#include <linux/bitops.h>
#include <linux/cpufeature.h>
#include <linux/cpuhotplug.h>
#include <linux/hrtimer.h>
#include <linux/init.h>
#include <linux/irq_work.h>
#include <linux/jiffies.h>
#include <linux/mutex.h>
#include <linux/nmi.h>
#include <linux/percpu.h>
#include <linux/sched/clock.h>
#include <linux/pmc.h>
#include <linux/processor.h>
#include <linux/smp.h>
#include <asm/apic.h>
#include <asm/cpuid/api.h>
#include <asm/msr.h>

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
	struct pmc_counter *slots[PMC_X86_MAX_COUNTERS];
	unsigned long active;		/* published slots */
	/* written by stop() and the NMI, read by the NMI; own CPU only */
	unsigned long late_until;	/* jiffies */
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

static DEFINE_MUTEX(pmc_x86_reserve_mutex);
/* pmc_x86_reserve_mutex and the CPU hotplug lock; read by CPU hotplug */
static unsigned int pmc_x86_users;

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

static const struct pmc_x86_msr_ops pmc_x86_real_msr = {
	.read	= pmc_x86_real_read,
	.write	= pmc_x86_real_write,
};

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
 * Program the counter to overflow at the end of its period: write minus
 * the events left.
 */
static void pmc_x86_set_period(struct pmc_counter *counter)
{
	const struct pmc_x86_model *model = pmc_x86_model;
	s64 left = local64_read(&counter->hw.period_left);
	u64 val;

	left = pmc_x86_next_left(model, left,
				 pmc_next_period(counter, counter->hw.period),
				 READ_ONCE(counter->throttled));
	local64_set(&counter->hw.period_left, left);

	val = -(u64)left & GENMASK_ULL(model->width - 1, 0);
	local64_set(&counter->hw.prev_count, val);
	pmc_x86_wr(pmc_x86_ctr_msr(model, counter->hw.idx), val);
}

/*
 * A counter must not count a KVM guest's execution for its host task. On
 * AMD that is the HostOnly bit, but only with SVM on: with EFER.SVME
 * clear, a HostOnly counter counts nothing. Intel needs KVM to switch
 * GLOBAL_CTRL at VM entry, which it does for perf only.
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
		sel = counter->hw.sel | pmc_x86_host_only();
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

/* An NMI of this CPU that finds nothing soon is a late PMI: claim it. */
static void pmc_x86_open_late_window(struct pmc_x86_cpu *cpuc)
{
	unsigned long until = jiffies + msecs_to_jiffies(PMC_X86_LATE_MS);

	WRITE_ONCE(cpuc->late_until, until);
}

static void pmc_x86_start(struct pmc_x86_cpu *cpuc,
			  struct pmc_counter *counter, int idx)
{
	counter->hw.idx = idx;
	pmc_x86_set_period(counter);
	WRITE_ONCE(cpuc->slots[idx], counter);
	barrier();		/* the NMI sees a programmed counter */
	__set_bit(idx, &cpuc->active);
	pmc_x86_write_sels(cpuc, idx);
	/* Throttled elsewhere: this CPU's tick lets it sample again. */
	if (READ_ONCE(counter->throttled))
		irq_work_queue(&cpuc->throttle_work);
}

static void pmc_x86_stop(struct pmc_x86_cpu *cpuc, struct pmc_counter *counter)
{
	int idx = counter->hw.idx;

	/* Its PMI may be in flight, and arrive to find it gone. */
	pmc_x86_open_late_window(cpuc);
	__clear_bit(idx, &cpuc->active);
	pmc_x86_write_sels(cpuc, idx);
	barrier();		/* the NMI is done with the slot */
	WRITE_ONCE(cpuc->slots[idx], NULL);
	pmc_x86_update(counter);
	counter->hw.idx = -1;
}

/*
 * Put @counter on this CPU's PMU. The counters already there may have
 * to move to make room for a constrained event: solve the assignment
 * for all of them, then move the ones whose counter changed.
 */
static int pmc_x86_add(struct pmc_counter *counter)
{
	const struct pmc_x86_model *model = pmc_x86_model;
	struct pmc_x86_cpu *cpuc = this_cpu_ptr(&pmc_x86_cpu);
	struct pmc_counter *list[PMC_X86_MAX_COUNTERS];
	u32 masks[PMC_X86_MAX_COUNTERS];
	int assign[PMC_X86_MAX_COUNTERS];
	int i, n = 0, idx;

	for_each_set_bit(idx, &cpuc->active, model->nr_counters)
		list[n++] = cpuc->slots[idx];
	if (n == model->nr_counters)
		return -EAGAIN;
	list[n++] = counter;
	for (i = 0; i < n; i++)
		masks[i] = pmc_x86_counter_mask(model, list[i]->hw.sel);
	if (pmc_x86_assign(masks, n, model->nr_counters, assign))
		return -EAGAIN;

	for (i = 0; i < n - 1; i++)
		if (assign[i] != list[i]->hw.idx)
			pmc_x86_stop(cpuc, list[i]);
	for (i = 0; i < n; i++)
		if (list[i]->hw.idx < 0)
			pmc_x86_start(cpuc, list[i], assign[i]);
	return 0;
}

static void pmc_x86_del(struct pmc_counter *counter)
{
	pmc_x86_stop(this_cpu_ptr(&pmc_x86_cpu), counter);
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
	pmc_x86_set_period(counter);
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
 * Global status: stop every counter, then acknowledge and handle the
 * status bits until none is left, as new overflows may set more. A bit
 * whose counter is gone is a late PMI: claimed, nothing to sample.
 */
static int pmc_x86_ack_status(struct pmc_x86_cpu *cpuc, struct pt_regs *regs)
{
	const struct pmc_x86_model *model = pmc_x86_model;
	u64 all = GENMASK_ULL(model->nr_counters - 1, 0);
	struct pmc_counter *counter;
	unsigned long status;
	int idx, loops = 0, handled = 0;

	pmc_x86_wr(model->global_ctrl, 0);
	while ((status = pmc_x86_rd(model->global_status) & all)) {
		if (++loops > PMC_X86_MAX_NMI_LOOPS) {
			pr_warn_once("overflow status %#lx stuck: cleared\n",
				     status);
			pmc_x86_wr(model->global_ack, all);
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
	pmc_x86_wr(model->global_ctrl, all);
	return handled;
}

/*
 * Returns the overflows handled: more than one lets the NMI core swallow
 * a back-to-back NMI that they had latched. Without a global status, a
 * PMI of a counter that was stopped or moved while it was in flight
 * finds nothing; one that comes within PMC_X86_LATE_MS of a stop or
 * of a handled overflow is claimed too (AMD perf keeps a 100 ms window
 * the same way), so that it does not become an unknown NMI (a panic with
 * unknown_nmi_panic). That window also swallows unrelated unknown
 * NMIs that come within it.
 */
static int pmc_x86_nmi(unsigned int cmd, struct pt_regs *regs)
{
	struct pmc_x86_cpu *cpuc = this_cpu_ptr(&pmc_x86_cpu);
	int handled;

	cpuc->nmi_mark = local_clock();
	cpuc->nmi_last = NULL;
	if (pmc_x86_model->global_status)
		handled = pmc_x86_ack_status(cpuc, regs);
	else
		handled = pmc_x86_poll_counters(cpuc, regs);
	if (pmc_x86_msr->nmi_end)
		pmc_x86_msr->nmi_end();
	if (!pmc_x86_emulated)	/* the APIC masks LVTPC when it delivers */
		apic_write(APIC_LVTPC, APIC_DM_NMI);
	if (cpuc->nmi_last)	/* the status writes and the re-arm */
		pmc_overflow_took(cpuc->nmi_last,
				  local_clock() - cpuc->nmi_mark);
	if (handled) {
		pmc_x86_open_late_window(cpuc);
		return handled;
	}
	if (!pmc_x86_model->global_status &&
	    time_before_eq(jiffies, READ_ONCE(cpuc->late_until)))
		return NMI_HANDLED;
	return NMI_DONE;
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
		local64_set(&counter->hw.period_left, counter->hw.period);
		pmc_x86_start(cpuc, counter, idx);
	}
	return HRTIMER_NORESTART;
}

/* IRQs off, on the CPU: no counter of ours is on it yet. */
static void pmc_x86_cpu_setup(void *unused)
{
	const struct pmc_x86_model *model = pmc_x86_model;
	u64 all = GENMASK_ULL(model->nr_counters - 1, 0);
	int idx;

	for (idx = 0; idx < model->nr_counters; idx++)
		pmc_x86_wr(pmc_x86_sel_msr(model, idx), 0);
	/* Firmware, or a CPU coming up, may leave the global enables clear. */
	if (model->global_ctrl) {
		pmc_x86_wr(model->global_ack, all);
		pmc_x86_wr(model->global_ctrl, all);
	}
	if (!pmc_x86_emulated)
		apic_write(APIC_LVTPC, APIC_DM_NMI);
}

/* CPU hotplug STARTING: the CPU runs with IRQs off, before any counter. */
static int pmc_x86_cpu_starting(unsigned int cpu)
{
	if (pmc_x86_msr->cpu_starting)
		pmc_x86_msr->cpu_starting();
	/* The counters are set up only while reserved from perf. */
	if (READ_ONCE(pmc_x86_users))
		pmc_x86_cpu_setup(NULL);
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

static void pmc_x86_unreserve(int nr)
{
	const struct pmc_x86_model *model = pmc_x86_model;

	while (nr--) {
		release_evntsel_nmi(pmc_x86_sel_msr(model, nr));
		release_perfctr_nmi(pmc_x86_ctr_msr(model, nr));
	}
}

/* Take the counters from the shared reservation; EBUSY if perf has one. */
static int pmc_x86_reserve(void)
{
	const struct pmc_x86_model *model = pmc_x86_model;
	int ret = 0, idx;

	/* No CPU comes up between the count and the setup of all CPUs. */
	cpus_read_lock();
	mutex_lock(&pmc_x86_reserve_mutex);
	if (pmc_x86_users++)
		goto out;
	for (idx = 0; idx < model->nr_counters && !pmc_x86_emulated; idx++) {
		if (!reserve_perfctr_nmi(pmc_x86_ctr_msr(model, idx)))
			break;
		if (!reserve_evntsel_nmi(pmc_x86_sel_msr(model, idx))) {
			release_perfctr_nmi(pmc_x86_ctr_msr(model, idx));
			break;
		}
	}
	if (!pmc_x86_emulated && idx < model->nr_counters) {
		pmc_x86_unreserve(idx);
		pmc_x86_users--;
		ret = -EBUSY;
		goto out;
	}
	on_each_cpu(pmc_x86_cpu_setup, NULL, 1);
out:
	mutex_unlock(&pmc_x86_reserve_mutex);
	cpus_read_unlock();
	return ret;
}

static void pmc_x86_release(void)
{
	cpus_read_lock();
	mutex_lock(&pmc_x86_reserve_mutex);
	if (!--pmc_x86_users && !pmc_x86_emulated)
		pmc_x86_unreserve(pmc_x86_model->nr_counters);
	mutex_unlock(&pmc_x86_reserve_mutex);
	cpus_read_unlock();
}

static int pmc_x86_init_counter(struct pmc_counter *counter)
{
	const struct pmc_x86_model *model = pmc_x86_model;
	struct pmc_attr *attr = &counter->attr;
	u64 sel, max = pmc_x86_max_period(model);
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
	counter->hw.period = attr->irq_period ? min(attr->irq_period, max) : max;
	local64_set(&counter->hw.period_left, counter->hw.period);
	return pmc_x86_reserve();
}

static void pmc_x86_destroy(struct pmc_counter *counter)
{
	pmc_x86_release();
}

static const struct pmc_pmu pmc_x86_pmu = {
	.init		= pmc_x86_init_counter,
	.destroy	= pmc_x86_destroy,
	.add		= pmc_x86_add,
	.del		= pmc_x86_del,
	.read		= pmc_x86_read,
	.validate_group	= pmc_x86_validate_group,
	.sample_read	= pmc_x86_sample_read,
	.throttle	= pmc_x86_throttle,
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
