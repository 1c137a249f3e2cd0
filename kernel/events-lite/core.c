// SPDX-License-Identifier: GPL-2.0
/*
 * events-lite: the pmc_open(2) system call and the counter file.
 *
 * A counter is owned by its file: it is created by pmc_open(), attached
 * to a task or CPU context (context.c) and freed, after an RCU grace
 * period, when the file is released. Everything that reads or changes
 * a live counter goes through pmc_ctx_call(); see internal.h for the
 * locks.
 */
#include <linux/anon_inodes.h>
#include <linux/capability.h>
#include <linux/cpumask.h>
#include <linux/cred.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/perf_event.h>
#include <linux/pid_namespace.h>
#include <linux/ptrace.h>
#include <linux/security.h>
#include <linux/sched/task.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/syscalls.h>
#include <linux/uaccess.h>

#include "internal.h"

/* Same levels as perf_event_paranoid; see pmc_check_permission(). */
int sysctl_pmc_paranoid __read_mostly = 2;

/* Counters in one group, leader included: bounds a group read to 8 KiB. */
#define PMC_GROUP_MAX		1024

static struct kmem_cache *pmc_counter_cache;
static atomic64_t pmc_counter_ids;
static const struct file_operations pmc_fops;

static const char * const pmc_state_names[] = {
	[PMC_STATE_ERROR - PMC_STATE_ERROR]	= "error",
	[PMC_STATE_OFF - PMC_STATE_ERROR]	= "off",
	[PMC_STATE_INACTIVE - PMC_STATE_ERROR]	= "inactive",
	[PMC_STATE_ACTIVE - PMC_STATE_ERROR]	= "active",
};

/*
 * Copy the caller's struct pmc_attr, whatever its size, under the rules
 * of Documentation/process/adding-syscalls.rst: 0 means the first
 * published size; a smaller one, or a larger struct with a non-zero
 * byte past what this kernel knows, fails with E2BIG and the kernel's
 * size written back for the caller to see.
 */
static int pmc_copy_attr(struct pmc_attr __user *uattr, struct pmc_attr *attr)
{
	u32 size;
	int ret;

	if (get_user(size, &uattr->size))
		return -EFAULT;
	if (!size)
		size = PMC_ATTR_SIZE_VER0;
	if (size < PMC_ATTR_SIZE_VER0 || size > PAGE_SIZE)
		goto too_big;
	ret = copy_struct_from_user(attr, sizeof(*attr), uattr, size);
	if (ret == -E2BIG)
		goto too_big;
	if (ret)
		return ret;
	attr->size = size;
	return 0;
too_big:
	put_user((u32)sizeof(*attr), &uattr->size);
	return -E2BIG;
}

/* Reject anything this kernel does not understand, so it can grow. */
static int pmc_check_attr(const struct pmc_attr *attr)
{
	if (attr->__reserved_1 || attr->__reserved_3 || attr->extra_config_len)
		return -EINVAL;
	if (attr->record_type & ~PMC_RECORD_ALL ||
	    attr->read_format & ~PMC_FORMAT_ALL)
		return -EINVAL;
	/* Periods are signed in the overflow arithmetic, as in perf. */
	if (attr->irq_period & BIT_ULL(63))
		return -EINVAL;
	if (attr->period_rand > PMC_PERIOD_RAND_MAX ||
	    (attr->period_rand && !attr->irq_period))
		return -EINVAL;
	/* A rate, as perf's sample_freq: at most what a counter may take. */
	if (attr->freq && (!attr->irq_period || attr->period_rand ||
			   attr->irq_period > READ_ONCE(sysctl_pmc_max_sample_rate)))
		return -EINVAL;
	return pmc_check_user_sample(attr);
}

/* Set once at boot by the arch driver, when it found a usable PMU. */
static const struct pmc_pmu *pmc_hw_pmu __ro_after_init;

void __init pmc_register_hw_pmu(const struct pmc_pmu *pmu)
{
	pmc_hw_pmu = pmu;
}

bool __init pmc_hw_pmu_registered(void)
{
	return pmc_hw_pmu;
}

static const struct pmc_pmu *pmc_find_pmu(const struct pmc_attr *attr)
{
	if (attr->config & PMC_CONFIG_RAW ||
	    PMC_CONFIG_TYPE(attr->config) == PMC_TYPE_HARDWARE)
		return pmc_hw_pmu ?: ERR_PTR(-ENODEV);
	switch (PMC_CONFIG_TYPE(attr->config)) {
	case PMC_TYPE_SOFTWARE:
		return &pmc_sw_pmu;
	case PMC_TYPE_TRACEPOINT:
		return ERR_PTR(-EOPNOTSUPP);
	default:
		return ERR_PTR(-ENOENT);	/* perf's answer for a type no PMU has */
	}
}

/*
 * pmc_paranoid first, then the LSMs, asked what perf asks them at the
 * same points (kernel/events/core.c), so that a policy written for
 * perf_event_open(2) (SELinux's perf_event class, Android's) governs
 * pmc_open(2) alike: PERF_SECURITY_OPEN for every open, _KERNEL for a
 * counter that counts the kernel, _CPU for a per-CPU counter (and
 * _KERNEL again for samples that could show kernel addresses, see
 * pmc_kernel_visible()). perf's other hooks (alloc, read, write) take
 * a struct perf_event and have no counterpart here. The guest kernels
 * have no LSM that polices these, so no test shows a refusal.
 */
static int pmc_check_permission(const struct pmc_attr *attr, pid_t pid)
{
	int paranoid = READ_ONCE(sysctl_pmc_paranoid);
	bool capable = perfmon_capable();
	int ret;

	if (paranoid > 2 && !capable)
		return -EACCES;
	ret = security_perf_event_open(PERF_SECURITY_OPEN);
	if (ret)
		return ret;
	if (!attr->exclude_kernel) {
		if (paranoid > 1 && !capable)
			return -EACCES;
		ret = security_perf_event_open(PERF_SECURITY_KERNEL);
		if (ret)
			return ret;
	}
	if (pid == -1) {
		if (paranoid > 0 && !capable)
			return -EACCES;
		/*
		 * Other users' registers and stacks: only for those who may
		 * see every task's (perf lets paranoid 0 have them).
		 */
		if (attr->record_type & PMC_RECORD_USER_STATE && !capable)
			return -EACCES;
		ret = security_perf_event_open(PERF_SECURITY_CPU);
		if (ret)
			return ret;
	}
	return 0;
}

static int pmc_check_cpu(int cpu)
{
	if (cpu < -1 || cpu >= (int)nr_cpu_ids)
		return -EINVAL;
	if (cpu >= 0 && !cpu_online(cpu))
		return -ENODEV;
	return 0;
}

/* Task @pid (0: the caller) with a reference, or NULL if there is none. */
static struct task_struct *pmc_find_task(pid_t pid)
{
	struct task_struct *task;

	if (!pid)
		return get_task_struct(current);
	if (pid < 0)
		return NULL;	/* ESRCH, as perf */
	guard(rcu)();
	task = find_task_by_vpid(pid);
	return task ? get_task_struct(task) : NULL;
}

/*
 * May the caller watch @task? Called with @task's exec_update_lock
 * held for reading until the counter is installed, so that a setuid
 * exec either comes after the install, and detaches the counter, or
 * before this check, and fails it.
 */
static int pmc_check_task(struct task_struct *task)
{
	if (!ptrace_may_access(task, PTRACE_MODE_READ_REALCREDS))
		return -EACCES;
	return 0;
}

/*
 * The leader named by @group_fd, checked against the new counter, and
 * the group as it would be: it must fit on the PMU all at once, or it
 * could never count. ctx->mutex held, so the group cannot change.
 */
static int pmc_check_leader(struct pmc_counter *counter,
			    struct pmc_counter *leader)
{
	if (!pmc_is_leader(leader) || leader->ctx != counter->ctx ||
	    leader->cpu != counter->cpu)
		return -EINVAL;
	if (counter->attr.pinned || counter->attr.exclusive)
		return -EINVAL;
	if (leader->nr_siblings + 2 > PMC_GROUP_MAX)
		return -EINVAL;
	if (pmc_hw_pmu && pmc_hw_pmu->validate_group)
		return pmc_hw_pmu->validate_group(leader, counter);
	return 0;
}

/*
 * pmc_sched_key is held by every counter attached to a context. It is
 * taken just before the context, after the checks of the caller's
 * arguments and rights, and dropped late (deferred): failed opens and
 * open/close loops do not patch the hooks in and out.
 */
static void pmc_key_get(void)
{
	static_branch_deferred_inc(&pmc_sched_key);
}

static void pmc_key_put(void)
{
	static_branch_slow_dec_deferred(&pmc_sched_key);
}

/* Free @counter, but not its backend's part: none, or already gone. */
static void pmc_counter_free_no_pmu(struct pmc_counter *counter)
{
	pmc_sample_destroy(counter);
	pmc_rb_counter_destroy(counter);
	if (counter->ctx) {
		pmc_ctx_put(counter->ctx);
		pmc_key_put();
	}
	if (counter->ns)
		put_pid_ns(counter->ns);
	kfree_rcu(counter, rcu);
}

/* A copy on a child: the original's key and namespace come with it. */
void pmc_counter_attach_copy(struct pmc_counter *copy,
			     struct pmc_counter *orig, struct pmc_context *ctx)
{
	pmc_key_get();
	refcount_inc(&ctx->refcount);
	copy->ctx = ctx;
	copy->ns = get_pid_ns(orig->ns);
}

static void pmc_counter_free(struct pmc_counter *counter)
{
	if (counter->pmu->destroy)
		counter->pmu->destroy(counter);
	pmc_counter_free_no_pmu(counter);
}

/* Drop a reference: the file's, or an inherited copy's on its original. */
void pmc_counter_put(struct pmc_counter *counter)
{
	if (refcount_dec_and_test(&counter->refcount))
		pmc_counter_free(counter);
}

/*
 * The count, with what exited children added. Exact under ctx->lock
 * after a fold; samples and fdinfo take it as it stands.
 */
u64 pmc_counter_value(struct pmc_counter *counter)
{
	return local64_read(&counter->count) +
	       atomic64_read(&counter->child_count);
}

struct pmc_counter *pmc_counter_alloc(const struct pmc_attr *attr,
				      const struct pmc_pmu *pmu, int cpu)
{
	struct pmc_counter *counter;
	int ret;

	counter = kmem_cache_zalloc(pmc_counter_cache, GFP_KERNEL);
	if (!counter)
		return ERR_PTR(-ENOMEM);
	counter->attr = *attr;
	counter->id = atomic64_inc_return(&pmc_counter_ids);
	counter->pmu = pmu;
	counter->leader = counter;
	refcount_set(&counter->refcount, 1);
	INIT_LIST_HEAD(&counter->group_entry);
	INIT_LIST_HEAD(&counter->siblings);
	counter->state = attr->disabled ? PMC_STATE_OFF : PMC_STATE_INACTIVE;
	counter->cpu = cpu;
	counter->oncpu = -1;
	mutex_init(&counter->child_mutex);
	INIT_LIST_HEAD(&counter->child_list);
	INIT_LIST_HEAD(&counter->child_entry);
	INIT_LIST_HEAD(&counter->userpage_entry);
	pmc_rb_counter_init(counter);
	pmc_sample_init(counter);

	ret = pmu->init(counter);
	if (ret) {
		pmc_counter_free_no_pmu(counter);
		return ERR_PTR(ret);
	}
	return counter;
}

static struct pmc_counter *pmc_file_counter(struct file *file)
{
	return file->f_op == &pmc_fops ? file->private_data : NULL;
}

/* A counter no file owns yet: pmc_open() failed before making one. */
static void pmc_counter_discard(struct pmc_counter *counter)
{
	if (!IS_ERR_OR_NULL(counter))
		pmc_counter_free(counter);
}

DEFINE_FREE(pmc_counter, struct pmc_counter *, pmc_counter_discard(_T))

/*
 * May @attr's samples show kernel addresses (IPs, call chains, fault
 * addresses)? Not the unprivileged's at pmc_paranoid >= 2, nor a
 * user-mode sampler's where a security module refuses what perf's
 * perf_allow_kernel() asks for kernel call chains: samples then hide
 * them, as at level 2.
 */
static bool pmc_kernel_visible(const struct pmc_attr *attr)
{
	if (!perfmon_capable() && READ_ONCE(sysctl_pmc_paranoid) >= 2)
		return false;
	/* A kernel-mode counter was asked at pmc_check_permission(). */
	if (!attr->exclude_kernel || !attr->irq_period)
		return true;
	return !security_perf_event_open(PERF_SECURITY_KERNEL);
}

/*
 * Make the counter, its file and its fd, and install it in @task's
 * context (NULL: @cpu's). With @task, its exec_update_lock is held for
 * reading: see pmc_check_task().
 */
static int pmc_open_counter(const struct pmc_attr *attr,
			    const struct pmc_pmu *pmu, struct task_struct *task,
			    int cpu, struct pmc_counter *leader,
			    unsigned long flags)
{
	struct pmc_counter *counter __free(pmc_counter) = NULL;
	struct pmc_counter *installed;
	struct pmc_context *ctx;
	int ret;

	counter = pmc_counter_alloc(attr, pmu, cpu);
	if (IS_ERR(counter))
		return PTR_ERR(no_free_ptr(counter));
	counter->kernel_visible = pmc_kernel_visible(attr);
	counter->userpage_allowed = pmc_userpage_allowed(attr, pmu, task, cpu);
	counter->ns = get_pid_ns(task_active_pid_ns(current));
	counter->owner = current_uid();

	pmc_key_get();
	ctx = task ? pmc_task_ctx_get(task) : pmc_cpu_ctx_get(cpu);
	if (IS_ERR(ctx)) {
		pmc_key_put();
		return PTR_ERR(ctx);
	}
	counter->ctx = ctx;	/* and the key: the counter's free drops both */

	FD_PREPARE(fdf, O_RDWR | (flags & PMC_FLAG_FD_CLOEXEC ? O_CLOEXEC : 0),
		   anon_inode_getfile("[pmc]", &pmc_fops, counter, O_RDWR));
	if (fdf.err)
		return fdf.err;
	/* The file owns the counter now: if we fail, its release frees it. */
	installed = no_free_ptr(counter);

	scoped_guard(mutex, &ctx->mutex) {
		if (leader) {
			ret = pmc_check_leader(installed, leader);
			if (ret)
				return ret;
			installed->leader = leader;
		}
		if (pmu->open) {
			ret = pmu->open(installed, task);
			if (ret)
				return ret;
		}
		ret = pmc_install(installed);
		if (ret)
			return ret;
	}
	return fd_publish(fdf);
}

SYSCALL_DEFINE5(pmc_open, struct pmc_attr __user *, uattr, pid_t, pid,
		int, cpu, int, group_fd, unsigned long, flags)
{
	struct pmc_counter *leader = NULL;
	const struct pmc_pmu *pmu;
	struct pmc_attr attr;
	int ret;

	ret = pmc_copy_attr(uattr, &attr);
	if (ret)
		return ret;
	ret = pmc_check_attr(&attr);
	if (ret)
		return ret;
	if (flags & ~PMC_FLAG_FD_CLOEXEC)
		return -EINVAL;
	if (pid == -1 && cpu == -1)
		return -EINVAL;
	ret = pmc_check_cpu(cpu);
	if (ret)
		return ret;

	/* A bad group_fd is reported before any permission check, as perf. */
	CLASS(fd, group)(group_fd);
	if (group_fd != -1) {
		if (fd_empty(group))
			return -EBADF;
		leader = pmc_file_counter(fd_file(group));
		if (!leader)
			return -EINVAL;
	}
	ret = pmc_check_permission(&attr, pid);
	if (ret)
		return ret;
	pmu = pmc_find_pmu(&attr);
	if (IS_ERR(pmu))
		return PTR_ERR(pmu);
	/*
	 * Only software counters can leave the idle task out: a PMU counts
	 * on whatever runs, and pausing it at every idle entry is not done.
	 */
	if (attr.exclude_idle && pmu != &pmc_sw_pmu)
		return -EOPNOTSUPP;
	if (pid == -1)
		return pmc_open_counter(&attr, pmu, NULL, cpu, leader, flags);

	struct task_struct *task __free(put_task) = pmc_find_task(pid);

	if (!task)
		return -ESRCH;
	scoped_cond_guard(rwsem_read_intr, return -EINTR,
			  &task->signal->exec_update_lock) {
		ret = pmc_check_task(task);
		if (ret)
			return ret;
		return pmc_open_counter(&attr, pmu, task, cpu, leader, flags);
	}
	return -EINTR;	/* not reached: the guard's body returns */
}

static int pmc_release(struct inode *inode, struct file *file)
{
	struct pmc_counter *counter = file->private_data;

	/* pmc_open() may fail after making the file, before installing. */
	if (counter->installed)
		pmc_remove(counter);
	pmc_counter_put(counter);
	return 0;
}

struct pmc_read_args {
	struct pmc_counter *counter;
	u64 *values;		/* filled in read() layout */
	unsigned int n;
	bool error;
};

static void pmc_read_values(struct pmc_read_args *args,
			    struct pmc_counter *counter)
{
	args->values[args->n++] = pmc_counter_value(counter);
}

/* Gathers the read() values atomically, on the context's live CPU. */
static void pmc_read_fn(struct pmc_context *ctx, void *arg)
{
	struct pmc_read_args *args = arg;
	struct pmc_counter *counter = args->counter;
	u32 format = counter->attr.read_format;
	struct pmc_counter *leader = counter->leader, *pos;

	if (format & PMC_FORMAT_GROUP)
		counter = leader;
	args->error = counter->state == PMC_STATE_ERROR;
	if (format & PMC_FORMAT_GROUP) {
		for_each_group_counter(pos, leader)
			pmc_counter_fold(pos);
		args->values[args->n++] = leader->nr_siblings + 1;
	} else {
		pmc_counter_fold(counter);
		pmc_read_values(args, counter);
	}
	if (format & PMC_FORMAT_TOTAL_TIME_ENABLED)
		args->values[args->n++] = counter->time_enabled +
			atomic64_read(&counter->child_time_enabled);
	if (format & PMC_FORMAT_TOTAL_TIME_RUNNING)
		args->values[args->n++] = counter->time_running +
			atomic64_read(&counter->child_time_running);
	if (format & PMC_FORMAT_GROUP) {
		for_each_group_counter(pos, leader)
			pmc_read_values(args, pos);
	}
}

/* read() with the locks that keep its group and totals still held. */
static ssize_t pmc_read_locked(struct pmc_counter *counter, char __user *buf,
			       size_t count)
{
	u32 format = counter->attr.read_format;
	struct pmc_read_args args = { .counter = counter };
	u64 *values __free(kfree) = NULL;
	u64 on_stack[16];
	size_t nr, size;

	nr = 1 + hweight32(format & (PMC_FORMAT_TOTAL_TIME_ENABLED |
				     PMC_FORMAT_TOTAL_TIME_RUNNING));
	if (format & PMC_FORMAT_GROUP)
		nr += 1 + counter->leader->nr_siblings;
	size = nr * sizeof(u64);
	if (count < size)
		return -ENOSPC;
	if (nr > ARRAY_SIZE(on_stack)) {
		values = kzalloc_objs(u64, nr);
		if (!values)
			return -ENOMEM;
	}
	args.values = values ?: on_stack;
	pmc_ctx_call(counter->ctx, pmc_read_fn, &args);
	if (args.error)
		return 0;
	if (copy_to_user(buf, args.values, size))
		return -EFAULT;
	return size;
}

/*
 * An exited child's fold into the totals is one step: a copy's under
 * its original's child_mutex, a copied group's under its original
 * leader's (inherit.c). Only a leader with attr.inherit has its group
 * copied, and a group changes only under ctx->mutex.
 */
static ssize_t pmc_read(struct file *file, char __user *buf, size_t count,
			loff_t *ppos)
{
	struct pmc_counter *counter = file->private_data;

	if (!(counter->attr.read_format & PMC_FORMAT_GROUP)) {
		if (!counter->attr.inherit)
			return pmc_read_locked(counter, buf, count);
		guard(mutex)(&counter->child_mutex);
		return pmc_read_locked(counter, buf, count);
	}
	guard(mutex)(&counter->ctx->mutex);
	if (!counter->leader->attr.inherit)
		return pmc_read_locked(counter, buf, count);
	guard(mutex)(&counter->leader->child_mutex);
	return pmc_read_locked(counter, buf, count);
}

static void pmc_reset_fn(struct pmc_context *ctx, void *arg)
{
	struct pmc_counter *counter = arg;

	pmc_counter_fold(counter);
	local64_set(&counter->count, 0);
	atomic64_set(&counter->child_count, 0);
}

/*
 * An ioctl acts on the counter and on every live inherited copy of it,
 * as one step for read() and for copies that exit meanwhile.
 */
static void pmc_apply_to_children(struct pmc_counter *counter, pmc_ctx_fn fn,
				  bool switched)
{
	struct pmc_counter *child;

	guard(mutex)(&counter->child_mutex);
	pmc_ctx_call(counter->ctx, fn, counter);
	if (switched)
		pmc_counter_sync_enabled(counter);
	list_for_each_entry(child, &counter->child_list, child_entry) {
		pmc_ctx_call(child->ctx, fn, child);
		if (switched)
			pmc_counter_sync_enabled(child);
	}
}

/*
 * After PMC_IOC_DISABLE: no overflow of the counters it disabled is in
 * flight any more (each copy was disabled on its CPU, after whatever
 * interrupt was sampling there), so what they lost is final. Write it
 * now, for a reader that drains the ring next; see pmc_rb_flush().
 */
static void pmc_flush_disabled(struct pmc_counter *counter)
{
	struct pmc_counter *pos;

	guard(mutex)(&counter->ctx->mutex);	/* the group's members */
	if (pmc_is_leader(counter)) {
		for_each_group_counter(pos, counter)
			pmc_rb_flush(pos);
	} else {
		pmc_rb_flush(counter);
	}
}

static long pmc_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct pmc_counter *counter = file->private_data;

	switch (cmd) {
	case PMC_IOC_ENABLE:
		pmc_apply_to_children(counter, pmc_enable_fn, true);
		return 0;
	case PMC_IOC_DISABLE:
		pmc_apply_to_children(counter, pmc_disable_fn, true);
		pmc_flush_disabled(counter);
		return 0;
	case PMC_IOC_RESET:
		pmc_apply_to_children(counter, pmc_reset_fn, false);
		return 0;
	case PMC_IOC_REFRESH:
		return pmc_refresh(counter, arg);
	default:
		return -ENOTTY;
	}
}

static void pmc_fdinfo_fn(struct pmc_context *ctx, void *arg)
{
	pmc_counter_fold(arg);
}

static void pmc_show_fdinfo(struct seq_file *m, struct file *file)
{
	struct pmc_counter *counter = file->private_data;

	pmc_ctx_call(counter->ctx, pmc_fdinfo_fn, counter);
	seq_printf(m, "pmc-config:\t%#llx\n", counter->attr.config);
	seq_printf(m, "pmc-state:\t%s\n",
		   pmc_state_names[counter->state - PMC_STATE_ERROR]);
	seq_printf(m, "pmc-count:\t%llu\n", pmc_counter_value(counter));
	seq_printf(m, "pmc-time-enabled:\t%llu\n", counter->time_enabled);
	seq_printf(m, "pmc-time-running:\t%llu\n", counter->time_running);
	seq_printf(m, "pmc-overflows:\t%lld\n",
		   (s64)atomic64_read(&counter->overflows));
	seq_printf(m, "pmc-throttles:\t%lld\n",
		   (s64)atomic64_read(&counter->throttles));
}

static __poll_t pmc_poll(struct file *file, poll_table *wait)
{
	return pmc_rb_poll(file->private_data, file, wait);
}

static int pmc_mmap(struct file *file, struct vm_area_struct *vma)
{
	return pmc_rb_mmap(file->private_data, vma);
}

static int pmc_fasync(int fd, struct file *file, int on)
{
	struct pmc_counter *counter = file->private_data;

	return fasync_helper(fd, file, on, &counter->fasync);
}

static const struct file_operations pmc_fops = {
	.release	= pmc_release,
	.read		= pmc_read,
	.poll		= pmc_poll,
	.mmap		= pmc_mmap,
	.fasync		= pmc_fasync,
	.unlocked_ioctl	= pmc_ioctl,
	.compat_ioctl	= pmc_ioctl,
	.show_fdinfo	= pmc_show_fdinfo,
};

static int __init pmc_init(void)
{
	BUILD_BUG_ON(sizeof(struct pmc_attr) != PMC_ATTR_SIZE_VER0);
	pmc_counter_cache = kmem_cache_create("pmc_counter",
					      sizeof(struct pmc_counter), 0,
					      SLAB_PANIC | SLAB_NO_MERGE, NULL);
	return 0;
}
core_initcall(pmc_init);
