// SPDX-License-Identifier: GPL-2.0
/*
 * Selftests for pmc_open(2) scheduling and inherit.
 *
 * Scheduling: flexible groups that do not fit the PMU take turns on it
 * (multiplexing), pinned groups outrank them or enter the error state,
 * exclusive groups have the PMU to themselves, and the rotation interval
 * is a sysctl. These tests need the emulated PMU (pmc_emu= on the kernel
 * command line): its counters advance at fixed rates while they are on
 * the PMU, so every true count is known. Elsewhere they skip.
 *
 * Inherit: counters opened with attr.inherit follow the processes and
 * threads forked after the open, and a child's counts and times are
 * added to the original counter when it exits. These tests use software
 * counters and run everywhere.
 *
 * Every counter excludes kernel mode, so the binary also runs as an
 * unprivileged user at pmc_paranoid 2; what needs root says so and skips.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "../kselftest_harness.h"
#include "pmc_harness.h"

#define MUX_INTERVAL_PATH	"/proc/sys/kernel/pmc_mux_interval_ms"

#define GROUP_TIMES	(PMC_FORMAT_GROUP | ALL_TIMES)

#define SW(id)		PMC_CONFIG(PMC_TYPE_SOFTWARE, (id))
#define NO_KERNEL_SWITCHES \
	"context switches happen in kernel mode, which this user may not count (as with perf)"

/* CPU time burnt where a counter only has to move. */
#define SHORT_BURN_NS	(30 * NSEC_PER_MSEC)

/* Multiplexing: each event alone, then all groups together. */
#define ALONE_BURN_NS	(100 * NSEC_PER_MSEC)
#define MUX_BURN_NS	(400 * NSEC_PER_MSEC)
#define MUX_MAX_ERROR	0.05
#define MUX_TRIES	3
#define MAX_GROUPS	64

/* Inherit: what each child burns, and how many there are. */
#define CHILD_BURN_NS	(20 * NSEC_PER_MSEC)
#define NR_CHILDREN	10
#define NR_THREADS	8
#define CHAIN_DEPTH	20
#define CHAIN_BURN_NS	(5 * NSEC_PER_MSEC)
#define NR_SLEEPERS	4
#define NR_SLEEPS	5
#define DISABLED_BURN_NS (50 * NSEC_PER_MSEC)

#define BASE_SLACK_NS	(2 * NSEC_PER_MSEC)
#define SWITCH_SLACK_NS	(150 * NSEC_PER_USEC)

/* Thousands of tiny children, within a time budget per mode. */
#define SCALE_CHILDREN	2000
#define SCALE_BATCH	50
#define SCALE_BLOCK_EVERY 8
#define SCALE_BUDGET_NS	(30 * NSEC_PER_SEC)
#define TINY_BURN_NS	(10 * NSEC_PER_USEC)	/* one pass of burn_cpu() */

/* Events every model maps: groups of up to six different counters. */
static const unsigned int fill_events[] = {
	PMC_HW_CPU_CYCLES, PMC_HW_INSTRUCTIONS, PMC_HW_BRANCH_INSTRUCTIONS,
	PMC_HW_BRANCH_MISSES, PMC_HW_CACHE_REFERENCES, PMC_HW_CACHE_MISSES,
};
#define MAX_GROUP_SIZE	ARRAY_SIZE(fill_events)

/* What a read() of a leader opened with GROUP_TIMES returns. */
struct group_reading {
	__u64 nr;
	__u64 enabled;
	__u64 running;
	__u64 values[MAX_GROUP_SIZE + 2];
};

/* How a counter is opened, beyond its event. */
enum {
	OPEN_DISABLED	= 1 << 0,
	OPEN_PINNED	= 1 << 1,
	OPEN_EXCLUSIVE	= 1 << 2,
	OPEN_INHERIT	= 1 << 3,
};

/*
 * open_counter() - a user-mode counter on the calling task, or fail
 *
 * exclude_kernel is set: pmc_paranoid 2 demands it from an unprivileged
 * caller, and neither clocks nor the emulated PMU care. Context switches
 * and migrations, which happen in kernel mode, count it where allowed.
 *
 * A test that compares a count with its task's CPU time takes that time
 * after the open: the open's own CPU time is the opener's, and no
 * counter sees it (the first counter after a quiet spell patches kernel
 * text to turn the hooks' static key on; an allocation may stall). Once,
 * on the debug kernel under TCG after inherit_2000_children's 2,400
 * forks, prctl_in_child's opener used 57 ms that its counter did not
 * count, five times its 10% margin.
 */
static int open_counter(struct __test_metadata *_metadata, __u64 config,
			int group_fd, __u32 read_format, unsigned int flags)
{
	struct pmc_attr attr;

	if (config == SW(PMC_SW_CONTEXT_SWITCHES) ||
	    config == SW(PMC_SW_CPU_MIGRATIONS))
		pmc_sw_attr_kernel(&attr, PMC_CONFIG_ID(config), read_format);
	else
		pmc_sw_attr(&attr, 0, read_format);
	attr.config = config;
	attr.disabled = !!(flags & OPEN_DISABLED);
	attr.pinned = !!(flags & OPEN_PINNED);
	attr.exclusive = !!(flags & OPEN_EXCLUSIVE);
	attr.inherit = !!(flags & OPEN_INHERIT);
	return counter_open(_metadata, &attr, 0, -1, group_fd);
}

/* Read a GROUP_TIMES leader of @nr counters; not in the error state. */
static void group_times_read(struct __test_metadata *_metadata, int fd,
			     unsigned int nr, struct group_reading *g)
{
	/* struct group_reading is the GROUP_TIMES layout, all __u64 */
	ASSERT_EQ(nr, group_read(_metadata, fd, GROUP_TIMES, (__u64 *)g,
				 sizeof(*g) / sizeof(__u64)));
}

/* prctl(): all counters on the calling task on or off at one instant. */
static void task_counters(struct __test_metadata *_metadata, bool enable)
{
	ASSERT_EQ(0, prctl(enable ? PR_TASK_PMC_ENABLE : PR_TASK_PMC_DISABLE,
			   0, 0, 0, 0)) {
		TH_LOG("prctl(PR_TASK_PMC_%s): %s",
		       enable ? "ENABLE" : "DISABLE", strerror(errno));
	}
}

/* A group of @nr different hardware counters; fds[0] leads. */
static void open_hw_group(struct __test_metadata *_metadata, int *fds,
			  unsigned int nr, unsigned int flags)
{
	unsigned int i;

	ASSERT_GE(MAX_GROUP_SIZE, nr);
	fds[0] = open_counter(_metadata, HW(fill_events[0]), -1, GROUP_TIMES,
			      flags);
	for (i = 1; i < nr; i++)
		fds[i] = open_counter(_metadata, HW(fill_events[i]), fds[0],
				      ALL_TIMES, 0);
}

/* Never multiplexed out: time_running within 1% of time_enabled. */
static bool always_ran(__u64 enabled, __u64 running)
{
	return enabled > 0 && running <= enabled &&
	       running >= enabled - enabled / 100;
}

/* Took turns with one other group: ran 30% to 70% of the time. */
static bool ran_about_half(__u64 enabled, __u64 running)
{
	return running >= enabled * 3 / 10 && running <= enabled * 7 / 10;
}

static __u64 process_cputime_ns(void)
{
	return clock_ns(CLOCK_PROCESS_CPUTIME_ID);
}

/*
 * The CPU time of this process and of the children it has reaped, with
 * theirs: all that an inherited task-clock of this process may count,
 * the exit paths included.
 */
static __u64 family_cputime_ns(void)
{
	__u64 ns = process_cputime_ns();
	struct rusage ru;

	if (!getrusage(RUSAGE_CHILDREN, &ru))
		ns += (__u64)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) *
		      NSEC_PER_SEC +
		      (__u64)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) *
		      NSEC_PER_USEC;
	return ns;
}

/*
 * slab_baseline() - the pmc caches' active objects before a test
 *
 * A task keeps its context from its first counter until it exits, so
 * one counter is opened and closed first: this task's context is then
 * part of the baseline.
 *
 * Return: false if /proc/slabinfo cannot be read (it needs root).
 */
static bool slab_baseline(struct __test_metadata *_metadata, long *base)
{
	close(open_counter(_metadata, SW(PMC_SW_TASK_CLOCK), -1, 0, 0));
	if (access("/proc/slabinfo", R_OK))
		return false;
	slab_read_baseline(_metadata, base);
	return true;
}

/* Inherited copies are freed late: give the caches ten seconds. */
#define SLAB_WAIT_MS	10000

/* Report the leak check as skipped, but never hide a failure. */
static void skip_slab_check(struct __test_metadata *_metadata)
{
	if (_metadata->exit_code == KSFT_PASS)
		SKIP(return, "counts checked; leak check skipped: /proc/slabinfo is not readable");
}

FIXTURE(sched) {
	char emu_name[16];		/* pmc_emu= of the command line, or "" */
	const struct emu_model *emu;	/* the model it names, if known */
	int hw_err;			/* errno of opening cycles, 0: opened */
	int cpu;			/* where the hardware tests run */
	bool root;
	long saved_interval;		/* pmc_mux_interval_ms to restore */
	bool interval_changed;
};

/* pmc_emu=NAME on the kernel command line, and the model it names. */
static void find_emu_model(FIXTURE_DATA(sched) *self)
{
	const char *name = cmdline_emu();

	snprintf(self->emu_name, sizeof(self->emu_name), "%s", name ?: "");
	self->emu = emu_model_by_name(self->emu_name);
}

FIXTURE_SETUP(sched)
{
	struct pmc_attr attr;
	int cpus[64], n;

	require_pmc_open(_metadata);
	self->root = geteuid() == 0;
	find_emu_model(self);
	pmc_sw_attr(&attr, 0, 0);
	attr.config = HW(PMC_HW_CPU_CYCLES);
	self->hw_err = pmc_open_errno(&attr, 0, -1, -1, 0);
	n = allowed_cpus(cpus, ARRAY_SIZE(cpus));
	ASSERT_LE(1, n);
	self->cpu = cpus[n - 1];
}

FIXTURE_TEARDOWN(sched)
{
	if (self->interval_changed)
		EXPECT_EQ(0, write_int_file(MUX_INTERVAL_PATH,
					    self->saved_interval));
}

static bool have_emulated_pmu(FIXTURE_DATA(sched) *self)
{
	return self->emu && !self->hw_err;
}

/*
 * Hardware tests need the emulated PMU, whose true counts are known,
 * with at least @min counters. They run on one CPU, so that a single
 * PMU and rotation timer are involved.
 */
#define REQUIRE_EMULATED_PMU(min) do {					\
	if (!self->emu_name[0])						\
		SKIP(return, "no emulated PMU (boot with pmc_emu=p6|k7|fam17h); hardware events: %s", \
		     self->hw_err ? strerror(self->hw_err) :		\
		     "a real PMU, whose true counts are unknown");	\
	if (!self->emu)							\
		SKIP(return, "pmc_emu=%s is not a model this test knows", \
		     self->emu_name);					\
	ASSERT_EQ(0, self->hw_err) {					\
		TH_LOG("pmc_emu=%s, but opening cycles failed: %s",	\
		       self->emu_name, strerror(self->hw_err));		\
	}								\
	if (self->emu->nr_counters < (min))				\
		SKIP(return, "%s has %u counters, the test needs %d",	\
		     self->emu->name, self->emu->nr_counters, (min));	\
	ASSERT_EQ(0, pin_to_cpu(self->cpu));				\
} while (0)

/*
 * measure_groups() - count @nr single-counter groups over one loop
 *
 * The groups and a pinned task-clock are opened disabled and switched
 * on and off together by prctl(), so that all of them cover the same
 * stretch of execution. The task-clock is a software group, which
 * always fits: it says how long that stretch was.
 *
 * Return: the task-clock, in ns.
 */
static __u64 measure_groups(struct __test_metadata *_metadata,
			    const unsigned int *events, int nr, __u64 burn_ns,
			    struct pmc_reading *r)
{
	int fds[MAX_GROUPS], clock, i;
	struct pmc_reading c;

	ASSERT_GE(MAX_GROUPS, nr);
	clock = open_counter(_metadata, SW(PMC_SW_TASK_CLOCK), -1, ALL_TIMES,
			     OPEN_DISABLED | OPEN_PINNED);
	for (i = 0; i < nr; i++)
		fds[i] = open_counter(_metadata, HW(events[i]), -1, ALL_TIMES,
				      OPEN_DISABLED);
	task_counters(_metadata, true);
	burn_cpu(burn_ns);
	task_counters(_metadata, false);

	for (i = 0; i < nr; i++) {
		r[i] = counter_read(_metadata, fds[i], ALL_TIMES);
		close(fds[i]);
	}
	c = counter_read(_metadata, clock, ALL_TIMES);
	close(clock);
	EXPECT_TRUE(always_ran(c.enabled, c.running)) {
		TH_LOG("pinned task-clock: enabled %llu running %llu ns",
		       (unsigned long long)c.enabled,
		       (unsigned long long)c.running);
	}
	EXPECT_LE(burn_ns * 9 / 10, c.value);
	return c.value;
}

/*
 * @nr equal groups took turns on @nr_counters counters, none of which
 * was ever idle: together they ran nr_counters/nr of their enabled time.
 */
static void expect_pmu_shared(struct __test_metadata *_metadata,
			      const struct pmc_reading *r, int nr,
			      int nr_counters)
{
	double want = (double)nr_counters / nr, share;
	__u64 enabled = 0, running = 0;
	int i;

	for (i = 0; i < nr; i++) {
		enabled += r[i].enabled;
		running += r[i].running;
	}
	ASSERT_LT(0, enabled);
	share = (double)running / enabled;
	EXPECT_TRUE(share >= want * 0.9 && share <= want * 1.1) {
		TH_LOG("%d groups on %d counters ran %.3f of their enabled time, want %.3f",
		       nr, nr_counters, share, want);
	}
}

/* Time-sharing groups: each was on the PMU, and each was left out. */
static void expect_took_turns(struct __test_metadata *_metadata,
			      const unsigned int *events,
			      const struct pmc_reading *r, int nr)
{
	int i;

	for (i = 0; i < nr; i++) {
		EXPECT_TRUE(r[i].running > 0 && r[i].running < r[i].enabled) {
			TH_LOG("group %d (%s): enabled %llu running %llu ns",
			       i, hw_names[events[i]],
			       (unsigned long long)r[i].enabled,
			       (unsigned long long)r[i].running);
		}
	}
}

/*
 * Twice as many single-counter groups as counters: four different
 * events, then cycles. P6 has bus-cycles; the AMD models do not.
 */
static int mux_events(const struct emu_model *emu, unsigned int *events)
{
	static const unsigned int four[] = {
		PMC_HW_CPU_CYCLES, PMC_HW_INSTRUCTIONS,
		PMC_HW_BRANCH_INSTRUCTIONS, PMC_HW_BRANCH_MISSES,
	};
	int nr = 2 * emu->nr_counters, i;

	for (i = 0; i < nr; i++)
		events[i] = i < 4 ? four[i] : PMC_HW_CPU_CYCLES;
	if (!emu->amd)		/* AMD models do not map bus-cycles */
		events[3] = PMC_HW_BUS_CYCLES;
	return nr;
}

/* How far a multiplexed reading, scaled up, is from @want. */
static double mux_error(const struct pmc_reading *r, double want)
{
	double scaled = (double)r->value * r->enabled / r->running;

	return (scaled > want ? scaled - want : want - scaled) / want;
}

/*
 * The scaled estimate value * enabled / running of each multiplexed
 * group matches the rate of its event alone on the PMU, per ns of
 * task-clock.
 */
TEST_F(sched, mux_accuracy)
{
	struct pmc_reading alone, r[MAX_GROUPS];
	double rate[PMC_HW_MAX] = { 0 }, worst = 0, want, err;
	unsigned int events[MAX_GROUPS];
	int nr, i, try;
	__u64 clock;

	REQUIRE_EMULATED_PMU(2);
	nr = mux_events(self->emu, events);

	/* The reference: each different event alone on the PMU. */
	for (i = 0; i < 4; i++) {
		clock = measure_groups(_metadata, &events[i], 1, ALONE_BURN_NS,
				       &alone);
		ASSERT_TRUE(always_ran(alone.enabled, alone.running)) {
			TH_LOG("%s alone was multiplexed: enabled %llu running %llu",
			       hw_names[events[i]],
			       (unsigned long long)alone.enabled,
			       (unsigned long long)alone.running);
		}
		ASSERT_LT(0, alone.value) TH_LOG("%s", hw_names[events[i]]);
		rate[events[i]] = (double)alone.value / clock;
		TH_LOG("%s alone: %.4f per ns of task-clock",
		       hw_names[events[i]], rate[events[i]]);
	}

	/*
	 * Every switch of the rotation counts as running a little before
	 * the counters are on: a host stall there can cost a group a few
	 * percent. So up to three tries; the last one must be accurate.
	 */
	for (try = 1; try <= MUX_TRIES; try++) {
		clock = measure_groups(_metadata, events, nr, MUX_BURN_NS, r);
		worst = 0;
		for (i = 0; i < nr; i++) {
			if (!r[i].running)
				continue;
			err = mux_error(&r[i], rate[events[i]] * clock);
			if (err > worst)
				worst = err;
		}
		if (worst <= MUX_MAX_ERROR)
			break;
		TH_LOG("try %d: worst error %.2f%%", try, worst * 100);
	}
	expect_took_turns(_metadata, events, r, nr);
	for (i = 0; i < nr; i++) {
		if (!r[i].running)
			continue;
		want = rate[events[i]] * clock;
		EXPECT_TRUE(mux_error(&r[i], want) <= MUX_MAX_ERROR) {
			TH_LOG("group %d (%s): scaled %.0f, want %.0f (value %llu enabled %llu running %llu)",
			       i, hw_names[events[i]],
			       (double)r[i].value * r[i].enabled / r[i].running,
			       want, (unsigned long long)r[i].value,
			       (unsigned long long)r[i].enabled,
			       (unsigned long long)r[i].running);
		}
	}
	TH_LOG("mux accuracy: worst error %.2f%% (%d groups on %s's %u counters)",
	       worst * 100, nr, self->emu->name, self->emu->nr_counters);
	expect_pmu_shared(_metadata, r, nr, self->emu->nr_counters);
}

/* Rotation reaches every one of many groups, and the PMU stays full. */
TEST_F(sched, mux_64_groups)
{
	unsigned int events[MAX_GROUPS];
	struct pmc_reading r[MAX_GROUPS];
	long interval_ms = 0;
	__u64 burn_ns;
	int i, idle = 0;

	REQUIRE_EMULATED_PMU(1);
	ASSERT_EQ(0, read_int_file(MUX_INTERVAL_PATH, &interval_ms));
	/* A group moves one place forward per rotation: leave 50% spare. */
	burn_ns = MAX_GROUPS * interval_ms * NSEC_PER_MSEC * 3 / 2;
	if (burn_ns < 300 * NSEC_PER_MSEC)
		burn_ns = 300 * NSEC_PER_MSEC;
	if (burn_ns > 2 * NSEC_PER_SEC)
		SKIP(return, "pmc_mux_interval_ms is %ld: rotating %d groups would take too long",
		     interval_ms, MAX_GROUPS);

	for (i = 0; i < MAX_GROUPS; i++)
		events[i] = PMC_HW_CPU_CYCLES;
	measure_groups(_metadata, events, MAX_GROUPS, burn_ns, r);
	for (i = 0; i < MAX_GROUPS; i++)
		idle += !r[i].running;
	EXPECT_EQ(0, idle) {
		TH_LOG("%d of %d groups never ran in %llu ms (interval %ld ms)",
		       idle, MAX_GROUPS,
		       (unsigned long long)(burn_ns / NSEC_PER_MSEC),
		       interval_ms);
	}
	expect_took_turns(_metadata, events, r, MAX_GROUPS);
	expect_pmu_shared(_metadata, r, MAX_GROUPS, self->emu->nr_counters);
}

/*
 * Two pinned groups that each fill the PMU: the second cannot go on and
 * reads as end of file, until it is disabled and enabled again.
 */
TEST_F(sched, pinned_error_state)
{
	int first[MAX_GROUP_SIZE], second[MAX_GROUP_SIZE], nr, i;
	struct group_reading g;
	struct pmc_reading m;

	REQUIRE_EMULATED_PMU(1);
	nr = self->emu->nr_counters;
	open_hw_group(_metadata, first, nr, OPEN_PINNED);
	open_hw_group(_metadata, second, nr, OPEN_PINNED);
	burn_cpu(SHORT_BURN_NS);

	EXPECT_EQ(0, read(second[0], &g, sizeof(g))) {
		TH_LOG("the pinned group that cannot fit does not read as EOF");
	}
	if (nr > 1) {
		/* its members never went on either */
		m = counter_read(_metadata, second[1], ALL_TIMES);
		EXPECT_EQ(0, m.value);
		EXPECT_EQ(0, m.running);
	}
	/* a context switch does not revive it */
	usleep(2000);
	EXPECT_EQ(0, read(second[0], &g, sizeof(g)));

	group_times_read(_metadata, first[0], nr, &g);
	EXPECT_TRUE(always_ran(g.enabled, g.running)) {
		TH_LOG("the pinned group that fits: enabled %llu running %llu",
		       (unsigned long long)g.enabled,
		       (unsigned long long)g.running);
	}
	for (i = 0; i < nr; i++)
		EXPECT_LT(0, g.values[i]) TH_LOG("%s", hw_names[fill_events[i]]);

	/* Room on the PMU alone does not end the error state... */
	close_group(first, nr);
	burn_cpu(SHORT_BURN_NS);
	EXPECT_EQ(0, read(second[0], &g, sizeof(g)));

	/* ...disable and enable do. */
	counter_ioctl(_metadata, second[0], PMC_IOC_DISABLE);
	counter_ioctl(_metadata, second[0], PMC_IOC_ENABLE);
	burn_cpu(SHORT_BURN_NS);
	group_times_read(_metadata, second[0], nr, &g);
	EXPECT_TRUE(always_ran(g.enabled, g.running)) {
		TH_LOG("re-enabled pinned group: enabled %llu running %llu",
		       (unsigned long long)g.enabled,
		       (unsigned long long)g.running);
	}
	EXPECT_LE(SHORT_BURN_NS * 9 / 10, g.running);
	for (i = 0; i < nr; i++)
		EXPECT_LT(0, g.values[i]) TH_LOG("%s", hw_names[fill_events[i]]);
	close_group(second, nr);
}

/* A pinned group takes the PMU from a flexible group that filled it. */
TEST_F(sched, pinned_beats_flexible)
{
	int flexible[MAX_GROUP_SIZE], pinned, nr;
	__u64 d_enabled, d_running;
	struct group_reading f0, f1;
	struct pmc_reading p;

	REQUIRE_EMULATED_PMU(1);
	nr = self->emu->nr_counters;
	open_hw_group(_metadata, flexible, nr, 0);
	burn_cpu(SHORT_BURN_NS);
	group_times_read(_metadata, flexible[0], nr, &f0);
	/* alone, it fits */
	EXPECT_TRUE(always_ran(f0.enabled, f0.running));

	pinned = open_counter(_metadata, HW(PMC_HW_CPU_CYCLES), -1, ALL_TIMES,
			      OPEN_PINNED);
	burn_cpu(100 * NSEC_PER_MSEC);
	p = counter_read(_metadata, pinned, ALL_TIMES);
	group_times_read(_metadata, flexible[0], nr, &f1);

	EXPECT_TRUE(always_ran(p.enabled, p.running)) {
		TH_LOG("pinned: enabled %llu running %llu",
		       (unsigned long long)p.enabled,
		       (unsigned long long)p.running);
	}
	EXPECT_LT(0, p.value);
	d_enabled = f1.enabled - f0.enabled;
	d_running = f1.running - f0.running;
	EXPECT_LT(d_running * 2, d_enabled) {
		TH_LOG("flexible group ran %llu of %llu ns beside the pinned one",
		       (unsigned long long)d_running,
		       (unsigned long long)d_enabled);
	}
	close(pinned);
	close_group(flexible, nr);
}

/*
 * An exclusive group and another group of one counter each never share
 * the PMU, although both would fit: they take turns. A pinned software
 * group runs beside the exclusive one, since it needs no PMU slot.
 */
TEST_F(sched, exclusive)
{
	struct pmc_reading e, o, c;
	int clock, excl, other;

	REQUIRE_EMULATED_PMU(2);
	clock = open_counter(_metadata, SW(PMC_SW_TASK_CLOCK), -1, ALL_TIMES,
			     OPEN_DISABLED | OPEN_PINNED);
	excl = open_counter(_metadata, HW(PMC_HW_CPU_CYCLES), -1, ALL_TIMES,
			    OPEN_DISABLED | OPEN_EXCLUSIVE);
	other = open_counter(_metadata, HW(PMC_HW_INSTRUCTIONS), -1, ALL_TIMES,
			     OPEN_DISABLED);
	task_counters(_metadata, true);
	burn_cpu(200 * NSEC_PER_MSEC);
	task_counters(_metadata, false);
	e = counter_read(_metadata, excl, ALL_TIMES);
	o = counter_read(_metadata, other, ALL_TIMES);
	c = counter_read(_metadata, clock, ALL_TIMES);
	TH_LOG("enabled %llu ns: exclusive ran %llu, other ran %llu",
	       (unsigned long long)e.enabled, (unsigned long long)e.running,
	       (unsigned long long)o.running);

	EXPECT_LT(0, e.running);
	EXPECT_LT(0, o.running);
	EXPECT_LE(e.running + o.running, e.enabled + e.enabled / 20) {
		TH_LOG("the exclusive group shared the PMU");
	}
	EXPECT_TRUE(ran_about_half(e.enabled, e.running));
	EXPECT_TRUE(ran_about_half(o.enabled, o.running));
	EXPECT_TRUE(always_ran(c.enabled, c.running)) {
		TH_LOG("pinned software group: enabled %llu running %llu",
		       (unsigned long long)c.enabled,
		       (unsigned long long)c.running);
	}
	close(other);
	close(excl);
	close(clock);
}

static void set_mux_interval(struct __test_metadata *_metadata,
			     FIXTURE_DATA(sched) *self, long ms)
{
	long now = -1;
	int err;

	self->interval_changed = true;
	err = write_int_file(MUX_INTERVAL_PATH, ms);
	ASSERT_EQ(0, err) TH_LOG("writing %ld: %s", ms, strerror(err));
	ASSERT_EQ(0, read_int_file(MUX_INTERVAL_PATH, &now));
	ASSERT_EQ(ms, now);
}

/*
 * pmc_mux_interval_ms takes 1..1000, and each rotation uses the current
 * value: at 1 ms every group of 2 * nr_counters runs within 100 ms, at
 * 1000 ms some never do.
 */
TEST_F(sched, mux_interval_sysctl)
{
	static const long bad[] = { 0, 1001, -1, 100000 };
	unsigned int events[MAX_GROUPS], i;
	struct pmc_reading r[MAX_GROUPS];
	long now = -1;
	int nr, idle, err;

	ASSERT_EQ(0, read_int_file(MUX_INTERVAL_PATH, &self->saved_interval));
	EXPECT_LE(1, self->saved_interval);
	EXPECT_GE(1000, self->saved_interval);
	if (!self->root) {
		err = write_int_file(MUX_INTERVAL_PATH, self->saved_interval);
		EXPECT_EQ(EACCES, err) {
			TH_LOG("an unprivileged write gave %s", strerror(err));
		}
		return;
	}

	set_mux_interval(_metadata, self, 1);
	set_mux_interval(_metadata, self, 1000);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(EINVAL, write_int_file(MUX_INTERVAL_PATH, bad[i])) {
			TH_LOG("wrote %ld", bad[i]);
		}
		ASSERT_EQ(0, read_int_file(MUX_INTERVAL_PATH, &now));
		EXPECT_EQ(1000, now);
	}

	if (!have_emulated_pmu(self))
		return;
	ASSERT_EQ(0, pin_to_cpu(self->cpu));
	nr = mux_events(self->emu, events);

	set_mux_interval(_metadata, self, 1);
	measure_groups(_metadata, events, nr, 100 * NSEC_PER_MSEC, r);
	expect_took_turns(_metadata, events, r, nr);
	/* Sleep: with nothing waiting, the 1 ms timer stops. */
	usleep(20 * 1000);

	set_mux_interval(_metadata, self, 1000);
	measure_groups(_metadata, events, nr, 100 * NSEC_PER_MSEC, r);
	for (i = 0, idle = 0; i < (unsigned int)nr; i++)
		idle += !r[i].running;
	/* nr - nr_counters wait for the first rotation, 1 s away */
	EXPECT_LE(1, idle) {
		TH_LOG("at 1000 ms, all %d groups ran within 100 ms", nr);
	}
}

/*
 * Inherit. Children report what they did in memory shared with the
 * parent; the parent compares its counter with their CPU time.
 */
struct child_report {
	int fd;			/* in: the parent's counter */
	bool block;		/* in: sleep once before exiting */
	__u64 seen;		/* value read from the parent's fd */
	__u64 cpu_ns;		/* own CPU time, just before exiting */
	__u64 switches;		/* own context switches by then */
	__u64 uncounted_ns;	/* of which with its counters disabled */
	__u64 own_ns;		/* its own task-clock, opened on itself */
};

/* The calling thread's context switches so far. */
static __u64 thread_switches(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru))
		return 0;
	return ru.ru_nvcsw + ru.ru_nivcsw;
}

static struct child_report *reports_alloc(struct __test_metadata *_metadata,
					  size_t nr)
{
	void *p = mmap(NULL, nr * sizeof(struct child_report),
		       PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		       -1, 0);

	ASSERT_NE(MAP_FAILED, p) TH_LOG("mmap: %s", strerror(errno));
	return p;
}

static void reports_free(struct child_report *r, size_t nr)
{
	munmap(r, nr * sizeof(*r));
}

/*
 * expect_covers() - a task-clock total against the tasks' CPU time
 * @reported: what the tasks reported of their CPU time, all of it inside
 *	the counter's span: the count may fall short of it by no more than
 *	10%, BASE_SLACK_NS and @nr_switches context switches.
 * @whole: their whole CPU time over a span that holds the counter's,
 *	exit paths included (family_cputime_ns()): the count may exceed it
 *	by the slack and 2%, for a kernel whose runtime accounting leaves
 *	out interrupt time (IRQ_TIME_ACCOUNTING), as task-clock does not.
 *	@whole also holds what runs after the fold (a process's exit_mm():
 *	2-23 ms a child on the debug kernel), so that 10% would let a
 *	child's count be added twice.
 *
 * Two references, because a task's count ends at the fold in do_exit(),
 * after its last report, and the exit path before it may take any time
 * (waiting on the other vCPU, say): the count and @whole include it,
 * @reported does not (CI once counted 50 ms more than 8 threads and
 * their joiner reported).
 * task-clock runs from the scheduler's switch-in hook to its switch-out
 * hook, while the scheduler's runtime accounting starts and stops a
 * little elsewhere in the switch: ~100 us a switch on a debug kernel
 * under QEMU TCG (a thread that started and joined 4 threads: 0.3-1.1
 * ms short over 7-10 switches), and once 2.5 ms more when the host
 * stalled the vCPU there.
 */
static void expect_covers(struct __test_metadata *_metadata, const char *what,
			  __u64 got, __u64 reported, __u64 whole,
			  __u64 nr_switches)
{
	__u64 slack = BASE_SLACK_NS + nr_switches * SWITCH_SLACK_NS;

	EXPECT_TRUE(got + reported / 10 + slack >= reported &&
		    got <= whole + whole / 50 + slack) {
		TH_LOG("%s: counted %llu ns, the tasks reported %llu ns and used %llu ns, %llu switches",
		       what, (unsigned long long)got,
		       (unsigned long long)reported,
		       (unsigned long long)whole,
		       (unsigned long long)nr_switches);
	}
}

/* The counter, and the CPU time of the tasks it may have covered. */
struct family {
	__u64 counted;
	__u64 parent_ns;	/* the opener's own CPU time meanwhile */
	__u64 parent_switches;	/* and its context switches */
	__u64 children_ns;	/* the children's, as they reported it */
	__u64 whole_ns;		/* all of the family's: family_cputime_ns() */
};

static int burning_child(void *arg)
{
	struct child_report *r = arg;
	struct pmc_reading seen = { 0 };
	int ret;

	/* the inherited fd reads the parent's counter, not this copy */
	ret = pmc_read(r->fd, 0, &seen);
	CHILD_CHECK(ret == 0, "read: %s", strerror(-ret));
	r->seen = seen.value;
	burn_cpu(CHILD_BURN_NS);
	r->cpu_ns = process_cputime_ns();
	return 0;
}

/* Fork NR_CHILDREN burning children, together, under a task-clock. */
static void count_children(struct __test_metadata *_metadata, bool inherit,
			   struct family *f)
{
	struct child_report *r = reports_alloc(_metadata, NR_CHILDREN);
	__u64 switches = thread_switches(), start, before;
	__u64 whole = family_cputime_ns();
	pid_t pids[NR_CHILDREN];
	int fd, i;

	fd = open_counter(_metadata, SW(PMC_SW_TASK_CLOCK), -1, 0,
			  inherit ? OPEN_INHERIT : 0);
	start = thread_cputime_ns();	/* see open_counter() */
	/* a value the children's fresh copies cannot have */
	burn_cpu(CHILD_BURN_NS);
	before = counter_value(_metadata, fd);
	for (i = 0; i < NR_CHILDREN; i++) {
		r[i].fd = fd;
		pids[i] = spawn(_metadata, burning_child, &r[i]);
	}
	for (i = 0; i < NR_CHILDREN; i++)
		ASSERT_EQ(0, reap(_metadata, pids[i], NULL));
	f->counted = counter_value(_metadata, fd);
	f->parent_ns = thread_cputime_ns() - start;
	f->whole_ns = family_cputime_ns() - whole;
	f->parent_switches = thread_switches() - switches;
	f->children_ns = 0;
	for (i = 0; i < NR_CHILDREN; i++) {
		f->children_ns += r[i].cpu_ns;
		EXPECT_LE(before, r[i].seen) {
			TH_LOG("child %d read %llu from the parent's fd, which had %llu before the fork",
			       i, (unsigned long long)r[i].seen,
			       (unsigned long long)before);
		}
	}
	close(fd);
	reports_free(r, NR_CHILDREN);
}

TEST_F(sched, inherit_counts_children)
{
	struct family f;

	count_children(_metadata, true, &f);
	TH_LOG("inherit: counted %llu ns; parent %llu, children %llu ns, all %llu ns",
	       (unsigned long long)f.counted, (unsigned long long)f.parent_ns,
	       (unsigned long long)f.children_ns,
	       (unsigned long long)f.whole_ns);
	expect_covers(_metadata, "with inherit", f.counted,
		      f.parent_ns + f.children_ns, f.whole_ns,
		      f.parent_switches);

	count_children(_metadata, false, &f);
	expect_covers(_metadata, "without inherit", f.counted, f.parent_ns,
		      f.parent_ns, f.parent_switches);
}

struct thread_report {
	pthread_t thread;
	__u64 cpu_ns;
};

static void *burning_thread(void *arg)
{
	struct thread_report *t = arg;

	burn_cpu(CHILD_BURN_NS);
	t->cpu_ns = thread_cputime_ns();
	return NULL;
}

/* Start NR_THREADS burning threads, together, under a task-clock. */
static void count_threads(struct __test_metadata *_metadata, bool inherit,
			  struct family *f)
{
	struct thread_report t[NR_THREADS];
	__u64 switches = thread_switches(), start;
	__u64 whole = family_cputime_ns();
	int fd, i, err;

	fd = open_counter(_metadata, SW(PMC_SW_TASK_CLOCK), -1, 0,
			  inherit ? OPEN_INHERIT : 0);
	start = thread_cputime_ns();
	for (i = 0; i < NR_THREADS; i++) {
		err = pthread_create(&t[i].thread, NULL, burning_thread, &t[i]);
		ASSERT_EQ(0, err) TH_LOG("pthread_create: %s", strerror(err));
	}
	f->children_ns = 0;
	for (i = 0; i < NR_THREADS; i++) {
		ASSERT_EQ(0, pthread_join(t[i].thread, NULL));
		f->children_ns += t[i].cpu_ns;
	}
	/* the threads' copies folded before their exit woke pthread_join() */
	f->counted = counter_value(_metadata, fd);
	f->parent_ns = thread_cputime_ns() - start;
	f->whole_ns = family_cputime_ns() - whole;
	f->parent_switches = thread_switches() - switches;
	close(fd);
}

TEST_F(sched, inherit_threads)
{
	struct family f;

	count_threads(_metadata, true, &f);
	TH_LOG("inherit: counted %llu ns; main thread %llu, threads %llu ns, process %llu ns",
	       (unsigned long long)f.counted, (unsigned long long)f.parent_ns,
	       (unsigned long long)f.children_ns,
	       (unsigned long long)f.whole_ns);
	expect_covers(_metadata, "with inherit", f.counted,
		      f.parent_ns + f.children_ns, f.whole_ns,
		      f.parent_switches);

	count_threads(_metadata, false, &f);
	TH_LOG("without inherit: counted %llu ns; main thread %llu ns, %llu switches",
	       (unsigned long long)f.counted, (unsigned long long)f.parent_ns,
	       (unsigned long long)f.parent_switches);
	expect_covers(_metadata, "without inherit", f.counted, f.parent_ns,
		      f.parent_ns, f.parent_switches);
}

struct chain {
	struct child_report *r;
	int level;
};

/*
 * One link of the chain: start the next level, burn, wait for it. Its
 * own task-clock, opened first and read last, counts on the clock of
 * the context that holds its copy of the original, over part of the
 * copy's span: what the copy folds is at least that.
 */
static int chain_link(void *arg)
{
	struct chain *c = arg;
	int level = c->level, status, own;
	struct pmc_attr attr;
	pid_t next = 0;

	pmc_sw_attr(&attr, PMC_SW_TASK_CLOCK, 0);
	own = pmc_open(&attr, 0, -1, -1, 0);
	CHILD_CHECK(own >= 0, "level %d: %s", level, strerror(errno));
	if (level + 1 < CHAIN_DEPTH) {
		c->level = level + 1;	/* this process's copy */
		next = fork_child(chain_link, c);
		CHILD_CHECK(next > 0, "level %d: fork: %s", level,
			    strerror(errno));
	}
	burn_cpu(CHAIN_BURN_NS);
	if (next > 0) {
		CHILD_CHECK(waitpid(next, &status, 0) == next, "level %d: %s",
			    level, strerror(errno));
		CHILD_CHECK(WIFEXITED(status) && !WEXITSTATUS(status),
			    "level %d failed: %#x", level + 1, status);
	}
	CHILD_CHECK(read(own, &c->r[level].own_ns, sizeof(__u64)) ==
		    sizeof(__u64), "level %d: %s", level, strerror(errno));
	c->r[level].cpu_ns = process_cputime_ns();
	c->r[level].switches = thread_switches();
	return 0;
}

/*
 * Copies of copies fold into the one original, however deep: the count
 * holds at least every level's own task-clock (on the same clocks as
 * the copies), and no more than the whole tree's CPU time. Against the
 * levels' reported CPU time it is only near: on the debug kernel a
 * 20-deep chain counted 1-2 ms a level less than the scheduler charged
 * (20 children of one parent, or a chain 5 deep, within 0.6 ms each).
 */
TEST_F(sched, inherit_deep_tree)
{
	struct child_report *r = reports_alloc(_metadata, CHAIN_DEPTH);
	struct chain c = { .r = r, .level = 0 };
	__u64 switches = thread_switches(), start, counted, parent, tree = 0;
	__u64 whole = family_cputime_ns(), own = 0;
	int fd, i;

	fd = open_counter(_metadata, SW(PMC_SW_TASK_CLOCK), -1, 0,
			  OPEN_INHERIT);
	start = thread_cputime_ns();
	ASSERT_EQ(0, reap(_metadata, spawn(_metadata, chain_link, &c), NULL));
	counted = counter_value(_metadata, fd);
	parent = thread_cputime_ns() - start;
	whole = family_cputime_ns() - whole;
	switches = thread_switches() - switches;
	for (i = 0; i < CHAIN_DEPTH; i++) {
		EXPECT_LE(CHAIN_BURN_NS, r[i].cpu_ns) TH_LOG("level %d", i);
		EXPECT_LT(0, r[i].own_ns) TH_LOG("level %d", i);
		tree += r[i].cpu_ns;
		own += r[i].own_ns;
		switches += r[i].switches;
	}
	TH_LOG("counted %llu ns; parent %llu, %d levels %llu ns (their own counters %llu ns), all %llu ns, %llu switches",
	       (unsigned long long)counted, (unsigned long long)parent,
	       CHAIN_DEPTH, (unsigned long long)tree, (unsigned long long)own,
	       (unsigned long long)whole, (unsigned long long)switches);
	EXPECT_LE(own, counted) TH_LOG("a level's copy did not fold");
	expect_covers(_metadata, "chain", counted, own, whole, switches);
	close(fd);
	reports_free(r, CHAIN_DEPTH);
}

static int sleeping_child(void *arg)
{
	struct child_report *r = arg;
	int i;

	burn_cpu(CHILD_BURN_NS);
	for (i = 0; i < NR_SLEEPS; i++)
		usleep(1000);
	r->cpu_ns = process_cputime_ns();
	return 0;
}

/*
 * A group {task-clock, context-switches} with inherit on both: values
 * and times fold. A third member without inherit is not copied, so it
 * counts the parent alone.
 */
TEST_F(sched, inherit_group)
{
	struct child_report *r = reports_alloc(_metadata, NR_SLEEPERS);
	__u64 start, parent, children = 0, d_clock, d_own, d_switches, whole;
	struct group_reading g0, g1;
	int leader, switches, own, i;
	pid_t pids[NR_SLEEPERS];

	if (!may_count_kernel())
		SKIP(return, "%s", NO_KERNEL_SWITCHES);
	leader = open_counter(_metadata, SW(PMC_SW_TASK_CLOCK), -1,
			      GROUP_TIMES, OPEN_INHERIT);
	switches = open_counter(_metadata, SW(PMC_SW_CONTEXT_SWITCHES), leader,
				0, OPEN_INHERIT);
	own = open_counter(_metadata, SW(PMC_SW_TASK_CLOCK), leader, 0, 0);
	whole = family_cputime_ns();
	group_times_read(_metadata, leader, 3, &g0);

	start = thread_cputime_ns();
	for (i = 0; i < NR_SLEEPERS; i++)
		pids[i] = spawn(_metadata, sleeping_child, &r[i]);
	for (i = 0; i < NR_SLEEPERS; i++)
		ASSERT_EQ(0, reap(_metadata, pids[i], NULL));
	group_times_read(_metadata, leader, 3, &g1);
	parent = thread_cputime_ns() - start;
	whole = family_cputime_ns() - whole;
	for (i = 0; i < NR_SLEEPERS; i++)
		children += r[i].cpu_ns;

	d_clock = g1.values[0] - g0.values[0];
	d_switches = g1.values[1] - g0.values[1];
	d_own = g1.values[2] - g0.values[2];
	TH_LOG("task-clock +%llu, own +%llu, enabled +%llu, running +%llu ns, switches +%llu; children %llu ns, all %llu ns",
	       (unsigned long long)d_clock, (unsigned long long)d_own,
	       (unsigned long long)(g1.enabled - g0.enabled),
	       (unsigned long long)(g1.running - g0.running),
	       (unsigned long long)d_switches, (unsigned long long)children,
	       (unsigned long long)whole);

	expect_covers(_metadata, "task-clock", d_clock, parent + children,
		      whole, d_switches);
	expect_covers(_metadata, "member without inherit", d_own, parent,
		      parent, d_switches);
	/* time_enabled and time_running grow by the children's run time */
	expect_covers(_metadata, "time_enabled", g1.enabled - g0.enabled,
		      parent + children, whole, d_switches);
	expect_covers(_metadata, "time_running", g1.running - g0.running,
		      parent + children, whole, d_switches);
	/* every sleep switched a child out */
	EXPECT_LE(NR_SLEEPERS * NR_SLEEPS, d_switches);

	close(own);
	close(switches);
	close(leader);
	reports_free(r, NR_SLEEPERS);
}

static int tiny_child(void *arg)
{
	struct child_report *r = arg;

	burn_cpu(TINY_BURN_NS);
	if (r->block)
		usleep(100);
	r->cpu_ns = process_cputime_ns();
	return 0;
}

/*
 * Fork up to @nr tiny children, @batch at a time, until the budget runs
 * out. Every SCALE_BLOCK_EVERY-th child sleeps once.
 *
 * Return: how many ran.
 */
static int fork_tiny_children(struct __test_metadata *_metadata,
			      struct child_report *r, int nr, int batch)
{
	__u64 deadline = monotonic_ns() + SCALE_BUDGET_NS;
	pid_t pids[SCALE_BATCH];
	int done = 0, n, i;

	while (done < nr && monotonic_ns() < deadline) {
		n = nr - done < batch ? nr - done : batch;
		for (i = 0; i < n; i++) {
			r[done + i].block = (done + i) % SCALE_BLOCK_EVERY == 0;
			pids[i] = spawn(_metadata, tiny_child, &r[done + i]);
		}
		for (i = 0; i < n; i++)
			ASSERT_EQ(0, reap(_metadata, pids[i], NULL));
		done += n;
	}
	return done;
}

/*
 * Thousands of children, one at a time and fifty at a time, all fold
 * into the inherited group; afterwards no copy is left in the caches.
 */
TEST_F_TIMEOUT(sched, inherit_2000_children, 90)
{
	struct child_report *r = reports_alloc(_metadata, 2 * SCALE_CHILDREN);
	int leader, switches, serial, batched, nr, i, blocked = 0;
	__u64 start, parent, children = 0, whole;
	long base[ARRAY_SIZE(pmc_caches)];
	struct group_reading g;
	bool slab;

	if (!may_count_kernel())
		SKIP(return, "%s", NO_KERNEL_SWITCHES);
	slab = slab_baseline(_metadata, base);
	whole = family_cputime_ns();
	leader = open_counter(_metadata, SW(PMC_SW_TASK_CLOCK), -1,
			      GROUP_TIMES, OPEN_INHERIT);
	start = thread_cputime_ns();
	switches = open_counter(_metadata, SW(PMC_SW_CONTEXT_SWITCHES), leader,
				0, OPEN_INHERIT);
	serial = fork_tiny_children(_metadata, r, SCALE_CHILDREN, 1);
	batched = fork_tiny_children(_metadata, r + serial, SCALE_CHILDREN,
				     SCALE_BATCH);
	group_times_read(_metadata, leader, 2, &g);
	parent = thread_cputime_ns() - start;
	whole = family_cputime_ns() - whole;

	nr = serial + batched;
	for (i = 0; i < nr; i++) {
		children += r[i].cpu_ns;
		blocked += r[i].block;
	}
	TH_LOG("%d children one at a time, %d %d at a time%s", serial,
	       batched, SCALE_BATCH,
	       nr < 2 * SCALE_CHILDREN ? " (the time budget ran out)" : "");
	TH_LOG("task-clock %llu ns: parent %llu, children %llu ns, all %llu ns; %llu switches, %d children slept",
	       (unsigned long long)g.values[0], (unsigned long long)parent,
	       (unsigned long long)children, (unsigned long long)whole,
	       (unsigned long long)g.values[1], blocked);
	expect_covers(_metadata, "task-clock", g.values[0], parent + children,
		      whole, g.values[1]);
	EXPECT_LE(blocked, g.values[1]);
	EXPECT_LT(0, g.values[1]);
	close(switches);
	close(leader);
	reports_free(r, 2 * SCALE_CHILDREN);

	if (slab)
		expect_slab_baseline(_metadata, base, SLAB_WAIT_MS);
	else
		skip_slab_check(_metadata);
}

/* Burn; burn with the counters off; burn with them on again. */
static int disabling_child(void *arg)
{
	struct child_report *r = arg;
	__u64 off;

	burn_cpu(CHILD_BURN_NS);
	off = process_cputime_ns();
	CHILD_CHECK(prctl(PR_TASK_PMC_DISABLE, 0, 0, 0, 0) == 0, "%s",
		    strerror(errno));
	burn_cpu(DISABLED_BURN_NS);
	CHILD_CHECK(prctl(PR_TASK_PMC_ENABLE, 0, 0, 0, 0) == 0, "%s",
		    strerror(errno));
	r->uncounted_ns = process_cputime_ns() - off;
	burn_cpu(CHILD_BURN_NS);
	r->cpu_ns = process_cputime_ns();
	return 0;
}

/* prctl() in a child switches its own copies, not the parent's counter. */
TEST_F(sched, prctl_in_child)
{
	struct child_report *r = reports_alloc(_metadata, 1);
	__u64 start, counted, parent, after, whole = family_cputime_ns();
	int fd;

	fd = open_counter(_metadata, SW(PMC_SW_TASK_CLOCK), -1, 0,
			  OPEN_INHERIT);
	start = thread_cputime_ns();
	ASSERT_EQ(0, reap(_metadata, spawn(_metadata, disabling_child, r),
			  NULL));
	counted = counter_value(_metadata, fd);
	parent = thread_cputime_ns() - start;
	whole = family_cputime_ns() - whole;
	TH_LOG("counted %llu ns; parent %llu, child %llu ns of which %llu disabled; all %llu ns",
	       (unsigned long long)counted, (unsigned long long)parent,
	       (unsigned long long)r->cpu_ns,
	       (unsigned long long)r->uncounted_ns, (unsigned long long)whole);
	EXPECT_LE(DISABLED_BURN_NS, r->uncounted_ns);
	expect_covers(_metadata, "child with a disabled stretch", counted,
		      parent + r->cpu_ns - r->uncounted_ns,
		      whole - r->uncounted_ns, 0);

	/* the parent's own counter still runs */
	burn_cpu(SHORT_BURN_NS);
	after = counter_value(_metadata, fd);
	EXPECT_LE(counted + SHORT_BURN_NS * 9 / 10, after);
	close(fd);
	reports_free(r, 1);
}

/*
 * Open/close race: threads open, read, switch and close counters on
 * themselves, on each other, on a child that keeps forking and on its
 * short-lived children, with inherit, pinned and exclusive at random,
 * while they hop between CPUs. Nothing may fail except opens on tasks
 * that may have exited (ESRCH); afterwards nothing is left behind.
 */
#define RACE_THREADS	4
#define RACE_SLOTS	16
#define RACE_MAX_CPUS	64
#define RACE_NS		(3 * NSEC_PER_SEC)
#define VICTIM_BURN_NS	NSEC_PER_MSEC

struct race_counter {
	int fd;			/* -1: free slot */
	int leader;		/* slot of its leader; its own if it leads */
	pid_t pid;		/* as passed to pmc_open() */
	int cpu;
	bool pinned;		/* pinned leader: may read as EOF */
	bool mortal;		/* its task may exit: ESRCH is fine */
};

/* Shared with the forking child; accessed with race_load/race_store. */
struct race_shared {
	pid_t victim;		/* its latest child */
	int stop;
};

#define race_load(x)		__atomic_load_n(&(x), __ATOMIC_RELAXED)
#define race_store(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

struct race;

struct race_thread {
	struct race *race;
	pthread_t thread;
	int index;
	__u64 rng;
	unsigned long ops;
	unsigned long vanished;	/* opens that found the task gone */
	unsigned long refused;	/* hardware members of full groups */
	char error[256];	/* the first unexpected result */
	struct race_counter slot[RACE_SLOTS];
};

struct race {
	struct race_shared *shared;
	pid_t forker;
	pid_t tids[RACE_THREADS];	/* race_load/race_store */
	int cpus[RACE_MAX_CPUS];
	int nr_cpus;
	bool hw;		/* hardware events open */
	bool root;		/* may open per-CPU counters */
	__u64 deadline;
	struct race_thread thread[RACE_THREADS];
};

#define RACE_FAIL(t, fmt, ...)						\
	snprintf((t)->error, sizeof((t)->error), fmt, ##__VA_ARGS__)

static unsigned int race_below(struct race_thread *t, unsigned int n)
{
	/* xorshift64 */
	t->rng ^= t->rng << 13;
	t->rng ^= t->rng >> 7;
	t->rng ^= t->rng << 17;
	return t->rng % n;
}

static bool race_chance(struct race_thread *t, unsigned int percent)
{
	return race_below(t, 100) < percent;
}

static int race_random_cpu(struct race_thread *t)
{
	return t->race->cpus[race_below(t, t->race->nr_cpus)];
}

/* A random used slot, optionally leaders only; -1 if none. */
static int race_pick(struct race_thread *t, bool leaders_only)
{
	int i, seen = 0, pick = -1;

	for (i = 0; i < RACE_SLOTS; i++) {
		if (t->slot[i].fd < 0 ||
		    (leaders_only && t->slot[i].leader != i))
			continue;
		if (race_below(t, ++seen) == 0)
			pick = i;
	}
	return pick;
}

/* Whom to count: self, a sibling, the forker, its child, or a CPU. */
static void race_target(struct race_thread *t, struct race_counter *c)
{
	struct race *race = t->race;
	pid_t self = race_load(race->tids[t->index]);

	c->pid = 0;
	c->cpu = race_chance(t, 25) ? race_random_cpu(t) : -1;
	c->mortal = true;
	switch (race_below(t, race->root ? 5 : 4)) {
	case 0:
		c->pid = race->forker;
		c->mortal = false;	/* lives until the threads are done */
		break;
	case 1:
		c->pid = race_load(race->shared->victim);
		break;
	case 2:
		c->pid = race_load(race->tids[race_below(t, RACE_THREADS)]);
		break;
	case 3:
		break;
	default:
		c->pid = -1;
		c->cpu = race_random_cpu(t);
		break;
	}
	if (!c->pid || c->pid == self) {
		c->pid = 0;
		c->mortal = false;
	}
	if (c->pid == -1)
		c->mortal = false;
}

static void race_open(struct race_thread *t)
{
	static const unsigned int hw[] = {
		PMC_HW_CPU_CYCLES, PMC_HW_INSTRUCTIONS,
	};
	struct race_counter *c, *leader = NULL;
	struct pmc_attr attr;
	int i, l = -1, fd;

	for (i = 0; i < RACE_SLOTS && t->slot[i].fd >= 0; i++)
		;
	if (i == RACE_SLOTS)
		return;
	c = &t->slot[i];
	if (race_chance(t, 30))
		l = race_pick(t, true);
	if (l >= 0) {
		leader = &t->slot[l];
		c->pid = leader->pid;
		c->cpu = leader->cpu;
		c->mortal = leader->mortal;
	} else {
		race_target(t, c);
	}

	pmc_sw_attr(&attr, race_below(t, PMC_SW_MAX), ALL_TIMES);
	if (t->race->hw && race_chance(t, 30))
		attr.config = HW(hw[race_below(t, ARRAY_SIZE(hw))]);
	attr.disabled = race_chance(t, 20);
	/* inherit follows tasks: a per-CPU counter has none */
	attr.inherit = c->pid != -1 && race_chance(t, 30);
	if (!leader) {
		attr.pinned = race_chance(t, 10);
		attr.exclusive = race_chance(t, 5);
	}
	fd = pmc_open(&attr, c->pid, c->cpu, leader ? leader->fd : -1, 0);
	if (fd < 0) {
		if (errno == ESRCH && c->mortal)
			t->vanished++;
		/* a hardware member the group's PMU could never hold */
		else if (errno == EINVAL && leader &&
			 PMC_CONFIG_TYPE(attr.config) == PMC_TYPE_HARDWARE)
			t->refused++;
		else
			RACE_FAIL(t, "pmc_open(config %#llx, pid %d, cpu %d, %s, inherit %d, pinned %d, exclusive %d): %s",
				  (unsigned long long)attr.config, c->pid,
				  c->cpu, leader ? "member" : "leader",
				  attr.inherit, attr.pinned, attr.exclusive,
				  strerror(errno));
		return;
	}
	c->fd = fd;
	c->leader = leader ? l : i;
	c->pinned = attr.pinned;
}

/* Closing a leader makes each of its members a group of its own. */
static void race_close(struct race_thread *t, int i)
{
	int j;

	close(t->slot[i].fd);
	t->slot[i].fd = -1;
	for (j = 0; j < RACE_SLOTS; j++) {
		if (j != i && t->slot[j].fd >= 0 && t->slot[j].leader == i) {
			t->slot[j].leader = j;
			t->slot[j].pinned = false;
		}
	}
}

static void race_read(struct race_thread *t, int i)
{
	struct race_counter *c = &t->slot[i];
	__u64 buf[4];
	ssize_t n;

	n = read(c->fd, buf, sizeof(buf));
	if (n == 0 && c->pinned)
		return;		/* a pinned group in the error state */
	if (n != 3 * sizeof(__u64))
		RACE_FAIL(t, "read() of a counter on pid %d cpu %d gave %zd: %s",
			  c->pid, c->cpu, n, n < 0 ? strerror(errno) : "");
	else if (buf[2] > buf[1])
		RACE_FAIL(t, "counter on pid %d: time_running %llu > time_enabled %llu",
			  c->pid, (unsigned long long)buf[2],
			  (unsigned long long)buf[1]);
}

static void race_step(struct race_thread *t)
{
	static const unsigned long cmds[] = {
		PMC_IOC_ENABLE, PMC_IOC_DISABLE, PMC_IOC_RESET,
	};
	unsigned long cmd;
	int i, cpu, on;

	switch (race_below(t, 10)) {
	case 0 ... 3:
		race_open(t);
		break;
	case 4 ... 5:
		i = race_pick(t, false);
		if (i >= 0)
			race_close(t, i);
		break;
	case 6:
		i = race_pick(t, false);
		if (i >= 0)
			race_read(t, i);
		break;
	case 7:
		i = race_pick(t, false);
		cmd = cmds[race_below(t, ARRAY_SIZE(cmds))];
		if (i >= 0 && ioctl(t->slot[i].fd, cmd, 0))
			RACE_FAIL(t, "ioctl(%#lx): %s", cmd, strerror(errno));
		break;
	case 8:
		cpu = race_random_cpu(t);
		if (pin_to_cpu(cpu))
			RACE_FAIL(t, "moving to CPU %d: %s", cpu,
				  strerror(errno));
		break;
	default:
		on = race_chance(t, 50);
		if (prctl(on ? PR_TASK_PMC_ENABLE : PR_TASK_PMC_DISABLE,
			  0, 0, 0, 0))
			RACE_FAIL(t, "prctl(%s): %s", on ? "enable" : "disable",
				  strerror(errno));
		break;
	}
}

static void *race_main(void *arg)
{
	struct race_thread *t = arg;
	int i;

	race_store(t->race->tids[t->index], gettid());
	for (i = 0; i < RACE_SLOTS; i++)
		t->slot[i].fd = -1;
	while (!t->error[0] && monotonic_ns() < t->race->deadline) {
		race_step(t);
		t->ops++;
	}
	for (i = 0; i < RACE_SLOTS; i++)
		if (t->slot[i].fd >= 0)
			race_close(t, i);
	return NULL;
}

static int victim_main(void *arg)
{
	burn_cpu(VICTIM_BURN_NS);
	return 0;
}

/* Fork short-lived children, one after another, until told to stop. */
static int forker_main(void *arg)
{
	struct race_shared *shared = arg;
	int status;
	pid_t pid;

	while (!race_load(shared->stop)) {
		pid = fork_child(victim_main, NULL);
		CHILD_CHECK(pid > 0, "fork: %s", strerror(errno));
		race_store(shared->victim, pid);
		CHILD_CHECK(waitpid(pid, &status, 0) == pid, "%s",
			    strerror(errno));
		CHILD_CHECK(WIFEXITED(status) && !WEXITSTATUS(status),
			    "victim ended with %#x", status);
	}
	return 0;
}

TEST_F_TIMEOUT(sched, open_close_race, 60)
{
	long base[ARRAY_SIZE(pmc_caches)];
	unsigned long ops = 0, vanished = 0, refused = 0;
	struct race race = { 0 };
	struct race_thread *t;
	int i, err;
	bool slab;

	slab = slab_baseline(_metadata, base);
	race.shared = mmap(NULL, sizeof(*race.shared), PROT_READ | PROT_WRITE,
			   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, race.shared);
	race.nr_cpus = allowed_cpus(race.cpus, RACE_MAX_CPUS);
	ASSERT_LE(1, race.nr_cpus);
	race.hw = !self->hw_err;
	race.root = self->root;
	race.forker = spawn(_metadata, forker_main, race.shared);

	race.deadline = monotonic_ns() + RACE_NS;
	for (i = 0; i < RACE_THREADS; i++) {
		t = &race.thread[i];
		t->race = &race;
		t->index = i;
		t->rng = (monotonic_ns() ^ ((__u64)getpid() << 32) ^
			  (i * 0x9e3779b97f4a7c15ULL)) | 1;
		err = pthread_create(&t->thread, NULL, race_main, t);
		ASSERT_EQ(0, err) TH_LOG("pthread_create: %s", strerror(err));
	}
	for (i = 0; i < RACE_THREADS; i++)
		ASSERT_EQ(0, pthread_join(race.thread[i].thread, NULL));
	race_store(race.shared->stop, 1);
	EXPECT_EQ(0, reap(_metadata, race.forker, NULL));
	munmap(race.shared, sizeof(*race.shared));

	for (i = 0; i < RACE_THREADS; i++) {
		t = &race.thread[i];
		EXPECT_EQ(0, t->error[0]) TH_LOG("thread %d: %s", i, t->error);
		ops += t->ops;
		vanished += t->vanished;
		refused += t->refused;
	}
	TH_LOG("%lu operations, %lu opens found the task gone (ESRCH), %lu hardware members refused by a full group%s",
	       ops, vanished, refused,
	       race.hw ? ", hardware events included" : "");
	EXPECT_LE(100, ops);

	if (slab)
		expect_slab_baseline(_metadata, base, SLAB_WAIT_MS);
	else
		skip_slab_check(_metadata);
}

TEST_HARNESS_MAIN
