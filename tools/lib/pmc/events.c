// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Event names: the generic events, "rNNNN" raw event selects and, built
 * with HAVE_LIBPFM, the CPU's own event names through libpfm4.
 *
 * The name table is plain data so that a new event is one line here and
 * every tool picks it up.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libpmc.h"

#ifdef HAVE_LIBPFM
#include <perfmon/pfmlib.h>
#endif

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#define SW_EVENT(name, alias, id, unit) \
	{ name, alias, PMC_TYPE_SOFTWARE, PMC_SW_##id, PMC_UNIT_##unit }
#define HW_EVENT(name, alias, id) \
	{ name, alias, PMC_TYPE_HARDWARE, PMC_HW_##id, PMC_UNIT_COUNT }

/* Each with perf's other name for it, if it has one. */
static const struct {
	const char *name;
	const char *alias;
	__u32 type;			/* PMC_TYPE_* */
	__u64 id;			/* PMC_HW_* or PMC_SW_* */
	enum pmc_unit unit;
} pmc_events[] = {
	SW_EVENT("task-clock",		NULL,		TASK_CLOCK,	  NSEC),
	SW_EVENT("cpu-clock",		NULL,		CPU_CLOCK,	  NSEC),
	SW_EVENT("page-faults",		"faults",	PAGE_FAULTS,	  COUNT),
	SW_EVENT("minor-faults",	NULL,		PAGE_FAULTS_MIN,  COUNT),
	SW_EVENT("major-faults",	NULL,		PAGE_FAULTS_MAJ,  COUNT),
	SW_EVENT("context-switches",	"cs",		CONTEXT_SWITCHES, COUNT),
	SW_EVENT("cpu-migrations",	"migrations",	CPU_MIGRATIONS,	  COUNT),
	HW_EVENT("cycles",		"cpu-cycles",	CPU_CYCLES),
	HW_EVENT("instructions",	NULL,		INSTRUCTIONS),
	HW_EVENT("cache-references",	NULL,		CACHE_REFERENCES),
	HW_EVENT("cache-misses",	NULL,		CACHE_MISSES),
	HW_EVENT("branches",		"branch-instructions", BRANCH_INSTRUCTIONS),
	HW_EVENT("branch-misses",	NULL,		BRANCH_MISSES),
	HW_EVENT("bus-cycles",		NULL,		BUS_CYCLES),
};

/*
 * The first words of perf's generic cache events ("L1-dcache-load-misses",
 * "dTLB-loads"): events-lite has no cache event type, so these are named
 * as such rather than called unknown.
 */
static const char *const perf_cache_prefixes[] = {
	"L1-dcache", "L1-icache", "LLC", "dTLB", "iTLB", "branch-load",
	"node-",
};

static const struct {
	__u32 type;
	const char *label;
} pmc_type_labels[] = {
	{ PMC_TYPE_SOFTWARE, "software" },
	{ PMC_TYPE_HARDWARE, "hardware" },
};

/* "rNNNN": up to 16 hex digits, and the value must leave bit 63 free. */
static int raw_lookup(const char *name, __u64 *config)
{
	unsigned long long val;
	const char *hex = name + 1;
	char *end;

	if (name[0] != 'r' || !hex[0] || strlen(hex) > 16 ||
	    strspn(hex, "0123456789abcdefABCDEF") != strlen(hex))
		return -1;
	errno = 0;
	val = strtoull(hex, &end, 16);
	if (errno || *end || (val & PMC_CONFIG_RAW))
		return -1;
	*config = PMC_CONFIG_RAW | val;
	return 0;
}

#ifdef HAVE_LIBPFM
/*
 * The x86 event select bits a raw config may carry: event, unit mask,
 * edge, invert, counter mask, and AMD's event bits 8-11 (32-35). The
 * enable, interrupt and privilege-level bits are the kernel's; u and k
 * come from the attr's exclude bits.
 */
#define PFM_X86_SELECT_MASK	0xfff84ffffULL

/* True if libpfm4's event @idx belongs to a core PMU (not "perf"'s own). */
static bool pfm_core_event(int idx)
{
	pfm_event_info_t ev = { .size = sizeof(ev) };
	pfm_pmu_info_t pmu = { .size = sizeof(pmu) };

	return pfm_get_event_info(idx, PFM_OS_NONE, &ev) == PFM_SUCCESS &&
	       pfm_get_pmu_info(ev.pmu, &pmu) == PFM_SUCCESS &&
	       pmu.type == PFM_PMU_TYPE_CORE;
}

static bool pfm_ready(void)
{
	static int initialized;

	if (!initialized)
		initialized = pfm_initialize() == PFM_SUCCESS ? 1 : -1;
	return initialized > 0;
}

/* libpfm4's own names ("INST_RETIRED:ANY_P") for the CPU it detected. */
static int pfm_lookup(const char *name, __u64 *config)
{
	pfm_pmu_encode_arg_t arg;
	__u64 code = 0;

	if (!pfm_ready())
		return -1;
	memset(&arg, 0, sizeof(arg));
	arg.size = sizeof(arg);
	if (pfm_get_os_event_encoding(name, PFM_PLM3, PFM_OS_NONE, &arg) !=
	    PFM_SUCCESS)
		return -1;
	if (arg.count >= 1 && pfm_core_event(arg.idx))
		code = arg.codes[0] & PFM_X86_SELECT_MASK;
	free(arg.codes);
	if (!code)
		return -1;
	*config = PMC_CONFIG_RAW | code;
	return 0;
}
/* A name of retired instructions that libpfm4 knows on this CPU, or NULL. */
static const char *pfm_example(void)
{
	static const char *const names[] = {
		"INST_RETIRED:ANY_P", "RETIRED_INSTRUCTIONS", "INST_RETIRED",
	};
	__u64 config;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(names); i++)
		if (!pfm_lookup(names[i], &config))
			return names[i];
	return NULL;
}

/*
 * The events of the core PMUs libpfm4 found on this CPU, each as
 * "PMU::NAME" encodes with its default unit mask; those that need one
 * spelt out have config 0. Built on first use.
 */
static struct pmc_cpu_event {
	const char *pmu, *name, *desc;
	__u64 config;
} *cpu_events;
static size_t nr_cpu_events;

static void add_cpu_event(const pfm_pmu_info_t *pmu,
			  const pfm_event_info_t *ev, size_t *cap)
{
	char full[256];
	__u64 config = 0;

	if (nr_cpu_events == *cap) {
		struct pmc_cpu_event *grown;

		*cap = *cap ? 2 * *cap : 256;
		grown = realloc(cpu_events, *cap * sizeof(*cpu_events));
		if (!grown)
			return;
		cpu_events = grown;
	}
	snprintf(full, sizeof(full), "%s::%s", pmu->name, ev->name);
	if (pfm_lookup(full, &config))
		config = 0;
	cpu_events[nr_cpu_events++] = (struct pmc_cpu_event){
		.pmu = pmu->desc ? pmu->desc : pmu->name,
		.name = ev->name,
		.desc = ev->desc ? ev->desc : "",
		.config = config,
	};
}

static void list_cpu_events(void)
{
	static bool listed;
	size_t cap = 0;
	int p, idx;

	if (listed || !pfm_ready())
		return;
	listed = true;
	pfm_for_all_pmus(p) {
		pfm_pmu_info_t pmu = { .size = sizeof(pmu) };

		if (pfm_get_pmu_info(p, &pmu) != PFM_SUCCESS ||
		    !pmu.is_present || pmu.type != PFM_PMU_TYPE_CORE)
			continue;
		for (idx = pmu.first_event; idx != -1;
		     idx = pfm_get_event_next(idx)) {
			pfm_event_info_t ev = { .size = sizeof(ev) };

			if (pfm_get_event_info(idx, PFM_OS_NONE, &ev) ==
			    PFM_SUCCESS)
				add_cpu_event(&pmu, &ev, &cap);
		}
	}
}

int pmc_cpu_event_at(size_t i, const char **pmu, const char **name,
		     const char **desc, __u64 *config)
{
	list_cpu_events();
	if (i >= nr_cpu_events)
		return -1;
	*pmu = cpu_events[i].pmu;
	*name = cpu_events[i].name;
	*desc = cpu_events[i].desc;
	*config = cpu_events[i].config;
	return 0;
}
#else
static int pfm_lookup(const char *name, __u64 *config)
{
	(void)name;
	(void)config;
	return -1;
}

int pmc_cpu_event_at(size_t i, const char **pmu, const char **name,
		     const char **desc, __u64 *config)
{
	(void)i;
	(void)pmu;
	(void)name;
	(void)desc;
	(void)config;
	return -1;
}
#endif

int pmc_event_lookup(const char *name, __u64 *config, enum pmc_unit *unit)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(pmc_events); i++) {
		if (!strcmp(name, pmc_events[i].name) ||
		    (pmc_events[i].alias && !strcmp(name, pmc_events[i].alias))) {
			*config = PMC_CONFIG(pmc_events[i].type,
					     pmc_events[i].id);
			*unit = pmc_events[i].unit;
			return 0;
		}
	}
	if (raw_lookup(name, config) && pfm_lookup(name, config))
		return -1;
	*unit = PMC_UNIT_COUNT;
	return 0;
}

int pmc_event_at(size_t i, const char **name, const char **alias,
		 __u64 *config)
{
	if (i >= ARRAY_SIZE(pmc_events))
		return -1;
	*name = pmc_events[i].name;
	*alias = pmc_events[i].alias;
	*config = PMC_CONFIG(pmc_events[i].type, pmc_events[i].id);
	return 0;
}

bool pmc_event_is_perf_cache(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(perf_cache_prefixes); i++)
		if (!strncmp(name, perf_cache_prefixes[i],
			     strlen(perf_cache_prefixes[i])))
			return true;
	return false;
}

bool pmc_config_needs_pmu(__u64 config)
{
	return (config & PMC_CONFIG_RAW) ||
	       PMC_CONFIG_TYPE(config) == PMC_TYPE_HARDWARE;
}

void pmc_events_list(FILE *out)
{
	size_t t, i;

	for (t = 0; t < ARRAY_SIZE(pmc_type_labels); t++) {
		const char *sep = "";

		fprintf(out, "  %-9s ", pmc_type_labels[t].label);
		for (i = 0; i < ARRAY_SIZE(pmc_events); i++) {
			if (pmc_events[i].type != pmc_type_labels[t].type)
				continue;
			fprintf(out, "%s%s", sep, pmc_events[i].name);
			if (pmc_events[i].alias)
				fprintf(out, " (%s)", pmc_events[i].alias);
			sep = ", ";
		}
		fputc('\n', out);
	}
	fprintf(out, "  %-9s rNNNN (hex event select, e.g. r00c0)\n", "raw");
#ifdef HAVE_LIBPFM
	fprintf(out, "  %-9s the CPU's event names, from libpfm4%s%s%s\n", "libpfm4",
		pfm_example() ? " (here e.g. " : " (none for this CPU)",
		pfm_example() ?: "", pfm_example() ? ")" : "");
#endif
}
