// SPDX-License-Identifier: GPL-2.0
/*
 * Selftests for pmc_open(2) hardware counters: generic and raw events,
 * the x86 model limits and counter constraints, overflow interrupts,
 * and 64-bit counts across wraps of the narrower hardware counters.
 *
 * QEMU TCG has no real PMU. Booted without pmc_emu=, every hardware
 * event gives ENODEV. Booted with pmc_emu=MODEL, the kernel drives an
 * emulated PMU whose counters advance at fixed rates while they count
 * (arch/x86/events-lite/emu.c): 1000 cycles per microsecond, and so on.
 * So the counts are known, and the tests compare them with a task-clock
 * counter that goes on and off the CPU in the same group, never with
 * wall time, which the emulator makes noisy. Tests that need a model,
 * or one model, skip on the other boots. The binary runs as root and
 * as an unprivileged user: counters exclude kernel mode unless the
 * caller may count it (pmc_paranoid defaults to 2).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include <linux/perf_event.h>

#include "../kselftest_harness.h"
#include "pmc_harness.h"

/* perf registers this PMU when it found counting hardware. */
#define PERF_CPU_PMU	"/sys/bus/event_source/devices/cpu"

/* CPU time burnt by the tests: short where a count only has to move. */
#define SHORT_BURN_NS	(20 * NSEC_PER_MSEC)
#define BURN_NS		(100 * NSEC_PER_MSEC)
#define LONG_BURN_NS	(200 * NSEC_PER_MSEC)
/* How long the migration test stays on one CPU. */
#define FLIP_NS		(3 * NSEC_PER_MSEC)

/* 100 us of emulated cycles: the hardware counter wraps very often. */
#define FAST_PERIOD	100000ULL
/* 1 ms: longer than the emulator's overflow latency, so none is lost. */
#define SLOW_PERIOD	1000000ULL
/* Largest step between two reads: 50 ms of cycles at 1 GHz. */
#define MAX_STEP	50000000ULL

/* More counters than any model has. */
#define MAX_COUNTERS	8

#define RAW(sel)	(PMC_CONFIG_RAW | (__u64)(sel))

/* x86 event-select fields a raw config is made of. */
#define SEL_UMASK(u)	((__u64)(u) << 8)
#define SEL_USR		(1ULL << 16)
#define SEL_OS		(1ULL << 17)
#define SEL_EDGE	(1ULL << 18)
#define SEL_PC		(1ULL << 19)
#define SEL_INT		(1ULL << 20)
#define SEL_ANY		(1ULL << 21)
#define SEL_EN		(1ULL << 22)
#define SEL_INV		(1ULL << 23)
#define SEL_CMASK(c)	((__u64)(c) << 24)
#define SEL_AMD_HI(e)	((__u64)(e) << 32)	/* AMD event bits 11:8 */

/* Instructions retired: the same event select on every model. */
#define SEL_INSTRUCTIONS	0xc0
/* No model maps or constrains it: a plain raw event. */
#define SEL_OTHER		0x3f
/* P6: cycles run on either counter; the other two on counter 0 only. */
#define P6_CYCLES		0x79
#define P6_FLOPS		0xc1
#define P6_FP_COMP_OPS		0x10

/* Emulated events per microsecond of counting, by generic event. */
static const unsigned int emu_rate[PMC_HW_MAX] = {
	[PMC_HW_CPU_CYCLES]		= 1000,
	[PMC_HW_INSTRUCTIONS]		= 500,
	[PMC_HW_CACHE_REFERENCES]	= 40,
	[PMC_HW_CACHE_MISSES]		= 4,
	[PMC_HW_BRANCH_INSTRUCTIONS]	= 100,
	[PMC_HW_BRANCH_MISSES]		= 5,
	[PMC_HW_BUS_CYCLES]		= 125,
};

#define EMU_RAW_RATE	100	/* a raw select that no generic event maps to */

/* Kernel mode may be counted: CAP_PERFMON (root here) or paranoid <= 1. */
static bool may_count_kernel(void)
{
	long level = 2;

	if (geteuid() == 0)
		return true;
	return !read_int_file(PARANOID_PATH, &level) && level <= 1;
}

/* A counting hardware counter, in kernel mode too where allowed. */
static void hw_attr(struct pmc_attr *attr, __u64 config, __u32 read_format)
{
	memset(attr, 0, sizeof(*attr));
	attr->config = config;
	attr->read_format = read_format;
	attr->exclude_kernel = !may_count_kernel();
}

static int hw_open(struct __test_metadata *_metadata, __u64 config,
		   int group_fd, __u32 read_format)
{
	struct pmc_attr attr;

	hw_attr(&attr, config, read_format);
	return counter_open(_metadata, &attr, 0, -1, group_fd);
}

/* pmc_open()'s errno for @config on the calling task; 0 if it opened. */
static int hw_open_errno(__u64 config)
{
	struct pmc_attr attr;

	hw_attr(&attr, config, 0);
	return pmc_open_errno(&attr, 0, -1, -1, 0);
}

/*
 * group_values() - read the @nr values of a group, leader first
 *
 * @fd is any counter of the group opened with PMC_FORMAT_GROUP alone.
 */
static void group_values(struct __test_metadata *_metadata, int fd,
			 unsigned int nr, __u64 *values)
{
	__u64 buf[16];

	ASSERT_GT(ARRAY_SIZE(buf), nr);
	ASSERT_EQ(nr, group_read(_metadata, fd, PMC_FORMAT_GROUP, buf,
				 ARRAY_SIZE(buf)));
	memcpy(values, &buf[1], nr * sizeof(*values));
}

/*
 * open_clocked_group() - a task-clock leader with hardware members
 *
 * The clock goes on and off the CPU with the members, so its value is
 * the time they counted. fds[0] is the leader, to be read with
 * group_values(); fds[1..nr] count @configs in that order. The leader
 * opens disabled and is enabled once the group is complete, as perf
 * stat does, so that the clock does not run alone meanwhile.
 */
static void open_clocked_group(struct __test_metadata *_metadata, pid_t pid,
			       const __u64 *configs, unsigned int nr, int *fds)
{
	struct pmc_attr attr;
	unsigned int i;

	pmc_sw_attr(&attr, PMC_SW_TASK_CLOCK, PMC_FORMAT_GROUP);
	attr.disabled = 1;
	fds[0] = counter_open(_metadata, &attr, pid, -1, -1);
	for (i = 0; i < nr; i++) {
		hw_attr(&attr, configs[i], 0);
		fds[i + 1] = counter_open(_metadata, &attr, pid, -1, fds[0]);
	}
	counter_ioctl(_metadata, fds[0], PMC_IOC_ENABLE);
}

/* An emulated @count over @ns of counting matches @rate per microsecond. */
static void expect_rate(struct __test_metadata *_metadata, const char *what,
			__u64 count, __u64 ns, unsigned int rate,
			unsigned int pct)
{
	__u64 want = ns * rate / 1000;

	EXPECT_TRUE(near(count, want, pct, 2)) {
		TH_LOG("%s: %llu events in %llu ns of task-clock; want %llu (%u per us, +-%u%%)",
		       what, (unsigned long long)count,
		       (unsigned long long)ns, (unsigned long long)want, rate,
		       pct);
	}
}

/* A child that burns CPU once told to, then exits. */
struct burner {
	int go[2];
	__u64 burn_ns;
};

static int burner_main(void *arg)
{
	struct burner *b = arg;
	char c;

	close(b->go[1]);
	if (read(b->go[0], &c, 1) != 1)
		return 1;
	burn_cpu(b->burn_ns);
	return 0;
}

static pid_t burner_spawn(struct __test_metadata *_metadata, struct burner *b)
{
	pid_t pid;

	ASSERT_EQ(0, pipe(b->go));
	pid = spawn(_metadata, burner_main, b);
	close(b->go[0]);
	return pid;
}

/* Let the burner run, and reap it; it must exit with 0. */
static void burner_run(struct __test_metadata *_metadata, struct burner *b,
		       pid_t pid)
{
	ASSERT_EQ(1, write(b->go[1], "g", 1));
	close(b->go[1]);
	ASSERT_EQ(0, reap(_metadata, pid, NULL));
}

/* A perf hardware cycles counter on the calling task, or -1 and errno. */
static int perf_cycles_open(void)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_HARDWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_HW_CPU_CYCLES,
		.exclude_kernel = 1,
		.exclude_hv = 1,
	};

	return syscall(__NR_perf_event_open, &attr, 0, -1, -1, 0);
}

FIXTURE(hw) {
	const char *emu_param;		/* pmc_emu= value, or NULL */
	const struct emu_model *emu;	/* the emulated model, or NULL */
	int hw_err;			/* errno of opening cycles; 0: works */
	bool root;
};

FIXTURE_SETUP(hw)
{
	require_pmc_open(_metadata);
	self->root = geteuid() == 0;
	self->emu_param = cmdline_emu();
	self->emu = emu_model_by_name(self->emu_param);
	self->hw_err = hw_open_errno(HW(PMC_HW_CPU_CYCLES));
	if (self->emu_param && !self->emu)
		TH_LOG("pmc_emu=%s: a model this test does not know",
		       self->emu_param);
	/* A boot that asks for the emulated PMU must get it. */
	if (self->emu) {
		ASSERT_EQ(0, self->hw_err) {
			TH_LOG("booted with pmc_emu=%s, but pmc_open(cycles): %s",
			       self->emu->name, strerror(self->hw_err));
		}
	}
}

FIXTURE_TEARDOWN(hw)
{
}

/* Reasons to skip. */
#define NO_HW		"no hardware counters: pmc_open(cycles) gives %s"
#define NO_EMU		"needs the emulated PMU: boot with pmc_emu=p6, k7 or fam17h"
#define NO_P6		"P6 counter constraints: boot with pmc_emu=p6"

static bool is_p6(const struct emu_model *emu)
{
	return emu && !strcmp(emu->name, "p6");
}

/* No PMU at all: every hardware event is ENODEV, software still works. */
TEST_F(hw, no_pmu_is_enodev)
{
	struct pmc_attr attr;
	unsigned int id;
	int clock, err;

	if (self->emu_param)
		SKIP(return, "booted with pmc_emu=%s", self->emu_param);
	if (!access(PERF_CPU_PMU, F_OK))
		SKIP(return, "there may be a real PMU: %s exists", PERF_CPU_PMU);

	for (id = 0; id < PMC_HW_MAX; id++) {
		err = hw_open_errno(HW(id));
		EXPECT_EQ(ENODEV, err) {
			TH_LOG("%s: %s", hw_names[id], strerror(err));
		}
	}
	err = hw_open_errno(RAW(SEL_INSTRUCTIONS));
	EXPECT_EQ(ENODEV, err) TH_LOG("raw event: %s", strerror(err));

	/* nor may a hardware counter join a software group */
	pmc_sw_attr(&attr, PMC_SW_TASK_CLOCK, 0);
	clock = counter_open(_metadata, &attr, 0, -1, -1);
	hw_attr(&attr, HW(PMC_HW_CPU_CYCLES), 0);
	err = pmc_open_errno(&attr, 0, -1, clock, 0);
	EXPECT_EQ(ENODEV, err) TH_LOG("cycles in a group: %s", strerror(err));

	burn_cpu(SHORT_BURN_NS);
	EXPECT_LE(SHORT_BURN_NS * 9 / 10, counter_value(_metadata, clock));
	close(clock);
}

/*
 * Every generic event the model has counts at its emulated rate; AMD
 * models have no bus-cycles event, and ids past the last are invalid.
 */
TEST_F(hw, generic_events)
{
	static const __u64 bad_ids[] = {
		PMC_HW_MAX, PMC_HW_MAX + 1, PMC_CONFIG_ID_MASK,
	};
	unsigned int id, i;
	__u64 config, v[2];
	int fds[2], err;

	if (!self->emu)
		SKIP(return, NO_EMU);
	for (id = 0; id < PMC_HW_MAX; id++) {
		config = HW(id);
		if (id == PMC_HW_BUS_CYCLES && self->emu->amd) {
			err = hw_open_errno(config);
			EXPECT_EQ(EINVAL, err) {
				TH_LOG("bus-cycles on %s: %s", self->emu->name,
				       strerror(err));
			}
			continue;
		}
		open_clocked_group(_metadata, 0, &config, 1, fds);
		burn_cpu(SHORT_BURN_NS);
		group_values(_metadata, fds[0], 2, v);
		EXPECT_LT(0, v[1]) TH_LOG("%s counted nothing", hw_names[id]);
		expect_rate(_metadata, hw_names[id], v[1], v[0], emu_rate[id], 10);
		close_group(fds, 2);
	}

	for (i = 0; i < ARRAY_SIZE(bad_ids); i++) {
		err = hw_open_errno(HW(bad_ids[i]));
		EXPECT_EQ(EINVAL, err) {
			TH_LOG("hardware id %#llx: %s",
			       (unsigned long long)bad_ids[i], strerror(err));
		}
	}
}

/* Over one group's lifetime, cycles = task-clock ns = 2 * instructions. */
TEST_F(hw, rates_match_model)
{
	static const __u64 configs[] = {
		HW(PMC_HW_CPU_CYCLES), HW(PMC_HW_INSTRUCTIONS),
	};
	__u64 v[3];
	int fds[3];

	if (!self->emu)
		SKIP(return, NO_EMU);
	/* two hardware members: fits even the two counters of P6 */
	open_clocked_group(_metadata, 0, configs, 2, fds);
	burn_cpu(BURN_NS);
	group_values(_metadata, fds[0], 3, v);

	EXPECT_LE(BURN_NS * 9 / 10, v[0]);
	expect_rate(_metadata, "cycles", v[1], v[0], 1000, 5);
	EXPECT_TRUE(near(v[2], v[1] / 2, 5, 2)) {
		TH_LOG("%llu instructions in %llu cycles; want half",
		       (unsigned long long)v[2], (unsigned long long)v[1]);
	}
	close_group(fds, 3);
}

struct raw_case {
	const char *what;
	__u64 sel;
	unsigned int rate;	/* emulated events per us */
	bool amd_only;		/* EINVAL on P6 */
};

/*
 * Raw event selects: the event, unit mask, edge, invert and counter
 * mask fields count (and AMD's event bits 35:32); the bits the kernel
 * owns and the bits the model lacks give EINVAL, as does 0.
 */
TEST_F(hw, raw_events)
{
	static const struct raw_case counting[] = {
		{ "instructions", SEL_INSTRUCTIONS, 500 },
		{ "plain raw event", SEL_OTHER, EMU_RAW_RATE },
		{ "umask, edge, inv, cmask",
		  SEL_OTHER | SEL_UMASK(0x12) | SEL_EDGE | SEL_INV | SEL_CMASK(1),
		  EMU_RAW_RATE },
		{ "AMD event bit 32", SEL_OTHER | SEL_AMD_HI(0x1),
		  EMU_RAW_RATE, true },
		{ "AMD event bits 35:32", SEL_OTHER | SEL_AMD_HI(0xf),
		  EMU_RAW_RATE, true },
	};
	static const struct raw_case rejected[] = {
		{ "zero", 0 },
		{ "USR", SEL_OTHER | SEL_USR },
		{ "OS", SEL_OTHER | SEL_OS },
		{ "INT", SEL_OTHER | SEL_INT },
		{ "EN", SEL_OTHER | SEL_EN },
		{ "pin control", SEL_OTHER | SEL_PC },
		{ "any thread", SEL_OTHER | SEL_ANY },
		{ "bit 36", SEL_OTHER | (1ULL << 36) },
		{ "bit 40", SEL_OTHER | (1ULL << 40) },
		{ "bit 62", SEL_OTHER | (1ULL << 62) },
	};
	const struct raw_case *rc;
	unsigned int i;
	__u64 config, v[2];
	int fds[2], err;

	if (!self->emu)
		SKIP(return, NO_EMU);
	for (i = 0; i < ARRAY_SIZE(counting); i++) {
		rc = &counting[i];
		config = RAW(rc->sel);
		if (rc->amd_only && !self->emu->amd) {
			err = hw_open_errno(config);
			EXPECT_EQ(EINVAL, err) {
				TH_LOG("%s (%#llx) on %s: %s", rc->what,
				       (unsigned long long)rc->sel,
				       self->emu->name, strerror(err));
			}
			continue;
		}
		open_clocked_group(_metadata, 0, &config, 1, fds);
		burn_cpu(SHORT_BURN_NS);
		group_values(_metadata, fds[0], 2, v);
		EXPECT_LT(0, v[1]) TH_LOG("%s counted nothing", rc->what);
		expect_rate(_metadata, rc->what, v[1], v[0], rc->rate, 10);
		close_group(fds, 2);
	}

	for (i = 0; i < ARRAY_SIZE(rejected); i++) {
		rc = &rejected[i];
		err = hw_open_errno(RAW(rc->sel));
		EXPECT_EQ(EINVAL, err) {
			TH_LOG("raw %s (%#llx): %s", rc->what,
			       (unsigned long long)rc->sel, strerror(err));
		}
	}
}

TEST_F(hw, enable_disable_reset)
{
	struct pmc_reading r0, r1, r2, r3, r4, r5;
	struct pmc_attr attr;
	int fd;

	if (self->hw_err)
		SKIP(return, NO_HW, strerror(self->hw_err));
	hw_attr(&attr, HW(PMC_HW_CPU_CYCLES), ALL_TIMES);
	attr.disabled = 1;
	fd = counter_open(_metadata, &attr, 0, -1, -1);

	/* disabled at open: nothing counts, no time passes */
	burn_cpu(SHORT_BURN_NS);
	r0 = counter_read(_metadata, fd, ALL_TIMES);
	EXPECT_EQ(0, r0.value);
	EXPECT_EQ(0, r0.enabled);
	EXPECT_EQ(0, r0.running);

	counter_ioctl(_metadata, fd, PMC_IOC_ENABLE);
	burn_cpu(SHORT_BURN_NS);
	r1 = counter_read(_metadata, fd, ALL_TIMES);
	EXPECT_LT(0, r1.value);
	EXPECT_LT(0, r1.running);
	EXPECT_LE(r1.running, r1.enabled);
	if (self->emu)	/* a cycle per nanosecond */
		EXPECT_LE(SHORT_BURN_NS * 9 / 10, r1.value);

	/* disabled again: value and times freeze */
	counter_ioctl(_metadata, fd, PMC_IOC_DISABLE);
	r2 = counter_read(_metadata, fd, ALL_TIMES);
	burn_cpu(SHORT_BURN_NS);
	r3 = counter_read(_metadata, fd, ALL_TIMES);
	EXPECT_LE(r1.value, r2.value);
	EXPECT_EQ(r2.value, r3.value);
	EXPECT_EQ(r2.enabled, r3.enabled);
	EXPECT_EQ(r2.running, r3.running);

	/* a reset of a running counter restarts it from 0 */
	counter_ioctl(_metadata, fd, PMC_IOC_ENABLE);
	burn_cpu(SHORT_BURN_NS);
	counter_ioctl(_metadata, fd, PMC_IOC_RESET);
	r4 = counter_read(_metadata, fd, ALL_TIMES);
	EXPECT_GT(r3.value / 2, r4.value);
	EXPECT_LE(r3.running, r4.running);
	burn_cpu(SHORT_BURN_NS);
	r5 = counter_read(_metadata, fd, ALL_TIMES);
	EXPECT_LT(r4.value, r5.value);

	/* and of a disabled one to exactly 0 */
	counter_ioctl(_metadata, fd, PMC_IOC_DISABLE);
	counter_ioctl(_metadata, fd, PMC_IOC_RESET);
	EXPECT_EQ(0, counter_read(_metadata, fd, ALL_TIMES).value);
	close(fd);
}

/* With USR and OS both clear the counter is on the PMU but counts nothing. */
TEST_F(hw, exclude_both_counts_nothing)
{
	struct pmc_attr attr;
	struct pmc_reading r;
	int fd;

	if (!self->emu)
		SKIP(return, NO_EMU);
	hw_attr(&attr, HW(PMC_HW_CPU_CYCLES), ALL_TIMES);
	attr.exclude_user = 1;
	attr.exclude_kernel = 1;
	fd = counter_open(_metadata, &attr, 0, -1, -1);
	burn_cpu(SHORT_BURN_NS);
	r = counter_read(_metadata, fd, ALL_TIMES);
	EXPECT_EQ(0, r.value);
	EXPECT_LT(0, r.running) TH_LOG("the counter never went on the PMU");
	close(fd);
}

/*
 * A short period makes the hardware counter wrap every 100 us. Read
 * back thousands of times, the 64-bit count never goes back and never
 * jumps by the counter's range (2^40 or 2^48).
 */
TEST_F(hw, monotonic_across_wrap)
{
	__u64 prev = 0, start, v[2];
	unsigned int reads = 0;
	struct pmc_reading r;
	struct pmc_attr attr;
	int cycles, clock, ret;

	if (self->hw_err)
		SKIP(return, NO_HW, strerror(self->hw_err));
	hw_attr(&attr, HW(PMC_HW_CPU_CYCLES), 0);
	attr.irq_period = FAST_PERIOD;
	cycles = counter_open(_metadata, &attr, 0, -1, -1);
	/* the clock reads the group: the cycles counter reads alone */
	pmc_sw_attr(&attr, PMC_SW_TASK_CLOCK, PMC_FORMAT_GROUP);
	clock = counter_open(_metadata, &attr, 0, -1, cycles);

	start = thread_cputime_ns();
	do {
		ret = pmc_read(cycles, 0, &r);
		ASSERT_EQ(0, ret) TH_LOG("read %u: %s", reads, strerror(-ret));
		ASSERT_LE(prev, r.value) {
			TH_LOG("read %u went back from %llu to %llu", reads,
			       (unsigned long long)prev,
			       (unsigned long long)r.value);
		}
		ASSERT_GE(MAX_STEP, r.value - prev) {
			TH_LOG("read %u jumped by %llu, from %llu to %llu (counter width %u)",
			       reads, (unsigned long long)(r.value - prev),
			       (unsigned long long)prev,
			       (unsigned long long)r.value,
			       self->emu ? self->emu->width : 0);
		}
		prev = r.value;
		reads++;
	} while (thread_cputime_ns() - start < LONG_BURN_NS);

	EXPECT_LE(100, reads);
	EXPECT_LT(0, nr_overflows(_metadata, cycles));
	/*
	 * No events lost at the wraps either. 10%: thousands of overflow
	 * NMIs and read IPIs move the emulated counter's start and stop
	 * against task-clock's on a debug kernel under TCG.
	 */
	if (self->emu) {
		group_values(_metadata, clock, 2, v);
		expect_rate(_metadata, "cycles", v[0], v[1], 1000, 10);
	}
	close(clock);
	close(cycles);
}

/*
 * A period of 1 ms of cycles gives one overflow interrupt per period;
 * a counting counter takes none that it reports, and the reloads of
 * the period do not change the count.
 */
TEST_F(hw, overflow_count)
{
	__u64 v[2], nr, want;
	struct pmc_attr attr;
	int sampling, counting;

	if (self->hw_err)
		SKIP(return, NO_HW, strerror(self->hw_err));
	hw_attr(&attr, HW(PMC_HW_CPU_CYCLES), 0);
	attr.irq_period = SLOW_PERIOD;
	sampling = counter_open(_metadata, &attr, 0, -1, -1);
	counting = hw_open(_metadata, HW(PMC_HW_CPU_CYCLES), sampling,
			   PMC_FORMAT_GROUP);

	burn_cpu(LONG_BURN_NS);
	group_values(_metadata, counting, 2, v);
	nr = nr_overflows(_metadata, sampling);
	want = v[0] / SLOW_PERIOD;

	if (self->emu)
		EXPECT_LE(LONG_BURN_NS * 9 / 10, v[0]);
	EXPECT_TRUE(near(nr, want, 10, 2)) {
		TH_LOG("%llu overflows for %llu cycles, period %llu: want %llu",
		       (unsigned long long)nr, (unsigned long long)v[0],
		       SLOW_PERIOD, (unsigned long long)want);
	}
	EXPECT_EQ(0, nr_overflows(_metadata, counting));
	EXPECT_TRUE(near(v[0], v[1], 5, 0)) {
		TH_LOG("sampling counter %llu cycles, counting one %llu",
		       (unsigned long long)v[0], (unsigned long long)v[1]);
	}
	close(counting);
	close(sampling);
}

/*
 * P6: 0xc1 only runs on counter 0, where a group's 0x79 goes first, so
 * 0x79 has to move to counter 1 whenever the group goes on.
 */
TEST_F(hw, p6_constraints)
{
	__u64 v0[2], v1[2], d79, dc1;
	struct pmc_attr attr;
	int leader, member, first;
	char state[16];
	__u64 buf[4];

	if (!is_p6(self->emu))
		SKIP(return, NO_P6);
	leader = hw_open(_metadata, RAW(P6_CYCLES), -1, PMC_FORMAT_GROUP);
	member = hw_open(_metadata, RAW(P6_FLOPS), leader, 0);
	group_values(_metadata, leader, 2, v0);
	burn_cpu(BURN_NS / 2);
	group_values(_metadata, leader, 2, v1);
	d79 = v1[0] - v0[0];
	dc1 = v1[1] - v0[1];
	EXPECT_LT(0, d79);
	EXPECT_LT(0, dc1);
	EXPECT_TRUE(near(dc1, d79 * EMU_RAW_RATE / emu_rate[PMC_HW_CPU_CYCLES],
			 10, 2)) {
		TH_LOG("0xc1 counted %llu while 0x79 counted %llu",
		       (unsigned long long)dc1, (unsigned long long)d79);
	}
	close(member);
	close(leader);

	/* two counter-0 events can never be in one group */
	hw_attr(&attr, RAW(P6_FLOPS), 0);
	leader = counter_open(_metadata, &attr, 0, -1, -1);
	hw_attr(&attr, RAW(P6_FP_COMP_OPS), 0);
	EXPECT_EQ(EINVAL, pmc_open_errno(&attr, 0, -1, leader, 0));
	close(leader);

	/*
	 * Two pinned groups that want counter 0: the second does not fit
	 * while the first is on, and enters the error state.
	 */
	hw_attr(&attr, RAW(P6_FLOPS), 0);
	attr.pinned = 1;
	first = counter_open(_metadata, &attr, 0, -1, -1);
	hw_attr(&attr, RAW(P6_FP_COMP_OPS), 0);
	attr.pinned = 1;
	attr.disabled = 1;
	leader = counter_open(_metadata, &attr, 0, -1, -1);
	counter_ioctl(_metadata, leader, PMC_IOC_ENABLE);
	EXPECT_EQ(0, read(leader, buf, sizeof(buf)));
	ASSERT_EQ(0, fdinfo_field(leader, "pmc-state", state, sizeof(state)));
	EXPECT_STREQ("error", state);
	/* every later schedule fails the same way */
	usleep(1000);
	burn_cpu(SHORT_BURN_NS);
	EXPECT_EQ(0, read(leader, buf, sizeof(buf)));

	/* disabling leaves the error state; enabling fails again */
	counter_ioctl(_metadata, leader, PMC_IOC_DISABLE);
	EXPECT_EQ(sizeof(__u64), read(leader, buf, sizeof(buf)));
	counter_ioctl(_metadata, leader, PMC_IOC_ENABLE);
	EXPECT_EQ(0, read(leader, buf, sizeof(buf)));
	close(leader);
	close(first);
}

/*
 * A group counts all together or not at all: a P6 counter-0 event may
 * not join a group whose leader needs counter 0, enabled or not, for
 * the group could never go on; the leader counts on alone.
 */
TEST_F(hw, p6_group_never_fits_refused)
{
	struct pmc_reading r1, r2;
	struct pmc_attr attr;
	int leader;

	if (!is_p6(self->emu))
		SKIP(return, NO_P6);
	leader = hw_open(_metadata, RAW(P6_FLOPS), -1, ALL_TIMES);
	hw_attr(&attr, RAW(P6_FP_COMP_OPS), 0);
	EXPECT_EQ(EINVAL, pmc_open_errno(&attr, 0, -1, leader, 0));
	attr.disabled = 1;
	EXPECT_EQ(EINVAL, pmc_open_errno(&attr, 0, -1, leader, 0));
	r1 = counter_read(_metadata, leader, ALL_TIMES);
	burn_cpu(SHORT_BURN_NS);
	r2 = counter_read(_metadata, leader, ALL_TIMES);
	EXPECT_LT(r1.value, r2.value) TH_LOG("the leader alone does not count");
	EXPECT_LT(r1.running, r2.running);
	close(leader);
}

/*
 * A group with one hardware event more than the model has counters
 * could never go on: the member that would make it so is refused, and
 * the group as it is counts.
 */
TEST_F(hw, oversized_group_refused)
{
	int fds[MAX_COUNTERS];
	struct pmc_reading r;
	struct pmc_attr attr;
	unsigned int nr, i;

	if (!self->emu)
		SKIP(return, NO_EMU);
	nr = self->emu->nr_counters;
	ASSERT_GE(MAX_COUNTERS, nr);
	hw_attr(&attr, RAW(SEL_OTHER), ALL_TIMES);
	fds[0] = counter_open(_metadata, &attr, 0, -1, -1);
	for (i = 1; i < nr; i++)
		fds[i] = hw_open(_metadata, RAW(SEL_OTHER | SEL_UMASK(i)),
				 fds[0], 0);
	hw_attr(&attr, RAW(SEL_OTHER | SEL_UMASK(nr)), 0);
	EXPECT_EQ(EINVAL, pmc_open_errno(&attr, 0, -1, fds[0], 0));

	burn_cpu(SHORT_BURN_NS);
	r = counter_read(_metadata, fds[0], ALL_TIMES);
	EXPECT_LT(0, r.value) TH_LOG("a group that fits did not go on");
	EXPECT_LT(0, r.running);
	close_group(fds, nr);
}

/* A counter on another task counts that task, and keeps the final count. */
TEST_F(hw, other_task)
{
	static const __u64 config = HW(PMC_HW_CPU_CYCLES);
	struct burner b = { .burn_ns = BURN_NS };
	__u64 v[2];
	int fds[2];
	pid_t child;

	if (!self->emu)
		SKIP(return, NO_EMU);
	child = burner_spawn(_metadata, &b);
	open_clocked_group(_metadata, child, &config, 1, fds);
	burner_run(_metadata, &b, child);

	group_values(_metadata, fds[0], 2, v);
	EXPECT_LE(BURN_NS * 9 / 10, v[0]);
	expect_rate(_metadata, "child's cycles", v[1], v[0], 1000, 5);
	close_group(fds, 2);
}

/* Counts follow the task across CPUs: each CPU's counter is handed over. */
TEST_F(hw, migration)
{
	static const __u64 config = HW(PMC_HW_CPU_CYCLES);
	unsigned int flips = 0;
	struct pmc_attr attr;
	int cpus[2], fds[3];
	__u64 start, v[3];

	if (!self->emu)
		SKIP(return, NO_EMU);
	if (allowed_cpus(cpus, 2) < 2)
		SKIP(return, "needs two CPUs to migrate between");

	open_clocked_group(_metadata, 0, &config, 1, fds);
	pmc_sw_attr(&attr, PMC_SW_CPU_MIGRATIONS, 0);
	fds[2] = counter_open(_metadata, &attr, 0, -1, fds[0]);

	start = thread_cputime_ns();
	do {
		ASSERT_EQ(0, pin_to_cpu(cpus[flips++ % 2]));
		burn_cpu(FLIP_NS);
	} while (thread_cputime_ns() - start < BURN_NS);

	group_values(_metadata, fds[0], 3, v);
	EXPECT_LE(flips / 2, v[2]) {
		TH_LOG("%llu migrations in %u affinity flips",
		       (unsigned long long)v[2], flips);
	}
	expect_rate(_metadata, "cycles across migrations", v[1], v[0], 1000, 5);
	close_group(fds, 3);
}

/* A per-CPU cycles counter counts what runs on its CPU: us. */
TEST_F(hw, per_cpu_hardware)
{
	__u64 v0, v1, t0, t1, w0, w1, dv;
	struct pmc_attr attr;
	int cpu, fd;

	if (self->hw_err)
		SKIP(return, NO_HW, strerror(self->hw_err));
	if (!self->root)
		SKIP(return, "per-CPU counters need CAP_PERFMON at pmc_paranoid 2");

	ASSERT_EQ(1, allowed_cpus(&cpu, 1));
	ASSERT_EQ(0, pin_to_cpu(cpu));
	hw_attr(&attr, HW(PMC_HW_CPU_CYCLES), 0);
	fd = counter_open(_metadata, &attr, -1, cpu, -1);

	v0 = counter_value(_metadata, fd);
	t0 = thread_cputime_ns();
	w0 = monotonic_ns();
	burn_cpu(BURN_NS / 2);
	t1 = thread_cputime_ns();
	w1 = monotonic_ns();
	v1 = counter_value(_metadata, fd);

	dv = v1 - v0;
	EXPECT_LT(v0, v1);
	/* at least our CPU time, at most the wall time: it counts idle too */
	if (self->emu) {
		EXPECT_TRUE(dv >= (t1 - t0) * 9 / 10 &&
			    dv <= (w1 - w0) * 11 / 10 + 2 * NSEC_PER_MSEC) {
			TH_LOG("CPU %d counted %llu cycles; we ran %llu ns in %llu ns",
			       cpu, (unsigned long long)dv,
			       (unsigned long long)(t1 - t0),
			       (unsigned long long)(w1 - w0));
		}
	}
	close(fd);
}

/*
 * pmc and perf share the PMU through the perfctr reservation: while one
 * holds hardware counters, the other gets EBUSY.
 */
TEST_F(hw, perf_coexistence)
{
	int perf, pmc, err;

	perf = perf_cycles_open();
	if (perf < 0)
		SKIP(return, "perf has no hardware counters: perf_event_open(cycles) gives %s",
		     strerror(errno));
	close(perf);
	if (self->emu)
		SKIP(return, "pmc_emu=%s: the emulated PMU shares no counters with perf",
		     self->emu->name);
	if (self->hw_err)
		SKIP(return, "pmc has no hardware counters: pmc_open(cycles) gives %s",
		     strerror(self->hw_err));

	perf = perf_cycles_open();
	ASSERT_LE(0, perf) TH_LOG("perf_event_open: %s", strerror(errno));
	err = hw_open_errno(HW(PMC_HW_CPU_CYCLES));
	EXPECT_EQ(EBUSY, err) TH_LOG("pmc_open beside perf: %s", strerror(err));
	close(perf);

	pmc = hw_open(_metadata, HW(PMC_HW_CPU_CYCLES), -1, 0);
	errno = 0;
	perf = perf_cycles_open();
	err = errno;
	EXPECT_GT(0, perf);
	EXPECT_EQ(EBUSY, err) TH_LOG("perf_event_open beside pmc: %s", strerror(err));
	if (perf >= 0)
		close(perf);
	close(pmc);

	/* both let go: perf gets the counters back */
	perf = perf_cycles_open();
	EXPECT_LE(0, perf) TH_LOG("perf_event_open after pmc: %s", strerror(errno));
	if (perf >= 0)
		close(perf);
}

TEST_HARNESS_MAIN
