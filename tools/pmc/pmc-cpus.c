// SPDX-License-Identifier: GPL-2.0
/*
 * CPU lists and per-CPU open errors, shared by pmc-stat and pmc-record.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "pmc-cpus.h"
#include "pmc-tools.h"

#define MAX_CPU		65535

int pmc_cpu_list(const char *list, int **cpus)
{
	const char *p = list;
	int *v = NULL, *grown, n = 0;

	while (*p) {
		char *end;
		long lo, hi;

		errno = 0;
		lo = strtol(p, &end, 10);
		hi = lo;
		if (!errno && end != p && *end == '-') {
			p = end + 1;
			hi = strtol(p, &end, 10);
		}
		if (errno || end == p || lo < 0 || hi < lo || hi > MAX_CPU ||
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
		*cpus = v;
		return n;
	}
bad:
	free(v);
	return -1;
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
