// SPDX-License-Identifier: GPL-2.0
/* How samplers sample, and the records of running tasks; see pmc-sampler.h. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/auxv.h>

#include "pmc-data.h"
#include "pmc-regs.h"
#include "pmc-sampler.h"
#include "pmc-tools.h"

void sampler_usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", program_invocation_short_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fprintf(stderr, "Try '%s --help' for more information.\n",
		program_invocation_short_name);
	exit(2);
}

__u64 sampler_parse_count(const char *arg, const char *what)
{
	unsigned long long val;
	char *end;

	errno = 0;
	val = strtoull(arg, &end, 10);
	if (errno || end == arg || *end || arg[0] == '-' || !val)
		sampler_usage_error("invalid %s '%s': want a positive number",
				    what, arg);
	return val;
}

#define MAX_SAMPLE_RATE_PATH	"/proc/sys/kernel/pmc_max_sample_rate"
#define NSEC_PER_SEC		1000000000ULL
/* The clocks' shortest period: pmc_open(2) raises a shorter one to it. */
#define CLOCK_MIN_PERIOD	10000ULL

/*
 * Default periods for events that are not clocks: roughly a few
 * thousand samples a second on a busy CPU. Rare events get short periods.
 */
static const struct {
	__u64 config;
	__u64 period;
} default_periods[] = {
	{ HW(CPU_CYCLES),		100000 },
	{ HW(INSTRUCTIONS),		100000 },
	{ HW(BRANCH_INSTRUCTIONS),	100000 },
	{ HW(CACHE_REFERENCES),		10000 },
	{ HW(BUS_CYCLES),		10000 },
	{ HW(CACHE_MISSES),		1000 },
	{ HW(BRANCH_MISSES),		1000 },
	{ SW(PAGE_FAULTS),		1 },
	{ SW(PAGE_FAULTS_MIN),		1 },
	{ SW(PAGE_FAULTS_MAJ),		1 },
	{ SW(CONTEXT_SWITCHES),		1 },
	{ SW(CPU_MIGRATIONS),		1 },
};

#define DEFAULT_RAW_PERIOD	100000

static __u64 default_period(__u64 config, enum pmc_unit unit)
{
	size_t i;

	if (unit == PMC_UNIT_NSEC)
		return NSEC_PER_SEC / PMC_CLOCK_DEFAULT_FREQ;
	for (i = 0; i < ARRAY_SIZE(default_periods); i++)
		if (default_periods[i].config == config)
			return default_periods[i].period;
	return DEFAULT_RAW_PERIOD;
}

int pmc_sampling_check(const char *prog, struct sampling *how, char *err,
		       size_t errlen)
{
	long max = 0;
	FILE *f;

	if (how->period && how->freq) {
		snprintf(err, errlen, "-c and -F exclude each other");
		return -1;
	}
	if (!how->freq)
		return 0;
	if (how->freq > NSEC_PER_SEC) {
		snprintf(err, errlen, "frequency %llu Hz is above 1 GHz",
			 (unsigned long long)how->freq);
		return -1;
	}
	if (how->rand) {
		snprintf(err, errlen,
			 "--rand draws each period; with -F the kernel sets them");
		return -1;
	}
	f = fopen(MAX_SAMPLE_RATE_PATH, "re");
	if (f) {
		if (fscanf(f, "%ld", &max) != 1)
			max = 0;
		fclose(f);
	}
	if (max > 0 && how->freq > (__u64)max) {
		fprintf(stderr,
			"%s: note: -F %llu is above kernel.pmc_max_sample_rate: sampling at %ld Hz\n",
			prog, (unsigned long long)how->freq, max);
		how->freq = max;
	}
	return 0;
}

/*
 * A clock's period as the kernel will use it: what it raises is said,
 * and the period used is the one recorded, so that a report's rate is
 * true. Where the timers run from the tick, a shorter period gets a
 * sample a tick and the rest lost: said too. Said once, for all the
 * clocks: -c and -F apply to every event.
 */
static __u64 clock_period(const char *prog, __u64 period, __u64 freq)
{
	static bool said_min, said_tick;
	struct timespec res;
	__u64 tick;

	if (period < CLOCK_MIN_PERIOD && !said_min) {
		if (freq)
			fprintf(stderr,
				"%s: note: -F %llu: the clocks sample at most every %llu us, so at %llu Hz\n",
				prog, (unsigned long long)freq,
				CLOCK_MIN_PERIOD / 1000,
				NSEC_PER_SEC / CLOCK_MIN_PERIOD);
		else
			fprintf(stderr,
				"%s: note: -c %llu: the clocks' shortest period is %llu ns\n",
				prog, (unsigned long long)period,
				CLOCK_MIN_PERIOD);
		said_min = true;
	}
	if (period < CLOCK_MIN_PERIOD)
		period = CLOCK_MIN_PERIOD;
	if (!said_tick && !clock_getres(CLOCK_MONOTONIC, &res)) {
		tick = res.tv_sec * NSEC_PER_SEC + res.tv_nsec;
		said_tick = tick > period;
		if (said_tick)
			fprintf(stderr,
				"%s: note: this kernel's timers run from the tick (%llu ns): one sample a tick, the other periods lost\n",
				prog, (unsigned long long)tick);
	}
	return period;
}

void pmc_sampling_set(const char *prog, struct pmc_evsel *ev, size_t i,
		      const struct sampling *how)
{
	struct pmc_attr *attr = &ev->attr;
	__u64 period = how->period;
	bool clock = ev->unit == PMC_UNIT_NSEC;

	if (how->freq && clock)
		period = NSEC_PER_SEC / how->freq;
	if (!period && !how->freq)
		period = default_period(attr->config, ev->unit);
	if (clock)
		period = clock_period(prog, period, how->freq);

	attr->irq_period = period;
	attr->freq = 0;
	if (how->freq && !clock) {
		attr->irq_period = how->freq;
		attr->freq = 1;
	}
	attr->period_rand = how->rand;
	attr->read_format = 0;		/* samples only, never read() */
	attr->record_type = PMC_RECORD_IP | PMC_RECORD_TID | PMC_RECORD_TIME;
	/* Each sample's weight, where the kernel chooses the periods. */
	if (how->freq)
		attr->record_type |= PMC_RECORD_PERIOD;
	if (how->call_graph != CALL_GRAPH_NONE)
		attr->record_type |= PMC_RECORD_CALLCHAIN;
	if (how->call_graph == CALL_GRAPH_DWARF) {
		attr->record_type |= PMC_RECORD_REGS_USER |
				     PMC_RECORD_STACK_USER;
		attr->regs_user = unwind_regs_mask();
		attr->stack_user = how->stack;
	}
	attr->disabled = 1;
	attr->inherit = !how->all_cpus;	/* a CPU's sampler sees every task */
	attr->mmap = i == 0;
	attr->comm = i == 0;		/* and FORK and EXIT */
	attr->time_all = 1;	/* to merge the CPUs' buffers by time */
	attr->wakeup_events = how->wakeup_events;
}

int pmc_sampler_open(const char *prog, struct pmc_attr *attr,
		     const char *event, pid_t pid, int cpu, int group_fd,
		     bool gone_ok)
{
	char why[256];
	int fd, err;

	fd = pmc_open(attr, pid, cpu, group_fd, PMC_FLAG_FD_CLOEXEC);
	if (fd < 0 && errno == EACCES && !attr->exclude_kernel && cpu < 0) {
		attr->exclude_kernel = 1;
		fd = pmc_open(attr, pid, -1, group_fd, PMC_FLAG_FD_CLOEXEC);
	}
	if (fd >= 0)
		return fd;

	err = errno;
	if (gone_ok && err == ESRCH)
		return -2;
	fprintf(stderr, "%s: %s: %s\n", prog, event,
		pmc_open_strerror(attr, pid, cpu, err, why, sizeof(why)));
	return -1;
}

int pmc_sampler_map(const char *prog, struct pmc_ring *ring, int fd,
		    size_t data_pages)
{
	int err;

	if (!pmc_ring_map(ring, fd, data_pages, true))
		return 0;
	err = errno;
	if (err == EPROTO) {
		fprintf(stderr, "%s: the ring buffer's layout is newer than this tool\n",
			prog);
		return -1;
	}
	fprintf(stderr, "%s: mmap of %zu ring buffer pages: %s\n", prog,
		data_pages, strerror(err));
	if (err == EPERM)
		fprintf(stderr,
			"%s: over RLIMIT_MEMLOCK plus /proc/sys/kernel/pmc_mlock_kb; try a smaller -m\n",
			prog);
	return -1;
}

bool pmc_read_comm(pid_t pid, pid_t tid, char *comm)
{
	char path[64];
	bool ok;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid,
		 (int)tid);
	f = fopen(path, "r");
	if (!f)
		return false;
	ok = !!fgets(comm, PMC_DATA_COMM_LEN, f);
	fclose(f);
	if (ok)
		comm[strcspn(comm, "\n")] = '\0';
	return ok;
}

/*
 * attr.time_all: a side record ends with its time. Those made up here
 * are from before the counters are enabled, so before any the kernel
 * writes. @h has room for it.
 */
static void stamp(struct pmc_event_header *h)
{
	struct timespec ts;
	__u64 now;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = ts.tv_sec * 1000000000ULL + ts.tv_nsec;
	memcpy((char *)h + h->size, &now, sizeof(now));
	h->size += sizeof(now);
}

static int synthesize_comm(pid_t pid, pid_t tid, pmc_synth_fn fn, void *arg)
{
	struct {
		struct pmc_event_header h;
		__u32 pid, tid;
		char comm[PMC_DATA_COMM_LEN];
		__u64 time;
	} r;

	memset(&r, 0, sizeof(r));
	if (!pmc_read_comm(pid, tid, r.comm))
		return 0;	/* gone */
	r.h.type = PMC_EVENT_COMM;
	r.h.size = offsetof(typeof(r), time);
	r.pid = pid;
	r.tid = tid;
	stamp(&r.h);
	return fn(arg, &r.h);
}

/* Each thread's own name, as perf record -p gives it ("140:worker-b"). */
static int synthesize_comms(pid_t pid, pmc_synth_fn fn, void *arg)
{
	char path[64];
	struct dirent *d;
	int ret = 0;
	DIR *task;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	task = opendir(path);
	if (!task)
		return 0;	/* gone */
	while (!ret && (d = readdir(task)))
		if (atoi(d->d_name) > 0)
			ret = synthesize_comm(pid, atoi(d->d_name), fn, arg);
	closedir(task);
	return ret;
}

int pmc_synthesize_task(pid_t pid, pmc_synth_fn fn, void *arg)
{
	unsigned long long start, end, pgoff;
	char path[64], line[4096], perms[8];
	int n, ret;
	FILE *f;

	ret = synthesize_comms(pid, fn, arg);
	if (ret)
		return ret;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;	/* the task is gone: nothing to place */
	while (!ret && fgets(line, sizeof(line), f)) {
		struct {
			struct pmc_event_header h;
			__u32 pid, tid;
			__u64 addr, len, pgoff;
			char filename[4096 + 16];	/* padding, time */
		} r;
		char *file;
		size_t len;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &start, &end,
			   perms, &pgoff, &n) < 4 || !strchr(perms, 'x'))
			continue;
		file = line + n;
		file[strcspn(file, "\n")] = '\0';
		/* Files, and the vDSO as the kernel's MMAP records name it. */
		if (file[0] != '/' && strcmp(file, PMC_DATA_VDSO_NAME))
			continue;
		if (file[0] != '/')
			pgoff = 0;
		len = strlen(file) + 1;
		memset(&r, 0, sizeof(r));
		r.h.type = PMC_EVENT_MMAP;
		r.h.size = (offsetof(typeof(r), filename) + len + 7) & ~7UL;
		r.pid = pid;
		r.tid = pid;
		r.addr = start;
		r.len = end - start;
		r.pgoff = pgoff;
		memcpy(r.filename, file, len);
		stamp(&r.h);
		ret = fn(arg, &r.h);
	}
	fclose(f);
	return ret;
}

int pmc_synthesize_all(const char *prog, pmc_synth_fn fn, void *arg)
{
	struct dirent *d;
	DIR *proc;
	int ret = 0;
	pid_t pid;

	proc = opendir("/proc");
	if (!proc) {
		fprintf(stderr, "%s: /proc: %s\n", prog, strerror(errno));
		return -1;
	}
	while (!ret && (d = readdir(proc))) {
		pid = atoi(d->d_name);
		if (pid > 0)
			ret = pmc_synthesize_task(pid, fn, arg);
	}
	closedir(proc);
	return ret;
}

const void *pmc_vdso_image(size_t *size)
{
	unsigned long long lo, hi, at = getauxval(AT_SYSINFO_EHDR);
	FILE *f = fopen("/proc/self/maps", "re");
	char line[256];

	*size = 0;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx-%llx", &lo, &hi) == 2 && lo == at &&
		    strstr(line, " " PMC_DATA_VDSO_NAME "\n"))
			*size = hi - lo;
	if (f)
		fclose(f);
	return at && *size ? (const void *)(uintptr_t)at : NULL;
}
