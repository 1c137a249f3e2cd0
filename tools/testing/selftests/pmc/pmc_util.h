/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for the pmc_open(2) selftests: the syscall wrapper, attr setup,
 * reading a counter, small workloads with a known cost, forking children,
 * the emulated PMU models, and accessors for /proc and /sys files.
 *
 * Nothing here uses the kselftest harness. Errors come back as return
 * values, so forked children can use these helpers too.
 */
#ifndef PMC_UTIL_H
#define PMC_UTIL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/types.h>

#include <linux/perf_event.h>
#include <linux/pmc.h>
#include <asm/perf_regs.h>

#include "libpmc.h"

/* The number comes from the patched kernel's headers; never guess it. */
#ifndef __NR_pmc_open
#error "__NR_pmc_open undefined: set KHDR_INCLUDES to headers installed from the patched kernel"
#endif

#define NSEC_PER_USEC	1000ULL
#define NSEC_PER_MSEC	1000000ULL
#define NSEC_PER_SEC	1000000000ULL

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

#define PARANOID_PATH	"/proc/sys/kernel/pmc_paranoid"

/*
 * PMC_RECORD_REGS_USER: the stack pointer and instruction pointer, in
 * perf's register numbering (SP's bit is below IP's on both, so a
 * sample holds SP, then IP), the ABI of this binary's samples, and
 * where its user addresses end.
 */
#if defined(__x86_64__) || defined(__i386__)
#define TEST_REG_SP	PERF_REG_X86_SP
#define TEST_REG_IP	PERF_REG_X86_IP
#elif defined(__aarch64__)
#define TEST_REG_SP	PERF_REG_ARM64_SP
#define TEST_REG_IP	PERF_REG_ARM64_PC
#endif
#define TEST_REGS_MASK	((1ULL << TEST_REG_SP) | (1ULL << TEST_REG_IP))
#if defined(__i386__)
#define TEST_REGS_ABI	PMC_REGS_ABI_32
#define TEST_USER_END	0x100000000ULL
#elif defined(__aarch64__)
#define TEST_REGS_ABI	PMC_REGS_ABI_64
#define TEST_USER_END	0x0001000000000000ULL
#else
#define TEST_REGS_ABI	PMC_REGS_ABI_64
#define TEST_USER_END	0x0000800000000000ULL
#endif
#define NOBODY		65534

#define ALL_TIMES	(PMC_FORMAT_TOTAL_TIME_ENABLED | PMC_FORMAT_TOTAL_TIME_RUNNING)
#define HW(id)		PMC_CONFIG(PMC_TYPE_HARDWARE, (id))

/*
 * Checks for forked children and threads. ASSERT_*() must not be used
 * there: the longjmp would run the fixture teardown in the child. A child
 * reports the first failed check on stderr and through its exit status.
 */
#define CHILD_CHECK(cond, fmt, ...) do {				\
	if (!(cond)) {							\
		fprintf(stderr, "# %s:%d: child check '%s' failed: " fmt "\n", \
			__FILE__, __LINE__, #cond, ##__VA_ARGS__);	\
		return 1;						\
	}								\
} while (0)

/* The non-sample records, as <linux/pmc.h> describes them. */
struct mmap_rec {
	struct pmc_event_header h;
	__u32 pid, tid;
	__u64 addr, len, pgoff;
	char filename[];
};

struct comm_rec {
	struct pmc_event_header h;
	__u32 pid, tid;
	char comm[];
};
struct lost_rec {
	struct pmc_event_header h;
	__u64 id;
	__u64 lost;
};

/* PMC_EVENT_FORK and PMC_EVENT_EXIT */
struct task_rec {
	struct pmc_event_header h;
	__u32 pid, ppid;
	__u32 tid, ptid;
	__u64 time;
};

/* PMC_EVENT_THROTTLE and PMC_EVENT_UNTHROTTLE */
struct throttle_rec {
	struct pmc_event_header h;
	__u64 id;
	__u64 time;
};

/*
 * pmc_open_errno() - try an open and report only the outcome
 *
 * Return: 0 if pmc_open() succeeded (the fd is closed again), else errno.
 */
static inline int pmc_open_errno(struct pmc_attr *attr, pid_t pid, int cpu,
				 int group_fd, unsigned long flags)
{
	int fd = pmc_open(attr, pid, cpu, group_fd, flags);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

/*
 * pmc_sw_attr() - a counting software counter in user mode
 *
 * exclude_kernel is set because pmc_paranoid defaults to 2, where an
 * unprivileged caller may count user mode only. Clocks ignore the
 * exclude bits; context switches and migrations happen in kernel mode,
 * so they need pmc_sw_attr_kernel().
 */
static inline void pmc_sw_attr(struct pmc_attr *attr, unsigned int id,
			       __u32 read_format)
{
	memset(attr, 0, sizeof(*attr));
	attr->config = PMC_CONFIG(PMC_TYPE_SOFTWARE, id);
	attr->read_format = read_format;
	attr->exclude_kernel = 1;
}

/* One counter's read() result, unpacked. */
struct pmc_reading {
	__u64 value;
	__u64 enabled;	/* only with PMC_FORMAT_TOTAL_TIME_ENABLED */
	__u64 running;	/* only with PMC_FORMAT_TOTAL_TIME_RUNNING */
};

/* Bytes read() returns for @read_format with @nr counters in the group. */
static inline size_t pmc_read_size(__u32 read_format, unsigned int nr)
{
	size_t words = 0;

	if (read_format & PMC_FORMAT_TOTAL_TIME_ENABLED)
		words++;
	if (read_format & PMC_FORMAT_TOTAL_TIME_RUNNING)
		words++;
	if (read_format & PMC_FORMAT_GROUP)
		words += 1 + nr;
	else
		words += 1;
	return words * sizeof(__u64);
}

/*
 * pmc_read() - read a counter opened without PMC_FORMAT_GROUP
 *
 * The buffer offered is larger than needed, so this also checks that
 * read() returns exactly the layout's size.
 *
 * Return: 0, -errno if read() failed, or -EMSGSIZE on a wrong size.
 */
static inline int pmc_read(int fd, __u32 read_format, struct pmc_reading *r)
{
	__u64 buf[8];
	ssize_t n;
	int i = 0;

	n = read(fd, buf, sizeof(buf));
	if (n < 0)
		return -errno;
	if ((size_t)n != pmc_read_size(read_format, 1))
		return -EMSGSIZE;

	memset(r, 0, sizeof(*r));
	r->value = buf[i++];
	if (read_format & PMC_FORMAT_TOTAL_TIME_ENABLED)
		r->enabled = buf[i++];
	if (read_format & PMC_FORMAT_TOTAL_TIME_RUNNING)
		r->running = buf[i++];
	return 0;
}

/* @got is within @pct percent of @want, plus @slack. */
static inline bool near(__u64 got, __u64 want, unsigned int pct, __u64 slack)
{
	__u64 tolerance = want * pct / 100 + slack;

	return got + tolerance >= want && got <= want + tolerance;
}

static inline __u64 timespec_ns(const struct timespec *ts)
{
	return ts->tv_sec * NSEC_PER_SEC + ts->tv_nsec;
}

static inline __u64 clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return timespec_ns(&ts);
}

static inline __u64 thread_cputime_ns(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

static inline __u64 monotonic_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/*
 * The kernel's hrtimer resolution: 1 ns in high-resolution mode, a
 * whole tick while hrtimers run from the tick (early in boot, before
 * the switch, or in a kernel without high-resolution timers).
 */
static inline __u64 timer_resolution_ns(void)
{
	struct timespec ts;

	if (clock_getres(CLOCK_MONOTONIC, &ts))
		return 0;
	return timespec_ns(&ts);
}

/*
 * burn_cpu() - spin until this thread has used @ns of CPU time
 *
 * The inner loop keeps the clock syscalls a small part of the cost, so
 * most of the time is spent in user mode.
 *
 * Return: the CPU time actually used, in nanoseconds.
 */
static inline __u64 burn_cpu(__u64 ns)
{
	__u64 start = thread_cputime_ns(), now;
	unsigned long sink = 0;
	int i;

	do {
		for (i = 0; i < 20000; i++) {
			sink += i;
			/* keep the compiler from folding the loop away */
			asm volatile("" : "+r" (sink));
		}
		now = thread_cputime_ns();
	} while (now - start < ns);
	return now - start;
}

static inline size_t page_size(void)
{
	return sysconf(_SC_PAGESIZE);
}

/*
 * map_fresh_pages() - @nr anonymous pages that are not yet populated
 *
 * Huge pages are refused, so that each page costs exactly one fault.
 */
static inline char *map_fresh_pages(size_t nr)
{
	size_t len = nr * page_size();
	char *p;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	madvise(p, len, MADV_NOHUGEPAGE);	/* fails harmlessly without THP */
	return p;
}

/* Write one byte to each of @nr pages: one user-mode fault per fresh page. */
static inline void touch_pages(char *p, size_t nr)
{
	volatile char *v = p;
	size_t i;

	for (i = 0; i < nr; i++)
		v[i * page_size()] = 1;
}

static inline int pin_to_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/*
 * allowed_cpus() - the CPUs this task may run on, in ascending order
 *
 * Return: the number found, at most @max.
 */
static inline int allowed_cpus(int *cpus, int max)
{
	cpu_set_t set;
	int cpu, n = 0;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 0;
	for (cpu = 0; cpu < CPU_SETSIZE && n < max; cpu++)
		if (CPU_ISSET(cpu, &set))
			cpus[n++] = cpu;
	return n;
}

/* nr_cpu_ids as the kernel sees it: one past the last possible CPU. */
static inline int possible_cpus(void)
{
	char buf[256], *last;
	int fd, n;

	fd = open("/sys/devices/system/cpu/possible", O_RDONLY);
	if (fd < 0)
		return sysconf(_SC_NPROCESSORS_CONF);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return sysconf(_SC_NPROCESSORS_CONF);
	buf[n] = '\0';
	/* "0-3" or "0,2-5": the number after the last separator is the top */
	last = buf + strcspn(buf, "\n");
	while (last > buf && last[-1] != '-' && last[-1] != ',')
		last--;
	return atoi(last) + 1;
}

/* Field @key ("Key: N kB") of a /proc file such as meminfo, or -1. */
static inline long proc_kb(const char *path, const char *key)
{
	size_t klen = strlen(key);
	char line[256];
	long val = -1;
	FILE *f;

	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, key, klen) && line[klen] == ':') {
			val = strtol(line + klen + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return val;
}

/* VmPin of this process in kB, or -1. */
static inline long vmpin_kb(void)
{
	return proc_kb("/proc/self/status", "VmPin");
}

/* Return: 0 and the integer in @path, or an errno. */
static inline int read_int_file(const char *path, long *val)
{
	char buf[64];
	int fd, n;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return errno;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0) {
		n = errno;
		close(fd);
		return n;
	}
	close(fd);
	buf[n] = '\0';
	*val = strtol(buf, NULL, 0);
	return 0;
}

/* POLL* bits poll() reports for @fd now, without waiting. */
static inline short poll_now(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	if (poll(&pfd, 1, 0) < 0)
		return -1;
	return pfd.revents;
}

/*
 * Take the queued signals @sig (blocked): up to 5 s for each of the
 * first @expect, then any more until 50 ms pass without one. The first
 * @max have their si_fd and si_code put in @fds and @codes. Return: how
 * many came.
 */
static inline unsigned int take_signals(int sig, unsigned int expect,
					unsigned int max, int *fds, int *codes)
{
	const struct timespec wait = { .tv_sec = 5 };
	const struct timespec quiet = { .tv_nsec = 50 * 1000 * 1000 };
	unsigned int n = 0;
	siginfo_t info;
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, sig);
	while (sigtimedwait(&set, &info, n < expect ? &wait : &quiet) == sig) {
		if (n < max) {
			fds[n] = info.si_fd;
			codes[n] = info.si_code;
		}
		n++;
	}
	return n;
}

/* Kernel mode may be counted: CAP_PERFMON (root here) or pmc_paranoid <= 1. */
static inline bool may_count_kernel(void)
{
	long level = 2;

	if (geteuid() == 0)
		return true;
	return !read_int_file(PARANOID_PATH, &level) && level <= 1;
}

/*
 * pmc_sw_attr_kernel() - pmc_sw_attr() for context switches or
 * migrations, which happen in kernel mode: exclude_kernel leaves them
 * all out, as perf's does. Kernel mode is counted where the caller may;
 * Return: false where it may not, and the counter would count nothing.
 */
static inline bool pmc_sw_attr_kernel(struct pmc_attr *attr, unsigned int id,
				      __u32 read_format)
{
	pmc_sw_attr(attr, id, read_format);
	attr->exclude_kernel = !may_count_kernel();
	return !attr->exclude_kernel;
}

/* Return: 0, or the errno of the open() or write(). */
static inline int write_file(const char *path, const char *str)
{
	int fd, err = 0;

	fd = open(path, O_WRONLY);
	if (fd < 0)
		return errno;
	if (write(fd, str, strlen(str)) < 0)
		err = errno;
	close(fd);
	return err;
}

static inline int write_int_file(const char *path, long val)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%ld\n", val);
	return write_file(path, buf);
}

/* Members first, so that none becomes a group of its own meanwhile. */
static inline void close_group(const int *fds, unsigned int nr)
{
	while (nr--)
		close(fds[nr]);
}

typedef int (*child_fn)(void *arg);

/* Fork a child running @fn; it dies with its parent. Return: pid or -1. */
static inline pid_t fork_child(child_fn fn, void *arg)
{
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		_exit(fn(arg));
	}
	return pid;
}

/* Drop root to nobody; stay dumpable so that pid checks see a user task. */
static inline int drop_privileges(void)
{
	if (geteuid() != 0)
		return 0;
	if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
	    setresuid(NOBODY, NOBODY, NOBODY))
		return -1;
	prctl(PR_SET_DUMPABLE, 1);
	return 0;
}

/*
 * cmdline_param() - the value of @name= on the kernel command line
 *
 * Return: the value (the last one given wins, as in the kernel), or
 * NULL when there is none. It stays valid until the next call.
 */
static inline const char *cmdline_param(const char *name)
{
	static char value[32];
	char buf[4096], *tok, *save;
	const char *found = NULL;
	size_t len = strlen(name);
	ssize_t n;
	int fd;

	fd = open("/proc/cmdline", O_RDONLY);
	if (fd < 0)
		return NULL;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	for (tok = strtok_r(buf, " \t\n", &save); tok;
	     tok = strtok_r(NULL, " \t\n", &save)) {
		if (!strncmp(tok, name, len) && tok[len] == '=') {
			snprintf(value, sizeof(value), "%s", tok + len + 1);
			found = value;
		}
	}
	return found;
}

/*
 * A user-mode perf counter of hardware event @config on this task, the
 * oracle beside pmc_open() where perf drives a PMU: the attr to open
 * with perf_open_self(), once the caller has set what else it needs.
 */
static inline void perf_user_hw_attr(struct perf_event_attr *attr,
				     __u64 config)
{
	memset(attr, 0, sizeof(*attr));
	attr->type = PERF_TYPE_HARDWARE;
	attr->size = sizeof(*attr);
	attr->config = config;
	attr->exclude_kernel = 1;
	attr->exclude_hv = 1;
}

static inline int perf_open_self(struct perf_event_attr *attr, int group_fd)
{
	return syscall(__NR_perf_event_open, attr, 0, -1, group_fd, 0);
}

/*
 * Does perf count a hardware event here (user-mode instructions)? Then
 * events-lite's hardware counters are perf's, unless pmc_pmu=direct.
 */
static inline bool perf_has_hw_pmu(void)
{
	static int known = -1;
	struct perf_event_attr attr;
	int fd;

	if (known >= 0)
		return known;
	perf_user_hw_attr(&attr, PERF_COUNT_HW_INSTRUCTIONS);
	attr.disabled = 1;
	fd = perf_open_self(&attr, -1);
	known = fd >= 0;
	if (fd >= 0)
		close(fd);
	return known;
}

/* The value of pmc_emu=: the emulated model, or NULL. */
static inline const char *cmdline_emu(void)
{
	return cmdline_param("pmc_emu");
}

/* The emulated models, as arch/x86/events-lite/model.c defines them. */
struct emu_model {
	const char *name;
	unsigned int nr_counters;
	unsigned int width;	/* counter bits */
	bool amd;		/* event-select bits 35:32; no bus-cycles */
};

static const struct emu_model emu_models[] = {
	{ .name = "p6",     .nr_counters = 2, .width = 40 },
	{ .name = "k7",     .nr_counters = 4, .width = 48, .amd = true },
	{ .name = "fam15h", .nr_counters = 6, .width = 48, .amd = true },
	{ .name = "fam17h", .nr_counters = 6, .width = 48, .amd = true },
	/* with global control and status registers */
	{ .name = "archperf", .nr_counters = 4, .width = 48 },
	{ .name = "zen4",   .nr_counters = 6, .width = 48, .amd = true },
};

/* Return: the model called @name, or NULL (also for a NULL @name). */
static inline const struct emu_model *emu_model_by_name(const char *name)
{
	unsigned int i;

	for (i = 0; name && i < ARRAY_SIZE(emu_models); i++)
		if (!strcmp(emu_models[i].name, name))
			return &emu_models[i];
	return NULL;
}

static const char *const hw_names[PMC_HW_MAX] = {
	[PMC_HW_CPU_CYCLES]		= "cycles",
	[PMC_HW_INSTRUCTIONS]		= "instructions",
	[PMC_HW_CACHE_REFERENCES]	= "cache-references",
	[PMC_HW_CACHE_MISSES]		= "cache-misses",
	[PMC_HW_BRANCH_INSTRUCTIONS]	= "branches",
	[PMC_HW_BRANCH_MISSES]		= "branch-misses",
	[PMC_HW_BUS_CYCLES]		= "bus-cycles",
};

/*
 * fdinfo_field() - the value of line @key in /proc/self/fdinfo/@fd
 *
 * Return: 0 with the text after "key:" and its blanks in @val, or an
 * errno; ENOENT when there is no such line.
 */
static inline int fdinfo_field(int fd, const char *key, char *val, size_t len)
{
	size_t klen = strlen(key);
	char path[64], line[256], *p;
	int err = ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return errno;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, klen) || line[klen] != ':')
			continue;
		p = line + klen + 1;
		p += strspn(p, " \t");
		p[strcspn(p, "\n")] = '\0';
		snprintf(val, len, "%s", p);
		err = 0;
		break;
	}
	fclose(f);
	return err;
}

/* A number in counter @fd's fdinfo ("pmc-overflows", ...), or -1. */
static inline long long fdinfo_number(int fd, const char *name)
{
	char val[32];

	if (fdinfo_field(fd, name, val, sizeof(val)))
		return -1;
	return strtoll(val, NULL, 10);
}

/*
 * Drop the slab caches, running their shrinkers (root only).
 * vm.drop_caches takes 1 to 4 (6 is EINVAL): 4 alone sets only its
 * "quiet from now on" bit, once per process, then 2 drops the slabs.
 */
static inline void drop_slab_caches(void)
{
	static bool quiet;

	if (!quiet)
		quiet = !write_file("/proc/sys/vm/drop_caches", "4");
	write_file("/proc/sys/vm/drop_caches", "2");
}

/*
 * slab_active_objs() - active objects of a cache in /proc/slabinfo
 *
 * SLUB counts objects sitting in per-CPU slabs and sheaves as active, so
 * the cache is shrunk first where /sys/kernel/slab allows it; that makes
 * the number the objects really in use. Counters and contexts are freed
 * with kfree_rcu(), which batches them for up to 5 s: drop_slab_caches()
 * runs the kfree_rcu shrinker, which sends the batch to RCU now, so a
 * reading a grace period later no longer counts them.
 *
 * Return: the count, or -errno (-ENOENT when the cache is not listed).
 */
static inline long slab_active_objs(const char *cache)
{
	char line[512], path[128], name[64];
	long active = -ENOENT, objs;
	FILE *f;

	drop_slab_caches();
	snprintf(path, sizeof(path), "/sys/kernel/slab/%s/shrink", cache);
	write_file(path, "1");

	f = fopen("/proc/slabinfo", "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%63s %ld", name, &objs) == 2 &&
		    !strcmp(name, cache)) {
			active = objs;
			break;
		}
	}
	fclose(f);
	return active;
}

/*
 * Slab caches: after the last close, every counter and context must be
 * freed, inherited copies included.
 */
static const char *const pmc_caches[] = { "pmc_counter", "pmc_context" };

/* The count once pending RCU frees have landed: two equal readings. */
static inline long slab_settled(const char *cache)
{
	long prev = slab_active_objs(cache), now = prev;
	int i;

	for (i = 0; i < 30; i++) {
		usleep(100 * 1000);
		now = slab_active_objs(cache);
		if (now == prev)
			break;
		prev = now;
	}
	return now;
}

#endif /* PMC_UTIL_H */
