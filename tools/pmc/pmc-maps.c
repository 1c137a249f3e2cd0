// SPDX-License-Identifier: GPL-2.0
/*
 * Each process's mappings in a search tree (tsearch(3)) of disjoint
 * intervals. Two intervals compare equal when they overlap: the tree
 * holds no two that do, so the order is total among its nodes, and a
 * probe [ip, ip + 1) finds the one interval holding ip.
 */
#define _GNU_SOURCE
#include <search.h>
#include <stdbool.h>
#include <stdlib.h>

#include "pmc-maps.h"
#include "pmc-util.h"

struct process_maps {
	__u32 pid;
	void *root;			/* of struct map */
	struct process_maps *older;	/* the process created before */
};

static void *processes;			/* of struct process_maps, by pid */
static struct process_maps *newest;

static int cmp_pid(const void *a, const void *b)
{
	__u32 x = ((const struct process_maps *)a)->pid;
	__u32 y = ((const struct process_maps *)b)->pid;

	return x < y ? -1 : x > y;
}

static int cmp_interval(const void *a, const void *b)
{
	const struct map *x = a, *y = b;

	if (x->end <= y->start)
		return -1;
	return x->start >= y->end;
}

static struct process_maps *process(__u32 pid, bool create)
{
	struct process_maps key = { .pid = pid }, *p, **node;

	node = tfind(&key, &processes, cmp_pid);
	if (node || !create)
		return node ? *node : NULL;
	p = must_calloc(1, sizeof(*p));
	p->pid = pid;
	p->older = newest;
	newest = p;
	must_alloc(tsearch(p, &processes, cmp_pid));
	return p;
}

static void insert(void **root, __u64 start, __u64 end, __u64 pgoff,
		   struct dso *dso)
{
	struct map *m = must_calloc(1, sizeof(*m));

	*m = (struct map){ start, end, pgoff, dso };
	must_alloc(tsearch(m, root, cmp_interval));
}

void maps_add(__u32 pid, __u64 start, __u64 len, __u64 pgoff,
	      struct dso *dso)
{
	struct process_maps *p = process(pid, true);
	struct map range = { .start = start, .end = start + len };
	struct map **node;

	if (!len)
		return;
	/* Cut each overlapped mapping down to what lies outside range. */
	while ((node = tfind(&range, &p->root, cmp_interval))) {
		struct map *old = *node;

		tdelete(old, &p->root, cmp_interval);
		if (old->start < range.start)
			insert(&p->root, old->start, range.start, old->pgoff,
			       old->dso);
		if (old->end > range.end)
			insert(&p->root, range.end, old->end,
			       old->pgoff + (range.end - old->start), old->dso);
		free(old);
	}
	if (dso)
		insert(&p->root, start, range.end, pgoff, dso);
}

/* A process of a reused pid whose parent is unknown: drop the old one. */
static void forget(struct process_maps *p)
{
	struct process_maps **link = &newest;

	while (*link != p)
		link = &(*link)->older;
	*link = p->older;
	tdelete(p, &processes, cmp_pid);
	free(p);
}

static void **copy_to;			/* twalk() has no argument */

static void copy_map(const void *node, VISIT which, int depth)
{
	const struct map *m = *(const struct map *const *)node;

	(void)depth;
	if (which == postorder || which == leaf)
		insert(copy_to, m->start, m->end, m->pgoff, m->dso);
}

void maps_fork(__u32 parent, __u32 child)
{
	struct process_maps *from = process(parent, false);
	struct process_maps *to = process(child, false);

	if (to) {
		tdestroy(to->root, free);
		to->root = NULL;
	}
	if (!from) {
		/* Nothing to copy: borrow, as a process never seen does. */
		if (to)
			forget(to);
		return;
	}
	to = to ?: process(child, true);
	copy_to = &to->root;
	twalk(from->root, copy_map);
}

static const struct map *lookup(const struct process_maps *p, __u64 ip)
{
	struct map probe = { .start = ip, .end = ip + 1 };
	struct map **node = tfind(&probe, &p->root, cmp_interval);

	return node ? *node : NULL;
}

const struct map *maps_find(__u32 pid, __u64 ip)
{
	const struct process_maps *p = process(pid, false);
	const struct map *m = NULL;

	if (p)
		return lookup(p, ip);
	for (p = newest; p && !m; p = p->older)
		m = lookup(p, ip);
	return m;
}
