// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * CPU and thread maps: what a counter per CPU (-a, -C LIST) or per
 * thread (-p PID,..., -t TID,...) is opened on, as lists of ids.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "libpmc.h"

#define MAX_CPU		65535

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* Sort @v and drop repeats; the new length. */
static int sort_unique(int *v, int n)
{
	int i, m = 0;

	qsort(v, n, sizeof(*v), cmp_int);
	for (i = 0; i < n; i++)
		if (!m || v[m - 1] != v[i])
			v[m++] = v[i];
	return m;
}

static int append(int **v, int *n, int id)
{
	int *grown = realloc(*v, (*n + 1) * sizeof(**v));

	if (!grown)
		return -1;
	*v = grown;
	(*v)[(*n)++] = id;
	return 0;
}

/*
 * "N,M-K" (ranges only with @ranges) of numbers 0..@max into *@out,
 * sorted, each once. How many, or -1 with errno EINVAL or ENOMEM.
 */
static int parse_list(const char *list, long max, bool ranges, int **out)
{
	const char *p = list;
	int *v = NULL, n = 0;

	while (*p) {
		char *end;
		long lo, hi;

		errno = 0;
		lo = strtol(p, &end, 10);
		hi = lo;
		if (ranges && !errno && end != p && *end == '-') {
			p = end + 1;
			hi = strtol(p, &end, 10);
		}
		if (errno || end == p || lo < 0 || hi < lo || hi > max ||
		    (*end && *end != ',' && *end != '\n'))
			goto bad;
		for (; lo <= hi; lo++)
			if (append(&v, &n, lo))
				goto nomem;
		p = *end ? end + 1 : end;
		if (*p == '\n')
			break;
	}
	if (n) {
		*out = v;
		return sort_unique(v, n);
	}
bad:
	errno = EINVAL;
nomem:
	free(v);
	return -1;
}

int pmc_cpu_list(const char *list, int **cpus)
{
	return parse_list(list, MAX_CPU, true, cpus);
}

int pmc_online_cpus(int **cpus)
{
	char online[4096];
	FILE *f = fopen("/sys/devices/system/cpu/online", "re");
	int n = -1;

	if (!f)
		return -1;
	if (fgets(online, sizeof(online), f))
		n = pmc_cpu_list(online, cpus);
	else
		errno = EINVAL;
	fclose(f);
	return n;
}

bool pmc_cpu_offline(int cpu)
{
	char path[64];
	FILE *f;
	int online = 1;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	f = fopen(path, "re");
	if (!f)
		return false;	/* CPUs that cannot go offline have no file */
	if (fscanf(f, "%d", &online) != 1)
		online = 1;
	fclose(f);
	return !online;
}

int pmc_id_list(const char *list, pid_t **ids)
{
	int n = parse_list(list, INT_MAX, false, ids);

	if (n > 0 && !(*ids)[0]) {	/* 0 is no task's id */
		free(*ids);
		errno = EINVAL;
		return -1;
	}
	return n;
}

/* Add the threads of process @pid to @v: 1, 0 if it has none, -1. */
static int add_threads(pid_t pid, int **v, int *n)
{
	char path[64];
	struct dirent *d;
	int found = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return 0;
	while ((d = readdir(dir))) {
		int tid = atoi(d->d_name);

		if (tid <= 0)
			continue;
		if (append(v, n, tid)) {
			found = -1;
			break;
		}
		found = 1;
	}
	closedir(dir);
	return found;
}

bool pmc_task_exists(pid_t tid)
{
	char path[64];

	/* /proc/TID resolves for every thread, though readdir hides them. */
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)tid);
	return !access(path, F_OK);
}

int pmc_thread_list(const pid_t *ids, int nr_ids, bool whole, pid_t **tids,
		    pid_t *missing)
{
	int *v = NULL, n = 0, i, found;

	for (i = 0; i < nr_ids; i++) {
		if (whole)
			found = add_threads(ids[i], &v, &n);
		else if (pmc_task_exists(ids[i]))
			found = append(&v, &n, ids[i]) ? -1 : 1;
		else
			found = 0;
		if (found > 0)
			continue;
		if (found < 0) {
			errno = ENOMEM;
		} else {
			errno = ESRCH;
			*missing = ids[i];
		}
		free(v);
		return -1;
	}
	*tids = v;
	return sort_unique(v, n);
}

pid_t pmc_thread_tgid(pid_t tid)
{
	char path[64], line[256];
	pid_t tgid = tid;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	f = fopen(path, "re");
	if (!f)
		return tid;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	return tgid;
}
