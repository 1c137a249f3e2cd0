// SPDX-License-Identifier: GPL-2.0
/*
 * Leak check for pmc_open(2): thousands of opens and closes of every
 * kind of counter, forks of inheriting tasks and ring buffer mappings
 * must leave the kernel's memory where it was. Runs as root: it shrinks
 * every slab cache, reads /proc/slabinfo and opens per-CPU counters.
 *
 * How memory is read, and why:
 *  - Freed is not free at once. kfree_rcu() batches wait up to 5 s
 *    unless a shrinker drains them, so drop_caches runs first (the
 *    kfree_rcu shrinker is one of the slab shrinkers). Under KASAN a
 *    freed object then sits in the quarantine, still counted as in use,
 *    until its cache is shrunk: so every cache is shrunk, which also
 *    flushes the per-CPU slabs that /proc/slabinfo counts as active.
 *    Readings repeat until the counts stop moving.
 *  - A fork between the shrink and the reading (vm-run's heartbeat
 *    runs sleep(1) every 5 s) takes fresh per-CPU slabs for its task,
 *    mm, files, creds and VMAs, and their free objects count as active:
 *    once in a few rounds, 250-320 kB that are gone by the next reading.
 *    So a cache's count is its least over the readings: a leak stays
 *    in every one of them.
 *  - pmc_counter and pmc_context must come back exactly.
 *  - Anything a counter, context or ring leaves elsewhere (a file, a
 *    kmalloc, ring pages) shows in the live objects of the slab caches
 *    (not SUnreclaim, which counts free room in slabs too), the pages
 *    vmalloc'd for rings
 *    or its own cache's object count, each bounded below. Two caches
 *    grow without a leak and are left out of the slab bound:
 *    debug_objects_cache: with CONFIG_DEBUG_OBJECTS but not
 *	CONFIG_DEBUG_OBJECTS_FREE, freeing memory does not drop the debug
 *	objects of the timers, works and rcu_heads in it; they stay until
 *	some object is initialized at the same address again. Every new
 *	address costs one for good, so the cache grows, ever more slowly,
 *	with any allocation-heavy workload. Booted with no_debug_objects
 *	it does not grow at all.
 *    vmap_area: vfree() frees a ring's pages at once (VmallocUsed drops)
 *	but purges its address range lazily, once 32 MB * fls(CPUs) of
 *	ranges are waiting: the cache saw-tooths by thousands of objects.
 *  - A warm-up round runs before the baseline, for the kernel's first-use
 *    growth (up to 120 kB beyond those two caches).
 *
 * The workload runs in a child, so that its task context, fd table and
 * mm are gone before memory is read again. For investigating:
 * PMC_LEAK_OPS and PMC_LEAK_WARM_OPS (operations per round),
 * PMC_LEAK_ROUNDS (measured rounds), PMC_LEAK_ONLY=<kind> (one kind of
 * operation and closes), PMC_LEAK_SEED, PMC_LEAK_VERBOSE=1 (growth by
 * cache every round) or 2 (every reading). The mremap() test is
 * separate: "-T mremap" leaves it out.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "../kselftest_harness.h"
#include "pmc_harness.h"

/*
 * Operations per round. The 2-CPU KASAN + lockdep guest under TCG does
 * 650-1,300 a second, so both rounds take 20-40 s; the measured one
 * opens about 12,000 counters, maps about 2,700 rings and forks about
 * 160 children with inherited groups.
 */
#define LEAK_WARM_OPS		8000
#define LEAK_OPS		16000
#define LEAK_MREMAP_OPS		2000

/*
 * Bounds on one measured round, after the warm-up. Measured in that
 * guest over 11 back-to-back rounds of 5,000 and 20,000 operations:
 * SUnreclaim less the growth of the two caches below moved by -122 to
 * +106 kB (consecutive readings alone differ by up to 60 kB),
 * VmallocUsed by 0, and no other cache gained more than 283 objects.
 * Later runs saw SUnreclaim grow 262 and 362 kB while the objects in
 * all caches grew 83 kB, 71 of them in those two: SUnreclaim counts
 * the slabs' free room too, which the allocator keeps as it likes. So
 * the slab bound is on live unreclaimable objects (slabinfo's active
 * objects after a shrink, by their size), and SUnreclaim is only shown.
 * The smallest ring is 8 kB of VmallocUsed: 4 kB is a page of slack.
 */
#define LEAK_SLAB_SLACK_KB	256
#define LEAK_VMALLOC_SLACK_KB	4
/* No cache other than those two may gain an object per this many ops. */
#define LEAK_OPS_PER_OBJECT	20
#define LEAK_MIN_OBJECTS	500

static const char *const noisy_caches[] = {
	"debug_objects_cache", "vmap_area",
};

#define NR_SLOTS		32
#define MAX_CPUS		64
#define MAX_CACHES		512
#define SCRATCH_PAGES		4
#define HOLE_PAGES		32

/* /proc/slabinfo: active objects after a shrink, and their real size. */
struct cache_count {
	char name[64];
	long objs;
	long size;	/* bytes per object, KASAN metadata included */
};

struct mem_snapshot {
	long counters;		/* pmc_counter objects */
	long contexts;		/* pmc_context objects */
	long sunreclaim_kb;
	long vmalloc_kb;
	int nr;
	struct cache_count cache[MAX_CACHES];
};

/* /proc/meminfo field @key in kB, or -1. */
static long meminfo_kb(const char *key)
{
	return proc_kb("/proc/meminfo", key);
}

/*
 * Shrink each cache once: aliases of merged caches are symlinks to the
 * same directory, so only directories count. Return: caches shrunk.
 */
static int shrink_all_caches(void)
{
	char path[PATH_MAX];
	struct dirent *de;
	int nr = 0;
	DIR *dir;

	dir = opendir("/sys/kernel/slab");
	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/kernel/slab/%s/shrink",
			 de->d_name);
		if (!write_file(path, "1"))
			nr++;
	}
	closedir(dir);
	return nr;
}

static int read_slabinfo(struct mem_snapshot *snap)
{
	char line[512], name[64];
	long active, total, size;
	FILE *f;

	snap->nr = 0;
	snap->counters = snap->contexts = -1;
	f = fopen("/proc/slabinfo", "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		struct cache_count *c;

		if (sscanf(line, "%63s %ld %ld %ld", name, &active, &total,
			   &size) != 4)
			continue;	/* the two header lines */
		if (!strcmp(name, "pmc_counter"))
			snap->counters = active;
		else if (!strcmp(name, "pmc_context"))
			snap->contexts = active;
		if (snap->nr == MAX_CACHES)
			continue;
		c = &snap->cache[snap->nr++];
		snprintf(c->name, sizeof(c->name), "%s", name);
		c->objs = active;
		c->size = size;
	}
	fclose(f);
	return 0;
}

/*
 * Pages vmalloc'd by events-lite (its rings), in kB. /proc/vmallocinfo
 * names each area's caller, so the rest of the kernel's vmalloc use
 * stays out: with VMAP_STACK, a kworker started meanwhile, or a stack
 * kept in the per-CPU cache of freed ones, moves VmallocUsed by 16 kB.
 * Without vmallocinfo (not root), all of VmallocUsed.
 */
static long pmc_vmalloc_kb(void)
{
	char line[512], caller[128];
	long pages, kb = 0;
	const char *p;
	FILE *f;

	f = fopen("/proc/vmallocinfo", "r");
	if (!f)
		return meminfo_kb("VmallocUsed");
	while (fgets(line, sizeof(line), f)) {
		p = strstr(line, " pages=");
		if (!p || sscanf(line, "%*s %*s %127s", caller) != 1 ||
		    strncmp(caller, "pmc_", 4) ||
		    sscanf(p, " pages=%ld", &pages) != 1)
			continue;
		kb += pages * (page_size() / 1024);
	}
	fclose(f);
	return kb;
}

/* Cache @name in @snap, or NULL if it had none. */
static const struct cache_count *find_cache(const struct mem_snapshot *snap,
					    const char *name)
{
	int i;

	for (i = 0; i < snap->nr; i++)
		if (!strcmp(snap->cache[i].name, name))
			return &snap->cache[i];
	return NULL;
}

/*
 * Each cache's least count over this snapshot's readings so far (@prev,
 * the last one): what a passing fork's fresh per-CPU slabs added to one
 * reading goes.
 */
static void keep_least_objects(struct mem_snapshot *snap,
			       const struct mem_snapshot *prev)
{
	int i;

	for (i = 0; i < snap->nr; i++) {
		struct cache_count *c = &snap->cache[i];
		const struct cache_count *was = find_cache(prev, c->name);

		if (was && was->objs < c->objs)
			c->objs = was->objs;
	}
}

/* Counts that must stop moving once the frees have landed. */
static bool counts_equal(const struct mem_snapshot *a,
			 const struct mem_snapshot *b)
{
	return a->counters == b->counters && a->contexts == b->contexts &&
	       a->vmalloc_kb == b->vmalloc_kb;
}

static long median3(const long *v)
{
	long lo = v[0] < v[1] ? v[0] : v[1], hi = v[0] < v[1] ? v[1] : v[0];

	return v[2] < lo ? lo : v[2] > hi ? hi : v[2];
}

static int verbose_level;

#define MIN_READINGS	3
#define MAX_READINGS	10

/*
 * take_snapshot() - memory in use once everything freed is really free
 *
 * Readings repeat until the pmc caches and vmalloc read the same
 * three times in a row; each cache's count is its least over them.
 * SUnreclaim never quite stops: shrinking itself moves it by tens of
 * kB. So it is the median of the last three.
 *
 * Return: the number of readings it took, or -errno.
 */
static int take_snapshot(struct mem_snapshot *snap)
{
	static struct mem_snapshot prev;
	long sunreclaim[MAX_READINGS];
	__u64 t0 = monotonic_ns();
	int n, stable = 0, ret;

	for (n = 0; n < MAX_READINGS && stable < MIN_READINGS - 1; n++) {
		/* kfree_rcu()'s shrinker queues its batches now, not in 5 s */
		drop_slab_caches();
		/* a few grace periods for the RCU frees just queued */
		usleep(200 * 1000);
		ret = shrink_all_caches();
		if (ret < 0)
			return ret;
		ret = read_slabinfo(snap);
		if (ret)
			return ret;
		if (n)
			keep_least_objects(snap, &prev);
		sunreclaim[n] = meminfo_kb("SUnreclaim");
		snap->vmalloc_kb = pmc_vmalloc_kb();
		if (verbose_level > 1)
			fprintf(stderr, "# reading %d at %llu ms: pmc_counter %ld pmc_context %ld SUnreclaim %ld vmalloc %ld\n",
				n + 1, (monotonic_ns() - t0) / NSEC_PER_MSEC,
				snap->counters, snap->contexts, sunreclaim[n],
				snap->vmalloc_kb);
		stable = n && counts_equal(&prev, snap) ? stable + 1 : 0;
		prev = *snap;
	}
	snap->sunreclaim_kb = median3(&sunreclaim[n - MIN_READINGS]);
	return n;
}

struct cache_growth {
	const char *name;
	long objs;
	long bytes;	/* objs * object size */
};

static int by_growth(const void *a, const void *b)
{
	const struct cache_growth *x = a, *y = b;

	return (y->bytes > x->bytes) - (y->bytes < x->bytes);
}

static bool cache_reclaimable(const char *name)
{
	char path[128];
	long val = 0;

	snprintf(path, sizeof(path), "/sys/kernel/slab/%s/reclaim_account",
		 name);
	return !read_int_file(path, &val) && val;
}

static bool cache_noisy(const char *name)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(noisy_caches); i++)
		if (!strcmp(name, noisy_caches[i]))
			return true;
	return false;
}

/* Growth of each cache from @a to @b, largest first. Return: how many. */
static int cache_growth(const struct mem_snapshot *a,
			const struct mem_snapshot *b, struct cache_growth *g)
{
	int i;

	for (i = 0; i < b->nr; i++) {
		const struct cache_count *was = find_cache(a, b->cache[i].name);

		g[i].name = b->cache[i].name;
		g[i].objs = b->cache[i].objs - (was ? was->objs : 0);
		g[i].bytes = g[i].objs * b->cache[i].size;
	}
	qsort(g, b->nr, sizeof(*g), by_growth);
	return b->nr;
}

static void log_growth(struct __test_metadata *_metadata,
		       const struct cache_growth *g, int nr, int top)
{
	long total = 0;
	int i;

	for (i = 0; i < nr; i++)
		total += g[i].bytes;
	TH_LOG("objects in all caches: %+ld kB; the %d that grew most:",
	       total / 1024, top);
	for (i = 0; i < top && i < nr && g[i].bytes > 0; i++)
		TH_LOG("  %-24s %+7ld objects %+9ld bytes%s", g[i].name,
		       g[i].objs, g[i].bytes,
		       cache_reclaimable(g[i].name) ? " (reclaimable)" :
		       cache_noisy(g[i].name) ? " (not a leak)" : "");
}

static void log_snapshot(struct __test_metadata *_metadata, const char *what,
			 const struct mem_snapshot *s, int readings)
{
	TH_LOG("%-9s pmc_counter %ld, pmc_context %ld, SUnreclaim %ld kB, vmalloc %ld kB (%d readings)",
	       what, s->counters, s->contexts, s->sunreclaim_kb,
	       s->vmalloc_kb, readings);
}

/* The workload, run in a child; its counts come back in shared memory. */

enum op_kind {
	OP_OPEN,	/* task-clock or page-faults on the caller */
	OP_GROUP,	/* a group of 3 */
	OP_PER_CPU,	/* cpu-clock on one CPU */
	OP_FOREIGN,	/* a counter on the helper child */
	OP_RING,	/* a sampling counter and its ring, 1+1..1+8 pages */
	OP_INHERIT,	/* an inherited group and a child that exits */
	OP_RESPAWN,	/* the helper exits under its counters */
	OP_CLOSE,	/* close a counter, unmap its ring */
	OP_MREMAP,	/* a ring moved by mremap() */
	NR_OP_KINDS
};

static const char *const op_names[NR_OP_KINDS] = {
	[OP_OPEN]	= "open",
	[OP_GROUP]	= "group",
	[OP_PER_CPU]	= "per-cpu",
	[OP_FOREIGN]	= "foreign",
	[OP_RING]	= "ring",
	[OP_INHERIT]	= "inherit+fork",
	[OP_RESPAWN]	= "respawn",
	[OP_CLOSE]	= "close",
	[OP_MREMAP]	= "mremap",
};

struct slot {
	int fd;		/* -1: free */
	void *ring;	/* its mapping, or NULL */
	size_t ring_len;
};

struct workload {
	__u64 rng;
	unsigned long nr_ops;
	bool mremap_only;
	size_t page;
	int nr_cpus;
	int cpus[MAX_CPUS];
	pid_t helper;
	char *scratch;		/* pages to fault on */
	char *hole;		/* PROT_NONE room that mremap() moves rings to */
	struct slot slot[NR_SLOTS];
	/* results */
	unsigned long done[NR_OP_KINDS];
	unsigned long not_moved;	/* mremap() refused */
	__u64 elapsed_ns;
};

static unsigned int below(struct workload *w, unsigned int n)
{
	/* xorshift64: the same seed gives the same run */
	w->rng ^= w->rng << 13;
	w->rng ^= w->rng >> 7;
	w->rng ^= w->rng << 17;
	return w->rng % n;
}

static int sleep_forever(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return 0;
}

/* Fresh faults on the scratch pages: records for the sampling rings. */
static void fault_scratch(struct workload *w)
{
	madvise(w->scratch, SCRATCH_PAGES * w->page, MADV_DONTNEED);
	touch_pages(w->scratch, SCRATCH_PAGES);
}

static void close_slot(struct workload *w, int i)
{
	struct slot *s = &w->slot[i];

	/* the mapping holds the file: unmap before or after the close */
	if (s->ring && below(w, 2)) {
		munmap(s->ring, s->ring_len);
		s->ring = NULL;
	}
	close(s->fd);
	if (s->ring)
		munmap(s->ring, s->ring_len);
	s->fd = -1;
	s->ring = NULL;
}

/* Slots of a group being opened: not free, not to be closed yet. */
#define SLOT_TAKEN	INT_MAX

/* A free slot, after closing a random one if all are in use. */
static int get_slot(struct workload *w)
{
	int i, n, start = below(w, NR_SLOTS);

	for (i = 0; i < NR_SLOTS; i++) {
		n = (start + i) % NR_SLOTS;
		if (w->slot[n].fd < 0)
			return n;
	}
	for (i = 0; i < NR_SLOTS; i++) {
		n = (start + i) % NR_SLOTS;
		if (w->slot[n].fd != SLOT_TAKEN)
			break;
	}
	close_slot(w, n);
	return n;
}

static void get_slots(struct workload *w, int *idx, int nr)
{
	int i;

	for (i = 0; i < nr; i++) {
		idx[i] = get_slot(w);
		w->slot[idx[i]].fd = SLOT_TAKEN;
	}
}

static int op_open(struct workload *w)
{
	int i = get_slot(w);
	struct pmc_attr attr;

	pmc_sw_attr(&attr, below(w, 2) ? PMC_SW_TASK_CLOCK :
		    PMC_SW_PAGE_FAULTS, 0);
	w->slot[i].fd = pmc_open(&attr, 0, -1, -1, 0);
	CHILD_CHECK(w->slot[i].fd >= 0, "%s", strerror(errno));
	return 0;
}

static int op_group(struct workload *w)
{
	static const unsigned int ids[3] = {
		PMC_SW_TASK_CLOCK, PMC_SW_PAGE_FAULTS, PMC_SW_CONTEXT_SWITCHES,
	};
	struct pmc_attr attr;
	__u64 buf[8];
	int idx[3], i;
	ssize_t n;

	get_slots(w, idx, 3);
	for (i = 0; i < 3; i++) {
		pmc_sw_attr(&attr, ids[i], PMC_FORMAT_GROUP);
		w->slot[idx[i]].fd = pmc_open(&attr, 0, -1,
						  i ? w->slot[idx[0]].fd : -1,
						  0);
		CHILD_CHECK(w->slot[idx[i]].fd >= 0, "member %d: %s", i,
			    strerror(errno));
	}
	n = read(w->slot[idx[0]].fd, buf, sizeof(buf));
	CHILD_CHECK(n == (ssize_t)pmc_read_size(PMC_FORMAT_GROUP, 3), "%s",
		    n < 0 ? strerror(errno) : "wrong size");
	CHILD_CHECK(buf[0] == 3, "nr %llu", (unsigned long long)buf[0]);
	return 0;
}

static int op_per_cpu(struct workload *w)
{
	int i = get_slot(w), cpu = w->cpus[below(w, w->nr_cpus)];
	struct pmc_attr attr;

	pmc_sw_attr(&attr, PMC_SW_CPU_CLOCK, 0);
	w->slot[i].fd = pmc_open(&attr, -1, cpu, -1, 0);
	CHILD_CHECK(w->slot[i].fd >= 0, "CPU %d: %s", cpu, strerror(errno));
	return 0;
}

static int op_foreign(struct workload *w)
{
	int i = get_slot(w);
	struct pmc_attr attr;

	pmc_sw_attr(&attr, below(w, 2) ? PMC_SW_TASK_CLOCK :
		    PMC_SW_CONTEXT_SWITCHES, 0);
	w->slot[i].fd = pmc_open(&attr, w->helper, -1, -1, 0);
	CHILD_CHECK(w->slot[i].fd >= 0, "pid %d: %s", w->helper,
		    strerror(errno));
	return 0;
}

/* A sampling counter on page faults, so that records go to the ring. */
static int open_sampling(void)
{
	struct pmc_attr attr;

	pmc_sw_attr(&attr, PMC_SW_PAGE_FAULTS, 0);
	attr.irq_period = 1;
	attr.record_type = PMC_RECORD_IP | PMC_RECORD_TID;
	return pmc_open(&attr, 0, -1, -1, 0);
}

static int op_ring(struct workload *w)
{
	int i = get_slot(w), prot = PROT_READ;
	struct slot *s = &w->slot[i];
	struct pmc_mmap_page *up;
	void *second;

	s->fd = open_sampling();
	CHILD_CHECK(s->fd >= 0, "%s", strerror(errno));
	s->ring_len = (1 + (1 << below(w, 4))) * w->page;
	if (below(w, 2))
		prot |= PROT_WRITE;
	s->ring = mmap(NULL, s->ring_len, prot, MAP_SHARED, s->fd, 0);
	CHILD_CHECK(s->ring != MAP_FAILED, "%zu bytes: %s", s->ring_len,
		    strerror(errno));
	up = s->ring;
	CHILD_CHECK(up->version == 1, "version %u", up->version);
	/* now and then a second mapping of the same buffer */
	if (!below(w, 4)) {
		second = mmap(NULL, s->ring_len, prot, MAP_SHARED, s->fd, 0);
		CHILD_CHECK(second != MAP_FAILED, "%s", strerror(errno));
		munmap(second, s->ring_len);
	}
	fault_scratch(w);
	return 0;
}

static int touch_and_exit(void *arg)
{
	struct workload *w = arg;

	touch_pages(w->scratch, SCRATCH_PAGES);
	return 0;
}

static int op_inherit(struct workload *w)
{
	struct pmc_attr attr;
	int lead, member, status;
	__u64 buf[8];
	ssize_t n;
	pid_t pid;

	pmc_sw_attr(&attr, PMC_SW_TASK_CLOCK, PMC_FORMAT_GROUP);
	attr.inherit = 1;
	lead = pmc_open(&attr, 0, -1, -1, 0);
	CHILD_CHECK(lead >= 0, "%s", strerror(errno));
	pmc_sw_attr(&attr, PMC_SW_PAGE_FAULTS, PMC_FORMAT_GROUP);
	attr.inherit = 1;
	member = pmc_open(&attr, 0, -1, lead, 0);
	CHILD_CHECK(member >= 0, "%s", strerror(errno));

	pid = fork_child(touch_and_exit, w);
	CHILD_CHECK(pid > 0, "fork: %s", strerror(errno));
	CHILD_CHECK(waitpid(pid, &status, 0) == pid && status == 0,
		    "child status %#x", status);
	/* the child's copies folded in when it exited: its 4 COW faults */
	n = read(lead, buf, sizeof(buf));
	CHILD_CHECK(n == (ssize_t)pmc_read_size(PMC_FORMAT_GROUP, 2), "%s",
		    n < 0 ? strerror(errno) : "wrong size");
	CHILD_CHECK(buf[2] >= SCRATCH_PAGES, "%llu page faults",
		    (unsigned long long)buf[2]);
	close(member);
	close(lead);
	return 0;
}

static int op_respawn(struct workload *w)
{
	kill(w->helper, SIGKILL);
	waitpid(w->helper, NULL, 0);
	w->helper = fork_child(sleep_forever, NULL);
	CHILD_CHECK(w->helper > 0, "fork: %s", strerror(errno));
	return 0;
}

static int op_close(struct workload *w)
{
	int start = below(w, NR_SLOTS), i;

	for (i = 0; i < NR_SLOTS; i++) {
		if (w->slot[(start + i) % NR_SLOTS].fd >= 0) {
			close_slot(w, (start + i) % NR_SLOTS);
			break;
		}
	}
	return 0;
}

/* Keep the hole mapped PROT_NONE, so that no mmap() lands in it. */
static void refill_hole(struct workload *w, char *p, size_t len)
{
	if (p >= w->hole && p < w->hole + HOLE_PAGES * w->page)
		mmap(p, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
		     -1, 0);
}

/*
 * Move a ring with mremap() up to three times, maybe after closing its
 * fd, then unmap it. The buffer must come along: its page 0 still reads
 * as such after each move.
 */
static int op_mremap(struct workload *w)
{
	size_t len = (1 + (1 << below(w, 4))) * w->page;
	int fd, moves = 1 + below(w, 3), m;
	bool closed = below(w, 2);
	struct pmc_mmap_page *up;
	char *p, *to;

	fd = open_sampling();
	CHILD_CHECK(fd >= 0, "%s", strerror(errno));
	p = mmap(NULL, len, below(w, 2) ? PROT_READ : PROT_READ | PROT_WRITE,
		 MAP_SHARED, fd, 0);
	CHILD_CHECK(p != MAP_FAILED, "a %zu-page ring: %s%s", len / w->page,
		    strerror(errno), errno == EPERM ?
		    ": the charge of a moved ring was not returned" : "");
	if (closed) {
		close(fd);
		fd = -1;
	}
	for (m = 0; m < moves; m++) {
		/* two spots in the hole, so that it really moves */
		to = w->hole + (p == w->hole ? HOLE_PAGES / 2 * w->page : 0);
		to = mremap(p, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, to);
		if (to == MAP_FAILED) {
			CHILD_CHECK(errno == EINVAL || errno == EFAULT,
				    "%s", strerror(errno));
			if (!w->not_moved++)
				fprintf(stderr, "# mremap() of a %zu-page ring: %s\n",
					len / w->page, strerror(errno));
			break;
		}
		refill_hole(w, p, len);
		p = to;
		up = (void *)p;
		CHILD_CHECK(up->version == 1,
			    "move %d of a %zu-page ring (fd %s): page 0 reads version %u, not its buffer",
			    m + 1, len / w->page, closed ? "closed" : "open",
			    up->version);
	}
	/* now and then records into the moved ring */
	if (!below(w, 4))
		fault_scratch(w);
	munmap(p, len);
	refill_hole(w, p, len);
	if (fd >= 0)
		close(fd);
	return 0;
}

/* Weights of each kind, out of 1000, for the main mix. */
static const unsigned int mix[NR_OP_KINDS] = {
	[OP_OPEN]	= 200,
	[OP_GROUP]	= 80,
	[OP_PER_CPU]	= 80,
	[OP_FOREIGN]	= 60,
	[OP_RING]	= 170,
	[OP_INHERIT]	= 10,
	[OP_RESPAWN]	= 1,
	[OP_CLOSE]	= 399,
};

static int run_op(struct workload *w, enum op_kind kind)
{
	switch (kind) {
	case OP_OPEN:
		return op_open(w);
	case OP_GROUP:
		return op_group(w);
	case OP_PER_CPU:
		return op_per_cpu(w);
	case OP_FOREIGN:
		return op_foreign(w);
	case OP_RING:
		return op_ring(w);
	case OP_INHERIT:
		return op_inherit(w);
	case OP_RESPAWN:
		return op_respawn(w);
	case OP_CLOSE:
		return op_close(w);
	case OP_MREMAP:
		return op_mremap(w);
	default:
		return 1;
	}
}

static const char *only_kind;

static enum op_kind pick_op(struct workload *w)
{
	unsigned int dice = below(w, 1000);
	int k;

	for (k = 0; only_kind && k < NR_OP_KINDS; k++)
		if (!strcmp(only_kind, op_names[k]))
			return k == OP_CLOSE || !below(w, 2) ? k : OP_CLOSE;

	for (k = 0; k < NR_OP_KINDS; k++) {
		if (dice < mix[k])
			return k;
		dice -= mix[k];
	}
	return OP_CLOSE;
}

static int workload_main(void *arg)
{
	struct workload *w = arg;
	__u64 start = monotonic_ns();
	unsigned long n;
	int i, ret = 0;
	enum op_kind k;

	w->page = page_size();
	w->nr_cpus = allowed_cpus(w->cpus, MAX_CPUS);
	CHILD_CHECK(w->nr_cpus > 0, "no CPU");
	for (i = 0; i < NR_SLOTS; i++) {
		w->slot[i].fd = -1;
		w->slot[i].ring = NULL;
	}
	w->scratch = map_fresh_pages(SCRATCH_PAGES);
	CHILD_CHECK(w->scratch, "%s", strerror(errno));
	w->hole = mmap(NULL, HOLE_PAGES * w->page, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHILD_CHECK(w->hole != MAP_FAILED, "%s", strerror(errno));
	w->helper = fork_child(sleep_forever, NULL);
	CHILD_CHECK(w->helper > 0, "fork: %s", strerror(errno));

	for (n = 0; n < w->nr_ops && !ret; n++) {
		k = w->mremap_only ? OP_MREMAP : pick_op(w);
		ret = run_op(w, k);
		w->done[k]++;
	}

	for (i = 0; i < NR_SLOTS; i++)
		if (w->slot[i].fd >= 0)
			close_slot(w, i);
	kill(w->helper, SIGKILL);
	waitpid(w->helper, NULL, 0);
	w->elapsed_ns = monotonic_ns() - start;
	return ret;
}

/*
 * The mremap() test runs as nobody with RLIMIT_MEMLOCK 0 and pmc_mlock_kb
 * just big enough for one 1+8 page ring: if a moved ring kept its
 * locked-memory charge, the next ring that size fails with EPERM.
 */
static int mremap_main(void *arg)
{
	struct rlimit none = { 0, 0 };
	struct workload *w = arg;
	size_t len;
	int fd, ret;
	void *p;

	CHILD_CHECK(!setrlimit(RLIMIT_MEMLOCK, &none), "%s", strerror(errno));
	CHILD_CHECK(!drop_privileges() && geteuid(), "cannot become nobody");
	ret = workload_main(w);
	if (ret)
		return ret;

	/* the whole allowance is back: the largest ring fits again */
	len = (1 + 8) * w->page;
	fd = open_sampling();
	CHILD_CHECK(fd >= 0, "%s", strerror(errno));
	p = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	CHILD_CHECK(p != MAP_FAILED, "a 9-page ring after the round: %s",
		    strerror(errno));
	munmap(p, len);
	close(fd);
	return 0;
}

FIXTURE(leak) {
	struct workload *w;	/* shared with the workload child */
	__u64 seed;
	int rounds;
	long saved_mlock_kb;
	struct mem_snapshot start, base, prev, now;
};

static unsigned long env_ulong(const char *name, unsigned long def)
{
	const char *val = getenv(name);

	return val && *val ? strtoul(val, NULL, 0) : def;
}

FIXTURE_SETUP(leak)
{
	self->saved_mlock_kb = -1;
	if (geteuid() != 0)
		SKIP(return, "needs root: shrinks every slab cache, reads /proc/slabinfo, opens per-CPU counters");
	if (access("/proc/slabinfo", R_OK))
		SKIP(return, "no /proc/slabinfo");
	if (access("/sys/kernel/slab/pmc_counter/shrink", W_OK))
		SKIP(return, "cannot shrink slab caches: KASAN's quarantine would count as in use");
	require_pmc_open(_metadata);

	self->w = mmap(NULL, sizeof(*self->w), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->w);
	self->seed = env_ulong("PMC_LEAK_SEED", time(NULL) ^ getpid()) ?: 1;
	self->rounds = env_ulong("PMC_LEAK_ROUNDS", 1);
	verbose_level = env_ulong("PMC_LEAK_VERBOSE", 0);
	only_kind = getenv("PMC_LEAK_ONLY");
	TH_LOG("seed %llu: set PMC_LEAK_SEED to repeat",
	       (unsigned long long)self->seed);
}

FIXTURE_TEARDOWN(leak)
{
	if (self->saved_mlock_kb >= 0)
		write_int_file("/proc/sys/kernel/pmc_mlock_kb",
			       self->saved_mlock_kb);
}

static void snapshot(struct __test_metadata *_metadata,
		     struct mem_snapshot *snap, const char *what)
{
	int readings = take_snapshot(snap);

	ASSERT_LT(0, readings) TH_LOG("%s", strerror(-readings));
	ASSERT_LE(0, snap->counters) TH_LOG("no pmc_counter in /proc/slabinfo");
	ASSERT_LE(0, snap->contexts) TH_LOG("no pmc_context in /proc/slabinfo");
	log_snapshot(_metadata, what, snap, readings);
}

static void run_round(struct __test_metadata *_metadata,
		      FIXTURE_DATA(leak) *self, unsigned long ops,
		      child_fn fn, int round)
{
	struct workload *w = self->w;
	char done[256];
	size_t len = 0;
	int k;

	memset(w, 0, sizeof(*w));
	w->rng = self->seed + round;
	w->nr_ops = ops;
	w->mremap_only = fn == mremap_main;
	ASSERT_EQ(0, reap(_metadata, spawn(_metadata, fn, w), NULL));

	for (k = 0; k < NR_OP_KINDS; k++)
		if (w->done[k])
			len += snprintf(done + len, sizeof(done) - len,
					" %s %lu", op_names[k], w->done[k]);
	TH_LOG("round %d: %lu operations in %llu ms (%llu/s):%s", round, ops,
	       (unsigned long long)(w->elapsed_ns / NSEC_PER_MSEC),
	       (unsigned long long)(ops * NSEC_PER_SEC / (w->elapsed_ns ?: 1)),
	       done);
	if (w->not_moved)
		TH_LOG("mremap() refused %lu moves", w->not_moved);
}

/* One round's growth against the bounds; the caches if it fails. */
static void check_growth(struct __test_metadata *_metadata,
			 FIXTURE_DATA(leak) *self, unsigned long ops)
{
	static struct cache_growth g[MAX_CACHES];
	long sunreclaim = self->now.sunreclaim_kb - self->prev.sunreclaim_kb;
	long vmalloc = self->now.vmalloc_kb - self->prev.vmalloc_kb;
	long max_objs = ops / LEAK_OPS_PER_OBJECT, noisy = 0, live = 0;
	int nr = cache_growth(&self->prev, &self->now, g), i;
	bool ok = true;

	if (max_objs < LEAK_MIN_OBJECTS)
		max_objs = LEAK_MIN_OBJECTS;
	for (i = 0; i < nr; i++) {
		if (cache_noisy(g[i].name))
			noisy += g[i].bytes;
		else if (!cache_reclaimable(g[i].name))
			live += g[i].bytes;
	}
	TH_LOG("growth: live unreclaimable objects %+ld kB (and %+ld kB in %s and %s), SUnreclaim %+ld kB, rings' vmalloc %+ld kB",
	       live / 1024, noisy / 1024, noisy_caches[0], noisy_caches[1],
	       sunreclaim, vmalloc);

	ok &= self->now.counters == self->base.counters;
	EXPECT_EQ(self->base.counters, self->now.counters);
	ok &= self->now.contexts == self->base.contexts;
	EXPECT_EQ(self->base.contexts, self->now.contexts);
	ok &= live / 1024 <= LEAK_SLAB_SLACK_KB;
	EXPECT_LE(live / 1024, LEAK_SLAB_SLACK_KB) {
		TH_LOG("live unreclaimable objects grew %ld kB beyond %s and %s",
		       live / 1024, noisy_caches[0], noisy_caches[1]);
	}
	ok &= vmalloc <= LEAK_VMALLOC_SLACK_KB;
	EXPECT_LE(vmalloc, LEAK_VMALLOC_SLACK_KB);
	for (i = 0; i < nr; i++) {
		if (cache_noisy(g[i].name) || g[i].objs <= max_objs)
			continue;
		ok = false;
		EXPECT_LE(g[i].objs, max_objs) {
			TH_LOG("%s gained %ld objects in %lu operations",
			       g[i].name, g[i].objs, ops);
		}
	}
	if (!ok || verbose_level)
		log_growth(_metadata, g, nr, 10);
}

static void measure_rounds(struct __test_metadata *_metadata,
			   FIXTURE_DATA(leak) *self, unsigned long ops,
			   unsigned long warm_ops, child_fn fn)
{
	static struct cache_growth g[MAX_CACHES];
	int r;

	if (verbose_level)
		snapshot(_metadata, &self->start, "start");
	run_round(_metadata, self, warm_ops, fn, 0);
	snapshot(_metadata, &self->base, "baseline");
	if (verbose_level)
		log_growth(_metadata, g,
			   cache_growth(&self->start, &self->base, g), 10);
	self->prev = self->base;
	for (r = 1; r <= self->rounds; r++) {
		run_round(_metadata, self, ops, fn, r);
		snapshot(_metadata, &self->now, "after");
		check_growth(_metadata, self, ops);
		self->prev = self->now;
	}
}

/*
 * Counters of every kind: on the caller, on another task, per CPU, in
 * groups of 3, inherited by children that exit; rings of every size,
 * read-only and read-write, unmapped before or after the close.
 */
TEST_F_TIMEOUT(leak, no_growth, 600)
{
	measure_rounds(_metadata, self, env_ulong("PMC_LEAK_OPS", LEAK_OPS),
		       env_ulong("PMC_LEAK_WARM_OPS", LEAK_WARM_OPS),
		       workload_main);
}

/*
 * Rings moved with mremap(): memory and locked-memory charge come back,
 * and a moved ring still shows its buffer.
 */
TEST_F_TIMEOUT(leak, mremap, 600)
{
	unsigned long ops = env_ulong("PMC_LEAK_MREMAP_OPS", LEAK_MREMAP_OPS);
	long kb = (1 + 8) * page_size() / 1024;
	int err;

	err = read_int_file("/proc/sys/kernel/pmc_mlock_kb",
			    &self->saved_mlock_kb);
	ASSERT_EQ(0, err) TH_LOG("pmc_mlock_kb: %s", strerror(err));
	ASSERT_EQ(0, write_int_file("/proc/sys/kernel/pmc_mlock_kb", kb));
	measure_rounds(_metadata, self, ops, ops / 10, mremap_main);
}

TEST_HARNESS_MAIN
