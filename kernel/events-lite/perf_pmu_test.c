// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for events-lite's hardware counters on perf's in-kernel
 * counters; perf_pmu.c includes this file. The attributes perf is
 * given, and a counter's life on a stand-in perf PMU that adds a fixed
 * step at each read: every event the counter shows came through perf,
 * and a counter turned OFF leaves the PMU. It runs in the x86 guests,
 * where perf drives no PMU and so gives the stand-in the raw event;
 * where a real PMU takes it first, the life test skips.
 */
#include <kunit/test.h>

#define PMC_TEST_RAW	0x5eedULL	/* the stand-in's one event */
#define PMC_TEST_STEP	1000		/* what each read of it adds */

static atomic_t pmc_test_adds, pmc_test_dels;

static int pmc_test_event_init(struct perf_event *event)
{
	if (event->attr.type != PERF_TYPE_RAW ||
	    event->attr.config != PMC_TEST_RAW)
		return -ENOENT;
	return 0;
}

static void pmc_test_read(struct perf_event *event)
{
	local64_add(PMC_TEST_STEP, &event->count);
}

static void pmc_test_start(struct perf_event *event, int flags)
{
	event->hw.state = 0;
}

static void pmc_test_stop(struct perf_event *event, int flags)
{
	event->hw.state = PERF_HES_STOPPED | PERF_HES_UPTODATE;
}

static int pmc_test_add(struct perf_event *event, int flags)
{
	atomic_inc(&pmc_test_adds);
	event->hw.state = PERF_HES_STOPPED | PERF_HES_UPTODATE;
	if (flags & PERF_EF_START)
		pmc_test_start(event, flags);
	return 0;
}

static void pmc_test_del(struct perf_event *event, int flags)
{
	pmc_test_stop(event, flags);
	atomic_inc(&pmc_test_dels);
}

static struct pmu pmc_test_pmu = {
	.task_ctx_nr	= perf_invalid_context,	/* CPU counters only */
	.capabilities	= PERF_PMU_CAP_NO_INTERRUPT,
	.event_init	= pmc_test_event_init,
	.add		= pmc_test_add,
	.del		= pmc_test_del,
	.start		= pmc_test_start,
	.stop		= pmc_test_stop,
	.read		= pmc_test_read,
};

static void pmc_perf_test_attr(struct kunit *test)
{
	struct pmc_attr attr = {
		.config		= PMC_CONFIG(PMC_TYPE_HARDWARE,
					     PMC_HW_INSTRUCTIONS),
		.irq_period	= 100000,
		.exclude_kernel	= 1,
	};
	struct perf_event_attr pattr;

	KUNIT_EXPECT_EQ(test, pmc_perf_attr(&attr, &pattr), 0);
	KUNIT_EXPECT_EQ(test, pattr.type, PERF_TYPE_HARDWARE);
	KUNIT_EXPECT_EQ(test, pattr.config, PERF_COUNT_HW_INSTRUCTIONS);
	KUNIT_EXPECT_EQ(test, pattr.sample_period, 100000);
	KUNIT_EXPECT_TRUE(test, pattr.exclude_kernel);
	KUNIT_EXPECT_FALSE(test, pattr.exclude_user);
	/* a vCPU thread's counters count the host */
	KUNIT_EXPECT_TRUE(test, pattr.exclude_guest);

	attr.config = PMC_CONFIG(PMC_TYPE_HARDWARE, PMC_HW_MAX);
	KUNIT_EXPECT_EQ(test, pmc_perf_attr(&attr, &pattr), -EINVAL);

	attr.config = PMC_CONFIG_RAW | 0x3c;
	KUNIT_EXPECT_EQ(test, pmc_perf_attr(&attr, &pattr), 0);
	KUNIT_EXPECT_EQ(test, pattr.type, PERF_TYPE_RAW);
	KUNIT_EXPECT_EQ(test, pattr.config, 0x3c);

	/* x86: USR, OS, INT and EN are the kernel's, not the caller's */
	attr.config = PMC_CONFIG_RAW | BIT_ULL(22) | 0x3c;
	KUNIT_EXPECT_EQ(test, pmc_perf_attr(&attr, &pattr),
			IS_ENABLED(CONFIG_X86) ? -EINVAL : 0);
}

static void pmc_perf_test_life(struct kunit *test)
{
	struct pmc_attr attr = { .config = PMC_CONFIG_RAW | PMC_TEST_RAW };
	struct pmc_counter *counter;
	struct perf_event *event;
	u64 before = 0, after = 0;
	int ret, added, dels;

	KUNIT_ASSERT_EQ(test, perf_pmu_register(&pmc_test_pmu, "pmc_kunit", -1),
			0);
	migrate_disable();
	counter = pmc_counter_alloc(&attr, &pmc_perf_pmu, smp_processor_id());
	KUNIT_EXPECT_FALSE(test, IS_ERR(counter));
	if (IS_ERR(counter))
		goto out;
	ret = pmc_perf_open(counter, NULL);
	KUNIT_EXPECT_EQ(test, ret, 0);
	event = counter->perf.event;
	if (ret || event->pmu != &pmc_test_pmu) {
		pmc_counter_put(counter);
		migrate_enable();
		perf_pmu_unregister(&pmc_test_pmu);
		kunit_skip(test, "perf has a PMU of its own for raw events");
	}
	KUNIT_EXPECT_EQ(test, event->state, PERF_EVENT_STATE_ACTIVE);
	KUNIT_EXPECT_GE(test, atomic_read(&pmc_test_adds), 1);

	/* as the scheduler does: IRQs off, on the counter's CPU */
	local_irq_disable();
	added = pmc_perf_add(counter);
	before = local64_read(&event->count);
	pmc_perf_read(counter);
	pmc_perf_read(counter);
	pmc_perf_read(counter);
	after = local64_read(&event->count);
	local_irq_enable();
	KUNIT_EXPECT_EQ(test, added, 0);
	KUNIT_EXPECT_EQ(test, after - before, 3 * PMC_TEST_STEP);
	KUNIT_EXPECT_EQ(test, local64_read(&counter->count), after - before);

	/* OFF here: perf takes it off the PMU; back on, perf puts it on */
	dels = atomic_read(&pmc_test_dels);
	counter->state = PMC_STATE_OFF;
	pmc_perf_sync_enabled(counter);
	KUNIT_EXPECT_EQ(test, event->state, PERF_EVENT_STATE_OFF);
	KUNIT_EXPECT_EQ(test, atomic_read(&pmc_test_dels), dels + 1);
	counter->state = PMC_STATE_INACTIVE;
	pmc_perf_sync_enabled(counter);
	KUNIT_EXPECT_EQ(test, event->state, PERF_EVENT_STATE_ACTIVE);

	pmc_counter_put(counter);
	KUNIT_EXPECT_EQ(test, atomic_read(&pmc_test_dels), dels + 2);
out:
	migrate_enable();
	perf_pmu_unregister(&pmc_test_pmu);
}

static struct kunit_case pmc_perf_test_cases[] = {
	KUNIT_CASE(pmc_perf_test_attr),
	KUNIT_CASE(pmc_perf_test_life),
	{}
};

static struct kunit_suite pmc_perf_test_suite = {
	.name = "pmc_perf",
	.test_cases = pmc_perf_test_cases,
};

kunit_test_suite(pmc_perf_test_suite);
