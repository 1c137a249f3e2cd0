// SPDX-License-Identifier: GPL-2.0
/*
 * Selftests for pmc_open(2) sampling: the mmap()ed ring buffer, its
 * records, poll(), SIGIO, PMC_IOC_REFRESH and the locked-memory limits.
 *
 * Software counters sample everywhere; the one hardware test needs a
 * PMU (in QEMU: a boot with pmc_emu=MODEL) and skips without one. The
 * binary runs as root and as an unprivileged user: counters exclude
 * kernel mode (pmc_paranoid defaults to 2), and the tests about what
 * unprivileged users may see run in a child that drops root first.
 *
 * Build with frame pointers (see the Makefile): the callchain test
 * walks them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/auxv.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "../kselftest_harness.h"
#include "pmc_harness.h"

#define MLOCK_KB_PATH	"/proc/sys/kernel/pmc_mlock_kb"

/* comm_records execs this binary with this argument: exit at once. */
#define EXEC_EXIT_ARG	"--pmc-sample-exec-exit"

/*
 * User addresses end here; kernel addresses start at KERNEL_START
 * (x86-64: 47-bit halves; arm64: 48-bit ones).
 */
#if defined(__aarch64__)
#define USER_END	0x0001000000000000ULL
#define KERNEL_START	0xffff000000000000ULL
#else
#define USER_END	0x0000800000000000ULL
#define KERNEL_START	0xffff800000000000ULL
#endif

#define CALLCHAIN_MAX	64
#define RB_MAX_ORDER	16

#define SAMPLE_MISC_USER	(PMC_EVENT_MISC_OVERFLOW | PMC_EVENT_MISC_USER)

/* Fields of a sample, as record_type bits. */
#define REC_BASIC	(PMC_RECORD_IP | PMC_RECORD_TID | PMC_RECORD_TIME)
#define REC_FAULT	(REC_BASIC | PMC_RECORD_ADDR)
/* Bytes of a REC_FAULT sample: header, ip, pid/tid, time, addr. */
#define FAULT_SAMPLE_SIZE	40

/* A sampling counter that never overflows, for side records only. */
#define NEVER_PERIOD	(1ULL << 62)

/* Stop checking sample after sample once one check failed. */
#define FAILED()	(_metadata->exit_code == KSFT_FAIL)

static pid_t sys_gettid(void)
{
	return syscall(SYS_gettid);
}

static bool user_addr(__u64 addr)
{
	return addr && addr < USER_END;
}

/*
 * The ring buffer, read with libpmc at explicit positions: rb_begin()
 * reads data_head, rb_next() copies out one record at a time, rb_done()
 * hands the space back by writing data_tail in a read-write mapping.
 */
struct rb {
	struct pmc_ring r;
	__u64 pos;		/* the next record */
	__u64 head;		/* data_head at rb_begin() */
};

/* Map @data_pages of @fd's buffer. Return: 0, or mmap()'s errno. */
static int rb_map(struct rb *rb, int fd, unsigned int data_pages, bool rw)
{
	memset(rb, 0, sizeof(*rb));
	return pmc_ring_map(&rb->r, fd, data_pages, rw) ? errno : 0;
}

static void rb_unmap(struct rb *rb)
{
	pmc_ring_unmap(&rb->r);
}

/* Snapshot data_head; records up to it may be read after this. */
static __u64 rb_begin(struct rb *rb)
{
	rb->head = pmc_ring_data_head(&rb->r);
	return rb->head;
}

/* Return: 1 with the next record in @rec, 0 at the end, -1 if malformed. */
static int rb_next(struct rb *rb, union pmc_record *rec)
{
	return pmc_ring_read_at(&rb->r, &rb->pos, rb->head, rec);
}

/* Give the records read so far back to the kernel. */
static void rb_done(struct rb *rb)
{
	rb->r.tail = rb->pos;
	pmc_ring_end(&rb->r);
}

/* time_enabled and time_running of page 0, under its seqcount. */
static void rb_times(struct rb *rb, __u64 *enabled, __u64 *running)
{
	pmc_ring_times(&rb->r, enabled, running);
}

/* A sample record, unpacked. */
struct sample {
	__u16 misc;
	__u64 ip;
	__u32 pid, tid;
	__u64 time;
	__u64 addr;
	__u64 period;
	__u64 group_nr;
	__u16 nr, hv, kernel, user;	/* callchain */
	__u64 ips[CALLCHAIN_MAX];
};

/*
 * parse_sample() - unpack a sample with the fields of @type
 *
 * Return: true if the record is a sample of @type whose fields fill it
 * exactly; else false with the reason in @err.
 */
static bool parse_sample(const union pmc_record *rec, __u32 type, struct sample *s,
			 char *err, size_t errlen)
{
	const __u64 *p = rec->w + 1, *end = rec->w + rec->h.size / 8;
	__u16 counts[4];

#define NEED(n) do {							\
	if ((__u64)(end - p) < (__u64)(n)) {				\
		snprintf(err, errlen, "sample of %u bytes too short",	\
			 rec->h.size);					\
		return false;						\
	}								\
} while (0)

	memset(s, 0, offsetof(struct sample, ips));
	s->misc = rec->h.misc;
	if (rec->h.type != type || !(rec->h.misc & PMC_EVENT_MISC_OVERFLOW)) {
		snprintf(err, errlen, "sample type %u misc %#x, want type %u",
			 rec->h.type, rec->h.misc, type);
		return false;
	}
	if (type & PMC_RECORD_IP) {
		NEED(1);
		s->ip = *p++;
	}
	if (type & PMC_RECORD_TID) {
		NEED(1);
		/* u32 pid, tid */
		memcpy(&s->pid, p, 4);
		memcpy(&s->tid, (const char *)p + 4, 4);
		p++;
	}
	if (type & PMC_RECORD_TIME) {
		NEED(1);
		s->time = *p++;
	}
	if (type & PMC_RECORD_ADDR) {
		NEED(1);
		s->addr = *p++;
	}
	if (type & PMC_RECORD_PERIOD) {
		NEED(1);
		s->period = *p++;
	}
	if (type & PMC_RECORD_GROUP) {
		NEED(1);
		s->group_nr = *p++;
		NEED(2 * s->group_nr);
		p += 2 * s->group_nr;
	}
	if (type & PMC_RECORD_CALLCHAIN) {
		NEED(1);
		/* u16 nr, hv, kernel, user */
		memcpy(counts, p++, sizeof(counts));
		s->nr = counts[0];
		s->hv = counts[1];
		s->kernel = counts[2];
		s->user = counts[3];
		if (s->nr > CALLCHAIN_MAX ||
		    s->nr != s->hv + s->kernel + s->user) {
			snprintf(err, errlen,
				 "callchain nr %u hv %u kernel %u user %u",
				 s->nr, s->hv, s->kernel, s->user);
			return false;
		}
		NEED(s->nr);
		memcpy(s->ips, p, s->nr * sizeof(*p));
		p += s->nr;
	}
	if (p != end) {
		snprintf(err, errlen, "sample of %u bytes, fields end at %zu",
			 rec->h.size, (size_t)((const unsigned char *)p - rec->b));
		return false;
	}
	return true;
#undef NEED
}

/* libpmc's pmc_sample_parse() finds what parse_sample() found in @rec. */
static bool libpmc_agrees(const union pmc_record *rec, __u32 type,
			  const struct sample *s, char *err, size_t errlen)
{
	struct pmc_sample l;
	unsigned int i;

	if (pmc_sample_parse(rec, type, &l)) {
		snprintf(err, errlen, "pmc_sample_parse: %s", strerror(errno));
		return false;
	}
	if (l.misc != s->misc || l.ip != s->ip || l.pid != s->pid ||
	    l.tid != s->tid || l.time != s->time || l.addr != s->addr ||
	    l.nr_values != s->group_nr || l.chain_nr != s->nr ||
	    l.chain_kernel != s->kernel || l.chain_user != s->user) {
		snprintf(err, errlen, "pmc_sample_parse disagrees: ip %#llx tid %u chain %u",
			 (unsigned long long)l.ip, l.tid, l.chain_nr);
		return false;
	}
	for (i = 0; i < s->nr; i++) {
		if (pmc_sample_chain_ip(&l, i) != s->ips[i]) {
			snprintf(err, errlen, "pmc_sample_parse: chain[%u] differs", i);
			return false;
		}
	}
	return true;
}

/* Samples and LOST records read from a buffer, over any number of reads. */
struct records {
	struct sample *s;
	size_t nr, cap;
	unsigned int nr_lost;	/* LOST records */
	__u64 lost;		/* their total */
	__u64 lost_id;		/* id of the last one */
	unsigned int nr_other;	/* MMAP, MUNMAP, COMM */
	char err[200];
};

/* Room for @cap samples up front, so reading does not fault much. */
static int records_init(struct records *r, size_t cap)
{
	memset(r, 0, sizeof(*r));
	r->s = calloc(cap, sizeof(*r->s));
	if (!r->s)
		return -1;
	r->cap = cap;
	return 0;
}

static void records_free(struct records *r)
{
	free(r->s);
	r->s = NULL;
	r->nr = r->cap = 0;
}

/*
 * rb_collect() - read every record up to data_head into @r, and drain
 *
 * Samples must have @type. Return: true, or false with the reason in
 * r->err.
 */
static bool rb_collect(struct rb *rb, __u32 type, struct records *r)
{
	static union pmc_record rec;
	const struct lost_rec *lost;
	struct sample *grown;
	int ret;

	rb_begin(rb);
	while ((ret = rb_next(rb, &rec)) > 0) {
		if (!(rec.h.misc & PMC_EVENT_MISC_OVERFLOW)) {
			if (rec.h.type != PMC_EVENT_LOST) {
				r->nr_other++;
				continue;
			}
			if (rec.h.size != sizeof(*lost)) {
				snprintf(r->err, sizeof(r->err),
					 "LOST record of %u bytes", rec.h.size);
				return false;
			}
			lost = (const struct lost_rec *)&rec;
			r->nr_lost++;
			r->lost += lost->lost;
			r->lost_id = lost->id;
			continue;
		}
		if (r->nr == r->cap) {
			r->cap = r->cap ? 2 * r->cap : 256;
			grown = realloc(r->s, r->cap * sizeof(*r->s));
			if (!grown) {
				snprintf(r->err, sizeof(r->err), "out of memory");
				return false;
			}
			r->s = grown;
		}
		if (!parse_sample(&rec, type, &r->s[r->nr], r->err,
				  sizeof(r->err)) ||
		    !libpmc_agrees(&rec, type, &r->s[r->nr], r->err,
				   sizeof(r->err)))
			return false;
		r->nr++;
	}
	if (ret < 0) {
		snprintf(r->err, sizeof(r->err), "%s", rb->r.err);
		return false;
	}
	rb_done(rb);
	return true;
}

/* A user-mode software sampler's attr. */
static void sampler_attr(struct pmc_attr *attr, unsigned int id,
			 __u64 period, __u32 type, bool disabled)
{
	pmc_sw_attr(attr, id, 0);
	attr->irq_period = period;
	attr->record_type = type;
	attr->disabled = disabled;
}

/* A user-mode sampling software counter; errno on failure. */
static int sampler_open_errno(unsigned int id, __u64 period, __u32 type,
			      pid_t pid, bool disabled)
{
	struct pmc_attr attr;

	sampler_attr(&attr, id, period, type, disabled);
	return pmc_open(&attr, pid, -1, -1, 0);
}

/* A user-mode software sampler on @pid, or fail the test. */
static int sampler_open(struct __test_metadata *_metadata, unsigned int id,
			__u64 period, __u32 type, pid_t pid, bool disabled)
{
	struct pmc_attr attr;

	sampler_attr(&attr, id, period, type, disabled);
	return counter_open(_metadata, &attr, pid, -1, -1);
}

static void map_buffer(struct __test_metadata *_metadata, struct rb *rb,
		       int fd, unsigned int data_pages, bool rw)
{
	int err = rb_map(rb, fd, data_pages, rw);

	ASSERT_EQ(0, err) {
		TH_LOG("mmap of 1+%u pages (%s): %s", data_pages,
		       rw ? "read-write" : "read-only", strerror(err));
	}
}

static void collect(struct __test_metadata *_metadata, struct rb *rb,
		    __u32 type, struct records *r)
{
	ASSERT_TRUE(rb_collect(rb, type, r)) TH_LOG("%s", r->err);
}

static void records_reserve(struct __test_metadata *_metadata,
			    struct records *r, size_t cap)
{
	ASSERT_EQ(0, records_init(r, cap));
}

/* Index of the page of @region that @addr is in, or -1. */
static long region_page(const char *region, size_t nr, __u64 addr)
{
	__u64 start = (unsigned long)region;

	if (addr < start || addr >= start + nr * page_size())
		return -1;
	return (addr - start) / page_size();
}

/*
 * The hot loop and its two callers, in this order, each with a frame
 * pointer whatever the compiler flags: hot_outer() calls hot_middle(),
 * which calls hot_loop(), which counts @iters down. Each function's
 * range is [it, the next one); hot_end marks the end of the last.
 */
void pmc_hot_loop(unsigned long iters);
void pmc_hot_middle(unsigned long iters);
void pmc_hot_outer(unsigned long iters);
extern const char pmc_hot_end[];

#if defined(__x86_64__)
#define HOT_PROLOGUE	"	push %rbp\n	mov %rsp, %rbp\n"
#define HOT_EPILOGUE	"	pop %rbp\n	ret\n"
#define HOT_CALL(f)	"	call " f "\n"
#define HOT_LOOP	"	test %rdi, %rdi\n	jz 2f\n"		\
			"1:	dec %rdi\n	jnz 1b\n2:\n"
#define HOT_TRAP	"	int3\n"
#elif defined(__aarch64__)
#define HOT_PROLOGUE	"	stp x29, x30, [sp, #-16]!\n	mov x29, sp\n"
#define HOT_EPILOGUE	"	ldp x29, x30, [sp], #16\n	ret\n"
#define HOT_CALL(f)	"	bl " f "\n"
#define HOT_LOOP	"	cbz x0, 2f\n"				\
			"1:	subs x0, x0, #1\n	b.ne 1b\n2:\n"
#define HOT_TRAP	"	brk #0\n"
#else
#error "pmc_sample_test: no hot loop for this architecture"
#endif

asm(".pushsection .text\n"
    ".p2align 4\n"
    ".globl pmc_hot_loop\n"
    ".type pmc_hot_loop, @function\n"
    "pmc_hot_loop:\n"
    HOT_PROLOGUE HOT_LOOP HOT_EPILOGUE
    ".size pmc_hot_loop, . - pmc_hot_loop\n"
    ".p2align 4\n"
    ".globl pmc_hot_middle\n"
    ".type pmc_hot_middle, @function\n"
    "pmc_hot_middle:\n"
    HOT_PROLOGUE HOT_CALL("pmc_hot_loop") HOT_EPILOGUE
    ".size pmc_hot_middle, . - pmc_hot_middle\n"
    ".p2align 4\n"
    ".globl pmc_hot_outer\n"
    ".type pmc_hot_outer, @function\n"
    "pmc_hot_outer:\n"
    HOT_PROLOGUE HOT_CALL("pmc_hot_middle") HOT_EPILOGUE
    ".size pmc_hot_outer, . - pmc_hot_outer\n"
    ".globl pmc_hot_end\n"
    "pmc_hot_end:\n"
    HOT_TRAP
    ".popsection\n");

#define hot_loop	pmc_hot_loop
#define hot_middle	pmc_hot_middle
#define hot_outer	pmc_hot_outer
#define hot_end		pmc_hot_end

#define FN(f)	((__u64)(unsigned long)(f))

static bool in_fn(__u64 ip, __u64 start, __u64 end)
{
	return ip >= start && ip < end;
}

static void check_hot_layout(struct __test_metadata *_metadata)
{
	ASSERT_TRUE(FN(hot_loop) < FN(hot_middle) &&
		    FN(hot_middle) < FN(hot_outer) &&
		    FN(hot_outer) < FN(hot_end) &&
		    FN(hot_end) - FN(hot_loop) < 4096) {
		TH_LOG("functions out of order: hot_loop %#llx hot_middle %#llx hot_outer %#llx hot_end %#llx",
		       FN(hot_loop), FN(hot_middle), FN(hot_outer),
		       FN(hot_end));
	}
}

/* Iterations of hot_loop() that take at least @ns of CPU time. */
static unsigned long hot_calibrate(__u64 ns)
{
	unsigned long iters = 1UL << 12;
	__u64 start;

	for (;;) {
		start = thread_cputime_ns();
		hot_outer(iters);
		if (thread_cputime_ns() - start >= ns || iters >= 1UL << 40)
			return iters;
		iters *= 2;
	}
}

/* Spend @ns of CPU time in hot_loop(), @iters at a time. */
static void hot_run(unsigned long iters, __u64 ns)
{
	__u64 start = thread_cputime_ns();

	while (thread_cputime_ns() - start < ns)
		hot_outer(iters);
}

/* Children */

/*
 * A child that touches its fresh pages when told to: the parent writes
 * a count n (1..255) and reads it back once n more pages are touched;
 * 0 makes the child exit.
 */
struct stepper {
	int cmd[2];
	int ack[2];
	char *pages;
	size_t nr_pages;
	size_t next;
	pid_t pid;
};

static int stepper_main(void *arg)
{
	struct stepper *st = arg;
	unsigned char n;

	close(st->cmd[1]);
	close(st->ack[0]);
	while (read(st->cmd[0], &n, 1) == 1) {
		if (!n)
			return 0;
		CHILD_CHECK(st->next + n <= st->nr_pages, "out of pages");
		touch_pages(st->pages + st->next * page_size(), n);
		st->next += n;
		CHILD_CHECK(write(st->ack[1], &n, 1) == 1, "%s",
			    strerror(errno));
	}
	return 1;
}

static void stepper_spawn(struct __test_metadata *_metadata,
			  struct stepper *st, size_t nr_pages)
{
	memset(st, 0, sizeof(*st));
	st->nr_pages = nr_pages;
	st->pages = fresh_pages(_metadata, nr_pages);
	ASSERT_EQ(0, pipe(st->cmd));
	ASSERT_EQ(0, pipe(st->ack));
	st->pid = spawn(_metadata, stepper_main, st);
	close(st->cmd[0]);
	close(st->ack[1]);
}

static void stepper_send(struct __test_metadata *_metadata,
			 struct stepper *st, unsigned char n)
{
	ASSERT_EQ(1, write(st->cmd[1], &n, 1));
}

static void stepper_wait(struct __test_metadata *_metadata,
			 struct stepper *st)
{
	unsigned char n;

	ASSERT_EQ(1, read(st->ack[0], &n, 1)) TH_LOG("stepper child died");
}

/* Touch @n more pages in the child and wait until it has. */
static void stepper_step(struct __test_metadata *_metadata,
			 struct stepper *st, unsigned char n)
{
	stepper_send(_metadata, st, n);
	stepper_wait(_metadata, st);
}

static void stepper_quit(struct __test_metadata *_metadata,
			 struct stepper *st)
{
	stepper_send(_metadata, st, 0);
	ASSERT_EQ(0, reap(_metadata, st->pid, NULL));
	close(st->cmd[1]);
	close(st->ack[0]);
}

/*
 * Every period a clock counted is a sample or counted lost: @n is
 * value / period, less the period in progress, give or take the ticks
 * of the timer's clock against the counter's over the run.
 */
static bool periods_accounted(__u64 value, __u64 period, __u64 n)
{
	return near(n, value / period, 1, 2);
}

static int by_value(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

/* The median time between consecutive samples, or 0 if under 3. */
static __u64 median_gap(struct __test_metadata *_metadata,
			const struct records *r)
{
	__u64 *gap, median;
	size_t i;

	if (r->nr < 3)
		return 0;
	gap = calloc(r->nr - 1, sizeof(*gap));
	ASSERT_NE(NULL, gap);
	for (i = 1; i < r->nr; i++)
		gap[i - 1] = r->s[i].time - r->s[i - 1].time;
	qsort(gap, r->nr - 1, sizeof(*gap), by_value);
	median = gap[(r->nr - 1) / 2];
	free(gap);
	return median;
}

/* The fixture */

FIXTURE(sample) {
	bool root;
};

FIXTURE_SETUP(sample)
{
	self->root = geteuid() == 0;
	require_pmc_open(_metadata);
}

FIXTURE_TEARDOWN(sample)
{
}

/*
 * A 1 ms task-clock sampler over 200 ms of CPU time: one sample per
 * millisecond the clock counted, in time order, all of this thread in
 * user mode. While hrtimers run from the tick (resolution a tick, not
 * 1 ns), the timer fires once a tick and the other periods are lost:
 * every period is still a sample or counted lost.
 */
TEST_F(sample, task_clock_1ms)
{
	const __u64 period = NSEC_PER_MSEC, slack = NSEC_PER_MSEC;
	const __u64 res = timer_resolution_ns();
	__u64 value, cpu, t0, t1, prev = 0, enabled, running, gap;
	pid_t pid = getpid(), tid = sys_gettid();
	struct records r;
	struct sample *s;
	struct rb rb;
	size_t i;
	int fd;

	fd = sampler_open(_metadata, PMC_SW_TASK_CLOCK, period, REC_BASIC, 0,
			  true);
	map_buffer(_metadata, &rb, fd, 4, true);
	EXPECT_EQ(1, rb.r.page->version);
	EXPECT_EQ(1, rb.r.page->compat_version);
	EXPECT_EQ(0, rb.r.page->index);
	EXPECT_EQ(0, pmc_ring_data_head(&rb.r));
	records_reserve(_metadata, &r, 512);

	t0 = monotonic_ns();
	counter_ioctl(_metadata, fd, PMC_IOC_ENABLE);
	cpu = burn_cpu(200 * NSEC_PER_MSEC);
	counter_ioctl(_metadata, fd, PMC_IOC_DISABLE);
	t1 = monotonic_ns();
	value = counter_value(_metadata, fd);
	collect(_metadata, &rb, REC_BASIC, &r);

	/* room for all samples: LOST records are periods late timers skipped */
	EXPECT_EQ(0, r.nr_other);
	EXPECT_TRUE(periods_accounted(value, period, r.nr + r.lost)) {
		TH_LOG("%zu samples + %llu lost; the clock counted %llu ns",
		       r.nr, (unsigned long long)r.lost,
		       (unsigned long long)value);
	}
	EXPECT_EQ(r.nr + r.lost, nr_overflows(_metadata, fd));
	if (res > period) {
		TH_LOG("timer resolution %llu ns: %zu samples, %llu lost",
		       (unsigned long long)res, r.nr,
		       (unsigned long long)r.lost);
		EXPECT_LT(0, r.lost);
	} else {
		/*
		 * The timer fires each period, not each tick: most samples
		 * are a period apart. How many periods are lost is the
		 * host's: a vCPU the host (or QEMU's round-robin) stops
		 * still sees its clock run, and its timer fires late.
		 */
		gap = median_gap(_metadata, &r);
		EXPECT_TRUE(gap >= period / 2 && gap <= period + period / 2) {
			TH_LOG("median %llu ns between %zu samples (%llu lost) of a %llu ns period",
			       (unsigned long long)gap, r.nr,
			       (unsigned long long)r.lost,
			       (unsigned long long)period);
		}
	}
	/* at least the CPU time it burnt, at most the time it was on */
	EXPECT_TRUE(value + slack >= cpu && value <= t1 - t0 + slack) {
		TH_LOG("the clock counted %llu ns: %llu ns of CPU time burnt in %llu ns enabled",
		       (unsigned long long)value, (unsigned long long)cpu,
		       (unsigned long long)(t1 - t0));
	}

	for (i = 0; i < r.nr; i++) {
		s = &r.s[i];
		EXPECT_EQ(SAMPLE_MISC_USER, s->misc) TH_LOG("sample %zu", i);
		EXPECT_EQ(pid, s->pid) TH_LOG("sample %zu", i);
		EXPECT_EQ(tid, s->tid) TH_LOG("sample %zu", i);
		EXPECT_TRUE(user_addr(s->ip)) {
			TH_LOG("sample %zu: ip %#llx", i,
			       (unsigned long long)s->ip);
		}
		EXPECT_LT(prev, s->time) TH_LOG("sample %zu: time went back", i);
		EXPECT_TRUE(s->time + slack >= t0 && s->time <= t1 + slack) {
			TH_LOG("sample %zu: time %llu outside [%llu, %llu]", i,
			       (unsigned long long)s->time,
			       (unsigned long long)t0, (unsigned long long)t1);
		}
		prev = s->time;
		if (FAILED())
			break;
	}

	/* page 0 carries the counter's times */
	rb_times(&rb, &enabled, &running);
	EXPECT_GE(enabled, running);
	EXPECT_GE(value + slack, running);

	records_free(&r);
	rb_unmap(&rb);
	close(fd);
}

/*
 * Page faults with period 1 and ADDR: one sample per fresh page, with
 * that page's address; other faults may happen, but not in the region.
 */
TEST_F(sample, page_fault_addr)
{
	const size_t nr = 64;
	unsigned char seen[64] = { };
	size_t i, in_region = 0;
	struct records r;
	struct sample *s;
	struct rb rb;
	char *region;
	long page;
	int fd;

	region = fresh_pages(_metadata, nr);
	fd = sampler_open(_metadata, PMC_SW_PAGE_FAULTS, 1, REC_FAULT, 0, true);
	map_buffer(_metadata, &rb, fd, 4, true);
	records_reserve(_metadata, &r, 256);

	counter_ioctl(_metadata, fd, PMC_IOC_ENABLE);
	touch_pages(region, nr);
	counter_ioctl(_metadata, fd, PMC_IOC_DISABLE);
	collect(_metadata, &rb, REC_FAULT, &r);

	EXPECT_EQ(0, r.nr_lost);
	EXPECT_EQ(r.nr, nr_overflows(_metadata, fd));
	for (i = 0; i < r.nr; i++) {
		s = &r.s[i];
		page = region_page(region, nr, s->addr);
		if (page < 0)
			continue;
		in_region++;
		EXPECT_EQ(0, seen[page]) TH_LOG("page %ld faulted twice", page);
		seen[page]++;
		EXPECT_EQ((unsigned long)region + page * page_size(),
			  s->addr & ~(__u64)(page_size() - 1));
		EXPECT_EQ(SAMPLE_MISC_USER, s->misc);
		EXPECT_EQ(getpid(), s->pid);
		EXPECT_EQ(sys_gettid(), s->tid);
		EXPECT_TRUE(user_addr(s->ip)) {
			TH_LOG("ip %#llx", (unsigned long long)s->ip);
		}
		if (i)
			EXPECT_LT(r.s[i - 1].time, s->time);
		if (FAILED())
			break;
	}
	EXPECT_EQ(nr, in_region) {
		TH_LOG("%zu of %zu samples in the %zu touched pages", in_region,
		       r.nr, nr);
	}

	records_free(&r);
	rb_unmap(&rb);
	close(fd);
	munmap(region, nr * page_size());
}

/*
 * Sample every @period page faults, @rand percent randomized, while
 * touching @nr fresh pages in order: the pages of consecutive samples
 * are one period apart. Fills @gaps (up to @max) and returns how many.
 */
static size_t fault_gaps(struct __test_metadata *_metadata, __u64 period,
			 unsigned int rand, size_t nr, long *gaps, size_t max)
{
	struct pmc_attr attr;
	struct records r;
	struct rb rb;
	size_t i, n = 0;
	long page, last = -1;
	char *region;
	int fd;

	region = fresh_pages(_metadata, nr);
	pmc_sw_attr(&attr, PMC_SW_PAGE_FAULTS, 0);
	attr.irq_period = period;
	attr.record_type = REC_FAULT;
	attr.period_rand = rand;
	attr.disabled = 1;
	fd = counter_open(_metadata, &attr, 0, -1, -1);
	map_buffer(_metadata, &rb, fd, 16, true);
	records_reserve(_metadata, &r, nr / period * 2 + 16);

	counter_ioctl(_metadata, fd, PMC_IOC_ENABLE);
	touch_pages(region, nr);
	counter_ioctl(_metadata, fd, PMC_IOC_DISABLE);
	collect(_metadata, &rb, REC_FAULT, &r);
	EXPECT_EQ(0, r.nr_lost);

	for (i = 0; i < r.nr && n < max; i++) {
		page = region_page(region, nr, r.s[i].addr);
		if (page < 0)
			continue;
		if (last >= 0)
			gaps[n++] = page - last;
		last = page;
	}
	records_free(&r);
	rb_unmap(&rb);
	close(fd);
	munmap(region, nr * page_size());
	return n;
}

/*
 * period_rand: each period is drawn from irq_period +- N%, uniformly,
 * so the gaps vary over the whole range and average to irq_period;
 * without it every gap is irq_period. A fault outside the region
 * (the stack, say) may shorten one gap by one.
 */
TEST_F(sample, period_rand)
{
	const __u64 period = 20;
	const size_t nr = 4000;
	static long gaps[512];
	bool seen[2 * 20 + 1] = { };
	long sum = 0, lo = period, hi = period;
	size_t n, i, distinct = 0;
	struct pmc_attr attr;

	n = fault_gaps(_metadata, period, 0, nr, gaps, ARRAY_SIZE(gaps));
	ASSERT_LE(nr / period - 2, n);
	for (i = 0; i < n; i++)
		EXPECT_TRUE(gaps[i] == period || gaps[i] == period - 1) {
			TH_LOG("fixed period: gap %zu is %ld pages", i, gaps[i]);
			break;
		}

	n = fault_gaps(_metadata, period, 50, nr, gaps, ARRAY_SIZE(gaps));
	ASSERT_LE(100, n) TH_LOG("%zu samples", n);
	for (i = 0; i < n; i++) {
		sum += gaps[i];
		lo = gaps[i] < lo ? gaps[i] : lo;
		hi = gaps[i] > hi ? gaps[i] : hi;
		if (gaps[i] >= 0 && gaps[i] <= 2 * (long)period &&
		    !seen[gaps[i]]) {
			seen[gaps[i]] = true;
			distinct++;
		}
	}
	TH_LOG("period %llu +- 50%%: %zu gaps, %ld..%ld, mean %.2f, %zu distinct",
	       (unsigned long long)period, n, lo, hi, (double)sum / n,
	       distinct);
	EXPECT_LE(period / 2 - 1, lo);
	EXPECT_GE(period * 3 / 2, hi);
	EXPECT_LE(15, distinct);
	/* the standard error of the mean is about 0.4 pages here */
	EXPECT_GT(0.1 * period * n, (double)labs(sum - (long)(period * n)));

	/* beyond PMC_PERIOD_RAND_MAX, or without a period: EINVAL */
	pmc_sw_attr(&attr, PMC_SW_PAGE_FAULTS, 0);
	attr.irq_period = period;
	attr.period_rand = PMC_PERIOD_RAND_MAX + 1;
	EXPECT_EQ(EINVAL, pmc_open_errno(&attr, 0, -1, -1, 0));
	attr.irq_period = 0;
	attr.period_rand = 10;
	EXPECT_EQ(EINVAL, pmc_open_errno(&attr, 0, -1, -1, 0));
}

/* Where the samples outside [@start, @end) went: up to 8 ips, by count. */
static void log_other_ips(struct __test_metadata *_metadata,
			  struct records *r, __u64 start, __u64 end)
{
	struct { __u64 ip; size_t n, first, last; } ips[8] = { };
	size_t i, j, nr_ips = 0, others = 0;

	for (i = 0; i < r->nr; i++) {
		if (in_fn(r->s[i].ip, start, end))
			continue;
		others++;
		for (j = 0; j < nr_ips && ips[j].ip != r->s[i].ip; j++)
			;
		if (j == nr_ips) {
			if (nr_ips == 8)
				continue;
			ips[nr_ips++] = (typeof(ips[0])){ r->s[i].ip, 0, i, i };
		}
		ips[j].n++;
		ips[j].last = i;
	}
	for (j = 0; j < nr_ips; j++)
		TH_LOG("ip %#llx: %zu samples, the %zuth to the %zuth, misc %#x",
		       (unsigned long long)ips[j].ip, ips[j].n, ips[j].first,
		       ips[j].last, r->s[ips[j].first].misc);
	TH_LOG("%zu samples outside it in all", others);
}

/*
 * Emulated cycles sampled every 100000 (100 us of CPU time) while the
 * task runs a hot loop: most samples land in that loop.
 */
TEST_F(sample, hot_loop_ips)
{
	const char *emu = cmdline_emu();
	__u64 loop = FN(hot_loop), loop_end = FN(hot_middle);
	size_t i, in_loop = 0;
	struct pmc_attr attr;
	unsigned long iters;
	struct records r;
	struct rb rb;
	int fd, err;

	check_hot_layout(_metadata);
	memset(&attr, 0, sizeof(attr));
	attr.config = PMC_CONFIG(PMC_TYPE_HARDWARE, PMC_HW_CPU_CYCLES);
	attr.irq_period = 100000;
	attr.record_type = PMC_RECORD_IP | PMC_RECORD_TID;
	attr.exclude_kernel = 1;
	attr.disabled = 1;
	fd = pmc_open(&attr, 0, -1, -1, 0);
	err = errno;
	if (fd < 0 && err == ENODEV && !emu)
		SKIP(return, "no hardware PMU (boot with pmc_emu=MODEL for the emulated one)");
	ASSERT_LE(0, fd) {
		TH_LOG("pmc_open(cycles, period 100000)%s%s: %s",
		       emu ? " with pmc_emu=" : "", emu ?: "", strerror(err));
	}
	map_buffer(_metadata, &rb, fd, 16, true);
	records_reserve(_metadata, &r, 2048);

	iters = hot_calibrate(2 * NSEC_PER_MSEC);
	counter_ioctl(_metadata, fd, PMC_IOC_ENABLE);
	hot_run(iters, 100 * NSEC_PER_MSEC);
	counter_ioctl(_metadata, fd, PMC_IOC_DISABLE);
	collect(_metadata, &rb, attr.record_type, &r);

	/* 100 ms at 1 GHz is 1000 periods; some NMIs may come late */
	ASSERT_LE(100, r.nr) TH_LOG("only %zu samples", r.nr);
	EXPECT_EQ(r.nr + r.lost, nr_overflows(_metadata, fd));
	for (i = 0; i < r.nr; i++) {
		if (in_fn(r.s[i].ip, loop, loop_end))
			in_loop++;
		EXPECT_EQ(getpid(), r.s[i].pid);
		EXPECT_EQ(sys_gettid(), r.s[i].tid);
		if (FAILED())
			break;
	}
	/*
	 * Most, not all: the model's interrupt comes from a timer tick,
	 * and the tick's interrupted registers are the sample's (90% on
	 * 6.12, 89.7% once on 7.3 with the NMI raised after the tick).
	 */
	EXPECT_LT(r.nr * 8, in_loop * 10) {
		TH_LOG("%zu of %zu samples in hot_loop [%#llx, %#llx)",
		       in_loop, r.nr, loop, loop_end);
		log_other_ips(_metadata, &r, loop, loop_end);
	}

	records_free(&r);
	rb_unmap(&rb);
	close(fd);
}

#define REC_FREQ	(REC_BASIC | PMC_RECORD_PERIOD)
#define FREQ		1000	/* samples a second of running time */

/*
 * The samples of a rate over @ns of running time: about FREQ a second
 * once the period has settled, which from a period of 1 takes nine
 * overflows (8x a step); a rate that held within a factor of 2 over
 * each period keeps each sample within 2x of its 1/FREQ s. So between
 * half and twice the rate, plus the nine.
 */
static void expect_rate(struct __test_metadata *_metadata, size_t n, __u64 ns)
{
	__u64 want = ns * FREQ / NSEC_PER_SEC;

	EXPECT_LE(want / 2, n);
	EXPECT_GE(2 * want + 9, n) {
		TH_LOG("%zu samples over %llu ns at %u a second", n,
		       (unsigned long long)ns, FREQ);
	}
}

static void freq_attr(struct pmc_attr *attr, unsigned int id, __u64 rate)
{
	sampler_attr(attr, id, rate, REC_FREQ, true);
	attr->freq = 1;
}

/* freq's rate: within pmc_max_sample_rate, never 0, never randomized. */
TEST_F(sample, freq_attr_checks)
{
	struct pmc_attr attr;
	long max = 0;

	ASSERT_EQ(0, read_int_file("/proc/sys/kernel/pmc_max_sample_rate", &max));
	freq_attr(&attr, PMC_SW_PAGE_FAULTS, max);
	EXPECT_EQ(0, pmc_open_errno(&attr, 0, -1, -1, 0));
	attr.irq_period = max + 1;
	EXPECT_EQ(EINVAL, pmc_open_errno(&attr, 0, -1, -1, 0));
	attr.irq_period = 1ULL << 62;
	EXPECT_EQ(EINVAL, pmc_open_errno(&attr, 0, -1, -1, 0));
	attr.irq_period = 0;
	EXPECT_EQ(EINVAL, pmc_open_errno(&attr, 0, -1, -1, 0));
	freq_attr(&attr, PMC_SW_PAGE_FAULTS, FREQ);
	attr.period_rand = 10;
	EXPECT_EQ(EINVAL, pmc_open_errno(&attr, 0, -1, -1, 0));
}

/*
 * A clock at a rate has a period of 1/rate seconds: each sample says
 * so, and every period of its count is a sample or counted lost.
 */
TEST_F(sample, freq_clock)
{
	const __u64 period = NSEC_PER_SEC / FREQ;
	struct pmc_attr attr;
	struct records r;
	__u64 value;
	struct rb rb;
	size_t i;
	int fd;

	freq_attr(&attr, PMC_SW_TASK_CLOCK, FREQ);
	fd = counter_open(_metadata, &attr, 0, -1, -1);
	map_buffer(_metadata, &rb, fd, 16, true);
	records_reserve(_metadata, &r, 512);
	counter_ioctl(_metadata, fd, PMC_IOC_ENABLE);
	burn_cpu(200 * NSEC_PER_MSEC);
	counter_ioctl(_metadata, fd, PMC_IOC_DISABLE);
	value = counter_value(_metadata, fd);
	collect(_metadata, &rb, REC_FREQ, &r);

	for (i = 0; i < r.nr; i++)
		ASSERT_EQ(period, r.s[i].period);
	EXPECT_TRUE(periods_accounted(value, period, r.nr + r.lost)) {
		TH_LOG("%zu samples + %llu lost over %llu ns", r.nr,
		       (unsigned long long)r.lost, (unsigned long long)value);
	}
	records_free(&r);
	rb_unmap(&rb);
	close(fd);
}

/* Fault in fresh pages for @ns of this thread's CPU time; false if mmap fails. */
static bool fault_for(__u64 ns)
{
	const size_t nr = 64;
	__u64 start = thread_cputime_ns();
	char *region;

	do {
		region = map_fresh_pages(nr);
		if (!region)
			return false;
		touch_pages(region, nr);
		munmap(region, nr * page_size());
	} while (thread_cputime_ns() - start < ns);
	return true;
}

/*
 * Page faults at a rate: the kernel sets the period from the faults
 * the last one took over the time the task ran, so the samples follow
 * the task's running time, whatever its fault rate; each sample says
 * how many faults it stands for, and they add up to the count, less
 * the period in progress (at most 8x the last).
 */
TEST_F(sample, freq_page_faults)
{
	__u64 value, ran, sum = 0;
	struct pmc_reading rd;
	struct pmc_attr attr;
	struct records r;
	struct rb rb;
	size_t i;
	int fd;

	freq_attr(&attr, PMC_SW_PAGE_FAULTS, FREQ);
	attr.read_format = PMC_FORMAT_TOTAL_TIME_RUNNING;
	fd = counter_open(_metadata, &attr, 0, -1, -1);
	map_buffer(_metadata, &rb, fd, 16, true);
	records_reserve(_metadata, &r, 1024);
	counter_ioctl(_metadata, fd, PMC_IOC_ENABLE);
	ASSERT_TRUE(fault_for(200 * NSEC_PER_MSEC));
	counter_ioctl(_metadata, fd, PMC_IOC_DISABLE);
	rd = counter_read(_metadata, fd, attr.read_format);
	value = rd.value;
	ran = rd.running;
	collect(_metadata, &rb, REC_FREQ, &r);

	ASSERT_EQ(0, r.lost);
	ASSERT_LE(10, r.nr);
	for (i = 0; i < r.nr; i++) {
		ASSERT_LE(1, r.s[i].period);
		sum += r.s[i].period;
	}
	TH_LOG("%zu samples over %llu ns, %llu faults, last period %llu",
	       r.nr, (unsigned long long)ran, (unsigned long long)value,
	       (unsigned long long)r.s[r.nr - 1].period);
	EXPECT_LE(sum, value);
	EXPECT_GE(sum + 8 * r.s[r.nr - 1].period, value);
	expect_rate(_metadata, r.nr, ran);
	records_free(&r);
	rb_unmap(&rb);
	close(fd);
}

/*
 * An inherited copy of a counter at a rate starts at the period its
 * parent reached, as perf's do: the child's first sample stands for
 * that period, not for the single fault a fresh counter starts at. The
 * parent's period is within 8x of the one its last sample stood for.
 */
TEST_F(sample, freq_inherit_period)
{
	const __u64 rate = FREQ / 10;	/* periods of ~100+ faults */
	__u64 parent_last = 0, child_first = 0;
	struct pmc_attr attr;
	struct records r;
	struct rb rb;
	size_t i;
	pid_t pid;
	int fd;

	freq_attr(&attr, PMC_SW_PAGE_FAULTS, rate);
	attr.inherit = 1;
	fd = counter_open(_metadata, &attr, 0, -1, -1);
	map_buffer(_metadata, &rb, fd, 16, true);
	records_reserve(_metadata, &r, 1024);
	counter_ioctl(_metadata, fd, PMC_IOC_ENABLE);
	ASSERT_TRUE(fault_for(100 * NSEC_PER_MSEC));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)	/* some 5 periods at the parent's fault rate */
		_exit(!fault_for(50 * NSEC_PER_MSEC));
	ASSERT_EQ(0, reap(_metadata, pid, NULL));
	counter_ioctl(_metadata, fd, PMC_IOC_DISABLE);
	collect(_metadata, &rb, REC_FREQ, &r);

	for (i = 0; i < r.nr; i++) {
		if (r.s[i].tid == pid) {
			child_first = r.s[i].period;
			break;
		}
		parent_last = r.s[i].period;
	}
	TH_LOG("parent's last period %llu, the child's first %llu",
	       (unsigned long long)parent_last,
	       (unsigned long long)child_first);
	/* else the test could not tell an inherited period from 1 */
	ASSERT_LE(16, parent_last);
	ASSERT_NE(0, child_first) TH_LOG("no sample of the child's");
	EXPECT_LE(parent_last / 8, child_first);
	EXPECT_GE(parent_last * 8, child_first);
	records_free(&r);
	rb_unmap(&rb);
	close(fd);
}

/*
 * Cycles at a rate, on the PMU (a model's, or perf's driver on arm64):
 * about FREQ samples a second of the counter's running time, each
 * with the period it stood for.
 */
TEST_F(sample, freq_hardware)
{
	struct pmc_attr attr;
	struct pmc_reading rd;
	struct records r;
	struct rb rb;
	size_t i;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.config = PMC_CONFIG(PMC_TYPE_HARDWARE, PMC_HW_CPU_CYCLES);
	attr.irq_period = FREQ;
	attr.freq = 1;
	attr.record_type = REC_FREQ;
	attr.read_format = PMC_FORMAT_TOTAL_TIME_RUNNING;
	attr.exclude_kernel = 1;
	attr.disabled = 1;
	fd = pmc_open(&attr, 0, -1, -1, 0);
	if (fd < 0 && errno == ENODEV)
		SKIP(return, "no hardware PMU");
	ASSERT_LE(0, fd) TH_LOG("cycles at %u a second: %s", FREQ,
				strerror(errno));
	map_buffer(_metadata, &rb, fd, 16, true);
	records_reserve(_metadata, &r, 1024);
	counter_ioctl(_metadata, fd, PMC_IOC_ENABLE);
	burn_cpu(300 * NSEC_PER_MSEC);
	counter_ioctl(_metadata, fd, PMC_IOC_DISABLE);
	rd = counter_read(_metadata, fd, attr.read_format);
	collect(_metadata, &rb, REC_FREQ, &r);

	TH_LOG("%zu samples over %llu ns, %llu cycles", r.nr,
	       (unsigned long long)rd.running, (unsigned long long)rd.value);
	for (i = 0; i < r.nr; i++)
		ASSERT_LE(1, r.s[i].period);
	expect_rate(_metadata, r.nr + r.lost, rd.running);
	records_free(&r);
	rb_unmap(&rb);
	close(fd);
}

/* Every overflow of @fd's counter is one of @r's samples or counted lost. */
static void expect_overflows_accounted(struct __test_metadata *_metadata,
				       int fd, const struct records *r)
{
	EXPECT_EQ(nr_overflows(_metadata, fd), r->nr + r->lost) {
		TH_LOG("%zu samples + %llu lost", r->nr,
		       (unsigned long long)r->lost);
	}
}

/*
 * A read-write buffer of one page filled by page-fault samples that
 * nobody reads: the oldest samples stay, the rest are counted, and one
 * LOST record reports them once room returns. Delivered plus lost is
 * every overflow the counter took.
 */
TEST_F(sample, lost_records)
{
	const size_t nr = 512, nr2 = 16;
	size_t i, first = 0, second = 0, fit;
	char *region, *region2;
	long page, last = -1;
	struct records r;
	struct rb rb;
	int fd;

	region = fresh_pages(_metadata, nr);
	region2 = fresh_pages(_metadata, nr2);
	fd = sampler_open(_metadata, PMC_SW_PAGE_FAULTS, 1, REC_FAULT, 0, true);
	map_buffer(_metadata, &rb, fd, 1, true);
	records_reserve(_metadata, &r, 1024);
	fit = rb.r.size / FAULT_SAMPLE_SIZE;

	counter_ioctl(_metadata, fd, PMC_IOC_ENABLE);
	touch_pages(region, nr);
	/* The buffer is full: no LOST record could be written yet. */
	collect(_metadata, &rb, REC_FAULT, &r);
	EXPECT_EQ(0, r.nr_lost);
	EXPECT_GE(fit, r.nr);
	EXPECT_LE(fit - 2, r.nr) TH_LOG("only %zu samples kept", r.nr);
	/* ...and holds the oldest samples: the first pages, in order */
	for (i = 0; i < r.nr; i++) {
		page = region_page(region, nr, r.s[i].addr);
		if (page < 0)
			continue;
		EXPECT_EQ(last + 1, page) TH_LOG("sample %zu", i);
		last = page;
		first++;
		if (FAILED())
			break;
	}
	EXPECT_LE(r.nr - 2, first);

	/* Room again: the next write reports the loss first. */
	i = r.nr;
	touch_pages(region2, nr2);
	counter_ioctl(_metadata, fd, PMC_IOC_DISABLE);
	rb_begin(&rb);
	ASSERT_LT(rb.pos, rb.head) TH_LOG("nothing after the drain");
	{
		union pmc_record *rec = malloc(sizeof(*rec));
		__u64 pos = rb.pos;

		ASSERT_NE(NULL, rec);
		ASSERT_EQ(1, rb_next(&rb, rec)) TH_LOG("%s", rb.r.err);
		EXPECT_EQ(PMC_EVENT_LOST, rec->h.type) {
			TH_LOG("first record after the drain: type %u misc %#x",
			       rec->h.type, rec->h.misc);
		}
		rb.pos = pos;
		free(rec);
	}
	collect(_metadata, &rb, REC_FAULT, &r);
	for (; i < r.nr; i++)
		if (region_page(region2, nr2, r.s[i].addr) >= 0)
			second++;
	EXPECT_EQ(nr2, second);
	EXPECT_EQ(1, r.nr_lost);
	EXPECT_LE(nr - first, r.lost);
	expect_overflows_accounted(_metadata, fd, &r);

	records_free(&r);
	rb_unmap(&rb);
	close(fd);
	munmap(region, nr * page_size());
	munmap(region2, nr2 * page_size());
}

/*
 * A task-clock sampler on an unread one-page ring, over 300 periods of
 * CPU time. Most periods find the ring full, late timers step over
 * some: all of them are samples or counted lost, and the reader gets
 * the whole loss after the disable. The ring was full at
 * PMC_IOC_DISABLE, so the LOST record comes from the poll() after the
 * reader's pass. The period is one a debug kernel samples without
 * throttling (at 100 us the time bound may throttle it, and a
 * throttle's gap is marked by its records, not counted lost).
 */
TEST_F(sample, task_clock_accounted)
{
	const __u64 period = NSEC_PER_MSEC;
	struct records r;
	__u64 value, n;
	struct rb rb;
	int fd;

	fd = sampler_open(_metadata, PMC_SW_TASK_CLOCK, period, REC_BASIC, 0,
			  true);
	map_buffer(_metadata, &rb, fd, 1, true);
	records_reserve(_metadata, &r, 512);

	counter_ioctl(_metadata, fd, PMC_IOC_ENABLE);
	burn_cpu(300 * period);
	counter_ioctl(_metadata, fd, PMC_IOC_DISABLE);
	value = counter_value(_metadata, fd);
	collect(_metadata, &rb, REC_BASIC, &r);
	EXPECT_TRUE(poll_now(fd) & POLLIN) TH_LOG("no LOST record at poll()");
	collect(_metadata, &rb, REC_BASIC, &r);
	EXPECT_FALSE(poll_now(fd) & POLLIN);

	/* fdinfo, as the ring may have had no room for a THROTTLE */
	EXPECT_EQ(0, nr_throttles(_metadata, fd))
		TH_LOG("throttled at a %llu ns period",
		       (unsigned long long)period);
	EXPECT_EQ(0, r.nr_other);
	n = r.nr + r.lost;
	EXPECT_LT(0, r.lost);
	EXPECT_EQ(nr_overflows(_metadata, fd), n) {
		TH_LOG("%zu samples + %llu lost", r.nr,
		       (unsigned long long)r.lost);
	}
	EXPECT_TRUE(periods_accounted(value, period, n)) {
		TH_LOG("%zu samples + %llu lost; the clock counted %llu ns: want %llu periods",
		       r.nr, (unsigned long long)r.lost,
		       (unsigned long long)value,
		       (unsigned long long)(value / period));
	}

	records_free(&r);
	rb_unmap(&rb);
	close(fd);
}

/* Bytes of a REC_BASIC sample and of a LOST record. */
#define BASIC_SAMPLE_SIZE	32
#define LOST_SIZE		24

/*
 * Losses pending when the counter stops reach a reader who drains the
 * ring after PMC_IOC_DISABLE. 32-byte samples fill a one-page ring to
 * 31 bytes short: the LOST record that fits there is published at
 * once, though the sample after it does not fit. What is lost after it
 * is written by a PMC_IOC_DISABLE with room, and by a poll() after the
 * reader's pass.
 */
TEST_F(sample, lost_at_disable)
{
	const size_t nr = 256, fit = 4095 / BASIC_SAMPLE_SIZE;
	char *region, *region2;
	struct records r;
	struct rb rb;
	int fd;

	ASSERT_EQ(4096, page_size());
	region = fresh_pages(_metadata, nr);
	region2 = fresh_pages(_metadata, nr);
	fd = sampler_open(_metadata, PMC_SW_PAGE_FAULTS, 1, REC_BASIC, 0, true);
	map_buffer(_metadata, &rb, fd, 1, true);
	records_reserve(_metadata, &r, 1024);

	counter_ioctl(_metadata, fd, PMC_IOC_ENABLE);
	touch_pages(region, nr);
	counter_ioctl(_metadata, fd, PMC_IOC_DISABLE);
	/* the samples that fit, then the LOST record in the last 31 bytes */
	EXPECT_EQ(fit * BASIC_SAMPLE_SIZE + LOST_SIZE,
		  pmc_ring_data_head(&rb.r));
	collect(_metadata, &rb, REC_BASIC, &r);
	EXPECT_EQ(fit, r.nr);
	EXPECT_EQ(1, r.nr_lost);
	/* room now: a second DISABLE writes what the first could not */
	counter_ioctl(_metadata, fd, PMC_IOC_DISABLE);
	collect(_metadata, &rb, REC_BASIC, &r);
	EXPECT_EQ(2, r.nr_lost);
	expect_overflows_accounted(_metadata, fd, &r);

	/* the same after a pass that made room: poll() writes it */
	counter_ioctl(_metadata, fd, PMC_IOC_ENABLE);
	touch_pages(region2, nr);
	counter_ioctl(_metadata, fd, PMC_IOC_DISABLE);
	collect(_metadata, &rb, REC_BASIC, &r);
	EXPECT_TRUE(poll_now(fd) & POLLIN) TH_LOG("no LOST record at poll()");
	collect(_metadata, &rb, REC_BASIC, &r);
	EXPECT_EQ(4, r.nr_lost);
	expect_overflows_accounted(_metadata, fd, &r);

	records_free(&r);
	rb_unmap(&rb);
	close(fd);
	munmap(region, nr * page_size());
	munmap(region2, nr * page_size());
}

/* One pass of libpmc's consumer loop over @r, as the tools run it. */
static void consume_pass(struct __test_metadata *_metadata,
			 struct pmc_ring *r, size_t *passed)
{
	int ret;

	pmc_ring_begin(r);
	while ((ret = pmc_ring_next(r)) > 0) {
		(*passed)++;
		/* every record handed out is whole */
		ASSERT_TRUE(r->rec->h.type == PMC_EVENT_LOST ||
			    r->rec->h.size == FAULT_SAMPLE_SIZE) {
			TH_LOG("record type %u size %u", r->rec->h.type,
			       r->rec->h.size);
		}
	}
	ASSERT_EQ(0, ret) TH_LOG("%s", r->err);
	pmc_ring_end(r);
}

/*
 * libpmc's consumer loop on @fd's ring mapped @rw: touch @nr pages (a
 * sample each) into a one-page buffer, read one pass, touch @nr2 more,
 * read again; then DISABLE and read what it wrote. A LOST record still
 * pending then is written at DISABLE (lost_at_disable): seen once under
 * pmc_emu=p6, where the second pass wrote no record and DISABLE wrote
 * the LOST record of both passes. A reader's tally includes that pass.
 */
static void consume_in_passes(struct __test_metadata *_metadata, int fd,
			      bool rw, size_t nr, size_t nr2,
			      struct pmc_ring *r, size_t *passed)
{
	char *region = fresh_pages(_metadata, nr + nr2);
	size_t before;

	ASSERT_EQ(0, pmc_ring_map(r, fd, 1, rw)) TH_LOG("%s", strerror(errno));
	counter_ioctl(_metadata, fd, PMC_IOC_ENABLE);
	touch_pages(region, nr);
	consume_pass(_metadata, r, passed);
	touch_pages(region + nr * page_size(), nr2);
	consume_pass(_metadata, r, passed);
	counter_ioctl(_metadata, fd, PMC_IOC_DISABLE);
	before = *passed;
	consume_pass(_metadata, r, passed);
	if (*passed != before)
		TH_LOG("%zu records written at DISABLE", *passed - before);
	munmap(region, (nr + nr2) * page_size());
}

/*
 * A read-write ring: the reader stores data_tail, the kernel keeps the
 * oldest samples and reports the rest in one LOST record, which the
 * reader tallies: samples + lost = overflows. A read-only ring: the
 * reader never writes data_tail (it could not), and the samples the
 * kernel wrote over are skipped and counted in bytes.
 */
TEST_F(sample, libpmc_reader_modes)
{
	const size_t nr = 512, nr2 = 16;
	struct pmc_ring r;
	size_t passed = 0;
	__u64 head;
	int fd;

	fd = sampler_open(_metadata, PMC_SW_PAGE_FAULTS, 1, REC_FAULT, 0, true);
	consume_in_passes(_metadata, fd, true, nr, nr2, &r, &passed);
	EXPECT_EQ(r.tail, r.page->data_tail);
	EXPECT_EQ(r.tail, pmc_ring_data_head(&r));
	EXPECT_LT(0, r.lost);
	EXPECT_EQ(nr_overflows(_metadata, fd), r.samples + r.lost) {
		TH_LOG("%llu samples + %llu lost",
		       (unsigned long long)r.samples,
		       (unsigned long long)r.lost);
	}
	EXPECT_EQ(0, r.overwritten);
	pmc_ring_unmap(&r);
	close(fd);

	passed = 0;
	fd = sampler_open(_metadata, PMC_SW_PAGE_FAULTS, 1, REC_FAULT, 0, true);
	consume_in_passes(_metadata, fd, false, nr, nr2, &r, &passed);
	head = pmc_ring_data_head(&r);
	EXPECT_EQ(0, r.page->data_tail);
	EXPECT_EQ(head, r.tail);
	EXPECT_EQ(0, r.lost);
	EXPECT_LT(0, r.overwritten);
	/* what was not read was written over: all of it is accounted */
	EXPECT_EQ(nr_overflows(_metadata, fd) * FAULT_SAMPLE_SIZE,
		  r.samples * FAULT_SAMPLE_SIZE + r.overwritten) {
		TH_LOG("%llu samples read, %llu bytes overwritten",
		       (unsigned long long)r.samples,
		       (unsigned long long)r.overwritten);
	}
	EXPECT_EQ(r.samples, passed);
	pmc_ring_unmap(&r);
	close(fd);
}

/*
 * A read-only mapping is overwritten: data_head runs past the buffer
 * size and the buffer holds the newest samples, whole.
 */
TEST_F(sample, overwrite_mode)
{
	const size_t nr = 256, size = FAULT_SAMPLE_SIZE;
	size_t i, in_region = 0;
	long page, prev_page = -1;
	__u64 head, start, prev = 0;
	struct records r;
	struct rb rb;
	char *region;
	int fd;

	region = fresh_pages(_metadata, nr);
	fd = sampler_open(_metadata, PMC_SW_PAGE_FAULTS, 1, REC_FAULT, 0, true);
	map_buffer(_metadata, &rb, fd, 1, false);
	records_reserve(_metadata, &r, 256);

	counter_ioctl(_metadata, fd, PMC_IOC_ENABLE);
	touch_pages(region, nr);
	counter_ioctl(_metadata, fd, PMC_IOC_DISABLE);

	head = pmc_ring_data_head(&rb.r);
	/* nothing is lost in overwrite mode: every sample was written */
	EXPECT_EQ(size * nr_overflows(_metadata, fd), head);
	ASSERT_LT(rb.r.size, head);

	/* All records are samples of one size: they start at multiples. */
	start = (head - rb.r.size + size - 1) / size * size;
	rb.pos = start;
	rb.head = head;
	__sync_synchronize();
	ASSERT_TRUE(rb_collect(&rb, REC_FAULT, &r)) TH_LOG("%s", r.err);
	EXPECT_EQ(0, r.nr_lost);
	EXPECT_EQ((head - start) / size, r.nr);
	for (i = 0; i < r.nr; i++) {
		EXPECT_EQ(SAMPLE_MISC_USER, r.s[i].misc);
		EXPECT_EQ(getpid(), r.s[i].pid);
		EXPECT_LT(prev, r.s[i].time) TH_LOG("sample %zu", i);
		prev = r.s[i].time;
		page = region_page(region, nr, r.s[i].addr);
		if (page < 0)
			continue;
		if (prev_page >= 0)
			EXPECT_EQ(prev_page + 1, page) TH_LOG("sample %zu", i);
		prev_page = page;
		in_region++;
		if (FAILED())
			break;
	}
	/* the newest data: up to the last page touched */
	EXPECT_EQ(nr - 1, prev_page);
	EXPECT_LE(r.nr - 2, in_region);

	records_free(&r);
	rb_unmap(&rb);
	close(fd);
	munmap(region, nr * page_size());
}

/* Path of this binary, as the kernel prints it. */
static void self_exe(struct __test_metadata *_metadata, char *path,
		     size_t len)
{
	ssize_t n = readlink("/proc/self/exe", path, len - 1);

	ASSERT_LT(0, n) TH_LOG("readlink /proc/self/exe: %s", strerror(errno));
	path[n] = '\0';
}

/* The first MMAP or MUNMAP (@type) record in @rb at @addr, or -1. */
static int find_mmap_rec(struct rb *rb, __u32 type, __u64 addr,
			 union pmc_record *rec)
{
	int ret;

	rb_begin(rb);
	rb->pos = 0;
	while ((ret = rb_next(rb, rec)) > 0) {
		const struct mmap_rec *m = (const void *)rec;

		if (rec->h.misc & PMC_EVENT_MISC_OVERFLOW ||
		    rec->h.type != type)
			continue;
		if (rec->h.size >= sizeof(*m) && m->addr == addr)
			return 0;
	}
	return -1;
}

static void check_mmap_rec(struct __test_metadata *_metadata,
			   const union pmc_record *rec, __u64 addr, __u64 len,
			   __u64 pgoff, const char *path)
{
	const struct mmap_rec *m = (const void *)rec;
	size_t name_len = strlen(path) + 1;

	EXPECT_EQ(sizeof(*m) + ((name_len + 7) & ~7UL), rec->h.size);
	EXPECT_EQ(getpid(), m->pid);
	EXPECT_EQ(sys_gettid(), m->tid);
	EXPECT_EQ(addr, m->addr);
	EXPECT_EQ(len, m->len);
	EXPECT_EQ(pgoff, m->pgoff);
	if (rec->h.size >= sizeof(*m) + name_len) {
		EXPECT_STREQ(path, m->filename);
	} else {
		EXPECT_TRUE(0) TH_LOG("record too short for \"%s\"", path);
	}
}

/*
 * attr.mmap and attr.munmap: PROT_EXEC file mappings give MMAP and
 * MUNMAP records with the address, length, offset and path; other
 * mappings give none, and a counter without munmap gets no MUNMAP.
 */
TEST_F(sample, mmap_records)
{
	union pmc_record *rec = malloc(sizeof(*rec));
	size_t page = page_size();
	struct pmc_attr attr;
	char path[PATH_MAX];
	void *code, *code2, *data;
	struct rb rb, rb2;
	int fd, fd2, file;

	ASSERT_NE(NULL, rec);
	self_exe(_metadata, path, sizeof(path));
	file = open(path, O_RDONLY);
	ASSERT_LE(0, file) TH_LOG("open %s: %s", path, strerror(errno));

	pmc_sw_attr(&attr, PMC_SW_PAGE_FAULTS, 0);
	attr.irq_period = NEVER_PERIOD;
	attr.record_type = PMC_RECORD_IP;
	attr.mmap = 1;
	attr.munmap = 1;
	fd = counter_open(_metadata, &attr, 0, -1, -1);
	map_buffer(_metadata, &rb, fd, 2, true);
	attr.munmap = 0;
	fd2 = counter_open(_metadata, &attr, 0, -1, -1);
	map_buffer(_metadata, &rb2, fd2, 2, true);

	/* not executable: no record */
	data = mmap(NULL, page, PROT_READ, MAP_PRIVATE, file, 0);
	ASSERT_NE(MAP_FAILED, data);
	EXPECT_EQ(0, pmc_ring_data_head(&rb.r));

	code = mmap(NULL, page, PROT_READ | PROT_EXEC, MAP_PRIVATE, file, 0);
	ASSERT_NE(MAP_FAILED, code) TH_LOG("%s", strerror(errno));
	code2 = mmap(NULL, 2 * page, PROT_READ | PROT_EXEC, MAP_PRIVATE, file,
		     page);
	ASSERT_NE(MAP_FAILED, code2) TH_LOG("%s", strerror(errno));

	ASSERT_EQ(0, find_mmap_rec(&rb, PMC_EVENT_MMAP, (unsigned long)code,
				   rec)) TH_LOG("no MMAP record for %p", code);
	check_mmap_rec(_metadata, rec, (unsigned long)code, page, 0, path);
	ASSERT_EQ(0, find_mmap_rec(&rb, PMC_EVENT_MMAP, (unsigned long)code2,
				   rec)) TH_LOG("no MMAP record for %p", code2);
	check_mmap_rec(_metadata, rec, (unsigned long)code2, 2 * page, page,
		       path);
	EXPECT_EQ(-1, find_mmap_rec(&rb, PMC_EVENT_MMAP, (unsigned long)data,
				    rec)) TH_LOG("MMAP record for PROT_READ");
	/* the second counter got them too */
	EXPECT_EQ(0, find_mmap_rec(&rb2, PMC_EVENT_MMAP, (unsigned long)code,
				   rec));

	ASSERT_EQ(0, munmap(code, page));
	ASSERT_EQ(0, munmap(code2, 2 * page));
	ASSERT_EQ(0, munmap(data, page));
	ASSERT_EQ(0, find_mmap_rec(&rb, PMC_EVENT_MUNMAP, (unsigned long)code,
				   rec)) TH_LOG("no MUNMAP record for %p", code);
	check_mmap_rec(_metadata, rec, (unsigned long)code, page, 0, path);
	ASSERT_EQ(0, find_mmap_rec(&rb, PMC_EVENT_MUNMAP,
				   (unsigned long)code2, rec));
	check_mmap_rec(_metadata, rec, (unsigned long)code2, 2 * page, page,
		       path);
	EXPECT_EQ(-1, find_mmap_rec(&rb, PMC_EVENT_MUNMAP, (unsigned long)data,
				    rec));
	/* munmap = 0 */
	EXPECT_EQ(-1, find_mmap_rec(&rb2, PMC_EVENT_MUNMAP,
				    (unsigned long)code, rec));

	rb_unmap(&rb);
	rb_unmap(&rb2);
	close(fd);
	close(fd2);
	close(file);
	free(rec);
}

/* The COMM records of @rb for @pid: the number, and the last name. */
static int find_comm(struct rb *rb, pid_t pid, char *comm, size_t len,
		     union pmc_record *rec)
{
	int nr = 0;

	rb_begin(rb);
	rb->pos = 0;
	while (rb_next(rb, rec) > 0) {
		const struct comm_rec *c = (const void *)rec;

		if (rec->h.misc & PMC_EVENT_MISC_OVERFLOW ||
		    rec->h.type != PMC_EVENT_COMM || c->pid != (__u32)pid)
			continue;
		if (c->tid != (__u32)pid || rec->h.size <= sizeof(*c) ||
		    !memchr(c->comm, '\0', rec->h.size - sizeof(*c))) {
			snprintf(comm, len, "<bad: size %u tid %u>",
				 rec->h.size, c->tid);
			return -1;
		}
		snprintf(comm, len, "%s", c->comm);
		nr++;
	}
	return nr;
}

static int exec_self_main(void *arg)
{
	int go = *(int *)arg;
	char path[PATH_MAX], c;
	ssize_t n;

	CHILD_CHECK(read(go, &c, 1) == 1, "no go");
	n = readlink("/proc/self/exe", path, sizeof(path) - 1);
	CHILD_CHECK(n > 0, "%s", strerror(errno));
	path[n] = '\0';
	execl(path, path, EXEC_EXIT_ARG, (char *)NULL);
	CHILD_CHECK(0, "exec %s: %s", path, strerror(errno));
	return 1;
}

/*
 * attr.comm: PR_SET_NAME gives a COMM record with the new name; so does
 * an exec, with the new program's name, on a counter opened on a child.
 */
TEST_F(sample, comm_records)
{
	union pmc_record *rec = malloc(sizeof(*rec));
	char path[PATH_MAX], comm[64], want[16];
	struct pmc_attr attr;
	const char *base;
	int fd, fd2, go[2];
	struct rb rb, rb2;
	pid_t pid;

	ASSERT_NE(NULL, rec);
	pmc_sw_attr(&attr, PMC_SW_PAGE_FAULTS, 0);
	attr.irq_period = NEVER_PERIOD;
	attr.record_type = PMC_RECORD_IP;
	attr.comm = 1;
	fd = counter_open(_metadata, &attr, 0, -1, -1);
	map_buffer(_metadata, &rb, fd, 1, true);
	attr.comm = 0;
	fd2 = counter_open(_metadata, &attr, 0, -1, -1);
	map_buffer(_metadata, &rb2, fd2, 1, true);

	ASSERT_EQ(0, prctl(PR_SET_NAME, "x", 0, 0, 0));
	EXPECT_EQ(1, find_comm(&rb, getpid(), comm, sizeof(comm), rec)) {
		TH_LOG("last comm \"%s\"", comm);
	}
	EXPECT_STREQ("x", comm);
	EXPECT_EQ(0, find_comm(&rb2, getpid(), comm, sizeof(comm), rec));
	rb_unmap(&rb);
	rb_unmap(&rb2);
	close(fd);
	close(fd2);

	/* exec: the name becomes the new program's, cut to 15 characters */
	self_exe(_metadata, path, sizeof(path));
	base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	snprintf(want, sizeof(want), "%.15s", base);
	ASSERT_EQ(0, pipe(go));
	pid = spawn(_metadata, exec_self_main, &go[0]);
	close(go[0]);
	attr.comm = 1;
	fd = counter_open(_metadata, &attr, pid, -1, -1);
	map_buffer(_metadata, &rb, fd, 1, true);
	ASSERT_EQ(1, write(go[1], "g", 1));
	close(go[1]);
	ASSERT_EQ(0, reap(_metadata, pid, NULL));
	EXPECT_EQ(1, find_comm(&rb, pid, comm, sizeof(comm), rec)) {
		TH_LOG("last comm \"%s\"", comm);
	}
	EXPECT_STREQ(want, comm);

	rb_unmap(&rb);
	close(fd);
	free(rec);
}

/* How vdso_record's child execs: when to, and where to say its vDSO is. */
struct exec_vdso {
	int go, report;
};

static int exec_vdso_main(void *arg)
{
	const struct exec_vdso *e = arg;
	char path[PATH_MAX], fd[16], c;
	ssize_t n;

	CHILD_CHECK(read(e->go, &c, 1) == 1, "no go");
	n = readlink("/proc/self/exe", path, sizeof(path) - 1);
	CHILD_CHECK(n > 0, "%s", strerror(errno));
	path[n] = '\0';
	snprintf(fd, sizeof(fd), "%d", e->report);
	execl(path, path, EXEC_EXIT_ARG, fd, (char *)NULL);
	CHILD_CHECK(0, "exec %s: %s", path, strerror(errno));
	return 1;
}

/* The length of this process's [vdso] mapping (the same image's), or 0. */
static __u64 own_vdso_len(void)
{
	unsigned long lo, hi;
	char line[256];
	__u64 len = 0;
	FILE *f = fopen("/proc/self/maps", "re");

	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, " [vdso]") &&
		    sscanf(line, "%lx-%lx", &lo, &hi) == 2)
			len = hi - lo;
	if (f)
		fclose(f);
	return len;
}

/*
 * The vDSO is code without a file: an exec maps it, and attr.mmap
 * gives a MMAP record named "[vdso]", at the address the new program
 * was told (AT_SYSINFO_EHDR), its whole length, offset 0. Without it,
 * samples in clock_gettime() could not be tied to any code.
 */
TEST_F(sample, vdso_record)
{
	union pmc_record *rec = malloc(sizeof(*rec));
	const struct mmap_rec *m = (const void *)rec;
	__u64 want_len = own_vdso_len();
	struct exec_vdso e;
	struct pmc_attr attr;
	unsigned long at = 0;
	int fd, go[2], report[2], found = 0;
	struct rb rb;
	pid_t pid;

	ASSERT_NE(NULL, rec);
	if (!want_len)
		SKIP(return, "this process has no [vdso] mapping");
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(report));
	e.go = go[0];
	e.report = report[1];
	pid = spawn(_metadata, exec_vdso_main, &e);
	close(go[0]);
	close(report[1]);

	pmc_sw_attr(&attr, PMC_SW_PAGE_FAULTS, 0);
	attr.irq_period = NEVER_PERIOD;
	attr.record_type = PMC_RECORD_IP;
	attr.mmap = 1;
	fd = counter_open(_metadata, &attr, pid, -1, -1);
	map_buffer(_metadata, &rb, fd, 2, true);
	ASSERT_EQ(1, write(go[1], "g", 1));
	close(go[1]);
	EXPECT_EQ(sizeof(at), read(report[0], &at, sizeof(at)));
	close(report[0]);
	ASSERT_EQ(0, reap(_metadata, pid, NULL));
	ASSERT_NE(0, at) TH_LOG("the new program was told of no vDSO");

	rb_begin(&rb);
	rb.pos = 0;
	while (rb_next(&rb, rec) > 0) {
		if (rec->h.misc & PMC_EVENT_MISC_OVERFLOW ||
		    rec->h.type != PMC_EVENT_MMAP || rec->h.size < sizeof(*m) ||
		    rec->h.size < sizeof(*m) + sizeof("[vdso]") ||
		    strcmp(m->filename, "[vdso]"))
			continue;
		found++;
		EXPECT_EQ(sizeof(*m) + 8, rec->h.size);
		EXPECT_EQ((__u32)pid, m->pid);
		EXPECT_EQ((__u32)pid, m->tid);
		EXPECT_EQ(at, m->addr);
		EXPECT_EQ(want_len, m->len);
		EXPECT_EQ(0, m->pgoff);
	}
	EXPECT_EQ(1, found) TH_LOG("MMAP records named [vdso]");

	rb_unmap(&rb);
	close(fd);
	free(rec);
}

/* What fork_exit_records looks for in one buffer. */
struct task_records {
	pid_t child, thread;
	struct task_rec fork, thread_fork, thread_exit, exit;
	unsigned int forks, exits;	/* of the child and its thread */
	__u16 comm_size;		/* the thread's COMM record */
	__u64 comm_time;		/* its attr.time_all trailer */
	void *code;			/* mapped PROT_EXEC by the test */
	__u16 mmap_size, mmap_want;	/* its MMAP record; without time */
	__u64 mmap_time;
};

static void task_records_scan(struct __test_metadata *_metadata,
			      struct rb *rb, struct task_records *t)
{
	static union pmc_record rec;
	const struct task_rec *tr = (const void *)&rec;
	const struct comm_rec *c = (const void *)&rec;
	const struct mmap_rec *m = (const void *)&rec;
	int ret;

	rb_begin(rb);
	rb->pos = 0;
	while ((ret = rb_next(rb, &rec)) > 0) {
		if (rec.h.misc & PMC_EVENT_MISC_OVERFLOW)
			continue;
		if (rec.h.type == PMC_EVENT_COMM &&
		    c->tid == (__u32)t->thread &&
		    !strncmp(c->comm, "pmc-thread", rec.h.size - sizeof(*c))) {
			t->comm_size = rec.h.size;
			memcpy(&t->comm_time, (char *)&rec + rec.h.size - 8, 8);
		}
		if (rec.h.type == PMC_EVENT_MMAP &&
		    m->addr == (unsigned long)t->code) {
			t->mmap_size = rec.h.size;
			t->mmap_want = sizeof(*m) + ((strnlen(m->filename,
				rec.h.size - sizeof(*m)) + 8) & ~7);
			memcpy(&t->mmap_time, (char *)&rec + rec.h.size - 8, 8);
		}
		if ((rec.h.type != PMC_EVENT_FORK &&
		     rec.h.type != PMC_EVENT_EXIT) ||
		    tr->pid != (__u32)t->child)
			continue;
		EXPECT_EQ(sizeof(*tr), rec.h.size);
		if (rec.h.type == PMC_EVENT_FORK) {
			t->forks++;
			if (tr->tid == (__u32)t->child)
				t->fork = *tr;
			else
				t->thread_fork = *tr;
		} else {
			t->exits++;
			if (tr->tid == (__u32)t->child)
				t->exit = *tr;
			else
				t->thread_exit = *tr;
		}
	}
	ASSERT_EQ(0, ret);
}

static void *name_thread(void *arg)
{
	prctl(PR_SET_NAME, "pmc-thread", 0, 0, 0);
	return (void *)(long)sys_gettid();
}

/* Starts a thread, waits for it and tells the parent its tid. */
static int fork_thread_main(void *arg)
{
	int out = *(int *)arg;
	pthread_t thread;
	void *tid;

	CHILD_CHECK(!pthread_create(&thread, NULL, name_thread, NULL), "create");
	CHILD_CHECK(!pthread_join(thread, &tid), "join");
	CHILD_CHECK(write(out, &tid, sizeof(tid)) == sizeof(tid), "write");
	return 0;
}

/*
 * attr.comm: a FORK record for each task an inherited counter follows
 * into, by whom it was created, and an EXIT record as it leaves, in the
 * order they happened on the clock of PMC_RECORD_TIME. attr.time_all
 * puts that clock at the end of the COMM and MMAP records (only there).
 * A counter without attr.comm gets neither.
 */
TEST_F(sample, fork_exit_records)
{
	struct task_records t[3] = { };
	struct pmc_attr attr;
	int fd[3], out[2], i;
	char path[PATH_MAX];
	int file;
	__u64 t0, t1;
	struct rb rb[3];
	void *tid;

	pmc_sw_attr(&attr, PMC_SW_PAGE_FAULTS, 0);
	attr.irq_period = NEVER_PERIOD;
	attr.record_type = PMC_RECORD_IP;
	attr.inherit = 1;
	for (i = 0; i < 3; i++) {
		attr.comm = i < 2;
		attr.time_all = i == 0;
		attr.mmap = i != 1;
		fd[i] = counter_open(_metadata, &attr, 0, -1, -1);
		map_buffer(_metadata, &rb[i], fd[i], 4, true);
	}
	ASSERT_EQ(0, pipe(out));
	t0 = monotonic_ns();
	self_exe(_metadata, path, sizeof(path));
	file = open(path, O_RDONLY);
	ASSERT_LE(0, file);
	t[0].code = mmap(NULL, page_size(), PROT_READ | PROT_EXEC,
			 MAP_PRIVATE, file, 0);
	ASSERT_NE(MAP_FAILED, t[0].code);
	close(file);
	t[0].child = spawn(_metadata, fork_thread_main, &out[1]);
	close(out[1]);
	ASSERT_EQ(sizeof(tid), read(out[0], &tid, sizeof(tid)));
	close(out[0]);
	ASSERT_EQ(0, reap(_metadata, t[0].child, NULL));
	munmap(t[0].code, page_size());
	t1 = monotonic_ns();
	t[0].thread = (pid_t)(long)tid;
	ASSERT_NE(t[0].child, t[0].thread);
	t[2] = t[1] = t[0];
	for (i = 0; i < 3; i++)
		task_records_scan(_metadata, &rb[i], &t[i]);

	for (i = 0; i < 2; i++) {
		EXPECT_EQ(2, t[i].forks) TH_LOG("counter %d", i);
		EXPECT_EQ(2, t[i].exits) TH_LOG("counter %d", i);
		/* The child, created by this thread, and its parent. */
		EXPECT_EQ(getpid(), t[i].fork.ppid);
		EXPECT_EQ(sys_gettid(), t[i].fork.ptid);
		EXPECT_EQ(getpid(), t[i].exit.ppid);
		/* The thread, created by the child; its parent the child's. */
		EXPECT_EQ(t[i].child, t[i].thread_fork.ppid);
		EXPECT_EQ(t[i].child, t[i].thread_fork.ptid);
		EXPECT_EQ(t[i].thread, t[i].thread_exit.tid);
		EXPECT_EQ(getpid(), t[i].thread_exit.ppid);
		/* In the order they happened, while the test watched. */
		EXPECT_LE(t0, t[i].fork.time);
		EXPECT_LE(t[i].fork.time, t[i].thread_fork.time);
		EXPECT_LE(t[i].thread_fork.time, t[i].thread_exit.time);
		EXPECT_LE(t[i].thread_exit.time, t[i].exit.time);
		EXPECT_GE(t1, t[i].exit.time);
	}
	/* time_all: the COMM record grows by the time, taken in between. */
	EXPECT_EQ(sizeof(struct comm_rec) + 16 + 8, t[0].comm_size);
	EXPECT_LE(t[0].thread_fork.time, t[0].comm_time);
	EXPECT_GE(t[0].thread_exit.time, t[0].comm_time);
	EXPECT_EQ(sizeof(struct comm_rec) + 16, t[1].comm_size);
	EXPECT_EQ(t[0].mmap_want + 8, t[0].mmap_size);
	EXPECT_LE(t0, t[0].mmap_time);
	EXPECT_GE(t[0].fork.time, t[0].mmap_time);
	EXPECT_EQ(t[2].mmap_want, t[2].mmap_size);
	EXPECT_EQ(0, t[1].mmap_size);
	EXPECT_EQ(0, t[2].forks);
	EXPECT_EQ(0, t[2].exits);
	EXPECT_EQ(0, t[2].comm_size);
	for (i = 0; i < 3; i++) {
		rb_unmap(&rb[i]);
		close(fd[i]);
	}
}

/*
 * poll(): with wakeup_events = 5, POLLIN once 5 samples arrived since
 * the last wakeup, not before; with 0, once a page filled. POLLHUP as
 * soon as the child the counter is on has exited, with POLLIN while
 * records remain, as perf. The buffer is drained before each poll(),
 * so that only the wakeups are seen.
 */
TEST_F(sample, poll_wakeup)
{
	unsigned int step, pending = 0, wakeups = 0, quiet = 0;
	size_t in_region = 0, i;
	struct pmc_attr attr;
	struct stepper st;
	struct records r;
	struct pollfd pfd;
	__u64 last_wake = 0, head;
	struct rb rb;
	short ev;
	int fd;

	/* wakeup_events = 5 */
	stepper_spawn(_metadata, &st, 64);
	pmc_sw_attr(&attr, PMC_SW_PAGE_FAULTS, 0);
	attr.irq_period = 1;
	attr.record_type = REC_FAULT;
	attr.wakeup_events = 5;
	fd = counter_open(_metadata, &attr, st.pid, -1, -1);
	map_buffer(_metadata, &rb, fd, 2, true);
	records_reserve(_metadata, &r, 256);

	for (step = 1; step <= 16; step++) {
		i = r.nr;
		stepper_step(_metadata, &st, 1);
		collect(_metadata, &rb, REC_FAULT, &r);
		pending += r.nr - i;
		for (; i < r.nr; i++)
			in_region += region_page(st.pages, st.nr_pages,
						 r.s[i].addr) >= 0;
		ev = poll_now(fd);
		EXPECT_EQ(pending >= 5, !!(ev & POLLIN)) {
			TH_LOG("step %u: %u samples since the last wakeup, poll %#x",
			       step, pending, ev);
		}
		EXPECT_FALSE(ev & POLLHUP);
		if (pending >= 5)
			wakeups++;
		else
			quiet++;
		pending %= 5;
	}
	EXPECT_EQ(16, in_region);
	EXPECT_LE(2, wakeups);
	EXPECT_LE(8, quiet);

	/* a poll() that sleeps is woken */
	stepper_send(_metadata, &st, 5);
	pfd.fd = fd;
	pfd.events = POLLIN;
	pfd.revents = 0;
	EXPECT_EQ(1, poll(&pfd, 1, 10000));
	EXPECT_TRUE(pfd.revents & POLLIN) TH_LOG("revents %#x", pfd.revents);
	stepper_wait(_metadata, &st);

	/* POLLHUP once the child has exited, read or not */
	stepper_step(_metadata, &st, 1);
	stepper_quit(_metadata, &st);
	ev = poll_now(fd);
	EXPECT_TRUE(ev & POLLHUP) TH_LOG("poll %#x with unread data", ev);
	EXPECT_TRUE(ev & POLLIN) TH_LOG("poll %#x", ev);
	collect(_metadata, &rb, REC_FAULT, &r);
	ev = poll_now(fd);
	EXPECT_TRUE(ev & POLLHUP) TH_LOG("poll %#x after draining", ev);
	EXPECT_FALSE(ev & POLLIN) TH_LOG("poll %#x after draining", ev);
	records_free(&r);
	rb_unmap(&rb);
	close(fd);
	munmap(st.pages, st.nr_pages * page_size());

	/* wakeup_events = 0: a wakeup per page filled */
	stepper_spawn(_metadata, &st, 160);
	attr.wakeup_events = 0;
	fd = counter_open(_metadata, &attr, st.pid, -1, -1);
	map_buffer(_metadata, &rb, fd, 4, true);
	records_reserve(_metadata, &r, 256);
	wakeups = 0;
	for (step = 1; step <= 10; step++) {
		stepper_step(_metadata, &st, 16);
		head = pmc_ring_data_head(&rb.r);
		collect(_metadata, &rb, REC_FAULT, &r);
		ev = poll_now(fd);
		EXPECT_EQ(head / page_size() != last_wake / page_size(),
			  !!(ev & POLLIN)) {
			TH_LOG("step %u: data_head %llu, last wakeup at %llu, poll %#x",
			       step, (unsigned long long)head,
			       (unsigned long long)last_wake, ev);
		}
		if (head / page_size() != last_wake / page_size()) {
			last_wake = head;
			wakeups++;
		}
	}
	EXPECT_LE(1, wakeups);
	stepper_quit(_metadata, &st);
	records_free(&r);
	rb_unmap(&rb);
	close(fd);
	munmap(st.pages, st.nr_pages * page_size());
}

/* A poll() asleep on a drained buffer wakes when the task exits. */
TEST_F(sample, pollhup_wakes_poll)
{
	struct pmc_attr attr;
	struct stepper st;
	struct records r;
	struct pollfd pfd = { .events = POLLIN };
	struct rb rb;

	stepper_spawn(_metadata, &st, 4);
	sampler_attr(&attr, PMC_SW_PAGE_FAULTS, 1, REC_FAULT, false);
	pfd.fd = counter_open(_metadata, &attr, st.pid, -1, -1);
	map_buffer(_metadata, &rb, pfd.fd, 2, true);
	records_reserve(_metadata, &r, 16);
	stepper_step(_metadata, &st, 2);
	collect(_metadata, &rb, REC_FAULT, &r);
	EXPECT_LE(2, r.nr);
	EXPECT_EQ(0, poll_now(pfd.fd) & (POLLIN | POLLHUP));

	stepper_send(_metadata, &st, 0);	/* exits while we sleep */
	EXPECT_EQ(1, poll(&pfd, 1, 10000)) TH_LOG("poll(): %s", strerror(errno));
	EXPECT_TRUE(pfd.revents & POLLHUP) TH_LOG("revents %#x", pfd.revents);
	ASSERT_EQ(0, reap(_metadata, st.pid, NULL));
	close(st.cmd[1]);
	close(st.ack[0]);
	records_free(&r);
	rb_unmap(&rb);
	close(pfd.fd);
	munmap(st.pages, st.nr_pages * page_size());
}

/* A page-fault sampler on this task, disabled. */
static int fault_sampler(struct __test_metadata *_metadata, __u64 period,
			 __u32 wakeup_events, bool inherit)
{
	struct pmc_attr attr;

	sampler_attr(&attr, PMC_SW_PAGE_FAULTS, period, REC_FAULT, true);
	attr.wakeup_events = wakeup_events;
	attr.inherit = inherit;
	return counter_open(_metadata, &attr, 0, -1, -1);
}

static int fault_child(void *arg)
{
	size_t nr = *(size_t *)arg;
	char *p = map_fresh_pages(nr);

	CHILD_CHECK(p, "%s", strerror(errno));
	touch_pages(p, nr);
	return 0;
}

/*
 * SIGIO as perf sends it: with O_ASYNC and F_SETOWN, one signal per
 * overflow of a sampling counter, POLL_IN, with a buffer mapped or not,
 * whatever wakeup_events says, from several counters to one process;
 * and an inherited copy's overflows signal the original's owner. A
 * real-time signal (F_SETSIG) queues, so that each can be counted, and
 * si_fd tells the counters apart.
 */
TEST_F(sample, sigio_per_overflow)
{
	enum { NR_FDS = 4, NR_PAGES = 12, MAX_SIGS = 256 };
	static const __u64 period[NR_FDS] = { 1, 1, 3, 1 };
	int fd[NR_FDS], fds[MAX_SIGS], codes[MAX_SIGS], sig = SIGRTMIN + 1;
	unsigned int got[NR_FDS] = { 0 }, n, i, k;
	__u64 want[NR_FDS], total = 0;
	size_t child_pages = 5;
	sigset_t set;
	char *region;
	struct rb rb;
	pid_t child;

	sigemptyset(&set);
	sigaddset(&set, sig);
	ASSERT_EQ(0, sigprocmask(SIG_BLOCK, &set, NULL));
	region = fresh_pages(_metadata, NR_PAGES);
	/*
	 * 0: a buffer that wakes every 5 samples; 1: no buffer; 2: no
	 * buffer, every third fault; 3: inherited, no buffer.
	 */
	for (i = 0; i < NR_FDS; i++) {
		fd[i] = fault_sampler(_metadata, period[i], i ? 0 : 5, i == 3);
		sigio_to_me(_metadata, fd[i], sig);
	}
	map_buffer(_metadata, &rb, fd[0], 2, true);

	for (i = 0; i < NR_FDS; i++)
		counter_ioctl(_metadata, fd[i], PMC_IOC_ENABLE);
	touch_pages(region, NR_PAGES);
	child = spawn(_metadata, fault_child, &child_pages);
	ASSERT_EQ(0, reap(_metadata, child, NULL));
	for (i = 0; i < NR_FDS; i++)
		counter_ioctl(_metadata, fd[i], PMC_IOC_DISABLE);

	for (i = 0; i < NR_FDS; i++) {
		want[i] = nr_overflows(_metadata, fd[i]);
		total += want[i];
	}
	EXPECT_LE(NR_PAGES, want[0]);
	EXPECT_LE(NR_PAGES, want[1]);
	EXPECT_LE(NR_PAGES / 3, want[2]);
	EXPECT_LE(NR_PAGES + child_pages, want[3]);
	ASSERT_GT(MAX_SIGS, total);

	n = take_signals(sig, total, MAX_SIGS, fds, codes);
	for (k = 0; k < n && k < MAX_SIGS; k++) {
		for (i = 0; i < NR_FDS && fds[k] != fd[i]; i++)
			;
		ASSERT_GT(NR_FDS, i) TH_LOG("signal %u: si_fd %d", k, fds[k]);
		EXPECT_EQ(POLL_IN, codes[k]) TH_LOG("signal %u of fd %d", k, fds[k]);
		got[i]++;
	}
	for (i = 0; i < NR_FDS; i++) {
		EXPECT_EQ(want[i], got[i]) {
			TH_LOG("counter %u: %llu overflows, %u signals", i,
			       (unsigned long long)want[i], got[i]);
		}
	}

	rb_unmap(&rb);
	for (i = 0; i < NR_FDS; i++)
		close(fd[i]);
	munmap(region, NR_PAGES * page_size());
	ASSERT_EQ(0, sigprocmask(SIG_UNBLOCK, &set, NULL));
}

/*
 * PMC_IOC_REFRESH(n): n overflows, n signals, the last one POLL_HUP, as
 * perf's; one each, though a buffer is mapped and each sample wakes it.
 */
TEST_F(sample, refresh_signals)
{
	enum { NR_PAGES = 16, MAX_SIGS = 32 };
	static const unsigned int budget[] = { 3, 1, 2 };
	int fds[MAX_SIGS], codes[MAX_SIGS], sig = SIGRTMIN + 2, fd;
	unsigned int n, i, k, used = 0;
	sigset_t set;
	char *region;
	struct rb rb;

	sigemptyset(&set);
	sigaddset(&set, sig);
	ASSERT_EQ(0, sigprocmask(SIG_BLOCK, &set, NULL));
	region = fresh_pages(_metadata, NR_PAGES);
	fd = fault_sampler(_metadata, 1, 1, false);
	map_buffer(_metadata, &rb, fd, 2, true);
	sigio_to_me(_metadata, fd, sig);

	for (i = 0; i < ARRAY_SIZE(budget); i++) {
		ASSERT_EQ(0, ioctl(fd, PMC_IOC_REFRESH, budget[i])) {
			TH_LOG("%s", strerror(errno));
		}
		touch_pages(region + used * page_size(), 4);
		used += 4;
		n = take_signals(sig, budget[i], MAX_SIGS, fds, codes);
		EXPECT_EQ(budget[i], n) TH_LOG("REFRESH(%u)", budget[i]);
		for (k = 0; k < n && k < MAX_SIGS; k++) {
			EXPECT_EQ(fd, fds[k]);
			EXPECT_EQ(k + 1 < budget[i] ? POLL_IN : POLL_HUP,
				  codes[k]) {
				TH_LOG("REFRESH(%u): signal %u has si_code %d",
				       budget[i], k + 1, codes[k]);
			}
		}
	}
	rb_unmap(&rb);
	close(fd);
	munmap(region, NR_PAGES * page_size());
	ASSERT_EQ(0, sigprocmask(SIG_UNBLOCK, &set, NULL));
}

/*
 * PMC_IOC_REFRESH(nr): exactly nr samples, then the counter disables
 * itself and wakes the reader; only for sampling, non-inherited
 * counters and nr > 0.
 */
TEST_F(sample, refresh)
{
	const __u64 period = NSEC_PER_MSEC;
	struct pmc_attr attr;
	char state[32];
	struct records r;
	struct rb rb;
	__u64 value;
	int fd;

	fd = sampler_open(_metadata, PMC_SW_TASK_CLOCK, period, REC_BASIC, 0,
			  true);
	map_buffer(_metadata, &rb, fd, 2, true);
	records_reserve(_metadata, &r, 64);

	EXPECT_EQ(-1, ioctl(fd, PMC_IOC_REFRESH, 0));
	EXPECT_EQ(EINVAL, errno);

	ASSERT_EQ(0, ioctl(fd, PMC_IOC_REFRESH, 3)) TH_LOG("%s", strerror(errno));
	burn_cpu(50 * NSEC_PER_MSEC);
	collect(_metadata, &rb, REC_BASIC, &r);
	EXPECT_EQ(3, r.nr);
	/*
	 * The ring has room: what LOST reports is periods that a late
	 * timer stepped over, and each of them is an overflow too.
	 */
	EXPECT_LE(r.nr + r.lost, nr_overflows(_metadata, fd));
	EXPECT_LE(3, nr_overflows(_metadata, fd));
	/*
	 * It stopped after the third period, and stays stopped. The stop
	 * comes from an irq_work right after the overflow; a host stall
	 * in between still counts as task-clock, so the bound is the burn.
	 */
	value = counter_value(_metadata, fd);
	EXPECT_LE(3 * period * 9 / 10, value);
	EXPECT_GT(40 * period, value) TH_LOG("still counting: %llu ns",
					     (unsigned long long)value);
	burn_cpu(5 * NSEC_PER_MSEC);
	EXPECT_EQ(value, counter_value(_metadata, fd));
	ASSERT_EQ(0, fdinfo_field(fd, "pmc-state", state, sizeof(state)));
	EXPECT_STREQ("off", state);
	EXPECT_TRUE(poll_now(fd) & POLLIN) TH_LOG("no wakeup at the end");

	/* again */
	ASSERT_EQ(0, ioctl(fd, PMC_IOC_REFRESH, 2)) TH_LOG("%s", strerror(errno));
	burn_cpu(30 * NSEC_PER_MSEC);
	collect(_metadata, &rb, REC_BASIC, &r);
	EXPECT_EQ(5, r.nr);
	records_free(&r);
	rb_unmap(&rb);
	close(fd);

	/* a counting counter */
	fd = sampler_open(_metadata, PMC_SW_TASK_CLOCK, 0, 0, 0, true);
	EXPECT_EQ(-1, ioctl(fd, PMC_IOC_REFRESH, 1));
	EXPECT_EQ(EINVAL, errno);
	close(fd);

	/* an inherited sampler */
	pmc_sw_attr(&attr, PMC_SW_TASK_CLOCK, 0);
	attr.irq_period = period;
	attr.record_type = REC_BASIC;
	attr.inherit = 1;
	attr.disabled = 1;
	fd = counter_open(_metadata, &attr, 0, -1, -1);
	EXPECT_EQ(-1, ioctl(fd, PMC_IOC_REFRESH, 1));
	EXPECT_EQ(EINVAL, errno);
	close(fd);
}

/* mmap() @fd with @pages in all; Return: 0 (unmapped again) or errno. */
static int try_map(int fd, size_t pages, int prot, int flags, off_t off)
{
	size_t len = pages * page_size();
	void *p = mmap(NULL, len, prot, flags, fd, off);

	if (p == MAP_FAILED)
		return errno;
	munmap(p, len);
	return 0;
}

/* Smallest 1 + 2^n pages above @limit, or 0 past the largest buffer. */
static size_t buffer_above(size_t limit)
{
	unsigned int n;

	for (n = 0; n <= RB_MAX_ORDER; n++)
		if (1 + (1UL << n) > limit)
			return 1 + (1UL << n);
	return 0;
}

/* Largest 1 + 2^n pages at most @limit, or 0. */
static size_t buffer_within(size_t limit)
{
	size_t best = 0;
	unsigned int n;

	for (n = 0; n <= RB_MAX_ORDER; n++)
		if (1 + (1UL << n) <= limit)
			best = 1 + (1UL << n);
	return best;
}

static int sampler_fd(void)
{
	return sampler_open_errno(PMC_SW_PAGE_FAULTS, NEVER_PERIOD,
				  PMC_RECORD_IP, 0, false);
}

static int set_memlock_cur(rlim_t bytes)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_MEMLOCK, &rl))
		return errno;
	if (rl.rlim_max != RLIM_INFINITY && bytes > rl.rlim_max)
		return EPERM;
	rl.rlim_cur = bytes;
	return setrlimit(RLIMIT_MEMLOCK, &rl) ? errno : 0;
}

/*
 * The locked-memory limits, without CAP_IPC_LOCK: the pmc_mlock_kb
 * allowance first, then VmPin under RLIMIT_MEMLOCK, EPERM beyond; the
 * charge comes back exactly at munmap().
 */
static int memlock_child(void *arg)
{
	size_t page = page_size(), allowance, big, within, extra;
	int fd, fd2, err;
	long kb = 0, pin;
	void *p;

	CHILD_CHECK(read_int_file(MLOCK_KB_PATH, &kb) == 0, "no %s",
		    MLOCK_KB_PATH);
	allowance = kb * 1024 / page;
	big = buffer_above(allowance);
	within = buffer_within(allowance);
	pin = vmpin_kb();
	CHILD_CHECK(pin >= 0, "no VmPin in /proc/self/status");
	fd = sampler_fd();
	CHILD_CHECK(fd >= 0, "pmc_open: %s", strerror(errno));
	fd2 = sampler_fd();
	CHILD_CHECK(fd2 >= 0, "pmc_open: %s", strerror(errno));

	/* RLIMIT_MEMLOCK 0: the allowance only */
	CHILD_CHECK(set_memlock_cur(0) == 0, "setrlimit: %s", strerror(errno));
	if (big) {
		err = try_map(fd, big, PROT_READ, MAP_SHARED, 0);
		CHILD_CHECK(err == EPERM, "%zu pages over an allowance of %zu: %s",
			    big, allowance, strerror(err));
		CHILD_CHECK(vmpin_kb() == pin, "VmPin %ld kB, was %ld",
			    vmpin_kb(), pin);
	}
	if (within) {
		p = mmap(NULL, within * page, PROT_READ, MAP_SHARED, fd, 0);
		CHILD_CHECK(p != MAP_FAILED, "%zu pages of an allowance of %zu: %s",
			    within, allowance, strerror(errno));
		CHILD_CHECK(vmpin_kb() == pin, "VmPin %ld kB, was %ld",
			    vmpin_kb(), pin);
		/* what is left of the allowance is too small */
		extra = buffer_above(allowance - within);
		if (extra) {
			err = try_map(fd2, extra, PROT_READ, MAP_SHARED, 0);
			CHILD_CHECK(err == EPERM, "%zu more pages: %s", extra,
				    strerror(err));
		}
		/* munmap returns the charge */
		munmap(p, within * page);
		if (extra) {
			err = try_map(fd2, extra, PROT_READ, MAP_SHARED, 0);
			CHILD_CHECK(!err, "%zu pages after munmap: %s", extra,
				    strerror(err));
		}
		err = try_map(fd, within, PROT_READ, MAP_SHARED, 0);
		CHILD_CHECK(!err, "%zu pages again: %s", within, strerror(err));
	}
	if (!big)
		goto out;

	/* Beyond the allowance: VmPin, under RLIMIT_MEMLOCK. */
	extra = big - allowance;
	if (set_memlock_cur((extra - 1) * page)) {
		fprintf(stderr, "# cannot raise RLIMIT_MEMLOCK: VmPin part not run\n");
		goto out;
	}
	err = try_map(fd, big, PROT_READ, MAP_SHARED, 0);
	CHILD_CHECK(err == EPERM, "%zu pages with RLIMIT_MEMLOCK of %zu: %s",
		    big, extra - 1, strerror(err));
	CHILD_CHECK(vmpin_kb() == pin, "VmPin %ld kB, was %ld", vmpin_kb(),
		    pin);
	if (set_memlock_cur(extra * page)) {
		fprintf(stderr, "# cannot raise RLIMIT_MEMLOCK: VmPin part not run\n");
		goto out;
	}
	p = mmap(NULL, big * page, PROT_READ, MAP_SHARED, fd, 0);
	CHILD_CHECK(p != MAP_FAILED, "%zu pages with RLIMIT_MEMLOCK of %zu: %s",
		    big, extra, strerror(errno));
	CHILD_CHECK(vmpin_kb() == pin + (long)(extra * page / 1024),
		    "VmPin %ld kB, want %ld + %zu", vmpin_kb(), pin,
		    extra * page / 1024);
	munmap(p, big * page);
	CHILD_CHECK(vmpin_kb() == pin, "VmPin %ld kB after munmap, was %ld",
		    vmpin_kb(), pin);
	err = try_map(fd, big, PROT_READ, MAP_SHARED, 0);
	CHILD_CHECK(!err, "%zu pages again: %s", big, strerror(err));
out:
	close(fd);
	close(fd2);
	return 0;
}

/*
 * mmap() sizes, offset, flags and second mappings; then the locked
 * memory limits as an unprivileged user.
 */
TEST_F(sample, mapping_limits)
{
	size_t page = page_size();
	void *p, *q;
	long pin;
	int fd;

	fd = sampler_open(_metadata, PMC_SW_PAGE_FAULTS, NEVER_PERIOD,
			  PMC_RECORD_IP, 0, false);
	pin = vmpin_kb();

	/* 1 + 2^n pages, n <= 16, or page 0 alone; shared, from offset 0 */
	EXPECT_EQ(EINVAL, try_map(fd, 4, PROT_READ, MAP_SHARED, 0));
	EXPECT_EQ(EINVAL, try_map(fd, 6, PROT_READ, MAP_SHARED, 0));
	EXPECT_EQ(EINVAL, try_map(fd, 1 + (1UL << (RB_MAX_ORDER + 1)),
				  PROT_READ, MAP_SHARED, 0));
	EXPECT_EQ(EINVAL, try_map(fd, 2, PROT_READ, MAP_SHARED, page));
	EXPECT_EQ(EINVAL, try_map(fd, 2, PROT_READ, MAP_PRIVATE, 0));
	EXPECT_EQ(pin, vmpin_kb());
	EXPECT_EQ(0, try_map(fd, 1, PROT_READ, MAP_SHARED, 0));
	EXPECT_EQ(0, try_map(fd, 2, PROT_READ, MAP_SHARED, 0));
	EXPECT_EQ(0, try_map(fd, 3, PROT_READ | PROT_WRITE, MAP_SHARED, 0));
	EXPECT_EQ(0, try_map(fd, 5, PROT_READ, MAP_SHARED, 0));

	/* a second mapping: same size and protection, the same buffer */
	p = mmap(NULL, 3 * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, p) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(EINVAL, try_map(fd, 2, PROT_READ | PROT_WRITE, MAP_SHARED, 0));
	EXPECT_EQ(EINVAL, try_map(fd, 5, PROT_READ | PROT_WRITE, MAP_SHARED, 0));
	EXPECT_EQ(EINVAL, try_map(fd, 3, PROT_READ, MAP_SHARED, 0));
	q = mmap(NULL, 3 * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, q) TH_LOG("%s", strerror(errno));
	((struct pmc_mmap_page *)p)->data_tail = 4242;
	EXPECT_EQ(4242, ((volatile struct pmc_mmap_page *)q)->data_tail);
	((struct pmc_mmap_page *)p)->data_tail = 0;
	/* no partial munmap */
	EXPECT_EQ(-1, munmap((char *)p + 2 * page, page));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, munmap(p, page));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, munmap(q, 3 * page));
	EXPECT_EQ(1, ((volatile struct pmc_mmap_page *)p)->version);
	EXPECT_EQ(0, munmap(p, 3 * page));
	EXPECT_EQ(pin, vmpin_kb());
	/* all gone: another size is fine now */
	EXPECT_EQ(0, try_map(fd, 2, PROT_READ, MAP_SHARED, 0));
	close(fd);

	/* root has CAP_IPC_LOCK: never refused */
	if (self->root) {
		fd = sampler_open(_metadata, PMC_SW_PAGE_FAULTS, NEVER_PERIOD,
				  PMC_RECORD_IP, 0, false);
		ASSERT_EQ(0, set_memlock_cur(0));
		EXPECT_EQ(0, try_map(fd, 1 + (1UL << 10), PROT_READ,
				     MAP_SHARED, 0));
		EXPECT_EQ(pin, vmpin_kb());
		close(fd);
	}

	run_unprivileged(_metadata, memlock_child, NULL);
}

/*
 * An inherited task-clock sampler: a forked child's samples arrive in
 * the parent's buffer with the child's pid and tid.
 */
TEST_F(sample, inherit_samples)
{
	const __u64 period = NSEC_PER_MSEC, burn = 60 * NSEC_PER_MSEC;
	size_t i, mine = 0, child_samples = 0;
	struct pmc_attr attr;
	struct records r;
	struct rusage ru;
	__u64 child_cpu, prev = 0;
	struct rb rb;
	pid_t pid;
	int fd;

	pmc_sw_attr(&attr, PMC_SW_TASK_CLOCK, 0);
	attr.irq_period = period;
	attr.record_type = REC_BASIC;
	attr.inherit = 1;
	attr.disabled = 1;	/* an overflow before the mmap() has no ring */
	fd = counter_open(_metadata, &attr, 0, -1, -1);
	map_buffer(_metadata, &rb, fd, 8, true);
	records_reserve(_metadata, &r, 256);
	counter_ioctl(_metadata, fd, PMC_IOC_ENABLE);

	fflush(NULL);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		burn_cpu(burn);
		_exit(0);
	}
	ASSERT_EQ(0, reap(_metadata, pid, &ru));
	counter_ioctl(_metadata, fd, PMC_IOC_DISABLE);
	child_cpu = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * NSEC_PER_SEC +
		    (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * NSEC_PER_USEC;
	collect(_metadata, &rb, REC_BASIC, &r);
	/*
	 * 8 pages hold every sample: a LOST record here would be periods
	 * a late timer stepped over, which the bounds below count against.
	 */

	for (i = 0; i < r.nr; i++) {
		if (r.s[i].pid == (__u32)getpid()) {
			mine++;
			continue;
		}
		EXPECT_EQ(pid, r.s[i].pid) TH_LOG("sample %zu", i);
		EXPECT_EQ(pid, r.s[i].tid) TH_LOG("sample %zu", i);
		EXPECT_EQ(SAMPLE_MISC_USER, r.s[i].misc);
		EXPECT_TRUE(user_addr(r.s[i].ip));
		EXPECT_LT(prev, r.s[i].time);
		prev = r.s[i].time;
		child_samples++;
		if (FAILED())
			break;
	}
	/*
	 * Each period of the child's 60 ms is a sample or, where a late
	 * timer stepped over it, counted lost (the parent, who only
	 * waits, has few periods of its own to lose).
	 */
	EXPECT_LE(burn / period * 8 / 10, child_samples + r.lost) {
		TH_LOG("%zu child samples, %zu of the parent, %llu lost",
		       child_samples, mine, (unsigned long long)r.lost);
	}
	/* The exited child's overflows are folded into the original's. */
	expect_overflows_accounted(_metadata, fd, &r);
	EXPECT_GE(child_cpu / period * 11 / 10 + 2, child_samples) {
		TH_LOG("%zu child samples for %llu ns of child CPU time",
		       child_samples, (unsigned long long)child_cpu);
	}

	records_free(&r);
	rb_unmap(&rb);
	close(fd);
}

/* Kernel text and data as x86-64 lays them out; -1 and friends are not. */
static bool kernel_like(__u64 addr)
{
	return addr >= KERNEL_START && addr < 0xffffffffff000000ULL;
}

/*
 * Unprivileged at pmc_paranoid 2: kernel counting is refused, and
 * samples taken during syscalls carry the user-mode registers: user IP,
 * misc USER, no kernel callchain entries.
 */
static int no_kernel_child(void *arg)
{
	const __u32 type = REC_FAULT | PMC_RECORD_CALLCHAIN;
	struct pmc_attr attr;
	struct records r;
	struct sample *s;
	struct rb rb;
	__u64 start;
	size_t i;
	int fd, j;

	pmc_sw_attr(&attr, PMC_SW_TASK_CLOCK, 0);
	attr.irq_period = 200 * NSEC_PER_USEC;
	attr.record_type = type;
	attr.exclude_kernel = 0;
	CHILD_CHECK(pmc_open_errno(&attr, 0, -1, -1, 0) == EACCES,
		    "kernel counting allowed");
	attr.exclude_kernel = 1;
	attr.disabled = 1;
	fd = pmc_open(&attr, 0, -1, -1, 0);
	CHILD_CHECK(fd >= 0, "pmc_open: %s", strerror(errno));
	CHILD_CHECK(rb_map(&rb, fd, 16, true) == 0, "mmap: %s",
		    strerror(errno));
	CHILD_CHECK(records_init(&r, 1024) == 0, "no memory");

	ioctl(fd, PMC_IOC_ENABLE, 0);
	start = thread_cputime_ns();
	while (thread_cputime_ns() - start < 60 * NSEC_PER_MSEC)
		for (j = 0; j < 200; j++)
			syscall(SYS_getppid);
	ioctl(fd, PMC_IOC_DISABLE, 0);
	CHILD_CHECK(rb_collect(&rb, type, &r), "%s", r.err);
	CHILD_CHECK(r.nr >= 20, "only %zu samples", r.nr);

	for (i = 0; i < r.nr; i++) {
		s = &r.s[i];
		CHILD_CHECK(s->misc == SAMPLE_MISC_USER, "sample %zu: misc %#x",
			    i, s->misc);
		CHILD_CHECK(user_addr(s->ip), "sample %zu: ip %#llx", i,
			    (unsigned long long)s->ip);
		CHILD_CHECK(s->addr == 0, "sample %zu: addr %#llx", i,
			    (unsigned long long)s->addr);
		CHILD_CHECK(s->kernel == 0 && s->hv == 0,
			    "sample %zu: %u kernel, %u hv callchain entries",
			    i, s->kernel, s->hv);
		CHILD_CHECK(s->user >= 1 && s->ips[0] == s->ip,
			    "sample %zu: %u user entries, first %#llx", i,
			    s->user, (unsigned long long)s->ips[0]);
		for (j = 0; j < s->nr; j++)
			CHILD_CHECK(!kernel_like(s->ips[j]),
				    "sample %zu: callchain[%d] = %#llx", i, j,
				    (unsigned long long)s->ips[j]);
	}
	records_free(&r);
	rb_unmap(&rb);
	close(fd);
	return 0;
}

static bool paranoid_hides_kernel(struct __test_metadata *_metadata)
{
	long level = 2;

	if (read_int_file(PARANOID_PATH, &level))
		TH_LOG("%s unreadable: assuming level 2", PARANOID_PATH);
	return level >= 2;
}

TEST_F(sample, no_kernel_addresses)
{
	if (!paranoid_hides_kernel(_metadata))
		SKIP(return, "pmc_paranoid < 2: kernel addresses are allowed");
	run_unprivileged(_metadata, no_kernel_child, NULL);
}

/* The LOST record of an unprivileged user names no kernel address. */
static int lost_id_child(void *arg)
{
	const size_t nr = 256;
	struct records r;
	struct rb rb;
	char *region;
	int fd;

	region = map_fresh_pages(nr + 4);
	CHILD_CHECK(region, "mmap: %s", strerror(errno));
	fd = sampler_open_errno(PMC_SW_PAGE_FAULTS, 1, REC_FAULT, 0, false);
	CHILD_CHECK(fd >= 0, "pmc_open: %s", strerror(errno));
	CHILD_CHECK(rb_map(&rb, fd, 1, true) == 0, "mmap: %s",
		    strerror(errno));
	CHILD_CHECK(records_init(&r, 512) == 0, "no memory");
	touch_pages(region, nr);
	CHILD_CHECK(rb_collect(&rb, REC_FAULT, &r), "%s", r.err);
	touch_pages(region + nr * page_size(), 4);
	ioctl(fd, PMC_IOC_DISABLE, 0);
	CHILD_CHECK(rb_collect(&rb, REC_FAULT, &r), "%s", r.err);
	CHILD_CHECK(r.nr_lost == 1, "%u LOST records", r.nr_lost);
	CHILD_CHECK(r.lost_id < USER_END, "LOST id %#llx",
		    (unsigned long long)r.lost_id);
	records_free(&r);
	rb_unmap(&rb);
	close(fd);
	return 0;
}

TEST_F(sample, lost_id_no_kernel_address)
{
	if (!paranoid_hides_kernel(_metadata))
		SKIP(return, "pmc_paranoid < 2: kernel addresses are allowed");
	run_unprivileged(_metadata, lost_id_child, NULL);
}

/*
 * CALLCHAIN: samples in a hot loop called through two nested functions
 * carry the loop's IP, then return addresses in its two callers.
 */
TEST_F(sample, callchain)
{
	const __u32 type = PMC_RECORD_IP | PMC_RECORD_TID | PMC_RECORD_CALLCHAIN;
	size_t i, in_loop = 0, good = 0;
	unsigned long iters;
	struct records r;
	struct sample *s;
	struct rb rb;
	int fd;

	check_hot_layout(_metadata);
	fd = sampler_open(_metadata, PMC_SW_TASK_CLOCK, 250 * NSEC_PER_USEC,
			  type, 0, true);
	map_buffer(_metadata, &rb, fd, 16, true);
	records_reserve(_metadata, &r, 1024);

	iters = hot_calibrate(2 * NSEC_PER_MSEC);
	counter_ioctl(_metadata, fd, PMC_IOC_ENABLE);
	hot_run(iters, 100 * NSEC_PER_MSEC);
	counter_ioctl(_metadata, fd, PMC_IOC_DISABLE);
	collect(_metadata, &rb, type, &r);

	for (i = 0; i < r.nr; i++) {
		s = &r.s[i];
		EXPECT_EQ(0, s->kernel) TH_LOG("sample %zu", i);
		if (FAILED())
			break;
		if (!in_fn(s->ip, FN(hot_loop), FN(hot_middle)))
			continue;
		in_loop++;
		if (s->user >= 3 && s->ips[s->kernel] == s->ip &&
		    in_fn(s->ips[s->kernel + 1], FN(hot_middle), FN(hot_outer)) &&
		    in_fn(s->ips[s->kernel + 2], FN(hot_outer), FN(hot_end)))
			good++;
		else if (in_loop - good <= 3)
			TH_LOG("sample %zu: ip %#llx, %u user entries: %#llx %#llx %#llx",
			       i, (unsigned long long)s->ip, s->user,
			       (unsigned long long)s->ips[s->kernel],
			       (unsigned long long)s->ips[s->kernel + 1],
			       (unsigned long long)s->ips[s->kernel + 2]);
	}
	ASSERT_LE(50, in_loop) TH_LOG("%zu of %zu samples in hot_loop", in_loop,
				     r.nr);
	EXPECT_LT(in_loop * 9, good * 10) {
		TH_LOG("%zu of %zu hot_loop samples show hot_middle [%#llx, %#llx) and hot_outer [%#llx, %#llx)",
		       good, in_loop, FN(hot_middle), FN(hot_outer),
		       FN(hot_outer), FN(hot_end));
	}

	records_free(&r);
	rb_unmap(&rb);
	close(fd);
}

/*
 * One buffer, many writers at once: an inherited sampler whose copies
 * in STRESS_CHILDREN children, on every CPU, write samples (from the
 * NMI of the emulated PMU, a clock's hrtimer, or the page-fault path)
 * and MMAP and COMM records from process context, into a small ring
 * that the parent drains as they go. Every record arrives whole or is
 * counted in a LOST record: samples plus side records plus lost equal
 * the overflows (the exited copies' included) plus the side records
 * the children caused, exactly. The parent drains the ring only once
 * it is full, so that losses and records interleave. As root the time
 * bound is off for the test: a throttle's overflows take no sample and
 * are not lost (its records mark the gap), which this sum cannot
 * count; an unprivileged run checks the sum when no throttle happened.
 */
#define STRESS_CHILDREN	4
#define STRESS_ITERS	150

#define CPU_TIME_PCT_PATH	"/proc/sys/kernel/pmc_cpu_time_max_percent"

FIXTURE(ring_stress) {
	char exe[PATH_MAX];
	long cpu_time_pct;	/* to restore, or -1 */
};

FIXTURE_VARIANT(ring_stress) {
	__u64 config;
	__u64 period;
	const char *context;
	/* A late timer's skipped periods are reported lost too. */
	bool skips_periods;
};

FIXTURE_VARIANT_ADD(ring_stress, cycles_nmi) {
	.config = PMC_CONFIG(PMC_TYPE_HARDWARE, PMC_HW_CPU_CYCLES),
	.period = 1000000,	/* 1 ms of the emulated PMU's cycles */
	.context = "NMI",
};

FIXTURE_VARIANT_ADD(ring_stress, task_clock_hrtimer) {
	.config = PMC_CONFIG(PMC_TYPE_SOFTWARE, PMC_SW_TASK_CLOCK),
	.period = NSEC_PER_MSEC,
	.context = "hardirq",
	.skips_periods = true,
};

FIXTURE_VARIANT_ADD(ring_stress, page_faults_process) {
	.config = PMC_CONFIG(PMC_TYPE_SOFTWARE, PMC_SW_PAGE_FAULTS),
	.period = 1,
	.context = "process",
};

FIXTURE_SETUP(ring_stress)
{
	require_pmc_open(_metadata);
	self_exe(_metadata, self->exe, sizeof(self->exe));
	self->cpu_time_pct = -1;
	if (geteuid() == 0) {
		ASSERT_EQ(0, read_int_file(CPU_TIME_PCT_PATH,
					   &self->cpu_time_pct));
		ASSERT_EQ(0, write_int_file(CPU_TIME_PCT_PATH, 0));
	}
}

FIXTURE_TEARDOWN(ring_stress)
{
	if (self->cpu_time_pct >= 0)
		EXPECT_EQ(0, write_int_file(CPU_TIME_PCT_PATH,
					    self->cpu_time_pct));
}

/* A MMAP and a COMM a round, and each child's FORK and EXIT. */
#define STRESS_SIDE_RECORDS \
	(2ULL * STRESS_CHILDREN * STRESS_ITERS + 2ULL * STRESS_CHILDREN)

/* What the parent read; bad names the first malformed record. */
struct stress_tally {
	__u64 samples, mmaps, comms, tasks, lost, other;
	__u64 throttles;	/* from fdinfo: lost THROTTLE records too */
	char bad[200];
};

/* A child: STRESS_ITERS rounds of an exec mapping, a rename, faults. */
static int stress_child(const char *exe)
{
	size_t page = page_size();
	char name[16];
	int i, file = open(exe, O_RDONLY);
	void *code;
	char *data;

	if (file < 0)
		return 1;
	for (i = 0; i < STRESS_ITERS; i++) {
		code = mmap(NULL, page, PROT_READ | PROT_EXEC, MAP_PRIVATE,
			    file, 0);
		if (code == MAP_FAILED)
			return 2;
		munmap(code, page);
		snprintf(name, sizeof(name), "stress%d", i);
		if (prctl(PR_SET_NAME, name))
			return 3;
		data = map_fresh_pages(4);
		if (!data)
			return 4;
		touch_pages(data, 4);
		munmap(data, 4 * page);
		burn_cpu(200 * NSEC_PER_USEC);
	}
	return 0;
}

/* Check and count the records up to data_head, then hand them back. */
static bool stress_drain(struct rb *rb, const char *exe,
			 struct stress_tally *t)
{
	static union pmc_record rec;
	const struct comm_rec *c = (const void *)&rec;
	const struct mmap_rec *m = (const void *)&rec;
	const struct lost_rec *l = (const void *)&rec;
	struct sample s;
	int ret;

	rb_begin(rb);
	while ((ret = rb_next(rb, &rec)) > 0) {
		if (rec.h.misc & PMC_EVENT_MISC_OVERFLOW) {
			if (!parse_sample(&rec, REC_BASIC, &s, t->bad,
					  sizeof(t->bad)))
				return false;
			t->samples++;
			continue;
		}
		switch (rec.h.type) {
		case PMC_EVENT_MMAP:
			if (rec.h.size < sizeof(*m) + strlen(exe) + 1 ||
			    strcmp(m->filename, exe))
				goto bad;
			t->mmaps++;
			break;
		case PMC_EVENT_COMM:
			if (rec.h.size < sizeof(*c) + 8 ||
			    strncmp(c->comm, "stress", 6))
				goto bad;
			t->comms++;
			break;
		case PMC_EVENT_FORK:
		case PMC_EVENT_EXIT:
			if (rec.h.size != sizeof(struct task_rec))
				goto bad;
			t->tasks++;
			break;
		case PMC_EVENT_LOST:
			if (rec.h.size != sizeof(*l) || !l->lost)
				goto bad;
			t->lost += l->lost;
			break;
		default:
			t->other++;
		}
	}
	if (ret < 0) {
		snprintf(t->bad, sizeof(t->bad), "%s", rb->r.err);
		return false;
	}
	rb_done(rb);
	return true;
bad:
	snprintf(t->bad, sizeof(t->bad), "record type %u of %u bytes at %llu",
		 rec.h.type, rec.h.size, (unsigned long long)rb->pos);
	return false;
}

/*
 * stress_run() - the children write to a ring of @pages, and the parent
 * reads it: at once (@drain_when_full false) or only when it is full
 *
 * Return: 0 with the records read in @t and the counter's overflows in
 * *@overflows, or -1 if the counter is not available.
 */
static int stress_run(struct __test_metadata *_metadata,
		      FIXTURE_DATA(ring_stress) *self,
		      const FIXTURE_VARIANT(ring_stress) *variant,
		      unsigned int pages, bool drain_when_full,
		      struct stress_tally *t, __u64 *overflows)
{
	/* The largest record the children cause: an MMAP of this binary. */
	const __u64 max_rec = sizeof(struct mmap_rec) +
			      ((strlen(self->exe) + 8) & ~7UL);
	pid_t pids[STRESS_CHILDREN];
	unsigned int alive = 0, i;
	struct pmc_attr attr;
	int fd, status;
	struct rb rb;

	memset(&attr, 0, sizeof(attr));
	attr.config = variant->config;
	attr.irq_period = variant->period;
	attr.record_type = REC_BASIC;
	attr.exclude_kernel = 1;
	attr.inherit = 1;
	attr.mmap = 1;
	attr.comm = 1;
	attr.disabled = 1;	/* an overflow before the mmap() has no ring */
	fd = pmc_open(&attr, 0, -1, -1, 0);
	if (fd < 0 && errno == ENODEV && !cmdline_emu())
		return -1;
	ASSERT_LE(0, fd) TH_LOG("pmc_open: %s", strerror(errno));
	map_buffer(_metadata, &rb, fd, pages, true);
	counter_ioctl(_metadata, fd, PMC_IOC_ENABLE);

	fflush(NULL);
	for (i = 0; i < STRESS_CHILDREN; i++) {
		pids[i] = fork();
		ASSERT_LE(0, pids[i]);
		if (!pids[i])
			_exit(stress_child(self->exe));
		alive++;
	}
	while (alive) {
		if (!drain_when_full ||
		    rb.r.size - (pmc_ring_data_head(&rb.r) - rb.pos) <= max_rec)
			ASSERT_TRUE(stress_drain(&rb, self->exe, t)) {
				TH_LOG("%s", t->bad);
			}
		for (i = 0; i < STRESS_CHILDREN; i++) {
			if (pids[i] <= 0 ||
			    waitpid(pids[i], &status, WNOHANG) != pids[i])
				continue;
			EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status)) {
				TH_LOG("child %u: status %#x", i, status);
			}
			pids[i] = 0;
			alive--;
		}
	}
	counter_ioctl(_metadata, fd, PMC_IOC_DISABLE);
	/* The loss pending at the disable comes with a poll() after a pass. */
	do {
		ASSERT_TRUE(stress_drain(&rb, self->exe, t)) TH_LOG("%s", t->bad);
	} while (poll_now(fd) & POLLIN && rb_begin(&rb) != rb.pos);
	ASSERT_TRUE(stress_drain(&rb, self->exe, t)) TH_LOG("%s", t->bad);

	*overflows = nr_overflows(_metadata, fd);
	t->throttles = nr_throttles(_metadata, fd);
	TH_LOG("%s: %llu overflows, %llu throttles, %llu side records caused; read %llu samples, %llu MMAP, %llu COMM, %llu FORK and EXIT, %llu lost, %llu throttle records",
	       variant->context, (unsigned long long)*overflows,
	       (unsigned long long)t->throttles, STRESS_SIDE_RECORDS,
	       (unsigned long long)t->samples, (unsigned long long)t->mmaps,
	       (unsigned long long)t->comms, (unsigned long long)t->tasks,
	       (unsigned long long)t->lost, (unsigned long long)t->other);
	rb_unmap(&rb);
	close(fd);
	return 0;
}

/* Samples plus side records plus lost: every record the run caused. */
static void expect_all_accounted(struct __test_metadata *_metadata,
				 FIXTURE_DATA(ring_stress) *self,
				 const struct stress_tally *t, __u64 overflows)
{
	const __u64 side = STRESS_SIDE_RECORDS;

	/* A THROTTLE and at most one UNTHROTTLE per throttle. */
	EXPECT_LE(t->other, 2 * t->throttles);
	/*
	 * A throttled overflow takes no sample and is not lost, and a
	 * throttle record that did not fit is counted lost: only fdinfo
	 * tells for sure that no throttle happened.
	 */
	if (t->throttles) {
		EXPECT_LT(self->cpu_time_pct, 0) TH_LOG("throttled as root");
		SKIP(return, "%llu throttles: the sum cannot hold",
		     (unsigned long long)t->throttles);
	}
	EXPECT_EQ(overflows + side, t->samples + t->mmaps + t->comms +
				    t->tasks + t->lost);
}

/* A two-page ring, drained only when full: losses and records interleave. */
TEST_F(ring_stress, every_record_arrives_or_is_counted)
{
	struct stress_tally t = { };
	__u64 overflows;

	if (stress_run(_metadata, self, variant, 2, true, &t, &overflows))
		SKIP(return, "no hardware PMU (boot with pmc_emu=MODEL for the emulated one)");
	expect_all_accounted(_metadata, self, &t, overflows);
	/* The children made many rings' worth. */
	EXPECT_LT(0, t.lost);
}

/*
 * A ring larger than everything the run writes (128 pages, within an
 * unprivileged user's pmc_mlock_kb): however the writers overlap, in
 * NMI, hardirq or process context, on any CPU, no record is lost. (A
 * clock's late timers report the periods they stepped over as lost,
 * which a reader cannot tell from the ring's losses: the sum only.)
 */
TEST_F(ring_stress, roomy_ring_loses_nothing)
{
	struct stress_tally t = { };
	__u64 overflows;

	if (stress_run(_metadata, self, variant, 128, false, &t, &overflows))
		SKIP(return, "no hardware PMU (boot with pmc_emu=MODEL for the emulated one)");
	expect_all_accounted(_metadata, self, &t, overflows);
	if (!variant->skips_periods)
		EXPECT_EQ(0, t.lost);
}

int main(int argc, char **argv)
{
	/*
	 * comm_records and vdso_record exec this binary: leave at once,
	 * after writing where the vDSO is to the fd in argv[2] if given.
	 */
	if (argc > 1 && !strcmp(argv[1], EXEC_EXIT_ARG)) {
		unsigned long vdso = getauxval(AT_SYSINFO_EHDR);

		if (argc > 2 && write(atoi(argv[2]), &vdso, sizeof(vdso)) !=
				sizeof(vdso))
			return 1;
		return 0;
	}
	return test_harness_run(argc, argv);
}
