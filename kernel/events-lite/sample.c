// SPDX-License-Identifier: GPL-2.0
/*
 * events-lite samples: what a sampling counter writes to its ring
 * buffer at each overflow, and the MMAP, MUNMAP, COMM, FORK and EXIT
 * records.
 *
 * pmc_counter_overflow() is the one entry for overflows from every
 * context: the x86 NMI, the software clocks' hrtimer and the software
 * events (page faults in process context, context switches from the
 * scheduler). It builds the record in a per-CPU buffer, one per
 * interrupt context level so that an NMI can interrupt a sample being
 * built, with IRQs off, and hands it to the ring buffer.
 *
 * A group's member list changes only while the group is off the PMU
 * (context.c), and non-NMI samples are built with IRQs off, so walking
 * the members here needs no lock.
 *
 * Pids and tids in records are those of the opener's pid namespace.
 */
#include <linux/fs.h>
#include <linux/math64.h>
#include <linux/mm.h>
#include <linux/perf_event.h>
#include <linux/perf_regs.h>
#include <linux/pid_namespace.h>
#include <linux/random.h>
#include <linux/percpu.h>
#include <linux/ptrace.h>
#include <linux/sched/task_stack.h>
#include <linux/sched/clock.h>
#include <linux/slab.h>
#include <linux/stacktrace.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>
#include <asm/irq_regs.h>

#include "internal.h"

#define PMC_CALLCHAIN_MAX	64
#define PMC_SAMPLE_MAX		2048	/* bytes of a sample's head */
/* Words a sample may take after GROUP: call chain, registers, stack size. */
#define PMC_SAMPLE_TAIL_WORDS	(1 + PMC_CALLCHAIN_MAX + 1 + 64 + 1)

/*
 * User registers come from perf's helpers for the architecture (its
 * PERF_REG_* numbering, as the ABI says); the stack needs them too.
 */
#if defined(CONFIG_PERF_EVENTS) && defined(CONFIG_HAVE_PERF_REGS)
#define PMC_HAVE_USER_REGS	1
#else
#define PMC_HAVE_USER_REGS	0
#endif
#define PMC_HAVE_USER_STACK	(PMC_HAVE_USER_REGS && \
				 IS_ENABLED(CONFIG_HAVE_PERF_USER_STACK_DUMP))

struct pmc_sample_buf {
	u64 words[PMC_SAMPLE_MAX / sizeof(u64)];
};

/* Task, softirq, hardirq and NMI can nest on one CPU: a buffer each. */
static DEFINE_PER_CPU(struct pmc_sample_buf [4], pmc_sample_bufs);

static bool pmc_kernel_addr(u64 addr)
{
	return addr >= TASK_SIZE_MAX;
}

/* Kernel addresses are zeroed for counters that may not see them. */
static u64 pmc_visible(struct pmc_counter *counter, u64 addr)
{
	return counter->kernel_visible || !pmc_kernel_addr(addr) ? addr : 0;
}

struct pmc_callchain_fill {
	u64 *ips;
	unsigned int nr, max;
};

static bool pmc_callchain_add(void *cookie, unsigned long addr)
{
	struct pmc_callchain_fill *fill = cookie;

	fill->ips[fill->nr++] = addr;
	return fill->nr < fill->max;
}

/*
 * The user call chain at @regs, innermost first; NMI-safe. By default
 * the architecture's user stack walker, the one perf uses; an
 * architecture whose walker misses something (x86: 32-bit tasks)
 * provides its own. Without a walker, the sampled address alone.
 */
unsigned int __weak pmc_arch_user_callchain(struct pt_regs *regs, u64 *ips,
					    unsigned int max)
{
	struct pmc_callchain_fill fill = { .ips = ips, .max = max };

#if defined(CONFIG_ARCH_STACKWALK) && defined(CONFIG_USER_STACKTRACE_SUPPORT)
	/* Samples also come from process context: never sleep on a fault. */
	pagefault_disable();
	arch_stack_walk_user(pmc_callchain_add, &fill, regs);
	pagefault_enable();
#else
	pmc_callchain_add(&fill, instruction_pointer(regs));
#endif
	return fill.nr;
}

/* Kernel frames, where the kernel can walk its own stack (64BIT). */
static unsigned int pmc_kernel_callchain(struct pt_regs *regs, u64 *ips)
{
#ifdef CONFIG_STACKTRACE
	return stack_trace_save_regs(regs, (unsigned long *)ips,
				     PMC_CALLCHAIN_MAX / 2, 0);
#else
	return 0;
#endif
}

/* u16 nr, hv, kernel, user; u64 ips[nr]. Returns the words used. */
static unsigned int pmc_callchain(struct pmc_counter *counter,
				  struct pt_regs *regs, u64 *out)
{
	u64 *ips = out + 1;
	unsigned int kernel = 0, user = 0;
	struct pt_regs *uregs = NULL;
	u16 *nr;

	if (!user_mode(regs)) {
		if (counter->kernel_visible)
			kernel = pmc_kernel_callchain(regs, ips);
		if (current->mm)
			uregs = task_pt_regs(current);
	} else {
		uregs = regs;
	}
	if (uregs)
		user = pmc_arch_user_callchain(uregs, ips + kernel,
					       PMC_CALLCHAIN_MAX - kernel);
	/* Four u16s in memory order, whatever the byte order. */
	nr = (u16 *)out;
	nr[0] = kernel + user;
	nr[1] = 0;
	nr[2] = kernel;
	nr[3] = user;
	return 1 + kernel + user;
}

/* PMC_RECORD_REGS_USER and PMC_RECORD_STACK_USER, at pmc_open(). */
int pmc_check_user_sample(const struct pmc_attr *attr)
{
	/* Fields for a record bit that is not set: reserved, as before. */
	if ((attr->regs_user && !(attr->record_type & PMC_RECORD_REGS_USER)) ||
	    (attr->stack_user && !(attr->record_type & PMC_RECORD_STACK_USER)))
		return -EINVAL;
	if (attr->record_type & PMC_RECORD_REGS_USER) {
		if (!PMC_HAVE_USER_REGS)
			return -EOPNOTSUPP;
		/*
		 * The general registers only: x86's XMM and arm64's VG are
		 * read from where perf's own sample path keeps them.
		 */
		if (attr->regs_user & PERF_REG_EXTENDED_MASK ||
		    perf_reg_validate(attr->regs_user))
			return -EINVAL;
	}
	if (attr->record_type & PMC_RECORD_STACK_USER) {
		if (!PMC_HAVE_USER_STACK)
			return -EOPNOTSUPP;
		if (attr->stack_user > PMC_STACK_USER_MAX ||
		    !IS_ALIGNED(attr->stack_user, sizeof(u64)))
			return -EINVAL;
	}
	return 0;
}

/* The ABI numbers are perf's: perf_reg_abi() gives them. */
static_assert(PMC_REGS_ABI_64 == PERF_SAMPLE_REGS_ABI_64);
static_assert(PMC_REGS_ABI_32 == PERF_SAMPLE_REGS_ABI_32);

/*
 * The user registers of the task a sample interrupted, and their ABI;
 * NULL for a kernel thread. In the kernel, perf's helper knows which of
 * the saved registers are real (x86: an NMI on the entry path).
 */
static struct pt_regs *pmc_user_regs(struct pt_regs *regs, u64 *abi)
{
#if PMC_HAVE_USER_REGS
	struct perf_regs user;

	if (user_mode(regs)) {
		*abi = perf_reg_abi(current);
		return regs;
	}
	if (is_user_task(current)) {
		perf_get_regs_user(&user, regs);
		*abi = user.abi;
		return user.regs;
	}
#endif
	*abi = PMC_REGS_ABI_NONE;
	return NULL;
}

/* u64 abi; u64 regs[] in attr.regs_user's bit order, unless abi is NONE. */
static u64 *pmc_sample_user_regs(struct pmc_counter *counter,
				 struct pt_regs *uregs, u64 abi, u64 *p)
{
	u64 mask = counter->attr.regs_user;

	*p++ = abi;
	if (!uregs)
		return p;
	while (mask) {
		*p++ = perf_reg_value(uregs, __ffs64(mask));
		mask &= mask - 1;
	}
	return p;
}

/*
 * Bytes of user stack a sample copies: attr.stack_user from the stack
 * pointer up, as far as user space goes, and as far as the record's
 * u16 size lets it after its first @head bytes and the dyn_size word.
 */
static u64 pmc_user_stack_size(struct pmc_counter *counter,
			       struct pt_regs *uregs, size_t head)
{
	unsigned long sp;
	u64 size;

	if (!PMC_HAVE_USER_STACK || !uregs || !current->mm)
		return 0;
	sp = user_stack_pointer(uregs);
	if (!sp || sp >= TASK_SIZE)
		return 0;
	size = min3((u64)counter->attr.stack_user, (u64)(TASK_SIZE - sp),
		    (u64)(PMC_STACK_USER_MAX - head - sizeof(u64)));
	return round_down(size, sizeof(u64));
}

/* pid and tid of @task as @counter's reader sees them. */
static void pmc_ids(struct pmc_counter *counter, struct task_struct *task,
		    u32 *pid, u32 *tid)
{
	*pid = task_tgid_nr_ns(task, counter->ns);
	*tid = task_pid_nr_ns(task, counter->ns);
}

/*
 * A member's count as of now: active members on this CPU are read from
 * their backend (NMI-safe), the others hold their last folded count.
 */
static u64 pmc_sample_member_value(struct pmc_counter *pos)
{
	u64 count;

	if (READ_ONCE(pos->state) == PMC_STATE_ACTIVE &&
	    READ_ONCE(pos->oncpu) == smp_processor_id() &&
	    pos->pmu->sample_read)
		count = pos->pmu->sample_read(pos);
	else
		count = local64_read(&pos->count);
	return count + atomic64_read(&pos->child_count);
}

/*
 * The record is built in this CPU's buffer, but for a user stack
 * snapshot, which goes from user memory to the ring buffer: then
 * parts[1] is the stack and parts[2] its dyn_size, the bytes that could
 * be read (copy_from_user_nofault(): never a fault, in any context).
 */
static void pmc_sample(struct pmc_counter *counter, struct pt_regs *regs,
		       struct pt_regs *iregs, u64 addr, u64 period)
{
	u32 type = counter->attr.record_type;
	struct pmc_counter *leader, *pos;
	struct pmc_event_header *header;
	struct pmc_rb_part parts[3] = { };
	struct pt_regs *uregs = NULL;
	u64 *buf, *p, abi, stack = 0, dyn_size = 0;

	guard(irqsave)();
	buf = this_cpu_ptr(&pmc_sample_bufs[interrupt_context_level()])->words;
	header = (struct pmc_event_header *)buf;
	p = buf + 1;

	if (type & PMC_RECORD_IP)
		*p++ = pmc_visible(counter, instruction_pointer(regs));
	if (type & PMC_RECORD_TID) {
		u32 *ids = (u32 *)p++;

		pmc_ids(counter, current, &ids[0], &ids[1]);
	}
	if (type & PMC_RECORD_TIME)
		*p++ = ktime_get_mono_fast_ns();
	if (type & PMC_RECORD_ADDR)
		*p++ = pmc_visible(counter, addr);
	if (type & PMC_RECORD_PERIOD)
		*p++ = period;
	if (type & PMC_RECORD_GROUP) {
		u64 *nr = p++;

		*nr = 0;
		leader = counter->leader;
		for_each_group_counter(pos, leader) {
			if (p + 2 + PMC_SAMPLE_TAIL_WORDS >=
			    buf + ARRAY_SIZE(((struct pmc_sample_buf *)0)->words))
				goto lost;
			*p++ = pos->attr.config;
			*p++ = pmc_sample_member_value(pos);
			(*nr)++;
		}
	}
	if (type & PMC_RECORD_CALLCHAIN)
		p += pmc_callchain(counter, regs, p);
	/* From where it was interrupted: perf's helper knows the entry path. */
	if (type & PMC_RECORD_USER_STATE)
		uregs = pmc_user_regs(iregs, &abi);
	if (type & PMC_RECORD_REGS_USER)
		p = pmc_sample_user_regs(counter, uregs, abi, p);
	if (type & PMC_RECORD_STACK_USER) {
		stack = pmc_user_stack_size(counter, uregs,
					    (p + 1 - buf) * sizeof(u64));
		*p++ = stack;
	}

	header->type = type;
	header->misc = PMC_EVENT_MISC_OVERFLOW |
		       (user_mode(regs) ? PMC_EVENT_MISC_USER :
					  PMC_EVENT_MISC_KERNEL);
	parts[0].buf = buf;
	parts[0].len = (p - buf) * sizeof(u64);
	header->size = parts[0].len;
	if (stack) {
		parts[1].user = (const void __user *)user_stack_pointer(uregs);
		parts[1].len = stack;
		parts[1].copied = &dyn_size;
		parts[2].buf = &dyn_size;
		parts[2].len = sizeof(dyn_size);
		header->size += stack + sizeof(dyn_size);
	}
	pmc_rb_write(counter, parts, stack ? 3 : 1, true);
	return;
lost:
	pmc_rb_lost(counter, 1);
}

/*
 * attr.freq: the next period, for attr.irq_period samples a second of
 * the counter's running time, from the events the last one took over
 * the time it ran. At most 8 times longer or shorter than the last, so
 * that one late interrupt cannot throw it far; from 1 it reaches 10^8
 * in nine periods. Never longer than the backend can program
 * (max_period) or than PMC_FREQ_MAX_PERIOD, which keeps the arithmetic
 * below 2^64. The overflows of a throttled counter do not measure its
 * rate (its backend ran a longer period, and the throttle's gap is in
 * the time): the first one after restarts the measurement instead.
 * Any context on the counter's CPU, while it is active; IRQs off, as
 * pmc_freq_sched() runs from interrupts too.
 */
#define PMC_FREQ_MAX_PERIOD	BIT_ULL(56)

static void pmc_freq_adapt(struct pmc_counter *counter)
{
	u64 target = NSEC_PER_SEC / counter->attr.irq_period;
	u64 period = counter->period, max = PMC_FREQ_MAX_PERIOD;
	u64 ran, took, next;

	guard(irqsave)();
	ran = counter->freq_ran + local_clock() - counter->freq_on;
	took = ran - counter->freq_stamp;
	counter->freq_stamp = ran;
	if (READ_ONCE(counter->throttled)) {
		counter->freq_restart = true;
	} else if (counter->freq_restart) {
		counter->freq_restart = false;
	} else {
		if (counter->pmu->max_period)
			max = min(max, counter->pmu->max_period());
		/* Faster than 8x: the clamp decides, and the division fits. */
		if (took <= target / 8)
			next = period * 8;
		else
			next = mul_u64_u64_div_u64(period, target, took);
		max = min(period * 8, max);
		counter->period = clamp_t(u64, next,
					  min(max_t(u64, period / 8, 1), max), max);
	}
}

/* The running time freq_adapt measures: at sched in and out. */
void pmc_freq_sched(struct pmc_counter *counter, bool in)
{
	u64 now = local_clock();

	if (in)
		counter->freq_on = now;
	else
		counter->freq_ran += now - counter->freq_on;
}

/*
 * refresh_left: PMC_REFRESH_OFF when no PMC_IOC_REFRESH was given (every
 * overflow samples), else the samples left; at 0 the budget is spent
 * and nothing but a new REFRESH gives more, whoever enables the counter.
 */
#define PMC_REFRESH_OFF		-1

/*
 * An overflow of a sampling counter: write a sample unless the counter is
 * throttled (throttle.c), and count down a REFRESH budget.
 * Any context, NMI included.
 */
void pmc_counter_overflow(struct pmc_counter *counter, struct pt_regs *regs,
			  u64 addr)
{
	u64 period = counter->period;	/* the one that ended */
	struct pt_regs *iregs;
	int left = 1;

	atomic64_inc(&counter->overflows);
	if (counter->freq_adapt)
		pmc_freq_adapt(counter);
	if (!pmc_throttle_sample(counter))
		return;
	if (atomic_read(&counter->refresh_left) != PMC_REFRESH_OFF) {
		left = atomic_dec_if_positive(&counter->refresh_left);
		if (left < 0)
			return;		/* spent */
		if (!left)
			irq_work_queue(&counter->disable_work);
	}
	if (!regs)
		regs = get_irq_regs() ?: task_pt_regs(current);
	iregs = regs;
	/* A user-only counter samples where the task was in user mode. */
	if (counter->attr.exclude_kernel && !user_mode(regs) && current->mm)
		regs = task_pt_regs(current);
	pmc_sample(counter, regs, iregs, addr, period);
	/* The budget's last overflow hangs up, as perf's event_limit does. */
	pmc_rb_signal(counter, left ? POLL_IN : POLL_HUP);
}

/**
 * pmc_counter_skipped() - @nr sample periods ended without an overflow
 * @counter: the sampling counter
 * @nr: periods that got no overflow of their own
 *
 * A software clock whose timer came late, or a software event that
 * ended more periods at once than it may sample. Each such period is
 * an overflow whose sample is lost, so that the reader's samples plus
 * lost add up to the overflows in fdinfo and to the count over the
 * period. A throttled counter, or one whose REFRESH budget is spent,
 * takes no samples anyway: the THROTTLE and UNTHROTTLE records already
 * mark a throttle's gap. Any context, NMI included.
 */
void pmc_counter_skipped(struct pmc_counter *counter, u64 nr)
{
	if (!nr || READ_ONCE(counter->throttled) ||
	    !atomic_read(&counter->refresh_left))	/* spent: no samples */
		return;
	atomic64_add(nr, &counter->overflows);
	pmc_rb_lost(counter, nr);
}

/*
 * irq_work after the last REFRESH overflow, on the overflowing CPU, in
 * hardirq context even on PREEMPT_RT: it takes raw locks only.
 */
static void pmc_refresh_done(struct irq_work *work)
{
	struct pmc_counter *counter = container_of(work, struct pmc_counter,
						   disable_work);

	pmc_disable_here(counter);
	pmc_rb_kick(counter);
	if (counter->pmu->sync_enabled)
		schedule_work(&counter->disable_task_work);
}

/*
 * The same, from process context, when the task moved to another CPU;
 * and the backend's part, which sleeps. A new REFRESH since keeps it on.
 */
static void pmc_refresh_done_task(struct work_struct *work)
{
	struct pmc_counter *counter = container_of(work, struct pmc_counter,
						   disable_task_work);

	if (!atomic_read(&counter->refresh_left))
		pmc_disable(counter);
	pmc_counter_sync_enabled(counter);
}

void pmc_sample_init(struct pmc_counter *counter)
{
	counter->disable_work = IRQ_WORK_INIT_HARD(pmc_refresh_done);
	INIT_WORK(&counter->disable_task_work, pmc_refresh_done_task);
	atomic_set(&counter->refresh_left, PMC_REFRESH_OFF);
	if (counter->attr.period_rand)
		prandom_seed_state(&counter->period_rnd, get_random_u64());
	counter->period = counter->attr.irq_period;
	if (counter->pmu == &pmc_sw_pmu && pmc_sw_is_clock(counter)) {
		/* A clock's rate is its period, and it has a floor. */
		if (counter->attr.freq)
			counter->period = NSEC_PER_SEC / counter->attr.irq_period;
		if (counter->period)
			counter->period = max_t(u64, counter->period,
						PMC_SW_MIN_CLOCK_PERIOD);
	} else if (counter->attr.freq && !counter->pmu->own_freq) {
		/* Others start short, as perf's. */
		counter->freq_adapt = true;
		counter->period = 1;
	}
	local64_set(&counter->sw_period_left,
		    pmc_next_period(counter, counter->period));
}

/*
 * An inherited copy of a counter at a rate starts at the period its
 * parent has reached, as perf's inherited events do, not at 1: a child
 * of a busy task would take its first overflows an event apart while
 * the period climbed back. Before the copy is linked; the parent's
 * period may change under us (its overflow path), any recent one will do.
 */
void pmc_sample_inherit(struct pmc_counter *copy, struct pmc_counter *parent)
{
	if (!copy->freq_adapt)
		return;
	copy->period = READ_ONCE(parent->period);
	local64_set(&copy->sw_period_left,
		    pmc_next_period(copy, copy->period));
}

/*
 * The length of the sample period that starts now: @period, or with
 * attr.period_rand a uniform draw from @period +- period_rand percent,
 * whose mean is @period. A fixed period can run in lock-step with a
 * periodic workload and sample the same few instructions every time;
 * perfmon2 offered randomization for that reason. Any context, NMI
 * included (see period_rnd).
 */
u64 pmc_next_period(struct pmc_counter *counter, u64 period)
{
	u64 span, draw;

	if (!counter->attr.period_rand)
		return period;
	span = mul_u64_u32_div(period, counter->attr.period_rand, 100);
	if (!span)
		return period;
	draw = (u64)prandom_u32_state(&counter->period_rnd) << 32 |
	       prandom_u32_state(&counter->period_rnd);
	/*
	 * period - span + [0, 2 * span]; period <= S64_MAX, so no wrap. At
	 * most S64_MAX, as callers keep it in an s64 or a ktime_t, where a
	 * larger one turns negative: due at once, again and again
	 * (so the mean is @period only below about 2/3 of S64_MAX).
	 */
	draw = period - span + mul_u64_u64_shr(draw, 2 * span + 1, 64);
	return min_t(u64, draw, S64_MAX);
}

void pmc_sample_destroy(struct pmc_counter *counter)
{
	irq_work_sync(&counter->disable_work);
	cancel_work_sync(&counter->disable_task_work);
}

/* PMC_IOC_REFRESH: enable for exactly @nr overflows. */
int pmc_refresh(struct pmc_counter *counter, unsigned long nr)
{
	if (!nr || nr > INT_MAX || !counter->attr.irq_period ||
	    counter->attr.inherit)
		return -EINVAL;
	atomic_set(&counter->refresh_left, nr);
	pmc_enable(counter);
	pmc_counter_sync_enabled(counter);
	return 0;
}

/*
 * The first part of a side record: its header, then the pid and tid,
 * which each counter gets in its own reader's namespace.
 */
struct pmc_side_head {
	struct pmc_event_header header;
	u32 pid, tid;
};

/* A side record on its way to the counters that want it. */
struct pmc_side {
	void *rec;			/* the record's head: parts[0] */
	struct pmc_rb_part parts[4];
	int nr_parts;			/* not counting the time trailer */
	bool trailer;			/* attr.time_all counters get time */
	u64 time;
	bool (*wants)(struct pmc_counter *counter);
	/* Sets the ids in parts[0] for @counter; NULL: current's. */
	void (*ids)(struct pmc_counter *counter, struct pmc_side *side);
	struct task_struct *task, *parent;	/* for ->ids */
};

static void pmc_side_ids(struct pmc_counter *counter, struct pmc_side *side)
{
	struct pmc_side_head *head = side->rec;

	pmc_ids(counter, current, &head->pid, &head->tid);
}

static void pmc_ctx_side_record(struct pmc_context *ctx,
				struct pmc_side *side)
{
	struct pmc_event_header *header = side->rec;
	u16 size = header->size;
	struct pmc_counter *leader, *pos;
	int nr;

	lockdep_assert_held(&ctx->lock);
	if (!ctx->nr_side)
		return;
	pmc_for_each_group(leader, ctx) {
		for_each_group_counter(pos, leader) {
			/*
			 * Only what the counter would count: enabled, and on
			 * this CPU if it is bound to one.
			 */
			if (!side->wants(pos) ||
			    pos->state < PMC_STATE_INACTIVE ||
			    (pos->cpu >= 0 && pos->cpu != smp_processor_id()))
				continue;
			side->ids(pos, side);
			/* The time trailer is the part after the rest. */
			nr = side->nr_parts;
			header->size = size;
			if (side->trailer && pos->attr.time_all) {
				nr++;
				header->size += sizeof(side->time);
			}
			pmc_rb_write(pos, side->parts, nr, false);
		}
	}
	header->size = size;
}

/*
 * Write a side record to every counter that wants it: current's own,
 * and this CPU's, which see every task that runs here.
 */
static void pmc_side_record(struct pmc_side *side)
{
	struct pmc_context *ctx = current->pmc_ctx;
	struct pmc_context *cpu_ctx;

	if (!side->ids)
		side->ids = pmc_side_ids;
	side->parts[side->nr_parts] =
		(struct pmc_rb_part){ &side->time, sizeof(side->time) };
	guard(irqsave)();
	side->time = ktime_get_mono_fast_ns();
	if (ctx) {
		guard(raw_spinlock)(&ctx->lock);
		pmc_ctx_side_record(ctx, side);
	}
	cpu_ctx = &this_cpu_ptr(&pmc_cpu)->ctx;
	guard(raw_spinlock)(&cpu_ctx->lock);
	if (cpu_ctx->is_active)
		pmc_ctx_side_record(cpu_ctx, side);
}

/* Does any counter that sees current want side records? A hint. */
static bool pmc_side_wanted(void)
{
	struct pmc_context *ctx = current->pmc_ctx;

	return (ctx && READ_ONCE(ctx->nr_side)) ||
	       READ_ONCE(raw_cpu_ptr(&pmc_cpu)->ctx.nr_side);
}

static bool pmc_wants_comm(struct pmc_counter *counter)
{
	return counter->attr.comm;
}

static bool pmc_wants_mmap(struct pmc_counter *counter)
{
	return counter->attr.mmap;
}

static bool pmc_wants_munmap(struct pmc_counter *counter)
{
	return counter->attr.munmap;
}

void __pmc_comm_event(struct task_struct *task)
{
	struct {
		struct pmc_side_head head;
		char comm[ALIGN(TASK_COMM_LEN, 8)];
	} rec = { };
	struct pmc_side side = {
		.rec = &rec,
		.parts = { { &rec, sizeof(rec) } },
		.nr_parts = 1,
		.trailer = true,
		.wants = pmc_wants_comm,
	};

	if (!pmc_side_wanted())
		return;
	rec.head.header.type = PMC_EVENT_COMM;
	rec.head.header.size = sizeof(rec);
	get_task_comm(rec.comm, task);
	pmc_side_record(&side);
}

struct pmc_task_rec {
	struct pmc_event_header header;
	u32 pid, ppid;
	u32 tid, ptid;
	u64 time;
};

static void pmc_task_ids(struct pmc_counter *counter, struct pmc_side *side)
{
	struct pmc_task_rec *rec = side->rec;

	pmc_ids(counter, side->task, &rec->pid, &rec->tid);
	pmc_ids(counter, side->parent, &rec->ppid, &rec->ptid);
	rec->time = side->time;
}

static void pmc_task_record(u32 type, struct task_struct *task,
			    struct task_struct *parent)
{
	struct pmc_task_rec rec = {
		.header = { .type = type, .size = sizeof(rec) },
	};
	struct pmc_side side = {
		.rec = &rec,
		.parts = { { &rec, sizeof(rec) } },
		.nr_parts = 1,
		.wants = pmc_wants_comm,
		.ids = pmc_task_ids,
		.task = task,
		.parent = parent,
	};

	if (pmc_side_wanted())
		pmc_side_record(&side);
}

/*
 * From copy_process() in the parent, once @child is visible to others:
 * the parent's counters and this CPU's get the record.
 */
void __pmc_fork_event(struct task_struct *child)
{
	pmc_task_record(PMC_EVENT_FORK, child, current);
}

/* From do_exit(), before the task's counters are taken down. */
void pmc_exit_event(struct task_struct *task)
{
	rcu_read_lock();
	pmc_task_record(PMC_EVENT_EXIT, task,
			rcu_dereference(task->real_parent));
	rcu_read_unlock();
}

/*
 * The name of a special mapping such as "[vdso]", whose code user IPs
 * land in too; NULL for anonymous memory.
 */
static const char *pmc_special_name(struct vm_area_struct *vma)
{
	if (vma->vm_ops && vma->vm_ops->name)
		return vma->vm_ops->name(vma);
	return NULL;
}

/*
 * PROT_EXEC file mappings and named special mappings ("[vdso]"), so that
 * user IPs can be tied to code.
 */
void __pmc_mmap_event(struct vm_area_struct *vma, bool unmap)
{
	struct {
		struct pmc_side_head head;
		u64 addr, len, pgoff;
	} rec = { };
	static const char pad[8];
	struct pmc_side side = {
		.rec = &rec,
		.nr_parts = 3,
		.trailer = true,
		.wants = unmap ? pmc_wants_munmap : pmc_wants_mmap,
	};
	char *buf __free(kfree) = NULL;
	const char *name;
	size_t len;

	if (!(vma->vm_flags & VM_EXEC) || !pmc_side_wanted())
		return;
	if (vma->vm_file) {
		buf = kmalloc(PATH_MAX, GFP_KERNEL);
		if (!buf)
			return;
		name = file_path(vma->vm_file, buf, PATH_MAX);
		if (IS_ERR(name))
			name = "//unknown";
	} else {
		name = pmc_special_name(vma);
		if (!name)
			return;
	}
	len = strlen(name) + 1;

	rec.head.header.type = unmap ? PMC_EVENT_MUNMAP : PMC_EVENT_MMAP;
	rec.head.header.size = sizeof(rec) + ALIGN(len, 8);
	rec.addr = vma->vm_start;
	rec.len = vma->vm_end - vma->vm_start;
	/* A special mapping's vm_pgoff is its address, not an offset. */
	if (vma->vm_file)
		rec.pgoff = (u64)vma->vm_pgoff << PAGE_SHIFT;
	side.parts[0] = (struct pmc_rb_part){ &rec, sizeof(rec) };
	side.parts[1] = (struct pmc_rb_part){ name, len };
	side.parts[2] = (struct pmc_rb_part){ pad, ALIGN(len, 8) - len };
	pmc_side_record(&side);
}
