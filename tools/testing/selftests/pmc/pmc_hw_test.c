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
#include <sys/klog.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include <linux/perf_event.h>

#include "../kselftest_harness.h"
#include "pmc_harness.h"
#include "pmc_ring.h"
/* The emulated PMU's rates, from arch/x86/events-lite (see Makefile). */
#include "emu_rate.h"

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

/* Burn a little CPU, then read @fd's value and the times in @fmt. */
static struct pmc_reading burn_read(struct __test_metadata *_metadata, int fd,
				    __u32 fmt)
{
	burn_cpu(SHORT_BURN_NS);
	return counter_read(_metadata, fd, fmt);
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

/*
 * The host may stop a TCG vCPU for milliseconds at any moment, also
 * between the kernel's reads of a group's clock and of its members
 * (boots under load log "hrtimer: interrupt took 13805148 ns"): the
 * stall then counts in one and not the other. Such a stall is rare, so
 * the rate tests measure again when a rate misses; one that misses
 * RATE_TRIES times in a row is a bug.
 */
#define RATE_TRIES	3

/* An emulated @count over @ns of counting matches @rate per microsecond. */
static bool rate_near(__u64 count, __u64 ns, unsigned int rate,
		      unsigned int pct)
{
	return near(count, ns * rate / 1000, pct, 2);
}

static void expect_rate(struct __test_metadata *_metadata, const char *what,
			__u64 count, __u64 ns, unsigned int rate,
			unsigned int pct)
{
	EXPECT_TRUE(rate_near(count, ns, rate, pct)) {
		TH_LOG("%s: %llu events in %llu ns of task-clock; want %llu (%u per us, +-%u%%)",
		       what, (unsigned long long)count,
		       (unsigned long long)ns,
		       (unsigned long long)(ns * rate / 1000), rate, pct);
	}
}

/*
 * burn_clocked() - burn @burn_ns of CPU under a clocked group of @configs
 *
 * Fills @v with the task-clock ns, then the @nr members' counts.
 */
static void burn_clocked(struct __test_metadata *_metadata,
			 const __u64 *configs, unsigned int nr, __u64 burn_ns,
			 __u64 *v)
{
	int fds[MAX_COUNTERS + 1];

	ASSERT_GE(MAX_COUNTERS, nr);
	open_clocked_group(_metadata, 0, configs, nr, fds);
	burn_cpu(burn_ns);
	group_values(_metadata, fds[0], nr + 1, v);
	close_group(fds, nr + 1);
}

/*
 * burn_at_rate() - burn_clocked() one @config until it counts at @rate
 *
 * Measures again when the rate misses (see RATE_TRIES); @v keeps the
 * last measurement, for the caller's expect_rate().
 */
static void burn_at_rate(struct __test_metadata *_metadata, __u64 config,
			 __u64 burn_ns, unsigned int rate, unsigned int pct,
			 __u64 *v)
{
	unsigned int try;

	for (try = 1; try <= RATE_TRIES; try++) {
		burn_clocked(_metadata, &config, 1, burn_ns, v);
		if (rate_near(v[1], v[0], rate, pct))
			return;
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
	struct perf_event_attr attr;

	perf_user_hw_attr(&attr, PERF_COUNT_HW_CPU_CYCLES);
	return perf_open_self(&attr, -1);
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

/* The emulated PMU's parameters and the throttle's sysctl. */
#define EMU_PARAM(name)		"/sys/module/pmc_emu/parameters/" name
#define MAX_RATE_PATH		"/proc/sys/kernel/pmc_max_sample_rate"

/* Reasons to skip. */
#define NO_HW		"no hardware counters: pmc_open(cycles) gives %s"
#define NO_EMU		"needs the emulated PMU: boot with pmc_emu=p6, k7, fam15h, fam17h, archperf or zen4"
#define NO_ROOT_EMU	"needs root: sets the emulated PMU's parameters"
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
	if (perf_has_hw_pmu())
		SKIP(return, "perf's hardware PMU serves them (pmc_pmu_test)");

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
 * models have no bus-cycles event, and ids past the last name none:
 * ENOENT for both, as perf gives for an event the PMU does not have.
 */
TEST_F(hw, generic_events)
{
	static const __u64 bad_ids[] = {
		PMC_HW_MAX, PMC_HW_MAX + 1, PMC_CONFIG_ID_MASK,
	};
	unsigned int id, i;
	__u64 config, v[2];
	int err;

	if (!self->emu)
		SKIP(return, NO_EMU);
	for (id = 0; id < PMC_HW_MAX; id++) {
		config = HW(id);
		if (id == PMC_HW_BUS_CYCLES && self->emu->amd) {
			err = hw_open_errno(config);
			EXPECT_EQ(ENOENT, err) {
				TH_LOG("bus-cycles on %s: %s", self->emu->name,
				       strerror(err));
			}
			continue;
		}
		burn_at_rate(_metadata, config, SHORT_BURN_NS,
			     pmc_emu_rate[id], 10, v);
		EXPECT_LT(0, v[1]) TH_LOG("%s counted nothing", hw_names[id]);
		expect_rate(_metadata, hw_names[id], v[1], v[0],
			    pmc_emu_rate[id], 10);
	}

	for (i = 0; i < ARRAY_SIZE(bad_ids); i++) {
		err = hw_open_errno(HW(bad_ids[i]));
		EXPECT_EQ(ENOENT, err) {
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
	unsigned int try;
	__u64 v[3];

	if (!self->emu)
		SKIP(return, NO_EMU);
	/* two hardware members: fits even the two counters of P6 */
	for (try = 1; try <= RATE_TRIES; try++) {
		burn_clocked(_metadata, configs, 2, BURN_NS, v);
		if (rate_near(v[1], v[0], 1000, 5) &&
		    near(v[2], v[1] / 2, 5, 2))
			break;
	}

	EXPECT_LE(BURN_NS * 9 / 10, v[0]);
	expect_rate(_metadata, "cycles", v[1], v[0], 1000, 5);
	EXPECT_TRUE(near(v[2], v[1] / 2, 5, 2)) {
		TH_LOG("%llu instructions in %llu cycles; want half",
		       (unsigned long long)v[2], (unsigned long long)v[1]);
	}
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
		{ "plain raw event", SEL_OTHER, PMC_EMU_RAW_RATE },
		{ "umask, edge, inv, cmask",
		  SEL_OTHER | SEL_UMASK(0x12) | SEL_EDGE | SEL_INV | SEL_CMASK(1),
		  PMC_EMU_RAW_RATE },
		{ "AMD event bit 32", SEL_OTHER | SEL_AMD_HI(0x1),
		  PMC_EMU_RAW_RATE, true },
		{ "AMD event bits 35:32", SEL_OTHER | SEL_AMD_HI(0xf),
		  PMC_EMU_RAW_RATE, true },
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
	int err;

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
		burn_at_rate(_metadata, config, SHORT_BURN_NS, rc->rate, 10, v);
		EXPECT_LT(0, v[1]) TH_LOG("%s counted nothing", rc->what);
		expect_rate(_metadata, rc->what, v[1], v[0], rc->rate, 10);
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
	r0 = burn_read(_metadata, fd, ALL_TIMES);
	EXPECT_EQ(0, r0.value);
	EXPECT_EQ(0, r0.enabled);
	EXPECT_EQ(0, r0.running);

	counter_ioctl(_metadata, fd, PMC_IOC_ENABLE);
	r1 = burn_read(_metadata, fd, ALL_TIMES);
	EXPECT_LT(0, r1.value);
	EXPECT_LT(0, r1.running);
	EXPECT_LE(r1.running, r1.enabled);
	if (self->emu)	/* a cycle per nanosecond */
		EXPECT_LE(SHORT_BURN_NS * 9 / 10, r1.value);

	/* disabled again: value and times freeze */
	counter_ioctl(_metadata, fd, PMC_IOC_DISABLE);
	r2 = counter_read(_metadata, fd, ALL_TIMES);
	r3 = burn_read(_metadata, fd, ALL_TIMES);
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
	r5 = burn_read(_metadata, fd, ALL_TIMES);
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
	r = burn_read(_metadata, fd, ALL_TIMES);
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
	__u64 prev = 0, start, v0[3], v[3];
	unsigned int reads = 0, i;
	struct pmc_reading r;
	struct pmc_attr attr;
	int cycles, clock, counting, ret;

	if (self->hw_err)
		SKIP(return, NO_HW, strerror(self->hw_err));
	hw_attr(&attr, HW(PMC_HW_CPU_CYCLES), 0);
	attr.irq_period = FAST_PERIOD;
	cycles = counter_open(_metadata, &attr, 0, -1, -1);
	/* the clock reads the group: the cycles counter reads alone */
	pmc_sw_attr(&attr, PMC_SW_TASK_CLOCK, PMC_FORMAT_GROUP);
	clock = counter_open(_metadata, &attr, 0, -1, cycles);
	/* and a counting twin, which wraps only every 2^31 events */
	counting = self->emu ? hw_open(_metadata, HW(PMC_HW_CPU_CYCLES),
				      cycles, 0) : -1;

	/*
	 * Everything counts from a first read: the three opens take
	 * milliseconds under TCG, more in a host stall, and each counter
	 * counts from its own open.
	 */
	if (self->emu)
		group_values(_metadata, clock, 3, v0);
	ret = pmc_read(cycles, 0, &r);
	ASSERT_EQ(0, ret) TH_LOG("first read: %s", strerror(-ret));
	prev = r.value;
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
	 * No events lost at the wraps: over the same interval the sampler
	 * counts what its counting twin counts, and both count what
	 * task-clock says at the model's 1 GHz.
	 */
	if (self->emu) {
		group_values(_metadata, clock, 3, v);
		for (i = 0; i < 3; i++)
			v[i] -= v0[i];
		TH_LOG("%s: %llu cycles, counting twin %llu, in %llu ns of task-clock; %llu overflows",
		       self->emu->name, (unsigned long long)v[0],
		       (unsigned long long)v[2], (unsigned long long)v[1],
		       (unsigned long long)nr_overflows(_metadata, cycles));
		EXPECT_TRUE(near(v[0], v[2], 1, 2));
		EXPECT_TRUE(rate_near(v[2], v[1], 1000, 2));
	}
	if (counting >= 0)
		close(counting);
	close(clock);
	close(cycles);
}

/*
 * A period of 1 ms of cycles gives one overflow interrupt per period;
 * a counting counter takes none that it reports, and the reloads of
 * the period do not change the count. A host stall longer than a
 * period (see RATE_TRIES) passes several wraps with one interrupt.
 * The sampler opens disabled and the group is enabled once complete:
 * opened enabled, it counts the member's pmc_open() alone, which took
 * up to 16 ms of a debug kernel's CPU time (p6, as nobody).
 */
struct overflow_run {
	__u64 v[2];		/* sampling and counting cycles */
	__u64 nr;		/* overflows of the sampling counter */
	__u64 counting_nr;	/* overflows of the counting one */
};

static void burn_overflowing(struct __test_metadata *_metadata,
			     struct overflow_run *run)
{
	struct pmc_attr attr;
	int sampling, counting;

	hw_attr(&attr, HW(PMC_HW_CPU_CYCLES), 0);
	attr.irq_period = SLOW_PERIOD;
	attr.disabled = 1;
	sampling = counter_open(_metadata, &attr, 0, -1, -1);
	counting = hw_open(_metadata, HW(PMC_HW_CPU_CYCLES), sampling,
			   PMC_FORMAT_GROUP);
	counter_ioctl(_metadata, sampling, PMC_IOC_ENABLE);

	burn_cpu(LONG_BURN_NS);
	group_values(_metadata, counting, 2, run->v);
	run->nr = nr_overflows(_metadata, sampling);
	run->counting_nr = nr_overflows(_metadata, counting);
	close(counting);
	close(sampling);
}

TEST_F(hw, overflow_count)
{
	struct overflow_run run;
	unsigned int try;
	__u64 want;

	if (self->hw_err)
		SKIP(return, NO_HW, strerror(self->hw_err));
	for (try = 1; try <= RATE_TRIES; try++) {
		burn_overflowing(_metadata, &run);
		want = run.v[0] / SLOW_PERIOD;
		if (near(run.nr, want, 10, 2))
			break;
	}

	if (self->emu)
		EXPECT_LE(LONG_BURN_NS * 9 / 10, run.v[0]);
	EXPECT_TRUE(near(run.nr, want, 10, 2)) {
		TH_LOG("%llu overflows for %llu cycles, period %llu: want %llu",
		       (unsigned long long)run.nr,
		       (unsigned long long)run.v[0], SLOW_PERIOD,
		       (unsigned long long)want);
	}
	EXPECT_EQ(0, run.counting_nr);
	EXPECT_TRUE(near(run.v[0], run.v[1], 5, 0)) {
		TH_LOG("sampling counter %llu cycles, counting one %llu",
		       (unsigned long long)run.v[0],
		       (unsigned long long)run.v[1]);
	}
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
	EXPECT_TRUE(near(dc1, d79 * PMC_EMU_RAW_RATE /
			      pmc_emu_rate[PMC_HW_CPU_CYCLES], 10, 2)) {
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
	r2 = burn_read(_metadata, leader, ALL_TIMES);
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
static void burn_child_clocked(struct __test_metadata *_metadata, __u64 *v)
{
	static const __u64 config = HW(PMC_HW_CPU_CYCLES);
	struct burner b = { .burn_ns = BURN_NS };
	pid_t child;
	int fds[2];

	child = burner_spawn(_metadata, &b);
	open_clocked_group(_metadata, child, &config, 1, fds);
	burner_run(_metadata, &b, child);
	group_values(_metadata, fds[0], 2, v);
	close_group(fds, 2);
}

TEST_F(hw, other_task)
{
	unsigned int try;
	__u64 v[2];

	if (!self->emu)
		SKIP(return, NO_EMU);
	for (try = 1; try <= RATE_TRIES; try++) {
		burn_child_clocked(_metadata, v);
		if (rate_near(v[1], v[0], 1000, 5))
			break;
	}
	EXPECT_LE(BURN_NS * 9 / 10, v[0]);
	expect_rate(_metadata, "child's cycles", v[1], v[0], 1000, 5);
}

/*
 * Counts follow the task across CPUs: each CPU's counter is handed over.
 * Flips between @cpus while burning; @v gets task-clock, cycles and
 * migrations, and the return value is the number of flips.
 */
static unsigned int burn_migrating(struct __test_metadata *_metadata,
				   const int *cpus, __u64 *v)
{
	static const __u64 config = HW(PMC_HW_CPU_CYCLES);
	unsigned int flips = 0;
	struct pmc_attr attr;
	__u64 start;
	int fds[3];

	open_clocked_group(_metadata, 0, &config, 1, fds);
	pmc_sw_attr_kernel(&attr, PMC_SW_CPU_MIGRATIONS, 0);
	fds[2] = counter_open(_metadata, &attr, 0, -1, fds[0]);

	start = thread_cputime_ns();
	do {
		EXPECT_EQ(0, pin_to_cpu(cpus[flips++ % 2]));
		burn_cpu(FLIP_NS);
	} while (thread_cputime_ns() - start < BURN_NS);

	group_values(_metadata, fds[0], 3, v);
	close_group(fds, 3);
	return flips;
}

TEST_F(hw, migration)
{
	unsigned int flips, try;
	int cpus[2];
	__u64 v[3];

	if (!self->emu)
		SKIP(return, NO_EMU);
	if (allowed_cpus(cpus, 2) < 2)
		SKIP(return, "needs two CPUs to migrate between");

	for (try = 1; try <= RATE_TRIES; try++) {
		flips = burn_migrating(_metadata, cpus, v);
		if (rate_near(v[1], v[0], 1000, 5))
			break;
	}
	/* migrations are kernel-mode events: none under exclude_kernel */
	EXPECT_LE(may_count_kernel() ? flips / 2 : 0, v[2]) {
		TH_LOG("%llu migrations in %u affinity flips",
		       (unsigned long long)v[2], flips);
	}
	if (!may_count_kernel())
		EXPECT_EQ(0, v[2]);
	expect_rate(_metadata, "cycles across migrations", v[1], v[0], 1000, 5);
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

	/*
	 * The wall clock around the two reads, our CPU time between them:
	 * the counter counts whatever runs on the CPU, so a task that
	 * preempts us between a read and a clock counts in its window.
	 */
	w0 = monotonic_ns();
	v0 = counter_value(_metadata, fd);
	t0 = thread_cputime_ns();
	burn_cpu(BURN_NS / 2);
	t1 = thread_cputime_ns();
	v1 = counter_value(_metadata, fd);
	w1 = monotonic_ns();

	dv = v1 - v0;
	EXPECT_LT(v0, v1);
	/*
	 * At least our CPU time, at most the wall time: it counts idle too.
	 * The model counts sched_clock, our CPU time's clock; the bound is
	 * the larger of the two in case CLOCK_MONOTONIC lags it.
	 */
	if (self->emu) {
		__u64 most = t1 - t0 > w1 - w0 ? t1 - t0 : w1 - w0;

		EXPECT_TRUE(dv >= (t1 - t0) * 9 / 10 &&
			    dv <= most * 11 / 10 + 2 * NSEC_PER_MSEC) {
			TH_LOG("CPU %d counted %llu cycles; we ran %llu ns in %llu ns",
			       cpu, (unsigned long long)dv,
			       (unsigned long long)(t1 - t0),
			       (unsigned long long)(w1 - w0));
		}
	}
	close(fd);
}

/*
 * Where perf drives the PMU, events-lite's hardware counters are perf's
 * and perf schedules both: beside a perf event a pmc counter counts, on
 * a counter of its own. The direct driver (pmc_pmu=direct) shares the
 * PMU through the perfctr reservation instead: perf reserves every
 * counter while it has a hardware event, events-lite a counter only
 * while it has one programmed. So beside perf, pmc_open() succeeds but
 * the counter waits. Either way, beside an idle pmc counter, perf opens
 * its event.
 */
TEST_F(hw, perf_coexistence)
{
	const __u32 fmt = PMC_FORMAT_TOTAL_TIME_ENABLED |
			  PMC_FORMAT_TOTAL_TIME_RUNNING;
	const char *choice = cmdline_param("pmc_pmu");
	bool direct = choice && !strcmp(choice, "direct");
	struct pmc_reading r;
	struct pmc_attr attr;
	int perf, pmc;

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
	pmc = hw_open(_metadata, HW(PMC_HW_CPU_CYCLES), -1, fmt);
	r = burn_read(_metadata, pmc, fmt);
	EXPECT_LT(0, r.enabled);
	if (direct) {
		EXPECT_EQ(0, r.running) TH_LOG("pmc counted on perf's counters");
	} else {
		EXPECT_EQ(r.enabled, r.running) TH_LOG("perf left pmc's counter off");
		EXPECT_LT(0, r.value);
	}
	close(pmc);
	close(perf);

	hw_attr(&attr, HW(PMC_HW_CPU_CYCLES), 0);
	attr.disabled = 1;
	pmc = counter_open(_metadata, &attr, 0, -1, -1);
	perf = perf_cycles_open();
	EXPECT_LE(0, perf) TH_LOG("perf_event_open beside an idle pmc counter: %s",
				  strerror(errno));
	if (perf >= 0)
		close(perf);
	close(pmc);
}

/* The storm: overflows of a period of 1, at most one per STORM_MIN_NS. */
#define STORM_RATE	1000		/* samples/s the sysctl allows */
#define STORM_MIN_NS	50000
#define STORM_BURN_NS	(300 * NSEC_PER_MSEC)

struct storm {
	struct ring_tally tally;
	__u64 wall_ns, cpu_ns;
};

/* A period of 1 on cycles, with the model's overflows 1 us apart. */
static void storm_run(struct __test_metadata *_metadata, struct storm *st)
{
	struct pmc_attr attr;
	__u64 t0, c0;
	struct pmc_ring r;
	int fd;

	hw_attr(&attr, HW(PMC_HW_CPU_CYCLES), 0);
	attr.irq_period = 1;
	attr.record_type = PMC_RECORD_IP | PMC_RECORD_TIME;
	/* enabled once mapped: a throttle before has no buffer to go to */
	attr.disabled = 1;
	fd = counter_open(_metadata, &attr, 0, -1, -1);
	ring_map(_metadata, &r, fd, 64, true);
	counter_ioctl(_metadata, fd, PMC_IOC_ENABLE);

	t0 = monotonic_ns();
	c0 = thread_cputime_ns();
	burn_cpu(STORM_BURN_NS);
	st->cpu_ns = thread_cputime_ns() - c0;
	st->wall_ns = monotonic_ns() - t0;
	counter_ioctl(_metadata, fd, PMC_IOC_DISABLE);
	ring_tally(_metadata, &r, &st->tally);
	ring_unmap(&r);
	close(fd);
}

/*
 * An overflow storm is throttled: the samples stay within the sysctl's
 * rate, the reader sees THROTTLE and UNTHROTTLE records, alternating,
 * and the task still gets the CPU.
 */
TEST_F(hw, throttle_storm)
{
	long old_rate = 0, old_min_ns = 0;
	struct storm st = { };
	struct ring_tally *t;
	__u64 rate, limit;

	if (!self->emu)
		SKIP(return, NO_EMU);
	if (!self->root)
		SKIP(return, NO_ROOT_EMU);
	ASSERT_EQ(0, read_int_file(MAX_RATE_PATH, &old_rate));
	ASSERT_EQ(0, read_int_file(EMU_PARAM("min_ns"), &old_min_ns));
	ASSERT_EQ(0, write_int_file(MAX_RATE_PATH, STORM_RATE));
	ASSERT_EQ(0, write_int_file(EMU_PARAM("min_ns"), STORM_MIN_NS));
	storm_run(_metadata, &st);
	EXPECT_EQ(0, write_int_file(EMU_PARAM("min_ns"), old_min_ns));
	EXPECT_EQ(0, write_int_file(MAX_RATE_PATH, old_rate));

	t = &st.tally;
	rate = (t->samples + t->lost) * NSEC_PER_SEC / st.wall_ns;
	/* the budget is per tick: a part tick at each end */
	limit = STORM_RATE + STORM_RATE * 2 * NSEC_PER_SEC / st.wall_ns / 100;
	TH_LOG("%s: %llu samples (%llu lost), %u throttles, %u unthrottles in %llu ms: %llu samples/s, sysctl %u/s",
	       self->emu->name, (unsigned long long)t->samples,
	       (unsigned long long)t->lost, t->throttles, t->unthrottles,
	       (unsigned long long)(st.wall_ns / NSEC_PER_MSEC),
	       (unsigned long long)rate, STORM_RATE);
	EXPECT_LT(0, t->samples);
	EXPECT_LE(rate, limit);
	expect_throttled(_metadata, t);
	/* responsive: the task ran most of the time it was meant to */
	EXPECT_LE(st.wall_ns, 4 * st.cpu_ns) {
		TH_LOG("%llu ms of CPU took %llu ms",
		       (unsigned long long)(st.cpu_ns / NSEC_PER_MSEC),
		       (unsigned long long)(st.wall_ns / NSEC_PER_MSEC));
	}
}

/* Did the kernel log an NMI that no handler claimed? */
static bool unknown_nmi_logged(void)
{
	static char log[1 << 20];
	int len = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, log,
			  sizeof(log) - 1);

	if (len < 0)
		return false;
	log[len] = '\0';
	return strstr(log, "NMI received for unknown reason");
}

/*
 * The model holds overflow interrupts until the counter that overflowed
 * is stopped, as a PMI in flight arrives after the stop: the driver
 * claims each one, and no unknown NMI is logged.
 */
TEST_F(hw, late_pmi)
{
	const long want = 8;
	struct pmc_attr attr;
	long left = want;
	__u64 t0;
	int fd;

	if (!self->emu)
		SKIP(return, NO_EMU);
	if (!self->root)
		SKIP(return, NO_ROOT_EMU);
	ASSERT_FALSE(unknown_nmi_logged());
	hw_attr(&attr, HW(PMC_HW_CPU_CYCLES), 0);
	attr.irq_period = 20000;	/* 20 us of emulated cycles */
	fd = counter_open(_metadata, &attr, 0, -1, -1);

	ASSERT_EQ(0, write_int_file(EMU_PARAM("late_pmis"), want));
	t0 = monotonic_ns();
	while (left > 0 && monotonic_ns() - t0 < 5 * NSEC_PER_SEC) {
		burn_cpu(200 * NSEC_PER_USEC);
		counter_ioctl(_metadata, fd, PMC_IOC_DISABLE);
		counter_ioctl(_metadata, fd, PMC_IOC_ENABLE);
		ASSERT_EQ(0, read_int_file(EMU_PARAM("late_pmis"), &left));
	}
	EXPECT_EQ(0, write_int_file(EMU_PARAM("late_pmis"), 0));
	EXPECT_GE(0, left) TH_LOG("%ld of %ld late PMIs never raised", left,
				  want);
	EXPECT_LT(0, nr_overflows(_metadata, fd));
	EXPECT_FALSE(unknown_nmi_logged());
	close(fd);
}

static int set_cpu_online(int cpu, bool online)
{
	char path[64];

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online",
		 cpu);
	return write_int_file(path, online);
}

/*
 * A CPU that goes down and comes back is set up again before counters
 * run on it: it counts and overflows. On the models with a global
 * control register, which the CPU comes back with cleared, nothing
 * would count otherwise.
 */
TEST_F(hw, cpu_hotplug)
{
	static const __u64 config = HW(PMC_HW_CPU_CYCLES);
	struct pmc_attr attr;
	int cpus[2], before, sampling;
	__u64 v[2], old, now;

	if (!self->emu)
		SKIP(return, NO_EMU);
	if (!self->root)
		SKIP(return, "needs root: takes a CPU offline");
	if (allowed_cpus(cpus, 2) < 2)
		SKIP(return, "needs two CPUs");
	if (access("/sys/devices/system/cpu/cpu1/online", W_OK))
		SKIP(return, "CPU 1 cannot go offline here");

	/* counting since before the hotplug, on the first CPU */
	before = hw_open(_metadata, config, -1, 0);
	ASSERT_EQ(0, pin_to_cpu(0));
	old = counter_value(_metadata, before);
	ASSERT_EQ(0, set_cpu_online(1, false));
	ASSERT_EQ(0, set_cpu_online(1, true));
	ASSERT_EQ(0, pin_to_cpu(1));

	hw_attr(&attr, config, 0);
	attr.irq_period = SLOW_PERIOD;
	sampling = counter_open(_metadata, &attr, 0, -1, -1);
	burn_at_rate(_metadata, config, BURN_NS, 1000, 10, v);
	expect_rate(_metadata, "cycles on the CPU that came back", v[1], v[0],
		    1000, 10);
	EXPECT_LT(0, nr_overflows(_metadata, sampling));
	/* it shares P6's two counters with the others: it only has to move */
	now = counter_value(_metadata, before);
	EXPECT_LT(old, now) {
		TH_LOG("a counter from before the hotplug went %llu -> %llu",
		       (unsigned long long)old, (unsigned long long)now);
	}
	close(sampling);
	close(before);
}

/*
 * Sharing the PMU. The emulated PMU's "foreign" owner stands in for
 * perf, the NMI watchdog and a KVM guest's vPMU: it reserves counters,
 * programs them (and, on archperf, two fixed counters) to interrupt,
 * keeps a "guest" counter enabled in its event select but off in the
 * global control, and takes its own NMIs before events-lite's handler.
 */
#define FOREIGN			EMU_PARAM("foreign")
#define FOREIGN_PERIOD		2000000ULL	/* 2 ms of cycles */
#define NO_GLOBAL		"needs a PMU with a global status: boot with pmc_emu=archperf or zen4"

struct foreign_stats {
	unsigned long reserved;
	long pmis, wraps, pending, lost_enables, guest_counted;
	long lite_msr, lite_nmi_msr;
	unsigned long stale_here;	/* this CPU's stopped counters holding a count */
};

static int foreign_cmd(const char *cmd)
{
	return write_file(FOREIGN, cmd);
}

static void foreign_read(struct __test_metadata *_metadata,
			 struct foreign_stats *st)
{
	FILE *f = fopen(FOREIGN, "r");

	ASSERT_NE(NULL, f) TH_LOG("%s: %s", FOREIGN, strerror(errno));
	ASSERT_EQ(9, fscanf(f, "reserved %lx pmis %ld wraps %ld pending %ld lost_enables %ld guest_counted %ld lite_msr %ld lite_nmi_msr %ld stale_here %lx",
			    &st->reserved, &st->pmis, &st->wraps, &st->pending,
			    &st->lost_enables, &st->guest_counted,
			    &st->lite_msr, &st->lite_nmi_msr, &st->stale_here));
	fclose(f);
}

static bool has_global_status(const struct emu_model *emu)
{
	return emu && (!strcmp(emu->name, "archperf") ||
		       !strcmp(emu->name, "zen4"));
}

/*
 * Start the foreign owner on the last counter, with the one before it
 * as a guest's, and archperf's instructions and cycles fixed counters.
 */
static void foreign_start(struct __test_metadata *_metadata,
			  const struct emu_model *emu, __u64 period)
{
	unsigned int last = emu->nr_counters - 1;
	char cmd[96];
	int err;

	ASSERT_EQ(0, foreign_cmd("stop"));
	ASSERT_EQ(0, foreign_cmd("clear"));
	snprintf(cmd, sizeof(cmd), "start %x %x %x %llu", 1u << last,
		 strcmp(emu->name, "archperf") ? 0 : 3, 1u << (last - 1),
		 (unsigned long long)period);
	err = foreign_cmd(cmd);
	ASSERT_EQ(0, err) TH_LOG("foreign %s: %s", cmd, strerror(err));
}

/*
 * events-lite samples at a high rate beside the foreign owner: the
 * owner's enable bits (fixed counters included) survive every
 * events-lite NMI, its guest counter never counts, and it takes every
 * overflow interrupt of its own.
 */
TEST_F(hw, foreign_owner_keeps_its_counters)
{
	struct foreign_stats st;
	struct pmc_attr attr;
	int fd;

	if (!has_global_status(self->emu))
		SKIP(return, NO_GLOBAL);
	if (!self->root)
		SKIP(return, NO_ROOT_EMU);
	foreign_start(_metadata, self->emu, FOREIGN_PERIOD);

	hw_attr(&attr, HW(PMC_HW_CPU_CYCLES), 0);
	attr.irq_period = FAST_PERIOD;
	fd = counter_open(_metadata, &attr, 0, -1, -1);
	burn_cpu(LONG_BURN_NS);
	counter_ioctl(_metadata, fd, PMC_IOC_DISABLE);
	EXPECT_LT(100, nr_overflows(_metadata, fd));
	close(fd);

	ASSERT_EQ(0, foreign_cmd("stop"));
	foreign_read(_metadata, &st);
	EXPECT_EQ(0, st.lost_enables) TH_LOG("its enable bits were cleared");
	EXPECT_EQ(0, st.guest_counted) TH_LOG("a guest's counter counted the host");
	EXPECT_LT(0, st.pmis);
	EXPECT_EQ(st.wraps, st.pmis + st.pending) {
		TH_LOG("its counters wrapped %ld times; its handler took %ld, %ld were pending",
		       st.wraps, st.pmis, st.pending);
	}
}

/* With no counter of its own on a CPU, events-lite's NMI handler touches no MSR. */
TEST_F(hw, foreign_nmis_cost_no_msr_access)
{
	struct foreign_stats st;

	if (!has_global_status(self->emu))
		SKIP(return, NO_GLOBAL);
	if (!self->root)
		SKIP(return, NO_ROOT_EMU);
	/* fast: many NMIs; the first may find what a closed counter left */
	foreign_start(_metadata, self->emu, FOREIGN_PERIOD / 10);
	burn_cpu(SHORT_BURN_NS);
	ASSERT_EQ(0, foreign_cmd("clear"));
	burn_cpu(BURN_NS);
	foreign_read(_metadata, &st);
	ASSERT_EQ(0, foreign_cmd("stop"));
	EXPECT_LT(10, st.pmis);
	EXPECT_EQ(0, st.lite_nmi_msr) {
		TH_LOG("%ld MSR accesses by events-lite in %ld NMIs not its own",
		       st.lite_nmi_msr, st.pmis);
	}
}

/*
 * A task that may execute rdpmc (it maps the page of a counting hardware
 * counter of its own) can read every counter register of its CPU, and
 * so can the task of whoever holds a counter next. So no stopped count
 * stays in a register: a CPU zeroes a counter when it stops using it,
 * rdpmc or not. The model reports stopped counters that hold a count
 * (stale_here), since its rdpmc raises #UD. Another task, on the same
 * CPU, counts and stops between the reads.
 */
static void run_other_counter(struct __test_metadata *_metadata, int go,
			      int done)
{
	char c = 1;

	ASSERT_EQ(1, write(go, &c, 1));
	ASSERT_EQ(1, read(done, &c, 1));
}

TEST_F(hw, stopped_counters_zeroed)
{
	int go[2], done[2], fd, status;
	struct foreign_stats st;
	size_t pg = page_size();
	pid_t child;
	void *page;
	char c;

	if (!self->emu)
		SKIP(return, NO_EMU);
	if (!self->root)
		SKIP(return, NO_ROOT_EMU);
	ASSERT_EQ(0, pin_to_cpu(0));
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(done));
	child = fork();
	ASSERT_LE(0, child);
	if (!child) {	/* counts cycles while it runs, on CPU 0 too */
		struct pmc_attr attr;

		close(go[1]);	/* so that the parent's close ends the loop */
		close(done[0]);
		memset(&attr, 0, sizeof(attr));
		attr.config = HW(PMC_HW_CPU_CYCLES);
		if (pmc_open(&attr, 0, -1, -1, 0) < 0)
			_exit(1);
		while (read(go[0], &c, 1) == 1) {
			burn_cpu(2 * NSEC_PER_MSEC);
			if (write(done[1], &c, 1) != 1)
				_exit(1);
		}
		_exit(0);
	}
	run_other_counter(_metadata, go[1], done[0]);
	foreign_read(_metadata, &st);
	EXPECT_EQ(0, st.stale_here) TH_LOG("no rdpmc here: %#lx", st.stale_here);

	/* disabled: it never takes a counter the other task's count is in */
	fd = counter_open(_metadata, &(struct pmc_attr){
				.config = HW(PMC_HW_CPU_CYCLES),
				.disabled = 1 }, 0, -1, -1);
	page = mmap(NULL, pg, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, page) TH_LOG("%s", strerror(errno));
	foreign_read(_metadata, &st);
	EXPECT_EQ(0, st.stale_here) TH_LOG("mapped: %#lx", st.stale_here);
	run_other_counter(_metadata, go[1], done[0]);
	foreign_read(_metadata, &st);
	EXPECT_EQ(0, st.stale_here) TH_LOG("switched back in: %#lx", st.stale_here);

	munmap(page, pg);
	run_other_counter(_metadata, go[1], done[0]);
	foreign_read(_metadata, &st);
	EXPECT_EQ(0, st.stale_here) TH_LOG("unmapped: %#lx", st.stale_here);

	close(go[1]);
	ASSERT_EQ(child, waitpid(child, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	close(fd);
}

/*
 * Counters that another owner holds are no room: a flexible counter
 * waits (time_enabled runs, time_running does not), a pinned one goes
 * to its error state (read() gives 0 bytes). When the owner lets go,
 * the flexible one counts.
 */
TEST_F(hw, foreign_reservation_is_no_room)
{
	const __u32 fmt = PMC_FORMAT_TOTAL_TIME_ENABLED |
			  PMC_FORMAT_TOTAL_TIME_RUNNING;
	struct pmc_reading r;
	struct pmc_attr attr;
	int flexible, pinned, err;
	char buf[64];

	if (!self->emu)
		SKIP(return, NO_EMU);
	if (!self->root)
		SKIP(return, NO_ROOT_EMU);
	ASSERT_EQ(0, foreign_cmd("stop"));
	err = foreign_cmd("reserve all");
	ASSERT_EQ(0, err) TH_LOG("foreign reserve all: %s", strerror(err));

	flexible = hw_open(_metadata, HW(PMC_HW_CPU_CYCLES), -1, fmt);
	hw_attr(&attr, HW(PMC_HW_CPU_CYCLES), 0);
	attr.pinned = 1;
	pinned = counter_open(_metadata, &attr, 0, -1, -1);
	r = burn_read(_metadata, flexible, fmt);
	EXPECT_LT(0, r.enabled);
	EXPECT_EQ(0, r.running);
	EXPECT_EQ(0, r.value);
	EXPECT_EQ(0, read(pinned, buf, sizeof(buf))) TH_LOG("pinned counter not in error");
	close(pinned);

	ASSERT_EQ(0, foreign_cmd("stop"));
	r = burn_read(_metadata, flexible, fmt);
	EXPECT_LT(0, r.running);
	EXPECT_LT(0, r.value);
	close(flexible);
}

/*
 * An events-lite counter reserves only while it is on a CPU: neither a
 * disabled one nor one whose task sleeps keeps another owner out.
 */
TEST_F(hw, idle_counter_reserves_nothing)
{
	int disabled, sleeper_fd, go[2], err;
	struct pmc_attr attr;
	pid_t pid;

	if (!self->emu)
		SKIP(return, NO_EMU);
	if (!self->root)
		SKIP(return, NO_ROOT_EMU);
	ASSERT_EQ(0, foreign_cmd("stop"));

	hw_attr(&attr, HW(PMC_HW_CPU_CYCLES), 0);
	attr.disabled = 1;
	disabled = counter_open(_metadata, &attr, 0, -1, -1);
	ASSERT_EQ(0, pipe(go));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		char c;

		close(go[1]);
		_exit(read(go[0], &c, 1) == 1 ? 0 : 1);
	}
	close(go[0]);
	hw_attr(&attr, HW(PMC_HW_CPU_CYCLES), 0);
	sleeper_fd = counter_open(_metadata, &attr, pid, -1, -1);
	usleep(10000);	/* the child blocks in read() */

	err = foreign_cmd("reserve all");
	EXPECT_EQ(0, err) TH_LOG("foreign reserve all beside idle counters: %s",
				 strerror(err));
	EXPECT_EQ(0, foreign_cmd("stop"));
	ASSERT_EQ(1, write(go[1], "g", 1));
	close(go[1]);
	EXPECT_EQ(0, reap(_metadata, pid, NULL));
	close(sleeper_fd);
	close(disabled);
}

TEST_HARNESS_MAIN
