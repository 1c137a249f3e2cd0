// SPDX-License-Identifier: GPL-2.0
/*
 * Count a region of code with libpmc:
 *
 *	count-region ['{cycles,instructions},task-clock:u']
 *
 * Opens the event string on the calling thread, reads each counter
 * before and after a loop, and prints what the loop added, scaled to the
 * time it was enabled, with the share of that time it was on the PMU
 * (less than 100% when groups were multiplexed). A counter whose page 0
 * allows it (task-clock, cpu-clock) is read there, with no system call,
 * and says "[page 0]"; the others with read(), a group in one read().
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>

#include "libpmc.h"

#define DEFAULT_EVENTS	"{cycles,instructions},task-clock:u"

static volatile unsigned long sink;

/* The region being measured. */
static void region(void)
{
	unsigned long i, x = 1;

	for (i = 0; i < 20000000; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	sink = x;
}

/*
 * Every counter into @c: one alone from page 0 where it serves (@page[i]
 * says so), the others with pmc_evlist_read(), which reads a group in
 * one read(), so that its members relate as their events do. @fds and
 * @ret: room for pmc_evlist_read()'s arguments.
 */
static int read_all(const struct pmc_evlist *list,
		    const struct pmc_self *self, struct pmc_count *c,
		    bool *page, int *fds, int *ret)
{
	size_t i;

	for (i = 0; i < list->nr; i++) {
		const struct pmc_evsel *ev = &list->ev[i];
		bool alone = ev->leader == i &&
			     !(ev->attr.read_format & PMC_FORMAT_GROUP);

		page[i] = alone && self[i].page &&
			  pmc_self_page_read(self[i].page, &c[i]);
		fds[i] = page[i] ? -1 : self[i].fd;
	}
	if (!pmc_evlist_read(list, fds, c, ret))
		return 0;
	for (i = 0; i < list->nr; i++)
		if (fds[i] >= 0 && ret[i])
			fprintf(stderr, "count-region: read(%s): %s\n",
				list->ev[i].name,
				ret[i] > 0 ? "pinned group in error state" :
					     strerror(-ret[i]));
	return 1;
}

int main(int argc, char **argv)
{
	const char *events = argc > 1 ? argv[1] : DEFAULT_EVENTS;
	struct pmc_evlist list = { 0 };
	struct pmc_count *before, *after;
	struct pmc_self *self;
	char err[256];
	size_t i, failed;
	int *fds, *ret;
	bool *page;

	if (pmc_evlist_parse(&list, events, err, sizeof(err))) {
		fprintf(stderr, "count-region: %s\n", err);
		return 2;
	}
	if (pmc_evlist_open(&list, 0, -1, &failed)) {
		fprintf(stderr, "count-region: %s: %s\n",
			failed < list.nr ? list.ev[failed].name : "enable",
			strerror(errno));
		return 1;
	}

	self = calloc(list.nr, sizeof(*self));
	before = calloc(list.nr, sizeof(*before));
	after = calloc(list.nr, sizeof(*after));
	page = calloc(list.nr, sizeof(*page));
	fds = calloc(list.nr, sizeof(*fds));
	ret = calloc(list.nr, sizeof(*ret));
	if (!self || !before || !after || !page || !fds || !ret) {
		fprintf(stderr, "count-region: out of memory\n");
		return 1;
	}
	for (i = 0; i < list.nr; i++)
		if (pmc_self_map(&self[i], list.ev[i].fd))
			self[i] = (struct pmc_self){ .fd = list.ev[i].fd };
	if (read_all(&list, self, before, page, fds, ret))
		return 1;

	region();

	if (read_all(&list, self, after, page, fds, ret))
		return 1;
	for (i = 0; i < list.nr; i++) {
		struct pmc_count c = {
			.value = after[i].value - before[i].value,
			.enabled = after[i].enabled - before[i].enabled,
			.running = after[i].running - before[i].running,
		};

		printf("%20.0f  %-16s (%.1f%% counted)%s\n",
		       pmc_count_scaled(&c), list.ev[i].name,
		       pmc_count_percent(&c), page[i] ? " [page 0]" : "");
	}
	for (i = 0; i < list.nr; i++)
		pmc_self_unmap(&self[i]);
	free(self);
	free(before);
	free(after);
	free(page);
	free(fds);
	free(ret);
	pmc_evlist_close(&list);
	pmc_evlist_free(&list);
	return 0;
}
