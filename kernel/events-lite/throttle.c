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
 * tick, and their overflows then leave the CPU nothing else. So the
 * time each overflow takes (pmc_overflow_took(): the NMI, the clock's
 * timer callback, or a software event's sample in process context)
 * and each wakeup a sample queues (pmc_wakeup_took(): wake_up_all()
 * and SIGIO in an irq_work) is added up per CPU per tick, and once it
 * passes kernel.pmc_cpu_time_max_percent of the tick (25 by default;
 * 0 or 100 turn the bound off) the counters that overflow are
 * throttled for the rest of the tick. Only the counters whose owner
 * (the user who opened them) used at least an equal share of that time
 * among the owners seen in the tick are throttled: the one who spends
 * the CPU is stopped, and another user's 1 kHz sampler goes on. The
 * bound adapts by measuring, as perf's does: cheap overflows get many
 * samples a tick, costly ones (deep call chains, SIGIO) few. Samples
 * in process context (a page fault's) count in their owner's share, so
 * that a user's interrupts stop sooner for them, but are not stopped
 * by it themselves: the scheduler charges their time to the task that
 * faulted, and software.c caps how many one event may write while
 * preemption is off. A lone page-fault sampler at a period of 1 would
 * otherwise be throttled wherever a sample costs a third of a fault.
 *
 * The per-tick sums are per CPU, kept by the overflow paths of that CPU
 * with IRQs off. An NMI that interrupts an update can make a sum miss,
 * or charge to the wrong owner, one overflow's time. Each owner stops
 * at its share of the total so far, so the bound is exceeded by at most
 * an overflow per counter (a few for a counter whose cost just rose:
 * charges are averaged, see pmc_counter_took()) and the owners'
 * staggered shares (a tick of n owners at most about 1 + 1/2 + ... +
 * 1/n limits); software clocks stop all of an owner's clocks of the CPU
 * at once (software.c).
 *
 * The table has PMC_BUDGET_OWNERS slots, filled in the order owners
 * first overflow in the tick. One user can act under many uids (a
 * user namespace with subordinate ids), so a full table must not let
 * one owner's spending count against another: an owner that finds no
 * slot of its own is judged by each counter's own time in the tick
 * against the same share. A sampler of a user who comes late in a
 * tick full of others is then stopped only for what it spent itself,
 * and a user with more uids than slots is still bounded per counter.
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

#define PMC_BUDGET_OWNERS	8

struct pmc_budget {
	unsigned long tick;	/* jiffies the sums are for */
	u64 ns;			/* overflows and wakeups in it */
	unsigned int nr_owners;	/* slots used, + 1 if an owner had none */
	struct pmc_owner_slot owners[PMC_BUDGET_OWNERS];	/* their ns */
};

static DEFINE_PER_CPU(struct pmc_budget, pmc_budget);

/**
 * pmc_owner_slot() - @uid's slot in a table of per-owner values
 * @slots: the table, @max slots
 * @nr: slots in use, and one more once an owner found none
 * @uid: the owner
 * @init: a new owner's value
 *
 * Return: @uid's slot, added if new, or NULL if the table is full.
 */
struct pmc_owner_slot *pmc_owner_slot(struct pmc_owner_slot *slots,
				      unsigned int *nr, unsigned int max,
				      kuid_t uid, u64 init)
{
	unsigned int i, used = min(*nr, max);

	for (i = 0; i < used; i++)
		if (uid_eq(slots[i].uid, uid))
			return &slots[i];
	if (used == max) {
		*nr = max + 1;
		return NULL;
	}
	*nr = used + 1;
	slots[used].uid = uid;
	slots[used].val = init;
	return &slots[used];
}

/* The budget of this tick, started afresh at the first use in it. */
static struct pmc_budget *pmc_budget_now(unsigned long now)
{
	struct pmc_budget *budget = this_cpu_ptr(&pmc_budget);

	if (budget->tick != now) {
		budget->ns = 0;
		budget->nr_owners = 0;
		budget->tick = now;
	}
	return budget;
}

/* @counter's own time in tick @now. */
static u64 *pmc_counter_tick_ns(struct pmc_counter *counter, unsigned long now)
{
	if (counter->sample_tick != now) {
		counter->sample_tick = now;
		counter->sample_count = 0;
		counter->tick_ns = 0;
	}
	return &counter->tick_ns;
}

/* The time a tick may spend in overflows, or 0 if unbounded. */
static u64 pmc_budget_limit(void)
{
	unsigned int pct = READ_ONCE(sysctl_pmc_cpu_time_max_percent);

	if (!pct || pct >= 100)
		return 0;
	return (u64)TICK_NSEC * pct / 100;
}

/*
 * What one of @counter's charges of @ns counts: the moving average of
 * its charges, a new counter's first at its full cost. A charge can
 * include time the CPU spent elsewhere: an NMI or a softirq in the
 * middle, or a vCPU the host stopped. Charged as it came, one such
 * stall would throttle a 1 kHz sampler that costs a thousandth of the
 * bound, as perf, which keeps the average sample length, does not. The
 * average gives each charge an eighth of what it is off by, and the
 * rest in the charges that follow, so the time is all counted, spread;
 * a counter that turns costly pays in full within a few tens of
 * overflows, and a counter closed before then took that little more.
 */
static u64 pmc_counter_took(struct pmc_counter *counter, u64 ns)
{
	u64 avg = counter->took_avg;

	avg = avg ? avg - (avg >> 3) + (ns >> 3) : ns;
	counter->took_avg = avg;
	return avg;
}

/* Add @ns, as @counter's average says, to this CPU's tick and its owner. */
static void pmc_charge(struct pmc_counter *counter, u64 ns)
{
	unsigned long now = jiffies;
	struct pmc_owner_slot *slot;
	struct pmc_budget *budget;

	/* Process context too: a hardirq's overflow must not interleave. */
	guard(irqsave)();
	ns = pmc_counter_took(counter, ns);
	budget = pmc_budget_now(now);
	budget->ns += ns;
	slot = pmc_owner_slot(budget->owners, &budget->nr_owners,
			      PMC_BUDGET_OWNERS, pmc_counter_owner(counter), 0);
	if (slot)
		slot->val += ns;
	*pmc_counter_tick_ns(counter, now) += ns;
}

/**
 * pmc_overflow_took() - account the time one overflow interrupt took
 * @counter: the counter that overflowed
 * @ns: from the start of the interrupt (or of the counter's part of
 *	it) to the end of its sample
 *
 * Called on the overflowing CPU: by the backends in hardirq or NMI, and
 * by software events in the context they happened in (software clocks
 * add their timer's cost, software.c).
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
	pmc_charge(counter, ns);
}

/**
 * pmc_owner_over_time() - has @counter's owner used its share of the tick?
 * @counter: a counter of this CPU
 * @now: jiffies
 *
 * Its share of the time bound, once the CPU's overflows passed it. An
 * owner without a slot is judged by @counter's own time (see the top).
 */
bool pmc_owner_over_time(struct pmc_counter *counter, unsigned long now)
{
	u64 limit = pmc_budget_limit(), spent;
	struct pmc_owner_slot *slot;
	struct pmc_budget *budget;

	if (!limit)
		return false;
	guard(irqsave)();
	budget = pmc_budget_now(now);
	if (budget->ns < limit)
		return false;
	slot = pmc_owner_slot(budget->owners, &budget->nr_owners,
			      PMC_BUDGET_OWNERS, pmc_counter_owner(counter), 0);
	spent = slot ? slot->val : *pmc_counter_tick_ns(counter, now);
	return spent >= div_u64(limit, budget->nr_owners);
}

/* Only overflows that interrupt are stopped by the time bound (see top). */
static bool pmc_over_time(struct pmc_counter *counter, unsigned long now)
{
	if ((!in_nmi() && !in_hardirq()) ||
	    !pmc_owner_over_time(counter, now))
		return false;
	pr_info_ratelimited("CPU %d: overflows took %llu ns of a tick (kernel.pmc_cpu_time_max_percent=%u): throttling uid %u\n",
			    smp_processor_id(), this_cpu_read(pmc_budget.ns),
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
		.id = pmc_counter_original(counter)->id,
		.time = ktime_get_mono_fast_ns(),
	};
	struct pmc_rb_part part = { .buf = &rec, .len = sizeof(rec) };

	pmc_rb_write(counter, &part, 1, false);
}

/**
 * pmc_throttle() - stop @counter's samples until a later tick
 * @counter: the counter
 * @tick: jiffies now
 *
 * On @counter's CPU, from its overflow path (any context, NMI included)
 * or from another of that CPU's overflows with IRQs off.
 */
void pmc_throttle(struct pmc_counter *counter, unsigned long tick)
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
	pmc_counter_tick_ns(counter, now);	/* a new tick: new counts */
	/* At least one sample a tick: a rate under HZ still samples. */
	if (++counter->sample_count <= max(rate / HZ, 1U) &&
	    !pmc_over_time(counter, now))
		return true;
	pmc_throttle(counter, now);
	return false;
}
