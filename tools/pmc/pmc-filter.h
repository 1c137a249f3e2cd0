/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pmc-report's sample filters, as perf report's --comms, --pids, --tids
 * and --dsos: a sample is kept if, for each list given, one of its
 * entries matches.
 */
#ifndef _PMC_FILTER_H
#define _PMC_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

enum filter_kind { FILTER_COMM, FILTER_PID, FILTER_TID, FILTER_DSO,
		   NR_FILTERS };

struct sample_filter {
	struct filter_list {
		const char **names;	/* interned: comms, dso basenames */
		__u32 *ids;		/* pids, tids */
		size_t nr;
	} lists[NR_FILTERS];
};

/*
 * Add the comma list @arg to list @kind. A dso is matched by its base
 * name, the kernel as "[kernel]" or perf's "[kernel.kallsyms]".
 * Return: 0, or -1 if @arg is empty or a pid or tid is not a number.
 */
int filter_add(struct sample_filter *f, enum filter_kind kind,
	       const char *arg);

bool filter_active(const struct sample_filter *f);

/* "--comm", "--pid", "--tid" or "--dso". */
const char *filter_option(enum filter_kind kind);

/* Does a sample of @comm, @pid, @tid, sampled in @dso, pass? */
bool filter_match(const struct sample_filter *f, const char *comm,
		  __u32 pid, __u32 tid, const char *dso);

struct strbuf;

/* Append "--comm X,Y --pid 7", the filters given, for a report's header. */
void filter_describe(const struct sample_filter *f, struct strbuf *sb);

#endif /* _PMC_FILTER_H */
