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
#include <linux/pid_namespace.h>
#include <linux/ptrace.h>
#include <linux/sched/task.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/syscalls.h>
#include <linux/sysctl.h>
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

/* Reject anything this kernel does not understand, so it can grow. */
static int pmc_check_attr(const struct pmc_attr *attr)
{
	if (attr->__reserved_1 || attr->__reserved_2 || attr->__reserved_3 ||
	    attr->extra_config_len)
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
	return 0;
}

/* Set once at boot by the arch driver, when it found a usable PMU. */
static const struct pmc_pmu *pmc_hw_pmu __ro_after_init;

void __init pmc_register_hw_pmu(const struct pmc_pmu *pmu)
{
	pmc_hw_pmu = pmu;
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
		return ERR_PTR(-EINVAL);
	}
}

static int pmc_check_permission(const struct pmc_attr *attr, pid_t pid)
{
	int paranoid = READ_ONCE(sysctl_pmc_paranoid);

	if (perfmon_capable())
		return 0;
	if (pid == -1 && paranoid > 0)
		return -EACCES;
	if (!attr->exclude_kernel && paranoid > 1)
		return -EACCES;
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

/* The target task with a reference, or NULL for a per-CPU counter. */
static struct task_struct *pmc_find_task(pid_t pid)
{
	struct task_struct *task;

	if (pid == -1)
		return NULL;
	if (pid == 0) {
		get_task_struct(current);
		return current;
	}
	rcu_read_lock();
	task = find_task_by_vpid(pid);
	if (task)
		get_task_struct(task);
	rcu_read_unlock();
	return task ?: ERR_PTR(-ESRCH);
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
 * taken just before the context, after everything that can fail for
 * the caller's own reasons, and dropped late (deferred): failed opens
 * and open/close loops do not patch the hooks in and out.
 */
static void pmc_key_get(void)
{
	static_branch_deferred_inc(&pmc_sched_key);
}

static void pmc_key_put(void)
{
	static_branch_slow_dec_deferred(&pmc_sched_key);
}

static void __pmc_counter_free(struct pmc_counter *counter)
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
	__pmc_counter_free(counter);
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
	pmc_rb_counter_init(counter);
	pmc_sample_init(counter);

	ret = pmu->init(counter);
	if (ret) {
		__pmc_counter_free(counter);
		return ERR_PTR(ret);
	}
	return counter;
}

static struct pmc_counter *pmc_file_counter(struct file *file)
{
	return file->f_op == &pmc_fops ? file->private_data : NULL;
}

SYSCALL_DEFINE5(pmc_open, struct pmc_attr __user *, uattr, pid_t, pid,
		int, cpu, int, group_fd, unsigned long, flags)
{
	struct pmc_counter *counter, *leader = NULL;
	struct task_struct *task = NULL;
	const struct pmc_pmu *pmu;
	struct pmc_context *ctx;
	struct file *group_file = NULL;
	struct pmc_attr attr;
	struct file *file;
	int fd, ret;

	if (copy_from_user(&attr, uattr, sizeof(attr)))
		return -EFAULT;
	ret = pmc_check_attr(&attr);
	if (ret)
		return ret;
	if (flags & ~PMC_FLAG_FD_CLOEXEC)
		return -EINVAL;
	if (pid < -1 || (pid == -1 && cpu == -1))
		return -EINVAL;
	ret = pmc_check_cpu(cpu);
	if (ret)
		return ret;
	ret = pmc_check_permission(&attr, pid);
	if (ret)
		return ret;
	pmu = pmc_find_pmu(&attr);
	if (IS_ERR(pmu))
		return PTR_ERR(pmu);

	if (group_fd != -1) {
		group_file = fget(group_fd);
		if (!group_file)
			return -EBADF;
		leader = pmc_file_counter(group_file);
		if (!leader) {
			ret = -EINVAL;
			goto out_group;
		}
	}

	task = pmc_find_task(pid);
	if (IS_ERR(task)) {
		ret = PTR_ERR(task);
		task = NULL;
		goto out_group;
	}
	if (task) {
		ret = down_read_interruptible(&task->signal->exec_update_lock);
		if (ret)
			goto out_task;
		ret = pmc_check_task(task);
		if (ret)
			goto out_exec;
	}

	counter = pmc_counter_alloc(&attr, pmu, cpu);
	if (IS_ERR(counter)) {
		ret = PTR_ERR(counter);
		goto out_exec;
	}
	/* At pmc_paranoid >= 2 samples of the unprivileged hide the kernel. */
	counter->kernel_visible = perfmon_capable() ||
				  READ_ONCE(sysctl_pmc_paranoid) < 2;
	counter->ns = get_pid_ns(task_active_pid_ns(current));
	counter->owner = current_uid();

	fd = get_unused_fd_flags(O_RDWR |
				 (flags & PMC_FLAG_FD_CLOEXEC ? O_CLOEXEC : 0));
	if (fd < 0) {
		ret = fd;
		goto out_counter;
	}

	pmc_key_get();
	ctx = task ? pmc_task_ctx_get(task) : pmc_cpu_ctx_get(cpu);
	if (IS_ERR(ctx)) {
		pmc_key_put();
		ret = PTR_ERR(ctx);
		goto out_fd;
	}
	counter->ctx = ctx;

	file = anon_inode_getfile("[pmc]", &pmc_fops, counter, O_RDWR);
	if (IS_ERR(file)) {
		ret = PTR_ERR(file);
		goto out_fd;
	}

	mutex_lock(&ctx->mutex);
	if (leader) {
		ret = pmc_check_leader(counter, leader);
		if (ret)
			goto out_unlock;
		counter->leader = leader;
	}
	ret = pmc_install(counter);
	if (ret)
		goto out_unlock;
	mutex_unlock(&ctx->mutex);

	if (task) {
		up_read(&task->signal->exec_update_lock);
		put_task_struct(task);
	}
	if (group_file)
		fput(group_file);
	fd_install(fd, file);
	return fd;

out_unlock:
	mutex_unlock(&ctx->mutex);
	/* The file owns the counter now: fput() frees it, never installed. */
	counter->leader = NULL;
	fput(file);
	put_unused_fd(fd);
	goto out_exec;
out_fd:
	put_unused_fd(fd);
out_counter:
	pmc_counter_free(counter);
out_exec:
	if (task)
		up_read(&task->signal->exec_update_lock);
out_task:
	if (task)
		put_task_struct(task);
out_group:
	if (group_file)
		fput(group_file);
	return ret;
}

static int pmc_release(struct inode *inode, struct file *file)
{
	struct pmc_counter *counter = file->private_data;

	/* A counter whose pmc_open() failed was never installed. */
	if (counter->leader)
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
static void __pmc_read(struct pmc_context *ctx, void *arg)
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

static ssize_t pmc_read(struct file *file, char __user *buf, size_t count,
			loff_t *ppos)
{
	struct pmc_counter *counter = file->private_data;
	u32 format = counter->attr.read_format;
	bool group = format & PMC_FORMAT_GROUP;
	struct pmc_read_args args = { .counter = counter };
	struct mutex *fold_lock = NULL;
	u64 on_stack[16];
	size_t nr, size;
	ssize_t ret;

	/* A group's size only changes under ctx->mutex: bound it first. */
	if (group)
		mutex_lock(&counter->ctx->mutex);
	/*
	 * An exited child's fold into the totals is one step: a copy's
	 * under its original's child_mutex, a copied group's under its
	 * original leader's (inherit.c). Only a leader with attr.inherit
	 * has its group copied, and it is stable under ctx->mutex.
	 */
	if (group && counter->leader->attr.inherit)
		fold_lock = &counter->leader->child_mutex;
	else if (!group && counter->attr.inherit)
		fold_lock = &counter->child_mutex;
	if (fold_lock)
		mutex_lock(fold_lock);
	nr = 1 + hweight32(format & (PMC_FORMAT_TOTAL_TIME_ENABLED |
				     PMC_FORMAT_TOTAL_TIME_RUNNING));
	if (group)
		nr += 1 + counter->leader->nr_siblings;
	size = nr * sizeof(u64);
	if (count < size) {
		ret = -ENOSPC;
		goto out;
	}
	args.values = nr <= ARRAY_SIZE(on_stack) ? on_stack :
		      kzalloc_objs(u64, nr);
	if (!args.values) {
		ret = -ENOMEM;
		goto out;
	}
	pmc_ctx_call(counter->ctx, __pmc_read, &args);
	if (args.error)
		ret = 0;
	else if (copy_to_user(buf, args.values, size))
		ret = -EFAULT;
	else
		ret = size;
	if (args.values != on_stack)
		kfree(args.values);
out:
	if (fold_lock)
		mutex_unlock(fold_lock);
	if (group)
		mutex_unlock(&counter->ctx->mutex);
	return ret;
}

static void __pmc_reset(struct pmc_context *ctx, void *arg)
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
static void pmc_apply_to_children(struct pmc_counter *counter, pmc_ctx_fn fn)
{
	struct pmc_counter *child;

	mutex_lock(&counter->child_mutex);
	pmc_ctx_call(counter->ctx, fn, counter);
	list_for_each_entry(child, &counter->child_list, child_entry)
		pmc_ctx_call(child->ctx, fn, child);
	mutex_unlock(&counter->child_mutex);
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

	mutex_lock(&counter->ctx->mutex);	/* the group's members */
	if (pmc_is_leader(counter)) {
		for_each_group_counter(pos, counter)
			pmc_rb_flush(pos);
	} else {
		pmc_rb_flush(counter);
	}
	mutex_unlock(&counter->ctx->mutex);
}

static long pmc_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct pmc_counter *counter = file->private_data;

	switch (cmd) {
	case PMC_IOC_ENABLE:
		pmc_apply_to_children(counter, pmc_enable_fn);
		return 0;
	case PMC_IOC_DISABLE:
		pmc_apply_to_children(counter, pmc_disable_fn);
		pmc_flush_disabled(counter);
		return 0;
	case PMC_IOC_RESET:
		pmc_apply_to_children(counter, __pmc_reset);
		return 0;
	case PMC_IOC_REFRESH:
		return pmc_refresh(counter, arg);
	default:
		return -ENOTTY;
	}
}

static void __pmc_fdinfo(struct pmc_context *ctx, void *arg)
{
	pmc_counter_fold(arg);
}

static void pmc_show_fdinfo(struct seq_file *m, struct file *file)
{
	struct pmc_counter *counter = file->private_data;

	pmc_ctx_call(counter->ctx, __pmc_fdinfo, counter);
	seq_printf(m, "pmc-config:\t%#llx\n", counter->attr.config);
	seq_printf(m, "pmc-state:\t%s\n",
		   pmc_state_names[counter->state - PMC_STATE_ERROR]);
	seq_printf(m, "pmc-count:\t%llu\n", pmc_counter_value(counter));
	seq_printf(m, "pmc-time-enabled:\t%llu\n", counter->time_enabled);
	seq_printf(m, "pmc-time-running:\t%llu\n", counter->time_running);
	seq_printf(m, "pmc-overflows:\t%lld\n",
		   (s64)atomic64_read(&counter->overflows));
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

static const struct ctl_table pmc_sysctls[] = {
	{
		.procname	= "pmc_paranoid",
		.data		= &sysctl_pmc_paranoid,
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= SYSCTL_NEG_ONE,
		.extra2		= SYSCTL_TWO,
	},
	{
		.procname	= "pmc_mux_interval_ms",
		.data		= &sysctl_pmc_mux_interval_ms,
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= SYSCTL_ONE,
		.extra2		= SYSCTL_ONE_THOUSAND,
	},
};

static int __init pmc_init(void)
{
	pmc_counter_cache = kmem_cache_create("pmc_counter",
					      sizeof(struct pmc_counter), 0,
					      SLAB_PANIC | SLAB_NO_MERGE, NULL);
	register_sysctl_init("kernel", pmc_sysctls);
	return 0;
}
core_initcall(pmc_init);
