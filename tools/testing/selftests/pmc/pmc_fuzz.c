// SPDX-License-Identifier: GPL-2.0
/*
 * pmc_fuzz: a seeded fuzzer for pmc_open(2), in the spirit of
 * perf_fuzzer and trinity.
 *
 *   pmc_fuzz [-s SEED] [-n OPS] [-t SECONDS] [-j THREADS] [-u]
 *
 * Worker threads share tables of counter fds and ring mappings and pick
 * operations from a seeded generator: opens with valid-ish and garbage
 * attributes, pids, CPUs and group fds; reads of every size; every
 * ioctl; mmap, mremap, munmap, mprotect and madvise of rings, fork with
 * the mappings; garbage data_tail; poll; SIGIO; prctl; and, as root
 * without -u, the sysctls and CPU hotplug. It checks what the kernel
 * promises (read sizes, page 0 of every live ring) and stops at the
 * bound. The seed comes first in the output; on a failure the last
 * operations of every thread follow. A kernel splat is caught by the
 * runner (scripts/vm-run), a hang by the alarm here.
 *
 * Threads make the interleaving, not the operation sequence, vary:
 * with -j 1 a seed replays the same operations.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "pmc_util.h"

#define MAX_FDS		48
#define MAX_MAPS	12
#define MAX_THREADS	8
#define LOG_LEN		32
#define WATCHDOG_S	60	/* one operation this long is a hang */

struct map {
	void *addr;
	size_t len;
	int fd;
};

struct log_entry {
	unsigned long n;
	char text[96];
};

struct worker {
	pthread_t thread;
	unsigned int id;
	__u64 rng;
	unsigned long ops;
	struct log_entry log[LOG_LEN];
};

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static int fds[MAX_FDS];		/* -1: free */
static struct map maps[MAX_MAPS];	/* addr NULL: free */
static volatile int stop, failed;
static unsigned long max_ops = ~0UL;
static __u64 deadline_ns, seed;
static unsigned int nr_threads = 2;
static bool unprivileged, root;
static struct worker workers[MAX_THREADS];
static pid_t dead_pid;
static long saved_sysctl[3];

static const char *const sysctls[] = {
	"/proc/sys/kernel/pmc_paranoid",
	"/proc/sys/kernel/pmc_mlock_kb",
	"/proc/sys/kernel/pmc_mux_interval_ms",
};

static __u64 rnd(struct worker *w)
{
	w->rng ^= w->rng << 13;
	w->rng ^= w->rng >> 7;
	w->rng ^= w->rng << 17;
	return w->rng;
}

static __u64 below(struct worker *w, __u64 n)
{
	return n ? rnd(w) % n : 0;
}

static bool chance(struct worker *w, unsigned int pct)
{
	return below(w, 100) < pct;
}

static void logf_op(struct worker *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void logf_op(struct worker *w, const char *fmt, ...)
{
	struct log_entry *e = &w->log[w->ops % LOG_LEN];
	va_list ap;

	e->n = w->ops;
	va_start(ap, fmt);
	vsnprintf(e->text, sizeof(e->text), fmt, ap);
	va_end(ap);
}

static void fail(struct worker *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void fail(struct worker *w, const char *fmt, ...)
{
	va_list ap;

	printf("# thread %u, op %lu: ", w->id, w->ops);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	failed = 1;
	stop = 1;
}

static void dump_logs(void)
{
	unsigned int t, i;
	struct worker *w;

	printf("# seed %llu; last operations of each thread:\n",
	       (unsigned long long)seed);
	for (t = 0; t < nr_threads; t++) {
		w = &workers[t];
		for (i = 0; i < LOG_LEN; i++) {
			struct log_entry *e = &w->log[(w->ops + i) % LOG_LEN];

			if (e->text[0])
				printf("#   t%u %6lu %s\n", t, e->n, e->text);
		}
	}
}

/*
 * Any fd from the table, or sometimes -1 or a stale one; never 0-2, the
 * console: a read there would block, O_NONBLOCK would lose output.
 */
static int pick_fd(struct worker *w)
{
	switch (below(w, 10)) {
	case 0:
		return chance(w, 20) ? -1 : 3 + (int)below(w, 64);
	default:
		return fds[below(w, MAX_FDS)];
	}
}

static void table_add_fd(int fd)
{
	unsigned int i;

	pthread_mutex_lock(&table_lock);
	for (i = 0; i < MAX_FDS && fds[i] >= 0; i++)
		;
	if (i < MAX_FDS)
		fds[i] = fd;
	pthread_mutex_unlock(&table_lock);
	if (i == MAX_FDS)
		close(fd);
}

static __u64 fuzz_period(struct worker *w)
{
	switch (below(w, 8)) {
	case 0: return 0;
	case 1: return 1 + below(w, 100);
	case 2: return ~0ULL;
	case 3: return 1ULL << 63;
	case 4: return 1ULL << below(w, 63);
	case 5: return rnd(w);
	default: return 1000 + below(w, 1000000);
	}
}

static void fuzz_attr(struct worker *w, struct pmc_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	if (chance(w, 5)) {
		for (size_t i = 0; i < sizeof(*attr); i++)
			((unsigned char *)attr)[i] = rnd(w);
		return;
	}
	if (chance(w, 70))
		attr->config = PMC_CONFIG(PMC_TYPE_SOFTWARE, below(w, 9));
	else if (chance(w, 70))
		attr->config = PMC_CONFIG(PMC_TYPE_HARDWARE, below(w, 9));
	else
		attr->config = chance(w, 50) ? PMC_CONFIG_RAW | below(w, 0x10000) :
					      rnd(w);
	attr->irq_period = fuzz_period(w);
	attr->record_type = chance(w, 90) ? below(w, 512) : rnd(w);
	/* user registers and stacks: mostly valid, now and then garbage */
	if (attr->record_type & PMC_RECORD_REGS_USER || chance(w, 3))
		attr->regs_user = chance(w, 80) ? TEST_REGS_MASK : rnd(w);
	if (attr->record_type & PMC_RECORD_STACK_USER || chance(w, 3))
		attr->stack_user = chance(w, 80) ? 8 * below(w, 8192) : rnd(w);
	attr->freq = chance(w, 15);
	attr->read_format = chance(w, 90) ? below(w, 8) : rnd(w);
	attr->disabled = chance(w, 20);
	attr->inherit = chance(w, 25);
	attr->pinned = chance(w, 10);
	attr->exclusive = chance(w, 10);
	attr->exclude_user = chance(w, 10);
	attr->exclude_kernel = chance(w, 85);
	attr->exclude_hv = chance(w, 10);
	attr->exclude_idle = chance(w, 10);
	attr->mmap = chance(w, 20);
	attr->munmap = chance(w, 20);
	attr->comm = chance(w, 20);
	/* 0..127: valid up to PMC_PERIOD_RAND_MAX, and only with a period */
	attr->period_rand = chance(w, 20) ? below(w, 128) : 0;
	attr->time_all = chance(w, 20);
	attr->wakeup_events = chance(w, 80) ? below(w, 4) : rnd(w);
	if (chance(w, 3))
		attr->__reserved_1 = 1ULL << below(w, 44);
	if (chance(w, 3))
		attr->extra_config_len = rnd(w);
	/* 0 and the real size alike; now and then one the kernel refuses */
	attr->size = chance(w, 50) ? sizeof(*attr) : 0;
	if (chance(w, 3))
		attr->size = chance(w, 50) ? below(w, PMC_ATTR_SIZE_VER0) : rnd(w);
}

static pid_t fuzz_pid(struct worker *w)
{
	switch (below(w, 8)) {
	case 0: return -1;
	case 1: return getpid();
	case 2: return dead_pid;
	case 3: return (pid_t)rnd(w);
	case 4: return 1;
	default: return 0;
	}
}

static void op_open(struct worker *w)
{
	struct pmc_attr attr;
	int cpu, group, fd;
	pid_t pid;

	fuzz_attr(w, &attr);
	pid = fuzz_pid(w);
	cpu = chance(w, 70) ? -1 : chance(w, 80) ? (int)below(w, 3) :
						    (int)rnd(w);
	group = chance(w, 60) ? -1 : pick_fd(w);
	fd = pmc_open(&attr, pid, cpu, group, chance(w, 50));
	logf_op(w, "open config %#llx period %#llx pid %d cpu %d group %d = %d",
		(unsigned long long)attr.config,
		(unsigned long long)attr.irq_period, pid, cpu, group,
		fd < 0 ? -errno : fd);
	if (fd >= 0)
		table_add_fd(fd);
}

static void op_read(struct worker *w)
{
	static const size_t sizes[] = { 0, 1, 7, 8, 16, 24, 32, 4096, 65536 };
	__u64 buf[8192];
	int fd = pick_fd(w);
	size_t size = sizes[below(w, ARRAY_SIZE(sizes))];
	ssize_t n;

	n = read(fd, chance(w, 3) ? (void *)16 : buf, size);
	logf_op(w, "read fd %d size %zu = %zd", fd, size, n < 0 ? -errno : n);
	if (n > 0 && (n % 8 || (size_t)n > size))
		fail(w, "read of %zu bytes from fd %d returned %zd", size, fd, n);
}

static void op_ioctl(struct worker *w)
{
	static const unsigned long cmds[] = {
		PMC_IOC_ENABLE, PMC_IOC_DISABLE, PMC_IOC_RESET,
		PMC_IOC_REFRESH, _IO(PMC_IOC_MAGIC, 9),
	};
	unsigned long cmd = cmds[below(w, ARRAY_SIZE(cmds))];
	unsigned long arg = chance(w, 50) ? below(w, 4) : rnd(w);
	int fd = pick_fd(w), ret;

	ret = ioctl(fd, cmd, arg);
	logf_op(w, "ioctl fd %d cmd %#lx arg %#lx = %d", fd, cmd, arg,
		ret < 0 ? -errno : ret);
}

static void check_page0(struct worker *w, void *addr)
{
	__u32 version = ((volatile struct pmc_mmap_page *)addr)->version;

	if (version != 1)
		fail(w, "page 0 of the ring at %p reads version %u", addr,
		     version);
}

static void op_mmap(struct worker *w)
{
	unsigned int i, pages = 1 + (1U << below(w, 4));
	int fd = pick_fd(w), prot = PROT_READ;
	size_t len;
	void *p;

	if (chance(w, 10))
		pages = below(w, 20);
	if (chance(w, 60))
		prot |= PROT_WRITE;
	len = (size_t)pages * page_size();
	p = mmap(NULL, len, prot, chance(w, 95) ? MAP_SHARED : MAP_PRIVATE,
		 fd, chance(w, 95) ? 0 : page_size());
	logf_op(w, "mmap fd %d pages %u prot %d = %p", fd, pages, prot,
		p == MAP_FAILED ? (void *)(long)-errno : p);
	if (p == MAP_FAILED)
		return;
	check_page0(w, p);
	pthread_mutex_lock(&table_lock);
	for (i = 0; i < MAX_MAPS && maps[i].addr; i++)
		;
	if (i < MAX_MAPS)
		maps[i] = (struct map){ p, len, fd };
	pthread_mutex_unlock(&table_lock);
	if (i == MAX_MAPS)
		munmap(p, len);
}

/* Take a mapping out of the table: only its taker touches it then. */
static bool take_map(struct worker *w, struct map *m)
{
	unsigned int i = below(w, MAX_MAPS);
	bool got;

	pthread_mutex_lock(&table_lock);
	*m = maps[i];
	got = m->addr;
	maps[i].addr = NULL;
	pthread_mutex_unlock(&table_lock);
	return got;
}

static void put_map(struct map *m)
{
	unsigned int i;

	pthread_mutex_lock(&table_lock);
	for (i = 0; i < MAX_MAPS && maps[i].addr; i++)
		;
	if (i < MAX_MAPS)
		maps[i] = *m;
	pthread_mutex_unlock(&table_lock);
	if (i == MAX_MAPS)
		munmap(m->addr, m->len);
}

static void op_map_change(struct worker *w)
{
	size_t pg = page_size();
	struct map m;
	void *p;
	pid_t pid;
	int ret;

	if (!take_map(w, &m))
		return;
	switch (below(w, 7)) {
	case 0:		/* move it */
		p = mremap(m.addr, m.len, m.len, MREMAP_MAYMOVE);
		logf_op(w, "mremap %p move = %p", m.addr, p);
		if (p != MAP_FAILED)
			m.addr = p;
		break;
	case 1:		/* shrink or grow: must fail */
		p = mremap(m.addr, m.len,
			   chance(w, 50) && m.len > pg ? pg : 2 * m.len, 0);
		logf_op(w, "mremap %p resize = %p", m.addr, p);
		if (p != MAP_FAILED)
			fail(w, "a ring was resized to %p", p);
		break;
	case 2:		/* partial munmap: must fail */
		ret = munmap((char *)m.addr + pg * below(w, m.len / pg), pg);
		logf_op(w, "munmap part of %p = %d", m.addr, ret ? -errno : 0);
		if (!ret && m.len > pg)
			fail(w, "partial munmap of the ring at %p", m.addr);
		if (!ret)	/* a one-page ring is gone */
			return;
		break;
	case 3:
		ret = mprotect(m.addr, pg, PROT_READ);
		logf_op(w, "mprotect %p = %d", m.addr, ret ? -errno : 0);
		break;
	case 4:		/* fork with the mapping */
		ret = madvise(m.addr, m.len, chance(w, 70) ? MADV_DOFORK :
							     MADV_DONTFORK);
		pid = fork();
		if (!pid) {
			volatile __u32 v = ((struct pmc_mmap_page *)m.addr)->version;

			_exit(v == 1 || ret ? 0 : 1);
		}
		logf_op(w, "madvise %p = %d, fork %d", m.addr, ret, pid);
		if (pid > 0 && waitpid(pid, &ret, 0) == pid &&
		    !(WIFEXITED(ret) || WTERMSIG(ret) == SIGSEGV))
			fail(w, "fork child status %#x", ret);
		else if (pid > 0 && WIFEXITED(ret) && WEXITSTATUS(ret))
			fail(w, "the fork's copy of %p lost page 0", m.addr);
		break;
	case 5:		/* garbage data_tail */
		if (mprotect(m.addr, m.len, PROT_READ | PROT_WRITE) == 0) {
			((struct pmc_mmap_page *)m.addr)->data_tail = rnd(w);
			logf_op(w, "data_tail of %p = garbage", m.addr);
		}
		break;
	default:
		logf_op(w, "munmap %p", m.addr);
		munmap(m.addr, m.len);
		return;
	}
	check_page0(w, m.addr);
	put_map(&m);
}

static void op_close(struct worker *w)
{
	unsigned int i = below(w, MAX_FDS);
	int fd;

	pthread_mutex_lock(&table_lock);
	fd = fds[i];
	fds[i] = -1;
	pthread_mutex_unlock(&table_lock);
	if (fd >= 0)
		close(fd);
	logf_op(w, "close %d", fd);
}

static void op_misc(struct worker *w)
{
	struct pollfd pfd = { .fd = pick_fd(w), .events = POLLIN };
	int ret = 0;
	pid_t pid;

	switch (below(w, 6)) {
	case 0:
		ret = poll(&pfd, 1, 0);
		break;
	case 1:
		if (fcntl(pfd.fd, F_SETOWN, getpid()) == 0)
			ret = fcntl(pfd.fd, F_SETFL, O_ASYNC | O_NONBLOCK);
		break;
	case 2:
		ret = prctl(chance(w, 50) ? PR_TASK_PMC_ENABLE :
					    PR_TASK_PMC_DISABLE, 0, 0, 0, 0);
		break;
	case 3:		/* a child that faults, switches and exits or execs */
		pid = fork();
		if (!pid) {
			touch_pages(map_fresh_pages(8), 8);	/* exit frees */
			sched_yield();
			if (chance(w, 30))
				execl("/bin/true", "true", NULL);
			_exit(0);
		}
		if (pid > 0)
			waitpid(pid, NULL, 0);
		dead_pid = pid;
		break;
	case 4: {	/* work for the counters */
		char *p = map_fresh_pages(4);

		if (p) {
			touch_pages(p, 4);
			munmap(p, 4 * page_size());
		}
		sched_yield();
		break;
	}
	case 5:
		if (root && !unprivileged && chance(w, 20)) {
			unsigned int s = below(w, ARRAY_SIZE(sysctls));
			long v = s == 0 ? (long)below(w, 4) - 1 :
				 s == 1 ? (long)below(w, 2048) :
					  1 + (long)below(w, 100);

			write_int_file(sysctls[s], v);
			if (chance(w, 10)) {
				write_file("/sys/devices/system/cpu/cpu1/online", "0");
				write_file("/sys/devices/system/cpu/cpu1/online", "1");
			}
		}
		break;
	}
	logf_op(w, "misc fd %d = %d", pfd.fd, ret);
}

/* The operations, weighted by repetition. */
static void (*const ops[])(struct worker *w) = {
	op_open, op_open, op_read, op_ioctl, op_mmap, op_map_change,
	op_close, op_misc, op_misc, op_misc,
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	while (!stop && w->ops < max_ops / nr_threads) {
		ops[below(w, ARRAY_SIZE(ops))](w);
		w->ops++;
		if (!(w->ops & 63) && monotonic_ns() > deadline_ns)
			stop = 1;
	}
	return NULL;
}

static void on_alarm(int sig)
{
	(void)sig;
	printf("# no progress for %d s: a hang\n", WATCHDOG_S);
	dump_logs();
	printf("not ok 1 pmc_fuzz seed=%llu\n", (unsigned long long)seed);
	printf("# Totals: pass:0 fail:1 xfail:0 xpass:0 skip:0 error:0\n");
	fflush(stdout);
	_exit(1);
}

static void on_sigio(int sig)
{
	(void)sig;
}

int main(int argc, char **argv)
{
	unsigned long total = 0, last = 0;
	unsigned int secs = 20, i;
	sigset_t alrm;
	__u64 start;
	int opt;

	seed = monotonic_ns() ^ getpid();
	while ((opt = getopt(argc, argv, "s:n:t:j:u")) != -1) {
		switch (opt) {
		case 's':
			seed = strtoull(optarg, NULL, 0);
			break;
		case 'n':
			max_ops = strtoul(optarg, NULL, 0);
			break;
		case 't':
			secs = strtoul(optarg, NULL, 0);
			break;
		case 'j':
			nr_threads = strtoul(optarg, NULL, 0);
			break;
		case 'u':
			unprivileged = true;
			break;
		default:
			fprintf(stderr, "usage: %s [-s SEED] [-n OPS] [-t SECONDS] [-j THREADS] [-u]\n",
				argv[0]);
			return 2;
		}
	}
	if (!nr_threads || nr_threads > MAX_THREADS)
		nr_threads = 2;
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("TAP version 13\n1..1\n# pmc_fuzz: seed %llu, %u s, %u threads%s\n",
	       (unsigned long long)seed, secs, nr_threads,
	       unprivileged ? ", as uid 65534" : "");
	root = geteuid() == 0;
	for (i = 0; i < ARRAY_SIZE(sysctls); i++)
		read_int_file(sysctls[i], &saved_sysctl[i]);
	if (unprivileged && drop_privileges()) {
		printf("# cannot drop privileges: %s\n", strerror(errno));
		return 1;
	}
	signal(SIGIO, on_sigio);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGALRM, on_alarm);
	for (i = 0; i < MAX_FDS; i++)
		fds[i] = -1;
	dead_pid = getpid() + 100000;

	start = monotonic_ns();
	deadline_ns = start + secs * NSEC_PER_SEC;
	/* only the main thread takes the watchdog's SIGALRM */
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &alrm, NULL);
	for (i = 0; i < nr_threads; i++) {
		workers[i].id = i;
		workers[i].rng = (seed + i * 0x9e3779b97f4a7c15ULL) | 1;
		pthread_create(&workers[i].thread, NULL, worker_main, &workers[i]);
	}
	pthread_sigmask(SIG_UNBLOCK, &alrm, NULL);
	/* the watchdog: some thread must make progress */
	alarm(WATCHDOG_S);
	while (!stop) {
		sleep(1);
		for (total = 0, i = 0; i < nr_threads; i++)
			total += workers[i].ops;
		if (total != last) {
			last = total;
			alarm(WATCHDOG_S);
		}
		if (monotonic_ns() > deadline_ns + WATCHDOG_S * NSEC_PER_SEC)
			on_alarm(0);
		if (total >= max_ops)
			break;
	}
	for (i = 0; i < nr_threads; i++)
		pthread_join(workers[i].thread, NULL);
	alarm(0);
	for (total = 0, i = 0; i < nr_threads; i++)
		total += workers[i].ops;
	if (root && !unprivileged) {
		for (i = 0; i < ARRAY_SIZE(sysctls); i++)
			write_int_file(sysctls[i], saved_sysctl[i]);
		write_file("/sys/devices/system/cpu/cpu1/online", "1");
	}
	secs = (monotonic_ns() - start) / NSEC_PER_SEC ?: 1;
	if (failed)
		dump_logs();
	printf("%s 1 pmc_fuzz seed=%llu ops=%lu secs=%u ops/s=%lu\n",
	       failed ? "not ok" : "ok", (unsigned long long)seed, total,
	       secs, total / secs);
	printf("# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:0 error:0\n",
	       !failed, failed);
	return failed;
}
