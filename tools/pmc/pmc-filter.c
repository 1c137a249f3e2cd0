// SPDX-License-Identifier: GPL-2.0
/* pmc-report's sample filters; see pmc-filter.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmc-filter.h"
#include "pmc-util.h"

static const char *const option_names[NR_FILTERS] = {
	[FILTER_COMM] = "--comm", [FILTER_PID] = "--pid",
	[FILTER_TID] = "--tid", [FILTER_DSO] = "--dso",
};

const char *filter_option(enum filter_kind kind)
{
	return option_names[kind];
}

static int parse_id(const char *s, __u32 *id)
{
	unsigned long val;
	char *end;

	errno = 0;
	val = strtoul(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || val > UINT32_MAX)
		return -1;
	*id = val;
	return 0;
}

int filter_add(struct sample_filter *f, enum filter_kind kind,
	       const char *arg)
{
	struct filter_list *l = &f->lists[kind];
	char *list = must_strdup(arg), *rest = list, *item;
	int ret = 0;

	while ((item = strsep(&rest, ","))) {
		size_t i = l->nr++;

		if (!*item) {
			ret = -1;
			break;
		}
		if (kind == FILTER_PID || kind == FILTER_TID) {
			l->ids = must_realloc(l->ids, l->nr * sizeof(*l->ids));
			if (parse_id(item, &l->ids[i])) {
				ret = -1;
				break;
			}
			continue;
		}
		l->names = must_realloc(l->names, l->nr * sizeof(*l->names));
		if (kind == FILTER_DSO && !strcmp(item, "[kernel.kallsyms]"))
			item = "[kernel]";
		else if (kind == FILTER_DSO)
			item = (char *)basename_of(item);
		l->names[i] = intern(item);
	}
	free(list);
	return ret;
}

bool filter_active(const struct sample_filter *f)
{
	int k;

	for (k = 0; k < NR_FILTERS; k++)
		if (f->lists[k].nr)
			return true;
	return false;
}

static bool has_name(const struct filter_list *l, const char *name)
{
	size_t i;

	/* by content: the report's placeholders are not interned */
	for (i = 0; i < l->nr; i++)
		if (l->names[i] == name || !strcmp(l->names[i], name))
			return true;
	return !l->nr;
}

static bool has_id(const struct filter_list *l, __u32 id)
{
	size_t i;

	for (i = 0; i < l->nr; i++)
		if (l->ids[i] == id)
			return true;
	return !l->nr;
}

bool filter_match(const struct sample_filter *f, const char *comm,
		  __u32 pid, __u32 tid, const char *dso)
{
	return has_name(&f->lists[FILTER_COMM], comm) &&
	       has_id(&f->lists[FILTER_PID], pid) &&
	       has_id(&f->lists[FILTER_TID], tid) &&
	       has_name(&f->lists[FILTER_DSO], dso);
}

void filter_describe(const struct sample_filter *f, struct strbuf *sb)
{
	int k;

	for (k = 0; k < NR_FILTERS; k++) {
		const struct filter_list *l = &f->lists[k];
		size_t i;

		for (i = 0; i < l->nr; i++) {
			if (!i)
				strbuf_addf(sb, "%s%s ", sb->len ? " " : "",
					    filter_option(k));
			else
				strbuf_addf(sb, ",");
			if (l->names)
				strbuf_addf(sb, "%s", l->names[i]);
			else
				strbuf_addf(sb, "%u", l->ids[i]);
		}
	}
}
