// SPDX-License-Identifier: GPL-2.0
/*
 * events-lite: page 0 of a counter's mapping, as the counter itself, for
 * a task that reads its own clocks without a system call.
 *
 * The page holds the count, time_enabled and time_running as of one
 * instant, the context's timestamp. While time_enabled grows with the
 * clock, cap_user_time says so and time_offset, time_mult and time_shift
 * turn the TSC into the nanoseconds since that instant; while the count
 * and time_running grow with it too (a clock on the PMU of its running
 * task), cap_user_count_time says so. The kernel rewrites the page at
 * every point where that growth starts or stops: its task going on or
 * off a CPU, its group going on or off (rotation, ENABLE, DISABLE, a
 * REFRESH running out), a RESET, a read(), the first mapping. So the
 * task itself, which cannot run while its page is rewritten, reads what
 * read() would, as long as sched_clock is the TSC's and stable (the arch
 * says, pmc_arch_user_time()). Another task reading the page while it is
 * rewritten may see the clock run past the instant the counter stopped:
 * only the counted task is promised read()'s values.
 *
 * Only task-clock and cpu-clock counters that a task opened on itself,
 * not inherited and not bound to a CPU, are read there: a child's counts
 * come with read() only, and other counters do not grow with the clock.
 * A hardware counter would need rdpmc (index, cap_user_rdpmc): not yet;
 * its page says to use read(). The fields of these pages are written
 * here only, under ctx->lock; the ring buffer's publisher keeps the other
 * pages' fields up to date with each record.
 */
#include <linux/sched/clock.h>

#include "internal.h"

/* Can @counter's task read it in page 0? Fixed at pmc_open(). */
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
 * (local_clock()) on this CPU, for current; false where user space
 * cannot have it.
 */
bool __weak pmc_arch_user_time(struct pmc_mmap_page *up, u64 stamp)
{
	return false;
}

/*
 * Rewrite @counter's page from its state; ctx->lock held, IRQs off, the
 * context's time just updated, on the CPU where the context is live (if
 * it is, then for its task, current).
 */
static void pmc_userpage_update(struct pmc_counter *counter)
{
	struct pmc_context *ctx = counter->ctx;
	struct pmc_ring_buffer *rb;
	struct pmc_mmap_page *up;
	u64 count = local64_read(&counter->count);
	bool live, time, count_time = false;

	rb = rcu_dereference_check(counter->rb, lockdep_is_held(&ctx->lock));
	if (!rb)
		return;
	pmc_counter_update_time(counter);
	live = ctx->is_active && ctx->cpu == smp_processor_id() &&
	       counter->state >= PMC_STATE_INACTIVE;
	if (live && counter->state == PMC_STATE_ACTIVE)
		count_time = pmc_sw_clock_at_stamp(counter, &count);

	up = pmc_rb_user_page(rb);
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
}

/* @ctx's mapped pages, after an operation on it; ctx->lock held. */
void pmc_ctx_update_userpages(struct pmc_context *ctx)
{
	struct pmc_counter *counter;

	if (!ctx)
		return;
	list_for_each_entry(counter, &ctx->userpages, userpage_entry)
		pmc_userpage_update(counter);
}

static void __pmc_userpage_map(struct pmc_context *ctx, void *arg)
{
	struct pmc_counter *counter = arg;

	list_add_tail(&counter->userpage_entry, &ctx->userpages);
}

static void __pmc_userpage_unmap(struct pmc_context *ctx, void *arg)
{
	struct pmc_counter *counter = arg;

	list_del_init(&counter->userpage_entry);
}

/*
 * @counter's buffer was mapped for the first time; counter->mmap_mutex
 * held. pmc_ctx_call() writes the page at once, where the context is
 * live: the task need not wait for a context switch to read it.
 */
void pmc_userpage_map(struct pmc_counter *counter)
{
	if (counter->userpage_allowed)
		pmc_ctx_call(counter->ctx, __pmc_userpage_map, counter);
}

/* Its last mapping goes; counter->mmap_mutex held. */
void pmc_userpage_unmap(struct pmc_counter *counter)
{
	if (counter->userpage_allowed)
		pmc_ctx_call(counter->ctx, __pmc_userpage_unmap, counter);
}
