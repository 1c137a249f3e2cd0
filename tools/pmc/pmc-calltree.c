// SPDX-License-Identifier: GPL-2.0
/* Call trees for pmc-report; see pmc-calltree.h. */
#include <stdlib.h>
#include <string.h>

#include "pmc-calltree.h"
#include "pmc-util.h"

struct call_node *call_tree_new(void)
{
	return must_calloc(1, sizeof(struct call_node));
}

static bool frame_same(const struct call_frame *a, const struct call_frame *b)
{
	return a->name == b->name && a->kernel == b->kernel;
}

/* The child of @parent for @frame, added if it is not there yet. */
static struct call_node *child_of(struct call_node *parent,
				  const struct call_frame *frame)
{
	struct call_node *node;

	for (node = parent->children; node; node = node->next)
		if (frame_same(&node->frame, frame))
			return node;
	node = must_calloc(1, sizeof(*node));
	node->frame = *frame;
	node->next = parent->children;
	parent->children = node;
	return node;
}

void call_tree_add(struct call_node *root, const struct call_frame *frames,
		   size_t nr, enum call_dir dir)
{
	struct call_node *node = root;
	size_t i;

	root->total++;
	for (i = 0; i < nr; i++) {
		node = child_of(node, &frames[dir == CALLEE_FIRST ? i :
					      nr - 1 - i]);
		node->total++;
	}
	node->self++;
}

static int frame_cmp(const struct call_node *x, const struct call_node *y)
{
	int d = strcmp(x->frame.name, y->frame.name);

	return d ? d : x->frame.kernel - y->frame.kernel;
}

static int by_name(const void *a, const void *b)
{
	return frame_cmp(*(const struct call_node **)a,
			 *(const struct call_node **)b);
}

static int by_samples(const void *a, const void *b)
{
	const struct call_node *x = *(const struct call_node **)a;
	const struct call_node *y = *(const struct call_node **)b;

	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return frame_cmp(x, y);
}

void call_tree_sort(struct call_node *root, enum call_order order)
{
	struct call_node **nodes = NULL, *node;
	size_t nr = 0, cap = 0, i;

	for (node = root->children; node; node = node->next) {
		GROW(nodes, nr, cap);
		nodes[nr++] = node;
		call_tree_sort(node, order);
	}
	if (!nr)
		return;
	qsort(nodes, nr, sizeof(*nodes),
	      order == CALL_BY_NAME ? by_name : by_samples);
	root->children = nodes[0];
	for (i = 0; i < nr; i++)
		nodes[i]->next = i + 1 < nr ? nodes[i + 1] : NULL;
	free(nodes);
}
