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
 * and says "[page 0]"; the others with read().
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

/* Page 0 where it serves, else read(); *@page says which. */
static int read_one(const struct pmc_self *s, struct pmc_count *c, bool *page)
{
	bool served = s->page && pmc_self_page_read(s->page, c);

	if (page)
		*page = served;
	if (served || !pmc_read_count(s->fd, c))
		return 0;
	fprintf(stderr, "count-region: read failed: %s\n", strerror(errno));
	return 1;
}

int main(int argc, char **argv)
{
	const char *events = argc > 1 ? argv[1] : DEFAULT_EVENTS;
	struct pmc_evlist list = { 0 };
	struct pmc_count *before;
	struct pmc_self *self;
	char err[256];
	size_t i, failed;

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
	if (!self || !before) {
		fprintf(stderr, "count-region: out of memory\n");
		return 1;
	}
	for (i = 0; i < list.nr; i++)
		if (pmc_self_map(&self[i], list.ev[i].fd))
			self[i] = (struct pmc_self){ .fd = list.ev[i].fd };
	for (i = 0; i < list.nr; i++)
		if (read_one(&self[i], &before[i], NULL))
			return 1;

	region();

	for (i = 0; i < list.nr; i++) {
		struct pmc_count c;
		bool page;

		if (read_one(&self[i], &c, &page))
			return 1;
		c.value -= before[i].value;
		c.enabled -= before[i].enabled;
		c.running -= before[i].running;
		printf("%20.0f  %-16s (%.1f%% counted)%s\n",
		       pmc_count_scaled(&c), list.ev[i].name,
		       pmc_count_percent(&c), page ? " [page 0]" : "");
	}
	for (i = 0; i < list.nr; i++)
		pmc_self_unmap(&self[i]);
	free(self);
	free(before);
	pmc_evlist_close(&list);
	pmc_evlist_free(&list);
	return 0;
}
