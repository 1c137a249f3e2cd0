/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Symbols and source lines for pmc-report. User code resolves through
 * the mapped file with elfutils' libdwfl: function symbols of .symtab,
 * else .dynsym, or of separate debug info found by build id or
 * .gnu_debuglink; source lines from its DWARF. Kernel code resolves
 * through /proc/kallsyms or a System.map.
 */
#ifndef _PMC_SYMBOLS_H
#define _PMC_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct dso;

/*
 * Look a recorded path P up as DIR/P, then as DIR/basename(P), as perf
 * --symfs does: a file recorded in a VM resolves on the host. Call
 * before the first dso_symbol() or dso_srcline().
 */
void symbols_set_symfs(const char *dir);

/* The file recorded as @path: one struct dso per path, read on first use. */
struct dso *dso_find(const char *path);

/*
 * The build-id @path had when it was recorded (a PMC_DATA_BUILD_ID
 * record): when its symbols are read, a file found with another one is
 * warned about. Call before the first dso_symbol() or dso_srcline().
 */
void dso_set_build_id(struct dso *dso, const unsigned char *id, size_t size);
/* The ELF image behind a mapping without a file ("[vdso]"), copied. */
void dso_set_image(struct dso *dso, const void *image, size_t size);

/*
 * A new descriptor of the ELF file whose symbols @dso has (its recorded
 * image for "[vdso]"), for a reader of its own; -1 if it has none.
 */
int dso_open_elf(struct dso *dso);

/* The interned basename of its recorded path, for tables. */
const char *dso_name(const struct dso *dso);

/*
 * @name as its programmer wrote it, interned: C++ and Rust symbols
 * demangled, other names as they are.
 */
const char *demangled(const char *name);

/*
 * The function at file offset @off of @dso, and the source line there
 * ("pmc-burn.c:42"), interned; NULL if the file does not say.
 */
const char *dso_symbol(struct dso *dso, __u64 off);
const char *dso_srcline(struct dso *dso, __u64 off);

/* Where a function lies in its file, for a disassembler. */
struct dso_function {
	const char *file;		/* the file read; NULL: an image */
	__u64 start, end;		/* [start, end), link-time addresses */
	__u64 addr;			/* the link-time address asked about */
};

/*
 * The function that dso_symbol() finds at file offset @off of @dso;
 * false if none.
 */
bool dso_function(struct dso *dso, __u64 off, struct dso_function *fn);

/*
 * A file whose symbols were read (for a sample) that has a function
 * @name, demangled or not; NULL if none.
 */
struct dso *dso_defining(const char *name);

/*
 * Kernel symbols come from @vmlinux if it is not NULL, the ELF image of
 * a kernel without KASLR (so that it ran at its link address); else
 * from @kallsyms_path if it is not NULL, a file in the format of
 * /proc/kallsyms or System.map that the user says fits the recording;
 * else from /proc/kallsyms, which fits only a recording of this boot
 * (KASLR moves the kernel): unless @same_boot, kernel_symbol() warns
 * once and resolves nothing.
 */
void kernel_symbols_init(bool same_boot, const char *kallsyms_path,
			 const char *vmlinux);

/* The kernel function at @addr, interned; NULL if unknown. */
const char *kernel_symbol(__u64 addr);

#endif /* _PMC_SYMBOLS_H */
