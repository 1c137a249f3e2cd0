/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Flame graphs for pmc-report: a call tree drawn as a self-contained
 * SVG with its own JavaScript, for a web browser.
 */
#ifndef _PMC_FLAME_H
#define _PMC_FLAME_H

#include <stdbool.h>
#include <stdio.h>

#include "pmc-calltree.h"

/*
 * Draw @root's tree, the root at the bottom as "all" and each node's
 * children left to right in their order in the tree, with @title and
 * @subtitle over it. Returns false if writing to @out failed.
 */
bool flame_write(FILE *out, const struct call_node *root, const char *title,
		 const char *subtitle);

#endif /* _PMC_FLAME_H */
