// SPDX-License-Identifier: GPL-2.0
/*
 * Selftests for the samples a DWARF unwinder needs: PMC_RECORD_REGS_USER
 * (the user registers, in perf's PERF_REG_* numbering) and
 * PMC_RECORD_STACK_USER (a copy of the user stack from the stack pointer
 * up). Software clocks sample everywhere, so these need no PMU. The
 * binary runs as root and as uid 65534: what a snapshot may hold is
 * the sampled task's own user memory, nothing else.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>

#include "../kselftest_harness.h"
#include "pmc_harness.h"

#define REGS_MASK	TEST_REGS_MASK
#define REC_UNWIND	(PMC_RECORD_IP | PMC_RECORD_REGS_USER | \
			 PMC_RECORD_STACK_USER)
#define CLOCK_PERIOD	NSEC_PER_MSEC
#define MARKER		0x5eedfacecafe0042ULL

/* Written by the spinning frame, so that its stack holds MARKER. */
static volatile __u64 *volatile marker_slot;

/* A user-mode task-clock sampler on the calling thread, with @type. */
static int unwind_sampler(struct __test_metadata *_metadata, __u32 type,
			  __u32 stack)
{
	struct pmc_attr attr;

	pmc_sw_attr(&attr, PMC_SW_TASK_CLOCK, 0);
	attr.irq_period = CLOCK_PERIOD;
	attr.record_type = type;
	attr.regs_user = type & PMC_RECORD_REGS_USER ? REGS_MASK : 0;
	attr.stack_user = stack;
	attr.disabled = 1;
	return counter_open(_metadata, &attr, 0, -1, -1);
}

static int open_errno(__u32 type, __u64 regs, __u32 stack)
{
	struct pmc_attr attr;

	pmc_sw_attr(&attr, PMC_SW_TASK_CLOCK, 0);
	attr.irq_period = CLOCK_PERIOD;
	attr.record_type = type;
	attr.regs_user = regs;
	attr.stack_user = stack;
	return pmc_open_errno(&attr, 0, -1, -1, 0);
}

/*
 * Spin with MARKER in this frame, below the caller's. @fd is enabled
 * and disabled from here, so that every sample, one taken in either
 * ioctl among them, has this frame above its stack pointer: a clock
 * also counts the time its task is held up (by a hypervisor, or by the
 * other vCPU of a QEMU that runs both on one thread), and that time may
 * fall anywhere, the ioctls included.
 */
static __attribute__((noinline)) void
spin_marked(struct __test_metadata *_metadata, int fd, __u64 ns)
{
	volatile __u64 frame[4] = { MARKER, MARKER, MARKER, MARKER };

	marker_slot = frame;
	counter_ioctl(_metadata, fd, PMC_IOC_ENABLE);
	burn_cpu(ns);
	counter_ioctl(_metadata, fd, PMC_IOC_DISABLE);
	marker_slot = NULL;
}

struct unwind_stats {
	unsigned int samples, user, marked, cut, lost_records;
	__u64 max_size;
	char err[200];
};

static bool stack_has_marker(const struct pmc_sample_ext *x)
{
	__u64 w, i;

	for (i = 0; i + 8 <= x->stack_dyn; i += 8) {
		memcpy(&w, (const char *)x->stack + i, 8);
		if (w == MARKER)
			return true;
	}
	return false;
}

/* Every stack word beyond what could be read is zero. */
static bool tail_zero(const struct pmc_sample_ext *x)
{
	const char *p = x->stack;
	__u64 i;

	for (i = x->stack_dyn; i < x->stack_size; i++)
		if (p[i])
			return false;
	return true;
}

/*
 * Read @fd's ring and check each sample: the ABI, SP and IP registers
 * (IP == the sample's IP in user mode; both user addresses always), the
 * stack snapshot's sizes. Return: false with the reason in st->err.
 */
static bool check_samples(struct pmc_ring *r, __u32 type, __u32 stack,
			  struct unwind_stats *st)
{
	struct pmc_sample s;
	struct pmc_sample_ext x;
	__u64 sp, ip;
	int ret;

	pmc_ring_begin(r);
	while ((ret = pmc_ring_next(r)) > 0) {
		if (!(r->rec->h.misc & PMC_EVENT_MISC_OVERFLOW)) {
			st->lost_records += r->rec->h.type == PMC_EVENT_LOST;
			continue;
		}
		if (pmc_sample_parse_ext(r->rec, type, REGS_MASK, &s, &x)) {
			snprintf(st->err, sizeof(st->err),
				 "sample of %u bytes does not parse: %s",
				 r->rec->h.size, strerror(errno));
			return false;
		}
		st->samples++;
		if (type & PMC_RECORD_REGS_USER) {
			if (x.regs_abi != TEST_REGS_ABI || x.nr_regs != 2) {
				snprintf(st->err, sizeof(st->err),
					 "abi %llu with %u registers",
					 (unsigned long long)x.regs_abi,
					 x.nr_regs);
				return false;
			}
			sp = pmc_sample_reg(&x, 0);
			ip = pmc_sample_reg(&x, 1);
			if (!sp || sp >= TEST_USER_END || !ip ||
			    ip >= TEST_USER_END ||
			    ((s.misc & PMC_EVENT_MISC_USER) && ip != s.ip)) {
				snprintf(st->err, sizeof(st->err),
					 "sp %#llx ip %#llx, sample ip %#llx misc %#x",
					 (unsigned long long)sp,
					 (unsigned long long)ip,
					 (unsigned long long)s.ip, s.misc);
				return false;
			}
			st->user += !!(s.misc & PMC_EVENT_MISC_USER);
		}
		if (type & PMC_RECORD_STACK_USER) {
			if (x.stack_size > stack || x.stack_size % 8 ||
			    x.stack_dyn > x.stack_size || !tail_zero(&x)) {
				snprintf(st->err, sizeof(st->err),
					 "stack size %llu dyn %llu (asked %u), tail zero %d",
					 (unsigned long long)x.stack_size,
					 (unsigned long long)x.stack_dyn, stack,
					 tail_zero(&x));
				return false;
			}
			if (x.stack_size > st->max_size)
				st->max_size = x.stack_size;
			st->marked += stack_has_marker(&x);
			st->cut += x.stack_dyn < x.stack_size;
		}
	}
	if (ret < 0) {
		snprintf(st->err, sizeof(st->err), "%s", r->err);
		return false;
	}
	pmc_ring_end(r);
	return true;
}

/* Sample spin_marked() for @ns of CPU time on this thread. */
static void sample_spin(struct __test_metadata *_metadata, __u32 type,
			__u32 stack, unsigned int pages, __u64 ns,
			struct unwind_stats *st)
{
	struct pmc_ring r;
	int fd = unwind_sampler(_metadata, type, stack);

	ASSERT_EQ(0, pmc_ring_map(&r, fd, pages, true)) {
		TH_LOG("mmap: %s", strerror(errno));
	}
	memset(st, 0, sizeof(*st));
	spin_marked(_metadata, fd, ns);
	EXPECT_TRUE(check_samples(&r, type, stack, st)) TH_LOG("%s", st->err);
	pmc_ring_unmap(&r);
	close(fd);
}

FIXTURE(unwind) {
};

FIXTURE_SETUP(unwind)
{
	require_pmc_open(_metadata);
}

FIXTURE_TEARDOWN(unwind)
{
}

/* The fields' rules, perf's: a valid mask, a stack size in u64s. */
TEST_F(unwind, attr_checks)
{
	EXPECT_EQ(0, open_errno(PMC_RECORD_REGS_USER, REGS_MASK, 0));
	EXPECT_EQ(EINVAL, open_errno(PMC_RECORD_REGS_USER, 0, 0));
	EXPECT_EQ(EINVAL, open_errno(PMC_RECORD_REGS_USER, 1ULL << 63, 0));
	EXPECT_EQ(EINVAL, open_errno(PMC_RECORD_REGS_USER, ~0ULL, 0));
	/* A field whose record bit is not set is still reserved. */
	EXPECT_EQ(EINVAL, open_errno(PMC_RECORD_IP, REGS_MASK, 0));
	EXPECT_EQ(EINVAL, open_errno(PMC_RECORD_IP, 0, 8));

	EXPECT_EQ(0, open_errno(PMC_RECORD_STACK_USER, 0, 0));
	EXPECT_EQ(0, open_errno(PMC_RECORD_STACK_USER, 0, 8));
	EXPECT_EQ(0, open_errno(PMC_RECORD_STACK_USER, 0, PMC_STACK_USER_MAX));
	EXPECT_EQ(EINVAL, open_errno(PMC_RECORD_STACK_USER, 0, 7));
	EXPECT_EQ(EINVAL, open_errno(PMC_RECORD_STACK_USER, 0, 65532));
	EXPECT_EQ(EINVAL, open_errno(PMC_RECORD_STACK_USER, 0,
				     PMC_STACK_USER_MAX + 8));
	EXPECT_EQ(EINVAL, open_errno(PMC_RECORD_STACK_USER, 0, 1U << 31));
	EXPECT_EQ(0, open_errno(REC_UNWIND, REGS_MASK, 8192));
}

/*
 * The registers are the interrupted user code's: IP is the sample's IP,
 * and the stack copy starts at SP, so it holds the spinning frame's
 * marker.
 */
TEST_F(unwind, regs_and_stack_of_the_spinning_frame)
{
	struct unwind_stats st;

	/* 100 samples of 8 kB and a little fit in 1 MB */
	sample_spin(_metadata, REC_UNWIND, 8192, 256, 100 * NSEC_PER_MSEC, &st);
	TH_LOG("%u samples, %u in user mode, %u with the marker, largest copy %llu",
	       st.samples, st.user, st.marked,
	       (unsigned long long)st.max_size);
	EXPECT_LE(10, st.samples);
	EXPECT_LE(st.samples / 2, st.user);
	/* Each one interrupts spin_marked() or what it calls. */
	EXPECT_EQ(st.samples, st.marked);
}

/* The registers alone, and the stack alone: each parses by itself. */
TEST_F(unwind, regs_without_stack_and_stack_without_regs)
{
	struct unwind_stats st;

	sample_spin(_metadata, PMC_RECORD_IP | PMC_RECORD_REGS_USER, 0, 8,
		    20 * NSEC_PER_MSEC, &st);
	EXPECT_LE(5, st.samples);
	sample_spin(_metadata, PMC_RECORD_STACK_USER, 4096, 64,
		    20 * NSEC_PER_MSEC, &st);
	EXPECT_LE(5, st.samples);
	EXPECT_EQ(st.samples, st.marked);
	/* stack_user 0: a size word of 0, and nothing after it. */
	sample_spin(_metadata, PMC_RECORD_STACK_USER, 0, 8,
		    20 * NSEC_PER_MSEC, &st);
	EXPECT_LE(5, st.samples);
	EXPECT_EQ(0, st.max_size);
}

/*
 * A record larger than the ring can never fit: counted lost, never
 * written in part.
 */
TEST_F(unwind, largest_copy_in_a_small_ring_is_lost)
{
	struct unwind_stats st;

	sample_spin(_metadata, REC_UNWIND, PMC_STACK_USER_MAX, 1,
		    10 * NSEC_PER_MSEC, &st);
	EXPECT_EQ(0, st.samples);
	EXPECT_LE(1, st.lost_records);
}

struct edge_thread {
	__u32 stack;
	struct unwind_stats st;
	bool ok;
	struct __test_metadata *meta;
};

static void *edge_thread_main(void *arg)
{
	struct edge_thread *t = arg;

	/* 20 samples of 64 kB fit in 2 MB */
	sample_spin(t->meta, REC_UNWIND, t->stack, 512, 20 * NSEC_PER_MSEC,
		    &t->st);
	t->ok = true;
	return NULL;
}

/*
 * A thread whose stack is the top of a mapping with no access above
 * it: the copy stops at the first page it cannot read, says so in
 * dyn_size, and the rest of it is zeroes, not the ring's old bytes.
 */
TEST_F(unwind, copy_stops_at_the_stack_end)
{
	size_t len = 256 * 1024, page = page_size();
	struct edge_thread t = { .stack = PMC_STACK_USER_MAX, .meta = _metadata };
	pthread_attr_t attr;
	pthread_t thread;
	char *map;

	map = mmap(NULL, len + page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, map);
	ASSERT_EQ(0, mprotect(map + len, page, PROT_NONE));
	ASSERT_EQ(0, pthread_attr_init(&attr));
	ASSERT_EQ(0, pthread_attr_setstack(&attr, map, len));
	ASSERT_EQ(0, pthread_create(&thread, &attr, edge_thread_main, &t));
	ASSERT_EQ(0, pthread_join(thread, NULL));
	pthread_attr_destroy(&attr);
	munmap(map, len + page);
	ASSERT_TRUE(t.ok);
	TH_LOG("%u samples, %u with the marker, %u cut short, largest copy %llu",
	       t.st.samples, t.st.marked, t.st.cut,
	       (unsigned long long)t.st.max_size);
	EXPECT_LE(5, t.st.samples);
	EXPECT_EQ(t.st.samples, t.st.marked);
	/* Less than 64 kB below the top, every copy ran into the guard page. */
	EXPECT_EQ(t.st.samples, t.st.cut);
}

TEST_HARNESS_MAIN
