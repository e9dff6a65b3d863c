// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cgroup_mounts.h"
#include "fileio.h"

bool cgroup_v2_has_memory(const char *mountpoint)
{
	_cleanup_free_ char *text = NULL;
	char path[PATH_MAX], *p, *save = NULL;

	if (snprintf(path, sizeof(path), "%s/cgroup.controllers", mountpoint) >= (int)sizeof(path))
		return false;
	if (read_full_file(path, 4096, &text, NULL) < 0)
		return false;
	for (p = strtok_r(text, " \n", &save); p; p = strtok_r(NULL, " \n", &save))
		if (strcmp(p, "memory") == 0)
			return true;
	return false;
}

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape_octal(char *s)
{
	char *w = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' && s[3] >= '0' &&
		    s[3] <= '7') {
			*w++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*w++ = *s;
		}
	}
	*w = '\0';
}

static bool has_option(const char *opts, const char *want)
{
	size_t n = strlen(want);
	const char *p = opts;

	while (p && *p) {
		if (strncmp(p, want, n) == 0 && (p[n] == ',' || p[n] == '\0'))
			return true;
		p = strchr(p, ',');
		if (p)
			p++;
	}
	return false;
}

/* One line, cut into buf (its own copy): 0 and the mount in ret when it is a
 * cgroup mount worth keeping, -ENOENT when it is not. */
static int parse_line(char *buf, struct cgroup_mount *ret)
{
	/* id parent maj:min root mountpoint options [optional...] - fstype source superopts */
	char *fields[8], *sep, *tok, *save = NULL, *path;
	size_t n = 0;
	bool v2;

	sep = strstr(buf, " - ");
	if (!sep)
		return -ENOENT;
	*sep = '\0';
	for (tok = strtok_r(buf, " ", &save); tok && n < 5; tok = strtok_r(NULL, " ", &save))
		fields[n++] = tok;
	/* Fewer than five fields before the separator would shift the ones
	 * after it: the fstype read as the mount point. */
	if (n < 5)
		return -ENOENT;
	save = NULL;
	for (tok = strtok_r(sep + 3, " ", &save); tok && n < 8; tok = strtok_r(NULL, " ", &save))
		fields[n++] = tok;
	if (n < 8)
		return -ENOENT;
	v2 = strcmp(fields[5], "cgroup2") == 0;
	if (!v2 && !(strcmp(fields[5], "cgroup") == 0 && has_option(fields[7], "memory")))
		return -ENOENT;
	unescape_octal(fields[4]);
	if (strlen(fields[4]) >= PATH_MAX)
		return -ENOENT; /* open() could not take it */
	path = strdup(fields[4]);
	if (!path)
		return -ENOMEM;
	*ret = (struct cgroup_mount){ .path = path, .v2 = v2, .whole = strcmp(fields[3], "/") == 0 };
	return 0;
}

int cgroup_mounts_parse(const char *mountinfo, struct cgroup_mounts *ret)
{
	_cleanup_(cgroup_mounts_done) struct cgroup_mounts m = { .n = 0 };
	const char *line = mountinfo;

	while (line && *line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		_cleanup_free_ char *buf = strndup(line, len);
		struct cgroup_mount mount;
		int r;

		if (!buf)
			return -ENOMEM;
		r = parse_line(buf, &mount);
		if (r == -ENOMEM)
			return r;
		if (r == 0) {
			if (m.n < CGROUP_MOUNTS_MAX)
				m.mount[m.n++] = mount;
			else {
				free(mount.path);
				m.dropped++;
			}
		}
		line = nl ? nl + 1 : NULL;
	}
	*ret = m;
	m = (struct cgroup_mounts){ .n = 0 }; /* now ret's */
	return 0;
}

void cgroup_mounts_done(struct cgroup_mounts *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->mount[i].path);
	*m = (struct cgroup_mounts){ .n = 0 };
}

/* The first mount of the kind that pick() accepts, whole hierarchies first. */
static const struct cgroup_mount *first_mount(const struct cgroup_mounts *m, bool v2,
					      bool (*pick)(const char *mountpoint))
{
	for (int whole = 1; whole >= 0; whole--)
		for (size_t i = 0; i < m->n; i++) {
			const struct cgroup_mount *c = &m->mount[i];

			if (c->v2 == v2 && c->whole == (bool)whole && (!pick || pick(c->path)))
				return c;
		}
	return NULL;
}

const char *cgroup_mounts_memory_root(const struct cgroup_mounts *m, bool (*v2_has_memory)(const char *mountpoint),
				      enum cgroup_memory_mode *ret_mode)
{
	const struct cgroup_mount *c = v2_has_memory ? first_mount(m, true, v2_has_memory) : NULL;

	if (c) {
		*ret_mode = CGROUP_MEMORY_V2;
		return c->path;
	}
	c = first_mount(m, false, NULL);
	*ret_mode = c ? CGROUP_MEMORY_V1 : CGROUP_MEMORY_NONE;
	return c ? c->path : NULL;
}

const char *cgroup_mounts_unified(const struct cgroup_mounts *m)
{
	const struct cgroup_mount *c = first_mount(m, true, NULL);

	return c ? c->path : NULL;
}

enum cgroup_memory_mode cgroup_find_memory_root(const char *mountinfo, char *root, size_t root_len,
						bool (*v2_has_memory)(const char *mountpoint))
{
	struct cgroup_mounts m;
	enum cgroup_memory_mode mode;
	const char *path;

	if (cgroup_mounts_parse(mountinfo, &m) < 0)
		return CGROUP_MEMORY_NONE;
	path = cgroup_mounts_memory_root(&m, v2_has_memory, &mode);
	if (path)
		snprintf(root, root_len, "%s", path);
	cgroup_mounts_done(&m);
	return mode;
}
