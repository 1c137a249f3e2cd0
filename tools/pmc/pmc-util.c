// SPDX-License-Identifier: GPL-2.0
/* Helpers shared by the files of pmc-report and pmc-top; see pmc-util.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmc-util.h"

bool progress_on_line;

void progress_clear(void)
{
	if (progress_on_line)
		fprintf(stderr, "\r%*s\r", 60, "");
	progress_on_line = false;
}

void warn(const char *fmt, ...)
{
	va_list ap;

	progress_clear();
	fprintf(stderr, "%s: warning: ", program_invocation_short_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void *must_alloc(void *ptr)
{
	if (!ptr) {
		fprintf(stderr, "%s: out of memory\n",
			program_invocation_short_name);
		exit(1);
	}
	return ptr;
}

void *must_realloc(void *ptr, size_t size)
{
	return must_alloc(realloc(ptr, size ? size : 1));
}

void *must_calloc(size_t nmemb, size_t size)
{
	return must_alloc(calloc(nmemb ? nmemb : 1, size));
}

char *must_strdup(const char *s)
{
	size_t len = strlen(s) + 1;

	return memcpy(must_realloc(NULL, len), s, len);
}

static char *xvasprintf(const char *fmt, va_list ap)
{
	char *buf;

	return must_alloc(vasprintf(&buf, fmt, ap) < 0 ? NULL : buf);
}

char *must_asprintf(const char *fmt, ...)
{
	va_list ap;
	char *buf;

	va_start(ap, fmt);
	buf = xvasprintf(fmt, ap);
	va_end(ap);
	return buf;
}

/* FNV-1a: short strings, no need for anything stronger. */
static uint64_t string_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ULL;
	return h;
}

/* An open-addressing table of the interned strings, at most half full. */
static const char **strings;
static size_t strings_size, strings_used;

static const char **string_slot(const char **table, size_t size,
				const char *s)
{
	size_t i = string_hash(s) & (size - 1);

	while (table[i] && strcmp(table[i], s))
		i = (i + 1) & (size - 1);
	return &table[i];
}

const char *intern(const char *s)
{
	const char **slot;

	if (2 * (strings_used + 1) > strings_size) {
		size_t size = strings_size ? 2 * strings_size : 1024, i;
		const char **table = must_calloc(size, sizeof(*table));

		for (i = 0; i < strings_size; i++)
			if (strings[i])
				*string_slot(table, size, strings[i]) =
					strings[i];
		free(strings);
		strings = table;
		strings_size = size;
	}
	slot = string_slot(strings, strings_size, s);
	if (!*slot) {
		*slot = must_strdup(s);
		strings_used++;
	}
	return *slot;
}

const char *intern_fmt(const char *fmt, ...)
{
	const char *s;
	va_list ap;
	char *buf;

	va_start(ap, fmt);
	buf = xvasprintf(fmt, ap);
	va_end(ap);
	s = intern(buf);
	free(buf);
	return s;
}

void strbuf_addf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	int len;

	va_start(ap, fmt);
	len = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	must_alloc(len < 0 ? NULL : sb);
	if (sb->len + len + 1 > sb->cap) {
		sb->cap = 2 * (sb->len + len + 1);
		sb->buf = must_realloc(sb->buf, sb->cap);
	}
	va_start(ap, fmt);
	vsnprintf(sb->buf + sb->len, len + 1, fmt, ap);
	va_end(ap);
	sb->len += len;
}

void strbuf_setlen(struct strbuf *sb, size_t len)
{
	if (len < sb->len) {
		sb->len = len;
		sb->buf[len] = '\0';
	}
}

const char *basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}
