/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the sampling tools, pmc-record and pmc-top, share: how an event
 * samples (its period or rate, its call chains and stack copies),
 * opening a sampler on a task or a CPU, mapping its ring buffer, and
 * the MMAP and COMM records of the tasks that already run, which the
 * kernel never writes because it only reports what happens from the
 * open on.
 */
#ifndef _PMC_SAMPLER_H
#define _PMC_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "libpmc.h"

/*
 * A usage error: "TOOL: MESSAGE", the pointer to --help, exit status 2.
 */
void sampler_usage_error(const char *fmt, ...)
	__attribute__((noreturn, format(printf, 1, 2)));
/* A positive decimal number, or a usage error about @what. */
__u64 sampler_parse_count(const char *arg, const char *what);

/* The clocks' rate when neither a period nor a rate is asked for. */
#define PMC_CLOCK_DEFAULT_FREQ	1000		/* Hz */

enum call_graph { CALL_GRAPH_NONE, CALL_GRAPH_FP, CALL_GRAPH_DWARF };

/* How every event of a tool samples: -c, -F, --rand, -g, -a. */
struct sampling {
	__u64 period, freq;		/* -c, -F: one of them, or neither */
	unsigned int rand;		/* --rand: percent */
	enum call_graph call_graph;
	__u32 stack;			/* dwarf: bytes of user stack */
	bool all_cpus;			/* a sampler per CPU, not per task */
	__u32 wakeup_events;		/* samples a wakeup; 0: each page */
};

/*
 * Check @how's period, rate and randomization against each other, and
 * lower a rate above kernel.pmc_max_sample_rate to it, saying so as
 * @prog, as perf does, rather than fail with EINVAL at the open.
 * Returns 0, or -1 with what is wrong in @err, for a usage error.
 */
int pmc_sampling_check(const char *prog, struct sampling *how, char *err,
		       size_t errlen);

/*
 * Set the sampling of @ev, event @i of its list, from @how: every
 * @how->period events (a clock's period is in ns), or @how->freq times
 * a second, the kernel choosing the periods (a clock's is simply
 * 1/freq s) and each sample recording its own; else at a default
 * period per event. A clock's period below its floor is raised, and
 * said (as @prog). Every event has the same records, so a file has one
 * sample layout; only event 0 asks for the MMAP, COMM, FORK and EXIT
 * records, which are of the tasks, not of an event. Disabled until
 * enabled by ioctl: a ring must be mapped first.
 */
void pmc_sampling_set(const char *prog, struct pmc_evsel *ev, size_t i,
		      const struct sampling *how);

/*
 * Open the sampler of @event on @pid (-1 with a @cpu: every task there)
 * into @group_fd's group. At pmc_paranoid 2 only user-mode sampling of
 * a task is allowed, so EACCES on a task retries with exclude_kernel,
 * left set in @attr. Returns the fd, or -1 after printing why (as
 * @prog); with @gone_ok, -2 if @pid exited (a thread of -p since it
 * was listed).
 */
int pmc_sampler_open(const char *prog, struct pmc_attr *attr,
		     const char *event, pid_t pid, int cpu, int group_fd,
		     bool gone_ok);

/*
 * Map @data_pages of ring buffer for sampler @fd, writable: the kernel
 * must not overwrite what was not read. Returns 0, or -1 after printing
 * why (as @prog).
 */
int pmc_sampler_map(const char *prog, struct pmc_ring *ring, int fd,
		    size_t data_pages);

/*
 * /proc/PID/task/TID/comm into @comm (PMC_DATA_COMM_LEN); false if it
 * is gone.
 */
bool pmc_read_comm(pid_t pid, pid_t tid, char *comm);

/*
 * Called with each record made up for a running task, as the kernel
 * would write it with attr.time_all (the time now at its end); a
 * nonzero return stops the walk and is returned.
 */
typedef int (*pmc_synth_fn)(void *arg, const struct pmc_event_header *h);

/*
 * A COMM record of each thread of process @pid, with the thread's own
 * name as perf record -p gives it ("140:worker-b"), then a MMAP record
 * for each executable file mapping of /proc/PID/maps and its vDSO. A
 * process that is gone gives none.
 */
int pmc_synthesize_task(pid_t pid, pmc_synth_fn fn, void *arg);

/* pmc_synthesize_task() for every process in /proc; -1 if unreadable. */
int pmc_synthesize_all(const char *prog, pmc_synth_fn fn, void *arg);

/*
 * The vDSO's code is in no file, and is the same image in every 64-bit
 * process of one kernel: this process's copy names the code of
 * "[vdso]" mappings anywhere. NULL if the kernel maps none.
 */
const void *pmc_vdso_image(size_t *size);

#endif /* _PMC_SAMPLER_H */
