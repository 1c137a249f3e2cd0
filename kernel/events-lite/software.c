// SPDX-License-Identifier: GPL-2.0
/*
 * events-lite software counters.
 *
 * Clocks count nanoseconds of local_clock() while the counter is active.
 * Event counters (page faults, context switches, migrations) sit on a
 * per-CPU list per event id while active; the hooks walk this CPU's list
 * under RCU and add to each counter found.
 *
 * The lists are changed only by add()/del() on their own CPU, with the
 * context lock held and IRQs off: from the scheduler, the pmc_ctx_call()
 * IPI and the rotation hrtimer. The hooks walk them on their own CPU
 * with preemption off, under RCU, and with IRQs on where the event
 * came with them on (page faults), as perf walks its software events:
 * each sample there may walk a user stack, and a task with thousands
 * of samplers would otherwise keep its CPU's interrupts off for as many
 * samples. An interrupt may change the list under the walk: rotation
 * deletes an entry and adds it back at the head, and a walker standing
 * on it then follows it back to the start. So each walk marks the
 * counters it has seen (sw_walk, written only by walks on the counter's
 * CPU) and passes over those it meets again. Counters are freed after
 * an RCU grace period.
 *
 * Sampling: event counters count down sw_period_left and sample where
 * the event happened, at most PMC_SW_EVENT_SAMPLES samples an event
 * for each owner's counters: more periods are lost. Each sample is
 * timed and charged to the CPU's time bound (throttle.c). Clocks sample
 * from a per-counter hrtimer that runs while the counter is active,
 * pinned to its CPU, so del() on that CPU with IRQs off never races
 * with it. A clock keeps in sw_period_left what is left of its period
 * while it is off.
 *
 * A throttled clock costs nothing until its CPU's next tick: its timer
 * is parked (sw_parked), and one unthrottle timer per CPU starts the
 * parked clocks again. A clock stopped by the time bound parks every
 * clock of its owner on that CPU at once, so that their timers do not
 * each fire once more to learn it.
 *
 * exclude_idle: event counters skip the idle task's events; a clock
 * pauses while its CPU runs the idle task (sw_idle), at add() and at
 * the switches into and out of idle (pmc_sw_idle_switch(), sched.c).
 * Only a per-CPU counter ever sees the idle task.
 *
 * No period goes unaccounted: every period that ends is an overflow,
 * and one that gets no sample of its own (a late timer, a burst cut
 * short) is reported as lost, so that samples + lost == overflows ==
 * count / irq_period, give or take the period in progress.
 */
#include <linux/cleanup.h>
#include <linux/hrtimer.h>
#include <linux/jiffies.h>
#include <linux/list.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/ptrace.h>
#include <linux/rculist.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/uidgid.h>
#include <asm/irq_regs.h>

#include "internal.h"

static DEFINE_PER_CPU(struct hlist_head [PMC_SW_MAX], pmc_sw_lists);

/*
 * Per CPU, touched only on that CPU with IRQs off: by add() and del()
 * (ctx->lock held), the clocks' timers and the unthrottle timer
 * (hardirq), and walks' marks with preemption off.
 */
struct pmc_sw_cpu {
	struct list_head clocks;	/* active sampling clocks */
	struct hrtimer unthrottle_timer;	/* while one is parked */
	u64 clock_end;			/* local_clock() at the last callback's end */
	kuid_t clock_owner;		/* ...and the owner of that clock */
	u64 walks;			/* walks begun here */
};

static DEFINE_PER_CPU(struct pmc_sw_cpu, pmc_sw_cpu);

#define PMC_SW_MIN_CLOCK_PERIOD	(10 * NSEC_PER_USEC)

static bool pmc_sw_is_clock(struct pmc_counter *counter)
{
	u64 id = PMC_CONFIG_ID(counter->attr.config);

	return id == PMC_SW_CPU_CLOCK || id == PMC_SW_TASK_CLOCK;
}

/*
 * cpu-clock counts local_clock(). task-clock counts its context's time,
 * the clock of time_enabled and time_running: sampled by one update at
 * the start of each operation on the context, so a read() sees
 * task-clock == time_running exactly for a counter that was never left
 * out, however long the operation was stalled after that update.
 */
static u64 pmc_sw_clock_now(struct pmc_counter *counter)
{
	if (PMC_CONFIG_ID(counter->attr.config) == PMC_SW_TASK_CLOCK)
		return counter->ctx->time;
	return local_clock();
}

/* A clock's period, in ns; shorter ones would only flood the CPU. */
static ktime_t pmc_sw_clock_period(struct pmc_counter *counter)
{
	return ns_to_ktime(max_t(u64, pmc_next_period(counter,
						      counter->attr.irq_period),
				 PMC_SW_MIN_CLOCK_PERIOD));
}

/* Park throttled @counter until the next tick: its timer is stopped. */
static void pmc_sw_park(struct pmc_counter *counter)
{
	struct hrtimer *timer = &this_cpu_ptr(&pmc_sw_cpu)->unthrottle_timer;

	counter->sw_parked = true;
	if (!hrtimer_is_queued(timer))
		hrtimer_start(timer, ns_to_ktime(TICK_NSEC),
			      HRTIMER_MODE_REL_PINNED_HARD);
}

/*
 * @counter's timer found it throttled. If its owner is over the time
 * bound (its next overflow would throttle it again), the owner's other
 * clocks on this CPU would each fire once more to learn the same: they
 * are throttled and parked now, keeping what is left of their periods.
 * Hardirq, from @counter's timer, whose return stops it.
 */
static void pmc_sw_park_owner(struct pmc_counter *counter)
{
	struct pmc_sw_cpu *swc = this_cpu_ptr(&pmc_sw_cpu);
	kuid_t owner = pmc_counter_owner(counter);
	unsigned long now = jiffies;
	struct pmc_counter *pos;
	s64 left;

	pmc_sw_park(counter);
	if (!pmc_owner_over_time(counter, now))
		return;
	list_for_each_entry(pos, &swc->clocks, sw_clock_entry) {
		if (pos->sw_parked || !uid_eq(pmc_counter_owner(pos), owner))
			continue;
		left = ktime_to_ns(hrtimer_get_remaining(&pos->sample_timer));
		if (hrtimer_try_to_cancel(&pos->sample_timer) < 0)
			continue;
		local64_set(&pos->sw_period_left, max_t(s64, left, 0));
		pmc_throttle(pos, now);
		pmc_sw_park(pos);
	}
}

/* The tick after a throttle: the parked clocks of this CPU go on. */
static enum hrtimer_restart pmc_sw_unthrottle_tick(struct hrtimer *timer)
{
	struct pmc_sw_cpu *swc = container_of(timer, struct pmc_sw_cpu,
					      unthrottle_timer);
	struct pmc_counter *counter;

	list_for_each_entry(counter, &swc->clocks, sw_clock_entry) {
		if (!counter->sw_parked)
			continue;
		counter->sw_parked = false;
		pmc_unthrottle(counter);
		hrtimer_start(&counter->sample_timer,
			      ns_to_ktime(local64_read(&counter->sw_period_left)),
			      HRTIMER_MODE_REL_PINNED_HARD);
	}
	return HRTIMER_NORESTART;
}

/*
 * What a clock's expiry cost beyond its callback: the interrupt and the
 * hrtimer queue, which with many clocks at short periods cost more than
 * the samples (many times more on a debug kernel), and which the time
 * bound must see or it bounds nothing. A timer that was already due
 * (@late after its expiry) when the last clock callback here ended
 * waited since then for the timer code that followed that callback: if
 * both clocks are @owner's, that wait is charged to @owner. A clock
 * that fires on time, or late for any other reason (interrupts off),
 * costs nothing more, and a sampler queued behind another user's storm
 * neither pays for it nor makes that user pay for its own.
 */
static void pmc_sw_clock_overhead(struct pmc_sw_cpu *swc, kuid_t owner,
				  u64 start, s64 late)
{
	s64 since = start - swc->clock_end;

	if (since > 0 && since < late && uid_eq(swc->clock_owner, owner))
		pmc_owner_took(owner, since);
}

/*
 * The timer expired at the end of one period and samples it. If it ran
 * late (interrupts off, a stalled vCPU), more periods have ended since:
 * each is reported as lost rather than let the count run ahead of the
 * samples unseen, and the timer moves to the first period end still to
 * come. Not with hrtimer_forward_now(): it steps at least the timer's
 * resolution, which is a whole tick while hrtimers run from the tick
 * (before the switch to high resolution at boot, or without
 * CONFIG_HIGH_RES_TIMERS), and a 1 ms period would then take one
 * sample a tick with the other periods neither sampled nor lost. Here
 * the next expiry may be less than a tick away: the timer then fires at
 * the next tick, which reports the periods that ended meanwhile.
 */
static enum hrtimer_restart pmc_sw_clock_tick(struct hrtimer *timer)
{
	struct pmc_counter *counter = container_of(timer, struct pmc_counter,
						   sample_timer);
	struct pmc_sw_cpu *swc = this_cpu_ptr(&pmc_sw_cpu);
	kuid_t owner = pmc_counter_owner(counter);
	u64 period, ended, start = local_clock();
	s64 late = ktime_to_ns(ktime_sub(hrtimer_cb_get_time(timer),
					 hrtimer_get_expires(timer)));

	pmc_sw_clock_overhead(swc, owner, start, late);
	pmc_counter_overflow(counter, get_irq_regs(), 0);
	pmc_overflow_took(counter, local_clock() - start);
	swc->clock_end = local_clock();
	swc->clock_owner = owner;
	period = ktime_to_ns(pmc_sw_clock_period(counter));
	if (READ_ONCE(counter->throttled)) {
		local64_set(&counter->sw_period_left, period);
		pmc_sw_park_owner(counter);
		return HRTIMER_NORESTART;
	}
	ended = late > 0 ? div64_u64(late, period) : 0;
	/* at most late + period: no u64 wrap; ktime_add_safe() caps the sum */
	hrtimer_add_expires(timer, ns_to_ktime(min_t(u64, (ended + 1) * period,
						     KTIME_MAX)));
	pmc_counter_skipped(counter, ended);
	return HRTIMER_RESTART;
}

/*
 * Stop the timer, and keep what is left of the period for the next
 * add(): restarting a full period at every context switch would drop
 * the part already counted, and a task switched out more often than
 * its period would never be sampled while its clock went on. A timer
 * that expired with IRQs off here has not run: its period ended, so
 * it is due at once on add(), and whole periods past it are lost.
 */
static void pmc_sw_clock_stop(struct pmc_counter *counter)
{
	struct hrtimer *timer = &counter->sample_timer;
	s64 left = ktime_to_ns(hrtimer_get_remaining(timer));
	u64 period = max_t(u64, counter->attr.irq_period,
			   PMC_SW_MIN_CLOCK_PERIOD);

	list_del(&counter->sw_clock_entry);
	if (counter->sw_parked) {	/* its timer is off, the period kept */
		counter->sw_parked = false;
		return;
	}
	hrtimer_try_to_cancel(timer);
	if (left < 0) {
		pmc_counter_skipped(counter, div64_u64(-left, period));
		left = 0;
	}
	local64_set(&counter->sw_period_left, left);
}

static int pmc_sw_init(struct pmc_counter *counter)
{
	if (PMC_CONFIG_ID(counter->attr.config) >= PMC_SW_MAX)
		return -EINVAL;
	if (counter->attr.irq_period && pmc_sw_is_clock(counter)) {
		hrtimer_setup(&counter->sample_timer, pmc_sw_clock_tick,
			      CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED_HARD);
		/* in ns, for the first add() */
		local64_set(&counter->sw_period_left,
			    ktime_to_ns(pmc_sw_clock_period(counter)));
	}
	return 0;
}

static bool pmc_sw_idle_excluded(struct pmc_counter *counter)
{
	return counter->attr.exclude_idle && is_idle_task(current);
}

/*
 * Start (or resume) a clock. A sample that sees it running sees its
 * start. A clock throttled in this tick stays parked until the next.
 */
static void pmc_sw_clock_start(struct pmc_counter *counter)
{
	unsigned long tick = jiffies;

	WRITE_ONCE(counter->clock_start, pmc_sw_clock_now(counter));
	barrier();	/* the NMI that samples it runs on this CPU */
	WRITE_ONCE(counter->sw_idle, false);
	if (!counter->attr.irq_period)
		return;
	list_add(&counter->sw_clock_entry, &this_cpu_ptr(&pmc_sw_cpu)->clocks);
	if (READ_ONCE(counter->throttled) &&
	    READ_ONCE(counter->throttle_tick) == tick) {
		pmc_sw_park(counter);
		return;
	}
	pmc_unthrottle(counter);
	/* what the last stop left of the period */
	hrtimer_start(&counter->sample_timer,
		      ns_to_ktime(local64_read(&counter->sw_period_left)),
		      HRTIMER_MODE_REL_PINNED_HARD);
}

static void pmc_sw_read(struct pmc_counter *counter)
{
	u64 now, start;

	if (!pmc_sw_is_clock(counter) || counter->sw_idle)
		return;
	now = pmc_sw_clock_now(counter);
	start = counter->clock_start;
	counter->clock_start = now;
	if (now > start)
		local64_add(now - start, &counter->count);
}

/* Fold the time counted and stop the sample timer. */
static void pmc_sw_clock_pause(struct pmc_counter *counter)
{
	if (counter->attr.irq_period)
		pmc_sw_clock_stop(counter);
	pmc_sw_read(counter);
}

static int pmc_sw_add(struct pmc_counter *counter)
{
	u64 id = PMC_CONFIG_ID(counter->attr.config);

	if (!pmc_sw_is_clock(counter))
		hlist_add_head_rcu(&counter->sw_node,
				   this_cpu_ptr(&pmc_sw_lists[id]));
	else if (pmc_sw_idle_excluded(counter))
		WRITE_ONCE(counter->sw_idle, true);
	else
		pmc_sw_clock_start(counter);
	return 0;
}

static void pmc_sw_del(struct pmc_counter *counter)
{
	/* A paused clock stays paused: add() decides again. */
	if (!pmc_sw_is_clock(counter))
		hlist_del_rcu(&counter->sw_node);
	else if (!counter->sw_idle)
		pmc_sw_clock_pause(counter);
}

/*
 * This CPU switches into (@idle) or out of its idle task: an active
 * exclude_idle clock of its CPU context pauses or goes on. ctx->lock
 * held, IRQs off, the context's time just updated.
 */
void pmc_sw_idle_switch(struct pmc_counter *counter, bool idle)
{
	if (!pmc_sw_is_clock(counter) || counter->sw_idle == idle)
		return;
	if (idle) {
		pmc_sw_clock_pause(counter);
		WRITE_ONCE(counter->sw_idle, true);
	} else {
		pmc_sw_clock_start(counter);
	}
}

/*
 * Clocks count while active: add the time since add() or the last read.
 * In an NMI that interrupted pmc_ctx_update_time(), task-clock may see
 * the context's time and timestamp from different updates: a sample can
 * be off by that much, a read() never is.
 */
static u64 pmc_sw_sample_read(struct pmc_counter *counter)
{
	u64 count = local64_read(&counter->count), start, now;
	struct pmc_context *ctx = counter->ctx;

	if (!pmc_sw_is_clock(counter) || READ_ONCE(counter->sw_idle))
		return count;
	start = READ_ONCE(counter->clock_start);
	if (PMC_CONFIG_ID(counter->attr.config) == PMC_SW_TASK_CLOCK)
		now = READ_ONCE(ctx->time) + local_clock() -
		      READ_ONCE(ctx->timestamp);
	else
		now = local_clock();
	return (s64)(now - start) > 0 ? count + now - start : count;
}

/*
 * For page 0 (userpage.c): an active clock's count at its context's
 * timestamp, the instant the page's times are for; false if @counter is
 * not a clock that is counting. ctx->lock held, on the counter's CPU.
 */
bool pmc_sw_clock_at_stamp(struct pmc_counter *counter, u64 *count)
{
	struct pmc_context *ctx = counter->ctx;
	s64 ran;

	if (counter->pmu != &pmc_sw_pmu || !pmc_sw_is_clock(counter) ||
	    counter->sw_idle)
		return false;
	if (PMC_CONFIG_ID(counter->attr.config) == PMC_SW_TASK_CLOCK)
		ran = ctx->time - counter->clock_start;
	else	/* may have started after the stamp: then ran < 0 */
		ran = ctx->timestamp - counter->clock_start;
	*count = local64_read(&counter->count) + ran;
	return true;
}

static void pmc_sw_destroy(struct pmc_counter *counter)
{
	if (counter->attr.irq_period && pmc_sw_is_clock(counter))
		hrtimer_cancel(&counter->sample_timer);
}

const struct pmc_pmu pmc_sw_pmu = {
	.init	= pmc_sw_init,
	.destroy = pmc_sw_destroy,
	.add	= pmc_sw_add,
	.del	= pmc_sw_del,
	.read	= pmc_sw_read,
	.sample_read = pmc_sw_sample_read,
};

/* exclude_user/exclude_kernel filter by the mode the event came from. */
static bool pmc_sw_excluded(struct pmc_counter *counter, struct pt_regs *regs)
{
	if (!regs)
		return false;
	if (user_mode(regs))
		return counter->attr.exclude_user;
	return counter->attr.exclude_kernel;
}

/*
 * Count down the sample period; sample when it ends. The periods that
 * ended are worked out, not looped over, and one event gives a counter
 * at most PMC_SW_MAX_BURST samples, and each owner's counters together
 * at most PMC_SW_EVENT_SAMPLES, whatever the period, @nr and the number
 * of counters: the periods beyond are reported as lost.
 */
#define PMC_SW_MAX_BURST	4
#define PMC_SW_EVENT_SAMPLES	16
#define PMC_SW_WALK_OWNERS	4

struct pmc_sw_walk {
	u64 mark;
	unsigned int nr_owners;
	/* samples left to each owner; more owners share the last slot */
	struct pmc_owner_slot owners[PMC_SW_WALK_OWNERS];
};

static u64 *pmc_sw_samples_left(struct pmc_sw_walk *walk,
				struct pmc_counter *counter)
{
	struct pmc_owner_slot *slot;

	slot = pmc_owner_slot(walk->owners, &walk->nr_owners,
			      PMC_SW_WALK_OWNERS, pmc_counter_owner(counter),
			      PMC_SW_EVENT_SAMPLES);
	return &(slot ?: &walk->owners[PMC_SW_WALK_OWNERS - 1])->val;
}

static void pmc_sw_period(struct pmc_counter *counter, u64 nr,
			  struct pt_regs *regs, u64 addr,
			  struct pmc_sw_walk *walk)
{
	u64 period = counter->attr.irq_period;	/* 1..S64_MAX, see core.c */
	s64 left = local64_sub_return(min_t(u64, nr, S64_MAX / 2),
				      &counter->sw_period_left);
	u64 ended, burst, *samples_left, i, start;

	if (left > 0)
		return;
	ended = div64_u64(-left, period) + 1;
	left = local64_add_return(ended * period, &counter->sw_period_left);
	/* The period that began is a fresh draw, less what ran past it. */
	if (counter->attr.period_rand) {
		left += pmc_next_period(counter, period) - period;
		local64_set(&counter->sw_period_left, max_t(s64, left, 1));
	}
	samples_left = pmc_sw_samples_left(walk, counter);
	burst = min3(ended, (u64)PMC_SW_MAX_BURST, *samples_left);
	*samples_left -= burst;
	for (i = 0; i < burst; i++) {
		start = local_clock();
		pmc_counter_overflow(counter, regs, addr);
		pmc_overflow_took(counter, local_clock() - start);
	}
	if (ended > burst)
		pmc_counter_skipped(counter, ended - burst);
}

/* A mark no other walk, on this CPU or another, has used. */
static u64 pmc_sw_walk_mark(void)
{
	return this_cpu_inc_return(pmc_sw_cpu.walks) * nr_cpu_ids +
	       smp_processor_id();
}

void __pmc_sw_event(enum pmc_sw_id id, u64 nr, struct pt_regs *regs, u64 addr)
{
	struct pmc_sw_walk walk = { };
	struct pmc_counter *counter;

	guard(preempt)();
	guard(rcu)();
	walk.mark = pmc_sw_walk_mark();
	hlist_for_each_entry_rcu(counter, this_cpu_ptr(&pmc_sw_lists[id]),
				 sw_node) {
		if (counter->sw_walk == walk.mark)	/* moved back: seen */
			continue;
		counter->sw_walk = walk.mark;
		if (pmc_sw_excluded(counter, regs) ||
		    pmc_sw_idle_excluded(counter))
			continue;
		local64_add(nr, &counter->count);
		if (counter->attr.irq_period)
			pmc_sw_period(counter, nr, regs, addr, &walk);
	}
}

static int __init pmc_sw_cpu_init(void)
{
	struct pmc_sw_cpu *swc;
	int cpu;

	for_each_possible_cpu(cpu) {
		swc = per_cpu_ptr(&pmc_sw_cpu, cpu);
		INIT_LIST_HEAD(&swc->clocks);
		hrtimer_setup(&swc->unthrottle_timer, pmc_sw_unthrottle_tick,
			      CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED_HARD);
	}
	return 0;
}
core_initcall(pmc_sw_cpu_init);
