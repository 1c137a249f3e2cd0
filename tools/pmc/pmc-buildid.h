/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The GNU build-id of an ELF file, read from its PT_NOTE segments
 * without libelf, so that static pmc-record can record it and
 * pmc-report compare it with the file it finds.
 */
#ifndef _PMC_BUILDID_H
#define _PMC_BUILDID_H

#include <stddef.h>

/*
 * The build-id of the ELF file at @path into @id (room for @size
 * bytes). Return: its length, or 0 if the file cannot be read, is not
 * ELF of this machine's byte order, or has none that fits.
 */
size_t elf_build_id(const char *path, unsigned char *id, size_t size);

/* @id of @len bytes in hex, into @buf of at least 2 * @len + 1 bytes. */
char *build_id_hex(const unsigned char *id, size_t len, char *buf);

#endif /* _PMC_BUILDID_H */
