/* SPDX-License-Identifier: GPL-2.0 */
/*
 * events-lite: the hooks the rest of the kernel calls.
 *
 * Everything here is cheap when no counter exists: the scheduler and
 * software-event hooks sit behind pmc_sched_key, which stays off until
 * the first counter is created and goes off again when the last one is
 * freed. Fork and exit only test a task field.
 */
#ifndef _LINUX_PMC_H
#define _LINUX_PMC_H

#include <uapi/linux/pmc.h>
#include <linux/jump_label.h>
#include <linux/sched.h>

struct pt_regs;

#ifdef CONFIG_PMC_EVENTS

DECLARE_STATIC_KEY_FALSE(pmc_sched_key);

void __pmc_task_sched_out(struct task_struct *prev, struct task_struct *next);
void __pmc_task_sched_in(struct task_struct *prev, struct task_struct *task);
void __pmc_sw_event(enum pmc_sw_id id, u64 nr, struct pt_regs *regs, u64 addr);
void __pmc_exit_task(struct task_struct *task);
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

/* copy_process(): the child starts with no counters. */
static inline int pmc_init_task(struct task_struct *task,
				unsigned long clone_flags)
{
	task->pmc_ctx = NULL;
	task->pmc_migrated = 0;
	return 0;
}

/* copy_process() failed after pmc_init_task(). */
static inline void pmc_free_task(struct task_struct *task)
{
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
static inline int pmc_task_enable(void) { return -EINVAL; }
static inline int pmc_task_disable(void) { return -EINVAL; }

#endif /* CONFIG_PMC_EVENTS */

#endif /* _LINUX_PMC_H */
