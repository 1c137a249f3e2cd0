// SPDX-License-Identifier: GPL-2.0
/*
 * Symbols and source lines for pmc-report; see pmc-symbols.h.
 *
 * libdwfl finds and reads each file, and any separate debug info; the
 * function symbols are then copied into a sorted table, because
 * libdwfl's own address lookup scans the whole symbol table each time,
 * and a report looks up every frame of every sample.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <elfutils/libdwfl.h>
#include <libiberty/demangle.h>
#ifdef HAVE_DEBUGINFOD
#include <elfutils/debuginfod.h>
#endif

#include "pmc-buildid.h"
#include "pmc-data.h"
#include "pmc-symbols.h"
#include "pmc-util.h"

struct symbol {
	__u64 addr;
	__u64 size;			/* 0: up to the next symbol */
	const char *name;		/* in the file's string table */
	const char *interned;		/* name, interned on first lookup */
	unsigned int rank;		/* among aliases, the highest wins */
};

struct symbol_table {
	struct symbol *syms;		/* sorted by address */
	size_t nr, cap;
};

/*
 * A mapped file. Addresses inside it are libdwfl's: its link-time
 * addresses plus @bias, which is where libdwfl placed it.
 */
struct dso {
	char *path;			/* as recorded */
	const char *name;		/* interned basename */
	char *file;			/* the file read, for objdump */
	bool loaded;			/* tried, successfully or not */
	Dwfl *dwfl;			/* NULL: the file could not be read */
	Dwfl_Module *mod;
	GElf_Addr bias;
	GElf_Phdr *loads;		/* the PT_LOAD segments */
	size_t nr_loads;
	struct symbol_table table;
	unsigned char build_id[PMC_DATA_BUILD_ID_MAX];	/* as recorded */
	size_t build_id_size;		/* 0: none recorded */
	bool kernel;			/* vmlinux: its code labels count */
	void *image;			/* no file: the recorded ELF image */
	size_t image_size;
};

static struct dso **dsos;
static size_t nr_dsos, cap_dsos;
static const char *symfs;
static char *debuginfo_path;

static struct symbol_table kernel_table;
static char *kallsyms;			/* what kernel_table's names point into */
static bool kernel_same_boot, kernel_loaded;
static const char *kernel_path;		/* --kallsyms, else NULL */
static const char *vmlinux_path;	/* --vmlinux, else NULL */
static struct dso *vmlinux;		/* --vmlinux, once it has loaded */

/* --- symbol tables ---------------------------------------------------- */

static void table_add(struct symbol_table *table, __u64 addr, __u64 size,
		      const char *name, unsigned int rank)
{
	GROW(table->syms, table->nr, table->cap);
	table->syms[table->nr++] = (struct symbol) {
		.addr = addr,
		.size = size,
		.name = name,
		.rank = rank,
	};
}

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

static void table_sort(struct symbol_table *table)
{
	qsort(table->syms, table->nr, sizeof(*table->syms), symbol_cmp);
}

/* libiberty's: GCC's and binutils' own demangler. */
const char *demangled(const char *name)
{
	char *plain = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI);
	const char *ret;

	if (!plain)
		return intern(name);
	ret = intern(plain);
	free(plain);
	return ret;
}

static const char *symbol_name(struct symbol *sym)
{
	if (!sym->interned)
		sym->interned = demangled(sym->name);
	return sym->interned;
}

static struct symbol *table_lookup(struct symbol_table *table, __u64 addr)
{
	size_t lo = 0, hi = table->nr;
	struct symbol *sym;

	/* The last symbol at or below addr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (table->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	sym = &table->syms[lo - 1];
	if (sym->size && addr - sym->addr >= sym->size)
		return NULL;
	return sym;
}

static const char *table_find(struct symbol_table *table, __u64 addr)
{
	struct symbol *sym = table_lookup(table, addr);

	return sym ? symbol_name(sym) : NULL;
}

/*
 * Among aliases, prefer one with fewer leading underscores (malloc over
 * __libc_malloc).
 */
static unsigned int plain_rank(const char *name)
{
	size_t under = strspn(name, "_");

	return 15 - (under < 15 ? under : 15);
}

/*
 * Prefer, among symbols at one address, a sized one, a global one, then
 * the plainest name.
 */
static unsigned int symbol_rank(const GElf_Sym *sym, const char *name)
{
	unsigned int rank = 0;

	if (sym->st_size)
		rank += 64;
	if (GELF_ST_BIND(sym->st_info) == STB_GLOBAL)
		rank += 32;
	else if (GELF_ST_BIND(sym->st_info) == STB_WEAK)
		rank += 16;
	return rank + plain_rank(name);
}

/* --- user files ------------------------------------------------------- */

/*
 * libdw looks for debuginfod by dlopen()ing libdebuginfod.so whenever a
 * debug file is not found locally. A static program cannot load a
 * shared library safely (it would bring in a second libc), so the
 * Makefile links with -Wl,--wrap=dlopen and this refuses every load.
 */
void *__wrap_dlopen(const char *file, int mode);
void *__wrap_dlopen(const char *file, int mode)
{
	(void)file;
	(void)mode;
	return NULL;
}

#ifdef HAVE_DEBUGINFOD
/*
 * A file that is not here, by the build-id pmc-record recorded, from
 * the servers in $DEBUGINFOD_URLS: the descriptor of the copy that
 * libdebuginfod caches and its path in *@found, or -1. Only in the
 * dynamic build (make STATIC=0): libdebuginfod is a shared library.
 */
static int dso_fetch(const struct dso *dso, char **found)
{
	static debuginfod_client *client;
	const char *urls = getenv("DEBUGINFOD_URLS");
	int fd;

	if (!dso->build_id_size || !urls || !*urls)
		return -1;
	if (!client)
		client = debuginfod_begin();
	if (!client)
		return -1;
	fd = debuginfod_find_executable(client, dso->build_id,
					dso->build_id_size, found);
	if (fd < 0)
		return -1;
	return fd;
}
#else
static int dso_fetch(const struct dso *dso, char **found)
{
	(void)dso;
	(void)found;
	return -1;
}
#endif

void symbols_set_symfs(const char *dir)
{
	char *abs = realpath(dir, NULL);

	symfs = dir;
	/*
	 * Debug files by name next to the file, then by build id and by
	 * name under DIR, then the host's. libdwfl only looks up build ids
	 * in absolute directories.
	 */
	free(debuginfo_path);
	debuginfo_path = must_asprintf("-:.debug:%s/usr/lib/debug:/usr/lib/debug",
				   abs ? abs : dir);
	free(abs);
}

static const Dwfl_Callbacks dwfl_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

/*
 * Open the file recorded as @dso->path, under the --symfs directory if
 * there is one; returns the descriptor and its path in *@found.
 */
static int dso_open(const struct dso *dso, char **found)
{
	int fd;

	if (!symfs) {
		*found = must_strdup(dso->path);
		return open(*found, O_RDONLY | O_CLOEXEC);
	}
	*found = must_asprintf("%s%s", symfs, dso->path);
	fd = open(*found, O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	free(*found);
	*found = must_asprintf("%s/%s", symfs, basename_of(dso->path));
	return open(*found, O_RDONLY | O_CLOEXEC);
}

static const char *dso_load_segments(struct dso *dso)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(dso->mod, &bias);
	GElf_Ehdr ehdr;
	size_t i, nr;

	if (!elf || !gelf_getehdr(elf, &ehdr) || elf_getphdrnum(elf, &nr))
		return dwfl_errmsg(-1);
	if (ehdr.e_type != ET_EXEC && ehdr.e_type != ET_DYN)
		return "neither an executable nor a shared object";
	dso->bias = bias;
	dso->loads = must_calloc(nr, sizeof(*dso->loads));
	for (i = 0; i < nr; i++) {
		GElf_Phdr *ph = &dso->loads[dso->nr_loads];

		if (gelf_getphdr(elf, i, ph) && ph->p_type == PT_LOAD)
			dso->nr_loads++;
	}
	return NULL;
}

/*
 * Whether section @shndx holds code. The kernel's entry points
 * (entry_SYSCALL_64, asm_exc_page_fault) are assembler labels, not
 * functions, and /proc/kallsyms names them too.
 */
static bool in_code(struct dso *dso, GElf_Word shndx)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(dso->mod, &bias);
	Elf_Scn *scn = elf ? elf_getscn(elf, shndx) : NULL;
	GElf_Shdr shdr;

	return scn && gelf_getshdr(scn, &shdr) &&
	       (shdr.sh_flags & SHF_EXECINSTR);
}

/* The function symbols, from wherever libdwfl found a symbol table. */
static const char *dso_load_symbols(struct dso *dso)
{
	int i, nr = dwfl_module_getsymtab(dso->mod);

	if (nr <= 0)
		return "no symbol table";
	for (i = 0; i < nr; i++) {
		GElf_Word shndx;
		GElf_Addr addr;
		GElf_Sym sym;
		const char *name = dwfl_module_getsym_info(dso->mod, i, &sym,
							   &addr, &shndx,
							   NULL, NULL);
		int type = GELF_ST_TYPE(sym.st_info);

		if (!name || !*name ||
		    (type != STT_FUNC && type != STT_GNU_IFUNC &&
		     !(dso->kernel && type == STT_NOTYPE &&
		       in_code(dso, shndx))))
			continue;
		if (shndx == SHN_UNDEF || !sym.st_value)
			continue;
		table_add(&dso->table, addr, sym.st_size, name,
			  symbol_rank(&sym, name));
	}
	table_sort(&dso->table);
	return NULL;
}

static const char *dso_read(struct dso *dso, const char *path, int fd)
{
	const char *err;

	dso->dwfl = dwfl_begin(&dwfl_callbacks);
	if (!dso->dwfl) {
		close(fd);
		return dwfl_errmsg(-1);
	}
	/* libdwfl owns fd from here on. */
	dso->mod = dwfl_report_offline(dso->dwfl, dso->name, path, fd);
	if (!dso->mod || dwfl_report_end(dso->dwfl, NULL, NULL))
		return dwfl_errmsg(-1);
	err = dso_load_segments(dso);
	if (!err)
		err = dso_load_symbols(dso);
	return err;
}

/* Warn if the file found at @path is not the one recorded. */
static void check_build_id(const struct dso *dso, const char *path)
{
	unsigned char id[PMC_DATA_BUILD_ID_MAX];
	char want[2 * PMC_DATA_BUILD_ID_MAX + 1], have[sizeof(want)];
	size_t size;

	if (!dso->build_id_size)
		return;
	size = elf_build_id(path, id, sizeof(id));
	if (size == dso->build_id_size && !memcmp(id, dso->build_id, size))
		return;
	warn("%s: not the file recorded as %s (build-id %s, recorded %s): its symbols may be wrong",
	     path, dso->path, size ? build_id_hex(id, size, have) : "none",
	     build_id_hex(dso->build_id, dso->build_id_size, want));
}

void dso_set_build_id(struct dso *dso, const unsigned char *id, size_t size)
{
	if (size > sizeof(dso->build_id))
		size = 0;
	memcpy(dso->build_id, id, size);
	dso->build_id_size = size;
}

void dso_set_image(struct dso *dso, const void *image, size_t size)
{
	free(dso->image);
	dso->image = must_alloc(malloc(size));
	memcpy(dso->image, image, size);
	dso->image_size = size;
}

/* A descriptor of an in-memory file holding @dso's recorded image. */
static int dso_open_image(const struct dso *dso)
{
	int fd = memfd_create(dso->path, MFD_CLOEXEC);

	if (fd < 0)
		return -1;
	if (write(fd, dso->image, dso->image_size) != (ssize_t)dso->image_size ||
	    lseek(fd, 0, SEEK_SET)) {
		close(fd);
		return -1;
	}
	return fd;
}

static void dso_load(struct dso *dso)
{
	const char *err;
	char *path;
	int fd;

	if (dso->loaded)
		return;
	dso->loaded = true;
	/* "[vdso]" and the like have no file, but may have an image. */
	if (dso->path[0] != '/' && !dso->image)
		return;
	if (dso->image) {
		fd = dso_open_image(dso);
		path = must_strdup(dso->path);
	} else {
		fd = dso_open(dso, &path);
	}
	if (fd < 0 && !dso->image) {
		int err = errno;
		char *fetched;

		fd = dso_fetch(dso, &fetched);
		if (fd >= 0) {
			free(path);
			path = fetched;
		}
		errno = err;
	}
	if (fd < 0) {
		warn("%s: no symbols: %s%s%s", dso->path, strerror(errno),
		     symfs ? " under " : "", symfs ? symfs : "");
		free(path);
		return;
	}
	check_build_id(dso, path);
	err = dso_read(dso, path, fd);
	if (err) {
		warn("%s: no symbols: %s", path, err);
		/* Source lines need the module too: forget it. */
		if (dso->dwfl)
			dwfl_end(dso->dwfl);
		dso->dwfl = NULL;
		dso->mod = NULL;
		free(dso->loads);
		dso->loads = NULL;
		dso->nr_loads = 0;
	} else if (!dso->image) {
		dso->file = path;	/* for objdump and the unwinder */
		return;
	}
	free(path);
}

struct dso *dso_find(const char *path)
{
	struct dso *dso;
	size_t i;

	for (i = 0; i < nr_dsos; i++)
		if (!strcmp(dsos[i]->path, path))
			return dsos[i];
	dso = must_calloc(1, sizeof(*dso));
	dso->path = must_strdup(path);
	dso->name = intern(basename_of(path));
	GROW(dsos, nr_dsos, cap_dsos);
	dsos[nr_dsos++] = dso;
	return dso;
}

int dso_open_elf(struct dso *dso)
{
	dso_load(dso);
	if (!dso->dwfl)
		return -1;
	if (dso->image)
		return dso_open_image(dso);
	return open(dso->file, O_RDONLY | O_CLOEXEC);
}

const char *dso_name(const struct dso *dso)
{
	return dso->name;
}

/* The PT_LOAD segment that holds file offset @off, if any. */
static const GElf_Phdr *dso_segment(struct dso *dso, __u64 off)
{
	size_t i;

	dso_load(dso);
	for (i = 0; i < dso->nr_loads; i++) {
		const GElf_Phdr *ph = &dso->loads[i];

		if (off >= ph->p_offset && off - ph->p_offset < ph->p_filesz)
			return ph;
	}
	return NULL;
}

/* The libdwfl address of file offset @off; false if no segment holds it. */
static bool dso_address(struct dso *dso, __u64 off, GElf_Addr *addr)
{
	const GElf_Phdr *ph = dso_segment(dso, off);

	if (ph)
		*addr = off - ph->p_offset + ph->p_vaddr + dso->bias;
	return ph;
}

const char *dso_symbol(struct dso *dso, __u64 off)
{
	GElf_Addr addr;

	if (!dso_address(dso, off, &addr))
		return NULL;
	return table_find(&dso->table, addr);
}

const char *dso_srcline(struct dso *dso, __u64 off)
{
	const char *file;
	Dwfl_Line *line;
	GElf_Addr addr;
	int lineno;

	if (!dso_address(dso, off, &addr))
		return NULL;
	line = dwfl_module_getsrc(dso->mod, addr);
	file = line ? dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL) :
		      NULL;
	if (!file || lineno <= 0)
		return NULL;
	return intern_fmt("%s:%d", basename_of(file), lineno);
}

bool dso_function(struct dso *dso, __u64 off, struct dso_function *fn)
{
	const struct symbol_table *table = &dso->table;
	const struct symbol *sym;
	const GElf_Phdr *ph;
	GElf_Addr addr;

	if (!dso_address(dso, off, &addr))
		return false;
	sym = table_lookup(&dso->table, addr);
	if (!sym)
		return false;
	fn->file = dso->file;
	fn->addr = addr - dso->bias;
	fn->start = sym->addr - dso->bias;
	/* An unsized symbol ends where the next one, or its segment, does. */
	if (sym->size) {
		fn->end = fn->start + sym->size;
	} else if (sym + 1 < table->syms + table->nr) {
		fn->end = sym[1].addr - dso->bias;
	} else {
		ph = dso_segment(dso, off);
		fn->end = ph->p_vaddr + ph->p_memsz;
	}
	return true;
}

struct dso *dso_defining(const char *name)
{
	const char *want = demangled(name);
	size_t i, j;

	for (i = 0; i < nr_dsos; i++) {
		struct symbol_table *table = &dsos[i]->table;

		for (j = 0; j < table->nr; j++)
			if (symbol_name(&table->syms[j]) == want)
				return dsos[i];
	}
	return NULL;
}

/* --- the kernel ------------------------------------------------------- */

void kernel_symbols_init(bool same_boot, const char *kallsyms_path,
			 const char *vmlinux_file)
{
	kernel_same_boot = same_boot;
	kernel_path = kallsyms_path;
	vmlinux_path = vmlinux_file;
}

/* The kernel's ELF image, read as a user file is (at its link address). */
static void vmlinux_load(void)
{
	struct dso *dso = must_calloc(1, sizeof(*dso));
	const char *err;
	int fd;

	dso->path = must_strdup(vmlinux_path);
	dso->name = intern(basename_of(vmlinux_path));
	dso->kernel = true;
	fd = open(vmlinux_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		warn("%s: %s: kernel symbols not resolved", vmlinux_path,
		     strerror(errno));
		return;
	}
	err = dso_read(dso, vmlinux_path, fd);
	if (err) {
		warn("%s: %s: kernel symbols not resolved", vmlinux_path, err);
		return;
	}
	vmlinux = dso;
}

/* Read all of a file that stat() cannot size, like /proc/kallsyms. */
static char *read_whole(FILE *f)
{
	size_t len = 0, cap = 1 << 20;
	char *buf = must_realloc(NULL, cap + 1);
	size_t n;

	while ((n = fread(buf + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len == cap) {
			cap *= 2;
			buf = must_realloc(buf, cap + 1);
		}
	}
	buf[len] = '\0';
	return buf;
}

/*
 * Kernel text symbols from the file given, else from /proc/kallsyms if
 * it is readable and shows addresses (kptr_restrict shows zeros).
 */
static void kernel_load(void)
{
	bool nonzero = false;
	char *line, *next;
	FILE *f;

	if (kernel_loaded)
		return;
	kernel_loaded = true;
	if (vmlinux_path) {
		vmlinux_load();
		return;
	}
	if (!kernel_path && !kernel_same_boot) {
		warn("recorded in another boot: kernel symbols not resolved (--kallsyms takes a copy of its /proc/kallsyms, --vmlinux its kernel)");
		return;
	}
	f = fopen(kernel_path ? kernel_path : "/proc/kallsyms", "re");
	if (!f) {
		if (kernel_path)
			warn("%s: %s: kernel symbols not resolved",
			     kernel_path, strerror(errno));
		return;
	}
	kallsyms = read_whole(f);
	fclose(f);

	for (line = kallsyms; *line; line = next) {
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
		/* default_idle, not the __cpuidle_text_start label at it */
		table_add(&kernel_table, addr, 0, name,
			  (type == 'T' ? 32 : type == 't' ? 16 : 0) +
			  plain_rank(name));
	}
	if (!nonzero && kernel_path)
		warn("%s: no kernel text symbols with addresses", kernel_path);
	if (!nonzero)
		kernel_table.nr = 0;
	table_sort(&kernel_table);
}

const char *kernel_symbol(__u64 addr)
{
	kernel_load();
	if (vmlinux)
		return table_find(&vmlinux->table, addr + vmlinux->bias);
	return table_find(&kernel_table, addr);
}
