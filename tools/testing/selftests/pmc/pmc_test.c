// SPDX-License-Identifier: GPL-2.0
/*
 * Selftests for pmc_open(2), the events-lite performance counters.
 *
 * Software counters; hardware events fail with ENODEV without a PMU
 * (where perf has one, they are perf's: pmc_pmu_test). Every test
 * checks counts, times or errnos that the kernel produced. The binary
 * runs both as root and as an unprivileged user: tests that need root
 * skip otherwise, and counters exclude kernel mode unless a test is
 * about kernel counting, since pmc_paranoid defaults to 2.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "../kselftest_harness.h"
#include "pmc_harness.h"
#include "pmc_ring.h"

/* Fresh pages touched by the fault tests: one fault each. */
#define NR_PAGES	256
/* CPU time burnt where a clock is compared with the thread's CPU time. */
#define BURN_NS		(150 * NSEC_PER_MSEC)
/* A shorter burn where a clock only has to move, or stay still. */
#define SHORT_BURN_NS	(20 * NSEC_PER_MSEC)
/* Round trips of the context-switch ping-pong, and affinity flips. */
#define NR_SWITCHES	100
#define NR_MIGRATIONS	20

/* A clock reading of @got is within 10% (plus 2 ms of slack) of @want. */
static bool clock_close(__u64 got, __u64 want)
{
	return near(got, want, 10, 2 * NSEC_PER_MSEC);
}

/* A user-mode software counter on the calling task. */
static int sw_open(struct __test_metadata *_metadata, unsigned int id,
		   int group_fd, __u32 read_format)
{
	struct pmc_attr attr;

	pmc_sw_attr(&attr, id, read_format);
	return counter_open(_metadata, &attr, 0, -1, group_fd);
}

/* Fault in @nr fresh pages in user mode. */
static void fault_pages(struct __test_metadata *_metadata, size_t nr)
{
	char *p = fresh_pages(_metadata, nr);

	touch_pages(p, nr);
	munmap(p, nr * page_size());
}

static void kill_child(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static int exit_now(void *arg)
{
	return 0;
}

static int sleeper_main(void *arg)
{
	int ready = *(int *)arg;

	if (ready > 3)
		close_range(3, ready - 1, 0);
	close_range(ready + 1, ~0U, 0);
	if (write(ready, "r", 1) != 1)
		return 1;
	close(ready);
	for (;;)
		pause();
	return 0;
}

/*
 * spawn_sleeper() - a child to count, sleeping until it is killed
 *
 * The child holds none of the caller's fds: a counter must go away when
 * the caller closes it, not live on in a copy of the fd table. So wait
 * until the child has dropped them.
 *
 * Return: its pid, or -1.
 */
static pid_t spawn_sleeper(void)
{
	int ready[2];
	pid_t pid;
	char c;

	if (pipe(ready))
		return -1;
	pid = fork_child(sleeper_main, &ready[1]);
	close(ready[1]);
	if (pid > 0 && read(ready[0], &c, 1) != 1) {
		kill_child(pid);
		pid = -1;
	}
	close(ready[0]);
	return pid;
}

/*
 * A child that waits for a byte on @go, burns @burn_ns of CPU time,
 * optionally disables its own counters with prctl(), reports on @done
 * and then either exits or burns CPU until it is killed.
 */
struct burner {
	int go[2];
	int done[2];
	__u64 burn_ns;
	bool disable_self;
	bool forever;
	bool drop;		/* become nobody first */
};

static int burner_main(void *arg)
{
	struct burner *b = arg;
	char c;

	if (b->drop)
		CHILD_CHECK(drop_privileges() == 0, "%s", strerror(errno));
	CHILD_CHECK(read(b->go[0], &c, 1) == 1, "no go from the parent");
	burn_cpu(b->burn_ns);
	if (b->disable_self)
		CHILD_CHECK(prctl(PR_TASK_PMC_DISABLE, 0, 0, 0, 0) == 0,
			    "prctl(PR_TASK_PMC_DISABLE): %s", strerror(errno));
	CHILD_CHECK(write(b->done[1], "d", 1) == 1, "%s", strerror(errno));
	while (b->forever)
		burn_cpu(NSEC_PER_SEC);
	return 0;
}

/* Start a burner child; it does nothing before burner_go(). */
static pid_t burner_spawn(struct __test_metadata *_metadata, struct burner *b)
{
	ASSERT_EQ(0, pipe(b->go));
	ASSERT_EQ(0, pipe(b->done));
	return spawn(_metadata, burner_main, b);
}

static void burner_go(struct __test_metadata *_metadata, struct burner *b)
{
	ASSERT_EQ(1, write(b->go[1], "g", 1));
}

static void burner_wait_done(struct __test_metadata *_metadata,
			     struct burner *b)
{
	char c;

	ASSERT_EQ(1, read(b->done[0], &c, 1)) TH_LOG("burner child died");
}

FIXTURE(pmc) {
	bool root;
};

FIXTURE_SETUP(pmc)
{
	require_pmc_open(_metadata);
	self->root = geteuid() == 0;
}

FIXTURE_TEARDOWN(pmc)
{
}

/*
 * Opening: every software event works; each malformed argument fails
 * with the errno that notes/semantics.md gives it.
 */

/*
 * The ABI has one layout for 32-bit and 64-bit callers (pmc_test_32 runs
 * this too): fixed sizes, naturally aligned, no padding a compiler could
 * place differently.
 */
TEST(abi_layout_is_word_size_independent)
{
	EXPECT_EQ(PMC_ATTR_SIZE_VER0, sizeof(struct pmc_attr));
	EXPECT_EQ(64, PMC_ATTR_SIZE_VER0);
	EXPECT_EQ(16, offsetof(struct pmc_attr, record_type));
	EXPECT_EQ(32, offsetof(struct pmc_attr, extra_config_len));
	EXPECT_EQ(48, offsetof(struct pmc_attr, __reserved_3));
	EXPECT_EQ(56, offsetof(struct pmc_attr, size));
	EXPECT_EQ(16, offsetof(struct pmc_mmap_page, offset));
	EXPECT_EQ(1024, offsetof(struct pmc_mmap_page, data_head));
	EXPECT_EQ(1040, sizeof(struct pmc_mmap_page));
	EXPECT_EQ(8, sizeof(struct pmc_event_header));
}

TEST_F(pmc, open_every_software_event)
{
	unsigned int id;
	int fd;

	for (id = 0; id < PMC_SW_MAX; id++) {
		fd = sw_open(_metadata, id, -1, 0);
		/* Counting has started: one read returns one u64 value. */
		counter_value(_metadata, fd);
		close(fd);
	}
}

TEST_F(pmc, attr_bad_pointer)
{
	struct pmc_attr attr;
	size_t page = page_size();
	char *p;

	pmc_sw_attr(&attr, PMC_SW_TASK_CLOCK, 0);
	p = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(p != MAP_FAILED);
	ASSERT_EQ(0, munmap(p + page, page));

	EXPECT_EQ(EFAULT, pmc_open_errno(NULL, 0, -1, -1, 0));
	/* wholly in the hole */
	EXPECT_EQ(EFAULT, pmc_open_errno((void *)(p + page), 0, -1, -1, 0));
	/* valid start, tail in the hole */
	memcpy(p + page - sizeof(attr) / 2, &attr, sizeof(attr) / 2);
	EXPECT_EQ(EFAULT, pmc_open_errno((void *)(p + page - sizeof(attr) / 2),
					 0, -1, -1, 0));
	/* a kernel address */
	EXPECT_EQ(EFAULT, pmc_open_errno((void *)-4096L, 0, -1, -1, 0));
	/* positive control: the same attr at a good address */
	memcpy(p, &attr, sizeof(attr));
	EXPECT_EQ(0, pmc_open_errno((void *)p, 0, -1, -1, 0));
	munmap(p, page);
}

/*
 * attr.size, as Documentation/process/adding-syscalls.rst has it: 0 is
 * the first published size; too small, too large for a page, or a
 * larger struct with a non-zero byte past what the kernel knows is
 * E2BIG with the kernel's size written back; a zero tail is fine.
 */
struct pmc_attr_big {
	struct pmc_attr attr;
	unsigned char tail[4096 - sizeof(struct pmc_attr)];
};

static int open_sized(struct pmc_attr_big *big, __u32 size)
{
	big->attr.size = size;
	return pmc_open_errno(&big->attr, 0, -1, -1, 0);
}

TEST_F(pmc, attr_size)
{
	static struct pmc_attr_big big;
	__u32 sizes[] = { 1, 8, PMC_ATTR_SIZE_VER0 - 8, PMC_ATTR_SIZE_VER0 - 1,
			  page_size() + 1, 1U << 31, ~0U };
	unsigned int i;

	memset(&big, 0, sizeof(big));
	pmc_sw_attr(&big.attr, PMC_SW_TASK_CLOCK, 0);
	EXPECT_EQ(0, open_sized(&big, 0));
	EXPECT_EQ(0, big.attr.size);	/* written back only on E2BIG */
	EXPECT_EQ(0, open_sized(&big, PMC_ATTR_SIZE_VER0));
	EXPECT_EQ(0, open_sized(&big, PMC_ATTR_SIZE_VER0 + 1));
	EXPECT_EQ(0, open_sized(&big, sizeof(big)));	/* a page, zero tail */

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		EXPECT_EQ(E2BIG, open_sized(&big, sizes[i])) {
			TH_LOG("size %u", sizes[i]);
		}
		EXPECT_EQ(sizeof(struct pmc_attr), big.attr.size);
	}

	/* A byte the kernel does not know, anywhere in the tail. */
	big.tail[0] = 1;
	EXPECT_EQ(E2BIG, open_sized(&big, sizeof(big)));
	EXPECT_EQ(sizeof(struct pmc_attr), big.attr.size);
	EXPECT_EQ(E2BIG, open_sized(&big, PMC_ATTR_SIZE_VER0 + 1));
	/* ...but past the size given, it is not the kernel's business. */
	EXPECT_EQ(0, open_sized(&big, PMC_ATTR_SIZE_VER0));
	big.tail[0] = 0;
	big.tail[sizeof(big.tail) - 1] = 0x80;
	EXPECT_EQ(E2BIG, open_sized(&big, sizeof(big)));
	EXPECT_EQ(0, open_sized(&big, sizeof(big) - 1));
	big.tail[sizeof(big.tail) - 1] = 0;

	/* A known field still gets its own check at any size. */
	big.attr.stack_user = 8;	/* without PMC_RECORD_STACK_USER */
	EXPECT_EQ(EINVAL, open_sized(&big, sizeof(big)));
	EXPECT_EQ(EINVAL, open_sized(&big, 0));
}

/* The size is read before the rest: a short mapping is EFAULT at once. */
TEST_F(pmc, attr_size_unmapped_tail)
{
	size_t page = page_size();
	struct pmc_attr *attr;
	char *p;

	p = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(p != MAP_FAILED);
	ASSERT_EQ(0, munmap(p + page, page));
	/* The struct ends at the hole; a size reaching into it faults. */
	attr = (struct pmc_attr *)(p + page - sizeof(*attr));
	pmc_sw_attr(attr, PMC_SW_TASK_CLOCK, 0);
	attr->size = sizeof(*attr) + 8;
	EXPECT_EQ(EFAULT, pmc_open_errno(attr, 0, -1, -1, 0));
	attr->size = sizeof(*attr);
	EXPECT_EQ(0, pmc_open_errno(attr, 0, -1, -1, 0));
	munmap(p, page);
}

TEST_F(pmc, attr_reserved_and_unknown_bits)
{
	struct pmc_attr attr;
	__u32 format;

	/* Every known read_format combination and record_type bit is fine. */
	for (format = 0; format <= PMC_FORMAT_ALL; format++) {
		pmc_sw_attr(&attr, PMC_SW_TASK_CLOCK, format);
		EXPECT_EQ(0, pmc_open_errno(&attr, 0, -1, -1, 0)) {
			TH_LOG("read_format %#x", format);
		}
	}
	pmc_sw_attr(&attr, PMC_SW_TASK_CLOCK, 0);
	attr.record_type = PMC_RECORD_ALL;
	attr.regs_user = TEST_REGS_MASK;	/* REGS_USER needs registers */
	EXPECT_EQ(0, pmc_open_errno(&attr, 0, -1, -1, 0));
	attr.regs_user = 0;
	EXPECT_EQ(EINVAL, pmc_open_errno(&attr, 0, -1, -1, 0));

	pmc_sw_attr(&attr, PMC_SW_TASK_CLOCK, 0);
	attr.__reserved_1 = 1;
	EXPECT_EQ(EINVAL, pmc_open_errno(&attr, 0, -1, -1, 0));
	attr.__reserved_1 = 1ULL << 43;	/* its top bit */
	EXPECT_EQ(EINVAL, pmc_open_errno(&attr, 0, -1, -1, 0));

	/* regs_user and stack_user are reserved without their record bits */
	pmc_sw_attr(&attr, PMC_SW_TASK_CLOCK, 0);
	attr.regs_user = 1;
	EXPECT_EQ(EINVAL, pmc_open_errno(&attr, 0, -1, -1, 0));

	pmc_sw_attr(&attr, PMC_SW_TASK_CLOCK, 0);
	attr.__reserved_3 = 1ULL << 63;
	EXPECT_EQ(EINVAL, pmc_open_errno(&attr, 0, -1, -1, 0));

	pmc_sw_attr(&attr, PMC_SW_TASK_CLOCK, 0);
	attr.stack_user = 1U << 31;
	EXPECT_EQ(EINVAL, pmc_open_errno(&attr, 0, -1, -1, 0));

	pmc_sw_attr(&attr, PMC_SW_TASK_CLOCK, 0);
	attr.record_type = PMC_RECORD_ALL + 1;
	EXPECT_EQ(EINVAL, pmc_open_errno(&attr, 0, -1, -1, 0));
	attr.record_type = 1U << 31;
	EXPECT_EQ(EINVAL, pmc_open_errno(&attr, 0, -1, -1, 0));

	pmc_sw_attr(&attr, PMC_SW_TASK_CLOCK, PMC_FORMAT_ALL + 1);
	EXPECT_EQ(EINVAL, pmc_open_errno(&attr, 0, -1, -1, 0));
	attr.read_format = 1U << 31;
	EXPECT_EQ(EINVAL, pmc_open_errno(&attr, 0, -1, -1, 0));

	pmc_sw_attr(&attr, PMC_SW_TASK_CLOCK, 0);
	attr.extra_config_len = 1;
	EXPECT_EQ(EINVAL, pmc_open_errno(&attr, 0, -1, -1, 0));
	attr.extra_config_len = 64;
	EXPECT_EQ(EINVAL, pmc_open_errno(&attr, 0, -1, -1, 0));
}

/* A task counter's clock advances by the thread's CPU time. */
static void check_clock_tracks_cputime(struct __test_metadata *_metadata,
				       struct pmc_attr *attr)
{
	__u64 v0, v1, t0, t1;
	int fd;

	fd = counter_open(_metadata, attr, 0, -1, -1);
	v0 = counter_value(_metadata, fd);
	t0 = thread_cputime_ns();
	burn_cpu(BURN_NS);
	t1 = thread_cputime_ns();
	v1 = counter_value(_metadata, fd);

	EXPECT_TRUE(clock_close(v1 - v0, t1 - t0)) {
		TH_LOG("counter advanced %llu ns, thread CPU time %llu ns",
		       (unsigned long long)(v1 - v0),
		       (unsigned long long)(t1 - t0));
	}
	close(fd);
}

/*
 * exclude_idle: software counters leave the idle task out. Only a
 * per-CPU counter sees the idle task; on a task counter the bit is
 * accepted and the count is the task's. Hardware counters refuse it.
 */
TEST_F(pmc, exclude_idle_task_counter)
{
	struct pmc_attr attr;
	int err;

	pmc_sw_attr(&attr, PMC_SW_TASK_CLOCK, 0);
	attr.exclude_idle = 1;
	check_clock_tracks_cputime(_metadata, &attr);

	pmc_sw_attr(&attr, 0, 0);
	attr.config = PMC_CONFIG(PMC_TYPE_HARDWARE, PMC_HW_INSTRUCTIONS);
	attr.exclude_idle = 1;
	err = pmc_open_errno(&attr, 0, -1, -1, 0);
	EXPECT_TRUE(err == EOPNOTSUPP || err == ENODEV) {
		TH_LOG("hardware counter with exclude_idle: %s", strerror(err));
	}
	attr.config = PMC_CONFIG_RAW | 0xc0;
	err = pmc_open_errno(&attr, 0, -1, -1, 0);
	EXPECT_TRUE(err == EOPNOTSUPP || err == ENODEV) {
		TH_LOG("raw counter with exclude_idle: %s", strerror(err));
	}
}

/*
 * Two cpu-clocks on one CPU, one with exclude_idle. A child pinned there
 * burns IDLE_BURN_NS of CPU time, then that CPU has nothing to run for
 * IDLE_SLEEP_NS: the plain clock counts it all, the other only what ran.
 */
#define IDLE_BURN_NS	(50 * NSEC_PER_MSEC)
#define IDLE_SLEEP_NS	(200 * NSEC_PER_MSEC)

static int burn_on_cpu(void *arg)
{
	if (pin_to_cpu((int)(long)arg))
		return 1;
	burn_cpu(IDLE_BURN_NS);
	return 0;
}

TEST_F(pmc, exclude_idle_per_cpu_clock)
{
	int cpus[2], busy, idle_fd, all_fd, status;
	__u64 t0, t1, idle_less, all;
	struct pmc_attr attr;
	pid_t pid;

	if (!self->root)
		SKIP(return, "per-CPU counters need CAP_PERFMON");
	if (allowed_cpus(cpus, 2) < 2)
		SKIP(return, "needs two CPUs");
	busy = cpus[1];
	ASSERT_EQ(0, pin_to_cpu(cpus[0]));

	pmc_sw_attr(&attr, PMC_SW_CPU_CLOCK, 0);
	attr.exclude_kernel = 0;
	t0 = monotonic_ns();
	all_fd = counter_open(_metadata, &attr, -1, busy, -1);
	attr.exclude_idle = 1;
	idle_fd = counter_open(_metadata, &attr, -1, busy, -1);

	fflush(NULL);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(burn_on_cpu((void *)(long)busy));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	usleep(IDLE_SLEEP_NS / 1000);

	/* Read the idle-less one first: it can only be the smaller. */
	idle_less = counter_value(_metadata, idle_fd);
	all = counter_value(_metadata, all_fd);
	t1 = monotonic_ns();
	TH_LOG("CPU %d: %llu ns without idle, %llu ns in all, %llu ns elapsed",
	       busy, (unsigned long long)idle_less, (unsigned long long)all,
	       (unsigned long long)(t1 - t0));
	/* The child's CPU time is not idle time. */
	EXPECT_GE(idle_less, IDLE_BURN_NS * 9 / 10);
	EXPECT_LE(idle_less, all);
	EXPECT_TRUE(clock_close(all, t1 - t0));
	/* Most of the sleep was idle on that CPU, and was left out. */
	EXPECT_GE(all - idle_less, IDLE_SLEEP_NS / 2);
	close(idle_fd);
	close(all_fd);
}

TEST_F(pmc, event_types)
{
	struct pmc_attr attr;
	unsigned int id;
	int err;

	/*
	 * Without a PMU every hardware event is ENODEV. Where perf has one,
	 * they are perf's: each opens, or perf's driver says it lacks it.
	 */
	for (id = 0; id <= PMC_HW_MAX; id++) {
		pmc_sw_attr(&attr, 0, 0);
		/* raw: event select 0xc0 (x86 instructions retired) */
		attr.config = id < PMC_HW_MAX ?
			      PMC_CONFIG(PMC_TYPE_HARDWARE, id) :
			      PMC_CONFIG_RAW | 0xc0;
		err = pmc_open_errno(&attr, 0, -1, -1, 0);
		if (perf_has_hw_pmu()) {
			EXPECT_TRUE(!err || err == ENOENT || err == EOPNOTSUPP) {
				TH_LOG("hardware event %u: %s", id, strerror(err));
			}
		} else {
			EXPECT_EQ(ENODEV, err) {
				TH_LOG("hardware event %u: %s", id, strerror(err));
			}
		}
	}

	attr.config = PMC_CONFIG(PMC_TYPE_TRACEPOINT, 1);
	EXPECT_EQ(EOPNOTSUPP, pmc_open_errno(&attr, 0, -1, -1, 0));

	/* unknown types and software ids: ENOENT, as perf */
	attr.config = PMC_CONFIG(3, 0);
	EXPECT_EQ(ENOENT, pmc_open_errno(&attr, 0, -1, -1, 0));
	attr.config = PMC_CONFIG(0x7f, 0);
	EXPECT_EQ(ENOENT, pmc_open_errno(&attr, 0, -1, -1, 0));

	attr.config = PMC_CONFIG(PMC_TYPE_SOFTWARE, PMC_SW_MAX);
	EXPECT_EQ(ENOENT, pmc_open_errno(&attr, 0, -1, -1, 0));
	attr.config = PMC_CONFIG(PMC_TYPE_SOFTWARE, PMC_CONFIG_ID_MASK);
	EXPECT_EQ(ENOENT, pmc_open_errno(&attr, 0, -1, -1, 0));
}

/* Software counters sample too, inherited ones included. */
TEST_F(pmc, sampling_with_inherit)
{
	struct pmc_attr attr;
	int fd;

	pmc_sw_attr(&attr, PMC_SW_TASK_CLOCK, 0);
	attr.irq_period = 10 * NSEC_PER_MSEC;
	attr.inherit = 1;
	EXPECT_EQ(0, pmc_open_errno(&attr, 0, -1, -1, 0));
	/* ...but a REFRESH budget is for one task only */
	attr.disabled = 1;
	fd = pmc_open(&attr, 0, -1, -1, 0);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-1, ioctl(fd, PMC_IOC_REFRESH, 1));
	EXPECT_EQ(EINVAL, errno);
	close(fd);
}

TEST_F(pmc, bad_flags)
{
	static const unsigned long bad[] = {
		1UL << 1, 1UL << (8 * sizeof(long) - 1), ~0UL,
		~PMC_FLAG_FD_CLOEXEC,
		PMC_FLAG_FD_CLOEXEC | (1UL << 2),
	};
	struct pmc_attr attr;
	unsigned int i;

	pmc_sw_attr(&attr, PMC_SW_TASK_CLOCK, 0);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(EINVAL, pmc_open_errno(&attr, 0, -1, -1, bad[i])) {
			TH_LOG("flags %#lx", bad[i]);
		}
	}
}

TEST_F(pmc, fd_cloexec)
{
	struct pmc_attr attr;
	int fd, flags;

	pmc_sw_attr(&attr, PMC_SW_TASK_CLOCK, 0);
	fd = pmc_open(&attr, 0, -1, -1, PMC_FLAG_FD_CLOEXEC);
	ASSERT_LE(0, fd) TH_LOG("%s", strerror(errno));
	flags = fcntl(fd, F_GETFD);
	ASSERT_LE(0, flags);
	EXPECT_TRUE(flags & FD_CLOEXEC);
	close(fd);

	fd = pmc_open(&attr, 0, -1, -1, 0);
	ASSERT_LE(0, fd) TH_LOG("%s", strerror(errno));
	flags = fcntl(fd, F_GETFD);
	ASSERT_LE(0, flags);
	EXPECT_FALSE(flags & FD_CLOEXEC);
	close(fd);
}

TEST_F(pmc, bad_pid)
{
	struct pmc_attr attr;
	pid_t gone;

	pmc_sw_attr(&attr, PMC_SW_TASK_CLOCK, 0);
	/* no task has a pid below -1: ESRCH, as perf */
	EXPECT_EQ(ESRCH, pmc_open_errno(&attr, -2, -1, -1, 0));
	EXPECT_EQ(ESRCH, pmc_open_errno(&attr, INT_MIN, -1, -1, 0));
	EXPECT_EQ(ESRCH, pmc_open_errno(&attr, -2, 0, -1, 0));
	/* "every task on every CPU" is not a counter */
	EXPECT_EQ(EINVAL, pmc_open_errno(&attr, -1, -1, -1, 0));

	/* A reaped child's pid names no task (until pids wrap). */
	gone = spawn(_metadata, exit_now, NULL);
	ASSERT_EQ(0, reap(_metadata, gone, NULL));
	EXPECT_EQ(ESRCH, pmc_open_errno(&attr, gone, -1, -1, 0));

	/* positive controls: self by 0 and by pid */
	EXPECT_EQ(0, pmc_open_errno(&attr, 0, -1, -1, 0));
	EXPECT_EQ(0, pmc_open_errno(&attr, getpid(), -1, -1, 0));
}

/* In an unprivileged child: pid 1 belongs to another user. */
static int open_other_users_task(void *arg)
{
	struct pmc_attr attr;
	int err;

	pmc_sw_attr(&attr, PMC_SW_TASK_CLOCK, 0);
	err = pmc_open_errno(&attr, getpid(), -1, -1, 0);
	CHILD_CHECK(err == 0, "own pid: %s", strerror(err));
	err = pmc_open_errno(&attr, 1, -1, -1, 0);
	CHILD_CHECK(err == EACCES, "pid 1: got %s, want EACCES", strerror(err));
	return 0;
}

TEST_F(pmc, other_users_task)
{
	uid_t uid = self->root ? NOBODY : geteuid();
	struct stat st;

	ASSERT_EQ(0, stat("/proc/1", &st));
	if (st.st_uid == uid)
		SKIP(return, "pid 1 runs as uid %u, the test's own user", uid);
	run_unprivileged(_metadata, open_other_users_task, NULL);
}

TEST_F(pmc, bad_cpu)
{
	struct pmc_attr attr;
	int cpu;

	ASSERT_EQ(1, allowed_cpus(&cpu, 1));
	pmc_sw_attr(&attr, PMC_SW_TASK_CLOCK, 0);
	EXPECT_EQ(EINVAL, pmc_open_errno(&attr, 0, -2, -1, 0));
	EXPECT_EQ(EINVAL, pmc_open_errno(&attr, 0, INT_MIN, -1, 0));
	EXPECT_EQ(EINVAL, pmc_open_errno(&attr, 0, possible_cpus(), -1, 0));
	EXPECT_EQ(EINVAL, pmc_open_errno(&attr, 0, INT_MAX, -1, 0));
	/* positive control: this task, on one CPU only */
	EXPECT_EQ(0, pmc_open_errno(&attr, 0, cpu, -1, 0));
}

/*
 * In an unprivileged child: a bad group_fd is reported before the
 * permission checks, as perf does, so the caller learns what to fix.
 */
static int bad_group_unprivileged(void *arg)
{
	int cpu = *(int *)arg, gone, pipefd[2], err;
	struct pmc_attr attr;
	long level = 2;

	CHILD_CHECK(pipe(pipefd) == 0, "%s", strerror(errno));
	gone = dup(pipefd[0]);
	CHILD_CHECK(gone >= 0, "%s", strerror(errno));
	close(gone);
	pmc_sw_attr(&attr, PMC_SW_TASK_CLOCK, 0);
	/* a per-CPU counter needs privilege */
	err = pmc_open_errno(&attr, -1, cpu, gone, 0);
	CHILD_CHECK(err == EBADF, "per-CPU, closed group_fd: %s", strerror(err));
	err = pmc_open_errno(&attr, -1, cpu, pipefd[0], 0);
	CHILD_CHECK(err == EINVAL, "per-CPU, a pipe as group_fd: %s",
		    strerror(err));
	/* and so does kernel mode, at pmc_paranoid 2 */
	attr.exclude_kernel = 0;
	err = pmc_open_errno(&attr, 0, -1, gone, 0);
	CHILD_CHECK(err == EBADF, "kernel mode, closed group_fd: %s",
		    strerror(err));
	/* positive control: without the bad group_fd, the refusal */
	attr.exclude_kernel = 1;
	if (!read_int_file(PARANOID_PATH, &level) && level >= 1) {
		err = pmc_open_errno(&attr, -1, cpu, -1, 0);
		CHILD_CHECK(err == EACCES, "per-CPU at pmc_paranoid %ld: %s",
			    level, strerror(err));
	}
	return 0;
}

TEST_F(pmc, group_fd_before_permission)
{
	int cpu;

	ASSERT_EQ(1, allowed_cpus(&cpu, 1));
	run_unprivileged(_metadata, bad_group_unprivileged, &cpu);
}

TEST_F(pmc, group_fd_errors)
{
	int leader, member, theirs, gone, pipefd[2], cpu;
	struct pmc_attr attr;
	pid_t child;

	ASSERT_EQ(1, allowed_cpus(&cpu, 1));
	leader = sw_open(_metadata, PMC_SW_TASK_CLOCK, -1, 0);
	member = sw_open(_metadata, PMC_SW_PAGE_FAULTS, leader, 0);
	pmc_sw_attr(&attr, PMC_SW_CONTEXT_SWITCHES, 0);

	/* not an open fd */
	gone = dup(leader);
	ASSERT_LE(0, gone);
	close(gone);
	EXPECT_EQ(EBADF, pmc_open_errno(&attr, 0, -1, gone, 0));

	/* an fd, but not a counter */
	ASSERT_EQ(0, pipe(pipefd));
	EXPECT_EQ(EINVAL, pmc_open_errno(&attr, 0, -1, pipefd[0], 0));

	/* a member, not a leader */
	EXPECT_EQ(EINVAL, pmc_open_errno(&attr, 0, -1, member, 0));

	/* the leader counts on another set of CPUs */
	EXPECT_EQ(EINVAL, pmc_open_errno(&attr, 0, cpu, leader, 0));

	/* the leader counts another task, either way round */
	child = spawn_sleeper();
	ASSERT_LT(0, child);
	EXPECT_EQ(EINVAL, pmc_open_errno(&attr, child, -1, leader, 0));
	theirs = counter_open(_metadata, &attr, child, -1, -1);
	EXPECT_EQ(EINVAL, pmc_open_errno(&attr, 0, -1, theirs, 0));
	/* positive control: joining from the same task works */
	EXPECT_EQ(0, pmc_open_errno(&attr, child, -1, theirs, 0));
	close(theirs);
	kill_child(child);

	/* pinned and exclusive are for leaders only */
	attr.pinned = 1;
	EXPECT_EQ(EINVAL, pmc_open_errno(&attr, 0, -1, leader, 0));
	EXPECT_EQ(0, pmc_open_errno(&attr, 0, -1, -1, 0));
	attr.pinned = 0;
	attr.exclusive = 1;
	EXPECT_EQ(EINVAL, pmc_open_errno(&attr, 0, -1, leader, 0));
	EXPECT_EQ(0, pmc_open_errno(&attr, 0, -1, -1, 0));

	/* positive control: a plain member joins */
	attr.exclusive = 0;
	EXPECT_EQ(0, pmc_open_errno(&attr, 0, -1, leader, 0));

	close(pipefd[0]);
	close(pipefd[1]);
	close(member);
	close(leader);
}

TEST_F(pmc, ioctl_errors)
{
	static const unsigned long unknown[] = {
		_IO(PMC_IOC_MAGIC, 4), _IO(PMC_IOC_MAGIC, 0xff),
		_IO(PMC_IOC_MAGIC + 1, 0), 0xdeadbeef,
	};
	unsigned int i;
	int fd;

	fd = sw_open(_metadata, PMC_SW_TASK_CLOCK, -1, 0);
	/* REFRESH needs a sampling counter */
	EXPECT_EQ(-1, ioctl(fd, PMC_IOC_REFRESH, 1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(fd, PMC_IOC_REFRESH, 0));
	EXPECT_EQ(EINVAL, errno);
	for (i = 0; i < ARRAY_SIZE(unknown); i++) {
		EXPECT_EQ(-1, ioctl(fd, unknown[i], 0));
		EXPECT_EQ(ENOTTY, errno) TH_LOG("cmd %#lx", unknown[i]);
	}
	/* positive controls */
	EXPECT_EQ(0, ioctl(fd, PMC_IOC_DISABLE, 0));
	EXPECT_EQ(0, ioctl(fd, PMC_IOC_RESET, 0));
	EXPECT_EQ(0, ioctl(fd, PMC_IOC_ENABLE, 0));
	close(fd);
}

TEST_F(pmc, read_buffer_too_small)
{
	static const __u32 formats[] = {
		0, PMC_FORMAT_TOTAL_TIME_ENABLED,
		PMC_FORMAT_TOTAL_TIME_RUNNING, ALL_TIMES,
	};
	__u32 group_format = PMC_FORMAT_GROUP | ALL_TIMES;
	int fd, leader, member;
	__u64 buf[8];
	unsigned int i;
	size_t size;

	for (i = 0; i < ARRAY_SIZE(formats); i++) {
		fd = sw_open(_metadata, PMC_SW_TASK_CLOCK, -1, formats[i]);
		size = pmc_read_size(formats[i], 1);
		EXPECT_EQ(-1, read(fd, buf, size - 1));
		EXPECT_EQ(ENOSPC, errno) TH_LOG("read_format %#x", formats[i]);
		EXPECT_EQ(-1, read(fd, buf, 4));
		EXPECT_EQ(ENOSPC, errno);
		/* positive control */
		EXPECT_EQ(size, read(fd, buf, size));
		close(fd);
	}

	/* a group of two: nr, enabled, running, two values */
	leader = sw_open(_metadata, PMC_SW_TASK_CLOCK, -1, group_format);
	member = sw_open(_metadata, PMC_SW_PAGE_FAULTS, leader, 0);
	size = pmc_read_size(group_format, 2);
	EXPECT_EQ(-1, read(leader, buf, size - 1));
	EXPECT_EQ(ENOSPC, errno);
	/* big enough for a group of one is still too small */
	EXPECT_EQ(-1, read(leader, buf, pmc_read_size(group_format, 1)));
	EXPECT_EQ(ENOSPC, errno);
	EXPECT_EQ(size, read(leader, buf, size));
	close(member);
	close(leader);
}

/*
 * Software event values: faults, clocks, switches and migrations against
 * workloads of known cost.
 */

TEST_F(pmc, page_faults)
{
	int faults, minor, major;
	__u64 f0, mi0, ma0;
	char *p;

	p = fresh_pages(_metadata, NR_PAGES);
	faults = sw_open(_metadata, PMC_SW_PAGE_FAULTS, -1, 0);
	minor = sw_open(_metadata, PMC_SW_PAGE_FAULTS_MIN, -1, 0);
	major = sw_open(_metadata, PMC_SW_PAGE_FAULTS_MAJ, -1, 0);

	f0 = counter_value(_metadata, faults);
	mi0 = counter_value(_metadata, minor);
	ma0 = counter_value(_metadata, major);
	touch_pages(p, NR_PAGES);
	EXPECT_LE(f0 + NR_PAGES, counter_value(_metadata, faults));
	EXPECT_LE(mi0 + NR_PAGES, counter_value(_metadata, minor));
	/* anonymous memory never needs I/O */
	EXPECT_EQ(ma0, counter_value(_metadata, major));

	close(major);
	close(minor);
	close(faults);
	munmap(p, NR_PAGES * page_size());
}

TEST_F(pmc, exclude_user_drops_user_faults)
{
	struct pmc_attr attr;
	int user, none;
	__u64 u0, n0;

	user = sw_open(_metadata, PMC_SW_PAGE_FAULTS, -1, 0);
	pmc_sw_attr(&attr, PMC_SW_PAGE_FAULTS, 0);
	attr.exclude_user = 1;
	none = counter_open(_metadata, &attr, 0, -1, -1);

	u0 = counter_value(_metadata, user);
	n0 = counter_value(_metadata, none);
	fault_pages(_metadata, NR_PAGES);
	EXPECT_LE(u0 + NR_PAGES, counter_value(_metadata, user));
	EXPECT_EQ(n0, counter_value(_metadata, none));

	close(none);
	close(user);
}

/*
 * read() from /dev/zero into fresh pages: the kernel's clear_user()
 * takes the faults, so they are kernel-mode faults.
 */
TEST_F(pmc, kernel_mode_faults)
{
	size_t len = NR_PAGES * page_size();
	int kernel, user, zero;
	struct pmc_attr attr;
	__u64 k0, u0;
	char *p;

	if (!self->root)
		SKIP(return, "counting kernel mode needs root at pmc_paranoid 2");

	p = fresh_pages(_metadata, NR_PAGES);
	zero = open("/dev/zero", O_RDONLY);
	ASSERT_LE(0, zero);
	pmc_sw_attr(&attr, PMC_SW_PAGE_FAULTS, 0);
	attr.exclude_kernel = 0;
	attr.exclude_user = 1;
	kernel = counter_open(_metadata, &attr, 0, -1, -1);
	user = sw_open(_metadata, PMC_SW_PAGE_FAULTS, -1, 0);

	k0 = counter_value(_metadata, kernel);
	u0 = counter_value(_metadata, user);
	ASSERT_EQ(len, read(zero, p, len));
	EXPECT_LE(k0 + NR_PAGES, counter_value(_metadata, kernel));
	EXPECT_GT(u0 + NR_PAGES, counter_value(_metadata, user));

	close(user);
	close(kernel);
	close(zero);
	munmap(p, len);
}

TEST_F(pmc, task_clock)
{
	struct pmc_attr attr;

	pmc_sw_attr(&attr, PMC_SW_TASK_CLOCK, 0);
	check_clock_tracks_cputime(_metadata, &attr);
}

TEST_F(pmc, cpu_clock_on_task)
{
	struct pmc_attr attr;

	pmc_sw_attr(&attr, PMC_SW_CPU_CLOCK, 0);
	check_clock_tracks_cputime(_metadata, &attr);
}

/* Clocks ignore exclude_user/exclude_kernel, even both at once. */
TEST_F(pmc, clock_ignores_exclude_bits)
{
	struct pmc_attr attr;

	pmc_sw_attr(&attr, PMC_SW_TASK_CLOCK, 0);
	attr.exclude_user = 1;
	check_clock_tracks_cputime(_metadata, &attr);
}

/*
 * Two tasks on one CPU pass a byte back and forth: each round trip
 * switches both of them out at least once. Switches happen in kernel
 * mode, as perf sees them: exclude_user changes nothing, exclude_kernel
 * leaves every one out. A caller that may not count kernel mode
 * (pmc_paranoid 2, no privilege) checks only the latter.
 */
TEST_F(pmc, context_switches)
{
	int mine, mine_excl, theirs, user;
	__u64 m0, e0, c0, u0, want;
	struct pmc_attr attr;
	struct ping_pong pp;
	bool kernel;

	ping_pong_start(_metadata, &pp);
	kernel = pmc_sw_attr_kernel(&attr, PMC_SW_CONTEXT_SWITCHES, 0);
	mine = counter_open(_metadata, &attr, 0, -1, -1);
	theirs = counter_open(_metadata, &attr, pp.child, -1, -1);
	attr.exclude_user = 1;
	mine_excl = counter_open(_metadata, &attr, 0, -1, -1);
	user = sw_open(_metadata, PMC_SW_CONTEXT_SWITCHES, -1, 0);
	want = kernel ? NR_SWITCHES : 0;

	m0 = counter_value(_metadata, mine);
	e0 = counter_value(_metadata, mine_excl);
	c0 = counter_value(_metadata, theirs);
	u0 = counter_value(_metadata, user);
	ping_pong_run(_metadata, &pp, NR_SWITCHES);
	EXPECT_LE(m0 + want, counter_value(_metadata, mine));
	EXPECT_LE(e0 + want, counter_value(_metadata, mine_excl));
	EXPECT_EQ(u0, counter_value(_metadata, user)) {
		TH_LOG("exclude_kernel counted a context switch");
	}

	ping_pong_stop(_metadata, &pp);
	/* the child's counter still reads after it exited */
	EXPECT_LE(c0 + want, counter_value(_metadata, theirs));

	close(user);
	close(theirs);
	close(mine_excl);
	close(mine);
}

/*
 * Every affinity change moves the task to the other CPU; migrations are
 * kernel-mode events too.
 */
TEST_F(pmc, cpu_migrations)
{
	int cpus[2], plain, excl, user, i;
	__u64 p0, e0, u0, want;
	struct pmc_attr attr;

	if (allowed_cpus(cpus, 2) < 2)
		SKIP(return, "needs two CPUs to migrate between");

	want = pmc_sw_attr_kernel(&attr, PMC_SW_CPU_MIGRATIONS, 0) ?
	       NR_MIGRATIONS : 0;
	plain = counter_open(_metadata, &attr, 0, -1, -1);
	attr.exclude_user = 1;
	excl = counter_open(_metadata, &attr, 0, -1, -1);
	user = sw_open(_metadata, PMC_SW_CPU_MIGRATIONS, -1, 0);

	p0 = counter_value(_metadata, plain);
	e0 = counter_value(_metadata, excl);
	u0 = counter_value(_metadata, user);
	for (i = 0; i < NR_MIGRATIONS; i++) {
		ASSERT_EQ(0, pin_to_cpu(cpus[0]));
		ASSERT_EQ(0, pin_to_cpu(cpus[1]));
	}
	EXPECT_LE(p0 + want, counter_value(_metadata, plain));
	EXPECT_LE(e0 + want, counter_value(_metadata, excl));
	EXPECT_EQ(u0, counter_value(_metadata, user)) {
		TH_LOG("exclude_kernel counted a migration");
	}

	close(user);
	close(excl);
	close(plain);
}

/*
 * read() returns the value, then time_enabled, then time_running, each
 * only when asked for, and exactly that many bytes.
 */
TEST_F(pmc, read_format_layouts)
{
	static const __u32 formats[] = {
		0, PMC_FORMAT_TOTAL_TIME_ENABLED,
		PMC_FORMAT_TOTAL_TIME_RUNNING, ALL_TIMES,
	};
	__u64 min_ns = SHORT_BURN_NS * 9 / 10;
	struct pmc_reading r;
	unsigned int i;
	__u32 format;
	int fd;

	for (i = 0; i < ARRAY_SIZE(formats); i++) {
		format = formats[i];
		fd = sw_open(_metadata, PMC_SW_TASK_CLOCK, -1, format);
		burn_cpu(SHORT_BURN_NS);
		r = counter_read(_metadata, fd, format);
		TH_LOG("read_format %#x: value %llu enabled %llu running %llu",
		       format, (unsigned long long)r.value,
		       (unsigned long long)r.enabled,
		       (unsigned long long)r.running);
		EXPECT_LE(min_ns, r.value);
		if (format & PMC_FORMAT_TOTAL_TIME_ENABLED)
			EXPECT_LE(min_ns, r.enabled);
		if (format & PMC_FORMAT_TOTAL_TIME_RUNNING)
			EXPECT_LE(min_ns, r.running);
		if (format == ALL_TIMES) {
			EXPECT_LE(r.running, r.enabled);
			/* a software counter is never multiplexed out */
			EXPECT_LE(r.enabled - r.running, r.enabled / 100);
		}
		close(fd);
	}
}

TEST_F(pmc, enable_disable)
{
	struct pmc_reading r0, r1, r2, r3;
	struct pmc_attr attr;
	int clock, faults;

	pmc_sw_attr(&attr, PMC_SW_TASK_CLOCK, ALL_TIMES);
	attr.disabled = 1;
	clock = counter_open(_metadata, &attr, 0, -1, -1);
	pmc_sw_attr(&attr, PMC_SW_PAGE_FAULTS, 0);
	attr.disabled = 1;
	faults = counter_open(_metadata, &attr, 0, -1, -1);

	/* disabled at open: nothing counts, no time passes */
	burn_cpu(SHORT_BURN_NS);
	fault_pages(_metadata, NR_PAGES);
	r0 = counter_read(_metadata, clock, ALL_TIMES);
	EXPECT_EQ(0, r0.value);
	EXPECT_EQ(0, r0.enabled);
	EXPECT_EQ(0, r0.running);
	EXPECT_EQ(0, counter_value(_metadata, faults));

	counter_ioctl(_metadata, clock, PMC_IOC_ENABLE);
	counter_ioctl(_metadata, faults, PMC_IOC_ENABLE);
	burn_cpu(SHORT_BURN_NS);
	fault_pages(_metadata, NR_PAGES);
	r1 = counter_read(_metadata, clock, ALL_TIMES);
	EXPECT_LE(SHORT_BURN_NS * 9 / 10, r1.value);
	EXPECT_LT(0, r1.running);
	EXPECT_LE(r1.running, r1.enabled);
	EXPECT_LE(NR_PAGES, counter_value(_metadata, faults));

	/* disabled again: value and both times freeze */
	counter_ioctl(_metadata, clock, PMC_IOC_DISABLE);
	r2 = counter_read(_metadata, clock, ALL_TIMES);
	burn_cpu(SHORT_BURN_NS);
	r3 = counter_read(_metadata, clock, ALL_TIMES);
	EXPECT_LE(r1.value, r2.value);
	EXPECT_EQ(r2.value, r3.value);
	EXPECT_EQ(r2.running, r3.running);
	EXPECT_EQ(r2.enabled, r3.enabled);

	close(faults);
	close(clock);
}

TEST_F(pmc, reset)
{
	struct pmc_reading r0, r1, r2;
	int fd;

	fd = sw_open(_metadata, PMC_SW_TASK_CLOCK, -1, ALL_TIMES);
	burn_cpu(SHORT_BURN_NS);
	r0 = counter_read(_metadata, fd, ALL_TIMES);
	ASSERT_LE(SHORT_BURN_NS * 9 / 10, r0.value);

	/* the value restarts from 0, the times go on */
	counter_ioctl(_metadata, fd, PMC_IOC_RESET);
	r1 = counter_read(_metadata, fd, ALL_TIMES);
	EXPECT_GT(r0.value / 2, r1.value);
	EXPECT_LE(r0.enabled, r1.enabled);
	EXPECT_LE(r0.running, r1.running);

	/* and it keeps counting */
	burn_cpu(SHORT_BURN_NS);
	r2 = counter_read(_metadata, fd, ALL_TIMES);
	EXPECT_LE(r1.value + SHORT_BURN_NS * 9 / 10, r2.value);

	/* a disabled counter reads exactly 0 after a reset */
	counter_ioctl(_metadata, fd, PMC_IOC_DISABLE);
	counter_ioctl(_metadata, fd, PMC_IOC_RESET);
	EXPECT_EQ(0, counter_read(_metadata, fd, ALL_TIMES).value);
	close(fd);
}

/* prctl() switches off and on every counter attached to the caller. */
TEST_F(pmc, prctl_own_counters)
{
	__u64 c1, c2, c3, f1, f2, f3, off1, off2, off3;
	struct pmc_attr attr;
	int clock, faults, off;

	clock = sw_open(_metadata, PMC_SW_TASK_CLOCK, -1, 0);
	faults = sw_open(_metadata, PMC_SW_PAGE_FAULTS, -1, 0);
	/* disabled at open: PR_TASK_PMC_ENABLE turns it on as well */
	pmc_sw_attr(&attr, PMC_SW_TASK_CLOCK, 0);
	attr.disabled = 1;
	off = counter_open(_metadata, &attr, 0, -1, -1);
	burn_cpu(SHORT_BURN_NS);

	ASSERT_EQ(0, prctl(PR_TASK_PMC_DISABLE, 0, 0, 0, 0)) {
		TH_LOG("PR_TASK_PMC_DISABLE: %s", strerror(errno));
	}
	c1 = counter_value(_metadata, clock);
	f1 = counter_value(_metadata, faults);
	off1 = counter_value(_metadata, off);
	EXPECT_LE(SHORT_BURN_NS * 9 / 10, c1);
	burn_cpu(SHORT_BURN_NS);
	fault_pages(_metadata, NR_PAGES);
	c2 = counter_value(_metadata, clock);
	f2 = counter_value(_metadata, faults);
	off2 = counter_value(_metadata, off);
	EXPECT_EQ(c1, c2);
	EXPECT_EQ(f1, f2);
	EXPECT_EQ(0, off1);
	EXPECT_EQ(0, off2);

	ASSERT_EQ(0, prctl(PR_TASK_PMC_ENABLE, 0, 0, 0, 0)) {
		TH_LOG("PR_TASK_PMC_ENABLE: %s", strerror(errno));
	}
	burn_cpu(SHORT_BURN_NS);
	fault_pages(_metadata, NR_PAGES);
	c3 = counter_value(_metadata, clock);
	f3 = counter_value(_metadata, faults);
	off3 = counter_value(_metadata, off);
	EXPECT_LE(c2 + SHORT_BURN_NS * 9 / 10, c3);
	EXPECT_LE(f2 + NR_PAGES, f3);
	EXPECT_LE(SHORT_BURN_NS * 9 / 10, off3);

	close(off);
	close(faults);
	close(clock);
}

/* The caller's prctl() leaves alone the counters it put on other tasks. */
TEST_F(pmc, prctl_spares_other_tasks)
{
	struct burner b = { .forever = true };
	struct pmc_attr attr;
	__u64 v1, v2;
	pid_t child;
	int fd;

	child = burner_spawn(_metadata, &b);
	pmc_sw_attr(&attr, PMC_SW_TASK_CLOCK, 0);
	fd = counter_open(_metadata, &attr, child, -1, -1);
	burner_go(_metadata, &b);
	burner_wait_done(_metadata, &b);

	ASSERT_EQ(0, prctl(PR_TASK_PMC_DISABLE, 0, 0, 0, 0));
	v1 = counter_value(_metadata, fd);
	usleep(100 * 1000);
	v2 = counter_value(_metadata, fd);
	EXPECT_LT(v1, v2) TH_LOG("the busy child's counter stopped");
	ASSERT_EQ(0, prctl(PR_TASK_PMC_ENABLE, 0, 0, 0, 0));

	kill_child(child);
	close(fd);
}

/*
 * A child burns, then calls prctl(PR_TASK_PMC_DISABLE) and burns on; as
 * nobody if @drop. Its task-clock, opened here, as the prctl() left it:
 * @v1 just after, and @v2 100 ms later.
 */
static void prctl_in_counted_child(struct __test_metadata *_metadata,
				   bool drop, __u64 *v1, __u64 *v2)
{
	struct burner b = {
		.burn_ns = SHORT_BURN_NS,
		.disable_self = true,
		.forever = true,
		.drop = drop,
	};
	struct pmc_attr attr;
	pid_t child;
	int fd;

	child = burner_spawn(_metadata, &b);
	pmc_sw_attr(&attr, PMC_SW_TASK_CLOCK, 0);
	fd = counter_open(_metadata, &attr, child, -1, -1);
	burner_go(_metadata, &b);
	burner_wait_done(_metadata, &b);

	*v1 = counter_value(_metadata, fd);
	EXPECT_LE(SHORT_BURN_NS * 9 / 10, *v1);	/* counted while it burnt */
	usleep(100 * 1000);
	*v2 = counter_value(_metadata, fd);

	kill_child(child);
	close(fd);
}

/* A task's prctl() stops counters its own user put on it. */
TEST_F(pmc, prctl_by_the_counted_task)
{
	__u64 v1, v2;

	prctl_in_counted_child(_metadata, false, &v1, &v2);
	EXPECT_EQ(v1, v2);
}

/*
 * ...but not those another user attached: nobody's prctl() leaves root's
 * monitor counting (a watched task must not blind its watcher).
 */
TEST_F(pmc, prctl_spares_another_users_monitor)
{
	__u64 v1, v2;

	if (!self->root)
		SKIP(return, "needs root: a monitor of another user's task");
	prctl_in_counted_child(_metadata, true, &v1, &v2);
	EXPECT_LT(v1, v2) TH_LOG("the child's prctl() stopped root's counter");
}

/*
 * Groups: PMC_FORMAT_GROUP reads the leader and its members in creation
 * order; the leader's enable state covers the group, a member's only
 * itself; a closed leader leaves its members counting alone.
 */

TEST_F(pmc, group_read_layout)
{
	__u32 leader_format = PMC_FORMAT_GROUP | ALL_TIMES;
	int leader, faults, major;
	__u64 buf[16], *values;

	leader = sw_open(_metadata, PMC_SW_TASK_CLOCK, -1, leader_format);
	faults = sw_open(_metadata, PMC_SW_PAGE_FAULTS, leader, 0);
	major = sw_open(_metadata, PMC_SW_PAGE_FAULTS_MAJ, leader,
			PMC_FORMAT_GROUP);
	burn_cpu(SHORT_BURN_NS);
	fault_pages(_metadata, NR_PAGES);

	/* nr, time_enabled, time_running, values[3] */
	ASSERT_EQ(3, group_read(_metadata, leader, leader_format, buf, 16));
	values = &buf[3];
	EXPECT_LE(SHORT_BURN_NS * 9 / 10, buf[1]);
	EXPECT_LE(buf[2], buf[1]);
	EXPECT_LE(SHORT_BURN_NS * 9 / 10, values[0]);	/* task-clock */
	EXPECT_LE(NR_PAGES, values[1]);			/* page-faults */
	EXPECT_GT(SHORT_BURN_NS / 2, values[1]);
	EXPECT_EQ(0, values[2]);			/* major faults */

	/* a member reads its own value without PMC_FORMAT_GROUP... */
	EXPECT_LE(values[1], counter_value(_metadata, faults));

	/* ...and the whole group, leader first, with it */
	ASSERT_EQ(3, group_read(_metadata, major, PMC_FORMAT_GROUP, buf, 16));
	EXPECT_LE(values[0], buf[1]);
	EXPECT_LE(values[1], buf[2]);
	EXPECT_GT(SHORT_BURN_NS / 2, buf[2]);
	EXPECT_EQ(0, buf[3]);

	close(major);
	close(faults);
	close(leader);
}

TEST_F(pmc, group_leader_disable_stops_members)
{
	__u64 l1, l2, l3, m1, m2, m3;
	int leader, member;

	leader = sw_open(_metadata, PMC_SW_TASK_CLOCK, -1, 0);
	member = sw_open(_metadata, PMC_SW_PAGE_FAULTS, leader, 0);
	fault_pages(_metadata, NR_PAGES);
	EXPECT_LE(NR_PAGES, counter_value(_metadata, member));

	counter_ioctl(_metadata, leader, PMC_IOC_DISABLE);
	l1 = counter_value(_metadata, leader);
	m1 = counter_value(_metadata, member);
	burn_cpu(SHORT_BURN_NS);
	fault_pages(_metadata, NR_PAGES);
	l2 = counter_value(_metadata, leader);
	m2 = counter_value(_metadata, member);
	EXPECT_EQ(l1, l2);
	EXPECT_EQ(m1, m2);

	counter_ioctl(_metadata, leader, PMC_IOC_ENABLE);
	burn_cpu(SHORT_BURN_NS);
	fault_pages(_metadata, NR_PAGES);
	l3 = counter_value(_metadata, leader);
	m3 = counter_value(_metadata, member);
	EXPECT_LE(l2 + SHORT_BURN_NS * 9 / 10, l3);
	EXPECT_LE(m2 + NR_PAGES, m3);

	close(member);
	close(leader);
}

TEST_F(pmc, group_member_disable_is_local)
{
	__u64 l1, l2, a1, a2, a3, b1, b2;
	int leader, a, b;

	leader = sw_open(_metadata, PMC_SW_TASK_CLOCK, -1, 0);
	a = sw_open(_metadata, PMC_SW_PAGE_FAULTS, leader, 0);
	b = sw_open(_metadata, PMC_SW_PAGE_FAULTS_MIN, leader, 0);

	counter_ioctl(_metadata, a, PMC_IOC_DISABLE);
	l1 = counter_value(_metadata, leader);
	a1 = counter_value(_metadata, a);
	b1 = counter_value(_metadata, b);
	burn_cpu(SHORT_BURN_NS);
	fault_pages(_metadata, NR_PAGES);
	l2 = counter_value(_metadata, leader);
	a2 = counter_value(_metadata, a);
	b2 = counter_value(_metadata, b);
	EXPECT_EQ(a1, a2);
	EXPECT_LE(l1 + SHORT_BURN_NS * 9 / 10, l2);
	EXPECT_LE(b1 + NR_PAGES, b2);

	counter_ioctl(_metadata, a, PMC_IOC_ENABLE);
	fault_pages(_metadata, NR_PAGES);
	a3 = counter_value(_metadata, a);
	EXPECT_LE(a2 + NR_PAGES, a3);

	close(b);
	close(a);
	close(leader);
}

TEST_F(pmc, group_close_leader)
{
	int leader, member, joined;
	__u64 buf[8], before;

	leader = sw_open(_metadata, PMC_SW_TASK_CLOCK, -1, 0);
	member = sw_open(_metadata, PMC_SW_PAGE_FAULTS, leader,
			 PMC_FORMAT_GROUP);
	ASSERT_EQ(2, group_read(_metadata, member, PMC_FORMAT_GROUP, buf, 8));

	/* the member is now a group of one and still counts */
	close(leader);
	ASSERT_EQ(1, group_read(_metadata, member, PMC_FORMAT_GROUP, buf, 8));
	before = buf[1];
	fault_pages(_metadata, NR_PAGES);
	ASSERT_EQ(1, group_read(_metadata, member, PMC_FORMAT_GROUP, buf, 8));
	EXPECT_LE(before + NR_PAGES, buf[1]);

	/* ...and leads its group: a new counter can join it */
	joined = sw_open(_metadata, PMC_SW_PAGE_FAULTS_MIN, member, 0);
	EXPECT_EQ(2, group_read(_metadata, member, PMC_FORMAT_GROUP, buf, 8));

	close(joined);
	close(member);
}

/*
 * Inherit and groups: a child's exit folds its copy of the group into
 * the group as one step, so a group read never sees it in some members
 * but not yet in others. All members count the same faults of the same
 * tasks, the reader's own included, so every read has them equal,
 * however many children exit meanwhile. Eight members: seven gaps in
 * which a fold done member by member could be seen.
 */
#define FOLD_CHILDREN	300
#define FOLD_INFLIGHT	16	/* alive at once: RLIMIT_NPROC may be low */
#define FOLD_PAGES	4
#define FOLD_MEMBERS	8
#define FOLD_NS		(1500 * NSEC_PER_MSEC)	/* forking, at most */

/* Reap one child. Return: 0 if it exited with 0. */
static int fold_reap(void)
{
	int status;

	if (wait(&status) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Fork short-lived children that fault and exit; @arg: how many forked. */
static int fold_forker(void *arg)
{
	__u64 deadline = monotonic_ns() + FOLD_NS;
	int *forked = arg, n;
	pid_t pid;
	char *p;

	for (n = 0; n < FOLD_CHILDREN && monotonic_ns() < deadline; n++) {
		if (n >= FOLD_INFLIGHT)
			CHILD_CHECK(fold_reap() == 0, "a child failed");
		pid = fork();
		if (pid == 0) {
			p = map_fresh_pages(FOLD_PAGES);
			if (!p)
				_exit(1);
			touch_pages(p, FOLD_PAGES);
			_exit(0);
		}
		CHILD_CHECK(pid > 0, "fork: %s", strerror(errno));
	}
	*forked = n;
	for (n = n < FOLD_INFLIGHT ? n : FOLD_INFLIGHT; n > 0; n--)
		CHILD_CHECK(fold_reap() == 0, "a child failed");
	return 0;
}

TEST_F(pmc, inherit_group_read_is_atomic)
{
	unsigned long reads = 0, torn = 0;
	__u64 buf[1 + FOLD_MEMBERS], first[2] = { };
	int fds[FOLD_MEMBERS], status = 0, *forked, i, odd;
	struct pmc_attr attr;
	pid_t pid, done = 0;
	ssize_t n;

	/* shared with the forker, and faulted in before counting starts */
	forked = mmap(NULL, page_size(), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(forked != MAP_FAILED) TH_LOG("mmap: %s", strerror(errno));
	*forked = 0;

	pmc_sw_attr(&attr, PMC_SW_PAGE_FAULTS, PMC_FORMAT_GROUP);
	attr.inherit = 1;
	attr.disabled = 1;
	fds[0] = counter_open(_metadata, &attr, 0, -1, -1);
	pmc_sw_attr(&attr, PMC_SW_PAGE_FAULTS, 0);
	attr.inherit = 1;
	for (i = 1; i < FOLD_MEMBERS; i++)
		fds[i] = counter_open(_metadata, &attr, 0, -1, fds[0]);
	counter_ioctl(_metadata, fds[0], PMC_IOC_ENABLE);

	pid = spawn(_metadata, fold_forker, forked);
	/* buf is faulted in already: these reads take no fault in between */
	while (!done) {
		n = read(fds[0], buf, sizeof(buf));
		if (n != sizeof(buf) || buf[0] != FOLD_MEMBERS)
			break;
		reads++;
		for (odd = 2; odd <= FOLD_MEMBERS && buf[odd] == buf[1]; odd++)
			;
		if (odd <= FOLD_MEMBERS && !torn++) {
			first[0] = buf[1];
			first[1] = buf[odd];
		}
		if (!(reads % 16))
			done = waitpid(pid, &status, WNOHANG);
	}
	if (!done)
		kill(pid, SIGKILL);
	ASSERT_EQ(sizeof(buf), n) {
		TH_LOG("group read: %s", n < 0 ? strerror(errno) : "wrong size");
	}
	ASSERT_EQ(FOLD_MEMBERS, buf[0]);
	ASSERT_EQ(pid, done) TH_LOG("waitpid: %s", strerror(errno));
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status)) {
		TH_LOG("forker ended with status %#x", status);
	}

	/* every child, and the forker, was added before wait() returned */
	ASSERT_EQ(FOLD_MEMBERS, group_read(_metadata, fds[0], PMC_FORMAT_GROUP,
					   buf, ARRAY_SIZE(buf)));
	TH_LOG("%lu group reads over %d children: %llu faults", reads,
	       *forked, (unsigned long long)buf[1]);
	EXPECT_EQ(0UL, torn) {
		TH_LOG("%lu of %lu reads torn; first: leader %llu, a member %llu",
		       torn, reads, (unsigned long long)first[0],
		       (unsigned long long)first[1]);
	}
	EXPECT_LT(0, *forked);
	for (i = 2; i <= FOLD_MEMBERS; i++)
		EXPECT_EQ(buf[1], buf[i]);
	EXPECT_LE((__u64)*forked * FOLD_PAGES, buf[1]);
	EXPECT_LT(0, buf[1]);

	close_group(fds, FOLD_MEMBERS);
	munmap(forked, page_size());
}

/*
 * Callchains of a 32-bit task on a 64-bit kernel: its frames are pairs
 * of 32-bit words. Each fresh page touched three calls deep is a page
 * fault sample whose user callchain must stay in this (static) binary's
 * text and show the callers.
 */
#define CHAIN_PAGES	32

#ifndef noinline
#define noinline	__attribute__((noinline))
#endif

extern char __executable_start[], etext[];

static char *chain_pages;

static bool in_text(__u64 addr)
{
	return addr >= (uintptr_t)__executable_start &&
	       addr < (uintptr_t)etext;
}

static noinline void chain_inner(void)
{
	touch_pages(chain_pages, CHAIN_PAGES);
	asm volatile("" ::: "memory");
}

/* The empty asm after each call keeps it from being a tail call. */
static noinline void chain_middle(void)
{
	chain_inner();
	asm volatile("" ::: "memory");
}

static noinline void chain_outer(void)
{
	chain_middle();
	asm volatile("" ::: "memory");
}

/*
 * Call @fn with ebp 0, as _start does, so that the walk ends at our
 * frames: the static libc's frames above them have no frame pointers,
 * and their ebp could point anywhere.
 */
static noinline void call_as_root(void (*fn)(void))
{
#ifdef __i386__
	/* esi keeps our stack pointer; the call is 16-byte aligned */
	asm volatile("push %%ebp\n\t"
		     "mov %%esp, %%esi\n\t"
		     "and $-16, %%esp\n\t"
		     "xor %%ebp, %%ebp\n\t"
		     "call *%0\n\t"
		     "mov %%esi, %%esp\n\t"
		     "pop %%ebp"
		     : : "r" (fn) : "eax", "ecx", "edx", "esi", "memory", "cc");
#else
	fn();
#endif
}

/*
 * Touch @pages three calls deep between ioctl(@on) and a DISABLE. Run
 * with @on DISABLE first, so that every code and stack page it uses is
 * in before it runs sampled: faults elsewhere would have callchains
 * through libc.
 */
static noinline int chain_run(int fd, unsigned long on, char *pages)
{
	int ret;

	chain_pages = pages;
	ret = ioctl(fd, on, 0);
	call_as_root(chain_outer);
	return ioctl(fd, PMC_IOC_DISABLE, 0) | ret;
}

TEST_F(pmc, compat_user_callchain)
{
	const __u32 type = PMC_RECORD_IP | PMC_RECORD_CALLCHAIN;
	unsigned int samples = 0, deep = 0, outside = 0;
	__u64 pos = 0, head, nr, user, bad = 0;
	char err[160], *warm, *pages;
	struct pmc_attr attr;
	struct pmc_ring ring;
	const __u64 *ips;
	int fd, ret, i;

#ifndef __i386__
	SKIP(return, "32-bit frames: pmc_test_32 runs this");
#endif
	pmc_sw_attr(&attr, PMC_SW_PAGE_FAULTS, 0);
	attr.irq_period = 1;
	attr.record_type = type;
	attr.disabled = 1;
	fd = counter_open(_metadata, &attr, 0, -1, -1);
	ring_map(_metadata, &ring, fd, 16, true);
	warm = fresh_pages(_metadata, CHAIN_PAGES);
	pages = fresh_pages(_metadata, CHAIN_PAGES);

	ASSERT_EQ(0, chain_run(fd, PMC_IOC_DISABLE, warm));
	ASSERT_EQ(0, chain_run(fd, PMC_IOC_ENABLE, pages))
		TH_LOG("ioctl: %s", strerror(errno));

	head = ring_head(&ring);
	while ((ret = ring_next(&ring, &pos, head, err, sizeof(err))) > 0) {
		if (!is_sample())
			continue;
		/* header, ip, u16 nr, hv, kernel, user, ips */
		ASSERT_LE(24, rec.h.size);
		nr = rec_u16(16);
		user = rec_u16(22);
		ASSERT_EQ(24 + nr * 8, rec.h.size);
		ASSERT_EQ(nr, user) TH_LOG("callchain nr %llu user %llu",
					   (unsigned long long)nr,
					   (unsigned long long)user);
		ips = &rec.w[3];
		samples++;
		if (user >= 2)
			deep++;
		for (i = 0; i < (int)user; i++) {
			if (in_text(ips[i]))
				continue;
			if (!outside++)
				bad = ips[i];
			if (outside <= 3)
				TH_LOG("sample %u: entry %d of %llu: %#llx",
				       samples, i, (unsigned long long)user,
				       (unsigned long long)ips[i]);
		}
	}
	ASSERT_EQ(0, ret) TH_LOG("%s", err);

	TH_LOG("%u samples, %u with 2 or more user entries; text [%p, %p)",
	       samples, deep, __executable_start, etext);
	EXPECT_LT(0U, samples);
	EXPECT_EQ(0U, outside) TH_LOG("first outside the text: %#llx",
				      (unsigned long long)bad);
	EXPECT_LT(0U, deep);

	ring_unmap(&ring);
	munmap(warm, CHAIN_PAGES * page_size());
	munmap(pages, CHAIN_PAGES * page_size());
	close(fd);
}

/*
 * Lifetime: a counter on a child outlives it and keeps its final count
 * and times once the child is gone.
 */
TEST_F(pmc, counter_outlives_task)
{
	struct burner b = { .burn_ns = 100 * NSEC_PER_MSEC };
	struct pmc_reading r1, r2;
	struct pmc_attr attr;
	struct rusage usage;
	__u64 child_cpu;
	pid_t child;
	int fd;

	child = burner_spawn(_metadata, &b);
	pmc_sw_attr(&attr, PMC_SW_TASK_CLOCK, ALL_TIMES);
	fd = counter_open(_metadata, &attr, child, -1, -1);
	burner_go(_metadata, &b);
	ASSERT_EQ(0, reap(_metadata, child, &usage));
	child_cpu = (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) *
		    NSEC_PER_SEC +
		    (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) *
		    NSEC_PER_USEC;

	r1 = counter_read(_metadata, fd, ALL_TIMES);
	EXPECT_LE(b.burn_ns * 9 / 10, r1.value);
	EXPECT_TRUE(r1.value <= child_cpu + child_cpu / 10 + 2 * NSEC_PER_MSEC) {
		TH_LOG("counted %llu ns, child used %llu ns of CPU",
		       (unsigned long long)r1.value,
		       (unsigned long long)child_cpu);
	}
	EXPECT_LT(0, r1.running);
	EXPECT_LE(r1.running, r1.enabled);

	/* the task is gone: nothing moves any more */
	usleep(50 * 1000);
	r2 = counter_read(_metadata, fd, ALL_TIMES);
	EXPECT_EQ(r1.value, r2.value);
	EXPECT_EQ(r1.enabled, r2.enabled);
	EXPECT_EQ(r1.running, r2.running);
	close(fd);
}

/* A per-CPU cpu-clock counts wall time, idle or not. */
TEST_F(pmc, per_cpu_clock)
{
	__u64 v0, v1, t0, t1, dv, dt;
	struct pmc_attr attr;
	int cpu, fd;

	if (!self->root)
		SKIP(return, "per-CPU counters need CAP_PERFMON at pmc_paranoid 2");

	ASSERT_EQ(1, allowed_cpus(&cpu, 1));
	pmc_sw_attr(&attr, PMC_SW_CPU_CLOCK, 0);
	fd = counter_open(_metadata, &attr, -1, cpu, -1);
	v0 = counter_value(_metadata, fd);
	t0 = monotonic_ns();
	usleep(100 * 1000);
	t1 = monotonic_ns();
	v1 = counter_value(_metadata, fd);

	dv = v1 - v0;
	dt = t1 - t0;
	EXPECT_TRUE(dv >= dt / 2 && dv <= dt + dt / 2) {
		TH_LOG("CPU %d clock advanced %llu ns in %llu ns of wall time",
		       cpu, (unsigned long long)dv, (unsigned long long)dt);
	}
	close(fd);
}

/*
 * Fuzz: thousands of opens with valid and invalid arguments, misuse of
 * the fds, and closes. Each open carries at most one fault and must fail
 * with exactly that fault's errno; each read and ioctl must give what
 * its arguments call for. The fuzz runs in a child, so that its task
 * context goes too, and afterwards the pmc slab caches must be back to
 * where they started.
 */

#define FUZZ_ITERATIONS	3000
#define FUZZ_SLOTS	32
#define FUZZ_MAX_CPUS	64

/* Returned by fuzz_inject() instead of an errno. */
#define FUZZ_SKIP	(-1)	/* the fault does not apply just now */
#define FUZZ_OPTIONAL	(-2)	/* a feature that may be EOPNOTSUPP yet */

struct fuzz_counter {
	int fd;			/* -1: free slot */
	pid_t target;		/* the task counted, -1 for per-CPU */
	int cpu;
	int leader;		/* slot of the group leader, own slot if leader */
	__u32 read_format;
	bool pinned;		/* pinned leader: its group may read 0 */
	bool sampling;
	bool optional;		/* uses an optional feature: joined by none */
};

struct fuzz {
	unsigned long long seed;
	__u64 rng;
	unsigned int iteration;
	bool root;
	bool pid1_foreign;	/* pid 1 belongs to another user */
	int nr_cpu_ids;
	int cpus[FUZZ_MAX_CPUS];
	int nr_cpus;
	pid_t self;
	pid_t helper;		/* a live child to count */
	pid_t gone;		/* a reaped child: ESRCH */
	int pipe_fds[2];	/* fds that are not counters */
	char *hole;		/* an unmapped page after a mapped one */
	struct fuzz_counter slot[FUZZ_SLOTS];
};

/* One pmc_open() call under construction. */
struct fuzz_open {
	struct pmc_attr attr;
	void *attr_ptr;
	pid_t pid;
	pid_t target;		/* pid, with 0 resolved */
	int cpu;
	int leader;		/* slot joined, -1 for a new group */
	int group_fd;
	unsigned long flags;
};

enum fuzz_fault {
	FAULT_NONE,
	FAULT_OPTIONAL,
	FAULT_RESERVED_1,
	FAULT_RESERVED_2,
	FAULT_RESERVED_3,
	FAULT_RESERVED_4,
	FAULT_SIZE,
	FAULT_PERIOD_RAND,
	FAULT_RECORD_TYPE,
	FAULT_READ_FORMAT,
	FAULT_EXTRA_CONFIG,
	FAULT_FLAGS,
	FAULT_PID_NEGATIVE,
	FAULT_PID_CPU_ANY,
	FAULT_CPU_NEGATIVE,
	FAULT_CPU_RANGE,
	FAULT_TYPE,
	FAULT_SW_ID,
	FAULT_HARDWARE,
	FAULT_RAW,
	FAULT_TRACEPOINT,
	FAULT_GROUP_CLOSED,
	FAULT_GROUP_NOT_PMC,
	FAULT_GROUP_MEMBER,
	FAULT_GROUP_MISMATCH,
	FAULT_GROUP_PINNED,
	FAULT_ATTR_POINTER,
	FAULT_NO_SUCH_PID,
	FAULT_SAMPLING_INHERIT,
	FAULT_KERNEL_MODE,
	FAULT_PER_CPU,
	FAULT_OTHER_USER,
	NR_FAULTS
};

static const char *const fault_names[NR_FAULTS] = {
	[FAULT_NONE]		 = "valid",
	[FAULT_OPTIONAL]	 = "optional feature",
	[FAULT_RESERVED_1]	 = "__reserved_1",
	[FAULT_RESERVED_2]	 = "regs_user without its record bit",
	[FAULT_RESERVED_3]	 = "__reserved_3",
	[FAULT_RESERVED_4]	 = "stack_user without its record bit",
	[FAULT_SIZE]		 = "attr size too small or above a page",
	[FAULT_PERIOD_RAND]	 = "period_rand",
	[FAULT_RECORD_TYPE]	 = "unknown record_type bit",
	[FAULT_READ_FORMAT]	 = "unknown read_format bit",
	[FAULT_EXTRA_CONFIG]	 = "extra_config_len",
	[FAULT_FLAGS]		 = "unknown flag",
	[FAULT_PID_NEGATIVE]	 = "pid < -1",
	[FAULT_PID_CPU_ANY]	 = "pid -1 and cpu -1",
	[FAULT_CPU_NEGATIVE]	 = "cpu < -1",
	[FAULT_CPU_RANGE]	 = "cpu >= nr_cpu_ids",
	[FAULT_TYPE]		 = "unknown type",
	[FAULT_SW_ID]		 = "unknown software event",
	[FAULT_HARDWARE]	 = "hardware event",
	[FAULT_RAW]		 = "raw event",
	[FAULT_TRACEPOINT]	 = "tracepoint",
	[FAULT_GROUP_CLOSED]	 = "group_fd closed",
	[FAULT_GROUP_NOT_PMC]	 = "group_fd not a counter",
	[FAULT_GROUP_MEMBER]	 = "group_fd a member",
	[FAULT_GROUP_MISMATCH]	 = "group_fd on another task or CPU",
	[FAULT_GROUP_PINNED]	 = "pinned or exclusive member",
	[FAULT_ATTR_POINTER]	 = "bad attr pointer",
	[FAULT_NO_SUCH_PID]	 = "no such pid",
	[FAULT_SAMPLING_INHERIT] = "sampling with inherit",
	[FAULT_KERNEL_MODE]	 = "kernel mode, unprivileged",
	[FAULT_PER_CPU]		 = "per-CPU, unprivileged",
	[FAULT_OTHER_USER]	 = "another user's task",
};

#define FUZZ_FAIL(fz, fmt, ...) do {					\
	fprintf(stderr, "# fuzz iteration %u (PMC_FUZZ_SEED=%llu): " fmt "\n", \
		(fz)->iteration, (fz)->seed, ##__VA_ARGS__);		\
	return 1;							\
} while (0)

/* xorshift64: cheap, and repeatable from the logged seed */
static __u64 fuzz_rand(struct fuzz *fz)
{
	fz->rng ^= fz->rng << 13;
	fz->rng ^= fz->rng >> 7;
	fz->rng ^= fz->rng << 17;
	return fz->rng;
}

static unsigned int fuzz_below(struct fuzz *fz, unsigned int n)
{
	return fuzz_rand(fz) % n;
}

static bool fuzz_chance(struct fuzz *fz, unsigned int percent)
{
	return fuzz_below(fz, 100) < percent;
}

static int fuzz_random_cpu(struct fuzz *fz)
{
	return fz->cpus[fuzz_below(fz, fz->nr_cpus)];
}

static bool target_alive(struct fuzz *fz, int i)
{
	pid_t target = fz->slot[i].target;

	return target == fz->self || target == fz->helper || target == -1;
}

static bool slot_is_joinable(struct fuzz *fz, int i)
{
	return fz->slot[i].leader == i && !fz->slot[i].optional &&
	       target_alive(fz, i);
}

static bool slot_is_member(struct fuzz *fz, int i)
{
	return fz->slot[i].leader != i && target_alive(fz, i);
}

/* A random open slot that passes @ok (NULL: any), or -1. */
static int fuzz_pick(struct fuzz *fz, bool (*ok)(struct fuzz *fz, int i))
{
	int i, seen = 0, pick = -1;

	for (i = 0; i < FUZZ_SLOTS; i++) {
		if (fz->slot[i].fd < 0 || (ok && !ok(fz, i)))
			continue;
		if (fuzz_below(fz, ++seen) == 0)
			pick = i;
	}
	return pick;
}

/* Counters read together with slot @i under PMC_FORMAT_GROUP. */
static unsigned int fuzz_group_size(struct fuzz *fz, int i)
{
	int leader = fz->slot[i].leader, j;
	unsigned int nr = 0;

	for (j = 0; j < FUZZ_SLOTS; j++)
		if (fz->slot[j].fd >= 0 && fz->slot[j].leader == leader)
			nr++;
	return nr;
}

/* Close slot @i; as a leader, its members become groups of their own. */
static void fuzz_close(struct fuzz *fz, int i)
{
	int j;

	close(fz->slot[i].fd);
	fz->slot[i].fd = -1;
	for (j = 0; j < FUZZ_SLOTS; j++) {
		if (j != i && fz->slot[j].fd >= 0 && fz->slot[j].leader == i) {
			fz->slot[j].leader = j;
			fz->slot[j].pinned = false;
		}
	}
}

static void fuzz_set_target(struct fuzz *fz, struct fuzz_open *op,
			    pid_t target, int cpu)
{
	op->target = target;
	op->pid = target == fz->self && fuzz_chance(fz, 50) ? 0 : target;
	op->cpu = cpu;
}

static void fuzz_no_group(struct fuzz_open *op)
{
	op->leader = -1;
	op->group_fd = -1;
}

static void fuzz_join(struct fuzz *fz, struct fuzz_open *op, int leader)
{
	op->leader = leader;
	op->group_fd = fz->slot[leader].fd;
	op->attr.pinned = 0;
	op->attr.exclusive = 0;
	fuzz_set_target(fz, op, fz->slot[leader].target, fz->slot[leader].cpu);
}

/* Arguments that must open: a software counter, alone or joining a group. */
static void fuzz_valid_open(struct fuzz *fz, struct fuzz_open *op)
{
	struct pmc_attr *a = &op->attr;
	int leader = fuzz_chance(fz, 40) ? fuzz_pick(fz, slot_is_joinable) : -1;
	pid_t target;

	pmc_sw_attr(a, fuzz_below(fz, PMC_SW_MAX),
		    fuzz_below(fz, PMC_FORMAT_ALL + 1));
	a->disabled = fuzz_chance(fz, 25);
	a->exclude_user = fuzz_chance(fz, 20);
	a->exclude_kernel = fz->root ? fuzz_chance(fz, 50) : 1;
	a->exclude_hv = fuzz_chance(fz, 20);
	a->exclude_idle = fuzz_chance(fz, 20);
	op->attr_ptr = a;
	op->flags = fuzz_chance(fz, 50) ? PMC_FLAG_FD_CLOEXEC : 0;

	if (leader >= 0) {
		fuzz_join(fz, op, leader);
		return;
	}
	fuzz_no_group(op);
	a->pinned = fuzz_chance(fz, 10);
	a->exclusive = fuzz_chance(fz, 5);
	switch (fuzz_below(fz, fz->root ? 3 : 2)) {
	case 0:
		target = fz->self;
		break;
	case 1:
		target = fz->helper;
		break;
	default:
		fuzz_set_target(fz, op, -1, fuzz_random_cpu(fz));
		return;
	}
	fuzz_set_target(fz, op, target,
			fuzz_chance(fz, 25) ? fuzz_random_cpu(fz) : -1);
}

/*
 * fuzz_inject() - put one @fault into valid arguments
 *
 * Return: the errno the open must fail with, 0 for success, FUZZ_OPTIONAL
 * for success or EOPNOTSUPP, or FUZZ_SKIP.
 */
static int fuzz_inject(struct fuzz *fz, struct fuzz_open *op,
		       enum fuzz_fault fault)
{
	struct pmc_attr *a = &op->attr;
	int i, fd;

	switch (fault) {
	case FAULT_NONE:
		return 0;
	case FAULT_OPTIONAL:
		fuzz_no_group(op);
		fuzz_set_target(fz, op, fz->self, -1);
		switch (fuzz_below(fz, 3)) {
		case 0:
			a->inherit = 1;
			break;
		case 1:
			a->irq_period = (1 + fuzz_below(fz, 100)) * NSEC_PER_MSEC;
			a->record_type = fuzz_rand(fz) & PMC_RECORD_ALL;
			if (a->record_type & PMC_RECORD_REGS_USER)
				a->regs_user = TEST_REGS_MASK;
			if (a->record_type & PMC_RECORD_STACK_USER)
				a->stack_user = 8 * fuzz_below(fz, 1024);
			a->wakeup_events = fuzz_below(fz, 4);
			break;
		default:
			a->mmap = fuzz_chance(fz, 50);
			a->munmap = fuzz_chance(fz, 50);
			a->comm = 1;
			break;
		}
		return FUZZ_OPTIONAL;
	case FAULT_RESERVED_1:
		a->__reserved_1 = fuzz_rand(fz) | 1;
		return EINVAL;
	case FAULT_RESERVED_2:
		a->record_type &= ~PMC_RECORD_REGS_USER;
		a->regs_user = fuzz_rand(fz) | 1;
		return EINVAL;
	case FAULT_RESERVED_3:
		a->__reserved_3 = fuzz_rand(fz) | 1;
		return EINVAL;
	case FAULT_RESERVED_4:
		a->record_type &= ~PMC_RECORD_STACK_USER;
		a->stack_user = fuzz_rand(fz) | 1;
		return EINVAL;
	case FAULT_SIZE:
		/* never a size that reads past the struct: no false E2BIG */
		if (fuzz_chance(fz, 50))
			a->size = 1 + fuzz_rand(fz) % (PMC_ATTR_SIZE_VER0 - 1);
		else
			a->size = page_size() + 1 +
				  fuzz_rand(fz) % (UINT32_MAX - page_size());
		return E2BIG;
	case FAULT_PERIOD_RAND:
		/* above PMC_PERIOD_RAND_MAX, or with no period to draw */
		if (fuzz_chance(fz, 50)) {
			a->period_rand = PMC_PERIOD_RAND_MAX + 1 +
					 fuzz_rand(fz) % (127 - PMC_PERIOD_RAND_MAX);
		} else {
			a->irq_period = 0;
			a->period_rand = 1 + fuzz_rand(fz) % PMC_PERIOD_RAND_MAX;
		}
		return EINVAL;
	case FAULT_RECORD_TYPE:
		a->record_type |= 1U << (9 + fuzz_below(fz, 23));
		return EINVAL;
	case FAULT_READ_FORMAT:
		a->read_format |= 1U << (3 + fuzz_below(fz, 29));
		return EINVAL;
	case FAULT_EXTRA_CONFIG:
		a->extra_config_len = fuzz_rand(fz) | 1;
		return EINVAL;
	case FAULT_FLAGS:
		op->flags |= 2UL << fuzz_below(fz, 8 * sizeof(long) - 1);
		return EINVAL;
	case FAULT_PID_NEGATIVE:
		op->pid = -2 - (pid_t)fuzz_below(fz, INT_MAX - 1);
		return ESRCH;
	case FAULT_PID_CPU_ANY:
		op->pid = -1;
		op->cpu = -1;
		return EINVAL;
	case FAULT_CPU_NEGATIVE:
		op->cpu = -2 - (int)fuzz_below(fz, INT_MAX - 1);
		return EINVAL;
	case FAULT_CPU_RANGE:
		op->cpu = fz->nr_cpu_ids +
			  (int)fuzz_below(fz, INT_MAX - fz->nr_cpu_ids);
		return EINVAL;
	case FAULT_TYPE:
		fuzz_no_group(op);
		a->config = PMC_CONFIG(3 + fuzz_below(fz, 125), fuzz_rand(fz));
		return ENOENT;
	case FAULT_SW_ID:
		fuzz_no_group(op);
		a->config = PMC_CONFIG(PMC_TYPE_SOFTWARE, PMC_SW_MAX +
			fuzz_rand(fz) % (PMC_CONFIG_ID_MASK - PMC_SW_MAX + 1));
		return ENOENT;
	case FAULT_HARDWARE:
		/* only without a PMU: perf's would count it */
		if (perf_has_hw_pmu())
			return FUZZ_SKIP;
		fuzz_no_group(op);
		a->config = PMC_CONFIG(PMC_TYPE_HARDWARE,
				       fuzz_below(fz, PMC_HW_MAX));
		return ENODEV;
	case FAULT_RAW:
		if (perf_has_hw_pmu())
			return FUZZ_SKIP;
		fuzz_no_group(op);
		a->config = PMC_CONFIG_RAW | (fuzz_rand(fz) & 0xffff);
		return ENODEV;
	case FAULT_TRACEPOINT:
		fuzz_no_group(op);
		a->config = PMC_CONFIG(PMC_TYPE_TRACEPOINT, fuzz_rand(fz));
		return EOPNOTSUPP;
	case FAULT_GROUP_CLOSED:
		fd = dup(fz->pipe_fds[0]);
		close(fd);
		fuzz_no_group(op);
		op->group_fd = fd;
		return EBADF;
	case FAULT_GROUP_NOT_PMC:
		fuzz_no_group(op);
		op->group_fd = fz->pipe_fds[fuzz_below(fz, 2)];
		return EINVAL;
	case FAULT_GROUP_MEMBER:
		i = fuzz_pick(fz, slot_is_member);
		if (i < 0)
			return FUZZ_SKIP;
		fuzz_join(fz, op, i);
		return EINVAL;
	case FAULT_GROUP_MISMATCH:
		i = fuzz_pick(fz, slot_is_joinable);
		if (i < 0)
			return FUZZ_SKIP;
		fuzz_join(fz, op, i);
		if (op->target != -1 && fuzz_chance(fz, 50))
			op->cpu = op->cpu == -1 ? fuzz_random_cpu(fz) : -1;
		else
			fuzz_set_target(fz, op, op->target == fz->self ?
					fz->helper : fz->self, op->cpu);
		return EINVAL;
	case FAULT_GROUP_PINNED:
		i = fuzz_pick(fz, slot_is_joinable);
		if (i < 0)
			return FUZZ_SKIP;
		fuzz_join(fz, op, i);
		if (fuzz_chance(fz, 50))
			a->pinned = 1;
		else
			a->exclusive = 1;
		return EINVAL;
	case FAULT_ATTR_POINTER:
		switch (fuzz_below(fz, 4)) {
		case 0:
			op->attr_ptr = NULL;
			break;
		case 1:
			op->attr_ptr = fz->hole;
			break;
		case 2:	/* starts mapped, ends in the hole */
			op->attr_ptr = fz->hole - 8 * (1 + fuzz_below(fz, 6));
			break;
		default:	/* kernel, non-canonical or past TASK_SIZE */
			op->attr_ptr = (void *)(uintptr_t)(sizeof(long) == 8 ?
				0xffff800000000000ULL | fuzz_rand(fz) :
				0xffffe000UL | (fuzz_rand(fz) & 0xfff));
			break;
		}
		return EFAULT;
	case FAULT_NO_SUCH_PID:
		fuzz_no_group(op);
		fuzz_set_target(fz, op, fz->gone, -1);
		return ESRCH;
	case FAULT_SAMPLING_INHERIT:
		fuzz_no_group(op);
		fuzz_set_target(fz, op, fz->self, -1);
		a->irq_period = (1 + fuzz_below(fz, 100)) * NSEC_PER_MSEC;
		a->inherit = 1;
		return FUZZ_OPTIONAL;	/* supported since sampling landed */
	case FAULT_KERNEL_MODE:
		if (fz->root)
			return FUZZ_SKIP;
		fuzz_no_group(op);
		a->exclude_kernel = 0;
		return EACCES;
	case FAULT_PER_CPU:
		if (fz->root)
			return FUZZ_SKIP;
		fuzz_no_group(op);
		fuzz_set_target(fz, op, -1, fuzz_random_cpu(fz));
		return EACCES;
	case FAULT_OTHER_USER:
		if (fz->root || !fz->pid1_foreign)
			return FUZZ_SKIP;
		fuzz_no_group(op);
		fuzz_set_target(fz, op, 1, -1);
		return EACCES;
	default:
		return FUZZ_SKIP;
	}
}

static const char *fuzz_describe(const struct fuzz_open *op, char *buf,
				 size_t len)
{
	const struct pmc_attr *a = &op->attr;

	snprintf(buf, len,
		 "attr %p: config %#llx irq_period %llu record_type %#x read_format %#x "
		 "disabled %u inherit %u pinned %u exclusive %u "
		 "exclude_user %u exclude_kernel %u; pid %d, cpu %d, group_fd %d, flags %#lx",
		 op->attr_ptr, (unsigned long long)a->config,
		 (unsigned long long)a->irq_period, a->record_type,
		 a->read_format, a->disabled, a->inherit, a->pinned,
		 a->exclusive, a->exclude_user, a->exclude_kernel, op->pid,
		 op->cpu, op->group_fd, op->flags);
	return buf;
}

static int fuzz_open(struct fuzz *fz)
{
	enum fuzz_fault fault = FAULT_NONE;
	struct fuzz_counter *c;
	struct fuzz_open op;
	char desc[512];
	int want, fd, err, i;

	if (fuzz_chance(fz, 60))
		fault = 1 + fuzz_below(fz, NR_FAULTS - 1);
	fuzz_valid_open(fz, &op);
	want = fuzz_inject(fz, &op, fault);
	if (want == FUZZ_SKIP)
		return 0;

	fd = pmc_open(op.attr_ptr, op.pid, op.cpu, op.group_fd, op.flags);
	err = fd < 0 ? errno : 0;
	if (err != want && !(want == FUZZ_OPTIONAL && (!err || err == EOPNOTSUPP))) {
		if (fd >= 0)
			close(fd);
		FUZZ_FAIL(fz, "%s: pmc_open(%s) gave %s, want %s",
			  fault_names[fault], fuzz_describe(&op, desc, sizeof(desc)),
			  strerror(err), want == FUZZ_OPTIONAL ?
			  "success or EOPNOTSUPP" : strerror(want));
	}
	if (fd < 0)
		return 0;

	for (i = 0; i < FUZZ_SLOTS && fz->slot[i].fd >= 0; i++)
		;
	if (i == FUZZ_SLOTS) {
		close(fd);
		return 0;
	}
	c = &fz->slot[i];
	c->fd = fd;
	c->target = op.target;
	c->cpu = op.cpu;
	c->leader = op.leader >= 0 ? op.leader : i;
	c->read_format = op.attr.read_format;
	c->pinned = op.attr.pinned;
	c->sampling = op.attr.irq_period > 0;
	c->optional = want == FUZZ_OPTIONAL;
	return 0;
}

/* Short, exact, long and unwritable buffers. */
static int fuzz_read(struct fuzz *fz)
{
	__u64 buf[FUZZ_SLOTS + 8];
	struct fuzz_counter *c;
	size_t need, size;
	bool bad_buf;
	unsigned int nr;
	ssize_t n;
	int i;

	i = fuzz_pick(fz, NULL);
	if (i < 0)
		return 0;
	c = &fz->slot[i];
	nr = fuzz_group_size(fz, i);
	need = pmc_read_size(c->read_format, nr);
	size = fuzz_below(fz, need + 17);
	bad_buf = fuzz_chance(fz, 5);

	n = read(c->fd, bad_buf ? NULL : buf, size);
	if (n == 0 && fz->slot[c->leader].pinned)
		return 0;	/* pinned group in error state */
	if (size < need) {
		if (n != -1 || errno != ENOSPC)
			FUZZ_FAIL(fz, "read(%zu) with %zu needed gave %zd (%s), want ENOSPC",
				  size, need, n, strerror(errno));
	} else if (bad_buf) {
		if (n != -1 || errno != EFAULT)
			FUZZ_FAIL(fz, "read(NULL, %zu) gave %zd (%s), want EFAULT",
				  size, n, strerror(errno));
	} else if ((size_t)n != need) {
		FUZZ_FAIL(fz, "read(%zu) of read_format %#x, group of %u, gave %zd (%s), want %zu",
			  size, c->read_format, nr, n, strerror(errno), need);
	} else if ((c->read_format & PMC_FORMAT_GROUP) && buf[0] != nr) {
		FUZZ_FAIL(fz, "group read: nr %llu, want %u",
			  (unsigned long long)buf[0], nr);
	}
	return 0;
}

static int fuzz_ioctl(struct fuzz *fz)
{
	static const unsigned long state_cmds[] = {
		PMC_IOC_ENABLE, PMC_IOC_DISABLE, PMC_IOC_RESET,
	};
	static const unsigned long unknown_cmds[] = {
		_IO(PMC_IOC_MAGIC, 4), _IO(PMC_IOC_MAGIC, 0x80),
		_IO(PMC_IOC_MAGIC + 1, 0), 0xdeadbeef,
	};
	struct fuzz_counter *c;
	unsigned long cmd, arg;
	int i, ret;

	i = fuzz_pick(fz, NULL);
	if (i < 0)
		return 0;
	c = &fz->slot[i];

	switch (fuzz_below(fz, 5)) {
	case 0:
		cmd = PMC_IOC_REFRESH;
		arg = fuzz_below(fz, 4);
		ret = ioctl(c->fd, cmd, arg);
		if (c->sampling && arg > 0 && (!ret || errno == EINVAL))
			return 0;
		if (ret != -1 || errno != EINVAL)
			FUZZ_FAIL(fz, "REFRESH(%lu) on a %s counter gave %d (%s), want EINVAL",
				  arg, c->sampling ? "sampling" : "counting",
				  ret, strerror(errno));
		return 0;
	case 1:
		cmd = unknown_cmds[fuzz_below(fz, ARRAY_SIZE(unknown_cmds))];
		ret = ioctl(c->fd, cmd, fuzz_rand(fz));
		if (ret != -1 || errno != ENOTTY)
			FUZZ_FAIL(fz, "ioctl(%#lx) gave %d (%s), want ENOTTY",
				  cmd, ret, strerror(errno));
		return 0;
	default:
		cmd = state_cmds[fuzz_below(fz, ARRAY_SIZE(state_cmds))];
		ret = ioctl(c->fd, cmd, 0);
		if (ret)
			FUZZ_FAIL(fz, "ioctl(%#lx) gave %s", cmd,
				  strerror(errno));
		return 0;
	}
}

/* Close a counter, then use the dead fd number. */
static int fuzz_use_after_close(struct fuzz *fz)
{
	__u64 buf[4];
	int i, fd;

	i = fuzz_pick(fz, NULL);
	if (i < 0)
		return 0;
	fd = fz->slot[i].fd;
	fuzz_close(fz, i);
	if (read(fd, buf, sizeof(buf)) != -1 || errno != EBADF)
		FUZZ_FAIL(fz, "read() of a closed counter: %s", strerror(errno));
	if (ioctl(fd, PMC_IOC_ENABLE, 0) != -1 || errno != EBADF)
		FUZZ_FAIL(fz, "ioctl() of a closed counter: %s",
			  strerror(errno));
	return 0;
}

/* Counters on the old helper stay open and must read its final counts. */
static int fuzz_respawn_helper(struct fuzz *fz)
{
	kill_child(fz->helper);
	fz->helper = spawn_sleeper();
	if (fz->helper < 0)
		FUZZ_FAIL(fz, "fork: %s", strerror(errno));
	return 0;
}

static int fuzz_setup(struct fuzz *fz)
{
	size_t page = page_size();
	struct stat st;
	char *p;
	int i;

	fz->rng = fz->seed ?: 1;
	fz->self = getpid();
	fz->nr_cpu_ids = possible_cpus();
	fz->nr_cpus = allowed_cpus(fz->cpus, FUZZ_MAX_CPUS);
	fz->pid1_foreign = !stat("/proc/1", &st) && st.st_uid != geteuid();
	for (i = 0; i < FUZZ_SLOTS; i++)
		fz->slot[i].fd = -1;

	CHILD_CHECK(fz->nr_cpus > 0, "no CPU");
	CHILD_CHECK(pipe(fz->pipe_fds) == 0, "%s", strerror(errno));
	p = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHILD_CHECK(p != MAP_FAILED, "%s", strerror(errno));
	fz->hole = p + page;
	CHILD_CHECK(munmap(fz->hole, page) == 0, "%s", strerror(errno));

	fz->gone = fork_child(exit_now, NULL);
	CHILD_CHECK(fz->gone > 0 && waitpid(fz->gone, NULL, 0) == fz->gone,
		    "%s", strerror(errno));
	fz->helper = spawn_sleeper();
	CHILD_CHECK(fz->helper > 0, "%s", strerror(errno));
	return 0;
}

static int fuzz_main(void *arg)
{
	struct fuzz *fz = arg;
	unsigned int dice;
	int i, ret;

	ret = fuzz_setup(fz);
	for (fz->iteration = 0; !ret && fz->iteration < FUZZ_ITERATIONS;
	     fz->iteration++) {
		dice = fuzz_below(fz, 100);
		if (dice < 55) {
			ret = fuzz_open(fz);
		} else if (dice < 70) {
			ret = fuzz_read(fz);
		} else if (dice < 82) {
			ret = fuzz_ioctl(fz);
		} else if (dice < 95) {
			i = fuzz_pick(fz, NULL);
			if (i >= 0)
				fuzz_close(fz, i);
		} else if (dice < 99) {
			ret = fuzz_use_after_close(fz);
		} else {
			ret = fuzz_respawn_helper(fz);
		}
	}

	for (i = 0; i < FUZZ_SLOTS; i++)
		if (fz->slot[i].fd >= 0)
			fuzz_close(fz, i);
	if (fz->helper > 0)
		kill_child(fz->helper);
	return ret;
}

/*
 * Create each kind of object once before the baseline is taken, so that
 * anything the kernel allocates on first use and keeps (per-CPU contexts,
 * say) is in it. Where the caches can be shrunk, the counts are exact:
 * check that a counter shows up in them, or the leak check proves nothing.
 * Frees of earlier tests that land between the two readings (a kfree_rcu
 * batch of 264 counters did, in CI) make the difference short, so up to
 * three tries; the last one must show every counter.
 */
#define FUZZ_WARM_UP_TRIES	3

static int fuzz_warm_up(void *arg)
{
	int cpus[FUZZ_MAX_CPUS], fds[FUZZ_MAX_CPUS + 2], nr_cpus, nr, i, try;
	bool exact = !access("/sys/kernel/slab/pmc_counter/shrink", W_OK);
	bool root = *(bool *)arg;
	struct pmc_attr attr;
	long before, during;
	pid_t helper;

	helper = spawn_sleeper();
	CHILD_CHECK(helper > 0, "%s", strerror(errno));
	pmc_sw_attr(&attr, PMC_SW_TASK_CLOCK, 0);
	nr_cpus = allowed_cpus(cpus, FUZZ_MAX_CPUS);
	for (try = 1; ; try++) {
		/* settled: frees of earlier tests may still be landing */
		before = slab_settled("pmc_counter");
		nr = 0;
		fds[nr++] = pmc_open(&attr, 0, -1, -1, 0);
		fds[nr++] = pmc_open(&attr, helper, -1, -1, 0);
		for (i = 0; root && i < nr_cpus; i++)
			fds[nr++] = pmc_open(&attr, -1, cpus[i], -1, 0);
		for (i = 0; i < nr; i++)
			CHILD_CHECK(fds[i] >= 0, "warm-up counter %d: %s", i,
				    strerror(errno));

		during = slab_active_objs("pmc_counter");
		for (i = 0; i < nr; i++)
			close(fds[i]);
		if (!exact || during >= before + nr)
			break;
		CHILD_CHECK(try < FUZZ_WARM_UP_TRIES,
			    "%d counters open, but pmc_counter went from %ld to %ld",
			    nr, before, during);
		fprintf(stderr, "# warm-up try %d: pmc_counter %ld, then %ld with %d open; again\n",
			try, before, during, nr);
	}
	kill_child(helper);
	return 0;
}

TEST_F_TIMEOUT(pmc, fuzz_no_leak, 120)
{
	const char *seed = getenv("PMC_FUZZ_SEED");
	struct fuzz fz = { .root = self->root };
	long before[ARRAY_SIZE(pmc_caches)];
	bool slabinfo;
	FILE *f;

	fz.seed = seed ? strtoull(seed, NULL, 0) : time(NULL) ^ getpid();
	TH_LOG("seed %llu: set PMC_FUZZ_SEED to repeat", fz.seed);

	f = fopen("/proc/slabinfo", "r");
	slabinfo = f != NULL;
	if (f)
		fclose(f);
	if (slabinfo) {
		ASSERT_EQ(0, reap(_metadata, spawn(_metadata, fuzz_warm_up,
						   &fz.root), NULL));
		slab_read_baseline(_metadata, before);
	}

	ASSERT_EQ(0, reap(_metadata, spawn(_metadata, fuzz_main, &fz), NULL));
	if (!slabinfo)
		SKIP(return, "fuzz passed; leak check skipped: /proc/slabinfo not readable");

	expect_slab_baseline(_metadata, before, 5000);
}

/*
 * pmc_paranoid: readable, 2 by default, -1..2 only. Below 2 an
 * unprivileged user may count kernel mode, below 1 per-CPU counters too.
 * The teardown restores the value a test changed.
 */

FIXTURE(paranoid) {
	long saved;
	bool changed;
};

FIXTURE_SETUP(paranoid)
{
	int err;

	require_pmc_open(_metadata);
	err = read_int_file(PARANOID_PATH, &self->saved);
	ASSERT_EQ(0, err) TH_LOG("%s: %s", PARANOID_PATH, strerror(err));
}

FIXTURE_TEARDOWN(paranoid)
{
	if (self->changed)
		EXPECT_EQ(0, write_int_file(PARANOID_PATH, self->saved));
}

static void set_paranoid(struct __test_metadata *_metadata,
			 FIXTURE_DATA(paranoid) *self, long level)
{
	long now = LONG_MIN;
	int err;

	self->changed = true;
	err = write_int_file(PARANOID_PATH, level);
	ASSERT_EQ(0, err) TH_LOG("writing %ld: %s", level, strerror(err));
	ASSERT_EQ(0, read_int_file(PARANOID_PATH, &now));
	ASSERT_EQ(level, now);
}

/* What an unprivileged user gets at one pmc_paranoid level. */
struct paranoid_expect {
	int open_err;		/* any counter at all (level 3) */
	int kernel_err;		/* counting kernel mode */
	int per_cpu_err;	/* a per-CPU counter */
};

/* Level 3: every kind of counter, each way of opening it, is EACCES. */
static int check_no_open(int cpu)
{
	static const __u64 configs[] = {
		PMC_CONFIG(PMC_TYPE_SOFTWARE, PMC_SW_TASK_CLOCK),
		PMC_CONFIG(PMC_TYPE_SOFTWARE, PMC_SW_PAGE_FAULTS),
		PMC_CONFIG(PMC_TYPE_HARDWARE, PMC_HW_CPU_CYCLES),
		PMC_CONFIG(PMC_TYPE_HARDWARE, PMC_HW_INSTRUCTIONS),
		PMC_CONFIG(PMC_TYPE_TRACEPOINT, 0),
		PMC_CONFIG_RAW | 0xc0,
	};
	struct pmc_attr attr;
	unsigned int i;
	int err;

	for (i = 0; i < ARRAY_SIZE(configs); i++) {
		pmc_sw_attr(&attr, 0, 0);
		attr.config = configs[i];
		err = pmc_open_errno(&attr, 0, -1, -1, 0);
		CHILD_CHECK(err == EACCES, "config %#llx on itself: %s",
			    (unsigned long long)configs[i], strerror(err));
		attr.inherit = 1;
		attr.irq_period = 100000;
		err = pmc_open_errno(&attr, 0, -1, -1, 0);
		CHILD_CHECK(err == EACCES, "config %#llx sampling: %s",
			    (unsigned long long)configs[i], strerror(err));
		attr.inherit = 0;
		attr.irq_period = 0;
		err = pmc_open_errno(&attr, -1, cpu, -1, 0);
		CHILD_CHECK(err == EACCES, "config %#llx per-CPU: %s",
			    (unsigned long long)configs[i], strerror(err));
	}
	return 0;
}

static int check_unprivileged(void *arg)
{
	const struct paranoid_expect *want = arg;
	struct pmc_reading r = { 0 };
	struct pmc_attr attr;
	int cpu, err, fd;

	CHILD_CHECK(allowed_cpus(&cpu, 1) == 1, "no CPU");
	if (want->open_err)
		return check_no_open(cpu);

	pmc_sw_attr(&attr, PMC_SW_TASK_CLOCK, 0);
	err = pmc_open_errno(&attr, 0, -1, -1, 0);
	CHILD_CHECK(err == 0, "user-mode task-clock: %s", strerror(err));

	attr.exclude_kernel = 0;
	err = pmc_open_errno(&attr, 0, -1, -1, 0);
	CHILD_CHECK(err == want->kernel_err, "kernel-mode task-clock: %s",
		    strerror(err));
	pmc_sw_attr(&attr, PMC_SW_PAGE_FAULTS, 0);
	attr.exclude_kernel = 0;
	err = pmc_open_errno(&attr, 0, -1, -1, 0);
	CHILD_CHECK(err == want->kernel_err, "kernel-mode page-faults: %s",
		    strerror(err));

	pmc_sw_attr(&attr, PMC_SW_CPU_CLOCK, 0);
	fd = pmc_open(&attr, -1, cpu, -1, 0);
	err = fd < 0 ? errno : 0;
	CHILD_CHECK(err == want->per_cpu_err, "per-CPU cpu-clock: %s",
		    strerror(err));
	if (fd >= 0) {
		usleep(10 * 1000);
		CHILD_CHECK(pmc_read(fd, 0, &r) == 0 && r.value > 0,
			    "per-CPU cpu-clock does not count");
		close(fd);
	}
	return 0;
}

TEST_F(paranoid, default_is_2)
{
	EXPECT_EQ(2, self->saved);
}

TEST_F(paranoid, write_range)
{
	static const long bad[] = { 4, -2, 100, LONG_MIN };
	unsigned int i;
	long level, now = 0;

	if (geteuid() != 0)
		SKIP(return, "writing the sysctl needs root");

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		self->changed = true;
		EXPECT_EQ(EINVAL, write_int_file(PARANOID_PATH, bad[i])) {
			TH_LOG("wrote %ld", bad[i]);
		}
		ASSERT_EQ(0, read_int_file(PARANOID_PATH, &now));
		EXPECT_EQ(self->saved, now);
	}
	for (level = -1; level <= 3; level++)
		set_paranoid(_metadata, self, level);
}

/* Level 3, as distributions set perf's: no open at all without CAP_PERFMON. */
TEST_F(paranoid, level_3)
{
	static const struct paranoid_expect want = { .open_err = EACCES };
	struct pmc_attr attr;
	int cpu, err;

	if (geteuid() != 0)
		SKIP(return, "writing the sysctl needs root");
	set_paranoid(_metadata, self, 3);
	/* Root still opens every kind (hardware: where there is a PMU). */
	ASSERT_EQ(1, allowed_cpus(&cpu, 1));
	pmc_sw_attr(&attr, PMC_SW_TASK_CLOCK, 0);
	attr.exclude_kernel = 0;
	EXPECT_EQ(0, pmc_open_errno(&attr, 0, -1, -1, 0));
	EXPECT_EQ(0, pmc_open_errno(&attr, -1, cpu, -1, 0));
	attr.inherit = 1;
	attr.irq_period = 100000;
	EXPECT_EQ(0, pmc_open_errno(&attr, 0, -1, -1, 0));
	pmc_sw_attr(&attr, 0, 0);
	attr.config = PMC_CONFIG(PMC_TYPE_HARDWARE, PMC_HW_INSTRUCTIONS);
	err = pmc_open_errno(&attr, 0, -1, -1, 0);
	EXPECT_TRUE(err == 0 || err == ENODEV) {
		TH_LOG("root, instructions: %s", strerror(err));
	}
	run_unprivileged(_metadata, check_unprivileged, (void *)&want);
}

TEST_F(paranoid, level_2)
{
	static const struct paranoid_expect want = {
		.kernel_err = EACCES,
		.per_cpu_err = EACCES,
	};
	struct pmc_attr attr;
	int cpu;

	if (geteuid() == 0) {
		set_paranoid(_metadata, self, 2);
		/* privilege bypasses the level */
		ASSERT_EQ(1, allowed_cpus(&cpu, 1));
		pmc_sw_attr(&attr, PMC_SW_CPU_CLOCK, 0);
		attr.exclude_kernel = 0;
		EXPECT_EQ(0, pmc_open_errno(&attr, 0, -1, -1, 0));
		EXPECT_EQ(0, pmc_open_errno(&attr, -1, cpu, -1, 0));
	} else if (self->saved != 2) {
		SKIP(return, "pmc_paranoid is %ld and only root may set it",
		     self->saved);
	}
	run_unprivileged(_metadata, check_unprivileged, (void *)&want);
}

TEST_F(paranoid, lower_levels)
{
	static const struct paranoid_expect want[] = {
		[0] = { .kernel_err = 0, .per_cpu_err = 0 },		/* -1 */
		[1] = { .kernel_err = 0, .per_cpu_err = 0 },		/*  0 */
		[2] = { .kernel_err = 0, .per_cpu_err = EACCES },	/*  1 */
	};
	long level;

	if (geteuid() != 0)
		SKIP(return, "writing the sysctl needs root");

	for (level = 1; level >= -1; level--) {
		set_paranoid(_metadata, self, level);
		TH_LOG("pmc_paranoid %ld", level);
		run_unprivileged(_metadata, check_unprivileged,
				 (void *)&want[level + 1]);
	}
}

/*
 * CPU hotplug comes last, in a fixture of its own (fixtures run in
 * declaration order): it is the most disruptive thing here.
 */

FIXTURE(hotplug) {
	bool root;
};

FIXTURE_SETUP(hotplug)
{
	require_pmc_open(_metadata);
	self->root = geteuid() == 0;
}

FIXTURE_TEARDOWN(hotplug)
{
}

/* The lowest possible CPU that is offline, or -1. */
static int find_offline_cpu(void)
{
	char buf[256];
	int fd, n, cpu;

	fd = open("/sys/devices/system/cpu/offline", O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	if (sscanf(buf, "%d", &cpu) != 1 || cpu >= possible_cpus())
		return -1;
	return cpu;
}

/*
 * An offline CPU is ENODEV. Without one, take the last CPU offline for
 * the check and bring it back.
 */
TEST_F(hotplug, offline_cpu)
{
	int cpus[CPU_SETSIZE], nr, cpu, per_cpu_err, task_err, err;
	struct pmc_attr attr;
	char path[80] = "";

	if (!self->root)
		SKIP(return, "CPU hotplug and per-CPU counters need root");

	cpu = find_offline_cpu();
	if (cpu < 0) {
		nr = allowed_cpus(cpus, CPU_SETSIZE);
		if (nr < 2)
			SKIP(return, "no offline CPU and only one online");
		cpu = cpus[nr - 1];
		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu%d/online", cpu);
		err = write_file(path, "0");
		if (err)
			SKIP(return, "cannot take CPU %d offline: %s", cpu,
			     strerror(err));
	}

	pmc_sw_attr(&attr, PMC_SW_CPU_CLOCK, 0);
	per_cpu_err = pmc_open_errno(&attr, -1, cpu, -1, 0);
	task_err = pmc_open_errno(&attr, 0, cpu, -1, 0);
	if (path[0]) {
		err = write_file(path, "1");
		ASSERT_EQ(0, err) {
			TH_LOG("CPU %d did not come back: %s", cpu,
			       strerror(err));
		}
	}
	EXPECT_EQ(ENODEV, per_cpu_err) TH_LOG("per-CPU counter, CPU %d", cpu);
	EXPECT_EQ(ENODEV, task_err) TH_LOG("task counter, CPU %d", cpu);
}

TEST_HARNESS_MAIN
