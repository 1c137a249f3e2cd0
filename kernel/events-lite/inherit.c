// SPDX-License-Identifier: GPL-2.0
/*
 * events-lite inherit: counters that follow a task's children.
 *
 * At fork, every group whose leader has attr.inherit is copied onto the
 * child's new context (members that have attr.inherit too). A copy
 * points at the original counter, the one with the file descriptor, and
 * holds a reference on it; copies of copies point at the same original.
 * When the child exits, each copy adds its count and times to the
 * original's child totals, under the original's child_mutex so that a
 * read() sees all three or none, and before the parent can be told of
 * the exit, so a read() after wait() covers the whole tree. Until then
 * the copy is on the original's child_list, where ioctls find it.
 *
 * A copied group folds as one step, for a PMC_FORMAT_GROUP read() that
 * holds only its leader's child_mutex: under the original leader's
 * child_mutex, with each member's original's child_mutex taken inside
 * it (SINGLE_DEPTH_NESTING). Nothing takes a leader's after a member's.
 *
 * Fork runs in the parent, which holds its context's mutex so that no
 * counter comes or goes, and stops the rotation of its flexible list
 * while it walks it.
 */
#include <linux/slab.h>

#include "internal.h"

static struct pmc_counter *pmc_inherit_counter(struct pmc_counter *parent,
					       struct pmc_counter *leader,
					       struct pmc_context *ctx)
{
	struct pmc_counter *orig = pmc_counter_original(parent);
	struct pmc_counter *counter;

	counter = pmc_counter_alloc(&parent->attr, parent->pmu, parent->cpu);
	if (IS_ERR(counter))
		return counter;
	counter->leader = leader ?: counter;
	pmc_sample_inherit(counter, parent);
	if (counter->pmu->open) {
		int ret = counter->pmu->open(counter, ctx->task);

		if (ret) {
			pmc_counter_put(counter);
			return ERR_PTR(ret);
		}
	}
	refcount_inc(&orig->refcount);
	counter->parent = orig;
	pmc_counter_attach_copy(counter, orig, ctx);
	counter->kernel_visible = parent->kernel_visible;
	scoped_guard(mutex, &orig->child_mutex) {
		/* The original's state, read where ioctls change it. */
		counter->state = orig->state == PMC_STATE_OFF ?
				 PMC_STATE_OFF : PMC_STATE_INACTIVE;
		list_add_tail(&counter->child_entry, &orig->child_list);
	}
	pmc_counter_sync_enabled(counter);
	pmc_ctx_link(ctx, counter);
	return counter;
}

static int pmc_inherit_group(struct pmc_counter *leader,
			     struct pmc_context *ctx)
{
	struct pmc_counter *copy, *member, *pos;

	copy = pmc_inherit_counter(leader, NULL, ctx);
	if (IS_ERR(copy))
		return PTR_ERR(copy);
	list_for_each_entry(pos, &leader->siblings, group_entry) {
		if (!pos->attr.inherit)
			continue;
		member = pmc_inherit_counter(pos, copy, ctx);
		if (IS_ERR(member))
			return PTR_ERR(member);
	}
	return 0;
}

/* copy_process(): give @child copies of the inherited groups. */
int __pmc_inherit_task(struct task_struct *child)
{
	struct pmc_context *parent_ctx = current->pmc_ctx, *ctx;
	struct pmc_counter *leader;
	int ret = 0;

	/* Most tasks with counters inherit none: skip the mutex. */
	if (!READ_ONCE(parent_ctx->nr_inherit))
		return 0;
	guard(mutex)(&parent_ctx->mutex);
	if (!parent_ctx->nr_inherit)
		return 0;
	ctx = pmc_task_ctx_alloc(child);
	if (!ctx)
		return -ENOMEM;
	pmc_set_rotate_disable(parent_ctx, 1);
	pmc_for_each_group(leader, parent_ctx) {
		if (!leader->attr.inherit)
			continue;
		ret = pmc_inherit_group(leader, ctx);
		if (ret)
			break;
	}
	pmc_set_rotate_disable(parent_ctx, -1);
	if (ret) {
		pmc_inherit_exit(ctx, false);
		pmc_ctx_put(ctx);
		return ret;
	}
	child->pmc_ctx = ctx;
	return 0;
}

/* copy_process() failed after __pmc_inherit_task(). */
void __pmc_free_task(struct task_struct *child)
{
	struct pmc_context *ctx = child->pmc_ctx;

	child->pmc_ctx = NULL;
	scoped_guard(mutex, &ctx->mutex)
		pmc_inherit_exit(ctx, false);
	ctx->task = PMC_TASK_DEAD;
	pmc_ctx_put(ctx);
}

/*
 * A copy leaves its original's list, adding its totals if @fold. The
 * original's child_mutex is held.
 */
static void pmc_inherit_fold(struct pmc_counter *counter, bool fold)
{
	struct pmc_counter *orig = counter->parent;

	lockdep_assert_held(&orig->child_mutex);
	list_del_init(&counter->child_entry);
	if (fold) {
		atomic64_add(local64_read(&counter->count), &orig->child_count);
		atomic64_add(counter->time_enabled, &orig->child_time_enabled);
		atomic64_add(counter->time_running, &orig->child_time_running);
		/* Its samples went to the original's buffer: so do these. */
		atomic64_add(atomic64_read(&counter->overflows),
			     &orig->overflows);
		atomic64_add(atomic64_read(&counter->throttles),
			     &orig->throttles);
	}
}

/* A member's child_mutex, taken under its leader's (same lock class). */
DEFINE_GUARD(pmc_mutex_nested, struct mutex *,
	     mutex_lock_nested(_T, SINGLE_DEPTH_NESTING), mutex_unlock(_T))

/* A dead copied group, members on its sibling list: one step for read(). */
static void pmc_inherit_fold_group(struct pmc_counter *leader, bool fold)
{
	struct pmc_counter *pos;

	guard(mutex)(&leader->parent->child_mutex);
	pmc_inherit_fold(leader, fold);
	list_for_each_entry(pos, &leader->siblings, group_entry) {
		scoped_guard(pmc_mutex_nested, &pos->parent->child_mutex)
			pmc_inherit_fold(pos, fold);
	}
}

/*
 * Unlink the copied group of @leader from @ctx onto @dead. Its copied
 * members stay on its sibling list, and keep ->leader, so that they
 * fold with it; members that are the task's own (none, as copies have
 * no fd to join) become groups of their own and stay. ctx->lock held.
 */
static void pmc_inherit_unlink_group(struct pmc_context *ctx,
				     struct pmc_counter *leader,
				     struct list_head *dead)
{
	struct pmc_counter *pos, *tmp;
	LIST_HEAD(members);

	list_for_each_entry_safe(pos, tmp, &leader->siblings, group_entry) {
		if (!pos->parent)
			continue;
		pmc_counter_fold(pos);
		pmc_ctx_unlink(ctx, pos);
		list_add_tail(&pos->group_entry, &members);
	}
	pmc_counter_fold(leader);
	pmc_ctx_unlink(ctx, leader);
	list_splice(&members, &leader->siblings);
	list_add_tail(&leader->group_entry, dead);
}

/* Drop a dead copy and its reference on its original. */
static void pmc_inherit_put(struct pmc_counter *counter)
{
	pmc_counter_put(counter->parent);
	pmc_counter_put(counter);
}

/*
 * Take the inherited copies out of a context nobody runs any more
 * (exited, or never started), fold them into their originals if @fold,
 * and free them. ctx->mutex held, or @ctx not visible to anyone yet.
 */
void pmc_inherit_exit(struct pmc_context *ctx, bool fold)
{
	struct pmc_counter *leader, *ltmp, *pos, *tmp;
	LIST_HEAD(dead);

	scoped_guard(raw_spinlock_irqsave, &ctx->lock) {
		pmc_for_each_group_safe(leader, ltmp, ctx) {
			/* Only copies lead copies: the task's own stay. */
			if (leader->parent)
				pmc_inherit_unlink_group(ctx, leader, &dead);
		}
	}

	list_for_each_entry(leader, &dead, group_entry)
		pmc_inherit_fold_group(leader, fold);
	/*
	 * Only with every group folded may a copy go, and an original whose
	 * last copy it was: a group's fold walks its leader's siblings and
	 * holds its original leader's child_mutex.
	 */
	list_for_each_entry_safe(leader, ltmp, &dead, group_entry) {
		list_for_each_entry_safe(pos, tmp, &leader->siblings,
					 group_entry)
			pmc_inherit_put(pos);
		pmc_inherit_put(leader);
	}
}
