/* SPDX-License-Identifier: GPL-2.0 */
/*
 * -a and -C LIST for the pmc-* tools: which CPUs, and why a counter on
 * one of them could not open.
 */
#ifndef _PMC_CPUS_H
#define _PMC_CPUS_H

#include <stdbool.h>
#include <linux/types.h>

/*
 * "0,2-3" as in sysfs and perf -C: the CPUs into *@cpus (malloc()ed).
 * Returns how many, or -1 if the list is malformed (nothing printed).
 */
int pmc_cpu_list(const char *list, int **cpus);

/* The online CPUs, as pmc_cpu_list(); -1 with errno if unreadable. */
int pmc_online_cpus(int **cpus);

/*
 * Explain why pmc_open() of @config on @cpu failed with @err, prefixed
 * with @prog: the privilege it needs (with the current pmc_paranoid), an
 * offline CPU, a missing one. Returns false if @err has no such reason.
 */
bool pmc_explain_cpu_error(const char *prog, int err, int cpu, __u64 config);

#endif /* _PMC_CPUS_H */
