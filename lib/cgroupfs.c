/* SPDX-License-Identifier: GPL-2.0 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cgroupfs.h"
#include "macro.h"

/* '\r' is deliberately not a blank: it is only stripped at line end (CRLF). */
static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* memcmp, not strncmp: the text may contain NUL bytes. */
static bool token_eq(const char *p, size_t n, const char *s)
{
	return strlen(s) == n && memcmp(p, s, n) == 0;
}

/* Parses "<digits>" filling [p, end). Returns 0, 1 when empty, or -EINVAL on
 * anything else (sign, junk, overflow). */
static int parse_u64(const char *p, const char *end, uint64_t *ret)
{
	uint64_t v = 0;

	if (p == end)
		return 1;

	for (; p < end; p++) {
		unsigned d;

		if (!is_digit(*p))
			return -EINVAL;
		d = (unsigned) (*p - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -EINVAL;
		v = v * 10 + d;
	}

	*ret = v;
	return 0;
}

int cgroup_parse_u64_or_max(const char *buf, size_t len, uint64_t *value, bool *is_max)
{
	const char *p, *end, *eol;
	uint64_t v;
	int r;

	if (!value || (!buf && len > 0))
		return -EINVAL;
	if (len == 0)
		return -EINVAL; /* also avoids NULL + 0 */

	/* One line, terminated: without the "\n" the digits may be cut. */
	eol = memchr(buf, '\n', len);
	if (!eol || (size_t) (eol - buf) != len - 1)
		return -EINVAL;

	p = buf;
	end = eol;
	while (p < end && is_blank(*p))
		p++;
	while (end > p && (is_blank(end[-1]) || end[-1] == '\r'))
		end--;

	if (token_eq(p, (size_t) (end - p), "max")) {
		*value = UINT64_MAX;
		if (is_max)
			*is_max = true;
		return 0;
	}

	r = parse_u64(p, end, &v);
	if (r != 0)
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

/* One "key value" line, split. */
struct kv_line {
	const char *key;
	size_t key_len;
	const char *val, *val_end;
};

/* Splits [p, end) into key and value. Returns 0, or 1 when the line has no
 * key to look at: blank, or a key running into the end of a short read
 * (which may be cut: "oom" of "oom_kill"). */
static int split_line(const char *p, const char *end, bool terminated, struct kv_line *l)
{
	const char *raw_end = end;

	while (p < end && is_blank(*p))
		p++;
	while (end > p && (is_blank(end[-1]) || end[-1] == '\r'))
		end--;

	l->key = p;
	while (p < end && !is_blank(*p))
		p++;
	l->key_len = (size_t) (p - l->key);
	if (l->key_len == 0)
		return 1;

	while (p < end && is_blank(*p))
		p++;
	l->val = p;
	l->val_end = end;

	if (!terminated && l->key + l->key_len == raw_end)
		return 1;
	return 0;
}

/* Parses the value of a line whose key matters. Returns 0 with *ret set,
 * 1 when the value is to be dropped (unterminated last line: the digits may
 * be cut), or -EINVAL. */
static int line_value(const struct kv_line *l, bool terminated, uint64_t *ret)
{
	int r = parse_u64(l->val, l->val_end, ret);

	if (r < 0)
		return r;
	if (!terminated)
		return 1;
	if (r > 0)
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
	const char *p = buf, *end = buf + len;
	size_t n = 0;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t) (end - p));
		bool terminated = eol != NULL;
		struct kv_line l;
		uint64_t v;
		size_t i;
		int r;

		r = split_line(p, eol ? eol : end, terminated, &l);
		p = eol ? eol + 1 : end;

		if (l.key_len > 0 && !key_is_valid(l.key, l.key_len))
			return -EINVAL;
		if (r > 0)
			continue;

		r = line_value(&l, terminated, &v);
		if (r < 0)
			return r;
		if (r > 0 || l.key_len >= KV_KEY_SIZE || !store)
			continue;

		for (i = 0; i < n; i++)
			if (token_eq(l.key, l.key_len, out[i].key))
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

	if (!n || (!out && max > 0) || (!buf && len > 0))
		return -EINVAL;
	if (len == 0)
		return -EINVAL; /* also avoids NULL + 0 */

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

struct memstat_field {
	const char *key;
	size_t offset;
	unsigned flag;
};

#define FIELD(k, m, f) { k, offsetof(struct cgroup_memstat, m), f }

static const struct memstat_field memstat_fields[] = {
	FIELD("inactive_file", inactive_file, CGROUP_MEMSTAT_HAS_INACTIVE_FILE),
	FIELD("active_file", active_file, CGROUP_MEMSTAT_HAS_ACTIVE_FILE),
	FIELD("anon", anon, CGROUP_MEMSTAT_HAS_ANON),
	FIELD("file", file, CGROUP_MEMSTAT_HAS_FILE),
	FIELD("total_inactive_file", total_inactive_file, CGROUP_MEMSTAT_HAS_TOTAL_INACTIVE_FILE),
};

static const struct memstat_field *memstat_lookup(const char *key, size_t n)
{
	for (size_t i = 0; i < ARRAY_SIZE(memstat_fields); i++)
		if (token_eq(key, n, memstat_fields[i].key))
			return &memstat_fields[i];
	return NULL;
}

int cgroup_parse_memstat(const char *buf, size_t len, struct cgroup_memstat *out)
{
	struct cgroup_memstat ms = {0};
	const char *p, *end;

	if (!out || (!buf && len > 0))
		return -EINVAL;
	if (len == 0)
		return -EINVAL; /* also avoids NULL + 0 */

	p = buf;
	end = buf + len;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t) (end - p));
		bool terminated = eol != NULL;
		const struct memstat_field *f;
		struct kv_line l;
		uint64_t v;
		int r;

		r = split_line(p, eol ? eol : end, terminated, &l);
		p = eol ? eol + 1 : end;
		if (r > 0)
			continue;

		f = memstat_lookup(l.key, l.key_len);
		if (!f)
			continue; /* unknown keys, garbage included, are not validated */

		r = line_value(&l, terminated, &v);
		if (r < 0)
			return r;
		if (r > 0) {
			/* dropped: an earlier duplicate must not stand in for it */
			ms.present &= ~f->flag;
			memset((char *) &ms + f->offset, 0, sizeof(v));
			continue;
		}

		/* Duplicate keys: last one wins, as in meminfo_parse(). */
		memcpy((char *) &ms + f->offset, &v, sizeof(v));
		ms.present |= f->flag;
	}

	*out = ms;
	return 0;
}
