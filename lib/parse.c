/* SPDX-License-Identifier: GPL-2.0 */
#include <errno.h>
#include <string.h>

#include "parse.h"

/* 2^53: every integer up to it is exact in a double. */
#define DOUBLE_EXACT_MAX (UINT64_C(1) << 53)
/* Fractional digits that count; later ones are accepted and ignored. */
#define DOUBLE_FRAC_DIGITS_MAX 9
#define DOUBLE_FRAC_SCALE_MAX UINT64_C(1000000000) /* 10^DOUBLE_FRAC_DIGITS_MAX */

bool parse_text_present(const char *buf, size_t len)
{
	return buf && len > 0;
}

bool parse_is_blank(char c)
{
	return c == ' ' || c == '\t';
}

bool parse_is_digit(char c)
{
	return c >= '0' && c <= '9';
}

bool parse_token_eq(const char *p, size_t n, const char *s)
{
	return strlen(s) == n && memcmp(p, s, n) == 0;
}

const char *parse_skip_blanks(const char *p, const char *end)
{
	while (p < end && parse_is_blank(*p))
		p++;
	return p;
}

const char *parse_word_end(const char *p, const char *end)
{
	while (p < end && !parse_is_blank(*p))
		p++;
	return p;
}

const char *parse_trim_end(const char *p, const char *end)
{
	while (end > p && (parse_is_blank(end[-1]) || end[-1] == '\r'))
		end--;
	return end;
}

void parse_trim(const char **p, const char **end)
{
	*p = parse_skip_blanks(*p, *end);
	*end = parse_trim_end(*p, *end);
}

bool parse_next_line(const char **p, const char *end, struct parse_line *ret)
{
	const char *eol;

	if (*p >= end)
		return false;
	eol = memchr(*p, '\n', (size_t) (end - *p));
	*ret = (struct parse_line){
		.start = *p,
		.end = eol ? eol : end,
		.terminated = eol != NULL,
	};
	*p = eol ? eol + 1 : end;
	return true;
}

int parse_lines(const char *buf, size_t len, int (*fn)(const struct parse_line *line, void *userdata),
		void *userdata)
{
	struct parse_line line;
	const char *p = buf;
	int r;

	while (parse_next_line(&p, buf + len, &line)) {
		r = fn(&line, userdata);
		if (r < 0)
			return r;
	}
	return 0;
}

const struct parse_field *parse_field_lookup(const struct parse_field *fields, size_t n, const char *key,
					     size_t key_len)
{
	/* The first byte rules out most keys without a strlen(): /proc/meminfo
	 * has about 55 lines, sampled ten times a second. */
	for (size_t i = 0; i < n; i++)
		if (key_len && fields[i].key[0] == key[0] && parse_token_eq(key, key_len, fields[i].key))
			return &fields[i];
	return NULL;
}

void parse_field_set(void *obj, unsigned *present, const struct parse_field *f, uint64_t v)
{
	memcpy((char *) obj + f->offset, &v, sizeof(v));
	*present |= f->flag;
}

bool parse_split_kv(const char *p, const char *end, struct parse_kv *ret)
{
	const char *key_end = parse_word_end(p, end);

	if (key_end == p)
		return false;
	*ret = (struct parse_kv){
		.key = p,
		.key_len = (size_t) (key_end - p),
		.val = parse_skip_blanks(key_end, end),
		.val_end = end,
	};
	return true;
}

int parse_u64_prefix(const char **p, const char *end, uint64_t *ret)
{
	const char *s = *p;
	uint64_t v = 0;

	if (s == end || !parse_is_digit(*s))
		return -EINVAL;
	for (; s < end && parse_is_digit(*s); s++) {
		unsigned d = (unsigned) (*s - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	*p = s;
	*ret = v;
	return 0;
}

int parse_u64(const char *p, const char *end, uint64_t *ret)
{
	uint64_t v;
	int r;

	if (p == end)
		return -ENODATA;
	r = parse_u64_prefix(&p, end, &v);
	if (r < 0)
		return r;
	if (p != end)
		return -EINVAL;
	*ret = v;
	return 0;
}

int parse_i64(const char *p, const char *end, int64_t *ret)
{
	bool negative = false;
	uint64_t v;
	int r;

	if (p == end)
		return -ENODATA;
	if (*p == '-') {
		negative = true;
		p++;
	}
	r = parse_u64(p, end, &v);
	if (r == -ENODATA)
		return -EINVAL; /* a sign without digits */
	if (r < 0)
		return r;
	if (negative) {
		if (v > (uint64_t) INT64_MAX + 1)
			return -ERANGE;
		/* -(INT64_MAX + 1) without overflowing an int64_t on the way */
		*ret = v == 0 ? 0 : -(int64_t) (v - 1) - 1;
		return 0;
	}
	if (v > INT64_MAX)
		return -ERANGE;
	*ret = (int64_t) v;
	return 0;
}

int parse_double(const char *p, const char *end, double *ret)
{
	uint64_t ip, frac = 0, scale = 1;
	bool counting = true;
	int r;

	if (p == end)
		return -ENODATA;
	r = parse_u64_prefix(&p, end, &ip);
	if (r < 0)
		return r;
	if (ip > DOUBLE_EXACT_MAX)
		return -ERANGE;

	if (p < end) {
		if (*p++ != '.' || p == end)
			return -EINVAL;
		for (; p < end; p++) {
			unsigned d;

			if (!parse_is_digit(*p))
				return -EINVAL;
			d = (unsigned) (*p - '0');
			/* Keep digits only while numerator and scale stay exact;
			 * the first one dropped ends the counting. */
			counting = counting && scale < DOUBLE_FRAC_SCALE_MAX &&
				   ip <= (DOUBLE_EXACT_MAX - d) / (scale * 10) &&
				   ip * scale * 10 + frac * 10 + d <= DOUBLE_EXACT_MAX;
			if (counting) {
				frac = frac * 10 + d;
				scale *= 10;
			}
		}
	}

	/* Both operands are exact, so this rounds once, like strtod(). */
	*ret = (double) (ip * scale + frac) / (double) scale;
	return 0;
}
