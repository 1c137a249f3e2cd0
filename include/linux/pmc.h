/* SPDX-License-Identifier: GPL-2.0 */
/*
 * events-lite: the kernel-internal interface.
 *
 * The counter object and backend interface for the arch drivers, and
 * the hooks. Everything here is cheap when no counter exists: the
 * scheduler, software-event and record hooks sit behind pmc_sched_key,
 * which is on while any counter exists (and for a second after the last
 * one is freed, so that open/close loops do not patch code each time).
 * Fork only tests a task field.
 */
#ifndef _LINUX_PMC_H
#define _LINUX_PMC_H

#include <uapi/linux/pmc.h>
#include <linux/atomic.h>
#include <linux/irq_work.h>
#include <linux/jump_label.h>
#include <linux/jump_label_ratelimit.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/prandom.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/timerqueue.h>
#include <linux/wait.h>
#include <linux/sched.h>
#include <linux/uidgid_types.h>
#include <linux/workqueue.h>
#include <asm/local64.h>

struct perf_event;
struct pt_regs;
struct pid_namespace;
struct pmc_context;
struct mm_struct;
struct pmc_ring_buffer;
struct vm_area_struct;

#ifdef CONFIG_PMC_EVENTS

/* Deferred: an open/close loop must not patch the hooks every time. */
extern struct static_key_false_deferred pmc_sched_key;

/* Inlined even at -Os: a disabled hook must be one NOP, not a call. */
static __always_inline bool pmc_hooks_on(void)
{
	return static_branch_unlikely(&pmc_sched_key.key);
}

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
 *
 * validate_group() runs at pmc_open() under the context mutex: could
 * @leader's group, with @counter added, ever be on the PMU at once?
 * sample_read() runs in any context, NMI included, on the CPU where the
 * counter is active: the count as of now, without a lock.
 */
struct pmc_pmu {
	int (*init)(struct pmc_counter *counter);
	/*
	 * Optional, process context, ctx->mutex held: @counter's group and
	 * its task (NULL for a CPU counter) are known, and it is about to
	 * be installed. Undone by destroy().
	 */
	int (*open)(struct pmc_counter *counter, struct task_struct *task);
	void (*destroy)(struct pmc_counter *counter);	/* optional */
	/*
	 * Optional, process context, no events-lite spinlock held: called
	 * after @counter was turned on or off (its state left or entered
	 * OFF), to follow where that sleeps; it reads the state itself, so
	 * the last call follows the last change.
	 */
	void (*sync_enabled)(struct pmc_counter *counter);
	int (*add)(struct pmc_counter *counter);	/* 0 or -EAGAIN */
	void (*del)(struct pmc_counter *counter);	/* folds the count */
	void (*read)(struct pmc_counter *counter);	/* folds the count */
	int (*validate_group)(struct pmc_counter *leader,	/* optional */
			      struct pmc_counter *counter);
	u64 (*sample_read)(struct pmc_counter *counter);	/* optional */
	/*
	 * Optional, from the overflow's context (NMI included), on the
	 * counter's CPU: @counter was throttled. The backend keeps its
	 * interrupts rare, and calls pmc_unthrottle() at a later tick.
	 * Without it, the next overflow after the tick unthrottles.
	 */
	void (*throttle)(struct pmc_counter *counter);
	/*
	 * Optional, for page 0 (userpage.c). user_index() runs on the CPU
	 * @counter is active on, for the task it counts, IRQs off or in
	 * NMI: the rdpmc index + 1 of its counter, and the counter's width,
	 * if that task may execute rdpmc there; else 0. User space reads
	 * the count as the page's offset, which is the count minus
	 * hw.prev_count sign-extended from that width, plus rdpmc. The
	 * backend calls pmc_userpage_reprogrammed() whenever it writes a
	 * new hw.prev_count to an active counter, or moves it to another
	 * hardware counter.
	 * mapped() and unmapped() run in process context for each mapping
	 * in @mm of the page of a counter its task may read there, so that
	 * the backend lets that mm execute rdpmc; mapped() with @mm's
	 * mmap_lock held for writing.
	 */
	int (*user_index)(struct pmc_counter *counter, u16 *width);
	void (*mapped)(struct mm_struct *mm);
	void (*unmapped)(struct mm_struct *mm);
	/*
	 * The backend follows attr.freq itself, and sets counter->period to
	 * the period that ended before each pmc_counter_overflow().
	 */
	bool own_freq;
	/* Optional, any context: the longest period it can program. */
	u64 (*max_period)(void);
};

struct pmc_counter {
	/* Set at pmc_open(), then constant. */
	struct pmc_attr attr;
	u64 id;				/* unique, for LOST records */
	const struct pmc_pmu *pmu;
	struct pmc_context *ctx;
	int cpu;			/* count only on this CPU, or -1 */
	bool installed;			/* pmc_open() attached it (ctx->mutex) */
	bool userpage_allowed;		/* its task may read it in page 0 */
	/*
	 * The overflow path (NMI or hardirq, the counter's CPU) reprogrammed
	 * the counter while that CPU was rewriting page 0: the rewrite,
	 * under ctx->lock, runs again.
	 */
	bool userpage_redo;
	struct list_head userpage_entry;	/* ctx->userpages: ctx->lock */
	struct pid_namespace *ns;	/* the opener's, for record pids */
	kuid_t owner;			/* the opener: whose share of the
					 * overflow time bound it uses
					 */

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
	 * Time the backend's own scheduler kept it off the PMU while it
	 * was ACTIVE here (perf rotating its counters), not yet taken off
	 * time_running.
	 */
	u64 time_off_pmu;

	/*
	 * The 64-bit virtual count. Added to only on the CPU the counter is
	 * active on (process context, hardirq or NMI); read anywhere.
	 */
	local64_t count;
	u64 attempt_count;		/* count before a group went on */

	/*
	 * Sample periods that ended (sampling counters): overflow
	 * interrupts taken, and periods that got none of their own.
	 */
	atomic64_t overflows;
	/*
	 * Throttling (throttle.c): set by the overflow path in any context,
	 * NMI included, cleared by pmc_unthrottle(); cmpxchg() decides
	 * which of them logs the record.
	 */
	int throttled;
	unsigned long throttle_tick;	/* jiffies when throttled */
	/* Throttles logged, its exited copies' folded in: for fdinfo. */
	atomic64_t throttles;
	/*
	 * Its own rate and time: only its own CPU's overflow path, any
	 * context, with IRQs off or in NMI.
	 */
	unsigned long sample_tick;	/* jiffies these are for */
	unsigned int sample_count;	/* overflows in that tick */
	u64 tick_ns;			/* their time, and their wakeups' */
	u64 took_avg;			/* its charges' moving average */

	/*
	 * Sampling (ring_buffer.c, sample.c). rb is set and cleared under
	 * mmap_mutex and read under RCU by record writers in any context,
	 * NMI included, and by page 0's rewrites under ctx->lock
	 * (userpage.c); wakeups go through wakeup_work, so that writers
	 * never take a lock that a waker holds.
	 */
	struct pmc_ring_buffer __rcu *rb;
	struct mutex mmap_mutex;	/* rb, and a buffer's last unmap */
	wait_queue_head_t waitq;
	struct fasync_struct *fasync;
	/*
	 * The SIGIO code (POLL_IN, POLL_HUP) the last overflow asked for:
	 * set by the overflow path (any context, NMI included) on the
	 * counter's CPU, taken by wakeup_work with xchg().
	 */
	int pending_kill;
	struct irq_work wakeup_work;
	struct irq_work disable_work;	/* REFRESH budget used up */
	struct work_struct disable_task_work;	/* ...and the task moved */
	atomic_t refresh_left;		/* see PMC_REFRESH_OFF */
	bool kernel_visible;		/* may samples show kernel addresses */
	/*
	 * The sample period: attr.irq_period, or what attr.freq's rate
	 * asks for (period_rand draws around it). Set at pmc_open() or,
	 * for an inherited copy, before it is linked; then changed only by
	 * the overflow path on the counter's CPU (any context, NMI
	 * included), one overflow at a time.
	 */
	u64 period;
	/*
	 * attr.freq where events-lite adjusts the period (not a clock, not
	 * perf's backend, which does it itself): the counter's running
	 * time is freq_ran plus, while it is active, local_clock() since
	 * freq_on, both written at sched in and out (ctx->lock, IRQs off);
	 * freq_stamp is that running time when the period began, written
	 * by the overflow path. All on the CPU the counter is active on.
	 */
	bool freq_adapt;
	bool freq_restart;		/* the overflow path's, see sample.c */
	u64 freq_on;
	u64 freq_ran;
	u64 freq_stamp;
	local64_t sw_period_left;	/* software events: to next sample;
					 * clocks: ns of the period left
					 * while the counter is off
					 */
	/*
	 * attr.period_rand's draws: used by the overflow path (process,
	 * hardirq or NMI) only on the CPU the counter is active on, one
	 * overflow at a time, so it needs no lock.
	 */
	struct rnd_state period_rnd;

	/*
	 * Inherit: a copy on a child task points at the original counter,
	 * whose child totals it adds to when the child exits. The original
	 * is freed when its file and all its copies are gone.
	 *
	 * child_mutex (process context only) guards the original's list of
	 * live copies, so that ioctls reach them, and makes a copy's fold
	 * into the three totals one step for read(). A copied group folds
	 * under its original leader's, each member's nested inside, one
	 * step for a PMC_FORMAT_GROUP read(). The totals are also read
	 * without it by samples (any context), as they stand.
	 */
	refcount_t refcount;
	struct pmc_counter *parent;	/* original, for a copy; else NULL */
	struct mutex child_mutex;
	struct list_head child_list;	/* original: its live copies */
	struct list_head child_entry;	/* copy: in parent->child_list */
	atomic64_t child_count;
	atomic64_t child_time_enabled;
	atomic64_t child_time_running;

	/*
	 * Backend state, owned by the pmu: changed only on the CPU the
	 * counter is active on, with IRQs off; hw.* is also read and
	 * written by the overflow NMI, hence the local64_t.
	 */
	union {
		struct {			/* software clocks */
			u64 clock_start;
			bool sw_idle;		/* exclude_idle: paused */
			bool sw_parked;		/* throttled: on sw_park_entry */
			/* while active: in its CPU's queue by period end... */
			struct timerqueue_node sw_clock_node;
			/* ...or, throttled, on its CPU's parked list */
			struct list_head sw_park_entry;
		};
		struct {			/* software events */
			struct hlist_node sw_node;
			u64 sw_walk;		/* the last walk that saw it */
		};
		struct {			/* hardware counters */
			int idx;		/* counter, or -1 */
			u64 sel;		/* event select, without EN */
			local64_t prev_count;	/* raw value last folded */
			local64_t period_left;	/* events to the next overflow */
		} hw;
		struct {			/* hardware counters from perf */
			struct perf_event *event;
			local64_t prev_count;	/* perf's count last folded */
			u64 enabled;		/* and its times then */
			u64 running;
			/* orders perf_event_enable() and _disable() calls */
			struct mutex sync_lock;
		} perf;
	};

	struct rcu_head rcu;
};

/* The leader, then its members in creation order; ctx->lock or ctx->mutex held. */
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

/* For hardware backends (arch code). */
void pmc_register_hw_pmu(const struct pmc_pmu *pmu);
/*
 * May an arch driver drive the PMU itself? pmc_pmu=direct says yes,
 * pmc_pmu=perf no; by default only where perf has no hardware PMU.
 */
bool pmc_direct_pmu_allowed(void);
/*
 * Page 0's TSC conversion for nanoseconds since @stamp (local_clock());
 * false where user space cannot have it (__weak: arch override).
 */
bool pmc_arch_user_time(struct pmc_mmap_page *up, u64 stamp);
/*
 * Any context on the counter's CPU, NMI included: see struct pmc_pmu.
 * Inline test: the driver calls it at every add, on the context-switch
 * path, and most counters have no such page.
 */
void __pmc_userpage_reprogrammed(struct pmc_counter *counter);

static inline void pmc_userpage_reprogrammed(struct pmc_counter *counter)
{
	if (counter->userpage_allowed)
		__pmc_userpage_reprogrammed(counter);
}
/* Fills @ips with the user call chain at @regs (__weak: arch override). */
unsigned int pmc_arch_user_callchain(struct pt_regs *regs, u64 *ips,
				     unsigned int max);
void pmc_counter_overflow(struct pmc_counter *counter, struct pt_regs *regs,
			  u64 addr);
/* The next sample period of @counter: @period, or a draw (period_rand). */
u64 pmc_next_period(struct pmc_counter *counter, u64 period);
void pmc_unthrottle(struct pmc_counter *counter);
void pmc_overflow_took(struct pmc_counter *counter, u64 ns);

/*
 * Records for sampling counters, from mm, exec and fork: for the
 * counters of current's context and of this CPU's that asked for them.
 */
void __pmc_mmap_event(struct vm_area_struct *vma, bool unmap);
void __pmc_comm_event(struct task_struct *task);
void __pmc_fork_event(struct task_struct *child);

static inline void pmc_mmap_event(struct vm_area_struct *vma)
{
	if (pmc_hooks_on())
		__pmc_mmap_event(vma, false);
}

static inline void pmc_munmap_event(struct vm_area_struct *vma)
{
	if (pmc_hooks_on())
		__pmc_mmap_event(vma, true);
}

static inline void pmc_comm_event(struct task_struct *task)
{
	if (pmc_hooks_on() && task == current)
		__pmc_comm_event(task);
}

/* From copy_process(), in the parent, once @child is visible. */
static inline void pmc_fork_event(struct task_struct *child)
{
	if (pmc_hooks_on())
		__pmc_fork_event(child);
}

void __pmc_task_sched_out(struct task_struct *prev, struct task_struct *next);
void __pmc_task_sched_in(struct task_struct *prev, struct task_struct *task);
void __pmc_sw_event(enum pmc_sw_id id, u64 nr, struct pt_regs *regs, u64 addr);
void __pmc_exit_task(struct task_struct *task);
void __pmc_exec_task(struct task_struct *task);
int __pmc_inherit_task(struct task_struct *child);
void __pmc_free_task(struct task_struct *child);
int pmc_task_enable(void);
int pmc_task_disable(void);

/* Called from prepare_task_switch(), IRQs off, rq lock held. */
static inline void pmc_task_sched_out(struct task_struct *prev,
				      struct task_struct *next)
{
	if (pmc_hooks_on())
		__pmc_task_sched_out(prev, next);
}

/* Called from finish_task_switch(), IRQs off, rq lock held. */
static inline void pmc_task_sched_in(struct task_struct *prev,
				     struct task_struct *task)
{
	if (pmc_hooks_on())
		__pmc_task_sched_in(prev, task);
}

/* Called from set_task_cpu(): the next sched_in counts a migration. */
static inline void pmc_task_migrate(struct task_struct *task)
{
	if (pmc_hooks_on())
		task->pmc_migrated = 1;
}

/* Software event @id happened @nr times on this CPU. */
static inline void pmc_sw_event(enum pmc_sw_id id, u64 nr,
				struct pt_regs *regs, u64 addr)
{
	if (pmc_hooks_on())
		__pmc_sw_event(id, nr, regs, addr);
}

/* copy_process(): the child gets copies of the inherited counters. */
static inline int pmc_init_task(struct task_struct *task,
				unsigned long clone_flags)
{
	task->pmc_ctx = NULL;
	task->pmc_migrated = 0;
	task->pmc_exited = 0;
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

/*
 * do_exit(): detach the task's counters; they keep their final counts.
 * While any counter exists a context may be being installed on @task
 * right now: __pmc_exit_task() settles that under task_lock(). With the
 * hooks off no counter exists, and pmc_open() turns them on (a text
 * patch, which synchronises every CPU) before it looks at PF_EXITING,
 * which do_exit() set long before this point.
 */
static inline void pmc_exit_task(struct task_struct *task)
{
	if (pmc_hooks_on() || READ_ONCE(task->pmc_ctx))
		__pmc_exit_task(task);
}

/*
 * begin_new_exec() of an image the user may not dump (setuid): detach
 * the task's counters, as at exit, so that nothing of the new image
 * reaches readers who opened them under the old credentials.
 * exec_update_lock is held for writing; pmc_open() holds it for reading
 * from its ptrace check until the counter is installed.
 */
static inline void pmc_exec_task(struct task_struct *task)
{
	if (READ_ONCE(task->pmc_ctx))
		__pmc_exec_task(task);
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
static inline void pmc_exec_task(struct task_struct *task) { }
static inline void pmc_mmap_event(struct vm_area_struct *vma) { }
static inline void pmc_munmap_event(struct vm_area_struct *vma) { }
static inline void pmc_comm_event(struct task_struct *task) { }
static inline void pmc_fork_event(struct task_struct *child) { }
static inline int pmc_task_enable(void) { return -EINVAL; }
static inline int pmc_task_disable(void) { return -EINVAL; }

#endif /* CONFIG_PMC_EVENTS */

#endif /* _LINUX_PMC_H */
