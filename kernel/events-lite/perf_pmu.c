// SPDX-License-Identifier: GPL-2.0
/*
 * events-lite hardware counters on perf's in-kernel counters.
 *
 * Where perf drives the hardware PMU, a second driver of the same
 * registers would fight it: perf reserves every counter or none, its
 * interrupt handler acks every overflow bit, and KVM and the hard-lockup
 * detector take their counters from it. So events-lite takes its
 * hardware counters from perf, as KVM does: each one is a perf kernel
 * counter of the same task (or CPU), which perf schedules with its own.
 * A counter group is a perf group of its hardware counters, on the PMU
 * together or not at all.
 *
 * events-lite still schedules its counters: while one is ACTIVE here,
 * what its perf counter counted, and the time perf kept it off the PMU
 * (rotating it with perf's own events), are folded into the count and
 * taken off time_running, so that time_running / time_enabled scales
 * as the guide says. A counter turned OFF here has its perf counter
 * disabled too, right after (perf's enable and disable sleep): it
 * leaves the PMU to others. A pinned group's perf leader is pinned in
 * perf, and perf's error state puts the group in events-lite's.
 *
 * pmc_pmu=perf|direct at boot chooses; by default this backend serves
 * wherever perf has a hardware PMU, and an arch driver (the x86 one)
 * drives the PMU itself only where perf has none, or on pmc_pmu=direct.
 */
#define pr_fmt(fmt) "events-lite: " fmt

#include <linux/init.h>
#include <linux/mutex.h>
#include <linux/perf_event.h>
#include <linux/printk.h>
#include <linux/smp.h>
#include <linux/string.h>

#include "internal.h"

enum pmc_pmu_choice {
	PMC_PMU_DEFAULT,
	PMC_PMU_PERF,
	PMC_PMU_DIRECT,
};

static enum pmc_pmu_choice pmc_pmu_choice __initdata;

static int __init pmc_pmu_param(char *str)
{
	if (!strcmp(str, "perf"))
		pmc_pmu_choice = PMC_PMU_PERF;
	else if (!strcmp(str, "direct"))
		pmc_pmu_choice = PMC_PMU_DIRECT;
	else
		pr_warn("pmc_pmu=%s: perf or direct; using the default\n", str);
	return 1;
}
__setup("pmc_pmu=", pmc_pmu_param);

/* perf's generic hardware events, by events-lite's ids. */
static const u64 pmc_perf_hw_ids[PMC_HW_MAX] = {
	[PMC_HW_CPU_CYCLES]		= PERF_COUNT_HW_CPU_CYCLES,
	[PMC_HW_INSTRUCTIONS]		= PERF_COUNT_HW_INSTRUCTIONS,
	[PMC_HW_CACHE_REFERENCES]	= PERF_COUNT_HW_CACHE_REFERENCES,
	[PMC_HW_CACHE_MISSES]		= PERF_COUNT_HW_CACHE_MISSES,
	[PMC_HW_BRANCH_INSTRUCTIONS]	= PERF_COUNT_HW_BRANCH_INSTRUCTIONS,
	[PMC_HW_BRANCH_MISSES]		= PERF_COUNT_HW_BRANCH_MISSES,
	[PMC_HW_BUS_CYCLES]		= PERF_COUNT_HW_BUS_CYCLES,
};

/*
 * x86 raw event selects: the kernel owns USR, OS, INT and EN (the ABI
 * rejects them), which perf's x86 driver would silently drop.
 */
#define PMC_PERF_X86_OWNED	(BIT_ULL(16) | BIT_ULL(17) | BIT_ULL(20) | \
				 BIT_ULL(22))

static int pmc_perf_attr(const struct pmc_attr *attr,
			 struct perf_event_attr *pattr)
{
	u64 id = PMC_CONFIG_ID(attr->config);

	memset(pattr, 0, sizeof(*pattr));
	pattr->size = sizeof(*pattr);
	if (attr->config & PMC_CONFIG_RAW) {
		pattr->type = PERF_TYPE_RAW;
		pattr->config = attr->config & ~PMC_CONFIG_RAW;
		if (IS_ENABLED(CONFIG_X86) && pattr->config & PMC_PERF_X86_OWNED)
			return -EINVAL;
	} else {
		if (id >= PMC_HW_MAX)
			return -EINVAL;
		pattr->type = PERF_TYPE_HARDWARE;
		pattr->config = pmc_perf_hw_ids[id];
	}
	pattr->exclude_user = attr->exclude_user;
	pattr->exclude_kernel = attr->exclude_kernel;
	pattr->exclude_hv = attr->exclude_hv;
	/* A vCPU thread's counters count the host, as the guide says. */
	pattr->exclude_guest = 1;
	pattr->sample_period = attr->irq_period;	/* or sample_freq */
	pattr->freq = attr->freq;
	return 0;
}

/* The config is checked at pmc_open(), the perf counter made at open(). */
static int pmc_perf_init(struct pmc_counter *counter)
{
	struct perf_event_attr pattr;

	return pmc_perf_attr(&counter->attr, &pattr);
}

/*
 * Overflow, in perf's overflow context (NMI on x86, IRQ on arm64), on
 * the counter's CPU. perf has already reloaded the period; a new draw of
 * period_rand takes effect from the period after the next.
 */
static void pmc_perf_overflow(struct perf_event *event,
			      struct perf_sample_data *data,
			      struct pt_regs *regs)
{
	struct pmc_counter *counter = event->overflow_handler_context;

	if (READ_ONCE(counter->state) != PMC_STATE_ACTIVE)
		return;
	if (counter->attr.period_rand)
		WRITE_ONCE(event->hw.sample_period,
			   pmc_next_period(counter, counter->attr.irq_period));
	counter->period = data->period;		/* attr.freq's, perf's choice */
	pmc_counter_overflow(counter, regs, 0);
}

static const struct pmc_pmu pmc_perf_pmu;

/*
 * Whether @counter's perf counter should be enabled: while it is not OFF
 * here. A perf group leader that is a member here (the leader here is a
 * software counter) stays enabled: disabling it would stop its group.
 */
static bool pmc_perf_wanted(struct pmc_counter *counter, bool perf_leader)
{
	if (perf_leader && !pmc_is_leader(counter))
		return true;
	return READ_ONCE(counter->state) != PMC_STATE_OFF;
}

/* The perf counter leading @counter's perf group: its first hardware one. */
static struct perf_event *pmc_perf_group_leader(struct pmc_counter *counter)
{
	struct pmc_counter *pos;

	for_each_group_counter(pos, counter->leader)
		if (pos != counter && pos->pmu == &pmc_perf_pmu)
			return pos->perf.event;
	return NULL;
}

static int pmc_perf_open(struct pmc_counter *counter, struct task_struct *task)
{
	perf_overflow_handler_t handler = NULL;
	struct perf_event_attr pattr;
	struct perf_event *leader, *event;
	int ret;

	ret = pmc_perf_attr(&counter->attr, &pattr);
	if (ret)
		return ret;
	if (counter->attr.irq_period)
		handler = pmc_perf_overflow;
	leader = pmc_perf_group_leader(counter);
	mutex_init(&counter->perf.sync_lock);
	pattr.disabled = !pmc_perf_wanted(counter, !leader);
	if (leader) {
		event = perf_event_create_kernel_group_counter(&pattr, counter->cpu,
							       task, leader,
							       handler, counter);
	} else {
		pattr.exclusive = counter->leader->attr.exclusive;
		pattr.pinned = pmc_is_leader(counter) && counter->attr.pinned;
		event = perf_event_create_kernel_counter(&pattr, counter->cpu,
							 task, handler, counter);
	}
	if (IS_ERR(event))
		return PTR_ERR(event);
	counter->perf.event = event;
	return 0;
}

static void pmc_perf_destroy(struct pmc_counter *counter)
{
	if (counter->perf.event)
		perf_event_release_kernel(counter->perf.event);
}

static void pmc_perf_sync_enabled(struct pmc_counter *counter)
{
	struct perf_event *event = counter->perf.event;
	bool was_error;

	guard(mutex)(&counter->perf.sync_lock);
	if (!pmc_perf_wanted(counter, event->group_leader == event)) {
		perf_event_disable(event);
		return;
	}
	was_error = READ_ONCE(event->state) == PERF_EVENT_STATE_ERROR;
	perf_event_enable(event);
	/*
	 * A pinned group enabled here out of the error state failed to go
	 * on again while perf still had its leader in error: try again.
	 */
	if (was_error && READ_ONCE(counter->state) == PMC_STATE_ERROR)
		pmc_enable(counter);
}

/*
 * perf's count and times now. Only where add(), del() and read() run:
 * IRQs off, on the CPU where the counter's context is active, so that
 * its task is current (or its CPU this one), as perf_event_read_local()
 * needs. A pinned perf counter reads only while on the PMU: off it, it
 * is in perf's error state, and add() fails.
 */
static bool pmc_perf_now(struct pmc_counter *counter, u64 *count,
			 u64 *enabled, u64 *running)
{
	struct perf_event *event = counter->perf.event;
	int ret;

	ret = perf_event_read_local(event, count, enabled, running);
	WARN_ON_ONCE(ret && !event->attr.pinned);
	return !ret;
}

static int pmc_perf_add(struct pmc_counter *counter)
{
	u64 count;

	if (!pmc_perf_now(counter, &count, &counter->perf.enabled,
			  &counter->perf.running))
		return -EAGAIN;
	local64_set(&counter->perf.prev_count, count);
	return 0;
}

static void pmc_perf_read(struct pmc_counter *counter)
{
	u64 count, enabled, running, prev;

	if (!pmc_perf_now(counter, &count, &enabled, &running))
		return;
	prev = local64_xchg(&counter->perf.prev_count, count);
	local64_add(count - prev, &counter->count);
	counter->time_off_pmu += (enabled - counter->perf.enabled) -
				 (running - counter->perf.running);
	counter->perf.enabled = enabled;
	counter->perf.running = running;
}

/* Any context, NMI included, on the counter's CPU: the count as of now. */
static u64 pmc_perf_sample_read(struct pmc_counter *counter)
{
	u64 count;

	if (perf_event_read_local(counter->perf.event, &count, NULL, NULL))
		return local64_read(&counter->count);
	return local64_read(&counter->count) + count -
	       local64_read(&counter->perf.prev_count);
}

static const struct pmc_pmu pmc_perf_pmu = {
	.init		= pmc_perf_init,
	.open		= pmc_perf_open,
	.destroy	= pmc_perf_destroy,
	.sync_enabled	= pmc_perf_sync_enabled,
	.add		= pmc_perf_add,
	.del		= pmc_perf_read,
	.read		= pmc_perf_read,
	.sample_read	= pmc_perf_sample_read,
	.own_freq	= true,
};

/*
 * perf's hardware PMU, found by making a cycles counter: NULL if none.
 * Asked by the x86 driver, then by pmc_perf_pmu_init(): probed once.
 */
static const char *__init pmc_perf_hw_pmu(void)
{
	struct perf_event_attr pattr = {
		.type		= PERF_TYPE_HARDWARE,
		.config		= PERF_COUNT_HW_CPU_CYCLES,
		.size		= sizeof(pattr),
		.disabled	= 1,
	};
	static char name[32] __initdata;
	static bool probed __initdata;
	struct perf_event *event;

	if (probed)
		return name[0] ? name : NULL;
	probed = true;
	event = perf_event_create_kernel_counter(&pattr, raw_smp_processor_id(),
						 NULL, NULL, NULL);
	if (IS_ERR(event))
		return NULL;
	strscpy(name, event->pmu->name ?: "cpu");
	perf_event_release_kernel(event);
	return name;
}

bool __init pmc_direct_pmu_allowed(void)
{
	switch (pmc_pmu_choice) {
	case PMC_PMU_DIRECT:
		return true;
	case PMC_PMU_PERF:
		return false;
	default:
		return !pmc_perf_hw_pmu();
	}
}

/* After the PMU drivers (device_initcall): arm64's probe then. */
static int __init pmc_perf_pmu_init(void)
{
	const char *name;

	if (pmc_pmu_choice == PMC_PMU_DIRECT || pmc_hw_pmu_registered())
		return 0;
	name = pmc_perf_hw_pmu();
	if (!name) {
		if (pmc_pmu_choice == PMC_PMU_PERF)
			pr_info("pmc_pmu=perf, but perf has no hardware PMU: hardware counters return ENODEV\n");
		return 0;
	}
	pr_info("hardware counters through perf's %s PMU\n", name);
	pmc_register_hw_pmu(&pmc_perf_pmu);
	return 0;
}
late_initcall(pmc_perf_pmu_init);

#ifdef CONFIG_PMC_PERF_KUNIT_TEST
#include "perf_pmu_test.c"
#endif
