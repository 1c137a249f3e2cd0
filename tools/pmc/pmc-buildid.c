// SPDX-License-Identifier: GPL-2.0
/* GNU build-ids of ELF files; see pmc-buildid.h. */
#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pmc-buildid.h"

#define NOTES_MAX	(64 << 10)	/* a note segment bigger is not read */

#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define ELFDATA_HOST	ELFDATA2MSB
#else
#define ELFDATA_HOST	ELFDATA2LSB
#endif

/*
 * The build-id in the notes at @p, @len bytes, each field padded to
 * @align (4, or 8 in a segment aligned so); 0 if none fits @size.
 */
static size_t find_in_notes(const unsigned char *p, size_t len, size_t align,
			    unsigned char *id, size_t size)
{
	while (len >= sizeof(Elf64_Nhdr)) {
		Elf64_Nhdr n;	/* the same layout as Elf32_Nhdr */
		size_t name, desc;

		memcpy(&n, p, sizeof(n));
		name = ((size_t)n.n_namesz + align - 1) & ~(align - 1);
		desc = ((size_t)n.n_descsz + align - 1) & ~(align - 1);
		if (name > len - sizeof(n) || desc > len - sizeof(n) - name)
			return 0;
		if (n.n_type == NT_GNU_BUILD_ID && n.n_namesz == 4 &&
		    !memcmp(p + sizeof(n), "GNU", 4) && n.n_descsz &&
		    n.n_descsz <= size) {
			memcpy(id, p + sizeof(n) + name, n.n_descsz);
			return n.n_descsz;
		}
		p += sizeof(n) + name + desc;
		len -= sizeof(n) + name + desc;
	}
	return 0;
}

/* Program header @i of a 32- or 64-bit file, as a 64-bit one. */
static int read_phdr(int fd, const unsigned char *ident, uint64_t phoff,
		     unsigned int i, Elf64_Phdr *ph)
{
	if (ident[EI_CLASS] == ELFCLASS64)
		return pread(fd, ph, sizeof(*ph), phoff + i * sizeof(*ph)) ==
		       sizeof(*ph) ? 0 : -1;
	{
		Elf32_Phdr p32;

		if (pread(fd, &p32, sizeof(p32), phoff + i * sizeof(p32)) !=
		    sizeof(p32))
			return -1;
		ph->p_type = p32.p_type;
		ph->p_offset = p32.p_offset;
		ph->p_filesz = p32.p_filesz;
		ph->p_align = p32.p_align;
	}
	return 0;
}

size_t elf_build_id(const char *path, unsigned char *id, size_t size)
{
	union { Elf64_Ehdr e64; Elf32_Ehdr e32; } eh;
	unsigned int i, phnum;
	uint64_t phoff;
	size_t found = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	if (pread(fd, &eh, sizeof(eh), 0) < (ssize_t)sizeof(eh.e32) ||
	    memcmp(eh.e64.e_ident, ELFMAG, SELFMAG) ||
	    eh.e64.e_ident[EI_DATA] != ELFDATA_HOST)
		goto out;
	if (eh.e64.e_ident[EI_CLASS] == ELFCLASS64) {
		if (pread(fd, &eh, sizeof(eh.e64), 0) != sizeof(eh.e64))
			goto out;
		phoff = eh.e64.e_phoff;
		phnum = eh.e64.e_phnum;
	} else if (eh.e64.e_ident[EI_CLASS] == ELFCLASS32) {
		phoff = eh.e32.e_phoff;
		phnum = eh.e32.e_phnum;
	} else {
		goto out;
	}
	for (i = 0; i < phnum && !found; i++) {
		unsigned char *notes;
		Elf64_Phdr ph;

		if (read_phdr(fd, eh.e64.e_ident, phoff, i, &ph))
			break;
		if (ph.p_type != PT_NOTE || !ph.p_filesz ||
		    ph.p_filesz > NOTES_MAX)
			continue;
		notes = malloc(ph.p_filesz);
		if (notes && pread(fd, notes, ph.p_filesz, ph.p_offset) ==
			     (ssize_t)ph.p_filesz)
			found = find_in_notes(notes, ph.p_filesz,
					      ph.p_align == 8 ? 8 : 4, id, size);
		free(notes);
	}
out:
	close(fd);
	return found;
}

char *build_id_hex(const unsigned char *id, size_t len, char *buf)
{
	size_t i;

	for (i = 0; i < len; i++)
		sprintf(buf + 2 * i, "%02x", id[i]);
	buf[2 * len] = '\0';
	return buf;
}
