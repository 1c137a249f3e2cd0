// SPDX-License-Identifier: GPL-2.0
/*
 * events-lite overflow throttling.
 *
 * Each CPU may take kernel.pmc_max_sample_rate samples a second, counted
 * per tick: a counter that overflows once this CPU's budget for the
 * current tick is spent is throttled. It keeps counting but takes no
 * samples, and its backend makes its interrupts rare (the x86 driver
 * programs the longest period), until it is unthrottled at a later
 * tick. The reader sees a PMC_EVENT_THROTTLE and PMC_EVENT_UNTHROTTLE
 * record pair. Without this, a period of 1 on cycles gives back-to-back
 * NMIs, each writing a sample and walking the user stack: a hard lockup
 * on real hardware.
 *
 * The budget is per CPU and per tick, kept in the overflow path, which
 * runs in process context, hardirq and NMI on its own CPU. An NMI that
 * interrupts the update on its CPU can make the count miss by one; the
 * limit stays within a sample per nesting level per tick.
 *
 * A count alone does not bound the time: on a slow CPU, or a kernel
 * with heavy debugging, 400 samples a tick can take longer than the
 * tick, and a short period then leaves the CPU nothing but its own
 * overflow interrupts to handle. So the backends also report how long
 * each overflow interrupt took (pmc_overflow_took()), and the samples
 * a tick allows in interrupts are lowered for every CPU until they fit in
 * kernel.pmc_cpu_time_max_percent of a tick (25 by default; 0 or 100
 * turn the bound off), as perf does with its own sysctl of that kind.
 * The cap rises again, an eighth at a time, as overflows get cheaper;
 * writing either sysctl starts afresh.
 *
 * An overflow costs more than its handler: the wakeup it queues (an
 * irq_work that wakes poll() and sends SIGIO) is charged to the next
 * overflow on the CPU in the same tick (pmc_wakeup_took()). Timing the
 * handler alone let one task-clock with a 100 us period and SIGIO per
 * sample keep a debug kernel's task in its interrupts and wakeups.
 */
#define pr_fmt(fmt) "events-lite: " fmt

#include <linux/hardirq.h>
#include <linux/jiffies.h>
#include <linux/math64.h>
#include <linux/percpu.h>
#include <linux/sysctl.h>
#include <linux/timekeeping.h>

#include "internal.h"

static int sysctl_pmc_max_sample_rate __read_mostly = 100000;
static int sysctl_pmc_cpu_time_max_percent __read_mostly = 25;
/* Samples a tick may take, as the time they took allows; any context. */
static unsigned int pmc_tick_cap __read_mostly = UINT_MAX;

struct pmc_budget {
	unsigned long tick;	/* jiffies the count is for */
	unsigned int used;	/* samples taken in that tick */
	u64 avg_ns;		/* an overflow's cost, averaged over 8 */
	unsigned long wake_tick;	/* jiffies wake_ns is for */
	u64 wake_ns;		/* wakeups in that tick, for the next overflow */
};

static DEFINE_PER_CPU(struct pmc_budget, pmc_budget);

/*
 * At least one sample a tick: a rate under HZ still samples. The time
 * bound is for overflows that interrupt (NMI, a clock's hrtimer): a
 * software event samples in the task that caused it, whose progress
 * its cost slows down and nothing else's.
 */
static unsigned int pmc_samples_per_tick(void)
{
	unsigned int rate = READ_ONCE(sysctl_pmc_max_sample_rate);

	if (!in_nmi() && !in_hardirq())
		return max(rate / HZ, 1U);
	return clamp(rate / HZ, 1U, READ_ONCE(pmc_tick_cap));
}

/**
 * pmc_overflow_took() - account the time one overflow took
 * @ns: from the start of the interrupt (or event) to the end of its
 *	sample; the wakeups this CPU ran in this tick are added
 *
 * Called by the backends on the overflowing CPU, in any context, NMI
 * included. Lowers the samples a tick allows when, at this cost, they
 * would take more than kernel.pmc_cpu_time_max_percent of the tick.
 */
void pmc_overflow_took(u64 ns)
{
	struct pmc_budget *budget = this_cpu_ptr(&pmc_budget);
	unsigned int pct = READ_ONCE(sysctl_pmc_cpu_time_max_percent);
	unsigned int cap = READ_ONCE(pmc_tick_cap);
	/* taken even when the bound is off, so that none piles up */
	u64 avg, fit, wake = this_cpu_xchg(pmc_budget.wake_ns, 0);
	unsigned long now = jiffies;

	if (!pct || pct >= 100)
		return;
	if (READ_ONCE(budget->wake_tick) == now)
		ns += min_t(u64, wake, TICK_NSEC);
	avg = budget->avg_ns - (budget->avg_ns >> 3) + (ns >> 3);
	budget->avg_ns = avg;
	fit = div64_u64((u64)TICK_NSEC * pct / 100, max_t(u64, avg, 1));
	fit = clamp_t(u64, fit, 1, UINT_MAX);
	if (fit < cap) {
		WRITE_ONCE(pmc_tick_cap, fit);
		if (fit <= cap / 2)	/* the first time, and each halving */
			pr_info_ratelimited("an overflow took %llu ns: %u samples a tick (kernel.pmc_cpu_time_max_percent=%u)\n",
					    avg, (unsigned int)fit, pct);
	} else if (cap < fit && cap < UINT_MAX) {
		WRITE_ONCE(pmc_tick_cap, min_t(u64, fit, (u64)cap + cap / 8 + 1));
	}
}

/**
 * pmc_wakeup_took() - account a wakeup that a sample queued
 * @ns: how long the wakeup work took
 *
 * Called from the wakeup irq_work (hardirq; a per-CPU kthread on
 * PREEMPT_RT), on the CPU of the record that queued it: the next
 * overflow in this tick adds it (pmc_overflow_took(), which an NMI may
 * run between any two lines here). Wakeups of an earlier tick are
 * dropped, so that a CPU's wakeups of process-context samples do not
 * pile up for an overflow much later; an NMI that takes the sum between
 * the reset and the stamp below may charge one tick's wakeups late.
 */
void pmc_wakeup_took(u64 ns)
{
	struct pmc_budget *budget = this_cpu_ptr(&pmc_budget);
	unsigned long now = jiffies;

	if (READ_ONCE(budget->wake_tick) != now) {
		this_cpu_write(pmc_budget.wake_ns, 0);
		WRITE_ONCE(budget->wake_tick, now);
	}
	this_cpu_add(pmc_budget.wake_ns, ns);
}

static void pmc_log_throttle(struct pmc_counter *counter, u32 type)
{
	struct {
		struct pmc_event_header header;
		u64 id;
		u64 time;
	} rec = {
		.header = { .type = type, .size = sizeof(rec) },
		.id = (counter->parent ?: counter)->id,
		.time = ktime_get_mono_fast_ns(),
	};
	struct pmc_rb_part part = { .buf = &rec, .len = sizeof(rec) };

	pmc_rb_write(counter, &part, 1, false);
}

static void pmc_throttle(struct pmc_counter *counter, unsigned long tick)
{
	if (cmpxchg(&counter->throttled, 0, 1))
		return;
	WRITE_ONCE(counter->throttle_tick, tick);
	pmc_log_throttle(counter, PMC_EVENT_THROTTLE);
	if (counter->pmu->throttle)
		counter->pmu->throttle(counter);
}

/**
 * pmc_unthrottle() - let a throttled counter sample again
 * @counter: the counter, throttled or not
 *
 * Any context. Backends call it at a tick after the throttle, on the
 * counter's CPU, before they restore the counter's period.
 */
void pmc_unthrottle(struct pmc_counter *counter)
{
	if (cmpxchg(&counter->throttled, 1, 0) == 1)
		pmc_log_throttle(counter, PMC_EVENT_UNTHROTTLE);
}

/*
 * pmc_throttle_sample() - may @counter's overflow write a sample?
 *
 * Called for every overflow, on the counter's CPU. Unthrottles a counter
 * whose throttle is from an earlier tick, and throttles the counter that
 * finds this CPU's budget spent.
 */
bool pmc_throttle_sample(struct pmc_counter *counter)
{
	struct pmc_budget *budget = this_cpu_ptr(&pmc_budget);
	unsigned long now = jiffies;

	if (READ_ONCE(counter->throttled)) {
		if (READ_ONCE(counter->throttle_tick) == now)
			return false;
		pmc_unthrottle(counter);
	}
	if (budget->tick != now) {
		budget->tick = now;
		budget->used = 0;
	}
	if (++budget->used <= pmc_samples_per_tick())
		return true;
	pmc_throttle(counter, now);
	return false;
}

/* A new limit starts afresh: the cap is learnt again. */
static int pmc_throttle_sysctl(const struct ctl_table *table, int write,
			       void *buffer, size_t *lenp, loff_t *ppos)
{
	int ret = proc_dointvec_minmax(table, write, buffer, lenp, ppos);

	if (!ret && write)
		WRITE_ONCE(pmc_tick_cap, UINT_MAX);
	return ret;
}

static const struct ctl_table pmc_throttle_sysctls[] = {
	{
		.procname	= "pmc_max_sample_rate",
		.data		= &sysctl_pmc_max_sample_rate,
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= pmc_throttle_sysctl,
		.extra1		= SYSCTL_ONE,
	},
	{
		.procname	= "pmc_cpu_time_max_percent",
		.data		= &sysctl_pmc_cpu_time_max_percent,
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= pmc_throttle_sysctl,
		.extra1		= SYSCTL_ZERO,
		.extra2		= SYSCTL_ONE_HUNDRED,
	},
};

static int __init pmc_throttle_init(void)
{
	register_sysctl_init("kernel", pmc_throttle_sysctls);
	return 0;
}
core_initcall(pmc_throttle_init);
