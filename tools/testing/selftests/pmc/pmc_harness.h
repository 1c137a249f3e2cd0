/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for the pmc_open(2) selftests that fail the running test: they
 * use the kselftest harness (_metadata, ASSERT_*() and TH_LOG()), so
 * include this after ../kselftest_harness.h.
 *
 * Forked children must not call them: an ASSERT_*() there would run the
 * fixture teardown in the child. Children use CHILD_CHECK() and the
 * helpers of pmc_util.h instead.
 */
#ifndef PMC_HARNESS_H
#define PMC_HARNESS_H

#ifndef __KSELFTEST_HARNESS_H
#error "include ../kselftest_harness.h before pmc_harness.h"
#endif

#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "pmc_util.h"

/*
 * require_pmc_open() - fail, loudly, unless pmc_open(2) works at all
 *
 * A kernel without the syscall must fail every test, not skip them.
 */
static inline void require_pmc_open(struct __test_metadata *_metadata)
{
	struct pmc_attr attr;
	int fd, err;

	pmc_sw_attr(&attr, PMC_SW_TASK_CLOCK, 0);
	fd = pmc_open(&attr, 0, -1, -1, 0);
	err = errno;
	if (fd < 0 && err == ENOSYS)
		TH_LOG("pmc_open(2) is not implemented by this kernel (ENOSYS)");
	ASSERT_LE(0, fd) {
		TH_LOG("cannot open a user-mode task-clock counter: %s",
		       strerror(err));
	}
	close(fd);
}

/* Open a counter or fail the test. */
static inline int counter_open(struct __test_metadata *_metadata,
			       struct pmc_attr *attr, pid_t pid, int cpu,
			       int group_fd)
{
	int fd = pmc_open(attr, pid, cpu, group_fd, 0);
	int err = errno;

	ASSERT_LE(0, fd) {
		TH_LOG("pmc_open(config %#llx, period %llu, pid %d, cpu %d, group_fd %d): %s",
		       (unsigned long long)attr->config,
		       (unsigned long long)attr->irq_period, pid, cpu,
		       group_fd, strerror(err));
	}
	return fd;
}

/* Read a counter opened without PMC_FORMAT_GROUP, or fail the test. */
static inline struct pmc_reading counter_read(struct __test_metadata *_metadata,
					      int fd, __u32 read_format)
{
	struct pmc_reading r = { };
	int ret = pmc_read(fd, read_format, &r);

	ASSERT_EQ(0, ret) {
		TH_LOG("read() of counter fd %d (read_format %#x): %s", fd,
		       read_format, ret == -EMSGSIZE ? "wrong size" :
		       strerror(-ret));
	}
	return r;
}

static inline __u64 counter_value(struct __test_metadata *_metadata, int fd)
{
	return counter_read(_metadata, fd, 0).value;
}

/*
 * group_read() - read a PMC_FORMAT_GROUP counter into @buf
 *
 * Checks that read() returned exactly the size its nr implies.
 *
 * Return: nr, the number of counters in the group.
 */
static inline __u64 group_read(struct __test_metadata *_metadata, int fd,
			       __u32 read_format, __u64 *buf, size_t words)
{
	ssize_t n = read(fd, buf, words * sizeof(*buf));

	ASSERT_LT(0, n) {
		TH_LOG("group read() of fd %d: %s", fd,
		       n < 0 ? strerror(errno) : "end of file");
	}
	ASSERT_LE(1, buf[0]);
	ASSERT_EQ(pmc_read_size(read_format, buf[0]), n);
	return buf[0];
}

static inline void counter_ioctl(struct __test_metadata *_metadata, int fd,
				 unsigned long cmd)
{
	ASSERT_EQ(0, ioctl(fd, cmd, 0)) {
		TH_LOG("ioctl(%d, %#lx): %s", fd, cmd, strerror(errno));
	}
}

/* Send @sig, with si_fd, to this thread at each overflow of @fd. */
static inline void sigio_to_me(struct __test_metadata *_metadata, int fd,
			       int sig)
{
	ASSERT_EQ(0, pmc_overflow_signal(fd, sig)) {
		TH_LOG("fd %d: %s", fd, strerror(errno));
	}
}

/* A number in counter @fd's fdinfo, or fail the test. */
static inline __u64 fdinfo_count(struct __test_metadata *_metadata, int fd,
				 const char *name)
{
	long long n = fdinfo_number(fd, name);

	ASSERT_LE(0, n) TH_LOG("no %s in fdinfo of fd %d", name, fd);
	return n;
}

/* Overflows counter @fd took (its exited copies' included). */
static inline __u64 nr_overflows(struct __test_metadata *_metadata, int fd)
{
	return fdinfo_count(_metadata, fd, "pmc-overflows");
}

/* Times counter @fd or one of its copies was throttled. */
static inline __u64 nr_throttles(struct __test_metadata *_metadata, int fd)
{
	return fdinfo_count(_metadata, fd, "pmc-throttles");
}

/* Fresh anonymous pages, or fail the test. */
static inline char *fresh_pages(struct __test_metadata *_metadata, size_t nr)
{
	char *p = map_fresh_pages(nr);

	ASSERT_TRUE(p != NULL) TH_LOG("mmap: %s", strerror(errno));
	return p;
}

static inline pid_t spawn(struct __test_metadata *_metadata, child_fn fn,
			  void *arg)
{
	pid_t pid = fork_child(fn, arg);

	ASSERT_LE(0, pid) TH_LOG("fork: %s", strerror(errno));
	return pid;
}

/*
 * reap() - reap @pid, which must exit normally
 *
 * @usage: where to store the child's resource usage, or NULL.
 *
 * Return: its exit code.
 */
static inline int reap(struct __test_metadata *_metadata, pid_t pid,
		       struct rusage *usage)
{
	struct rusage ignored;
	int status;

	ASSERT_EQ(pid, wait4(pid, &status, 0, usage ?: &ignored)) {
		TH_LOG("wait4(%d): %s", pid, strerror(errno));
	}
	ASSERT_TRUE(WIFEXITED(status)) {
		TH_LOG("child %d ended with status %#x", pid, status);
	}
	return WEXITSTATUS(status);
}

/*
 * Ping-pong: a child pinned to the caller's CPU echoes each byte back,
 * so that each round trip switches both tasks out at least once.
 */
struct ping_pong {
	int to_child[2];
	int to_parent[2];
	int cpu;
	pid_t child;
};

static inline int pong(void *arg)
{
	struct ping_pong *pp = arg;
	char c;

	close(pp->to_child[1]);
	close(pp->to_parent[0]);
	CHILD_CHECK(pin_to_cpu(pp->cpu) == 0, "%s", strerror(errno));
	while (read(pp->to_child[0], &c, 1) == 1)
		CHILD_CHECK(write(pp->to_parent[1], &c, 1) == 1, "%s",
			    strerror(errno));
	return 0;
}

/* Pin the caller to one of its CPUs and start the echoing child there. */
static inline void ping_pong_start(struct __test_metadata *_metadata,
				   struct ping_pong *pp)
{
	ASSERT_EQ(1, allowed_cpus(&pp->cpu, 1));
	ASSERT_EQ(0, pin_to_cpu(pp->cpu));
	ASSERT_EQ(0, pipe(pp->to_child));
	ASSERT_EQ(0, pipe(pp->to_parent));
	pp->child = spawn(_metadata, pong, pp);
	close(pp->to_child[0]);
	close(pp->to_parent[1]);
}

/* @rounds round trips with the child. */
static inline void ping_pong_run(struct __test_metadata *_metadata,
				 struct ping_pong *pp, unsigned int rounds)
{
	char c = 'p';

	while (rounds--) {
		ASSERT_EQ(1, write(pp->to_child[1], &c, 1));
		ASSERT_EQ(1, read(pp->to_parent[0], &c, 1));
	}
}

/* End the child (EOF on its pipe) and reap it. */
static inline void ping_pong_stop(struct __test_metadata *_metadata,
				  struct ping_pong *pp)
{
	close(pp->to_child[1]);
	ASSERT_EQ(0, reap(_metadata, pp->child, NULL));
	close(pp->to_parent[0]);
}

struct unprivileged_call {
	child_fn fn;
	void *arg;
};

static inline int unprivileged_trampoline(void *arg)
{
	struct unprivileged_call *call = arg;

	CHILD_CHECK(drop_privileges() == 0, "%s", strerror(errno));
	CHILD_CHECK(geteuid() != 0, "still root");
	return call->fn(call->arg);
}

/*
 * run_unprivileged() - run @fn(@arg) in a child without privileges
 *
 * As root, the child becomes nobody first. The test fails unless @fn
 * returns 0.
 */
static inline void run_unprivileged(struct __test_metadata *_metadata,
				    child_fn fn, void *arg)
{
	struct unprivileged_call call = { .fn = fn, .arg = arg };
	pid_t pid = spawn(_metadata, unprivileged_trampoline, &call);

	ASSERT_EQ(0, reap(_metadata, pid, NULL));
}

/*
 * slab_read_baseline() - the settled active objects of each pmc_caches[]
 *
 * /proc/slabinfo must be readable (it needs root): callers check first.
 */
static inline void slab_read_baseline(struct __test_metadata *_metadata,
				      long *base)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(pmc_caches); i++) {
		base[i] = slab_settled(pmc_caches[i]);
		ASSERT_LE(0, base[i]) {
			TH_LOG("%s: %s", pmc_caches[i], base[i] == -ENOENT ?
			       "not in /proc/slabinfo" : strerror(-base[i]));
		}
	}
}

/*
 * expect_slab_baseline() - no pmc cache has grown past @base
 *
 * Frees go through RCU: give each cache up to @wait_ms to get back.
 */
static inline void expect_slab_baseline(struct __test_metadata *_metadata,
					const long *base, unsigned int wait_ms)
{
	unsigned int i, waited;
	long now;

	for (i = 0; i < ARRAY_SIZE(pmc_caches); i++) {
		for (waited = 0; ; waited += 100) {
			now = slab_active_objs(pmc_caches[i]);
			if (now <= base[i] || waited >= wait_ms)
				break;
			usleep(100 * 1000);
		}
		EXPECT_LE(now, base[i]) {
			TH_LOG("%s: %ld active objects before, %ld after",
			       pmc_caches[i], base[i], now);
		}
	}
}

#endif /* PMC_HARNESS_H */
