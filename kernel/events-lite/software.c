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
 * from one hrtimer per CPU, pinned, which fires at the first period end
 * of the CPU's active sampling clocks, kept in a timerqueue by period
 * end; del() on that CPU with IRQs off never races with it. A clock
 * keeps in sw_period_left what is left of its period while it is off.
 *
 * A throttled clock costs nothing until a later tick: it leaves the
 * queue for the CPU's parked list, which the same timer empties a tick
 * later. A clock stopped by the time bound parks every clock of its
 * owner on that CPU at once, so that they do not each take one more
 * period to learn it.
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
#include <linux/timerqueue.h>
#include <linux/uidgid.h>
#include <asm/irq_regs.h>

#include "internal.h"

static DEFINE_PER_CPU(struct hlist_head [PMC_SW_MAX], pmc_sw_lists);

/*
 * Per CPU, touched only on that CPU with IRQs off: by add() and del()
 * (ctx->lock held), the clocks' timer (hardirq), and walks' marks with
 * preemption off.
 */
struct pmc_sw_cpu {
	struct timerqueue_head clocks;	/* active sampling clocks, by period end */
	struct list_head parked;	/* throttled ones, periods kept */
	ktime_t unpark_at;		/* a tick after the first was parked */
	struct hrtimer timer;		/* at the first period end or unpark_at */
	u64 clock_end;			/* local_clock() at the timer's last end */
	kuid_t clock_owner;		/* ...and the owner it sampled last */
	u64 walks;			/* walks begun here */
};

static DEFINE_PER_CPU(struct pmc_sw_cpu, pmc_sw_cpu);


bool pmc_sw_is_clock(struct pmc_counter *counter)
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
static u64 pmc_sw_clock_period(struct pmc_counter *counter)
{
	return max_t(u64, pmc_next_period(counter, counter->period),
		     PMC_SW_MIN_CLOCK_PERIOD);
}

/* When the CPU's timer must fire next, or 0 if it need not. */
static ktime_t pmc_sw_next_expiry(struct pmc_sw_cpu *swc)
{
	struct timerqueue_node *first = timerqueue_getnext(&swc->clocks);
	ktime_t next = first ? first->expires : KTIME_MAX;

	if (!list_empty(&swc->parked))
		next = min(next, swc->unpark_at);
	return next == KTIME_MAX ? 0 : next;
}

/* Outside the timer's callback: fire it no later than it must. */
static void pmc_sw_arm(struct pmc_sw_cpu *swc)
{
	ktime_t next = pmc_sw_next_expiry(swc);

	if (next && (!hrtimer_is_queued(&swc->timer) ||
		     next < hrtimer_get_expires(&swc->timer)))
		hrtimer_start(&swc->timer, next, HRTIMER_MODE_ABS_PINNED_HARD);
}

/* Queue @counter's period to end @left ns from @now. */
static void pmc_sw_queue(struct pmc_sw_cpu *swc, struct pmc_counter *counter,
			 ktime_t now, s64 left)
{
	left = max_t(s64, left, 0);
	counter->sw_clock_node.expires = ktime_add_safe(now, ns_to_ktime(left));
	timerqueue_add(&swc->clocks, &counter->sw_clock_node);
}

/* Park throttled @counter, off the queue, until a later tick. */
static void pmc_sw_park(struct pmc_sw_cpu *swc, struct pmc_counter *counter,
			ktime_t now)
{
	if (list_empty(&swc->parked))
		swc->unpark_at = ktime_add_ns(now, TICK_NSEC);
	list_add_tail(&counter->sw_park_entry, &swc->parked);
	counter->sw_parked = true;
}

/*
 * @counter was throttled by its last period. If its owner is over the
 * time bound, its owner's other clocks here would each take one more
 * period to learn the same: they are throttled and parked now, keeping
 * what is left of their periods. From the CPU's timer.
 */
static void pmc_sw_park_owner(struct pmc_sw_cpu *swc,
			      struct pmc_counter *counter, ktime_t now)
{
	kuid_t owner = pmc_counter_owner(counter);
	struct timerqueue_node *node, *next;
	unsigned long tick = jiffies;
	struct pmc_counter *pos;

	pmc_sw_park(swc, counter, now);
	if (!pmc_owner_over_time(counter, tick))
		return;
	for (node = timerqueue_getnext(&swc->clocks); node; node = next) {
		next = timerqueue_iterate_next(node);
		pos = container_of(node, struct pmc_counter, sw_clock_node);
		if (!uid_eq(pmc_counter_owner(pos), owner))
			continue;
		timerqueue_del(&swc->clocks, node);
		local64_set(&pos->sw_period_left,
			    max_t(s64, ktime_to_ns(ktime_sub(node->expires, now)), 0));
		pmc_throttle(pos, tick);
		pmc_sw_park(swc, pos, now);
	}
}

/*
 * A tick after their throttle, the parked clocks go on with what was
 * left of their periods. Each one's cost is its owner's.
 */
static void pmc_sw_unpark(struct pmc_sw_cpu *swc, ktime_t now)
{
	struct pmc_counter *counter, *tmp;
	unsigned long tick = jiffies;
	u64 start;

	list_for_each_entry_safe(counter, tmp, &swc->parked, sw_park_entry) {
		if (READ_ONCE(counter->throttle_tick) == tick)
			continue;
		start = local_clock();
		list_del(&counter->sw_park_entry);
		counter->sw_parked = false;
		pmc_unthrottle(counter);
		pmc_sw_queue(swc, counter, now,
			     local64_read(&counter->sw_period_left));
		pmc_overflow_took(counter, local_clock() - start);
	}
	if (!list_empty(&swc->parked))
		swc->unpark_at = ktime_add_ns(now, TICK_NSEC);
}

/*
 * @counter's period ended: sample it. If its timer ran late (interrupts
 * off, a stalled vCPU, others' clocks due first), more periods have
 * ended since: each is reported as lost rather than let the count run
 * ahead of the samples unseen, and the clock is queued again at the
 * first period end still to come. The whole cost, queue included, is
 * its owner's.
 */
static void pmc_sw_clock_expired(struct pmc_sw_cpu *swc,
				 struct pmc_counter *counter)
{
	u64 period, ended, over, start = local_clock();
	ktime_t now = ktime_get();
	s64 late = ktime_to_ns(ktime_sub(now, counter->sw_clock_node.expires));

	timerqueue_del(&swc->clocks, &counter->sw_clock_node);
	pmc_counter_overflow(counter, get_irq_regs(), 0);
	period = pmc_sw_clock_period(counter);
	if (READ_ONCE(counter->throttled)) {
		local64_set(&counter->sw_period_left, period);
		pmc_sw_park_owner(swc, counter, now);
	} else {
		ended = div64_u64_rem(max(late, 0), period, &over);
		pmc_counter_skipped(counter, ended);
		/* the next end after now: at most a period away */
		pmc_sw_queue(swc, counter, now, period - over);
	}
	pmc_overflow_took(counter, local_clock() - start);
}

/*
 * What the timer's expiry cost beyond its callback: the interrupt and
 * the hrtimer queue, which with clocks at short periods cost as much as
 * the samples (many times more on a debug kernel), and which the time
 * bound must see or it bounds nothing. A timer that was already due
 * (@late after its expiry) when its last callback here ended waited
 * since then for the timer code that followed: if that callback's last
 * clock and this one's first, @counter, have one owner, the wait is
 * charged to @counter. An expiry on time, or late for any other reason
 * (interrupts off), costs nothing more, and a sampler queued behind
 * another user's storm neither pays for it nor makes that user pay for
 * its own.
 */
static void pmc_sw_clock_overhead(struct pmc_sw_cpu *swc,
				  struct pmc_counter *counter, u64 start,
				  s64 late)
{
	s64 since = start - swc->clock_end;

	if (since > 0 && since < late &&
	    uid_eq(swc->clock_owner, pmc_counter_owner(counter)))
		pmc_overflow_took(counter, since);
}

/*
 * The CPU's one timer for all its sampling clocks: one interrupt for
 * the periods that end together, in the order they end, so that a
 * sampler behind another user's clocks waits only for the ones due
 * before its own, and throttling or unthrottling any number of clocks
 * touches the clock event device once, not once per clock. Without
 * this, every throttled clock's timer was cancelled and started again
 * each tick: hrtimer work, uncharged, that grew with the number of
 * clocks. Periods that end while it runs are sampled in the same
 * callback, so that it never returns with its next expiry already
 * past: hrtimer_interrupt() would run it again at once, and after three
 * such retries would call the CPU hung and hold back every timer on it,
 * another user's sampler among them, for as long as it took. The time
 * bound stops the owners who spend it; a tick ends the callback in any
 * case.
 */
static enum hrtimer_restart pmc_sw_clocks_tick(struct hrtimer *timer)
{
	struct pmc_sw_cpu *swc = container_of(timer, struct pmc_sw_cpu, timer);
	ktime_t now = hrtimer_cb_get_time(timer), next;
	s64 late = ktime_to_ns(ktime_sub(now, hrtimer_get_expires(timer)));
	u64 start = local_clock();
	struct pmc_counter *counter;
	struct timerqueue_node *node;
	bool first = true;

	if (!list_empty(&swc->parked) && now >= swc->unpark_at)
		pmc_sw_unpark(swc, now);
	while ((node = timerqueue_getnext(&swc->clocks)) &&
	       node->expires <= ktime_get() &&
	       local_clock() - start < TICK_NSEC) {
		counter = container_of(node, struct pmc_counter, sw_clock_node);
		if (first)
			pmc_sw_clock_overhead(swc, counter, start, late);
		first = false;
		pmc_sw_clock_expired(swc, counter);
		swc->clock_owner = pmc_counter_owner(counter);
	}
	swc->clock_end = local_clock();
	next = pmc_sw_next_expiry(swc);
	if (!next)
		return HRTIMER_NORESTART;
	hrtimer_set_expires(timer, next);
	return HRTIMER_RESTART;
}

/*
 * Take the clock off its CPU's queue, and keep what is left of its
 * period for the next add(): restarting a full period at every context
 * switch would drop the part already counted, and a task switched out
 * more often than its period would never be sampled while its clock
 * went on. A period that ended with IRQs off here has not been
 * sampled: it is due at once on add(), and whole periods past it are
 * lost.
 */
static void pmc_sw_clock_stop(struct pmc_counter *counter)
{
	struct pmc_sw_cpu *swc = this_cpu_ptr(&pmc_sw_cpu);
	u64 period = max_t(u64, counter->period,
			   PMC_SW_MIN_CLOCK_PERIOD);
	s64 left;

	if (counter->sw_parked) {	/* off the queue, the period kept */
		list_del(&counter->sw_park_entry);
		counter->sw_parked = false;
		return;
	}
	if (WARN_ON_ONCE(!timerqueue_node_queued(&counter->sw_clock_node)))
		return;
	timerqueue_del(&swc->clocks, &counter->sw_clock_node);
	left = ktime_to_ns(ktime_sub(counter->sw_clock_node.expires,
				     ktime_get()));
	if (left < 0) {
		pmc_counter_skipped(counter, div64_u64(-left, period));
		left = 0;
	}
	local64_set(&counter->sw_period_left, left);
}

static int pmc_sw_init(struct pmc_counter *counter)
{
	if (PMC_CONFIG_ID(counter->attr.config) >= PMC_SW_MAX)
		return -ENOENT;
	if (counter->attr.irq_period && pmc_sw_is_clock(counter)) {
		timerqueue_init(&counter->sw_clock_node);
		/* in ns, for the first add() */
		local64_set(&counter->sw_period_left,
			    pmc_sw_clock_period(counter));
	}
	return 0;
}

static bool pmc_sw_idle_excluded(struct pmc_counter *counter)
{
	return counter->attr.exclude_idle && is_idle_task(current);
}

/*
 * Start (or resume) a clock. A sample that sees it running sees its
 * start. A clock throttled in this tick stays parked until a later one.
 */
static void pmc_sw_clock_start(struct pmc_counter *counter)
{
	struct pmc_sw_cpu *swc = this_cpu_ptr(&pmc_sw_cpu);
	unsigned long tick = jiffies;
	ktime_t now;

	WRITE_ONCE(counter->clock_start, pmc_sw_clock_now(counter));
	barrier();	/* the NMI that samples it runs on this CPU */
	WRITE_ONCE(counter->sw_idle, false);
	if (!counter->attr.irq_period)
		return;
	now = ktime_get();
	if (READ_ONCE(counter->throttled) &&
	    READ_ONCE(counter->throttle_tick) == tick) {
		pmc_sw_park(swc, counter, now);
	} else {
		pmc_unthrottle(counter);
		/* what the last stop left of the period */
		pmc_sw_queue(swc, counter, now,
			     local64_read(&counter->sw_period_left));
	}
	pmc_sw_arm(swc);
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

/* del() took a clock off its CPU's queue or parked list. */
static void pmc_sw_destroy(struct pmc_counter *counter)
{
	if (counter->attr.irq_period && pmc_sw_is_clock(counter))
		WARN_ON_ONCE(timerqueue_node_queued(&counter->sw_clock_node) ||
			     counter->sw_parked);
}

const struct pmc_pmu pmc_sw_pmu = {
	.init	= pmc_sw_init,
	.destroy = pmc_sw_destroy,
	.add	= pmc_sw_add,
	.del	= pmc_sw_del,
	.read	= pmc_sw_read,
	.sample_read = pmc_sw_sample_read,
};

/*
 * exclude_user/exclude_kernel filter by the mode the event came from.
 * Events without registers (context switches, migrations) happen in
 * the kernel: exclude_kernel leaves them out, as perf does.
 */
static bool pmc_sw_excluded(struct pmc_counter *counter, struct pt_regs *regs)
{
	if (regs && user_mode(regs))
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

/*
 * Samples left to each owner in one walk; owners beyond the table share
 * its last slot. A user with more uids than slots can make a counter of
 * another owner share with its own, but only on the events its own
 * counters see: those of tasks it may ptrace, or of a whole CPU where
 * kernel.pmc_paranoid lets it count one. What the other owner loses
 * there is samples, reported as LOST; the walk stays bounded whatever
 * the number of uids.
 */
struct pmc_sw_walk {
	u64 mark;
	unsigned int nr_owners;
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
	u64 period = counter->period;	/* 1..S64_MAX, see core.c */
	s64 left = local64_sub_return(min_t(u64, nr, S64_MAX / 2),
				      &counter->sw_period_left);
	u64 ended, burst, *samples_left, i, start, next;

	if (left > 0)
		return;
	ended = div64_u64(-left, period) + 1;
	left = local64_add_return(ended * period, &counter->sw_period_left);
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
	/*
	 * The period that began is a fresh draw, or the one attr.freq's
	 * overflows asked for, less what ran past it.
	 */
	next = pmc_next_period(counter, counter->period);
	if (next != period)
		local64_set(&counter->sw_period_left,
			    max_t(s64, left + next - period, 1));
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
		timerqueue_init_head(&swc->clocks);
		INIT_LIST_HEAD(&swc->parked);
		hrtimer_setup(&swc->timer, pmc_sw_clocks_tick, CLOCK_MONOTONIC,
			      HRTIMER_MODE_ABS_PINNED_HARD);
	}
	return 0;
}
core_initcall(pmc_sw_cpu_init);
