/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the pmc-* tools' counters watch: the CPUs of -a and -C LIST, the
 * threads of -p PID,... and -t TID,..., and why a counter on one of them
 * could not open.
 */
#ifndef _PMC_TARGETS_H
#define _PMC_TARGETS_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>

/*
 * "0,2-3" as in sysfs and perf -C: the CPUs into *@cpus (malloc()ed),
 * sorted, each once (a list is a set). Returns how many, or -1 if the
 * list is malformed (nothing printed).
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

/*
 * -p LIST (@whole) or -t LIST of @prog: the ids as given ("12,34",
 * sorted, each once) into *@ids and *@nr_ids; the threads to watch
 * into *@tids, sorted, each once: with @whole every thread of each
 * process as /proc/PID/task lists them now, else the ids themselves;
 * and RLIMIT_NOFILE raised for their counters. Earlier lists are freed.
 * Returns how many threads. Exits 2 after saying why if @list is
 * malformed, 1 if an id names no running task.
 */
int pmc_attach_threads(const char *prog, const char *list, bool whole,
		       pid_t **ids, int *nr_ids, pid_t **tids);

/* Whether any task of @ids still exists. */
bool pmc_any_alive(const pid_t *ids, int nr_ids);

/* The process of thread @tid (from /proc/TID/status); @tid if unknown. */
pid_t pmc_thread_tgid(pid_t tid);

/*
 * "comm-TID" for a per-thread line, as perf writes it, into @buf; the
 * characters of comm that would break CSV or JSON output become '?'.
 */
void pmc_thread_name(pid_t tid, char *buf, size_t size);

#endif /* _PMC_TARGETS_H */
