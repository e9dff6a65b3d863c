// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include "json_read.h"
#include "utf8.h"

static void skip_space(const char *s, size_t len, size_t *pos)
{
	while (*pos < len && (s[*pos] == ' ' || s[*pos] == '\t' || s[*pos] == '\n' || s[*pos] == '\r'))
		(*pos)++;
}

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The four hex digits of a \u escape at s[*pos] (after the "\u"). */
static int read_hex4(const char *s, size_t len, size_t *pos, uint32_t *ret)
{
	uint32_t v = 0;

	if (len - *pos < 4)
		return -EBADMSG;
	for (size_t i = 0; i < 4; i++) {
		int d = hex_value(s[*pos + i]);

		if (d < 0)
			return -EBADMSG;
		v = v << 4 | (uint32_t)d;
	}
	*pos += 4;
	*ret = v;
	return 0;
}

/* A \u escape (and the low half of a surrogate pair) at s[*pos], after the
 * backslash and 'u': the code point. */
static int read_unicode_escape(const char *s, size_t len, size_t *pos, uint32_t *ret)
{
	uint32_t hi, lo;

	if (read_hex4(s, len, pos, &hi) < 0)
		return -EBADMSG;
	if (hi >= 0xdc00 && hi <= 0xdfff)
		return -EBADMSG; /* a low half alone */
	if (hi < 0xd800 || hi > 0xdbff) {
		*ret = hi;
		return 0;
	}
	if (len - *pos < 2 || s[*pos] != '\\' || s[*pos + 1] != 'u')
		return -EBADMSG;
	*pos += 2;
	if (read_hex4(s, len, pos, &lo) < 0 || lo < 0xdc00 || lo > 0xdfff)
		return -EBADMSG;
	*ret = 0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00);
	return 0;
}

static size_t put_utf8(uint32_t cp, char out[static 4])
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | cp >> 12);
		out[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | cp >> 18);
	out[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	out[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* Length of the valid UTF-8 sequence at s[pos], looking at no byte past len; 0: invalid. */
static size_t utf8_len_bounded(const char *s, size_t len, size_t pos)
{
	unsigned char seq[5] = { 0 };
	size_t n = len - pos < 4 ? len - pos : 4;

	memcpy(seq, s + pos, n);
	return utf8_valid_len(seq);
}

/* The string starting at s[*pos] (its opening quote), checked; *pos past its
 * closing quote. With out: its value written there too (room for size bytes
 * and a NUL), *out_len its length. */
static int walk_string(const char *s, size_t len, size_t *pos, char *out, size_t size, size_t *out_len)
{
	size_t i = *pos + 1, n = 0;

	if (*pos >= len || s[*pos] != '"')
		return -EBADMSG;
	for (;;) {
		char piece[4];
		size_t piece_len;
		unsigned char c;

		if (i >= len)
			return -EBADMSG;
		c = (unsigned char)s[i];
		if (c == '"')
			break;
		if (c < 0x20)
			return -EBADMSG;
		if (c == '\\') {
			uint32_t cp;

			if (++i >= len)
				return -EBADMSG;
			switch (s[i++]) {
			case '"': cp = '"'; break;
			case '\\': cp = '\\'; break;
			case '/': cp = '/'; break;
			case 'b': cp = '\b'; break;
			case 'f': cp = '\f'; break;
			case 'n': cp = '\n'; break;
			case 'r': cp = '\r'; break;
			case 't': cp = '\t'; break;
			case 'u':
				if (read_unicode_escape(s, len, &i, &cp) < 0)
					return -EBADMSG;
				break;
			default:
				return -EBADMSG;
			}
			if (cp == 0 && out)
				return -EBADMSG; /* would cut the value short */
			piece_len = put_utf8(cp, piece);
		} else {
			piece_len = utf8_len_bounded(s, len, i);
			if (!piece_len)
				return -EBADMSG;
			memcpy(piece, s + i, piece_len);
			i += piece_len;
		}
		if (out) {
			if (size - n <= piece_len)
				return -ENOBUFS;
			memcpy(out + n, piece, piece_len);
		}
		n += piece_len;
	}
	if (out) {
		out[n] = '\0';
		*out_len = n;
	}
	*pos = i + 1;
	return 0;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static size_t skip_digits(const char *s, size_t len, size_t i)
{
	while (i < len && is_digit(s[i]))
		i++;
	return i;
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static int walk_number(const char *s, size_t len, size_t *pos)
{
	size_t i = *pos, j;

	if (i < len && s[i] == '-')
		i++;
	if (i >= len || !is_digit(s[i]))
		return -EBADMSG;
	i = s[i] == '0' ? i + 1 : skip_digits(s, len, i);
	if (i < len && s[i] == '.') {
		j = skip_digits(s, len, i + 1);
		if (j == i + 1)
			return -EBADMSG;
		i = j;
	}
	if (i < len && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < len && (s[i] == '+' || s[i] == '-'))
			i++;
		j = skip_digits(s, len, i);
		if (j == i)
			return -EBADMSG;
		i = j;
	}
	*pos = i;
	return 0;
}

static int walk_word(const char *s, size_t len, size_t *pos, const char *word)
{
	size_t n = strlen(word);

	if (len - *pos < n || memcmp(s + *pos, word, n) != 0)
		return -EBADMSG;
	*pos += n;
	return 0;
}

static int walk_value(const char *s, size_t len, size_t *pos, unsigned depth);

/* An object or array at s[*pos]: its members (key, ':', value) or elements, checked. */
static int walk_container(const char *s, size_t len, size_t *pos, unsigned depth)
{
	char close = s[*pos] == '{' ? '}' : ']';
	bool object = close == '}';

	if (depth >= JSON_READ_MAX_DEPTH)
		return -EBADMSG;
	(*pos)++;
	skip_space(s, len, pos);
	if (*pos < len && s[*pos] == close) {
		(*pos)++;
		return 0;
	}
	for (;;) {
		if (object) {
			if (walk_string(s, len, pos, NULL, 0, NULL) < 0)
				return -EBADMSG;
			skip_space(s, len, pos);
			if (*pos >= len || s[*pos] != ':')
				return -EBADMSG;
			(*pos)++;
			skip_space(s, len, pos);
		}
		if (walk_value(s, len, pos, depth + 1) < 0)
			return -EBADMSG;
		skip_space(s, len, pos);
		if (*pos >= len)
			return -EBADMSG;
		if (s[*pos] == close) {
			(*pos)++;
			return 0;
		}
		if (s[*pos] != ',')
			return -EBADMSG;
		(*pos)++;
		skip_space(s, len, pos);
	}
}

/* The value at s[*pos] (no whitespace before it), checked; *pos past it. */
static int walk_value(const char *s, size_t len, size_t *pos, unsigned depth)
{
	if (*pos >= len)
		return -EBADMSG;
	switch (s[*pos]) {
	case '{':
	case '[':
		return walk_container(s, len, pos, depth);
	case '"':
		return walk_string(s, len, pos, NULL, 0, NULL);
	case 't':
		return walk_word(s, len, pos, "true");
	case 'f':
		return walk_word(s, len, pos, "false");
	case 'n':
		return walk_word(s, len, pos, "null");
	default:
		return walk_number(s, len, pos);
	}
}

int json_read_value(const char *s, size_t len, struct json_span *ret)
{
	size_t pos = 0, start;

	*ret = (struct json_span){ NULL, 0 };
	if (!s)
		return -EBADMSG;
	skip_space(s, len, &pos);
	start = pos;
	if (walk_value(s, len, &pos, 0) < 0)
		return -EBADMSG;
	*ret = (struct json_span){ s + start, pos - start };
	skip_space(s, len, &pos);
	if (pos != len) {
		*ret = (struct json_span){ NULL, 0 };
		return -EBADMSG;
	}
	return 0;
}

/* Does the key (the string at s[*pos]) equal key? *pos past it. */
static int walk_key(const char *s, size_t len, size_t *pos, const char *key, bool *equal)
{
	char buf[256];
	size_t n;
	int r;

	r = walk_string(s, len, pos, buf, sizeof(buf), &n);
	if (r == -ENOBUFS) {
		/* Longer than any key asked for: check it, it is not ours. */
		*equal = false;
		return walk_string(s, len, pos, NULL, 0, NULL);
	}
	if (r < 0)
		return r;
	*equal = n == strlen(key) && memcmp(buf, key, n) == 0;
	return 0;
}

int json_read_member(struct json_span obj, const char *key, struct json_span *ret)
{
	const char *s = obj.p;
	size_t len = obj.len, pos = 0;
	bool found = false;

	*ret = (struct json_span){ NULL, 0 };
	if (!s || len == 0 || s[0] != '{')
		return -EBADMSG;
	pos = 1;
	skip_space(s, len, &pos);
	if (pos < len && s[pos] == '}')
		return pos + 1 == len ? -ENOENT : -EBADMSG;
	for (;;) {
		bool equal;
		size_t start;

		if (walk_key(s, len, &pos, key, &equal) < 0)
			return -EBADMSG;
		skip_space(s, len, &pos);
		if (pos >= len || s[pos] != ':')
			return -EBADMSG;
		pos++;
		skip_space(s, len, &pos);
		start = pos;
		if (walk_value(s, len, &pos, 1) < 0)
			return -EBADMSG;
		if (equal) {
			*ret = (struct json_span){ s + start, pos - start };
			found = true;
		}
		skip_space(s, len, &pos);
		if (pos >= len)
			return -EBADMSG;
		if (s[pos] == '}')
			break;
		if (s[pos] != ',')
			return -EBADMSG;
		pos++;
		skip_space(s, len, &pos);
	}
	if (pos + 1 != len) {
		*ret = (struct json_span){ NULL, 0 };
		return -EBADMSG;
	}
	return found ? 0 : -ENOENT;
}

int json_read_next(struct json_span arr, size_t *pos, struct json_span *ret)
{
	const char *s = arr.p;
	size_t len = arr.len, start;

	*ret = (struct json_span){ NULL, 0 };
	if (!s || len == 0 || s[0] != '[' || *pos > len)
		return -EBADMSG;
	if (*pos == 0) {
		*pos = 1;
		skip_space(s, len, pos);
		if (*pos < len && s[*pos] == ']') {
			if (*pos + 1 != len)
				return -EBADMSG;
			*pos = len;
			return 0;
		}
	} else if (*pos == len) {
		return 0;
	}
	start = *pos;
	if (walk_value(s, len, pos, 1) < 0)
		return -EBADMSG;
	*ret = (struct json_span){ s + start, *pos - start };
	skip_space(s, len, pos);
	if (*pos >= len)
		return -EBADMSG;
	if (s[*pos] == ']') {
		if (*pos + 1 != len)
			return -EBADMSG;
		*pos = len;
	} else if (s[*pos] == ',') {
		(*pos)++;
		skip_space(s, len, pos);
	} else {
		return -EBADMSG;
	}
	return 1;
}

int json_read_string(struct json_span v, char *buf, size_t size)
{
	size_t pos = 0, n;
	int r;

	if (size == 0)
		return -ENOBUFS;
	buf[0] = '\0';
	r = walk_string(v.p, v.len, &pos, buf, size, &n);
	if (r < 0) {
		buf[0] = '\0';
		return r;
	}
	if (pos != v.len) {
		buf[0] = '\0';
		return -EBADMSG;
	}
	return 0;
}
