// SPDX-License-Identifier: GPL-2.0
/*
 * mkdata: write a pmc-record data file of known content, for report-test.sh.
 *
 *	mkdata KIND OUT BINARY PATH HOT WARM BURN MAIN
 *
 * BINARY is a static x86-64 program, pmc-burn or tests/names.c; the
 * file maps its executable segment as PATH. HOT, WARM, BURN and MAIN are addresses inside
 * hot_loop(), warm_loop(), burn() and main(). The samples are on
 * task-clock, 1 ms apart, of pid 100, with the call chain that
 * pmc-record -g would record, and the file claims another boot, so no
 * kernel address resolves. KIND is one of
 *
 *	burn		300 samples in hot_loop (tid 100) and 100 in
 *			warm_loop (tid 101), interleaved, both called by
 *			burn, called by main
 *	nochain		the same without call chains
 *	unfinished	the same as burn, as pmc-record leaves a file when
 *			killed: the header gives no sizes or counts
 *	mixed		kernel frames, a kernel IP that pmc_paranoid hid,
 *			an unmapped IP, a chain ending in a zero, a
 *			second comm, throttles of two counters (3 ms and
 *			2 ms, the second's two copies overlapping), and a
 *			record of a type pmc-report does not know: see
 *			add_mixed_samples()
 *	overlap		a mapping laid over another's middle, a MUNMAP of
 *			its end, and a pid without mappings: see
 *			add_overlap_samples()
 *	buildid:HEX	the same as burn, and the build-id HEX for PATH,
 *			as pmc-record writes it after the kernel's records
 *	fork		pmc-record -a's file of a child that pid 100
 *			forked and that never exec'ed: 100 samples of
 *			it in hot_loop, with its EXIT, drained from one
 *			CPU's buffer before the other's, which holds,
 *			earlier in time, another program's mapping at
 *			the same address and the FORK: see
 *			add_fork_samples()
 *	maps:N		N one-page mappings of /lib/libmany.so, laid out
 *			top-down as mmap() places them, and 20000 samples
 *			whose 16-frame chains pass through 13 of 256 of
 *			them (N >= 256): a report's time must not grow
 *			with N
 *	events		pmc-record -e task-clock -e '{instructions,cycles}'
 *			(version 2): burn's 400 task-clock samples, and
 *			from the other two rings, drained after it but
 *			earlier in time, 50 instructions samples in
 *			hot_loop with 7 lost, and 20 cycles samples in
 *			warm_loop
 *	badsource	the same with a source record naming event 5
 *	base:ADDR	the same as burn, with BINARY's code mapped at ADDR
 *			plus its link address, as the dynamic loader maps
 *			a shared library: HOT, WARM, BURN and MAIN are
 *			addresses there
 */
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../pmc-data.h"

#define PID		100
#define KERNEL_IP	0xffffffff81000100ULL
#define KERNEL_RET	0xffffffff81000200ULL
#define UNMAPPED_IP	0x7f0000001000ULL
#define PAGE_MASK	(~0xfffULL)

static __u64 hot, warm, burn, main_ip;
static unsigned char *data;		/* the records */
static size_t data_len;
static __u64 nr_samples, now;
static __u32 sample_pid = PID;	/* of the samples add_sample() adds */
static int time_all;		/* side records end with side_time */
static __u64 side_time;
static __u64 seg_addr, seg_len, seg_pgoff;	/* BINARY's code */
static __u64 load_base;			/* where its link address 0 is */

static void __attribute__((noreturn)) fail(const char *what)
{
	fprintf(stderr, "mkdata: %s\n", what);
	exit(1);
}

/* Append a record of @len bytes, padded to 8 as the kernel pads them. */
static void *add_record(size_t len)
{
	size_t size = (len + 7) & ~(size_t)7;
	void *rec;

	data = realloc(data, data_len + size);
	if (!data)
		fail("out of memory");
	rec = data + data_len;
	memset(rec, 0, size);
	data_len += size;
	((struct pmc_event_header *)rec)->size = size;
	return rec;
}

/* A MMAP, MUNMAP or COMM record of @len bytes, and its time if asked. */
static void *add_side_record(size_t len)
{
	struct pmc_event_header *h = add_record(len);
	size_t size = h->size;

	if (time_all) {
		add_record(8);		/* may move the data */
		h = (void *)(data + data_len - 8 - size);
		h->size += 8;
		memcpy(data + data_len - 8, &side_time, 8);
	}
	return h;
}

static void add_pid_comm(__u32 pid, __u32 tid, const char *comm)
{
	struct pmc_data_comm *c = add_side_record(sizeof(*c) + strlen(comm) + 1);

	c->header.type = PMC_EVENT_COMM;
	c->pid = pid;
	c->tid = tid;
	strcpy(c->comm, comm);
}

static void add_comm(__u32 tid, const char *comm)
{
	add_pid_comm(PID, tid, comm);
}

static void add_task(__u32 type, __u32 pid, __u32 ppid, __u64 time)
{
	struct pmc_data_task *t = add_record(sizeof(*t));

	t->header.type = type;
	t->pid = pid;
	t->tid = pid;
	t->ppid = ppid;
	t->ptid = ppid;
	t->time = time;
}

static void add_throttle(__u32 type, __u64 id, __u64 time)
{
	struct pmc_data_throttle *t = add_record(sizeof(*t));

	t->header.type = type;
	t->id = id;
	t->time = time;
}

/* A MMAP (or, with @path NULL, MUNMAP) record of process @pid. */
static void add_map(__u32 pid, __u64 addr, __u64 len, __u64 pgoff,
		    const char *path)
{
	struct pmc_data_mmap *m;

	m = add_side_record(sizeof(*m) + (path ? strlen(path) : 0) + 1);
	m->header.type = path ? PMC_EVENT_MMAP : PMC_EVENT_MUNMAP;
	m->pid = pid;
	m->tid = pid;
	m->addr = addr;
	m->len = len;
	m->pgoff = pgoff;
	strcpy(m->filename, path ? path : "");
}

/* The MMAP record of @binary's executable segment, as mapped by exec. */
static void add_mmap(const char *binary, const char *path)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	FILE *f = fopen(binary, "rb");
	int i;

	if (!f || fread(&eh, sizeof(eh), 1, f) != 1 ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64)
		fail("BINARY is not a 64-bit ELF file");
	for (i = 0; i < eh.e_phnum; i++) {
		if (fseek(f, eh.e_phoff + i * sizeof(ph), SEEK_SET) ||
		    fread(&ph, sizeof(ph), 1, f) != 1)
			fail("BINARY: truncated program headers");
		if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X))
			break;
	}
	if (i == eh.e_phnum)
		fail("BINARY has no executable segment");
	fclose(f);

	seg_addr = ph.p_vaddr & PAGE_MASK;
	seg_len = ph.p_vaddr + ph.p_memsz - seg_addr;
	seg_addr += load_base;
	seg_pgoff = ph.p_offset & PAGE_MASK;
	add_map(PID, seg_addr, seg_len, seg_pgoff, path);
}


/*
 * A sample at @ip, with a call chain of @nr_kernel kernel and @nr_user
 * user entries from @chain unless @record_type leaves it out.
 */
static void add_sample(__u32 record_type, __u32 tid, bool kernel, __u64 ip,
		       const __u64 *chain, unsigned int nr_kernel,
		       unsigned int nr_user)
{
	unsigned int nr = nr_kernel + nr_user;
	size_t len = sizeof(struct pmc_event_header) + 3 * 8;
	struct pmc_event_header *h;
	__u64 *p;

	if (record_type & PMC_RECORD_CALLCHAIN)
		len += 8 + nr * 8;
	h = add_record(len);
	h->type = record_type;
	h->misc = PMC_EVENT_MISC_OVERFLOW |
		  (kernel ? PMC_EVENT_MISC_KERNEL : PMC_EVENT_MISC_USER);
	p = (__u64 *)(h + 1);
	*p++ = ip;
	*p++ = (__u64)tid << 32 | sample_pid;
	now += 1000000;
	*p++ = now;
	if (record_type & PMC_RECORD_CALLCHAIN) {
		*p++ = nr | (__u64)nr_kernel << 32 | (__u64)nr_user << 48;
		memcpy(p, chain, nr * 8);
	}
	nr_samples++;
}

static void add_event(__u32 index, __u32 leader, __u64 config,
		      __u64 period, __u32 record_type, const char *name)
{
	struct pmc_data_event *e = add_record(sizeof(*e));

	e->header.type = PMC_DATA_EVENT;
	e->index = index;
	e->leader = leader;
	e->attr.config = config;
	e->attr.irq_period = period;
	e->attr.record_type = record_type;
	e->attr.time_all = time_all;
	strcpy(e->name, name);
}

static void add_source(__u32 index)
{
	struct pmc_data_source *src = add_record(sizeof(*src));

	src->header.type = PMC_DATA_SOURCE;
	src->index = index;
}

/* The other two events' rings of "events"; see main() for the first. */
static void add_event_samples(__u32 record_type, __u32 bad_index)
{
	struct pmc_data_lost *lost;
	int i;

	add_source(1);
	now = 500000;		/* between the first event's samples */
	for (i = 0; i < 50; i++) {
		__u64 chain[] = { hot, burn, main_ip };

		add_sample(record_type, PID, false, hot, chain, 0, 3);
	}
	lost = add_record(sizeof(*lost));
	lost->header.type = PMC_EVENT_LOST;
	lost->id = 1;
	lost->lost = 7;
	add_source(bad_index);
	now = 700000;
	for (i = 0; i < 20; i++) {
		__u64 chain[] = { warm, burn, main_ip };

		add_sample(record_type, PID + 1, false, warm, chain, 0, 3);
	}
}

/* 3:1, as pmc-burn runs: hot_loop in thread 100, warm_loop in 101. */
static void add_burn_samples(__u32 record_type)
{
	int i;

	for (i = 0; i < 400; i++) {
		bool is_hot = i % 4 != 3;
		__u64 chain[] = { is_hot ? hot : warm, burn, main_ip };

		add_sample(record_type, is_hot ? PID : PID + 1, false, chain[0],
			   chain, 0, 3);
	}
}

static void add_mixed_samples(__u32 record_type)
{
	/* In a system call of burn(): kernel frames, then the user's. */
	const __u64 syscall[] = { KERNEL_IP, KERNEL_RET, burn, main_ip };
	/* A kernel IP hidden (pmc_paranoid 2): zero, no kernel part. */
	const __u64 hidden[] = { hot, burn, main_ip };
	/* Code with no mapping, called by main; the walk ended in a zero. */
	const __u64 unmapped[] = { UNMAPPED_IP, main_ip, 0 };
	const __u64 worker[] = { hot, burn, main_ip };
	int i;

	for (i = 0; i < 6; i++)
		add_sample(record_type, PID, true, KERNEL_IP, syscall, 2, 2);
	for (i = 0; i < 3; i++)
		add_sample(record_type, PID, true, 0, hidden, 0, 3);
	for (i = 0; i < 2; i++)
		add_sample(record_type, PID, false, UNMAPPED_IP, unmapped, 0, 3);
	add_comm(PID + 2, "worker");
	add_sample(record_type, PID + 2, false, hot, worker, 0, 3);
	/*
	 * Two counters' throttles overlap: each gap is its own. Counter
	 * 2's two inherited copies are throttled from 1 to 2.5 ms and from
	 * 1.5 to 3 ms: 2 ms without samples.
	 */
	add_throttle(PMC_EVENT_THROTTLE, 1, now);
	add_throttle(PMC_EVENT_THROTTLE, 2, now + 1000000);
	add_throttle(PMC_EVENT_THROTTLE, 2, now + 1500000);
	add_throttle(PMC_EVENT_UNTHROTTLE, 2, now + 2500000);
	add_throttle(PMC_EVENT_UNTHROTTLE, 1, now + 3000000);
	add_throttle(PMC_EVENT_UNTHROTTLE, 2, now + 3000000);
	((struct pmc_event_header *)add_record(16))->type = 99;
}

#define OVERLAP_BASE	0x10000000ULL

/*
 * /lib/a.so maps 4 pages at OVERLAP_BASE; /lib/b.so (file offset
 * 0x5000) is mapped over its second page; its fourth page is unmapped.
 * One sample in each page, then one of pid 200, which has no mappings
 * and borrows pid 100's: a.so+0x10, b.so+0x5010, a.so+0x2010,
 * [unknown], b.so+0x5010.
 */
static void add_overlap_samples(__u32 record_type)
{
	int i;

	add_map(PID, OVERLAP_BASE, 0x4000, 0, "/lib/a.so");
	add_map(PID, OVERLAP_BASE + 0x1000, 0x1000, 0x5000, "/lib/b.so");
	add_map(PID, OVERLAP_BASE + 0x3000, 0x1000, 0, NULL);
	for (i = 0; i < 5; i++) {
		__u64 ip = OVERLAP_BASE + (i < 4 ? i : 1) * 0x1000 + 0x10;

		if (i == 4)
			sample_pid = 200;
		add_sample(record_type, sample_pid, false, ip, &ip, 0, 1);
	}
	sample_pid = PID;
}

#define CHILD		101
#define OTHER		300

/*
 * See "fork" above. In time: another program (pid 300, which shares
 * nothing with pid 100) maps its code where pid 100's is, pid 100 forks
 * pid 101, which runs hot_loop and exits. In the file, the second CPU's
 * buffer comes first, as pmc-record -a may drain it. Replayed in file
 * order, the child's samples come before anything is known of it; in
 * time order without the FORK, it has no mappings of its own and
 * borrows the newest, pid 300's. Both give [unknown] or other's code.
 */
static void add_fork_samples(__u32 record_type)
{
	const __u64 chain[] = { hot, burn, main_ip };
	__u64 start = now;
	int i;

	now = start + 3000000;
	sample_pid = CHILD;
	for (i = 0; i < 100; i++)
		add_sample(record_type, CHILD, false, hot, chain, 0, 3);
	add_task(PMC_EVENT_EXIT, CHILD, PID, now + 1);
	side_time = start + 1000000;
	add_pid_comm(OTHER, OTHER, "other");
	add_map(OTHER, seg_addr, seg_len, seg_pgoff, "/bin/other");
	add_task(PMC_EVENT_FORK, CHILD, PID, start + 2000000);
	sample_pid = PID;
}

#define MANY_TOP	0x7f0000000000ULL

/* See "maps:N" above. */
static void add_many_maps(__u32 record_type, unsigned long nr)
{
	unsigned long i;
	int k, j;

	for (i = 0; i < nr; i++)
		add_map(PID, MANY_TOP - (i + 1) * 0x1000, 0x1000, i * 0x1000,
			"/lib/libmany.so");
	for (k = 0; k < 20000; k++) {
		__u64 chain[16] = { hot };

		/* 256 places, spread over the mappings whatever N is */
		for (j = 1; j < 14; j++)
			chain[j] = MANY_TOP - ((k * 13 + j) % 256 * (nr / 256) +
					       1) * 0x1000 + 0x20;
		chain[14] = burn;
		chain[15] = main_ip;
		add_sample(record_type, PID, false, hot, chain, 0, 16);
	}
}

/* A PMC_DATA_BUILD_ID record of @hex for @path. */
static void add_build_id(const char *path, const char *hex)
{
	struct pmc_data_build_id *b = add_record(sizeof(*b) + strlen(path) + 1);

	b->header.type = PMC_DATA_BUILD_ID;
	while (hex[0] && hex[1] && b->size < sizeof(b->id)) {
		if (sscanf(hex, "%2hhx", &b->id[b->size]) != 1)
			fail("buildid:HEX wants hex digits");
		b->size++;
		hex += 2;
	}
	strcpy(b->filename, path);
}

static void add_burn_build_id(__u32 record_type, const char *path,
			      const char *hex)
{
	add_burn_samples(record_type);
	add_build_id(path, hex);
}

static __u64 address(const char *arg)
{
	char *end;
	__u64 addr = strtoull(arg, &end, 0);

	if (end == arg || *end)
		fail("addresses must be numbers");
	return addr;
}

int main(int argc, char **argv)
{
	__u32 record_type = PMC_RECORD_IP | PMC_RECORD_TID | PMC_RECORD_TIME |
			    PMC_RECORD_CALLCHAIN;
	struct pmc_data_header hdr = {
		.magic = PMC_DATA_MAGIC,
		.version = PMC_DATA_VERSION,
		.header_size = sizeof(hdr),
		.attr = {
			.config = PMC_CONFIG(PMC_TYPE_SOFTWARE,
					     PMC_SW_TASK_CLOCK),
			.irq_period = 1000000,
			.mmap = 1,
			.comm = 1,
		},
		.pid = PID,
		.event = "task-clock",
		.comm = "pmc-burn",
		.cmdline = "pmc-burn",
		.boot_id = "00000000-0000-0000-0000-000000000000",
	};
	const char *kind;
	bool events;
	FILE *out;

	if (argc != 9)
		fail("usage: mkdata burn|nochain|unfinished|mixed|overlap|fork|buildid:HEX|maps:N|events|badsource|base:ADDR OUT BINARY PATH HOT WARM BURN MAIN");
	kind = argv[1];
	hot = address(argv[5]);
	warm = address(argv[6]);
	burn = address(argv[7]);
	main_ip = address(argv[8]);

	if (!strcmp(kind, "nochain"))
		record_type &= ~PMC_RECORD_CALLCHAIN;
	if (!strncmp(kind, "base:", 5))
		load_base = address(kind + 5);
	hdr.attr.record_type = record_type;
	if (!strcmp(kind, "fork")) {
		hdr.attr.time_all = time_all = 1;
		hdr.pid = PMC_DATA_ALL_CPUS;
	}
	events = !strcmp(kind, "events") || !strcmp(kind, "badsource");
	if (events) {
		hdr.version = PMC_DATA_VERSION_EVENTS;
		hdr.attr.time_all = time_all = 1;
		add_event(0, 0, hdr.attr.config, hdr.attr.irq_period,
			  record_type, "task-clock");
		add_event(1, 1, PMC_CONFIG(PMC_TYPE_HARDWARE,
					   PMC_HW_INSTRUCTIONS),
			  100000, record_type, "instructions");
		add_event(2, 1, PMC_CONFIG(PMC_TYPE_HARDWARE,
					   PMC_HW_CPU_CYCLES),
			  100000, record_type, "cycles");
	}
	add_comm(PID, "pmc-burn");
	add_mmap(argv[3], argv[4]);
	if (events)
		add_source(0);
	if (!strcmp(kind, "mixed"))
		add_mixed_samples(record_type);
	else if (!strcmp(kind, "overlap"))
		add_overlap_samples(record_type);
	else if (!strcmp(kind, "fork"))
		add_fork_samples(record_type);
	else if (!strncmp(kind, "maps:", 5) && strtoul(kind + 5, NULL, 10))
		add_many_maps(record_type, strtoul(kind + 5, NULL, 10));
	else if (!strcmp(kind, "burn") || !strcmp(kind, "nochain") ||
		 !strcmp(kind, "unfinished") || events ||
		 !strncmp(kind, "base:", 5))
		add_burn_samples(record_type);
	else if (!strncmp(kind, "buildid:", 8))
		add_burn_build_id(record_type, argv[4], kind + 8);
	else
		fail("KIND must be burn, nochain, unfinished, mixed, overlap, fork, buildid:HEX, maps:N, events, badsource or base:ADDR");
	if (events) {
		add_event_samples(record_type, kind[0] == 'b' ? 5 : 2);
		hdr.nr_lost = 7;
	}

	hdr.data_size = data_len;
	hdr.nr_samples = nr_samples;
	if (!strcmp(kind, "unfinished")) {
		hdr.data_size = PMC_DATA_SIZE_UNKNOWN;
		hdr.nr_samples = 0;
	}
	out = fopen(argv[2], "wb");
	if (!out || fwrite(&hdr, sizeof(hdr), 1, out) != 1 ||
	    fwrite(data, data_len, 1, out) != 1 || fclose(out))
		fail(strerror(errno));
	free(data);
	return 0;
}
