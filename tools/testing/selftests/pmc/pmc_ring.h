/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The selftests' ring-buffer reader, for kselftest_harness.h tests:
 * records are copied out one at a time, since they may wrap at the end
 * of the data area. Include after pmc_harness.h.
 */
#ifndef _PMC_RING_H
#define _PMC_RING_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "pmc_util.h"

struct ring {
	void *base;
	size_t len;
	volatile struct pmc_mmap_page *up;
	const char *data;
	__u64 size;		/* bytes of data, a power of 2 */
};

union rec {
	struct pmc_event_header h;
	__u64 w[8192];
	char b[65536];
};

/* Only the main thread of a test reads records. */
static union rec rec;

static inline void ring_map(struct __test_metadata *_metadata, struct ring *r,
			     int fd, unsigned int data_pages, bool rw)
{
	r->len = (1 + (size_t)data_pages) * page_size();
	r->base = mmap(NULL, r->len, PROT_READ | (rw ? PROT_WRITE : 0),
		       MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, r->base) {
		TH_LOG("mmap of 1+%u ring pages: %s", data_pages,
		       strerror(errno));
	}
	r->up = r->base;
	r->data = (const char *)r->base + page_size();
	r->size = (__u64)data_pages * page_size();
}

static inline void ring_unmap(struct ring *r)
{
	munmap(r->base, r->len);
}

/* data_head; records below it may be read after this. */
static inline __u64 ring_head(struct ring *r)
{
	__u64 head = r->up->data_head;

	__sync_synchronize();
	return head;
}

static inline void ring_set_tail(struct ring *r, __u64 tail)
{
	__sync_synchronize();
	r->up->data_tail = tail;
}

/*
 * ring_next() - copy the record at *@pos, below @head, into rec
 *
 * Return: 1 with *@pos moved past it, 0 at @head, -1 if the record is
 * malformed (the reason in @err).
 */
static inline int ring_next(const struct ring *r, __u64 *pos, __u64 head,
		     char *err, size_t errlen)
{
	__u64 left = head - *pos, off = *pos & (r->size - 1), first;
	unsigned int size;

	if (!left)
		return 0;
	if (left > r->size || left < sizeof(rec.h) || off % 8) {
		snprintf(err, errlen, "bad position %llu, head %llu, size %llu",
			 (unsigned long long)*pos, (unsigned long long)head,
			 (unsigned long long)r->size);
		return -1;
	}
	/* 8-byte aligned and 8 bytes long: a header never wraps */
	memcpy(&rec.h, r->data + off, sizeof(rec.h));
	size = rec.h.size;
	if (size < sizeof(rec.h) || size % 8 || size > left) {
		snprintf(err, errlen,
			 "bad record at %llu: type %u misc %#x size %u, %llu bytes left",
			 (unsigned long long)*pos, rec.h.type, rec.h.misc, size,
			 (unsigned long long)left);
		return -1;
	}
	first = size < r->size - off ? size : r->size - off;
	memcpy(rec.b, r->data + off, first);
	memcpy(rec.b + first, r->data, size - first);
	*pos += size;
	return 1;
}

static inline bool is_sample(void)
{
	return rec.h.misc & PMC_EVENT_MISC_OVERFLOW;
}

/* What a throttled sampler's buffer holds. */
struct ring_tally {
	__u64 samples, lost;
	unsigned int throttles, unthrottles;
	bool bad_order;		/* UNTHROTTLE without THROTTLE, or twice */
};

static inline void ring_tally(struct __test_metadata *_metadata,
			      struct ring *r, struct ring_tally *t)
{
	__u64 pos = 0, head = ring_head(r);
	bool throttled = false;
	char err[160];
	int ret;

	while ((ret = ring_next(r, &pos, head, err, sizeof(err))) > 0) {
		if (is_sample()) {
			t->samples++;
		} else if (rec.h.type == PMC_EVENT_THROTTLE) {
			t->bad_order |= throttled;
			throttled = true;
			t->throttles++;
		} else if (rec.h.type == PMC_EVENT_UNTHROTTLE) {
			t->bad_order |= !throttled;
			throttled = false;
			t->unthrottles++;
		} else if (rec.h.type == PMC_EVENT_LOST) {
			t->lost += ((struct lost_rec *)&rec)->lost;
		}
	}
	ASSERT_EQ(0, ret) TH_LOG("%s", err);
}

/*
 * The sampler was throttled and unthrottled, in turn: the last throttle
 * may still stand.
 */
static inline void expect_throttled(struct __test_metadata *_metadata,
				    const struct ring_tally *t)
{
	EXPECT_LT(0, t->throttles);
	EXPECT_LE(t->throttles - 1, t->unthrottles);
	EXPECT_GE(t->throttles, t->unthrottles);
	EXPECT_FALSE(t->bad_order);
}

#endif /* _PMC_RING_H */
