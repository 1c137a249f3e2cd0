// SPDX-License-Identifier: GPL-2.0
/*
 * Sample with libpmc and print the hottest instruction addresses:
 *
 *	hot-ips [EVENT [PERIOD]]	(default: task-clock every 100000 ns)
 *
 * Samples the calling thread while it runs a workload, reads the ring
 * buffer whenever poll() says a page has filled, and prints the ten
 * IPs seen most often, with the LOST and THROTTLE records the ring
 * reader counted. `nm hot-ips` names the functions: the workload's
 * busy loop should lead.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "libpmc.h"

#define DATA_PAGES	16
#define TOP		10
#define MAX_IPS		4096

struct ip_count {
	__u64 ip;
	unsigned long n;
};

static struct ip_count ips[MAX_IPS];
static size_t nr_ips;
static unsigned long other_ips;

static void count_ip(__u64 ip)
{
	size_t i;

	for (i = 0; i < nr_ips; i++) {
		if (ips[i].ip == ip) {
			ips[i].n++;
			return;
		}
	}
	if (nr_ips == MAX_IPS) {
		other_ips++;
		return;
	}
	ips[nr_ips].ip = ip;
	ips[nr_ips++].n = 1;
}

static void drain(struct pmc_ring *ring, __u32 record_type)
{
	struct pmc_sample s;

	pmc_ring_begin(ring);
	while (pmc_ring_next(ring) > 0) {
		if (!pmc_sample_parse(ring->rec, record_type, &s))
			count_ip(s.ip);
	}
	pmc_ring_end(ring);
}

static volatile unsigned long sink;

static __attribute__((noinline)) void busy_loop(unsigned long n)
{
	unsigned long x = 1;

	while (n--)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	sink = x;
}

static int by_count(const void *a, const void *b)
{
	const struct ip_count *x = a, *y = b;

	return x->n < y->n ? 1 : x->n > y->n ? -1 : 0;
}

int main(int argc, char **argv)
{
	struct pmc_attr attr = { 0 };
	struct pmc_ring ring, *rings[1] = { &ring };
	enum pmc_unit unit;
	unsigned long total = 0;
	size_t i;
	short revents;
	int fd, round;

	if (pmc_event_lookup(argc > 1 ? argv[1] : "task-clock", &attr.config,
			     &unit)) {
		fprintf(stderr, "hot-ips: unknown event; valid events:\n");
		pmc_events_list(stderr);
		return 2;
	}
	attr.irq_period = argc > 2 ? strtoull(argv[2], NULL, 0) : 100000;
	attr.record_type = PMC_RECORD_IP;
	attr.disabled = 1;
	fd = pmc_open(&attr, 0, -1, -1, PMC_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "hot-ips: pmc_open: %s\n", strerror(errno));
		return 1;
	}
	/* Writable: the kernel keeps what we have not read yet. */
	if (pmc_ring_map(&ring, fd, DATA_PAGES, true)) {
		fprintf(stderr, "hot-ips: mmap: %s\n", strerror(errno));
		return 1;
	}
	if (ioctl(fd, PMC_IOC_ENABLE)) {
		fprintf(stderr, "hot-ips: enable: %s\n", strerror(errno));
		return 1;
	}

	for (round = 0; round < 50; round++) {
		busy_loop(2000000);
		/* Read whenever a page filled; never wait here. */
		if (pmc_ring_poll(rings, 1, 0, &revents) > 0 &&
		    (revents & POLLIN))
			drain(&ring, attr.record_type);
	}
	drain(&ring, attr.record_type);

	qsort(ips, nr_ips, sizeof(ips[0]), by_count);
	for (i = 0; i < nr_ips; i++)
		total += ips[i].n;
	total += other_ips;
	printf("%lu samples, %llu lost, %u throttled\n", total,
	       (unsigned long long)ring.lost, ring.throttles);
	for (i = 0; i < nr_ips && i < TOP; i++)
		printf("%6.2f%%  %#llx\n", 100.0 * ips[i].n / total,
		       (unsigned long long)ips[i].ip);
	pmc_ring_unmap(&ring);
	return total ? 0 : 1;
}
