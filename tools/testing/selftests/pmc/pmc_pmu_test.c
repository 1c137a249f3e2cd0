// SPDX-License-Identifier: GPL-2.0
/*
 * Hardware counters beside perf's, on a PMU that perf drives: the
 * counters of pmc_open(2) and of perf_event_open(2) watch the same loop
 * in one process, at the same time, and must agree. perf's PMU driver is
 * the oracle: it was written and tested elsewhere (in make check, QEMU's
 * model of the Arm PMUv3 under the arm64 guest).
 *
 * Skipped where perf has no hardware PMU (the x86 guests: there the
 * emulated PMU's tests in pmc_hw_test run instead), or where the kernel
 * was booted with pmc_pmu=direct. Run as root and as an unprivileged
 * user: user-mode counts need no privilege at the default paranoia.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/mman.h>
#include <linux/perf_event.h>

#include "../kselftest_harness.h"
#include "pmc_harness.h"
#include "pmc_ring.h"

/* Iterations of the loop: some tens of millions of instructions. */
#define LOOPS		10000000UL
/* Cycles between samples: hundreds of samples over the loop. */
#define CYCLE_PERIOD	100000ULL
/* Instructions between samples. */
#define INSN_PERIOD	250000ULL
/* More counters than any PMU has (Arm PMUv3: 31 and the cycle counter). */
#define NR_FILL		64
/* Twice as many and one. */
#define NR_MUX		(2 * NR_FILL + 1)
#define RING_PAGES	64

#ifndef noinline
#define noinline	__attribute__((noinline))
#endif

/* An empty loop: a few instructions and no memory access per iteration. */
static noinline void spin(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		__asm__ volatile("" ::: "memory");
}

/* A user-mode perf counter of this task; a leader starts disabled. */
static int perf_hw_open_pinned(__u64 config, __u64 period, int group_fd,
			       __u64 read_format, bool pinned)
{
	struct perf_event_attr attr;

	perf_user_hw_attr(&attr, config);
	attr.sample_period = period;
	attr.sample_type = period ? PERF_SAMPLE_IP : 0;
	attr.read_format = read_format;
	attr.disabled = group_fd < 0;
	attr.pinned = pinned;
	return perf_open_self(&attr, group_fd);
}

static int perf_hw_open(__u64 config, __u64 period, int group_fd,
			__u64 read_format)
{
	return perf_hw_open_pinned(config, period, group_fd, read_format,
				   false);
}

static void pmc_hw_attr(struct pmc_attr *attr, unsigned int id, __u64 period,
			bool leader, __u32 read_format)
{
	memset(attr, 0, sizeof(*attr));
	attr->config = HW(id);
	attr->irq_period = period;
	attr->record_type = period ? PMC_RECORD_IP : 0;
	attr->read_format = read_format;
	attr->disabled = leader;
	attr->exclude_kernel = 1;
}

/*
 * Skip unless perf counts hardware events here and the kernel gives
 * events-lite's hardware counters through perf (not pmc_pmu=direct).
 */
static void require_perf_pmu(struct __test_metadata *_metadata)
{
	struct pmc_attr attr;
	const char *pmu;
	int fd, err;

	require_pmc_open(_metadata);
	if (!perf_has_hw_pmu())
		SKIP(return, "perf has no hardware PMU here");
	pmc_hw_attr(&attr, PMC_HW_INSTRUCTIONS, 0, true, 0);
	fd = pmc_open(&attr, 0, -1, -1, 0);
	err = errno;
	pmu = cmdline_param("pmc_pmu");
	if (fd < 0 && err == ENODEV && pmu && !strcmp(pmu, "direct"))
		SKIP(return, "booted with pmc_pmu=direct");
	ASSERT_LE(0, fd) {
		TH_LOG("perf counts instructions, pmc_open(instructions): %s",
		       strerror(err));
	}
	close(fd);
}

/* Both counters on, the loop, both off: perf's window inside ours. */
static void both_around_spin(struct __test_metadata *_metadata, int pmc_fd,
			     int perf_fd, unsigned long loops)
{
	counter_ioctl(_metadata, pmc_fd, PMC_IOC_ENABLE);
	counter_ioctl(_metadata, perf_fd, PERF_EVENT_IOC_ENABLE);
	spin(loops);
	counter_ioctl(_metadata, perf_fd, PERF_EVENT_IOC_DISABLE);
	counter_ioctl(_metadata, pmc_fd, PMC_IOC_DISABLE);
}

/*
 * @pmc counted what @perf did, plus the user code between the two
 * enables and the two disables: two ioctl() wrappers, far under 0.1%
 * of a loop of millions of events, and under 1000 events of slack.
 */
static void expect_same_count(struct __test_metadata *_metadata,
			      const char *what, __u64 pmc, __u64 perf)
{
	EXPECT_LE(perf, pmc) TH_LOG("%s: pmc_open %llu, perf %llu", what,
				    (unsigned long long)pmc,
				    (unsigned long long)perf);
	EXPECT_LE(pmc, perf + perf / 1000 + 1000) {
		TH_LOG("%s: pmc_open %llu, perf %llu", what,
		       (unsigned long long)pmc, (unsigned long long)perf);
	}
}

FIXTURE(pmu) {
	int pmc_fd, perf_fd;
};

FIXTURE_VARIANT(pmu) {
	unsigned int id;
	__u64 perf_config;
};

FIXTURE_VARIANT_ADD(pmu, instructions) {
	.id = PMC_HW_INSTRUCTIONS,
	.perf_config = PERF_COUNT_HW_INSTRUCTIONS,
};

FIXTURE_VARIANT_ADD(pmu, cycles) {
	.id = PMC_HW_CPU_CYCLES,
	.perf_config = PERF_COUNT_HW_CPU_CYCLES,
};

FIXTURE_SETUP(pmu)
{
	self->pmc_fd = -1;
	self->perf_fd = -1;
	require_perf_pmu(_metadata);
}

FIXTURE_TEARDOWN(pmu)
{
	if (self->pmc_fd >= 0)
		close(self->pmc_fd);
	if (self->perf_fd >= 0)
		close(self->perf_fd);
}

/* The same event over the same loop: the same count, never scaled. */
TEST_F(pmu, count_beside_perf)
{
	struct pmc_attr attr;
	struct pmc_reading r;
	__u64 perf_count;

	pmc_hw_attr(&attr, variant->id, 0, true, ALL_TIMES);
	self->pmc_fd = counter_open(_metadata, &attr, 0, -1, -1);
	self->perf_fd = perf_hw_open(variant->perf_config, 0, -1, 0);
	ASSERT_LE(0, self->perf_fd);

	both_around_spin(_metadata, self->pmc_fd, self->perf_fd, LOOPS);
	r = counter_read(_metadata, self->pmc_fd, ALL_TIMES);
	ASSERT_EQ(sizeof(perf_count),
		  read(self->perf_fd, &perf_count, sizeof(perf_count)));
	/* The loop ran: at least one instruction, one cycle, a turn. */
	EXPECT_LE(LOOPS, perf_count);
	expect_same_count(_metadata, "count", r.value, perf_count);
	EXPECT_EQ(r.enabled, r.running);
}

/*
 * A group of cycles and instructions, read at once, beside perf's group
 * of the same: each member agrees with perf's.
 */
TEST_F(pmu, group_beside_perf)
{
	const __u32 fmt = PMC_FORMAT_GROUP | ALL_TIMES;
	const __u64 perf_fmt = PERF_FORMAT_GROUP;
	__u64 buf[8], perf_buf[4];
	struct pmc_attr attr;
	int member, perf_member;

	pmc_hw_attr(&attr, variant->id, 0, true, fmt);
	self->pmc_fd = counter_open(_metadata, &attr, 0, -1, -1);
	pmc_hw_attr(&attr, variant->id == PMC_HW_CPU_CYCLES ?
		    PMC_HW_INSTRUCTIONS : PMC_HW_CPU_CYCLES, 0, false, fmt);
	member = counter_open(_metadata, &attr, 0, -1, self->pmc_fd);
	self->perf_fd = perf_hw_open(variant->perf_config, 0, -1, perf_fmt);
	ASSERT_LE(0, self->perf_fd);
	perf_member = perf_hw_open(variant->perf_config ==
				   PERF_COUNT_HW_CPU_CYCLES ?
				   PERF_COUNT_HW_INSTRUCTIONS :
				   PERF_COUNT_HW_CPU_CYCLES, 0, self->perf_fd,
				   perf_fmt);
	ASSERT_LE(0, perf_member);

	both_around_spin(_metadata, self->pmc_fd, self->perf_fd, LOOPS);
	/* nr, time_enabled, time_running, then the values */
	ASSERT_EQ(2, group_read(_metadata, self->pmc_fd, fmt, buf,
				ARRAY_SIZE(buf)));
	ASSERT_EQ(3 * sizeof(__u64),
		  read(self->perf_fd, perf_buf, sizeof(perf_buf)));
	ASSERT_EQ(2, perf_buf[0]);
	EXPECT_EQ(buf[1], buf[2]);
	expect_same_count(_metadata, "leader", buf[3], perf_buf[1]);
	expect_same_count(_metadata, "member", buf[4], perf_buf[2]);
	close(member);
	close(perf_member);
}

/* perf's times of counter @fd: enabled, running. */
struct perf_times {
	__u64 enabled, running;
};

static struct perf_times perf_times(struct __test_metadata *_metadata, int fd)
{
	__u64 buf[3];	/* value, time_enabled, time_running */

	EXPECT_EQ(sizeof(buf), read(fd, buf, sizeof(buf)));
	return (struct perf_times){ buf[1], buf[2] };
}

/* Open and enable one more perf counter of @config, each its own group. */
static int perf_counter_add(__u64 config, bool pinned)
{
	const __u64 fmt = PERF_FORMAT_TOTAL_TIME_ENABLED |
			  PERF_FORMAT_TOTAL_TIME_RUNNING;
	int fd = perf_hw_open_pinned(config, 0, -1, fmt, pinned);

	if (fd >= 0)
		ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	return fd;
}

static void perf_counters_close(int *fds, int n)
{
	while (n--)
		close(fds[n]);
}

/*
 * Spin @loops with perf counters @fds on: did every one have the PMU all
 * along, or did perf rotate them with someone's? perf stops rotating at
 * the first turn that finds no one waiting: a settling spin first.
 */
static bool perf_all_ran(struct __test_metadata *_metadata, int *fds, int n,
			 unsigned long loops)
{
	struct perf_times a[NR_FILL], b;
	__u64 least = 100;
	int i;

	spin(loops / 4);
	for (i = 0; i < n; i++)
		a[i] = perf_times(_metadata, fds[i]);
	spin(loops);
	for (i = 0; i < n; i++) {
		__u64 enabled, running;

		b = perf_times(_metadata, fds[i]);
		enabled = b.enabled - a[i].enabled;
		running = b.running - a[i].running;
		EXPECT_LT(0, enabled);
		if (running < enabled && running * 100 / enabled < least)
			least = running * 100 / enabled;
	}
	if (least < 100)
		TH_LOG("of %d perf counters, one ran %llu%% of the time", n,
		       (unsigned long long)least);
	return least == 100;
}

/*
 * perf counters of @config that fill the PMU: as many as run all the
 * time together (what the PMU has, less any a watchdog holds).
 */
static int perf_fill_pmu(struct __test_metadata *_metadata, __u64 config,
			 bool pinned, int *fds)
{
	int n;

	for (n = 0; n < NR_FILL; n++) {
		fds[n] = perf_counter_add(config, false);
		ASSERT_LE(0, fds[n]);
		if (!perf_all_ran(_metadata, fds, n + 1, LOOPS / 10)) {
			close(fds[n]);
			break;
		}
	}
	ASSERT_LT(0, n);
	ASSERT_GT(NR_FILL, n) TH_LOG("%d counters never rotated", NR_FILL);
	if (pinned) {
		perf_counters_close(fds, n);
		for (int i = 0; i < n; i++) {
			fds[i] = perf_counter_add(config, true);
			ASSERT_LE(0, fds[i]);
		}
	}
	TH_LOG("%d perf counters fill the PMU", n);
	return n;
}

/*
 * About twice as many counters as the PMU has: perf rotates them with its
 * own, and each one's count, scaled by time_enabled / time_running, is
 * within 10% of the truth: a pinned perf counter that never leaves the
 * PMU. (Not many more: every enable and disable runs in the kernel,
 * where these user-mode counters count nothing while their time runs.)
 */
TEST_F(pmu, multiplexed_by_perf)
{
	struct pmc_attr attr;
	int fds[NR_MUX], i, rotated = 0, nr;
	__u64 truth, off, worst = 0;

	nr = perf_fill_pmu(_metadata, variant->perf_config, false, fds);
	perf_counters_close(fds, nr);
	nr = 2 * nr + 1;
	self->perf_fd = perf_hw_open_pinned(variant->perf_config, 0, -1, 0,
					    true);
	ASSERT_LE(0, self->perf_fd);
	for (i = 0; i < nr; i++) {
		pmc_hw_attr(&attr, variant->id, 0, false, ALL_TIMES);
		attr.disabled = 1;
		fds[i] = counter_open(_metadata, &attr, 0, -1, -1);
	}
	ASSERT_EQ(0, ioctl(self->perf_fd, PERF_EVENT_IOC_ENABLE, 0));
	for (i = 0; i < nr; i++)
		counter_ioctl(_metadata, fds[i], PMC_IOC_ENABLE);
	spin(8 * LOOPS);
	for (i = 0; i < nr; i++)
		counter_ioctl(_metadata, fds[i], PMC_IOC_DISABLE);
	ASSERT_EQ(0, ioctl(self->perf_fd, PERF_EVENT_IOC_DISABLE, 0));
	ASSERT_EQ(sizeof(truth), read(self->perf_fd, &truth, sizeof(truth)));

	for (i = 0; i < nr; i++) {
		struct pmc_reading r = counter_read(_metadata, fds[i], ALL_TIMES);
		__u64 scaled;

		close(fds[i]);
		ASSERT_LE(r.running, r.enabled);
		if (r.running < r.enabled)
			rotated++;
		/* perf rotates them all through the PMU in turn. */
		ASSERT_LT(0, r.running) TH_LOG("counter %d never counted", i);
		scaled = (__u64)((double)r.value * r.enabled / r.running);
		off = scaled > truth ? scaled - truth : truth - scaled;
		worst = off > worst ? off : worst;
		EXPECT_TRUE(near(scaled, truth, 10, 0)) {
			TH_LOG("counter %d: %llu scaled (%llu in %llu of %llu ns), truth %llu",
			       i, (unsigned long long)scaled,
			       (unsigned long long)r.value,
			       (unsigned long long)r.running,
			       (unsigned long long)r.enabled,
			       (unsigned long long)truth);
		}
	}
	TH_LOG("%d counters, %d rotated, scaled counts within %.2f%% of %llu",
	       nr, rotated, 100.0 * worst / truth, (unsigned long long)truth);
	/* Not all fit, so some were rotated out for a while. */
	EXPECT_LT(0, rotated);
}

/*
 * perf's two counters of one group over @loops iterations of the loop:
 * they see the same instructions, and QEMU's same additions from the
 * other vCPU.
 */
static void perf_pair_spin(struct __test_metadata *_metadata, int leader,
			   unsigned long loops, __u64 *pair)
{
	__u64 buf[3];	/* nr, values */

	ASSERT_EQ(0, ioctl(leader, PERF_EVENT_IOC_RESET, PERF_IOC_FLAG_GROUP));
	ASSERT_EQ(0, ioctl(leader, PERF_EVENT_IOC_ENABLE, 0));
	spin(loops);
	ASSERT_EQ(0, ioctl(leader, PERF_EVENT_IOC_DISABLE, 0));
	ASSERT_EQ(sizeof(buf), read(leader, buf, sizeof(buf)));
	ASSERT_EQ(2, buf[0]);
	pair[0] = buf[1];
	pair[1] = buf[2];
}

/*
 * events-lite leaves the PMU's registers to perf's driver: two perf
 * counters of one group count the same loop to the same event whether a
 * group of ours runs beside them or not (room for all, so no rotation).
 * A write of ours to one of their counters, event selects or interrupt
 * state would set them apart.
 */
TEST_F(pmu, perf_counts_untouched)
{
	const __u32 fmt = PMC_FORMAT_GROUP;
	__u64 alone[2], beside[2], buf[5];
	struct pmc_attr attr;
	int members[2], ref, i;

	self->perf_fd = perf_hw_open(variant->perf_config, 0, -1,
				     PERF_FORMAT_GROUP);
	ASSERT_LE(0, self->perf_fd);
	ref = perf_hw_open(variant->perf_config, 0, self->perf_fd,
			   PERF_FORMAT_GROUP);
	ASSERT_LE(0, ref);
	pmc_hw_attr(&attr, PMC_HW_CPU_CYCLES, 0, true, fmt);
	self->pmc_fd = counter_open(_metadata, &attr, 0, -1, -1);
	for (i = 0; i < 2; i++) {
		pmc_hw_attr(&attr, PMC_HW_INSTRUCTIONS, 0, false, fmt);
		members[i] = counter_open(_metadata, &attr, 0, -1,
					  self->pmc_fd);
	}

	perf_pair_spin(_metadata, self->perf_fd, LOOPS, alone);
	counter_ioctl(_metadata, self->pmc_fd, PMC_IOC_ENABLE);
	perf_pair_spin(_metadata, self->perf_fd, LOOPS, beside);
	counter_ioctl(_metadata, self->pmc_fd, PMC_IOC_DISABLE);
	ASSERT_EQ(3, group_read(_metadata, self->pmc_fd, fmt, buf,
				ARRAY_SIZE(buf)));
	TH_LOG("perf's pair: %llu and %llu alone, %llu and %llu beside ours (%llu instructions)",
	       (unsigned long long)alone[0], (unsigned long long)alone[1],
	       (unsigned long long)beside[0], (unsigned long long)beside[1],
	       (unsigned long long)buf[2]);
	EXPECT_LE(LOOPS, buf[2]);	/* ours counted the loop too */
	EXPECT_LE(LOOPS, alone[0]);
	EXPECT_EQ(alone[0], alone[1]);
	EXPECT_LE(LOOPS, beside[0]);
	EXPECT_EQ(beside[0], beside[1]);
	for (i = 0; i < 2; i++)
		close(members[i]);
	close(ref);
}

/*
 * A disabled counter leaves the PMU to perf: with perf's group filling
 * it, that group runs all the time while our counter is off (at open,
 * by ioctl, by prctl), and takes turns with it while it is on.
 */
TEST_F(pmu, disabled_leaves_pmu)
{
	struct pmc_reading r;
	struct pmc_attr attr;
	int fds[NR_FILL], n;

	n = perf_fill_pmu(_metadata, variant->perf_config, false, fds);
	pmc_hw_attr(&attr, variant->id, 0, true, ALL_TIMES);
	self->pmc_fd = counter_open(_metadata, &attr, 0, -1, -1);

	EXPECT_TRUE(perf_all_ran(_metadata, fds, n, 4 * LOOPS));
	counter_ioctl(_metadata, self->pmc_fd, PMC_IOC_ENABLE);
	EXPECT_FALSE(perf_all_ran(_metadata, fds, n, 4 * LOOPS));
	counter_ioctl(_metadata, self->pmc_fd, PMC_IOC_DISABLE);
	r = counter_read(_metadata, self->pmc_fd, ALL_TIMES);
	EXPECT_LT(0, r.value);
	EXPECT_LT(r.running, r.enabled);
	EXPECT_TRUE(perf_all_ran(_metadata, fds, n, 4 * LOOPS));

	ASSERT_EQ(0, prctl(PR_TASK_PMC_ENABLE, 0, 0, 0, 0));
	EXPECT_FALSE(perf_all_ran(_metadata, fds, n, 4 * LOOPS));
	ASSERT_EQ(0, prctl(PR_TASK_PMC_DISABLE, 0, 0, 0, 0));
	EXPECT_TRUE(perf_all_ran(_metadata, fds, n, 4 * LOOPS));
	perf_counters_close(fds, n);
}

/*
 * pinned against perf's pinned group, which came first and fills the
 * PMU: ours is in the error state, read() returns 0, until it is enabled
 * again once perf's group is gone; then it counts the loop.
 */
TEST_F(pmu, pinned_error_beside_perf)
{
	struct pmc_attr attr;
	int fds[NR_FILL], n;
	__u64 value;

	n = perf_fill_pmu(_metadata, variant->perf_config, true, fds);
	pmc_hw_attr(&attr, variant->id, 0, false, 0);
	attr.pinned = 1;
	self->pmc_fd = counter_open(_metadata, &attr, 0, -1, -1);
	spin(LOOPS / 10);
	EXPECT_EQ(0, read(self->pmc_fd, &value, sizeof(value)));

	perf_counters_close(fds, n);
	counter_ioctl(_metadata, self->pmc_fd, PMC_IOC_RESET);
	counter_ioctl(_metadata, self->pmc_fd, PMC_IOC_ENABLE);
	spin(LOOPS);
	counter_ioctl(_metadata, self->pmc_fd, PMC_IOC_DISABLE);
	EXPECT_LE(LOOPS, counter_value(_metadata, self->pmc_fd));
}

/*
 * PMC_IOC_REFRESH(3) beside perf's counters, which fill the PMU: three
 * samples, then the counter turns itself off and stays still, and its
 * perf counter leaves the PMU: perf's own run all the time again.
 */
TEST_F(pmu, refresh_leaves_pmu)
{
	__u64 period = variant->id == PMC_HW_CPU_CYCLES ? CYCLE_PERIOD :
							 INSN_PERIOD;
	struct ring_tally t = { };
	struct pmc_attr attr;
	struct pmc_ring ring;
	int fds[NR_FILL], n;
	char state[32];
	__u64 value;

	n = perf_fill_pmu(_metadata, variant->perf_config, false, fds);
	pmc_hw_attr(&attr, variant->id, period, true, 0);
	self->pmc_fd = counter_open(_metadata, &attr, 0, -1, -1);
	ring_map(_metadata, &ring, self->pmc_fd, RING_PAGES, true);

	ASSERT_EQ(0, ioctl(self->pmc_fd, PMC_IOC_REFRESH, 3)) {
		TH_LOG("PMC_IOC_REFRESH: %s", strerror(errno));
	}
	/* tens of periods, even taking turns with perf's counters */
	spin(2 * LOOPS);
	ring_tally(_metadata, &ring, &t);
	EXPECT_EQ(3, t.samples);
	ASSERT_EQ(0, fdinfo_field(self->pmc_fd, "pmc-state", state,
				  sizeof(state)));
	EXPECT_STREQ("off", state);
	value = counter_value(_metadata, self->pmc_fd);
	TH_LOG("%llu samples, %llu lost, then off at %llu (period %llu)",
	       (unsigned long long)t.samples, (unsigned long long)t.lost,
	       (unsigned long long)value, (unsigned long long)period);
	EXPECT_LE(3 * period, value);
	EXPECT_TRUE(perf_all_ran(_metadata, fds, n, 4 * LOOPS));
	EXPECT_EQ(value, counter_value(_metadata, self->pmc_fd));
	ring_unmap(&ring);
	perf_counters_close(fds, n);
}

static int spin_child(void *arg)
{
	spin(LOOPS);
	return 0;
}

/*
 * inherit: a child runs the loop. Its copy of our counter takes a perf
 * counter of its own, as its copy of perf's counter is one: both fold
 * into their originals at its exit, and agree.
 */
TEST_F(pmu, inherit_beside_perf)
{
	struct perf_event_attr pattr;
	struct pmc_attr attr;
	__u64 perf_count, value;
	int status;
	pid_t pid;

	pmc_hw_attr(&attr, variant->id, 0, true, 0);
	attr.inherit = 1;
	self->pmc_fd = counter_open(_metadata, &attr, 0, -1, -1);
	perf_user_hw_attr(&pattr, variant->perf_config);
	pattr.inherit = 1;
	pattr.disabled = 1;
	self->perf_fd = perf_open_self(&pattr, -1);
	ASSERT_LE(0, self->perf_fd);

	counter_ioctl(_metadata, self->pmc_fd, PMC_IOC_ENABLE);
	counter_ioctl(_metadata, self->perf_fd, PERF_EVENT_IOC_ENABLE);
	pid = fork_child(spin_child, NULL);
	ASSERT_LT(0, pid);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	counter_ioctl(_metadata, self->perf_fd, PERF_EVENT_IOC_DISABLE);
	counter_ioctl(_metadata, self->pmc_fd, PMC_IOC_DISABLE);
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	ASSERT_EQ(sizeof(perf_count),
		  read(self->perf_fd, &perf_count, sizeof(perf_count)));
	value = counter_value(_metadata, self->pmc_fd);
	TH_LOG("a child's loop, inherited: pmc_open %llu, perf %llu",
	       (unsigned long long)value, (unsigned long long)perf_count);
	EXPECT_LE(LOOPS, perf_count);
	expect_same_count(_metadata, "inherited", value, perf_count);
}

/* PERF_RECORD_SAMPLE records in a perf ring. */
static __u64 perf_samples(struct perf_event_mmap_page *page)
{
	const char *data = (const char *)page + page->data_offset;
	__u64 head = __atomic_load_n(&page->data_head, __ATOMIC_ACQUIRE);
	__u64 pos = page->data_tail, n = 0;

	while (pos < head) {
		const struct perf_event_header *h =
			(const void *)(data + pos % page->data_size);

		if (h->type == PERF_RECORD_SAMPLE)
			n++;
		if (!h->size)
			break;
		pos += h->size;
	}
	return n;
}

/*
 * Sampling on the same loop, at once: as many samples as perf takes,
 * and for cycles (whose overflows QEMU's model delivers at once) one
 * per period of the count.
 */
TEST_F(pmu, samples_beside_perf)
{
	__u64 period = variant->id == PMC_HW_CPU_CYCLES ? CYCLE_PERIOD :
							 INSN_PERIOD;
	struct perf_event_mmap_page *page;
	struct ring_tally t = { };
	struct pmc_attr attr;
	struct pmc_ring ring;
	__u64 count, theirs;
	size_t len = (1 + RING_PAGES) * page_size();

	pmc_hw_attr(&attr, variant->id, period, true, 0);
	self->pmc_fd = counter_open(_metadata, &attr, 0, -1, -1);
	ring_map(_metadata, &ring, self->pmc_fd, RING_PAGES, true);
	self->perf_fd = perf_hw_open(variant->perf_config, period, -1, 0);
	ASSERT_LE(0, self->perf_fd);
	page = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
		    self->perf_fd, 0);
	ASSERT_NE(MAP_FAILED, page);

	both_around_spin(_metadata, self->pmc_fd, self->perf_fd, 2 * LOOPS);
	count = counter_value(_metadata, self->pmc_fd);
	ring_tally(_metadata, &ring, &t);
	theirs = perf_samples(page);
	TH_LOG("%s: %llu samples (%llu lost), perf %llu, count %llu / %llu",
	       variant->id == PMC_HW_CPU_CYCLES ? "cycles" : "instructions",
	       (unsigned long long)t.samples, (unsigned long long)t.lost,
	       (unsigned long long)theirs, (unsigned long long)count,
	       (unsigned long long)period);
	EXPECT_EQ(0, t.lost);
	EXPECT_LT(0, theirs);
	EXPECT_TRUE(near(t.samples, theirs, 2, 1));
	if (variant->id == PMC_HW_CPU_CYCLES)
		EXPECT_TRUE(near(t.samples, count / period, 2, 1));
	munmap(page, len);
	ring_unmap(&ring);
}

/* Callers compared of each user call chain, past the sampled IP. */
#define CHAIN_CALLERS	4
#define CHAIN_KEYS	64

/* A sequence of callers and how many samples had it. */
struct callers {
	__u64 ip[CHAIN_CALLERS];
	unsigned int samples;
};

struct chain_tally {
	struct callers keys[CHAIN_KEYS];
	unsigned int nr_keys, samples;
};

/* Count the user call chain @user[@nr], innermost (the IP) first. */
static void tally_chain(struct chain_tally *t, const __u64 *user,
			unsigned int nr)
{
	struct callers c = { };
	unsigned int i;

	for (i = 1; i < nr && i <= CHAIN_CALLERS; i++)
		c.ip[i - 1] = user[i];
	t->samples++;
	for (i = 0; i < t->nr_keys; i++) {
		if (!memcmp(t->keys[i].ip, c.ip, sizeof(c.ip))) {
			t->keys[i].samples++;
			return;
		}
	}
	if (t->nr_keys < CHAIN_KEYS) {
		c.samples = 1;
		t->keys[t->nr_keys++] = c;
	}
}

static const struct callers *most_common(const struct chain_tally *t)
{
	const struct callers *best = &t->keys[0];

	for (unsigned int i = 1; i < t->nr_keys; i++)
		if (t->keys[i].samples > best->samples)
			best = &t->keys[i];
	return best;
}

static void tally_pmc_chains(struct __test_metadata *_metadata,
			     struct pmc_ring *ring, __u32 type,
			     struct chain_tally *t)
{
	__u64 pos = 0, head = ring_head(ring);
	struct pmc_sample s;
	char err[160];
	int ret;

	while ((ret = ring_next(ring, &pos, head, err, sizeof(err))) > 0) {
		if (!is_sample())
			continue;
		ASSERT_EQ(0, pmc_sample_parse(&rec, type, &s));
		tally_chain(t, (const __u64 *)s.chain + s.chain_hv +
			    s.chain_kernel, s.chain_user);
	}
	ASSERT_EQ(0, ret) TH_LOG("%s", err);
}

/* perf's PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN samples, unwrapped. */
static void tally_perf_chains(struct __test_metadata *_metadata,
			      struct perf_event_mmap_page *page,
			      struct chain_tally *t)
{
	const char *data = (const char *)page + page->data_offset;
	__u64 head = __atomic_load_n(&page->data_head, __ATOMIC_ACQUIRE);
	__u64 pos = 0;

	ASSERT_GE(page->data_size, head) TH_LOG("perf's ring wrapped");
	while (pos < head) {
		const struct perf_event_header *h = (const void *)(data + pos);
		const __u64 *p = (const __u64 *)(h + 1), *ips = p + 2;
		__u64 i, nr = p[1];

		ASSERT_NE(0, h->size);
		pos += h->size;
		if (h->type != PERF_RECORD_SAMPLE)
			continue;
		for (i = 0; i < nr && ips[i] != PERF_CONTEXT_USER; i++)
			;
		if (i < nr)
			tally_chain(t, ips + i + 1, nr - i - 1);
	}
}

/*
 * Call chains on the same loop, at once: the callers perf's unwinder
 * finds above the sampled IP most often, ours find as often.
 */
TEST_F(pmu, callchains_beside_perf)
{
	const __u32 type = PMC_RECORD_IP | PMC_RECORD_CALLCHAIN;
	__u64 period = variant->id == PMC_HW_CPU_CYCLES ? CYCLE_PERIOD :
							 INSN_PERIOD;
	size_t len = (1 + RING_PAGES) * page_size();
	struct chain_tally ours = { }, theirs = { };
	const struct callers *a, *b;
	struct perf_event_mmap_page *page;
	struct perf_event_attr pattr;
	struct pmc_attr attr;
	struct pmc_ring ring;

	pmc_hw_attr(&attr, variant->id, period, true, 0);
	attr.record_type = type;
	self->pmc_fd = counter_open(_metadata, &attr, 0, -1, -1);
	ring_map(_metadata, &ring, self->pmc_fd, RING_PAGES, true);
	perf_user_hw_attr(&pattr, variant->perf_config);
	pattr.sample_period = period;
	pattr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN;
	pattr.exclude_callchain_kernel = 1;
	pattr.disabled = 1;
	self->perf_fd = perf_open_self(&pattr, -1);
	ASSERT_LE(0, self->perf_fd) TH_LOG("perf: %s", strerror(errno));
	page = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
		    self->perf_fd, 0);
	ASSERT_NE(MAP_FAILED, page);

	both_around_spin(_metadata, self->pmc_fd, self->perf_fd, LOOPS);
	tally_pmc_chains(_metadata, &ring, type, &ours);
	tally_perf_chains(_metadata, page, &theirs);
	ASSERT_LT(0, theirs.samples);
	ASSERT_LT(0, ours.samples);
	a = most_common(&ours);
	b = most_common(&theirs);
	TH_LOG("callers %#llx %#llx %#llx %#llx: %u of %u samples, perf %#llx %#llx %#llx %#llx: %u of %u",
	       (unsigned long long)a->ip[0], (unsigned long long)a->ip[1],
	       (unsigned long long)a->ip[2], (unsigned long long)a->ip[3],
	       a->samples, ours.samples,
	       (unsigned long long)b->ip[0], (unsigned long long)b->ip[1],
	       (unsigned long long)b->ip[2], (unsigned long long)b->ip[3],
	       b->samples, theirs.samples);
	EXPECT_EQ(0, memcmp(a->ip, b->ip, sizeof(a->ip)));
	EXPECT_NE(0, a->ip[0]);
	EXPECT_TRUE(near(a->samples * 100ULL / ours.samples,
			 b->samples * 100ULL / theirs.samples, 0, 5));
	munmap(page, len);
	ring_unmap(&ring);
}

TEST_HARNESS_MAIN
