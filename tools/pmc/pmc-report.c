// SPDX-License-Identifier: GPL-2.0
/*
 * pmc-report: show where the samples of a pmc-record data file fell.
 *
 *	pmc-report [-s KEYS] [-G caller|callee] [--svg FLAME.svg]
 *		   [FILTERS] [--symfs DIR] [--kallsyms FILE | --vmlinux FILE] FILE
 *	pmc-report --folded [--svg FLAME.svg] [FILTERS] [--symfs DIR] [...] FILE
 *	pmc-report --script [FILTERS] [--symfs DIR] [...] FILE
 *	pmc-report --annotate SYMBOL [FILTERS] [--symfs DIR] [...] FILE
 *
 *	-s, --sort KEYS	instead of the symbol and thread tables, one
 *			table whose rows are told apart by KEYS, a comma
 *			list of comm, pid, thread (pid/tid), object (or dso),
 *			symbol (or sym) and srcline (file:line, from DWARF)
 *	-G, --call-graph caller|callee
 *			under each row, the call chains of its samples, as
 *			a tree with each branch's share of all samples:
 *			from the outermost caller down (caller), or from
 *			the sampled function up its callers (callee)
 *	--folded	instead of tables, one line per distinct stack,
 *			"comm;outermost;...;innermost samples", sorted:
 *			the input of flamegraph.pl and inferno. Frames are
 *			symbols, else object+0xoffset, [kernel] or
 *			[unknown]; kernel frames end in _[k]
 *	--svg FLAME.svg	also write the stacks as a flame graph, an SVG
 *			with its own script for a web browser: hover for a
 *			frame's samples, click to zoom into it, Search (or
 *			Ctrl-F) to highlight frames by regular expression
 *			and see their share of all samples
 *	--script	instead of tables, each sample as perf script
 *			prints it by default: "comm pid/tid time: event:",
 *			then a line per frame, innermost first, "address
 *			symbol (object)", then a blank line; the input of
 *			Firefox Profiler, speedscope and hotspot
 *	--annotate SYMBOL
 *			instead of tables, the disassembly of function
 *			SYMBOL (objdump's, with source lines), each
 *			instruction with its share of the function's
 *			samples, as perf annotate --stdio prints it
 *	--children	a Children column before Self: the share of the
 *			samples with the row's function anywhere in their
 *			stack (counted once a sample), as perf report's;
 *			rows are sorted by it, and callers that were never
 *			sampled themselves have rows too
 *	-n, --rows N	the top N rows of each table (default 20; 0: all)
 *	--percent-limit PCT
 *			leave out rows, and call graph branches, of less
 *			than PCT% of all samples (default: no rows; 0.5%
 *			of the branches)
 *	--comms LIST, --pids LIST, --tids LIST, --dsos LIST (or --comm, ...)
 *			only the samples whose command, process, thread
 *			and sampled object are in each list given (comma
 *			lists, as the tables print them; perf's
 *			[kernel.kallsyms] for [kernel]): the others are
 *			counted in the header and left out of everything
 *	--kallsyms FILE	kernel symbols from FILE, in the format of
 *			/proc/kallsyms or System.map: a copy of the
 *			recording boot's kallsyms, or the System.map of a
 *			kernel without KASLR. Without it, /proc/kallsyms
 *			serves a recording of this boot only
 *	--vmlinux FILE	kernel symbols from the ELF image of the
 *			recording's kernel, which ran without KASLR
 *	--symfs DIR	look a recorded file P up as DIR/P, then as
 *			DIR/basename(P): the files of a recording made in a
 *			VM resolve on the host
 *	--event NAME	of a recording of several events, only NAME's
 *			samples (the tables show each event's in turn,
 *			--script all in time order, --folded and --svg the
 *			first event's unless this is given)
 *
 * Records are replayed in time order (see replay_order()). MMAP, COMM
 * and FORK records build up
 * each process's view; a sample is resolved against that view as it
 * stood when the sample was taken. User IPs go through the mapping to
 * the file's symbols (pmc-symbols.c), kernel IPs through /proc/kallsyms
 * or --kallsyms.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>
#include <sys/stat.h>

#include "pmc-annotate.h"
#include "pmc-calltree.h"
#include "pmc-data.h"
#include "pmc-filter.h"
#include "pmc-flame.h"
#include "pmc-maps.h"
#include "pmc-symbols.h"
#include "pmc-tools.h"
#include "pmc-unwind.h"
#include "pmc-util.h"

#define DEFAULT_ROWS	20
#define DEFAULT_INPUT	"pmc.data"	/* pmc-record's default output */

/* The x86-64 kernel half; user IPs never reach it. */
#define KERNEL_START	0xffff800000000000ULL

/* Table cells compare as pointers: one copy of each placeholder. */
static const char unknown_name[] = "[unknown]";
static const char kernel_name[] = "[kernel]";
static const char idle_name[] = "swapper";

static const char *data_path;

/*
 * The recorded events: the header's one (version 1) or, in version 2,
 * those of the PMC_DATA_EVENT records.
 */
static struct recorded_event {
	const char *name;
	const struct pmc_attr *attr;
} events[PMC_DATA_MAX_EVENTS];
static size_t nr_events;

static void __attribute__((noreturn, format(printf, 1, 2)))
die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "pmc-report: %s: ", data_path);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* --- replaying the records -------------------------------------------- */

struct comm {
	__u32 pid, tid;
	const char *comm;
};

static struct comm *comms;
static size_t nr_comms, cap_comms;
static const char *header_comm;
static bool all_cpus;			/* recorded with pmc-record -a */

/* The thread's own COMM, else its process's, else the command's. */
static const char *find_comm(__u32 pid, __u32 tid)
{
	const char *by_pid = NULL;
	size_t i;

	for (i = nr_comms; i-- > 0;) {
		if (comms[i].tid == tid)
			return comms[i].comm;
		if (!by_pid && comms[i].pid == pid)
			by_pid = comms[i].comm;
	}
	if (by_pid)
		return by_pid;
	/* -a: tasks that never exec'ed since, and the idle task. */
	if (all_cpus)
		return tid ? unknown_name : idle_name;
	return header_comm;
}

/* --- resolving addresses --------------------------------------------- */

/* A code address, resolved as far as the files allow. */
struct frame {
	const char *dso;		/* a basename, kernel_name or unknown_name */
	const char *sym;		/* NULL: unknown */
	struct dso *file;		/* NULL: kernel or unmapped */
	__u64 off;			/* the address's offset in file */
	bool ret;			/* a return address */
};

/*
 * Resolve @ip, a kernel address if @kernel, else one of process @pid.
 * A return address (@ret) is looked up one byte back, in its call: a
 * call that ends a function must not land in the next one.
 */
static void resolve(__u32 pid, __u64 ip, bool kernel, bool ret,
		    struct frame *f)
{
	const struct map *map;

	*f = (struct frame) { .ret = ret };
	if (kernel) {
		f->dso = kernel_name;
		f->sym = kernel_symbol(ip - ret);
		return;
	}
	map = maps_find(pid, ip);
	if (!map) {
		f->dso = unknown_name;
		return;
	}
	f->file = map->dso;
	f->dso = dso_name(map->dso);
	f->off = ip - map->start + map->pgoff;
	f->sym = dso_symbol(map->dso, f->off - ret);
}

/* "object+0xoffset": where in its file an address without a name lies. */
static const char *frame_offset_name(const struct frame *f)
{
	return intern_fmt("%s+%#" PRIx64, f->dso, (uint64_t)f->off);
}

/* The source line of @f, else where it lies. */
static const char *frame_srcline(const struct frame *f)
{
	const char *line;

	if (!f->file)
		return f->dso;
	line = dso_srcline(f->file, f->off - f->ret);
	return line ? line : frame_offset_name(f);
}

/* The name of @f in a call chain: its symbol, else where it lies. */
static const char *frame_name(const struct frame *f)
{
	if (f->sym)
		return f->sym;
	return f->file ? frame_offset_name(f) : f->dso;
}

/* A sample's stack, innermost frame first. */
struct stack {
	struct call_frame *frames;
	size_t nr, cap;
};

/*
 * Call @fn for each frame of the stack of @s, whose IP resolved to @ip,
 * innermost first: its call chain, the kernel part then the user part,
 * each starting where that mode was interrupted and going on with
 * return addresses. Without a chain, or with one that leaves out the IP
 * (a kernel IP pmc_paranoid hides), the IP comes first.
 */
static void walk_stack(const struct pmc_sample *s, const struct frame *ip,
		       bool kernel, void *arg,
		       void (*fn)(void *arg, __u64 addr, const struct frame *f,
				  bool kernel))
{
	struct frame f;
	size_t i;

	if (!s->chain_nr || pmc_sample_chain_ip(s, 0) != s->ip)
		fn(arg, s->ip, ip, kernel);
	for (i = 0; i < s->chain_nr; i++) {
		bool in_kernel = i < s->chain_kernel;
		bool ret = i != 0 && i != s->chain_kernel;
		__u64 addr = pmc_sample_chain_ip(s, i);

		/* A frame-pointer walk that ran out ends in a zero. */
		if (ret && !addr)
			continue;
		resolve(s->pid, addr, in_kernel, ret, &f);
		fn(arg, addr, &f, in_kernel);
	}
}

static void stack_push(struct stack *st, const char *name, bool kernel)
{
	GROW(st->frames, st->nr, st->cap);
	st->frames[st->nr++] = (struct call_frame) {
		.name = name,
		.kernel = kernel,
	};
}

static void push_frame(void *st, __u64 addr, const struct frame *f,
		       bool kernel)
{
	(void)addr;
	stack_push(st, frame_name(f), kernel);
}

/* The stack of @s, whose IP resolved to @ip (see walk_stack()). */
static void sample_stack(const struct pmc_sample *s, const struct frame *ip,
			 bool kernel, struct stack *st)
{
	st->nr = 0;
	walk_stack(s, ip, kernel, st, push_frame);
}

/* --script: a frame line as perf script prints it. */
static void print_script_frame(void *arg, __u64 addr, const struct frame *f,
			       bool kernel)
{
	(void)arg;
	printf("\t%16" PRIx64 " %s (%s)\n", (uint64_t)addr,
	       f->sym ? f->sym : unknown_name,
	       kernel ? "[kernel.kallsyms]" : f->dso);
}

/* --- histograms ------------------------------------------------------- */

enum sort_key {
	KEY_COMM,
	KEY_PID,
	KEY_THREAD,
	KEY_OBJECT,
	KEY_SYMBOL,
	KEY_SRCLINE,
	NR_KEYS
};

#define KEY_BIT(key)	(1U << (key))

static const struct {
	const char *name;
	const char *alias;		/* perf's name, if it differs */
	const char *title;		/* the column's heading */
	int width;			/* the column's, unless it is the last */
} sort_keys[NR_KEYS] = {
	[KEY_COMM]	= { "comm", NULL, "Command", 16 },
	[KEY_PID]	= { "pid", NULL, "Pid", 7 },
	[KEY_THREAD]	= { "thread", NULL, "Pid/Tid", 13 },
	[KEY_OBJECT]	= { "object", "dso", "Shared Object", 24 },
	[KEY_SYMBOL]	= { "symbol", "sym", "Symbol", 32 },
	[KEY_SRCLINE]	= { "srcline", NULL, "Source Line", 32 },
};

/* The columns of a table, in order. */
struct sort_order {
	enum sort_key keys[NR_KEYS];
	size_t nr;
	unsigned int mask;		/* KEY_BIT() of each */
};

/* What pmc-report showed before --sort: its output stays the same. */
static const struct sort_order default_order = {
	.keys = { KEY_COMM, KEY_OBJECT, KEY_SYMBOL },
	.nr = 3,
	.mask = KEY_BIT(KEY_COMM) | KEY_BIT(KEY_OBJECT) | KEY_BIT(KEY_SYMBOL),
};

/* A row of a table; rows with equal keys add up. */
struct hist_entry {
	/* key: the fields of the table's sort keys, the others 0 */
	const char *comm;
	__u32 pid, tid;
	const char *dso;
	const char *sym;		/* NULL: show addr */
	__u64 addr;
	const char *srcline;
	/* value */
	bool used;			/* false: a free slot */
	__u64 samples;			/* self: sampled in the row */
	__u64 children;			/* --children: in a sample's stack */
	const char *last_comm;		/* the thread's comm at its last sample */
	struct call_node *calls;	/* -G: the stacks of the row's samples */
};

struct hist {
	unsigned int keys;		/* KEY_BIT()s that tell rows apart */
	struct hist_entry *slots;
	size_t size;			/* a power of two */
	size_t used;
};

static size_t hist_hash(const struct hist_entry *e)
{
	__u64 h = 0;

	/* Interned strings compare, and hash, as pointers. */
	h = (h ^ (uintptr_t)e->comm) * 0x9e3779b97f4a7c15ULL;
	h = (h ^ ((__u64)e->pid << 32 | e->tid)) * 0x9e3779b97f4a7c15ULL;
	h = (h ^ (uintptr_t)e->dso) * 0x9e3779b97f4a7c15ULL;
	h = (h ^ (uintptr_t)e->sym) * 0x9e3779b97f4a7c15ULL;
	h = (h ^ e->addr) * 0x9e3779b97f4a7c15ULL;
	h = (h ^ (uintptr_t)e->srcline) * 0x9e3779b97f4a7c15ULL;
	return h ^ (h >> 32);
}

static bool hist_same(const struct hist_entry *a, const struct hist_entry *b)
{
	return a->comm == b->comm && a->pid == b->pid && a->tid == b->tid &&
	       a->dso == b->dso && a->sym == b->sym && a->addr == b->addr &&
	       a->srcline == b->srcline;
}

static struct hist_entry *hist_slot(struct hist_entry *slots, size_t size,
				    const struct hist_entry *key)
{
	size_t i = hist_hash(key) & (size - 1);

	while (slots[i].used && !hist_same(&slots[i], key))
		i = (i + 1) & (size - 1);
	return &slots[i];
}

/* The fields of @sample that @hist's keys select. */
static struct hist_entry hist_key(const struct hist *hist,
				  const struct hist_entry *sample)
{
	struct hist_entry key = { 0 };

	if (hist->keys & KEY_BIT(KEY_COMM))
		key.comm = sample->comm;
	if (hist->keys & KEY_BIT(KEY_PID))
		key.pid = sample->pid;
	if (hist->keys & KEY_BIT(KEY_THREAD)) {
		key.pid = sample->pid;
		key.tid = sample->tid;
	}
	if (hist->keys & KEY_BIT(KEY_OBJECT))
		key.dso = sample->dso;
	if (hist->keys & KEY_BIT(KEY_SYMBOL)) {
		key.sym = sample->sym;
		key.addr = sample->addr;
	}
	if (hist->keys & KEY_BIT(KEY_SRCLINE))
		key.srcline = sample->srcline;
	return key;
}

/* The row of @key, hist_key()'s, added if it is not there yet. */
static struct hist_entry *hist_row(struct hist *hist,
				   const struct hist_entry *key)
{
	struct hist_entry *e;

	if (2 * (hist->used + 1) > hist->size) {
		size_t size = hist->size ? 2 * hist->size : 256, i;
		struct hist_entry *slots = must_calloc(size, sizeof(*slots));

		for (i = 0; i < hist->size; i++)
			if (hist->slots[i].used)
				*hist_slot(slots, size, &hist->slots[i]) =
					hist->slots[i];
		free(hist->slots);
		hist->slots = slots;
		hist->size = size;
	}
	e = hist_slot(hist->slots, hist->size, key);
	if (!e->used) {
		*e = *key;
		e->used = true;
		hist->used++;
	}
	return e;
}

/* Count one sample, described by all the fields of @sample; returns its row. */
static struct hist_entry *hist_add(struct hist *hist,
				   const struct hist_entry *sample)
{
	struct hist_entry key = hist_key(hist, sample), *e;

	e = hist_row(hist, &key);
	e->samples++;
	return e;
}

static const char *or_empty(const char *s)
{
	return s ? s : "";
}

static int u64_cmp(__u64 x, __u64 y)
{
	return x < y ? -1 : x > y;
}

/*
 * --children: rows sort by the samples in their stacks, then by self
 * (the thread table's rows have no children: they sort by self).
 */
static bool by_children;

/* Most samples first; ties in a fixed order so output is stable. */
static int hist_cmp(const void *a, const void *b)
{
	const struct hist_entry *x = a, *y = b;
	int d;

	if (by_children && x->children != y->children)
		return x->children > y->children ? -1 : 1;
	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	d = u64_cmp(x->pid, y->pid);
	if (!d)
		d = u64_cmp(x->tid, y->tid);
	if (!d)
		d = strcmp(or_empty(x->comm), or_empty(y->comm));
	if (!d)
		d = strcmp(or_empty(x->dso), or_empty(y->dso));
	if (!d)
		d = strcmp(or_empty(x->sym), or_empty(y->sym));
	if (!d)
		d = u64_cmp(x->addr, y->addr);
	if (!d)
		d = strcmp(or_empty(x->srcline), or_empty(y->srcline));
	return d;
}

/* The rows of @hist, sorted; *nr gets their number. */
static struct hist_entry *hist_sorted(const struct hist *hist, size_t *nr)
{
	struct hist_entry *rows = must_calloc(hist->used, sizeof(*rows));
	size_t i, n = 0;

	for (i = 0; i < hist->size; i++)
		if (hist->slots[i].used)
			rows[n++] = hist->slots[i];
	qsort(rows, n, sizeof(*rows), hist_cmp);
	*nr = n;
	return rows;
}

/* --- the report ------------------------------------------------------- */

enum graph_mode { GRAPH_NONE, GRAPH_CALLER, GRAPH_CALLEE };

struct report {
	const struct pmc_data_header *hdr;
	const struct recorded_event *event;	/* whose samples these are */
	bool shown;			/* not left out by --event */
	const struct sort_order *order;	/* the table's columns */
	bool sorted;			/* --sort: no thread table */
	bool script;			/* --script: each sample, no tables */
	bool annotate;			/* --annotate: one function, no tables */
	size_t rows;			/* -n: rows per table, 0 for all */
	double percent_limit;		/* --percent-limit, or -1 if not given */
	enum graph_mode graph;		/* -G: call graphs under the rows */
	bool children;			/* --children: and what they called */
	bool finished;			/* pmc-record wrote the sizes */
	struct sample_filter filter;	/* --comm, --pid, --tid, --dso */
	__u64 nr_samples;		/* that passed the filter */
	__u64 nr_filtered;		/* that did not */
	__u64 nr_lost;
	__u64 nr_throttles;
	__u64 throttled_ns;		/* from each THROTTLE to its UNTHROTTLE */
	struct open_throttle {
		__u64 id, start;
		unsigned int depth;	/* THROTTLEs not yet ended */
	} *open_throttles;
	size_t nr_open, cap_open;
	__u64 nr_unknown;		/* records of types we do not know */
	__u64 first_time, last_time;
	struct hist table;		/* by the sort order's keys */
	struct hist threads;		/* by pid and tid */
	struct stack stack;		/* the current sample's */
	struct call_node *stacks;	/* all stacks, under their comm */
};

/*
 * Every table cell of a frame of @s at @addr, resolved to @f, whichever
 * are shown: of its IP, or with --children of any frame of its stack.
 */
static void describe_frame(const struct report *rep, const struct pmc_sample *s,
			   __u64 addr, const struct frame *f, bool kernel,
			   struct hist_entry *cells)
{
	*cells = (struct hist_entry) {
		.comm = find_comm(s->pid, s->tid),
		.pid = s->pid,
		.tid = s->tid,
		.dso = f->dso,
		.sym = f->sym,
	};
	if (!f->sym && kernel)
		cells->sym = kernel_name;
	else if (!f->sym && f->file)
		cells->sym = unknown_name;
	else if (!f->sym)
		cells->addr = addr;	/* shown in place of a symbol */
	/* Only if asked for: DWARF line tables are slow to search. */
	if (rep->table.keys & KEY_BIT(KEY_SRCLINE))
		cells->srcline = frame_srcline(f);
}

/* --children: the rows of one sample's stack, each counted once. */
struct children_walk {
	struct report *rep;
	const struct pmc_sample *s;
	struct hist_entry *keys;
	size_t nr, cap;
};

static void add_child_frame(void *arg, __u64 addr, const struct frame *f,
			    bool kernel)
{
	struct children_walk *w = arg;
	struct hist_entry cells, key;
	size_t i;

	describe_frame(w->rep, w->s, addr, f, kernel, &cells);
	key = hist_key(&w->rep->table, &cells);
	for (i = 0; i < w->nr; i++)
		if (hist_same(&w->keys[i], &key))
			return;		/* recursion: once a sample */
	GROW(w->keys, w->nr, w->cap);
	w->keys[w->nr++] = key;
}

static void add_children(struct report *rep, const struct pmc_sample *s,
			 const struct frame *ip, bool kernel)
{
	static struct children_walk w;	/* its keys array is reused */
	size_t i;

	w.rep = rep;
	w.s = s;
	w.nr = 0;
	walk_stack(s, ip, kernel, &w, add_child_frame);
	for (i = 0; i < w.nr; i++)
		hist_row(&rep->table, &w.keys[i])->children++;
}

static void add_sample(struct report *rep, const struct pmc_sample *s)
{
	bool kernel = (s->misc & PMC_EVENT_MISC_KERNEL) || s->ip >= KERNEL_START;
	struct hist_entry cells, *row;
	struct frame ip;

	if (!rep->shown) {
		rep->nr_filtered++;
		return;
	}
	resolve(s->pid, s->ip, kernel, false, &ip);
	if (!filter_match(&rep->filter, find_comm(s->pid, s->tid), s->pid,
			  s->tid, ip.dso)) {
		rep->nr_filtered++;
		return;
	}
	if (!rep->nr_samples || s->time < rep->first_time)
		rep->first_time = s->time;
	if (s->time > rep->last_time)
		rep->last_time = s->time;
	rep->nr_samples++;
	if (rep->annotate) {
		annotate_add(ip.file, ip.off, ip.sym);
		return;
	}
	if (rep->script) {
		printf("%-16s %7u/%-7u %6" PRIu64 ".%06" PRIu64 ": %s:\n",
		       find_comm(s->pid, s->tid), s->pid, s->tid,
		       (uint64_t)(s->time / 1000000000),
		       (uint64_t)(s->time % 1000000000 / 1000), rep->event->name);
		walk_stack(s, &ip, kernel, NULL, print_script_frame);
		putchar('\n');
		return;
	}
	describe_frame(rep, s, s->ip, &ip, kernel, &cells);
	/* first: it adds rows, which may move the table's */
	if (rep->children)
		add_children(rep, s, &ip, kernel);
	row = hist_add(&rep->table, &cells);
	if (!rep->sorted)
		hist_add(&rep->threads, &cells)->last_comm = cells.comm;

	if (rep->graph == GRAPH_NONE && !rep->stacks)
		return;
	sample_stack(s, &ip, kernel, &rep->stack);
	if (rep->graph != GRAPH_NONE) {
		if (!row->calls)
			row->calls = call_tree_new();
		call_tree_add(row->calls, rep->stack.frames, rep->stack.nr,
			      rep->graph == GRAPH_CALLER ? CALLER_FIRST :
							   CALLEE_FIRST);
	}
	if (rep->stacks) {
		/* The command is the outermost frame, as in stackcollapse. */
		stack_push(&rep->stack, cells.comm, false);
		call_tree_add(rep->stacks, rep->stack.frames, rep->stack.nr,
			      CALLER_FIRST);
	}
}

/* The name at @off of a @what record: it must end inside the record. */
static const char *record_string(const unsigned char *rec, size_t size,
				 size_t off, __u64 where, const char *what)
{
	if (off >= size || !memchr(rec + off, '\0', size - off))
		die("%s record at offset %" PRIu64 " has no NUL-terminated name",
		    what, (uint64_t)where);
	return (const char *)rec + off;
}

static void add_mmap(const unsigned char *rec, size_t size, __u64 where,
		     bool unmap)
{
	const char *what = unmap ? "MUNMAP" : "MMAP";
	struct pmc_data_mmap m;
	const char *filename;

	if (size < sizeof(m))
		die("%s record at offset %" PRIu64 " is too short (%zu bytes)",
		    what, (uint64_t)where, size);
	memcpy(&m, rec, sizeof(m));
	filename = record_string(rec, size, sizeof(m), where, what);
	if (m.addr + m.len < m.addr)
		die("%s record at offset %" PRIu64 " wraps the address space",
		    what, (uint64_t)where);
	maps_add(m.pid, m.addr, m.len, m.pgoff,
		 unmap ? NULL : dso_find(filename));
}

static void add_comm(const unsigned char *rec, size_t size, __u64 where)
{
	struct pmc_data_comm c;
	const char *name;

	if (size < sizeof(c))
		die("COMM record at offset %" PRIu64 " is too short (%zu bytes)",
		    (uint64_t)where, size);
	memcpy(&c, rec, sizeof(c));
	name = record_string(rec, size, sizeof(c), where, "COMM");
	GROW(comms, nr_comms, cap_comms);
	comms[nr_comms++] = (struct comm) {
		.pid = c.pid,
		.tid = c.tid,
		.comm = intern(name),
	};
}

/*
 * A FORK: the new process starts with its parent's mappings, and a new
 * task with its creator's name, until a COMM or MMAP says otherwise.
 * An EXIT leaves nothing to undo: a pid used again is FORKed first.
 */
static void add_task(const unsigned char *rec, size_t size, __u64 where)
{
	struct pmc_data_task t;

	if (size < sizeof(t))
		die("%s record at offset %" PRIu64 " is too short (%zu bytes)",
		    ((const struct pmc_event_header *)rec)->type ==
		    PMC_EVENT_FORK ? "FORK" : "EXIT", (uint64_t)where, size);
	memcpy(&t, rec, sizeof(t));
	if (t.header.type == PMC_EVENT_EXIT)
		return;
	if (t.pid != t.ppid)
		maps_fork(t.ppid, t.pid);
	GROW(comms, nr_comms, cap_comms);
	comms[nr_comms++] = (struct comm) {
		.pid = t.pid,
		.tid = t.tid,
		.comm = find_comm(t.ppid, t.ptid),
	};
}

static void add_lost(struct report *rep, const unsigned char *rec,
		     size_t size, __u64 where)
{
	struct pmc_data_lost lost;

	if (size < sizeof(lost))
		die("LOST record at offset %" PRIu64 " is too short (%zu bytes)",
		    (uint64_t)where, size);
	memcpy(&lost, rec, sizeof(lost));
	rep->nr_lost += lost.lost;
}

/*
 * The kernel stopped a counter's samples (its rate, or the time its
 * overflows took) until a later tick: count the throttles, and the time
 * in which a counter id had one standing (one id per CPU under -a; the
 * inherited copies of a task's counter share its id, and their
 * throttles may overlap).
 */
static void add_throttle(struct report *rep, const unsigned char *rec,
			 size_t size, __u64 where)
{
	struct pmc_data_throttle t;
	struct open_throttle *o;
	size_t i;

	if (size < sizeof(t))
		die("THROTTLE record at offset %" PRIu64 " is too short (%zu bytes)",
		    (uint64_t)where, size);
	memcpy(&t, rec, sizeof(t));
	for (i = 0; i < rep->nr_open; i++)
		if (rep->open_throttles[i].id == t.id)
			break;
	if (t.header.type == PMC_EVENT_THROTTLE) {
		rep->nr_throttles++;
		if (i == rep->nr_open) {
			GROW(rep->open_throttles, rep->nr_open, rep->cap_open);
			rep->open_throttles[rep->nr_open++] =
				(struct open_throttle) { t.id, t.time, 0 };
		}
		rep->open_throttles[i].depth++;
		return;
	}
	if (i == rep->nr_open)
		return;		/* from before the recording started */
	o = &rep->open_throttles[i];
	if (--o->depth)
		return;
	if (t.time > o->start)
		rep->throttled_ns += t.time - o->start;
	*o = rep->open_throttles[--rep->nr_open];
}

/*
 * On a terminal, a report that takes more than a second says how far
 * it got, twice a second, on one line that it clears at the end (and
 * warn() before a warning). Not when the report itself goes to the
 * terminal: its lines would mix.
 */
struct progress {
	struct timespec start, last;
};

static double seconds_since(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec - t->tv_sec + (now.tv_nsec - t->tv_nsec) / 1e9;
}

static void show_progress(struct progress *p, __u64 done, __u64 len)
{
	if (!p->start.tv_sec && !p->start.tv_nsec) {
		clock_gettime(CLOCK_MONOTONIC, &p->start);
		p->last = p->start;
		return;
	}
	if (done == len) {
		progress_clear();
		return;
	}
	/* Not on a terminal, nor where --script's lines go to one. */
	if (seconds_since(&p->start) < 1 || seconds_since(&p->last) < 0.5 ||
	    !isatty(STDERR_FILENO) || isatty(STDOUT_FILENO))
		return;
	clock_gettime(CLOCK_MONOTONIC, &p->last);
	fprintf(stderr, "\rpmc-report: %3.0f%% of %" PRIu64 " MB read",
		100.0 * done / len, (uint64_t)(len >> 20));
	progress_on_line = true;
}

/* A PMC_DATA_VDSO record: the image behind "[vdso]" mappings. */
static void read_vdso(const unsigned char *rec, __u16 size)
{
	struct pmc_data_vdso v;

	if (size < sizeof(v))
		return;
	memcpy(&v, rec, sizeof(v));
	if (v.size && v.size <= size - sizeof(v))
		dso_set_image(dso_find(PMC_DATA_VDSO_NAME), rec + sizeof(v),
			      v.size);
}

static void check_string(const char *field, size_t size, const char *what);

/*
 * A version 2 file's event @rec: they come in order, and have the
 * header's record layout, so that one parser reads every sample.
 */
static void read_event(const struct pmc_data_header *hdr,
		       const unsigned char *rec, __u16 size, __u64 off)
{
	const struct pmc_data_event *e = (const void *)rec;
	__u64 where = hdr->header_size + off;

	if (hdr->version != PMC_DATA_VERSION_EVENTS)
		die("event record at offset %" PRIu64 " in a file of one event (version %u)",
		    (uint64_t)where, hdr->version);
	if (size != sizeof(*e))
		die("event record at offset %" PRIu64 " has %u bytes, not %zu",
		    (uint64_t)where, size, sizeof(*e));
	if (e->index != nr_events || nr_events == PMC_DATA_MAX_EVENTS)
		die("event record at offset %" PRIu64 " is event %u, not %zu",
		    (uint64_t)where, e->index, nr_events);
	if (e->leader > e->index)
		die("event %u's group leader %u comes after it", e->index,
		    e->leader);
	check_string(e->name, sizeof(e->name), "an event name");
	if (e->attr.record_type != hdr->attr.record_type ||
	    e->attr.time_all != hdr->attr.time_all)
		die("event %u ('%s') has record_type %#x and time_all %u, the header %#x and %u",
		    e->index, e->name, e->attr.record_type, e->attr.time_all,
		    hdr->attr.record_type, hdr->attr.time_all);
	events[nr_events++] = (struct recorded_event) { e->name, &e->attr };
}

/*
 * The build-ids and the vDSO image pmc-record wrote after the kernel's
 * records, before the replay looks any file up. Malformed records end
 * the scan quietly: the replay says what is wrong with them.
 */
static void read_tool_records(const struct pmc_data_header *hdr,
			      const unsigned char *data, __u64 len)
{
	__u64 off = 0;

	if (hdr->version == PMC_DATA_VERSION) {
		events[nr_events++] = (struct recorded_event) {
			hdr->event, &hdr->attr
		};
	}

	while (len - off >= sizeof(struct pmc_event_header)) {
		const unsigned char *rec = data + off;
		struct pmc_data_build_id b;
		struct pmc_event_header h;
		const char *name;

		memcpy(&h, rec, sizeof(h));
		if (h.size < sizeof(h) || h.size % 8 || h.size > len - off)
			return;
		off += h.size;
		if (pmc_data_is_sample(&h))
			continue;
		if (h.type == PMC_DATA_VDSO)
			read_vdso(rec, h.size);
		if (h.type == PMC_DATA_EVENT)
			read_event(hdr, rec, h.size, off - h.size);
		if (h.type != PMC_DATA_BUILD_ID || h.size <= sizeof(b))
			continue;
		memcpy(&b, rec, sizeof(b));
		name = (const char *)rec + sizeof(b);
		if (b.size > sizeof(b.id) ||
		    !memchr(name, '\0', h.size - sizeof(b)))
			continue;
		dso_set_build_id(dso_find(name), b.id, b.size);
	}
}

/*
 * The time of a record, if it carries one: a sample with
 * PMC_RECORD_TIME, FORK, EXIT, THROTTLE and UNTHROTTLE, and with
 * attr.time_all the MMAP, MUNMAP and COMM records (in their last 8
 * bytes).
 */
static bool record_time(const struct pmc_attr *attr,
			const unsigned char *rec,
			const struct pmc_event_header *h, __u64 *time)
{
	size_t off;

	if (pmc_data_is_sample(h)) {
		if (!(attr->record_type & PMC_RECORD_TIME))
			return false;
		off = sizeof(*h) + 8 * !!(attr->record_type & PMC_RECORD_IP) +
		      8 * !!(attr->record_type & PMC_RECORD_TID);
	} else if (h->type == PMC_EVENT_FORK || h->type == PMC_EVENT_EXIT) {
		off = offsetof(struct pmc_data_task, time);
	} else if (h->type == PMC_EVENT_THROTTLE ||
		   h->type == PMC_EVENT_UNTHROTTLE) {
		off = offsetof(struct pmc_data_throttle, time);
	} else if (attr->time_all && (h->type == PMC_EVENT_MMAP ||
				      h->type == PMC_EVENT_MUNMAP ||
				      h->type == PMC_EVENT_COMM)) {
		off = h->size - 8;
	} else {
		return false;
	}
	if (off < sizeof(*h) || off + 8 > h->size)
		return false;
	memcpy(time, rec + off, 8);
	return true;
}

/* The event a PMC_DATA_SOURCE record names, after checking it. */
static size_t record_source(const unsigned char *rec, __u16 size,
			    __u64 where)
{
	struct pmc_data_source src;

	if (size != sizeof(src))
		die("source record at offset %" PRIu64 " has %u bytes, not %zu",
		    (uint64_t)where, size, sizeof(src));
	memcpy(&src, rec, sizeof(src));
	if (src.index >= nr_events)
		die("source record at offset %" PRIu64 " names event %u of %zu",
		    (uint64_t)where, src.index, nr_events);
	return src.index;
}

struct when {
	__u64 time, off;
	size_t event;		/* whose ring the record came from */
};

static int cmp_when(const void *a, const void *b)
{
	const struct when *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

/*
 * Where each record is, in the order to replay it. pmc-record -a drains
 * one CPU's buffer after another, so the file holds each CPU's records
 * in time order but not the CPUs' together: where every record that
 * matters to the replay has a time (a recording with attr.time_all),
 * they are merged by it. A record without one (LOST, pmc-record's own)
 * keeps its place after the one before it. Any malformed record is
 * fatal, before anything is replayed.
 */
static struct when *replay_order(const struct pmc_data_header *hdr,
				 const unsigned char *data, __u64 len,
				 size_t *nr)
{
	__u64 base = hdr->header_size, off, last = 0;
	struct when *order = NULL;
	size_t cap = 0, event = 0;
	bool sorted = true;

	*nr = 0;
	for (off = 0; off < len;) {
		__u64 where = base + off, time;
		struct pmc_event_header h;

		if (len - off < sizeof(h))
			die("truncated record header at offset %" PRIu64,
			    (uint64_t)where);
		memcpy(&h, data + off, sizeof(h));
		if (h.size < sizeof(h) || h.size % 8)
			die("bad record size %u at offset %" PRIu64 " (corrupt file?)",
			    h.size, (uint64_t)where);
		if (h.size > len - off)
			die("record at offset %" PRIu64 " runs past the end of the data (truncated file?)",
			    (uint64_t)where);
		if (hdr->attr.time_all && record_time(&hdr->attr, data + off,
						      &h, &time)) {
			sorted &= time >= last;
			last = time;
		}
		if (h.type == PMC_DATA_SOURCE && !pmc_data_is_sample(&h))
			event = record_source(data + off, h.size, where);
		GROW(order, *nr, cap);
		order[(*nr)++] = (struct when){ last, off, event };
		off += h.size;
	}
	if (!sorted)
		qsort(order, *nr, sizeof(*order), cmp_when);
	return order;
}

/*
 * Replay every record in time order, each event's into its report of
 * @reps; any inconsistency is fatal.
 */
/* The longest user stack unwound from a stack copy. */
#define UNWIND_MAX	127

/*
 * A --call-graph dwarf sample: the user part of its call chain unwound
 * from its registers and stack copy, in place of the frame-pointer
 * walk's, which code built without frame pointers defeats. A sample
 * that does not unwind keeps the chain it has.
 */
static void unwind_chain(struct pmc_sample *s, const struct pmc_sample_ext *x,
			 __u64 regs_user)
{
	static __u64 chain[UINT16_MAX];
	size_t kernel = s->chain ? s->chain_kernel : 0, n;

	if (!x->stack_size || !x->nr_regs)
		return;
	n = unwind_user(s->pid, s->tid, x, regs_user, chain + kernel,
			UNWIND_MAX);
	if (!n)
		return;
	if (kernel)
		memcpy(chain, s->chain, kernel * sizeof(*chain));
	s->chain = chain;
	s->chain_nr = kernel + n;
	s->chain_hv = 0;
	s->chain_kernel = kernel;
	s->chain_user = n;
}

static void replay(struct report *reps, const unsigned char *data,
		   __u64 len)
{
	struct progress progress = { 0 };
	__u32 record_type = reps->hdr->attr.record_type;
	__u64 base = reps->hdr->header_size;
	struct when *order;
	size_t i, nr;

	show_progress(&progress, 0, len);	/* starts the clock */
	order = replay_order(reps->hdr, data, len, &nr);
	for (i = 0; i < nr; i++) {
		struct report *rep = &reps[order[i].event];
		const unsigned char *rec = data + order[i].off;
		__u64 where = base + order[i].off;
		struct pmc_event_header h;
		size_t size;
		struct pmc_sample_ext x;
		struct pmc_sample s;
		int bad;

		memcpy(&h, rec, sizeof(h));
		/* The name in a side record ends before its time. */
		size = h.size - (rep->hdr->attr.time_all ? 8 : 0);
		if (pmc_data_is_sample(&h)) {
			if (h.type != record_type)
				die("sample at offset %" PRIu64 " has type %#x, but record_type is %#x",
				    (uint64_t)where, h.type, record_type);
			bad = pmc_sample_parse_ext(rec, record_type,
						   reps->hdr->attr.regs_user,
						   &s, &x) ? errno : 0;
			if (bad && bad != EBADMSG)
				die("sample at offset %" PRIu64 " has %u bytes, which does not match record_type %#x",
				    (uint64_t)where, h.size, record_type);
			if (bad)
				die("sample at offset %" PRIu64 " has a corrupt call chain: %u entries, but %u hypervisor + %u kernel + %u user",
				    (uint64_t)where, s.chain_nr, s.chain_hv,
				    s.chain_kernel, s.chain_user);
			unwind_chain(&s, &x, reps->hdr->attr.regs_user);
			add_sample(rep, &s);
		} else if (h.type == PMC_EVENT_MMAP ||
			   h.type == PMC_EVENT_MUNMAP) {
			add_mmap(rec, size, where,
				 h.type == PMC_EVENT_MUNMAP);
		} else if (h.type == PMC_EVENT_COMM) {
			add_comm(rec, size, where);
		} else if (h.type == PMC_EVENT_FORK ||
			   h.type == PMC_EVENT_EXIT) {
			add_task(rec, h.size, where);
		} else if (h.type == PMC_EVENT_LOST) {
			add_lost(rep, rec, h.size, where);
		} else if (h.type == PMC_EVENT_THROTTLE ||
			   h.type == PMC_EVENT_UNTHROTTLE) {
			add_throttle(rep, rec, h.size, where);
		} else if (h.type == PMC_DATA_BUILD_ID ||
			   h.type == PMC_DATA_VDSO ||
			   h.type == PMC_DATA_EVENT ||
			   h.type == PMC_DATA_SOURCE) {
			;		/* read before the replay */
		} else {
			rep->nr_unknown++;
		}
		if (!(i % 4096))
			show_progress(&progress, order[i].off, len);
	}
	show_progress(&progress, len, len);
	free(order);
}

static unsigned char *read_file(const char *path, __u64 *size)
{
	unsigned char *buf;
	struct stat st;
	size_t len = 0;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st))
		die("%s", strerror(errno));
	if (!S_ISREG(st.st_mode))
		die("not a regular file");
	buf = must_realloc(NULL, st.st_size);
	while (len < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + len, st.st_size - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die("read: %s", strerror(errno));
		if (!n)
			break;
		len += n;
	}
	close(fd);
	*size = len;
	return buf;
}

static void check_string(const char *field, size_t size, const char *what)
{
	if (!memchr(field, '\0', size))
		die("corrupt header: %s is not terminated", what);
}

/*
 * Check the header; returns how many bytes of records follow it. A
 * recording that did not finish is read to the end of the file.
 */
static __u64 check_header(struct report *rep, const unsigned char *buf,
			  __u64 size)
{
	const struct pmc_data_header *hdr = (const void *)buf;
	__u64 avail;

	if (size < sizeof(hdr->magic))
		die("empty or too short to be a pmc-record file");
	if (hdr->magic == __builtin_bswap64(PMC_DATA_MAGIC))
		die("written on a machine of the other byte order");
	if (hdr->magic != PMC_DATA_MAGIC)
		die("not a pmc-record data file (bad magic)");
	if (size < sizeof(*hdr))
		die("truncated header (%" PRIu64 " bytes)", (uint64_t)size);
	if (hdr->version != PMC_DATA_VERSION &&
	    hdr->version != PMC_DATA_VERSION_EVENTS)
		die("unsupported file version %u (this pmc-report reads %u and %u)",
		    hdr->version, PMC_DATA_VERSION, PMC_DATA_VERSION_EVENTS);
	if (hdr->header_size < sizeof(*hdr) || hdr->header_size % 8)
		die("corrupt header: bad header size %u", hdr->header_size);
	if (hdr->header_size > size)
		die("truncated header (%" PRIu64 " of %u bytes)",
		    (uint64_t)size, hdr->header_size);
	check_string(hdr->event, sizeof(hdr->event), "the event name");
	check_string(hdr->comm, sizeof(hdr->comm), "the command name");
	check_string(hdr->cmdline, sizeof(hdr->cmdline), "the command line");
	check_string(hdr->boot_id, sizeof(hdr->boot_id), "the boot id");
	if (hdr->attr.record_type & ~PMC_RECORD_ALL)
		die("corrupt header: unknown record_type bits %#x",
		    hdr->attr.record_type);
	if (!(hdr->attr.record_type & PMC_RECORD_IP))
		die("the samples carry no IP (record_type %#x): nothing to report",
		    hdr->attr.record_type);

	rep->hdr = hdr;
	avail = size - hdr->header_size;
	rep->finished = hdr->data_size != PMC_DATA_SIZE_UNKNOWN;
	if (!rep->finished) {
		warn("%s: the recording did not finish; reading what is there",
		     data_path);
		return avail;
	}
	if (hdr->data_size > avail)
		die("truncated: %" PRIu64 " of %" PRIu64 " bytes of records",
		    (uint64_t)avail, (uint64_t)hdr->data_size);
	if (hdr->data_size < avail)
		die("%" PRIu64 " bytes of garbage after the records",
		    (uint64_t)(avail - hdr->data_size));
	return avail;
}

/* Whether this boot's kallsyms can resolve the file's kernel IPs. */
static bool same_boot(const struct pmc_data_header *hdr)
{
	char now[PMC_DATA_BOOT_ID_LEN];

	if (!hdr->boot_id[0])
		return true;		/* not known: assume so */
	pmc_data_boot_id(now, sizeof(now));
	return !strcmp(now, hdr->boot_id);
}

/* pmc-record's own counts must agree with what the records say. */
static void check_counts(const struct report *reps)
{
	__u64 samples = 0, lost = 0;
	size_t i;

	if (!reps->finished)
		return;
	for (i = 0; i < nr_events; i++) {
		samples += reps[i].nr_samples + reps[i].nr_filtered;
		lost += reps[i].nr_lost;
	}
	if (reps->hdr->nr_samples != samples || reps->hdr->nr_lost != lost)
		die("corrupt file: the header counts %" PRIu64 " samples and %" PRIu64 " lost, the records %" PRIu64 " and %" PRIu64,
		    (uint64_t)reps->hdr->nr_samples,
		    (uint64_t)reps->hdr->nr_lost, (uint64_t)samples,
		    (uint64_t)lost);
}

static double percent(__u64 part, __u64 whole)
{
	return whole ? 100.0 * part / whole : 0.0;
}

/* Whether the period counts nanoseconds: the clocks'. */
static bool period_is_time(const struct pmc_attr *attr)
{
	return attr->config == PMC_CONFIG(PMC_TYPE_SOFTWARE,
					  PMC_SW_TASK_CLOCK) ||
	       attr->config == PMC_CONFIG(PMC_TYPE_SOFTWARE, PMC_SW_CPU_CLOCK);
}

/* "pid 42", or "all CPUs" for pmc-record -a. */
static const char *target_name(const struct pmc_data_header *hdr)
{
	static char name[32];

	if (hdr->pid == PMC_DATA_ALL_CPUS)
		return "all CPUs";
	snprintf(name, sizeof(name), "pid %u", hdr->pid);
	return name;
}

/* --header: what the file holds, before the report, as perf's. */
static void print_file_header(const struct pmc_data_header *hdr, __u64 size)
{
	const struct pmc_attr *attr = &hdr->attr;

	printf("# ========\n");
	printf("# data file: %s, %" PRIu64 " bytes, format version %u\n",
	       data_path, (uint64_t)size, hdr->version);
	printf("# cmdline: %s (%s)\n", hdr->cmdline, target_name(hdr));
	printf("# event: %s: config %#llx, %s %llu, record_type %#x%s%s\n",
	       hdr->event, (unsigned long long)attr->config,
	       attr->freq ? "freq" : "period",
	       (unsigned long long)attr->irq_period, attr->record_type,
	       attr->exclude_kernel ? ", exclude_kernel" : "",
	       attr->inherit ? ", inherit" : "");
	if (attr->record_type & PMC_RECORD_STACK_USER)
		printf("# user stack copies of %u bytes, registers %#llx\n",
		       attr->stack_user, (unsigned long long)attr->regs_user);
	printf("# %" PRIu64 " samples, %" PRIu64 " lost, %" PRIu64 " bytes of records\n",
	       (uint64_t)hdr->nr_samples, (uint64_t)hdr->nr_lost,
	       (uint64_t)hdr->data_size);
	printf("# boot id: %s\n", hdr->boot_id[0] ? hdr->boot_id : "unknown");
	printf("# ========\n#\n");
}

/* Of several events' sections, the first says what file and command. */
static void print_header(const struct report *rep, bool first)
{
	const struct pmc_data_header *hdr = rep->hdr;
	const struct pmc_attr *attr = rep->event->attr;

	if (first)
		printf("# pmc-report of %s\n", data_path);
	if (attr->freq)
		printf("# event: %s, %" PRIu64 " samples a second (the kernel set the periods)",
		       rep->event->name, (uint64_t)attr->irq_period);
	else
		printf("# event: %s, a sample every %" PRIu64,
		       rep->event->name, (uint64_t)attr->irq_period);
	if (attr->freq)
		;
	else if (period_is_time(attr))
		printf(" ns (%.0f Hz)", attr->irq_period ?
		       1e9 / attr->irq_period : 0.0);
	else
		printf(" events");
	if (attr->period_rand)
		printf(" +- %u%%", (unsigned int)attr->period_rand);
	printf("%s", attr->exclude_kernel ? ", user only" : "");
	if (attr->record_type & PMC_RECORD_CALLCHAIN)
		printf(", call chains recorded%s%s",
		       attr->record_type & PMC_RECORD_STACK_USER ?
		       " (user stacks unwound from DWARF)" : "",
		       rep->graph ? "" : " (not shown)");
	putchar('\n');
	if (first)
		printf("# command: '%s' (%s)\n", hdr->cmdline,
		       target_name(hdr));
	printf("# %" PRIu64 " samples", (uint64_t)rep->nr_samples);
	if ((attr->record_type & PMC_RECORD_TIME) && rep->nr_samples > 1)
		printf(" over %.3f s",
		       (rep->last_time - rep->first_time) / 1e9);
	if (filter_active(&rep->filter)) {
		struct strbuf sb = { 0 };

		filter_describe(&rep->filter, &sb);
		printf(" (%" PRIu64 " more left out by %s; percentages are of those shown)",
		       (uint64_t)rep->nr_filtered, sb.buf);
		free(sb.buf);
	}
	putchar('\n');
	printf("# %" PRIu64 " samples lost", (uint64_t)rep->nr_lost);
	if (rep->nr_lost)
		printf(" (%.2f%% of all; use a longer period or more -m pages)",
		       percent(rep->nr_lost, rep->nr_lost + rep->nr_samples +
				      rep->nr_filtered));
	putchar('\n');
	if (rep->nr_throttles)
		printf("# throttled %" PRIu64 " times, %.3f s in all without samples (kernel.pmc_max_sample_rate, kernel.pmc_cpu_time_max_percent)\n",
		       (uint64_t)rep->nr_throttles, rep->throttled_ns / 1e9);
	if (rep->nr_unknown)
		printf("# records of unknown type skipped: %" PRIu64 "\n",
		       (uint64_t)rep->nr_unknown);
}

/*
 * How many of the @nr sorted @rows -n and --percent-limit show (a limit
 * of -1, not given, leaves none out).
 */
/* @children: the table has --children's column, and is sorted by it. */
static size_t rows_shown(const struct report *rep,
			 const struct hist_entry *rows, size_t nr,
			 bool children)
{
	size_t n = 0;

	while (n < nr && (!rep->rows || n < rep->rows) &&
	       percent(children ? rows[n].children : rows[n].samples,
		       rep->nr_samples) >= rep->percent_limit)
		n++;
	return n;
}

/* What the rows after the @shown ones add up to, if any. */
static void print_rest(const struct hist_entry *rows, size_t shown,
		       size_t nr, __u64 total, bool children)
{
	__u64 rest = 0;
	size_t i;

	if (nr <= shown)
		return;
	if (children) {	/* a sample is in many rows: no sum */
		printf("# ... %zu more rows\n", nr - shown);
		return;
	}
	for (i = shown; i < nr; i++)
		rest += rows[i].samples;
	printf("# ... %zu more rows: %" PRIu64 " samples (%.2f%%)\n",
	       nr - shown, (uint64_t)rest, percent(rest, total));
}

/* Cell @key of @e; @buf holds it if it must be formatted. */
static const char *cell(const struct hist_entry *e, enum sort_key key,
			char *buf, size_t size)
{
	switch (key) {
	case KEY_COMM:
		return e->comm;
	case KEY_PID:
		snprintf(buf, size, "%u", e->pid);
		return buf;
	case KEY_THREAD:
		snprintf(buf, size, "%u/%u", e->pid, e->tid);
		return buf;
	case KEY_OBJECT:
		return e->dso;
	case KEY_SYMBOL:
		if (e->sym)
			return e->sym;
		snprintf(buf, size, "0x%" PRIx64, (uint64_t)e->addr);
		return buf;
	case KEY_SRCLINE:
		return e->srcline;
	case NR_KEYS:
		break;
	}
	return "";
}

/*
 * The cells of @e, or the headings if @e is NULL: each after a space and
 * padded to its column's width, but the last.
 */
static void print_cells(const struct sort_order *order,
			const struct hist_entry *e)
{
	char buf[32];
	size_t i;

	for (i = 0; i < order->nr; i++) {
		enum sort_key key = order->keys[i];
		const char *text = e ? cell(e, key, buf, sizeof(buf)) :
				       sort_keys[key].title;

		if (i + 1 < order->nr)
			printf(" %-*s", sort_keys[key].width, text);
		else
			printf(" %s\n", text);
	}
}

/*
 * A call graph leaves out branches of less than this share of all
 * samples, unless --percent-limit says otherwise.
 */
#define GRAPH_MIN_PERCENT	0.5
/* It starts under the Overhead column, as perf's does. */
#define GRAPH_INDENT		12

struct graph_printer {
	struct strbuf prefix;		/* what goes before a line's frame */
	__u64 total;			/* samples in the file */
	double min_percent;		/* of the branches shown */
};

static bool graph_shows(const struct graph_printer *gp,
			const struct call_node *node)
{
	return node && percent(node->total, gp->total) >= gp->min_percent;
}

/*
 * What is below @node, whose line is printed: a straight chain goes on
 * down the same column; where it forks, or where some of its samples
 * end, each branch gets its share of all samples and an indent.
 */
static void print_graph_below(struct graph_printer *gp,
			      const struct call_node *node)
{
	size_t len = gp->prefix.len;
	const struct call_node *child;

	while ((child = node->children) && !child->next &&
	       child->total == node->total) {
		printf("%s%s\n", gp->prefix.buf, child->frame.name);
		node = child;
	}
	for (child = node->children; graph_shows(gp, child);
	     child = child->next) {
		char bar = graph_shows(gp, child->next) ? '|' : ' ';
		char label[32];
		int width;

		width = snprintf(label, sizeof(label), "--%.2f%%--",
				 percent(child->total, gp->total));
		printf("%s|\n", gp->prefix.buf);
		printf("%s%c%s%s\n", gp->prefix.buf, bar, label,
		       child->frame.name);
		strbuf_addf(&gp->prefix, "%c%*s", bar, width, "");
		print_graph_below(gp, child);
		strbuf_setlen(&gp->prefix, len);
	}
}

/* The call graph of a row, @root the tree of its samples' stacks. */
static void print_call_graph(const struct report *rep, struct call_node *root)
{
	struct graph_printer gp = {
		.total = rep->nr_samples,
		.min_percent = rep->percent_limit >= 0 ? rep->percent_limit :
							 GRAPH_MIN_PERCENT,
	};
	const struct call_node *only = root->children;

	call_tree_sort(root, CALL_BY_SAMPLES);
	strbuf_addf(&gp.prefix, "%*s", GRAPH_INDENT, "");
	if (only && !only->next) {
		printf("%s|\n%s---%s\n", gp.prefix.buf, gp.prefix.buf,
		       only->frame.name);
		strbuf_addf(&gp.prefix, "   ");
		print_graph_below(&gp, only);
	} else {
		print_graph_below(&gp, root);
	}
	putchar('\n');
	free(gp.prefix.buf);
}

static void print_table(const struct report *rep)
{
	struct hist_entry *rows;
	size_t nr, i, shown;

	rows = hist_sorted(&rep->table, &nr);
	shown = rows_shown(rep, rows, nr, rep->children);
	if (by_children)
		printf("\n# %8s  %8s %9s ", "Children", "Self", "Samples");
	else
		printf("\n# %8s %9s ", "Overhead", "Samples");
	print_cells(rep->order, NULL);
	for (i = 0; i < shown; i++) {
		const struct hist_entry *e = &rows[i];

		if (by_children)
			printf("  %7.2f%%", percent(e->children, rep->nr_samples));
		printf("  %7.2f%% %9" PRIu64 " ",
		       percent(e->samples, rep->nr_samples),
		       (uint64_t)e->samples);
		print_cells(rep->order, e);
		if (e->calls)
			print_call_graph(rep, e->calls);
	}
	print_rest(rows, shown, nr, rep->nr_samples, rep->children);
	free(rows);
}

static void print_threads(const struct report *rep)
{
	struct hist_entry *rows;
	size_t nr, i, shown;

	rows = hist_sorted(&rep->threads, &nr);
	shown = rows_shown(rep, rows, nr, false);
	printf("\n# %8s  %-16s %9s %9s\n", "Tid", "Command", "Samples",
	       "Overhead");
	for (i = 0; i < shown; i++) {
		const struct hist_entry *e = &rows[i];

		printf("  %8u  %-16s %9" PRIu64 " %8.2f%%\n", e->tid,
		       e->last_comm, (uint64_t)e->samples,
		       percent(e->samples, rep->nr_samples));
	}
	print_rest(rows, shown, nr, rep->nr_samples, false);
	free(rows);
}

/* A line of --folded output. */
struct folded {
	char *stack;
	__u64 samples;
};

struct folded_lines {
	struct folded *lines;
	size_t nr, cap;
};

/* Each stack that ends below @node, @path leading to it. */
static void fold(const struct call_node *node, struct strbuf *path,
		 struct folded_lines *out)
{
	const struct call_node *child;
	size_t len = path->len;

	for (child = node->children; child; child = child->next) {
		/* perf script and stackcollapse mark kernel frames so. */
		strbuf_addf(path, "%s%s%s", len ? ";" : "", child->frame.name,
			    child->frame.kernel ? "_[k]" : "");
		if (child->self) {
			GROW(out->lines, out->nr, out->cap);
			out->lines[out->nr++] = (struct folded) {
				.stack = must_strdup(path->buf),
				.samples = child->self,
			};
		}
		fold(child, path, out);
		strbuf_setlen(path, len);
	}
}

static int folded_cmp(const void *a, const void *b)
{
	return strcmp(((const struct folded *)a)->stack,
		      ((const struct folded *)b)->stack);
}

/*
 * One line per distinct stack, "comm;outermost;...;innermost count",
 * as flamegraph.pl and inferno read them, sorted by stack.
 */
static void print_folded(const struct report *rep)
{
	struct folded_lines out = { 0 };
	struct strbuf path = { 0 };
	size_t i;

	fold(rep->stacks, &path, &out);
	qsort(out.lines, out.nr, sizeof(*out.lines), folded_cmp);
	for (i = 0; i < out.nr; i++) {
		printf("%s %" PRIu64 "\n", out.lines[i].stack,
		       (uint64_t)out.lines[i].samples);
		free(out.lines[i].stack);
	}
	free(out.lines);
	free(path.buf);
}

/* The flame graph of all stacks into @path. */
static void write_svg(const struct report *rep, const char *path)
{
	const struct pmc_data_header *hdr = rep->hdr;
	char title[PMC_DATA_CMDLINE_LEN + 64], subtitle[160];
	FILE *out = fopen(path, "we");
	bool written;

	if (!out)
		die("cannot write %s: %s", path, strerror(errno));
	snprintf(title, sizeof(title), "Flame graph of '%s' (%s)",
		 hdr->cmdline, target_name(hdr));
	snprintf(subtitle, sizeof(subtitle),
		 "%s: %" PRIu64 " samples, %" PRIu64 " lost%s",
		 rep->event->name,
		 (uint64_t)rep->nr_samples, (uint64_t)rep->nr_lost,
		 hdr->attr.record_type & PMC_RECORD_CALLCHAIN ? "" :
			", no call chains");
	written = flame_write(out, rep->stacks, title, subtitle);
	if (fclose(out) || !written)
		die("cannot write %s: %s", path, strerror(errno));
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: pmc-report [-s KEYS] [-g | -G caller|callee] [--svg FLAME.svg] [OPTIONS] [FILE]\n"
		"       pmc-report --folded [--svg FLAME.svg] [OPTIONS] [FILE]\n"
		"       pmc-report --script [OPTIONS] [FILE]\n"
		"       pmc-report --annotate SYMBOL [OPTIONS] [FILE]\n"
		"\n"
		"Show where the samples in FILE (default " DEFAULT_INPUT "), written by\n"
		"pmc-record, fell: the top symbols and the threads.\n"
		"\n"
		"  -i, --input FILE the data file, as perf report -i\n"
		"  -s, --sort KEYS  one table, its rows told apart by KEYS, a comma\n"
		"                   list of comm, pid, thread, object, symbol, srcline\n"
		"  -G, --call-graph caller|callee\n"
		"                   under each row, the call chains of its samples:\n"
		"                   from the callers down, or from the sampled\n"
		"                   function up (needs pmc-record -g)\n"
		"  -g               the call chains from the callers down (-G caller)\n"
		"  --folded         print each distinct stack and its samples\n"
		"                   instead, as flamegraph.pl reads them\n"
		"  --svg FLAME.svg  write an interactive flame graph too\n"
		"  --script         print each sample as perf script does instead\n"
		"                   (for Firefox Profiler, speedscope, hotspot)\n"
		"  --annotate SYMBOL  print function SYMBOL's instructions, with\n"
		"                   source lines, and each one's share of its samples\n"
		"  --children       a column of the samples in whose stacks each row\n"
		"                   is (itself and what it called), sorted by it\n"
		"  --no-children    no such column (the default)\n"
		"  --header         say first what the file holds: the recording's\n"
		"                   command, events, sizes and counts\n"
		"  --header-only    only that\n"
		"  --stdio          accepted, as perf's: the output is always text\n"
		"  -n, --rows N     the top N rows of each table (default %d; 0: all)\n"
		"  --percent-limit PCT  no rows, or call graph branches, under PCT%%\n"
		"  --comm(s) LIST, --pid(s) LIST, --tid(s) LIST, --dso(s) LIST\n"
		"                   only the samples of these commands, processes,\n"
		"                   threads, objects (comma lists; [kernel] or\n"
		"                   [kernel.kallsyms] for the kernel)\n"
		"  --event NAME     only the samples of event NAME, of several\n"
		"                   recorded (--folded, --svg: the first event's\n"
		"                   unless given)\n"
		"  --symfs DIR      look the recorded files up under DIR\n"
		"  --kallsyms FILE  the kernel's symbols: a copy of the recording\n"
		"                   boot's /proc/kallsyms, or its kernel's System.map\n"
		"  --vmlinux FILE   the kernel's symbols from its ELF image (a kernel\n"
		"                   without KASLR)\n",
		DEFAULT_ROWS);
}

static void __attribute__((noreturn, format(printf, 1, 2)))
usage_error(const char *fmt, ...)
{
	va_list ap;

	if (fmt) {
		fprintf(stderr, "pmc-report: ");
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fputc('\n', stderr);
	}
	usage(stderr);
	exit(2);
}

/* A number of -n or --percent-limit, from @min to @max. */
static double parse_number(const char *arg, double min, double max,
			   const char *what)
{
	char *end;
	double val;

	errno = 0;
	val = strtod(arg, &end);
	if (errno || end == arg || *end || !(val >= min && val <= max))
		usage_error("invalid %s '%s' (%g to %g)", what, arg, min, max);
	return val;
}

static enum sort_key parse_sort_key(const char *name)
{
	int key;

	for (key = 0; key < NR_KEYS; key++)
		if (!strcmp(name, sort_keys[key].name) ||
		    (sort_keys[key].alias && !strcmp(name, sort_keys[key].alias)))
			return key;
	usage_error("unknown sort key '%s'", name);
}

/* --sort: a comma list of keys, each at most once. */
static void parse_sort(const char *arg, struct sort_order *order)
{
	char *list = must_strdup(arg), *rest = list, *name;

	*order = (struct sort_order) { 0 };
	while ((name = strsep(&rest, ","))) {
		enum sort_key key = parse_sort_key(name);

		if (order->mask & KEY_BIT(key))
			usage_error("sort key '%s' given twice", name);
		order->keys[order->nr++] = key;
		order->mask |= KEY_BIT(key);
	}
	free(list);
}

static enum graph_mode parse_graph_mode(const char *mode)
{
	if (!strcmp(mode, "caller"))
		return GRAPH_CALLER;
	if (!strcmp(mode, "callee"))
		return GRAPH_CALLEE;
	usage_error("-G takes caller or callee, not '%s'", mode);
}

enum { OPT_SYMFS = 256, OPT_EVENT, OPT_FOLDED, OPT_SVG, OPT_SCRIPT, OPT_PERCENT,
	OPT_KALLSYMS, OPT_VMLINUX, OPT_CHILDREN, OPT_NO_CHILDREN, OPT_HEADER,
	OPT_HEADER_ONLY, OPT_STDIO, OPT_ANNOTATE, OPT_FILTER };	/* + enum filter_kind */

/*
 * One report per recorded event, each a copy of @tmpl's options. Those
 * --event leaves out only count their samples; the stacks of --folded
 * and --svg (@one) are of one event: --event's, or the first.
 */
static struct report *report_events(const struct report *tmpl,
				    const char *name, bool one)
{
	struct report *reps = calloc(nr_events, sizeof(*reps));
	size_t i, sel = 0;

	if (!reps)
		die("out of memory");
	if (name) {
		for (sel = 0; sel < nr_events; sel++)
			if (!strcmp(events[sel].name, name))
				break;
		if (sel == nr_events) {
			struct strbuf sb = { 0 };

			for (i = 0; i < nr_events; i++)
				strbuf_addf(&sb, "%s'%s'", i ? ", " : "",
					    events[i].name);
			die("no event '%s' in %s: it has %s", name, data_path,
			    sb.buf);
		}
	} else if (one && nr_events > 1) {
		warn("%s has %zu events: showing '%s' (choose one with --event)",
		     data_path, nr_events, events[0].name);
	}
	for (i = 0; i < nr_events; i++) {
		reps[i] = *tmpl;
		reps[i].event = &events[i];
		reps[i].shown = (!name && !one) || i == sel;
		reps[i].stacks = i == sel ? tmpl->stacks : NULL;
	}
	return reps;
}

static const struct option options[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "sort", required_argument, NULL, 's' },
	{ "call-graph", required_argument, NULL, 'G' },
	{ "symfs", required_argument, NULL, OPT_SYMFS },
	{ "kallsyms", required_argument, NULL, OPT_KALLSYMS },
	{ "vmlinux", required_argument, NULL, OPT_VMLINUX },
	{ "children", no_argument, NULL, OPT_CHILDREN },
	{ "no-children", no_argument, NULL, OPT_NO_CHILDREN },
	{ "input", required_argument, NULL, 'i' },
	{ "header", no_argument, NULL, OPT_HEADER },
	{ "header-only", no_argument, NULL, OPT_HEADER_ONLY },
	{ "stdio", no_argument, NULL, OPT_STDIO },
	{ "folded", no_argument, NULL, OPT_FOLDED },
	{ "svg", required_argument, NULL, OPT_SVG },
	{ "script", no_argument, NULL, OPT_SCRIPT },
	{ "annotate", required_argument, NULL, OPT_ANNOTATE },
	{ "event", required_argument, NULL, OPT_EVENT },
	{ "rows", required_argument, NULL, 'n' },
	{ "percent-limit", required_argument, NULL, OPT_PERCENT },
	/* perf report's names, and the singular */
	{ "comms", required_argument, NULL, OPT_FILTER + FILTER_COMM },
	{ "comm", required_argument, NULL, OPT_FILTER + FILTER_COMM },
	{ "pids", required_argument, NULL, OPT_FILTER + FILTER_PID },
	{ "pid", required_argument, NULL, OPT_FILTER + FILTER_PID },
	{ "tids", required_argument, NULL, OPT_FILTER + FILTER_TID },
	{ "tid", required_argument, NULL, OPT_FILTER + FILTER_TID },
	{ "dsos", required_argument, NULL, OPT_FILTER + FILTER_DSO },
	{ "dso", required_argument, NULL, OPT_FILTER + FILTER_DSO },
	{ NULL, 0, NULL, 0 }
};

int main(int argc, char **argv)
{
	struct report rep = {
		.order = &default_order,
		.rows = DEFAULT_ROWS,
		.percent_limit = -1,
	};
	struct sort_order order;
	const char *svg = NULL, *kallsyms_path = NULL, *vmlinux_path = NULL;
	const char *event_name = NULL;
	struct report *reps;
	bool folded = false, header = false, header_only = false;
	unsigned char *buf;
	size_t i, shown;
	__u64 size, len;
	int opt;

	data_path = DEFAULT_INPUT;
	while ((opt = getopt_long(argc, argv, "hs:G:gn:i:", options, NULL)) != -1) {
		switch (opt) {
		case 'h':
			usage(stdout);
			return 0;
		case 's':
			parse_sort(optarg, &order);
			rep.order = &order;
			rep.sorted = true;
			break;
		case 'G':
			rep.graph = parse_graph_mode(optarg);
			break;
		case 'g':
			rep.graph = GRAPH_CALLER;
			break;
		case 'i':
			data_path = optarg;
			break;
		case OPT_NO_CHILDREN:
			rep.children = false;
			break;
		case OPT_HEADER_ONLY:
			header_only = true;
			/* fall through */
		case OPT_HEADER:
			header = true;
			break;
		case OPT_STDIO:
			break;
		case OPT_SYMFS:
			symbols_set_symfs(optarg);
			break;
		case OPT_KALLSYMS:
			kallsyms_path = optarg;
			break;
		case OPT_VMLINUX:
			vmlinux_path = optarg;
			break;
		case OPT_CHILDREN:
			rep.children = true;
			break;
		case OPT_FOLDED:
			folded = true;
			break;
		case OPT_SVG:
			svg = optarg;
			break;
		case OPT_SCRIPT:
			rep.script = true;
			break;
		case OPT_EVENT:
			event_name = optarg;
			break;
		case OPT_ANNOTATE:
			annotate_init(optarg);
			rep.annotate = true;
			break;
		case 'n':
			rep.rows = parse_number(optarg, 0, 1e9, "row count");
			if (rep.rows != strtod(optarg, NULL))
				usage_error("-n takes a whole number of rows, not '%s'",
					    optarg);
			break;
		case OPT_PERCENT:
			rep.percent_limit = parse_number(optarg, 0, 100,
							 "percent limit");
			break;
		case OPT_FILTER + FILTER_COMM:
		case OPT_FILTER + FILTER_PID:
		case OPT_FILTER + FILTER_TID:
		case OPT_FILTER + FILTER_DSO:
			if (filter_add(&rep.filter, opt - OPT_FILTER, optarg))
				usage_error("%s: invalid list '%s'",
					    filter_option(opt - OPT_FILTER),
					    optarg);
			break;
		default:
			usage_error(NULL);
		}
	}
	if (optind < argc - 1)
		usage_error(NULL);
	if (optind == argc - 1)
		data_path = argv[optind];
	if (folded && (rep.sorted || rep.graph))
		usage_error("--folded prints stacks only: no -s or -G with it");
	if (rep.script && (folded || svg || rep.sorted || rep.graph))
		usage_error("--script prints samples only: no --folded, --svg, -s or -G with it");
	if (rep.children && (folded || rep.script))
		usage_error("--children is a column of the tables: not with --folded or --script");
	if (rep.annotate && (folded || svg || rep.script || rep.sorted ||
			     rep.graph || rep.children))
		usage_error("--annotate shows one function: no --folded, --svg, --script, -s, -G or --children with it");
	if (kallsyms_path && vmlinux_path)
		usage_error("--kallsyms and --vmlinux are two sources of one table: give one");
	by_children = rep.children;
	if (folded || svg)
		rep.stacks = call_tree_new();
	rep.table.keys = rep.order->mask;
	rep.threads.keys = KEY_BIT(KEY_THREAD);

	buf = read_file(data_path, &size);
	len = check_header(&rep, buf, size);
	if (header)
		print_file_header(rep.hdr, size);
	if (header_only)
		return 0;
	if (rep.graph && !(rep.hdr->attr.record_type & PMC_RECORD_CALLCHAIN))
		die("no call chains recorded: -G needs a recording made with pmc-record -g");
	if (rep.children && !(rep.hdr->attr.record_type & PMC_RECORD_CALLCHAIN))
		die("no call chains recorded: --children needs a recording made with pmc-record -g");
	if (rep.stacks && !(rep.hdr->attr.record_type & PMC_RECORD_CALLCHAIN))
		warn("%s: no call chains recorded: each stack is just the sampled function",
		     data_path);
	header_comm = intern(rep.hdr->comm[0] ? rep.hdr->comm : unknown_name);
	all_cpus = rep.hdr->pid == PMC_DATA_ALL_CPUS;
	kernel_symbols_init(same_boot(rep.hdr), kallsyms_path, vmlinux_path);
	read_tool_records(rep.hdr, buf + rep.hdr->header_size, len);
	if (!nr_events)
		die("a file of several events (version %u) without their event records",
		    rep.hdr->version);
	reps = report_events(&rep, event_name, folded || svg || rep.annotate);
	replay(reps, buf + rep.hdr->header_size, len);
	for (i = 0; i < nr_events; i++)
		free(reps[i].open_throttles);	/* one at the end has no gap */
	check_counts(reps);
	if (rep.script)
		return 0;
	if (rep.annotate) {
		const char *err;

		for (i = 0; !reps[i].shown; i++)
			;
		err = annotate_print(reps[i].event->name);
		if (err)
			die("%s", err);
		return 0;
	}

	for (i = 0; i < nr_events; i++) {
		if (!reps[i].stacks)
			continue;
		call_tree_sort(reps[i].stacks, CALL_BY_NAME);
		if (svg)
			write_svg(&reps[i], svg);
		if (folded) {
			print_folded(&reps[i]);
			return 0;
		}
	}
	for (i = 0, shown = 0; i < nr_events; i++) {
		if (!reps[i].shown)
			continue;
		if (shown++)
			putchar('\n');
		print_header(&reps[i], shown == 1);
		if (!reps[i].nr_samples) {
			printf("\n# no samples\n");
			continue;
		}
		print_table(&reps[i]);
		if (!reps[i].sorted)
			print_threads(&reps[i]);
	}
	return 0;
}
