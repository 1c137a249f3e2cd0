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
 */
#include <linux/jiffies.h>
#include <linux/percpu.h>
#include <linux/sysctl.h>
#include <linux/timekeeping.h>

#include "internal.h"

static int sysctl_pmc_max_sample_rate __read_mostly = 100000;

struct pmc_budget {
	unsigned long tick;	/* jiffies the count is for */
	unsigned int used;	/* samples taken in that tick */
};

static DEFINE_PER_CPU(struct pmc_budget, pmc_budget);

/* At least one sample a tick: a rate under HZ still samples. */
static unsigned int pmc_samples_per_tick(void)
{
	return max(1, READ_ONCE(sysctl_pmc_max_sample_rate) / HZ);
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

static const struct ctl_table pmc_throttle_sysctls[] = {
	{
		.procname	= "pmc_max_sample_rate",
		.data		= &sysctl_pmc_max_sample_rate,
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= SYSCTL_ONE,
	},
};

static int __init pmc_throttle_init(void)
{
	register_sysctl_init("kernel", pmc_throttle_sysctls);
	return 0;
}
core_initcall(pmc_throttle_init);
