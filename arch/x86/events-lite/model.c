// SPDX-License-Identifier: GPL-2.0
/*
 * events-lite x86 PMU models and the pure helpers around them: event
 * mapping, raw-event validation, constraint-aware counter assignment,
 * event-select values (the P6 enable rule) and counter-width
 * arithmetic. Nothing here touches hardware, so KUnit tests it all.
 */
#include <linux/bits.h>
#include <linux/errno.h>
#include <linux/pmc.h>
#include <linux/processor.h>
#include <linux/string.h>
#include <asm/msr-index.h>

#include "pmc_x86.h"

#define SEL(event, umask)	((u64)(event) | ((u64)(umask) << 8))

/*
 * P6 family (Pentium Pro, II, III, M): two 40-bit counters. Floating
 * point and multiply/divide events only count on one of them.
 */
static const struct pmc_x86_constraint pmc_x86_p6_constraints[] = {
	{ .code = 0x10, .code_mask = 0xff, .mask = BIT(0) },	/* FP_COMP_OPS_EXE */
	{ .code = 0x11, .code_mask = 0xff, .mask = BIT(1) },	/* FP_ASSIST */
	{ .code = 0x12, .code_mask = 0xff, .mask = BIT(1) },	/* MUL */
	{ .code = 0x13, .code_mask = 0xff, .mask = BIT(1) },	/* DIV */
	{ .code = 0x14, .code_mask = 0xff, .mask = BIT(0) },	/* CYCLES_DIV_BUSY */
	{ .code = 0xc1, .code_mask = 0xff, .mask = BIT(0) },	/* FLOPS */
	{ }
};

const struct pmc_x86_model pmc_x86_p6 = {
	.name = "p6",
	.nr_counters = 2,
	.width = 40,
	.min_period = 2,
	.msr_stride = 1,
	.en_only_in_sel0 = true,
	.write_sext32 = true,
	.sel_base = MSR_P6_EVNTSEL0,
	.ctr_base = MSR_P6_PERFCTR0,
	.raw_mask = PMC_X86_RAW_MASK,
	.event_map = {
		[PMC_HW_CPU_CYCLES]		= SEL(0x79, 0x00), /* CPU_CLK_UNHALTED */
		[PMC_HW_INSTRUCTIONS]		= SEL(0xc0, 0x00), /* INST_RETIRED */
		[PMC_HW_CACHE_REFERENCES]	= SEL(0x2e, 0x0f), /* L2_RQSTS, all MESI */
		[PMC_HW_CACHE_MISSES]		= SEL(0x24, 0x00), /* L2_LINES_IN */
		[PMC_HW_BRANCH_INSTRUCTIONS]	= SEL(0xc4, 0x00), /* BR_INST_RETIRED */
		[PMC_HW_BRANCH_MISSES]		= SEL(0xc5, 0x00), /* BR_MISS_PRED_RETIRED */
		[PMC_HW_BUS_CYCLES]		= SEL(0x62, 0x00), /* BUS_DRDY_CLOCKS */
	},
	.constraints = pmc_x86_p6_constraints,
};

/*
 * Intel architectural perfmon (CPUID leaf 0xA): the driver copies this
 * template and fills in the counter count and width from CPUID.
 */
const struct pmc_x86_model pmc_x86_arch_template = {
	.name = "intel-arch",
	.min_period = 2,
	.msr_stride = 1,
	.write_sext32 = true,
	.sel_base = MSR_ARCH_PERFMON_EVENTSEL0,
	.ctr_base = MSR_ARCH_PERFMON_PERFCTR0,
	.raw_mask = PMC_X86_RAW_MASK,
	.event_map = {
		[PMC_HW_CPU_CYCLES]		= SEL(0x3c, 0x00),
		[PMC_HW_INSTRUCTIONS]		= SEL(0xc0, 0x00),
		[PMC_HW_CACHE_REFERENCES]	= SEL(0x2e, 0x4f),
		[PMC_HW_CACHE_MISSES]		= SEL(0x2e, 0x41),
		[PMC_HW_BRANCH_INSTRUCTIONS]	= SEL(0xc4, 0x00),
		[PMC_HW_BRANCH_MISSES]		= SEL(0xc5, 0x00),
		[PMC_HW_BUS_CYCLES]		= SEL(0x3c, 0x01),
	},
};

/*
 * AMD models share their counters' width and raw-event rules and four
 * of the generic events; from family 15h the six-counter core extension
 * with its interleaved CTL/CTR pairs and HostOnly bit. Each model below
 * is these plus what differs.
 */
#define PMC_X86_AMD_EVENTS(refs, misses)				\
	.event_map = {							\
		[PMC_HW_CPU_CYCLES]		= SEL(0x76, 0x00),	\
		[PMC_HW_INSTRUCTIONS]		= SEL(0xc0, 0x00),	\
		[PMC_HW_CACHE_REFERENCES]	= (refs),		\
		[PMC_HW_CACHE_MISSES]		= (misses),		\
		[PMC_HW_BRANCH_INSTRUCTIONS]	= SEL(0xc2, 0x00),	\
		[PMC_HW_BRANCH_MISSES]		= SEL(0xc3, 0x00),	\
	}

#define PMC_X86_AMD_COUNTERS						\
	.width = 48,							\
	.min_period = 2,						\
	.raw_mask = PMC_X86_RAW_MASK_AMD

#define PMC_X86_AMD_CORE_EXT						\
	PMC_X86_AMD_COUNTERS,						\
	.nr_counters = 6,						\
	.msr_stride = 2,						\
	.sel_base = MSR_F15H_PERF_CTL,					\
	.ctr_base = MSR_F15H_PERF_CTR,					\
	.amd_host_only = true

/* AMD K7 to family 14h: four 48-bit counters, any event on any counter. */
const struct pmc_x86_model pmc_x86_k7 = {
	.name = "k7",
	PMC_X86_AMD_COUNTERS,
	.nr_counters = 4,
	.msr_stride = 1,
	.sel_base = MSR_K7_EVNTSEL0,
	.ctr_base = MSR_K7_PERFCTR0,
	PMC_X86_AMD_EVENTS(SEL(0x40, 0x00),	/* DC accesses */
			   SEL(0x41, 0x00)),	/* DC misses */
};

/* AMD family 15h/16h core extension: six counters, CTL/CTR pairs. */
const struct pmc_x86_model pmc_x86_fam15h = {
	.name = "fam15h",
	PMC_X86_AMD_CORE_EXT,
	PMC_X86_AMD_EVENTS(SEL(0x7d, 0x07),	/* L2 requests */
			   SEL(0x7e, 0x07)),	/* L2 misses */
};

/* AMD family 17h and later (Zen): the same counters, Zen event codes. */
const struct pmc_x86_model pmc_x86_fam17h = {
	.name = "fam17h",
	PMC_X86_AMD_CORE_EXT,
	PMC_X86_AMD_EVENTS(SEL(0x60, 0xff),	/* L2 requests */
			   SEL(0x64, 0x09)),	/* L2 misses */
};

/*
 * The CPUs pmc_emu= can stand in for, described as CPUID describes them:
 * the driver derives the model from this, as on hardware.
 */
static const struct pmc_x86_cpu_desc pmc_x86_emu_cpus[] = {
	{ .name = "p6", .vendor = X86_VENDOR_INTEL, .family = 6 },
	{ .name = "k7", .vendor = X86_VENDOR_AMD, .family = 6 },
	{ .name = "fam15h", .vendor = X86_VENDOR_AMD, .family = 0x15,
	  .perfctr_core = true },
	{ .name = "fam17h", .vendor = X86_VENDOR_AMD, .family = 0x17,
	  .perfctr_core = true },
	/* arch-perfmon v4: four 48-bit counters, all seven events */
	{ .name = "archperf", .vendor = X86_VENDOR_INTEL, .family = 6,
	  .arch_perfmon = true,
	  .leaf_a_eax = 4 | 4 << 8 | 48 << 16 | 7 << 24 },
	/* Zen 4: PerfMonV2 with six core counters */
	{ .name = "zen4", .vendor = X86_VENDOR_AMD, .family = 0x19,
	  .perfctr_core = true, .ext_22_eax = PMC_X86_AMD_PERFMON_V2,
	  .ext_22_ebx = 6 },
};

const struct pmc_x86_cpu_desc *pmc_x86_emu_cpu(const char *name)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(pmc_x86_emu_cpus); i++)
		if (!strcmp(pmc_x86_emu_cpus[i].name, name))
			return &pmc_x86_emu_cpus[i];
	return NULL;
}

/* Intel architectural perfmon: counters, width and events from leaf 0xA. */
static const struct pmc_x86_model *
pmc_x86_arch_model(const struct pmc_x86_cpu_desc *cpu,
		   struct pmc_x86_model *model)
{
	static const u8 unavailable_bit[PMC_HW_MAX] = {
		[PMC_HW_CPU_CYCLES]		= 0,
		[PMC_HW_INSTRUCTIONS]		= 1,
		[PMC_HW_BUS_CYCLES]		= 2,
		[PMC_HW_CACHE_REFERENCES]	= 3,
		[PMC_HW_CACHE_MISSES]		= 4,
		[PMC_HW_BRANCH_INSTRUCTIONS]	= 5,
		[PMC_HW_BRANCH_MISSES]		= 6,
	};
	u32 eax = cpu->leaf_a_eax, version = eax & 0xff;
	u32 bits = (eax >> 24) & 0xff;
	int id;

	if (!version || !((eax >> 8) & 0xff))
		return NULL;
	*model = pmc_x86_arch_template;
	model->nr_counters = min_t(u32, (eax >> 8) & 0xff,
				   PMC_X86_MAX_COUNTERS);
	model->width = (eax >> 16) & 0xff;
	for (id = 0; id < PMC_HW_MAX; id++)
		if (unavailable_bit[id] >= bits ||
		    cpu->leaf_a_ebx & BIT(unavailable_bit[id]))
			model->event_map[id] = 0;
	if (version >= 2) {
		model->name = "intel-arch-v2+";
		model->global_ctrl = MSR_CORE_PERF_GLOBAL_CTRL;
		model->global_status = MSR_CORE_PERF_GLOBAL_STATUS;
		model->global_ack = MSR_CORE_PERF_GLOBAL_OVF_CTRL;
	}
	return model;
}

/* AMD PerfMonV2 (Zen 4 on): family 17h events, global control. */
static const struct pmc_x86_model *
pmc_x86_amd_v2_model(const struct pmc_x86_cpu_desc *cpu,
		     struct pmc_x86_model *model)
{
	u32 nr = PMC_X86_AMD_NR_COUNTERS(cpu->ext_22_ebx);

	*model = pmc_x86_fam17h;
	model->name = "amd-perfmon-v2";
	model->nr_counters = min_t(u32, nr ?: 6, PMC_X86_MAX_COUNTERS);
	model->global_ctrl = MSR_AMD64_PERF_CNTR_GLOBAL_CTL;
	model->global_status = MSR_AMD64_PERF_CNTR_GLOBAL_STATUS;
	model->global_ack = MSR_AMD64_PERF_CNTR_GLOBAL_STATUS_CLR;
	return model;
}

/*
 * pmc_x86_model_for() - the model that drives @cpu, or NULL
 *
 * Models derived from CPUID values are built in @buf. Hybrid parts are
 * the caller's to refuse: their core types differ in leaf 0xA.
 */
const struct pmc_x86_model *pmc_x86_model_for(const struct pmc_x86_cpu_desc *cpu,
					      struct pmc_x86_model *buf)
{
	switch (cpu->vendor) {
	case X86_VENDOR_INTEL:
		if (cpu->arch_perfmon)
			return pmc_x86_arch_model(cpu, buf);
		return cpu->family == 6 ? &pmc_x86_p6 : NULL;
	case X86_VENDOR_AMD:
	case X86_VENDOR_HYGON:
		if (cpu->family >= 0x17 &&
		    cpu->ext_22_eax & PMC_X86_AMD_PERFMON_V2)
			return pmc_x86_amd_v2_model(cpu, buf);
		if (cpu->family >= 0x17)
			return &pmc_x86_fam17h;
		if (cpu->perfctr_core)
			return &pmc_x86_fam15h;
		return cpu->family >= 6 ? &pmc_x86_k7 : NULL;
	default:
		return NULL;
	}
}

/*
 * Translate a pmc_attr config into an event select without the bits the
 * kernel owns. ENOENT for a generic event the model does not have, as
 * perf; EINVAL for raw values with bits the kernel owns or the model
 * does not have.
 */
int pmc_x86_event_config(const struct pmc_x86_model *model, u64 config,
			 u64 *sel)
{
	u64 id;

	if (config & PMC_CONFIG_RAW) {
		config &= ~PMC_CONFIG_RAW;
		if (!config || config & ~model->raw_mask)
			return -EINVAL;
		*sel = config;
		return 0;
	}
	if (PMC_CONFIG_TYPE(config) != PMC_TYPE_HARDWARE)
		return -EINVAL;
	id = PMC_CONFIG_ID(config);
	if (id >= PMC_HW_MAX || !model->event_map[id])
		return -ENOENT;
	*sel = model->event_map[id];
	return 0;
}

/* The counters event select @sel may use. */
u32 pmc_x86_counter_mask(const struct pmc_x86_model *model, u64 sel)
{
	const struct pmc_x86_constraint *c;
	u32 all = BIT(model->nr_counters) - 1;

	for (c = model->constraints; c && c->mask; c++)
		if ((sel & c->code_mask) == c->code)
			return c->mask & all;
	return all;
}

static bool pmc_x86_assign_from(const u32 *masks, const int *order, int n,
				int pos, u32 used, int *assign)
{
	int i = order[pos], idx;
	u32 free;

	if (pos == n)
		return true;
	free = masks[i] & ~used;
	while (free) {
		idx = __ffs(free);
		free &= free - 1;
		assign[i] = idx;
		if (pmc_x86_assign_from(masks, order, n, pos + 1,
					used | BIT(idx), assign))
			return true;
	}
	return false;
}

/*
 * Give each of @n events a distinct counter allowed by its mask. Events
 * with fewer choices go first, and the search backtracks, so it finds an
 * assignment whenever one exists (n is at most PMC_X86_MAX_COUNTERS).
 * Returns 0 and fills @assign, or -EAGAIN.
 */
int pmc_x86_assign(const u32 *masks, int n, int nr_counters, int *assign)
{
	int order[PMC_X86_MAX_COUNTERS];
	int i, j, tmp;

	if (n > nr_counters || n > PMC_X86_MAX_COUNTERS)
		return -EAGAIN;
	for (i = 0; i < n; i++)
		order[i] = i;
	/* Insertion sort by number of choices: n is tiny. */
	for (i = 1; i < n; i++) {
		for (j = i; j > 0 && hweight32(masks[order[j]]) <
				     hweight32(masks[order[j - 1]]); j--) {
			tmp = order[j];
			order[j] = order[j - 1];
			order[j - 1] = tmp;
		}
	}
	return pmc_x86_assign_from(masks, order, n, 0, 0, assign) ? 0 : -EAGAIN;
}

/*
 * The value of event-select register @idx when it holds @sel (0: idle)
 * and the counters in @active are running. On P6 only EVNTSEL0.EN
 * matters and it enables both counters, so it is set whenever any
 * counter runs, even when counter 0 itself is idle (then with USR and
 * OS clear, so counter 0 counts nothing).
 */
u64 pmc_x86_sel_value(const struct pmc_x86_model *model, int idx, u64 sel,
		      u32 active)
{
	if (!model->en_only_in_sel0)
		return sel ? sel | PMC_X86_SEL_EN : 0;
	if (idx == 0)
		return active ? sel | PMC_X86_SEL_EN : 0;
	return sel;
}

/* Largest period that a counter write can express. */
u64 pmc_x86_max_period(const struct pmc_x86_model *model)
{
	if (model->write_sext32)
		return (1ULL << 31) - 1;
	return (1ULL << (model->width - 1)) - 1;
}

/*
 * The events to program for the next overflow, given the @left of the
 * period (<= 0 once it ran out). A period that ran out more than once
 * over starts afresh: one sample stands for the lost ones. A throttled
 * counter gets the longest period, so that it interrupts rarely, and no
 * counter gets less than the model's minimum.
 */
s64 pmc_x86_next_left(const struct pmc_x86_model *model, s64 left,
		      s64 period, bool throttled)
{
	s64 max = pmc_x86_max_period(model);

	if (throttled)
		return max;
	if (left <= -period)
		left = period;
	else if (left <= 0)
		left += period;
	return clamp_t(s64, left, model->min_period, max);
}

/* Events between two raw counter values, across at most one wrap. */
u64 pmc_x86_delta(const struct pmc_x86_model *model, u64 prev, u64 now)
{
	int shift = 64 - model->width;

	return ((now << shift) - (prev << shift)) >> shift;
}
