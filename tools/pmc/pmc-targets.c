// SPDX-License-Identifier: GPL-2.0
/*
 * The targets of pmc-stat and pmc-record: CPU lists and per-CPU open
 * errors, and the threads of the processes they attach to.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>

#include "pmc-targets.h"
#include "pmc-tools.h"

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

/*
 * "N,M-K" (ranges only with @ranges) of numbers 0..@max into *@out
 * (malloc()ed), sorted, each once. How many, or -1 if malformed.
 */
static int parse_list(const char *list, long max, bool ranges, int **out)
{
	const char *p = list;
	int *v = NULL, *grown, n = 0;

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
		grown = realloc(v, (n + hi - lo + 1) * sizeof(*v));
		if (!grown)
			goto bad;
		v = grown;
		for (; lo <= hi; lo++)
			v[n++] = lo;
		p = *end ? end + 1 : end;
		if (*p == '\n')
			break;
	}
	if (n) {
		*out = v;
		return sort_unique(v, n);
	}
bad:
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
	FILE *f = fopen("/sys/devices/system/cpu/online", "r");
	int n = -1;

	if (!f)
		return -1;
	if (fgets(online, sizeof(online), f))
		n = pmc_cpu_list(online, cpus);
	fclose(f);
	if (n < 0)
		errno = EINVAL;
	return n;
}

static bool cpu_is_offline(int cpu)
{
	char path[64];
	FILE *f;
	int online = 1;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	f = fopen(path, "r");
	if (!f)
		return false;	/* CPUs that cannot go offline have no file */
	if (fscanf(f, "%d", &online) != 1)
		online = 1;
	fclose(f);
	return !online;
}

static int paranoid_level(void)
{
	FILE *f = fopen("/proc/sys/kernel/pmc_paranoid", "r");
	int level = 2;

	if (f) {
		if (fscanf(f, "%d", &level) != 1)
			level = 2;
		fclose(f);
	}
	return level;
}

bool pmc_explain_cpu_error(const char *prog, int err, int cpu, __u64 config)
{
	if (err == EACCES)
		fprintf(stderr, "%s: -a and -C watch every task on a CPU: that needs CAP_PERFMON (or CAP_SYS_ADMIN), or kernel.pmc_paranoid <= 0 (it is %d)\n",
			prog, paranoid_level());
	else if (err == ENODEV && cpu_is_offline(cpu))
		fprintf(stderr, "%s: CPU %d is offline\n", prog, cpu);
	else if (err == EINVAL && !pmc_config_needs_pmu(config))
		fprintf(stderr, "%s: there is no CPU %d\n", prog, cpu);
	else
		return false;
	return true;
}

/* "12,34" of -p or -t into *@ids; how many, -1 if malformed. */
static int id_list(const char *list, pid_t **ids)
{
	return parse_list(list, INT_MAX, false, ids);
}

/* Add the threads of process @pid to @v; false if it has none. */
static bool add_threads(pid_t pid, int **v, int *n)
{
	char path[64];
	struct dirent *d;
	bool found = false;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return false;
	while ((d = readdir(dir))) {
		int tid = atoi(d->d_name), *grown;

		if (tid <= 0)
			continue;
		grown = realloc(*v, (*n + 1) * sizeof(**v));
		if (!grown)
			break;
		*v = grown;
		(*v)[(*n)++] = tid;
		found = true;
	}
	closedir(dir);
	return found;
}

static bool task_exists(pid_t tid)
{
	char path[64];

	/* /proc/TID resolves for every thread, though readdir hides them. */
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)tid);
	return !access(path, F_OK);
}

/*
 * The threads of @ids (see pmc_attach_threads()) into *@tids; how many,
 * or -1 with *@missing the first id that names no running task.
 */
static int thread_list(const pid_t *ids, int nr_ids, bool whole,
		       pid_t **tids, pid_t *missing)
{
	int *v = NULL, n = 0, i;

	for (i = 0; i < nr_ids; i++) {
		int *grown;

		if (whole) {
			if (add_threads(ids[i], &v, &n))
				continue;
		} else if (task_exists(ids[i])) {
			grown = realloc(v, (n + 1) * sizeof(*v));
			if (grown) {
				v = grown;
				v[n++] = ids[i];
				continue;
			}
		}
		*missing = ids[i];
		free(v);
		return -1;
	}
	*tids = v;
	return sort_unique(v, n);
}

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
	*nr_ids = id_list(list, ids);
	if (*nr_ids < 0 || !(*ids)[0]) {
		fprintf(stderr, "%s: bad %s list '%s': use N,M\n", prog, what,
			list);
		exit(2);
	}
	free(*tids);
	n = thread_list(*ids, *nr_ids, whole, tids, &missing);
	if (n < 0) {
		fprintf(stderr, "%s: no %s %d\n", prog, what, (int)missing);
		exit(1);
	}
	raise_fd_limit();
	return n;
}

bool pmc_any_alive(const pid_t *ids, int nr_ids)
{
	int i;

	for (i = 0; i < nr_ids; i++)
		if (task_exists(ids[i]))
			return true;
	return false;
}

pid_t pmc_thread_tgid(pid_t tid)
{
	char path[64], line[256];
	pid_t tgid = tid;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	f = fopen(path, "r");
	if (!f)
		return tid;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	return tgid;
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
