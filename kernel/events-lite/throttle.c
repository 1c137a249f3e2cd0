// SPDX-License-Identifier: GPL-2.0
/*
 * events-lite overflow throttling.
 *
 * Each counter may take kernel.pmc_max_sample_rate samples a second,
 * counted per tick: a counter that overflows once more in a tick is
 * throttled. It keeps counting but takes no samples, and its backend
 * makes its interrupts rare (the x86 driver programs the longest
 * period), until it is unthrottled at a later tick. The reader sees a
 * PMC_EVENT_THROTTLE and PMC_EVENT_UNTHROTTLE record pair. Without
 * this, a period of 1 on cycles gives back-to-back NMIs, each writing a
 * sample and walking the user stack: a hard lockup on real hardware.
 * The count is the counter's own, as perf's is: a user's storm of
 * counters never throttles another user's sampler.
 *
 * A rate alone does not bound the time: on a slow CPU, or a kernel with
 * heavy debugging, many counters at that rate take longer than the
 * tick, and their interrupts then leave the CPU nothing else. So the
 * time each overflow interrupt takes (pmc_overflow_took(): the NMI or
 * the clock's timer callback) and each wakeup a sample queues
 * (pmc_wakeup_took(): wake_up_all() and SIGIO in an irq_work) is added
 * up per CPU per tick, and once it passes
 * kernel.pmc_cpu_time_max_percent of the tick (25 by default; 0 or 100
 * turn the bound off) the counters that overflow in an interrupt are
 * throttled for the rest of the tick. Only the counters whose owner
 * (the user who opened them) used at least an equal share of that time
 * among the owners seen in the tick are throttled: the one who spends
 * the CPU is stopped, and another user's 1 kHz sampler goes on. The
 * bound adapts by measuring, as perf's does: cheap overflows get many
 * samples a tick, costly ones (deep call chains, SIGIO) few. Software
 * events that sample in the task that caused them (page faults) are
 * not bounded in time: their cost slows that task and nothing else's.
 *
 * The per-tick sums are per CPU, kept by the overflow paths of that CPU
 * in hardirq and NMI. An NMI that interrupts an update can make a sum
 * miss, or charge to the wrong owner, one overflow's time. Each owner
 * stops at its share of the total so far, so the bound is exceeded by
 * at most an overflow per counter and the owners' staggered shares (a
 * tick of n owners at most about 1 + 1/2 + ... + 1/n limits). More
 * owners in a tick than PMC_BUDGET_OWNERS share the last share.
 */
#define pr_fmt(fmt) "events-lite: " fmt

#include <linux/hardirq.h>
#include <linux/jiffies.h>
#include <linux/math64.h>
#include <linux/percpu.h>
#include <linux/timekeeping.h>
#include <linux/uidgid.h>

#include "internal.h"

int sysctl_pmc_max_sample_rate __read_mostly = 100000;
int sysctl_pmc_cpu_time_max_percent __read_mostly = 25;

#define PMC_BUDGET_OWNERS	4

struct pmc_budget {
	unsigned long tick;	/* jiffies the sums are for */
	u64 ns;			/* overflow interrupts and wakeups in it */
	unsigned int nr_owners;
	struct {
		kuid_t uid;
		u64 ns;		/* this owner's part of ns */
	} owners[PMC_BUDGET_OWNERS];
};

static DEFINE_PER_CPU(struct pmc_budget, pmc_budget);

/* The budget of this tick, started afresh at the first use in it. */
static struct pmc_budget *pmc_budget_now(unsigned long now)
{
	struct pmc_budget *budget = this_cpu_ptr(&pmc_budget);

	if (READ_ONCE(budget->tick) != now) {
		budget->ns = 0;
		budget->nr_owners = 0;
		WRITE_ONCE(budget->tick, now);
	}
	return budget;
}

/* @uid's share of @budget, added to it if new. */
static u64 *pmc_owner_ns(struct pmc_budget *budget, kuid_t uid)
{
	unsigned int i, nr = min(READ_ONCE(budget->nr_owners),
				 PMC_BUDGET_OWNERS);

	for (i = 0; i < nr; i++)
		if (uid_eq(budget->owners[i].uid, uid))
			return &budget->owners[i].ns;
	if (nr == PMC_BUDGET_OWNERS)
		return &budget->owners[nr - 1].ns;
	budget->owners[nr].uid = uid;
	budget->owners[nr].ns = 0;
	WRITE_ONCE(budget->nr_owners, nr + 1);
	return &budget->owners[nr].ns;
}

/* The time a tick may spend in overflows, or 0 if unbounded. */
static u64 pmc_budget_limit(void)
{
	unsigned int pct = READ_ONCE(sysctl_pmc_cpu_time_max_percent);

	if (!pct || pct >= 100)
		return 0;
	return (u64)TICK_NSEC * pct / 100;
}

static void pmc_charge(struct pmc_counter *counter, u64 ns)
{
	struct pmc_budget *budget = pmc_budget_now(jiffies);

	budget->ns += ns;
	*pmc_owner_ns(budget, pmc_counter_owner(counter)) += ns;
}

/**
 * pmc_overflow_took() - account the time one overflow interrupt took
 * @counter: the counter that overflowed
 * @ns: from the start of the interrupt (or of the counter's part of
 *	it) to the end of its sample
 *
 * Called by the backends on the overflowing CPU, in hardirq or NMI.
 */
void pmc_overflow_took(struct pmc_counter *counter, u64 ns)
{
	pmc_charge(counter, ns);
}

/**
 * pmc_wakeup_took() - account a wakeup that a sample of @counter queued
 * @counter: the counter whose reader was woken
 * @ns: how long the wakeup work took
 *
 * Called from the wakeup irq_work (hardirq; a per-CPU kthread on
 * PREEMPT_RT), on the CPU of the record that queued it.
 */
void pmc_wakeup_took(struct pmc_counter *counter, u64 ns)
{
	unsigned long flags;

	/* On PREEMPT_RT, the overflow paths of this CPU must not nest. */
	local_irq_save(flags);
	pmc_charge(counter, ns);
	local_irq_restore(flags);
}

/*
 * Has @counter's owner used its share of a tick over the time bound?
 * Only overflows that interrupt are bounded (see the top).
 */
static bool pmc_over_time(struct pmc_counter *counter, unsigned long now)
{
	u64 limit = pmc_budget_limit();
	struct pmc_budget *budget;
	unsigned int nr;

	if (!limit || (!in_nmi() && !in_hardirq()))
		return false;
	budget = pmc_budget_now(now);
	if (budget->ns < limit)
		return false;
	nr = max(READ_ONCE(budget->nr_owners), 1U);
	if (*pmc_owner_ns(budget, pmc_counter_owner(counter)) < div_u64(limit, nr))
		return false;
	pr_info_ratelimited("CPU %d: overflows took %llu ns of a tick (kernel.pmc_cpu_time_max_percent=%u): throttling uid %u\n",
			    smp_processor_id(), budget->ns,
			    READ_ONCE(sysctl_pmc_cpu_time_max_percent),
			    from_kuid(&init_user_ns, pmc_counter_owner(counter)));
	return true;
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
	atomic64_inc(&counter->throttles);
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
 * whose throttle is from an earlier tick, and throttles one that is over
 * its rate or over its owner's share of the time bound.
 */
bool pmc_throttle_sample(struct pmc_counter *counter)
{
	unsigned int rate = READ_ONCE(sysctl_pmc_max_sample_rate);
	unsigned long now = jiffies;

	if (READ_ONCE(counter->throttled)) {
		if (READ_ONCE(counter->throttle_tick) == now)
			return false;
		pmc_unthrottle(counter);
	}
	if (counter->sample_tick != now) {
		counter->sample_tick = now;
		counter->sample_count = 0;
	}
	/* At least one sample a tick: a rate under HZ still samples. */
	if (++counter->sample_count <= max(rate / HZ, 1U) &&
	    !pmc_over_time(counter, now))
		return true;
	pmc_throttle(counter, now);
	return false;
}
