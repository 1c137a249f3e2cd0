// SPDX-License-Identifier: GPL-2.0
/*
 * events-lite contexts: the groups attached to one task or one CPU, how
 * they go on and off the CPU, and how other CPUs change them.
 *
 * The one rule for changing a context (see internal.h for the locks):
 * pmc_ctx_call() runs a function with ctx->lock held and IRQs off, on
 * the CPU where the context is live (a task context whose task is
 * running there, or a CPU context's CPU), or on the caller's CPU when
 * the context is live nowhere. The scheduler hooks take the same lock,
 * so a task that starts running meanwhile sees the change when it
 * schedules its context in.
 *
 * Invariant: a context with no counters is never active, so that
 * cpu->task_ctx is NULL on every CPU once the last counter is gone and
 * pmc_sched_key can turn the hooks off.
 */
#include <linux/cpuhotplug.h>
#include <linux/sched/clock.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/smp.h>

#include "internal.h"

DEFINE_STATIC_KEY_FALSE(pmc_sched_key);

/* Per-CPU state; only touched on its own CPU with IRQs off. */
struct pmc_cpu {
	struct pmc_context ctx;		/* per-CPU counters */
	struct pmc_context *task_ctx;	/* task context active here */
};

static DEFINE_PER_CPU(struct pmc_cpu, pmc_cpu);
static struct kmem_cache *pmc_ctx_cache;

static void pmc_ctx_init(struct pmc_context *ctx)
{
	raw_spin_lock_init(&ctx->lock);
	mutex_init(&ctx->mutex);
	refcount_set(&ctx->refcount, 1);
	INIT_LIST_HEAD(&ctx->pinned_groups);
	INIT_LIST_HEAD(&ctx->flexible_groups);
	ctx->cpu = -1;
}

/*
 * Context time: nanoseconds during which the context was active. It
 * advances only here, once per operation on the context, so all the
 * counters one operation turns on or off switch at the same instant,
 * and time_enabled == time_running holds exactly for a counter that
 * was never left out.
 */
static void pmc_ctx_update_time(struct pmc_context *ctx)
{
	u64 now;

	if (!ctx->is_active)
		return;
	now = local_clock();
	if (now > ctx->timestamp) {
		ctx->time += now - ctx->timestamp;
		ctx->timestamp = now;
	}
}

void pmc_counter_update_time(struct pmc_counter *counter)
{
	u64 now = counter->ctx->time;
	u64 delta = now - counter->tstamp;

	if (counter->state >= PMC_STATE_INACTIVE)
		counter->time_enabled += delta;
	if (counter->state == PMC_STATE_ACTIVE)
		counter->time_running += delta;
	counter->tstamp = now;
}

/* Bring count and times up to date; ctx->lock held, on the live CPU. */
void pmc_counter_fold(struct pmc_counter *counter)
{
	if (counter->state == PMC_STATE_ACTIVE)
		counter->pmu->read(counter);
	pmc_counter_update_time(counter);
}

static void pmc_counter_set_state(struct pmc_counter *counter,
				  enum pmc_state state)
{
	pmc_counter_update_time(counter);
	counter->state = state;
}

static int pmc_counter_sched_in(struct pmc_counter *counter)
{
	int ret;

	if (counter->state != PMC_STATE_INACTIVE)
		return 0;
	if (counter->cpu >= 0 && counter->cpu != smp_processor_id())
		return 0;
	ret = counter->pmu->add(counter);
	if (ret)
		return ret;
	pmc_counter_set_state(counter, PMC_STATE_ACTIVE);
	counter->oncpu = smp_processor_id();
	return 0;
}

static void pmc_counter_sched_out(struct pmc_counter *counter)
{
	if (counter->state != PMC_STATE_ACTIVE)
		return;
	counter->pmu->del(counter);
	pmc_counter_set_state(counter, PMC_STATE_INACTIVE);
	counter->oncpu = -1;
}

static void pmc_group_sched_out(struct pmc_counter *leader)
{
	struct pmc_counter *pos;

	for_each_group_counter(pos, leader)
		pmc_counter_sched_out(pos);
}

/* All of the group's enabled counters go on, or none does. */
static int pmc_group_sched_in(struct pmc_counter *leader)
{
	struct pmc_counter *pos, *failed = NULL;
	int ret = 0;

	if (leader->state != PMC_STATE_INACTIVE)
		return 0;
	if (leader->cpu >= 0 && leader->cpu != smp_processor_id())
		return 0;
	for_each_group_counter(pos, leader) {
		ret = pmc_counter_sched_in(pos);
		if (ret) {
			failed = pos;
			break;
		}
	}
	if (!failed)
		return 0;
	for_each_group_counter(pos, leader) {
		if (pos == failed)
			break;
		pmc_counter_sched_out(pos);
	}
	return ret;
}

/* A pinned group that cannot go on enters the error state. */
static void pmc_group_sched_in_or_fail(struct pmc_counter *leader)
{
	if (pmc_group_sched_in(leader) && leader->attr.pinned)
		pmc_counter_set_state(leader, PMC_STATE_ERROR);
}

static void pmc_ctx_sched_in(struct pmc_context *ctx)
{
	struct pmc_counter *leader;

	ctx->cpu = smp_processor_id();
	ctx->timestamp = local_clock();
	ctx->is_active = true;
	list_for_each_entry(leader, &ctx->pinned_groups, group_entry)
		pmc_group_sched_in_or_fail(leader);
	list_for_each_entry(leader, &ctx->flexible_groups, group_entry)
		pmc_group_sched_in_or_fail(leader);
}

static void pmc_ctx_sched_out(struct pmc_context *ctx)
{
	struct pmc_counter *leader;

	pmc_ctx_update_time(ctx);
	ctx->is_active = false;
	list_for_each_entry(leader, &ctx->pinned_groups, group_entry)
		pmc_group_sched_out(leader);
	list_for_each_entry(leader, &ctx->flexible_groups, group_entry)
		pmc_group_sched_out(leader);
	ctx->cpu = -1;
}

/* Task context @ctx starts counting on this CPU; ctx->lock held. */
static void pmc_task_ctx_activate(struct pmc_context *ctx)
{
	struct pmc_cpu *cpuc = this_cpu_ptr(&pmc_cpu);

	if (ctx->is_active || !ctx->nr_counters)
		return;
	WARN_ON_ONCE(cpuc->task_ctx);
	pmc_ctx_sched_in(ctx);
	cpuc->task_ctx = ctx;
}

static void pmc_task_ctx_deactivate(struct pmc_context *ctx)
{
	struct pmc_cpu *cpuc = this_cpu_ptr(&pmc_cpu);

	if (!ctx->is_active)
		return;
	WARN_ON_ONCE(cpuc->task_ctx != ctx);
	pmc_ctx_sched_out(ctx);
	cpuc->task_ctx = NULL;
}

void __pmc_task_sched_out(struct task_struct *prev, struct task_struct *next)
{
	struct pmc_cpu *cpuc = this_cpu_ptr(&pmc_cpu);
	struct pmc_context *ctx = cpuc->task_ctx;

	__pmc_sw_event(PMC_SW_CONTEXT_SWITCHES, 1, NULL, 0);
	if (!ctx)
		return;
	raw_spin_lock(&ctx->lock);
	pmc_task_ctx_deactivate(ctx);
	raw_spin_unlock(&ctx->lock);
}

void __pmc_task_sched_in(struct task_struct *prev, struct task_struct *task)
{
	struct pmc_context *ctx = task->pmc_ctx;

	if (ctx) {
		raw_spin_lock(&ctx->lock);
		if (ctx->task == task)
			pmc_task_ctx_activate(ctx);
		raw_spin_unlock(&ctx->lock);
	}
	if (task->pmc_migrated) {
		task->pmc_migrated = 0;
		__pmc_sw_event(PMC_SW_CPU_MIGRATIONS, 1, NULL, 0);
	}
}

struct pmc_ctx_call_args {
	struct pmc_context *ctx;
	pmc_ctx_fn fn;
	void *arg;
	bool done;
};

/* IPI handler: run the function if the context is live here. */
static void pmc_ctx_call_remote(void *info)
{
	struct pmc_ctx_call_args *args = info;
	struct pmc_context *ctx = args->ctx;

	raw_spin_lock(&ctx->lock);
	if (ctx->task) {
		if (ctx->task != current)
			goto out;	/* it moved on: the caller retries */
	} else if (!ctx->is_active || ctx->cpu != smp_processor_id()) {
		goto out;
	}
	pmc_ctx_update_time(ctx);
	args->fn(ctx, args->arg);
	/* A running task's context is active exactly when it has counters. */
	if (ctx->task && ctx->nr_counters)
		pmc_task_ctx_activate(ctx);
	else if (ctx->task)
		pmc_task_ctx_deactivate(ctx);
	args->done = true;
out:
	raw_spin_unlock(&ctx->lock);
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
	unsigned long flags;
	int cpu;

	might_sleep();
	for (;;) {
		raw_spin_lock_irqsave(&ctx->lock, flags);
		cpu = pmc_ctx_live_cpu(ctx);
		if (cpu < 0) {
			pmc_ctx_update_time(ctx);
			fn(ctx, arg);
			raw_spin_unlock_irqrestore(&ctx->lock, flags);
			return 0;
		}
		raw_spin_unlock_irqrestore(&ctx->lock, flags);

		smp_call_function_single(cpu, pmc_ctx_call_remote, &args, 1);
		if (args.done)
			return 0;
		cond_resched();
	}
}

struct pmc_context *pmc_cpu_ctx_get(int cpu)
{
	return &per_cpu(pmc_cpu, cpu).ctx;
}

/* The context of @task, created on first use, with a reference held. */
struct pmc_context *pmc_task_ctx_get(struct task_struct *task)
{
	struct pmc_context *ctx, *new;

	new = kmem_cache_zalloc(pmc_ctx_cache, GFP_KERNEL);
	if (!new)
		return ERR_PTR(-ENOMEM);
	pmc_ctx_init(new);
	new->task = task;

	task_lock(task);
	ctx = task->pmc_ctx;
	if (ctx) {
		refcount_inc(&ctx->refcount);
	} else if (task->flags & PF_EXITING) {
		ctx = ERR_PTR(-ESRCH);
	} else {
		/* One reference for the task, one for the caller. */
		refcount_inc(&new->refcount);
		WRITE_ONCE(task->pmc_ctx, new);
		ctx = new;
		new = NULL;
	}
	task_unlock(task);
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

static struct list_head *pmc_group_list(struct pmc_context *ctx,
					struct pmc_counter *leader)
{
	return leader->attr.pinned ? &ctx->pinned_groups :
				     &ctx->flexible_groups;
}

static void __pmc_install(struct pmc_context *ctx, void *arg)
{
	struct pmc_counter *counter = arg;
	struct pmc_counter *leader = counter->leader;

	counter->tstamp = ctx->time;
	if (pmc_is_leader(counter)) {
		list_add_tail(&counter->group_entry, pmc_group_list(ctx, counter));
	} else {
		list_add_tail(&counter->group_entry, &leader->siblings);
		leader->nr_siblings++;
	}
	ctx->nr_counters++;
	if (!ctx->is_active)
		return;
	if (pmc_is_leader(counter))
		pmc_group_sched_in_or_fail(counter);
	else if (leader->state == PMC_STATE_ACTIVE)
		pmc_counter_sched_in(counter);
}

/* Attach a new counter to its context; ctx->mutex held by the caller. */
int pmc_install(struct pmc_counter *counter)
{
	struct pmc_context *ctx = counter->ctx;

	lockdep_assert_held(&ctx->mutex);
	if (ctx->task == PMC_TASK_DEAD)
		return -ESRCH;
	return pmc_ctx_call(ctx, __pmc_install, counter);
}

/*
 * Detach a closing counter. Members of a closing leader become leaders
 * of their own groups and keep counting.
 */
static void __pmc_remove(struct pmc_context *ctx, void *arg)
{
	struct pmc_counter *counter = arg, *member, *tmp;

	pmc_counter_sched_out(counter);
	list_del(&counter->group_entry);
	if (pmc_is_leader(counter)) {
		list_for_each_entry_safe(member, tmp, &counter->siblings,
					 group_entry) {
			member->leader = member;
			member->attr.pinned = 0;
			list_move_tail(&member->group_entry,
				       &ctx->flexible_groups);
		}
		counter->nr_siblings = 0;
	} else {
		counter->leader->nr_siblings--;
	}
	ctx->nr_counters--;
}

void pmc_remove(struct pmc_counter *counter)
{
	struct pmc_context *ctx = counter->ctx;

	mutex_lock(&ctx->mutex);
	pmc_ctx_call(ctx, __pmc_remove, counter);
	mutex_unlock(&ctx->mutex);
}

static void __pmc_enable(struct pmc_context *ctx, void *arg)
{
	struct pmc_counter *counter = arg;
	struct pmc_counter *leader = counter->leader;

	if (counter->state >= PMC_STATE_INACTIVE)
		return;
	pmc_counter_set_state(counter, PMC_STATE_INACTIVE);
	if (!ctx->is_active)
		return;
	if (counter == leader)
		pmc_group_sched_in_or_fail(counter);
	else if (leader->state == PMC_STATE_ACTIVE)
		pmc_counter_sched_in(counter);
}

static void __pmc_disable(struct pmc_context *ctx, void *arg)
{
	struct pmc_counter *counter = arg;

	if (counter->state == PMC_STATE_OFF)
		return;
	if (pmc_is_leader(counter))
		pmc_group_sched_out(counter);
	else
		pmc_counter_sched_out(counter);
	pmc_counter_set_state(counter, PMC_STATE_OFF);
}

void pmc_enable(struct pmc_counter *counter)
{
	pmc_ctx_call(counter->ctx, __pmc_enable, counter);
}

void pmc_disable(struct pmc_counter *counter)
{
	pmc_ctx_call(counter->ctx, __pmc_disable, counter);
}

/* prctl(): enable or disable every group leader on the calling task. */
static int pmc_task_set_enabled(bool enable)
{
	struct task_struct *task = current;
	struct pmc_context *ctx = task->pmc_ctx;
	struct pmc_counter *leader, *tmp;
	struct list_head *lists[2];
	int i;

	if (!ctx)
		return 0;
	/* Our own context, and exit cannot run under us: no references. */
	mutex_lock(&ctx->mutex);
	lists[0] = &ctx->pinned_groups;
	lists[1] = &ctx->flexible_groups;
	for (i = 0; i < ARRAY_SIZE(lists); i++) {
		list_for_each_entry_safe(leader, tmp, lists[i], group_entry) {
			if (enable)
				pmc_enable(leader);
			else
				pmc_disable(leader);
		}
	}
	mutex_unlock(&ctx->mutex);
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

/*
 * The task is exiting: stop its context for good. Counters stay attached
 * to the dead context, keep their final counts and stop their clocks;
 * they go away with their file descriptors.
 */
void __pmc_exit_task(struct task_struct *task)
{
	struct pmc_context *ctx = task->pmc_ctx;
	unsigned long flags;

	mutex_lock(&ctx->mutex);
	task_lock(task);
	raw_spin_lock_irqsave(&ctx->lock, flags);
	if (ctx->is_active)
		pmc_task_ctx_deactivate(ctx);
	ctx->task = PMC_TASK_DEAD;
	WRITE_ONCE(task->pmc_ctx, NULL);
	raw_spin_unlock_irqrestore(&ctx->lock, flags);
	task_unlock(task);
	mutex_unlock(&ctx->mutex);
	pmc_ctx_put(ctx);
}

/* CPU hotplug: a CPU context is active exactly while its CPU is online. */
static int pmc_cpu_online(unsigned int cpu)
{
	struct pmc_context *ctx = pmc_cpu_ctx_get(cpu);

	raw_spin_lock_irq(&ctx->lock);
	pmc_ctx_sched_in(ctx);
	raw_spin_unlock_irq(&ctx->lock);
	return 0;
}

static int pmc_cpu_offline(unsigned int cpu)
{
	struct pmc_context *ctx = pmc_cpu_ctx_get(cpu);

	raw_spin_lock_irq(&ctx->lock);
	pmc_ctx_sched_out(ctx);
	raw_spin_unlock_irq(&ctx->lock);
	return 0;
}

static int __init pmc_context_init(void)
{
	int cpu, ret;

	pmc_ctx_cache = kmem_cache_create("pmc_context",
					  sizeof(struct pmc_context), 0,
					  SLAB_PANIC | SLAB_NO_MERGE, NULL);
	for_each_possible_cpu(cpu) {
		struct pmc_context *ctx = pmc_cpu_ctx_get(cpu);

		pmc_ctx_init(ctx);
		ctx->cpu = cpu;
	}
	ret = cpuhp_setup_state(CPUHP_AP_ONLINE_DYN, "pmc:online",
				pmc_cpu_online, pmc_cpu_offline);
	return ret < 0 ? ret : 0;
}
core_initcall(pmc_context_init);
