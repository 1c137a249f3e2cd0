// SPDX-License-Identifier: GPL-2.0
/*
 * events-lite ring buffer: the pages a sampling counter's records go
 * to, mapped by the reader with mmap().
 *
 * Page 0 is struct pmc_mmap_page; the 2^n pages after it hold records.
 * A mapping of page 0 alone has no room for records, which it drops: it
 * is for reading the counter (userpage.c).
 * The kernel advances data_head; a read-write mapping's reader advances
 * data_tail, and the kernel never overwrites data past it (what does not
 * fit is counted and reported later in one PMC_EVENT_LOST record); a
 * read-only mapping is overwritten from the oldest data on.
 *
 * The pending loss is written, when there is room for it, before the
 * next record, and at the two points where a reader may otherwise wait
 * for a record that never comes: PMC_IOC_DISABLE and poll() (see
 * pmc_rb_flush()). The kernel cannot see data_tail move, so a reader
 * that drains a full ring after the disable gets its LOST record from
 * its next poll() or PMC_IOC_DISABLE.
 *
 * Writers run in process context (page faults, context switches, mmap,
 * comm), hardirq (software clock timers, irq_work) and NMI (hardware
 * overflows), on any CPU when children share an inherited counter's
 * buffer, and nest on one CPU when an interrupt lands on a writer. They
 * take no lock, so that no record is refused for being in the wrong
 * context:
 *
 *  - a writer enters (rb->nest++), reserves its bytes by moving rb->head
 *    with a cmpxchg, copies its record in, and leaves;
 *  - only a writer that finds itself the only one inside publishes
 *    data_head (and page 0's counter fields, unless the task reads the
 *    counter there: see userpage.c): every byte below rb->head
 *    then belongs to a writer that has left, so it is written. Writers
 *    that leave while others are inside leave the publishing, and any
 *    wakeup they took, to the last one out;
 *  - a publisher that finds rb->head moved, or a wakeup asked for, after
 *    it left (a writer came and went while it published) enters again
 *    and looks once more.
 *
 * So data_head only moves forward, one publisher at a time, and never
 * covers a reservation that is still being written. A writer cannot
 * sleep or be preempted inside; one that an interrupt or another CPU
 * overlaps publishes late, never loses a record. Under a stream of
 * overlapping writers from several CPUs data_head may lag until the
 * stream has a gap, as perf's does within one CPU's nesting.
 *
 * Ordering with the reader, who reads data_head, then records, then
 * writes data_tail:
 *
 *	kernel				user
 *	tail = READ(data_tail)		head = READ(data_head)
 *	cmpxchg(rb->head)  (A)		smp_rmb()	(C)
 *	write records			read records
 *	smp_mb()	(B)		smp_mb()	(D)
 *	WRITE(data_head, head)		WRITE(data_tail, tail)
 *
 * (A), a fully ordered cmpxchg, pairs with (D): no record is written
 * over data before the reader is done with it. (B) pairs with (C): the
 * reader never sees a head beyond records that are not yet written,
 * those of other writers included (their leaving, a fully ordered
 * atomic, comes after their records; the publisher saw it before (B)).
 * data_tail is the user's to write anything into: only its offset in
 * the buffer is used, so that no value of it lets a record overrun
 * unread data or the buffer.
 *
 * Lifetime: every VMA that maps a buffer holds it (vm_private_data and
 * mmap_count), copies made by mremap() and fork() included, so pages
 * and their locked-memory charge last exactly as long as some mapping
 * can reach them. counter->rb points at the buffer while it is mapped,
 * so all mappings of a counter share one buffer. A buffer cannot be
 * split: a partial munmap() fails with EINVAL.
 */
#include <linux/circ_buf.h>
#include <linux/mm.h>
#include <linux/poll.h>
#include <linux/sched/clock.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "internal.h"

/* Locked memory every user may use for ring buffers, beyond the rlimit. */
int sysctl_pmc_mlock_kb __read_mostly = 512 + (PAGE_SIZE / 1024);

#define PMC_RB_MAX_ORDER	16	/* 2^16 data pages at most */

struct pmc_ring_buffer {
	atomic_t mmap_count;		/* VMAs mapping it; frees it at 0 */
	struct rcu_head rcu;
	struct pmc_mmap_page *user_page;
	void *data;
	u64 size;			/* bytes of data, a power of 2 */
	bool overwrite;			/* read-only mapping */

	/* Writers, any context, lockless: see above. */
	atomic64_t head;		/* reserved up to here */
	atomic_t nest;			/* writers inside */
	atomic_t samples;		/* since the last wakeup_events wakeup */
	atomic_t wake;			/* a writer asks the publisher to wake */
	atomic64_t lost;		/* records dropped, not yet reported */
	u64 published;			/* data_head; the publisher's */

	atomic_t poll;			/* EPOLLIN since the last poll() */
	unsigned long user_pages;	/* charged to user->pmc_mlock */
	unsigned long mm_pages;		/* charged to mm->pinned_vm */
	struct user_struct *user;
	struct mm_struct *mm;
};

/* After the last writer that could see it in counter->rb is done. */
static void pmc_rb_free_rcu(struct rcu_head *head)
{
	struct pmc_ring_buffer *rb = container_of(head, struct pmc_ring_buffer,
						  rcu);

	vfree(rb->user_page);
	kfree(rb);
}

struct pmc_mmap_page *pmc_rb_user_page(struct pmc_ring_buffer *rb)
{
	return rb->user_page;
}

/*
 * The publisher's page 0 fields, under their seqcount. Not for a counter
 * its task may read there (userpage.c): those fields are rewritten under
 * ctx->lock only, so each page has one writer of them.
 */
static void pmc_rb_update_userpage(struct pmc_ring_buffer *rb,
				   struct pmc_counter *owner)
{
	struct pmc_mmap_page *up = rb->user_page;

	if (owner->userpage_allowed)
		return;
	pmc_rb_page_write_begin(up);
	up->index = 0;		/* no user-space counter reads: use read() */
	up->offset = local64_read(&owner->count);
	up->time_enabled = owner->time_enabled;
	up->time_running = owner->time_running;
	pmc_rb_page_write_end(up);
}

static void pmc_rb_wakeup(struct pmc_counter *owner, struct pmc_ring_buffer *rb)
{
	atomic_set(&rb->poll, EPOLLIN | EPOLLRDNORM);
	irq_work_queue(&owner->wakeup_work);
}

/*
 * irq_work (hardirq; a per-CPU kthread on PREEMPT_RT): wake poll() and
 * send the SIGIO an overflow asked for, outside any writer's context.
 * A copy has no file: its signal goes to its original's owner. Its time
 * counts in the overflow time bound (see throttle.c).
 */
static void pmc_rb_wakeup_work(struct irq_work *work)
{
	struct pmc_counter *counter = container_of(work, struct pmc_counter,
						   wakeup_work);
	int code = xchg(&counter->pending_kill, 0);
	u64 start = local_clock();

	wake_up_all(&counter->waitq);
	if (code)
		kill_fasync(&pmc_counter_original(counter)->fasync, SIGIO,
			    code);
	pmc_wakeup_took(counter, local_clock() - start);
}

/**
 * pmc_rb_signal() - send SIGIO for one overflow of @counter
 * @counter: the overflowing counter
 * @code: POLL_IN, or POLL_HUP for the last overflow of a REFRESH budget
 *
 * One overflow, one signal, to the owner set with F_SETOWN and O_ASYNC,
 * whether or not a buffer is mapped and whatever wakeup_events says, as
 * perf does. Wakeups of the buffer alone send none. Any context, NMI
 * included.
 */
void pmc_rb_signal(struct pmc_counter *counter, int code)
{
	if (!READ_ONCE(pmc_counter_original(counter)->fasync))
		return;
	WRITE_ONCE(counter->pending_kill, code);
	irq_work_queue(&counter->wakeup_work);
}

void pmc_rb_counter_init(struct pmc_counter *counter)
{
	mutex_init(&counter->mmap_mutex);
	init_waitqueue_head(&counter->waitq);
	init_irq_work(&counter->wakeup_work, pmc_rb_wakeup_work);
}

void pmc_rb_counter_destroy(struct pmc_counter *counter)
{
	irq_work_sync(&counter->wakeup_work);
}

static void pmc_rb_copy(struct pmc_ring_buffer *rb, u64 pos, const void *buf,
			size_t len)
{
	u64 off = pos & (rb->size - 1);
	size_t first = min_t(u64, len, rb->size - off);

	memcpy(rb->data + off, buf, first);
	if (first < len)
		memcpy(rb->data, buf + first, len - first);
}

/*
 * Copy @len bytes of the current task's memory at @user to @pos, a page
 * at a time, up to the first that cannot be read without a fault; the
 * rest is zeroed. Returns the bytes copied. copy_from_user_nofault()
 * never sleeps, and refuses in an NMI that came while another mm was
 * loaded.
 */
static u64 pmc_rb_copy_user(struct pmc_ring_buffer *rb, u64 pos,
			    const void __user *user, size_t len)
{
	size_t done = 0, copied = 0, chunk;
	unsigned long from;
	u64 off;

	for (; done < len; done += chunk) {
		off = (pos + done) & (rb->size - 1);
		from = (unsigned long)user + done;
		chunk = min3(len - done, (size_t)(rb->size - off),
			     (size_t)(PAGE_SIZE - offset_in_page(from)));
		if (copied == done &&
		    !copy_from_user_nofault(rb->data + off,
					    (const void __user *)from, chunk))
			copied += chunk;
		else
			memset(rb->data + off, 0, chunk);
	}
	return copied;
}

/* Enter as a writer: counted before any reservation can be seen. */
static void pmc_rb_enter(struct pmc_ring_buffer *rb)
{
	atomic_inc(&rb->nest);
	smp_mb__after_atomic();	/* nest before the reservation: see leave */
}

/* Reserve @len bytes at rb->head in *@pos, if they fit before data_tail. */
static bool pmc_rb_reserve(struct pmc_ring_buffer *rb, u64 len, u64 *pos)
{
	s64 head = atomic64_read(&rb->head);
	u64 tail;

	if (len > rb->size)
		return false;
	do {
		if (!rb->overwrite) {
			tail = READ_ONCE(rb->user_page->data_tail);
			if (CIRC_SPACE(head, tail, rb->size) < len)
				return false;
		}
	} while (!atomic64_try_cmpxchg(&rb->head, &head, head + len)); /* (A) */
	*pos = head;
	return true;
}

/*
 * Publish @head, the only writer inside. Returns true if the reader is
 * to be woken: a page filled since the last publish (wakeup_events 0),
 * or a writer asked for it (pmc_rb_output()).
 */
static bool pmc_rb_publish(struct pmc_ring_buffer *rb,
			   struct pmc_counter *owner, u64 head)
{
	bool wake = !owner->attr.wakeup_events &&
		    head / PAGE_SIZE != rb->published / PAGE_SIZE;

	smp_mb();		/* (B) */
	WRITE_ONCE(rb->user_page->data_head, head);
	rb->published = head;
	pmc_rb_update_userpage(rb, owner);
	return atomic_xchg(&rb->wake, 0) || wake;
}

/*
 * Leave as a writer; the last one out publishes (see the top). Returns
 * true if the reader is to be woken.
 */
static bool pmc_rb_leave(struct pmc_ring_buffer *rb, struct pmc_counter *owner)
{
	int nest = atomic_read(&rb->nest);
	bool wake = false;
	s64 head;

	for (;;) {
		if (nest > 1) {
			/*
			 * Someone else is inside: the last one out publishes,
			 * and wakes the reader for any request we took, once
			 * the records it asked for are visible.
			 */
			if (wake)
				atomic_set(&rb->wake, 1);
			if (atomic_try_cmpxchg(&rb->nest, &nest, nest - 1))
				return false;
			continue;
		}
		smp_rmb();	/* nest == 1 before head: no older head */
		head = atomic64_read(&rb->head);
		smp_rmb();	/* a writer that reserved below head is counted */
		nest = atomic_read(&rb->nest);
		if (nest > 1)
			continue;
		wake |= pmc_rb_publish(rb, owner, head);
		if (!atomic_try_cmpxchg(&rb->nest, &nest, 0))
			continue;
		if (atomic64_read(&rb->head) == head && !atomic_read(&rb->wake))
			return wake;
		/* A writer came and went while we published: look again. */
		pmc_rb_enter(rb);
		nest = atomic_read(&rb->nest);
	}
}

/* Wake every wakeup_events samples; true for the one that does. */
static bool pmc_rb_count_sample(struct pmc_ring_buffer *rb, u32 every)
{
	int old = atomic_read(&rb->samples), new;

	do {
		new = (u32)old + 1 >= every ? 0 : old + 1;
	} while (!atomic_try_cmpxchg(&rb->samples, &old, new));
	return !new;
}

struct pmc_lost_rec {
	struct pmc_event_header header;
	u64 id;
	u64 lost;
};

/*
 * Inside, write the pending LOST record, if any, and then @len bytes in
 * @parts (none for a flush). What does not fit is counted lost again.
 * The reader is to be woken (by the publisher, once it can see the
 * records) for a LOST record alone, a completed wakeup_events batch,
 * or a lost record: it is behind, tell it again.
 */
static void pmc_rb_output(struct pmc_ring_buffer *rb, struct pmc_counter *owner,
			  const struct pmc_rb_part *parts, int nr_parts,
			  u64 len, bool sample)
{
	struct pmc_lost_rec rec;
	u64 pos, lost = 0, rec_len = 0;
	int i;

	/* Claimed whole, so that two writers never report one loss twice. */
	if (atomic64_read(&rb->lost)) {
		lost = atomic64_xchg(&rb->lost, 0);
		rec_len = lost ? sizeof(rec) : 0;
	}
	if (!rec_len && !len)
		return;
	if (!pmc_rb_reserve(rb, rec_len + len, &pos)) {
		if (len) {
			atomic64_inc(&rb->lost);
			atomic_set(&rb->wake, 1);	/* tell it again */
		}
		if (!rec_len || !pmc_rb_reserve(rb, rec_len, &pos)) {
			atomic64_add(lost, &rb->lost);
			return;
		}
		len = 0;	/* the LOST record alone fits */
	}
	if (rec_len) {
		rec.header.type = PMC_EVENT_LOST;
		rec.header.misc = 0;
		rec.header.size = sizeof(rec);
		rec.id = owner->id;
		rec.lost = lost;
		pmc_rb_copy(rb, pos, &rec, rec_len);
		pos += rec_len;
		if (!len)
			atomic_set(&rb->wake, 1);
	}
	if (!len)
		return;
	for (i = 0; i < nr_parts; i++) {
		if (parts[i].copied)
			*parts[i].copied = pmc_rb_copy_user(rb, pos, parts[i].user,
							    parts[i].len);
		else
			pmc_rb_copy(rb, pos, parts[i].buf, parts[i].len);
		pos += parts[i].len;
	}
	if (sample && owner->attr.wakeup_events &&
	    pmc_rb_count_sample(rb, owner->attr.wakeup_events))
		atomic_set(&rb->wake, 1);
}

/*
 * Write one record (@len bytes in @parts) to @counter's buffer, or with
 * no parts only the pending LOST record. Returns false if there is no
 * buffer; a record that does not fit is counted lost. Any context, NMI
 * included.
 */
bool pmc_rb_write(struct pmc_counter *counter, const struct pmc_rb_part *parts,
		  int nr_parts, bool sample)
{
	struct pmc_counter *owner = pmc_counter_original(counter);
	struct pmc_ring_buffer *rb;
	bool wake;
	u64 len = 0;
	int i;

	for (i = 0; i < nr_parts; i++)
		len += parts[i].len;

	guard(rcu)();
	rb = rcu_dereference(owner->rb);
	/* Page 0 alone has no room: records are not for that mapping. */
	if (!rb || !rb->size)
		return false;
	/* A flush with nothing pending, the common case: nothing to do. */
	if (!len && !atomic64_read(&rb->lost))
		return true;
	/* Inside, a writer holds data_head back: no preemption there. */
	scoped_guard(preempt) {
		pmc_rb_enter(rb);
		pmc_rb_output(rb, owner, parts, nr_parts, len, sample);
		wake = pmc_rb_leave(rb, owner);
	}
	if (wake)
		pmc_rb_wakeup(owner, rb);
	return true;
}

/*
 * @nr samples that were never written: a record that could not even be
 * built, or periods that ended without a sample (pmc_counter_skipped()).
 * Reported with the other losses. Any context, NMI included.
 */
void pmc_rb_lost(struct pmc_counter *counter, u64 nr)
{
	struct pmc_ring_buffer *rb;

	rcu_read_lock();
	rb = rcu_dereference(pmc_counter_original(counter)->rb);
	if (rb && rb->size)
		atomic64_add(nr, &rb->lost);
	rcu_read_unlock();
}

/**
 * pmc_rb_flush() - write @counter's pending LOST record, if there is room
 * @counter: a counter whose file the reader holds
 *
 * Losses are reported by the next record written after room returns,
 * and a counter that is disabled writes no next record. This writes the
 * pending LOST record now: at PMC_IOC_DISABLE, once no overflow of the
 * counter is in flight, and at poll(), after the reader's last pass
 * made room. Process context.
 */
void pmc_rb_flush(struct pmc_counter *counter)
{
	pmc_rb_write(counter, NULL, 0, false);
}

/* Readers still to be told: the task exited, or a REFRESH ran out. */
void pmc_rb_kick(struct pmc_counter *counter)
{
	struct pmc_counter *owner = pmc_counter_original(counter);
	struct pmc_ring_buffer *rb;

	rcu_read_lock();
	rb = rcu_dereference(owner->rb);
	if (rb)
		atomic_set(&rb->poll, EPOLLIN | EPOLLRDNORM);
	rcu_read_unlock();
	irq_work_queue(&owner->wakeup_work);
}

__poll_t pmc_rb_poll(struct pmc_counter *counter, struct file *file,
		     poll_table *wait)
{
	struct pmc_ring_buffer *rb;
	__poll_t events = 0;
	bool drained = true;

	poll_wait(file, &counter->waitq, wait);
	/* A loss still pending after the reader's last pass: report it. */
	pmc_rb_flush(counter);
	rcu_read_lock();
	rb = rcu_dereference(counter->rb);
	if (rb) {
		events = atomic_xchg(&rb->poll, 0);
		drained = rb->overwrite ||
			  READ_ONCE(rb->user_page->data_head) ==
			  READ_ONCE(rb->user_page->data_tail);
		if (!drained)
			events |= EPOLLIN | EPOLLRDNORM;
	}
	rcu_read_unlock();
	/*
	 * The monitored task is gone: POLLHUP at once, with POLLIN while
	 * records remain, so that a reader that polls without reading
	 * still sees the end, as with perf.
	 */
	if (READ_ONCE(counter->ctx->task) == PMC_TASK_DEAD)
		events |= EPOLLHUP;
	return events;
}

/*
 * Charge @pages of locked memory: first to the user's pmc_mlock_kb
 * allowance, the rest to the mapping process's pinned memory under
 * RLIMIT_MEMLOCK. EPERM over both, unless CAP_IPC_LOCK. Each part is
 * added first and checked after, so that racing mmap()s cannot all
 * pass one check.
 */
static int pmc_rb_charge(struct pmc_ring_buffer *rb, unsigned long pages)
{
	unsigned long allowance = READ_ONCE(sysctl_pmc_mlock_kb) >>
				  (PAGE_SHIFT - 10);
	unsigned long rlimit_pages = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	struct user_struct *user = current_user();
	struct mm_struct *mm = current->mm;
	unsigned long used, extra = 0;

	used = atomic_long_add_return(pages, &user->pmc_mlock);
	if (used > allowance)
		extra = min(pages, used - allowance);
	atomic_long_sub(extra, &user->pmc_mlock);
	if (extra && atomic64_add_return(extra, &mm->pinned_vm) > rlimit_pages &&
	    !capable(CAP_IPC_LOCK)) {
		atomic64_sub(extra, &mm->pinned_vm);
		atomic_long_sub(pages - extra, &user->pmc_mlock);
		return -EPERM;
	}
	rb->user = get_uid(user);
	rb->user_pages = pages - extra;
	rb->mm = mm;
	mmgrab(mm);
	rb->mm_pages = extra;
	return 0;
}

/* Return exactly what pmc_rb_charge() took. */
static void pmc_rb_uncharge(struct pmc_ring_buffer *rb)
{
	atomic_long_sub(rb->user_pages, &rb->user->pmc_mlock);
	atomic64_sub(rb->mm_pages, &rb->mm->pinned_vm);
	free_uid(rb->user);
	mmdrop(rb->mm);
}

/*
 * A new buffer, charged before its pages are allocated: a refused
 * mmap() costs nothing. Its mmap_count is 0 until the first VMA.
 */
static struct pmc_ring_buffer *pmc_rb_alloc(unsigned long data_pages,
					    bool overwrite)
{
	struct pmc_ring_buffer *rb;
	int ret;

	rb = kzalloc_obj(*rb);
	if (!rb)
		return ERR_PTR(-ENOMEM);
	ret = pmc_rb_charge(rb, data_pages + 1);
	if (ret) {
		kfree(rb);
		return ERR_PTR(ret);
	}
	rb->user_page = vmalloc_user((data_pages + 1) * PAGE_SIZE);
	if (!rb->user_page) {
		pmc_rb_uncharge(rb);
		kfree(rb);
		return ERR_PTR(-ENOMEM);
	}
	rb->data = (void *)rb->user_page + PAGE_SIZE;
	rb->size = data_pages * PAGE_SIZE;
	rb->overwrite = overwrite;
	rb->user_page->version = 1;
	rb->user_page->compat_version = 1;
	return rb;
}

/* Not mapped any more: no user address reaches it. */
static void pmc_rb_free(struct pmc_ring_buffer *rb)
{
	pmc_rb_uncharge(rb);
	call_rcu(&rb->rcu, pmc_rb_free_rcu);
}

/* mremap() and fork() copy a VMA: the copy holds the buffer too. */
static void pmc_vm_open(struct vm_area_struct *vma)
{
	struct pmc_ring_buffer *rb = vma->vm_private_data;

	atomic_inc(&rb->mmap_count);
	pmc_userpage_vma_mapped(vma->vm_file->private_data, vma->vm_mm);
}

static void pmc_vm_close(struct vm_area_struct *vma)
{
	struct pmc_counter *counter = vma->vm_file->private_data;
	struct pmc_ring_buffer *rb = vma->vm_private_data;

	pmc_userpage_vma_unmapped(counter, vma->vm_mm);
	if (!atomic_dec_and_mutex_lock(&rb->mmap_count, &counter->mmap_mutex))
		return;
	/* The last mapping: writers stop finding it, then it goes. */
	if (rcu_access_pointer(counter->rb) == rb) {
		pmc_userpage_unmap(counter);
		RCU_INIT_POINTER(counter->rb, NULL);
	}
	mutex_unlock(&counter->mmap_mutex);
	pmc_rb_free(rb);
}

/* The buffer cannot be split by a partial munmap() or mremap(). */
static int pmc_vm_may_split(struct vm_area_struct *vma, unsigned long addr)
{
	return -EINVAL;
}

static const struct vm_operations_struct pmc_vm_ops = {
	.open		= pmc_vm_open,
	.close		= pmc_vm_close,
	.may_split	= pmc_vm_may_split,
};

int pmc_rb_mmap(struct pmc_counter *counter, struct vm_area_struct *vma)
{
	unsigned long pages = vma_pages(vma), data_pages = pages - 1;
	bool overwrite = !(vma->vm_flags & VM_WRITE);
	struct pmc_ring_buffer *rb;
	int ret;

	/* Page 0 alone (no data pages) is for reading the counter. */
	if (vma->vm_pgoff || !(vma->vm_flags & VM_SHARED) ||
	    (data_pages && (!is_power_of_2(data_pages) ||
			    ilog2(data_pages) > PMC_RB_MAX_ORDER)))
		return -EINVAL;

	guard(mutex)(&counter->mmap_mutex);
	rb = rcu_dereference_protected(counter->rb,
				       lockdep_is_held(&counter->mmap_mutex));
	if (rb) {
		/* Another mapping of the same buffer. */
		if (rb->size != data_pages * PAGE_SIZE ||
		    rb->overwrite != overwrite)
			return -EINVAL;
	} else {
		rb = pmc_rb_alloc(data_pages, overwrite);
		if (IS_ERR(rb))
			return PTR_ERR(rb);
	}
	ret = remap_vmalloc_range(vma, rb->user_page, 0);
	if (ret) {
		if (!atomic_read(&rb->mmap_count))
			pmc_rb_free(rb);
		return ret;
	}
	/* rdpmc allowed before the page offers it */
	pmc_userpage_vma_mapped(counter, vma->vm_mm);
	if (atomic_inc_return(&rb->mmap_count) == 1) {
		rcu_assign_pointer(counter->rb, rb);
		pmc_userpage_map(counter);
	}
	vm_flags_set(vma, VM_DONTCOPY | VM_DONTEXPAND | VM_DONTDUMP);
	vma->vm_private_data = rb;
	vma->vm_ops = &pmc_vm_ops;
	return 0;
}
