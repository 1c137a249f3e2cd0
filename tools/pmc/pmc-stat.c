// SPDX-License-Identifier: GPL-2.0
/*
 * pmc-stat: count events while a command (or an existing task) runs,
 * using pmc_open(2), and print the totals like perf stat.
 *
 *	pmc-stat [-e EVENT,...] [-p PID] [--] COMMAND [ARGS...]
 *	pmc-stat [-e EVENT,...] -p PID
 *
 * Counters are inherited, so a command's whole process tree is counted.
 * "{a,b}" opens a group, scheduled on the PMU as a unit; a ":D" suffix
 * pins an event or group (perf's spelling).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>

#include "pmc-child.h"
#include "pmc-events.h"

#define DEFAULT_EVENTS	"task-clock,context-switches,cpu-migrations,page-faults"

/* How often -p without a command checks whether the task still exists. */
#define PID_POLL_NS	100000000L

struct stat_counter {
	const char *name;		/* as the user spelt it */
	__u64 config;
	enum pmc_event_unit unit;
	int fd;				/* -1: not open */
	size_t leader;			/* index of the group leader */
	bool pinned;			/* ":D" */
	bool leads;			/* opened as a group leader */
	bool supported;			/* false: no PMU for it */
	bool counted;			/* ran at least once */
	__u64 value, enabled, running;
	double scaled;			/* value * enabled / running */
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

static struct stat_counter *counters;
static size_t nr_counters;
static bool user_only;			/* fell back to exclude_kernel */
static volatile sig_atomic_t interrupted;

static void usage(FILE *out)
{
	fprintf(out,
		"usage: pmc-stat [-e EVENT,...] [-p PID] [--] COMMAND [ARGS...]\n"
		"       pmc-stat [-e EVENT,...] -p PID\n"
		"\n"
		"Run COMMAND and print event counts for it, or count an existing\n"
		"task PID while COMMAND runs or until it exits or SIGINT.\n"
		"\n"
		"  -e, --event=EVENT,...  events to count (repeatable; default\n"
		"                         " DEFAULT_EVENTS ");\n"
		"                         {EVENT,...} is a group, EVENT:D pinned\n"
		"  -p, --pid=PID          attach to task PID instead of COMMAND\n"
		"  -h, --help             show this help\n"
		"\n"
		"Events:\n");
	pmc_events_list(out);
}

static void __attribute__((noreturn)) bad_group(const char *arg)
{
	fprintf(stderr, "pmc-stat: bad group syntax in '%s': use {EVENT,EVENT,...}\n",
		arg);
	exit(2);
}

/*
 * Counters keep pointers into @arg's copy, so it is never freed. Groups
 * are "{a,b,...}"; ":D" after an event (or a group's closing brace, or
 * its leader) pins it.
 */
static void add_events(const char *arg)
{
	char *list = strdup(arg);
	char *name, *save = NULL;
	bool empty = true, in_group = false;
	size_t leader = 0;

	if (!list) {
		perror("pmc-stat");
		exit(1);
	}
	for (name = strtok_r(list, ",", &save); name;
	     name = strtok_r(NULL, ",", &save)) {
		struct stat_counter *c;
		bool opens = false, closes = false, pinned = false;
		size_t len;

		if (name[0] == '{') {
			if (in_group)
				bad_group(arg);
			opens = true;
			name++;
		}
		len = strlen(name);
		if (len > 2 && !strcmp(name + len - 2, ":D")) {
			pinned = true;
			name[len -= 2] = '\0';
		}
		if (len && name[len - 1] == '}') {
			if (!in_group && !opens)
				bad_group(arg);
			closes = true;
			name[--len] = '\0';
		}
		if (!len)
			bad_group(arg);
		empty = false;
		counters = realloc(counters, (nr_counters + 1) * sizeof(*c));
		if (!counters) {
			perror("pmc-stat");
			exit(1);
		}
		c = &counters[nr_counters++];
		memset(c, 0, sizeof(*c));
		c->name = name;
		c->fd = -1;
		c->supported = true;
		if (opens) {
			in_group = true;
			leader = nr_counters - 1;
		}
		c->leader = in_group ? leader : nr_counters - 1;
		if (pinned)
			counters[c->leader].pinned = true;
		if (closes)
			in_group = false;
		if (pmc_event_parse(name, &c->config, &c->unit)) {
			fprintf(stderr, "pmc-stat: unknown event '%s'; valid events:\n",
				name);
			pmc_events_list(stderr);
			exit(2);
		}
	}
	if (in_group)
		bad_group(arg);
	if (empty) {
		fprintf(stderr, "pmc-stat: empty event list; valid events:\n");
		pmc_events_list(stderr);
		exit(2);
	}
}

static void close_counters(void)
{
	size_t i;

	for (i = 0; i < nr_counters; i++) {
		if (counters[i].fd >= 0)
			close(counters[i].fd);
		counters[i].fd = -1;
	}
}

/*
 * Open every counter on @pid. Events without a PMU are marked and
 * skipped; any other failure is fatal and returns -1 (message printed).
 */
static int open_counters(pid_t pid)
{
	size_t i;

	for (i = 0; i < nr_counters; i++) {
		struct stat_counter *c = &counters[i];
		/* A member whose leader could not open counts on its own. */
		int group_fd = c->leader == i ? -1 : counters[c->leader].fd;
		struct pmc_attr attr;
		int err;

		memset(&attr, 0, sizeof(attr));
		attr.config = c->config;
		attr.read_format = PMC_FORMAT_TOTAL_TIME_ENABLED |
				   PMC_FORMAT_TOTAL_TIME_RUNNING;
		attr.exclude_kernel = user_only;
		attr.inherit = 1;
		attr.pinned = c->pinned && group_fd < 0;
		/* Leaders start once their groups are complete. */
		c->leads = group_fd < 0;
		attr.disabled = c->leads;
		c->fd = sys_pmc_open(&attr, pid, -1, group_fd,
				     PMC_FLAG_FD_CLOEXEC);
		/* At pmc_paranoid 2 only user-mode counting is allowed. */
		if (c->fd < 0 && errno == EACCES && !user_only) {
			user_only = true;
			attr.exclude_kernel = 1;
			c->fd = sys_pmc_open(&attr, pid, -1, group_fd,
					     PMC_FLAG_FD_CLOEXEC);
		}
		if (c->fd >= 0)
			continue;

		err = errno;
		if (err == ENOSYS) {
			fprintf(stderr, "pmc-stat: pmc_open not supported by this kernel (ENOSYS)\n");
			goto fail;
		}
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
	for (i = 0; i < nr_counters; i++) {
		struct stat_counter *c = &counters[i];

		if (c->fd < 0 || !c->leads)
			continue;
		if (ioctl(c->fd, PMC_IOC_ENABLE) < 0) {
			fprintf(stderr, "pmc-stat: enable(%s): %s\n", c->name,
				strerror(errno));
			goto fail;
		}
	}
	return 0;
fail:
	close_counters();
	return -1;
}

static void read_counters(void)
{
	size_t i;

	for (i = 0; i < nr_counters; i++) {
		struct stat_counter *c = &counters[i];
		__u64 buf[3];
		ssize_t n;

		if (c->fd < 0)
			continue;
		n = read(c->fd, buf, sizeof(buf));
		if (n != sizeof(buf)) {
			/* 0 is a pinned group in error state: never counted. */
			if (n == 0)
				fprintf(stderr, "pmc-stat: warning: %s: pinned group did not fit on the PMU (error state)\n",
					c->name);
			else if (n < 0)
				fprintf(stderr, "pmc-stat: read(%s): %s\n",
					c->name, strerror(errno));
			else if (n > 0)
				fprintf(stderr, "pmc-stat: read(%s): short read (%zd bytes)\n",
					c->name, n);
			continue;
		}
		c->value = buf[0];
		c->enabled = buf[1];
		c->running = buf[2];
		c->scaled = c->value;
		/* Times are both 0 when the task never ran: the value is exact. */
		c->counted = c->running || !c->enabled;
		if (c->running && c->running < c->enabled)
			c->scaled = (double)c->value * c->enabled / c->running;
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

/* Format the "# ..." comment for @c into @buf; false if none applies. */
static bool format_ratio(const struct stat_counter *c, double elapsed_ns,
			 char *buf, size_t size)
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
		snprintf(buf, size, " # %8.*f%s", r->precision,
			 c->scaled / d * r->scale, r->label);
		return true;
	}
	return false;
}

static void print_counter(const struct stat_counter *c, double elapsed_ns)
{
	bool scaled = c->running < c->enabled;
	bool commented;
	char comment[64];

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
		fprintf(stderr, "%15" PRIu64 "      ", (uint64_t)c->value);

	commented = format_ratio(c, elapsed_ns, comment, sizeof(comment));
	if (!commented && !scaled) {
		fprintf(stderr, "%s\n", c->name);
		return;
	}
	fprintf(stderr, "%-25s%s", c->name, commented ? comment : "");
	if (scaled)
		fprintf(stderr, "  (%.1f%% counted)",
			100.0 * c->running / c->enabled);
	fputc('\n', stderr);
}

static void print_stats(pid_t attach_pid, char **cmd, double elapsed_ns)
{
	size_t i;

	fprintf(stderr, "\n Counter stats for ");
	if (attach_pid > 0) {
		fprintf(stderr, "process id '%d'", (int)attach_pid);
	} else {
		fputc('\'', stderr);
		for (i = 0; cmd[i]; i++)
			fprintf(stderr, "%s%s", i ? " " : "", cmd[i]);
		fputc('\'', stderr);
	}
	fprintf(stderr, "%s:\n\n", user_only ? " (user only)" : "");

	for (i = 0; i < nr_counters; i++)
		print_counter(&counters[i], elapsed_ns);

	fprintf(stderr, "\n%15.6f seconds time elapsed\n\n", elapsed_ns / 1e9);
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void on_sigint(int sig)
{
	(void)sig;
	interrupted = 1;
}

/*
 * Release the held @child and wait for it: its exit code, or -1 with the
 * counters closed if it could not exec.
 */
static int run_command(struct pmc_child *child, char **cmd)
{
	if (pmc_child_release(child, cmd)) {
		close_counters();
		return -1;
	}
	pmc_child_reap(child, false);
	return child->status;
}

/* -p PID with no command: count until PID is gone or SIGINT. */
static void wait_for_task(pid_t pid)
{
	struct timespec ts = { 0, PID_POLL_NS };

	while (!interrupted) {
		if (kill(pid, 0) < 0 && errno == ESRCH)
			break;
		nanosleep(&ts, NULL);
	}
}

static pid_t parse_pid(const char *arg)
{
	char *end;
	long val;

	errno = 0;
	val = strtol(arg, &end, 10);
	if (errno || end == arg || *end || val <= 0 || val != (pid_t)val) {
		fprintf(stderr, "pmc-stat: invalid pid '%s'\n", arg);
		exit(2);
	}
	return val;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "event", required_argument, NULL, 'e' },
		{ "pid",   required_argument, NULL, 'p' },
		{ "help",  no_argument,       NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct sigaction sa;
	struct pmc_child child;
	pid_t attach_pid = 0;
	char **cmd;
	double start;
	int opt, status = 0;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	/* '+': options after COMMAND belong to COMMAND. */
	while ((opt = getopt_long(argc, argv, "+e:p:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'e':
			add_events(optarg);
			break;
		case 'p':
			attach_pid = parse_pid(optarg);
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
	if (!cmd[0] && !attach_pid) {
		usage(stderr);
		return 2;
	}
	if (!nr_counters)
		add_events(DEFAULT_EVENTS);

	/* SIGINT stops the count (and the command) but not the report. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigint;
	sigemptyset(&sa.sa_mask);

	if (!attach_pid) {
		if (pmc_child_spawn(&child, "pmc-stat", cmd))
			return 1;
		sigaction(SIGINT, &sa, NULL);
		if (open_counters(child.pid)) {
			pmc_child_abort(&child);
			return 1;
		}
		start = now_ns();
		status = run_command(&child, cmd);
		if (status < 0)
			return 127;
	} else {
		if (open_counters(attach_pid))
			return 1;
		sigaction(SIGINT, &sa, NULL);
		start = now_ns();
		if (cmd[0]) {
			if (pmc_child_spawn(&child, "pmc-stat", cmd))
				return 1;
			status = run_command(&child, cmd);
			if (status < 0)
				return 127;
		} else {
			wait_for_task(attach_pid);
		}
	}

	/* Counters outlive their task, so reading after exit is fine. */
	read_counters();
	print_stats(attach_pid, cmd, now_ns() - start);
	close_counters();
	return status;
}
