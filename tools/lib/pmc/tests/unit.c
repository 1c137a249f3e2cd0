// SPDX-License-Identifier: GPL-2.0
/*
 * libpmc's CPU and thread maps and pmc_open_strerror(), on the host
 * (they read /proc and /sys, not the kernel's counters). Linked against
 * the installed shared library, so its exports are what is tested.
 * Prints a TAP line per check.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

#include <libpmc.h>

static int n, failed;

static void check(const char *name, int ok)
{
	printf("%sok %d - %s\n", ok ? "" : "not ", ++n, name);
	failed += !ok;
}

static int list_is(const int *v, int nr, const char *want)
{
	char got[256] = "";
	int i;

	for (i = 0; i < nr; i++)
		snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%d",
			 i ? " " : "", v[i]);
	if (strcmp(got, want))
		fprintf(stderr, "got '%s', want '%s'\n", got, want);
	return !strcmp(got, want);
}

static int says(int err, const struct pmc_attr *attr, pid_t pid, int cpu,
		const char *want)
{
	char why[256];

	pmc_open_strerror(attr, pid, cpu, err, why, sizeof(why));
	if (!strstr(why, want))
		fprintf(stderr, "errno %d: '%s' lacks '%s'\n", err, why, want);
	return !!strstr(why, want);
}

static void *idle_thread(void *arg)
{
	pause();
	return arg;
}

int main(void)
{
	struct pmc_attr hw = { .size = sizeof(hw),
			       .config = PMC_CONFIG(PMC_TYPE_HARDWARE, 0) };
	struct pmc_attr sw = { .size = sizeof(sw), .exclude_kernel = 1,
			       .config = PMC_CONFIG(PMC_TYPE_SOFTWARE, 1) };
	pid_t self = getpid(), *tids, missing = 0, ids[2];
	int *v, nr, i, found = 0;
	pthread_t t;
	char small[8];

	nr = pmc_cpu_list("3,0-2,2,1", &v);
	check("pmc_cpu_list: \"3,0-2,2,1\" is the set 0 1 2 3",
	      nr == 4 && list_is(v, nr, "0 1 2 3"));
	free(v);
	check("pmc_cpu_list: \"1-\", \"2-1\", \"x\", \"\" and \"70000\" are EINVAL",
	      pmc_cpu_list("1-", &v) < 0 && errno == EINVAL &&
	      pmc_cpu_list("2-1", &v) < 0 && pmc_cpu_list("x", &v) < 0 &&
	      pmc_cpu_list("", &v) < 0 && pmc_cpu_list("70000", &v) < 0);
	nr = pmc_online_cpus(&v);
	check("pmc_online_cpus: as many as sysconf(_SC_NPROCESSORS_ONLN)",
	      nr == sysconf(_SC_NPROCESSORS_ONLN) && !pmc_cpu_offline(v[0]));
	free(v);
	check("pmc_id_list: \"0\" and \"1-2\" are EINVAL (no task 0, no ranges)",
	      pmc_id_list("0", &tids) < 0 && errno == EINVAL &&
	      pmc_id_list("1-2", &tids) < 0);

	if (pthread_create(&t, NULL, idle_thread, NULL))
		return 1;
	ids[0] = self;
	nr = pmc_thread_list(ids, 1, true, &tids, &missing);
	for (i = 0; i < nr; i++)
		found += tids[i] == self;
	check("pmc_thread_list: this process has 2 threads, itself one of them",
	      nr == 2 && found == 1);
	check("pmc_thread_tgid: the other thread's process is this one",
	      nr == 2 && pmc_thread_tgid(tids[tids[0] == self]) == self);
	free(tids);
	ids[0] = self;
	ids[1] = 0x7ffffff0;
	check("pmc_thread_list: a missing pid is ESRCH and named",
	      pmc_thread_list(ids, 2, true, &tids, &missing) < 0 &&
	      errno == ESRCH && missing == 0x7ffffff0);

	check("strerror: ENOSYS names the kernel option",
	      says(ENOSYS, &sw, 0, -1, "CONFIG_PMC_EVENTS (ENOSYS)"));
	check("strerror: EACCES on a CPU names CAP_PERFMON and pmc_paranoid",
	      says(EACCES, &sw, -1, 0,
		   "CAP_PERFMON (or CAP_SYS_ADMIN), or kernel.pmc_paranoid <= 0"));
	check("strerror: EACCES for a user-mode task counter is ptrace",
	      says(EACCES, &sw, 1, -1,
		   "may not watch task 1: that needs the right to ptrace it") ||
	      pmc_paranoid_level() >= 3);
	check("strerror: ENODEV of a hardware event: no PMU",
	      says(ENODEV, &hw, 0, -1, "no hardware PMU (ENODEV)"));
	check("strerror: EINVAL on a CPU that does not exist",
	      says(EINVAL, &sw, -1, 65535, "there is no CPU 65535 (EINVAL)"));
	check("strerror: EINVAL of a hardware event: a raw event or the group",
	      says(EINVAL, &hw, 0, -1, "a raw event this CPU's PMU cannot take"));
	check("strerror: ENOENT of a hardware event: this PMU has none",
	      says(ENOENT, &hw, 0, -1, "this CPU's PMU has no such event (ENOENT)"));
	check("strerror: ENOENT of a software event: this kernel",
	      says(ENOENT, &sw, 0, -1, "no such event type or software event"));
	check("strerror: EMFILE says ulimit -n",
	      says(EMFILE, &sw, 0, -1, "ulimit -n (EMFILE)"));
	check("strerror: others as strerror()",
	      says(ENOMEM, &sw, 0, -1, strerror(ENOMEM)));
	pmc_open_strerror(&hw, 0, -1, ENODEV, small, sizeof(small));
	check("strerror: truncated to the buffer, NUL-terminated",
	      strlen(small) == sizeof(small) - 1);
	return failed ? 1 : 0;
}
