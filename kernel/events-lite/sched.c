// SPDX-License-Identifier: GPL-2.0
/*
 * events-lite scheduling: putting groups on and off one CPU's PMU.
 *
 * Everything here runs on the CPU concerned with IRQs off and the locks
 * of the contexts it touches held (pmc_cpu_lock(): the CPU context's
 * first, then the task context's): from the context-switch hooks, from
 * the pmc_ctx_call() IPI handler and from the rotation hrtimer.
 *
 * Groups go on in this order: CPU pinned, task pinned, CPU flexible,
 * task flexible, and a group goes on whole or not at all. A pinned
 * group that does not fit enters the error state. A flexible group that
 * does not fit waits: while one waits, an hrtimer rotates the flexible
 * lists every pmc_mux_interval_ms, so that all of them take turns. An
 * exclusive group only goes on a PMU that no other group uses, and
 * keeps it to itself. Groups of software counters only need no PMU
 * slot: they always fit, and exclusive means nothing for them.
 */
#include <linux/hrtimer.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>

#include "internal.h"

DEFINE_PER_CPU(struct pmc_cpu, pmc_cpu);

/* Rotation interval, ms; read at each rotation. */
int sysctl_pmc_mux_interval_ms __read_mostly = 4;

/*
 * Context time: nanoseconds during which the context was active. It
 * advances only here, once per operation on the context, so all the
 * counters one operation turns on or off switch at the same instant,
 * and time_enabled == time_running holds exactly for a counter that
 * was never left out.
 */
void pmc_ctx_update_time(struct pmc_context *ctx)
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
	if (counter->state == PMC_STATE_ACTIVE) {
		u64 off = min(counter->time_off_pmu, delta);

		counter->time_running += delta - off;
		counter->time_off_pmu -= off;
	}
	counter->tstamp = now;
}

/* Bring count and times up to date; ctx->lock held, on the live CPU. */
void pmc_counter_fold(struct pmc_counter *counter)
{
	if (counter->state == PMC_STATE_ACTIVE)
		counter->pmu->read(counter);
	pmc_counter_update_time(counter);
}

void pmc_counter_set_state(struct pmc_counter *counter, enum pmc_state state)
{
	pmc_counter_update_time(counter);
	counter->state = state;
}

int pmc_counter_sched_in(struct pmc_counter *counter)
{
	int ret;

	if (counter->state != PMC_STATE_INACTIVE)
		return 0;
	if (counter->cpu >= 0 && counter->cpu != smp_processor_id())
		return 0;
	if (counter->freq_adapt)	/* before its first overflow can come */
		pmc_freq_sched(counter, true);
	ret = counter->pmu->add(counter);
	if (ret)
		return ret;
	pmc_counter_set_state(counter, PMC_STATE_ACTIVE);
	counter->oncpu = smp_processor_id();
	return 0;
}

void pmc_counter_sched_out(struct pmc_counter *counter)
{
	if (counter->state != PMC_STATE_ACTIVE)
		return;
	counter->pmu->del(counter);
	if (counter->freq_adapt)
		pmc_freq_sched(counter, false);
	pmc_counter_set_state(counter, PMC_STATE_INACTIVE);
	counter->oncpu = -1;
}

bool pmc_group_uses_pmu(struct pmc_counter *leader)
{
	struct pmc_counter *pos;

	for_each_group_counter(pos, leader)
		if (pos->pmu != &pmc_sw_pmu)
			return true;
	return false;
}

void pmc_group_sched_out(struct pmc_counter *leader)
{
	struct pmc_cpu *cpuc = this_cpu_ptr(&pmc_cpu);
	struct pmc_counter *pos;

	if (leader->state == PMC_STATE_ACTIVE && leader->group_on_pmu) {
		cpuc->pmu_groups--;
		if (leader->attr.exclusive)
			cpuc->exclusive = false;
		leader->group_on_pmu = false;
	}
	for_each_group_counter(pos, leader)
		pmc_counter_sched_out(pos);
}

/* All of the group's enabled counters go on, or none does: 0 or -EAGAIN. */
int pmc_group_sched_in(struct pmc_counter *leader)
{
	struct pmc_cpu *cpuc = this_cpu_ptr(&pmc_cpu);
	struct pmc_counter *pos, *failed = NULL;
	bool on_pmu;

	if (leader->state != PMC_STATE_INACTIVE)
		return 0;
	if (leader->cpu >= 0 && leader->cpu != smp_processor_id())
		return 0;
	on_pmu = pmc_group_uses_pmu(leader);
	if (on_pmu && (cpuc->exclusive ||
		       (leader->attr.exclusive && cpuc->pmu_groups)))
		return -EAGAIN;
	for_each_group_counter(pos, leader) {
		pos->attempt_count = local64_read(&pos->count);
		if (pmc_counter_sched_in(pos)) {
			failed = pos;
			break;
		}
	}
	if (failed) {
		/* It never went on: what the members counted meanwhile is void. */
		for_each_group_counter(pos, leader) {
			if (pos == failed)
				break;
			pmc_counter_sched_out(pos);
			local64_set(&pos->count, pos->attempt_count);
		}
		return -EAGAIN;
	}
	if (on_pmu) {
		cpuc->pmu_groups++;
		if (leader->attr.exclusive)
			cpuc->exclusive = true;
		leader->group_on_pmu = true;
	}
	return 0;
}

static void pmc_groups_in(struct pmc_cpu *cpuc, struct pmc_context *ctx,
			  bool pinned)
{
	struct pmc_counter *leader;

	if (!ctx || !ctx->is_active)
		return;
	list_for_each_entry(leader, pinned ? &ctx->pinned_groups :
			    &ctx->flexible_groups, group_entry) {
		if (!pmc_group_sched_in(leader))
			continue;
		if (pinned)
			pmc_counter_set_state(leader, PMC_STATE_ERROR);
		else
			cpuc->waiting = true;
	}
}

static void pmc_groups_out(struct pmc_context *ctx, bool pinned)
{
	struct pmc_counter *leader;

	list_for_each_entry(leader, pinned ? &ctx->pinned_groups :
			    &ctx->flexible_groups, group_entry)
		pmc_group_sched_out(leader);
}

static void pmc_mux_start(struct pmc_cpu *cpuc)
{
	u32 ms = max(READ_ONCE(sysctl_pmc_mux_interval_ms), 1);

	if (cpuc->waiting && !hrtimer_is_queued(&cpuc->mux_timer))
		hrtimer_start(&cpuc->mux_timer, ms_to_ktime(ms),
			      HRTIMER_MODE_REL_PINNED_HARD);
}

/*
 * Put everything on this CPU's PMU again, in priority order. CPU pinned
 * groups stay on: nothing outranks them.
 */
void pmc_cpu_resched(struct pmc_cpu *cpuc)
{
	struct pmc_context *task_ctx = cpuc->task_ctx;

	if (task_ctx) {
		pmc_groups_out(task_ctx, false);
		pmc_groups_out(task_ctx, true);
	}
	pmc_groups_out(&cpuc->ctx, false);
	cpuc->waiting = false;
	pmc_groups_in(cpuc, &cpuc->ctx, true);
	pmc_groups_in(cpuc, task_ctx, true);
	pmc_groups_in(cpuc, &cpuc->ctx, false);
	pmc_groups_in(cpuc, task_ctx, false);
	pmc_mux_start(cpuc);
	pmc_ctx_update_userpages(task_ctx);
}

void pmc_ctx_sched_in(struct pmc_context *ctx)
{
	ctx->cpu = smp_processor_id();
	ctx->timestamp = local_clock();
	ctx->is_active = true;
}

void pmc_ctx_sched_out(struct pmc_context *ctx)
{
	pmc_ctx_update_time(ctx);
	pmc_groups_out(ctx, false);
	pmc_groups_out(ctx, true);
	ctx->is_active = false;
	ctx->cpu = -1;
}

/*
 * Task context @ctx starts counting on this CPU; both locks held. Only
 * when both the task and the CPU use the PMU can the task's groups
 * outrank groups already on it; otherwise they just go on.
 */
void pmc_task_ctx_activate(struct pmc_cpu *cpuc, struct pmc_context *ctx)
{
	if (ctx->is_active || !ctx->nr_counters)
		return;
	WARN_ON_ONCE(cpuc->task_ctx);
	pmc_ctx_sched_in(ctx);
	cpuc->task_ctx = ctx;
	if (ctx->nr_pmu && cpuc->ctx.nr_pmu) {
		pmc_ctx_update_time(&cpuc->ctx);
		pmc_cpu_resched(cpuc);
		return;
	}
	pmc_groups_in(cpuc, ctx, true);
	pmc_groups_in(cpuc, ctx, false);
	pmc_mux_start(cpuc);
	pmc_ctx_update_userpages(ctx);
}

void pmc_task_ctx_deactivate(struct pmc_cpu *cpuc, struct pmc_context *ctx)
{
	if (!ctx->is_active)
		return;
	WARN_ON_ONCE(cpuc->task_ctx != ctx);
	pmc_ctx_sched_out(ctx);
	pmc_ctx_update_userpages(ctx);	/* the clock stops for them */
	cpuc->task_ctx = NULL;
	/* CPU groups that waited for the PMU may fit now. */
	if (cpuc->waiting) {
		pmc_ctx_update_time(&cpuc->ctx);
		cpuc->waiting = false;
		pmc_groups_in(cpuc, &cpuc->ctx, false);
	}
}

/* Lock this CPU's context and the task context active on it. */
void pmc_cpu_lock(struct pmc_cpu *cpuc, struct pmc_context *task_ctx)
{
	raw_spin_lock(&cpuc->ctx.lock);
	if (task_ctx)
		raw_spin_lock(&task_ctx->lock);
}

void pmc_cpu_unlock(struct pmc_cpu *cpuc, struct pmc_context *task_ctx)
{
	if (task_ctx)
		raw_spin_unlock(&task_ctx->lock);
	raw_spin_unlock(&cpuc->ctx.lock);
}

/*
 * exclude_idle clocks of this CPU's context pause while it runs its idle
 * task (software.c). Only switches into or out of idle come here, and
 * only while the CPU context has such a counter.
 */
static void pmc_groups_idle_switch(struct list_head *groups, bool idle)
{
	struct pmc_counter *leader, *pos;

	list_for_each_entry(leader, groups, group_entry)
		for_each_group_counter(pos, leader)
			if (pos->state == PMC_STATE_ACTIVE &&
			    pos->attr.exclude_idle)
				pmc_sw_idle_switch(pos, idle);
}

static void pmc_cpu_idle_switch(struct pmc_cpu *cpuc, bool idle)
{
	struct pmc_context *ctx = &cpuc->ctx;

	guard(raw_spinlock)(&ctx->lock);
	pmc_ctx_update_time(ctx);
	pmc_groups_idle_switch(&ctx->pinned_groups, idle);
	pmc_groups_idle_switch(&ctx->flexible_groups, idle);
}

void __pmc_task_sched_out(struct task_struct *prev, struct task_struct *next)
{
	struct pmc_cpu *cpuc = this_cpu_ptr(&pmc_cpu);
	struct pmc_context *ctx = cpuc->task_ctx;

	__pmc_sw_event(PMC_SW_CONTEXT_SWITCHES, 1, NULL, 0);
	if (ctx) {
		guard(pmc_cpu_lock)(cpuc, ctx);
		pmc_task_ctx_deactivate(cpuc, ctx);
	}
	/*
	 * After the deactivation, which may put waiting CPU groups on
	 * while current is still @prev: their clocks start running, and
	 * entering idle must pause them too.
	 */
	if (unlikely(cpuc->ctx.nr_exclude_idle) &&
	    is_idle_task(prev) != is_idle_task(next))
		pmc_cpu_idle_switch(cpuc, is_idle_task(next));
}

void __pmc_task_sched_in(struct task_struct *prev, struct task_struct *task)
{
	struct pmc_cpu *cpuc = this_cpu_ptr(&pmc_cpu);
	struct pmc_context *ctx = task->pmc_ctx;

	if (ctx) {
		guard(pmc_cpu_lock)(cpuc, ctx);
		if (ctx->task == task)
			pmc_task_ctx_activate(cpuc, ctx);
	}
	if (task->pmc_migrated) {
		task->pmc_migrated = 0;
		__pmc_sw_event(PMC_SW_CPU_MIGRATIONS, 1, NULL, 0);
	}
}

/*
 * Rotation: move the first flexible group of each context to the back
 * and schedule the flexible groups again, so that groups which did not
 * fit take their turn. Runs while some flexible group waits.
 */
static enum hrtimer_restart pmc_mux_tick(struct hrtimer *timer)
{
	struct pmc_cpu *cpuc = container_of(timer, struct pmc_cpu, mux_timer);
	struct pmc_context *task_ctx = cpuc->task_ctx;
	u32 ms;

	guard(pmc_cpu_lock)(cpuc, task_ctx);
	if (cpuc->waiting) {
		pmc_ctx_update_time(&cpuc->ctx);
		pmc_groups_out(&cpuc->ctx, false);
		list_rotate_left(&cpuc->ctx.flexible_groups);
		if (task_ctx) {
			pmc_ctx_update_time(task_ctx);
			pmc_groups_out(task_ctx, false);
			if (!task_ctx->rotate_disable)
				list_rotate_left(&task_ctx->flexible_groups);
		}
		cpuc->waiting = false;
		pmc_groups_in(cpuc, &cpuc->ctx, false);
		pmc_groups_in(cpuc, task_ctx, false);
		pmc_ctx_update_userpages(task_ctx);
	}

	if (!cpuc->waiting)
		return HRTIMER_NORESTART;
	ms = max(READ_ONCE(sysctl_pmc_mux_interval_ms), 1);
	hrtimer_forward_now(timer, ms_to_ktime(ms));
	return HRTIMER_RESTART;
}

void pmc_sched_init_cpu(struct pmc_cpu *cpuc)
{
	hrtimer_setup(&cpuc->mux_timer, pmc_mux_tick, CLOCK_MONOTONIC,
		      HRTIMER_MODE_REL_PINNED_HARD);
}
