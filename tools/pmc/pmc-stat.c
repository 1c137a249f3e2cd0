// SPDX-License-Identifier: GPL-2.0
/*
 * pmc-stat: count events while a command (or an existing task) runs,
 * using pmc_open(2), and print the totals like perf stat.
 *
 *	pmc-stat [-e EVENT,...] [-p PID | -a | -C LIST] [-r N | -I MS] [-x SEP | -j] [--] COMMAND...
 *	pmc-stat [-e EVENT,...] [-I MS] [-x SEP | -j] -p PID | -a | -C LIST
 *
 * Counters are inherited, so a command's whole process tree is counted.
 * Events are libpmc event strings: "{a,b}" opens a group, scheduled on
 * the PMU as a unit; perf's modifiers ":u", ":k" and ":D" count user
 * or kernel mode only, or pin an event or group. -x and -j print perf stat's
 * CSV and JSON fields; -r runs the command N times and prints means; -I
 * prints the counts of each interval as it ends.
 */
#include <math.h>
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>

#include "pmc-child.h"
#include "pmc-cpus.h"
#include "pmc-tools.h"

#define DEFAULT_EVENTS	"task-clock,context-switches,cpu-migrations,page-faults"

/*
 * How often a count that waits for a task to go, or for SIGINT, looks
 * (with -I, while a command runs too).
 */
#define PID_POLL_NS	100000000L
#define INTERVAL_STEP_NS	10000000L

/* The counts of events[i], summed over the targets. */
struct stat_counter {
	const char *name;		/* as the user spelt it */
	__u64 config;
	enum pmc_unit unit;
	int *fds;			/* per target; -1: not open */
	bool supported;			/* false: no PMU for it */
	bool counted;			/* ran at least once */
	struct pmc_count count;
	double scaled;			/* value * enabled / running */
	/* -r: over the runs that counted it */
	unsigned int runs;
	double sum, sumsq;		/* of scaled */
	__u64 sum_enabled, sum_running;
	/* -I: the totals at the last interval */
	struct pmc_count last;
};

/*
 * A "#" comment printed after a counter: num / den * scale. den_config
 * of RATIO_WALL_CLOCK means the elapsed wall time instead of a counter.
 */
#define RATIO_WALL_CLOCK	(~0ULL)

struct stat_ratio {
	__u64 num_config;
	__u64 den_config;
	double scale;
	int precision;
	const char *label;
};

static const struct stat_ratio stat_ratios[] = {
	{ SW(TASK_CLOCK),    RATIO_WALL_CLOCK,        1.0,   3, " CPUs utilized" },
	{ SW(CPU_CLOCK),     RATIO_WALL_CLOCK,        1.0,   3, " CPUs utilized" },
	{ HW(INSTRUCTIONS),  HW(CPU_CYCLES),          1.0,   2, " insn per cycle" },
	{ HW(BRANCH_MISSES), HW(BRANCH_INSTRUCTIONS), 100.0, 2, "% of all branches" },
	{ HW(CACHE_MISSES),  HW(CACHE_REFERENCES),    100.0, 2, "% of all cache refs" },
};

static struct pmc_evlist events;	/* what -e asked for */
static struct stat_counter *counters;	/* one per event */
static size_t nr_counters;
static bool user_only;			/* fell back to exclude_kernel */
/*
 * What the counters watch: one task (cpus == NULL, nr_targets 1), or
 * with -a or -C every task on each CPU in cpus[], one counter per CPU
 * per event.
 */
static int *cpus;
static size_t nr_targets = 1;
static const char *cpu_list;		/* as given, for the report */
static const char *csv_sep;		/* -x */
static bool json;			/* -j */
static unsigned int repeat = 1;		/* -r */
static long interval_ms;		/* -I: print every interval_ms */
static double interval_time = -1;	/* -I: seconds, for the printers */

static void usage(FILE *out)
{
	fprintf(out,
		"usage: pmc-stat [-e EVENT,...] [-p PID | -a | -C LIST] [-r N | -I MS] [-x SEP | -j] [--] COMMAND [ARGS...]\n"
		"       pmc-stat [-e EVENT,...] [-I MS] [-x SEP | -j] -p PID | -a | -C LIST\n"
		"\n"
		"Run COMMAND and print event counts for it, or count an existing\n"
		"task PID while COMMAND runs or until it exits or SIGINT.\n"
		"\n"
		"  -e, --event=EVENT,...  events to count (repeatable; default\n"
		"                         " DEFAULT_EVENTS ");\n"
		"                         {EVENT,...} is a group; EVENT:u counts\n"
		"                         user mode only, :k kernel mode, :D pins\n"
		"  -p, --pid=PID          attach to task PID instead of COMMAND\n"
		"  -a, --all-cpus         count every task on every online CPU\n"
		"                         (while COMMAND runs, or until SIGINT)\n"
		"  -C, --cpu=LIST         the same on the CPUs of LIST (0,2-3)\n"
		"  -r, --repeat=N         run COMMAND N times; print the means and\n"
		"                         the relative standard error of each\n"
		"  -x, --field-separator=SEP  one CSV line per event: value, unit,\n"
		"                         event, [stddev %% with -r,] time running,\n"
		"                         %% counted, metric, metric unit\n"
		"  -j, --json             one JSON object per event (perf's keys)\n"
		"  -I, --interval-print=MS  print the counts of every MS ms (10 or\n"
		"                         more), stamped with the time, and no total\n"
		"  -h, --help             show this help\n"
		"\n"
		"Events:\n");
	pmc_events_list(out);
}

static void add_events(const char *arg)
{
	char err[256];

	if (pmc_evlist_parse(&events, arg, err, sizeof(err))) {
		fprintf(stderr, "pmc-stat: %s\n", err);
		if (!strncmp(err, "unknown event", 13)) {
			fprintf(stderr, "valid events:\n");
			pmc_events_list(stderr);
		}
		exit(2);
	}
}

/* Once the targets are known: a counter per event, an fd per target. */
static void alloc_counters(void)
{
	size_t i;

	nr_counters = events.nr;
	counters = calloc(nr_counters, sizeof(*counters));
	if (!counters) {
		perror("pmc-stat");
		exit(1);
	}
	for (i = 0; i < nr_counters; i++) {
		struct stat_counter *c = &counters[i];

		c->name = events.ev[i].name;
		c->config = events.ev[i].attr.config;
		c->unit = events.ev[i].unit;
		c->supported = true;
		/* a command's whole process tree */
		events.ev[i].attr.inherit = !cpus;
		c->fds = malloc(nr_targets * sizeof(int));
		if (!c->fds) {
			perror("pmc-stat");
			exit(1);
		}
		memset(c->fds, -1, nr_targets * sizeof(int));
	}
}

/* -C LIST: the CPUs of the list. */
static void parse_cpu_list(const char *list)
{
	int n;

	free(cpus);
	n = pmc_cpu_list(list, &cpus);
	if (n < 0) {
		fprintf(stderr, "pmc-stat: bad CPU list '%s': use N,M-K\n", list);
		exit(2);
	}
	nr_targets = n;
}

/* -a: every online CPU. */
static void all_cpus(void)
{
	int n;

	free(cpus);
	n = pmc_online_cpus(&cpus);
	if (n < 0) {
		perror("pmc-stat: /sys/devices/system/cpu/online");
		exit(1);
	}
	nr_targets = n;
}

static void close_counters(void)
{
	size_t i, t;

	for (i = 0; i < nr_counters; i++) {
		for (t = 0; t < nr_targets; t++) {
			if (counters[i].fds[t] >= 0)
				close(counters[i].fds[t]);
			counters[i].fds[t] = -1;
		}
	}
}

/* Open event @i on target @t (@pid, or cpus[t]); the fd or -1 with errno. */
static int open_one(size_t i, size_t t, pid_t pid)
{
	size_t leader = events.ev[i].leader;
	/* A member whose leader could not open counts on its own. */
	int group_fd = leader == i ? -1 : counters[leader].fds[t];
	int fd;

	events.ev[i].attr.exclude_kernel |= user_only;
	fd = pmc_evsel_open(&events, i, cpus ? -1 : pid, cpus ? cpus[t] : -1,
			    group_fd, PMC_FLAG_FD_CLOEXEC);
	/* At pmc_paranoid 2 only user-mode counting of a task is allowed. */
	if (fd < 0 && errno == EACCES && !user_only && !cpus) {
		user_only = true;
		events.ev[i].attr.exclude_kernel = 1;
		fd = pmc_evsel_open(&events, i, pid, -1, group_fd,
				    PMC_FLAG_FD_CLOEXEC);
	}
	return fd;
}

/*
 * Open every counter on @pid, or on each CPU of -a/-C. Events without a
 * PMU are marked and skipped; any other failure is fatal and returns -1
 * (message printed).
 */
static int open_counters(pid_t pid)
{
	size_t i, t;

	for (i = 0; i < nr_counters; i++) {
		struct stat_counter *c = &counters[i];

		for (t = 0; t < nr_targets && c->supported; t++) {
			int err;

			c->fds[t] = open_one(i, t, pid);
			if (c->fds[t] >= 0)
				continue;

			err = errno;
			if (err == ENOSYS) {
				fprintf(stderr, "pmc-stat: pmc_open not supported by this kernel (ENOSYS)\n");
				goto fail;
			}
			if (cpus && pmc_explain_cpu_error("pmc-stat", err,
							  cpus[t], c->config))
				goto fail;
			if (pmc_config_needs_pmu(c->config) && err == ENODEV) {
				fprintf(stderr, "pmc-stat: %s: no hardware PMU (ENODEV)\n",
					c->name);
				c->supported = false;
				continue;
			}
			if (pmc_config_needs_pmu(c->config) && err == EINVAL) {
				fprintf(stderr, "pmc-stat: %s: not supported by this CPU (EINVAL)\n",
					c->name);
				c->supported = false;
				continue;
			}
			fprintf(stderr, "pmc-stat: pmc_open(%s): %s\n", c->name,
				strerror(err));
			goto fail;
		}
	}
	/* Leaders first (their index is lower): see pmc_evlist_enable(). */
	for (i = 0; i < nr_counters; i++) {
		struct stat_counter *c = &counters[i];

		for (t = 0; t < nr_targets; t++) {
			if (c->fds[t] < 0)
				continue;
			if (ioctl(c->fds[t], PMC_IOC_ENABLE) < 0) {
				fprintf(stderr, "pmc-stat: enable(%s): %s\n",
					c->name, strerror(errno));
				goto fail;
			}
		}
	}
	return 0;
fail:
	close_counters();
	return -1;
}

/* Each event's count, summed over the targets, and scaled. */
static void read_counters(void)
{
	size_t i, t;

	for (i = 0; i < nr_counters; i++) {
		struct stat_counter *c = &counters[i];

		c->counted = false;
		memset(&c->count, 0, sizeof(c->count));
		for (t = 0; t < nr_targets; t++) {
			struct pmc_count one;
			int ret;

			if (c->fds[t] < 0)
				continue;
			ret = pmc_read_count(c->fds[t], &one);
			if (ret > 0)
				fprintf(stderr, "pmc-stat: warning: %s: pinned group did not fit on the PMU (error state)\n",
					c->name);
			else if (ret < 0)
				fprintf(stderr, "pmc-stat: read(%s): %s\n",
					c->name, strerror(errno));
			if (ret)
				continue;
			c->count.value += one.value;
			c->count.enabled += one.enabled;
			c->count.running += one.running;
			/* Times are both 0 when the task never ran: the value is exact. */
			if (one.running || !one.enabled)
				c->counted = true;
		}
		c->scaled = pmc_count_scaled(&c->count);
	}
}

static const struct stat_counter *find_counted(__u64 config)
{
	size_t i;

	for (i = 0; i < nr_counters; i++)
		if (counters[i].config == config && counters[i].counted)
			return &counters[i];
	return NULL;
}

/* The ratio that applies to @c, with its value in @val; NULL if none. */
static const struct stat_ratio *find_ratio(const struct stat_counter *c,
					   double elapsed_ns, double *val)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(stat_ratios); i++) {
		const struct stat_ratio *r = &stat_ratios[i];
		const struct stat_counter *den;
		double d;

		if (r->num_config != c->config)
			continue;
		if (r->den_config == RATIO_WALL_CLOCK) {
			d = elapsed_ns;
		} else {
			den = find_counted(r->den_config);
			if (!den)
				continue;
			d = den->scaled;
		}
		if (d <= 0)
			continue;
		*val = c->scaled / d * r->scale;
		return r;
	}
	return NULL;
}

/* Format the "# ..." comment for @c into @buf; false if none applies. */
static bool format_ratio(const struct stat_counter *c, double elapsed_ns,
			 char *buf, size_t size)
{
	const struct stat_ratio *r;
	double val;

	r = find_ratio(c, elapsed_ns, &val);
	if (!r)
		return false;
	snprintf(buf, size, " # %8.*f%s", r->precision, val, r->label);
	return true;
}

/* -r: the standard error of the mean, in % of the mean (as perf). */
static double rel_stderr(const struct stat_counter *c)
{
	double mean, var;

	if (c->runs < 2 || c->sum <= 0)
		return 0;
	mean = c->sum / c->runs;
	var = (c->sumsq - c->runs * mean * mean) / (c->runs - 1);
	if (var < 0)
		var = 0;
	return 100.0 * sqrt(var / c->runs) / mean;
}

/*
 * -x SEP: perf stat's CSV fields: value, unit, event, [stddev % with
 * -r,] time running (ns), % counted, metric value, metric unit.
 */
static void print_counter_csv(const struct stat_counter *c, double elapsed_ns)
{
	const struct stat_ratio *r = NULL;
	const char *s = csv_sep;
	double val = 0;

	if (interval_time >= 0)
		fprintf(stderr, "%.6f%s", interval_time, s);
	if (!c->supported || !c->counted)
		fprintf(stderr, "%s%s%s%s", c->supported ? "<not counted>" :
			"<not supported>", s, s, c->name);
	else if (c->unit == PMC_UNIT_NSEC)
		fprintf(stderr, "%.2f%smsec%s%s", c->scaled / 1e6, s, s, c->name);
	else
		fprintf(stderr, "%.0f%s%s%s", c->scaled, s, s, c->name);
	if (repeat > 1)
		fprintf(stderr, "%s%.2f%%", s, rel_stderr(c));
	fprintf(stderr, "%s%" PRIu64 "%s%.2f", s, (uint64_t)c->count.running,
		s, pmc_count_percent(&c->count));
	if (c->counted)
		r = find_ratio(c, elapsed_ns, &val);
	if (r)
		fprintf(stderr, "%s%.*f%s%s\n", s, r->precision, val, s,
			r->label + (r->label[0] == ' '));
	else
		fprintf(stderr, "%s%s\n", s, s);
}

/* -j: one JSON object per line, with perf stat -j's keys. */
static void print_counter_json(const struct stat_counter *c, double elapsed_ns)
{
	const struct stat_ratio *r = NULL;
	double val = 0;

	fputc('{', stderr);
	if (interval_time >= 0)
		fprintf(stderr, "\"interval\" : %.6f, ", interval_time);
	fprintf(stderr, "\"counter-value\" : ");
	if (!c->supported || !c->counted)
		fprintf(stderr, "\"%s\"", c->supported ? "<not counted>" :
			"<not supported>");
	else if (c->unit == PMC_UNIT_NSEC)
		fprintf(stderr, "\"%.6f\"", c->scaled / 1e6);
	else
		fprintf(stderr, "\"%.6f\"", c->scaled);
	fprintf(stderr, ", \"unit\" : \"%s\", \"event\" : \"%s\"",
		c->unit == PMC_UNIT_NSEC ? "msec" : "", c->name);
	if (repeat > 1)
		fprintf(stderr, ", \"variance\" : %.2f", rel_stderr(c));
	fprintf(stderr, ", \"event-runtime\" : %" PRIu64 ", \"pcnt-running\" : %.2f",
		(uint64_t)c->count.running, pmc_count_percent(&c->count));
	if (c->counted)
		r = find_ratio(c, elapsed_ns, &val);
	if (r)
		fprintf(stderr, ", \"metric-value\" : \"%.6f\", \"metric-unit\" : \"%s\"",
			val, r->label + (r->label[0] == ' '));
	fprintf(stderr, "}\n");
}

static void print_counter(const struct stat_counter *c, double elapsed_ns)
{
	bool scaled = c->count.running < c->count.enabled;
	bool commented;
	char comment[64];

	if (interval_time >= 0)
		fprintf(stderr, "%15.6f ", interval_time);
	/* Markers end where the unit column does, so names line up. */
	if (!c->supported) {
		fprintf(stderr, "%20s %s\n", "<not supported>", c->name);
		return;
	}
	if (!c->counted) {
		fprintf(stderr, "%20s %s\n", "<not counted>", c->name);
		return;
	}

	if (c->unit == PMC_UNIT_NSEC)
		fprintf(stderr, "%15.2f msec ", c->scaled / 1e6);
	else if (scaled)
		fprintf(stderr, "%15.0f      ", c->scaled);
	else
		fprintf(stderr, "%15" PRIu64 "      ", (uint64_t)c->count.value);

	commented = format_ratio(c, elapsed_ns, comment, sizeof(comment));
	if (!commented && !scaled && repeat == 1) {
		fprintf(stderr, "%s\n", c->name);
		return;
	}
	fprintf(stderr, "%-25s%s", c->name, commented ? comment : "");
	if (repeat > 1)
		fprintf(stderr, "  ( +- %5.2f%% )", rel_stderr(c));
	if (scaled)
		fprintf(stderr, "  (%.1f%% counted)",
			pmc_count_percent(&c->count));
	fputc('\n', stderr);
}

/* One counter, in the format the options chose. */
static void print_one(const struct stat_counter *c, double elapsed_ns)
{
	if (json)
		print_counter_json(c, elapsed_ns);
	else if (csv_sep)
		print_counter_csv(c, elapsed_ns);
	else
		print_counter(c, elapsed_ns);
}

/*
 * Hardware counters that were enabled but none of which ever ran found
 * no free hardware counter: another owner held them (the user guide's
 * "Sharing the PMU"). Say who can hold them, and how to free them. One
 * that ran while another did not only took turns with it.
 */
static void explain_not_counted(void)
{
	bool waited = false;
	long watchdog = 0;
	size_t i;
	FILE *f;

	for (i = 0; i < nr_counters; i++) {
		const struct stat_counter *c = &counters[i];

		if (!c->supported || !pmc_config_needs_pmu(c->config))
			continue;
		if (c->counted)
			return;
		if (c->count.enabled)
			waited = true;
	}
	if (!waited)
		return;
	f = fopen("/proc/sys/kernel/nmi_watchdog", "r");
	if (f) {
		if (fscanf(f, "%ld", &watchdog) != 1)
			watchdog = 0;
		fclose(f);
	}
	fprintf(stderr, "pmc-stat: <not counted>: the hardware counters were held by %s; events-lite counts only on counters no one else holds\n",
		watchdog ?
		"the NMI watchdog (free it: sysctl kernel.nmi_watchdog=0), perf or a KVM guest" :
		"perf or a KVM guest (perf events; end them)");
}

static void print_stats(pid_t attach_pid, char **cmd, double elapsed_ns)
{
	size_t i;

	if (csv_sep || json) {
		for (i = 0; i < nr_counters; i++)
			print_one(&counters[i], elapsed_ns);
		explain_not_counted();
		return;
	}
	fprintf(stderr, "\n Counter stats for ");
	if (cpus) {
		fprintf(stderr, "'%s'", cpu_list ? cpu_list : "system wide");
	} else if (attach_pid > 0) {
		fprintf(stderr, "process id '%d'", (int)attach_pid);
	} else {
		fputc('\'', stderr);
		for (i = 0; cmd[i]; i++)
			fprintf(stderr, "%s%s", i ? " " : "", cmd[i]);
		fputc('\'', stderr);
	}
	fprintf(stderr, "%s", user_only ? " (user only)" : "");
	if (repeat > 1)
		fprintf(stderr, " (%u runs)", repeat);
	fprintf(stderr, ":\n\n");

	for (i = 0; i < nr_counters; i++)
		print_one(&counters[i], elapsed_ns);

	fprintf(stderr, "\n%15.6f seconds time elapsed%s\n\n", elapsed_ns / 1e9,
		repeat > 1 ? " (mean)" : "");
	explain_not_counted();
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/*
 * -I: print what each counter counted since the last interval, stamped
 * with the seconds since the count began; then leave the totals as they
 * were read.
 */
static void print_interval(double start_ns, double *last_ns)
{
	double now = now_ns();
	size_t i;

	read_counters();
	if (*last_ns == start_ns && !json && !csv_sep)
		fprintf(stderr, "#%14s %15s      %s\n", "time", "counts", "event");
	interval_time = (now - start_ns) / 1e9;
	for (i = 0; i < nr_counters; i++) {
		struct stat_counter *c = &counters[i];
		struct pmc_count total = c->count;

		c->count.value -= c->last.value;
		c->count.enabled -= c->last.enabled;
		c->count.running -= c->last.running;
		c->scaled = pmc_count_scaled(&c->count);
		print_one(c, now - *last_ns);
		c->last = total;
	}
	interval_time = -1;
	*last_ns = now;
}

/*
 * Sleep until @done says the count is over (the command exited, the
 * task is gone, SIGINT): in short steps, printing each -I interval.
 */
static void count_until(bool (*done)(void *), void *arg, double start_ns)
{
	struct timespec step = { 0, PID_POLL_NS };
	double last = start_ns, next = start_ns + interval_ms * 1e6;

	/* -I: short steps, so that the last interval ends with the count. */
	if (interval_ms)
		step.tv_nsec = INTERVAL_STEP_NS;
	while (!done(arg)) {
		nanosleep(&step, NULL);
		if (interval_ms && now_ns() >= next) {
			print_interval(start_ns, &last);
			next += interval_ms * 1e6;
		}
	}
	if (interval_ms)
		print_interval(start_ns, &last);	/* the partial last one */
}

static bool child_done(void *arg)
{
	return pmc_child_reap(arg, true);
}

static bool sigint_done(void *arg)
{
	(void)arg;
	return pmc_interrupted;
}

static bool task_done(void *arg)
{
	pid_t pid = *(pid_t *)arg;

	return pmc_interrupted || (kill(pid, 0) < 0 && errno == ESRCH);
}

static int run_command(struct pmc_child *child, char **cmd, double start_ns)
{
	if (pmc_child_release(child, cmd)) {
		close_counters();
		return -1;
	}
	if (interval_ms)
		count_until(child_done, child, start_ns);
	else
		pmc_child_reap(child, false);
	return child->status;
}

/* Add this run's counts to the -r totals. */
static void accumulate(void)
{
	size_t i;

	for (i = 0; i < nr_counters; i++) {
		struct stat_counter *c = &counters[i];

		if (!c->counted)
			continue;
		c->runs++;
		c->sum += c->scaled;
		c->sumsq += c->scaled * c->scaled;
		c->sum_enabled += c->count.enabled;
		c->sum_running += c->count.running;
	}
}

/* After the last run: the means, where the printers look for values. */
static void average(void)
{
	size_t i;

	for (i = 0; i < nr_counters; i++) {
		struct stat_counter *c = &counters[i];

		c->counted = c->runs > 0;
		if (!c->runs)
			continue;
		c->scaled = c->sum / c->runs;
		c->count.value = llround(c->scaled);
		c->count.enabled = c->sum_enabled;
		c->count.running = c->sum_running;
	}
}

/*
 * One count: of a new COMMAND, of task @attach_pid while COMMAND runs,
 * or of @attach_pid until it exits or SIGINT. The counts are left in
 * counters[]; returns COMMAND's exit status, or -1 (message printed) or
 * -127 (COMMAND could not run) as pmc-stat's own exit status, negated.
 */
static int count_once(pid_t attach_pid, char **cmd, double *elapsed_ns)
{
	struct pmc_child child;
	int status = 0;
	double start;

	if (cpus && !cmd[0]) {
		/* -a or -C alone: until SIGINT. */
		pmc_catch_sigint();
		if (open_counters(0))
			return -1;
		start = now_ns();
		count_until(sigint_done, NULL, start);
	} else if (!attach_pid) {
		if (pmc_child_spawn(&child, "pmc-stat", cmd))
			return -1;
		pmc_catch_sigint();
		if (open_counters(child.pid)) {
			pmc_child_abort(&child);
			return -1;
		}
		start = now_ns();
		status = run_command(&child, cmd, start);
		if (status < 0)
			return -127;
	} else {
		if (open_counters(attach_pid))
			return -1;
		pmc_catch_sigint();
		start = now_ns();
		if (cmd[0]) {
			if (pmc_child_spawn(&child, "pmc-stat", cmd))
				return -1;
			status = run_command(&child, cmd, start);
			if (status < 0)
				return -127;
		} else {
			count_until(task_done, &attach_pid, start);
		}
	}
	/* Counters outlive their task, so reading after exit is fine. */
	read_counters();
	*elapsed_ns = now_ns() - start;
	close_counters();
	return status;
}

static long parse_number(const char *arg, long min, long max, const char *what)
{
	char *end;
	long val;

	errno = 0;
	val = strtol(arg, &end, 10);
	if (errno || end == arg || *end || val < min || val > max) {
		fprintf(stderr, "pmc-stat: invalid %s '%s' (%ld to %ld)\n", what,
			arg, min, max);
		exit(2);
	}
	return val;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "event",           required_argument, NULL, 'e' },
		{ "pid",             required_argument, NULL, 'p' },
		{ "all-cpus",        no_argument,       NULL, 'a' },
		{ "cpu",             required_argument, NULL, 'C' },
		{ "repeat",          required_argument, NULL, 'r' },
		{ "field-separator", required_argument, NULL, 'x' },
		{ "json",            no_argument,       NULL, 'j' },
		{ "interval-print",  required_argument, NULL, 'I' },
		{ "help",            no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	double elapsed_ns = 0, run_ns;
	pid_t attach_pid = 0;
	unsigned int run;
	int opt, status = 0;
	char **cmd;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	/* '+': options after COMMAND belong to COMMAND. */
	while ((opt = getopt_long(argc, argv, "+e:p:aC:r:x:jI:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'e':
			add_events(optarg);
			break;
		case 'p':
			attach_pid = parse_number(optarg, 1, INT_MAX, "pid");
			break;
		case 'a':
			all_cpus();
			cpu_list = NULL;
			break;
		case 'C':
			parse_cpu_list(optarg);
			cpu_list = optarg;
			break;
		case 'r':
			repeat = parse_number(optarg, 1, 100000, "repeat count");
			break;
		case 'x':
			if (!optarg[0]) {
				fprintf(stderr, "pmc-stat: -x needs a separator\n");
				return 2;
			}
			csv_sep = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 'I':
			interval_ms = parse_number(optarg, 10, 3600000, "interval (ms)");
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	cmd = argv + optind;
	if (!cmd[0] && !attach_pid && !cpus) {
		usage(stderr);
		return 2;
	}
	if (cpus && attach_pid) {
		fprintf(stderr, "pmc-stat: -p counts a task, -a and -C CPUs: choose one\n");
		return 2;
	}
	if (csv_sep && json) {
		fprintf(stderr, "pmc-stat: -x and -j are two output formats: choose one\n");
		return 2;
	}
	if (repeat > 1 && interval_ms) {
		fprintf(stderr, "pmc-stat: -I prints each interval of one run: not with -r\n");
		return 2;
	}
	if (repeat > 1 && !cmd[0]) {	/* also -a or -C alone */
		fprintf(stderr, "pmc-stat: -r needs a COMMAND to run again\n");
		return 2;
	}
	if (!events.nr)
		add_events(DEFAULT_EVENTS);
	alloc_counters();

	/* SIGINT stops the count (and the command) but not the report. */
	for (run = 0; run < repeat && !pmc_interrupted; run++) {
		status = count_once(attach_pid, cmd, &run_ns);
		if (status < 0)
			return -status;
		accumulate();
		elapsed_ns += run_ns;
	}
	if (interval_ms)	/* the intervals were the report */
		return status;
	repeat = run;		/* fewer after SIGINT */
	average();
	print_stats(attach_pid, cmd, elapsed_ns / run);
	return status;
}
