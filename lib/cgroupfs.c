/* SPDX-License-Identifier: GPL-2.0 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cgroupfs.h"
#include "vmstat.h"
#include "macro.h"
#include "parse.h"

int cgroup_parse_u64_or_max(const char *buf, size_t len, uint64_t *value, bool *is_max)
{
	const char *p, *end, *eol;
	uint64_t v;
	int r;

	if (!value || !parse_text_present(buf, len))
		return -EINVAL;

	/* One line, terminated: without the "\n" the digits may be cut. */
	eol = memchr(buf, '\n', len);
	if (!eol || (size_t) (eol - buf) != len - 1)
		return -EINVAL;

	p = buf;
	end = eol;
	parse_trim(&p, &end);

	if (parse_token_eq(p, (size_t) (end - p), "max")) {
		*value = UINT64_MAX;
		if (is_max)
			*is_max = true;
		return 0;
	}

	r = parse_u64(p, end, &v);
	if (r < 0)
		return -EINVAL;

	*value = v;
	if (is_max)
		*is_max = false;
	return 0;
}

bool cgroup_v1_limit_is_unlimited(uint64_t v)
{
	return v >= CGROUP_V1_UNLIMITED_MIN;
}

/* Splits a line into key and value. Returns 0, or 1 when the line has no
 * key to look at: blank, or a key running into the end of a short read
 * (which may be cut: "oom" of "oom_kill"). */
static int split_line(const struct parse_line *line, struct parse_kv *kv)
{
	const char *p = line->start, *end = line->end;

	parse_trim(&p, &end);
	if (!parse_split_kv(p, end, kv)) {
		kv->key_len = 0;
		return 1;
	}
	if (!line->terminated && kv->key + kv->key_len == line->end)
		return 1;
	return 0;
}

/* Parses the value of a line whose key matters. Returns 0 with *ret set,
 * 1 when the value is to be dropped (unterminated last line: the digits may
 * be cut), or -EINVAL. */
static int line_value(const struct parse_kv *kv, bool terminated, uint64_t *ret)
{
	int r = parse_u64(kv->val, kv->val_end, ret);

	if (r < 0 && r != -ENODATA)
		return -EINVAL;
	if (!terminated)
		return 1;
	if (r < 0)
		return -EINVAL; /* key without a value */
	return 0;
}

static bool key_is_valid(const char *key, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (key[i] < 0x21 || key[i] > 0x7e)
			return false;
	return true;
}

#define KV_KEY_SIZE sizeof(((struct cgroup_kv *) NULL)->key)

/* Without store, only validates. */
static int flat_keyed_walk(const char *buf, size_t len, bool store, struct cgroup_kv *out, size_t max,
			   size_t *ret_n)
{
	const char *p = buf;
	struct parse_line line;
	size_t n = 0;

	while (parse_next_line(&p, buf + len, &line)) {
		struct parse_kv l;
		uint64_t v;
		size_t i;
		int r;

		r = split_line(&line, &l);
		if (l.key_len > 0 && !key_is_valid(l.key, l.key_len))
			return -EINVAL;
		if (r > 0)
			continue;

		r = line_value(&l, line.terminated, &v);
		if (r < 0)
			return r;
		if (r > 0 || l.key_len >= KV_KEY_SIZE || !store)
			continue;

		for (i = 0; i < n; i++)
			if (parse_token_eq(l.key, l.key_len, out[i].key))
				break;
		if (i == n) {
			if (n == max)
				return -ENOBUFS;
			memcpy(out[n].key, l.key, l.key_len);
			out[n].key[l.key_len] = '\0';
			n++;
		}
		out[i].value = v;
	}

	*ret_n = n;
	return 0;
}

int cgroup_parse_flat_keyed(const char *buf, size_t len, struct cgroup_kv *out, size_t max, size_t *n)
{
	size_t unused;
	int r;

	if (!n || (!out && max > 0) || !parse_text_present(buf, len))
		return -EINVAL;

	/* Validate everything first, so that a malformed file leaves out alone. */
	r = flat_keyed_walk(buf, len, false, NULL, 0, &unused);
	if (r < 0)
		return r;

	return flat_keyed_walk(buf, len, true, out, max, n);
}

const struct cgroup_kv *cgroup_kv_find(const struct cgroup_kv *kv, size_t n, const char *key)
{
	if (!kv || !key)
		return NULL;

	for (size_t i = 0; i < n; i++)
		if (strcmp(kv[i].key, key) == 0)
			return &kv[i];
	return NULL;
}

#define FIELD(k, m, f) PARSE_FIELD(struct cgroup_memstat, k, m, f)

static const struct parse_field memstat_fields[] = {
	FIELD("inactive_file", inactive_file, CGROUP_MEMSTAT_HAS_INACTIVE_FILE),
	FIELD("active_file", active_file, CGROUP_MEMSTAT_HAS_ACTIVE_FILE),
	FIELD("anon", anon, CGROUP_MEMSTAT_HAS_ANON),
	FIELD("file", file, CGROUP_MEMSTAT_HAS_FILE),
	FIELD("total_inactive_file", total_inactive_file, CGROUP_MEMSTAT_HAS_TOTAL_INACTIVE_FILE),
#define WS_FIELD(prefix, scope, name, kind, suffix, variant)                                     \
	FIELD(prefix "workingset_" name suffix, workingset[scope][kind][variant],                  \
	      CGROUP_MEMSTAT_HAS_WORKINGSET(scope, kind, variant))
#define WS_FIELDS(prefix, scope, name, kind)                                                      \
	WS_FIELD(prefix, scope, name, kind, "_anon", VMSTAT_WS_ANON),                              \
	WS_FIELD(prefix, scope, name, kind, "_file", VMSTAT_WS_FILE),                              \
	WS_FIELD(prefix, scope, name, kind, "", VMSTAT_WS_UNSPLIT)
	WS_FIELDS("", CGROUP_MEMSTAT_LOCAL, "refault", VMSTAT_WS_REFAULT),
	WS_FIELDS("", CGROUP_MEMSTAT_LOCAL, "activate", VMSTAT_WS_ACTIVATE),
	WS_FIELDS("", CGROUP_MEMSTAT_LOCAL, "restore", VMSTAT_WS_RESTORE),
	WS_FIELDS("total_", CGROUP_MEMSTAT_TOTAL, "refault", VMSTAT_WS_REFAULT),
	WS_FIELDS("total_", CGROUP_MEMSTAT_TOTAL, "activate", VMSTAT_WS_ACTIVATE),
	WS_FIELDS("total_", CGROUP_MEMSTAT_TOTAL, "restore", VMSTAT_WS_RESTORE),
#undef WS_FIELDS
#undef WS_FIELD
};

int cgroup_parse_memstat(const char *buf, size_t len, struct cgroup_memstat *out)
{
	struct cgroup_memstat ms = {0};
	struct parse_line line;
	const char *p;

	if (!out || !parse_text_present(buf, len))
		return -EINVAL;

	p = buf;
	while (parse_next_line(&p, buf + len, &line)) {
		const struct parse_field *f;
		struct parse_kv l;
		uint64_t v;
		int r;

		r = split_line(&line, &l);
		if (r > 0)
			continue;

		f = parse_field_lookup(memstat_fields, ARRAY_SIZE(memstat_fields), l.key, l.key_len);
		if (!f)
			continue; /* unknown keys, garbage included, are not validated */

		r = line_value(&l, line.terminated, &v);
		if (r < 0)
			return r;
		if (r > 0) {
			/* dropped: an earlier duplicate must not stand in for it */
			ms.present &= ~f->flag;
			memset((char *) &ms + f->offset, 0, sizeof(v));
			continue;
		}

		/* Duplicate keys: last one wins, as in meminfo_parse(). */
		parse_field_set(&ms, &ms.present, f, v);
	}

	*out = ms;
	return 0;
}

static bool scope_printed(const struct cgroup_memstat *ms, unsigned scope)
{
	for (unsigned k = 0; k < _VMSTAT_WS_MAX; k++)
		for (unsigned v = 0; v < 3; v++)
			if (ms->present & CGROUP_MEMSTAT_HAS_WORKINGSET(scope, k, v))
				return true;
	return false;
}

void cgroup_memstat_workingset(const struct cgroup_memstat *ms, unsigned kind, uint64_t ret[2], bool ret_has[2])
{
	unsigned scope = scope_printed(ms, CGROUP_MEMSTAT_TOTAL) ? CGROUP_MEMSTAT_TOTAL : CGROUP_MEMSTAT_LOCAL;
	bool has[3];

	for (unsigned v = 0; v < 3; v++)
		has[v] = ms->present & CGROUP_MEMSTAT_HAS_WORKINGSET(scope, kind, v);
	workingset_resolve(ms->workingset[scope][kind], has, ret, ret_has);
}
