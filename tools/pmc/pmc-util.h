/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the files of pmc-report and pmc-top: allocation
 * that cannot fail, growing arrays, interned strings and warnings, which
 * name the program that prints them.
 */
#ifndef _PMC_UTIL_H
#define _PMC_UTIL_H

#include <stdbool.h>
#include <stddef.h>

void warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A progress line is on stderr: warn() clears it first. */
extern bool progress_on_line;
/* Erase the progress line, if one is shown. */
void progress_clear(void);

/* These exit with a message instead of returning NULL. */
void *must_alloc(void *ptr);	/* @ptr, from anything that allocates */
void *must_realloc(void *ptr, size_t size);
void *must_calloc(size_t nmemb, size_t size);
char *must_strdup(const char *s);
char *must_asprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Make room for one more element in a growing array. */
#define GROW(arr, nr, cap)						\
	do {								\
		if ((nr) == (cap)) {					\
			(cap) = (cap) ? 2 * (cap) : 16;			\
			(arr) = must_realloc((arr), (cap) * sizeof(*(arr))); \
		}							\
	} while (0)

/*
 * The one copy of string @s, kept for the life of the program: equal
 * interned strings are equal pointers, so they compare and hash as such.
 */
const char *intern(const char *s);
const char *intern_fmt(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

/* A string that grows as it is written. */
struct strbuf {
	char *buf;			/* NUL-terminated once written to */
	size_t len, cap;
};

void strbuf_addf(struct strbuf *sb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void strbuf_setlen(struct strbuf *sb, size_t len);

/* The last component of @path ("a/b" -> "b", "a/" -> "a/"). */
const char *basename_of(const char *path);

#endif /* _PMC_UTIL_H */
