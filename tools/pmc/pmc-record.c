// SPDX-License-Identifier: GPL-2.0
/*
 * pmc-record: sample events while a command runs, using pmc_open(2)
 * and its mmap()ed ring buffer, and save the records for pmc-report.
 *
 *	pmc-record [-e EVENTS]... [-c PERIOD | -F FREQ] [--rand PCT]
 *		   [-g | --call-graph fp|dwarf[,SIZE]] [-m PAGES] [-a]
 *		   [-o FILE] [--] COMMAND [ARGS...]
 *	pmc-record ... -p PID,... | -t TID,... | -a [-- COMMAND]
 *
 * One inherited sampling counter is opened on the command before it
 * execs, so the records include the MMAP records of the binary, the
 * dynamic loader and the libraries, and the COMM of the exec; with -p
 * one on each thread of the running processes (-t: of the threads
 * named), and with -a one on each online CPU, sampling every task. The
 * buffers are mapped writable: the kernel never overwrites unread data
 * and reports what did not fit as PMC_EVENT_LOST records. --rand draws
 * each period from PERIOD +- PCT% (attr.period_rand), so that sampling
 * cannot fall in step with periodic code.
 *
 * Several events (-e a,b, -e a -e b, groups as {a,b}) each get their own
 * counter and ring per target, a group's members opened into their
 * leader's group on that target; the file is then version 2, which says
 * which event's ring each batch of records came from.
 *
 * -F sets attr.freq on every event but the clocks, whose period is
 * simply 1/FREQ: the kernel then chooses the periods, and each sample
 * records its own. --call-graph dwarf adds the user registers and a
 * copy of the user stack to each sample, for pmc-report to unwind.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <search.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "pmc-buildid.h"
#include "pmc-child.h"
#include "pmc-regs.h"
#include "pmc-sampler.h"
#include "pmc-targets.h"
#include "pmc-data.h"
#include "pmc-tools.h"

#define DEFAULT_EVENT		"task-clock"
#define DEFAULT_EVENT_CPUS	"cpu-clock"	/* -a: perf's */
#define DEFAULT_OUTPUT		"pmc.data"
/* --call-graph dwarf: perf's default stack copy, and its largest. */
#define DEFAULT_STACK		8192
#define DWARF_DATA_PAGES	256		/* 1 MB: room for 120 copies */
#define DEFAULT_DATA_PAGES	64

/*
 * How long poll() waits before looking at the command again: the
 * kernel wakes us per page, and a slow event may take long to fill one.
 */
#define POLL_TIMEOUT_MS		100

struct recording {
	struct pmc_evlist events;	/* -e, each with its sampling attr */
	/*
	 * One sampling counter and ring per event and target (the
	 * command, each thread of -p or -t, or each CPU of -a), a
	 * target's events in a row.
	 */
	size_t nr;
	size_t *ring_event;		/* the event of each ring */
	int *cpus;			/* -a: the CPUs */
	pid_t *tids;			/* -p, -t: the threads */
	pid_t *ids;			/* -p, -t: as given */
	int nr_ids;
	struct pmc_ring *rings;		/* ring.fd is the counter */
	const char *path;
	FILE *out;
	bool regular;			/* ours to unlink on failure */
	struct pmc_data_header header;
	__u64 data_size;		/* record bytes written so far */
	__u64 nr_skipped;		/* unreadable bytes, never expected */
	__u64 nr_throttles;		/* THROTTLE records: samples stopped */
	void *files;			/* struct mapped_file, by name (tsearch) */
	int build_ids_err;		/* write_build_ids() failed */
};

/* A file a MMAP record named, and a process that mapped it. */
struct mapped_file {
	char *name;
	pid_t pid;
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: pmc-record [-e EVENTS]... [-c PERIOD | -F FREQ] [--rand PCT]\n"
		"                  [-g | --call-graph fp|dwarf[,SIZE]] [-m PAGES] [-a]\n"
		"                  [-o FILE] [--] COMMAND [ARGS...]\n"
		"       pmc-record [options] -p PID,... | -t TID,... | -a [-- COMMAND]\n"
		"\n"
		"Run COMMAND (and the processes it starts), or watch running\n"
		"processes until they exit or SIGINT, sample where they spend EVENTS,\n"
		"and write the samples to FILE (default " DEFAULT_OUTPUT ") for\n"
		"pmc-report. With -a, sample every task on every CPU; with -p, -t or\n"
		"-a and a COMMAND, only while COMMAND runs (-- sleep 5, say).\n"
		"\n"
		"  -e, --event=EVENTS      events to sample, each on its own: a comma\n"
		"                          list, {a,b} a group scheduled together,\n"
		"                          EVENT:u user mode only; -e may repeat\n"
		"                          (default " DEFAULT_EVENT ", with -a\n"
		"                          " DEFAULT_EVENT_CPUS ")\n"
		"  -c, --count=PERIOD      a sample every PERIOD events (nanoseconds\n"
		"                          for the clocks); default per event\n"
		"  -F, --freq=FREQ         FREQ samples a second of each event: the\n"
		"                          kernel sets the period (default: a\n"
		"                          period per event; the clocks at %d Hz)\n"
		"  -g                      record call chains too (frame pointers)\n"
		"      --call-graph=MODE   fp, as -g; or dwarf[,SIZE]: a copy of SIZE\n"
		"                          bytes of user stack (default 8192) and the\n"
		"                          registers, for pmc-report to unwind code\n"
		"                          built without frame pointers\n"
		"  -m, --mmap-pages=PAGES  ring buffer data pages, a power of two\n"
		"                          (default %d; %d with dwarf)\n"
		"  -o, --output=FILE       the data file to write (default\n"
		"                          " DEFAULT_OUTPUT "; an old one becomes\n"
		"                          " DEFAULT_OUTPUT ".old)\n"
		"  -p, --pid=PID,...       record every thread of the processes PID\n"
		"                          (and the threads they start)\n"
		"  -t, --tid=TID,...       record the threads TID (and the threads\n"
		"                          they start) only\n"
		"  -a, --all-cpus          record every task on every online CPU\n"
		"      --rand=PCT          draw each period from PERIOD +- PCT%%\n"
		"                          (1 to 50), not to sample in step with\n"
		"                          periodic code\n"
		"  -h, --help              show this help\n"
		"\n"
		"Events:\n", PMC_CLOCK_DEFAULT_FREQ, DEFAULT_DATA_PAGES,
		DWARF_DATA_PAGES);
	pmc_events_list(out);
}

static int write_out(struct recording *rec, const void *buf, size_t len)
{
	if (fwrite(buf, 1, len, rec->out) != len) {
		fprintf(stderr, "pmc-record: write %s: %s\n", rec->path,
			strerror(errno));
		return -1;
	}
	rec->data_size += len;
	return 0;
}

static int cmp_file(const void *a, const void *b)
{
	return strcmp(((const struct mapped_file *)a)->name,
		      ((const struct mapped_file *)b)->name);
}

/* A file an MMAP record names: its build-id goes in at the end. */
static void note_file(struct recording *rec, const struct pmc_data_mmap *m,
		      size_t size)
{
	size_t len = size - offsetof(struct pmc_data_mmap, filename);
	struct mapped_file key = { .name = (char *)m->filename }, *f, **node;

	if (size <= sizeof(*m) || m->filename[0] != '/' ||
	    !memchr(m->filename, 0, len))
		return;
	if (tfind(&key, &rec->files, cmp_file))
		return;
	f = malloc(sizeof(*f));
	if (f)
		f->name = strdup(m->filename);
	if (!f || !f->name) {
		free(f);
		return;			/* a build-id less: not fatal */
	}
	f->pid = m->pid;
	node = tsearch(f, &rec->files, cmp_file);
	if (!node) {
		free(f->name);
		free(f);
	}
}

/*
 * The build-id of @f as its process sees it (through /proc/PID/root: a
 * task of -p or -a may run in another mount namespace), else by its
 * name here, as for a command that has exited.
 */
static size_t file_build_id(const struct mapped_file *f, unsigned char *id,
			    size_t size)
{
	char path[PATH_MAX];
	size_t n = 0;

	if (f->pid > 0 && snprintf(path, sizeof(path), "/proc/%d/root%s",
				   (int)f->pid, f->name) < (int)sizeof(path))
		n = elf_build_id(path, id, size);
	return n ? n : elf_build_id(f->name, id, size);
}

static struct recording *walking;	/* twalk() passes no argument */

static void write_build_id(const void *node, VISIT order, int depth)
{
	const struct mapped_file *f = *(const struct mapped_file *const *)node;
	size_t len = strlen(f->name) + 1;
	struct pmc_data_build_id *b;
	size_t size = (sizeof(*b) + len + 7) & ~7UL;

	(void)depth;
	if ((order != postorder && order != leaf) || walking->build_ids_err ||
	    size > UINT16_MAX)
		return;
	b = calloc(1, size);
	if (!b)
		return;		/* the recording is whole without */
	b->header.type = PMC_DATA_BUILD_ID;
	b->header.size = size;
	memcpy(b->filename, f->name, len);
	b->size = file_build_id(f, b->id, sizeof(b->id));
	if (b->size && write_out(walking, b, size))
		walking->build_ids_err = -1;
	free(b);
}

/*
 * After the kernel's records, a PMC_DATA_BUILD_ID record for each file
 * the MMAP records named that has a build-id now. Returns 0 or -1.
 */
static int write_build_ids(struct recording *rec)
{
	walking = rec;
	twalk(rec->files, write_build_id);
	return rec->build_ids_err;
}

/*
 * A PMC_DATA_VDSO record holds this process's vDSO, so that pmc-report
 * can name samples in "[vdso]" mappings anywhere (see pmc_vdso_image()).
 * Returns 0 or -1; a kernel without a vDSO gives no record.
 */
static int write_vdso(struct recording *rec)
{
	struct pmc_data_vdso v = { .header.type = PMC_DATA_VDSO };
	size_t size;
	const void *image = pmc_vdso_image(&size);

	if (!image || sizeof(v) + size > UINT16_MAX)
		return 0;
	v.header.size = sizeof(v) + size;
	v.size = size;
	if (write_out(rec, &v, sizeof(v)))
		return -1;
	return write_out(rec, image, size);
}

/*
 * Move every record between data_tail and data_head into the file, then
 * hand the space back. Returns 0, or -1 on a write error.
 */
static int drain_ring(struct recording *rec, size_t r)
{
	struct pmc_ring *ring = &rec->rings[r];
	struct pmc_data_source src = {
		.header = { .type = PMC_DATA_SOURCE, .size = sizeof(src) },
		.index = rec->ring_event[r],
	};
	bool first = rec->events.nr > 1;
	__u64 pos;
	int ret;

	pmc_ring_begin(ring);
	for (;;) {
		pos = ring->tail;
		ret = pmc_ring_next(ring);
		if (ret <= 0)
			break;
		/* Several events: say whose records follow. */
		if (first && write_out(rec, &src, sizeof(src))) {
			ring->tail = ring->head;
			ret = 1;
			break;
		}
		first = false;
		rec->nr_throttles += ring->rec->h.type == PMC_EVENT_THROTTLE;
		if (ring->rec->h.type == PMC_EVENT_MMAP &&
		    !pmc_data_is_sample(&ring->rec->h))
			note_file(rec, (const void *)ring->rec,
				  ring->rec->h.size);
		if (write_out(rec, ring->rec, ring->rec->h.size)) {
			ring->tail = ring->head;	/* keep the kernel going */
			break;
		}
	}
	/* The kernel never writes this; if it did, say so. */
	if (ret < 0) {
		fprintf(stderr, "pmc-record: warning: %s; skipping %llu bytes of records\n",
			ring->err, (unsigned long long)(ring->head - pos));
		rec->nr_skipped += ring->head - pos;
	}
	pmc_ring_end(ring);
	return ret > 0 ? -1 : 0;
}

static int drain_rings(struct recording *rec)
{
	size_t t;

	for (t = 0; t < rec->nr; t++)
		if (drain_ring(rec, t))
			return -1;
	return 0;
}

static bool rings_empty(const struct recording *rec)
{
	size_t t;

	for (t = 0; t < rec->nr; t++)
		if (!pmc_ring_empty(&rec->rings[t]))
			return false;
	return true;
}

/* The samples and lost samples of the rings of @event, or of all (-1). */
static void ring_totals(const struct recording *rec, size_t event,
			__u64 *samples, __u64 *lost)
{
	size_t t;

	*samples = *lost = 0;
	for (t = 0; t < rec->nr; t++) {
		if (event != (size_t)-1 && rec->ring_event[t] != event)
			continue;
		*samples += rec->rings[t].samples;
		*lost += rec->rings[t].lost;
	}
}

/* Truncate into a zero-filled field, keeping the terminator. */
static void copy_string(char *dst, size_t size, const char *src)
{
	size_t n = strnlen(src, size - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

/*
 * -p and -a: the kernel writes MMAP and COMM records only for what
 * happens from now on. The executable file mappings and the names of
 * the threads a task already has go in as such records before any
 * sample, so that pmc-report can place and name its samples (as perf
 * record -p does), and the files get their build-ids.
 */
static int write_synthesized(void *arg, const struct pmc_event_header *h)
{
	struct recording *rec = arg;

	if (h->type == PMC_EVENT_MMAP)
		note_file(rec, (const void *)h, h->size);
	return write_out(rec, h, h->size);
}

/* -p: the running task's name and command line, from /proc. */
static void fill_task(struct pmc_data_header *hdr, pid_t pid)
{
	char path[64];
	size_t n = 0, i;
	FILE *f;

	pmc_read_comm(pid, pid, hdr->comm);
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	f = fopen(path, "r");
	if (f) {
		n = fread(hdr->cmdline, 1, sizeof(hdr->cmdline) - 1, f);
		fclose(f);
	}
	while (n && !hdr->cmdline[n - 1])
		n--;
	for (i = 0; i < n; i++)		/* arguments are NUL-separated */
		if (!hdr->cmdline[i])
			hdr->cmdline[i] = ' ';
	hdr->cmdline[n] = '\0';
	if (!n)
		snprintf(hdr->cmdline, sizeof(hdr->cmdline), "process %d",
			 (int)pid);
}

static void fill_header(struct pmc_data_header *hdr,
			const struct pmc_evlist *events, pid_t pid, char **cmd)
{
	const char *base;
	size_t len = 0;
	int i;

	memset(hdr, 0, sizeof(*hdr));
	hdr->magic = PMC_DATA_MAGIC;
	hdr->version = events->nr > 1 ? PMC_DATA_VERSION_EVENTS :
					PMC_DATA_VERSION;
	hdr->header_size = sizeof(*hdr);
	hdr->attr = events->ev[0].attr;
	hdr->data_size = PMC_DATA_SIZE_UNKNOWN;
	hdr->pid = pid;
	copy_string(hdr->event, sizeof(hdr->event), events->ev[0].name);
	pmc_data_boot_id(hdr->boot_id, sizeof(hdr->boot_id));
	if (!cmd[0] && pid < 0) {
		copy_string(hdr->cmdline, sizeof(hdr->cmdline), "all CPUs");
		return;
	}
	if (!cmd[0]) {
		fill_task(hdr, pid);
		return;
	}
	/* What exec will set the command's comm to. */
	base = strrchr(cmd[0], '/');
	copy_string(hdr->comm, sizeof(hdr->comm), base ? base + 1 : cmd[0]);
	for (i = 0; cmd[i] && len < sizeof(hdr->cmdline) - 1; i++) {
		int n = snprintf(hdr->cmdline + len, sizeof(hdr->cmdline) - len,
				 "%s%s", i ? " " : "", cmd[i]);

		if (n < 0)
			break;
		len += n;
	}
}

/* Version 2: what each event is, as opened (a clock's period, :u). */
static int write_events(struct recording *rec)
{
	struct pmc_data_event e;
	size_t i;

	for (i = 0; rec->events.nr > 1 && i < rec->events.nr; i++) {
		memset(&e, 0, sizeof(e));
		e.header.type = PMC_DATA_EVENT;
		e.header.size = sizeof(e);
		e.index = i;
		e.leader = rec->events.ev[i].leader;
		e.attr = rec->events.ev[i].attr;
		copy_string(e.name, sizeof(e.name), rec->events.ev[i].name);
		if (write_out(rec, &e, sizeof(e)))
			return -1;
	}
	return 0;
}

/* Never unlink what is not a plain file, /dev/null say. */
static void discard_output(struct recording *rec)
{
	if (rec->out)
		fclose(rec->out);
	rec->out = NULL;
	if (rec->regular)
		unlink(rec->path);
}

static int open_output(struct recording *rec)
{
	struct stat st;
	int fd;

	/* 0600 like perf: samples show what the command did. */
	fd = open(rec->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		fprintf(stderr, "pmc-record: %s: %s\n", rec->path,
			strerror(errno));
		return -1;
	}
	rec->regular = !fstat(fd, &st) && S_ISREG(st.st_mode);
	rec->out = fdopen(fd, "w");
	if (!rec->out) {
		fprintf(stderr, "pmc-record: %s: %s\n", rec->path,
			strerror(errno));
		close(fd);
		discard_output(rec);
		return -1;
	}
	if (write_out(rec, &rec->header, sizeof(rec->header))) {
		discard_output(rec);
		return -1;
	}
	rec->data_size = 0;	/* counts the records only */
	if (write_events(rec)) {
		discard_output(rec);
		return -1;
	}
	return 0;
}

/* Fill in the sizes and counts now that they are known, and close. */
static int finish_output(struct recording *rec)
{
	struct pmc_data_header *hdr = &rec->header;
	int ret = 0;

	hdr->data_size = rec->data_size;
	ring_totals(rec, -1, &hdr->nr_samples, &hdr->nr_lost);
	if (fflush(rec->out)) {
		fprintf(stderr, "pmc-record: write %s: %s\n", rec->path,
			strerror(errno));
		ret = -1;
	} else if (pwrite(fileno(rec->out), hdr, sizeof(*hdr), 0) !=
		   sizeof(*hdr)) {
		/* A pipe keeps the "unfinished" header; pmc-report copes. */
		if (errno == ESPIPE) {
			fprintf(stderr, "pmc-record: warning: %s is not seekable: sizes not written to its header\n",
				rec->path);
		} else {
			fprintf(stderr, "pmc-record: write %s: %s\n",
				rec->path, strerror(errno));
			ret = -1;
		}
	}
	if (fclose(rec->out) && !ret) {
		fprintf(stderr, "pmc-record: close %s: %s\n", rec->path,
			strerror(errno));
		ret = -1;
	}
	rec->out = NULL;
	return ret;
}

/*
 * Drain the ring until the kernel says the task is gone (POLLHUP) and
 * it was read once more, or until we have reaped the command ourselves
 * and the rings are empty: its exit is complete by then, so nothing of
 * it can still arrive. Inherited copies in processes that outlive the
 * command are not waited for, as pmc-stat does not wait for them either.
 * With -p, -t or -a and no command (@child NULL): until the threads are
 * gone, or SIGINT.
 */
static int record_loop(struct recording *rec, struct pmc_child *child)
{
	/* The rings polled: a task's stays until it hangs up. */
	struct pmc_ring **rings = calloc(rec->nr, sizeof(*rings));
	short *revents = calloc(rec->nr, sizeof(*revents));
	size_t t, live = rec->nr;
	int ret = -1;

	if (!rings || !revents) {
		perror("pmc-record");
		goto out;
	}
	for (t = 0; t < rec->nr; t++)
		rings[t] = &rec->rings[t];
	for (;;) {
		bool over = child ? child->exited : pmc_interrupted;
		size_t kept = 0;
		int n;

		n = pmc_ring_poll(rings, live, over ? 0 : POLL_TIMEOUT_MS,
				  revents);
		if (n < 0 && errno != EINTR) {
			perror("pmc-record: poll");
			goto out;
		}
		if (drain_rings(rec))
			goto out;
		for (t = 0; n > 0 && t < live; t++) {
			if (revents[t] & (POLLERR | POLLNVAL)) {
				fprintf(stderr, "pmc-record: poll: error on the counter (revents 0x%x)\n",
					revents[t]);
				goto out;
			}
		}
		/*
		 * A task's counter hangs up once its task is gone, and says
		 * so at every poll() from then on; the drain above read what
		 * it had: poll the others only, until none is left.
		 */
		for (t = 0; t < live; t++)
			if (rec->cpus || n <= 0 || !(revents[t] & POLLHUP))
				rings[kept++] = rings[t];
		live = kept;
		if (!live)
			break;
		if (over && rings_empty(rec))
			break;
		if (child)
			pmc_child_reap(child, true);
	}
	ret = drain_rings(rec);
out:
	free(rings);
	free(revents);
	return ret;
}

/* Close the counters and their rings; unless @keep, remove the file too. */
static void stop_recording(struct recording *rec, bool keep)
{
	size_t t;

	if (!keep)
		discard_output(rec);
	for (t = 0; t < rec->nr; t++) {
		if (rec->rings[t].fd < 0)
			continue;
		pmc_ring_unmap(&rec->rings[t]);
		close(rec->rings[t].fd);
		rec->rings[t].fd = -1;
	}
}

/*
 * What the recording cannot see happen: the executable mappings and
 * names of the tasks that already run (-p, -t: their processes; -a:
 * every task).
 */
static int synthesize(struct recording *rec)
{
	int ret = 0, i, j;
	pid_t pid;

	for (i = 0; !rec->cpus && !ret && i < rec->nr_ids; i++) {
		pid = pmc_thread_tgid(rec->ids[i]);
		/* -t: several threads of one process, whose maps are one */
		for (j = 0; j < i; j++)
			if (pmc_thread_tgid(rec->ids[j]) == pid)
				break;
		if (j == i)
			ret = pmc_synthesize_task(pid, write_synthesized, rec);
	}
	if (!rec->cpus)
		return ret;
	return pmc_synthesize_all("pmc-record", write_synthesized, rec);
}

/*
 * Open event @i on target @t (@pid, a CPU of rec->cpus or a thread of
 * rec->tids) into @group_fd's group; as pmc_sampler_open().
 */
static int open_target(struct recording *rec, size_t i, size_t t, pid_t pid,
		       int group_fd)
{
	struct pmc_evsel *ev = &rec->events.ev[i];

	/* -a: every task on the CPU; -p, -t: a thread; else @pid */
	if (rec->cpus)
		return pmc_sampler_open("pmc-record", &ev->attr, ev->name, -1,
					rec->cpus[t], group_fd, false);
	return pmc_sampler_open("pmc-record", &ev->attr, ev->name,
				rec->tids ? rec->tids[t] : pid, -1, group_fd,
				!!rec->tids);
}

/*
 * Open each event on @pid (or on each CPU of rec->cpus, or each thread
 * of rec->tids), map the rings, start the file (for -p, -t and -a, with
 * what already runs) and enable the counters. Returns 0, or -1 after
 * printing why, with nothing left behind.
 */
static int start_recording(struct recording *rec, pid_t pid,
			   size_t data_pages, char **cmd)
{
	size_t i, t, targets = rec->nr, nr_events = rec->events.nr;
	int fd, *fds = calloc(nr_events, sizeof(*fds));

	rec->rings = calloc(targets * nr_events, sizeof(*rec->rings));
	rec->ring_event = calloc(targets * nr_events,
				 sizeof(*rec->ring_event));
	if (!fds || !rec->rings || !rec->ring_event) {
		perror("pmc-record");
		free(fds);
		return -1;
	}
	for (t = 0; t < targets * nr_events; t++)
		rec->rings[t].fd = -1;
	/* Rings of the threads that are still there, in a row. */
	rec->nr = 0;
	for (t = 0; t < targets; t++) {
		for (i = 0; i < nr_events; i++) {
			size_t leader = rec->events.ev[i].leader;

			fd = open_target(rec, i, t, pid,
					 leader == i ? -1 : fds[leader]);
			fds[i] = fd;
			if (fd == -2)	/* the thread is gone */
				break;
			if (fd < 0)
				goto fail;
			if (pmc_sampler_map("pmc-record", &rec->rings[rec->nr],
					    fd, data_pages)) {
				close(fd);
				goto fail;
			}
			rec->ring_event[rec->nr++] = i;
		}
	}
	if (!rec->nr) {
		fprintf(stderr, "pmc-record: the threads to record are gone\n");
		goto fail;
	}
	fill_header(&rec->header, &rec->events, rec->cpus ? -1 : pid, cmd);
	if (open_output(rec))
		goto fail;
	if ((!cmd[0] || rec->cpus) && synthesize(rec))
		goto fail;
	/* A target's leader before its members: as they were opened. */
	for (t = 0; t < rec->nr; t++) {
		if (ioctl(rec->rings[t].fd, PMC_IOC_ENABLE) < 0) {
			fprintf(stderr, "pmc-record: enable(%s): %s\n",
				rec->events.ev[rec->ring_event[t]].name,
				strerror(errno));
			goto fail;
		}
	}
	free(fds);
	return 0;
fail:
	free(fds);
	stop_recording(rec, false);
	return -1;
}

/*
 * Record until the end (see record_loop()), then close the counters and
 * complete the file. 0, or 1 after printing why.
 */
static int finish(struct recording *rec, struct pmc_child *child)
{
	__u64 samples, lost;
	size_t i;

	if (record_loop(rec, child)) {
		/* Keep what was written: it is a valid, unfinished file. */
		fclose(rec->out);
		rec->out = NULL;
	}
	ring_totals(rec, -1, &samples, &lost);
	stop_recording(rec, true);
	if (child)
		pmc_child_reap(child, false);
	if (rec->out && (write_build_ids(rec) || write_vdso(rec))) {
		fclose(rec->out);
		rec->out = NULL;
	}
	if (!rec->out || finish_output(rec))
		return 1;

	if (rec->nr_skipped)
		fprintf(stderr, "pmc-record: warning: %" PRIu64 " bytes of unreadable records were skipped\n",
			(uint64_t)rec->nr_skipped);
	for (i = 0; rec->events.nr > 1 && i < rec->events.nr; i++) {
		__u64 s, l;

		ring_totals(rec, i, &s, &l);
		fprintf(stderr, "pmc-record: %s: %" PRIu64 " samples, %" PRIu64 " lost\n",
			rec->events.ev[i].name, (uint64_t)s, (uint64_t)l);
	}
	fprintf(stderr, "pmc-record: %" PRIu64 " samples, %" PRIu64 " lost, ",
		(uint64_t)samples, (uint64_t)lost);
	if (rec->nr_throttles)
		fprintf(stderr, "throttled %" PRIu64 " times (kernel.pmc_max_sample_rate), ",
			(uint64_t)rec->nr_throttles);
	fprintf(stderr, "written to %s\n", rec->path);
	return 0;
}

/* Append the events of one -e (a list, groups) to @list, or exit. */
static void add_events(struct pmc_evlist *list, const char *arg, char *err,
		       size_t errlen)
{
	size_t i, first = list->nr;

	if (pmc_evlist_parse(list, arg, err, errlen)) {
		fprintf(stderr, "pmc-record: %s; valid events:\n", err);
		pmc_events_list(stderr);
		exit(2);
	}
	for (i = first; i < list->nr; i++)
		if (strlen(list->ev[i].name) >= PMC_DATA_EVENT_LEN)
			sampler_usage_error("event name '%s' too long",
					    list->ev[i].name);
	if (list->nr > PMC_DATA_MAX_EVENTS)
		sampler_usage_error("%zu events: at most %d", list->nr,
				    PMC_DATA_MAX_EVENTS);
}

/* --call-graph fp | dwarf[,SIZE], perf's spelling. */
static void parse_call_graph(const char *arg, struct sampling *how)
{
	const char *size = strchr(arg, ',');
	size_t len = size ? (size_t)(size - arg) : strlen(arg);

	if (len == 2 && !strncmp(arg, "fp", 2) && !size) {
		how->call_graph = CALL_GRAPH_FP;
		return;
	}
	if (len != 5 || strncmp(arg, "dwarf", 5))
		sampler_usage_error("invalid --call-graph '%s': want fp or dwarf[,SIZE]",
				    arg);
	if (!unwind_regs_mask())
		sampler_usage_error("--call-graph dwarf: not on this architecture");
	how->call_graph = CALL_GRAPH_DWARF;
	how->stack = DEFAULT_STACK;
	if (size) {
		__u64 val = sampler_parse_count(size + 1, "stack size");

		if (val % 8 || val > PMC_STACK_USER_MAX)
			sampler_usage_error(
				"invalid stack size '%s': want a multiple of 8 up to %d",
				size + 1, PMC_STACK_USER_MAX);
		how->stack = val;
	}
}

/* perf's habit: an old default output file is kept as FILE.old. */
static void keep_old_output(const char *path)
{
	struct stat st;
	char *old;

	if (strcmp(path, DEFAULT_OUTPUT) || stat(path, &st) ||
	    !S_ISREG(st.st_mode) || st.st_size == 0)
		return;
	if (asprintf(&old, "%s.old", path) < 0)
		return;
	if (rename(path, old))
		fprintf(stderr, "pmc-record: warning: cannot keep %s as %s: %s\n",
			path, old, strerror(errno));
	free(old);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "event",	required_argument, NULL, 'e' },
		{ "count",	required_argument, NULL, 'c' },
		{ "freq",	required_argument, NULL, 'F' },
		{ "call-graph",	required_argument, NULL, 'G' },
		{ "mmap-pages",	required_argument, NULL, 'm' },
		{ "output",	required_argument, NULL, 'o' },
		{ "pid",	required_argument, NULL, 'p' },
		{ "tid",	required_argument, NULL, 't' },
		{ "all-cpus",	no_argument,	   NULL, 'a' },
		{ "rand",	required_argument, NULL, 'R' },
		{ "help",	no_argument,	   NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static char *no_command[] = { NULL };
	static struct recording rec;
	struct sampling how = { 0 };
	__u64 data_pages = 0, val;
	struct pmc_child child;
	char err[256];
	size_t i;
	const char *attach = NULL;
	bool whole = false;
	char **cmd;
	int opt;

	/* '+': options after COMMAND belong to COMMAND. */
	while ((opt = getopt_long(argc, argv, "+e:c:F:gG:m:o:p:t:ah", longopts,
				  NULL)) != -1) {
		switch (opt) {
		case 'e':
			add_events(&rec.events, optarg, err, sizeof(err));
			break;
		case 'c':
			how.period = sampler_parse_count(optarg, "period");
			break;
		case 'F':
			how.freq = sampler_parse_count(optarg, "frequency");
			break;
		case 'g':
			how.call_graph = CALL_GRAPH_FP;
			break;
		case 'G':
			parse_call_graph(optarg, &how);
			break;
		case 'm':
			data_pages = sampler_parse_count(optarg, "page count");
			if (data_pages & (data_pages - 1) ||
			    data_pages > (1 << 20))
				sampler_usage_error(
					"invalid page count '%s': want a power of two up to 1048576",
					optarg);
			break;
		case 'o':
			rec.path = optarg;
			break;
		case 'p':
		case 't':
			attach = optarg;
			whole = opt == 'p';
			break;
		case 'a':
			how.all_cpus = true;
			break;
		case 'R':
			val = sampler_parse_count(optarg, "randomization");
			if (val > PMC_PERIOD_RAND_MAX)
				sampler_usage_error(
					"invalid randomization '%s': want 1 to %d (percent)",
					optarg, PMC_PERIOD_RAND_MAX);
			how.rand = val;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	cmd = argv + optind;
	if (!cmd[0] && !attach && !how.all_cpus)
		sampler_usage_error("no command to record");
	if (how.all_cpus && attach)
		sampler_usage_error("-p and -t record tasks, -a the CPUs: choose one");
	if (!rec.path) {
		rec.path = DEFAULT_OUTPUT;
		keep_old_output(rec.path);
	}

	if (!rec.events.nr)
		add_events(&rec.events, how.all_cpus ? DEFAULT_EVENT_CPUS :
						       DEFAULT_EVENT,
			   err, sizeof(err));
	if (pmc_sampling_check("pmc-record", &how, err, sizeof(err)))
		sampler_usage_error("%s", err);
	if (!data_pages)
		data_pages = how.call_graph == CALL_GRAPH_DWARF ?
			     DWARF_DATA_PAGES : DEFAULT_DATA_PAGES;
	for (i = 0; i < rec.events.nr; i++)
		pmc_sampling_set("pmc-record", &rec.events.ev[i], i, &how);
	rec.nr = 1;
	if (how.all_cpus) {
		int n = pmc_online_cpus(&rec.cpus);

		if (n < 0) {
			perror("pmc-record: /sys/devices/system/cpu/online");
			return 1;
		}
		rec.nr = n;
	}
	if (attach)
		rec.nr = pmc_attach_threads("pmc-record", attach, whole,
					    &rec.ids, &rec.nr_ids, &rec.tids);
	if (!cmd[0]) {
		/* -p, -t, or -a alone: SIGINT ends the recording. */
		pmc_catch_sigint();
		if (start_recording(&rec,
				    attach ? pmc_thread_tgid(rec.ids[0]) : -1,
				    data_pages, cmd))
			return 1;
		return finish(&rec, NULL);
	}
	if (pmc_child_spawn(&child, "pmc-record", cmd))
		return 1;
	/*
	 * ^C reaches the command too: keep recording until it exits. The
	 * child was forked before this, so it keeps the default action.
	 */
	signal(SIGINT, SIG_IGN);

	/* -p PID -- sleep 5: the command only says how long, as perf's. */
	if (start_recording(&rec, attach ? pmc_thread_tgid(rec.ids[0]) :
					   child.pid,
			    data_pages, attach ? no_command : cmd)) {
		pmc_child_abort(&child);
		return 1;
	}
	if (pmc_child_release(&child, cmd)) {
		/* The command never ran: leave no half-written file. */
		stop_recording(&rec, false);
		return 127;
	}
	return finish(&rec, &child) ?: child.status;
}
