/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * events-lite: pmc_open(2) performance counters.
 *
 * One file descriptor per 64-bit virtual counter. See
 * Documentation/userspace-api/pmc.rst for the full contract.
 */
#ifndef _UAPI_LINUX_PMC_H
#define _UAPI_LINUX_PMC_H

#include <linux/types.h>
#include <linux/ioctl.h>

/*
 * pmc_attr.config: bit 63 marks a raw (machine-specific) event, bits
 * 62..56 hold the type and bits 55..0 the event id.
 */
#define PMC_CONFIG_RAW		(1ULL << 63)
#define PMC_CONFIG_TYPE_SHIFT	56
#define PMC_CONFIG_TYPE_MASK	(0x7fULL << PMC_CONFIG_TYPE_SHIFT)
#define PMC_CONFIG_ID_MASK	((1ULL << PMC_CONFIG_TYPE_SHIFT) - 1)
#define PMC_CONFIG(type, id)	((((__u64)(type)) << PMC_CONFIG_TYPE_SHIFT) | \
				 ((__u64)(id) & PMC_CONFIG_ID_MASK))
#define PMC_CONFIG_TYPE(config)	(((config) & PMC_CONFIG_TYPE_MASK) >> \
				 PMC_CONFIG_TYPE_SHIFT)
#define PMC_CONFIG_ID(config)	((config) & PMC_CONFIG_ID_MASK)

enum pmc_type {
	PMC_TYPE_HARDWARE	= 0,
	PMC_TYPE_SOFTWARE	= 1,
	PMC_TYPE_TRACEPOINT	= 2,
};

enum pmc_hw_id {
	PMC_HW_CPU_CYCLES		= 0,
	PMC_HW_INSTRUCTIONS		= 1,
	PMC_HW_CACHE_REFERENCES		= 2,
	PMC_HW_CACHE_MISSES		= 3,
	PMC_HW_BRANCH_INSTRUCTIONS	= 4,
	PMC_HW_BRANCH_MISSES		= 5,
	PMC_HW_BUS_CYCLES		= 6,
	PMC_HW_MAX,
};

enum pmc_sw_id {
	PMC_SW_CPU_CLOCK	= 0,
	PMC_SW_TASK_CLOCK	= 1,
	PMC_SW_PAGE_FAULTS	= 2,
	PMC_SW_CONTEXT_SWITCHES	= 3,
	PMC_SW_CPU_MIGRATIONS	= 4,
	PMC_SW_PAGE_FAULTS_MIN	= 5,
	PMC_SW_PAGE_FAULTS_MAJ	= 6,
	PMC_SW_MAX,
};

/* The widest period_rand: periods stay within half to 1.5 irq_period. */
#define PMC_PERIOD_RAND_MAX	50

/* pmc_attr.record_type: what a sample record carries. */
#define PMC_RECORD_IP		(1U << 0)
#define PMC_RECORD_TID		(1U << 1)
#define PMC_RECORD_TIME		(1U << 2)
#define PMC_RECORD_ADDR		(1U << 3)
#define PMC_RECORD_GROUP	(1U << 4)
#define PMC_RECORD_CALLCHAIN	(1U << 5)
#define PMC_RECORD_PERIOD	(1U << 6)
#define PMC_RECORD_REGS_USER	(1U << 7)
#define PMC_RECORD_STACK_USER	(1U << 8)
#define PMC_RECORD_ALL		((1U << 9) - 1)

/*
 * PMC_RECORD_REGS_USER: the sample's u64 abi says how its user registers
 * were read; with PMC_REGS_ABI_NONE (a kernel thread) no registers follow.
 */
#define PMC_REGS_ABI_NONE	0
#define PMC_REGS_ABI_32		1
#define PMC_REGS_ABI_64		2

/* The largest pmc_attr.stack_user: a record's size is a __u16. */
#define PMC_STACK_USER_MAX	65528

/* pmc_attr.read_format: what read() returns after the value. */
#define PMC_FORMAT_TOTAL_TIME_ENABLED	(1U << 0)
#define PMC_FORMAT_TOTAL_TIME_RUNNING	(1U << 1)
#define PMC_FORMAT_GROUP		(1U << 2)
#define PMC_FORMAT_ALL			((1U << 3) - 1)

struct pmc_attr {
	__u64 config;		/* raw bit | type | event id */
	__u64 irq_period;	/* 0: counting; >0: sample every N events */
	__u32 record_type;	/* PMC_RECORD_* bits for samples */
	__u32 read_format;	/* PMC_FORMAT_* bits for read() */
	__u64 disabled       : 1, /* start disabled */
	      inherit        : 1, /* children created after open count too */
	      pinned         : 1, /* group must always be on the PMU */
	      exclusive      : 1, /* group alone on the PMU while on */
	      exclude_user   : 1,
	      exclude_kernel : 1,
	      exclude_hv     : 1, /* x86: nothing to exclude, see docs */
	      exclude_idle   : 1, /* software only: not in the idle task */
	      mmap           : 1, /* PMC_EVENT_MMAP/MUNMAP records... */
	      munmap         : 1, /* ...for PROT_EXEC mappings */
	      comm           : 1, /* PMC_EVENT_COMM, FORK, EXIT records */
	      period_rand    : 7, /* 0, or draw each period from
				   * irq_period +- period_rand % (1..50)
				   */
	      time_all       : 1, /* MMAP, MUNMAP, COMM records end with
				   * u64 time
				   */
	      freq           : 1, /* irq_period is a rate: samples
				   * per second, the kernel sets the period
				   */
	      __reserved_1   : 44;
	__u32 extra_config_len;	/* must be 0 for now */
	__u32 wakeup_events;	/* wake poll() every N samples; 0: per page */
	__u64 regs_user;	/* PMC_RECORD_REGS_USER: PERF_REG_* bits */
	__u64 __reserved_3;
	__u32 size;		/* sizeof(struct pmc_attr) the caller knows;
				 * 0: PMC_ATTR_SIZE_VER0
				 */
	__u32 stack_user;	/* PMC_RECORD_STACK_USER: bytes, 8-aligned */
};

/* The first published size of struct pmc_attr. */
#define PMC_ATTR_SIZE_VER0	64

/* pmc_open() flags */
#define PMC_FLAG_FD_CLOEXEC	(1UL << 0)

/* ioctl()s on a counter fd; 0xB9 is registered in ioctl-number.rst. */
#define PMC_IOC_MAGIC		0xB9
#define PMC_IOC_ENABLE		_IO(PMC_IOC_MAGIC, 0)
#define PMC_IOC_DISABLE		_IO(PMC_IOC_MAGIC, 1)
#define PMC_IOC_RESET		_IO(PMC_IOC_MAGIC, 2)
#define PMC_IOC_REFRESH		_IO(PMC_IOC_MAGIC, 3)

/* prctl() options, also in <linux/prctl.h>; the definitions are identical. */
#define PR_TASK_PMC_ENABLE	82
#define PR_TASK_PMC_DISABLE	83

/*
 * Page 0 of a counter's mmap()ed ring buffer. With a capability set, a
 * task reads its own counter without a system call (see "Reading a
 * counter without a system call" in Documentation/userspace-api/pmc.rst):
 * delta, the nanoseconds since the page's stamp, is
 *	time_offset + (cyc >> time_shift) * time_mult +
 *	(((cyc & ((1 << time_shift) - 1)) * time_mult) >> time_shift)
 * for the TSC value cyc; time_enabled grows by delta, and with
 * cap_user_count_time the count (offset, signed) and time_running too.
 * With none, the fields are as of the last update and the caller uses
 * read().
 */
struct pmc_mmap_page {
	__u32 version;		/* 1 */
	__u32 compat_version;	/* 1 */
	__u32 lock;		/* seqlock for the fields below */
	__u32 index;		/* hw counter + 1 for rdpmc, 0: use read() */
	__s64 offset;		/* add to the hw counter value */
	__u64 time_enabled;
	__u64 time_running;
	__u64 cap_user_rdpmc : 1,	/* index/pmc_width valid */
	      cap_user_time : 1,	/* time_* valid */
	      cap_user_count_time : 1,	/* the count is a clock running on
					 * its task: it grows by delta too
					 */
	      cap_____res : 61;
	__u16 pmc_width;
	__u16 time_shift;
	__u32 time_mult;
	__u64 time_offset;
	__u64 __reserved[120];	/* pad so data_head sits at byte 1024 */
	__u64 data_head;	/* bytes written, monotonic */
	__u64 data_tail;	/* bytes consumed, written by user */
};

#define PMC_EVENT_MISC_KERNEL	(1 << 0)
#define PMC_EVENT_MISC_USER	(1 << 1)
#define PMC_EVENT_MISC_OVERFLOW	(1 << 2)

struct pmc_event_header {
	__u32 type;
	__u16 misc;
	__u16 size;
};

/*
 * Non-sample record types. A sample has PMC_EVENT_MISC_OVERFLOW in misc
 * and type == pmc_attr.record_type.
 *
 * PMC_EVENT_MMAP, PMC_EVENT_MUNMAP:
 *	{ header; u32 pid, tid; u64 addr, len, pgoff; char filename[]; }
 *	PROT_EXEC file mappings, and the kernel's named code mappings
 *	("[vdso]", pgoff 0).
 * PMC_EVENT_COMM:
 *	{ header; u32 pid, tid; char comm[]; }
 *	With attr.time_all, MMAP, MUNMAP and COMM records end with a
 *	u64 time (the last 8 bytes of the record), on the clock of
 *	PMC_RECORD_TIME, so that the records of several buffers can be
 *	merged in time order.
 * PMC_EVENT_FORK, PMC_EVENT_EXIT (counters with attr.comm):
 *	{ header; u32 pid, ppid; u32 tid, ptid; u64 time; }
 *	FORK: the new task pid/tid, created by ppid/ptid, written before
 *	the new task first runs. EXIT: the task pid/tid leaving, and its
 *	parent ppid/ptid, written before its counters stop. time is on the
 *	clock of PMC_RECORD_TIME.
 * PMC_EVENT_LOST:
 *	{ header; u64 id; u64 lost; }
 *	lost counts the records that found no room (or the buffer busy)
 *	and the sample periods that ended without a sample of their own,
 *	such as those a clock's late timer stepped over. Pending losses
 *	are written before the next record that fits, at PMC_IOC_DISABLE
 *	and at poll(), whichever first finds room.
 *
 * PMC_EVENT_THROTTLE, PMC_EVENT_UNTHROTTLE:
 *	{ header; u64 id; u64 time; }
 *	The counter overflowed more often than
 *	/proc/sys/kernel/pmc_max_sample_rate allows a counter, or its
 *	owner's overflow interrupts used their share of
 *	/proc/sys/kernel/pmc_cpu_time_max_percent of its CPU's tick, and
 *	it takes no samples (it still counts) until UNTHROTTLE, at a later
 *	tick. time is on the clock of PMC_RECORD_TIME.
 */
enum pmc_event_type {
	PMC_EVENT_MMAP		= 1,
	PMC_EVENT_MUNMAP	= 2,
	PMC_EVENT_COMM		= 3,
	PMC_EVENT_LOST		= 4,
	PMC_EVENT_THROTTLE	= 5,
	PMC_EVENT_UNTHROTTLE	= 6,
	PMC_EVENT_FORK		= 7,
	PMC_EVENT_EXIT		= 8,
};

#endif /* _UAPI_LINUX_PMC_H */
