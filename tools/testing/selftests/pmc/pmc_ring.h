/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The selftests' ring-buffer helpers, for kselftest_harness.h tests,
 * over libpmc's reader: records are copied out one at a time, since
 * they may wrap at the end of the data area. Include after pmc_harness.h.
 */
#ifndef _PMC_RING_H
#define _PMC_RING_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "pmc_util.h"

/* Only the main thread of a test reads records. */
static union pmc_record rec;

static inline void ring_map(struct __test_metadata *_metadata,
			    struct pmc_ring *r, int fd,
			    unsigned int data_pages, bool rw)
{
	ASSERT_EQ(0, pmc_ring_map(r, fd, data_pages, rw)) {
		TH_LOG("mmap of 1+%u ring pages: %s", data_pages,
		       strerror(errno));
	}
}

static inline void ring_unmap(struct pmc_ring *r)
{
	pmc_ring_unmap(r);
}

/* data_head; records below it may be read after this. */
static inline __u64 ring_head(struct pmc_ring *r)
{
	return pmc_ring_data_head(r);
}

/* Any value, garbage included: data_tail is the reader's to write. */
static inline void ring_set_tail(struct pmc_ring *r, __u64 tail)
{
	__sync_synchronize();
	r->page->data_tail = tail;
}

/*
 * ring_next() - copy the record at *@pos, below @head, into rec
 *
 * Return: 1 with *@pos moved past it, 0 at @head, -1 if the record is
 * malformed (the reason in @err).
 */
static inline int ring_next(struct pmc_ring *r, __u64 *pos, __u64 head,
			    char *err, size_t errlen)
{
	int ret = pmc_ring_read_at(r, pos, head, &rec);

	if (ret < 0)
		snprintf(err, errlen, "%s", r->err);
	return ret;
}

/*
 * The u16 or u32 at byte @off of rec: pid and tid, and a call chain's
 * counts, are u32 and u16 fields, in memory order on either byte order.
 */
static inline __u16 rec_u16(size_t off)
{
	__u16 v;

	memcpy(&v, rec.b + off, sizeof(v));
	return v;
}

static inline __u32 rec_u32(size_t off)
{
	__u32 v;

	memcpy(&v, rec.b + off, sizeof(v));
	return v;
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
			      struct pmc_ring *r, struct ring_tally *t)
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
