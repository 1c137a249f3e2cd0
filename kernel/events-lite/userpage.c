// SPDX-License-Identifier: GPL-2.0
/*
 * events-lite: page 0 of a counter's mapping, as the counter itself, for
 * a thread that reads its own clocks without a system call.
 *
 * The page holds the count, time_enabled and time_running as of one
 * instant, the context's timestamp. While time_enabled grows with the
 * clock, cap_user_time says so and time_offset, time_mult and time_shift
 * turn the TSC into the nanoseconds since that instant; while the count
 * and time_running grow with it too (a clock on the PMU of its running
 * task), cap_user_count_time says so. The kernel rewrites the page at
 * every point where that growth starts or stops: its task going on or
 * off a CPU, its group going on or off (rotation, ENABLE, DISABLE), a
 * RESET, the first mapping. Between them the page and the TSC give what
 * read() would, to any reader on any CPU, as long as sched_clock is the
 * TSC's and stable (the arch says, pmc_arch_user_time()).
 *
 * Only task-clock and cpu-clock counters that a task opened on itself,
 * not inherited and not bound to a CPU, get the capabilities: a child's
 * counts come with read() only, another task's counter is not the
 * reader's to extrapolate, and other counters do not grow with the clock.
 * A hardware counter would need rdpmc (index, cap_user_rdpmc): not yet;
 * its page says to use read(). Without a capability the fields stay as
 * the publisher leaves them: updated with each record.
 */
#include <linux/sched/clock.h>

#include "internal.h"

/* Can @counter's page let its task read it? Fixed at pmc_open(). */
bool pmc_userpage_allowed(const struct pmc_attr *attr,
			  const struct pmc_pmu *pmu, struct task_struct *task,
			  int cpu)
{
	u64 id = PMC_CONFIG_ID(attr->config);

	return pmu == &pmc_sw_pmu && task == current && cpu < 0 &&
	       !attr->inherit &&
	       (id == PMC_SW_TASK_CLOCK || id == PMC_SW_CPU_CLOCK);
}

/*
 * The TSC conversion, into up->time_*, for nanoseconds since @stamp
 * (local_clock()); false where user space cannot have it.
 */
bool __weak pmc_arch_user_time(struct pmc_mmap_page *up, u64 stamp)
{
	return false;
}

/* The publisher's fields, unless the page is extrapolated (see above). */
void pmc_userpage_published(struct pmc_mmap_page *up,
			    struct pmc_counter *owner)
{
	if (up->cap_user_time)
		return;
	WRITE_ONCE(up->lock, up->lock + 1);
	smp_wmb();	/* odd lock before the fields: the reader retries */
	up->index = 0;
	up->offset = local64_read(&owner->count);
	up->time_enabled = owner->time_enabled;
	up->time_running = owner->time_running;
	smp_wmb();	/* the fields before the even lock */
	WRITE_ONCE(up->lock, up->lock + 1);
}

/*
 * Rewrite @counter's page from its state; ctx->lock held, IRQs off, the
 * context's time just updated, on the CPU where the context is live (if
 * it is).
 */
void pmc_userpage_update(struct pmc_counter *counter)
{
	struct pmc_context *ctx = counter->ctx;
	struct pmc_ring_buffer *rb;
	struct pmc_mmap_page *up;
	u64 count = local64_read(&counter->count);
	bool live, time, count_time = false;

	rb = rcu_dereference_sched(counter->rb);
	if (!rb)
		return;
	pmc_counter_update_time(counter);
	live = ctx->is_active && ctx->cpu == smp_processor_id() &&
	       counter->state >= PMC_STATE_INACTIVE;
	if (live && counter->state == PMC_STATE_ACTIVE)
		count_time = pmc_sw_clock_at_stamp(counter, &count);

	up = pmc_rb_page_get(rb, true);
	WRITE_ONCE(up->lock, up->lock + 1);
	smp_wmb();	/* odd lock before the fields: the reader retries */
	up->index = 0;
	up->offset = count;
	up->time_enabled = counter->time_enabled;
	up->time_running = counter->time_running;
	time = live && pmc_arch_user_time(up, ctx->timestamp);
	up->cap_user_rdpmc = 0;
	up->cap_user_time = time;
	up->cap_user_count_time = time && count_time;
	up->pmc_width = 0;
	smp_wmb();	/* the fields before the even lock */
	WRITE_ONCE(up->lock, up->lock + 1);
	pmc_rb_page_put(rb);
}

/* Every self-read page of @ctx, after an operation on it; ctx->lock held. */
void pmc_ctx_update_userpages(struct pmc_context *ctx)
{
	struct pmc_counter *leader, *pos;

	if (!ctx || !ctx->nr_userpages)
		return;
	list_for_each_entry(leader, &ctx->pinned_groups, group_entry)
		for_each_group_counter(pos, leader)
			if (pos->userpage_allowed)
				pmc_userpage_update(pos);
	list_for_each_entry(leader, &ctx->flexible_groups, group_entry)
		for_each_group_counter(pos, leader)
			if (pos->userpage_allowed)
				pmc_userpage_update(pos);
}

static void __pmc_userpage_map(struct pmc_context *ctx, void *arg)
{
	struct pmc_counter *counter = arg;

	ctx->nr_userpages++;
	pmc_userpage_update(counter);
}

static void __pmc_userpage_unmap(struct pmc_context *ctx, void *arg)
{
	ctx->nr_userpages--;
}

/*
 * @counter's buffer was mapped for the first time, or is about to go;
 * counter->mmap_mutex held. The first mapping writes the page at once,
 * where the context is live: a reader need not wait for a context
 * switch to find its capabilities.
 */
void pmc_userpage_mapped(struct pmc_counter *counter, bool mapped)
{
	if (!counter->userpage_allowed)
		return;
	pmc_ctx_call(counter->ctx, mapped ? __pmc_userpage_map :
					    __pmc_userpage_unmap, counter);
}
