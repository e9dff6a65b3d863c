// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "jsonparse.h"
#include "strbuf.h"
#include "utf8.h"

struct parser {
	const char *p, *end, *start;
	int error;
};

static void skip_ws(struct parser *ps)
{
	while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
		ps->p++;
}

static int fail(struct parser *ps, int error)
{
	if (!ps->error)
		ps->error = error;
	return error;
}

static int hex4(const char *s, uint32_t *out)
{
	uint32_t v = 0;
	int i;

	for (i = 0; i < 4; i++) {
		char c = s[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (uint32_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (uint32_t)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (uint32_t)(c - 'A' + 10);
		else
			return -EINVAL;
	}
	*out = v;
	return 0;
}

static void put_utf8(struct strbuf *sb, uint32_t cp)
{
	char b[4];

	if (cp < 0x80) {
		b[0] = (char)cp;
		strbuf_append(sb, b, 1);
	} else if (cp < 0x800) {
		b[0] = (char)(0xc0 | (cp >> 6));
		b[1] = (char)(0x80 | (cp & 0x3f));
		strbuf_append(sb, b, 2);
	} else if (cp < 0x10000) {
		b[0] = (char)(0xe0 | (cp >> 12));
		b[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		b[2] = (char)(0x80 | (cp & 0x3f));
		strbuf_append(sb, b, 3);
	} else {
		b[0] = (char)(0xf0 | (cp >> 18));
		b[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		b[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		b[3] = (char)(0x80 | (cp & 0x3f));
		strbuf_append(sb, b, 4);
	}
}

static int parse_string(struct parser *ps, char **ret)
{
	struct strbuf sb;

	strbuf_init(&sb);
	strbuf_reserve(&sb, 16);
	ps->p++; /* opening quote */
	while (ps->p < ps->end && *ps->p != '"') {
		unsigned char c = (unsigned char)*ps->p;

		if (c < 0x20)
			goto bad;
		if (c >= 0x80) {
			/* RFC 8259 §8.1: UTF-8 only. Checked on a NUL-padded copy,
			 * since the text need not be NUL-terminated. */
			unsigned char seq[5] = { 0 };
			size_t avail = (size_t)(ps->end - ps->p), n;

			memcpy(seq, ps->p, avail < 4 ? avail : 4);
			n = utf8_valid_len(seq);
			if (n == 0)
				goto bad;
			strbuf_append(&sb, ps->p, n);
			ps->p += n;
			continue;
		}
		if (c != '\\') {
			strbuf_append(&sb, ps->p++, 1);
			continue;
		}
		if (ps->end - ps->p < 2)
			goto bad;
		switch (ps->p[1]) {
		case '"': case '\\': case '/':
			strbuf_append(&sb, ps->p + 1, 1);
			break;
		case 'b': strbuf_putc(&sb, '\b'); break;
		case 'f': strbuf_putc(&sb, '\f'); break;
		case 'n': strbuf_putc(&sb, '\n'); break;
		case 'r': strbuf_putc(&sb, '\r'); break;
		case 't': strbuf_putc(&sb, '\t'); break;
		case 'u': {
			uint32_t cp, lo;

			if (ps->end - ps->p < 6 || hex4(ps->p + 2, &cp) < 0)
				goto bad;
			if (cp >= 0xd800 && cp <= 0xdbff) {
				/* A high surrogate must be followed by a low one. */
				if (ps->end - ps->p < 12 || ps->p[6] != '\\' || ps->p[7] != 'u' ||
				    hex4(ps->p + 8, &lo) < 0 || lo < 0xdc00 || lo > 0xdfff)
					goto bad;
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				ps->p += 6;
			} else if (cp >= 0xdc00 && cp <= 0xdfff) {
				goto bad;
			}
			put_utf8(&sb, cp);
			ps->p += 4;
			break;
		}
		default:
			goto bad;
		}
		ps->p += 2;
	}
	if (ps->p >= ps->end)
		goto bad;
	ps->p++; /* closing quote */
	if (!strbuf_reserve(&sb, 0)) {
		strbuf_free(&sb);
		return fail(ps, -ENOMEM);
	}
	*ret = strbuf_steal(&sb, NULL);
	return *ret ? 0 : fail(ps, -ENOMEM);
bad:
	strbuf_free(&sb);
	return fail(ps, -EINVAL);
}

static int parse_number(struct parser *ps, double *ret)
{
	const char *s = ps->p;
	char buf[64];
	size_t n;

	if (s < ps->end && *s == '-')
		s++;
	if (s >= ps->end || *s < '0' || *s > '9')
		return fail(ps, -EINVAL);
	if (*s == '0')
		s++;
	else
		while (s < ps->end && *s >= '0' && *s <= '9')
			s++;
	if (s < ps->end && *s == '.') {
		s++;
		if (s >= ps->end || *s < '0' || *s > '9')
			return fail(ps, -EINVAL);
		while (s < ps->end && *s >= '0' && *s <= '9')
			s++;
	}
	if (s < ps->end && (*s == 'e' || *s == 'E')) {
		s++;
		if (s < ps->end && (*s == '+' || *s == '-'))
			s++;
		if (s >= ps->end || *s < '0' || *s > '9')
			return fail(ps, -EINVAL);
		while (s < ps->end && *s >= '0' && *s <= '9')
			s++;
	}
	n = (size_t)(s - ps->p);
	/* The grammar above admits only '.' as separator; strtod's locale is "C" unless someone set it. */
	if (n < sizeof(buf)) {
		memcpy(buf, ps->p, n);
		buf[n] = '\0';
		*ret = strtod(buf, NULL);
	} else {
		/* RFC 8259 sets no length limit: a long number is valid, just rare. */
		char *copy = strndup(ps->p, n);

		if (!copy)
			return fail(ps, -ENOMEM);
		*ret = strtod(copy, NULL);
		free(copy);
	}
	ps->p = s;
	return 0;
}

static int parse_value(struct parser *ps, struct json_value *v, int depth);

static int grow(struct json_value *v, size_t *cap, bool with_keys)
{
	size_t ncap = *cap ? *cap * 2 : 8;
	struct json_value *items;

	items = realloc(v->items, ncap * sizeof(*items));
	if (!items)
		return -ENOMEM;
	v->items = items;
	if (with_keys) {
		char **keys = realloc(v->keys, ncap * sizeof(*keys));

		if (!keys)
			return -ENOMEM;
		v->keys = keys;
	}
	*cap = ncap;
	return 0;
}

static int parse_container(struct parser *ps, struct json_value *v, int depth, bool object)
{
	char close = object ? '}' : ']';
	size_t cap = 0;
	int r;

	if (depth >= JSON_MAX_DEPTH)
		return fail(ps, -EINVAL);
	v->type = object ? JSON_OBJECT : JSON_ARRAY;
	ps->p++;
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == close) {
		ps->p++;
		return 0;
	}
	for (;;) {
		char *key = NULL;

		skip_ws(ps);
		if (object) {
			if (ps->p >= ps->end || *ps->p != '"')
				return fail(ps, -EINVAL);
			r = parse_string(ps, &key);
			if (r < 0)
				return r;
			skip_ws(ps);
			if (ps->p >= ps->end || *ps->p != ':') {
				free(key);
				return fail(ps, -EINVAL);
			}
			ps->p++;
		}
		if (v->n == cap && grow(v, &cap, object) < 0) {
			free(key);
			return fail(ps, -ENOMEM);
		}
		memset(&v->items[v->n], 0, sizeof(v->items[0]));
		if (object)
			v->keys[v->n] = key;
		v->n++;
		r = parse_value(ps, &v->items[v->n - 1], depth + 1);
		if (r < 0)
			return r;
		skip_ws(ps);
		if (ps->p < ps->end && *ps->p == ',') {
			ps->p++;
			continue;
		}
		if (ps->p < ps->end && *ps->p == close) {
			ps->p++;
			return 0;
		}
		return fail(ps, -EINVAL);
	}
}

static int literal(struct parser *ps, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0)
		return fail(ps, -EINVAL);
	ps->p += n;
	return 0;
}

static int parse_value(struct parser *ps, struct json_value *v, int depth)
{
	skip_ws(ps);
	if (ps->p >= ps->end)
		return fail(ps, -EINVAL);
	switch (*ps->p) {
	case '{':
		return parse_container(ps, v, depth, true);
	case '[':
		return parse_container(ps, v, depth, false);
	case '"':
		v->type = JSON_STRING;
		return parse_string(ps, &v->string);
	case 't':
		v->type = JSON_BOOL;
		v->boolean = true;
		return literal(ps, "true");
	case 'f':
		v->type = JSON_BOOL;
		return literal(ps, "false");
	case 'n':
		v->type = JSON_NULL;
		return literal(ps, "null");
	default:
		v->type = JSON_NUMBER;
		return parse_number(ps, &v->number);
	}
}

static void free_contents(struct json_value *v)
{
	size_t i;

	for (i = 0; i < v->n; i++) {
		free_contents(&v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
	free(v->string);
}

void json_free(struct json_value *v)
{
	if (!v)
		return;
	free_contents(v);
	free(v);
}

int json_parse(const char *text, size_t len, struct json_value **ret, size_t *error_offset)
{
	struct parser ps = { .p = text, .end = text + len, .start = text };
	struct json_value *v = calloc(1, sizeof(*v));
	int r;

	if (!v)
		return -ENOMEM;
	r = parse_value(&ps, v, 0);
	if (r == 0) {
		skip_ws(&ps);
		if (ps.p != ps.end)
			r = fail(&ps, -EINVAL);
	}
	if (r < 0) {
		if (error_offset)
			*error_offset = (size_t)(ps.p - ps.start);
		json_free(v);
		return ps.error ? ps.error : r;
	}
	*ret = v;
	return 0;
}

const struct json_value *json_get(const struct json_value *v, const char *key)
{
	size_t i;

	if (!v || v->type != JSON_OBJECT)
		return NULL;
	for (i = 0; i < v->n; i++)
		if (strcmp(v->keys[i], key) == 0)
			return &v->items[i];
	return NULL;
}

double json_number(const struct json_value *v)
{
	return v && v->type == JSON_NUMBER ? v->number : NAN;
}

const char *json_string(const struct json_value *v)
{
	return v && v->type == JSON_STRING ? v->string : "";
}
