// SPDX-License-Identifier: GPL-2.0
/*
 * pmc-report --annotate; see pmc-annotate.h.
 *
 * objdump disassembles, as it does for perf annotate: the function's
 * address range only, with -l -S for the source lines where the file
 * has DWARF and -C for C++ names. Its lines are copied with a percent
 * column before them. An instruction gets the samples from its address
 * up to the next instruction's, as perf counts them, so that an IP in
 * the middle of one (a skewed or made-up one) still counts.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "pmc-annotate.h"
#include "pmc-symbols.h"
#include "pmc-util.h"

/* The samples at one IP of the function. */
struct ip_count {
	struct dso *dso;
	__u64 off;			/* in the file */
	__u64 samples;
	struct dso_function fn;		/* where it is, once all are in */
};

static const char *target;		/* demangled, interned */
static struct ip_count *ips;		/* by dso, then off */
static size_t nr_ips, cap_ips;
static __u64 kernel_samples;		/* of a kernel function of the name */

void annotate_init(const char *symbol)
{
	target = demangled(symbol);
}

static bool ip_before(const struct ip_count *ip, const struct dso *dso,
		      __u64 off)
{
	if (ip->dso != dso)
		return (uintptr_t)ip->dso < (uintptr_t)dso;
	return ip->off < off;
}

void annotate_add(struct dso *dso, __u64 off, const char *sym)
{
	size_t lo = 0, hi = nr_ips;

	if (sym != target)
		return;
	if (!dso) {
		kernel_samples++;
		return;
	}
	/* A function has few distinct IPs: a sorted array will do. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ip_before(&ips[mid], dso, off))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < nr_ips && ips[lo].dso == dso && ips[lo].off == off) {
		ips[lo].samples++;
		return;
	}
	GROW(ips, nr_ips, cap_ips);
	memmove(&ips[lo + 1], &ips[lo], (nr_ips - lo) * sizeof(*ips));
	ips[lo] = (struct ip_count) { .dso = dso, .off = off, .samples = 1 };
	nr_ips++;
}

/* --- objdump's output ------------------------------------------------- */

enum line_kind {
	LINE_OTHER,			/* a heading: "<hot_loop>:", "spin():" */
	LINE_INSN,			/* "  401665:\tpush   %rbp" */
	LINE_MARKER,			/* -l: "/src/pmc-burn.c:65" */
	LINE_SOURCE,			/* -S: source lines up to a marker's */
};

struct asm_line {
	char *text;
	enum line_kind kind;
	__u64 addr;			/* LINE_INSN */
	__u64 samples;			/* LINE_INSN */
	int lineno;			/* LINE_MARKER, LINE_SOURCE */
};

struct listing {
	struct asm_line *lines;
	size_t nr, cap;
	bool source;			/* -S found the source */
};

/* An instruction of [@fn->start, @fn->end): its address in *@addr. */
static bool parse_insn(const char *text, const struct dso_function *fn,
		       __u64 *addr)
{
	char *end;

	errno = 0;
	*addr = strtoull(text, &end, 16);
	/* strtoull() takes a sign: a source line could start with one. */
	return !errno && end != text && (*text == ' ' || isxdigit(*text)) &&
	       end[0] == ':' && end[1] == '\t' &&
	       *addr >= fn->start && *addr < fn->end;
}

/* The function's heading, "0000000000401665 <hot_loop>:". */
static bool is_heading(const char *text)
{
	size_t len = strlen(text);
	char *end;

	strtoull(text, &end, 16);
	return isxdigit(*text) && !strncmp(end, " <", 2) && len > 2 &&
	       !strcmp(text + len - 2, ">:");
}

/* "file:line" or "file:line (discriminator N)": the line in *@lineno. */
static bool parse_marker(const char *text, int *lineno)
{
	const char *colon = strrchr(text, ':');
	char *end;
	long line;

	if (!colon || colon == text || strchr(" \t", text[0]))
		return false;
	line = strtol(colon + 1, &end, 10);
	if (end == colon + 1 || line <= 0 || line > INT32_MAX ||
	    (*end && strncmp(end, " (discriminator ", 16)))
		return false;
	*lineno = line;
	return true;
}

static enum line_kind listing_add(struct listing *l, const char *text,
				  const struct dso_function *fn,
				  bool in_source)
{
	struct asm_line line = { .text = must_strdup(text) };

	if (parse_insn(text, fn, &line.addr))
		line.kind = LINE_INSN;
	else if (parse_marker(text, &line.lineno))
		line.kind = LINE_MARKER;
	else if (in_source)
		line.kind = LINE_SOURCE;
	GROW(l->lines, l->nr, l->cap);
	l->lines[l->nr++] = line;
	return line.kind;
}

/*
 * Number the source lines: objdump -S prints those from after the last
 * one it printed of the file (or a few before) up to the marker's line,
 * in order.
 */
static void number_source(struct listing *l)
{
	size_t i, j, n;

	for (i = 0; i < l->nr; i = j) {
		for (j = i + 1; j < l->nr && l->lines[j].kind == LINE_SOURCE;)
			j++;
		if (l->lines[i].kind != LINE_MARKER)
			continue;
		n = j - i - 1;
		l->source |= n > 0;
		while (n--)
			l->lines[j - 1 - n].lineno = l->lines[i].lineno - n;
	}
}

/*
 * objdump's listing of @fn, from the function's heading on (objdump's
 * own comes before); returns NULL, or why there is none.
 */
static const char *run_objdump(const struct dso_function *fn,
			       struct listing *l)
{
	const char *objdump = getenv("OBJDUMP") ?: "objdump";
	char start[40], stop[40], *line = NULL;
	char *argv[] = {
		(char *)objdump, "-d", "-l", "-S", "-C", "--no-show-raw-insn",
		start, stop, (char *)fn->file, NULL
	};
	posix_spawn_file_actions_t actions;
	bool listed = false, in_source = false;
	enum line_kind kind;
	int fds[2], err, status;
	size_t size = 0;
	ssize_t len;
	FILE *out;
	pid_t pid;

	snprintf(start, sizeof(start), "--start-address=%#" PRIx64,
		 (uint64_t)fn->start);
	snprintf(stop, sizeof(stop), "--stop-address=%#" PRIx64,
		 (uint64_t)fn->end);
	if (pipe2(fds, O_CLOEXEC))
		return must_asprintf("pipe: %s", strerror(errno));
	posix_spawn_file_actions_init(&actions);
	posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
	err = posix_spawnp(&pid, objdump, &actions, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&actions);
	close(fds[1]);
	if (err) {
		close(fds[0]);
		return must_asprintf("cannot run %s: %s", objdump,
				     strerror(err));
	}
	out = must_alloc(fdopen(fds[0], "r"));
	while ((len = getline(&line, &size, out)) >= 0) {
		if (len && line[len - 1] == '\n')
			line[len - 1] = '\0';
		listed |= is_heading(line);
		if (!listed)
			continue;
		/* -S's lines come between a marker and its instruction. */
		kind = listing_add(l, line, fn, in_source);
		if (kind == LINE_MARKER || kind == LINE_INSN)
			in_source = kind == LINE_MARKER;
	}
	free(line);
	fclose(out);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return must_asprintf("%s failed on %s", objdump, fn->file);
	/* The blank line that ends objdump's function. */
	while (l->nr && !l->lines[l->nr - 1].text[0])
		free(l->lines[--l->nr].text);
	number_source(l);
	return NULL;
}

/* --- printing --------------------------------------------------------- */

/*
 * Give each instruction of @l the samples of @ip[0..@nr), sorted by
 * address, from its address up to the next one's; returns the samples
 * that none holds.
 */
static __u64 count_samples(struct listing *l, const struct ip_count *ip,
			   size_t nr)
{
	__u64 outside = 0;
	size_t i, k;

	for (i = 0; i < l->nr; i++) {
		struct asm_line *insn = &l->lines[i];

		if (insn->kind != LINE_INSN)
			continue;
		for (; nr && ip->fn.addr < insn->addr; ip++, nr--)
			outside += ip->samples;
		for (k = i + 1; k < l->nr && l->lines[k].kind != LINE_INSN;)
			k++;
		for (; nr && (k == l->nr || ip->fn.addr < l->lines[k].addr);
		     ip++, nr--)
			insn->samples += ip->samples;
	}
	for (; nr; ip++, nr--)
		outside += ip->samples;
	return outside;
}

/* A line as perf annotate --stdio prints it. */
static void print_line(const struct asm_line *line, __u64 total,
		       bool source)
{
	const char *text = line->text;
	const char *tab;

	switch (line->kind) {
	case LINE_INSN:
		tab = strchr(text, '\t');
		printf("%8.2f : %.*s %s\n", 100.0 * line->samples / total,
		       (int)(tab - text), text, tab + 1);
		break;
	case LINE_SOURCE:
		text += strspn(text, " \t");
		if (*text)
			printf("%9s: %-7d%s\n", "", line->lineno, text);
		else
			printf("%9s:\n", "");
		break;
	case LINE_MARKER:
		/* Without the source, where each line's code starts. */
		if (!source)
			printf("%9s: %-7s%s\n", "", "", basename_of(text));
		break;
	case LINE_OTHER:
		printf("%9s: %-7s%s\n", "", "", text);
		break;
	}
}

/* The function of @ip[0..@nr), of one file, sorted by address. */
static const char *annotate_function(const struct ip_count *ip, size_t nr,
				     const char *event)
{
	struct listing l = { 0 };
	__u64 total = 0, outside;
	const char *err;
	size_t i;
	int width;

	if (!ip->fn.file)
		return must_asprintf("%s: no file to disassemble %s from",
				     dso_name(ip->dso), target);
	err = run_objdump(&ip->fn, &l);
	if (!err && !l.nr)
		err = must_asprintf("objdump printed nothing of %s in %s",
				    target, ip->fn.file);
	if (err)
		return err;
	for (i = 0; i < nr; i++)
		total += ip[i].samples;
	outside = count_samples(&l, ip, nr);
	if (outside)
		warn("%" PRIu64 " samples in %s are in none of the instructions objdump printed",
		     (uint64_t)outside, target);

	width = printf(" Percent |\tSource code & Disassembly of %s for %s (%" PRIu64 " samples)\n",
		       dso_name(ip->dso), event, (uint64_t)total);
	/* Dashes to its end: the tab after the 10th column goes to the 16th. */
	for (width += 4; width > 0; width--)
		putchar('-');
	putchar('\n');
	for (i = 0; i < l.nr; i++) {
		print_line(&l.lines[i], total, l.source);
		free(l.lines[i].text);
	}
	free(l.lines);
	return NULL;
}

static int fn_cmp(const void *a, const void *b)
{
	const struct ip_count *x = a, *y = b;

	if (x->dso != y->dso)
		return (uintptr_t)x->dso < (uintptr_t)y->dso ? -1 : 1;
	if (x->fn.start != y->fn.start)
		return x->fn.start < y->fn.start ? -1 : 1;
	return x->fn.addr < y->fn.addr ? -1 : x->fn.addr > y->fn.addr;
}

/* A function of the name: a run of ips[] of one file and start. */
struct function_run {
	size_t first, nr;
	__u64 samples;
	const char *dso;
};

static int run_cmp(const void *a, const void *b)
{
	const struct function_run *x = a, *y = b;

	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return strcmp(x->dso, y->dso);
}

/* Why no sample of @event is in the function. */
static const char *no_samples(const char *event)
{
	struct dso *dso;

	if (kernel_samples)
		return must_asprintf("%s is a kernel function: --annotate reads user code only",
				     target);
	dso = dso_defining(target);
	if (!dso)
		return must_asprintf("no function '%s' in the files sampled",
				     target);
	return must_asprintf("no %s samples in %s (%s)", event, target,
			     dso_name(dso));
}

const char *annotate_print(const char *event)
{
	struct function_run *runs = NULL;
	size_t nr_runs = 0, cap_runs = 0, i;
	const char *err = NULL;

	if (!nr_ips)
		return no_samples(event);

	/* Its samples resolved there: it is found again. */
	for (i = 0; i < nr_ips; i++)
		dso_function(ips[i].dso, ips[i].off, &ips[i].fn);
	qsort(ips, nr_ips, sizeof(*ips), fn_cmp);
	for (i = 0; i < nr_ips; i++) {
		if (!i || ips[i - 1].dso != ips[i].dso ||
		    ips[i - 1].fn.start != ips[i].fn.start) {
			GROW(runs, nr_runs, cap_runs);
			runs[nr_runs++] = (struct function_run) {
				.first = i,
				.dso = dso_name(ips[i].dso),
			};
		}
		runs[nr_runs - 1].nr++;
		runs[nr_runs - 1].samples += ips[i].samples;
	}
	qsort(runs, nr_runs, sizeof(*runs), run_cmp);
	for (i = 0; i < nr_runs && !err; i++) {
		if (i)
			putchar('\n');
		err = annotate_function(&ips[runs[i].first], runs[i].nr,
					event);
	}
	free(runs);
	return err;
}
