// SPDX-License-Identifier: GPL-2.0
/*
 * The threads pmc-stat and pmc-record attach to, from libpmc's thread
 * maps, with their messages and names.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "libpmc.h"
#include "pmc-targets.h"

/* A counter per thread and event: many fds. */
static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

int pmc_attach_threads(const char *prog, const char *list, bool whole,
		       pid_t **ids, int *nr_ids, pid_t **tids)
{
	const char *what = whole ? "process" : "thread";
	pid_t missing = 0;
	int n;

	free(*ids);
	*nr_ids = pmc_id_list(list, ids);
	if (*nr_ids < 0) {
		fprintf(stderr, "%s: bad %s list '%s': use N,M\n", prog, what,
			list);
		exit(2);
	}
	free(*tids);
	n = pmc_thread_list(*ids, *nr_ids, whole, tids, &missing);
	if (n < 0 && errno == ESRCH) {
		fprintf(stderr, "%s: no %s %d\n", prog, what, (int)missing);
		exit(1);
	}
	if (n < 0) {
		fprintf(stderr, "%s: %s\n", prog, strerror(errno));
		exit(1);
	}
	raise_fd_limit();
	return n;
}

bool pmc_any_alive(const pid_t *ids, int nr_ids)
{
	int i;

	for (i = 0; i < nr_ids; i++)
		if (pmc_task_exists(ids[i]))
			return true;
	return false;
}

void pmc_thread_name(pid_t tid, char *buf, size_t size)
{
	char path[64], comm[32] = "", *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)tid);
	f = fopen(path, "r");
	if (f) {
		if (!fgets(comm, sizeof(comm), f))
			comm[0] = '\0';
		fclose(f);
	}
	comm[strcspn(comm, "\n")] = '\0';
	/* A task names itself: keep its name from breaking CSV or JSON. */
	for (p = comm; *p; p++)
		if (!isprint((unsigned char)*p) || strchr("\"\\,;", *p))
			*p = '?';
	snprintf(buf, size, "%s-%d", comm[0] ? comm : "?", (int)tid);
}
