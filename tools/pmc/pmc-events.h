/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Event names and the pmc_open(2) wrapper shared by the pmc-* tools.
 */
#ifndef _PMC_EVENTS_H
#define _PMC_EVENTS_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>
#include <linux/pmc.h>

/* How a counter's value reads to a user. */
enum pmc_event_unit {
	PMC_UNIT_COUNT,		/* plain event count */
	PMC_UNIT_NSEC,		/* a clock: nanoseconds */
};

struct pmc_event_desc {
	const char *name;
	__u32 type;			/* PMC_TYPE_* */
	__u64 id;			/* PMC_HW_* or PMC_SW_* */
	enum pmc_event_unit unit;
};

/*
 * Parse an event name: one of the table's names or "rNNNN" (hex raw
 * event select). Returns 0 and fills *config and *unit, or -1 if the
 * name is not an event.
 */
int pmc_event_parse(const char *name, __u64 *config,
		    enum pmc_event_unit *unit);

/* True for events that need a hardware PMU (hardware type or raw). */
bool pmc_config_needs_pmu(__u64 config);

/* Print the valid event names, grouped by type, one group a line. */
void pmc_events_list(FILE *out);

/* pmc_open(2); returns the new fd or -1 with errno set. */
int sys_pmc_open(struct pmc_attr *attr, pid_t pid, int cpu, int group_fd,
		 unsigned long flags);

#endif /* _PMC_EVENTS_H */
