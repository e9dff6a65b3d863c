// SPDX-License-Identifier: GPL-2.0
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "container_names.h"
#include "fileio.h"
#include "json_read.h"
#include "macro.h"
#include "names_table.h"

#define CONTAINER_ID_LEN 64

/* What a file was when it was read: read again only once it changed (a
 * rewrite by rename(2), as both runtimes save, changes the inode). */
struct file_sig {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
};

struct docker_entry {
	char id[CGROUP_CONTAINER_ID_MAX];
	char name[CONTAINER_NAME_MAX];
	struct file_sig sig;     /* of the config.v2.json last read; zero: none */
	bool unreadable;         /* that file gave no name: not read again until it changes */
	uint64_t checked_usec;   /* its file last looked at */
	uint64_t used_usec;      /* last asked for */
	uint64_t gone_since_usec; /* the file went while the name was known */
};

struct podman_entry {
	char id[CGROUP_CONTAINER_ID_MAX];
	char name[CONTAINER_NAME_MAX];
	uint64_t gone_since_usec;
	uint32_t seq; /* its place in the lists: of an id listed twice, the last counts */
};

struct podman_file {
	char path[PATH_MAX];
	struct file_sig sig;
};

struct container_names {
	char dir[CONTAINER_SOURCES][PATH_MAX];
	bool reported[CONTAINER_SOURCES];
	container_names_report_fn report;
	void *report_userdata;
	uint64_t reads;

	struct docker_entry *docker; /* sorted by id */
	size_t n_docker, cap_docker;

	struct names_table podman; /* of struct podman_entry, sorted by id */
	struct podman_file podman_files[PODMAN_LIST_FILES];
	size_t n_podman_files;
	bool podman_checked;
	uint64_t podman_checked_usec;
};

static const char *const source_names[CONTAINER_SOURCES] = { "docker", "podman" };

int container_names_new(struct container_names **ret)
{
	struct container_names *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	*ret = c;
	return 0;
}

static void forget(struct container_names *c, enum container_source source)
{
	c->reported[source] = false;
	if (source == CONTAINER_SOURCE_DOCKER) {
		free(c->docker);
		c->docker = NULL;
		c->n_docker = c->cap_docker = 0;
	} else {
		names_table_clear(&c->podman);
		c->n_podman_files = 0;
		c->podman_checked = false;
	}
}

void container_names_free(struct container_names *c)
{
	if (!c)
		return;
	forget(c, CONTAINER_SOURCE_DOCKER);
	forget(c, CONTAINER_SOURCE_PODMAN);
	free(c);
}

int container_names_set_dir(struct container_names *c, enum container_source source, const char *dir)
{
	if (strlen(dir) >= sizeof(c->dir[source]))
		return -ENAMETOOLONG;
	if (strcmp(c->dir[source], dir) != 0) {
		snprintf(c->dir[source], sizeof(c->dir[source]), "%s", dir);
		forget(c, source);
	}
	return 0;
}

void container_names_set_report(struct container_names *c, container_names_report_fn fn, void *userdata)
{
	c->report = fn;
	c->report_userdata = userdata;
}

uint64_t container_names_reads(struct container_names *c)
{
	return c->reads;
}

_printf_(3, 4) static void report(struct container_names *c, enum container_source source, const char *fmt, ...)
{
	char why[PATH_MAX + 256];
	va_list ap;

	if (c->reported[source])
		return;
	c->reported[source] = true;
	if (!c->report)
		return;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	c->report(source_names[source], why, c->report_userdata);
}

static const char *why_of(int r)
{
	switch (r) {
	case -EBADMSG: return "not valid JSON or not of the expected shape";
	case -ENODATA: return "no name in it";
	case -ENOBUFS: return "a name too long for a label";
	case -EFBIG: return "too large";
	/* The runtimes keep their state root's only (0700, 0600): a daemon
	 * that is not root reads it with CAP_DAC_READ_SEARCH. */
	case -EACCES: return "Permission denied (a root-only file: without CAP_DAC_READ_SEARCH)";
	default: return strerror(-r);
	}
}

static bool is_container_id(const char *s)
{
	size_t i;

	for (i = 0; s[i]; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return i == CONTAINER_ID_LEN;
}

/* A name as a label may carry it: not empty, no control characters (its
 * UTF-8 was checked by the reader). */
static bool is_usable_name(const char *s)
{
	if (!s[0])
		return false;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return false;
	return true;
}

int docker_config_name(const char *text, size_t len, char name[static CONTAINER_NAME_MAX])
{
	struct json_span doc, v;
	char raw[CONTAINER_NAME_MAX + 1]; /* and the leading '/' */
	int r;

	name[0] = '\0';
	r = json_read_value(text, len, &doc);
	if (r < 0)
		return r;
	r = json_read_member(doc, "Name", &v);
	if (r < 0)
		return r == -ENOENT ? -ENODATA : r;
	r = json_read_string(v, raw, sizeof(raw));
	if (r < 0)
		return r;
	/* Docker keeps names with a '/' in front (the root of its old link tree). */
	if (raw[0] != '/' && raw[0])
		return -EBADMSG;
	if (strlen(raw + (raw[0] == '/')) >= CONTAINER_NAME_MAX)
		return -ENOBUFS;
	if (!is_usable_name(raw + 1))
		return -ENODATA;
	snprintf(name, CONTAINER_NAME_MAX, "%s", raw + 1);
	return 0;
}

int podman_list_names(const char *text, size_t len, podman_list_fn fn, void *userdata)
{
	struct json_span doc, item;
	size_t pos = 0;
	int r;

	r = json_read_value(text, len, &doc);
	if (r < 0)
		return r;
	if (doc.p[0] != '[')
		return -EBADMSG;
	while ((r = json_read_next(doc, &pos, &item)) > 0) {
		struct json_span v, names, first;
		char id[CGROUP_CONTAINER_ID_MAX], name[CONTAINER_NAME_MAX];
		size_t name_pos = 0;

		/* What is not a container with an id and a name is passed over:
		 * the list is the store's, not only podman's (buildah's too). */
		if (item.p[0] != '{' || json_read_member(item, "id", &v) < 0 ||
		    json_read_string(v, id, sizeof(id)) < 0 || !is_container_id(id))
			continue;
		if (json_read_member(item, "names", &names) < 0 || names.p[0] != '[' ||
		    json_read_next(names, &name_pos, &first) <= 0 || json_read_string(first, name, sizeof(name)) < 0 ||
		    !is_usable_name(name))
			continue;
		fn(id, name, userdata);
	}
	return r;
}

/* ---- Docker ---- */

static bool same_sig(const struct file_sig *a, const struct file_sig *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size && a->mtime.tv_sec == b->mtime.tv_sec &&
	       a->mtime.tv_nsec == b->mtime.tv_nsec;
}

static struct file_sig sig_of(const struct stat *st)
{
	return (struct file_sig){ st->st_dev, st->st_ino, st->st_size, st->st_mtim };
}

static struct docker_entry *docker_find(struct container_names *c, const char *id, size_t *at)
{
	size_t lo = 0, hi = c->n_docker;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int k = strcmp(c->docker[mid].id, id);

		if (k == 0)
			return &c->docker[mid];
		if (k < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*at = lo;
	return NULL;
}

/* Makes room in a full table: entries not asked for, or gone, for keep_usec
 * go; then the one asked for longest ago. */
static void docker_evict(struct container_names *c, uint64_t now_usec, uint64_t keep_usec)
{
	size_t n = 0, oldest = 0;

	for (size_t i = 0; i < c->n_docker; i++) {
		const struct docker_entry *e = &c->docker[i];

		if (now_usec - e->used_usec >= keep_usec ||
		    (e->gone_since_usec && now_usec - e->gone_since_usec >= keep_usec))
			continue;
		c->docker[n++] = *e;
	}
	c->n_docker = n;
	if (n < CONTAINER_NAMES_MAX_ENTRIES)
		return;
	for (size_t i = 1; i < n; i++)
		if (c->docker[i].used_usec < c->docker[oldest].used_usec)
			oldest = i;
	memmove(&c->docker[oldest], &c->docker[oldest + 1], (n - oldest - 1) * sizeof(c->docker[0]));
	c->n_docker--;
}

static struct docker_entry *docker_insert(struct container_names *c, const char *id, uint64_t now_usec,
					  uint64_t keep_usec)
{
	size_t at = 0;

	if (c->n_docker >= CONTAINER_NAMES_MAX_ENTRIES)
		docker_evict(c, now_usec, keep_usec);
	if (c->n_docker == c->cap_docker) {
		size_t cap = c->cap_docker ? 2 * c->cap_docker : 16;
		struct docker_entry *d = realloc(c->docker, cap * sizeof(*d));

		if (!d)
			return NULL;
		c->docker = d;
		c->cap_docker = cap;
	}
	(void)docker_find(c, id, &at);
	memmove(&c->docker[at + 1], &c->docker[at], (c->n_docker - at) * sizeof(c->docker[0]));
	c->n_docker++;
	c->docker[at] = (struct docker_entry){ .used_usec = now_usec };
	snprintf(c->docker[at].id, sizeof(c->docker[at].id), "%s", id);
	return &c->docker[at];
}

static void docker_read(struct container_names *c, struct docker_entry *e, uint64_t now_usec, uint64_t keep_usec)
{
	char path[PATH_MAX], name[CONTAINER_NAME_MAX];
	_cleanup_free_ char *text = NULL;
	struct file_sig sig;
	struct stat st;
	size_t len;
	int r;

	e->checked_usec = now_usec;
	if ((size_t)snprintf(path, sizeof(path), "%s/containers/%s/config.v2.json", c->dir[CONTAINER_SOURCE_DOCKER],
			     e->id) >= sizeof(path))
		return;
	if (stat(path, &st) < 0) {
		r = -errno;
		if (r == -ENOENT && (e->name[0] || e->gone_since_usec)) {
			/* docker rm: the name stays while its series may. */
			if (!e->gone_since_usec)
				e->gone_since_usec = now_usec;
			if (now_usec - e->gone_since_usec >= keep_usec)
				e->name[0] = '\0';
			return;
		}
		report(c, CONTAINER_SOURCE_DOCKER, "%s: %s", path, why_of(r));
		e->name[0] = '\0';
		e->sig = (struct file_sig){ 0 };
		e->unreadable = false;
		return;
	}
	sig = sig_of(&st);
	if ((e->name[0] || e->unreadable) && same_sig(&e->sig, &sig))
		return;
	c->reads++;
	r = read_full_file(path, DOCKER_CONFIG_MAX, &text, &len);
	if (r >= 0)
		r = docker_config_name(text, len, name);
	if (r < 0) {
		report(c, CONTAINER_SOURCE_DOCKER, "%s: %s", path, why_of(r));
		e->name[0] = '\0';
		e->unreadable = true;
	} else {
		snprintf(e->name, sizeof(e->name), "%s", name);
		e->unreadable = false;
	}
	e->sig = sig;
	e->gone_since_usec = 0;
}

static void docker_lookup(struct container_names *c, const char *id, uint64_t now_usec,
			  const struct container_names_timing *t, char name[static CONTAINER_NAME_MAX])
{
	size_t at;
	struct docker_entry *e = docker_find(c, id, &at), scratch;

	if (e) {
		e->used_usec = now_usec;
		if (e->gone_since_usec && now_usec - e->gone_since_usec >= t->keep_usec)
			e->name[0] = '\0';
		if (now_usec - e->checked_usec < (e->name[0] ? t->recheck_usec : t->miss_usec)) {
			snprintf(name, CONTAINER_NAME_MAX, "%s", e->name);
			return;
		}
	} else {
		e = docker_insert(c, id, now_usec, t->keep_usec);
		if (!e) { /* no memory for the table: read, keep nothing */
			scratch = (struct docker_entry){ .used_usec = now_usec };
			snprintf(scratch.id, sizeof(scratch.id), "%s", id);
			e = &scratch;
		}
	}
	docker_read(c, e, now_usec, t->keep_usec);
	snprintf(name, CONTAINER_NAME_MAX, "%s", e->name);
}

/* ---- Podman ---- */

static int compare_podman(const void *a, const void *b)
{
	const struct podman_entry *x = a, *y = b;
	int k = strcmp(x->id, y->id);

	return k ? k : (x->seq > y->seq) - (x->seq < y->seq);
}

static int compare_podman_id(const void *a, const void *b)
{
	return strcmp(((const struct podman_entry *)a)->id, ((const struct podman_entry *)b)->id);
}

/* The lists there are now: <dir>/<driver>-containers/{,volatile-}containers.json.
 * A list that is there but cannot be looked at is reported. */
static int podman_list_files(struct container_names *c, struct podman_file *files, size_t *n_files)
{
	const char *dir = c->dir[CONTAINER_SOURCE_PODMAN];
	static const char *const lists[] = { "containers.json", "volatile-containers.json" };
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t n = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		static const char suffix[] = "-containers";

		if (len <= sizeof(suffix) - 1 || strcmp(de->d_name + len - (sizeof(suffix) - 1), suffix) != 0)
			continue;
		for (size_t i = 0; i < ARRAY_SIZE(lists) && n < PODMAN_LIST_FILES; i++) {
			struct podman_file *f = &files[n];
			struct stat st;

			if ((size_t)snprintf(f->path, sizeof(f->path), "%s/%s/%s", dir, de->d_name, lists[i]) >=
			    sizeof(f->path))
				continue;
			if (stat(f->path, &st) < 0) {
				if (errno != ENOENT)
					report(c, CONTAINER_SOURCE_PODMAN, "%s: %s", f->path, why_of(-errno));
				continue;
			}
			if (!S_ISREG(st.st_mode))
				continue;
			f->sig = sig_of(&st);
			n++;
		}
	}
	closedir(d);
	*n_files = n;
	return 0;
}

static int compare_podman_files(const void *a, const void *b)
{
	return strcmp(((const struct podman_file *)a)->path, ((const struct podman_file *)b)->path);
}

static bool same_files(const struct podman_file *a, size_t n_a, const struct podman_file *b, size_t n_b)
{
	if (n_a != n_b)
		return false;
	for (size_t i = 0; i < n_a; i++)
		if (strcmp(a[i].path, b[i].path) != 0 || !same_sig(&a[i].sig, &b[i].sig))
			return false;
	return true;
}

struct podman_fill {
	struct names_table *t;
	bool full;
};

static void podman_add(const char *id, const char *name, void *userdata)
{
	struct podman_fill *f = userdata;
	struct podman_entry *e;

	if (f->t->n >= CONTAINER_NAMES_MAX_ENTRIES) {
		f->full = true;
		return;
	}
	e = (struct podman_entry *)f->t->entries + f->t->n;
	*e = (struct podman_entry){ .seq = (uint32_t)f->t->n };
	snprintf(e->id, sizeof(e->id), "%s", id);
	snprintf(e->name, sizeof(e->name), "%s", name);
	f->t->n++;
}

/* Sorted by id, then place; of each id only its last listing stays. */
static void podman_dedup(struct names_table *t)
{
	struct podman_entry *e = t->entries;
	size_t n = 0;

	if (!t->n)
		return;
	qsort(e, t->n, sizeof(*e), compare_podman);
	for (size_t i = 0; i < t->n; i++) {
		if (i + 1 < t->n && strcmp(e[i].id, e[i + 1].id) == 0)
			continue;
		e[n++] = e[i];
	}
	t->n = n;
}

/* The lists read again, when any of them changed. A list that cannot be
 * read gives no names; the names it gave before stay as those of containers
 * gone (keep_usec). */
static void podman_refresh(struct container_names *c, uint64_t now_usec, uint64_t keep_usec)
{
	struct podman_file files[PODMAN_LIST_FILES];
	struct podman_fill fill;
	struct names_table t;
	size_t n_files = 0;
	int r;

	c->podman_checked = true;
	c->podman_checked_usec = now_usec;
	r = podman_list_files(c, files, &n_files);
	if (r < 0) {
		report(c, CONTAINER_SOURCE_PODMAN, "%s: %s", c->dir[CONTAINER_SOURCE_PODMAN], why_of(r));
		return;
	}
	if (n_files == 0)
		report(c, CONTAINER_SOURCE_PODMAN, "%s: no <driver>-containers/containers.json in it",
		       c->dir[CONTAINER_SOURCE_PODMAN]);
	qsort(files, n_files, sizeof(files[0]), compare_podman_files);
	if (same_files(files, n_files, c->podman_files, c->n_podman_files))
		return;
	t = (struct names_table){ calloc(CONTAINER_NAMES_MAX_ENTRIES, sizeof(struct podman_entry)), 0 };
	if (!t.entries)
		return;
	fill = (struct podman_fill){ &t, false };
	for (size_t i = 0; i < n_files; i++) {
		_cleanup_free_ char *text = NULL;
		size_t len;

		c->reads++;
		r = read_full_file(files[i].path, PODMAN_LIST_MAX, &text, &len);
		if (r >= 0)
			r = podman_list_names(text, len, podman_add, &fill);
		if (r < 0)
			report(c, CONTAINER_SOURCE_PODMAN, "%s: %s", files[i].path, why_of(r));
	}
	if (fill.full)
		report(c, CONTAINER_SOURCE_PODMAN, "%s: more than %d containers, the others are not named",
		       c->dir[CONTAINER_SOURCE_PODMAN], CONTAINER_NAMES_MAX_ENTRIES);
	podman_dedup(&t);
	names_table_keep_gone(&t, &c->podman, sizeof(struct podman_entry),
			      offsetof(struct podman_entry, gone_since_usec), CONTAINER_NAMES_MAX_ENTRIES, compare_podman_id, now_usec,
			      keep_usec);
	names_table_clear(&c->podman);
	c->podman = t;
	memcpy(c->podman_files, files, n_files * sizeof(files[0]));
	c->n_podman_files = n_files;
}

static const struct podman_entry *podman_find(const struct container_names *c, const char *id)
{
	struct podman_entry key;

	snprintf(key.id, sizeof(key.id), "%s", id);
	return names_table_find(&c->podman, &key, sizeof(key), compare_podman_id);
}

static void podman_lookup(struct container_names *c, const char *id, uint64_t now_usec,
			  const struct container_names_timing *t, char name[static CONTAINER_NAME_MAX])
{
	const struct podman_entry *e = podman_find(c, id);
	uint64_t interval = e ? t->recheck_usec : t->miss_usec;

	if (!c->podman_checked || now_usec - c->podman_checked_usec >= interval) {
		podman_refresh(c, now_usec, t->keep_usec);
		e = podman_find(c, id);
	}
	if (e && e->gone_since_usec && now_usec - e->gone_since_usec >= t->keep_usec)
		e = NULL;
	snprintf(name, CONTAINER_NAME_MAX, "%s", e ? e->name : "");
}

void container_names_lookup(struct container_names *c, enum cgroup_runtime runtime, const char *id, uint64_t now_usec,
			    const struct container_names_timing *timing, char name[static CONTAINER_NAME_MAX])
{
	name[0] = '\0';
	if (!c || !is_container_id(id))
		return;
	if (runtime == CGROUP_RUNTIME_DOCKER && c->dir[CONTAINER_SOURCE_DOCKER][0])
		docker_lookup(c, id, now_usec, timing, name);
	else if (runtime == CGROUP_RUNTIME_PODMAN && c->dir[CONTAINER_SOURCE_PODMAN][0])
		podman_lookup(c, id, now_usec, timing, name);
}
