// SPDX-License-Identifier: GPL-2.0
/*
 * events-lite x86 PMU driver: P6/Intel architectural perfmon and AMD
 * counters, driven through a model table (model.c) and an MSR access
 * layer that the emulated PMU (emu.c) can replace.
 *
 * Per-CPU state (struct pmc_x86_cpu) is changed only on its own CPU
 * with IRQs off: by add()/del(), called under a context lock from the
 * scheduler or from pmc_ctx_call(). The overflow NMI reads it at any
 * time, so add() publishes a slot only after programming the counter,
 * and del() unpublishes it before folding the last count.
 *
 * Counters are reserved through the perfctr reservation that x86 perf
 * and the NMI watchdog use (reserve_perfctr_nmi()), from the first
 * hardware counter to the last, so both subsystems never drive the same
 * counter: the second one gets EBUSY. With the hardlockup detector on,
 * its perf counter holds one counter and pmc_open() of a hardware event
 * fails with EBUSY until it is turned off (nmi_watchdog=0).
 */
#define pr_fmt(fmt) "events-lite: " fmt

#include <linux/bitops.h>
#include <linux/cpufeature.h>
#include <linux/init.h>
#include <linux/mutex.h>
#include <linux/nmi.h>
#include <linux/percpu.h>
#include <linux/pmc.h>
#include <linux/smp.h>
#include <asm/apic.h>
#include <asm/msr.h>
#include <asm/processor.h>

#include "pmc_x86.h"

struct pmc_x86_cpu {
	struct pmc_counter *slots[PMC_X86_MAX_COUNTERS];
	unsigned long active;		/* published slots */
};

static DEFINE_PER_CPU(struct pmc_x86_cpu, pmc_x86_cpu);

static const struct pmc_x86_model *pmc_x86_model __ro_after_init;
static struct pmc_x86_model pmc_x86_arch_model __ro_after_init;
static const struct pmc_x86_msr_ops *pmc_x86_msr __ro_after_init;
static bool pmc_x86_emulated __ro_after_init;
static char pmc_x86_emu_name[16] __initdata;

static DEFINE_MUTEX(pmc_x86_reserve_mutex);
static unsigned int pmc_x86_users;	/* pmc_x86_reserve_mutex */

static int __init pmc_x86_emu_param(char *str)
{
	strscpy(pmc_x86_emu_name, str, sizeof(pmc_x86_emu_name));
	return 1;
}
__setup("pmc_emu=", pmc_x86_emu_param);

static u64 pmc_x86_rd(u32 msr)
{
	u64 val = 0;

	pmc_x86_msr->read(msr, &val);
	return val;
}

static void pmc_x86_wr(u32 msr, u64 val)
{
	pmc_x86_msr->write(msr, val);
}

static int pmc_x86_real_read(u32 msr, u64 *val)
{
	return rdmsrl_safe(msr, val);
}

static int pmc_x86_real_write(u32 msr, u64 val)
{
	return wrmsrl_safe(msr, val);
}

static const struct pmc_x86_msr_ops pmc_x86_real_msr = {
	.read	= pmc_x86_real_read,
	.write	= pmc_x86_real_write,
};

/* Fold the events since the last fold into the 64-bit count; NMI-safe. */
static u64 pmc_x86_update(struct pmc_counter *counter)
{
	const struct pmc_x86_model *model = pmc_x86_model;
	u64 prev, now, delta;

	do {
		prev = local64_read(&counter->hw.prev_count);
		now = pmc_x86_rd(pmc_x86_ctr_msr(model, counter->hw.idx));
	} while (local64_cmpxchg(&counter->hw.prev_count, prev, now) != prev);

	delta = pmc_x86_delta(model, prev, now);
	local64_add(delta, &counter->count);
	local64_sub(delta, &counter->hw.period_left);
	return now;
}

/*
 * Program the counter to overflow at the end of its period: write minus
 * the events left. Returns true when the period had run out.
 */
static bool pmc_x86_set_period(struct pmc_counter *counter)
{
	const struct pmc_x86_model *model = pmc_x86_model;
	s64 left = local64_read(&counter->hw.period_left);
	s64 period = counter->hw.period;
	bool expired = left <= 0;
	u64 val;

	if (left <= -period)
		left = period;
	else if (left <= 0)
		left += period;
	left = clamp_t(s64, left, 2, pmc_x86_max_period(model));
	local64_set(&counter->hw.period_left, left);

	val = -(u64)left & GENMASK_ULL(model->width - 1, 0);
	local64_set(&counter->hw.prev_count, val);
	pmc_x86_wr(pmc_x86_ctr_msr(model, counter->hw.idx), val);
	return expired;
}

static void pmc_x86_write_sel(struct pmc_x86_cpu *cpuc, int idx)
{
	const struct pmc_x86_model *model = pmc_x86_model;
	struct pmc_counter *counter = cpuc->slots[idx];
	u64 sel = 0;

	if (counter && test_bit(idx, &cpuc->active))
		sel = counter->hw.sel;
	pmc_x86_wr(pmc_x86_sel_msr(model, idx),
		   pmc_x86_sel_value(model, idx, sel, cpuc->active));
}

/* Event selects change: idx itself, and P6's shared enable in sel 0. */
static void pmc_x86_write_sels(struct pmc_x86_cpu *cpuc, int idx)
{
	pmc_x86_write_sel(cpuc, idx);
	if (pmc_x86_model->en_only_in_sel0 && idx != 0)
		pmc_x86_write_sel(cpuc, 0);
}

static void pmc_x86_start(struct pmc_x86_cpu *cpuc,
			  struct pmc_counter *counter, int idx)
{
	counter->hw.idx = idx;
	pmc_x86_set_period(counter);
	WRITE_ONCE(cpuc->slots[idx], counter);
	barrier();		/* the NMI sees a programmed counter */
	__set_bit(idx, &cpuc->active);
	pmc_x86_write_sels(cpuc, idx);
}

static void pmc_x86_stop(struct pmc_x86_cpu *cpuc, struct pmc_counter *counter)
{
	int idx = counter->hw.idx;

	__clear_bit(idx, &cpuc->active);
	pmc_x86_write_sels(cpuc, idx);
	barrier();		/* the NMI is done with the slot */
	WRITE_ONCE(cpuc->slots[idx], NULL);
	pmc_x86_update(counter);
	counter->hw.idx = -1;
}

/*
 * Put @counter on this CPU's PMU. The counters already there may have
 * to move to make room for a constrained event: solve the assignment
 * for all of them, then move the ones whose counter changed.
 */
static int pmc_x86_add(struct pmc_counter *counter)
{
	const struct pmc_x86_model *model = pmc_x86_model;
	struct pmc_x86_cpu *cpuc = this_cpu_ptr(&pmc_x86_cpu);
	struct pmc_counter *list[PMC_X86_MAX_COUNTERS];
	u32 masks[PMC_X86_MAX_COUNTERS];
	int assign[PMC_X86_MAX_COUNTERS];
	int i, n = 0, idx;

	for_each_set_bit(idx, &cpuc->active, model->nr_counters)
		list[n++] = cpuc->slots[idx];
	if (n == model->nr_counters)
		return -EAGAIN;
	list[n++] = counter;
	for (i = 0; i < n; i++)
		masks[i] = pmc_x86_counter_mask(model, list[i]->hw.sel);
	if (pmc_x86_assign(masks, n, model->nr_counters, assign))
		return -EAGAIN;

	for (i = 0; i < n - 1; i++)
		if (assign[i] != list[i]->hw.idx)
			pmc_x86_stop(cpuc, list[i]);
	for (i = 0; i < n; i++)
		if (list[i]->hw.idx < 0)
			pmc_x86_start(cpuc, list[i], assign[i]);
	return 0;
}

static void pmc_x86_del(struct pmc_counter *counter)
{
	pmc_x86_stop(this_cpu_ptr(&pmc_x86_cpu), counter);
}

static void pmc_x86_read(struct pmc_counter *counter)
{
	if (counter->hw.idx >= 0)
		pmc_x86_update(counter);
}

/* pmc_x86_update() is NMI-safe: a sample may fold an active member. */
static u64 pmc_x86_sample_read(struct pmc_counter *counter)
{
	pmc_x86_read(counter);
	return local64_read(&counter->count);
}

static const struct pmc_pmu pmc_x86_pmu;

/*
 * Could the hardware counters of @leader's group, with @counter, all be
 * on the PMU at once? The same assignment that add() solves, on an
 * empty PMU; a group that fails it would never count.
 */
static int pmc_x86_validate_group(struct pmc_counter *leader,
				  struct pmc_counter *counter)
{
	const struct pmc_x86_model *model = pmc_x86_model;
	u32 masks[PMC_X86_MAX_COUNTERS];
	int assign[PMC_X86_MAX_COUNTERS];
	struct pmc_counter *pos;
	int n = 0;

	if (counter->pmu != &pmc_x86_pmu)
		return 0;
	for_each_group_counter(pos, leader) {
		if (pos->pmu != &pmc_x86_pmu)
			continue;
		if (n == model->nr_counters)
			return -EINVAL;
		masks[n++] = pmc_x86_counter_mask(model, pos->hw.sel);
	}
	if (n == model->nr_counters)
		return -EINVAL;
	masks[n++] = pmc_x86_counter_mask(model, counter->hw.sel);
	return pmc_x86_assign(masks, n, model->nr_counters, assign) ? -EINVAL : 0;
}

/*
 * Samples take the registers of the interrupted code. An emulated
 * overflow is raised from a timer, so the model supplies the registers
 * that timer interrupted.
 */
static struct pt_regs *pmc_x86_sample_regs(struct pt_regs *regs)
{
	if (pmc_x86_msr->sample_regs)
		return pmc_x86_msr->sample_regs() ?: regs;
	return regs;
}

static int pmc_x86_nmi(unsigned int cmd, struct pt_regs *regs)
{
	const struct pmc_x86_model *model = pmc_x86_model;
	struct pmc_x86_cpu *cpuc = this_cpu_ptr(&pmc_x86_cpu);
	unsigned long active = READ_ONCE(cpuc->active);
	struct pmc_counter *counter;
	int idx, handled = 0;

	for_each_set_bit(idx, &active, model->nr_counters) {
		counter = READ_ONCE(cpuc->slots[idx]);
		if (!counter)
			continue;
		/* Counters start negative: the top bit clears on overflow. */
		if (pmc_x86_update(counter) & BIT_ULL(model->width - 1))
			continue;
		handled++;
		if (pmc_x86_set_period(counter) && counter->attr.irq_period)
			pmc_counter_overflow(counter, pmc_x86_sample_regs(regs), 0);
	}
	if (pmc_x86_emulated) {
		if (pmc_x86_msr->nmi_claim && pmc_x86_msr->nmi_claim())
			handled++;
	} else {
		/* The local APIC masks LVTPC when it delivers a PMI. */
		apic_write(APIC_LVTPC, APIC_DM_NMI);
	}
	return handled ? NMI_HANDLED : NMI_DONE;
}

static void pmc_x86_cpu_setup(void *unused)
{
	const struct pmc_x86_model *model = pmc_x86_model;
	int idx;

	for (idx = 0; idx < model->nr_counters; idx++)
		pmc_x86_wr(pmc_x86_sel_msr(model, idx), 0);
	if (pmc_x86_emulated)
		return;
	/* Architectural perfmon v2+: the counters need their global enable. */
	if (model == &pmc_x86_arch_model && (cpuid_eax(0xa) & 0xff) >= 2) {
		u64 ctrl;

		if (!rdmsrl_safe(MSR_CORE_PERF_GLOBAL_CTRL, &ctrl))
			wrmsrl_safe(MSR_CORE_PERF_GLOBAL_CTRL, ctrl |
				    GENMASK_ULL(model->nr_counters - 1, 0));
	}
	apic_write(APIC_LVTPC, APIC_DM_NMI);
}

static void pmc_x86_unreserve(int nr)
{
	const struct pmc_x86_model *model = pmc_x86_model;

	while (nr--) {
		release_evntsel_nmi(pmc_x86_sel_msr(model, nr));
		release_perfctr_nmi(pmc_x86_ctr_msr(model, nr));
	}
}

/* Take the counters from the shared reservation; EBUSY if perf has one. */
static int pmc_x86_reserve(void)
{
	const struct pmc_x86_model *model = pmc_x86_model;
	int ret = 0, idx;

	mutex_lock(&pmc_x86_reserve_mutex);
	if (pmc_x86_users++)
		goto out;
	for (idx = 0; idx < model->nr_counters && !pmc_x86_emulated; idx++) {
		if (!reserve_perfctr_nmi(pmc_x86_ctr_msr(model, idx)))
			break;
		if (!reserve_evntsel_nmi(pmc_x86_sel_msr(model, idx))) {
			release_perfctr_nmi(pmc_x86_ctr_msr(model, idx));
			break;
		}
	}
	if (!pmc_x86_emulated && idx < model->nr_counters) {
		pmc_x86_unreserve(idx);
		pmc_x86_users--;
		ret = -EBUSY;
		goto out;
	}
	on_each_cpu(pmc_x86_cpu_setup, NULL, 1);
out:
	mutex_unlock(&pmc_x86_reserve_mutex);
	return ret;
}

static void pmc_x86_release(void)
{
	mutex_lock(&pmc_x86_reserve_mutex);
	if (!--pmc_x86_users && !pmc_x86_emulated)
		pmc_x86_unreserve(pmc_x86_model->nr_counters);
	mutex_unlock(&pmc_x86_reserve_mutex);
}

static int pmc_x86_init_counter(struct pmc_counter *counter)
{
	const struct pmc_x86_model *model = pmc_x86_model;
	struct pmc_attr *attr = &counter->attr;
	u64 sel, max = pmc_x86_max_period(model);
	int ret;

	ret = pmc_x86_event_config(model, attr->config, &sel);
	if (ret)
		return ret;
	if (!attr->exclude_user)
		sel |= PMC_X86_SEL_USR;
	if (!attr->exclude_kernel)
		sel |= PMC_X86_SEL_OS;
	/* Counting counters take an interrupt too, to fold before a wrap. */
	counter->hw.sel = sel | PMC_X86_SEL_INT;
	counter->hw.idx = -1;
	counter->hw.period = attr->irq_period ? min(attr->irq_period, max) : max;
	local64_set(&counter->hw.period_left, counter->hw.period);
	return pmc_x86_reserve();
}

static void pmc_x86_destroy(struct pmc_counter *counter)
{
	pmc_x86_release();
}

static const struct pmc_pmu pmc_x86_pmu = {
	.init		= pmc_x86_init_counter,
	.destroy	= pmc_x86_destroy,
	.add		= pmc_x86_add,
	.del		= pmc_x86_del,
	.read		= pmc_x86_read,
	.validate_group	= pmc_x86_validate_group,
	.sample_read	= pmc_x86_sample_read,
};

/* Intel architectural perfmon: counter count, width and events from CPUID. */
static const struct pmc_x86_model *pmc_x86_arch_detect(void)
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
	struct pmc_x86_model *model = &pmc_x86_arch_model;
	unsigned int eax, ebx, ecx, edx, bits;
	int id;

	cpuid(0xa, &eax, &ebx, &ecx, &edx);
	if (!(eax & 0xff) || !((eax >> 8) & 0xff))
		return NULL;
	*model = pmc_x86_arch_template;
	model->nr_counters = min_t(unsigned int, (eax >> 8) & 0xff,
				   PMC_X86_MAX_COUNTERS);
	model->width = (eax >> 16) & 0xff;
	bits = (eax >> 24) & 0xff;
	for (id = 0; id < PMC_HW_MAX; id++)
		if (unavailable_bit[id] >= bits || ebx & BIT(unavailable_bit[id]))
			model->event_map[id] = 0;
	return model;
}

static const struct pmc_x86_model *pmc_x86_detect(void)
{
	struct cpuinfo_x86 *c = &boot_cpu_data;

	switch (c->x86_vendor) {
	case X86_VENDOR_INTEL:
		if (boot_cpu_has(X86_FEATURE_ARCH_PERFMON))
			return pmc_x86_arch_detect();
		return c->x86 == 6 ? &pmc_x86_p6 : NULL;
	case X86_VENDOR_AMD:
	case X86_VENDOR_HYGON:
		if (c->x86 >= 0x17)
			return &pmc_x86_fam17h;
		if (boot_cpu_has(X86_FEATURE_PERFCTR_CORE))
			return &pmc_x86_fam15h;
		return c->x86 >= 6 ? &pmc_x86_k7 : NULL;
	default:
		return NULL;
	}
}

/*
 * A counter that does not keep a written value means no PMU (QEMU TCG
 * has none) or one we cannot drive. Probe the last counter, the one the
 * NMI watchdog does not use; if it is reserved, someone drives it.
 */
static bool pmc_x86_probe(const struct pmc_x86_model *model)
{
	u32 msr = pmc_x86_ctr_msr(model, model->nr_counters - 1);
	u64 val, old;
	bool ok;

	if (!model->nr_counters || model->width < 32)
		return false;
	if (!reserve_perfctr_nmi(msr))
		return true;
	ok = !rdmsrl_safe(msr, &old) && !wrmsrl_safe(msr, 0x5a5a5) &&
	     !rdmsrl_safe(msr, &val) && val == 0x5a5a5;
	if (ok)
		wrmsrl_safe(msr, old);
	release_perfctr_nmi(msr);
	return ok;
}

static int __init pmc_x86_init(void)
{
	const struct pmc_x86_model *model;

	if (pmc_x86_emu_name[0]) {
		model = pmc_x86_model_by_name(pmc_x86_emu_name);
		if (!model) {
			pr_err("pmc_emu=%s: unknown model (p6, k7, fam15h, fam17h)\n",
			       pmc_x86_emu_name);
			return 0;
		}
#ifdef CONFIG_PMC_X86_EMU
		pmc_x86_msr = pmc_x86_emu_setup(model);
		pmc_x86_emulated = true;
		pr_info("EMULATED %s PMU, a test model, not hardware: %d counters, %d bits\n",
			model->name, model->nr_counters, model->width);
#else
		pr_err("pmc_emu= needs CONFIG_PMC_X86_EMU\n");
		return 0;
#endif
	} else {
		model = pmc_x86_detect();
		if (!model || !pmc_x86_probe(model)) {
			pr_info("no usable hardware PMU: hardware counters return ENODEV\n");
			return 0;
		}
		pmc_x86_msr = &pmc_x86_real_msr;
		pr_info("%s PMU: %d counters, %d bits\n", model->name,
			model->nr_counters, model->width);
	}
	pmc_x86_model = model;
	register_nmi_handler(NMI_LOCAL, pmc_x86_nmi, 0, "pmc_lite");
	pmc_register_hw_pmu(&pmc_x86_pmu);
	return 0;
}
device_initcall(pmc_x86_init);
