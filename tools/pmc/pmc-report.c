// SPDX-License-Identifier: GPL-2.0
/*
 * pmc-report: show where the samples of a pmc-record data file fell.
 *
 *	pmc-report FILE
 *
 * Records are replayed in file order. MMAP and COMM records build up
 * each process's view; a sample is resolved against that view as it
 * stood when the sample was taken. User IPs go through the mapping to
 * the file's ELF symbol table, read by the small parser below (the
 * tools are static, so no libelf); kernel IPs through /proc/kallsyms.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "pmc-events.h"
#include "pmc-data.h"

#define TOP_ROWS	20

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ELFDATA_HOST	ELFDATA2LSB
#else
#define ELFDATA_HOST	ELFDATA2MSB
#endif

/* The x86-64 kernel half; user IPs never reach it. */
#define KERNEL_START	0xffff800000000000ULL

/* Table cells compare as pointers: one copy of each placeholder. */
static const char unknown_name[] = "[unknown]";
static const char kernel_name[] = "[kernel]";

static const char *data_path;

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

static void __attribute__((format(printf, 1, 2))) warn(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "pmc-report: warning: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void *check_alloc(void *ptr)
{
	if (!ptr) {
		fprintf(stderr, "pmc-report: out of memory\n");
		exit(1);
	}
	return ptr;
}

static void *xrealloc(void *ptr, size_t size)
{
	return check_alloc(realloc(ptr, size ? size : 1));
}

static void *xcalloc(size_t nmemb, size_t size)
{
	return check_alloc(calloc(nmemb ? nmemb : 1, size));
}

static char *xstrdup(const char *s)
{
	size_t len = strlen(s) + 1;

	return memcpy(xrealloc(NULL, len), s, len);
}

/* Make room for one more element in a growing array. */
#define GROW(arr, nr, cap)						\
	do {								\
		if ((nr) == (cap)) {					\
			(cap) = (cap) ? 2 * (cap) : 16;			\
			(arr) = xrealloc((arr), (cap) * sizeof(*(arr))); \
		}							\
	} while (0)

/* One copy of each string, so that equal names compare as pointers. */
static const char *intern(const char *s)
{
	static const char **strings;
	static size_t nr, cap;
	size_t i;

	for (i = 0; i < nr; i++)
		if (!strcmp(strings[i], s))
			return strings[i];
	GROW(strings, nr, cap);
	strings[nr] = xstrdup(s);
	return strings[nr++];
}

static const char *basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}

/* --- symbol tables ---------------------------------------------------- */

struct symbol {
	__u64 addr;
	__u64 size;			/* 0: up to the next symbol */
	const char *name;
	unsigned int rank;		/* among aliases, the highest wins */
};

/* A mapped file (or the kernel) and what we know of its symbols. */
struct dso {
	char *path;
	const char *name;		/* basename, for the table */
	bool loaded;			/* tried, successfully or not */
	bool is_exec;			/* ET_EXEC: IPs are link addresses */
	Elf64_Phdr *loads;		/* the PT_LOAD segments */
	size_t nr_loads;
	struct symbol *syms;		/* sorted by address */
	size_t nr_syms;
	char *strings;			/* what the names point into */
};

static struct dso **dsos;
static size_t nr_dsos, cap_dsos;
static struct dso kernel_dso = { .name = kernel_name };
static bool kernel_same_boot;		/* kallsyms fits the recording */

static int symbol_cmp(const void *a, const void *b)
{
	const struct symbol *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	/* Any stable order; the last of equals is the one found. */
	return -strcmp(x->name, y->name);
}

static void sort_symbols(struct dso *dso)
{
	qsort(dso->syms, dso->nr_syms, sizeof(*dso->syms), symbol_cmp);
}

static const struct symbol *find_symbol(const struct dso *dso, __u64 addr)
{
	size_t lo = 0, hi = dso->nr_syms;
	const struct symbol *sym;

	/* The last symbol at or below addr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (dso->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	sym = &dso->syms[lo - 1];
	if (sym->size && addr - sym->addr >= sym->size)
		return NULL;
	return sym;
}

/*
 * Prefer, among symbols at one address, a sized one, a global one, and
 * one with fewer leading underscores (malloc over __libc_malloc).
 */
static unsigned int symbol_rank(const Elf64_Sym *sym, const char *name)
{
	unsigned int rank = 0;
	size_t under = strspn(name, "_");

	if (sym->st_size)
		rank += 64;
	if (ELF64_ST_BIND(sym->st_info) == STB_GLOBAL)
		rank += 32;
	else if (ELF64_ST_BIND(sym->st_info) == STB_WEAK)
		rank += 16;
	return rank + 15 - (under < 15 ? under : 15);
}

struct elf_file {
	int fd;
	__u64 size;
};

/* Read @len bytes at @off, which must lie inside the file. */
static bool elf_read(const struct elf_file *elf, __u64 off, __u64 len,
		     void *buf)
{
	unsigned char *p = buf;

	if (off > elf->size || len > elf->size - off)
		return false;
	while (len) {
		ssize_t n = pread(elf->fd, p, len, off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		p += n;
		off += n;
		len -= n;
	}
	return true;
}

static void *elf_read_alloc(const struct elf_file *elf, __u64 off, __u64 len)
{
	void *buf;

	if (len > elf->size)
		return NULL;
	buf = xrealloc(NULL, len + 1);
	if (!elf_read(elf, off, len, buf)) {
		free(buf);
		return NULL;
	}
	((char *)buf)[len] = '\0';	/* a string table stays terminated */
	return buf;
}

static const char *elf_load_segments(struct dso *dso,
				     const struct elf_file *elf,
				     const Elf64_Ehdr *eh)
{
	Elf64_Phdr *phdrs;
	size_t i;

	if (eh->e_phentsize != sizeof(Elf64_Phdr))
		return "bad program header size";
	phdrs = elf_read_alloc(elf, eh->e_phoff,
			       (__u64)eh->e_phnum * sizeof(*phdrs));
	if (!phdrs)
		return "program headers outside the file";
	dso->loads = xcalloc(eh->e_phnum, sizeof(*phdrs));
	for (i = 0; i < eh->e_phnum; i++)
		if (phdrs[i].p_type == PT_LOAD)
			dso->loads[dso->nr_loads++] = phdrs[i];
	free(phdrs);
	return NULL;
}

/* The function symbols of .symtab, or of .dynsym if it was stripped. */
static const char *elf_load_symbols(struct dso *dso,
				    const struct elf_file *elf,
				    const Elf64_Ehdr *eh)
{
	const Elf64_Shdr *symtab = NULL, *strtab;
	Elf64_Shdr *shdrs;
	Elf64_Sym *syms;
	size_t i, nr;

	if (!eh->e_shnum)
		return "no section headers";
	if (eh->e_shentsize != sizeof(Elf64_Shdr))
		return "bad section header size";
	shdrs = elf_read_alloc(elf, eh->e_shoff,
			       (__u64)eh->e_shnum * sizeof(*shdrs));
	if (!shdrs)
		return "section headers outside the file";
	for (i = 0; i < eh->e_shnum; i++) {
		if (shdrs[i].sh_type == SHT_SYMTAB)
			symtab = &shdrs[i];
		else if (shdrs[i].sh_type == SHT_DYNSYM && !symtab)
			symtab = &shdrs[i];
	}
	if (!symtab) {
		free(shdrs);
		return "no symbol table";
	}
	if (symtab->sh_entsize != sizeof(Elf64_Sym) ||
	    symtab->sh_link >= eh->e_shnum ||
	    shdrs[symtab->sh_link].sh_type != SHT_STRTAB) {
		free(shdrs);
		return "malformed symbol table";
	}
	strtab = &shdrs[symtab->sh_link];
	syms = elf_read_alloc(elf, symtab->sh_offset, symtab->sh_size);
	dso->strings = elf_read_alloc(elf, strtab->sh_offset, strtab->sh_size);
	if (!syms || !dso->strings) {
		free(syms);
		free(shdrs);
		return "symbol table outside the file";
	}

	nr = symtab->sh_size / sizeof(*syms);
	dso->syms = xcalloc(nr, sizeof(*dso->syms));
	for (i = 0; i < nr; i++) {
		const Elf64_Sym *sym = &syms[i];
		int type = ELF64_ST_TYPE(sym->st_info);
		const char *name;

		if (type != STT_FUNC && type != STT_GNU_IFUNC)
			continue;
		if (sym->st_shndx == SHN_UNDEF || !sym->st_value ||
		    sym->st_name >= strtab->sh_size)
			continue;
		name = dso->strings + sym->st_name;
		if (!*name)
			continue;
		dso->syms[dso->nr_syms++] = (struct symbol) {
			.addr = sym->st_value,
			.size = sym->st_size,
			.name = name,
			.rank = symbol_rank(sym, name),
		};
	}
	free(syms);
	free(shdrs);
	sort_symbols(dso);
	return NULL;
}

static const char *elf_load(struct dso *dso)
{
	struct elf_file elf;
	struct stat st;
	Elf64_Ehdr eh;
	const char *err;

	elf.fd = open(dso->path, O_RDONLY | O_CLOEXEC);
	if (elf.fd < 0)
		return strerror(errno);
	if (fstat(elf.fd, &st)) {
		err = strerror(errno);
		goto out;
	}
	elf.size = st.st_size;
	err = "not an ELF file";
	if (!elf_read(&elf, 0, sizeof(eh), &eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG))
		goto out;
	err = "not a 64-bit ELF file of this byte order";
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA_HOST)
		goto out;
	err = "neither an executable nor a shared object";
	if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)
		goto out;
	dso->is_exec = eh.e_type == ET_EXEC;
	err = elf_load_segments(dso, &elf, &eh);
	if (!err)
		err = elf_load_symbols(dso, &elf, &eh);
out:
	close(elf.fd);
	return err;
}

static void dso_load(struct dso *dso)
{
	const char *err;

	if (dso->loaded)
		return;
	dso->loaded = true;
	/* "[vdso]" and the like have no file behind them. */
	if (dso->path[0] != '/')
		return;
	err = elf_load(dso);
	if (err)
		warn("%s: no symbols: %s", dso->path, err);
}

static struct dso *find_dso(const char *path)
{
	struct dso *dso;
	size_t i;

	for (i = 0; i < nr_dsos; i++)
		if (!strcmp(dsos[i]->path, path))
			return dsos[i];
	dso = xcalloc(1, sizeof(*dso));
	dso->path = xstrdup(path);
	dso->name = basename_of(dso->path);
	GROW(dsos, nr_dsos, cap_dsos);
	dsos[nr_dsos++] = dso;
	return dso;
}

/*
 * The link-time address of file offset @off of @dso, through the
 * PT_LOAD segment that holds it; false if none does.
 */
static bool dso_offset_to_vaddr(const struct dso *dso, __u64 off,
				__u64 *vaddr)
{
	size_t i;

	for (i = 0; i < dso->nr_loads; i++) {
		const Elf64_Phdr *ph = &dso->loads[i];

		if (off >= ph->p_offset && off - ph->p_offset < ph->p_filesz) {
			*vaddr = off - ph->p_offset + ph->p_vaddr;
			return true;
		}
	}
	return false;
}

/* Read all of a file that stat() cannot size, like /proc/kallsyms. */
static char *read_whole(FILE *f)
{
	size_t len = 0, cap = 1 << 20;
	char *buf = xrealloc(NULL, cap + 1);
	size_t n;

	while ((n = fread(buf + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len == cap) {
			cap *= 2;
			buf = xrealloc(buf, cap + 1);
		}
	}
	buf[len] = '\0';
	return buf;
}

/*
 * Kernel text symbols from /proc/kallsyms, if it is readable and shows
 * addresses (kptr_restrict shows zeros instead).
 */
static void kernel_load(void)
{
	size_t nr = 0, cap = 0;
	bool nonzero = false;
	char *line, *next;
	FILE *f;

	if (kernel_dso.loaded)
		return;
	kernel_dso.loaded = true;
	/* KASLR moves the kernel every boot. */
	if (!kernel_same_boot) {
		warn("recorded in another boot: kernel symbols not resolved");
		return;
	}
	f = fopen("/proc/kallsyms", "re");
	if (!f)
		return;
	kernel_dso.strings = read_whole(f);
	fclose(f);

	for (line = kernel_dso.strings; *line; line = next) {
		unsigned long long addr;
		char *end, *name;
		char type;

		next = strchrnul(line, '\n');
		if (*next)
			*next++ = '\0';
		addr = strtoull(line, &end, 16);
		if (end == line || end[0] != ' ' || !end[1] || end[2] != ' ')
			continue;
		type = end[1];
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		name = end + 3;
		name[strcspn(name, " \t")] = '\0';	/* drop "[module]" */
		nonzero |= addr != 0;
		GROW(kernel_dso.syms, nr, cap);
		kernel_dso.syms[nr++] = (struct symbol) {
			.addr = addr,
			.name = name,
			.rank = type == 'T' ? 2 : type == 't' ? 1 : 0,
		};
	}
	kernel_dso.nr_syms = nonzero ? nr : 0;
	sort_symbols(&kernel_dso);
}

/* --- replaying the records -------------------------------------------- */

/* A MMAP record; dso NULL for a MUNMAP, which hides older mappings. */
struct map {
	__u32 pid;
	__u64 start, end, pgoff;
	struct dso *dso;
};

struct comm {
	__u32 pid, tid;
	const char *comm;
};

static struct map *maps;
static size_t nr_maps, cap_maps;
static struct comm *comms;
static size_t nr_comms, cap_comms;
static const char *header_comm;

/*
 * The newest mapping of @pid covering @ip. A process that forked but
 * did not exec has no MMAP records of its own (there are no fork
 * records to tell its parent), so it borrows any process's mapping.
 */
static const struct map *find_map(__u32 pid, __u64 ip)
{
	bool own = false;
	size_t i;

	for (i = nr_maps; i-- > 0;) {
		const struct map *m = &maps[i];

		if (m->pid != pid)
			continue;
		own = true;
		if (ip >= m->start && ip < m->end)
			return m->dso ? m : NULL;
	}
	if (own)
		return NULL;
	for (i = nr_maps; i-- > 0;) {
		const struct map *m = &maps[i];

		if (ip >= m->start && ip < m->end)
			return m->dso ? m : NULL;
	}
	return NULL;
}

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
	return by_pid ? by_pid : header_comm;
}

struct sample {
	__u16 misc;
	__u64 ip;
	__u32 pid, tid;
	__u64 time;
};

struct cursor {
	const unsigned char *p, *end;
};

static bool take(struct cursor *c, void *dst, size_t len)
{
	if ((size_t)(c->end - c->p) < len)
		return false;
	if (dst)
		memcpy(dst, c->p, len);
	c->p += len;
	return true;
}

/* Skip @nr entries of @size bytes, refusing counts that overflow. */
static bool skip_array(struct cursor *c, __u64 nr, size_t size)
{
	if (nr > (size_t)(c->end - c->p) / size)
		return false;
	c->p += nr * size;
	return true;
}

/* Decode a sample by record_type; false if its size does not match. */
static bool parse_sample(const unsigned char *rec, size_t size,
			 __u32 record_type, struct sample *s)
{
	struct cursor c = { rec + sizeof(struct pmc_event_header), rec + size };
	struct pmc_event_header h;
	__u64 nr;
	__u16 chain[4];			/* nr, hv, kernel, user */

	memcpy(&h, rec, sizeof(h));
	memset(s, 0, sizeof(*s));
	s->misc = h.misc;
	if ((record_type & PMC_RECORD_IP) && !take(&c, &s->ip, 8))
		return false;
	if ((record_type & PMC_RECORD_TID) &&
	    (!take(&c, &s->pid, 4) || !take(&c, &s->tid, 4)))
		return false;
	if ((record_type & PMC_RECORD_TIME) && !take(&c, &s->time, 8))
		return false;
	if ((record_type & PMC_RECORD_ADDR) && !take(&c, NULL, 8))
		return false;
	if ((record_type & PMC_RECORD_GROUP) &&
	    (!take(&c, &nr, 8) || !skip_array(&c, nr, 16)))
		return false;
	if ((record_type & PMC_RECORD_CALLCHAIN) &&
	    (!take(&c, chain, sizeof(chain)) || !skip_array(&c, chain[0], 8)))
		return false;
	return c.p == c.end;
}

/* --- histograms ------------------------------------------------------- */

/* A row of a table; rows with equal keys add up. */
struct hist_entry {
	/* key */
	const char *comm;
	const char *dso;
	const char *sym;		/* NULL: show addr */
	__u64 addr;
	__u32 tid;
	/* value */
	__u64 samples;			/* 0: a free slot */
	const char *last_comm;		/* the thread's comm at its last sample */
};

struct hist {
	struct hist_entry *slots;
	size_t size;			/* a power of two */
	size_t used;
};

static size_t hist_hash(const struct hist_entry *e)
{
	__u64 h = 0;

	/* Interned strings compare, and hash, as pointers. */
	h = (h ^ (uintptr_t)e->comm) * 0x9e3779b97f4a7c15ULL;
	h = (h ^ (uintptr_t)e->dso) * 0x9e3779b97f4a7c15ULL;
	h = (h ^ (uintptr_t)e->sym) * 0x9e3779b97f4a7c15ULL;
	h = (h ^ e->addr) * 0x9e3779b97f4a7c15ULL;
	h = (h ^ e->tid) * 0x9e3779b97f4a7c15ULL;
	return h ^ (h >> 32);
}

static bool hist_same(const struct hist_entry *a, const struct hist_entry *b)
{
	return a->comm == b->comm && a->dso == b->dso && a->sym == b->sym &&
	       a->addr == b->addr && a->tid == b->tid;
}

static struct hist_entry *hist_slot(struct hist_entry *slots, size_t size,
				    const struct hist_entry *key)
{
	size_t i = hist_hash(key) & (size - 1);

	while (slots[i].samples && !hist_same(&slots[i], key))
		i = (i + 1) & (size - 1);
	return &slots[i];
}

/* Count one sample for @key; returns its row. */
static struct hist_entry *hist_add(struct hist *hist,
				   const struct hist_entry *key)
{
	struct hist_entry *e;

	if (2 * (hist->used + 1) > hist->size) {
		size_t size = hist->size ? 2 * hist->size : 256, i;
		struct hist_entry *slots = xcalloc(size, sizeof(*slots));

		for (i = 0; i < hist->size; i++)
			if (hist->slots[i].samples)
				*hist_slot(slots, size, &hist->slots[i]) =
					hist->slots[i];
		free(hist->slots);
		hist->slots = slots;
		hist->size = size;
	}
	e = hist_slot(hist->slots, hist->size, key);
	if (!e->samples) {
		*e = *key;
		hist->used++;
	}
	e->samples++;
	return e;
}

static const char *or_empty(const char *s)
{
	return s ? s : "";
}

/* Most samples first; ties in a fixed order so output is stable. */
static int hist_cmp(const void *a, const void *b)
{
	const struct hist_entry *x = a, *y = b;
	int d;

	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	d = strcmp(or_empty(x->comm), or_empty(y->comm));
	if (!d)
		d = strcmp(or_empty(x->dso), or_empty(y->dso));
	if (!d)
		d = strcmp(or_empty(x->sym), or_empty(y->sym));
	if (!d && x->addr != y->addr)
		d = x->addr < y->addr ? -1 : 1;
	return d;
}

/* The rows of @hist, sorted; *nr gets their number. */
static struct hist_entry *hist_sorted(const struct hist *hist, size_t *nr)
{
	struct hist_entry *rows = xcalloc(hist->used, sizeof(*rows));
	size_t i, n = 0;

	for (i = 0; i < hist->size; i++)
		if (hist->slots[i].samples)
			rows[n++] = hist->slots[i];
	qsort(rows, n, sizeof(*rows), hist_cmp);
	*nr = n;
	return rows;
}

/* --- the report ------------------------------------------------------- */

struct report {
	const struct pmc_data_header *hdr;
	bool finished;			/* pmc-record wrote the sizes */
	__u64 nr_samples;
	__u64 nr_lost;
	__u64 nr_unknown;		/* records of types we do not know */
	__u64 first_time, last_time;
	struct hist symbols;		/* by comm, dso, symbol */
	struct hist threads;		/* by tid */
};

/* The table cells for where @s was taken. */
static void resolve_sample(const struct sample *s, struct hist_entry *key)
{
	const struct symbol *sym;
	const struct map *map;
	__u64 vaddr;

	if ((s->misc & PMC_EVENT_MISC_KERNEL) || s->ip >= KERNEL_START) {
		kernel_load();
		sym = find_symbol(&kernel_dso, s->ip);
		key->dso = kernel_dso.name;
		key->sym = sym ? sym->name : kernel_name;
		return;
	}
	map = find_map(s->pid, s->ip);
	if (!map) {
		key->dso = unknown_name;
		key->addr = s->ip;	/* shown in place of a symbol */
		return;
	}
	key->dso = map->dso->name;
	key->sym = unknown_name;
	dso_load(map->dso);
	if (map->dso->is_exec)
		vaddr = s->ip;
	else if (!dso_offset_to_vaddr(map->dso,
				      s->ip - map->start + map->pgoff, &vaddr))
		return;
	sym = find_symbol(map->dso, vaddr);
	if (sym)
		key->sym = sym->name;
}

static void add_sample(struct report *rep, const struct sample *s)
{
	struct hist_entry key = { 0 };
	const char *comm = find_comm(s->pid, s->tid);

	if (!rep->nr_samples || s->time < rep->first_time)
		rep->first_time = s->time;
	if (s->time > rep->last_time)
		rep->last_time = s->time;
	rep->nr_samples++;

	key.comm = comm;
	resolve_sample(s, &key);
	hist_add(&rep->symbols, &key);

	memset(&key, 0, sizeof(key));
	key.tid = s->tid;
	hist_add(&rep->threads, &key)->last_comm = comm;
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
	GROW(maps, nr_maps, cap_maps);
	maps[nr_maps++] = (struct map) {
		.pid = m.pid,
		.start = m.addr,
		.end = m.addr + m.len,
		.pgoff = m.pgoff,
		.dso = unmap ? NULL : find_dso(filename),
	};
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

/* Replay every record in file order; any inconsistency is fatal. */
static void replay(struct report *rep, const unsigned char *data,
		   __u64 len)
{
	__u32 record_type = rep->hdr->attr.record_type;
	__u64 base = rep->hdr->header_size;
	__u64 off;

	for (off = 0; off < len;) {
		const unsigned char *rec = data + off;
		__u64 where = base + off;
		struct pmc_event_header h;
		struct sample s;

		if (len - off < sizeof(h))
			die("truncated record header at offset %" PRIu64,
			    (uint64_t)where);
		memcpy(&h, rec, sizeof(h));
		if (h.size < sizeof(h) || h.size % 8)
			die("bad record size %u at offset %" PRIu64 " (corrupt file?)",
			    h.size, (uint64_t)where);
		if (h.size > len - off)
			die("record at offset %" PRIu64 " runs past the end of the data (truncated file?)",
			    (uint64_t)where);

		if (pmc_data_is_sample(&h)) {
			if (h.type != record_type)
				die("sample at offset %" PRIu64 " has type %#x, but record_type is %#x",
				    (uint64_t)where, h.type, record_type);
			if (!parse_sample(rec, h.size, record_type, &s))
				die("sample at offset %" PRIu64 " has %u bytes, which does not match record_type %#x",
				    (uint64_t)where, h.size, record_type);
			add_sample(rep, &s);
		} else if (h.type == PMC_EVENT_MMAP ||
			   h.type == PMC_EVENT_MUNMAP) {
			add_mmap(rec, h.size, where,
				 h.type == PMC_EVENT_MUNMAP);
		} else if (h.type == PMC_EVENT_COMM) {
			add_comm(rec, h.size, where);
		} else if (h.type == PMC_EVENT_LOST) {
			add_lost(rep, rec, h.size, where);
		} else {
			rep->nr_unknown++;
		}
		off += h.size;
	}
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
	buf = xrealloc(NULL, st.st_size);
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
	if (hdr->version != PMC_DATA_VERSION)
		die("unsupported file version %u (this pmc-report reads %u)",
		    hdr->version, PMC_DATA_VERSION);
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
static void check_counts(const struct report *rep)
{
	if (!rep->finished)
		return;
	if (rep->hdr->nr_samples != rep->nr_samples ||
	    rep->hdr->nr_lost != rep->nr_lost)
		die("corrupt file: the header counts %" PRIu64 " samples and %" PRIu64 " lost, the records %" PRIu64 " and %" PRIu64,
		    (uint64_t)rep->hdr->nr_samples, (uint64_t)rep->hdr->nr_lost,
		    (uint64_t)rep->nr_samples, (uint64_t)rep->nr_lost);
}

static double percent(__u64 part, __u64 whole)
{
	return whole ? 100.0 * part / whole : 0.0;
}

/* Whether the period counts nanoseconds, from the shared event table. */
static bool period_is_time(const struct pmc_data_header *hdr)
{
	enum pmc_event_unit unit;
	__u64 config;

	return !pmc_event_parse(hdr->event, &config, &unit) &&
	       config == hdr->attr.config && unit == PMC_UNIT_NSEC;
}

static void print_header(const struct report *rep)
{
	const struct pmc_data_header *hdr = rep->hdr;
	const struct pmc_attr *attr = &hdr->attr;

	printf("# pmc-report of %s\n", data_path);
	printf("# event: %s, a sample every %" PRIu64, hdr->event,
	       (uint64_t)attr->irq_period);
	if (period_is_time(hdr))
		printf(" ns (%.0f Hz)", attr->irq_period ?
		       1e9 / attr->irq_period : 0.0);
	else
		printf(" events");
	printf("%s%s\n", attr->exclude_kernel ? ", user only" : "",
	       attr->record_type & PMC_RECORD_CALLCHAIN ?
			", call chains recorded (not shown)" : "");
	printf("# command: '%s' (pid %u)\n", hdr->cmdline, hdr->pid);
	printf("# %" PRIu64 " samples", (uint64_t)rep->nr_samples);
	if ((attr->record_type & PMC_RECORD_TIME) && rep->nr_samples > 1)
		printf(" over %.3f s",
		       (rep->last_time - rep->first_time) / 1e9);
	putchar('\n');
	printf("# %" PRIu64 " samples lost", (uint64_t)rep->nr_lost);
	if (rep->nr_lost)
		printf(" (%.2f%% of all; use a longer period or more -m pages)",
		       percent(rep->nr_lost, rep->nr_lost + rep->nr_samples));
	putchar('\n');
	if (rep->nr_unknown)
		printf("# records of unknown type skipped: %" PRIu64 "\n",
		       (uint64_t)rep->nr_unknown);
}

/* What the rows after the first TOP_ROWS add up to, if any. */
static void print_rest(const struct hist_entry *rows, size_t nr,
		       __u64 total)
{
	__u64 rest = 0;
	size_t i;

	if (nr <= TOP_ROWS)
		return;
	for (i = TOP_ROWS; i < nr; i++)
		rest += rows[i].samples;
	printf("# ... %zu more rows: %" PRIu64 " samples (%.2f%%)\n",
	       nr - TOP_ROWS, (uint64_t)rest, percent(rest, total));
}

static void print_symbols(const struct report *rep)
{
	struct hist_entry *rows;
	size_t nr, i;

	rows = hist_sorted(&rep->symbols, &nr);
	printf("\n# %8s %9s  %-16s %-24s %s\n", "Overhead", "Samples",
	       "Command", "Shared Object", "Symbol");
	for (i = 0; i < nr && i < TOP_ROWS; i++) {
		const struct hist_entry *e = &rows[i];

		printf("  %7.2f%% %9" PRIu64 "  %-16s %-24s ",
		       percent(e->samples, rep->nr_samples),
		       (uint64_t)e->samples, e->comm, e->dso);
		if (e->sym)
			printf("%s\n", e->sym);
		else
			printf("0x%" PRIx64 "\n", (uint64_t)e->addr);
	}
	print_rest(rows, nr, rep->nr_samples);
	free(rows);
}

static void print_threads(const struct report *rep)
{
	struct hist_entry *rows;
	size_t nr, i;

	rows = hist_sorted(&rep->threads, &nr);
	printf("\n# %8s  %-16s %9s %9s\n", "Tid", "Command", "Samples",
	       "Overhead");
	for (i = 0; i < nr && i < TOP_ROWS; i++) {
		const struct hist_entry *e = &rows[i];

		printf("  %8u  %-16s %9" PRIu64 " %8.2f%%\n", e->tid,
		       e->last_comm, (uint64_t)e->samples,
		       percent(e->samples, rep->nr_samples));
	}
	print_rest(rows, nr, rep->nr_samples);
	free(rows);
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: pmc-report FILE\n"
		"\n"
		"Show where the samples in FILE, written by pmc-record, fell:\n"
		"the top symbols and the threads.\n");
}

int main(int argc, char **argv)
{
	struct report rep = { 0 };
	unsigned char *buf;
	__u64 size, len;

	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		usage(stdout);
		return 0;
	}
	if (argc != 2 || argv[1][0] == '-') {
		usage(stderr);
		return 2;
	}
	data_path = argv[1];

	buf = read_file(data_path, &size);
	len = check_header(&rep, buf, size);
	header_comm = intern(rep.hdr->comm[0] ? rep.hdr->comm : unknown_name);
	kernel_same_boot = same_boot(rep.hdr);
	replay(&rep, buf + rep.hdr->header_size, len);
	check_counts(&rep);

	print_header(&rep);
	if (!rep.nr_samples) {
		printf("\n# no samples\n");
		return 0;
	}
	print_symbols(&rep);
	print_threads(&rep);
	return 0;
}
