// SPDX-License-Identifier: GPL-2.0
/*
 * Regression tests for pmc_open(2) under unusual or hostile use: sample
 * periods with the sign bit set, ioctls on inherited counters, groups
 * that can never fit, opens racing with exit, PMC_IOC_REFRESH budgets,
 * group samples, garbage in data_tail, pid namespaces, the records of
 * per-CPU counters and the order of MUNMAP and MMAP records when a
 * MAP_FIXED mapping replaces another.
 *
 * Every counter excludes kernel mode, so the binary runs as root and as
 * an unprivileged user at pmc_paranoid 2; tests that need root skip
 * otherwise. Hardware tests need the emulated PMU (pmc_emu=MODEL on the
 * kernel command line), whose counter count is known, and skip without.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <linux/perf_event.h>

#include "../kselftest_harness.h"
#include "pmc_harness.h"
#include "pmc_ring.h"

#define SW(id)		PMC_CONFIG(PMC_TYPE_SOFTWARE, (id))

/* A valid period no workload here reaches: samples never come. */
#define NEVER_PERIOD	(1ULL << 62)

/* An executable file that exists in the test guest. */
#define BUSYBOX		"/bin/busybox"

/* A group holds at most this many counters, leader included. */
#define GROUP_MAX	1024

#define load(x)		__atomic_load_n(&(x), __ATOMIC_RELAXED)
#define store(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

/* Samples from @from to data_head, which must all be of @type. */
static unsigned int ring_samples(struct __test_metadata *_metadata,
				 struct pmc_ring *r, __u64 from, __u32 type)
{
	__u64 pos = from, head = ring_head(r);
	unsigned int nr = 0;
	char err[160];
	int ret;

	while ((ret = ring_next(r, &pos, head, err, sizeof(err))) > 0) {
		if (!is_sample())
			continue;
		ASSERT_EQ(type, rec.h.type) TH_LOG("sample at %llu",
						   (unsigned long long)pos);
		nr++;
	}
	ASSERT_EQ(0, ret) TH_LOG("%s", err);
	return nr;
}

/* Wait up to 2 s for fdinfo's pmc-state of @fd to read @want. */
static void expect_state(struct __test_metadata *_metadata, int fd,
			 const char *want)
{
	char state[32] = "";
	int i;

	for (i = 0; i < 200; i++) {
		ASSERT_EQ(0, fdinfo_field(fd, "pmc-state", state, sizeof(state)));
		if (!strcmp(state, want))
			return;
		usleep(10 * 1000);
	}
	EXPECT_STREQ(want, state);
}

static void set_task_counters(struct __test_metadata *_metadata, bool on)
{
	ASSERT_EQ(0, prctl(on ? PR_TASK_PMC_ENABLE : PR_TASK_PMC_DISABLE,
			   0, 0, 0, 0)) TH_LOG("prctl: %s", strerror(errno));
}

FIXTURE(hostile) {
	bool root;
	char emu_name[16];		/* pmc_emu= of the command line, or "" */
	const struct emu_model *emu;	/* the model it names, if known */
	int hw_err;			/* errno of opening cycles, 0: opened */
};

FIXTURE_SETUP(hostile)
{
	const char *name = cmdline_emu();
	struct pmc_attr attr;

	require_pmc_open(_metadata);
	self->root = geteuid() == 0;
	snprintf(self->emu_name, sizeof(self->emu_name), "%s", name ?: "");
	self->emu = emu_model_by_name(name);
	pmc_sw_attr(&attr, 0, 0);
	attr.config = HW(PMC_HW_CPU_CYCLES);
	self->hw_err = pmc_open_errno(&attr, 0, -1, -1, 0);
}

FIXTURE_TEARDOWN(hostile)
{
}

/*
 * 4. Opens racing with exit: children that exit at once, counters
 * opened on them from two threads meanwhile. ESRCH is the only error;
 * afterwards no counter or context is left behind. This test comes
 * first: counters are freed by kfree_rcu(), seconds late, so after the
 * other tests the slab baseline would be far too high to tell.
 */
#define RACE_NS		(2 * NSEC_PER_SEC)
#define RACE_BATCH	8
#define RACE_LIFE_NS	(2 * NSEC_PER_MSEC)	/* at most, after fork */
#define SLAB_SLACK	16
#define SLAB_WAIT_MS	10000	/* kfree_rcu() batches for seconds */

/* The children alive now, shared by the forking thread and the opener. */
struct exit_race {
	pid_t pids[RACE_BATCH];		/* load()/store() */
	int stop;
};

/* What one opening thread saw. */
struct race_stats {
	unsigned long opened;
	unsigned long vanished;
	char err[160];
};

static const unsigned int race_events[] = {
	PMC_SW_TASK_CLOCK, PMC_SW_PAGE_FAULTS,
};

/* Open, read and close a counter of each event on @pid. */
static void race_open_all(struct race_stats *st, pid_t pid)
{
	struct pmc_attr attr;
	unsigned int i;
	__u64 v[4];
	int fd;

	for (i = 0; i < ARRAY_SIZE(race_events) && !st->err[0]; i++) {
		pmc_sw_attr(&attr, race_events[i], 0);
		fd = pmc_open(&attr, pid, -1, -1, 0);
		if (fd < 0) {
			if (errno == ESRCH)
				st->vanished++;
			else
				snprintf(st->err, sizeof(st->err),
					 "pmc_open(event %u, pid %d): %s",
					 race_events[i], pid, strerror(errno));
			continue;
		}
		st->opened++;
		if (read(fd, v, sizeof(v)) != sizeof(__u64))
			snprintf(st->err, sizeof(st->err),
				 "read() of a counter on pid %d: %s", pid,
				 strerror(errno));
		close(fd);
	}
}

struct race_opener {
	struct exit_race *race;
	struct race_stats st;
};

/* Cycle over the live children until told to stop. */
static void *race_opener_main(void *arg)
{
	struct race_opener *o = arg;
	unsigned long vanished;
	unsigned int i;

	while (!load(o->race->stop) && !o->st.err[0]) {
		vanished = o->st.vanished;
		for (i = 0; i < RACE_BATCH; i++)
			race_open_all(&o->st, load(o->race->pids[i]));
		/* all gone: let the forking thread make more */
		if (o->st.vanished - vanished == RACE_BATCH * ARRAY_SIZE(race_events))
			sched_yield();
	}
	return NULL;
}

static unsigned int race_rand(__u64 *rng)
{
	/* xorshift64 */
	*rng ^= *rng << 13;
	*rng ^= *rng >> 7;
	*rng ^= *rng << 17;
	return *rng;
}

/* Objects in use in a pmc slab cache, per-CPU slabs and quarantine flushed. */
static long slab_objects(const char *cache)
{
	char path[128];
	long val = -1;

	snprintf(path, sizeof(path), "/sys/kernel/slab/%s/shrink", cache);
	if (write_file(path, "1"))
		return -1;
	snprintf(path, sizeof(path), "/sys/kernel/slab/%s/objects", cache);
	if (read_int_file(path, &val))
		return -1;
	return val;
}

/* Frees go through RCU: two equal readings in a row, or the last one. */
static long slab_objects_settled(const char *cache)
{
	long prev = slab_objects(cache), now = prev;
	int i;

	for (i = 0; i < 20 && prev >= 0; i++) {
		usleep(50 * 1000);
		now = slab_objects(cache);
		if (now == prev)
			break;
		prev = now;
	}
	return now;
}

TEST_F_TIMEOUT(hostile, open_exit_race, 60)
{
	long base[ARRAY_SIZE(pmc_caches)], now;
	struct race_opener opener = { };
	struct race_stats st = { };
	unsigned long forks = 0;
	bool slab = self->root;
	unsigned int i, waited;
	__u64 deadline, rng, life;
	struct exit_race race = { };
	pthread_t thread;
	pid_t pid;

	for (i = 0; slab && i < ARRAY_SIZE(pmc_caches); i++) {
		base[i] = slab_objects_settled(pmc_caches[i]);
		slab = base[i] >= 0;
	}

	opener.race = &race;
	rng = monotonic_ns() | 1;
	deadline = monotonic_ns() + RACE_NS;
	while (monotonic_ns() < deadline && !st.err[0] && !opener.st.err[0]) {
		for (i = 0; i < RACE_BATCH; i++) {
			/* half exit at once, half within 2 ms */
			life = race_rand(&rng) % 2 ? race_rand(&rng) % RACE_LIFE_NS : 0;
			fflush(NULL);
			pid = fork();
			ASSERT_LE(0, pid) TH_LOG("fork: %s", strerror(errno));
			if (pid == 0) {
				life += monotonic_ns();
				while (monotonic_ns() < life)
					;
				_exit(0);
			}
			store(race.pids[i], pid);
			forks++;
		}
		/* the opener starts once there are children */
		if (forks == RACE_BATCH)
			ASSERT_EQ(0, pthread_create(&thread, NULL,
						    race_opener_main, &opener));
		for (i = 0; i < RACE_BATCH; i++)
			race_open_all(&st, race.pids[i]);
		for (i = 0; i < RACE_BATCH; i++)
			ASSERT_EQ(race.pids[i], waitpid(race.pids[i], NULL, 0));
	}
	store(race.stop, 1);
	if (forks >= RACE_BATCH)
		ASSERT_EQ(0, pthread_join(thread, NULL));

	EXPECT_EQ(0, st.err[0]) TH_LOG("%s", st.err);
	EXPECT_EQ(0, opener.st.err[0]) TH_LOG("opener thread: %s",
					      opener.st.err);
	TH_LOG("%lu children; %lu counters opened, %lu opens found the child gone",
	       forks, st.opened + opener.st.opened,
	       st.vanished + opener.st.vanished);
	EXPECT_LT(0UL, st.opened + opener.st.opened);

	if (!slab) {
		if (_metadata->exit_code == KSFT_PASS)
			SKIP(return, "opens checked; leak check skipped: %s",
			     self->root ? "no /sys/kernel/slab/pmc_*" : "not root");
		return;
	}
	for (i = 0; i < ARRAY_SIZE(pmc_caches); i++) {
		for (waited = 0; ; waited += 100) {
			now = slab_objects(pmc_caches[i]);
			if (now <= base[i] + SLAB_SLACK || waited >= SLAB_WAIT_MS)
				break;
			usleep(100 * 1000);
		}
		TH_LOG("%s: %ld objects before, %ld after", pmc_caches[i],
		       base[i], now);
		EXPECT_GE(base[i] + SLAB_SLACK, now);
	}
}

/*
 * 1. irq_period with bit 63 set is negative in the period arithmetic:
 * EINVAL, for software and hardware events alike. The counters are
 * opened disabled, so that a kernel that wrongly accepts one cannot
 * loop on it: it only fails the test.
 */
TEST_F(hostile, period_bit63_einval)
{
	static const __u64 configs[] = {
		SW(PMC_SW_PAGE_FAULTS), SW(PMC_SW_CONTEXT_SWITCHES),
		SW(PMC_SW_TASK_CLOCK), HW(PMC_HW_CPU_CYCLES),
	};
	static const __u64 periods[] = {
		~0ULL, 1ULL << 63, (1ULL << 63) | 1,
	};
	struct pmc_attr attr;
	unsigned int i, j;
	int err;

	for (i = 0; i < ARRAY_SIZE(configs); i++) {
		for (j = 0; j < ARRAY_SIZE(periods); j++) {
			pmc_sw_attr(&attr, 0, 0);
			attr.config = configs[i];
			attr.irq_period = periods[j];
			attr.record_type = PMC_RECORD_IP;
			attr.disabled = 1;
			err = pmc_open_errno(&attr, 0, -1, -1, 0);
			/* no PMU: ENODEV may come first, never success */
			if (err == ENODEV && self->hw_err == ENODEV &&
			    PMC_CONFIG_TYPE(configs[i]) == PMC_TYPE_HARDWARE)
				continue;
			EXPECT_EQ(EINVAL, err) {
				TH_LOG("config %#llx, irq_period %#llx: %s",
				       (unsigned long long)configs[i],
				       (unsigned long long)periods[j],
				       err ? strerror(err) : "opened");
			}
		}
		/* the largest valid period opens */
		if (PMC_CONFIG_TYPE(configs[i]) != PMC_TYPE_SOFTWARE)
			continue;
		attr.irq_period = (1ULL << 63) - 1;
		err = pmc_open_errno(&attr, 0, -1, -1, 0);
		EXPECT_EQ(0, err) {
			TH_LOG("config %#llx, irq_period 2^63-1: %s",
			       (unsigned long long)configs[i], strerror(err));
		}
	}
}

/*
 * 1. A huge valid period on an event that happens often: the event is
 * counted, no sample is written, and nothing loops. Context switches
 * only where this user may count kernel mode.
 */
static void huge_period_run(struct __test_metadata *_metadata,
			    unsigned int id)
{
	const size_t nr = 1000;
	__u64 start, elapsed, value;
	struct pmc_attr attr;
	struct pmc_ring r;
	char *pages;
	size_t i;
	int fd;

	if (id == PMC_SW_PAGE_FAULTS)
		pmc_sw_attr(&attr, id, 0);
	else if (!pmc_sw_attr_kernel(&attr, id, 0))
		return;		/* kernel mode, which this user may not count */
	pages = fresh_pages(_metadata, nr);
	attr.irq_period = NEVER_PERIOD;
	attr.record_type = PMC_RECORD_IP;
	fd = counter_open(_metadata, &attr, 0, -1, -1);
	ring_map(_metadata, &r, fd, 1, true);

	start = monotonic_ns();
	if (id == PMC_SW_PAGE_FAULTS) {
		touch_pages(pages, nr);
	} else {
		for (i = 0; i < nr; i++)
			sched_yield();
		/*
		 * Yielding alone switches nothing on an idle CPU: sleep,
		 * for 1 ms, longer than a debug kernel under TCG takes to
		 * get there (a 100 us sleep can expire before it blocks);
		 * still, only half of them must switch.
		 */
		for (i = 0; i < 20; i++)
			usleep(1000);
	}
	elapsed = monotonic_ns() - start;
	value = counter_value(_metadata, fd);

	EXPECT_LE(id == PMC_SW_PAGE_FAULTS ? nr : 10, value) {
		TH_LOG("event %u counted %llu", id, (unsigned long long)value);
	}
	EXPECT_EQ(0ULL, ring_head(&r)) TH_LOG("event %u: a sample was written", id);
	EXPECT_EQ(0ULL, nr_overflows(_metadata, fd));
	EXPECT_GT(3 * NSEC_PER_SEC, elapsed) {
		TH_LOG("event %u: the workload took %llu ms", id,
		       (unsigned long long)(elapsed / NSEC_PER_MSEC));
	}
	ring_unmap(&r);
	close(fd);
	munmap(pages, nr * page_size());
}

TEST_F_TIMEOUT(hostile, huge_period_no_hang, 60)
{
	huge_period_run(_metadata, PMC_SW_PAGE_FAULTS);
	huge_period_run(_metadata, PMC_SW_CONTEXT_SWITCHES);
}

/*
 * 1b. The largest period with the widest randomization: a draw may be
 * up to 1.5 times S64_MAX, which must not become a negative timeout
 * (a clock due at once, again and again) or a negative period count.
 * A clock and an event both count and never overflow. Half the draws
 * are past S64_MAX: eight counters of each kind.
 */
TEST_F_TIMEOUT(hostile, huge_random_period_no_storm, 60)
{
	static const unsigned int ids[] = {
		PMC_SW_TASK_CLOCK, PMC_SW_CPU_CLOCK, PMC_SW_PAGE_FAULTS,
	};
	struct pmc_attr attr;
	struct pmc_ring r;
	unsigned int i;
	__u64 value;
	char *pages;
	int fd;

	for (i = 0; i < 8 * ARRAY_SIZE(ids); i++) {
		pmc_sw_attr(&attr, ids[i % ARRAY_SIZE(ids)], 0);
		attr.irq_period = INT64_MAX;
		attr.period_rand = PMC_PERIOD_RAND_MAX;
		attr.record_type = PMC_RECORD_IP;
		fd = counter_open(_metadata, &attr, 0, -1, -1);
		ring_map(_metadata, &r, fd, 1, true);
		pages = fresh_pages(_metadata, 100);
		touch_pages(pages, 100);
		burn_cpu(20 * NSEC_PER_MSEC);
		value = counter_value(_metadata, fd);

		EXPECT_LT(0ULL, value) TH_LOG("counter %u counted nothing", i);
		EXPECT_EQ(0ULL, nr_overflows(_metadata, fd)) {
			TH_LOG("counter %u: overflows of a period near S64_MAX",
			       i);
		}
		EXPECT_EQ(0ULL, ring_head(&r)) {
			TH_LOG("counter %u: a record was written", i);
		}
		ring_unmap(&r);
		close(fd);
		munmap(pages, 100 * page_size());
		if (_metadata->exit_code == KSFT_FAIL)
			break;
	}
}

static int burn_child(void *arg)
{
	burn_cpu(*(__u64 *)arg);
	return 0;
}

/*
 * 2a. DISABLE and RESET on an inherited counter reach the copy of a
 * live child: the child's second of CPU time, almost all of it after
 * the ioctls, is not added when it exits.
 */
TEST_F(hostile, inherit_disable_reset)
{
	__u64 burn = NSEC_PER_SEC, value, child_ns;
	struct pmc_attr attr;
	struct rusage ru;
	pid_t pid;
	int fd;

	pmc_sw_attr(&attr, PMC_SW_TASK_CLOCK, 0);
	attr.inherit = 1;
	fd = counter_open(_metadata, &attr, 0, -1, -1);
	pid = spawn(_metadata, burn_child, &burn);
	usleep(100 * 1000);
	counter_ioctl(_metadata, fd, PMC_IOC_DISABLE);
	counter_ioctl(_metadata, fd, PMC_IOC_RESET);
	ASSERT_EQ(0, reap(_metadata, pid, &ru));
	value = counter_value(_metadata, fd);
	child_ns = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * NSEC_PER_SEC +
		   (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * NSEC_PER_USEC;

	EXPECT_LE(burn * 9 / 10, child_ns);
	EXPECT_GT(100 * NSEC_PER_MSEC, value) {
		TH_LOG("counted %llu ms after DISABLE and RESET; the child ran %llu ms",
		       (unsigned long long)(value / NSEC_PER_MSEC),
		       (unsigned long long)(child_ns / NSEC_PER_MSEC));
	}
	close(fd);
}

/* A child that publishes its CPU time as it burns, and at the end. */
struct progress {
	__u64 target;
	__u64 cpu;
};

static int progress_child(void *arg)
{
	struct progress *p = arg;
	__u64 now;

	for (;;) {
		now = thread_cputime_ns();
		store(p->cpu, now);
		if (now >= p->target)
			return 0;
		burn_cpu(0);	/* one short pass */
	}
}

/*
 * 2b. ENABLE on an inherited counter opened disabled reaches the copy of
 * a live child: what the child burns after the ioctl is counted. The
 * child's own clock, read just before and after the ioctl, bounds it;
 * the parent's counter counts the parent's own time from the ioctl on
 * as well (the ioctl waits for the child's CPU to take its IPI, which
 * can take a while when both CPUs are busy).
 */
TEST_F(hostile, inherit_enable)
{
	const __u64 slack = 20 * NSEC_PER_MSEC;
	__u64 before, after, final, value, lo, hi, own;
	struct pmc_attr attr;
	struct progress *p;
	pid_t pid;
	int fd;

	p = mmap(NULL, sizeof(*p), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, p);
	p->target = 600 * NSEC_PER_MSEC;
	p->cpu = 0;
	pmc_sw_attr(&attr, PMC_SW_TASK_CLOCK, 0);
	attr.inherit = 1;
	attr.disabled = 1;
	fd = counter_open(_metadata, &attr, 0, -1, -1);
	pid = spawn(_metadata, progress_child, p);
	usleep(200 * 1000);
	own = thread_cputime_ns();
	before = load(p->cpu);
	counter_ioctl(_metadata, fd, PMC_IOC_ENABLE);
	after = load(p->cpu);
	ASSERT_EQ(0, reap(_metadata, pid, NULL));
	final = load(p->cpu);
	value = counter_value(_metadata, fd);
	own = thread_cputime_ns() - own;

	/* the child enabled between before and after (plus one pass) */
	lo = final > after + slack ? final - after - slack : 0;
	hi = final - before + own + slack;
	TH_LOG("counted %llu ms; the child was at %llu..%llu of %llu ms at ENABLE; the parent ran %llu ms from then",
	       (unsigned long long)(value / NSEC_PER_MSEC),
	       (unsigned long long)(before / NSEC_PER_MSEC),
	       (unsigned long long)(after / NSEC_PER_MSEC),
	       (unsigned long long)(final / NSEC_PER_MSEC),
	       (unsigned long long)(own / NSEC_PER_MSEC));
	close(fd);
	munmap(p, sizeof(*p));
	/* a host so slow that the child was all but done tells nothing */
	if (final < after + 100 * NSEC_PER_MSEC)
		SKIP(return, "ENABLE came %llu ms before the child's end",
		     (unsigned long long)((final - after) / NSEC_PER_MSEC));
	EXPECT_LE(lo, value);
	EXPECT_GE(hi, value);
}

/*
 * 2c. An exiting child adds its count and times as one step: a reader
 * never sees a task-clock value ahead of its time_running. task-clock
 * runs on the clock of time_running, so not even by a nanosecond (a
 * host stall between two clock reads once made it 3 ms). The window
 * is a few instructions per exit, so after the child processes come
 * rounds of threads, which are cheaper to make, until a reader saw an
 * inconsistent read or the time is up.
 */
#define FOLD_CHILDREN	50
#define FOLD_NS		(2 * NSEC_PER_SEC)

struct fold_reader {
	int fd;
	int stop;
	unsigned long reads;
	unsigned long bad;
	struct pmc_reading first_bad;
	int err;
};

static void *fold_reader_main(void *arg)
{
	struct fold_reader *fr = arg;
	struct pmc_reading r;
	int ret;

	while (!load(fr->stop)) {
		ret = pmc_read(fr->fd, ALL_TIMES, &r);
		if (ret) {
			fr->err = ret;
			break;
		}
		fr->reads++;
		if (r.value <= r.running && r.running <= r.enabled)
			continue;
		if (!load(fr->bad))
			fr->first_bad = r;
		store(fr->bad, fr->bad + 1);
	}
	return NULL;
}

static void *burn_thread(void *arg)
{
	burn_cpu(*(__u64 *)arg);
	return NULL;
}

TEST_F_TIMEOUT(hostile, inherit_fold_atomic, 60)
{
	__u64 burn = 5 * NSEC_PER_MSEC, deadline;
	pthread_t reader, threads[FOLD_CHILDREN];
	unsigned int i, rounds = 0;
	pid_t pids[FOLD_CHILDREN];
	struct fold_reader fr = { };
	struct pmc_attr attr;
	struct pmc_reading r;

	pmc_sw_attr(&attr, PMC_SW_TASK_CLOCK, ALL_TIMES);
	attr.inherit = 1;
	fr.fd = counter_open(_metadata, &attr, 0, -1, -1);
	deadline = monotonic_ns() + FOLD_NS;
	ASSERT_EQ(0, pthread_create(&reader, NULL, fold_reader_main, &fr));
	for (i = 0; i < FOLD_CHILDREN; i++)
		pids[i] = spawn(_metadata, burn_child, &burn);
	for (i = 0; i < FOLD_CHILDREN; i++)
		EXPECT_EQ(0, reap(_metadata, pids[i], NULL));
	/* the children were added before wait() returned */
	r = counter_read(_metadata, fr.fd, ALL_TIMES);
	EXPECT_LE(FOLD_CHILDREN * burn * 9 / 10, r.value);

	while (!load(fr.bad) && monotonic_ns() < deadline) {
		for (i = 0; i < FOLD_CHILDREN; i++)
			ASSERT_EQ(0, pthread_create(&threads[i], NULL,
						    burn_thread, &burn));
		for (i = 0; i < FOLD_CHILDREN; i++)
			ASSERT_EQ(0, pthread_join(threads[i], NULL));
		rounds++;
	}
	store(fr.stop, 1);
	ASSERT_EQ(0, pthread_join(reader, NULL));
	r = counter_read(_metadata, fr.fd, ALL_TIMES);

	TH_LOG("%lu reads over %u children and %u rounds of %u threads",
	       fr.reads, FOLD_CHILDREN, rounds, FOLD_CHILDREN);
	EXPECT_EQ(0, fr.err) TH_LOG("read: %s", strerror(-fr.err));
	EXPECT_LT(0UL, fr.reads);
	EXPECT_EQ(0UL, fr.bad) {
		TH_LOG("%lu of %lu reads inconsistent; first: value %llu, enabled %llu, running %llu",
		       fr.bad, fr.reads,
		       (unsigned long long)fr.first_bad.value,
		       (unsigned long long)fr.first_bad.enabled,
		       (unsigned long long)fr.first_bad.running);
	}
	EXPECT_GE(r.running, r.value);
	EXPECT_GE(r.enabled, r.running);
	close(fr.fd);
}

/*
 * 3. A group with more hardware counters than the PMU has could never
 * be scheduled: the open that would make it so fails with EINVAL.
 * Software members take no PMU slot.
 */
TEST_F(hostile, hw_group_overcommit)
{
	int fds[16], sw, nr = 0, err;
	struct pmc_attr attr;
	unsigned int i;

	if (!self->emu_name[0])
		SKIP(return, "no emulated PMU (boot with pmc_emu=MODEL); cycles: %s",
		     self->hw_err ? strerror(self->hw_err) : "a real PMU of unknown size");
	if (!self->emu)
		SKIP(return, "pmc_emu=%s is not a model this test knows",
		     self->emu_name);
	ASSERT_EQ(0, self->hw_err) TH_LOG("cycles: %s", strerror(self->hw_err));
	ASSERT_GT(ARRAY_SIZE(fds), self->emu->nr_counters);

	pmc_sw_attr(&attr, 0, 0);
	attr.config = HW(PMC_HW_CPU_CYCLES);
	attr.disabled = 1;
	fds[nr++] = counter_open(_metadata, &attr, 0, -1, -1);
	attr.disabled = 0;
	for (i = 1; i < self->emu->nr_counters; i++)
		fds[nr++] = counter_open(_metadata, &attr, 0, -1, fds[0]);

	pmc_sw_attr(&attr, PMC_SW_TASK_CLOCK, 0);
	sw = counter_open(_metadata, &attr, 0, -1, fds[0]);

	pmc_sw_attr(&attr, 0, 0);
	attr.config = HW(PMC_HW_CPU_CYCLES);
	err = pmc_open_errno(&attr, 0, -1, fds[0], 0);
	EXPECT_EQ(EINVAL, err) {
		TH_LOG("cycles #%u in a group on %s's %u counters: %s",
		       self->emu->nr_counters + 1, self->emu->name,
		       self->emu->nr_counters, err ? strerror(err) : "opened");
	}
	close(sw);
	close_group(fds, nr);
}

/*
 * 3. A software group holds at most GROUP_MAX counters, leader included:
 * the open that would make it one more fails with EINVAL.
 */
TEST_F_TIMEOUT(hostile, sw_group_1024, 60)
{
	__u64 *buf;
	int *fds, nr = 0, err;
	struct pmc_attr attr;
	struct rlimit rl;
	ssize_t n;

	ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &rl));
	if (rl.rlim_cur < 2048) {
		if (rl.rlim_max < 2048 && self->root)
			rl.rlim_max = 2048;
		rl.rlim_cur = rl.rlim_max < 2048 ? rl.rlim_max : 2048;
		setrlimit(RLIMIT_NOFILE, &rl);
		ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &rl));
	}
	if (rl.rlim_cur < GROUP_MAX + 16)
		SKIP(return, "RLIMIT_NOFILE is %llu and cannot be raised",
		     (unsigned long long)rl.rlim_cur);

	fds = calloc(GROUP_MAX, sizeof(*fds));
	buf = calloc(GROUP_MAX + 2, sizeof(*buf));
	ASSERT_TRUE(fds && buf);
	pmc_sw_attr(&attr, PMC_SW_PAGE_FAULTS, PMC_FORMAT_GROUP);
	attr.disabled = 1;	/* 1024 counters per context switch: no */
	fds[nr++] = counter_open(_metadata, &attr, 0, -1, -1);
	pmc_sw_attr(&attr, PMC_SW_PAGE_FAULTS, 0);
	while (nr < GROUP_MAX)
		fds[nr++] = counter_open(_metadata, &attr, 0, -1, fds[0]);

	err = pmc_open_errno(&attr, 0, -1, fds[0], 0);
	EXPECT_EQ(EINVAL, err) {
		TH_LOG("member %d of a group: %s", GROUP_MAX + 1,
		       err ? strerror(err) : "opened");
	}
	/* the group is whole: a group read sees all of it */
	n = read(fds[0], buf, (GROUP_MAX + 2) * sizeof(*buf));
	EXPECT_EQ((ssize_t)((GROUP_MAX + 1) * sizeof(*buf)), n);
	EXPECT_EQ((__u64)GROUP_MAX, buf[0]);
	close_group(fds, nr);
	free(fds);
	free(buf);
}

/*
 * 5. PMC_IOC_REFRESH(n) gives exactly n samples, then the counter is
 * off. A spent budget stays spent when the counter is enabled again by
 * prctl(); only a new REFRESH re-arms it.
 */
#define REFRESH_PAGES	200

static int refresh_sampler(struct __test_metadata *_metadata, struct pmc_ring *r)
{
	struct pmc_attr attr;
	int fd;

	pmc_sw_attr(&attr, PMC_SW_PAGE_FAULTS, 0);
	attr.irq_period = 1;
	attr.record_type = PMC_RECORD_IP;
	attr.disabled = 1;
	fd = counter_open(_metadata, &attr, 0, -1, -1);
	ring_map(_metadata, r, fd, 8, true);
	return fd;
}

static void refresh(struct __test_metadata *_metadata, int fd,
		    unsigned long nr)
{
	ASSERT_EQ(0, ioctl(fd, PMC_IOC_REFRESH, nr)) {
		TH_LOG("REFRESH(%lu): %s", nr, strerror(errno));
	}
}

TEST_F(hostile, refresh_exact)
{
	char *pages = fresh_pages(_metadata, 3 * REFRESH_PAGES);
	__u64 before, after;
	struct pmc_ring r;
	int fd;

	fd = refresh_sampler(_metadata, &r);
	refresh(_metadata, fd, 5);
	touch_pages(pages, REFRESH_PAGES);
	expect_state(_metadata, fd, "off");
	EXPECT_EQ(5U, ring_samples(_metadata, &r, 0, PMC_RECORD_IP));

	/* enabled again, but the budget is spent: counts, no samples */
	before = counter_value(_metadata, fd);
	set_task_counters(_metadata, true);
	touch_pages(pages + REFRESH_PAGES * page_size(), REFRESH_PAGES);
	after = counter_value(_metadata, fd);
	EXPECT_LE(before + REFRESH_PAGES, after);
	EXPECT_EQ(5U, ring_samples(_metadata, &r, 0, PMC_RECORD_IP)) {
		TH_LOG("samples after prctl(PR_TASK_PMC_ENABLE) of a spent budget");
	}

	refresh(_metadata, fd, 3);
	touch_pages(pages + 2 * REFRESH_PAGES * page_size(), REFRESH_PAGES);
	expect_state(_metadata, fd, "off");
	EXPECT_EQ(8U, ring_samples(_metadata, &r, 0, PMC_RECORD_IP));

	ring_unmap(&r);
	close(fd);
	munmap(pages, 3 * REFRESH_PAGES * page_size());
}

/* 5. The same while another thread keeps moving the faulting thread. */
#define MIGRATE_ROUNDS	10
#define MIGRATE_PAGES	100

struct mover {
	pid_t tid;
	int cpus[2];
	int stop;
	unsigned long moves;
	int err;
};

static void *mover_main(void *arg)
{
	struct mover *m = arg;
	cpu_set_t set;
	__u64 until;

	while (!load(m->stop)) {
		CPU_ZERO(&set);
		CPU_SET(m->cpus[m->moves & 1], &set);
		if (sched_setaffinity(m->tid, sizeof(set), &set)) {
			m->err = errno;
			break;
		}
		m->moves++;
		/* let it fault a little on each CPU */
		until = monotonic_ns() + 20 * NSEC_PER_USEC;
		while (monotonic_ns() < until)
			;
	}
	return NULL;
}

TEST_F_TIMEOUT(hostile, refresh_migration, 60)
{
	char *pages = fresh_pages(_metadata, MIGRATE_ROUNDS * MIGRATE_PAGES);
	unsigned int round, want = 0, got;
	struct mover m = { .tid = gettid() };
	int cpus[2], fd;
	pthread_t thread;
	struct pmc_ring r;
	cpu_set_t set;

	if (allowed_cpus(cpus, 2) < 2)
		SKIP(return, "needs two CPUs");
	m.cpus[0] = cpus[0];
	m.cpus[1] = cpus[1];
	fd = refresh_sampler(_metadata, &r);
	ASSERT_EQ(0, pthread_create(&thread, NULL, mover_main, &m));

	for (round = 0; round < MIGRATE_ROUNDS; round++) {
		refresh(_metadata, fd, 1 + round % 5);
		want += 1 + round % 5;
		touch_pages(pages + round * MIGRATE_PAGES * page_size(),
			    MIGRATE_PAGES);
		expect_state(_metadata, fd, "off");
		got = ring_samples(_metadata, &r, 0, PMC_RECORD_IP);
		EXPECT_EQ(want, got) TH_LOG("round %u", round);
		if (_metadata->exit_code == KSFT_FAIL)
			break;
	}
	store(m.stop, 1);
	ASSERT_EQ(0, pthread_join(thread, NULL));
	EXPECT_EQ(0, m.err) TH_LOG("sched_setaffinity: %s", strerror(m.err));
	TH_LOG("%lu moves between CPU %d and %d", m.moves, cpus[0], cpus[1]);

	CPU_ZERO(&set);
	CPU_SET(cpus[0], &set);
	CPU_SET(cpus[1], &set);
	sched_setaffinity(0, sizeof(set), &set);
	ring_unmap(&r);
	close(fd);
	munmap(pages, MIGRATE_ROUNDS * MIGRATE_PAGES * page_size());
}

/*
 * 6. A group sample carries the members' counts as of the overflow: a
 * task-clock member grows from one page-fault sample to the next,
 * without waiting for a context switch to fold it.
 */
#define GROUP_PAGES	2000
#define GROUP_PERIOD	16

TEST_F(hostile, group_sample_values)
{
	char *pages = fresh_pages(_metadata, GROUP_PAGES);
	__u64 pos = 0, head, prev_member = 0, member, leader;
	unsigned int nr = 0, equal = 0;
	struct pmc_attr attr;
	int fd, member_fd, ret;
	char err[160];
	struct pmc_ring r;

	pmc_sw_attr(&attr, PMC_SW_PAGE_FAULTS, 0);
	attr.irq_period = GROUP_PERIOD;
	attr.record_type = PMC_RECORD_GROUP;
	attr.disabled = 1;
	fd = counter_open(_metadata, &attr, 0, -1, -1);
	pmc_sw_attr(&attr, PMC_SW_TASK_CLOCK, 0);
	member_fd = counter_open(_metadata, &attr, 0, -1, fd);
	ring_map(_metadata, &r, fd, 4, true);

	counter_ioctl(_metadata, fd, PMC_IOC_ENABLE);
	touch_pages(pages, GROUP_PAGES);
	counter_ioctl(_metadata, fd, PMC_IOC_DISABLE);

	head = ring_head(&r);
	while ((ret = ring_next(&r, &pos, head, err, sizeof(err))) > 0) {
		ASSERT_TRUE(is_sample()) TH_LOG("record type %u", rec.h.type);
		ASSERT_EQ(PMC_RECORD_GROUP, rec.h.type);
		/* header, nr, then {config, value} of leader and member */
		ASSERT_EQ(48, rec.h.size);
		ASSERT_EQ(2ULL, rec.w[1]);
		ASSERT_EQ(SW(PMC_SW_PAGE_FAULTS), rec.w[2]);
		ASSERT_EQ(SW(PMC_SW_TASK_CLOCK), rec.w[4]);
		leader = rec.w[3];
		member = rec.w[5];
		nr++;
		/* the leader's count at its own overflow: a period multiple */
		ASSERT_EQ((__u64)nr * GROUP_PERIOD, leader) TH_LOG("sample %u", nr);
		ASSERT_LE(prev_member, member) TH_LOG("sample %u", nr);
		if (nr > 1 && member == prev_member)
			equal++;
		prev_member = member;
	}
	ASSERT_EQ(0, ret) TH_LOG("%s", err);
	EXPECT_LE(GROUP_PAGES * 9U / GROUP_PERIOD / 10, nr);
	EXPECT_GE((nr - 1) / 10, equal) {
		TH_LOG("the member's value stood still in %u of %u sample pairs",
		       equal, nr - 1);
	}
	close(member_fd);
	ring_unmap(&r);
	close(fd);
	munmap(pages, GROUP_PAGES * page_size());
}

/*
 * 7. data_tail is the reader's to write: garbage there may cost the
 * reader its records, but never the kernel its bounds. Once it is sane
 * again, every new record is whole and data_head stays within one
 * buffer of it.
 */
#define SAMPLE_IP_TID_SIZE	24	/* header, ip, pid/tid */

TEST_F(hostile, data_tail_garbage)
{
	const __u64 burn = 50 * NSEC_PER_MSEC;
	__u64 head, before, start, pos;
	unsigned int samples = 0, other = 0;
	int i;
	struct pmc_attr attr;
	char err[160];
	struct pmc_ring r;
	int fd, ret;

	pmc_sw_attr(&attr, PMC_SW_TASK_CLOCK, 0);
	attr.irq_period = 20 * NSEC_PER_USEC;
	attr.record_type = PMC_RECORD_IP | PMC_RECORD_TID;
	attr.disabled = 1;
	fd = counter_open(_metadata, &attr, 0, -1, -1);
	ring_map(_metadata, &r, fd, 2, true);

	counter_ioctl(_metadata, fd, PMC_IOC_ENABLE);
	for (i = 0; i < 3; i++) {
		before = ring_head(&r);
		switch (i) {
		case 0:
			/* the same offset as data_head: an empty buffer */
			ring_set_tail(&r, before + (1ULL << 40));
			break;
		case 1:
			ring_set_tail(&r, ~0ULL);
			break;
		default:
			/* unaligned, one byte behind: nearly all free */
			ring_set_tail(&r, before - 1);
			break;
		}
		burn_cpu(burn);
		head = ring_head(&r);
		ASSERT_LE(before, head) TH_LOG("data_head went back");
		EXPECT_GE(r.size, head - before) {
			TH_LOG("data_tail %d: data_head moved %llu bytes in a buffer of %llu",
			       i, (unsigned long long)(head - before),
			       (unsigned long long)r.size);
		}
		/* only the offset counts: cases 0 and 2 leave room */
		if (i != 1)
			EXPECT_LT(before, head) {
				TH_LOG("data_tail %d: no record written", i);
			}
	}
	EXPECT_EQ(1U, r.page->version);

	/* sane again: from here every record must parse */
	counter_ioctl(_metadata, fd, PMC_IOC_DISABLE);
	start = ring_head(&r);
	ring_set_tail(&r, start);
	counter_ioctl(_metadata, fd, PMC_IOC_ENABLE);
	burn_cpu(burn);
	counter_ioctl(_metadata, fd, PMC_IOC_DISABLE);
	head = ring_head(&r);
	ASSERT_LE(start, head);
	EXPECT_GE(r.size, head - start) {
		TH_LOG("data_head %llu is more than a buffer past data_tail %llu",
		       (unsigned long long)head, (unsigned long long)start);
	}

	pos = start;
	while ((ret = ring_next(&r, &pos, head, err, sizeof(err))) > 0) {
		if (is_sample()) {
			ASSERT_EQ(attr.record_type, rec.h.type);
			ASSERT_EQ(SAMPLE_IP_TID_SIZE, rec.h.size);
			ASSERT_EQ((__u32)getpid(), rec_u32(16));
			ASSERT_EQ((__u32)gettid(), rec_u32(20));
			samples++;
		} else {
			/* throttling may bound a 20 us clock's samples */
			ASSERT_TRUE(rec.h.type >= PMC_EVENT_MMAP &&
				    rec.h.type <= PMC_EVENT_UNTHROTTLE) {
				TH_LOG("record type %u misc %#x size %u",
				       rec.h.type, rec.h.misc, rec.h.size);
			}
			other++;
		}
	}
	EXPECT_EQ(0, ret) TH_LOG("%s", err);
	/* 50 ms at 20 us fill the buffer many times over */
	EXPECT_LE(10U, samples) TH_LOG("%u samples, %u other records", samples,
				       other);
	ring_unmap(&r);
	close(fd);
}

/*
 * 8. Record pids are those of the reader's pid namespace: pid 1 for a
 * counter opened by the first task of a new namespace on itself, the
 * global pid for one opened from outside on that task.
 */
static int check_tid_samples(struct pmc_ring *r, __u32 pid, unsigned int min,
			     const char *who)
{
	__u64 pos = 0, head = ring_head(r);
	unsigned int nr = 0;
	char err[160];
	int ret;

	while ((ret = ring_next(r, &pos, head, err, sizeof(err))) > 0) {
		if (!is_sample())
			continue;
		CHILD_CHECK(rec.h.size == 16, "%s: sample of %u bytes", who,
			    rec.h.size);
		CHILD_CHECK(rec_u32(8) == pid && rec_u32(12) == pid,
			    "%s: sample with pid %u tid %u, want %u", who,
			    rec_u32(8), rec_u32(12), pid);
		nr++;
	}
	CHILD_CHECK(ret == 0, "%s: %s", who, err);
	CHILD_CHECK(nr >= min, "%s: %u samples", who, nr);
	return 0;
}

static int pid_ns_child(void *arg)
{
	int go = *(int *)arg;
	struct pmc_attr attr;
	struct pmc_ring r;
	char c;
	int fd;

	CHILD_CHECK(getpid() == 1, "pid %d in the new namespace", getpid());
	CHILD_CHECK(read(go, &c, 1) == 1, "no go");
	pmc_sw_attr(&attr, PMC_SW_TASK_CLOCK, 0);
	attr.irq_period = NSEC_PER_MSEC;
	attr.record_type = PMC_RECORD_TID;
	fd = pmc_open(&attr, 0, -1, -1, 0);
	CHILD_CHECK(fd >= 0, "pmc_open: %s", strerror(errno));
	CHILD_CHECK(!pmc_ring_map(&r, fd, 4, true), "mmap: %s",
		    strerror(errno));
	burn_cpu(50 * NSEC_PER_MSEC);
	ioctl(fd, PMC_IOC_DISABLE, 0);
	return check_tid_samples(&r, 1, 10, "own counter");
}

TEST_F(hostile, pid_ns_samples)
{
	struct pmc_attr attr;
	struct pmc_ring r;
	int go[2], fd, ret;
	pid_t pid;

	if (!self->root)
		SKIP(return, "unshare(CLONE_NEWPID) needs root");
	ret = unshare(CLONE_NEWPID);
	if (ret && (errno == EINVAL || errno == ENOSYS))
		SKIP(return, "no pid namespaces (CONFIG_PID_NS): %s",
		     strerror(errno));
	ASSERT_EQ(0, ret) TH_LOG("unshare: %s", strerror(errno));
	ASSERT_EQ(0, pipe(go));
	pid = spawn(_metadata, pid_ns_child, &go[0]);
	close(go[0]);

	/* the same task seen from here: its global pid */
	pmc_sw_attr(&attr, PMC_SW_TASK_CLOCK, 0);
	attr.irq_period = NSEC_PER_MSEC;
	attr.record_type = PMC_RECORD_TID;
	fd = counter_open(_metadata, &attr, pid, -1, -1);
	ring_map(_metadata, &r, fd, 4, true);
	ASSERT_EQ(1, write(go[1], "g", 1));
	close(go[1]);
	EXPECT_EQ(0, reap(_metadata, pid, NULL));
	EXPECT_EQ(0, check_tid_samples(&r, pid, 10, "outside counter"));
	ring_unmap(&r);
	close(fd);
}

/*
 * 9. A per-CPU counter gets the COMM and MMAP records of every task
 * that runs on its CPU, not only of tasks that have counters.
 */
TEST_F(hostile, cpu_counter_records)
{
	static const char name[] = "pmc-cpu-comm";
	bool comm = false, mapped = false;
	__u64 pos = 0, head;
	struct pmc_attr attr;
	const struct mmap_rec *m;
	const struct comm_rec *c;
	int fd, file, ret;
	char err[160];
	struct pmc_ring r;
	void *code;

	if (!self->root)
		SKIP(return, "per-CPU counters need root");
	if (access(BUSYBOX, R_OK))
		SKIP(return, "no %s", BUSYBOX);
	ASSERT_EQ(0, pin_to_cpu(0)) TH_LOG("%s", strerror(errno));

	pmc_sw_attr(&attr, PMC_SW_CPU_CLOCK, 0);
	attr.irq_period = NSEC_PER_SEC;
	attr.record_type = PMC_RECORD_IP | PMC_RECORD_TID;
	attr.comm = 1;
	attr.mmap = 1;
	fd = counter_open(_metadata, &attr, -1, 0, -1);
	ring_map(_metadata, &r, fd, 4, true);

	ASSERT_EQ(0, prctl(PR_SET_NAME, name, 0, 0, 0));
	file = open(BUSYBOX, O_RDONLY);
	ASSERT_LE(0, file);
	code = mmap(NULL, page_size(), PROT_READ | PROT_EXEC, MAP_PRIVATE,
		    file, 0);
	ASSERT_NE(MAP_FAILED, code) TH_LOG("%s", strerror(errno));
	counter_ioctl(_metadata, fd, PMC_IOC_DISABLE);

	head = ring_head(&r);
	while ((ret = ring_next(&r, &pos, head, err, sizeof(err))) > 0) {
		if (is_sample())
			continue;
		c = (const void *)&rec;
		m = (const void *)&rec;
		if (rec.h.type == PMC_EVENT_COMM && c->pid == (__u32)getpid() &&
		    rec.h.size > sizeof(*c) &&
		    !strncmp(c->comm, name, rec.h.size - sizeof(*c))) {
			EXPECT_EQ((__u32)gettid(), c->tid);
			comm = true;
		}
		if (rec.h.type == PMC_EVENT_MMAP &&
		    m->addr == (unsigned long)code && rec.h.size > sizeof(*m) &&
		    !strncmp(m->filename, BUSYBOX, rec.h.size - sizeof(*m))) {
			EXPECT_EQ((__u32)getpid(), m->pid);
			EXPECT_EQ(page_size(), m->len);
			mapped = true;
		}
	}
	EXPECT_EQ(0, ret) TH_LOG("%s", err);
	EXPECT_TRUE(comm) TH_LOG("no COMM record \"%s\" on the CPU counter", name);
	EXPECT_TRUE(mapped) TH_LOG("no MMAP record of %s at %p", BUSYBOX, code);
	munmap(code, page_size());
	close(file);
	ring_unmap(&r);
	close(fd);
}

/*
 * 10. A MAP_FIXED mapping over another: the MUNMAP record of what it
 * replaced comes before its own MMAP record, so that a reader never
 * drops the new mapping with the old.
 */
TEST_F(hostile, map_fixed_order)
{
	long unmap_at = -1, map_at = -1, first_at = -1, idx = 0;
	size_t len = 2 * page_size();
	char exe[PATH_MAX];
	const struct mmap_rec *m;
	struct pmc_attr attr;
	__u64 pos = 0, head;
	int fd, bb, other, ret;
	void *a, *b;
	char err[160];
	struct pmc_ring r;
	ssize_t n;

	if (access(BUSYBOX, R_OK))
		SKIP(return, "no %s", BUSYBOX);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	ASSERT_LT(0, n);
	exe[n] = '\0';
	bb = open(BUSYBOX, O_RDONLY);
	ASSERT_LE(0, bb);
	other = open(exe, O_RDONLY);
	ASSERT_LE(0, other) TH_LOG("%s: %s", exe, strerror(errno));

	pmc_sw_attr(&attr, PMC_SW_PAGE_FAULTS, 0);
	attr.irq_period = NEVER_PERIOD;
	attr.record_type = PMC_RECORD_IP;
	attr.mmap = 1;
	attr.munmap = 1;
	fd = counter_open(_metadata, &attr, 0, -1, -1);
	ring_map(_metadata, &r, fd, 4, true);

	a = mmap(NULL, len, PROT_READ | PROT_EXEC, MAP_PRIVATE, bb, 0);
	ASSERT_NE(MAP_FAILED, a) TH_LOG("%s", strerror(errno));
	b = mmap(a, len, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED,
		 other, 0);
	ASSERT_EQ(a, b) TH_LOG("MAP_FIXED: %s", strerror(errno));

	head = ring_head(&r);
	while ((ret = ring_next(&r, &pos, head, err, sizeof(err))) > 0) {
		idx++;
		m = (const void *)&rec;
		if (is_sample() || rec.h.size <= sizeof(*m) ||
		    m->addr != (unsigned long)a)
			continue;
		if (rec.h.type == PMC_EVENT_MMAP && !strcmp(m->filename, BUSYBOX))
			first_at = idx;
		if (rec.h.type == PMC_EVENT_MUNMAP &&
		    !strcmp(m->filename, BUSYBOX) && unmap_at < 0)
			unmap_at = idx;
		if (rec.h.type == PMC_EVENT_MMAP && !strcmp(m->filename, exe) &&
		    map_at < 0)
			map_at = idx;
	}
	EXPECT_EQ(0, ret) TH_LOG("%s", err);
	EXPECT_LT(0, first_at) TH_LOG("no MMAP record of %s at %p", BUSYBOX, a);
	ASSERT_LT(0, unmap_at) TH_LOG("no MUNMAP record of %s at %p", BUSYBOX, a);
	ASSERT_LT(0, map_at) TH_LOG("no MMAP record of %s at %p", exe, a);
	EXPECT_LT(first_at, unmap_at);
	EXPECT_LT(unmap_at, map_at) {
		TH_LOG("record %ld: MUNMAP of %s; record %ld: MMAP of %s over it",
		       unmap_at, BUSYBOX, map_at, exe);
	}
	munmap(a, len);
	ring_unmap(&r);
	close(fd);
	close(bb);
	close(other);
}

/*
 * A refused mmap() costs nothing: the locked-memory charge is checked
 * before the pages are allocated. Without privilege, RLIMIT_MEMLOCK 0
 * and a 256 MiB ring far over the pmc_mlock_kb allowance, mmap() must
 * fail with EPERM at once; allocating first took seconds under KASAN
 * and took the memory from everyone meanwhile.
 */
#define BIG_RING_PAGES	(1 + 65536)

static int refused_mmap_child(void *arg)
{
	struct rlimit none = { 0, 0 };
	struct pmc_attr attr;
	__u64 start, took;
	void *p;
	int fd;

	CHILD_CHECK(!drop_privileges(), "%s", strerror(errno));
	CHILD_CHECK(!setrlimit(RLIMIT_MEMLOCK, &none), "%s", strerror(errno));
	pmc_sw_attr(&attr, PMC_SW_TASK_CLOCK, 0);
	attr.irq_period = NSEC_PER_MSEC;
	attr.record_type = PMC_RECORD_IP;
	fd = pmc_open(&attr, 0, -1, -1, 0);
	CHILD_CHECK(fd >= 0, "%s", strerror(errno));
	start = monotonic_ns();
	p = mmap(NULL, BIG_RING_PAGES * page_size(), PROT_READ | PROT_WRITE,
		 MAP_SHARED, fd, 0);
	took = monotonic_ns() - start;
	CHILD_CHECK(p == MAP_FAILED && errno == EPERM,
		    "mmap of %d pages: %s", BIG_RING_PAGES,
		    p == MAP_FAILED ? strerror(errno) : "mapped");
	CHILD_CHECK(took < 200 * NSEC_PER_MSEC, "refused after %llu ms",
		    (unsigned long long)(took / NSEC_PER_MSEC));
	close(fd);
	return 0;
}

TEST_F(hostile, refused_mmap_is_cheap)
{
	if (geteuid() != 0 && getuid() != NOBODY)
		SKIP(return, "runs as root or as uid %d", NOBODY);
	ASSERT_EQ(0, reap(_metadata, spawn(_metadata, refused_mmap_child,
					   NULL), NULL));
}

/*
 * Software samplers are throttled too: page faults sampled at a period
 * of 1 and a 10 us task-clock write at most kernel.pmc_max_sample_rate
 * samples a second, and THROTTLE/UNTHROTTLE records mark the gaps.
 */
#define MAX_RATE_PATH	"/proc/sys/kernel/pmc_max_sample_rate"
#define THROTTLE_RATE	1000
#define THROTTLE_NS	(300 * NSEC_PER_MSEC)
/*
 * Tries of a run whose overflows came slower than the budget: a stalled
 * emulator (TCG) then never exercised the throttle, which is no failure.
 */
#define THROTTLE_TRIES	3

static __u64 sw_throttle_run(struct __test_metadata *_metadata,
			     unsigned int id, __u64 period,
			     struct ring_tally *t)
{
	struct pmc_attr attr;
	struct pmc_ring r;
	__u64 start, wall;
	char *pages;
	int fd;

	pmc_sw_attr(&attr, id, 0);
	attr.irq_period = period;
	attr.record_type = PMC_RECORD_IP;
	attr.disabled = 1;
	fd = counter_open(_metadata, &attr, 0, -1, -1);
	ring_map(_metadata, &r, fd, 64, true);
	counter_ioctl(_metadata, fd, PMC_IOC_ENABLE);

	start = monotonic_ns();
	if (id == PMC_SW_PAGE_FAULTS) {
		while (monotonic_ns() - start < THROTTLE_NS) {
			pages = fresh_pages(_metadata, 256);
			touch_pages(pages, 256);
			munmap(pages, 256 * page_size());
		}
	} else {
		burn_cpu(THROTTLE_NS);
	}
	wall = monotonic_ns() - start;
	counter_ioctl(_metadata, fd, PMC_IOC_DISABLE);
	ring_tally(_metadata, &r, t);
	/* The ring never fills: every throttle's record arrived. */
	EXPECT_EQ((__u64)t->throttles, nr_throttles(_metadata, fd));
	ring_unmap(&r);
	close(fd);
	return wall;
}

TEST_F(hostile, sw_throttle)
{
	static const struct { unsigned int id; __u64 period; } runs[] = {
		{ PMC_SW_PAGE_FAULTS, 1 },
		{ PMC_SW_TASK_CLOCK, 10 * NSEC_PER_USEC },
	};
	struct ring_tally t[ARRAY_SIZE(runs)] = { };
	__u64 wall[ARRAY_SIZE(runs)], rate[ARRAY_SIZE(runs)];
	unsigned int i;
	long old_rate = 0;

	if (!self->root)
		SKIP(return, "needs root: sets kernel.pmc_max_sample_rate");
	ASSERT_EQ(0, read_int_file(MAX_RATE_PATH, &old_rate));
	ASSERT_EQ(0, write_int_file(MAX_RATE_PATH, THROTTLE_RATE));
	for (i = 0; i < ARRAY_SIZE(runs); i++) {
		unsigned int try;

		for (try = 1; try <= THROTTLE_TRIES; try++) {
			memset(&t[i], 0, sizeof(t[i]));
			wall[i] = sw_throttle_run(_metadata, runs[i].id,
						  runs[i].period, &t[i]);
			/*
			 * Samples only: the 64 pages never fill, so LOST
			 * records are periods a late clock timer stepped
			 * over, which take no sample and no budget.
			 */
			rate[i] = t[i].samples * NSEC_PER_SEC / wall[i];
			if (t[i].throttles || rate[i] >= THROTTLE_RATE * 9 / 10)
				break;
			TH_LOG("event %u, try %u: %llu samples/s and no throttle: the overflows came slower than the budget",
			       runs[i].id, try, (unsigned long long)rate[i]);
		}
	}
	EXPECT_EQ(0, write_int_file(MAX_RATE_PATH, old_rate));

	for (i = 0; i < ARRAY_SIZE(runs); i++) {
		TH_LOG("event %u, period %llu: %llu samples, %u throttles, %u unthrottles in %llu ms: %llu samples/s, sysctl %u/s",
		       runs[i].id, (unsigned long long)runs[i].period,
		       (unsigned long long)t[i].samples, t[i].throttles,
		       t[i].unthrottles,
		       (unsigned long long)(wall[i] / NSEC_PER_MSEC),
		       (unsigned long long)rate[i], THROTTLE_RATE);
		EXPECT_LT(0, t[i].samples);
		/* a part tick at each end */
		EXPECT_LE(rate[i], THROTTLE_RATE * 12 / 10);
		expect_throttled(_metadata, &t[i]);
	}
}

/*
 * COMM records reach a counter only while it could count: not while it
 * is disabled, and for a task's counter bound to a CPU, only from that
 * CPU.
 */
static unsigned int comm_records(struct __test_metadata *_metadata,
				 struct pmc_ring *r, const char *name)
{
	__u64 pos = 0, head = ring_head(r);
	const struct comm_rec *c = (const void *)&rec;
	unsigned int nr = 0;
	char err[160];
	int ret;

	while ((ret = ring_next(r, &pos, head, err, sizeof(err))) > 0)
		if (!is_sample() && rec.h.type == PMC_EVENT_COMM &&
		    rec.h.size > sizeof(*c) &&
		    !strncmp(c->comm, name, rec.h.size - sizeof(*c)))
			nr++;
	EXPECT_EQ(0, ret) TH_LOG("%s", err);
	return nr;
}

TEST_F(hostile, side_records_only_when_counting)
{
	static const char off[] = "pmc-comm-off", on[] = "pmc-comm-on",
			  away[] = "pmc-comm-away", there[] = "pmc-comm-there";
	struct pmc_ring r_self, r_other;
	struct pmc_attr attr;
	int self_fd, other_fd, cpus[2];

	if (allowed_cpus(cpus, 2) < 2)
		SKIP(return, "needs two CPUs");
	ASSERT_EQ(0, pin_to_cpu(cpus[0])) TH_LOG("%s", strerror(errno));
	pmc_sw_attr(&attr, PMC_SW_TASK_CLOCK, 0);
	attr.irq_period = NEVER_PERIOD;
	attr.record_type = PMC_RECORD_IP;
	attr.comm = 1;
	attr.disabled = 1;
	self_fd = counter_open(_metadata, &attr, 0, -1, -1);
	ring_map(_metadata, &r_self, self_fd, 4, true);
	attr.disabled = 0;
	other_fd = counter_open(_metadata, &attr, 0, cpus[1], -1);
	ring_map(_metadata, &r_other, other_fd, 4, true);

	ASSERT_EQ(0, prctl(PR_SET_NAME, off, 0, 0, 0));
	counter_ioctl(_metadata, self_fd, PMC_IOC_ENABLE);
	ASSERT_EQ(0, prctl(PR_SET_NAME, on, 0, 0, 0));
	counter_ioctl(_metadata, self_fd, PMC_IOC_DISABLE);
	ASSERT_EQ(0, prctl(PR_SET_NAME, away, 0, 0, 0));
	ASSERT_EQ(0, pin_to_cpu(cpus[1])) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(0, prctl(PR_SET_NAME, there, 0, 0, 0));

	EXPECT_EQ(0, comm_records(_metadata, &r_self, off));
	EXPECT_EQ(1, comm_records(_metadata, &r_self, on));
	EXPECT_EQ(0, comm_records(_metadata, &r_self, away));
	EXPECT_EQ(0, comm_records(_metadata, &r_other, off));
	EXPECT_EQ(0, comm_records(_metadata, &r_other, on));
	EXPECT_EQ(0, comm_records(_metadata, &r_other, away));
	EXPECT_EQ(0, comm_records(_metadata, &r_self, there));
	EXPECT_EQ(1, comm_records(_metadata, &r_other, there));
	ring_unmap(&r_other);
	ring_unmap(&r_self);
	close(other_fd);
	close(self_fd);
}

/*
 * One user's storm costs another user's samplers nothing they could
 * keep: while uid 65534 on CPU 0 faults under 1024 page-fault samplers
 * at a period of 1, or spins under 64 task-clocks at the shortest
 * period, or both, each overflow a sample with a call chain, at the
 * default sysctls, root's cpu-clock samplers of CPU 0 are never
 * throttled, and account for every period. Throttling counts each
 * counter's own rate, so the storm is stopped by the time bound, whose
 * share it spends; page faults sample with interrupts on, and all of a
 * CPU's clocks share one timer that fires them in the order their
 * periods end. What the storm can still cost root is a wait behind the
 * samples due before root's in one tick, which the time bound keeps to
 * its share of the tick plus an overflow per counter: a period of four
 * ticks loses nothing to it. (A 1 kHz sampler's period is shorter than
 * that wait on a debug kernel, and it loses a few periods in a hundred,
 * reported as lost.)
 */
#define STORM_PERIOD		NSEC_PER_MSEC		/* root's 1 kHz sampler */
#define STORM_NS		(1000 * NSEC_PER_MSEC)
#define STORM_COUNTERS		1024
#define STORM_PAGES		16

/* As many files as the hard limit allows, as a hostile user would. */
static void raise_file_limit(void)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl)) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* Touch fresh pages, STORM_PAGES faults at a time, until @ns have passed. */
static void fault_for(__u64 ns)
{
	__u64 start = monotonic_ns();
	char *pages;

	while (monotonic_ns() - start < ns) {
		pages = map_fresh_pages(STORM_PAGES);
		if (!pages)
			return;
		touch_pages(pages, STORM_PAGES);
		munmap(pages, STORM_PAGES * page_size());
	}
}

#define STORM_CLOCKS		64
#define STORM_CLOCK_PERIOD	(10 * NSEC_PER_USEC)	/* the shortest */

/* One of a storm's samplers of itself: @id every @period, call chains. */
static int storm_sampler(unsigned int id, __u64 period)
{
	struct pmc_attr attr;

	pmc_sw_attr(&attr, id, 0);
	attr.irq_period = period;
	attr.record_type = PMC_RECORD_IP | PMC_RECORD_CALLCHAIN;
	return pmc_open(&attr, 0, -1, -1, 0);
}

/*
 * As nobody on CPU 0, for STORM_NS: @clocks task-clock samplers at the
 * shortest period, and @faulters page-fault samplers at a period of 1
 * while it faults (else it spins), all with call chains. Their
 * overflows are written to @report.
 */
static int storm(int report, unsigned int clocks, unsigned int faulters)
{
	int fds[STORM_CLOCKS + STORM_COUNTERS];
	long long overflows = 0, n;
	unsigned int i, nr;
	__u64 start;

	CHILD_CHECK(pin_to_cpu(0) == 0, "pin: %s", strerror(errno));
	CHILD_CHECK(drop_privileges() == 0, "%s", strerror(errno));
	raise_file_limit();
	for (nr = 0; nr < clocks + faulters; nr++) {
		fds[nr] = nr < clocks ?
			storm_sampler(PMC_SW_TASK_CLOCK, STORM_CLOCK_PERIOD) :
			storm_sampler(PMC_SW_PAGE_FAULTS, 1);
		CHILD_CHECK(fds[nr] >= 0, "counter %u: %s", nr, strerror(errno));
	}
	if (faulters) {
		fault_for(STORM_NS);
	} else {
		start = monotonic_ns();
		while (monotonic_ns() - start < STORM_NS)
			;
	}
	for (i = 0; i < nr; i++) {
		n = fdinfo_number(fds[i], "pmc-overflows");
		CHILD_CHECK(n >= 0, "no pmc-overflows in fdinfo");
		overflows += n;
		close(fds[i]);
	}
	CHILD_CHECK(write(report, &overflows, sizeof(overflows)) ==
		    sizeof(overflows), "write: %s", strerror(errno));
	return 0;
}

static int page_fault_storm(void *arg)
{
	return storm(*(int *)arg, 0, STORM_COUNTERS);
}

static int sampler_clock_storm(void *arg)
{
	return storm(*(int *)arg, STORM_CLOCKS, 0);
}

static int clock_and_fault_storm(void *arg)
{
	return storm(*(int *)arg, STORM_CLOCKS, STORM_COUNTERS);
}

/* The kernel's tick, the resolution of its coarse clocks. */
static __u64 tick_ns(void)
{
	struct timespec ts;

	if (clock_getres(CLOCK_MONOTONIC_COARSE, &ts))
		return 0;
	return timespec_ns(&ts);
}

/* One of root's cpu-clock samplers of CPU 0, and what it took. */
struct root_sampler {
	__u64 period, periods;
	struct ring_tally t;
	struct pmc_ring r;
	int fd;
};

static void root_sampler_open(struct __test_metadata *_metadata,
			      struct root_sampler *s, __u64 period)
{
	struct pmc_attr attr;

	memset(s, 0, sizeof(*s));
	s->period = period;
	pmc_sw_attr(&attr, PMC_SW_CPU_CLOCK, 0);
	attr.irq_period = period;
	attr.record_type = PMC_RECORD_IP;
	attr.disabled = 1;
	s->fd = counter_open(_metadata, &attr, -1, 0, -1);
	ring_map(_metadata, &s->r, s->fd, 64, true);
}

/* Disabled: its periods (count / period) and its ring's tally. */
static void root_sampler_close(struct __test_metadata *_metadata,
			       struct root_sampler *s)
{
	struct pmc_reading rd;

	counter_ioctl(_metadata, s->fd, PMC_IOC_DISABLE);
	ASSERT_EQ(0, pmc_read(s->fd, 0, &rd));
	s->periods = rd.value / s->period;
	ring_tally(_metadata, &s->r, &s->t);
	ring_unmap(&s->r);
	close(s->fd);
	TH_LOG("root's %llu us sampler: %llu samples, %llu lost, %u throttles in %llu periods",
	       (unsigned long long)s->period / NSEC_PER_USEC,
	       (unsigned long long)s->t.samples,
	       (unsigned long long)s->t.lost, s->t.throttles,
	       (unsigned long long)s->periods);
	EXPECT_EQ(0, s->t.throttles);
	/* Every period that ended is a sample or counted lost. */
	EXPECT_LE(s->periods, s->t.samples + s->t.lost + 1);
}

/*
 * Root's cpu-clock samplers of CPU 0, at 1 kHz and at four ticks, while
 * @storm_fn runs there as uid 65534: neither is throttled, each accounts
 * for every period, and the four-tick one loses none (see STORM_PERIOD).
 * The storm reports its own overflows, at least ten for each of the
 * 1 kHz sampler's periods, or it is no storm.
 */
static void storm_spares_root(struct __test_metadata *_metadata,
			      int (*storm_fn)(void *), const char *what)
{
	struct root_sampler fast, slow;
	long long overflows = -1;
	__u64 tick = tick_ns();
	int report[2];

	ASSERT_LT(0, tick);
	ASSERT_EQ(0, pipe(report));
	root_sampler_open(_metadata, &fast, STORM_PERIOD);
	root_sampler_open(_metadata, &slow, 4 * tick);
	counter_ioctl(_metadata, fast.fd, PMC_IOC_ENABLE);
	counter_ioctl(_metadata, slow.fd, PMC_IOC_ENABLE);
	ASSERT_EQ(0, reap(_metadata, spawn(_metadata, storm_fn, &report[1]),
			  NULL));
	root_sampler_close(_metadata, &fast);
	root_sampler_close(_metadata, &slow);
	ASSERT_EQ(sizeof(overflows),
		  read(report[0], &overflows, sizeof(overflows)));
	close(report[0]);
	close(report[1]);

	TH_LOG("uid %d's %s: %lld overflows", NOBODY, what, overflows);
	ASSERT_LT(10 * fast.periods, (__u64)overflows);
	EXPECT_EQ(0, slow.t.lost);
	EXPECT_LE(slow.periods, slow.t.samples + 1);
}

TEST_F_TIMEOUT(hostile, page_fault_storm_spares_root, 120)
{
	if (!self->root)
		SKIP(return, "needs root: a per-CPU sampler, and a user to drop to");
	storm_spares_root(_metadata, page_fault_storm,
			  "1024 page-fault samplers");
}

TEST_F_TIMEOUT(hostile, clock_storm_spares_root, 120)
{
	if (!self->root)
		SKIP(return, "needs root: a per-CPU sampler, and a user to drop to");
	storm_spares_root(_metadata, sampler_clock_storm, "64 task-clocks at 10 us");
}

TEST_F_TIMEOUT(hostile, clock_and_fault_storm_spares_root, 120)
{
	if (!self->root)
		SKIP(return, "needs root: a per-CPU sampler, and a user to drop to");
	storm_spares_root(_metadata, clock_and_fault_storm,
			  "64 task-clocks at 10 us and 1024 page-fault samplers");
}

/*
 * Software events sample with interrupts on: uid 65534's page-fault
 * samplers, 2032 of them (walked with interrupts off, 4080 kept them off
 * for 148 ms on the debug kernel), at a period of 1 and with call chains,
 * do not keep CPU 0's interrupts off. A 1 kHz cpu-clock
 * sampler of CPU 0 (an hrtimer: it samples in hardirq) shows the
 * longest stretch in which CPU 0 took no interrupt: while the task
 * faults under its samplers, at most twice the stretch while it faults
 * under none, plus 10 ms. perf's figure for as many page-fault samplers,
 * in the same guest, is logged beside it.
 */
#define IRQ_STORM_MAX		2048
#define IRQ_PHASE_NS		(500 * NSEC_PER_MSEC)
#define IRQ_GAP_SLACK_NS	(10 * NSEC_PER_MSEC)

struct irq_gaps {
	__u64 none, pmc, perf;	/* longest stretches without a sample */
	unsigned int counters;
	int perf_err;		/* perf_event_open()'s errno, 0 if it opened */
};

/*
 * Fault for IRQ_PHASE_NS with sampler @fd on, its ring @r read from
 * *@pos: the longest stretch of the phase without one of its samples.
 */
static __u64 fault_phase_gap(int fd, struct pmc_ring *r, __u64 *pos)
{
	__u64 start, end, t, prev, head, longest = 0;
	char err[160];

	if (ioctl(fd, PMC_IOC_ENABLE, 0))
		return 0;
	start = monotonic_ns();
	fault_for(IRQ_PHASE_NS);
	end = monotonic_ns();
	ioctl(fd, PMC_IOC_DISABLE, 0);
	head = ring_head(r);
	prev = start;
	while (ring_next(r, pos, head, err, sizeof(err)) > 0) {
		if (!is_sample())
			continue;
		memcpy(&t, rec.b + sizeof(rec.h), sizeof(t));	/* TIME */
		if (t > prev && t - prev > longest)
			longest = t - prev;
		prev = t > prev ? t : prev;
	}
	if (end > prev && end - prev > longest)
		longest = end - prev;
	return longest;
}

static int perf_fault_sampler(void)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_PAGE_FAULTS,
		.sample_period = 1,
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN,
		.exclude_kernel = 1,
	};

	return syscall(__NR_perf_event_open, &attr, 0, -1, -1, 0);
}

/* As root on CPU 0: the three phases; the gaps to the pipe @arg. */
static int fault_irq_phases(void *arg)
{
	static int fds[IRQ_STORM_MAX];
	struct irq_gaps gaps = { };
	int report = *(int *)arg, fd;
	struct pmc_attr attr;
	struct pmc_ring r;
	unsigned int i;
	__u64 pos = 0;

	CHILD_CHECK(pin_to_cpu(0) == 0, "pin: %s", strerror(errno));
	raise_file_limit();
	pmc_sw_attr(&attr, PMC_SW_CPU_CLOCK, 0);
	attr.irq_period = NSEC_PER_MSEC;
	attr.record_type = PMC_RECORD_TIME;
	attr.disabled = 1;
	fd = pmc_open(&attr, -1, 0, -1, 0);
	CHILD_CHECK(fd >= 0, "CPU 0's sampler: %s", strerror(errno));
	CHILD_CHECK(!pmc_ring_map(&r, fd, 64, false), "mmap: %s",
		    strerror(errno));

	/* perf first, while root: perf_event_paranoid may refuse nobody */
	for (i = 0; i < IRQ_STORM_MAX - 16; i++) {
		fds[i] = perf_fault_sampler();
		if (fds[i] < 0) {
			gaps.perf_err = errno;
			break;
		}
	}
	if (!gaps.perf_err)
		gaps.perf = fault_phase_gap(fd, &r, &pos);
	while (i--)
		close(fds[i]);

	CHILD_CHECK(drop_privileges() == 0, "%s", strerror(errno));
	gaps.none = fault_phase_gap(fd, &r, &pos);
	pmc_sw_attr(&attr, PMC_SW_PAGE_FAULTS, 0);
	attr.irq_period = 1;
	attr.record_type = PMC_RECORD_IP | PMC_RECORD_CALLCHAIN;
	for (i = 0; i < IRQ_STORM_MAX - 16; i++) {
		fds[i] = pmc_open(&attr, 0, -1, -1, 0);
		if (fds[i] < 0)
			break;
	}
	CHILD_CHECK(i >= 1000, "only %u counters: %s", i, strerror(errno));
	gaps.counters = i;
	gaps.pmc = fault_phase_gap(fd, &r, &pos);
	while (i--)
		close(fds[i]);
	CHILD_CHECK(write(report, &gaps, sizeof(gaps)) == sizeof(gaps),
		    "write: %s", strerror(errno));
	return 0;
}

TEST_F_TIMEOUT(hostile, fault_samples_keep_irqs_on, 120)
{
	struct irq_gaps gaps;
	int report[2];

	if (!self->root)
		SKIP(return, "needs root: a per-CPU sampler, and a user to drop to");
	ASSERT_EQ(0, pipe(report));
	ASSERT_EQ(0, reap(_metadata, spawn(_metadata, fault_irq_phases,
					   &report[1]), NULL));
	ASSERT_EQ(sizeof(gaps), read(report[0], &gaps, sizeof(gaps)));
	close(report[0]);
	close(report[1]);
	TH_LOG("CPU 0's longest stretch without an interrupt while faulting: %.1f ms under no counter, %.1f ms under %u events-lite samplers",
	       gaps.none / 1e6, gaps.pmc / 1e6, gaps.counters);
	if (gaps.perf_err)
		TH_LOG("perf_event_open() of as many: %s", strerror(gaps.perf_err));
	else
		TH_LOG("...and %.1f ms under as many perf samplers",
		       gaps.perf / 1e6);
	ASSERT_LT(0, gaps.none);
	EXPECT_LE(gaps.pmc, 2 * gaps.none + IRQ_GAP_SLACK_NS);
}

/*
 * The time bound stops the user who spends it: with
 * kernel.pmc_cpu_time_max_percent at 5, uid 65534's 50 task-clocks at
 * 10 us on CPU 0 take more than their share of each tick and are
 * throttled, while root's 100 Hz cpu-clock sampler on that CPU, cheap,
 * never is. A bound shared by all throttled whoever came next.
 */
#define TIME_MAX_PATH		"/proc/sys/kernel/pmc_cpu_time_max_percent"
#define TIME_STORM_CLOCKS	50

/* As nobody on CPU 0: the clock storm; its THROTTLE records to @arg. */
static int clock_storm(void *arg)
{
	struct pmc_ring r[TIME_STORM_CLOCKS];
	int fds[TIME_STORM_CLOCKS], report = *(int *)arg;
	unsigned int i, throttles = 0;
	struct pmc_attr attr;
	__u64 pos, head;
	char err[160];

	CHILD_CHECK(pin_to_cpu(0) == 0, "pin: %s", strerror(errno));
	CHILD_CHECK(drop_privileges() == 0, "%s", strerror(errno));
	pmc_sw_attr(&attr, PMC_SW_TASK_CLOCK, 0);
	attr.irq_period = 10 * NSEC_PER_USEC;
	attr.record_type = PMC_RECORD_IP;
	for (i = 0; i < TIME_STORM_CLOCKS; i++) {
		fds[i] = pmc_open(&attr, 0, -1, -1, 0);
		CHILD_CHECK(fds[i] >= 0, "clock %u: %s", i, strerror(errno));
		CHILD_CHECK(!pmc_ring_map(&r[i], fds[i], 1, true),
			    "mmap: %s", strerror(errno));
	}
	burn_cpu(STORM_NS);
	/* The rings fill: what matters is the THROTTLEs of the first ticks. */
	for (i = 0; i < TIME_STORM_CLOCKS; i++) {
		ioctl(fds[i], PMC_IOC_DISABLE, 0);
		pos = 0;
		head = ring_head(&r[i]);
		while (ring_next(&r[i], &pos, head, err, sizeof(err)) > 0)
			throttles += !is_sample() &&
				     rec.h.type == PMC_EVENT_THROTTLE;
		ring_unmap(&r[i]);
		close(fds[i]);
	}
	CHILD_CHECK(write(report, &throttles, sizeof(throttles)) ==
		    sizeof(throttles), "write: %s", strerror(errno));
	return 0;
}

TEST_F_TIMEOUT(hostile, clock_storm_throttles_its_owner, 60)
{
	unsigned int storm_throttles = 0;
	struct ring_tally t = { };
	struct pmc_attr attr;
	struct pmc_ring r;
	int fd, report[2];
	long old_pct = 0;

	if (!self->root)
		SKIP(return, "needs root: sets kernel.pmc_cpu_time_max_percent");
	ASSERT_EQ(0, read_int_file(TIME_MAX_PATH, &old_pct));
	ASSERT_EQ(0, write_int_file(TIME_MAX_PATH, 5));
	ASSERT_EQ(0, pipe(report));
	pmc_sw_attr(&attr, PMC_SW_CPU_CLOCK, 0);
	attr.irq_period = 10 * NSEC_PER_MSEC;
	attr.record_type = PMC_RECORD_IP;
	fd = counter_open(_metadata, &attr, -1, 0, -1);
	ring_map(_metadata, &r, fd, 16, true);
	EXPECT_EQ(0, reap(_metadata, spawn(_metadata, clock_storm,
					   &report[1]), NULL));
	counter_ioctl(_metadata, fd, PMC_IOC_DISABLE);
	EXPECT_EQ(0, write_int_file(TIME_MAX_PATH, old_pct));
	ASSERT_EQ(sizeof(storm_throttles),
		  read(report[0], &storm_throttles, sizeof(storm_throttles)));
	close(report[0]);
	close(report[1]);
	ring_tally(_metadata, &r, &t);
	ring_unmap(&r);
	close(fd);

	TH_LOG("root's sampler: %llu samples, %llu lost, %u throttles; uid %d's %u clocks: %u throttles",
	       (unsigned long long)t.samples, (unsigned long long)t.lost,
	       t.throttles, NOBODY, TIME_STORM_CLOCKS, storm_throttles);
	EXPECT_LT(0, storm_throttles);
	EXPECT_EQ(0, t.throttles);
	EXPECT_LT(0, t.samples);
}

TEST_HARNESS_MAIN
