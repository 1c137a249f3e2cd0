/* SPDX-License-Identifier: GPL-2.0 */
/*
 * events-lite: the kernel-internal interface.
 *
 * The counter object and backend interface for the arch drivers, and
 * the hooks. Everything here is cheap when no counter exists: the scheduler and
 * software-event hooks sit behind pmc_sched_key, which stays off until
 * the first counter is created and goes off again when the last one is
 * freed. Fork and exit only test a task field.
 */
#ifndef _LINUX_PMC_H
#define _LINUX_PMC_H

#include <uapi/linux/pmc.h>
#include <linux/atomic.h>
#include <linux/hrtimer.h>
#include <linux/irq_work.h>
#include <linux/jump_label.h>
#include <linux/list.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/wait.h>
#include <linux/sched.h>
#include <asm/local64.h>

struct pt_regs;
struct pmc_context;
struct pmc_ring_buffer;
struct vm_area_struct;

#ifdef CONFIG_PMC_EVENTS

DECLARE_STATIC_KEY_FALSE(pmc_sched_key);

enum pmc_state {
	PMC_STATE_ERROR		= -2,	/* pinned group that did not fit */
	PMC_STATE_OFF		= -1,	/* disabled */
	PMC_STATE_INACTIVE	= 0,	/* enabled, not on the CPU */
	PMC_STATE_ACTIVE	= 1,	/* enabled and counting */
};

struct pmc_counter;

/*
 * A counting backend. init() and destroy() run in process context at
 * pmc_open() and at the final close; add(), del() and read() run with
 * the context lock held, IRQs off, on the CPU the counter is (to be)
 * active on.
 */
struct pmc_pmu {
	int (*init)(struct pmc_counter *counter);
	void (*destroy)(struct pmc_counter *counter);	/* optional */
	int (*add)(struct pmc_counter *counter);	/* 0 or -EAGAIN */
	void (*del)(struct pmc_counter *counter);	/* folds the count */
	void (*read)(struct pmc_counter *counter);	/* folds the count */
};

struct pmc_counter {
	/* Set at pmc_open(), then constant. */
	struct pmc_attr attr;
	u64 id;				/* unique, for LOST records */
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
	bool group_on_pmu;		/* leader: the group holds PMU slots */

	/* Times in ctx time (ns): ctx->lock. */
	u64 time_enabled;
	u64 time_running;
	u64 tstamp;			/* ctx time they were last brought up to */

	/*
	 * The 64-bit virtual count. Added to only on the CPU the counter is
	 * active on (process context, hardirq or NMI); read anywhere.
	 */
	local64_t count;
	u64 attempt_count;		/* count before a group went on */

	/* Overflow interrupts taken (sampling counters). */
	atomic64_t overflows;

	/*
	 * Sampling (ring_buffer.c, sample.c). rb is set and cleared under
	 * mmap_mutex and read under RCU by record writers in any context,
	 * NMI included; wakeups go through wakeup_work, so that writers
	 * never take a lock that a waker holds.
	 */
	struct pmc_ring_buffer __rcu *rb;
	struct mutex mmap_mutex;
	wait_queue_head_t waitq;
	struct fasync_struct *fasync;
	struct irq_work wakeup_work;
	struct irq_work disable_work;	/* REFRESH budget used up */
	atomic_t refresh_left;		/* overflows left; <0: no REFRESH */
	bool kernel_visible;		/* may samples show kernel addresses */
	local64_t sw_period_left;	/* software events: to next sample */
	struct hrtimer sample_timer;	/* software clocks: the period */

	/*
	 * Inherit: a copy on a child task points at the original counter,
	 * whose child totals it adds to when the child exits. The original
	 * is freed when its file and all its copies are gone.
	 */
	refcount_t refcount;
	struct pmc_counter *parent;	/* original, for a copy; else NULL */
	atomic64_t child_count;
	atomic64_t child_time_enabled;
	atomic64_t child_time_running;

	/*
	 * Backend state, owned by the pmu: changed only on the CPU the
	 * counter is active on, with IRQs off; hw.* is also read and
	 * written by the overflow NMI, hence the local64_t.
	 */
	union {
		u64 clock_start;		/* software clocks */
		struct hlist_node sw_node;	/* software events */
		struct {			/* hardware counters */
			int idx;		/* counter, or -1 */
			u64 sel;		/* event select, without EN */
			u64 period;
			local64_t prev_count;	/* raw value last folded */
			local64_t period_left;	/* events to the next overflow */
		} hw;
	};

	struct rcu_head rcu;
};

/* For hardware backends (arch code). */
void pmc_register_hw_pmu(const struct pmc_pmu *pmu);
void pmc_counter_overflow(struct pmc_counter *counter, struct pt_regs *regs,
			  u64 addr);

/* Records for sampling counters, from mm and exec. */
void __pmc_mmap_event(struct vm_area_struct *vma, bool unmap);
void __pmc_comm_event(struct task_struct *task);

static inline void pmc_mmap_event(struct vm_area_struct *vma)
{
	if (static_branch_unlikely(&pmc_sched_key) && current->pmc_ctx)
		__pmc_mmap_event(vma, false);
}

static inline void pmc_munmap_event(struct vm_area_struct *vma)
{
	if (static_branch_unlikely(&pmc_sched_key) && current->pmc_ctx)
		__pmc_mmap_event(vma, true);
}

static inline void pmc_comm_event(struct task_struct *task)
{
	if (static_branch_unlikely(&pmc_sched_key) && task == current &&
	    current->pmc_ctx)
		__pmc_comm_event(task);
}


void __pmc_task_sched_out(struct task_struct *prev, struct task_struct *next);
void __pmc_task_sched_in(struct task_struct *prev, struct task_struct *task);
void __pmc_sw_event(enum pmc_sw_id id, u64 nr, struct pt_regs *regs, u64 addr);
void __pmc_exit_task(struct task_struct *task);
int __pmc_inherit_task(struct task_struct *child);
void __pmc_free_task(struct task_struct *child);
int pmc_task_enable(void);
int pmc_task_disable(void);

/* Called from prepare_task_switch(), IRQs off, rq lock held. */
static inline void pmc_task_sched_out(struct task_struct *prev,
				      struct task_struct *next)
{
	if (static_branch_unlikely(&pmc_sched_key))
		__pmc_task_sched_out(prev, next);
}

/* Called from finish_task_switch(), IRQs off, rq lock held. */
static inline void pmc_task_sched_in(struct task_struct *prev,
				     struct task_struct *task)
{
	if (static_branch_unlikely(&pmc_sched_key))
		__pmc_task_sched_in(prev, task);
}

/* Called from set_task_cpu(): the next sched_in counts a migration. */
static inline void pmc_task_migrate(struct task_struct *task)
{
	if (static_branch_unlikely(&pmc_sched_key))
		task->pmc_migrated = 1;
}

/* Software event @id happened @nr times on this CPU. */
static inline void pmc_sw_event(enum pmc_sw_id id, u64 nr,
				struct pt_regs *regs, u64 addr)
{
	if (static_branch_unlikely(&pmc_sched_key))
		__pmc_sw_event(id, nr, regs, addr);
}

/* copy_process(): the child gets copies of the inherited counters. */
static inline int pmc_init_task(struct task_struct *task,
				unsigned long clone_flags)
{
	task->pmc_ctx = NULL;
	task->pmc_migrated = 0;
	if (likely(!current->pmc_ctx))
		return 0;
	return __pmc_inherit_task(task);
}

/* copy_process() failed after pmc_init_task(). */
static inline void pmc_free_task(struct task_struct *task)
{
	if (task->pmc_ctx)
		__pmc_free_task(task);
}

/* do_exit(): detach the task's counters; they keep their final counts. */
static inline void pmc_exit_task(struct task_struct *task)
{
	if (READ_ONCE(task->pmc_ctx))
		__pmc_exit_task(task);
}

#else /* !CONFIG_PMC_EVENTS */

static inline void pmc_task_sched_out(struct task_struct *prev,
				      struct task_struct *next) { }
static inline void pmc_task_sched_in(struct task_struct *prev,
				     struct task_struct *task) { }
static inline void pmc_task_migrate(struct task_struct *task) { }
static inline void pmc_sw_event(enum pmc_sw_id id, u64 nr,
				struct pt_regs *regs, u64 addr) { }
static inline int pmc_init_task(struct task_struct *task,
				unsigned long clone_flags) { return 0; }
static inline void pmc_free_task(struct task_struct *task) { }
static inline void pmc_exit_task(struct task_struct *task) { }
static inline void pmc_mmap_event(struct vm_area_struct *vma) { }
static inline void pmc_munmap_event(struct vm_area_struct *vma) { }
static inline void pmc_comm_event(struct task_struct *task) { }
static inline int pmc_task_enable(void) { return -EINVAL; }
static inline int pmc_task_disable(void) { return -EINVAL; }

#endif /* CONFIG_PMC_EVENTS */

#endif /* _LINUX_PMC_H */
