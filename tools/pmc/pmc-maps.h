/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Each process's address space as its MMAP and MUNMAP records left it,
 * for pmc-report: intervals sorted by address, so that a lookup costs
 * the logarithm of the process's mappings, not their number.
 */
#ifndef _PMC_MAPS_H
#define _PMC_MAPS_H

#include <linux/types.h>

struct dso;

struct map {
	__u64 start, end;		/* [start, end) */
	__u64 pgoff;			/* file offset of start */
	struct dso *dso;
};

/*
 * Map [@start, @start + @len) of process @pid to @dso at file offset
 * @pgoff; a NULL @dso unmaps it. What the range overlapped is cut away,
 * as the kernel replaces it: the newest mapping of an address wins.
 */
void maps_add(__u32 pid, __u64 start, __u64 len, __u64 pgoff,
	      struct dso *dso);

/*
 * Process @child was forked by @parent: it starts with a copy of the
 * parent's mappings (if the parent has any; else it keeps borrowing),
 * whatever an older process of its pid left.
 */
void maps_fork(__u32 parent, __u32 child);

/*
 * The mapping of @ip in process @pid. A process that has no mappings
 * at all (it forked and never exec'ed: nothing says whose copy it
 * is) borrows those of the newest process that maps @ip.
 */
const struct map *maps_find(__u32 pid, __u64 ip);

#endif /* _PMC_MAPS_H */
