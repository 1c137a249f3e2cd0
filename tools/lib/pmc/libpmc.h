/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libpmc: a small user-space library over pmc_open(2).
 *
 * The syscall wrapper, event names and event strings, scaled reads, a
 * reader for the mmap()ed ring buffer, a sample decoder, CPU and thread
 * maps and an explainer of pmc_open(2)'s errors. The pmc-* tools and the
 * selftests use it; Documentation/userspace-api/pmc.rst has the reference.
 * Every function works on what the caller passes, so a program may use
 * it from several threads as long as each ring and each event list has
 * one user at a time; the one global state is libpfm4's, initialized by
 * the first pmc_event_lookup() that needs it, so look up libpfm4 names
 * before starting threads.
 */
#ifndef _LIBPMC_H
#define _LIBPMC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>
#include <linux/pmc.h>

/* pmc_open(2): the new fd, or -1 with errno set. */
int pmc_open(struct pmc_attr *attr, pid_t pid, int cpu, int group_fd,
	     unsigned long flags);

/*
 * pmc_overflow_signal() - have counter @fd send @sig at each overflow
 *
 * What self-monitoring code sets up with fcntl(), as for perf: @sig goes
 * to the calling thread (F_SETOWN_EX, F_OWNER_TID) instead of SIGIO
 * (F_SETSIG), so its siginfo has si_fd, and si_code POLL_IN, or POLL_HUP
 * for the last overflow of a PMC_IOC_REFRESH budget. Each overflow of a
 * sampling counter sends one; a real-time @sig queues, so a handler
 * sees every one. @sig 0 turns them off.
 *
 * Return: 0, or -1 with errno from fcntl().
 */
int pmc_overflow_signal(int fd, int sig);

/*
 * pmc_open_strerror() - why pmc_open(@attr, @pid, @cpu, ...) failed with
 * @err, in a sentence that ends with the errno's name and says what to
 * change (a privilege, kernel.pmc_paranoid, ulimit -n, ...) where there
 * is a remedy. Written into @buf (NUL-terminated, truncated to @size).
 * Return: @buf.
 */
char *pmc_open_strerror(const struct pmc_attr *attr, pid_t pid, int cpu,
			int err, char *buf, size_t size);

/* kernel.pmc_paranoid (2, the default, if it cannot be read). */
int pmc_paranoid_level(void);

/*
 * CPU and thread maps. Each list is malloc()ed (the caller frees it),
 * sorted and holds each id once: a list is a set.
 */

/* "0,2-3" as sysfs and perf -C write it. How many, or -1 with errno. */
int pmc_cpu_list(const char *list, int **cpus);
/* The online CPUs, as pmc_cpu_list(). */
int pmc_online_cpus(int **cpus);
/* Whether @cpu is offline (false for CPUs that cannot go offline). */
bool pmc_cpu_offline(int cpu);

/* "12,34": process or thread ids, no ranges. How many, or -1 (EINVAL). */
int pmc_id_list(const char *list, pid_t **ids);
/*
 * The threads of @ids into *@tids: with @whole, every thread of each
 * process as /proc/PID/task lists them now; else the ids themselves.
 * How many, or -1 with errno ESRCH and *@missing the first id that names
 * no running task (or ENOMEM).
 */
int pmc_thread_list(const pid_t *ids, int nr_ids, bool whole, pid_t **tids,
		    pid_t *missing);
/* Whether thread @tid exists (a thread of any process). */
bool pmc_task_exists(pid_t tid);
/* The process of thread @tid, from /proc/TID/status; @tid if unknown. */
pid_t pmc_thread_tgid(pid_t tid);

/* Event names. */

/* How a counter's value reads to a user. */
enum pmc_unit {
	PMC_UNIT_COUNT,		/* plain event count */
	PMC_UNIT_NSEC,		/* a clock: nanoseconds */
};

/*
 * pmc_event_lookup() - the config of an event name
 *
 * One of the generic names pmc_events_list() prints (perf's other
 * names for them, such as "cpu-clock" and "cs", too), "rNNNN" (hex raw
 * event select, always accepted), or, when libpmc was built with
 * libpfm4 and libpfm4 knows this CPU, one of its event names
 * ("INST_RETIRED:ANY_P"). Return: 0 with *@config and *@unit filled, or
 * -1 if the name is no event.
 */
int pmc_event_lookup(const char *name, __u64 *config, enum pmc_unit *unit);

/*
 * pmc_event_at() - the @i-th generic event, for listing them
 *
 * Return: 0 with its name, perf's other name (or NULL) and config; -1
 * past the last.
 */
int pmc_event_at(size_t i, const char **name, const char **alias,
		 __u64 *config);

/*
 * True if @name is one of perf's generic cache events
 * ("L1-dcache-load-misses"), which events-lite does not define: a raw
 * event or the CPU's own name counts them.
 */
bool pmc_event_is_perf_cache(const char *name);

/* True for events that need a hardware PMU (hardware type or raw). */
bool pmc_config_needs_pmu(__u64 config);

/*
 * pmc_cpu_event_at() - the @i-th of the CPU's own events, as libpfm4
 * names them for the core PMU it detected (none without libpfm4)
 *
 * Return: 0 with the PMU's description, the event's name (which
 * pmc_event_lookup() takes) and description, and its config with the
 * default unit mask (0 if it needs one named, "NAME:UMASK"); -1 past
 * the last.
 */
int pmc_cpu_event_at(size_t i, const char **pmu, const char **name,
		     const char **desc, __u64 *config);

/* Print the valid event names, grouped by type, one group a line. */
void pmc_events_list(FILE *out);

/* Event lists: "{cycles,instructions},task-clock:u". */

#define PMC_EVENT_NAME_LEN	128

struct pmc_evsel {
	char name[PMC_EVENT_NAME_LEN];	/* as spelt, with its modifiers */
	unsigned int precise;		/* how many :p (accepted, no effect) */
	struct pmc_attr attr;		/* config, exclude_*, pinned */
	enum pmc_unit unit;
	size_t leader;			/* index of its group's leader */
	int fd;				/* pmc_evlist_open(); -1: closed */
};

struct pmc_evlist {
	struct pmc_evsel *ev;
	size_t nr;
};

/*
 * pmc_evlist_parse() - parse an event string into @list
 *
 * Events are separated by commas; "{a,b}" is a group, scheduled on the
 * PMU as a unit. Modifiers after a colon, on an event or on a group's
 * closing brace (then for every member): u (user mode only), k (kernel
 * mode only), D (pin the group), and perf's p, pp, ppp (a precise IP),
 * accepted for perf's command lines but without effect: events-lite
 * has no precise sampling (PEBS, IBS), and counting needs none. Each
 * event's attr asks for the enabled and running times
 * (PMC_FORMAT_TOTAL_TIME_*) and starts disabled; a group's leader
 * also PMC_FORMAT_GROUP, for pmc_evlist_read().
 * Events are appended, so several strings may build one list.
 *
 * Return: 0, or -1 with a message in @err and @list as it was.
 */
int pmc_evlist_parse(struct pmc_evlist *list, const char *str,
		     char *err, size_t errlen);

void pmc_evlist_free(struct pmc_evlist *list);

/*
 * pmc_evsel_open() - open event @i of @list on @pid/@cpu, disabled
 *
 * A member joins the group of @group_fd, its leader's fd on the same
 * target; with -1 (a leader, or a member whose leader did not open) it
 * counts on its own. Return: the fd or -1 with errno; the fd is not
 * stored, so one list can describe the counters of many targets.
 */
int pmc_evsel_open(const struct pmc_evlist *list, size_t i, pid_t pid,
		   int cpu, int group_fd, unsigned long flags);

/*
 * Open every event of @list on one target into ev[].fd, then enable
 * them. Return: 0, or -1 with errno and *@failed set to the event
 * that did not open (list->nr: enabling failed); all are closed again.
 */
int pmc_evlist_open(struct pmc_evlist *list, pid_t pid, int cpu,
		    size_t *failed);
void pmc_evlist_close(struct pmc_evlist *list);
/* PMC_IOC_ENABLE/DISABLE every open event, leaders before members. */
int pmc_evlist_enable(const struct pmc_evlist *list);
int pmc_evlist_disable(const struct pmc_evlist *list);

/* Reads. */

struct pmc_count {
	__u64 value;
	__u64 enabled;		/* time_enabled, ns */
	__u64 running;		/* time_running, ns */
};

/*
 * pmc_read_count() - read a counter opened with both TOTAL_TIME formats
 *
 * Not a group's leader from pmc_evlist_parse(), which reads as its whole
 * group (PMC_FORMAT_GROUP): pmc_read_count() on it fails with ENOSPC;
 * use pmc_read_group() or pmc_evlist_read().
 *
 * Return: 0; 1 if the counter is a pinned group in error state (read()
 * gave 0 bytes: it never counted since); -1 with errno (EIO for a
 * short read).
 */
int pmc_read_count(int fd, struct pmc_count *c);

/*
 * pmc_read_group() - read a whole group in one read()
 *
 * @fd is its leader (or a member) opened with PMC_FORMAT_GROUP and both
 * TOTAL_TIME formats, as pmc_evlist_parse() asks for a group's leader.
 * The kernel takes every value at one instant, so members relate as the
 * events do (two reads would each see a different moment). @c[0] gets
 * the leader, then the members in the order they joined; all get the
 * leader's times.
 *
 * Return: the number of counters read; 0 if the group is a pinned one
 * in error state; -1 with errno (ENOSPC: more than @nr counters).
 */
int pmc_read_group(int fd, struct pmc_count *c, size_t nr);

/*
 * pmc_evlist_read() - read the counters of @list open on one target
 *
 * @fds[i] is event i's fd on that target (-1: not open), as list->ev[i].fd
 * after pmc_evlist_open(). A group whose leader is open is read in one
 * pmc_read_group(), so its members' counts are of one instant; any other
 * counter with pmc_read_count(). Event i's count goes to @c[i], and to
 * @ret[i] what pmc_read_count() would return, as -errno for -1 (-EBADF
 * for one not open).
 *
 * Return: 0 if every open counter was read, else -1.
 */
int pmc_evlist_read(const struct pmc_evlist *list, const int *fds,
		    struct pmc_count *c, int *ret);

/* value * enabled / running: the estimate of a multiplexed counter. */
double pmc_count_scaled(const struct pmc_count *c);

/* running / enabled in percent (perf's "% counted"); 100 if never enabled. */
double pmc_count_percent(const struct pmc_count *c);

/*
 * Reading a counter without a system call: page 0 of its mapping, alone
 * (pmc_self_map()) or a ring's, carries the count and times, and for a
 * task's own task-clock or cpu-clock what extends them from the TSC; for
 * its own counting hardware counter on a real x86 PMU, the rdpmc index.
 */
struct pmc_self {
	int fd;
	const struct pmc_mmap_page *page;
};

/* Map page 0 of @fd alone, read-only. Return: 0, or -1 with errno. */
int pmc_self_map(struct pmc_self *s, int fd);
void pmc_self_unmap(struct pmc_self *s);

/*
 * pmc_self_page_read() - the counter as page 0 gives it, no system call
 *
 * Return: 1 if @c holds the counter's value and times now; 0 if the page
 * says to use read() (another task's counter, a software event, a
 * hardware counter without rdpmc, no usable TSC): @c then holds them as
 * of the last update.
 */
int pmc_self_page_read(const struct pmc_mmap_page *pg, struct pmc_count *c);

/*
 * pmc_read_self() - pmc_self_page_read() where the page allows, else
 * pmc_read_count() on the fd (opened with both TOTAL_TIME formats).
 * Return: as pmc_read_count().
 */
int pmc_read_self(const struct pmc_self *s, struct pmc_count *c);

/* The ring buffer. */

/* One record, copied out of the ring whole and aligned (size is a u16). */
union pmc_record {
	struct pmc_event_header h;
	__u64 w[8192];
	unsigned char b[65536];
};

struct pmc_ring {
	int fd;
	struct pmc_mmap_page *page;	/* page 0: version, times, head, tail */
	const unsigned char *data;	/* the 2^n data pages */
	__u64 size;			/* bytes of data */
	size_t map_len;			/* page 0 + data, for munmap() */
	bool writable;			/* read-write mapping: we own data_tail */
	__u64 tail;			/* the next record */
	__u64 head;			/* data_head at pmc_ring_begin() */
	/* Tallies of the records pmc_ring_next() passed. */
	__u64 samples;
	__u64 lost;			/* sum of PMC_EVENT_LOST counts */
	__u64 overwritten;		/* bytes the kernel wrote over unread */
	unsigned int throttles, unthrottles;
	union pmc_record *rec;		/* pmc_ring_next()'s record */
	char err[160];			/* why a read gave -1 */
};

/*
 * pmc_ring_map() - map the ring buffer of @fd: page 0 and @data_pages
 * (a power of two) pages of data
 *
 * A writable mapping makes the kernel keep what was not read (and count
 * what did not fit in LOST records); a read-only one lets it overwrite
 * the oldest records. Return: 0, or -1 with errno (EPROTO: a layout
 * newer than this library).
 */
int pmc_ring_map(struct pmc_ring *r, int fd, unsigned int data_pages,
		 bool writable);
void pmc_ring_unmap(struct pmc_ring *r);

/* data_head, read so that the records below it may be read after. */
__u64 pmc_ring_data_head(const struct pmc_ring *r);

/*
 * pmc_ring_read_at() - copy the record at *@pos (below @head) to @dst
 *
 * Records are 8-byte aligned and may wrap the end of the data area.
 * Return: 1 with *@pos moved past it, 0 at @head, -1 if the position or
 * the record is malformed (the reason in r->err).
 */
int pmc_ring_read_at(struct pmc_ring *r, __u64 *pos, __u64 head,
		     union pmc_record *dst);

/*
 * The consumer loop:
 *
 *	pmc_ring_begin(r);
 *	while ((ret = pmc_ring_next(r)) > 0)
 *		use(r->rec);
 *	pmc_ring_end(r);
 *
 * pmc_ring_begin() takes data_head. In a read-only mapping, records
 * the kernel has written over since the last pass are skipped and
 * counted in r->overwritten (their boundaries are lost). pmc_ring_next()
 * tallies samples, LOST and THROTTLE records as it passes them, and
 * returns -1 (r->err) on a malformed record, after which the rest up to
 * the head is skipped. pmc_ring_end() hands the space back: it stores
 * data_tail in a writable mapping, after the reads.
 */
__u64 pmc_ring_begin(struct pmc_ring *r);
int pmc_ring_next(struct pmc_ring *r);
void pmc_ring_end(struct pmc_ring *r);
bool pmc_ring_empty(const struct pmc_ring *r);

/* time_enabled and time_running from page 0 (see pmc_self_page_read()). */
void pmc_ring_times(const struct pmc_ring *r, __u64 *enabled,
		    __u64 *running);

/*
 * pmc_ring_poll() - wait until one of @nr rings has records or its task
 * is gone
 *
 * Return: poll()'s count, with each ring's revents in @revents[i]
 * (POLLIN: a page or wakeup_events samples, or records still unread
 * when the task is gone; POLLHUP: the task exited); -1 with errno (EINTR
 * included).
 */
int pmc_ring_poll(struct pmc_ring *const *rings, size_t nr, int timeout_ms,
		  short *revents);

/* A sample's fields; those its record_type left out are 0. */
struct pmc_sample {
	__u16 misc;			/* PMC_EVENT_MISC_* */
	__u64 ip;			/* PMC_RECORD_IP */
	__u32 pid, tid;			/* PMC_RECORD_TID */
	__u64 time;			/* PMC_RECORD_TIME */
	__u64 addr;			/* PMC_RECORD_ADDR */
	__u64 nr_values;		/* PMC_RECORD_GROUP: */
	const void *values;		/* {u64 config, value}[nr_values] */
	__u16 chain_nr, chain_hv, chain_kernel, chain_user;
	const void *chain;		/* PMC_RECORD_CALLCHAIN: u64[chain_nr],
					 * the kernel's frames first,
					 * innermost first
					 */
};

/*
 * pmc_sample_parse() - decode the sample @rec (a record from its
 * header on, 8-byte aligned or not) of a counter with @record_type
 *
 * values and chain point into @rec. Return: 0; -1 with errno EINVAL if
 * @rec is not a sample of @record_type or its size does not fit those
 * fields, EBADMSG if its call chain's parts do not add up to chain_nr.
 */
int pmc_sample_parse(const void *rec, __u32 record_type,
		     struct pmc_sample *s);

/* A sample's fields that pmc_sample_parse() does not decode. */
struct pmc_sample_ext {
	__u64 period;			/* PMC_RECORD_PERIOD */
	__u64 regs_abi;			/* PMC_RECORD_REGS_USER: PMC_REGS_ABI_* */
	unsigned int nr_regs;		/* 0 with PMC_REGS_ABI_NONE */
	const void *regs;		/* u64[nr_regs], in regs_user bit order */
	__u64 stack_size;		/* PMC_RECORD_STACK_USER: bytes copied */
	const void *stack;		/* from the user stack pointer up */
	__u64 stack_dyn;		/* of them, read from the stack */
};

/*
 * pmc_sample_parse_ext() - pmc_sample_parse() for every record_type bit
 *
 * @regs_user is the counter's attr.regs_user, which says how many
 * registers a PMC_RECORD_REGS_USER sample carries. regs and stack
 * point into @rec. pmc_sample_parse() fails with EINVAL on a sample with
 * PMC_RECORD_REGS_USER. (LIBPMC_0.2)
 */
int pmc_sample_parse_ext(const void *rec, __u32 record_type, __u64 regs_user,
			 struct pmc_sample *s, struct pmc_sample_ext *x);

/* Register @i of a decoded sample's user registers. */
static inline __u64 pmc_sample_reg(const struct pmc_sample_ext *x, size_t i)
{
	__u64 val;

	__builtin_memcpy(&val, (const unsigned char *)x->regs + 8 * i,
			 sizeof(val));
	return val;
}

/* Entry @i of a decoded sample's call chain. */
static inline __u64 pmc_sample_chain_ip(const struct pmc_sample *s, size_t i)
{
	__u64 ip;

	__builtin_memcpy(&ip, (const unsigned char *)s->chain + 8 * i,
			 sizeof(ip));
	return ip;
}

#endif /* _LIBPMC_H */
