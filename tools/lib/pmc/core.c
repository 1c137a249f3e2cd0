// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The pmc_open(2) wrapper and counter reads.
 */
#include <errno.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "libpmc.h"

/* Only the generated <asm/unistd_*.h> of the patched kernel knows it. */
#ifndef __NR_pmc_open
#error "__NR_pmc_open is not defined: build with KHDR_INCLUDES=-isystem <headers of a pmc kernel>"
#endif

int pmc_open(struct pmc_attr *attr, pid_t pid, int cpu, int group_fd,
	     unsigned long flags)
{
	return syscall(__NR_pmc_open, attr, pid, cpu, group_fd, flags);
}

int pmc_read_count(int fd, struct pmc_count *c)
{
	__u64 buf[3];
	ssize_t n = read(fd, buf, sizeof(buf));

	if (n == 0)
		return 1;
	if (n < 0)
		return -1;
	if (n != sizeof(buf)) {
		errno = EIO;
		return -1;
	}
	c->value = buf[0];
	c->enabled = buf[1];
	c->running = buf[2];
	return 0;
}

double pmc_count_scaled(const struct pmc_count *c)
{
	if (c->running && c->running < c->enabled)
		return (double)c->value * c->enabled / c->running;
	return c->value;
}

double pmc_count_percent(const struct pmc_count *c)
{
	return c->enabled ? 100.0 * c->running / c->enabled : 100.0;
}
