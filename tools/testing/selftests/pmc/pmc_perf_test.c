// SPDX-License-Identifier: GPL-2.0
/*
 * pmc_open(2) beside perf_event_open(2): the same small programs run on
 * both in one process, and must see the same signals, poll() results,
 * errors and counts where events-lite promises to behave as perf
 * (Documentation/userspace-api/pmc.rst, "Differences from perf", lists
 * where it does not). perf is the reference: a perf result this kernel
 * does not give fails the comparison, whichever side moved.
 *
 * Software events only, so that it runs on every architecture and with
 * no PMU. Run as root and as an unprivileged user (perf_event_paranoid
 * and pmc_paranoid both at their default, 2).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <linux/perf_event.h>

#include "../kselftest_harness.h"
#include "pmc_harness.h"

#define NR_PAGES	12
#define MAX_SIGS	64

/* The two interfaces, reduced to what these programs use. */
struct api {
	const char *name;
	int (*open)(unsigned int what, __u64 period, bool exclude_kernel,
		    pid_t pid, int cpu, int group_fd);
	unsigned long enable, disable, refresh;
};

enum { FAULTS, SWITCHES };

static int perf_open(unsigned int what, __u64 period, bool exclude_kernel,
		     pid_t pid, int cpu, int group_fd)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = what == FAULTS ? PERF_COUNT_SW_PAGE_FAULTS :
					   PERF_COUNT_SW_CONTEXT_SWITCHES,
		.sample_period = period,
		.sample_type = period ? PERF_SAMPLE_IP : 0,
		.disabled = 1,
		.exclude_kernel = exclude_kernel,
		.exclude_hv = exclude_kernel,
	};

	return syscall(__NR_perf_event_open, &attr, pid, cpu, group_fd, 0);
}

static int pmc_open_sw(unsigned int what, __u64 period, bool exclude_kernel,
		       pid_t pid, int cpu, int group_fd)
{
	struct pmc_attr attr;

	pmc_sw_attr(&attr, what == FAULTS ? PMC_SW_PAGE_FAULTS :
					    PMC_SW_CONTEXT_SWITCHES, 0);
	attr.irq_period = period;
	attr.record_type = period ? PMC_RECORD_IP : 0;
	attr.disabled = 1;
	attr.exclude_kernel = exclude_kernel;
	return pmc_open(&attr, pid, cpu, group_fd, 0);
}

static const struct api apis[] = {
	{ "perf_event_open", perf_open, PERF_EVENT_IOC_ENABLE,
	  PERF_EVENT_IOC_DISABLE, PERF_EVENT_IOC_REFRESH },
	{ "pmc_open", pmc_open_sw, PMC_IOC_ENABLE, PMC_IOC_DISABLE,
	  PMC_IOC_REFRESH },
};

/* An fd of @api, or fail the test. */
static int api_open(struct __test_metadata *_metadata, const struct api *api,
		    unsigned int what, __u64 period, bool exclude_kernel,
		    pid_t pid)
{
	int fd = api->open(what, period, exclude_kernel, pid, -1, -1);

	ASSERT_LE(0, fd) TH_LOG("%s: %s", api->name, strerror(errno));
	return fd;
}

static __u64 value_of(struct __test_metadata *_metadata, int fd)
{
	__u64 v;

	ASSERT_EQ(sizeof(v), read(fd, &v, sizeof(v)));
	return v;
}

static int api_errno(const struct api *api, unsigned int what, pid_t pid,
		     int cpu, int group_fd)
{
	int fd = api->open(what, 0, true, pid, cpu, group_fd);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

FIXTURE(perf) {
	sigset_t blocked;
};

FIXTURE_SETUP(perf)
{
	sigemptyset(&self->blocked);
	sigaddset(&self->blocked, SIGRTMIN + 1);
	ASSERT_EQ(0, sigprocmask(SIG_BLOCK, &self->blocked, NULL));
}

FIXTURE_TEARDOWN(perf)
{
	sigprocmask(SIG_UNBLOCK, &self->blocked, NULL);
}

/*
 * A page-fault sampler of period @period, mapped or not, that signals:
 * fault @nr pages; Return: the signals, each POLL_IN with our si_fd, or
 * -1 after a failed check. The count goes to @value.
 */
static int signals_per_overflow(struct __test_metadata *_metadata,
				const struct api *api, __u64 period,
				bool mapped, __u64 *value)
{
	int fds[MAX_SIGS], codes[MAX_SIGS], fd, sig = SIGRTMIN + 1;
	size_t len = 3 * page_size();
	void *ring = MAP_FAILED;
	unsigned int n, k;
	char *region;

	region = fresh_pages(_metadata, NR_PAGES);
	fd = api_open(_metadata, api, FAULTS, period, true, 0);
	if (mapped) {
		ring = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		EXPECT_NE(MAP_FAILED, ring) {
			TH_LOG("%s: mmap: %s", api->name, strerror(errno));
		}
	}
	sigio_to_me(_metadata, fd, sig);
	counter_ioctl(_metadata, fd, api->enable);
	touch_pages(region, NR_PAGES);
	counter_ioctl(_metadata, fd, api->disable);
	*value = value_of(_metadata, fd);
	n = take_signals(sig, *value / period, MAX_SIGS, fds, codes);
	for (k = 0; k < n && k < MAX_SIGS; k++) {
		EXPECT_EQ(fd, fds[k]) TH_LOG("%s", api->name);
		EXPECT_EQ(POLL_IN, codes[k]) TH_LOG("%s", api->name);
	}
	if (ring != MAP_FAILED)
		munmap(ring, len);
	close(fd);
	munmap(region, NR_PAGES * page_size());
	return n;
}

/* One SIGIO per overflow, with a buffer and without, on both. */
TEST_F(perf, sigio_per_overflow)
{
	static const __u64 periods[] = { 1, 4 };
	unsigned int a, p, m;
	__u64 value;
	int n;

	for (a = 0; a < ARRAY_SIZE(apis); a++) {
		for (p = 0; p < ARRAY_SIZE(periods); p++) {
			for (m = 0; m < 2; m++) {
				n = signals_per_overflow(_metadata, &apis[a],
							 periods[p], m, &value);
				EXPECT_LE(NR_PAGES, value);
				EXPECT_EQ(value / periods[p], n) {
					TH_LOG("%s, period %llu, %s: %llu faults, %d signals",
					       apis[a].name,
					       (unsigned long long)periods[p],
					       m ? "mapped" : "no buffer",
					       (unsigned long long)value, n);
				}
			}
		}
	}
}

/* REFRESH(3): three signals, POLL_IN, POLL_IN, POLL_HUP, on both. */
TEST_F(perf, refresh_hangs_up)
{
	int fds[MAX_SIGS], codes[MAX_SIGS], fd, sig = SIGRTMIN + 1;
	unsigned int a, n, k;
	char *region;

	for (a = 0; a < ARRAY_SIZE(apis); a++) {
		region = fresh_pages(_metadata, NR_PAGES);
		fd = api_open(_metadata, &apis[a], FAULTS, 1, true, 0);
		sigio_to_me(_metadata, fd, sig);
		ASSERT_EQ(0, ioctl(fd, apis[a].refresh, 3)) {
			TH_LOG("%s: %s", apis[a].name, strerror(errno));
		}
		touch_pages(region, NR_PAGES);
		n = take_signals(sig, 3, MAX_SIGS, fds, codes);
		EXPECT_EQ(3, n) TH_LOG("%s", apis[a].name);
		for (k = 0; k < n && k < MAX_SIGS; k++) {
			EXPECT_EQ(k < 2 ? POLL_IN : POLL_HUP, codes[k]) {
				TH_LOG("%s: signal %u: si_code %d",
				       apis[a].name, k + 1, codes[k]);
			}
		}
		close(fd);
		munmap(region, NR_PAGES * page_size());
	}
}

static int fault_and_wait(void *arg)
{
	int *go = arg;
	char c, *p;

	close(go[1]);
	if (read(go[0], &c, 1) != 1)
		return 1;
	p = map_fresh_pages(NR_PAGES);
	CHILD_CHECK(p, "%s", strerror(errno));
	touch_pages(p, NR_PAGES);
	return 0;
}

/*
 * A reader that polls without reading sees the monitored task end:
 * POLLHUP once it has exited, on both, with records still unread.
 */
TEST_F(perf, pollhup_unread)
{
	size_t len = 3 * page_size();
	unsigned int a;
	int go[2], fd;
	void *ring;
	pid_t child;
	short ev;

	for (a = 0; a < ARRAY_SIZE(apis); a++) {
		ASSERT_EQ(0, pipe(go));
		child = spawn(_metadata, fault_and_wait, go);
		close(go[0]);
		fd = api_open(_metadata, &apis[a], FAULTS, 1, true, child);
		ring = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		ASSERT_NE(MAP_FAILED, ring) {
			TH_LOG("%s: %s", apis[a].name, strerror(errno));
		}
		counter_ioctl(_metadata, fd, apis[a].enable);
		ASSERT_EQ(1, write(go[1], "g", 1));
		ASSERT_EQ(0, reap(_metadata, child, NULL));
		close(go[1]);

		ev = poll_now(fd);
		EXPECT_TRUE(ev & POLLHUP) TH_LOG("%s: poll %#x", apis[a].name, ev);
		munmap(ring, len);
		close(fd);
	}
}

/* The errors a perf user's code tests for, on both. */
TEST_F(perf, errors)
{
	unsigned int a;
	int gone;

	gone = dup(0);
	if (gone < 0)
		gone = 1000;
	close(gone);
	for (a = 0; a < ARRAY_SIZE(apis); a++) {
		/* no task has a pid below -1 */
		EXPECT_EQ(ESRCH, api_errno(&apis[a], FAULTS, -2, -1, -1)) {
			TH_LOG("%s", apis[a].name);
		}
		EXPECT_EQ(ESRCH, api_errno(&apis[a], FAULTS, INT_MIN, -1, -1)) {
			TH_LOG("%s", apis[a].name);
		}
		/* every task on every CPU */
		EXPECT_EQ(EINVAL, api_errno(&apis[a], FAULTS, -1, -1, -1)) {
			TH_LOG("%s", apis[a].name);
		}
		/* a closed group_fd, before the per-CPU permission check */
		EXPECT_EQ(EBADF, api_errno(&apis[a], FAULTS, -1, 0, gone)) {
			TH_LOG("%s", apis[a].name);
		}
	}
}

/* Unknown types and software ids: ENOENT from both. */
TEST_F(perf, unknown_events)
{
	struct perf_event_attr pattr = { .size = sizeof(pattr),
					 .exclude_kernel = 1,
					 .exclude_hv = 1 };
	struct pmc_attr attr;

	pattr.type = 0x7fff0000;
	EXPECT_EQ(-1, syscall(__NR_perf_event_open, &pattr, 0, -1, -1, 0));
	EXPECT_EQ(ENOENT, errno) TH_LOG("perf, unknown type: %s", strerror(errno));
	pattr.type = PERF_TYPE_SOFTWARE;
	pattr.config = PERF_COUNT_SW_MAX;
	EXPECT_EQ(-1, syscall(__NR_perf_event_open, &pattr, 0, -1, -1, 0));
	EXPECT_EQ(ENOENT, errno) TH_LOG("perf, software id: %s", strerror(errno));

	pmc_sw_attr(&attr, PMC_SW_MAX, 0);
	EXPECT_EQ(ENOENT, pmc_open_errno(&attr, 0, -1, -1, 0));
	attr.config = PMC_CONFIG(0x7f, 0);
	EXPECT_EQ(ENOENT, pmc_open_errno(&attr, 0, -1, -1, 0));
}

/*
 * Context switches happen in kernel mode: exclude_kernel counts none,
 * on both; without it (where allowed) both count every round trip.
 */
TEST_F(perf, switches_exclude_kernel)
{
	enum { ROUNDS = 50 };
	bool kernel = may_count_kernel();
	struct ping_pong pp;
	int fd[2][2], i, a;

	ping_pong_start(_metadata, &pp);
	for (a = 0; a < 2; a++) {
		fd[a][0] = api_open(_metadata, &apis[a], SWITCHES, 0, true, 0);
		fd[a][1] = kernel ? api_open(_metadata, &apis[a], SWITCHES, 0,
					     false, 0) : -1;
		for (i = 0; i < 2; i++)
			if (fd[a][i] >= 0)
				counter_ioctl(_metadata, fd[a][i], apis[a].enable);
	}
	ping_pong_run(_metadata, &pp, ROUNDS);
	for (a = 0; a < 2; a++) {
		EXPECT_EQ(0, value_of(_metadata, fd[a][0])) {
			TH_LOG("%s: exclude_kernel counted switches", apis[a].name);
		}
		if (kernel)
			EXPECT_LE(ROUNDS, value_of(_metadata, fd[a][1])) {
				TH_LOG("%s", apis[a].name);
			}
		for (i = 0; i < 2; i++)
			if (fd[a][i] >= 0)
				close(fd[a][i]);
	}
	ping_pong_stop(_metadata, &pp);
}

TEST_HARNESS_MAIN
