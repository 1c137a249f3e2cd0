// SPDX-License-Identifier: GPL-2.0
/*
 * pmc-record: sample one event while a command runs, using pmc_open(2)
 * and its mmap()ed ring buffer, and save the records for pmc-report.
 *
 *	pmc-record [-e EVENT] [-c PERIOD | -F FREQ] [-g] [-m PAGES]
 *		   -o FILE [--] COMMAND [ARGS...]
 *	pmc-record ... -o FILE -p PID
 *
 * One inherited sampling counter is opened on the command before it
 * execs, so the records include the MMAP records of the binary, the
 * dynamic loader and the libraries, and the COMM of the exec. The
 * buffer is mapped writable: the kernel never overwrites unread data
 * and reports what did not fit as PMC_EVENT_LOST records.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "pmc-child.h"
#include "pmc-events.h"
#include "pmc-data.h"

#define DEFAULT_EVENT		"task-clock"
#define DEFAULT_FREQ		1000		/* Hz, for the clocks */
#define DEFAULT_DATA_PAGES	64
#define NSEC_PER_SEC		1000000000ULL

/*
 * How long poll() waits before looking at the command again: the
 * kernel wakes us per page, and a slow event may take long to fill one.
 */
#define POLL_TIMEOUT_MS		100

/* -p: SIGINT ends the recording. */
static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
	(void)sig;
	interrupted = 1;
}

/*
 * Default periods for events that are not clocks: roughly a few
 * thousand samples a second on a busy CPU. Rare events get short periods.
 */
static const struct {
	__u64 config;
	__u64 period;
} default_periods[] = {
	{ HW(CPU_CYCLES),		100000 },
	{ HW(INSTRUCTIONS),		100000 },
	{ HW(BRANCH_INSTRUCTIONS),	100000 },
	{ HW(CACHE_REFERENCES),		10000 },
	{ HW(BUS_CYCLES),		10000 },
	{ HW(CACHE_MISSES),		1000 },
	{ HW(BRANCH_MISSES),		1000 },
	{ SW(PAGE_FAULTS),		1 },
	{ SW(PAGE_FAULTS_MIN),		1 },
	{ SW(PAGE_FAULTS_MAJ),		1 },
	{ SW(CONTEXT_SWITCHES),		1 },
	{ SW(CPU_MIGRATIONS),		1 },
};

#define DEFAULT_RAW_PERIOD	100000

struct ring {
	struct pmc_mmap_page *page;	/* page 0: head, tail, version */
	unsigned char *data;		/* the 2^n data pages */
	size_t data_size;		/* a power of two */
	size_t map_size;		/* page 0 + data, for munmap() */
	__u64 tail;			/* our copy of data_tail */
};

struct recording {
	const char *path;
	FILE *out;
	bool regular;			/* ours to unlink on failure */
	struct pmc_data_header header;
	__u64 data_size;		/* record bytes written so far */
	__u64 nr_samples;
	__u64 nr_lost;
	__u64 nr_skipped;		/* unreadable bytes, never expected */
	/* One record, copied out of the ring whole (size is a u16). */
	unsigned char record[1 << 16];
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: pmc-record [-e EVENT] [-c PERIOD | -F FREQ] [-g] [-m PAGES]\n"
		"                  -o FILE [--] COMMAND [ARGS...]\n"
		"       pmc-record [-e EVENT] [-c PERIOD | -F FREQ] [-g] [-m PAGES]\n"
		"                  -o FILE -p PID\n"
		"\n"
		"Run COMMAND (and the processes it starts), or watch the running\n"
		"task PID until it exits or SIGINT, sample where it spends EVENT,\n"
		"and write the samples to FILE for pmc-report.\n"
		"\n"
		"  -e, --event=EVENT       event to sample (default " DEFAULT_EVENT ")\n"
		"  -c, --count=PERIOD      a sample every PERIOD events (nanoseconds\n"
		"                          for the clocks); default per event\n"
		"  -F, --freq=FREQ         FREQ samples a second (task-clock and\n"
		"                          cpu-clock only; default %d)\n"
		"  -g, --call-graph        record call chains too\n"
		"  -m, --mmap-pages=PAGES  ring buffer data pages, a power of two\n"
		"                          (default %d)\n"
		"  -o, --output=FILE       the data file to write\n"
		"  -p, --pid=PID           record the running task PID\n"
		"  -h, --help              show this help\n"
		"\n"
		"Events:\n", DEFAULT_FREQ, DEFAULT_DATA_PAGES);
	pmc_events_list(out);
}

static void __attribute__((noreturn, format(printf, 1, 2)))
bad_usage(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "pmc-record: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fprintf(stderr, "Try 'pmc-record --help' for more information.\n");
	exit(2);
}

/* A positive decimal number, or a usage error about @what. */
static __u64 parse_count(const char *arg, const char *what)
{
	unsigned long long val;
	char *end;

	errno = 0;
	val = strtoull(arg, &end, 10);
	if (errno || end == arg || *end || arg[0] == '-' || !val)
		bad_usage("invalid %s '%s': want a positive number", what,
			  arg);
	return val;
}

static __u64 default_period(__u64 config, enum pmc_event_unit unit)
{
	size_t i;

	if (unit == PMC_UNIT_NSEC)
		return NSEC_PER_SEC / DEFAULT_FREQ;
	for (i = 0; i < ARRAY_SIZE(default_periods); i++)
		if (default_periods[i].config == config)
			return default_periods[i].period;
	return DEFAULT_RAW_PERIOD;
}

/*
 * Open the sampling counter on @pid. At pmc_paranoid 2 only user-mode
 * sampling is allowed, so EACCES retries with exclude_kernel like
 * pmc-stat. Returns the fd, or -1 after printing why.
 */
static int open_counter(struct pmc_attr *attr, const char *event, pid_t pid)
{
	int fd, err;

	fd = sys_pmc_open(attr, pid, -1, -1, PMC_FLAG_FD_CLOEXEC);
	if (fd < 0 && errno == EACCES && !attr->exclude_kernel) {
		attr->exclude_kernel = 1;
		fd = sys_pmc_open(attr, pid, -1, -1, PMC_FLAG_FD_CLOEXEC);
	}
	if (fd >= 0)
		return fd;

	err = errno;
	if (err == ENOSYS)
		fprintf(stderr, "pmc-record: pmc_open not supported by this kernel (ENOSYS)\n");
	else if (err == ENODEV && pmc_config_needs_pmu(attr->config))
		fprintf(stderr, "pmc-record: %s: no hardware PMU (ENODEV)\n",
			event);
	else if (err == EINVAL && pmc_config_needs_pmu(attr->config))
		fprintf(stderr, "pmc-record: %s: not supported by this CPU (EINVAL)\n",
			event);
	else if (err == ESRCH)
		fprintf(stderr, "pmc-record: no process %d\n", (int)pid);
	else if (err == EACCES)
		fprintf(stderr, "pmc-record: may not watch process %d: that needs the right to ptrace it (EACCES)\n",
			(int)pid);
	else if (err == EOPNOTSUPP)
		fprintf(stderr, "pmc-record: %s: sampling not supported by this kernel (EOPNOTSUPP)\n",
			event);
	else
		fprintf(stderr, "pmc-record: pmc_open(%s): %s\n", event,
			strerror(err));
	return -1;
}

static int map_ring(struct ring *ring, int fd, size_t data_pages)
{
	size_t page_size = sysconf(_SC_PAGESIZE);
	void *map;

	ring->data_size = data_pages * page_size;
	ring->map_size = page_size + ring->data_size;
	/* Writable: the kernel must not overwrite what we have not read. */
	map = mmap(NULL, ring->map_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		   fd, 0);
	if (map == MAP_FAILED) {
		int err = errno;

		fprintf(stderr, "pmc-record: mmap of %zu ring buffer pages: %s\n",
			data_pages, strerror(err));
		if (err == EPERM)
			fprintf(stderr, "pmc-record: over RLIMIT_MEMLOCK plus /proc/sys/kernel/pmc_mlock_kb; try a smaller -m\n");
		return -1;
	}
	ring->page = map;
	ring->data = (unsigned char *)map + page_size;
	ring->tail = READ_ONCE(ring->page->data_tail);

	if (ring->page->compat_version > 1) {
		fprintf(stderr, "pmc-record: ring buffer version %u (compatible with %u) is newer than this tool\n",
			ring->page->version, ring->page->compat_version);
		munmap(map, ring->map_size);
		return -1;
	}
	if (ring->page->version != 1 || ring->page->compat_version != 1)
		fprintf(stderr, "pmc-record: warning: ring buffer version %u/%u, expected 1/1\n",
			ring->page->version, ring->page->compat_version);
	return 0;
}

/* Copy @len bytes at ring position @pos, which may wrap the end. */
static void ring_copy(const struct ring *ring, void *dst, __u64 pos, size_t len)
{
	size_t off = pos & (ring->data_size - 1);
	size_t first = ring->data_size - off;

	if (first > len)
		first = len;
	memcpy(dst, ring->data + off, first);
	memcpy((unsigned char *)dst + first, ring->data, len - first);
}

static int write_out(struct recording *rec, const void *buf, size_t len)
{
	if (fwrite(buf, 1, len, rec->out) != len) {
		fprintf(stderr, "pmc-record: write %s: %s\n", rec->path,
			strerror(errno));
		return -1;
	}
	return 0;
}

/* Count what the summary needs, then append the record to the file. */
static int save_record(struct recording *rec, size_t size)
{
	const struct pmc_event_header *h = (void *)rec->record;

	if (pmc_data_is_sample(h)) {
		rec->nr_samples++;
	} else if (h->type == PMC_EVENT_LOST) {
		const struct pmc_data_lost *lost = (void *)rec->record;

		if (size < sizeof(*lost)) {
			fprintf(stderr, "pmc-record: warning: short LOST record (%zu bytes)\n",
				size);
		} else {
			rec->nr_lost += lost->lost;
		}
	}
	if (write_out(rec, rec->record, size))
		return -1;
	rec->data_size += size;
	return 0;
}

/*
 * Give up on the bytes between our tail and @head. The kernel never
 * produces this in no-overwrite mode, but if it does, say so.
 */
static void skip_to(struct recording *rec, struct ring *ring, __u64 head,
		    const char *why)
{
	fprintf(stderr, "pmc-record: warning: %s; skipping %" PRIu64 " bytes of records\n",
		why, (uint64_t)(head - ring->tail));
	rec->nr_skipped += head - ring->tail;
	ring->tail = head;
}

/*
 * Move every record between data_tail and data_head into the file, then
 * hand the space back. Returns 0, or -1 on a write error.
 */
static int drain_ring(struct recording *rec, struct ring *ring)
{
	struct pmc_event_header h;
	__u64 head;
	int ret = 0;

	head = READ_ONCE(ring->page->data_head);
	/* Read no record before the head that covers it. */
	rmb();

	if (head - ring->tail > ring->data_size)
		skip_to(rec, ring, head, "ring buffer overrun");

	while (ring->tail != head) {
		__u64 avail = head - ring->tail;

		if (avail < sizeof(h)) {
			skip_to(rec, ring, head, "partial record header in ring buffer");
			break;
		}
		ring_copy(ring, &h, ring->tail, sizeof(h));
		if (h.size < sizeof(h) || h.size % 8 || h.size > avail) {
			skip_to(rec, ring, head, "corrupt record size in ring buffer");
			break;
		}
		ring_copy(ring, rec->record, ring->tail, h.size);
		ring->tail += h.size;
		if (save_record(rec, h.size)) {
			ret = -1;
			ring->tail = head;	/* keep the kernel going */
			break;
		}
	}

	/* Finish reading the records before the kernel may reuse them. */
	mb();
	WRITE_ONCE(ring->page->data_tail, ring->tail);
	return ret;
}

static bool ring_empty(const struct ring *ring)
{
	return READ_ONCE(ring->page->data_head) == ring->tail;
}

/* Truncate into a zero-filled field, keeping the terminator. */
static void copy_string(char *dst, size_t size, const char *src)
{
	snprintf(dst, size, "%s", src);
}

/*
 * -p: the kernel writes MMAP records only for mappings made from now on.
 * Write the executable file mappings the task already has, from
 * /proc/PID/maps, as MMAP records before any sample, so that pmc-report
 * can place the task's IPs (as perf record -p does).
 */
static int synthesize_mmaps(struct recording *rec, pid_t pid)
{
	unsigned long long start, end, pgoff;
	char path[64], line[4096], perms[8];
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;	/* the task is gone: nothing to place */
	while (fgets(line, sizeof(line), f)) {
		struct {
			struct pmc_event_header h;
			__u32 pid, tid;
			__u64 addr, len, pgoff;
			char filename[4096];
		} r;
		char *file;
		size_t len;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &start, &end,
			   perms, &pgoff, &n) < 4 || !strchr(perms, 'x'))
			continue;
		file = line + n;
		file[strcspn(file, "\n")] = '\0';
		if (file[0] != '/')
			continue;	/* anonymous, [vdso] and the like */
		len = strlen(file) + 1;
		memset(&r, 0, sizeof(r));
		r.h.type = PMC_EVENT_MMAP;
		r.h.size = (offsetof(typeof(r), filename) + len + 7) & ~7UL;
		r.pid = pid;
		r.tid = pid;
		r.addr = start;
		r.len = end - start;
		r.pgoff = pgoff;
		memcpy(r.filename, file, len);
		if (write_out(rec, &r, r.h.size)) {
			fclose(f);
			return -1;
		}
		rec->data_size += r.h.size;
	}
	fclose(f);
	return 0;
}

/* -p: the running task's name and command line, from /proc. */
static void fill_task(struct pmc_data_header *hdr, pid_t pid)
{
	char path[64];
	size_t n = 0, i;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	f = fopen(path, "r");
	if (f) {
		if (fgets(hdr->comm, sizeof(hdr->comm), f))
			hdr->comm[strcspn(hdr->comm, "\n")] = '\0';
		fclose(f);
	}
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
			const struct pmc_attr *attr, const char *event,
			pid_t pid, char **cmd)
{
	const char *base;
	size_t len = 0;
	int i;

	memset(hdr, 0, sizeof(*hdr));
	hdr->magic = PMC_DATA_MAGIC;
	hdr->version = PMC_DATA_VERSION;
	hdr->header_size = sizeof(*hdr);
	hdr->attr = *attr;
	hdr->data_size = PMC_DATA_SIZE_UNKNOWN;
	hdr->pid = pid;
	copy_string(hdr->event, sizeof(hdr->event), event);
	pmc_data_boot_id(hdr->boot_id, sizeof(hdr->boot_id));
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
	return 0;
}

/* Fill in the sizes and counts now that they are known, and close. */
static int finish_output(struct recording *rec)
{
	struct pmc_data_header *hdr = &rec->header;
	int ret = 0;

	hdr->data_size = rec->data_size;
	hdr->nr_samples = rec->nr_samples;
	hdr->nr_lost = rec->nr_lost;
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
 * Drain the ring until the kernel says the task is gone and everything
 * was read (POLLHUP), or until we have reaped the command ourselves and
 * the ring is empty: its exit is complete by then, so nothing of it can
 * still arrive. Inherited copies in processes that outlive the command
 * are not waited for, as pmc-stat does not wait for them either.
 * With -p (@child NULL): until the task is gone, or SIGINT.
 */
static int record_loop(struct recording *rec, struct ring *ring, int fd,
		       struct pmc_child *child)
{
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		bool over = child ? child->exited : interrupted;
		int n;

		n = poll(&pfd, 1, over ? 0 : POLL_TIMEOUT_MS);
		if (n < 0 && errno != EINTR) {
			perror("pmc-record: poll");
			return -1;
		}
		if (drain_ring(rec, ring))
			return -1;
		if (n > 0 && (pfd.revents & POLLHUP))
			break;
		if (n > 0 && (pfd.revents & (POLLERR | POLLNVAL))) {
			fprintf(stderr, "pmc-record: poll: error on the counter (revents 0x%x)\n",
				pfd.revents);
			return -1;
		}
		if (over && ring_empty(ring))
			break;
		if (child)
			pmc_child_reap(child, true);
	}
	return drain_ring(rec, ring);
}

/*
 * Record until the end (see record_loop()), then close the counter and
 * complete the file. 0, or 1 after printing why.
 */
static int finish(struct recording *rec, struct ring *ring, int fd,
		  struct pmc_child *child)
{
	if (record_loop(rec, ring, fd, child)) {
		/* Keep what was written: it is a valid, unfinished file. */
		fclose(rec->out);
		rec->out = NULL;
	}
	munmap(ring->page, ring->map_size);
	close(fd);
	if (child)
		pmc_child_reap(child, false);
	if (!rec->out || finish_output(rec))
		return 1;

	if (rec->nr_skipped)
		fprintf(stderr, "pmc-record: warning: %" PRIu64 " bytes of unreadable records were skipped\n",
			(uint64_t)rec->nr_skipped);
	fprintf(stderr, "pmc-record: %" PRIu64 " samples, %" PRIu64 " lost, written to %s\n",
		(uint64_t)rec->nr_samples, (uint64_t)rec->nr_lost, rec->path);
	return 0;
}

/*
 * -p PID: record a running task (and what it forks) until it exits or
 * SIGINT; @no_cmd is the empty command line.
 */
static int record_task(struct recording *rec, struct pmc_attr *attr,
		       const char *event, pid_t pid, size_t data_pages,
		       char **no_cmd)
{
	struct sigaction sa;
	struct ring ring;
	int fd;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigint;	/* no SA_RESTART: poll() returns */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);

	fd = open_counter(attr, event, pid);
	if (fd < 0)
		return 1;
	if (map_ring(&ring, fd, data_pages))
		goto out_counter;
	fill_header(&rec->header, attr, event, pid, no_cmd);
	if (open_output(rec))
		goto out_ring;
	if (synthesize_mmaps(rec, pid))
		goto out_output;
	if (ioctl(fd, PMC_IOC_ENABLE) < 0) {
		fprintf(stderr, "pmc-record: enable(%s): %s\n", event,
			strerror(errno));
		goto out_output;
	}
	return finish(rec, &ring, fd, NULL);

out_output:
	discard_output(rec);
out_ring:
	munmap(ring.page, ring.map_size);
out_counter:
	close(fd);
	return 1;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "event",	required_argument, NULL, 'e' },
		{ "count",	required_argument, NULL, 'c' },
		{ "freq",	required_argument, NULL, 'F' },
		{ "call-graph",	no_argument,	   NULL, 'g' },
		{ "mmap-pages",	required_argument, NULL, 'm' },
		{ "output",	required_argument, NULL, 'o' },
		{ "pid",	required_argument, NULL, 'p' },
		{ "help",	no_argument,	   NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct recording rec;
	const char *event = DEFAULT_EVENT;
	enum pmc_event_unit unit;
	__u64 period = 0, freq = 0, data_pages = DEFAULT_DATA_PAGES, val;
	bool callchain = false;
	struct pmc_attr attr;
	struct pmc_child child;
	pid_t attach_pid = 0;
	struct ring ring;
	char **cmd;
	int opt, fd, status;

	/* '+': options after COMMAND belong to COMMAND. */
	while ((opt = getopt_long(argc, argv, "+e:c:F:gm:o:p:h", longopts,
				  NULL)) != -1) {
		switch (opt) {
		case 'e':
			event = optarg;
			break;
		case 'c':
			period = parse_count(optarg, "period");
			break;
		case 'F':
			freq = parse_count(optarg, "frequency");
			break;
		case 'g':
			callchain = true;
			break;
		case 'm':
			data_pages = parse_count(optarg, "page count");
			if (data_pages & (data_pages - 1) ||
			    data_pages > (1 << 20))
				bad_usage("invalid page count '%s': want a power of two up to 1048576",
					  optarg);
			break;
		case 'o':
			rec.path = optarg;
			break;
		case 'p':
			val = parse_count(optarg, "pid");
			if (val > INT_MAX)
				bad_usage("invalid pid '%s'", optarg);
			attach_pid = val;
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
	if (!cmd[0] && !attach_pid)
		bad_usage("no command to record");
	if (cmd[0] && attach_pid)
		bad_usage("-p records a running task: no COMMAND with it");
	if (!rec.path)
		bad_usage("no output file: use -o FILE");

	memset(&attr, 0, sizeof(attr));
	if (pmc_event_parse(event, &attr.config, &unit)) {
		fprintf(stderr, "pmc-record: unknown event '%s'; valid events:\n",
			event);
		pmc_events_list(stderr);
		return 2;
	}
	if (strlen(event) >= PMC_DATA_EVENT_LEN)
		bad_usage("event name '%s' too long", event);
	if (period && freq)
		bad_usage("-c and -F exclude each other");
	if (freq) {
		/* The ABI has no frequency mode: only a clock's period is a time. */
		if (unit != PMC_UNIT_NSEC)
			bad_usage("-F needs task-clock or cpu-clock; use -c PERIOD for '%s'",
				  event);
		if (freq > NSEC_PER_SEC)
			bad_usage("frequency %llu Hz is above 1 GHz",
				  (unsigned long long)freq);
		period = NSEC_PER_SEC / freq;
	}
	if (!period)
		period = default_period(attr.config, unit);

	attr.irq_period = period;
	attr.record_type = PMC_RECORD_IP | PMC_RECORD_TID | PMC_RECORD_TIME;
	if (callchain)
		attr.record_type |= PMC_RECORD_CALLCHAIN;
	attr.disabled = 1;
	attr.inherit = 1;
	attr.mmap = 1;
	attr.comm = 1;
	attr.wakeup_events = 0;		/* wake up per page */

	if (attach_pid)
		return record_task(&rec, &attr, event, attach_pid, data_pages,
				   cmd);
	if (pmc_child_spawn(&child, "pmc-record", cmd))
		return 1;
	/*
	 * ^C reaches the command too: keep recording until it exits. The
	 * child was forked before this, so it keeps the default action.
	 */
	signal(SIGINT, SIG_IGN);

	status = 1;
	fd = open_counter(&attr, event, child.pid);
	if (fd < 0)
		goto out_child;
	if (map_ring(&ring, fd, data_pages))
		goto out_counter;
	fill_header(&rec.header, &attr, event, child.pid, cmd);
	if (open_output(&rec))
		goto out_ring;
	if (ioctl(fd, PMC_IOC_ENABLE) < 0) {
		fprintf(stderr, "pmc-record: enable(%s): %s\n", event,
			strerror(errno));
		goto out_output;
	}
	if (pmc_child_release(&child, cmd)) {
		status = 127;
		goto out_output;
	}

	status = finish(&rec, &ring, fd, &child);
	return status ? status : child.status;

	/* Setup failed before the command ran: leave no half-written file. */
out_output:
	discard_output(&rec);
out_ring:
	munmap(ring.page, ring.map_size);
out_counter:
	close(fd);
out_child:
	pmc_child_abort(&child);
	return status;
}
