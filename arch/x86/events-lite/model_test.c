// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the events-lite x86 models: event tables per family,
 * raw-event validation, constraint-aware counter assignment, counter
 * width and sign-extension arithmetic, the P6 enable rule, the model
 * each CPU description gets, and the period programmed after an overflow.
 */
#include <kunit/test.h>
#include <linux/pmc.h>
#include <linux/processor.h>
#include <asm/msr-index.h>

#include "pmc_x86.h"

#define HW(id)	PMC_CONFIG(PMC_TYPE_HARDWARE, id)

static void pmc_x86_test_event_tables(struct kunit *test)
{
	const struct pmc_x86_model *p6 = &pmc_x86_p6;
	const struct pmc_x86_model *k7 = &pmc_x86_k7;
	const struct pmc_x86_model *zen = &pmc_x86_fam17h;
	u64 sel;

	KUNIT_EXPECT_EQ(test, p6->nr_counters, 2);
	KUNIT_EXPECT_EQ(test, p6->width, 40);
	KUNIT_EXPECT_EQ(test, k7->nr_counters, 4);
	KUNIT_EXPECT_EQ(test, k7->width, 48);
	KUNIT_EXPECT_EQ(test, zen->nr_counters, 6);
	KUNIT_EXPECT_EQ(test, zen->msr_stride, 2);

	KUNIT_EXPECT_EQ(test, pmc_x86_event_config(p6, HW(PMC_HW_CPU_CYCLES), &sel), 0);
	KUNIT_EXPECT_EQ(test, sel, 0x79ULL);
	KUNIT_EXPECT_EQ(test, pmc_x86_event_config(p6, HW(PMC_HW_CACHE_REFERENCES), &sel), 0);
	KUNIT_EXPECT_EQ(test, sel, 0x0f2eULL);
	KUNIT_EXPECT_EQ(test, pmc_x86_event_config(k7, HW(PMC_HW_INSTRUCTIONS), &sel), 0);
	KUNIT_EXPECT_EQ(test, sel, 0xc0ULL);
	KUNIT_EXPECT_EQ(test, pmc_x86_event_config(zen, HW(PMC_HW_BRANCH_MISSES), &sel), 0);
	KUNIT_EXPECT_EQ(test, sel, 0xc3ULL);

	/* AMD has no bus-cycles event; ids past the table do not exist. */
	KUNIT_EXPECT_EQ(test, pmc_x86_event_config(k7, HW(PMC_HW_BUS_CYCLES), &sel), -ENOENT);
	KUNIT_EXPECT_EQ(test, pmc_x86_event_config(zen, HW(PMC_HW_BUS_CYCLES), &sel), -ENOENT);
	KUNIT_EXPECT_EQ(test, pmc_x86_event_config(p6, HW(PMC_HW_MAX), &sel), -ENOENT);

	/* MSR layout: separate banks, or CTL/CTR pairs. */
	KUNIT_EXPECT_EQ(test, pmc_x86_sel_msr(p6, 1), 0x187U);
	KUNIT_EXPECT_EQ(test, pmc_x86_ctr_msr(p6, 1), 0xc2U);
	KUNIT_EXPECT_EQ(test, pmc_x86_sel_msr(zen, 2), 0xc0010204U);
	KUNIT_EXPECT_EQ(test, pmc_x86_ctr_msr(zen, 2), 0xc0010205U);
}

/* The event select of generic event @id, or ~0 if @m has none. */
static u64 pmc_x86_test_sel(const struct pmc_x86_model *m, u64 id)
{
	u64 sel;

	return pmc_x86_event_config(m, HW(id), &sel) ? ~0ULL : sel;
}

/*
 * The AMD models are built from shared parts: each has them all, and
 * keeps what is its own.
 */
static void pmc_x86_test_amd_models(struct kunit *test)
{
	const struct pmc_x86_model *amd[] = {
		&pmc_x86_k7, &pmc_x86_fam15h, &pmc_x86_fam17h,
	};
	/* Cache references and misses, per model. */
	static const u64 cache[][2] = {
		{ 0x40, 0x41 }, { 0x077d, 0x077e }, { 0xff60, 0x0964 },
	};
	const struct pmc_x86_model *m;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(amd); i++) {
		m = amd[i];
		KUNIT_EXPECT_EQ(test, m->width, 48);
		KUNIT_EXPECT_EQ(test, m->min_period, 2);
		KUNIT_EXPECT_EQ(test, m->raw_mask, PMC_X86_RAW_MASK_AMD);
		KUNIT_EXPECT_EQ(test, m->amd_host_only, i > 0);
		KUNIT_EXPECT_EQ(test, m->nr_counters, i ? 6 : 4);
		KUNIT_EXPECT_EQ(test, pmc_x86_test_sel(m, PMC_HW_CPU_CYCLES), 0x76ULL);
		KUNIT_EXPECT_EQ(test, pmc_x86_test_sel(m, PMC_HW_BRANCH_INSTRUCTIONS), 0xc2ULL);
		KUNIT_EXPECT_EQ(test, pmc_x86_test_sel(m, PMC_HW_CACHE_REFERENCES), cache[i][0]);
		KUNIT_EXPECT_EQ(test, pmc_x86_test_sel(m, PMC_HW_CACHE_MISSES), cache[i][1]);
	}
	KUNIT_EXPECT_EQ(test, pmc_x86_sel_msr(&pmc_x86_fam15h, 1), 0xc0010202U);
	KUNIT_EXPECT_EQ(test, pmc_x86_sel_msr(&pmc_x86_k7, 1), 0xc0010001U);
}

static void pmc_x86_test_raw_events(struct kunit *test)
{
	const struct pmc_x86_model *p6 = &pmc_x86_p6;
	const struct pmc_x86_model *k7 = &pmc_x86_k7;
	u64 sel;

	/* event, unit mask, edge, invert and counter mask are the user's */
	KUNIT_EXPECT_EQ(test, pmc_x86_event_config(p6, PMC_CONFIG_RAW | 0x4064, &sel), 0);
	KUNIT_EXPECT_EQ(test, sel, 0x4064ULL);
	KUNIT_EXPECT_EQ(test, pmc_x86_event_config(p6, PMC_CONFIG_RAW | 0x02840079ULL, &sel), 0);
	KUNIT_EXPECT_EQ(test, sel, 0x02840079ULL);

	/* USR, OS, INT and EN belong to the kernel */
	KUNIT_EXPECT_EQ(test, pmc_x86_event_config(p6, PMC_CONFIG_RAW | BIT(16) | 0x79, &sel),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, pmc_x86_event_config(p6, PMC_CONFIG_RAW | BIT(17) | 0x79, &sel),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, pmc_x86_event_config(p6, PMC_CONFIG_RAW | BIT(20) | 0x79, &sel),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, pmc_x86_event_config(p6, PMC_CONFIG_RAW | BIT(22) | 0x79, &sel),
			-EINVAL);
	/* pin control, any-thread and high bits do not exist here */
	KUNIT_EXPECT_EQ(test, pmc_x86_event_config(p6, PMC_CONFIG_RAW | BIT(19) | 0x79, &sel),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, pmc_x86_event_config(p6, PMC_CONFIG_RAW | BIT_ULL(32) | 0x79, &sel),
			-EINVAL);
	/* ...but AMD's event select bits 35:32 do */
	KUNIT_EXPECT_EQ(test, pmc_x86_event_config(k7, PMC_CONFIG_RAW | BIT_ULL(32) | 0x79, &sel),
			0);
	/* an empty raw event selects nothing */
	KUNIT_EXPECT_EQ(test, pmc_x86_event_config(p6, PMC_CONFIG_RAW, &sel), -EINVAL);
}

static void pmc_x86_test_assign(struct kunit *test)
{
	const struct pmc_x86_model *p6 = &pmc_x86_p6;
	u32 masks[PMC_X86_MAX_COUNTERS];
	int assign[PMC_X86_MAX_COUNTERS];

	/* P6 constraints: FLOPS on counter 0, MUL on counter 1. */
	KUNIT_EXPECT_EQ(test, pmc_x86_counter_mask(p6, 0xc1), BIT(0));
	KUNIT_EXPECT_EQ(test, pmc_x86_counter_mask(p6, 0x12 | PMC_X86_SEL_USR), BIT(1));
	KUNIT_EXPECT_EQ(test, pmc_x86_counter_mask(p6, 0x79), 0x3U);

	/* An unconstrained event first must still leave counter 0 to FLOPS. */
	masks[0] = 0x3;
	masks[1] = BIT(0);
	KUNIT_ASSERT_EQ(test, pmc_x86_assign(masks, 2, 2, assign), 0);
	KUNIT_EXPECT_EQ(test, assign[0], 1);
	KUNIT_EXPECT_EQ(test, assign[1], 0);

	/* Both on counter 0 only: no assignment exists. */
	masks[0] = BIT(0);
	masks[1] = BIT(0);
	KUNIT_EXPECT_EQ(test, pmc_x86_assign(masks, 2, 2, assign), -EAGAIN);

	/* More events than counters. */
	masks[0] = 0x3;
	masks[1] = 0x3;
	masks[2] = 0x3;
	KUNIT_EXPECT_EQ(test, pmc_x86_assign(masks, 3, 2, assign), -EAGAIN);

	/* A chain that needs backtracking: {0,1}, {1,2}, {0}, {2,3}. */
	masks[0] = 0x3;
	masks[1] = 0x6;
	masks[2] = 0x1;
	masks[3] = 0xc;
	KUNIT_ASSERT_EQ(test, pmc_x86_assign(masks, 4, 4, assign), 0);
	KUNIT_EXPECT_EQ(test, assign[2], 0);
	KUNIT_EXPECT_EQ(test, assign[0], 1);
	KUNIT_EXPECT_EQ(test, assign[1], 2);
	KUNIT_EXPECT_EQ(test, assign[3], 3);
}

static void pmc_x86_test_width(struct kunit *test)
{
	const struct pmc_x86_model *p6 = &pmc_x86_p6;
	const struct pmc_x86_model *k7 = &pmc_x86_k7;
	u64 top40 = BIT_ULL(40) - 1;

	KUNIT_EXPECT_EQ(test, pmc_x86_delta(p6, 100, 250), 150ULL);
	/* across the 40-bit wrap: no jump by 2^40, no going backwards */
	KUNIT_EXPECT_EQ(test, pmc_x86_delta(p6, top40 - 9, 5), 15ULL);
	KUNIT_EXPECT_EQ(test, pmc_x86_delta(k7, BIT_ULL(48) - 1, 0), 1ULL);
	/* bits above the width are ignored */
	KUNIT_EXPECT_EQ(test, pmc_x86_delta(p6, BIT_ULL(40) | 7, 8), 1ULL);

	/* P6 writes are 32-bit sign-extended: periods stop at 2^31 - 1 */
	KUNIT_EXPECT_EQ(test, pmc_x86_max_period(p6), (1ULL << 31) - 1);
	KUNIT_EXPECT_EQ(test, pmc_x86_max_period(k7), (1ULL << 47) - 1);
	KUNIT_EXPECT_EQ(test, (u64)(s64)(s32)(-(u64)1000) & top40, top40 - 999);
}

static void pmc_x86_test_p6_enable(struct kunit *test)
{
	const struct pmc_x86_model *p6 = &pmc_x86_p6;
	const struct pmc_x86_model *k7 = &pmc_x86_k7;
	u64 en = PMC_X86_SEL_EN;

	/* Counter 1 alone still needs EVNTSEL0.EN, with counter 0 idle. */
	KUNIT_EXPECT_EQ(test, pmc_x86_sel_value(p6, 0, 0, BIT(1)), en);
	KUNIT_EXPECT_EQ(test, pmc_x86_sel_value(p6, 1, 0xc0, BIT(1)), 0xc0ULL);
	/* Both running: EN only in EVNTSEL0. */
	KUNIT_EXPECT_EQ(test, pmc_x86_sel_value(p6, 0, 0x79, 0x3), 0x79 | en);
	/* Nothing running: everything off. */
	KUNIT_EXPECT_EQ(test, pmc_x86_sel_value(p6, 0, 0, 0), 0ULL);
	/* Other models enable each counter on its own. */
	KUNIT_EXPECT_EQ(test, pmc_x86_sel_value(k7, 1, 0xc0, BIT(1)), 0xc0 | en);
	KUNIT_EXPECT_EQ(test, pmc_x86_sel_value(k7, 0, 0, BIT(1)), 0ULL);
}

/* Each emulated CPU, described as CPUID would, gets the expected model. */
static void pmc_x86_test_model_for(struct kunit *test)
{
	static const struct {
		const char *cpu;
		const char *model;
		u8 nr_counters;
		u32 global_ctrl;
		u32 global_ack;
	} cases[] = {
		{ "p6", "p6", 2 },
		{ "k7", "k7", 4 },
		{ "fam15h", "fam15h", 6 },
		{ "fam17h", "fam17h", 6 },
		{ "archperf", "intel-arch-v2+", 4, MSR_CORE_PERF_GLOBAL_CTRL,
		  MSR_CORE_PERF_GLOBAL_OVF_CTRL },
		{ "zen4", "amd-perfmon-v2", 6, MSR_AMD64_PERF_CNTR_GLOBAL_CTL,
		  MSR_AMD64_PERF_CNTR_GLOBAL_STATUS_CLR },
	};
	struct pmc_x86_cpu_desc v1 = {
		.vendor = X86_VENDOR_INTEL, .family = 6, .arch_perfmon = true,
		/* version 1, two 40-bit counters, no branch-miss event */
		.leaf_a_eax = 1 | 2 << 8 | 40 << 16 | 7 << 24,
		.leaf_a_ebx = BIT(6),
	};
	const struct pmc_x86_cpu_desc *cpu;
	const struct pmc_x86_model *model;
	struct pmc_x86_model buf;
	int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		cpu = pmc_x86_emu_cpu(cases[i].cpu);
		KUNIT_ASSERT_NOT_NULL(test, cpu);
		model = pmc_x86_model_for(cpu, &buf);
		KUNIT_ASSERT_NOT_NULL(test, model);
		KUNIT_EXPECT_STREQ(test, model->name, cases[i].model);
		KUNIT_EXPECT_EQ(test, model->nr_counters, cases[i].nr_counters);
		KUNIT_EXPECT_EQ(test, model->width, 48 - 8 * !strcmp(cases[i].cpu, "p6"));
		KUNIT_EXPECT_EQ(test, model->global_ctrl, cases[i].global_ctrl);
		KUNIT_EXPECT_EQ(test, model->global_ack, cases[i].global_ack);
	}
	KUNIT_EXPECT_NULL(test, pmc_x86_emu_cpu("p4"));

	/* Version 1 has no global control; unavailable events are gone. */
	model = pmc_x86_model_for(&v1, &buf);
	KUNIT_ASSERT_NOT_NULL(test, model);
	KUNIT_EXPECT_EQ(test, model->nr_counters, 2);
	KUNIT_EXPECT_EQ(test, model->global_ctrl, 0U);
	KUNIT_EXPECT_EQ(test, model->event_map[PMC_HW_BRANCH_MISSES], 0ULL);
	KUNIT_EXPECT_NE(test, model->event_map[PMC_HW_BRANCH_INSTRUCTIONS], 0ULL);
	/* Leaf 0xA without counters, or a family we do not know: none. */
	v1.leaf_a_eax = 2;
	KUNIT_EXPECT_NULL(test, pmc_x86_model_for(&v1, &buf));
	v1.arch_perfmon = false;
	v1.family = 15;
	KUNIT_EXPECT_NULL(test, pmc_x86_model_for(&v1, &buf));
}

/* The next period: carries the overshoot, honours the floor and throttle. */
static void pmc_x86_test_next_left(struct kunit *test)
{
	struct pmc_x86_model m = pmc_x86_k7;
	s64 max = pmc_x86_max_period(&m);

	KUNIT_EXPECT_EQ(test, pmc_x86_next_left(&m, 500, 1000, false), 500);
	/* ran out 10 events ago: the next overflow comes 10 events early */
	KUNIT_EXPECT_EQ(test, pmc_x86_next_left(&m, -10, 1000, false), 990);
	/* ran out more than a period ago: start afresh */
	KUNIT_EXPECT_EQ(test, pmc_x86_next_left(&m, -5000, 1000, false), 1000);
	KUNIT_EXPECT_EQ(test, pmc_x86_next_left(&m, 0, 1, false), 2);
	KUNIT_EXPECT_EQ(test, pmc_x86_next_left(&m, 0, 1, true), max);
	KUNIT_EXPECT_EQ(test, pmc_x86_next_left(&m, max + 5, max + 5, false), max);
	m.min_period = 128;
	KUNIT_EXPECT_EQ(test, pmc_x86_next_left(&m, 0, 1, false), 128);
}

static struct kunit_case pmc_x86_test_cases[] = {
	KUNIT_CASE(pmc_x86_test_event_tables),
	KUNIT_CASE(pmc_x86_test_amd_models),
	KUNIT_CASE(pmc_x86_test_raw_events),
	KUNIT_CASE(pmc_x86_test_assign),
	KUNIT_CASE(pmc_x86_test_width),
	KUNIT_CASE(pmc_x86_test_p6_enable),
	KUNIT_CASE(pmc_x86_test_model_for),
	KUNIT_CASE(pmc_x86_test_next_left),
	{}
};

static struct kunit_suite pmc_x86_test_suite = {
	.name = "pmc_x86",
	.test_cases = pmc_x86_test_cases,
};

kunit_test_suite(pmc_x86_test_suite);

MODULE_DESCRIPTION("KUnit tests for the events-lite x86 PMU models");
MODULE_LICENSE("GPL");
