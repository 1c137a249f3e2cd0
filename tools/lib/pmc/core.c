// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The pmc_open(2) wrapper and counter reads.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE		/* F_SETSIG, F_SETOWN_EX, gettid() */
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
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

int pmc_overflow_signal(int fd, int sig)
{
	struct f_owner_ex owner = { .type = F_OWNER_TID, .pid = gettid() };
	int flags = fcntl(fd, F_GETFL);

	if (flags < 0)
		return -1;
	if (!sig)
		return fcntl(fd, F_SETFL, flags & ~O_ASYNC);
	if (fcntl(fd, F_SETOWN_EX, &owner) || fcntl(fd, F_SETSIG, sig))
		return -1;
	return fcntl(fd, F_SETFL, flags | O_ASYNC);
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

int pmc_read_group(int fd, struct pmc_count *c, size_t nr)
{
	/* nr, time_enabled, time_running, then a value per counter */
	size_t size = (3 + nr) * sizeof(__u64);
	__u64 *buf = malloc(size);
	ssize_t n;
	int ret;
	size_t i;

	if (!buf)
		return -1;
	n = read(fd, buf, size);
	if (n <= 0) {
		ret = n ? -1 : 0;
	} else if (n < (ssize_t)(3 * sizeof(__u64)) || !buf[0] ||
		   n != (ssize_t)((3 + buf[0]) * sizeof(__u64))) {
		errno = EIO;
		ret = -1;
	} else {
		for (i = 0; i < buf[0]; i++) {
			c[i].value = buf[3 + i];
			c[i].enabled = buf[1];
			c[i].running = buf[2];
		}
		ret = buf[0];
	}
	free(buf);
	return ret;
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
