// SPDX-License-Identifier: GPL-2.0
/*
 * events-lite contexts: the groups attached to one task or one CPU, and
 * how they are changed from any CPU.
 *
 * The one rule for changing a context (see internal.h for the locks):
 * pmc_ctx_call() runs a function with the context locked and IRQs off,
 * on the CPU where the context is live (a task context whose task is
 * running there, or an online CPU's context), or on the caller's CPU
 * when it is live nowhere. The scheduler hooks take the same locks, so
 * a task that starts running meanwhile sees the change when its context
 * is scheduled in.
 *
 * Invariant: a context with no counters is never active, so that
 * cpu->task_ctx is NULL on every CPU once the last counter is gone and
 * pmc_sched_key can turn the hooks off.
 */
#include <linux/capability.h>
#include <linux/cpuhotplug.h>
#include <linux/cred.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/smp.h>

#include "internal.h"

DEFINE_STATIC_KEY_DEFERRED_FALSE(pmc_sched_key, HZ);

static struct kmem_cache *pmc_ctx_cache;
/* CPU contexts nest outside task contexts: their own lockdep class. */
static struct lock_class_key pmc_cpu_ctx_lock_key;

static void pmc_ctx_init(struct pmc_context *ctx)
{
	raw_spin_lock_init(&ctx->lock);
	mutex_init(&ctx->mutex);
	refcount_set(&ctx->refcount, 1);
	INIT_LIST_HEAD(&ctx->pinned_groups);
	INIT_LIST_HEAD(&ctx->flexible_groups);
	INIT_LIST_HEAD(&ctx->userpages);
	ctx->cpu = -1;
}

/* A new task context, holding one reference for @task. */
struct pmc_context *pmc_task_ctx_alloc(struct task_struct *task)
{
	struct pmc_context *ctx;

	ctx = kmem_cache_zalloc(pmc_ctx_cache, GFP_KERNEL);
	if (!ctx)
		return NULL;
	pmc_ctx_init(ctx);
	ctx->task = task;
	return ctx;
}

struct pmc_context *pmc_cpu_ctx_get(int cpu)
{
	return &per_cpu(pmc_cpu, cpu).ctx;
}

/*
 * The context of @task, created on first use, with a reference held.
 * The caller holds pmc_sched_key, see pmc_exit_task(): either the exit
 * hook has marked the task under task_lock() and we fail here, or it
 * finds the context we install.
 */
struct pmc_context *pmc_task_ctx_get(struct task_struct *task)
{
	struct pmc_context *ctx, *new;

	new = pmc_task_ctx_alloc(task);
	if (!new)
		return ERR_PTR(-ENOMEM);

	task_lock(task);
	ctx = task->pmc_ctx;
	if (ctx) {
		refcount_inc(&ctx->refcount);
	} else if (task->pmc_exited || (task->flags & PF_EXITING)) {
		ctx = ERR_PTR(-ESRCH);
	} else {
		/* One reference for the task, one for the caller. */
		refcount_inc(&new->refcount);
		WRITE_ONCE(task->pmc_ctx, new);
		ctx = new;
		new = NULL;
	}
	task_unlock(task);
	/*
	 * Publish the context before pmc_ctx_call() tests task_curr(): the
	 * task either was switched in after this and its sched-in hook sees
	 * the context, or we see it running and send the IPI. Pairs with
	 * the full barrier of the context switch between rq->curr and the
	 * hook's load of ->pmc_ctx.
	 */
	smp_mb();
	if (new)
		kmem_cache_free(pmc_ctx_cache, new);
	return ctx;
}

void pmc_ctx_put(struct pmc_context *ctx)
{
	if (!ctx->task)
		return;		/* CPU contexts are static */
	if (refcount_dec_and_test(&ctx->refcount))
		kfree_rcu(ctx, rcu);
}

struct pmc_ctx_call_args {
	struct pmc_context *ctx;
	pmc_ctx_fn fn;
	void *arg;
	bool done;
};

/*
 * Run the function if the context is live on this CPU, IRQs off: the
 * IPI handler, and pmc_ctx_call()'s direct call for a context that can
 * only be live here. args->done says whether it ran.
 */
static void pmc_ctx_call_here(void *info)
{
	struct pmc_ctx_call_args *args = info;
	struct pmc_context *ctx = args->ctx;
	struct pmc_cpu *cpuc = this_cpu_ptr(&pmc_cpu);
	struct pmc_context *task_ctx = ctx->task ? ctx : cpuc->task_ctx;

	/* A task context is live only where its task is current. */
	if (ctx->task && ctx->task != current)
		return;
	guard(pmc_cpu_lock)(cpuc, task_ctx);
	if (!ctx->task && (!ctx->is_active || ctx->cpu != smp_processor_id()))
		return;
	WARN_ON_ONCE(ctx->task && cpuc->task_ctx && cpuc->task_ctx != ctx);

	pmc_ctx_update_time(ctx);
	args->fn(ctx, args->arg);
	/*
	 * A running task's context is active exactly when it has counters.
	 * The other context's time matters only when its groups move too:
	 * reads, the common case, touch one context only.
	 */
	if (ctx->task && (!ctx->nr_counters != !ctx->is_active ||
			  cpuc->resched)) {
		pmc_ctx_update_time(&cpuc->ctx);
		if (ctx->nr_counters)
			pmc_task_ctx_activate(cpuc, ctx);
		else
			pmc_task_ctx_deactivate(cpuc, ctx);
	} else if (!ctx->task && task_ctx && cpuc->resched) {
		pmc_ctx_update_time(task_ctx);
	}
	if (cpuc->resched) {
		cpuc->resched = false;
		pmc_cpu_resched(cpuc);
	}
	pmc_ctx_update_userpages(ctx->task ? ctx : NULL);
	args->done = true;
}

/* Where @ctx is live, or -1; ctx->lock held. */
static int pmc_ctx_live_cpu(struct pmc_context *ctx)
{
	struct task_struct *task = ctx->task;

	if (ctx->is_active)
		return ctx->cpu;
	if (!task || task == PMC_TASK_DEAD)
		return -1;
	return task_curr(task) ? task_cpu(task) : -1;
}

int pmc_ctx_call(struct pmc_context *ctx, pmc_ctx_fn fn, void *arg)
{
	struct pmc_ctx_call_args args = { .ctx = ctx, .fn = fn, .arg = arg };
	int cpu;

	might_sleep();

	/*
	 * Our own task's context, or this CPU's: with IRQs off nothing can
	 * move it, so run the handler here and save the IPI machinery.
	 */
	scoped_guard(irqsave) {
		if (ctx->task == current ||
		    (!ctx->task && ctx->cpu == smp_processor_id()))
			pmc_ctx_call_here(&args);
	}
	if (args.done)
		return 0;

	for (;;) {
		scoped_guard(raw_spinlock_irqsave, &ctx->lock) {
			cpu = pmc_ctx_live_cpu(ctx);
			if (cpu < 0) {
				fn(ctx, arg);
				pmc_ctx_update_userpages(ctx->task ? ctx : NULL);
				return 0;
			}
		}

		smp_call_function_single(cpu, pmc_ctx_call_here, &args, 1);
		if (args.done)
			return 0;
		cond_resched();
	}
}

/*
 * A group in an active context is about to become ready to count (new
 * or enabled) or to change: take it off the PMU, so that its member
 * list only ever changes off the PMU (see sample.c). Once it has
 * changed, pmc_ctx_group_go() puts it back.
 */
static void pmc_ctx_group_ready(struct pmc_context *ctx,
				struct pmc_counter *leader)
{
	if (ctx->is_active)
		pmc_group_sched_out(leader);
}

/*
 * After pmc_ctx_group_ready() and the change: a group that uses the PMU
 * has the caller reschedule the CPU, so that it goes on in priority
 * order, whole or not at all. A software group takes no PMU counter and
 * always goes on: it goes straight back, and nothing else moves. A
 * reschedule takes every group of the CPU off and on again with IRQs
 * off; done for software counters too, each pmc_open() into a running
 * task cost as much as all its counters, and a user opening a thousand
 * kept its CPU's interrupts off for milliseconds at a time.
 */
static void pmc_ctx_group_go(struct pmc_context *ctx,
			     struct pmc_counter *leader)
{
	if (!ctx->is_active)
		return;
	if (pmc_group_uses_pmu(leader))
		this_cpu_ptr(&pmc_cpu)->resched = true;
	else
		pmc_group_sched_in(leader);
}

/* Add @counter to @ctx's lists; ctx->lock held (or @ctx not yet visible). */
void pmc_ctx_link(struct pmc_context *ctx, struct pmc_counter *counter)
{
	struct pmc_counter *leader = counter->leader;

	counter->tstamp = ctx->time;
	if (pmc_is_leader(counter)) {
		list_add_tail(&counter->group_entry,
			      counter->attr.pinned ? &ctx->pinned_groups :
						     &ctx->flexible_groups);
		if (counter->attr.inherit)
			ctx->nr_inherit++;
	} else {
		list_add_tail(&counter->group_entry, &leader->siblings);
		leader->nr_siblings++;
	}
	if (counter->pmu != &pmc_sw_pmu)
		ctx->nr_pmu++;
	if (pmc_wants_side(counter))
		ctx->nr_side++;
	if (counter->attr.exclude_idle)
		ctx->nr_exclude_idle++;
	ctx->nr_counters++;
}

/* Take @counter off the CPU and out of @ctx; ctx->lock held. */
void pmc_ctx_unlink(struct pmc_context *ctx, struct pmc_counter *counter)
{
	struct pmc_counter *member, *tmp;

	if (pmc_is_leader(counter)) {
		pmc_group_sched_out(counter);
		list_del_init(&counter->group_entry);
		if (counter->attr.inherit)
			ctx->nr_inherit--;
		/* Members become leaders of their own groups. */
		list_for_each_entry_safe(member, tmp, &counter->siblings,
					 group_entry) {
			member->leader = member;
			list_move_tail(&member->group_entry,
				       &ctx->flexible_groups);
			if (member->attr.inherit)
				ctx->nr_inherit++;
			pmc_ctx_group_ready(ctx, member);
			pmc_ctx_group_go(ctx, member);
		}
		counter->nr_siblings = 0;
	} else {
		pmc_ctx_group_ready(ctx, counter->leader);
		list_del_init(&counter->group_entry);
		counter->leader->nr_siblings--;
		pmc_ctx_group_go(ctx, counter->leader);
	}
	if (counter->pmu != &pmc_sw_pmu)
		ctx->nr_pmu--;
	if (pmc_wants_side(counter))
		ctx->nr_side--;
	if (counter->attr.exclude_idle)
		ctx->nr_exclude_idle--;
	ctx->nr_counters--;
}

static void pmc_install_fn(struct pmc_context *ctx, void *arg)
{
	struct pmc_counter *counter = arg;
	struct pmc_counter *leader = counter->leader;

	pmc_ctx_group_ready(ctx, leader);
	pmc_ctx_link(ctx, counter);
	pmc_ctx_group_go(ctx, leader);
}

/* Attach a new counter to its context; ctx->mutex held by the caller. */
int pmc_install(struct pmc_counter *counter)
{
	struct pmc_context *ctx = counter->ctx;

	int ret;

	lockdep_assert_held(&ctx->mutex);
	if (ctx->task == PMC_TASK_DEAD)
		return -ESRCH;
	ret = pmc_ctx_call(ctx, pmc_install_fn, counter);
	if (!ret)
		counter->installed = true;
	return ret;
}

static void pmc_remove_fn(struct pmc_context *ctx, void *arg)
{
	pmc_ctx_unlink(ctx, arg);
}

/* Detach a closing counter. */
void pmc_remove(struct pmc_counter *counter)
{
	struct pmc_context *ctx = counter->ctx;

	guard(mutex)(&ctx->mutex);
	pmc_ctx_call(ctx, pmc_remove_fn, counter);
}

static void pmc_enable_locked(struct pmc_context *ctx,
			      struct pmc_counter *counter)
{
	struct pmc_counter *leader = counter->leader;

	if (counter->state >= PMC_STATE_INACTIVE)
		return;
	pmc_counter_set_state(counter, PMC_STATE_INACTIVE);
	pmc_ctx_group_ready(ctx, leader);
	pmc_ctx_group_go(ctx, leader);
}

static void pmc_disable_locked(struct pmc_context *ctx,
			       struct pmc_counter *counter)
{
	if (counter->state == PMC_STATE_OFF)
		return;
	if (pmc_is_leader(counter))
		pmc_group_sched_out(counter);
	else
		pmc_counter_sched_out(counter);
	pmc_counter_set_state(counter, PMC_STATE_OFF);
}

/* pmc_ctx_call() functions: enable or disable one counter. */
void pmc_enable_fn(struct pmc_context *ctx, void *arg)
{
	pmc_enable_locked(ctx, arg);
}

void pmc_disable_fn(struct pmc_context *ctx, void *arg)
{
	pmc_disable_locked(ctx, arg);
}

/*
 * Disable @counter from IRQ context on the CPU where it overflowed (a
 * REFRESH budget ran out). If its context is live elsewhere by now (the
 * task migrated), only pmc_ctx_call() can reach it: that sleeps, so a
 * work item does it. Until then the spent budget stops the samples.
 */
void pmc_disable_here(struct pmc_counter *counter)
{
	struct pmc_cpu *cpuc = this_cpu_ptr(&pmc_cpu);
	struct pmc_context *ctx = counter->ctx, *task_ctx = cpuc->task_ctx;
	bool done = true;

	lockdep_assert_irqs_disabled();
	if (ctx == &cpuc->ctx || ctx == task_ctx) {
		guard(pmc_cpu_lock)(cpuc, task_ctx);
		pmc_ctx_update_time(ctx);
		pmc_disable_locked(ctx, counter);
		pmc_ctx_update_userpages(ctx->task ? ctx : NULL);
		return;
	}
	scoped_guard(raw_spinlock, &ctx->lock) {
		if (pmc_ctx_live_cpu(ctx) < 0)
			pmc_disable_locked(ctx, counter);
		else
			done = false;
	}
	if (!done)
		schedule_work(&counter->disable_task_work);
}

void pmc_enable(struct pmc_counter *counter)
{
	pmc_ctx_call(counter->ctx, pmc_enable_fn, counter);
}

/* After @counter was turned on or off: its backend follows. */
void pmc_counter_sync_enabled(struct pmc_counter *counter)
{
	might_sleep();
	if (counter->pmu->sync_enabled)
		counter->pmu->sync_enabled(counter);
}

/* Stop the flexible list's rotation while ctx->mutex holders walk it. */
void pmc_set_rotate_disable(struct pmc_context *ctx, int delta)
{
	guard(raw_spinlock_irqsave)(&ctx->lock);
	ctx->rotate_disable += delta;
}

void pmc_disable(struct pmc_counter *counter)
{
	pmc_ctx_call(counter->ctx, pmc_disable_fn, counter);
}

struct pmc_task_switch {
	bool enable;
	bool any_owner;		/* the caller may ptrace anyone */
	kuid_t uid;		/* else only counters this user opened */
};

/* Call @fn on each group leader of @ctx that @sw's caller may switch. */
static void pmc_task_switch_each(struct pmc_context *ctx,
				 const struct pmc_task_switch *sw,
				 void (*fn)(struct pmc_context *ctx,
					    struct pmc_counter *leader))
{
	struct pmc_counter *leader;

	pmc_for_each_group(leader, ctx)
		if (sw->any_owner || uid_eq(pmc_counter_owner(leader), sw->uid))
			fn(ctx, leader);
}

static void pmc_task_set_enabled_fn(struct pmc_context *ctx, void *arg)
{
	const struct pmc_task_switch *sw = arg;

	pmc_task_switch_each(ctx, sw, sw->enable ? pmc_enable_locked :
			     pmc_disable_locked);
}

static void pmc_task_sync_leader(struct pmc_context *ctx,
				 struct pmc_counter *leader)
{
	pmc_counter_sync_enabled(leader);
}

/*
 * prctl(): enable or disable the group leaders on the calling task that
 * its own user opened. Those another user attached (a monitor the task
 * could not ptrace) are left alone: a watched task must not blind its
 * watcher. Then, in process context, the PMU follows the same leaders.
 */
static int pmc_task_set_enabled(bool enable)
{
	struct pmc_context *ctx = current->pmc_ctx;
	struct pmc_task_switch sw = {
		.enable = enable,
		/* a question, not a use of the privilege: no audit record */
		.any_owner = has_capability_noaudit(current, CAP_SYS_PTRACE),
		.uid = current_uid(),
	};

	/* Our own context: exit cannot run under us, no reference needed. */
	if (!ctx)
		return 0;
	pmc_ctx_call(ctx, pmc_task_set_enabled_fn, &sw);

	guard(mutex)(&ctx->mutex);
	pmc_set_rotate_disable(ctx, 1);
	pmc_task_switch_each(ctx, &sw, pmc_task_sync_leader);
	pmc_set_rotate_disable(ctx, -1);
	return 0;
}

int pmc_task_enable(void)
{
	return pmc_task_set_enabled(true);
}

int pmc_task_disable(void)
{
	return pmc_task_set_enabled(false);
}

/* Wake poll() on a dead context's counters: POLLHUP (no SIGIO, as perf). */
static void pmc_ctx_kick_readers(struct pmc_context *ctx)
{
	struct pmc_counter *leader, *pos;

	lockdep_assert_held(&ctx->mutex);
	pmc_for_each_group(leader, ctx)
		for_each_group_counter(pos, leader)
			pmc_rb_kick(pos);
}

/*
 * Stop @task's context for good: the task exits, or execs an image its
 * counters' owners may not watch. Inherited copies fold into their
 * parents and go away; counters opened on the task stay with the dead
 * context, keep their final counts and stop their clocks, and go away
 * with their file descriptors. After an exec the task gets a new
 * context if someone allowed to opens a counter on it.
 */
static void pmc_task_detach(struct task_struct *task, bool exiting)
{
	struct pmc_context *ctx;
	struct pmc_cpu *cpuc;

	/* No context can be installed once pmc_exited is set. */
	scoped_guard(task_lock, task) {
		if (exiting)
			task->pmc_exited = 1;
		ctx = task->pmc_ctx;
	}
	if (!ctx)
		return;

	scoped_guard(mutex, &ctx->mutex) {
		scoped_guard(task_lock, task) {
			guard(irqsave)();
			cpuc = this_cpu_ptr(&pmc_cpu);
			guard(pmc_cpu_lock)(cpuc, ctx);
			pmc_ctx_update_time(&cpuc->ctx);
			pmc_task_ctx_deactivate(cpuc, ctx);
			ctx->task = PMC_TASK_DEAD;
			WRITE_ONCE(task->pmc_ctx, NULL);
		}
		pmc_inherit_exit(ctx, true);
		pmc_ctx_kick_readers(ctx);
	}
	pmc_ctx_put(ctx);
}

void __pmc_exit_task(struct task_struct *task)
{
	pmc_exit_event(task);
	pmc_task_detach(task, true);
}

void __pmc_exec_task(struct task_struct *task)
{
	pmc_task_detach(task, false);
}

/* CPU hotplug: a CPU context is active exactly while its CPU is online. */
static int pmc_cpu_online(unsigned int cpu)
{
	struct pmc_cpu *cpuc;

	guard(irqsave)();
	cpuc = this_cpu_ptr(&pmc_cpu);
	guard(pmc_cpu_lock)(cpuc, cpuc->task_ctx);
	pmc_ctx_sched_in(&cpuc->ctx);
	pmc_cpu_resched(cpuc);
	return 0;
}

static int pmc_cpu_offline(unsigned int cpu)
{
	struct pmc_cpu *cpuc = this_cpu_ptr(&pmc_cpu);

	scoped_guard(raw_spinlock_irq, &cpuc->ctx.lock) {
		pmc_ctx_sched_out(&cpuc->ctx);
		cpuc->waiting = false;
	}
	hrtimer_cancel(&cpuc->mux_timer);
	return 0;
}

static int __init pmc_context_init(void)
{
	int cpu, ret;

	pmc_ctx_cache = kmem_cache_create("pmc_context",
					  sizeof(struct pmc_context), 0,
					  SLAB_PANIC | SLAB_NO_MERGE, NULL);
	for_each_possible_cpu(cpu) {
		struct pmc_cpu *cpuc = per_cpu_ptr(&pmc_cpu, cpu);

		pmc_ctx_init(&cpuc->ctx);
		lockdep_set_class(&cpuc->ctx.lock, &pmc_cpu_ctx_lock_key);
		pmc_sched_init_cpu(cpuc);
	}
	ret = cpuhp_setup_state(CPUHP_AP_ONLINE_DYN, "pmc:online",
				pmc_cpu_online, pmc_cpu_offline);
	return ret < 0 ? ret : 0;
}
core_initcall(pmc_context_init);
