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
 * Only counters that a task opened on itself, not inherited and not
 * bound to a CPU, are read there: a child's counts come with read()
 * only. Of those, the task-clock and cpu-clock grow with the TSC, and a
 * counting (not sampling) hardware counter, while it is on the PMU for
 * its task, is read with rdpmc where the backend allows it (index,
 * cap_user_rdpmc): user space adds the counter to the page's offset.
 * Software event counters do not grow with the clock, and a sampling
 * hardware counter's page is its ring's, whose publisher rewrites it
 * with each sample: their pages say to use read().
 *
 * The fields of these pages are written here only: under ctx->lock, and
 * for an rdpmc counter also by its overflow NMI on the same CPU, which
 * reprograms the counter and so moves the offset. The NMI rewrites only
 * the offset, and not while that CPU is in the middle of a rewrite (the
 * lock is odd): it makes the rewrite run again instead. The ring
 * buffer's publisher keeps the other pages' fields up to date with each
 * record.
 */
#include <linux/sched/clock.h>

#include "internal.h"

/* Can @counter's task read it in page 0? Fixed at pmc_open(). */
bool pmc_userpage_allowed(const struct pmc_attr *attr,
			  const struct pmc_pmu *pmu, struct task_struct *task,
			  int cpu)
{
	u64 id = PMC_CONFIG_ID(attr->config);

	if (task != current || cpu >= 0 || attr->inherit)
		return false;
	if (pmu == &pmc_sw_pmu)
		return id == PMC_SW_TASK_CLOCK || id == PMC_SW_CPU_CLOCK;
	/* a sampling one's page is its ring's, rewritten with each sample */
	return pmu->user_index && !attr->irq_period;
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
 * A hardware counter's rdpmc index, width and page offset (the count
 * less the raw value), as of now; index 0 and the count itself where
 * user space may not execute rdpmc.
 */
static u32 pmc_userpage_index(struct pmc_counter *counter, u16 *width,
			      u64 *offset)
{
	u32 index = counter->pmu->user_index(counter, width);

	*offset = local64_read(&counter->count);
	if (index)
		*offset -= sign_extend64(local64_read(&counter->hw.prev_count),
					 *width - 1);
	return index;
}

/*
 * Write @counter's page from its state, once; ctx->lock held, IRQs off.
 * @live: the context is live on this CPU (for its task, current).
 */
static void pmc_userpage_write(struct pmc_counter *counter,
			       struct pmc_mmap_page *up, bool live)
{
	bool active = live && counter->state == PMC_STATE_ACTIVE;
	bool time, count_time = false;
	u64 count;
	u16 width = 0;
	u32 index = 0;

	pmc_rb_page_write_begin(up);
	count = local64_read(&counter->count);
	if (active && counter->pmu->user_index)
		index = pmc_userpage_index(counter, &width, &count);
	else if (active)
		count_time = pmc_sw_clock_at_stamp(counter, &count);
	up->index = index;
	up->offset = count;
	up->time_enabled = counter->time_enabled;
	up->time_running = counter->time_running;
	time = live && pmc_arch_user_time(up, counter->ctx->timestamp);
	/* a hardware count user space cannot read: the times alone are no use */
	if (active && counter->pmu->user_index && !index)
		time = false;
	up->cap_user_rdpmc = !!index;
	up->cap_user_time = time;
	up->cap_user_count_time = time && count_time;
	up->pmc_width = width;
	pmc_rb_page_write_end(up);
}

/*
 * Rewrite @counter's page from its state; ctx->lock held, IRQs off, the
 * context's time just updated, on the CPU where the context is live (if
 * it is, then for its task, current). Again if the overflow NMI came
 * in the middle of it.
 */
static void pmc_userpage_update(struct pmc_counter *counter)
{
	struct pmc_context *ctx = counter->ctx;
	struct pmc_ring_buffer *rb;
	bool live;

	rb = rcu_dereference_check(counter->rb, lockdep_is_held(&ctx->lock));
	if (!rb)
		return;
	pmc_counter_update_time(counter);
	live = ctx->is_active && ctx->cpu == smp_processor_id() &&
	       counter->state >= PMC_STATE_INACTIVE;
	do {
		WRITE_ONCE(counter->userpage_redo, false);
		barrier();	/* cleared before the NMI can see an odd lock */
		pmc_userpage_write(counter, pmc_rb_user_page(rb), live);
		barrier();
	} while (READ_ONCE(counter->userpage_redo));
}

/*
 * The backend reprogrammed @counter while it was active, on its CPU: a
 * new prev_count from its overflow NMI or unthrottle timer, or another
 * hardware counter when it made room for someone else's. The index and
 * offset of an rdpmc page move with it.
 */
void __pmc_userpage_reprogrammed(struct pmc_counter *counter)
{
	struct pmc_ring_buffer *rb;
	struct pmc_mmap_page *up;
	u16 width = 0;
	u32 lock, index;
	u64 offset;

	guard(rcu)();
	rb = rcu_dereference(counter->rb);
	if (!rb)
		return;
	up = pmc_rb_user_page(rb);
	lock = READ_ONCE(up->lock);
	if (lock & 1) {
		/* this CPU's rewrite, interrupted: it runs again */
		WRITE_ONCE(counter->userpage_redo, true);
		return;
	}
	if (!READ_ONCE(up->index))
		return;
	index = pmc_userpage_index(counter, &width, &offset);
	/* even @lock: no rewrite in progress, and none can start here */
	pmc_rb_page_write_begin(up);
	up->index = index;
	up->offset = offset;
	up->pmc_width = width;
	up->cap_user_rdpmc = !!index;
	if (!index)
		up->cap_user_time = 0;
	pmc_rb_page_write_end(up);
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

static void pmc_userpage_map_fn(struct pmc_context *ctx, void *arg)
{
	struct pmc_counter *counter = arg;

	list_add_tail(&counter->userpage_entry, &ctx->userpages);
}

static void pmc_userpage_unmap_fn(struct pmc_context *ctx, void *arg)
{
	struct pmc_counter *counter = arg;

	list_del_init(&counter->userpage_entry);
}

/*
 * A mapping of @counter's page in @mm comes or goes: the backend lets
 * @mm execute rdpmc while any such mapping lasts. Once per mapping, in
 * the mm that holds it (which may not be the counted task's).
 */
void pmc_userpage_vma_mapped(struct pmc_counter *counter, struct mm_struct *mm)
{
	if (counter->userpage_allowed && counter->pmu->mapped)
		counter->pmu->mapped(mm);
}

void pmc_userpage_vma_unmapped(struct pmc_counter *counter,
			       struct mm_struct *mm)
{
	if (counter->userpage_allowed && counter->pmu->unmapped)
		counter->pmu->unmapped(mm);
}

/*
 * @counter's buffer was mapped for the first time; counter->mmap_mutex
 * held. pmc_ctx_call() writes the page at once, where the context is
 * live: the task need not wait for a context switch to read it.
 */
void pmc_userpage_map(struct pmc_counter *counter)
{
	if (counter->userpage_allowed)
		pmc_ctx_call(counter->ctx, pmc_userpage_map_fn, counter);
}

/* Its last mapping goes; counter->mmap_mutex held. */
void pmc_userpage_unmap(struct pmc_counter *counter)
{
	if (counter->userpage_allowed)
		pmc_ctx_call(counter->ctx, pmc_userpage_unmap_fn, counter);
}
