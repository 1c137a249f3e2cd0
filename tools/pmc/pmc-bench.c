// SPDX-License-Identifier: GPL-2.0
/*
 * pmc-bench: what events-lite costs, next to perf_event_open(2) measuring
 * the same software events in the same boot.
 *
 *	pmc-bench [--reps N] [--quick] [--csv FILE] [--md FILE] [--row NAME...]
 *
 * Rows (run in this order; --row picks some, repeatable or comma-separated):
 *
 *	notax      ping-pong with no counters anywhere: the raw cost that a
 *		   kernel with and without the series are compared on. Calls
 *		   neither pmc_open nor perf_event_open, so it runs on any kernel.
 *	read       ns per read(2) of one counting task-clock, and per
 *		   self-read of it through page 0 (no system call; perf has
 *		   none for software events); the same for cycles where a
 *		   PMU model allows (an emulated counter has index 0).
 *	open_close ns per open+close of one counter and of a group of four,
 *		   and of one while another is held.
 *	ctxsw      pipe ping-pong between two tasks pinned to CPU 0, with no
 *		   counters, a 3-counter group on each task, or the same group
 *		   through perf: the cost a counter adds to a context switch.
 *	scale      the ping-pong with 1..64 software groups on each task, and
 *		   with rotating {cycles} groups on an emulated PMU.
 *	sampling   a fixed CPU-bound loop sampled by task-clock at 1 and 10 kHz
 *		   into a read-write ring that a thread drains: slowdown,
 *		   samples delivered and lost.
 *	mux	   worst scaled error of four multiplexed hardware groups
 *		   against each counted alone (emulated PMU only).
 *	hw	   where both interfaces count hardware events on one PMU
 *		   (events-lite's through perf, as on arm64): read(2) of an
 *		   instructions counter, its open+close, the ping-pong with
 *		   a group of three hardware counters on each task, and the
 *		   loop sampled every 100 us worth of instructions, and of
 *		   cycles (10 kHz).
 *
 * Every figure is the median of N repetitions (min and max kept); the
 * variants of a row alternate within each repetition so that drift hits
 * them alike. Only ratios between events-lite and perf within one run
 * mean anything on an emulator. Progress goes to stderr; the table, the
 * goals' verdicts and the summary line to stdout. A ratio whose two
 * sides' ranges overlap by more than the medians differ is not printed
 * as one (see figures_resolved()).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <linux/perf_event.h>

#include "pmc-tools.h"

#define NSEC_PER_SEC	1000000000ULL
#define DEFAULT_REPS	5
#define MAX_REPS	51
#define RING_DATA_PAGES	64
#define MAX_GROUPS	64
#define MAX_EVENTS	4	/* per group */
#define SPIN_MAX_ITERS	200000000ULL
#define BENCH_CPU	0	/* where the measured tasks run */

/* One reader serves both rings: their control pages and headers agree. */
_Static_assert(offsetof(struct pmc_mmap_page, data_head) ==
	       offsetof(struct perf_event_mmap_page, data_head),
	       "data_head at the same offset");
_Static_assert(offsetof(struct pmc_mmap_page, data_tail) ==
	       offsetof(struct perf_event_mmap_page, data_tail),
	       "data_tail at the same offset");
_Static_assert(sizeof(struct pmc_event_header) ==
	       sizeof(struct perf_event_header), "same record header");
_Static_assert(offsetof(struct pmc_event_header, size) ==
	       offsetof(struct perf_event_header, size), "same record size");

enum api { API_PMC, API_PERF, NR_APIS };

static const char *const api_names[NR_APIS] = { "events-lite", "perf" };

/*
 * How much work each measurement does; --quick picks the second set.
 * The time caps only bind on an emulator slow enough to break the
 * runtime budget (4 minutes, 1 with --quick): a capped run reports the
 * cost per operation of what it did, and says so on stderr.
 */
struct bench_sizes {
	long reads;			/* read() calls per measurement... */
	double read_cap_s;		/* ...unless this much time passed */
	long open_close_max;		/* open+close iterations, at most... */
	double open_close_budget_s;	/* ...or until this much time passed */
	long round_trips;		/* ping-pong: notax and ctxsw... */
	double round_trip_cap_s;	/* ...unless a run took this long */
	long scale_round_trips;		/* ping-pong: each scale point... */
	double scale_cap_s;		/* ...unless a run took this long */
	long warmup_round_trips;	/* before the clock starts */
	double spin_target_s;		/* unsampled loop duration, sampling */
	double mux_target_s;		/* loop duration, mux */
};

static const struct bench_sizes default_sizes = {
	.reads			= 100000,
	.read_cap_s		= 1.0,
	.open_close_max		= 2000,
	.open_close_budget_s	= 0.5,
	.round_trips		= 100000,
	.round_trip_cap_s	= 3.0,
	.scale_round_trips	= 20000,
	.scale_cap_s		= 1.5,
	.warmup_round_trips	= 1000,
	.spin_target_s		= 1.0,
	.mux_target_s		= 0.3,
};

static const struct bench_sizes quick_sizes = {
	.reads			= 20000,
	.read_cap_s		= 0.25,
	.open_close_max		= 500,
	.open_close_budget_s	= 0.15,
	.round_trips		= 20000,
	.round_trip_cap_s	= 0.75,
	.scale_round_trips	= 5000,
	.scale_cap_s		= 0.4,
	.warmup_round_trips	= 200,
	.spin_target_s		= 0.25,
	.mux_target_s		= 0.12,
};

static const struct bench_sizes *sizes = &default_sizes;
static int reps = DEFAULT_REPS;
static bool quick;
static long page_size;
static long nr_cpus;
static char pmu_model[32];		/* pmc_emu=NAME, "" for none */
static bool in_child;			/* die() must _exit() */

/* Events, named in pmc terms with the perf equivalent next to them. */
struct bench_event {
	const char *name;
	__u64 pmc_config;
	__u32 perf_type;
	__u64 perf_config;
	bool per_switch;	/* at least one per ping-pong round trip */
};

#define SW_EVENT(n, pmc_id, perf_id, sw) {				\
	.name = n,							\
	.pmc_config = PMC_CONFIG(PMC_TYPE_SOFTWARE, pmc_id),		\
	.perf_type = PERF_TYPE_SOFTWARE,				\
	.perf_config = perf_id,						\
	.per_switch = sw,						\
}
#define HW_EVENT(n, pmc_id, perf_id) {					\
	.name = n,							\
	.pmc_config = PMC_CONFIG(PMC_TYPE_HARDWARE, pmc_id),		\
	.perf_type = PERF_TYPE_HARDWARE,				\
	.perf_config = perf_id,						\
}

static const struct bench_event ev_task_clock =
	SW_EVENT("task-clock", PMC_SW_TASK_CLOCK, PERF_COUNT_SW_TASK_CLOCK, false);
static const struct bench_event ev_ctxsw =
	SW_EVENT("context-switches", PMC_SW_CONTEXT_SWITCHES,
		 PERF_COUNT_SW_CONTEXT_SWITCHES, true);
static const struct bench_event ev_faults =
	SW_EVENT("page-faults", PMC_SW_PAGE_FAULTS, PERF_COUNT_SW_PAGE_FAULTS, false);
static const struct bench_event ev_migrations =
	SW_EVENT("cpu-migrations", PMC_SW_CPU_MIGRATIONS,
		 PERF_COUNT_SW_CPU_MIGRATIONS, false);
static const struct bench_event ev_cycles =
	HW_EVENT("cycles", PMC_HW_CPU_CYCLES, PERF_COUNT_HW_CPU_CYCLES);
static const struct bench_event ev_instructions =
	HW_EVENT("instructions", PMC_HW_INSTRUCTIONS, PERF_COUNT_HW_INSTRUCTIONS);
static const struct bench_event ev_branches =
	HW_EVENT("branches", PMC_HW_BRANCH_INSTRUCTIONS,
		 PERF_COUNT_HW_BRANCH_INSTRUCTIONS);
static const struct bench_event ev_bus_cycles =
	HW_EVENT("bus-cycles", PMC_HW_BUS_CYCLES, PERF_COUNT_HW_BUS_CYCLES);

static const struct bench_event *const ev_single[] = { &ev_task_clock };
static const struct bench_event *const ev_group3[] = {
	&ev_task_clock, &ev_ctxsw, &ev_faults,
};
static const struct bench_event *const ev_group4[] = {
	&ev_task_clock, &ev_ctxsw, &ev_faults, &ev_migrations,
};
static const struct bench_event *const ev_scale_sw[] = {
	&ev_task_clock, &ev_ctxsw,
};
static const struct bench_event *const ev_scale_hw[] = { &ev_cycles };
static const struct bench_event *const ev_hw_single[] = { &ev_instructions };
static const struct bench_event *const ev_hw_group3[] = {
	&ev_cycles, &ev_instructions, &ev_cycles,
};
/* AMD models have no bus-cycles: they multiplex four cycles counters. */
static const struct bench_event *const ev_mux_p6[] = {
	&ev_cycles, &ev_instructions, &ev_branches, &ev_bus_cycles,
};
static const struct bench_event *const ev_mux_other[] = {
	&ev_cycles, &ev_cycles, &ev_cycles, &ev_cycles,
};

/* nr_groups groups of the same events, opened by a task on itself. */
struct group_spec {
	enum api api;
	const struct bench_event *const *events;
	int nr_events;
	int nr_groups;
};

#define GROUPS(a, evs, n)	{ (a), (evs), ARRAY_SIZE(evs), (n) }

/* What read() returns beyond the value. */
#define FMT_TIMES	(1U << 0)	/* time_enabled, time_running */
#define FMT_GROUP	(1U << 1)	/* nr, times, every value */

struct counter_opts {
	__u64 period;		/* task-clock ns between samples; 0: count */
	unsigned int format;	/* FMT_* */
	bool disabled;
};

/* ---- statistics and the result table ---- */

struct series {
	double v[MAX_REPS];
	int n;
};

struct figure {
	bool valid;
	const char *text;	/* shown when !valid; NULL: "-" */
	double med, min, max;
};

struct result {
	const char *row;
	char measure[40];
	struct figure fig[NR_APIS];
	bool has_ratio;
	double ratio;		/* events-lite median / perf median */
};

#define MAX_RESULTS	64

static struct result results[MAX_RESULTS];
static int nr_results;

/* The figures of the summary line; NULL when their row did not run. */
static const struct result *sum_read, *sum_self, *sum_held, *sum_ctxsw,
	*sum_sampling;
static bool sum_lost_valid;
static __u64 sum_lost;

/* ---- small helpers ---- */

/* A line on stderr: progress, warnings, errors. */
static void __attribute__((format(printf, 1, 2))) note(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "pmc-bench: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

#define die(...)	do { note(__VA_ARGS__); bench_exit(); } while (0)

static void __attribute__((noreturn)) bench_exit(void)
{
	if (in_child)
		_exit(1);
	exit(1);
}

/* Say once per row that its runs hit the time cap. */
static void note_capped(const char *row, long done, long wanted)
{
	static const char *noted;

	if (done >= wanted || noted == row)
		return;
	noted = row;
	note("%s: time cap reached: %ld of %ld iterations in a run", row,
	     done, wanted);
}

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

/* Pin the calling thread; not fatal, the numbers just get noisier. */
static void pin_to_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		note("warning: cannot pin to CPU %d: %s", cpu, strerror(errno));
}

static void series_add(struct series *s, double v)
{
	if (s->n < MAX_REPS)
		s->v[s->n++] = v;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static struct figure series_figure(const struct series *s)
{
	struct figure f = { .valid = s && s->n > 0 };
	double v[MAX_REPS];

	if (!f.valid)
		return f;
	memcpy(v, s->v, s->n * sizeof(v[0]));
	qsort(v, s->n, sizeof(v[0]), cmp_double);
	f.min = v[0];
	f.max = v[s->n - 1];
	f.med = s->n % 2 ? v[s->n / 2] : (v[s->n / 2 - 1] + v[s->n / 2]) / 2;
	return f;
}

static struct result *new_result(const char *row, const char *measure)
{
	struct result *r;

	if (nr_results == MAX_RESULTS)
		die("too many result rows");
	r = &results[nr_results++];
	memset(r, 0, sizeof(*r));
	r->row = row;
	snprintf(r->measure, sizeof(r->measure), "%s", measure);
	return r;
}

/*
 * A table row from per-repetition series (@perf may be NULL). The ratio
 * is of the medians, so it matches the two columns it sits next to.
 */
static struct result *add_result(const char *row, const char *measure,
				 const struct series *pmc,
				 const struct series *perf)
{
	struct result *r = new_result(row, measure);

	r->fig[API_PMC] = series_figure(pmc);
	r->fig[API_PERF] = series_figure(perf);
	if (r->fig[API_PMC].valid && r->fig[API_PERF].valid &&
	    r->fig[API_PERF].med != 0) {
		r->has_ratio = true;
		r->ratio = r->fig[API_PMC].med / r->fig[API_PERF].med;
	}
	return r;
}

/* A row with a remark instead of numbers, e.g. "n/a (no PMU)". */
static void add_text_result(const char *row, const char *measure,
			    const char *text)
{
	struct result *r = new_result(row, measure);

	r->fig[API_PMC].text = text;
}

/* ---- sysctls: both interfaces unrestricted while we run ---- */

struct knob {
	const char *path;
	char saved[32];
	bool changed;
};

static struct knob knobs[] = {
	{ .path = "/proc/sys/kernel/perf_event_paranoid" },
	{ .path = "/proc/sys/kernel/pmc_paranoid" },
};

/* open/write/close only: this also runs from a signal handler. */
static int write_file(const char *path, const char *val)
{
	size_t len = strlen(val);
	int fd, ret = -1;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (write(fd, val, len) == (ssize_t)len)
		ret = 0;
	close(fd);
	return ret;
}

static void knobs_restore(void)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(knobs); i++) {
		if (knobs[i].changed)
			write_file(knobs[i].path, knobs[i].saved);
		knobs[i].changed = false;
	}
}

static void on_fatal_signal(int sig)
{
	knobs_restore();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* A knob that does not exist (no pmc_open, no perf) is left alone. */
static void knobs_set(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	size_t i;

	atexit(knobs_restore);
	for (i = 0; i < ARRAY_SIZE(sigs); i++)
		signal(sigs[i], on_fatal_signal);
	for (i = 0; i < ARRAY_SIZE(knobs); i++) {
		struct knob *k = &knobs[i];
		FILE *f = fopen(k->path, "re");

		if (!f)
			continue;
		if (!fgets(k->saved, sizeof(k->saved), f)) {
			fclose(f);
			continue;
		}
		fclose(f);
		k->changed = true;
		if (write_file(k->path, "-1")) {
			note("warning: cannot set %s to -1: %s", k->path,
			     strerror(errno));
			k->changed = false;
		}
	}
}

/* ---- counters through either interface ---- */

static int counter_open(enum api api, const struct bench_event *ev,
			int group_fd, const struct counter_opts *o)
{
	struct perf_event_attr pattr;
	struct pmc_attr attr;

	if (api == API_PMC) {
		memset(&attr, 0, sizeof(attr));
		attr.config = ev->pmc_config;
		attr.irq_period = o->period;
		if (o->period)
			attr.record_type = PMC_RECORD_IP | PMC_RECORD_TID |
					   PMC_RECORD_TIME;
		if (o->format & FMT_TIMES)
			attr.read_format |= PMC_FORMAT_TOTAL_TIME_ENABLED |
					    PMC_FORMAT_TOTAL_TIME_RUNNING;
		if (o->format & FMT_GROUP)
			attr.read_format |= PMC_FORMAT_GROUP;
		attr.disabled = o->disabled;
		attr.wakeup_events = 0;		/* wake up per page */
		return pmc_open(&attr, 0, -1, group_fd, PMC_FLAG_FD_CLOEXEC);
	}

	memset(&pattr, 0, sizeof(pattr));
	pattr.size = sizeof(pattr);
	pattr.type = ev->perf_type;
	pattr.config = ev->perf_config;
	pattr.sample_period = o->period;
	if (o->period) {
		pattr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID |
				    PERF_SAMPLE_TIME;
		/* Wake up per page like events-lite, not per half buffer. */
		pattr.watermark = 1;
		pattr.wakeup_watermark = page_size;
	}
	if (o->format & FMT_TIMES)
		pattr.read_format |= PERF_FORMAT_TOTAL_TIME_ENABLED |
				     PERF_FORMAT_TOTAL_TIME_RUNNING;
	if (o->format & FMT_GROUP)
		pattr.read_format |= PERF_FORMAT_GROUP;
	pattr.disabled = o->disabled;
	return syscall(__NR_perf_event_open, &pattr, 0, -1, group_fd,
		       PERF_FLAG_FD_CLOEXEC);
}

static int counter_enable(enum api api, int fd, bool on)
{
	if (api == API_PMC)
		return ioctl(fd, on ? PMC_IOC_ENABLE : PMC_IOC_DISABLE);
	return ioctl(fd, on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0);
}

static void close_fds(int *fds, int nr)
{
	while (nr > 0)
		close(fds[--nr]);
}

/*
 * Open @g's groups on the calling task into @fds, leader first in each.
 * Returns 0, or -1 with errno set, a message printed and nothing open.
 */
static int open_groups(const struct group_spec *g, const struct counter_opts *o,
		       int *fds)
{
	int i, j, nr = 0;

	for (i = 0; i < g->nr_groups; i++) {
		int leader = -1;

		for (j = 0; j < g->nr_events; j++) {
			int fd = counter_open(g->api, g->events[j], leader, o);

			if (fd < 0) {
				int err = errno;

				note("%s: open %s (group %d of %d): %s",
				     api_names[g->api], g->events[j]->name,
				     i + 1, g->nr_groups, strerror(err));
				close_fds(fds, nr);
				errno = err;
				return -1;
			}
			fds[nr++] = fd;
			if (leader < 0)
				leader = fd;
		}
	}
	return 0;
}

/* Read exactly @len bytes of counter values; false with a message if not. */
static bool read_values(int fd, __u64 *buf, size_t len, const char *what)
{
	ssize_t n = read(fd, buf, len);

	if (n == (ssize_t)len)
		return true;
	if (n < 0)
		note("read(%s): %s", what, strerror(errno));
	else
		note("read(%s): %zd bytes, expected %zu", what, n, len);
	return false;
}

/* ---- the workloads ---- */

static volatile __u64 spin_sink;

/* Fixed integer work the compiler cannot fold. */
static void spin(__u64 iters)
{
	__u64 x = 1, i;

	for (i = 0; i < iters; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		__asm__ __volatile__("" : "+r" (x));
	}
	spin_sink = x;
}

static double timed_spin(__u64 iters)
{
	__u64 t0 = now_ns();

	spin(iters);
	return now_ns() - t0;
}

/* Iterations for about @target_s seconds, at most SPIN_MAX_ITERS. */
static __u64 calibrate_spin(double target_s)
{
	__u64 iters = 1 << 20;
	double ns, want;

	spin(iters);			/* warm up */
	for (;;) {
		ns = timed_spin(iters);
		if (ns > 50e6 || iters >= SPIN_MAX_ITERS)
			break;
		iters *= 4;
	}
	want = iters * (target_s * 1e9 / ns);
	if (want > SPIN_MAX_ITERS)
		want = SPIN_MAX_ITERS;
	if (want < (1 << 20))
		want = 1 << 20;
	return want;
}

/*
 * Per-task setup for the ping-pong: open() runs in each of the two tasks
 * after it is pinned and before the warm-up, check() in the timing task
 * after the measured round trips. Either may be NULL.
 */
struct task_setup {
	int (*open)(const void *arg);
	int (*check)(const void *arg, long round_trips);
	const void *arg;
};

static const struct task_setup no_counters;

/* The counters of this task (each ping-pong task is its own process). */
static int task_fds[MAX_GROUPS * MAX_EVENTS];

static int open_task_groups(const void *arg)
{
	static const struct counter_opts opts = {
		.format = FMT_TIMES | FMT_GROUP,
	};

	return open_groups(arg, &opts, task_fds);
}

/* Did the first group count what it must have? */
static int check_task_groups(const void *arg, long round_trips)
{
	const struct group_spec *g = arg;
	__u64 buf[3 + MAX_EVENTS];
	int j;

	if (!read_values(task_fds[0], buf, (3 + g->nr_events) * sizeof(__u64),
			 g->events[0]->name))
		return -1;
	if (buf[0] != (__u64)g->nr_events || !buf[1]) {
		note("%s: group read: nr %llu, time_enabled %llu",
		     api_names[g->api], (unsigned long long)buf[0],
		     (unsigned long long)buf[1]);
		return -1;
	}
	for (j = 0; j < g->nr_events; j++) {
		if (g->events[j]->per_switch &&
		    buf[3 + j] < (__u64)round_trips) {
			note("%s: %s counted %llu over %ld round trips",
			     api_names[g->api], g->events[j]->name,
			     (unsigned long long)buf[3 + j], round_trips);
			return -1;
		}
	}
	return 0;
}

static struct task_setup groups_setup(const struct group_spec *g)
{
	struct task_setup ts = {
		.open = open_task_groups,
		.check = check_task_groups,
		.arg = g,
	};

	return ts;
}

static pid_t fork_task(void)
{
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		in_child = true;
		/* The knobs are the parent's to restore. */
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		/* A dead peer gives EPIPE, not a silent death. */
		signal(SIGPIPE, SIG_IGN);
	}
	return pid;
}

static int reap(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			return -1;
	}
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -1;
}

static int round_trips(int in, int out, long n)
{
	char c = 'p';

	for (; n > 0; n--) {
		if (write(out, &c, 1) != 1 || read(in, &c, 1) != 1)
			return -1;
	}
	return 0;
}

static void __attribute__((noreturn))
pong_task(const struct task_setup *ts, int in, int out)
{
	char c;

	pin_to_cpu(BENCH_CPU);
	if (ts->open && ts->open(ts->arg))
		_exit(1);
	/* Echo until the timing task closes its end. */
	for (;;) {
		ssize_t n = read(in, &c, 1);

		if (n == 0)
			_exit(0);
		if (n != 1 || write(out, &c, 1) != 1)
			_exit(1);
	}
}

/* What the timing task reports. */
struct ping_result {
	double ns;		/* per round trip */
	long done;		/* round trips timed */
};

#define PING_CHUNK	500	/* round trips between looks at the clock */

static void __attribute__((noreturn))
ping_task(const struct task_setup *ts, int in, int out, int result, long n,
	  __u64 cap_ns)
{
	struct ping_result res = { 0 };
	__u64 t0, elapsed;

	pin_to_cpu(BENCH_CPU);
	if (ts->open && ts->open(ts->arg))
		_exit(1);
	/* The warm-up also waits for the other task to finish its setup. */
	if (round_trips(in, out, sizes->warmup_round_trips))
		_exit(1);
	t0 = now_ns();
	do {
		long chunk = n - res.done < PING_CHUNK ? n - res.done : PING_CHUNK;

		if (round_trips(in, out, chunk))
			_exit(1);
		res.done += chunk;
		elapsed = now_ns() - t0;
	} while (res.done < n && elapsed < cap_ns);
	res.ns = (double)elapsed / res.done;
	if (ts->check && ts->check(ts->arg, res.done))
		_exit(1);
	if (write(result, &res, sizeof(res)) != sizeof(res))
		_exit(1);
	_exit(0);
}

/*
 * Two fresh tasks pinned to one CPU bounce a byte through two pipes @n
 * times (fewer if that takes over @cap_s), each with @ts's counters on
 * itself. Returns ns per round trip, or a negative value when a task
 * failed (it said why). @row names the caller in messages.
 */
static double ping_pong(const char *row, const struct task_setup *ts,
			long n, double cap_s)
{
	int to_pong[2], to_ping[2], result[2];
	struct ping_result res;
	pid_t pong, ping;
	double ns = -1;
	ssize_t got;

	if (pipe2(to_pong, O_CLOEXEC) || pipe2(to_ping, O_CLOEXEC) ||
	    pipe2(result, O_CLOEXEC))
		die("pipe: %s", strerror(errno));
	pong = fork_task();
	if (!pong) {
		close(to_pong[1]);
		close(to_ping[0]);
		close(result[0]);
		close(result[1]);
		pong_task(ts, to_pong[0], to_ping[1]);
	}
	ping = fork_task();
	if (!ping) {
		close(to_pong[0]);
		close(to_ping[1]);
		close(result[0]);
		ping_task(ts, to_ping[0], to_pong[1], result[1], n,
			  cap_s * 1e9);
	}
	close(to_pong[0]);
	close(to_pong[1]);
	close(to_ping[0]);
	close(to_ping[1]);
	close(result[1]);
	do {
		got = read(result[0], &res, sizeof(res));
	} while (got < 0 && errno == EINTR);
	if (got == sizeof(res)) {
		ns = res.ns;
		note_capped(row, res.done, n);
	}
	close(result[0]);
	if (reap(ping) | reap(pong))
		ns = -1;
	return ns;
}

/* ---- the ring buffer reader, shared by both interfaces ---- */

struct record_kind {
	__u32 lost_type;
	bool (*is_sample)(const struct pmc_event_header *h);
};

static bool pmc_is_sample(const struct pmc_event_header *h)
{
	return h->misc & PMC_EVENT_MISC_OVERFLOW;
}

static bool perf_is_sample(const struct pmc_event_header *h)
{
	return h->type == PERF_RECORD_SAMPLE;
}

/* Both LOST records are { header; u64 id; u64 lost; }. */
static const struct record_kind record_kinds[NR_APIS] = {
	[API_PMC]  = { PMC_EVENT_LOST,   pmc_is_sample },
	[API_PERF] = { PERF_RECORD_LOST, perf_is_sample },
};

#define LOST_COUNT_OFFSET	16

/* libpmc's reader serves both rings: their layouts agree (above). */
struct ring_reader {
	const struct record_kind *kind;
	int stop_fd;			/* eventfd: the thread drains and ends */
	int cpu;			/* where the thread runs; -1 anywhere */
	struct pmc_ring ring;
	__u64 samples, lost, corrupt;
	pthread_t thread;
};

static int ring_map(struct ring_reader *r, int fd, enum api api)
{
	memset(r, 0, sizeof(*r));
	r->kind = &record_kinds[api];
	/* Read-write: the kernel must not overwrite what we have not read. */
	if (pmc_ring_map(&r->ring, fd, RING_DATA_PAGES, true)) {
		note("%s: mmap of 1+%d pages: %s", api_names[api],
		     RING_DATA_PAGES, strerror(errno));
		return -1;
	}
	return 0;
}

/* Count every record between data_tail and data_head, then free them. */
static void ring_drain(struct ring_reader *r)
{
	const union pmc_record *rec = r->ring.rec;
	__u64 pos;
	int ret;

	pmc_ring_begin(&r->ring);
	for (;;) {
		pos = r->ring.tail;
		ret = pmc_ring_next(&r->ring);
		if (ret <= 0)
			break;
		if (r->kind->is_sample(&rec->h))
			r->samples++;
		else if (rec->h.type == r->kind->lost_type &&
			 rec->h.size >= LOST_COUNT_OFFSET + sizeof(__u64))
			r->lost += rec->w[LOST_COUNT_OFFSET / 8];
	}
	/* Neither kernel is expected to write unreadable bytes. */
	if (ret < 0)
		r->corrupt += r->ring.head - pos;
	pmc_ring_end(&r->ring);
}

static void *ring_thread(void *arg)
{
	struct ring_reader *r = arg;
	struct pollfd pfd[2] = {
		{ .fd = r->ring.fd, .events = POLLIN },
		{ .fd = r->stop_fd, .events = POLLIN },
	};

	if (r->cpu >= 0)
		pin_to_cpu(r->cpu);
	for (;;) {
		int n = poll(pfd, 2, 100);

		if (n < 0 && errno != EINTR)
			break;
		ring_drain(r);
		if (n <= 0)
			continue;
		if (pfd[1].revents & POLLIN)
			break;
		/* Not expected while the task lives; do not spin on it. */
		if (pfd[0].revents & (POLLHUP | POLLERR | POLLNVAL))
			pfd[0].fd = -1;
	}
	return NULL;
}

static int ring_start(struct ring_reader *r, int cpu)
{
	int err;

	r->cpu = cpu;
	r->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (r->stop_fd < 0) {
		note("eventfd: %s", strerror(errno));
		return -1;
	}
	err = pthread_create(&r->thread, NULL, ring_thread, r);
	if (err) {
		note("pthread_create: %s", strerror(err));
		close(r->stop_fd);
		return -1;
	}
	return 0;
}

/* Stop the thread, drain what is left and unmap. */
static void ring_stop(struct ring_reader *r)
{
	__u64 one = 1;

	if (write(r->stop_fd, &one, sizeof(one)) != sizeof(one))
		note("eventfd write: %s", strerror(errno));
	pthread_join(r->thread, NULL);
	close(r->stop_fd);
	ring_drain(r);
	pmc_ring_unmap(&r->ring);
}

/* ---- row: notax ---- */

static void bench_notax(void)
{
	struct series s = { 0 };
	int rep;

	for (rep = 0; rep < reps; rep++) {
		double ns = ping_pong("notax", &no_counters, sizes->round_trips,
				      sizes->round_trip_cap_s);

		if (ns < 0)
			die("notax: ping-pong failed");
		series_add(&s, ns);
	}
	add_result("notax", "ns/round trip, no counters", &s, NULL);
}

/* ---- row: read ---- */

enum read_how { READ_SYSCALL, READ_SELF };

static void read_once(const char *what, enum read_how how, int fd,
		      const struct pmc_mmap_page *pg)
{
	struct pmc_count c;
	__u64 val;

	if (how == READ_SELF ? !pmc_self_page_read(pg, &c) :
	    read(fd, &val, sizeof(val)) != sizeof(val))
		die("read: %s failed", what);
}

/* ns per read of @fd (or of page 0 at @pg), until done or the time cap. */
static double read_loop(const char *what, enum read_how how, int fd,
			const struct pmc_mmap_page *pg)
{
	__u64 t0, elapsed, cap = sizes->read_cap_s * 1e9;
	long i, done = 0, n = sizes->reads;

	for (i = 0; i < n / 100 + 1; i++)	/* warm up */
		read_once(what, how, fd, pg);
	t0 = now_ns();
	do {
		for (i = 0; i < 1000 && done < n; i++, done++)
			read_once(what, how, fd, pg);
		elapsed = now_ns() - t0;
	} while (done < n && elapsed < cap);
	note_capped("read", done, n);
	return (double)elapsed / done;
}

/*
 * ns per read of @ev on the calling task: read(2), or page 0 with no
 * system call (READ_SELF, events-lite only). Return -1 when the counter
 * cannot be opened or its page says to use read(2).
 */
static double read_cost(enum api api, const struct bench_event *ev,
			enum read_how how)
{
	static const struct counter_opts opts;
	struct pmc_self self = { 0 };
	struct pmc_count c;
	double ns = -1;
	char what[64];
	int fd;

	fd = counter_open(api, ev, -1, &opts);
	if (fd < 0)
		return -1;
	snprintf(what, sizeof(what), "%s: %s %s", api_names[api], ev->name,
		 how == READ_SELF ? "self-read" : "read(2)");
	if (how == READ_SYSCALL)
		ns = read_loop(what, how, fd, NULL);
	else if (!pmc_self_map(&self, fd) && pmc_self_page_read(self.page, &c))
		ns = read_loop(what, how, fd, self.page);
	pmc_self_unmap(&self);
	close(fd);
	return ns;
}

/*
 * The floor under every read(2) row: the system call and the file
 * lookup, reading an eventfd that always has a count to give.
 */
static double read_floor_cost(void)
{
	int fd = eventfd(UINT_MAX, EFD_SEMAPHORE | EFD_CLOEXEC);
	double ns;

	if (fd < 0)
		die("read: eventfd: %s", strerror(errno));
	ns = read_loop("eventfd read(2)", READ_SYSCALL, fd, NULL);
	close(fd);
	return ns;
}

/* Why a read row has no figure for an interface. */
static const char *read_gap(enum api api, const struct bench_event *ev,
			    enum read_how how)
{
	bool hw = ev->perf_type != PERF_TYPE_SOFTWARE;

	if (api == API_PERF)
		return hw ? "n/a (perf: no PMU)" : "n/a (no user read)";
	if (hw && !pmu_model[0])
		return "n/a (no PMU)";
	if (how == READ_SELF)
		return hw ? "n/a (index 0)" : "n/a (no TSC time)";
	return "n/a (open failed)";
}

static const struct result *read_row(const struct bench_event *ev,
				     enum read_how how)
{
	struct series s[NR_APIS] = { 0 };
	bool have[NR_APIS] = { true, how == READ_SYSCALL };
	char measure[40];
	struct result *r;
	int rep, a;

	for (rep = 0; rep < reps; rep++)
		for (a = 0; a < NR_APIS; a++) {
			double ns = have[a] ? read_cost(a, ev, how) : -1;

			if (ns < 0)
				have[a] = false;
			else
				series_add(&s[a], ns);
		}
	snprintf(measure, sizeof(measure), "ns/%s, %s",
		 how == READ_SELF ? "self-read" : "read(2)", ev->name);
	r = add_result("read", measure, have[API_PMC] ? &s[API_PMC] : NULL,
		       have[API_PERF] ? &s[API_PERF] : NULL);
	for (a = 0; a < NR_APIS; a++)
		if (!have[a])
			r->fig[a].text = read_gap(a, ev, how);
	return r;
}

static void bench_read(void)
{
	struct series floor = { 0 };
	int rep;

	for (rep = 0; rep < reps; rep++)
		series_add(&floor, read_floor_cost());
	add_result("read", "ns/read(2), eventfd (floor)", &floor, NULL);
	sum_read = read_row(&ev_task_clock, READ_SYSCALL);
	sum_self = read_row(&ev_task_clock, READ_SELF);
	read_row(&ev_cycles, READ_SYSCALL);
	read_row(&ev_cycles, READ_SELF);
}

/* ---- row: open_close ---- */

struct open_close_case {
	const char *measure;
	const struct bench_event *const *events;
	int nr_events;
	/*
	 * Keep one other counter open meanwhile: a first counter switches
	 * an interface's context-switch hooks on (and the last one off),
	 * which this case leaves out.
	 */
	bool hold_one;
};

static const struct open_close_case open_close_cases[] = {
	{ "ns/open+close, 1 counter", ev_single, ARRAY_SIZE(ev_single), false },
	{ "ns/open+close, group of 4", ev_group4, ARRAY_SIZE(ev_group4), false },
	{ "ns/open+close, 1 (1 more held)", ev_single, ARRAY_SIZE(ev_single), true },
};

static void open_close_once(const struct group_spec *g)
{
	static const struct counter_opts opts;
	int fds[MAX_EVENTS];

	if (open_groups(g, &opts, fds))
		die("open_close: %s failed", api_names[g->api]);
	/* Members first, so no member outlives its leader. */
	close_fds(fds, g->nr_events);
}

/* Open and close the case's group until the count or the time is spent. */
static double open_close_cost(enum api api, const struct open_close_case *c)
{
	static const struct counter_opts opts;
	const struct group_spec g = { api, c->events, c->nr_events, 1 };
	__u64 budget = sizes->open_close_budget_s * 1e9, t0, elapsed;
	long done = 0;
	int held = -1;

	if (c->hold_one) {
		held = counter_open(api, &ev_task_clock, -1, &opts);
		if (held < 0)
			die("open_close: %s: open: %s", api_names[api],
			    strerror(errno));
	}
	open_close_once(&g);		/* warm the slab caches, the fd table */
	t0 = now_ns();
	/* The clock is read every round: one may cost a text patch. */
	do {
		open_close_once(&g);
		done++;
		elapsed = now_ns() - t0;
	} while (done < sizes->open_close_max && elapsed < budget);
	if (held >= 0)
		close(held);
	return (double)elapsed / done;
}

static void bench_open_close(void)
{
	const size_t nr = ARRAY_SIZE(open_close_cases);
	struct series s[ARRAY_SIZE(open_close_cases)][NR_APIS] = { 0 };
	size_t i;
	int rep, a;

	for (rep = 0; rep < reps; rep++)
		for (i = 0; i < nr; i++)
			for (a = 0; a < NR_APIS; a++)
				series_add(&s[i][a],
					   open_close_cost(a, &open_close_cases[i]));
	for (i = 0; i < nr; i++) {
		const struct result *r;

		r = add_result("open_close", open_close_cases[i].measure,
			       &s[i][API_PMC], &s[i][API_PERF]);
		if (open_close_cases[i].hold_one)
			sum_held = r;
	}
}

/* ---- row: ctxsw ---- */

static void bench_ctxsw(void)
{
	static const struct group_spec pmc3 = GROUPS(API_PMC, ev_group3, 1);
	static const struct group_spec perf3 = GROUPS(API_PERF, ev_group3, 1);
	const struct task_setup setups[3] = {
		no_counters, groups_setup(&pmc3), groups_setup(&perf3),
	};
	struct series base = { 0 }, with[NR_APIS] = { 0 }, over[NR_APIS] = { 0 };
	int rep, k, a;

	for (rep = 0; rep < reps; rep++) {
		double ns[3];

		/* Rotate the order so neither drift nor leftovers favour one. */
		for (k = 0; k < 3; k++) {
			int v = (k + rep) % 3;

			ns[v] = ping_pong("ctxsw", &setups[v],
					  sizes->round_trips,
					  sizes->round_trip_cap_s);
			if (ns[v] < 0)
				die("ctxsw: ping-pong failed");
		}
		series_add(&base, ns[0]);
		for (a = 0; a < NR_APIS; a++) {
			series_add(&with[a], ns[1 + a]);
			series_add(&over[a], ns[1 + a] - ns[0]);
		}
	}
	add_result("ctxsw", "ns/round trip, no counters", &base, NULL);
	add_result("ctxsw", "ns/round trip, group of 3", &with[API_PMC],
		   &with[API_PERF]);
	sum_ctxsw = add_result("ctxsw", "overhead ns/round trip",
			       &over[API_PMC], &over[API_PERF]);
}

/* ---- row: scale ---- */

#define MAX_SCALE_POINTS	4

/*
 * The ping-pong with each of @counts groups of @events per task, then
 * the growth per added group from the first point to the last.
 */
static void scale_curve(const char *kind,
			const struct bench_event *const *events, int nr_events,
			const int *counts, int nr_counts)
{
	struct group_spec specs[MAX_SCALE_POINTS];
	struct task_setup setups[MAX_SCALE_POINTS];
	struct series s[MAX_SCALE_POINTS] = { 0 }, growth = { 0 };
	int rep, k, first = counts[0], last = counts[nr_counts - 1];
	char measure[40];

	if (nr_counts > MAX_SCALE_POINTS)
		die("scale: too many points");
	for (k = 0; k < nr_counts; k++) {
		struct group_spec g = { API_PMC, events, nr_events, counts[k] };

		specs[k] = g;
		setups[k] = groups_setup(&specs[k]);
	}
	for (rep = 0; rep < reps; rep++) {
		double ns[MAX_SCALE_POINTS];

		for (k = 0; k < nr_counts; k++) {
			int v = (k + rep) % nr_counts;

			ns[v] = ping_pong("scale", &setups[v],
					  sizes->scale_round_trips,
					  sizes->scale_cap_s);
			if (ns[v] < 0) {
				note("scale: %d %s groups failed", counts[v], kind);
				snprintf(measure, sizeof(measure), "%s groups", kind);
				add_text_result("scale", measure,
						"n/a (open failed)");
				return;
			}
		}
		for (k = 0; k < nr_counts; k++)
			series_add(&s[k], ns[k]);
		series_add(&growth, (ns[nr_counts - 1] - ns[0]) / (last - first));
	}
	for (k = 0; k < nr_counts; k++) {
		snprintf(measure, sizeof(measure), "ns/round trip, %d %s groups",
			 counts[k], kind);
		add_result("scale", measure, &s[k], NULL);
	}
	snprintf(measure, sizeof(measure), "growth ns/rt per %s group", kind);
	add_result("scale", measure, &growth, NULL);
}

static void bench_scale(void)
{
	static const int sw_counts[] = { 1, 4, 16, 64 };
	static const int hw_counts[] = { 1, 4, 16 };

	scale_curve("sw", ev_scale_sw, ARRAY_SIZE(ev_scale_sw), sw_counts,
		    ARRAY_SIZE(sw_counts));
	if (pmu_model[0])
		scale_curve("hw", ev_scale_hw, ARRAY_SIZE(ev_scale_hw),
			    hw_counts, ARRAY_SIZE(hw_counts));
	else
		add_text_result("scale", "hw groups", "n/a (no PMU)");
}

/* ---- row: sampling ---- */

static const unsigned int sample_freqs[] = { 1000, 10000 };
#define NR_FREQS	ARRAY_SIZE(sample_freqs)

struct sample_run {
	double wall_ns;
	double expected;	/* events counted / period */
	__u64 samples, lost;
};

/* The loop, sampled by @ev every @period events, drained by a thread. */
static void sampled_spin(enum api api, const struct bench_event *ev,
			 __u64 period, __u64 iters, struct sample_run *run)
{
	const struct counter_opts opts = { .period = period, .disabled = true };
	struct ring_reader r;
	__u64 t0, counted;
	int fd;

	fd = counter_open(api, ev, -1, &opts);
	if (fd < 0)
		die("sampling: %s: open %s: %s", api_names[api], ev->name,
		    strerror(errno));
	if (ring_map(&r, fd, api) ||
	    ring_start(&r, nr_cpus > 1 ? BENCH_CPU + 1 : -1))
		die("sampling: %s: ring buffer setup failed", api_names[api]);
	if (counter_enable(api, fd, true))
		die("sampling: %s: enable: %s", api_names[api], strerror(errno));
	t0 = now_ns();
	spin(iters);
	run->wall_ns = now_ns() - t0;
	if (counter_enable(api, fd, false))
		die("sampling: %s: disable: %s", api_names[api], strerror(errno));
	ring_stop(&r);
	if (!read_values(fd, &counted, sizeof(counted), ev->name))
		die("sampling: %s: cannot read the counter", api_names[api]);
	close(fd);
	if (r.corrupt)
		note("warning: sampling: %s: %llu bytes of unreadable records",
		     api_names[api], (unsigned long long)r.corrupt);
	run->expected = (double)counted / period;
	run->samples = r.samples;
	run->lost = r.lost;
}

static void bench_sampling(void)
{
	struct series base = { 0 };
	struct series slow[NR_FREQS][NR_APIS] = { 0 };
	struct series samples[NR_FREQS][NR_APIS] = { 0 };
	struct series delivered[NR_FREQS][NR_APIS] = { 0 };
	struct series lost[NR_FREQS][NR_APIS] = { 0 };
	__u64 iters = calibrate_spin(sizes->spin_target_s);
	char measure[40];
	size_t f;
	int rep, a;

	note("sampling: %llu loop iterations", (unsigned long long)iters);
	sum_lost_valid = true;
	for (rep = 0; rep < reps; rep++) {
		double base_ns = timed_spin(iters);

		series_add(&base, base_ns / 1e6);
		for (f = 0; f < NR_FREQS; f++) {
			for (a = 0; a < NR_APIS; a++) {
				struct sample_run run;

				sampled_spin(a, &ev_task_clock,
					     NSEC_PER_SEC / sample_freqs[f],
					     iters, &run);
				series_add(&slow[f][a], run.wall_ns / base_ns);
				series_add(&samples[f][a], run.samples);
				series_add(&delivered[f][a], run.expected ?
					   100.0 * run.samples / run.expected : 0);
				series_add(&lost[f][a], run.lost);
				if (a == API_PMC)
					sum_lost += run.lost;
			}
		}
	}
	add_result("sampling", "loop ms, unsampled", &base, NULL);
	for (f = 0; f < NR_FREQS; f++) {
		unsigned int khz = sample_freqs[f] / 1000;
		const struct result *r;

		snprintf(measure, sizeof(measure), "slowdown x, %u kHz", khz);
		r = add_result("sampling", measure, &slow[f][API_PMC],
			       &slow[f][API_PERF]);
		if (sample_freqs[f] == 10000)
			sum_sampling = r;
		snprintf(measure, sizeof(measure), "samples, %u kHz", khz);
		add_result("sampling", measure, &samples[f][API_PMC],
			   &samples[f][API_PERF]);
		snprintf(measure, sizeof(measure), "%% of runtime*freq, %u kHz", khz);
		add_result("sampling", measure, &delivered[f][API_PMC],
			   &delivered[f][API_PERF]);
		snprintf(measure, sizeof(measure), "lost, %u kHz", khz);
		add_result("sampling", measure, &lost[f][API_PMC],
			   &lost[f][API_PERF]);
	}
}

/* ---- row: mux ---- */

struct timed_value {
	double scaled;		/* value * enabled / running */
	double share;		/* running / enabled */
};

/*
 * Open @nr single-counter groups plus a task-clock counter, all off, run
 * the loop with them switched on together, and read them. Returns 0 and
 * the task-clock ns in *task_ns, or -1 (message printed).
 */
static int mux_run(const struct bench_event *const *events, int nr,
		   __u64 iters, struct timed_value *vals, double *task_ns)
{
	static const struct counter_opts opts = {
		.format = FMT_TIMES,
		.disabled = true,
	};
	int fds[MAX_EVENTS + 1], i, ret = -1;
	__u64 buf[3];

	for (i = 0; i <= nr; i++) {
		const struct bench_event *ev = i < nr ? events[i] : &ev_task_clock;

		fds[i] = counter_open(API_PMC, ev, -1, &opts);
		if (fds[i] < 0) {
			note("mux: open %s: %s", ev->name, strerror(errno));
			close_fds(fds, i);
			return -1;
		}
	}
	/* Every leader on this task at once, so they cover the same loop. */
	if (prctl(PR_TASK_PMC_ENABLE, 0, 0, 0, 0)) {
		note("mux: PR_TASK_PMC_ENABLE: %s", strerror(errno));
		goto out;
	}
	spin(iters);
	prctl(PR_TASK_PMC_DISABLE, 0, 0, 0, 0);
	if (!read_values(fds[nr], buf, sizeof(buf), "task-clock"))
		goto out;
	*task_ns = buf[0];
	for (i = 0; i < nr; i++) {
		if (!read_values(fds[i], buf, sizeof(buf), events[i]->name))
			goto out;
		vals[i].share = buf[1] ? (double)buf[2] / buf[1] : 0;
		vals[i].scaled = buf[2] ? (double)buf[0] * buf[1] / buf[2] : 0;
	}
	ret = *task_ns > 0 ? 0 : -1;
out:
	close_fds(fds, nr + 1);
	return ret;
}

static void bench_mux(void)
{
	const bool p6 = !strcmp(pmu_model, "p6");
	const struct bench_event *const *events = p6 ? ev_mux_p6 : ev_mux_other;
	const int nr = 4;
	struct series err = { 0 }, share = { 0 };
	__u64 iters;
	int rep, i, j;

	if (!pmu_model[0]) {
		add_text_result("mux", "worst scaled error %", "n/a (no PMU)");
		return;
	}
	iters = calibrate_spin(sizes->mux_target_s);
	for (rep = 0; rep < reps; rep++) {
		struct timed_value vals[MAX_EVENTS], alone;
		double alone_rate[MAX_EVENTS], task_ns, worst = 0, least = 1;

		/* Each distinct event alone: the rate it should scale to. */
		for (i = 0; i < nr; i++) {
			for (j = 0; j < i && events[j] != events[i]; j++)
				;
			if (j < i) {
				alone_rate[i] = alone_rate[j];
				continue;
			}
			if (mux_run(&events[i], 1, iters, &alone, &task_ns) ||
			    !alone.scaled)
				goto fail;
			alone_rate[i] = alone.scaled / task_ns;
		}
		if (mux_run(events, nr, iters, vals, &task_ns))
			goto fail;
		for (i = 0; i < nr; i++) {
			double e = fabs(vals[i].scaled / task_ns - alone_rate[i]) /
				   alone_rate[i];

			if (e > worst)
				worst = e;
			if (vals[i].share < least)
				least = vals[i].share;
		}
		series_add(&err, 100 * worst);
		series_add(&share, 100 * least);
	}
	add_result("mux", p6 ? "worst scaled error %, 4 events" :
			       "worst scaled error %, 4x cycles", &err, NULL);
	add_result("mux", "least running/enabled %", &share, NULL);
	return;
fail:
	add_text_result("mux", "worst scaled error %", "n/a (open failed)");
}

/* ---- output ---- */

static void format_number(char *buf, size_t size, double v)
{
	double m = fabs(v);

	if (m >= 1000)
		snprintf(buf, size, "%.0f", v);
	else if (m >= 10)
		snprintf(buf, size, "%.1f", v);
	else
		snprintf(buf, size, "%.3f", v);
}

static void format_figure(char *buf, size_t size, const struct figure *f)
{
	if (f->valid)
		format_number(buf, size, f->med);
	else
		snprintf(buf, size, "%s", f->text ? f->text : "-");
}

static void format_ratio(char *buf, size_t size, const struct result *r)
{
	if (r->has_ratio)
		snprintf(buf, size, "%.2fx", r->ratio);
	else
		snprintf(buf, size, "-");
}

/* "min..max", and " / min..max" for perf when it has a figure. */
static void format_range(char *buf, size_t size, const struct result *r)
{
	char lo[32], hi[32];
	size_t len = 0;
	int a;

	buf[0] = '\0';
	for (a = 0; a < NR_APIS; a++) {
		const struct figure *f = &r->fig[a];

		if (!f->valid)
			continue;
		format_number(lo, sizeof(lo), f->min);
		format_number(hi, sizeof(hi), f->max);
		len += snprintf(buf + len, size - len, "%s%s..%s",
				len ? " / " : "", lo, hi);
		if (len >= size)
			break;
	}
}

enum table_style { TABLE_TEXT, TABLE_CSV, TABLE_MD };

static void print_table(FILE *out, enum table_style style)
{
	char pmc[32], perf[32], ratio[16], range[80];
	int i;

	switch (style) {
	case TABLE_TEXT:
		fprintf(out, "%-10s %-32s %14s %12s %8s  %s\n", "row", "measure",
			"events-lite", "perf", "ratio",
			"min..max (events-lite / perf)");
		break;
	case TABLE_CSV:
		fprintf(out, "row,measure,events_lite,perf,ratio,events_lite_min,events_lite_max,perf_min,perf_max\n");
		break;
	case TABLE_MD:
		fprintf(out, "| row | measure | events-lite | perf | ratio | min..max (events-lite / perf) |\n");
		fprintf(out, "|---|---|---:|---:|---:|---|\n");
		break;
	}
	for (i = 0; i < nr_results; i++) {
		const struct result *r = &results[i];
		const struct figure *fp = &r->fig[API_PMC], *ff = &r->fig[API_PERF];

		format_figure(pmc, sizeof(pmc), fp);
		format_figure(perf, sizeof(perf), ff);
		format_ratio(ratio, sizeof(ratio), r);
		format_range(range, sizeof(range), r);
		switch (style) {
		case TABLE_TEXT:
			fprintf(out, "%-10s %-32s %14s %12s %8s  %s\n", r->row,
				r->measure, pmc, perf, ratio, range);
			break;
		case TABLE_CSV:
			/* Full precision, empty where there is no figure. */
			fprintf(out, "%s,\"%s\",", r->row, r->measure);
			if (fp->valid)
				fprintf(out, "%.6g,", fp->med);
			else
				fprintf(out, "%s,", fp->text ? fp->text : "");
			if (ff->valid)
				fprintf(out, "%.6g,", ff->med);
			else
				fputc(',', out);
			if (r->has_ratio)
				fprintf(out, "%.4f", r->ratio);
			if (fp->valid)
				fprintf(out, ",%.6g,%.6g", fp->min, fp->max);
			else
				fprintf(out, ",,");
			if (ff->valid)
				fprintf(out, ",%.6g,%.6g\n", ff->min, ff->max);
			else
				fprintf(out, ",,\n");
			break;
		case TABLE_MD:
			fprintf(out, "| %s | %s | %s | %s | %s | %s |\n", r->row,
				r->measure, pmc, perf, ratio, range);
			break;
		}
	}
}

static int write_table(const char *path, enum table_style style,
		       const char *header)
{
	FILE *f = fopen(path, "we");

	if (!f) {
		note("%s: %s", path, strerror(errno));
		return -1;
	}
	if (style == TABLE_MD)
		fprintf(f, "%s\n\n", header);
	print_table(f, style);
	if (fclose(f)) {
		note("write %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Whether @a and @k times @b differ by more than their spreads blur: the
 * stretch where their min..max ranges overlap must be shorter than the
 * distance between their medians. A ratio that fails this is noise (a
 * load spike once made the no-counter tax read -27%).
 */
static bool figures_resolved(const struct figure *a, const struct figure *b,
			     double k)
{
	double lo = fmax(a->min, k * b->min), hi = fmin(a->max, k * b->max);

	return fmax(hi - lo, 0) < fabs(a->med - k * b->med);
}

/* @r's figure for @api, or NULL if its row did not run or has none. */
static const struct figure *valid_figure(const struct result *r, enum api api)
{
	return r && r->fig[api].valid ? &r->fig[api] : NULL;
}

/* @num's events-lite figure over @den's figure for @den_api, if resolved. */
static void format_summary_ratio(char *buf, size_t size,
				 const struct result *num,
				 const struct result *den, enum api den_api,
				 const char *name)
{
	const struct figure *f = valid_figure(num, API_PMC);
	const struct figure *g = valid_figure(den, den_api);

	if (!f || !g || !g->med)
		snprintf(buf, size, "n/a");
	else if (!figures_resolved(f, g, 1))
		snprintf(buf, size, "no difference from %s resolved", name);
	else
		snprintf(buf, size, "%.2fx %s", f->med / g->med, name);
}

/* The goals of this series, as ratios of two figures of one run. */
struct goal {
	const char *what;
	const struct result *const *num, *const *den;
	enum api den_api;	/* the numerator is always events-lite's */
	double max_ratio;
};

static const struct goal goals[] = {
	{ "self-read of task-clock vs events-lite's read(2)", &sum_self,
	  &sum_read, API_PMC, 0.1 },
	{ "read(2) of task-clock vs perf's", &sum_read, &sum_read, API_PERF, 0.7 },
	{ "open+close with 1 more held vs perf's", &sum_held, &sum_held,
	  API_PERF, 1.0 },
	{ "ctxsw overhead of a group of 3 vs perf's", &sum_ctxsw, &sum_ctxsw,
	  API_PERF, 0.3 },
};

/* One line per goal: the ratio of medians, then met, missed or unresolved. */
static void print_goals(void)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(goals); i++) {
		const struct goal *g = &goals[i];
		const struct figure *a = valid_figure(*g->num, API_PMC);
		const struct figure *b = valid_figure(*g->den, g->den_api);

		printf("goal: %s <= %.2fx: ", g->what, g->max_ratio);
		if (!a || !b || !b->med)
			printf("n/a (%s)\n", *g->num && *g->den ? "no figure" :
							       "row not run");
		else if (!figures_resolved(a, b, g->max_ratio))
			printf("%.2fx, unresolved (the spreads overlap at the goal)\n",
			       a->med / b->med);
		else
			printf("%.2fx, %s\n", a->med / b->med,
			       a->med <= g->max_ratio * b->med ? "met" : "MISSED");
	}
}

static void print_summary(void)
{
	char self[48], reads[48], held[48], ctxsw[48], sampling[48], lost[24];

	format_summary_ratio(self, sizeof(self), sum_self, sum_read, API_PMC,
			     "read(2)");
	format_summary_ratio(reads, sizeof(reads), sum_read, sum_read, API_PERF,
			     "perf");
	format_summary_ratio(held, sizeof(held), sum_held, sum_held, API_PERF,
			     "perf");
	format_summary_ratio(ctxsw, sizeof(ctxsw), sum_ctxsw, sum_ctxsw,
			     API_PERF, "perf");
	format_summary_ratio(sampling, sizeof(sampling), sum_sampling,
			     sum_sampling, API_PERF, "perf");
	if (sum_lost_valid)
		snprintf(lost, sizeof(lost), "%llu", (unsigned long long)sum_lost);
	else
		snprintf(lost, sizeof(lost), "n/a");
	/* The harness fills in the no-counter tax from two kernels. */
	printf("bench: self-read %s, read %s, open+close %s, ctxsw overhead %s, no-counter tax n/a, sampling 10kHz %s, %s lost\n",
	       self, reads, held, ctxsw, sampling, lost);
}

/* pmc_emu=NAME from the kernel command line, "" if absent. */
static void read_pmu_model(void)
{
	char line[4096], *tok, *save = NULL;
	FILE *f = fopen("/proc/cmdline", "re");

	pmu_model[0] = '\0';
	if (!f)
		return;
	if (fgets(line, sizeof(line), f)) {
		for (tok = strtok_r(line, " \t\n", &save); tok;
		     tok = strtok_r(NULL, " \t\n", &save))
			if (!strncmp(tok, "pmc_emu=", 8) && tok[8])
				snprintf(pmu_model, sizeof(pmu_model), "%s",
					 tok + 8);
	}
	fclose(f);
}

/* ---- row: hw ---- */

/* Can @api open a group of ev_hw_group3 here? */
static bool hw_group_opens(enum api api)
{
	static const struct counter_opts opts;
	const struct group_spec g = GROUPS(api, ev_hw_group3, 1);
	int fds[MAX_EVENTS];

	if (open_groups(&g, &opts, fds))
		return false;
	close_fds(fds, g.nr_events);
	return true;
}

/* @ev's events per 100 us of the loop, by an events-lite counter. */
static __u64 period_10khz(const struct bench_event *ev, __u64 iters)
{
	static const struct counter_opts opts = { .disabled = true };
	__u64 count;
	double ns;
	int fd;

	fd = counter_open(API_PMC, ev, -1, &opts);
	if (fd < 0 || counter_enable(API_PMC, fd, true))
		die("hw: %s: %s", ev->name, strerror(errno));
	ns = timed_spin(iters);
	counter_enable(API_PMC, fd, false);
	if (!read_values(fd, &count, sizeof(count), ev->name))
		die("hw: cannot read %s", ev->name);
	close(fd);
	return count / (ns / 100000) ?: 1;
}

static const struct bench_event *const ev_hw_samplers[] = {
	&ev_instructions, &ev_cycles,
};
#define NR_HW_SAMPLERS	ARRAY_SIZE(ev_hw_samplers)

static void bench_hw(void)
{
	static const struct open_close_case oc = {
		"ns/open+close, instructions", ev_hw_single, 1, false,
	};
	static const struct group_spec pmc3 = GROUPS(API_PMC, ev_hw_group3, 1);
	static const struct group_spec perf3 = GROUPS(API_PERF, ev_hw_group3, 1);
	const struct task_setup setups[3] = {
		no_counters, groups_setup(&pmc3), groups_setup(&perf3),
	};
	struct series rd[NR_APIS] = { 0 }, oc_s[NR_APIS] = { 0 };
	struct series base = { 0 }, over[NR_APIS] = { 0 }, loop = { 0 };
	struct series slow[NR_HW_SAMPLERS][NR_APIS] = { 0 };
	struct series samples[NR_HW_SAMPLERS][NR_APIS] = { 0 };
	struct series lost[NR_HW_SAMPLERS][NR_APIS] = { 0 };
	__u64 iters, period[NR_HW_SAMPLERS];
	char measure[40];
	size_t e;
	int rep, a, k;

	if (!hw_group_opens(API_PMC) || !hw_group_opens(API_PERF)) {
		add_text_result("hw", "hardware counters",
				"n/a (not on one PMU)");
		return;
	}
	iters = calibrate_spin(sizes->spin_target_s);
	for (e = 0; e < NR_HW_SAMPLERS; e++) {
		period[e] = period_10khz(ev_hw_samplers[e], iters);
		note("hw: %llu loop iterations, a sample every %llu %s",
		     (unsigned long long)iters, (unsigned long long)period[e],
		     ev_hw_samplers[e]->name);
	}
	for (rep = 0; rep < reps; rep++) {
		double base_ns, ns[3];

		for (k = 0; k < 3; k++) {
			int v = (k + rep) % 3;

			ns[v] = ping_pong("hw", &setups[v], sizes->round_trips,
					  sizes->round_trip_cap_s);
			if (ns[v] < 0)
				die("hw: ping-pong failed");
		}
		base_ns = timed_spin(iters);
		series_add(&loop, base_ns / 1e6);
		series_add(&base, ns[0]);
		for (a = 0; a < NR_APIS; a++) {
			double r = read_cost(a, &ev_instructions, READ_SYSCALL);

			if (r < 0)
				die("hw: %s: read failed", api_names[a]);
			series_add(&rd[a], r);
			series_add(&oc_s[a], open_close_cost(a, &oc));
			series_add(&over[a], ns[1 + a] - ns[0]);
			for (e = 0; e < NR_HW_SAMPLERS; e++) {
				struct sample_run run;

				sampled_spin(a, ev_hw_samplers[e], period[e],
					     iters, &run);
				series_add(&slow[e][a], run.wall_ns / base_ns);
				series_add(&samples[e][a], run.samples);
				series_add(&lost[e][a], run.lost);
			}
		}
	}
	add_result("hw", "ns/read(2), instructions", &rd[API_PMC],
		   &rd[API_PERF]);
	add_result("hw", oc.measure, &oc_s[API_PMC], &oc_s[API_PERF]);
	add_result("hw", "ns/round trip, no counters", &base, NULL);
	add_result("hw", "overhead ns/rt, 3 hw counters", &over[API_PMC],
		   &over[API_PERF]);
	add_result("hw", "loop ms, unsampled", &loop, NULL);
	for (e = 0; e < NR_HW_SAMPLERS; e++) {
		const char *name = ev_hw_samplers[e]->name;

		snprintf(measure, sizeof(measure), "slowdown x, %s 10 kHz", name);
		add_result("hw", measure, &slow[e][API_PMC], &slow[e][API_PERF]);
		snprintf(measure, sizeof(measure), "samples, %s 10 kHz", name);
		add_result("hw", measure, &samples[e][API_PMC],
			   &samples[e][API_PERF]);
		snprintf(measure, sizeof(measure), "lost, %s 10 kHz", name);
		add_result("hw", measure, &lost[e][API_PMC], &lost[e][API_PERF]);
	}
}

/* ---- rows and main ---- */

struct bench_row {
	const char *name;
	void (*run)(void);
	bool uses_counters;
};

/* notax first: before any counter of either interface ever existed. */
static const struct bench_row bench_rows[] = {
	{ "notax",	bench_notax,	  false },
	{ "read",	bench_read,	  true },
	{ "open_close",	bench_open_close, true },
	{ "ctxsw",	bench_ctxsw,	  true },
	{ "scale",	bench_scale,	  true },
	{ "sampling",	bench_sampling,	  true },
	{ "mux",	bench_mux,	  true },
	{ "hw",		bench_hw,	  true },
};

static void usage(FILE *out)
{
	size_t i;

	fprintf(out,
		"usage: pmc-bench [--reps N] [--quick] [--csv FILE] [--md FILE] [--row NAME...]\n"
		"\n"
		"Measure events-lite (pmc_open) against perf_event_open in this boot.\n"
		"Needs root. Each figure is the median of N repetitions.\n"
		"\n"
		"  -r, --reps=N     repetitions (default %d, at most %d)\n"
		"  -q, --quick      smaller workloads (about a fifth)\n"
		"      --csv=FILE   also write the table as CSV\n"
		"      --md=FILE    also write the table as Markdown\n"
		"      --row=NAME   run only these rows (repeatable, comma-separated;\n"
		"                   further NAME arguments are rows too)\n"
		"  -h, --help       show this help\n"
		"\n"
		"Rows:", DEFAULT_REPS, MAX_REPS);
	for (i = 0; i < ARRAY_SIZE(bench_rows); i++)
		fprintf(out, " %s", bench_rows[i].name);
	fprintf(out, "\n(notax runs without pmc_open, on any kernel)\n");
}

static void select_rows(const char *arg, bool *selected)
{
	char *list = strdup(arg), *name, *save = NULL;
	size_t i;

	if (!list)
		die("out of memory");
	for (name = strtok_r(list, ",", &save); name;
	     name = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < ARRAY_SIZE(bench_rows); i++)
			if (!strcmp(name, bench_rows[i].name))
				break;
		if (i == ARRAY_SIZE(bench_rows)) {
			fprintf(stderr, "pmc-bench: unknown row '%s'\n", name);
			usage(stderr);
			exit(2);
		}
		selected[i] = true;
	}
	free(list);
}

/* Fail early and clearly when an interface is missing. */
static void probe_interfaces(void)
{
	static const struct counter_opts opts;
	int a;

	for (a = 0; a < NR_APIS; a++) {
		int fd = counter_open(a, &ev_task_clock, -1, &opts);

		if (fd >= 0) {
			close(fd);
			continue;
		}
		if (a == API_PMC && errno == ENOSYS)
			die("pmc_open not supported by this kernel (ENOSYS); only --row notax runs here");
		die("%s: cannot open task-clock: %s", api_names[a],
		    strerror(errno));
	}
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "reps",  required_argument, NULL, 'r' },
		{ "quick", no_argument,	      NULL, 'q' },
		{ "csv",   required_argument, NULL, 'c' },
		{ "md",	   required_argument, NULL, 'm' },
		{ "row",   required_argument, NULL, 'R' },
		{ "help",  no_argument,	      NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool selected[ARRAY_SIZE(bench_rows)] = { false }, any = false;
	bool counters = false;
	const char *csv = NULL, *md = NULL;
	char header[256];
	struct utsname uts;
	size_t i;
	int opt, ret = 0;

	while ((opt = getopt_long(argc, argv, "r:qh", longopts, NULL)) != -1) {
		char *end;
		long val;

		switch (opt) {
		case 'r':
			errno = 0;
			val = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || val < 1 ||
			    val > MAX_REPS) {
				fprintf(stderr, "pmc-bench: invalid --reps '%s': want 1 to %d\n",
					optarg, MAX_REPS);
				return 2;
			}
			reps = val;
			break;
		case 'q':
			quick = true;
			sizes = &quick_sizes;
			break;
		case 'c':
			csv = optarg;
			break;
		case 'm':
			md = optarg;
			break;
		case 'R':
			select_rows(optarg, selected);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	for (; optind < argc; optind++)
		select_rows(argv[optind], selected);
	for (i = 0; i < ARRAY_SIZE(bench_rows); i++)
		any |= selected[i];
	for (i = 0; i < ARRAY_SIZE(bench_rows); i++) {
		if (!any)
			selected[i] = true;
		if (selected[i] && bench_rows[i].uses_counters)
			counters = true;
	}

	page_size = sysconf(_SC_PAGESIZE);
	nr_cpus = sysconf(_SC_NPROCESSORS_ONLN);
	read_pmu_model();
	if (uname(&uts))
		snprintf(uts.release, sizeof(uts.release), "unknown");
	if (pmu_model[0])
		snprintf(header, sizeof(header),
			 "pmc-bench: kernel %s, %ld CPUs, PMU %s (emulated, pmc_emu=%s), reps %d%s",
			 uts.release, nr_cpus, pmu_model, pmu_model, reps,
			 quick ? ", quick" : "");
	else
		snprintf(header, sizeof(header),
			 "pmc-bench: kernel %s, %ld CPUs, PMU none, reps %d%s",
			 uts.release, nr_cpus, reps, quick ? ", quick" : "");
	printf("%s\n", header);
	fflush(stdout);

	/* The measuring process stays on one CPU; its tasks pin themselves. */
	pin_to_cpu(BENCH_CPU);
	for (i = 0; i < ARRAY_SIZE(bench_rows); i++) {
		__u64 t0;

		if (!selected[i])
			continue;
		/* notax has run by now if asked for: no counter touched it. */
		if (bench_rows[i].uses_counters && counters) {
			knobs_set();
			probe_interfaces();
			counters = false;
		}
		note("%s...", bench_rows[i].name);
		t0 = now_ns();
		bench_rows[i].run();
		note("%s done in %.1f s", bench_rows[i].name,
		     (now_ns() - t0) / 1e9);
	}

	print_table(stdout, TABLE_TEXT);
	if (csv && write_table(csv, TABLE_CSV, header))
		ret = 1;
	if (md && write_table(md, TABLE_MD, header))
		ret = 1;
	print_goals();
	print_summary();
	return ret;
}
