// SPDX-License-Identifier: GPL-2.0
/*
 * Reading a counter without a system call: page 0 of its mapping
 * (libpmc's pmc_self_page_read()).
 *
 * What is asserted is what read() would give: a self-read taken between
 * two read()s lies between them, field by field, and task-clock equals
 * time_running in it as in read(); self-reads never go back across
 * preemption, migration, multiplexing and the ioctls; and the page says
 * "use read()" for every counter it cannot extrapolate. Where there is
 * no TSC conversion (not x86, or a sched_clock user space cannot follow)
 * every page says "use read()", and the tests check that instead.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include "../kselftest_harness.h"
#include "pmc_harness.h"
#include "libpmc.h"

/* How many times the tests that compare with read() do it. */
#define ROUNDS		2000

static int clock_open(struct __test_metadata *_metadata, unsigned int id,
		      bool disabled);

/*
 * Does page 0 serve a running task-clock here? On x86 when sched_clock
 * is the TSC's and stable, as under QEMU TCG; never elsewhere. Asked
 * once, of the kernel: the tests then check what it said holds.
 */
static bool have_user_time(void)
{
	static int known = -1;
	struct pmc_attr attr;
	struct pmc_self s;
	struct pmc_count c;
	int fd;

	if (known >= 0)
		return known;
	pmc_sw_attr(&attr, PMC_SW_TASK_CLOCK, ALL_TIMES);
	fd = pmc_open(&attr, 0, -1, -1, 0);
	known = fd >= 0 && !pmc_self_map(&s, fd) &&
		pmc_self_page_read(s.page, &c);
	if (fd >= 0)
		close(fd);
#if defined(__x86_64__) || defined(__i386__)
	if (!known)
		ksft_print_msg("no TSC conversion in page 0 here (sched_clock not the TSC's, or not stable): every page says use read()\n");
#endif
	return known;
}

static int clock_open(struct __test_metadata *_metadata, unsigned int id,
		      bool disabled)
{
	struct pmc_attr attr;

	pmc_sw_attr(&attr, id, ALL_TIMES);
	attr.disabled = disabled;
	return counter_open(_metadata, &attr, 0, -1, -1);
}

static void self_map(struct __test_metadata *_metadata, struct pmc_self *s,
		     int fd)
{
	ASSERT_EQ(0, pmc_self_map(s, fd)) {
		TH_LOG("mmap of page 0 alone: %s", strerror(errno));
	}
}

static struct pmc_count read_count(struct __test_metadata *_metadata, int fd)
{
	struct pmc_count c;

	ASSERT_EQ(0, pmc_read_count(fd, &c));
	return c;
}

/* Each field of @a at most @b's. */
static bool count_le(const struct pmc_count *a, const struct pmc_count *b)
{
	return a->value <= b->value && a->enabled <= b->enabled &&
	       a->running <= b->running;
}

/* "value/enabled/running", for messages. */
struct count_str {
	char s[64];
};

static struct count_str count_str(const struct pmc_count *c)
{
	struct count_str r;

	snprintf(r.s, sizeof(r.s), "%llu/%llu/%llu",
		 (unsigned long long)c->value, (unsigned long long)c->enabled,
		 (unsigned long long)c->running);
	return r;
}

/* Does the page let this thread read the counter now? */
static bool page_usable(const struct pmc_self *s)
{
	struct pmc_count c;

	return pmc_self_page_read(s->page, &c);
}

/*
 * A self-read between two read()s lies between them in each field; for
 * @clock_equal (task-clock) its value is its time_running, as read()'s.
 * read() itself switches nothing out, so with a TSC conversion most
 * rounds are served by the page; without one, none.
 */
static void between_reads(struct __test_metadata *_metadata,
			  const struct pmc_self *s, bool clock_equal)
{
	struct pmc_count a, m, b;
	unsigned int i, served = 0;

	for (i = 0; i < ROUNDS; i++) {
		a = read_count(_metadata, s->fd);
		served += pmc_self_page_read(s->page, &m);
		b = read_count(_metadata, s->fd);
		if (!have_user_time() || !s->page->cap_user_time)
			continue;
		EXPECT_TRUE(count_le(&a, &m) && count_le(&m, &b)) {
			TH_LOG("round %u: read() %s, page %s, read() %s", i,
			       count_str(&a).s, count_str(&m).s,
			       count_str(&b).s);
		}
		if (clock_equal) {
			EXPECT_EQ(m.running, m.value) TH_LOG("round %u", i);
		}
		if (_metadata->exit_code == KSFT_FAIL)
			break;
	}
	EXPECT_EQ(have_user_time(), served > ROUNDS / 2) {
		TH_LOG("%u of %u served", served, ROUNDS);
	}
}

/* The page serves a running clock mapped alone, and agrees with read(). */
static void clock_between_reads(struct __test_metadata *_metadata,
				unsigned int id)
{
	int fd = clock_open(_metadata, id, false);
	struct pmc_self s;

	self_map(_metadata, &s, fd);
	EXPECT_EQ(0, s.page->index);
	EXPECT_EQ(0, (int)s.page->cap_user_rdpmc);
	between_reads(_metadata, &s, id == PMC_SW_TASK_CLOCK);
	pmc_self_unmap(&s);
	close(fd);
}

TEST(task_clock_between_reads)
{
	clock_between_reads(_metadata, PMC_SW_TASK_CLOCK);
}

TEST(cpu_clock_between_reads)
{
	clock_between_reads(_metadata, PMC_SW_CPU_CLOCK);
}

/* The ring's page 0 serves as well as page 0 alone. */
TEST(ring_page_serves)
{
	int fd = clock_open(_metadata, PMC_SW_TASK_CLOCK, false);
	struct pmc_ring r;
	struct pmc_self s;

	ASSERT_EQ(0, pmc_ring_map(&r, fd, 1, true));
	s.fd = fd;
	s.page = r.page;
	between_reads(_metadata, &s, true);
	pmc_ring_unmap(&r);
	close(fd);
}

/*
 * A thread moved between CPUs by another, and preempted by a busy
 * thread on the same CPU, never sees its clock go back, and ends within
 * a read() of it. The reader reads until the mover has moved it
 * MOVES times, however long that takes on the host.
 */
#define MOVES		20

struct mover {
	pid_t tid;
	int cpus[2];
	atomic_int done;
};

static void *mover_fn(void *arg)
{
	struct mover *m = arg;
	cpu_set_t set;
	int i;

	for (i = 0; i < MOVES; i++) {
		CPU_ZERO(&set);
		CPU_SET(m->cpus[i & 1], &set);
		sched_setaffinity(m->tid, sizeof(set), &set);
		usleep(1000);
	}
	atomic_store(&m->done, 1);
	return NULL;
}

static void *spin_fn(void *arg)
{
	atomic_int *stop = arg;

	while (!atomic_load(stop))
		;
	return NULL;
}

/*
 * Self-read in a loop until *@done is set, or for @cpu_ns of CPU time;
 * each read at least the last one. Return: how many times the CPU the
 * reader ran on changed.
 */
static int monotonic_while(struct __test_metadata *_metadata,
			   const struct pmc_self *s, atomic_int *done,
			   __u64 cpu_ns, bool pause)
{
	struct pmc_count prev = { }, c, last;
	__u64 start = thread_cputime_ns();
	unsigned long n = 0, served = 0;
	int cpu = sched_getcpu(), moved = 0;

	do {	/* at least once: *@done may be set before we start */
		int i;

		for (i = 0; i < 100; i++, n++) {
			served += pmc_self_page_read(s->page, &c);
			if (!count_le(&prev, &c))
				break;
			prev = c;
		}
		ASSERT_EQ(100, i) {
			TH_LOG("read %lu went back: %s after %s", n,
			       count_str(&c).s, count_str(&prev).s);
		}
		if (sched_getcpu() != cpu) {
			cpu = sched_getcpu();
			moved++;
		}
		if (pause)
			usleep(1);
	} while (done ? !atomic_load(done) :
			thread_cputime_ns() - start < cpu_ns);
	last = read_count(_metadata, s->fd);
	EXPECT_LE(prev.value, last.value);
	EXPECT_LE(prev.running, last.running);
	EXPECT_EQ(have_user_time(), served > 0) {
		TH_LOG("%lu of %lu reads served", served, n);
	}
	return moved;
}

TEST(monotonic_across_migration)
{
	int fd = clock_open(_metadata, PMC_SW_TASK_CLOCK, false);
	struct mover m = { .tid = gettid() };
	struct pmc_self s;
	pthread_t t;
	int moved;

	if (allowed_cpus(m.cpus, 2) < 2)
		SKIP(return, "needs two CPUs");
	self_map(_metadata, &s, fd);
	ASSERT_EQ(0, pthread_create(&t, NULL, mover_fn, &m));
	moved = monotonic_while(_metadata, &s, &m.done, 0, false);
	pthread_join(t, NULL);
	EXPECT_LE(2, moved) TH_LOG("seen on another CPU %d times", moved);
	pmc_self_unmap(&s);
	close(fd);
}

TEST(monotonic_across_preemption)
{
	int fd = clock_open(_metadata, PMC_SW_TASK_CLOCK, false);
	struct rusage r0, r1;
	atomic_int stop = 0;
	struct pmc_self s;
	pthread_t t;
	int cpu;

	ASSERT_EQ(1, allowed_cpus(&cpu, 1));
	ASSERT_EQ(0, pin_to_cpu(cpu));
	self_map(_metadata, &s, fd);
	/* inherits the pin: the two share one CPU */
	ASSERT_EQ(0, pthread_create(&t, NULL, spin_fn, &stop));
	ASSERT_EQ(0, getrusage(RUSAGE_THREAD, &r0));
	monotonic_while(_metadata, &s, NULL, 100 * NSEC_PER_MSEC, false);
	ASSERT_EQ(0, getrusage(RUSAGE_THREAD, &r1));
	atomic_store(&stop, 1);
	pthread_join(t, NULL);
	/* the spinner took the CPU from the reader */
	EXPECT_LT(r0.ru_nivcsw, r1.ru_nivcsw);
	pmc_self_unmap(&s);
	close(fd);
}

/*
 * A task-clock grouped with a hardware counter takes turns on the PMU
 * with an exclusive group: each turn rewrites the page, and self-reads
 * never go back across them. Software groups alone never multiplex.
 */
TEST(monotonic_across_multiplexing)
{
	int fd = clock_open(_metadata, PMC_SW_TASK_CLOCK, true);
	struct pmc_attr attr;
	struct pmc_count c;
	struct pmc_self s;
	int hw, excl;

	pmc_sw_attr(&attr, 0, ALL_TIMES);
	attr.config = HW(PMC_HW_CPU_CYCLES);
	hw = pmc_open(&attr, 0, -1, fd, 0);
	if (hw < 0 && errno == ENODEV)
		SKIP(return, "no PMU: software groups never multiplex");
	ASSERT_LE(0, hw) TH_LOG("cycles in the clock's group: %s",
				strerror(errno));
	attr.exclusive = 1;
	excl = counter_open(_metadata, &attr, 0, -1, -1);
	self_map(_metadata, &s, fd);
	ASSERT_EQ(0, ioctl(fd, PMC_IOC_ENABLE, 0));
	monotonic_while(_metadata, &s, NULL, 100 * NSEC_PER_MSEC, false);
	c = read_count(_metadata, fd);
	EXPECT_LT(0, c.running);
	EXPECT_LT(c.running, c.enabled) {
		TH_LOG("the clock's group never left the PMU: %s",
		       count_str(&c).s);
	}
	pmc_self_unmap(&s);
	close(excl);
	close(hw);
	close(fd);
}

/*
 * Disabled: the page gives the frozen values and says to use read().
 * Enabled: it serves again. RESET: back to about zero, never behind a
 * later read().
 */
TEST(enable_disable_reset)
{
	int fd = clock_open(_metadata, PMC_SW_TASK_CLOCK, true);
	struct pmc_count c, r;
	struct pmc_self s;

	self_map(_metadata, &s, fd);
	EXPECT_EQ(0, pmc_self_page_read(s.page, &c));
	EXPECT_EQ(0, c.value);
	EXPECT_EQ(0, c.enabled);

	counter_ioctl(_metadata, fd, PMC_IOC_ENABLE);
	burn_cpu(5 * NSEC_PER_MSEC);
	EXPECT_EQ(have_user_time(), page_usable(&s));

	counter_ioctl(_metadata, fd, PMC_IOC_DISABLE);
	EXPECT_EQ(0, pmc_self_page_read(s.page, &c));
	r = read_count(_metadata, fd);
	EXPECT_EQ(r.value, c.value);
	EXPECT_EQ(r.enabled, c.enabled);
	EXPECT_EQ(r.running, c.running);
	EXPECT_LE(5 * NSEC_PER_MSEC, c.value);

	counter_ioctl(_metadata, fd, PMC_IOC_ENABLE);
	burn_cpu(2 * NSEC_PER_MSEC);
	counter_ioctl(_metadata, fd, PMC_IOC_RESET);
	pmc_self_page_read(s.page, &c);
	r = read_count(_metadata, fd);
	EXPECT_LE(c.value, r.value);
	EXPECT_GT(NSEC_PER_MSEC, c.value) TH_LOG("%llu ns after RESET",
						 (unsigned long long)c.value);
	pmc_self_unmap(&s);
	close(fd);
}

/*
 * A REFRESH budget that runs out disables the counter from its own
 * overflow, outside any ioctl: the page stops the clock there too.
 */
TEST(refresh_out_stops_page)
{
	struct pmc_attr attr;
	struct pmc_count c, r;
	struct pmc_self s;
	int fd;

	pmc_sw_attr(&attr, PMC_SW_TASK_CLOCK, ALL_TIMES);
	attr.irq_period = NSEC_PER_MSEC;
	attr.disabled = 1;
	fd = counter_open(_metadata, &attr, 0, -1, -1);
	self_map(_metadata, &s, fd);
	ASSERT_EQ(0, ioctl(fd, PMC_IOC_REFRESH, 1)) TH_LOG("%s", strerror(errno));
	burn_cpu(20 * NSEC_PER_MSEC);
	EXPECT_EQ(0, pmc_self_page_read(s.page, &c));
	r = read_count(_metadata, fd);
	EXPECT_EQ(r.value, c.value);
	EXPECT_EQ(r.enabled, c.enabled);
	/* one period, and what ran before the disable caught up with it */
	EXPECT_LE(NSEC_PER_MSEC, c.value);
	EXPECT_GT(10 * NSEC_PER_MSEC, c.value);
	pmc_self_unmap(&s);
	close(fd);
}

/* The pages it cannot extrapolate say so: not ours, a copy's sum, ... */
static void expect_read_only(struct __test_metadata *_metadata, int fd,
			     const char *what)
{
	struct pmc_count c;
	struct pmc_self s;

	self_map(_metadata, &s, fd);
	EXPECT_EQ(0, pmc_self_page_read(s.page, &c)) TH_LOG("%s", what);
	EXPECT_EQ(0, (int)s.page->cap_user_time) TH_LOG("%s", what);
	EXPECT_EQ(0, (int)s.page->cap_user_count_time) TH_LOG("%s", what);
	EXPECT_EQ(0, s.page->index) TH_LOG("%s", what);
	EXPECT_EQ(0, (int)s.page->cap_user_rdpmc) TH_LOG("%s", what);
	/* and the library falls back to read() */
	EXPECT_EQ(0, pmc_read_self(&s, &c));
	pmc_self_unmap(&s);
}

TEST(another_tasks_counter_says_read)
{
	struct pmc_attr attr;
	pid_t pid;
	int fd;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		for (;;)
			pause();
	}
	pmc_sw_attr(&attr, PMC_SW_TASK_CLOCK, ALL_TIMES);
	fd = counter_open(_metadata, &attr, pid, -1, -1);
	expect_read_only(_metadata, fd, "another task's task-clock");
	close(fd);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

TEST(inherited_counter_says_read)
{
	struct pmc_attr attr;
	int fd;

	pmc_sw_attr(&attr, PMC_SW_TASK_CLOCK, ALL_TIMES);
	attr.inherit = 1;
	fd = counter_open(_metadata, &attr, 0, -1, -1);
	expect_read_only(_metadata, fd, "an inherit task-clock");
	close(fd);
}

TEST(event_counter_says_read)
{
	int fd;
	struct pmc_attr attr;

	pmc_sw_attr(&attr, PMC_SW_PAGE_FAULTS, ALL_TIMES);
	fd = counter_open(_metadata, &attr, 0, -1, -1);
	expect_read_only(_metadata, fd, "page faults");
	close(fd);
}

TEST(cpu_counter_says_read)
{
	struct pmc_attr attr;
	int fd;

	pmc_sw_attr(&attr, PMC_SW_CPU_CLOCK, ALL_TIMES);
	fd = pmc_open(&attr, -1, 0, -1, 0);
	if (fd < 0 && (errno == EACCES || errno == EPERM))
		SKIP(return, "per-CPU counters need privilege here");
	ASSERT_LE(0, fd);
	expect_read_only(_metadata, fd, "a per-CPU cpu-clock");
	close(fd);
}

/* cycles on this thread, user only; sampling every @period if not 0 */
static int cycles_open(__u64 period)
{
	struct pmc_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.config = HW(PMC_HW_CPU_CYCLES);
	attr.read_format = ALL_TIMES;
	attr.exclude_kernel = 1;
	attr.irq_period = period;
	return pmc_open(&attr, 0, -1, -1, 0);
}

/*
 * A hardware counter: where this task may execute rdpmc on a real PMU,
 * the page gives the counter's index and a self-read lies between two
 * read()s; the emulated PMU's counts are not in the registers, and its
 * page says to use read().
 */
TEST(hardware_counter_page)
{
	struct pmc_self s;
	int fd = cycles_open(0), sampling;

	if (fd < 0 && errno == ENODEV)
		SKIP(return, "no PMU");
	ASSERT_LE(0, fd);
	sampling = cycles_open(1000000);
	ASSERT_LE(0, sampling);
	expect_read_only(_metadata, sampling, "sampling cycles");
	close(sampling);
	if (cmdline_emu()) {
		expect_read_only(_metadata, fd, "emulated cycles");
		close(fd);
		return;
	}
	self_map(_metadata, &s, fd);
	if (!s.page->cap_user_rdpmc)
		ksft_print_msg("cycles: no rdpmc here (perf's rdpmc setting 0?)\n");
	else
		EXPECT_LT(0, s.page->index);
	between_reads(_metadata, &s, false);
	pmc_self_unmap(&s);
	close(fd);
}

#if defined(__x86_64__) || defined(__i386__)
/*
 * rdpmc at user level: 0 if it ran, else the signal it raised: SIGSEGV
 * for #GP (CR4.PCE clear on this CPU), SIGILL for #UD (CR4.PCE set, but
 * QEMU TCG has no RDPMC). The handlers are installed by the test.
 */
static __thread sigjmp_buf rdpmc_env;

static void rdpmc_fault(int sig)
{
	siglongjmp(rdpmc_env, sig);
}

static int try_rdpmc(void)
{
	__u32 lo, hi;
	int sig = sigsetjmp(rdpmc_env, 1);

	if (!sig) {
		__asm__ __volatile__("rdpmc" : "=a" (lo), "=d" (hi) : "c" (0));
		(void)lo;
		(void)hi;
	}
	return sig;
}

static const char *rdpmc_str(int sig)
{
	return sig == SIGSEGV ? "#GP (CR4.PCE clear)" :
	       sig == SIGILL ? "#UD (CR4.PCE set, no RDPMC in this CPU)" :
	       sig ? "another signal" : "ran (CR4.PCE set)";
}

/* perf's sysfs rdpmc setting, which governs both: 1 where there is none. */
static int perf_rdpmc_setting(void)
{
	FILE *f = fopen("/sys/bus/event_source/devices/cpu/rdpmc", "r");
	int v = 1;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = 1;
		fclose(f);
	}
	return v;
}

struct rdpmc_thread {
	int pipe[2];
	int sig;
};

/*
 * Another thread of the mm, on another CPU: it waits for the mapping,
 * then tries. It blocks rather than spins: a vCPU spinning in user mode
 * beside an otherwise idle guest starved the other vCPU under QEMU 7.2
 * -icount (the main thread held 23 s in openat(), a soft lockup; never
 * without -icount).
 */
static void *rdpmc_thread_fn(void *arg)
{
	struct rdpmc_thread *t = arg;
	char c;

	t->sig = read(t->pipe[0], &c, 1) == 1 ? try_rdpmc() : -1;
	return NULL;
}

/*
 * rdpmc is allowed to a task while it maps the page of a hardware
 * counter it opened on itself, in every thread of its mm (one on
 * another CPU too), and to no other process; not for a
 * software counter's page; and no more once the last such mapping is
 * gone. The emulated PMU sets CR4.PCE as a real one would, so this runs
 * there, where rdpmc then raises #UD instead of reading.
 */
TEST(rdpmc_only_while_mapped)
{
	struct sigaction sa = { .sa_handler = rdpmc_fault };
	struct rdpmc_thread t = { .sig = -1 };
	int setting = perf_rdpmc_setting(), fd, clock, sampling, pipefd[2];
	int status, sig;
	struct pmc_self s, s2, c;
	cpu_set_t cpus;
	pthread_t th;
	pid_t child;
	char go = 1;

	fd = cycles_open(0);
	if (fd < 0 && errno == ENODEV)
		SKIP(return, "no PMU");
	ASSERT_LE(0, fd);
	if (setting != 1)
		SKIP(return, "perf's rdpmc setting is %d, not 1", setting);
	ASSERT_EQ(0, sigaction(SIGSEGV, &sa, NULL));
	ASSERT_EQ(0, sigaction(SIGILL, &sa, NULL));
	clock = clock_open(_metadata, PMC_SW_TASK_CLOCK, false);
	sampling = cycles_open(1000000);
	ASSERT_LE(0, sampling);

	ASSERT_EQ(0, pipe(pipefd));
	child = fork();
	ASSERT_LE(0, child);
	if (!child) {	/* another mm, forked before any mapping */
		if (read(pipefd[0], &go, 1) != 1)
			_exit(100);
		_exit(try_rdpmc());
	}
	ASSERT_EQ(0, pipe(t.pipe));
	ASSERT_EQ(0, pthread_create(&th, NULL, rdpmc_thread_fn, &t));
	if (sysconf(_SC_NPROCESSORS_ONLN) > 1) {
		CPU_ZERO(&cpus);
		CPU_SET(1, &cpus);
		pthread_setaffinity_np(th, sizeof(cpus), &cpus);
		CPU_ZERO(&cpus);
		CPU_SET(0, &cpus);
		sched_setaffinity(0, sizeof(cpus), &cpus);
	}

	sig = try_rdpmc();
	EXPECT_EQ(SIGSEGV, sig) TH_LOG("before any mapping: %s", rdpmc_str(sig));
	self_map(_metadata, &c, clock);
	sig = try_rdpmc();
	EXPECT_EQ(SIGSEGV, sig) TH_LOG("task-clock's page: %s", rdpmc_str(sig));
	pmc_self_unmap(&c);
	self_map(_metadata, &c, sampling);
	sig = try_rdpmc();
	EXPECT_EQ(SIGSEGV, sig) TH_LOG("sampling cycles: %s", rdpmc_str(sig));
	pmc_self_unmap(&c);

	self_map(_metadata, &s, fd);
	self_map(_metadata, &s2, fd);	/* two mappings of one page */
	sig = try_rdpmc();
	EXPECT_NE(SIGSEGV, sig) TH_LOG("cycles' page mapped: %s", rdpmc_str(sig));
	ASSERT_EQ(1, write(t.pipe[1], &go, 1));
	pthread_join(th, NULL);
	EXPECT_NE(SIGSEGV, t.sig) TH_LOG("another thread: %s", rdpmc_str(t.sig));
	ASSERT_EQ(1, write(pipefd[1], &go, 1));
	ASSERT_EQ(child, waitpid(child, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(SIGSEGV, WEXITSTATUS(status)) {
		TH_LOG("another process: %s", rdpmc_str(WEXITSTATUS(status)));
	}

	pmc_self_unmap(&s);
	sig = try_rdpmc();
	EXPECT_NE(SIGSEGV, sig) TH_LOG("one mapping left: %s", rdpmc_str(sig));
	pmc_self_unmap(&s2);
	sig = try_rdpmc();
	EXPECT_EQ(SIGSEGV, sig) TH_LOG("all unmapped: %s", rdpmc_str(sig));
	close(sampling);
	close(clock);
	close(fd);
}
#endif

/*
 * The retry loop ends while the kernel rewrites the page all the time:
 * another thread's read()s and ENABLEs each rewrite it. The reader reads
 * until REWRITES rewrites are done, however long the host takes.
 * Each rewrite of the running reader's counter is a call to the reader's
 * CPU, which interrupts it mid-read. The reader sleeps a microsecond
 * after each 100 reads: where the CPUs take turns on one host thread
 * (QEMU -icount), a reader that only spins keeps its CPU's turn while
 * the rewriter waits for the call to reach it (arm64 with QEMU on one
 * host core: 11-20 s of guest time, against the harness's 30 s limit).
 */
#define REWRITES	200

struct rewriter {
	int fd;
	atomic_int done;
};

static void *rewriter_fn(void *arg)
{
	struct rewriter *w = arg;
	struct pmc_count c;
	int i;

	for (i = 0; i < REWRITES; i++) {
		pmc_read_count(w->fd, &c);
		ioctl(w->fd, PMC_IOC_ENABLE, 0);
	}
	atomic_store(&w->done, 1);
	return NULL;
}

TEST(retry_ends_under_rewrites)
{
	int fd = clock_open(_metadata, PMC_SW_TASK_CLOCK, false);
	struct rewriter w = { .fd = fd };
	struct pmc_self s;
	pthread_t t;

	self_map(_metadata, &s, fd);
	ASSERT_EQ(0, pthread_create(&t, NULL, rewriter_fn, &w));
	monotonic_while(_metadata, &s, &w.done, 0, true);
	pthread_join(t, NULL);
	pmc_self_unmap(&s);
	close(fd);
}

/* Page 0 alone maps (read-only or not); its records have no room. */
TEST(page_zero_alone)
{
	size_t pg = page_size();
	struct pmc_attr attr;
	void *p;
	int fd;

	pmc_sw_attr(&attr, PMC_SW_TASK_CLOCK, ALL_TIMES);
	attr.irq_period = 100 * NSEC_PER_USEC;
	fd = counter_open(_metadata, &attr, 0, -1, -1);
	p = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, p) TH_LOG("%s", strerror(errno));
	burn_cpu(5 * NSEC_PER_MSEC);	/* samples: lost, the ring has no room */
	EXPECT_EQ(0, ((struct pmc_mmap_page *)p)->data_head);
	EXPECT_EQ(0, munmap(p, pg));
	/* 1 + 2^n pages still, or page 0 alone */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 4 * pg, PROT_READ, MAP_SHARED, fd, 0));
	EXPECT_EQ(EINVAL, errno);
	close(fd);
}

TEST_HARNESS_MAIN
