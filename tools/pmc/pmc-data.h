/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The data file pmc-record writes and pmc-report reads.
 *
 * A file is one struct pmc_data_header, then (at header_size) the ring
 * buffer's records exactly as the kernel wrote them, in the order they
 * were read: each starts with a struct pmc_event_header and is a
 * multiple of 8 bytes long. With header.attr.time_all, MMAP, MUNMAP and
 * COMM records end with their time, and a reader merges the buffers of
 * several CPUs by it. Keeping the kernel's layout means the file
 * needs no second format, and a new record type passes through unchanged.
 *
 * Everything is in the byte order of the machine that recorded; a file
 * from a machine of the other order shows up as a byte-swapped magic.
 */
#ifndef _PMC_DATA_H
#define _PMC_DATA_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <linux/pmc.h>

#define PMC_DATA_BOOT_ID_PATH	"/proc/sys/kernel/random/boot_id"

/* "PMCDATA1" read as a little-endian u64. */
#define PMC_DATA_MAGIC		0x3141544144434d50ULL
#define PMC_DATA_VERSION	1
/* A recording of several events: PMC_DATA_EVENT and PMC_DATA_SOURCE. */
#define PMC_DATA_VERSION_EVENTS	2

/* data_size of a recording that did not finish (pmc-record was killed). */
#define PMC_DATA_SIZE_UNKNOWN	(~0ULL)

#define PMC_DATA_EVENT_LEN	64
#define PMC_DATA_COMM_LEN	16	/* the kernel's TASK_COMM_LEN */
#define PMC_DATA_CMDLINE_LEN	256
#define PMC_DATA_BOOT_ID_LEN	40	/* a UUID and its NUL, padded */

struct pmc_data_header {
	__u64 magic;			/* PMC_DATA_MAGIC */
	__u32 version;			/* PMC_DATA_VERSION */
	__u32 header_size;		/* records start at this offset */
	struct pmc_attr attr;		/* as pmc_open() accepted it (the
					 * first event's, in version 2)
					 */
	/*
	 * Written once recording ends; until then data_size is
	 * PMC_DATA_SIZE_UNKNOWN and the counts are 0.
	 */
	__u64 data_size;		/* bytes of records after the header */
	__u64 nr_samples;		/* sample records among them */
	__u64 nr_lost;			/* sum of PMC_EVENT_LOST counts */
	__u32 pid;			/* the command's process, or: */
#define PMC_DATA_ALL_CPUS	(~0U)	/* -a: every task on every CPU */
	__u32 __pad;
	/* NUL-terminated strings, zero-filled. */
	char event[PMC_DATA_EVENT_LEN];	/* event name as given to -e (the
					 * first event's, in version 2)
					 */
	char comm[PMC_DATA_COMM_LEN];	/* the command's comm after exec */
	char cmdline[PMC_DATA_CMDLINE_LEN]; /* the command line, truncated */
	/*
	 * /proc/sys/kernel/random/boot_id when recording, "" if unknown:
	 * kernel addresses only resolve against the same boot's kallsyms.
	 */
	char boot_id[PMC_DATA_BOOT_ID_LEN];
};

_Static_assert(sizeof(struct pmc_data_header) % 8 == 0,
	       "records after the header must stay 8-byte aligned");

/* PMC_EVENT_MMAP and PMC_EVENT_MUNMAP, followed by the file name. */
struct pmc_data_mmap {
	struct pmc_event_header header;
	__u32 pid, tid;
	__u64 addr, len;
	__u64 pgoff;			/* file offset of addr, in bytes */
	char filename[];		/* NUL-terminated, padded to 8 bytes */
};

struct pmc_data_comm {
	struct pmc_event_header header;
	__u32 pid, tid;
	char comm[];			/* NUL-terminated, padded to 8 bytes */
};

/* PMC_EVENT_FORK and PMC_EVENT_EXIT */
struct pmc_data_task {
	struct pmc_event_header header;
	__u32 pid, ppid;		/* the task's process, its parent's */
	__u32 tid, ptid;
	__u64 time;			/* on PMC_RECORD_TIME's clock */
};

struct pmc_data_lost {
	struct pmc_event_header header;
	__u64 id;
	__u64 lost;			/* samples that did not fit */
};

/* PMC_EVENT_THROTTLE and PMC_EVENT_UNTHROTTLE */
struct pmc_data_throttle {
	struct pmc_event_header header;
	__u64 id;
	__u64 time;			/* on PMC_RECORD_TIME's clock */
};

/*
 * Records pmc-record writes itself, after the kernel's, have types from
 * PMC_DATA_TOOL_TYPE up, far above any the kernel writes.
 */
#define PMC_DATA_TOOL_TYPE	0x10000
#define PMC_DATA_BUILD_ID	(PMC_DATA_TOOL_TYPE + 1)
#define PMC_DATA_BUILD_ID_MAX	32

/*
 * The GNU build-id of a file that a MMAP record named, as it was when
 * recording ended: pmc-report warns when the file it reads symbols
 * from has another. Files without one have no record.
 */
struct pmc_data_build_id {
	struct pmc_event_header header;	/* type PMC_DATA_BUILD_ID */
	__u32 size;			/* bytes of id */
	__u32 __pad;
	__u8 id[PMC_DATA_BUILD_ID_MAX];
	char filename[];		/* NUL-terminated, padded to 8 bytes */
};

/*
 * The vDSO image of the recording process (whose mapping the kernel's
 * MMAP records name "[vdso]"), as it is in memory: an ELF shared object
 * of size bytes (a multiple of the page size) after the record's fields.
 */
#define PMC_DATA_VDSO		(PMC_DATA_TOOL_TYPE + 2)
#define PMC_DATA_VDSO_NAME	"[vdso]"

struct pmc_data_vdso {
	struct pmc_event_header header;	/* type PMC_DATA_VDSO */
	__u64 size;			/* bytes of image */
	__u8 image[];
};

/*
 * Version 2, several events: one PMC_DATA_EVENT record per event, in
 * the order of -e, right after the header, and before each batch of
 * records read from one event's ring buffer a PMC_DATA_SOURCE naming
 * the event: the samples, LOST, THROTTLE and UNTHROTTLE records up to
 * the next PMC_DATA_SOURCE are that event's. Only event 0 asks for the
 * MMAP, COMM, FORK and EXIT records, so none is written twice. Every
 * event has the same record_type and time_all as the header's attr.
 */
#define PMC_DATA_EVENT		(PMC_DATA_TOOL_TYPE + 3)
#define PMC_DATA_SOURCE		(PMC_DATA_TOOL_TYPE + 4)
#define PMC_DATA_MAX_EVENTS	64

struct pmc_data_event {
	struct pmc_event_header header;	/* type PMC_DATA_EVENT */
	__u32 index;			/* 0, 1, ... in order */
	__u32 leader;			/* its group's leader, or itself */
	struct pmc_attr attr;		/* as pmc_open() accepted it */
	char name[PMC_DATA_EVENT_LEN];	/* NUL-terminated */
};

struct pmc_data_source {
	struct pmc_event_header header;	/* type PMC_DATA_SOURCE */
	__u32 index;			/* of the event whose ring it was */
	__u32 __pad;
};

/*
 * A sample is told apart by the overflow bit alone: its type is the
 * counter's record_type, which may equal a non-sample type number.
 */
static inline bool pmc_data_is_sample(const struct pmc_event_header *h)
{
	return h->misc & PMC_EVENT_MISC_OVERFLOW;
}

/* This boot's id, or "" if it cannot be read. */
static inline void pmc_data_boot_id(char *buf, size_t size)
{
	FILE *f = fopen(PMC_DATA_BOOT_ID_PATH, "re");

	buf[0] = '\0';
	if (!f)
		return;
	if (!fgets(buf, size, f))
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

#endif /* _PMC_DATA_H */
