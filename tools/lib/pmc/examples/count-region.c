// SPDX-License-Identifier: GPL-2.0
/*
 * Count a region of code with libpmc:
 *
 *	count-region ['{cycles,instructions},task-clock:u']
 *
 * Opens the event string on the calling thread, enables it around a
 * loop, and prints each count scaled to the time it was enabled, with
 * the share of that time it was on the PMU (less than 100% when groups
 * were multiplexed).
 */
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

int main(int argc, char **argv)
{
	const char *events = argc > 1 ? argv[1] : DEFAULT_EVENTS;
	struct pmc_evlist list = { 0 };
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

	region();

	pmc_evlist_disable(&list);
	for (i = 0; i < list.nr; i++) {
		struct pmc_count c;

		if (pmc_read_count(list.ev[i].fd, &c)) {
			fprintf(stderr, "count-region: read %s failed\n",
				list.ev[i].name);
			return 1;
		}
		printf("%20.0f  %-16s (%.1f%% counted)\n",
		       pmc_count_scaled(&c), list.ev[i].name,
		       pmc_count_percent(&c));
	}
	pmc_evlist_close(&list);
	pmc_evlist_free(&list);
	return 0;
}
