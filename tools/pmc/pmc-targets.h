/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The threads of pmc-stat's and pmc-record's -p PID,... and -t TID,...
 * (libpmc has the CPU and thread maps themselves).
 */
#ifndef _PMC_TARGETS_H
#define _PMC_TARGETS_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>

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

/*
 * "comm-TID" for a per-thread line, as perf writes it, into @buf; the
 * characters of comm that would break CSV or JSON output become '?'.
 */
void pmc_thread_name(pid_t tid, char *buf, size_t size);

#endif /* _PMC_TARGETS_H */
