/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Event names, the pmc_open(2) wrapper and the ring buffer accessors
 * shared by the pmc-* tools.
 */
#ifndef _PMC_EVENTS_H
#define _PMC_EVENTS_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>
#include <linux/pmc.h>

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* The config of a generic event, for tables: HW(CPU_CYCLES). */
#define HW(id)	PMC_CONFIG(PMC_TYPE_HARDWARE, PMC_HW_##id)
#define SW(id)	PMC_CONFIG(PMC_TYPE_SOFTWARE, PMC_SW_##id)

/*
 * The ring buffer protocol (perf's too): the kernel writes records,
 * then publishes data_head with a release barrier; we read data_head,
 * then the records it covers, then store data_tail to hand their space
 * back.
 */
#define READ_ONCE(x)		__atomic_load_n(&(x), __ATOMIC_RELAXED)
#define WRITE_ONCE(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
/* Pairs with the kernel's release of data_head: records after head. */
#define rmb()			__atomic_thread_fence(__ATOMIC_ACQUIRE)
/* Orders our reads of records before the data_tail store frees them. */
#define mb()			__atomic_thread_fence(__ATOMIC_SEQ_CST)

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
