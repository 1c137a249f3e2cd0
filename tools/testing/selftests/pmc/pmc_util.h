/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for the pmc_open(2) selftests: the syscall wrapper, attr setup,
 * reading a counter, small workloads with a known cost, and accessors for
 * /proc and /sys files.
 *
 * Nothing here uses the kselftest harness. Errors come back as return
 * values, so forked children can use these helpers too.
 */
#ifndef PMC_UTIL_H
#define PMC_UTIL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>

#include <linux/pmc.h>

/* The number comes from the patched kernel's headers; never guess it. */
#ifndef __NR_pmc_open
#error "__NR_pmc_open undefined: set KHDR_INCLUDES to headers installed from the patched kernel"
#endif

#define NSEC_PER_USEC	1000ULL
#define NSEC_PER_MSEC	1000000ULL
#define NSEC_PER_SEC	1000000000ULL

static inline int sys_pmc_open(struct pmc_attr *attr, pid_t pid, int cpu,
			       int group_fd, unsigned long flags)
{
	return syscall(__NR_pmc_open, attr, pid, cpu, group_fd, flags);
}

/*
 * pmc_open_errno() - try an open and report only the outcome
 *
 * Return: 0 if pmc_open() succeeded (the fd is closed again), else errno.
 */
static inline int pmc_open_errno(struct pmc_attr *attr, pid_t pid, int cpu,
				 int group_fd, unsigned long flags)
{
	int fd = sys_pmc_open(attr, pid, cpu, group_fd, flags);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

/*
 * pmc_sw_attr() - a counting software counter in user mode
 *
 * exclude_kernel is set because pmc_paranoid defaults to 2, where an
 * unprivileged caller may count user mode only. Clocks, context switches
 * and migrations ignore the exclude bits, so this costs no coverage.
 */
static inline void pmc_sw_attr(struct pmc_attr *attr, unsigned int id,
			       __u32 read_format)
{
	memset(attr, 0, sizeof(*attr));
	attr->config = PMC_CONFIG(PMC_TYPE_SOFTWARE, id);
	attr->read_format = read_format;
	attr->exclude_kernel = 1;
}

/* One counter's read() result, unpacked. */
struct pmc_reading {
	__u64 value;
	__u64 enabled;	/* only with PMC_FORMAT_TOTAL_TIME_ENABLED */
	__u64 running;	/* only with PMC_FORMAT_TOTAL_TIME_RUNNING */
};

/* Bytes read() returns for @read_format with @nr counters in the group. */
static inline size_t pmc_read_size(__u32 read_format, unsigned int nr)
{
	size_t words = 0;

	if (read_format & PMC_FORMAT_TOTAL_TIME_ENABLED)
		words++;
	if (read_format & PMC_FORMAT_TOTAL_TIME_RUNNING)
		words++;
	if (read_format & PMC_FORMAT_GROUP)
		words += 1 + nr;
	else
		words += 1;
	return words * sizeof(__u64);
}

/*
 * pmc_read() - read a counter opened without PMC_FORMAT_GROUP
 *
 * The buffer offered is larger than needed, so this also checks that
 * read() returns exactly the layout's size.
 *
 * Return: 0, -errno if read() failed, or -EMSGSIZE on a wrong size.
 */
static inline int pmc_read(int fd, __u32 read_format, struct pmc_reading *r)
{
	__u64 buf[8];
	ssize_t n;
	int i = 0;

	n = read(fd, buf, sizeof(buf));
	if (n < 0)
		return -errno;
	if ((size_t)n != pmc_read_size(read_format, 1))
		return -EMSGSIZE;

	memset(r, 0, sizeof(*r));
	r->value = buf[i++];
	if (read_format & PMC_FORMAT_TOTAL_TIME_ENABLED)
		r->enabled = buf[i++];
	if (read_format & PMC_FORMAT_TOTAL_TIME_RUNNING)
		r->running = buf[i++];
	return 0;
}

static inline __u64 clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

static inline __u64 thread_cputime_ns(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

static inline __u64 monotonic_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/*
 * burn_cpu() - spin until this thread has used @ns of CPU time
 *
 * The inner loop keeps the clock syscalls a small part of the cost, so
 * most of the time is spent in user mode.
 *
 * Return: the CPU time actually used, in nanoseconds.
 */
static inline __u64 burn_cpu(__u64 ns)
{
	__u64 start = thread_cputime_ns(), now;
	unsigned long sink = 0;
	int i;

	do {
		for (i = 0; i < 20000; i++) {
			sink += i;
			/* keep the compiler from folding the loop away */
			asm volatile("" : "+r" (sink));
		}
		now = thread_cputime_ns();
	} while (now - start < ns);
	return now - start;
}

static inline size_t page_size(void)
{
	return sysconf(_SC_PAGESIZE);
}

/*
 * map_fresh_pages() - @nr anonymous pages that are not yet populated
 *
 * Huge pages are refused, so that each page costs exactly one fault.
 */
static inline char *map_fresh_pages(size_t nr)
{
	size_t len = nr * page_size();
	char *p;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	madvise(p, len, MADV_NOHUGEPAGE);	/* fails harmlessly without THP */
	return p;
}

/* Write one byte to each of @nr pages: one user-mode fault per fresh page. */
static inline void touch_pages(char *p, size_t nr)
{
	volatile char *v = p;
	size_t i;

	for (i = 0; i < nr; i++)
		v[i * page_size()] = 1;
}

static inline int pin_to_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/*
 * allowed_cpus() - the CPUs this task may run on, in ascending order
 *
 * Return: the number found, at most @max.
 */
static inline int allowed_cpus(int *cpus, int max)
{
	cpu_set_t set;
	int cpu, n = 0;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 0;
	for (cpu = 0; cpu < CPU_SETSIZE && n < max; cpu++)
		if (CPU_ISSET(cpu, &set))
			cpus[n++] = cpu;
	return n;
}

/* nr_cpu_ids as the kernel sees it: one past the last possible CPU. */
static inline int possible_cpus(void)
{
	char buf[256], *last;
	int fd, n;

	fd = open("/sys/devices/system/cpu/possible", O_RDONLY);
	if (fd < 0)
		return sysconf(_SC_NPROCESSORS_CONF);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return sysconf(_SC_NPROCESSORS_CONF);
	buf[n] = '\0';
	/* "0-3" or "0,2-5": the number after the last separator is the top */
	last = buf + strcspn(buf, "\n");
	while (last > buf && last[-1] != '-' && last[-1] != ',')
		last--;
	return atoi(last) + 1;
}

/* Return: 0 and the integer in @path, or an errno. */
static inline int read_int_file(const char *path, long *val)
{
	char buf[64];
	int fd, n;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return errno;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0) {
		n = errno;
		close(fd);
		return n;
	}
	close(fd);
	buf[n] = '\0';
	*val = strtol(buf, NULL, 0);
	return 0;
}

/* Return: 0, or the errno of the open() or write(). */
static inline int write_file(const char *path, const char *str)
{
	int fd, err = 0;

	fd = open(path, O_WRONLY);
	if (fd < 0)
		return errno;
	if (write(fd, str, strlen(str)) < 0)
		err = errno;
	close(fd);
	return err;
}

static inline int write_int_file(const char *path, long val)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%ld\n", val);
	return write_file(path, buf);
}

/*
 * slab_active_objs() - active objects of a cache in /proc/slabinfo
 *
 * SLUB counts objects sitting in per-CPU slabs as active, so the cache is
 * shrunk first where /sys/kernel/slab allows it; that makes the number
 * the objects really in use.
 *
 * Return: the count, or -errno (-ENOENT when the cache is not listed).
 */
static inline long slab_active_objs(const char *cache)
{
	char line[512], path[128], name[64];
	long active = -ENOENT, objs;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/slab/%s/shrink", cache);
	write_file(path, "1");

	f = fopen("/proc/slabinfo", "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%63s %ld", name, &objs) == 2 &&
		    !strcmp(name, cache)) {
			active = objs;
			break;
		}
	}
	fclose(f);
	return active;
}

#endif /* PMC_UTIL_H */
