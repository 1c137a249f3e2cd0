// SPDX-License-Identifier: GPL-2.0
/*
 * pmc-stat: count events while a command (or an existing task) runs,
 * using pmc_open(2), and print the totals like perf stat.
 *
 *	pmc-stat [-e EVENT,...] [-p PID,... | -t TID,... | -a | -C LIST] [-r N | -I MS]
 *		 [-x SEP | -j] [--per-thread | -A] [--] COMMAND...
 *	pmc-stat [-e EVENT,...] [-I MS] [-x SEP | -j] [--per-thread | -A]
 *		 -p PID,... | -t TID,... | -a | -C LIST
 *
 * Counters are inherited, so a command's whole process tree is counted,
 * and so are the threads a process attached with -p starts later; -p
 * opens one counter on each thread it has, -t on the threads named.
 * The counts are summed over the threads or CPUs unless --per-thread or
 * -A (--no-aggr) asks for a line each.
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
#include <sys/sysinfo.h>

#include "pmc-child.h"
#include "pmc-targets.h"
#include "pmc-tools.h"

#define DEFAULT_EVENTS	"task-clock,context-switches,cpu-migrations,page-faults"
/* -a and -C count CPUs: their time is a CPU's clock, as in perf stat */
#define DEFAULT_CPU_EVENTS	"cpu-clock,context-switches,cpu-migrations,page-faults"
/* perf stat's other defaults, added where there is a PMU to count them */
#define DEFAULT_HW_EVENTS	"cycles,instructions,branches,branch-misses"

/*
 * How often a count that waits for a task to go, or for SIGINT, looks
 * (with -I, while a command runs too).
 */
#define PID_POLL_NS	100000000L
#define INTERVAL_STEP_NS	10000000L

/* -r: a value over the runs, for its mean and standard error. */
struct stat_runs {
	unsigned int n;
	double sum, sumsq;
};

/* One target's count of an event, for --per-thread and -A. */
struct stat_target_count {
	struct pmc_count count;
	struct pmc_count last;		/* -I: at the last interval */
	bool counted;
};

/* The counts of events[i], summed over the targets. */
struct stat_counter {
	const char *name;		/* as the user spelt it */
	__u64 config;
	enum pmc_unit unit;
	int *fds;			/* per target; -1: not open */
	struct stat_target_count *per;	/* per target */
	bool supported;			/* false: no PMU for it */
	bool counted;			/* ran at least once */
	struct pmc_count count;
	double scaled;			/* value * enabled / running */
	/* -r: over the runs that counted it */
	struct stat_runs runs;		/* of scaled */
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
/* read_counters()' view of one target: an fd, count and result per event */
static int *target_fds, *target_ret;
static struct pmc_count *target_counts;
static bool user_only;			/* fell back to exclude_kernel */
/*
 * What the counters watch: one task (cpus and tids NULL, nr_targets 1),
 * with -a or -C every task on each CPU in cpus[], with -p or -t each
 * thread in tids[]: one counter per target per event.
 */
static int *cpus;
static pid_t *tids;
static size_t nr_targets = 1;
static char (*target_names)[40];	/* "CPU0", "comm-TID" */
static const char *cpu_list;		/* as given, for the report */
static pid_t *attach_ids;		/* -p or -t as given */
static int nr_attach;
static const char *attach_list;		/* ... for the report */
static bool attach_whole;		/* -p: each process's threads */
static bool per_target;			/* --per-thread, -A */
static long print_target = -1;		/* the target being printed, or -1 */
static const char *csv_sep;		/* -x */
static bool json;			/* -j */
static unsigned int repeat = 1;		/* -r */
static long interval_ms;		/* -I: print every interval_ms */
static double interval_time = -1;	/* -I: seconds, for the printers */

static void usage(FILE *out)
{
	fprintf(out,
		"usage: pmc-stat [-e EVENT,...] [-p PID,... | -t TID,... | -a | -C LIST]\n"
		"                [-r N | -I MS] [-x SEP | -j] [--per-thread | -A] [--] COMMAND [ARGS...]\n"
		"       pmc-stat [-e EVENT,...] [-I MS] [-x SEP | -j] [--per-thread | -A]\n"
		"                -p PID,... | -t TID,... | -a | -C LIST\n"
		"\n"
		"Run COMMAND and print event counts for it, or count existing\n"
		"processes while COMMAND runs or until they exit or SIGINT.\n"
		"\n"
		"  -e, --event=EVENT,...  events to count (repeatable; default\n"
		"                         " DEFAULT_EVENTS "\n"
		"                         (with -a or -C, cpu-clock for task-clock),\n"
		"                         and with a PMU " DEFAULT_HW_EVENTS ");\n"
		"                         {EVENT,...} is a group; EVENT:u counts\n"
		"                         user mode only, :k kernel mode, :D pins;\n"
		"                         :p is accepted and has no effect\n"
		"  -p, --pid=PID,...      count every thread of the processes PID\n"
		"                         (and the threads they start)\n"
		"  -t, --tid=TID,...      count the threads TID (and the threads\n"
		"                         they start) only\n"
		"  -a, --all-cpus         count every task on every online CPU\n"
		"                         (while COMMAND runs, or until SIGINT)\n"
		"  -C, --cpu=LIST         the same on the CPUs of LIST (0,2-3)\n"
		"      --per-thread       with -p or -t: a count per thread\n"
		"  -A, --no-aggr          with -a or -C: a count per CPU\n"
		"  -r, --repeat=N         run COMMAND N times; print the means and\n"
		"                         the relative standard error of each\n"
		"  -x, --field-separator=SEP  one CSV line per event: value, unit,\n"
		"                         event, [stddev %% with -r,] time running,\n"
		"                         %% counted, metric, metric unit\n"
		"  -j, --json             one JSON object per event (perf's keys)\n"
		"  -I, --interval-print=MS  print the counts of every MS ms (10 or\n"
		"                         more), stamped with the time, and no total\n"
		"  -l, --list             list the events, and which of them this\n"
		"                         kernel's PMU counts\n"
		"  -h, --help             show this help\n"
		"\n"
		"Events:\n");
	pmc_events_list(out);
}

/*
 * Whether this kernel counts @config: opened once on this task (user
 * mode, disabled). 0 or the errno.
 */
static int try_event(__u64 config)
{
	struct pmc_attr attr = {
		.config = config,
		.disabled = 1,
		.exclude_kernel = 1,
	};
	int fd = pmc_open(&attr, 0, -1, -1, PMC_FLAG_FD_CLOEXEC);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

/*
 * What --list says of @config; NULL if this kernel has no pmc_open(2)
 * at all (said).
 */
static const char *counts_here(__u64 config)
{
	struct pmc_attr attr = { .config = config };
	int err = try_event(config);
	char why[256];

	if (!err)
		return "counts here";
	if (err == ENOSYS) {
		fprintf(stderr, "pmc-stat: %s\n",
			pmc_open_strerror(&attr, 0, -1, err, why, sizeof(why)));
		return NULL;
	}
	if (err == ENODEV)
		return "no hardware PMU (ENODEV)";
	if (err == ENOENT || err == EINVAL || err == EOPNOTSUPP)
		return "not supported by this PMU";
	return strerror(err);
}

/* The CPU's own events that libpfm4 knows, each tried like the others. */
static void list_cpu_events(void)
{
	const char *pmu, *name, *desc, *last_pmu = NULL;
	char label[64];
	__u64 config;
	size_t i;

	for (i = 0; !pmc_cpu_event_at(i, &pmu, &name, &desc, &config); i++) {
		if (pmu != last_pmu)
			printf("\nCPU events (libpfm4: %s), each with its default unit mask:\n\n",
			       pmu);
		last_pmu = pmu;
		snprintf(label, sizeof(label), "r%llx",
			 (unsigned long long)(config & ~PMC_CONFIG_RAW));
		printf("  %-36s [CPU event %s] %s\n", name,
		       config ? label : "",
		       config ? counts_here(config) : "needs NAME:UNIT_MASK");
	}
}

/*
 * --list: the generic events and the CPU's own, each tried on this task
 * so that the list says what this kernel and its PMU take.
 */
static int list_events(void)
{
	const char *name, *alias;
	__u64 config;
	size_t i;

	printf("List of events (each opened once here, user mode only, to see whether this kernel counts it):\n\n");
	for (i = 0; !pmc_event_at(i, &name, &alias, &config); i++) {
		const char *how = counts_here(config);
		char label[64];

		if (!how)
			return 1;
		if (alias)
			snprintf(label, sizeof(label), "%s OR %s", name, alias);
		else
			snprintf(label, sizeof(label), "%s", name);
		printf("  %-36s [%s event] %s\n", label,
		       pmc_config_needs_pmu(config) ? "Hardware" : "Software",
		       how);
	}
	printf("  %-36s [Raw event descriptor] hex event select, e.g. r00c0\n",
	       "rNNNN");
	list_cpu_events();
	printf("\nModifiers: :u user mode, :k kernel mode, :D pinned; :p, :pp and :ppp are\n"
	       "accepted and have no effect (no precise sampling here).\n"
	       "perf's generic cache events (L1-dcache-load-misses, ...) are not defined:\n"
	       "use a raw event or the CPU's own event names above (libpfm4's, when\n"
	       "libpmc was built with it; NAME:UNIT_MASK picks another unit mask).\n");
	return 0;
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

/* :p asks perf for a precise IP; a count has no IP. Say it is ignored. */
static void note_precise(void)
{
	size_t i;

	for (i = 0; i < events.nr; i++)
		if (events.ev[i].precise)
			fprintf(stderr, "pmc-stat: note: %s: ':p' (a precise IP) has no effect: events-lite has no precise sampling, and a count needs none\n",
				events.ev[i].name);
}

/* Once the targets are known: a counter per event, an fd per target. */
static void alloc_counters(void)
{
	size_t i;

	nr_counters = events.nr;
	counters = calloc(nr_counters, sizeof(*counters));
	target_fds = calloc(nr_counters, sizeof(*target_fds));
	target_ret = calloc(nr_counters, sizeof(*target_ret));
	target_counts = calloc(nr_counters, sizeof(*target_counts));
	if (!counters || !target_fds || !target_ret || !target_counts) {
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
		c->per = calloc(nr_targets, sizeof(*c->per));
		if (!c->fds || !c->per) {
			perror("pmc-stat");
			exit(1);
		}
		memset(c->fds, -1, nr_targets * sizeof(int));
	}
}

/* The name of each target, for --per-thread and -A. */
static void name_targets(void)
{
	size_t t;

	target_names = calloc(nr_targets, sizeof(*target_names));
	if (!target_names) {
		perror("pmc-stat");
		exit(1);
	}
	for (t = 0; t < nr_targets; t++) {
		if (cpus)
			snprintf(target_names[t], sizeof(target_names[t]),
				 "CPU%d", cpus[t]);
		else if (tids)
			pmc_thread_name(tids[t], target_names[t],
					sizeof(target_names[t]));
	}
}

/* -p or -t: the threads they name now. */
static void list_threads(const char *list, bool whole)
{
	attach_list = list;
	attach_whole = whole;
	nr_targets = pmc_attach_threads("pmc-stat", list, whole, &attach_ids,
					&nr_attach, &tids);
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

/*
 * Open event @i on target @t (@pid, cpus[t] or tids[t]); the fd or -1
 * with errno.
 */
static int open_one(size_t i, size_t t, pid_t pid)
{
	size_t leader = events.ev[i].leader;
	/* A member whose leader could not open counts on its own. */
	int group_fd = leader == i ? -1 : counters[leader].fds[t];
	int fd;

	if (tids)
		pid = tids[t];

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

/* Say why event @i did not open on target @t (@pid, a CPU or a thread). */
static void open_error(size_t i, size_t t, pid_t pid, int err)
{
	char why[256];

	pmc_open_strerror(&events.ev[i].attr,
			  cpus ? -1 : tids ? tids[t] : pid,
			  cpus ? cpus[t] : -1, err, why, sizeof(why));
	if (err == EMFILE)
		fprintf(stderr, "pmc-stat: %zu targets x %zu events: %s\n",
			nr_targets, nr_counters, why);
	else
		fprintf(stderr, "pmc-stat: %s: %s\n", counters[i].name, why);
}

/*
 * A hardware event that this PMU cannot count, or no PMU at all: the
 * count reads <not supported> and the others go on. Not when the CPU
 * itself is missing or offline.
 */
static bool unsupported(const struct stat_counter *c, int cpu, int err)
{
	if (!pmc_config_needs_pmu(c->config) ||
	    (err != ENODEV && err != ENOENT && err != EINVAL))
		return false;
	return cpu < 0 || (cpu < get_nprocs_conf() && !pmc_cpu_offline(cpu));
}

/*
 * Open every counter on @pid, or on each CPU of -a/-C or thread of
 * -p/-t. Events without a PMU are marked and skipped, and so are threads
 * that exited since they were listed; any other failure is fatal and
 * returns -1 (message printed).
 */
static int open_counters(pid_t pid)
{
	size_t i, t, opened = 0, gone = 0;

	for (i = 0; i < nr_counters; i++) {
		struct stat_counter *c = &counters[i];

		for (t = 0; t < nr_targets && c->supported; t++) {
			int err;

			c->fds[t] = open_one(i, t, pid);
			if (c->fds[t] >= 0) {
				opened++;
				continue;
			}

			err = errno;
			if (tids && err == ESRCH) {
				gone++;		/* it exited since listed */
				continue;
			}
			open_error(i, t, pid, err);
			if (!unsupported(c, cpus ? cpus[t] : -1, err))
				goto fail;
			c->supported = false;	/* <not supported> */
		}
	}
	if (tids && !opened && gone) {
		fprintf(stderr, "pmc-stat: no %s of '%s' is running any more\n",
			attach_whole ? "process" : "thread", attach_list);
		goto fail;
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

/*
 * Each event's count, summed over the targets, and scaled. A group is
 * read in one read() per target, so that its members' counts (and the
 * ratios printed from them) are of one instant, also under -I.
 */
static void read_counters(void)
{
	size_t i, t;

	for (i = 0; i < nr_counters; i++) {
		counters[i].counted = false;
		memset(&counters[i].count, 0, sizeof(counters[i].count));
	}
	for (t = 0; t < nr_targets; t++) {
		for (i = 0; i < nr_counters; i++)
			target_fds[i] = counters[i].fds[t];
		pmc_evlist_read(&events, target_fds, target_counts, target_ret);
		for (i = 0; i < nr_counters; i++) {
			struct stat_counter *c = &counters[i];
			struct stat_target_count *per = &c->per[t];
			const struct pmc_count *one = &target_counts[i];
			int ret = target_ret[i];

			per->counted = false;
			memset(&per->count, 0, sizeof(per->count));
			if (target_fds[i] < 0)
				continue;
			if (ret > 0)
				fprintf(stderr, "pmc-stat: warning: %s: pinned group did not fit on the PMU (error state)\n",
					c->name);
			else if (ret < 0)
				fprintf(stderr, "pmc-stat: read(%s): %s\n",
					c->name, strerror(-ret));
			if (ret)
				continue;
			c->count.value += one->value;
			c->count.enabled += one->enabled;
			c->count.running += one->running;
			per->count = *one;
			/* Times are both 0 when the task never ran: the value is exact. */
			per->counted = one->running || !one->enabled;
			c->counted |= per->counted;
		}
	}
	for (i = 0; i < nr_counters; i++)
		counters[i].scaled = pmc_count_scaled(&counters[i].count);
}

/*
 * The scaled count of the first counter of @config that counted, on the
 * target being printed or in total; false if none did.
 */
static bool counted_value(__u64 config, double *val)
{
	size_t i;

	for (i = 0; i < nr_counters; i++) {
		const struct stat_counter *c = &counters[i];

		if (c->config != config)
			continue;
		if (print_target < 0 && c->counted) {
			*val = c->scaled;
			return true;
		}
		if (print_target >= 0 && c->per[print_target].counted) {
			*val = pmc_count_scaled(&c->per[print_target].count);
			return true;
		}
	}
	return false;
}

/* The ratio that applies to @c, with its value in @val; NULL if none. */
static const struct stat_ratio *find_ratio(const struct stat_counter *c,
					   double elapsed_ns, double *val)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(stat_ratios); i++) {
		const struct stat_ratio *r = &stat_ratios[i];
		double d;

		if (r->num_config != c->config)
			continue;
		if (r->den_config == RATIO_WALL_CLOCK)
			d = elapsed_ns;
		else if (!counted_value(r->den_config, &d))
			continue;
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

static void runs_add(struct stat_runs *r, double val)
{
	r->n++;
	r->sum += val;
	r->sumsq += val * val;
}

/* -r: the standard error of the mean, perf's "+-". */
static double runs_stderr(const struct stat_runs *r)
{
	double mean, var;

	if (r->n < 2)
		return 0;
	mean = r->sum / r->n;
	var = (r->sumsq - r->n * mean * mean) / (r->n - 1);
	return var > 0 ? sqrt(var / r->n) : 0;
}

/* ... in % of the mean. */
static double rel_stderr(const struct stat_runs *r)
{
	return r->sum > 0 ? 100.0 * runs_stderr(r) * r->n / r->sum : 0;
}

/* After a mean of -r's runs, as perf stat prints it. */
static void print_noise(const struct stat_runs *r)
{
	fprintf(stderr, "  ( +- %5.2f%% )", rel_stderr(r));
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
	if (print_target >= 0)
		fprintf(stderr, "%s%s", target_names[print_target], s);
	if (!c->supported || !c->counted)
		fprintf(stderr, "%s%s%s%s", c->supported ? "<not counted>" :
			"<not supported>", s, s, c->name);
	else if (c->unit == PMC_UNIT_NSEC)
		fprintf(stderr, "%.2f%smsec%s%s", c->scaled / 1e6, s, s, c->name);
	else
		fprintf(stderr, "%.0f%s%s%s", c->scaled, s, s, c->name);
	if (repeat > 1)
		fprintf(stderr, "%s%.2f%%", s, rel_stderr(&c->runs));
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
	if (print_target >= 0 && cpus)
		fprintf(stderr, "\"cpu\" : \"%d\", ", cpus[print_target]);
	else if (print_target >= 0)
		fprintf(stderr, "\"thread\" : \"%s\", ",
			target_names[print_target]);
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
		fprintf(stderr, ", \"variance\" : %.2f", rel_stderr(&c->runs));
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
	if (print_target >= 0)
		fprintf(stderr, "%-24s", target_names[print_target]);
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
		print_noise(&c->runs);
	if (scaled)
		fprintf(stderr, "  (%.1f%% counted)",
			pmc_count_percent(&c->count));
	fputc('\n', stderr);
}

/* One count, in the format the options chose. */
static void print_count(const struct stat_counter *c, double elapsed_ns)
{
	if (json)
		print_counter_json(c, elapsed_ns);
	else if (csv_sep)
		print_counter_csv(c, elapsed_ns);
	else
		print_counter(c, elapsed_ns);
}

/* One counter's total, or with --per-thread or -A each target's count. */
static void print_one(const struct stat_counter *c, double elapsed_ns)
{
	struct stat_counter one = *c;

	if (!per_target) {
		print_count(c, elapsed_ns);
		return;
	}
	for (print_target = 0; print_target < (long)nr_targets; print_target++) {
		one.count = c->per[print_target].count;
		one.counted = c->per[print_target].counted;
		one.scaled = pmc_count_scaled(&one.count);
		print_count(&one, elapsed_ns);
	}
	print_target = -1;
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

/* The totals, and the elapsed time of each run in @wall. */
static void print_stats(char **cmd, const struct stat_runs *wall)
{
	double elapsed_ns = wall->sum / wall->n;
	size_t i;

	if (csv_sep || json) {
		for (i = 0; i < nr_counters; i++)
			print_one(&counters[i], elapsed_ns);
		explain_not_counted();
		return;
	}
	fprintf(stderr, "\n Counter stats for ");
	if (cpu_list) {
		fprintf(stderr, "'CPU(s) %s'", cpu_list);
	} else if (cpus) {
		fprintf(stderr, "'system wide'");
	} else if (tids) {
		fprintf(stderr, "%s id '%s'", attach_whole ? "process" : "thread",
			attach_list);
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

	fprintf(stderr, "\n%15.6f", elapsed_ns / 1e9);
	if (repeat > 1)
		fprintf(stderr, " +- %.6f", runs_stderr(wall) / 1e9);
	fprintf(stderr, " seconds time elapsed");
	if (repeat > 1)
		print_noise(wall);
	fprintf(stderr, "\n\n");
	explain_not_counted();
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void count_sub(struct pmc_count *a, const struct pmc_count *b)
{
	a->value -= b->value;
	a->enabled -= b->enabled;
	a->running -= b->running;
}

/*
 * -I: print what each counter counted since the last interval, stamped
 * with the seconds since the count began; then leave the totals as they
 * were read. Every count is made an interval's before any is printed,
 * so that a ratio's denominator is one too, wherever it is in the list.
 * The @final one, which ends with the count, only if something counted
 * in it: as perf stat, no empty interval after the command.
 */
static void print_interval(double start_ns, double *last_ns, bool final)
{
	double now = now_ns();
	bool counted = false;
	size_t i, t;

	read_counters();
	for (i = 0; i < nr_counters; i++) {
		struct stat_counter *c = &counters[i];
		struct pmc_count total = c->count;

		count_sub(&c->count, &c->last);
		c->last = total;
		c->scaled = pmc_count_scaled(&c->count);
		counted |= c->count.value || c->count.running;
		for (t = 0; t < nr_targets; t++) {
			struct stat_target_count *per = &c->per[t];
			struct pmc_count now_t = per->count;

			count_sub(&per->count, &per->last);
			per->last = now_t;
		}
	}
	if (final && !counted)
		return;
	if (*last_ns == start_ns && !json && !csv_sep)
		fprintf(stderr, "#%14s %15s      %s\n", "time", "counts", "event");
	interval_time = (now - start_ns) / 1e9;
	for (i = 0; i < nr_counters; i++)
		print_one(&counters[i], now - *last_ns);
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
		/* The interval in which the count ends is the last, below. */
		if (interval_ms && now_ns() >= next && !done(arg)) {
			print_interval(start_ns, &last, false);
			next += interval_ms * 1e6;
		}
	}
	if (interval_ms)
		print_interval(start_ns, &last, true);
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

static bool tasks_done(void *arg)
{
	(void)arg;
	return pmc_interrupted || !pmc_any_alive(attach_ids, nr_attach);
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
		runs_add(&c->runs, c->scaled);
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

		c->counted = c->runs.n > 0;
		if (!c->counted)
			continue;
		c->scaled = c->runs.sum / c->runs.n;
		c->count.value = llround(c->scaled);
		c->count.enabled = c->sum_enabled;
		c->count.running = c->sum_running;
	}
}

/*
 * One count: of a new COMMAND, of the threads of -p or -t while COMMAND
 * runs, or of them until they exit or SIGINT. The counts are left in
 * counters[]; returns COMMAND's exit status, or -1 (message printed) or
 * -127 (COMMAND could not run) as pmc-stat's own exit status, negated.
 */
static int count_once(char **cmd, double *elapsed_ns)
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
	} else if (!tids) {
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
		if (open_counters(0))
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
			count_until(tasks_done, NULL, start);
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
		{ "tid",             required_argument, NULL, 't' },
		{ "per-thread",      no_argument,       NULL, 'T' },
		{ "no-aggr",         no_argument,       NULL, 'A' },
		{ "all-cpus",        no_argument,       NULL, 'a' },
		{ "cpu",             required_argument, NULL, 'C' },
		{ "repeat",          required_argument, NULL, 'r' },
		{ "field-separator", required_argument, NULL, 'x' },
		{ "json",            no_argument,       NULL, 'j' },
		{ "interval-print",  required_argument, NULL, 'I' },
		{ "list",            no_argument,       NULL, 'l' },
		{ "help",            no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct stat_runs wall = { 0 };	/* each run's elapsed time */
	bool per_thread = false;
	double run_ns;
	unsigned int run;
	int opt, status = 0;
	char **cmd;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	/* '+': options after COMMAND belong to COMMAND. */
	while ((opt = getopt_long(argc, argv, "+e:p:t:aAC:r:x:jI:lh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'e':
			add_events(optarg);
			break;
		case 'p':
		case 't':
			list_threads(optarg, opt == 'p');
			break;
		case 'T':
			per_thread = per_target = true;
			break;
		case 'A':
			per_target = true;
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
		case 'l':
			return list_events();
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	cmd = argv + optind;
	if (!cmd[0] && !tids && !cpus) {
		usage(stderr);
		return 2;
	}
	if (cpus && tids) {
		fprintf(stderr, "pmc-stat: -p and -t count tasks, -a and -C CPUs: choose one\n");
		return 2;
	}
	if (per_target && !(per_thread ? tids : cpus)) {
		fprintf(stderr, "pmc-stat: %s\n", per_thread ?
			"--per-thread splits the counts of -p or -t" :
			"-A splits the counts of -a or -C");
		return 2;
	}
	if (per_target && repeat > 1) {
		fprintf(stderr, "pmc-stat: --per-thread and -A print one run: not with -r\n");
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
	if (!events.nr) {
		add_events(cpus ? DEFAULT_CPU_EVENTS : DEFAULT_EVENTS);
		/* Without a PMU they would only read <not supported>. */
		if (try_event(HW(CPU_CYCLES)) != ENODEV)
			add_events(DEFAULT_HW_EVENTS);
	}
	note_precise();
	alloc_counters();
	if (per_target)
		name_targets();

	/* SIGINT stops the count (and the command) but not the report. */
	for (run = 0; run < repeat && !pmc_interrupted; run++) {
		status = count_once(cmd, &run_ns);
		if (status < 0)
			return -status;
		accumulate();
		runs_add(&wall, run_ns);
	}
	if (interval_ms)	/* the intervals were the report */
		return status;
	repeat = run;		/* fewer after SIGINT */
	average();
	print_stats(cmd, &wall);
	return status;
}
