/* SPDX-License-Identifier: GPL-2.0 */
/*
 * events-lite internal objects: counters, contexts and backends.
 *
 * Locking, once for the whole subsystem:
 *
 *  - pmc_context::mutex serialises the changes that add or remove
 *    counters of a context (pmc_open(), close(), task exit). Process
 *    context only.
 *  - pmc_context::lock (raw, IRQ-safe) protects the group lists, the
 *    counter states and times, and is_active. It is taken by the
 *    scheduler hooks (IRQs off, rq lock held), by the IPI handlers of
 *    pmc_ctx_call() (hardirq), and by process context with IRQs off.
 *    Nesting: rq lock -> ctx lock, task_lock -> ctx lock. Nothing that
 *    can take an rq lock (wakeups) may be called under it.
 *  - The hardware side of a counter (pmu->add/del/read) is touched only
 *    on the CPU where its context is active, with ctx lock held; a
 *    change from another CPU goes there through pmc_ctx_call().
 *  - The software-event lists (software.c) are per CPU and RCU-walked
 *    from any context; counters are freed after a grace period.
 */
#ifndef _KERNEL_EVENTS_LITE_INTERNAL_H
#define _KERNEL_EVENTS_LITE_INTERNAL_H

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/pmc.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/spinlock.h>
#include <asm/local64.h>

enum pmc_state {
	PMC_STATE_ERROR		= -2,	/* pinned group that did not fit */
	PMC_STATE_OFF		= -1,	/* disabled */
	PMC_STATE_INACTIVE	= 0,	/* enabled, not on the CPU */
	PMC_STATE_ACTIVE	= 1,	/* enabled and counting */
};

struct pmc_counter;

/*
 * A counting backend. init() runs at pmc_open() in process context;
 * add(), del() and read() run with the context lock held, IRQs off, on
 * the CPU the counter is (to be) active on.
 */
struct pmc_pmu {
	int (*init)(struct pmc_counter *counter);
	int (*add)(struct pmc_counter *counter);	/* 0 or -EAGAIN */
	void (*del)(struct pmc_counter *counter);	/* folds the count */
	void (*read)(struct pmc_counter *counter);	/* folds the count */
};

struct pmc_counter {
	/* Set at pmc_open(), then constant. */
	struct pmc_attr attr;
	const struct pmc_pmu *pmu;
	struct pmc_context *ctx;
	int cpu;			/* count only on this CPU, or -1 */

	/* Group links and state: ctx->lock (and ctx->mutex to change them). */
	struct pmc_counter *leader;	/* itself for a group leader */
	struct list_head group_entry;	/* ctx group list or leader->siblings */
	struct list_head siblings;	/* members, in creation order */
	int nr_siblings;
	enum pmc_state state;
	int oncpu;			/* CPU while ACTIVE, else -1 */

	/* Times in ctx time (ns): ctx->lock. */
	u64 time_enabled;
	u64 time_running;
	u64 tstamp;			/* ctx time they were last brought up to */

	/*
	 * The 64-bit virtual count. Added to only on the CPU the counter is
	 * active on (process context, hardirq or NMI); read anywhere.
	 */
	local64_t count;

	/* Backend state, owned by the pmu under the rules above. */
	union {
		u64 clock_start;		/* software clocks */
		struct hlist_node sw_node;	/* software events */
	};

	struct rcu_head rcu;
};

struct pmc_context {
	raw_spinlock_t lock;
	struct mutex mutex;		/* adding and removing counters */
	refcount_t refcount;		/* task + one per counter */

	/* ctx->lock: */
	struct list_head pinned_groups;
	struct list_head flexible_groups;
	int nr_counters;
	bool is_active;			/* scheduled in on ->cpu */
	int cpu;
	u64 time;			/* ns accumulated while active */
	u64 timestamp;			/* local_clock() when last updated */

	/*
	 * NULL for a CPU context. For a task context the task, written under
	 * ctx->lock and task_lock(); PMC_TASK_DEAD once it has exited.
	 */
	struct task_struct *task;

	struct rcu_head rcu;
};

#define PMC_TASK_DEAD	((struct task_struct *)-1L)

static inline bool pmc_is_leader(struct pmc_counter *counter)
{
	return counter->leader == counter;
}

/* The leader, then its members in creation order; ctx->lock held. */
static inline struct pmc_counter *pmc_group_next(struct pmc_counter *leader,
						 struct pmc_counter *pos)
{
	struct list_head *next = pos == leader ? leader->siblings.next :
						 pos->group_entry.next;

	if (next == &leader->siblings)
		return NULL;
	return list_entry(next, struct pmc_counter, group_entry);
}

#define for_each_group_counter(pos, leader)				\
	for (pos = (leader); pos; pos = pmc_group_next(leader, pos))

/* context.c */
typedef void (*pmc_ctx_fn)(struct pmc_context *ctx, void *arg);
int pmc_ctx_call(struct pmc_context *ctx, pmc_ctx_fn fn, void *arg);
struct pmc_context *pmc_task_ctx_get(struct task_struct *task);
struct pmc_context *pmc_cpu_ctx_get(int cpu);
void pmc_ctx_put(struct pmc_context *ctx);
int pmc_install(struct pmc_counter *counter);
void pmc_remove(struct pmc_counter *counter);
void pmc_enable(struct pmc_counter *counter);
void pmc_disable(struct pmc_counter *counter);
void pmc_counter_update_time(struct pmc_counter *counter);
void pmc_counter_fold(struct pmc_counter *counter);

/* software.c */
extern const struct pmc_pmu pmc_sw_pmu;

/* core.c */
extern int sysctl_pmc_paranoid;

#endif /* _KERNEL_EVENTS_LITE_INTERNAL_H */
