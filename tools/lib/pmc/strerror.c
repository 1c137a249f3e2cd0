// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Why pmc_open(2) failed, in words a user can act on: the errno alone
 * does not say whether EACCES was ptrace, pmc_paranoid or a per-CPU
 * counter, nor whether EINVAL was the CPU or the event.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "libpmc.h"

int pmc_paranoid_level(void)
{
	FILE *f = fopen("/proc/sys/kernel/pmc_paranoid", "re");
	int level = 2;

	if (f) {
		if (fscanf(f, "%d", &level) != 1)
			level = 2;
		fclose(f);
	}
	return level;
}

static const char *eacces(const struct pmc_attr *attr, pid_t pid, int cpu,
			  char *buf, size_t size)
{
	int level = pmc_paranoid_level();

	if (pid == -1 && cpu >= 0)
		snprintf(buf, size, "counting every task on a CPU (-a, -C) needs CAP_PERFMON (or CAP_SYS_ADMIN), or kernel.pmc_paranoid <= 0 (it is %d) (EACCES)",
			 level);
	else if (level >= 3)
		snprintf(buf, size, "kernel.pmc_paranoid is %d: no counters without CAP_PERFMON (EACCES)",
			 level);
	else if (!attr->exclude_kernel && level >= 2)
		snprintf(buf, size, "counting in the kernel needs CAP_PERFMON, or kernel.pmc_paranoid <= 1 (it is %d); add :u to count user mode only (EACCES)",
			 level);
	else
		snprintf(buf, size, "may not watch task %d: that needs the right to ptrace it (EACCES)",
			 (int)pid);
	return buf;
}

char *pmc_open_strerror(const struct pmc_attr *attr, pid_t pid, int cpu,
			int err, char *buf, size_t size)
{
	bool hw = pmc_config_needs_pmu(attr->config);

	if (!size)
		return buf;
	if (err == ENOSYS)
		snprintf(buf, size, "this kernel has no pmc_open(2): boot one built with CONFIG_PMC_EVENTS (ENOSYS)");
	else if (err == EACCES)
		eacces(attr, pid, cpu, buf, size);
	else if (err == ESRCH)
		snprintf(buf, size, "no process %d (ESRCH)", (int)pid);
	else if (err == ENODEV && cpu >= 0 && pmc_cpu_offline(cpu))
		snprintf(buf, size, "CPU %d is offline (ENODEV)", cpu);
	else if (err == ENODEV && hw)
		snprintf(buf, size, "no hardware PMU (ENODEV): only software events count here");
	else if (err == EINVAL && cpu >= 0 && cpu >= sysconf(_SC_NPROCESSORS_CONF))
		snprintf(buf, size, "there is no CPU %d (EINVAL)", cpu);
	else if (err == ENOENT && hw)
		snprintf(buf, size, "this CPU's PMU has no such event (ENOENT)");
	else if (err == ENOENT)
		snprintf(buf, size, "no such event type or software event in this kernel (ENOENT)");
	else if (err == EINVAL && hw)
		snprintf(buf, size, "a raw event this CPU's PMU cannot take, or more hardware counters in one group than it has (EINVAL)");
	else if (err == EOPNOTSUPP && !(attr->config & PMC_CONFIG_RAW) &&
		 PMC_CONFIG_TYPE(attr->config) == PMC_TYPE_TRACEPOINT)
		snprintf(buf, size, "tracepoints are not supported (EOPNOTSUPP)");
	else if (err == EOPNOTSUPP && attr->exclude_idle && hw)
		snprintf(buf, size, "exclude_idle is not supported on hardware events (EOPNOTSUPP)");
	else if (err == EOPNOTSUPP)
		snprintf(buf, size, "not supported by this kernel or PMU (EOPNOTSUPP)");
	else if (err == E2BIG)
		snprintf(buf, size, "this kernel knows a %u-byte struct pmc_attr and a field it lacks is set (E2BIG)",
			 attr->size);
	else if (err == EMFILE)
		snprintf(buf, size, "more counters than this process may open files: raise ulimit -n (EMFILE)");
	else
		snprintf(buf, size, "%s", strerror(err));
	return buf;
}
