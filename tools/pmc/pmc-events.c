// SPDX-License-Identifier: GPL-2.0
/*
 * Event names and the pmc_open(2) wrapper shared by the pmc-* tools.
 *
 * The name table is plain data so that a new event is one line here and
 * every tool (pmc-stat, later pmc-record and pmc-report) picks it up.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "pmc-events.h"

/* Only the generated <asm/unistd_64.h> of the patched kernel knows it. */
#ifndef __NR_pmc_open
#error "__NR_pmc_open is not defined: build with KHDR_INCLUDES=-I<headers of a pmc kernel>"
#endif

static const struct pmc_event_desc pmc_events[] = {
	{ "task-clock",		PMC_TYPE_SOFTWARE, PMC_SW_TASK_CLOCK,	PMC_UNIT_NSEC },
	{ "cpu-clock",		PMC_TYPE_SOFTWARE, PMC_SW_CPU_CLOCK,	PMC_UNIT_NSEC },
	{ "page-faults",	PMC_TYPE_SOFTWARE, PMC_SW_PAGE_FAULTS,	PMC_UNIT_COUNT },
	{ "minor-faults",	PMC_TYPE_SOFTWARE, PMC_SW_PAGE_FAULTS_MIN, PMC_UNIT_COUNT },
	{ "major-faults",	PMC_TYPE_SOFTWARE, PMC_SW_PAGE_FAULTS_MAJ, PMC_UNIT_COUNT },
	{ "context-switches",	PMC_TYPE_SOFTWARE, PMC_SW_CONTEXT_SWITCHES, PMC_UNIT_COUNT },
	{ "cpu-migrations",	PMC_TYPE_SOFTWARE, PMC_SW_CPU_MIGRATIONS, PMC_UNIT_COUNT },
	{ "cycles",		PMC_TYPE_HARDWARE, PMC_HW_CPU_CYCLES,	PMC_UNIT_COUNT },
	{ "instructions",	PMC_TYPE_HARDWARE, PMC_HW_INSTRUCTIONS,	PMC_UNIT_COUNT },
	{ "cache-references",	PMC_TYPE_HARDWARE, PMC_HW_CACHE_REFERENCES, PMC_UNIT_COUNT },
	{ "cache-misses",	PMC_TYPE_HARDWARE, PMC_HW_CACHE_MISSES,	PMC_UNIT_COUNT },
	{ "branches",		PMC_TYPE_HARDWARE, PMC_HW_BRANCH_INSTRUCTIONS, PMC_UNIT_COUNT },
	{ "branch-misses",	PMC_TYPE_HARDWARE, PMC_HW_BRANCH_MISSES, PMC_UNIT_COUNT },
	{ "bus-cycles",		PMC_TYPE_HARDWARE, PMC_HW_BUS_CYCLES,	PMC_UNIT_COUNT },
};

static const struct {
	__u32 type;
	const char *label;
} pmc_type_labels[] = {
	{ PMC_TYPE_SOFTWARE, "software" },
	{ PMC_TYPE_HARDWARE, "hardware" },
};

/* "rNNNN": up to 16 hex digits, and the value must leave bit 63 free. */
static int pmc_raw_parse(const char *name, __u64 *config)
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

int pmc_event_parse(const char *name, __u64 *config,
		    enum pmc_event_unit *unit)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(pmc_events); i++) {
		if (!strcmp(name, pmc_events[i].name)) {
			*config = PMC_CONFIG(pmc_events[i].type,
					     pmc_events[i].id);
			*unit = pmc_events[i].unit;
			return 0;
		}
	}
	if (pmc_raw_parse(name, config))
		return -1;
	*unit = PMC_UNIT_COUNT;
	return 0;
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
			sep = ", ";
		}
		fputc('\n', out);
	}
	fprintf(out, "  %-9s rNNNN (hex event select, e.g. r00c0)\n", "raw");
}

int sys_pmc_open(struct pmc_attr *attr, pid_t pid, int cpu, int group_fd,
		 unsigned long flags)
{
	return syscall(__NR_pmc_open, attr, pid, cpu, group_fd, flags);
}
