/* SPDX-License-Identifier: GPL-2.0 */
/*
 * events-lite internal objects: counters, contexts and backends.
 *
 * Locking, once for the whole subsystem:
 *
 * Lock order, outermost first; each lock nests inside the one above it
 * that is indented less, and the brackets say where it is taken:
 *
 *   pmc_context::mutex                       [process]
 *     pmc_counter::child_mutex, a leader's   [process]
 *       pmc_counter::child_mutex, a member's [process]
 *       pmc_context::lock, by pmc_ctx_call()
 *       pmc_counter::perf.sync_lock          [process]
 *         perf's own event locks
 *     task_lock()                            [process]
 *       pmc_context::lock, CPU context       [IRQs off: see below]
 *         pmc_context::lock, task context    [IRQs off: see below]
 *   mmap_lock of an mm                       [process: mmap, munmap]
 *     pmc_counter::mmap_mutex                [process]
 *       pmc_context::lock, by pmc_ctx_call()
 *   rq lock (the scheduler's own)            [context switch, IRQs off]
 *     pmc_context::lock, CPU context
 *       pmc_context::lock, task context
 *         pmc_x86_hold_lock (x86 backend)    [pmu->add/del, IRQs off]
 *
 * A context's lock is raw and taken with IRQs off only: in the
 * scheduler hooks, in hardirq (the IPI of pmc_ctx_call(), the rotation
 * hrtimer) and in process context. The CPU contexts' locks have a
 * lockdep class of their own, so that a task context's may nest inside
 * one (pmc_cpu_lock()). No lock here is taken in NMI context.
 *
 * Names of the operations on a context say what the caller holds:
 * foo_fn() is a pmc_ctx_fn, run by pmc_ctx_call() with the context's
 * lock held and IRQs off, on the CPU where the context is live, if it
 * is live anywhere; foo_locked() is the body of foo() for a caller that
 * already holds the lock foo() would take; and __pmc_foo() is only ever
 * the out-of-line half of an inline hook pmc_foo() in <linux/pmc.h>,
 * called once the hook has found work to do.
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

struct pmc_cpu;

/*
 * pmc_cpu_lock(): this CPU's context, then the task context active on
 * it, if any. IRQs must already be off. guard(pmc_cpu_lock)(cpuc,
 * task_ctx) holds both for a scope and drops them in reverse order.
 */
void pmc_cpu_lock(struct pmc_cpu *cpuc, struct pmc_context *task_ctx);
void pmc_cpu_unlock(struct pmc_cpu *cpuc, struct pmc_context *task_ctx);

struct pmc_cpu_locked {
	struct pmc_cpu *cpuc;
	struct pmc_context *task_ctx;
};

DEFINE_CLASS(pmc_cpu_lock, struct pmc_cpu_locked,
	     pmc_cpu_unlock(_T.cpuc, _T.task_ctx),
	     ({ pmc_cpu_lock(cpuc, task_ctx);
		(struct pmc_cpu_locked){ cpuc, task_ctx }; }),
	     struct pmc_cpu *cpuc, struct pmc_context *task_ctx)
DEFINE_CLASS_IS_UNCONDITIONAL(pmc_cpu_lock)

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

/*
 * The original of an inherited copy: the counter with the file, whose
 * owner, id, buffer and totals the copy's counts and records go to. A
 * counter that is no copy is its own original.
 */
static inline struct pmc_counter *pmc_counter_original(struct pmc_counter *counter)
{
	return counter->parent ?: counter;
}

/*
 * The group leader after @leader in @ctx, or the first one for NULL:
 * the pinned groups, then the flexible ones, in the order in which they
 * go on the PMU. ctx->lock held, or ctx->mutex with the rotation held
 * off (pmc_set_rotate_disable()).
 */
static inline struct pmc_counter *pmc_ctx_next_group(struct pmc_context *ctx,
						     struct pmc_counter *leader)
{
	struct list_head *next;

	next = leader ? leader->group_entry.next : ctx->pinned_groups.next;
	if (next == &ctx->pinned_groups)
		next = ctx->flexible_groups.next;
	if (next == &ctx->flexible_groups)
		return NULL;
	return list_entry(next, struct pmc_counter, group_entry);
}

/* Each group leader of @ctx, pinned then flexible. */
#define pmc_for_each_group(leader, ctx)					\
	for (leader = pmc_ctx_next_group(ctx, NULL); leader;		\
	     leader = pmc_ctx_next_group(ctx, leader))

/* The same, where the body may take @leader off its list. */
#define pmc_for_each_group_safe(leader, tmp, ctx)			\
	for (leader = pmc_ctx_next_group(ctx, NULL),			\
	     tmp = leader ? pmc_ctx_next_group(ctx, leader) : NULL;	\
	     leader;							\
	     leader = tmp,						\
	     tmp = leader ? pmc_ctx_next_group(ctx, leader) : NULL)

static inline bool pmc_is_leader(struct pmc_counter *counter)
{
	return counter->leader == counter;
}

/* The user who opened @counter, or its original if it is a copy. */
static inline kuid_t pmc_counter_owner(struct pmc_counter *counter)
{
	return pmc_counter_original(counter)->owner;
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

/*
 * Page 0 of a mapping is a seqcount for its readers in user space: its
 * lock is odd while the kernel rewrites the fields after it, and a
 * reader that saw it odd, or saw it move, reads again. Each page has a
 * single writer at any time, so a plain increment is enough.
 */
static inline void pmc_rb_page_write_begin(struct pmc_mmap_page *up)
{
	WRITE_ONCE(up->lock, up->lock + 1);
	smp_wmb();	/* odd lock before the fields: the reader retries */
}

static inline void pmc_rb_page_write_end(struct pmc_mmap_page *up)
{
	smp_wmb();	/* the fields before the even lock */
	WRITE_ONCE(up->lock, up->lock + 1);
}

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
