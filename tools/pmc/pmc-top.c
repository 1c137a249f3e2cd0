// SPDX-License-Identifier: GPL-2.0
/*
 * pmc-top: where the CPUs, or a process, spend their samples, live.
 *
 *	pmc-top [-e EVENT] [-F FREQ | -c PERIOD] [-C CPUS | -p PID,...]
 *		[-d SECS] [-n ITERATIONS] [-E ROWS] [-z] [-m PAGES]
 *		[--stdio] [--stdin-keys]
 *
 * perf top's job. A sampler per CPU (every task on it; by default on
 * every online CPU) or per thread of -p writes its samples, and the
 * MMAP and FORK records that place them, into its ring buffer. The IPs
 * resolve as in pmc-report: user ones through each process's mappings
 * (pmc-maps.c, started from /proc for the tasks that already run) to
 * the files' symbols (pmc-symbols.c), kernel ones through
 * /proc/kallsyms. Every -d seconds a table of the symbols by their
 * share of the samples is drawn, each sample weighed by its period;
 * then, as perf top does, what was counted decays to 7/8, so the table
 * follows what runs now, or with -z is zeroed.
 *
 * On a terminal the table is redrawn in place, on the alternate screen,
 * with the terminal in raw mode so that a key arrives at once: 'q'
 * quits, 'z' turns zeroing on and off. Whatever way pmc-top ends, the
 * terminal is given back as it was. Otherwise, or with --stdio, each
 * table is printed after the last.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <search.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>

#include "pmc-data.h"
#include "pmc-maps.h"
#include "pmc-sampler.h"
#include "pmc-symbols.h"
#include "pmc-targets.h"
#include "pmc-tools.h"
#include "pmc-util.h"

#define DEFAULT_EVENT		"cpu-clock"
#define DEFAULT_FREQ		4000		/* Hz, as perf top */
#define DEFAULT_DELAY		2.0		/* s between tables */
#define DEFAULT_DATA_PAGES	32
#define DEFAULT_ROWS		20		/* off a terminal */
#define DECAY			(7.0 / 8)	/* perf top's, a table */

/* The most bytes of a sample: IP, TID, TIME, PERIOD (set_sampling()). */
#define SAMPLE_SIZE	40

/* The lines of a table that are not rows, on a screen: see draw(). */
#define SCREEN_LINES	4

/* Table cells compare as pointers: one copy of each placeholder. */
static const char unknown_name[] = "[unknown]";
static const char kernel_name[] = "[kernel]";

/* One row of the table: where samples fell, and how much they weigh. */
struct row {
	const char *dso;		/* interned basename, or placeholder */
	const char *sym;		/* interned, or a placeholder */
	bool kernel;
	double weight;			/* periods, decayed each table */
};

/* A record of one drain, replayed in time order: see drain(). */
struct pending {
	__u64 time;
	size_t seq;			/* order read, among equal times */
	long side;			/* a side record's offset in batch, */
					/* or -1 for a sample: */
	__u64 ip, period;
	__u32 pid;
	bool kernel;
};

static struct top {
	struct pmc_evlist events;	/* -e: one event, its sampling attr */
	struct sampling how;		/* -F or -c, as pmc-record samples */
	bool user_only;			/* pmc_paranoid: no kernel */
	const char *cpu_list;		/* -C, as given */
	int *cpus, nr_cpus;		/* the CPUs sampled, or: */
	const char *pid_list;		/* -p, as given */
	pid_t *ids, *tids;		/* its processes and their threads */
	int nr_ids, nr_tids;
	struct pmc_ring *rings;		/* one per CPU or thread */
	bool *gone;			/* a thread's ring hung up */
	size_t nr_rings, nr_live;

	/* The table: its rows by (sym, dso, kernel), and as a list. */
	void *index;
	struct row **rows;
	size_t nr_rows, cap_rows;
	/* One drain's records (see drain()), its side records copied */
	struct pending *pend;
	size_t nr_pend, cap_pend;
	unsigned char *batch;
	size_t batch_len, batch_cap;
	/* This interval's samples, for the header. */
	__u64 samples, kernel_samples, lost_before;

	double delay;			/* -d */
	long iterations;		/* -n; 0: until 'q' or SIGINT */
	int show;			/* -E: rows; 0: as many as fit */
	bool zero;			/* -z, 'z' */
	bool stdio;			/* --stdio, or stdout no terminal */
	bool keys;			/* keys come from stdin */
	char *title;			/* header's end: see describe() */
	struct strbuf frame;		/* the table as it is drawn */
} top;

static void usage(FILE *out)
{
	fprintf(out,
		"usage: pmc-top [-e EVENT] [-F FREQ | -c PERIOD] [-C CPUS | -p PID,...]\n"
		"               [-d SECS] [-n ITERATIONS] [-E ROWS] [-z] [-m PAGES]\n"
		"               [--stdio] [--stdin-keys]\n"
		"\n"
		"Sample every CPU (or the CPUs CPUS, or the processes PID), and show\n"
		"live which symbols take the samples, as perf top does: on a\n"
		"terminal, redrawn every SECS seconds until 'q' or SIGINT; else a\n"
		"table each time. Older samples count 7/8 as much at each table.\n"
		"\n"
		"  -e, --event=EVENT       the event to sample (default " DEFAULT_EVENT "),\n"
		"                          EVENT:u user mode only\n"
		"  -F, --freq=FREQ         FREQ samples a second (default %d)\n"
		"  -c, --count=PERIOD      a sample every PERIOD events instead\n"
		"  -C, --cpu=CPUS          only the CPUs CPUS (\"0,2-3\")\n"
		"  -p, --pid=PID,...       only the threads of the processes PID (and\n"
		"                          the threads they start), until they exit\n"
		"  -d, --delay=SECS        seconds between tables (default %g)\n"
		"  -n, --iterations=N      exit after N tables\n"
		"  -E, --entries=ROWS      rows a table shows (default: what fits the\n"
		"                          terminal, else %d)\n"
		"  -z, --zero              count each table's samples only, not decayed\n"
		"                          older ones ('z' turns it on and off)\n"
		"  -m, --mmap-pages=PAGES  ring buffer data pages per CPU or thread,\n"
		"                          a power of two (default %d)\n"
		"      --stdio             print each table after the last, even on a\n"
		"                          terminal\n"
		"      --stdin-keys        read keys ('q', 'z') from standard input even\n"
		"                          when it is no terminal: echo q | pmc-top ...\n"
		"  -h, --help              show this help\n"
		"\n"
		"Sampling every task of a CPU needs CAP_PERFMON, or kernel.pmc_paranoid\n"
		"<= 0; -p needs the right to ptrace the processes.\n"
		"\n"
		"Events:\n", DEFAULT_FREQ, DEFAULT_DELAY, DEFAULT_ROWS,
		DEFAULT_DATA_PAGES);
	pmc_events_list(out);
}

/* -m: a power of two, as a ring buffer's data pages must be. */
static unsigned long long parse_pages(const char *arg)
{
	unsigned long long pages = sampler_parse_count(arg, "page count");

	if (pages & (pages - 1) || pages > (1 << 16))
		sampler_usage_error("invalid page count '%s': want a power of two up to 65536",
				    arg);
	return pages;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* --- the terminal ------------------------------------------------------ */

/* The alternate screen, without a cursor, and back. */
#define ENTER_SCREEN	"\033[?1049h\033[?25l"
#define LEAVE_SCREEN	"\033[?25h\033[?1049l"

static struct termios saved_tio;
static bool raw_tty;			/* stdin is a terminal we set raw */
static bool screen;			/* redrawn in place on stdout */
static int saved_stderr = -1;		/* while warnings wait (below) */
static FILE *stashed_stderr;

static volatile sig_atomic_t stop, redraw;
static sigset_t wait_mask;		/* the signals ppoll() lets in */

/* Best effort, as a terminal that is gone needs nothing; signal safe. */
static void put_escape(const char *seq)
{
	if (write(STDOUT_FILENO, seq, strlen(seq)) < 0)
		return;
}

/* Only what a signal handler may call, for on_fatal() and on_tstp(). */
static void term_leave(void)
{
	if (screen)
		put_escape(LEAVE_SCREEN);
	/* Flush: keys typed ahead are not the shell's. */
	if (raw_tty)
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_tio);
}

/*
 * No canonical lines, no echo: a key arrives as it is pressed. ISIG
 * stays, so that ^C is SIGINT and ^Z SIGTSTP, and OPOST too.
 */
static void term_enter(void)
{
	struct termios tio = saved_tio;

	if (raw_tty) {
		tio.c_lflag &= ~(ICANON | ECHO);
		tio.c_cc[VMIN] = 1;
		tio.c_cc[VTIME] = 0;
		tcsetattr(STDIN_FILENO, TCSANOW, &tio);
	}
	if (screen)
		put_escape(ENTER_SCREEN);
}

/*
 * Warnings (a file without symbols) would be torn by the next redraw:
 * while the screen is ours they wait in a file, and are shown after.
 */
static void stash_stderr(void)
{
	stashed_stderr = tmpfile();
	if (!stashed_stderr)
		return;		/* then they flash by */
	fflush(stderr);
	saved_stderr = dup(STDERR_FILENO);
	if (saved_stderr < 0 ||
	    dup2(fileno(stashed_stderr), STDERR_FILENO) < 0) {
		fclose(stashed_stderr);
		stashed_stderr = NULL;
	}
}

static void unstash_stderr(void)
{
	char buf[4096];
	size_t n;

	if (!stashed_stderr)
		return;
	fflush(stderr);
	dup2(saved_stderr, STDERR_FILENO);
	close(saved_stderr);
	rewind(stashed_stderr);
	while ((n = fread(buf, 1, sizeof(buf), stashed_stderr)) > 0)
		if (fwrite(buf, 1, n, stderr) != n)
			break;
	fclose(stashed_stderr);
	stashed_stderr = NULL;
}

/* atexit(): every way out of main() and exit() gives the terminal back. */
static void term_restore(void)
{
	fflush(stdout);
	term_leave();
	raw_tty = false;
	screen = false;
	unstash_stderr();
}

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

static void on_winch(int sig)
{
	(void)sig;
	redraw = 1;
}

/* A crash: give the terminal back, then die of @sig as we would have. */
static void on_fatal(int sig)
{
	term_leave();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void catch(int sig, void (*handler)(int))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;	/* no SA_RESTART: poll() returns */
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

/*
 * ^Z: the shell gets its terminal back as it was, and we ours when we
 * are continued in the foreground (in the background, we keep off it).
 */
static void on_tstp(int sig)
{
	int err = errno;
	sigset_t set;

	term_leave();
	signal(sig, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);			/* stopped here until SIGCONT */
	catch(sig, on_tstp);
	if (tcgetpgrp(STDIN_FILENO) == getpgrp())
		term_enter();
	redraw = 1;
	errno = err;
}

/*
 * Keys from a terminal on stdin that is ours (not a background job's),
 * or with --stdin-keys from whatever stdin is; the screen when stdout
 * is a terminal and --stdio was not given.
 */
static void setup_terminal(bool stdin_keys)
{
	static const int fatal[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };
	static const int waited[] = { SIGINT, SIGTERM, SIGHUP, SIGWINCH };
	bool tty_in = isatty(STDIN_FILENO) &&
		      tcgetpgrp(STDIN_FILENO) == getpgrp();
	sigset_t set;
	size_t i;

	top.stdio |= !isatty(STDOUT_FILENO);
	top.keys = stdin_keys || tty_in;
	sigemptyset(&set);
	for (i = 0; i < ARRAY_SIZE(waited); i++) {
		catch(waited[i], waited[i] == SIGWINCH ? on_winch : on_stop);
		sigaddset(&set, waited[i]);
	}
	/* See wait_events(): no signal lost between a look and a wait. */
	sigprocmask(SIG_BLOCK, &set, &wait_mask);
	signal(SIGPIPE, SIG_IGN);	/* a closed pipe is a write error */
	if (!tty_in && top.stdio)
		return;
	raw_tty = tty_in && !tcgetattr(STDIN_FILENO, &saved_tio);
	screen = !top.stdio;
	atexit(term_restore);
	for (i = 0; i < ARRAY_SIZE(fatal); i++)
		catch(fatal[i], on_fatal);
	catch(SIGTSTP, on_tstp);
	term_enter();
	if (screen)
		stash_stderr();
}

/* A key, or the end of them. Returns true to quit. */
static bool read_keys(void)
{
	char buf[64];
	ssize_t n, i;

	n = read(STDIN_FILENO, buf, sizeof(buf));
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return false;
	if (n <= 0) {
		top.keys = false;	/* EOF: nobody will press 'q' */
		return false;
	}
	for (i = 0; i < n; i++) {
		if (buf[i] == 'q' || buf[i] == 'Q')
			return true;
		if (buf[i] == 'z')
			top.zero = !top.zero;
		redraw = 1;
	}
	return false;
}

/* --- the table --------------------------------------------------------- */

static int cmp_row(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->sym != y->sym)
		return x->sym < y->sym ? -1 : 1;
	if (x->dso != y->dso)
		return x->dso < y->dso ? -1 : 1;
	return (int)x->kernel - (int)y->kernel;
}

static void add_weight(const char *dso, const char *sym, bool kernel,
		       double weight)
{
	struct row key = { .dso = dso, .sym = sym, .kernel = kernel };
	struct row **node = tfind(&key, &top.index, cmp_row), *e;

	if (!node) {
		e = must_calloc(1, sizeof(*e));
		*e = key;
		node = must_alloc(tsearch(e, &top.index, cmp_row));
		GROW(top.rows, top.nr_rows, top.cap_rows);
		top.rows[top.nr_rows++] = e;
	}
	(*node)->weight += weight;
}

/* Where a sample fell, as pmc-report's table names it. */
static void add_sample(const struct pending *p)
{
	const struct map *map = p->kernel ? NULL : maps_find(p->pid, p->ip);
	const char *dso = kernel_name, *sym;

	top.samples++;
	top.kernel_samples += p->kernel;
	if (p->kernel) {
		sym = kernel_symbol(p->ip);
		sym = sym ? sym : kernel_name;
	} else if (map) {
		dso = dso_name(map->dso);
		sym = dso_symbol(map->dso, p->ip - map->start + map->pgoff);
		sym = sym ? sym : unknown_name;
	} else {
		dso = unknown_name;
		sym = unknown_name;
	}
	add_weight(dso, sym, p->kernel, p->period ? p->period : 1);
}

/* MMAP and FORK records: what places later samples. */
static void side_record(const struct pmc_event_header *h)
{
	struct pmc_data_mmap m;
	struct pmc_data_task t;
	const char *name;

	if (h->type == PMC_EVENT_MMAP && h->size > sizeof(m)) {
		memcpy(&m, h, sizeof(m));
		name = (const char *)h + sizeof(m);
		if (memchr(name, '\0', h->size - sizeof(m)))
			maps_add(m.pid, m.addr, m.len, m.pgoff,
				 dso_find(name));
	} else if (h->type == PMC_EVENT_FORK && h->size >= sizeof(t)) {
		memcpy(&t, h, sizeof(t));
		if (t.pid != t.ppid)	/* a process, not a thread */
			maps_fork(t.ppid, t.pid);
	}
}

static int take_synthesized(void *arg, const struct pmc_event_header *h)
{
	(void)arg;
	side_record(h);
	return 0;
}

/* Queue @r, a record of a ring, for drain() to replay. */
static void queue(const union pmc_record *r)
{
	struct pmc_sample s;
	struct pmc_sample_ext x;
	struct pending *p;
	size_t size = r->h.size;

	GROW(top.pend, top.nr_pend, top.cap_pend);
	p = &top.pend[top.nr_pend];
	*p = (struct pending){ .seq = top.nr_pend, .side = -1 };
	if (r->h.misc & PMC_EVENT_MISC_OVERFLOW) {
		if (pmc_sample_parse_ext(r, top.events.ev[0].attr.record_type,
					 0, &s, &x))
			return;
		p->time = s.time;
		p->ip = s.ip;
		p->pid = s.pid;
		p->period = x.period;
		p->kernel = s.misc & PMC_EVENT_MISC_KERNEL;
		top.nr_pend++;
		return;
	}
	if (r->h.type == PMC_EVENT_MMAP && size >= 16)
		memcpy(&p->time, r->b + size - 8, 8);	/* attr.time_all */
	else if (r->h.type == PMC_EVENT_FORK && size >= 32)
		p->time = ((const struct pmc_data_task *)r)->time;
	else
		return;		/* counted by the ring, or not needed */
	while (top.batch_len + size > top.batch_cap) {
		top.batch_cap = top.batch_cap ? 2 * top.batch_cap : 65536;
		top.batch = must_realloc(top.batch, top.batch_cap);
	}
	memcpy(top.batch + top.batch_len, r, size);
	p->side = top.batch_len;
	top.batch_len += size;
	top.nr_pend++;
}

static int cmp_pending(const void *a, const void *b)
{
	const struct pending *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * Read every ring, then replay what was read in time order: a process
 * that execs on one CPU and is sampled on another has its MMAP records
 * in one ring and its samples in another, and a sample must meet the
 * mappings of its time.
 */
static void drain(void)
{
	struct pmc_ring *r;
	size_t i;
	int ret;

	for (i = 0; i < top.nr_rings; i++) {
		r = &top.rings[i];
		pmc_ring_begin(r);
		while ((ret = pmc_ring_next(r)) > 0)
			queue(r->rec);
		if (ret < 0)	/* never expected: the kernel wrote it */
			warn("%s: records skipped", r->err);
		pmc_ring_end(r);
	}
	qsort(top.pend, top.nr_pend, sizeof(*top.pend), cmp_pending);
	for (i = 0; i < top.nr_pend; i++) {
		if (top.pend[i].side < 0)
			add_sample(&top.pend[i]);
		else
			side_record((const void *)(top.batch +
						   top.pend[i].side));
	}
	top.nr_pend = 0;
	top.batch_len = 0;
}

static int cmp_weight(const void *a, const void *b)
{
	double x = (*(struct row *const *)a)->weight;
	double y = (*(struct row *const *)b)->weight;

	return x < y ? 1 : x > y ? -1 : 0;
}

/* Text of the table, cut to @width columns; erased to the end on a screen. */
static void put_line(int width, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void put_line(int width, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	must_alloc(s);
	strbuf_addf(&top.frame, "%.*s%s\n", width, s, screen ? "\033[K" : "");
	free(s);
}

/* "[4000Hz cpu-clock]  (all, 2 CPUs)": what is sampled, and whose. */
static char *describe(void)
{
	const struct pmc_evsel *ev = &top.events.ev[0];
	struct strbuf sb = { NULL, 0, 0 };

	/* The period used: a clock's is raised to its floor. */
	if (!top.how.freq)
		strbuf_addf(&sb, "[%s, period %llu", ev->name,
			    (unsigned long long)ev->attr.irq_period);
	else
		strbuf_addf(&sb, "[%lluHz %s", (unsigned long long)top.how.freq,
			    ev->name);
	strbuf_addf(&sb, "%s]  (", top.user_only ? ", user only" : "");
	if (top.pid_list)
		strbuf_addf(&sb, "process%s %s, %zu thread%s",
			    top.nr_ids > 1 ? "es" : "", top.pid_list,
			    top.nr_rings, top.nr_rings > 1 ? "s" : "");
	else if (top.cpu_list)
		strbuf_addf(&sb, "CPU%s %s", top.nr_cpus > 1 ? "s" : "",
			    top.cpu_list);
	else
		strbuf_addf(&sb, "all, %d CPU%s", top.nr_cpus,
			    top.nr_cpus > 1 ? "s" : "");
	strbuf_addf(&sb, ")");
	return sb.buf;
}

/*
 * The rows worth showing, heaviest first, at most @max of them, into
 * *@shown; *@total is the weight of all. Rows that decayed to what
 * would show as 0.00% are left out.
 */
static size_t pick_rows(struct row ***shown, size_t max, double *total)
{
	size_t i, n = 0;

	*total = 0;
	for (i = 0; i < top.nr_rows; i++)
		*total += top.rows[i]->weight;
	*shown = must_calloc(top.nr_rows, sizeof(**shown));
	for (i = 0; i < top.nr_rows; i++)
		if (top.rows[i]->weight > 0 &&
		    top.rows[i]->weight >= *total * 0.00005)
			(*shown)[n++] = top.rows[i];
	qsort(*shown, n, sizeof(**shown), cmp_weight);
	return n < max ? n : max;
}

/*
 * The table, as perf top --stdio draws it: a header with this
 * interval's sample rate, then "Overhead  Shared Object  Symbol" rows
 * by their share of the (decayed) weight. A terminal's size cuts it.
 * Returns 0, 1 if the reader of a pipe is gone, -1 after an error.
 */
static int draw(double elapsed, bool interval_end)
{
	struct winsize ws;
	int width = INT_MAX, height = 0, rows = top.show, dso_width = 13;
	__u64 lost = 0;
	struct row **shown;
	double total;
	size_t i, n;

	if (!ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) && ws.ws_row && ws.ws_col) {
		width = ws.ws_col;
		height = ws.ws_row;
	}
	if (!rows)
		rows = !height ? DEFAULT_ROWS : height > SCREEN_LINES ?
		       height - SCREEN_LINES : 1;
	n = pick_rows(&shown, rows, &total);
	for (i = 0; i < n; i++)
		if ((int)strlen(shown[i]->dso) > dso_width)
			dso_width = strlen(shown[i]->dso);
	for (i = 0; i < top.nr_rings; i++)
		lost += top.rings[i].lost;
	if (!top.title)
		top.title = describe();

	strbuf_setlen(&top.frame, 0);
	if (screen)
		strbuf_addf(&top.frame, "\033[H");
	/* a rate over a moment, as at the first draw, would be noise */
	put_line(width, "   PmcTop: %8.0f samples/s  kernel: %5.1f%%  lost: %llu  %s",
		 elapsed >= 0.1 ? top.samples / elapsed : 0.0,
		 top.samples ? 100.0 * top.kernel_samples / top.samples : 0,
		 (unsigned long long)(lost - top.lost_before), top.title);
	put_line(width, "%.*s", width < 79 ? width : 79,
		 "-------------------------------------------------------------------------------");
	put_line(width, "Overhead  %-*s  Symbol", dso_width, "Shared Object");
	for (i = 0; i < n; i++)
		put_line(width, "%7.2f%%  %-*s  [%c] %s",
			 100 * shown[i]->weight / total, dso_width,
			 shown[i]->dso, shown[i]->kernel ? 'k' : '.',
			 shown[i]->sym);
	free(shown);
	if (!screen) {
		strbuf_addf(&top.frame, "\n");
	} else {
		/* the keys on the last line, or below if it is unknown */
		strbuf_addf(&top.frame, "\033[J");
		if (height)
			strbuf_addf(&top.frame, "\033[%d;1H", height);
		strbuf_addf(&top.frame, "%.*s", width, top.zero ?
			    "q: quit  z: decay samples (now: zeroed each table)" :
			    "q: quit  z: zero samples at each table (now: decayed)");
	}
	if (interval_end) {
		top.samples = 0;
		top.kernel_samples = 0;
		top.lost_before = lost;
	}
	if (fwrite(top.frame.buf, 1, top.frame.len, stdout) != top.frame.len ||
	    fflush(stdout)) {
		if (errno == EPIPE)
			return 1;	/* the reader has seen enough */
		fprintf(stderr, "pmc-top: write: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

/* After a table, older samples count less, or (-z) not at all. */
static void decay(void)
{
	size_t i;

	for (i = 0; i < top.nr_rows; i++)
		top.rows[i]->weight *= top.zero ? 0 : DECAY;
}

/* --- the samplers ------------------------------------------------------ */

/*
 * As pmc-record samples (pmc_sampling_set()): at a rate, the kernel
 * setting the periods (a clock's is 1/rate) and each sample carrying
 * its own, or every -c PERIOD events; MMAP and COMM (with FORK)
 * records place the samples, time_all orders them across the rings.
 * But woken when a quarter of the ring holds samples, not at each page:
 * the table needs them only at its time, when every ring is read.
 */
static void set_sampling(size_t data_pages)
{
	top.how.all_cpus = !!top.cpus;		/* else -p: inherited */
	top.how.wakeup_events = data_pages * sysconf(_SC_PAGESIZE) /
				SAMPLE_SIZE / 4;
	pmc_sampling_set("pmc-top", &top.events.ev[0], 0, &top.how);
}

/*
 * A sampler and ring on each CPU or thread; what already runs placed
 * from /proc, as perf top does, and the kernel's symbols read, before
 * the samplers are enabled: so long a wait would fill their rings.
 * Returns 0, or -1 after saying why.
 */
static int start(size_t data_pages)
{
	struct pmc_evsel *ev = &top.events.ev[0];
	size_t i, targets = top.cpus ? top.nr_cpus : top.nr_tids;
	bool user_only = ev->attr.exclude_kernel;
	int fd, ret = 0;

	top.rings = must_calloc(targets, sizeof(*top.rings));
	top.gone = must_calloc(targets, sizeof(*top.gone));
	top.nr_rings = 0;
	for (i = 0; i < targets; i++) {
		fd = pmc_sampler_open("pmc-top", &ev->attr, ev->name,
				      top.cpus ? -1 : top.tids[i],
				      top.cpus ? top.cpus[i] : -1, -1,
				      !top.cpus);
		if (fd == -2)		/* a thread that is gone */
			continue;
		if (fd < 0)
			return -1;
		if (pmc_sampler_map("pmc-top", &top.rings[top.nr_rings], fd,
				    data_pages)) {
			close(fd);
			return -1;
		}
		top.nr_rings++;
	}
	if (!top.nr_rings) {
		fprintf(stderr, "pmc-top: the processes to watch are gone\n");
		return -1;
	}
	top.nr_live = top.nr_rings;
	top.user_only = !user_only && ev->attr.exclude_kernel;

	if (!ev->attr.exclude_kernel)
		kernel_symbol(0);
	for (i = 0; !top.cpus && !ret && i < (size_t)top.nr_ids; i++)
		ret = pmc_synthesize_task(top.ids[i], take_synthesized, NULL);
	if (top.cpus)
		ret = pmc_synthesize_all("pmc-top", take_synthesized, NULL);
	for (i = 0; !ret && i < top.nr_rings; i++) {
		ret = ioctl(top.rings[i].fd, PMC_IOC_ENABLE);
		if (ret)
			fprintf(stderr, "pmc-top: enable(%s): %s\n", ev->name,
				strerror(errno));
	}
	return ret;
}

/*
 * Wait for a ring to fill, a key, a signal or @timeout_ms. A thread's
 * ring (-p) that hangs up is read once more by the next drain(), and
 * polled no more. Returns 1 to quit ('q'), -1 after an error, else 0.
 */
static int wait_events(struct pollfd *pfd, size_t *ring_of, int timeout_ms)
{
	struct timespec ts = { .tv_sec = timeout_ms / 1000,
			       .tv_nsec = timeout_ms % 1000 * 1000000L };
	size_t i, n = 0, key_slot = SIZE_MAX;
	int ret;

	for (i = 0; i < top.nr_rings; i++) {
		if (top.gone[i])
			continue;
		pfd[n] = (struct pollfd){ .fd = top.rings[i].fd,
					  .events = POLLIN };
		ring_of[n++] = i;
	}
	if (top.keys) {
		key_slot = n;
		pfd[n++] = (struct pollfd){ .fd = STDIN_FILENO,
					    .events = POLLIN };
	}
	/* The signals that end or redraw us come only while we wait here. */
	ret = ppoll(pfd, n, &ts, &wait_mask);
	if (ret < 0 && errno != EINTR) {
		fprintf(stderr, "pmc-top: poll: %s\n", strerror(errno));
		return -1;
	}
	for (i = 0; ret > 0 && i < n; i++) {
		if (i == key_slot) {
			if (pfd[i].revents && read_keys())
				return 1;
		} else if (pfd[i].revents & (POLLERR | POLLNVAL)) {
			fprintf(stderr, "pmc-top: poll: error on a sampler (revents 0x%x)\n",
				pfd[i].revents);
			return -1;
		} else if ((pfd[i].revents & POLLHUP) &&
			   !top.gone[ring_of[i]]) {
			top.gone[ring_of[i]] = true;
			top.nr_live--;
		}
	}
	return 0;
}

/*
 * Read the rings as they fill, and draw a table every -d seconds, and
 * a last one when the processes of -p are all gone. Returns the exit
 * status.
 */
static int run(void)
{
	struct pollfd *pfd = must_calloc(top.nr_rings + 1, sizeof(*pfd));
	size_t *ring_of = must_calloc(top.nr_rings + 1, sizeof(*ring_of));
	double last = now(), next = last + top.delay, t;
	bool gone = false;
	long tables = 0;
	int ret = 0;

	redraw = screen;	/* a screen shows at once what it is */
	while (!stop && !gone) {
		t = now();
		ret = wait_events(pfd, ring_of, redraw || t >= next ? 0 :
					(int)((next - t) * 1000) + 1);
		if (ret)
			break;
		drain();
		gone = top.pid_list && !top.nr_live;
		if (stop)
			break;
		t = now();
		if (t >= next || gone) {
			ret = draw(t - last, true);
			decay();
			last = t;
			next += top.delay;
			if (next < t)	/* we were stopped: start afresh */
				next = t + top.delay;
			if (top.iterations && ++tables >= top.iterations)
				break;
		} else if (redraw && screen) {
			/* a key, a resize, a return from ^Z */
			ret = draw(t - last, false);
		}
		if (ret)
			break;
		redraw = 0;
	}
	free(pfd);
	free(ring_of);
	if (gone && !ret)
		fprintf(stderr, "pmc-top: the processes watched are gone\n");
	return ret < 0;		/* 1: 'q', or the reader gone: clean */
}

int main(int argc, char **argv)
{
	enum { OPT_STDIO = 256, OPT_STDIN_KEYS };
	static const struct option longopts[] = {
		{ "event",	required_argument, NULL, 'e' },
		{ "freq",	required_argument, NULL, 'F' },
		{ "count",	required_argument, NULL, 'c' },
		{ "cpu",	required_argument, NULL, 'C' },
		{ "pid",	required_argument, NULL, 'p' },
		{ "delay",	required_argument, NULL, 'd' },
		{ "iterations",	required_argument, NULL, 'n' },
		{ "entries",	required_argument, NULL, 'E' },
		{ "zero",	no_argument,	   NULL, 'z' },
		{ "mmap-pages",	required_argument, NULL, 'm' },
		{ "stdio",	no_argument,	   NULL, OPT_STDIO },
		{ "stdin-keys",	no_argument,	   NULL, OPT_STDIN_KEYS },
		{ "help",	no_argument,	   NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long long data_pages = DEFAULT_DATA_PAGES, val;
	const char *event = DEFAULT_EVENT;
	bool stdin_keys = false;
	const void *vdso;
	size_t vdso_size;
	char err[256], *end;
	int opt;

	top.delay = DEFAULT_DELAY;
	while ((opt = getopt_long(argc, argv, "e:F:c:C:p:d:n:E:zm:h", longopts,
				  NULL)) != -1) {
		switch (opt) {
		case 'e':
			event = optarg;
			break;
		case 'F':
			top.how.freq = sampler_parse_count(optarg, "frequency");
			break;
		case 'c':
			top.how.period = sampler_parse_count(optarg, "period");
			break;
		case 'C':
			top.cpu_list = optarg;
			break;
		case 'p':
			top.pid_list = optarg;
			break;
		case 'd':
			errno = 0;
			top.delay = strtod(optarg, &end);
			if (errno || end == optarg || *end ||
			    !(top.delay >= 0.1 && top.delay <= 86400))
				sampler_usage_error(
					"invalid delay '%s': want seconds, 0.1 to 86400",
					optarg);
			break;
		case 'n':
			top.iterations = sampler_parse_count(optarg, "iteration count");
			break;
		case 'E':
			val = sampler_parse_count(optarg, "row count");
			top.show = val > INT_MAX ? INT_MAX : val;
			break;
		case 'z':
			top.zero = true;
			break;
		case 'm':
			data_pages = parse_pages(optarg);
			break;
		case OPT_STDIO:
			top.stdio = true;
			break;
		case OPT_STDIN_KEYS:
			stdin_keys = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc)
		sampler_usage_error("unexpected argument '%s': pmc-top runs no command",
				    argv[optind]);
	if (!top.how.period && !top.how.freq)
		top.how.freq = DEFAULT_FREQ;
	if (pmc_sampling_check("pmc-top", &top.how, err, sizeof(err)))
		sampler_usage_error("%s", err);
	if (top.cpu_list && top.pid_list)
		sampler_usage_error("-C samples CPUs, -p processes: choose one");
	if (pmc_evlist_parse(&top.events, event, err, sizeof(err))) {
		fprintf(stderr, "pmc-top: %s; valid events:\n", err);
		pmc_events_list(stderr);
		return 2;
	}
	if (top.events.nr != 1)
		sampler_usage_error("'%s': pmc-top shows one event", event);

	if (top.pid_list) {
		top.nr_tids = pmc_attach_threads("pmc-top", top.pid_list, true,
						 &top.ids, &top.nr_ids,
						 &top.tids);
	} else {
		top.nr_cpus = top.cpu_list ?
			      pmc_cpu_list(top.cpu_list, &top.cpus) :
			      pmc_online_cpus(&top.cpus);
		if (top.nr_cpus <= 0 && top.cpu_list)
			sampler_usage_error("bad CPU list '%s': use 0,2-3", top.cpu_list);
		if (top.nr_cpus <= 0) {
			perror("pmc-top: /sys/devices/system/cpu/online");
			return 1;
		}
	}
	set_sampling(data_pages);
	/* Kernel symbols of this boot; "[vdso]" code is our own vDSO's. */
	kernel_symbols_init(true, NULL, NULL);
	vdso = pmc_vdso_image(&vdso_size);
	if (vdso)
		dso_set_image(dso_find(PMC_DATA_VDSO_NAME), vdso, vdso_size);
	if (start(data_pages))
		return 1;
	setup_terminal(stdin_keys);
	return run();
}
