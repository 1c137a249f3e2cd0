// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libpmc: reading a counter without a system call, through page 0 of its
 * mapping, as Documentation/userspace-api/pmc.rst describes it.
 */
#include <errno.h>
#include <unistd.h>
#include <sys/mman.h>

#include "libpmc.h"

#if defined(__x86_64__) || defined(__i386__)
#define HAVE_TSC 1
#else
#define HAVE_TSC 0
#endif

#define READ_ONCE(x)		__atomic_load_n(&(x), __ATOMIC_RELAXED)

int pmc_self_map(struct pmc_self *s, int fd)
{
	void *page = mmap(NULL, sysconf(_SC_PAGESIZE), PROT_READ, MAP_SHARED,
			  fd, 0);

	if (page == MAP_FAILED)
		return -1;
	s->fd = fd;
	s->page = page;
	return 0;
}

void pmc_self_unmap(struct pmc_self *s)
{
	if (s->page)
		munmap((void *)s->page, sysconf(_SC_PAGESIZE));
	s->page = NULL;
}

#if HAVE_TSC
/*
 * The TSC, read after the loads before it (LFENCE, as the vDSO orders
 * it): a TSC read early could come before the kernel's stamp.
 */
static __u64 pmc_rdtsc_ordered(void)
{
	__u32 lo, hi;

	__asm__ __volatile__("lfence; rdtsc" : "=a" (lo), "=d" (hi) :: "memory");
	return (__u64)hi << 32 | lo;
}

/* Nanoseconds since the kernel's stamp in @pg: the ABI's sum. */
static __u64 pmc_page_delta(const struct pmc_mmap_page *pg)
{
	__u64 cyc = pmc_rdtsc_ordered(), shift = READ_ONCE(pg->time_shift);
	__u64 mult = READ_ONCE(pg->time_mult);

	return READ_ONCE(pg->time_offset) + (cyc >> shift) * mult +
	       (((cyc & ((1ULL << shift) - 1)) * mult) >> shift);
}

/* Hardware counter @idx, as the page's pmc_width bits sign-extended. */
static __s64 pmc_rdpmc(__u32 idx, __u16 width)
{
	__u32 lo, hi;
	__u64 val;

	__asm__ __volatile__("rdpmc" : "=a" (lo), "=d" (hi) : "c" (idx));
	val = (__u64)hi << 32 | lo;
	return (__s64)(val << (64 - width)) >> (64 - width);
}
#else
/* No TSC conversion or rdpmc on this architecture: pages never offer one. */
static __u64 pmc_page_delta(const struct pmc_mmap_page *pg)
{
	(void)pg;
	return 0;
}

static __s64 pmc_rdpmc(__u32 idx, __u16 width)
{
	(void)idx;
	(void)width;
	return 0;
}
#endif

int pmc_self_page_read(const struct pmc_mmap_page *pg, struct pmc_count *c)
{
	__u64 delta, value, enabled, running;
	bool time, count_time;
	__u32 seq, idx;

	do {
		seq = __atomic_load_n(&pg->lock, __ATOMIC_ACQUIRE);
		value = READ_ONCE(pg->offset);
		enabled = READ_ONCE(pg->time_enabled);
		running = READ_ONCE(pg->time_running);
		time = HAVE_TSC && pg->cap_user_time;
		count_time = pg->cap_user_count_time;
		idx = HAVE_TSC && pg->cap_user_rdpmc ? READ_ONCE(pg->index) : 0;
		/* the counter, then the TSC: both after the loads above */
		if (idx)
			value += pmc_rdpmc(idx - 1, READ_ONCE(pg->pmc_width));
		delta = time ? pmc_page_delta(pg) : 0;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	} while ((seq & 1) || READ_ONCE(pg->lock) != seq);

	c->value = value;
	c->enabled = enabled;
	c->running = running;
	if (!time)
		return 0;
	/*
	 * offset is signed: a cpu-clock started after the stamp is behind
	 * it by that much, which the time since the stamp makes up. A
	 * reader on another CPU can be behind the stamp: no time then.
	 */
	if ((__s64)delta < 0)
		delta = 0;
	c->enabled += delta;
	if (idx)	/* the hardware count is read; its time runs */
		c->running += delta;
	if (count_time) {
		__s64 v = (__s64)value + (__s64)delta;

		c->value = v < 0 ? 0 : v;
		c->running += delta;
	}
	return 1;
}

int pmc_read_self(const struct pmc_self *s, struct pmc_count *c)
{
	if (s->page && pmc_self_page_read(s->page, c))
		return 0;
	return pmc_read_count(s->fd, c);
}
