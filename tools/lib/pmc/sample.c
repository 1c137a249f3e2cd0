// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Decoding a sample record: its fields follow the header in the order
 * of the PMC_RECORD_* bits, each present only if the counter's
 * record_type asked for it, so the layout is known only with it.
 */
#include <errno.h>
#include <string.h>

#include "libpmc.h"

struct cursor {
	const unsigned char *p, *end;
};

static bool take(struct cursor *c, void *dst, size_t len)
{
	if ((size_t)(c->end - c->p) < len)
		return false;
	memcpy(dst, c->p, len);
	c->p += len;
	return true;
}

/* @nr entries of @size bytes at c->p; counts that overflow do not fit. */
static const unsigned char *take_array(struct cursor *c, __u64 nr,
				       size_t size)
{
	const unsigned char *start = c->p;

	if (nr > (size_t)(c->end - c->p) / size)
		return NULL;
	c->p += nr * size;
	return start;
}

int pmc_sample_parse_ext(const void *rec, __u32 record_type, __u64 regs_user,
			 struct pmc_sample *s, struct pmc_sample_ext *x)
{
	struct pmc_event_header h;
	struct cursor c;
	__u16 chain[4];			/* nr, hv, kernel, user */

	memcpy(&h, rec, sizeof(h));
	memset(s, 0, sizeof(*s));
	memset(x, 0, sizeof(*x));
	if (!(h.misc & PMC_EVENT_MISC_OVERFLOW) || h.type != record_type ||
	    h.size < sizeof(h))
		goto bad;
	c.p = (const unsigned char *)rec + sizeof(h);
	c.end = (const unsigned char *)rec + h.size;
	s->misc = h.misc;
	if ((record_type & PMC_RECORD_IP) && !take(&c, &s->ip, 8))
		goto bad;
	if ((record_type & PMC_RECORD_TID) &&
	    (!take(&c, &s->pid, 4) || !take(&c, &s->tid, 4)))
		goto bad;
	if ((record_type & PMC_RECORD_TIME) && !take(&c, &s->time, 8))
		goto bad;
	if ((record_type & PMC_RECORD_ADDR) && !take(&c, &s->addr, 8))
		goto bad;
	if ((record_type & PMC_RECORD_PERIOD) && !take(&c, &x->period, 8))
		goto bad;
	if (record_type & PMC_RECORD_GROUP) {
		if (!take(&c, &s->nr_values, 8))
			goto bad;
		s->values = take_array(&c, s->nr_values, 16);
		if (!s->values)
			goto bad;
	}
	if (record_type & PMC_RECORD_CALLCHAIN) {
		if (!take(&c, chain, sizeof(chain)))
			goto bad;
		s->chain_nr = chain[0];
		s->chain_hv = chain[1];
		s->chain_kernel = chain[2];
		s->chain_user = chain[3];
		s->chain = take_array(&c, s->chain_nr, 8);
		if (!s->chain)
			goto bad;
	}
	if (record_type & PMC_RECORD_REGS_USER) {
		if (!regs_user || !take(&c, &x->regs_abi, 8))
			goto bad;
		if (x->regs_abi != PMC_REGS_ABI_NONE) {
			x->nr_regs = __builtin_popcountll(regs_user);
			x->regs = take_array(&c, x->nr_regs, 8);
			if (!x->regs)
				goto bad;
		}
	}
	if (record_type & PMC_RECORD_STACK_USER) {
		if (!take(&c, &x->stack_size, 8))
			goto bad;
		if (x->stack_size) {
			x->stack = take_array(&c, x->stack_size, 1);
			if (!x->stack || !take(&c, &x->stack_dyn, 8) ||
			    x->stack_dyn > x->stack_size)
				goto bad;
		}
	}
	if (c.p != c.end)
		goto bad;
	if (s->chain_nr != (unsigned int)s->chain_hv + s->chain_kernel +
			   s->chain_user) {
		errno = EBADMSG;
		return -1;
	}
	return 0;
bad:
	errno = EINVAL;
	return -1;
}

int pmc_sample_parse(const void *rec, __u32 record_type,
		     struct pmc_sample *s)
{
	struct pmc_sample_ext x;

	return pmc_sample_parse_ext(rec, record_type, 0, s, &x);
}
