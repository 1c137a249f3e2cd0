/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pmc-report --annotate: a function's instructions, as objdump
 * disassembles them, each with its share of the function's samples and
 * with the source lines between them, in the layout of perf annotate
 * --stdio.
 */
#ifndef _PMC_ANNOTATE_H
#define _PMC_ANNOTATE_H

#include <linux/types.h>

struct dso;

/* Annotate the function @symbol, demangled or as its file spells it. */
void annotate_init(const char *symbol);

/*
 * A sample at file offset @off of @dso (NULL: in the kernel), in the
 * function @sym (interned; NULL: unknown): counted if it is the one
 * annotated.
 */
void annotate_add(struct dso *dso, __u64 off, const char *sym);

/*
 * Print the function of each file that has samples in it, most samples
 * first, for the samples of @event; returns NULL, or why there is
 * nothing to print.
 */
const char *annotate_print(const char *event);

#endif /* _PMC_ANNOTATE_H */
