/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Call trees for pmc-report: the call graphs under a table's rows, the
 * folded stacks and the flame graph are all trees of frames whose nodes
 * count the samples that passed through them.
 */
#ifndef _PMC_CALLTREE_H
#define _PMC_CALLTREE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/* A frame of a stack: nodes are equal if name and kernel are. */
struct call_frame {
	const char *name;		/* interned */
	bool kernel;
};

struct call_node {
	struct call_frame frame;
	__u64 total;			/* samples through this node */
	__u64 self;			/* samples whose stack ends here */
	struct call_node *children;	/* the first child */
	struct call_node *next;		/* the next sibling */
};

/* An empty tree: a root that stands for no frame. */
struct call_node *call_tree_new(void);

/*
 * Count a sample of the stack @frames, innermost frame first, under
 * @root: the path down the tree runs from the innermost frame out to
 * its callers (CALLEE_FIRST), or from the outermost in (CALLER_FIRST).
 */
enum call_dir { CALLEE_FIRST, CALLER_FIRST };
void call_tree_add(struct call_node *root, const struct call_frame *frames,
		   size_t nr, enum call_dir dir);

/* Order every node's children by name, or by most samples first. */
enum call_order { CALL_BY_NAME, CALL_BY_SAMPLES };
void call_tree_sort(struct call_node *root, enum call_order order);

#endif /* _PMC_CALLTREE_H */
