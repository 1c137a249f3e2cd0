/* SPDX-License-Identifier: GPL-2.0 */
/*
 * events-lite internal objects: counters, contexts and backends.
 *
 * Locking, once for the whole subsystem:
 *
 *  - pmc_context::mutex serialises the changes that add or remove
 *    counters of a context (pmc_open(), close(), fork, task exit).
 *    Process context only.
 *  - pmc_counter::child_mutex of an original counter (process context)
 *    guards its inherited copies' list and their folds into its child
 *    totals (inherit.c). An exiting copied group folds under its
 *    original leader's child_mutex, each member's original's nested
 *    inside it (SINGLE_DEPTH_NESTING), so that a PMC_FORMAT_GROUP
 *    read() needs the leader's only. Order: ctx->mutex -> leader's
 *    child_mutex -> member's child_mutex; never a leader's inside a
 *    member's.
 *  - pmc_context::lock (raw, IRQ-safe) protects the group lists and
 *    their order, the counter states and times, and is_active. It is
 *    taken by the scheduler hooks (IRQs off, rq lock held), by the IPI
 *    handlers of pmc_ctx_call() and the rotation hrtimer (hardirq), and
 *    by process context with IRQs off. Nesting: rq lock -> CPU context
 *    lock -> task context lock (pmc_cpu_lock()), and task_lock -> ctx
 *    lock. Nothing that can take an rq lock (wakeups) may be called
 *    under it.
 *  - The hardware side of a counter (pmu->add/del/read) is touched only
 *    on the CPU where its context is active, with ctx lock held; a
 *    change from another CPU goes there through pmc_ctx_call().
 *  - The software-event lists (software.c) are per CPU, changed with
 *    IRQs off and ctx->lock held, and walked on their CPU under RCU
 *    with preemption off, IRQs on or off as the event came; counters
 *    are freed after a grace period. The per-CPU clock list and the
 *    tick budget (throttle.c) are touched on their CPU with IRQs off.
 */
#ifndef _KERNEL_EVENTS_LITE_INTERNAL_H
#define _KERNEL_EVENTS_LITE_INTERNAL_H

#include <linux/hrtimer.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/poll.h>
#include <linux/pmc.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/spinlock.h>
#include <asm/local64.h>

struct pmc_context {
	raw_spinlock_t lock;
	struct mutex mutex;		/* adding and removing counters */
	refcount_t refcount;		/* task + one per counter */

	/* ctx->lock: */
	struct list_head pinned_groups;
	struct list_head flexible_groups;
	int nr_counters;
	int nr_exclude_idle;		/* counters with exclude_idle */
	int nr_pmu;			/* counters that need a PMU slot */
	int nr_inherit;			/* leaders with attr.inherit */
	int nr_side;			/* counters with mmap, munmap or comm */
	struct list_head userpages;	/* mapped userpage_allowed counters */
	int rotate_disable;		/* fork is walking flexible_groups */
	bool is_active;			/* scheduled in on ->cpu */
	int cpu;
	u64 time;			/* ns accumulated while active */
	u64 timestamp;			/* local_clock() when last updated */

	/*
	 * NULL for a CPU context. For a task context the task, written under
	 * ctx->lock and task_lock(); PMC_TASK_DEAD once it has exited, or
	 * exec()ed an image its counters may not watch.
	 */
	struct task_struct *task;

	struct rcu_head rcu;
};

#define PMC_TASK_DEAD	((struct task_struct *)-1L)

/*
 * Per-CPU state, touched only on its own CPU with IRQs off and this
 * CPU's context locked (pmc_cpu_lock()).
 */
struct pmc_cpu {
	struct pmc_context ctx;		/* per-CPU counters */
	struct pmc_context *task_ctx;	/* task context active here */
	int pmu_groups;			/* groups holding PMU slots */
	bool exclusive;			/* an exclusive group holds the PMU */
	bool waiting;			/* a flexible group did not fit */
	bool resched;			/* pmc_ctx_call() wants a resched */
	struct hrtimer mux_timer;	/* rotation, while one waits */
};

DECLARE_PER_CPU(struct pmc_cpu, pmc_cpu);

static inline bool pmc_is_leader(struct pmc_counter *counter)
{
	return counter->leader == counter;
}

/* The user who opened @counter, or its original if it is a copy. */
static inline kuid_t pmc_counter_owner(struct pmc_counter *counter)
{
	return (counter->parent ?: counter)->owner;
}

/* MMAP, MUNMAP or COMM records: the mm and exec hooks must build them. */
static inline bool pmc_wants_side(struct pmc_counter *counter)
{
	return counter->attr.mmap || counter->attr.munmap || counter->attr.comm;
}

/* context.c */
typedef void (*pmc_ctx_fn)(struct pmc_context *ctx, void *arg);
int pmc_ctx_call(struct pmc_context *ctx, pmc_ctx_fn fn, void *arg);
struct pmc_context *pmc_task_ctx_alloc(struct task_struct *task);
struct pmc_context *pmc_task_ctx_get(struct task_struct *task);
struct pmc_context *pmc_cpu_ctx_get(int cpu);
void pmc_ctx_put(struct pmc_context *ctx);
void pmc_ctx_link(struct pmc_context *ctx, struct pmc_counter *counter);
void pmc_ctx_unlink(struct pmc_context *ctx, struct pmc_counter *counter);
int pmc_install(struct pmc_counter *counter);
void pmc_remove(struct pmc_counter *counter);
void pmc_enable(struct pmc_counter *counter);
void pmc_disable(struct pmc_counter *counter);
void pmc_enable_fn(struct pmc_context *ctx, void *arg);
void pmc_disable_fn(struct pmc_context *ctx, void *arg);
void pmc_disable_here(struct pmc_counter *counter);
void pmc_counter_sync_enabled(struct pmc_counter *counter);
void pmc_set_rotate_disable(struct pmc_context *ctx, int delta);

/* sched.c */
extern int sysctl_pmc_mux_interval_ms;
void pmc_ctx_update_time(struct pmc_context *ctx);
void pmc_counter_update_time(struct pmc_counter *counter);
void pmc_counter_fold(struct pmc_counter *counter);
void pmc_counter_set_state(struct pmc_counter *counter, enum pmc_state state);
int pmc_counter_sched_in(struct pmc_counter *counter);
void pmc_counter_sched_out(struct pmc_counter *counter);
bool pmc_group_uses_pmu(struct pmc_counter *leader);
int pmc_group_sched_in(struct pmc_counter *leader);
void pmc_group_sched_out(struct pmc_counter *leader);
void pmc_ctx_sched_in(struct pmc_context *ctx);
void pmc_ctx_sched_out(struct pmc_context *ctx);
void pmc_task_ctx_activate(struct pmc_cpu *cpuc, struct pmc_context *ctx);
void pmc_task_ctx_deactivate(struct pmc_cpu *cpuc, struct pmc_context *ctx);
void pmc_cpu_resched(struct pmc_cpu *cpuc);
void pmc_cpu_lock(struct pmc_cpu *cpuc, struct pmc_context *task_ctx);
void pmc_cpu_unlock(struct pmc_cpu *cpuc, struct pmc_context *task_ctx);
void pmc_sched_init_cpu(struct pmc_cpu *cpuc);

/* inherit.c */
void pmc_inherit_exit(struct pmc_context *ctx, bool fold);

/* ring_buffer.c */
extern int sysctl_pmc_mlock_kb;
/*
 * A piece of a record: @len bytes at @buf, or with @copied, at @user in
 * the current task's memory; *@copied is then set to the bytes that
 * could be read (the rest are zeroes) before the next part is written.
 */
struct pmc_rb_part {
	const void *buf;
	size_t len;
	const void __user *user;
	u64 *copied;
};

bool pmc_rb_write(struct pmc_counter *counter, const struct pmc_rb_part *parts,
		  int nr_parts, bool sample);
void pmc_rb_lost(struct pmc_counter *counter, u64 nr);
void pmc_rb_flush(struct pmc_counter *counter);
void pmc_rb_kick(struct pmc_counter *counter);
void pmc_rb_signal(struct pmc_counter *counter, int code);
void pmc_rb_counter_init(struct pmc_counter *counter);
void pmc_rb_counter_destroy(struct pmc_counter *counter);
__poll_t pmc_rb_poll(struct pmc_counter *counter, struct file *file,
		     poll_table *wait);
int pmc_rb_mmap(struct pmc_counter *counter, struct vm_area_struct *vma);
struct pmc_mmap_page *pmc_rb_user_page(struct pmc_ring_buffer *rb);

/* software.c */
bool pmc_sw_clock_at_stamp(struct pmc_counter *counter, u64 *count);

/* userpage.c */
bool pmc_userpage_allowed(const struct pmc_attr *attr,
			  const struct pmc_pmu *pmu, struct task_struct *task,
			  int cpu);
void pmc_ctx_update_userpages(struct pmc_context *ctx);
void pmc_userpage_map(struct pmc_counter *counter);
void pmc_userpage_unmap(struct pmc_counter *counter);
void pmc_userpage_vma_mapped(struct pmc_counter *counter, struct mm_struct *mm);
void pmc_userpage_vma_unmapped(struct pmc_counter *counter,
			       struct mm_struct *mm);

/* sample.c */
/* Samples that copy a task's user registers or stack. */
#define PMC_RECORD_USER_STATE	(PMC_RECORD_REGS_USER | PMC_RECORD_STACK_USER)
int pmc_check_user_sample(const struct pmc_attr *attr);
void pmc_freq_sched(struct pmc_counter *counter, bool in);
void pmc_sample_init(struct pmc_counter *counter);
void pmc_sample_inherit(struct pmc_counter *copy, struct pmc_counter *parent);
void pmc_sample_destroy(struct pmc_counter *counter);
int pmc_refresh(struct pmc_counter *counter, unsigned long nr);
void pmc_counter_skipped(struct pmc_counter *counter, u64 nr);
void pmc_exit_event(struct task_struct *task);

/* throttle.c */
extern int sysctl_pmc_max_sample_rate;
extern int sysctl_pmc_cpu_time_max_percent;
struct pmc_owner_slot {
	kuid_t uid;
	u64 val;
};

struct pmc_owner_slot *pmc_owner_slot(struct pmc_owner_slot *slots,
				      unsigned int *nr, unsigned int max,
				      kuid_t uid, u64 init);
bool pmc_throttle_sample(struct pmc_counter *counter);
void pmc_throttle(struct pmc_counter *counter, unsigned long tick);
bool pmc_owner_over_time(struct pmc_counter *counter, unsigned long now);
void pmc_wakeup_took(struct pmc_counter *counter, u64 ns);

/* software.c */
extern const struct pmc_pmu pmc_sw_pmu;
/* The clocks' shortest period: shorter ones would only flood the CPU. */
#define PMC_SW_MIN_CLOCK_PERIOD	(10 * NSEC_PER_USEC)
void pmc_sw_idle_switch(struct pmc_counter *counter, bool idle);
bool pmc_sw_is_clock(struct pmc_counter *counter);

/* core.c */
extern int sysctl_pmc_paranoid;
bool pmc_hw_pmu_registered(void);
struct pmc_counter *pmc_counter_alloc(const struct pmc_attr *attr,
				      const struct pmc_pmu *pmu, int cpu);
void pmc_counter_put(struct pmc_counter *counter);
void pmc_counter_attach_copy(struct pmc_counter *copy,
			     struct pmc_counter *orig, struct pmc_context *ctx);
u64 pmc_counter_value(struct pmc_counter *counter);

#endif /* _KERNEL_EVENTS_LITE_INTERNAL_H */
