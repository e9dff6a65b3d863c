// SPDX-License-Identifier: GPL-2.0
/* The daemon's JSON writer (the JSON API under /api/v1): any bytes given to
 * json_put_string come out as exactly one JSON string literal (RFC 8259),
 * decoded here by a strict reader of the harness's own, as valid UTF-8, and
 * valid UTF-8 comes back unchanged. The same bytes read as a double through
 * json_put_number give a JSON number that strtod reads back, or null for a
 * non-finite one. */
#include <math.h>
#include "fuzz.h"
#include "json.h"
#include "strbuf.h"
#include "utf8.h"

static int hex4(const char *p, unsigned *out)
{
	unsigned v = 0;

	for (int i = 0; i < 4; i++) {
		char c = p[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned)(c - 'A' + 10);
		else
			return -1;
	}
	*out = v;
	return 0;
}

static size_t put_utf8(char *o, unsigned cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | (cp >> 6));
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | (cp >> 12));
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | (cp >> 18));
	o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* Decodes the literal that is all of s[0..len) into out (room for len bytes);
 * -1 when it is not exactly one valid JSON string. */
static int decode_literal(const char *s, size_t len, char *out)
{
	size_t i = 1, o = 0;

	if (len < 2 || s[0] != '"' || s[len - 1] != '"')
		return -1;
	while (i < len - 1) {
		unsigned char c = (unsigned char)s[i];

		if (c < 0x20 || c == '"')
			return -1;
		if (c != '\\') {
			out[o++] = (char)c;
			i++;
			continue;
		}
		if (i + 1 >= len - 1)
			return -1;
		switch (s[i + 1]) {
		case '"': out[o++] = '"'; break;
		case '\\': out[o++] = '\\'; break;
		case '/': out[o++] = '/'; break;
		case 'b': out[o++] = '\b'; break;
		case 'f': out[o++] = '\f'; break;
		case 'n': out[o++] = '\n'; break;
		case 'r': out[o++] = '\r'; break;
		case 't': out[o++] = '\t'; break;
		case 'u': {
			unsigned cp, lo;

			if (i + 6 > len - 1 || hex4(s + i + 2, &cp) < 0)
				return -1;
			if (cp >= 0xdc00 && cp <= 0xdfff)
				return -1; /* a lone low surrogate */
			if (cp >= 0xd800 && cp <= 0xdbff) {
				if (i + 12 > len - 1 || s[i + 6] != '\\' || s[i + 7] != 'u' ||
				    hex4(s + i + 8, &lo) < 0 || lo < 0xdc00 || lo > 0xdfff)
					return -1;
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				i += 6;
			}
			if (cp == 0)
				return -1; /* the writer takes a C string: no NUL to escape */
			o += put_utf8(out + o, cp);
			i += 6;
			continue;
		}
		default:
			return -1;
		}
		i += 2;
	}
	out[o] = '\0';
	return 0;
}

static bool valid_utf8(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		size_t n = utf8_valid_len(p);

		if (!n)
			return false;
		p += n;
	}
	return true;
}

static void check_string(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstring(data, size), *decoded;
	struct strbuf sb;

	strbuf_init(&sb);
	json_put_string(&sb, s);
	FUZZ_CHECK(!strbuf_failed(&sb));
	decoded = malloc(sb.len + 1);
	FUZZ_CHECK(decoded != NULL);
	if (decode_literal(sb.data, sb.len, decoded) < 0) {
		fprintf(stderr, "written as: %.*s\n", (int)(sb.len > 400 ? 400 : sb.len), sb.data);
		FUZZ_CHECK(!"one valid JSON string literal");
	}
	FUZZ_CHECK(valid_utf8(decoded));
	/* Valid UTF-8 comes back unchanged; anything else only has U+FFFD put in. */
	if (valid_utf8(s))
		FUZZ_CHECK(strcmp(decoded, s) == 0);
	free(decoded);
	strbuf_free(&sb);
	free(s);
}

static void check_number(const uint8_t *data, size_t size)
{
	struct strbuf sb;
	double v, back;
	char *end;

	if (size < sizeof(v))
		return;
	memcpy(&v, data, sizeof(v));
	strbuf_init(&sb);
	json_put_number(&sb, v);
	FUZZ_CHECK(!strbuf_failed(&sb));
	strbuf_putc(&sb, '\0');
	if (!isfinite(v)) {
		FUZZ_CHECK(strcmp(sb.data, "null") == 0);
	} else {
		/* JSON numbers: no "inf", "nan", hex or leading '+'. */
		FUZZ_CHECK(strspn(sb.data, "-0123456789.eE+") == strlen(sb.data));
		FUZZ_CHECK(sb.data[0] == '-' || (sb.data[0] >= '0' && sb.data[0] <= '9'));
		back = strtod(sb.data, &end);
		FUZZ_CHECK(*end == '\0');
		FUZZ_CHECK(back == v || fabs(back - v) <= fabs(v) * 1e-15);
	}
	strbuf_free(&sb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check_string(data, size);
	check_number(data, size);
	return 0;
}
