// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The mmap()ed ring buffer, read as perf's is: the kernel writes
 * records, then publishes data_head with a release barrier; we read
 * data_head, then the records below it, then (in a writable mapping)
 * store data_tail to hand their space back.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "libpmc.h"

#define READ_ONCE(x)		__atomic_load_n(&(x), __ATOMIC_RELAXED)
#define WRITE_ONCE(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

/* pmc_ring_poll() allocates for more rings than this. */
#define POLL_STACK		16

/* The layout this library reads: pmc_mmap_page version 1. */
#define RING_VERSION		1

int pmc_ring_map(struct pmc_ring *r, int fd, unsigned int data_pages,
		 bool writable)
{
	size_t page = sysconf(_SC_PAGESIZE);
	void *map;

	memset(r, 0, sizeof(*r));
	r->fd = fd;
	if (!data_pages || (data_pages & (data_pages - 1))) {
		errno = EINVAL;
		return -1;
	}
	r->rec = malloc(sizeof(*r->rec));
	if (!r->rec)
		return -1;
	r->size = (__u64)data_pages * page;
	r->map_len = page + r->size;
	map = mmap(NULL, r->map_len, PROT_READ | (writable ? PROT_WRITE : 0),
		   MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		free(r->rec);
		r->rec = NULL;
		return -1;
	}
	r->page = map;
	r->data = (const unsigned char *)map + page;
	r->writable = writable;
	if (READ_ONCE(r->page->compat_version) > RING_VERSION) {
		pmc_ring_unmap(r);
		errno = EPROTO;
		return -1;
	}
	r->tail = READ_ONCE(r->page->data_tail);
	r->head = r->tail;
	return 0;
}

void pmc_ring_unmap(struct pmc_ring *r)
{
	if (r->page)
		munmap(r->page, r->map_len);
	free(r->rec);
	r->page = NULL;
	r->rec = NULL;
}

__u64 pmc_ring_data_head(const struct pmc_ring *r)
{
	/* Pairs with the kernel's release of data_head. */
	return __atomic_load_n(&r->page->data_head, __ATOMIC_ACQUIRE);
}

int pmc_ring_read_at(struct pmc_ring *r, __u64 *pos, __u64 head,
		     union pmc_record *dst)
{
	__u64 left = head - *pos, off = *pos & (r->size - 1), first;
	unsigned int size;

	if (!left)
		return 0;
	if (left > r->size || left < sizeof(dst->h) || off % 8) {
		snprintf(r->err, sizeof(r->err),
			 "bad position %llu, head %llu, size %llu",
			 (unsigned long long)*pos, (unsigned long long)head,
			 (unsigned long long)r->size);
		return -1;
	}
	/* 8-byte aligned and 8 bytes long: a header never wraps. */
	memcpy(&dst->h, r->data + off, sizeof(dst->h));
	size = dst->h.size;
	if (size < sizeof(dst->h) || size % 8 || size > left) {
		snprintf(r->err, sizeof(r->err),
			 "bad record at %llu: type %u misc %#x size %u, %llu bytes left",
			 (unsigned long long)*pos, dst->h.type, dst->h.misc,
			 size, (unsigned long long)left);
		return -1;
	}
	first = size < r->size - off ? size : r->size - off;
	memcpy(dst->b, r->data + off, first);
	memcpy(dst->b + first, r->data, size - first);
	*pos += size;
	return 1;
}

/*
 * A read-only ring's writer does not wait for us: once it is more than
 * a buffer ahead of our tail, what lies there is a later record's
 * middle. Nothing marks where records start, so resume at @head.
 */
static bool overwritten(struct pmc_ring *r, __u64 head)
{
	if (r->writable || head - r->tail <= r->size)
		return false;
	r->overwritten += head - r->tail;
	r->tail = head;
	r->head = head;
	return true;
}

__u64 pmc_ring_begin(struct pmc_ring *r)
{
	r->head = pmc_ring_data_head(r);
	overwritten(r, r->head);
	return r->head;
}

/* Count what the caller should know about without looking. */
static void tally(struct pmc_ring *r)
{
	const struct pmc_event_header *h = &r->rec->h;

	if (h->misc & PMC_EVENT_MISC_OVERFLOW)
		r->samples++;
	else if (h->type == PMC_EVENT_LOST && h->size >= 24)
		r->lost += r->rec->w[2];	/* {header, id, lost} */
	else if (h->type == PMC_EVENT_THROTTLE)
		r->throttles++;
	else if (h->type == PMC_EVENT_UNTHROTTLE)
		r->unthrottles++;
}

int pmc_ring_next(struct pmc_ring *r)
{
	__u64 pos = r->tail;
	int ret = pmc_ring_read_at(r, &pos, r->head, r->rec);

	if (ret < 0) {
		r->tail = r->head;	/* keep the kernel going */
		return -1;
	}
	/*
	 * A read-only ring may have been written over while we copied:
	 * the copy is good only if the head has not lapped its start. A
	 * writable one waits for us, so it needs no second look at the head.
	 */
	if (ret > 0 && !r->writable && overwritten(r, pmc_ring_data_head(r)))
		return 0;
	r->tail = pos;
	if (ret > 0)
		tally(r);
	return ret;
}

void pmc_ring_end(struct pmc_ring *r)
{
	if (!r->writable)
		return;
	/* Finish reading the records before the kernel may reuse them. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	WRITE_ONCE(r->page->data_tail, r->tail);
}

bool pmc_ring_empty(const struct pmc_ring *r)
{
	return pmc_ring_data_head(r) == r->tail;
}

void pmc_ring_times(const struct pmc_ring *r, __u64 *enabled,
		    __u64 *running)
{
	struct pmc_count c;

	pmc_self_page_read(r->page, &c);
	*enabled = c.enabled;
	*running = c.running;
}

int pmc_ring_poll(struct pmc_ring *const *rings, size_t nr, int timeout_ms,
		  short *revents)
{
	struct pollfd stack[POLL_STACK], *pfd = stack;
	size_t i;
	int n;

	if (nr > POLL_STACK) {
		pfd = calloc(nr, sizeof(*pfd));
		if (!pfd)
			return -1;
	}
	for (i = 0; i < nr; i++) {
		pfd[i].fd = rings[i]->fd;
		pfd[i].events = POLLIN;
		pfd[i].revents = 0;
	}
	n = poll(pfd, nr, timeout_ms);
	for (i = 0; i < nr; i++)
		revents[i] = n > 0 ? pfd[i].revents : 0;
	if (pfd != stack)
		free(pfd);
	return n;
}
