// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Event lists: parse "{cycles,instructions}:u,task-clock" and open the
 * groups it names.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>

#include "libpmc.h"

/* perf's modifiers: user mode only, kernel mode only, pinned, precise. */
#define MODIFIERS	"ukDp"

struct parser {
	struct pmc_evlist *list;
	const char *str;		/* the whole string, for messages */
	char *err;
	size_t errlen;
};

static int __attribute__((format(printf, 2, 3)))
parse_error(struct parser *ps, const char *fmt, ...)
{
	size_t n;
	va_list ap;

	va_start(ap, fmt);
	n = vsnprintf(ps->err, ps->errlen, fmt, ap);
	va_end(ap);
	if (n < ps->errlen)
		snprintf(ps->err + n, ps->errlen - n, " in '%s'", ps->str);
	return -1;
}

/* A ":mods" suffix when it is only modifier letters; else NULL. */
static const char *find_modifiers(const char *name, size_t len)
{
	const char *colon = memrchr(name, ':', len);
	size_t n;

	if (!colon)
		return NULL;
	n = name + len - colon - 1;
	if (!n || strspn(colon + 1, MODIFIERS) < n)
		return NULL;
	return colon;
}

/*
 * Event @i's attr bits from its modifiers, its group's included (they
 * are in its name by now): u and k alone exclude the other mode, both
 * count both; D pins the event's group; each p is counted in precise.
 */
static void apply_modifiers(struct pmc_evlist *list, size_t i)
{
	struct pmc_evsel *ev = &list->ev[i];
	size_t len = strlen(ev->name);
	const char *mods = find_modifiers(ev->name, len);
	size_t n = mods ? (size_t)(ev->name + len - mods) : 0;
	bool user = mods && memchr(mods, 'u', n);
	bool kernel = mods && memchr(mods, 'k', n);
	size_t k;

	if (user && !kernel) {
		ev->attr.exclude_kernel = 1;
		ev->attr.exclude_hv = 1;
	} else if (kernel && !user) {
		ev->attr.exclude_user = 1;
	}
	if (mods && memchr(mods, 'D', n))
		list->ev[ev->leader].attr.pinned = 1;
	for (k = 1; k < n; k++)		/* mods[0] is the colon */
		ev->precise += mods[k] == 'p';
}

/* A group's modifiers go into its members' names too, as perf prints them. */
static int name_group_modifiers(struct parser *ps, size_t first,
				const char *mods, size_t n)
{
	struct pmc_evlist *list = ps->list;
	size_t i;

	for (i = first; i < list->nr; i++) {
		char *name = list->ev[i].name;
		size_t len = strlen(name);

		if ((size_t)snprintf(name + len, PMC_EVENT_NAME_LEN - len,
				     "%s%.*s",
				     find_modifiers(name, len) ? "" : ":",
				     (int)n, mods) >= PMC_EVENT_NAME_LEN - len)
			return parse_error(ps, "event name '%s' too long",
					   name);
	}
	return 0;
}

/* Append the event spelt by @len bytes at @name (modifiers included). */
static int add_event(struct parser *ps, const char *name, size_t len,
		     size_t leader)
{
	struct pmc_evlist *list = ps->list;
	const char *mods = find_modifiers(name, len);
	size_t base_len = mods ? (size_t)(mods - name) : len;
	char base[PMC_EVENT_NAME_LEN];
	struct pmc_evsel *ev;

	if (!base_len)
		return parse_error(ps, "empty event name");
	if (len >= PMC_EVENT_NAME_LEN)
		return parse_error(ps, "event name '%.*s' too long", (int)len,
				   name);
	memcpy(base, name, base_len);
	base[base_len] = '\0';
	ev = realloc(list->ev, (list->nr + 1) * sizeof(*ev));
	if (!ev)
		return parse_error(ps, "out of memory");
	list->ev = ev;
	ev = &list->ev[list->nr];
	memset(ev, 0, sizeof(*ev));
	memcpy(ev->name, name, len);
	if (pmc_event_is_perf_cache(base) &&
	    pmc_event_lookup(base, &ev->attr.config, &ev->unit))
		return parse_error(ps, "'%s' is one of perf's generic cache events, which events-lite does not define: not supported on this PMU (use rNNNN or the CPU's own event name)",
				   base);
	if (pmc_event_lookup(base, &ev->attr.config, &ev->unit))
		return parse_error(ps, "unknown event '%.*s'", (int)len, name);
	ev->attr.read_format = PMC_FORMAT_TOTAL_TIME_ENABLED |
			       PMC_FORMAT_TOTAL_TIME_RUNNING;
	ev->attr.disabled = 1;
	ev->leader = leader;
	ev->fd = -1;
	list->nr++;
	return 0;
}

static int parse(struct parser *ps)
{
	struct pmc_evlist *list = ps->list;
	const char *str = ps->str;
	const char *p = str;
	bool in_group = false;
	size_t group = 0;

	if (!*p)
		return parse_error(ps, "empty event list");
	for (;;) {
		size_t len;

		if (*p == '{') {
			if (in_group)
				return parse_error(ps, "nested group");
			in_group = true;
			group = list->nr;
			p++;
		}
		len = strcspn(p, ",{}");
		if (add_event(ps, p, len, in_group ? group : list->nr))
			return -1;
		p += len;
		if (*p == '}') {
			if (!in_group)
				return parse_error(ps, "'}' without '{'");
			in_group = false;
			len = strcspn(++p, ",{}");
			if (len && (*p != ':' || !find_modifiers(p, len)))
				return parse_error(ps, "bad group modifiers '%.*s'",
						   (int)len, p);
			if (len && name_group_modifiers(ps, group, p + 1,
							len - 1))
				return -1;
			p += len;
			/* read as a unit: see pmc_read_group() */
			if (list->nr - group > 1)
				list->ev[group].attr.read_format |=
					PMC_FORMAT_GROUP;
		}
		if (!*p)
			break;
		if (*p != ',')
			return parse_error(ps, "unexpected '%c'", *p);
		if (!*++p)
			return parse_error(ps, "trailing comma");
	}
	if (in_group)
		return parse_error(ps, "unclosed group");
	return 0;
}

int pmc_evlist_parse(struct pmc_evlist *list, const char *str,
		     char *err, size_t errlen)
{
	struct parser ps = { list, str, err, errlen };
	size_t nr = list->nr;

	if (!parse(&ps)) {
		for (; nr < list->nr; nr++)
			apply_modifiers(list, nr);
		return 0;
	}
	list->nr = nr;		/* the list is as it was */
	return -1;
}

void pmc_evlist_free(struct pmc_evlist *list)
{
	free(list->ev);
	list->ev = NULL;
	list->nr = 0;
}

int pmc_evsel_open(const struct pmc_evlist *list, size_t i, pid_t pid,
		   int cpu, int group_fd, unsigned long flags)
{
	struct pmc_attr attr = list->ev[i].attr;

	/* Only a group's leader may pin it. */
	if (group_fd >= 0)
		attr.pinned = 0;
	return pmc_open(&attr, pid, cpu, group_fd, flags);
}

void pmc_evlist_close(struct pmc_evlist *list)
{
	size_t i;

	for (i = 0; i < list->nr; i++) {
		if (list->ev[i].fd >= 0)
			close(list->ev[i].fd);
		list->ev[i].fd = -1;
	}
}

int pmc_evlist_open(struct pmc_evlist *list, pid_t pid, int cpu,
		    size_t *failed)
{
	size_t i;
	int err;

	for (i = 0; i < list->nr; i++) {
		size_t leader = list->ev[i].leader;
		int group_fd = leader == i ? -1 : list->ev[leader].fd;

		list->ev[i].fd = pmc_evsel_open(list, i, pid, cpu, group_fd,
						PMC_FLAG_FD_CLOEXEC);
		if (list->ev[i].fd < 0)
			goto fail;
	}
	if (!pmc_evlist_enable(list))
		return 0;
fail:
	err = errno;
	*failed = i;
	pmc_evlist_close(list);
	errno = err;
	return -1;
}

/*
 * In list order, so a leader goes first: a member enabled under a
 * disabled leader would be enabled but not running meanwhile, and its
 * "% counted" would fall short of its group's.
 */
static int ioctl_all(const struct pmc_evlist *list, unsigned long req)
{
	size_t i;

	for (i = 0; i < list->nr; i++)
		if (list->ev[i].fd >= 0 && ioctl(list->ev[i].fd, req) < 0)
			return -1;
	return 0;
}

int pmc_evlist_enable(const struct pmc_evlist *list)
{
	return ioctl_all(list, PMC_IOC_ENABLE);
}

int pmc_evlist_disable(const struct pmc_evlist *list)
{
	return ioctl_all(list, PMC_IOC_DISABLE);
}

/* Read the group that event @lead leads in one read(); see pmc_evlist_read(). */
static void read_group(const struct pmc_evlist *list, size_t lead,
		       const int *fds, struct pmc_count *c, int *ret)
{
	struct pmc_count *vals;
	size_t end, i, k, open = 0;
	int n, res;

	for (end = lead; end < list->nr && list->ev[end].leader == lead; end++)
		open += fds[end] >= 0;
	vals = malloc(open * sizeof(*vals));
	n = vals ? pmc_read_group(fds[lead], vals, open) : -1;
	if (n > 0 && (size_t)n != open) {
		errno = EIO;	/* not the group this list opened */
		n = -1;
	}
	res = n < 0 ? -errno : !n;
	for (i = lead, k = 0; i < end; i++) {
		if (fds[i] < 0)
			continue;
		ret[i] = res;
		if (n > 0)
			c[i] = vals[k++];
	}
	free(vals);
}

int pmc_evlist_read(const struct pmc_evlist *list, const int *fds,
		    struct pmc_count *c, int *ret)
{
	int failed = 0;
	size_t i;

	for (i = 0; i < list->nr; i++)
		ret[i] = -EBADF;
	for (i = 0; i < list->nr; i++) {
		size_t lead = list->ev[i].leader;

		if (fds[i] < 0)
			continue;
		if (lead == i &&
		    (list->ev[i].attr.read_format & PMC_FORMAT_GROUP)) {
			read_group(list, i, fds, c, ret);
			continue;
		}
		/* read with its leader, or alone if that did not open */
		if (lead != i && fds[lead] >= 0 &&
		    (list->ev[lead].attr.read_format & PMC_FORMAT_GROUP))
			continue;
		ret[i] = pmc_read_count(fds[i], &c[i]);
		if (ret[i] < 0)
			ret[i] = -errno;
	}
	for (i = 0; i < list->nr; i++)
		failed |= fds[i] >= 0 && ret[i];
	return failed ? -1 : 0;
}
