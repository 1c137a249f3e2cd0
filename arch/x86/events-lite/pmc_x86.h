/* SPDX-License-Identifier: GPL-2.0 */
/*
 * events-lite x86 backend: the PMU models, the MSR access layer and the
 * pure helpers that the driver (pmu.c), the emulated PMU (emu.c) and
 * the KUnit tests (model_test.c) share.
 *
 * A model is data: which MSRs, how many counters, how wide, which
 * generic events map to which event selects, and which events may only
 * use some counters. The driver code is the same for every model.
 */
#ifndef _ARCH_X86_EVENTS_LITE_PMC_X86_H
#define _ARCH_X86_EVENTS_LITE_PMC_X86_H

#include <linux/types.h>
#include <asm/perf_event.h>

#define PMC_X86_MAX_COUNTERS	8

/* Event-select bits the kernel owns; a raw config may not set them. */
#define PMC_X86_SEL_USR		ARCH_PERFMON_EVENTSEL_USR
#define PMC_X86_SEL_OS		ARCH_PERFMON_EVENTSEL_OS
#define PMC_X86_SEL_INT		ARCH_PERFMON_EVENTSEL_INT
#define PMC_X86_SEL_EN		ARCH_PERFMON_EVENTSEL_ENABLE

/* Event-select bits a raw config may set (AMD adds event bits 35:32). */
#define PMC_X86_RAW_MASK	(ARCH_PERFMON_EVENTSEL_EVENT |	\
				 ARCH_PERFMON_EVENTSEL_UMASK |	\
				 ARCH_PERFMON_EVENTSEL_EDGE |	\
				 ARCH_PERFMON_EVENTSEL_INV |	\
				 ARCH_PERFMON_EVENTSEL_CMASK)
#define PMC_X86_RAW_MASK_AMD	(PMC_X86_RAW_MASK | (0xfULL << 32))

/* Only counters in @mask may count event select @code (event | umask). */
struct pmc_x86_constraint {
	u16 code;
	u16 code_mask;		/* which bits of the config @code compares */
	u8 mask;
};

struct pmc_x86_model {
	const char *name;
	u8 nr_counters;
	u8 width;		/* counter bits */
	u8 min_period;		/* shortest period that overflows reliably */
	u8 msr_stride;		/* 1: separate banks, 2: CTL/CTR pairs */
	bool en_only_in_sel0;	/* P6: EVNTSEL0.EN enables both counters */
	bool write_sext32;	/* counter writes are 32-bit, sign-extended */
	u32 sel_base;		/* first event-select MSR */
	u32 ctr_base;		/* first counter MSR */
	/*
	 * Global control (Intel arch-perfmon v2+, AMD PerfMonV2), or 0:
	 * a counter counts only with its bit set in global_ctrl; an
	 * overflow sets its bit in global_status, which stays set until
	 * a 1 is written to that bit of global_ack.
	 */
	u32 global_ctrl;
	u32 global_status;
	u32 global_ack;
	bool amd_host_only;	/* has the HostOnly bit: SVM guests excluded */
	u64 raw_mask;
	u64 event_map[PMC_HW_MAX];	/* 0: the model cannot count it */
	const struct pmc_x86_constraint *constraints;	/* ends with mask 0 */
};

extern const struct pmc_x86_model pmc_x86_p6;
extern const struct pmc_x86_model pmc_x86_k7;
extern const struct pmc_x86_model pmc_x86_fam15h;
extern const struct pmc_x86_model pmc_x86_fam17h;
extern const struct pmc_x86_model pmc_x86_arch_template;

/*
 * What the driver learns about a CPU from CPUID, whether a real one's
 * or an emulated model's: the driver picks its model and code paths
 * from this alone.
 */
struct pmc_x86_cpu_desc {
	const char *name;	/* emulated models: the pmc_emu= name */
	u8 vendor;		/* X86_VENDOR_* */
	u8 family;
	bool perfctr_core;	/* AMD: six counters, CTL/CTR pairs */
	bool arch_perfmon;	/* Intel: CPUID leaf 0xA describes the PMU */
	bool hybrid;		/* Intel: core types with different PMUs */
	u32 leaf_a_eax, leaf_a_ebx;		/* Intel CPUID 0xA */
	u32 ext_22_eax, ext_22_ebx;		/* AMD CPUID 0x80000022 */
};

/* AMD CPUID 0x80000022: EAX bit 0, PerfMonV2; EBX 3:0, core counters. */
#define PMC_X86_AMD_PERFMON_V2		BIT(0)
#define PMC_X86_AMD_NR_COUNTERS(ebx)	((ebx) & 0xf)

const struct pmc_x86_cpu_desc *pmc_x86_emu_cpu(const char *name);
const struct pmc_x86_model *pmc_x86_model_for(const struct pmc_x86_cpu_desc *cpu,
					      struct pmc_x86_model *buf);
int pmc_x86_event_config(const struct pmc_x86_model *model, u64 config,
			 u64 *sel);
u32 pmc_x86_counter_mask(const struct pmc_x86_model *model, u64 sel);
int pmc_x86_assign(const u32 *masks, int n, int nr_counters, int *assign);
u64 pmc_x86_sel_value(const struct pmc_x86_model *model, int idx, u64 sel,
		      u32 active);
u64 pmc_x86_max_period(const struct pmc_x86_model *model);
s64 pmc_x86_next_left(const struct pmc_x86_model *model, s64 left,
		      s64 period, bool throttled);
u64 pmc_x86_delta(const struct pmc_x86_model *model, u64 prev, u64 now);

static inline u32 pmc_x86_sel_msr(const struct pmc_x86_model *model, int idx)
{
	return model->sel_base + idx * model->msr_stride;
}

static inline u32 pmc_x86_ctr_msr(const struct pmc_x86_model *model, int idx)
{
	return model->ctr_base + idx * model->msr_stride;
}

/*
 * MSR access. The driver never calls rdmsr/wrmsr directly, so that the
 * emulated PMU can stand in for the hardware below this line. Both
 * callbacks may run in NMI context.
 */
struct pmc_x86_msr_ops {
	int (*read)(u32 msr, u64 *val);
	int (*write)(u32 msr, u64 val);
	/* emulation: where the overflow "happened", for samples */
	struct pt_regs *(*sample_regs)(void);
	void (*nmi_end)(void);		/* emulation: the NMI is handled */
	/* emulation: this CPU powers up (its PMU resets), or goes down */
	void (*cpu_starting)(void);
	void (*cpu_dying)(void);
	/*
	 * Reserve counter @idx from the PMU's other owners (perf, the NMI
	 * watchdog), on every CPU, or fail; and give it back. Any context
	 * but NMI.
	 */
	bool (*reserve)(int idx);
	void (*release)(int idx);
};

#ifdef CONFIG_PMC_X86_EMU
const struct pmc_x86_msr_ops *pmc_x86_emu_setup(const struct pmc_x86_model *model);
#endif

#endif /* _ARCH_X86_EVENTS_LITE_PMC_X86_H */
