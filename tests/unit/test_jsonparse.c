/* SPDX-License-Identifier: GPL-2.0 */
/* The JSON reader of memwatchd --top (lib/jsonparse.c): every value type,
 * escapes, numbers, the errors RFC 8259 demands (with the offset reported),
 * the nesting limit, the accessors on wrong types, a real /api/v1/windows
 * document (tests/fixtures/json/windows.json, captured from the daemon), and
 * random input that must never crash (run it under ASan/UBSan). */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "jsonparse.h"
#include "strbuf.h"
#include "utf8.h"

#ifndef FIXTURES_DIR
#error "FIXTURES_DIR must point at tests/fixtures"
#endif

#define WINDOWS_FIXTURE FIXTURES_DIR "/json/windows.json"

#define FUZZ_RANDOM_STRINGS 100000
#define FUZZ_FIXTURE_MUTATIONS 2000
#define FUZZ_ROUNDTRIPS 20000

/* A check for hot loops: every passing ck_assert costs check a write(2) (it
 * records the last location), so loops of millions of them only test the pipe. */
#define require(cond, ...)                        \
	do {                                      \
		if (!(cond))                      \
			ck_abort_msg(__VA_ARGS__); \
	} while (0)

/* ---- helpers ---- */

static struct json_value *parse_len_ok(const char *text, size_t len)
{
	struct json_value *v = NULL;
	size_t off = (size_t)-1;
	int r = json_parse(text, len, &v, &off);

	require(r == 0, "json_parse(%.*s) = %d (%s) at offset %zu, expected success", (int)(len > 200 ? 200 : len),
		text, r, strerror(-r), off);
	require(v != NULL, "v is NULL");
	return v;
}

static struct json_value *parse_ok(const char *text)
{
	return parse_len_ok(text, strlen(text));
}

static void printable(char *buf, size_t size, const char *text, size_t len)
{
	size_t i, o = 0;

	for (i = 0; i < len && o + 5 < size; i++) {
		unsigned char c = (unsigned char)text[i];

		if (c >= 0x20 && c < 0x7f)
			buf[o++] = (char)c;
		else
			o += (size_t)snprintf(buf + o, size - o, "\\x%02x", c);
	}
	buf[o] = '\0';
}

/* -EINVAL with the error at want_offset, and *ret left alone. */
static void invalid_len_at(const char *text, size_t len, size_t want_offset)
{
	struct json_value *v = NULL;
	size_t off = (size_t)-1;
	char shown[512];
	int r = json_parse(text, len, &v, &off);

	printable(shown, sizeof(shown), text, len);
	require(r == -EINVAL, "json_parse(\"%s\") = %d, expected -EINVAL", shown, r);
	require(v == NULL, "json_parse(\"%s\") failed but set *ret", shown);
	require(off == want_offset, "json_parse(\"%s\"): error offset %zu, expected %zu", shown, off, want_offset);
	/* The offset is optional. */
	require(json_parse(text, len, &v, NULL) == -EINVAL, "json_parse(\"%s\") without an offset pointer did not fail",
		shown);
	require(v == NULL, "v is not NULL");
}

static void invalid_at(const char *text, size_t want_offset)
{
	invalid_len_at(text, strlen(text), want_offset);
}

/* Structural sanity of a parsed tree; returns the number of values in it. */
static size_t check_tree(const struct json_value *v, int depth)
{
	size_t i, count = 1;

	require(depth <= JSON_MAX_DEPTH, "tree deeper (%d) than JSON_MAX_DEPTH", depth);
	switch (v->type) {
	case JSON_NULL:
	case JSON_BOOL:
		require(v->n == 0, "scalar with %zu items", v->n);
		break;
	case JSON_NUMBER:
		require(v->n == 0, "scalar with %zu items", v->n);
		require(!isnan(v->number), "a number parsed as NaN");
		break;
	case JSON_STRING:
		require(v->string != NULL, "v->string is NULL");
		require(v->n == 0, "string with %zu items", v->n);
		break;
	case JSON_OBJECT:
		require(v->n == 0 || v->keys, "object without keys");
		/* fall through */
	case JSON_ARRAY:
		require(v->n == 0 || v->items, "container of %zu items without items", v->n);
		for (i = 0; i < v->n; i++) {
			if (v->type == JSON_OBJECT)
				require(v->keys[i] != NULL, "v->keys[i] is NULL");
			count += check_tree(&v->items[i], depth + 1);
		}
		break;
	default:
		ck_abort_msg("bad type %d", (int)v->type);
	}
	return count;
}

static char *read_fixture(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	ck_assert_msg(f != NULL, "cannot open %s", path);
	ck_assert(fseek(f, 0, SEEK_END) == 0);
	n = ftell(f);
	ck_assert(n > 0);
	rewind(f);
	buf = malloc((size_t)n + 1);
	ck_assert_ptr_nonnull(buf);
	ck_assert_msg(fread(buf, 1, (size_t)n, f) == (size_t)n, "short read of %s", path);
	buf[n] = '\0';
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* xorshift64*: reproducible; MW_FUZZ_SEED overrides the seed. */
static uint64_t rng_state;

static void rng_seed(uint64_t fallback)
{
	const char *env = getenv("MW_FUZZ_SEED");

	rng_state = env && *env ? strtoull(env, NULL, 0) : fallback;
	if (!rng_state)
		rng_state = 1;
}

static uint64_t rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

static size_t rng_below(size_t n)
{
	return n ? (size_t)(rng() % n) : 0;
}

/* ---- valid documents ---- */

START_TEST(test_scalars)
{
	struct json_value *v;

	v = parse_ok("null");
	ck_assert_int_eq(v->type, JSON_NULL);
	json_free(v);

	v = parse_ok("true");
	ck_assert_int_eq(v->type, JSON_BOOL);
	ck_assert(v->boolean);
	json_free(v);

	v = parse_ok("false");
	ck_assert_int_eq(v->type, JSON_BOOL);
	ck_assert(!v->boolean);
	json_free(v);

	v = parse_ok("42");
	ck_assert_int_eq(v->type, JSON_NUMBER);
	ck_assert(v->number == 42.0);
	ck_assert(json_number(v) == 42.0);
	json_free(v);

	v = parse_ok("\"hello\"");
	ck_assert_int_eq(v->type, JSON_STRING);
	ck_assert_str_eq(v->string, "hello");
	ck_assert_str_eq(json_string(v), "hello");
	json_free(v);

	v = parse_ok("\"\"");
	ck_assert_int_eq(v->type, JSON_STRING);
	ck_assert_str_eq(v->string, "");
	json_free(v);

	v = parse_ok("[]");
	ck_assert_int_eq(v->type, JSON_ARRAY);
	ck_assert_uint_eq(v->n, 0);
	json_free(v);

	v = parse_ok("{}");
	ck_assert_int_eq(v->type, JSON_OBJECT);
	ck_assert_uint_eq(v->n, 0);
	ck_assert_ptr_null(json_get(v, "a"));
	json_free(v);

	/* The length bounds the text: what follows is not looked at. */
	v = parse_len_ok("[1]garbage", 3);
	ck_assert_int_eq(v->type, JSON_ARRAY);
	ck_assert_uint_eq(v->n, 1);
	json_free(v);
	v = parse_len_ok("12345", 2);
	ck_assert(v->number == 12.0);
	json_free(v);
	v = parse_len_ok("\"ab\"", 4);
	ck_assert_str_eq(v->string, "ab");
	json_free(v);

	json_free(NULL);
}
END_TEST

START_TEST(test_whitespace)
{
	struct json_value *v;

	v = parse_ok(" \t\r\n[ \t\r\n1 \t\r\n, \n\"a b\"\r\n,{ \"k\" \t: \n null } ] \n\t\r ");
	ck_assert_int_eq(v->type, JSON_ARRAY);
	ck_assert_uint_eq(v->n, 3);
	ck_assert(v->items[0].number == 1.0);
	ck_assert_str_eq(v->items[1].string, "a b");
	ck_assert_int_eq(v->items[2].type, JSON_OBJECT);
	ck_assert_int_eq(json_get(&v->items[2], "k")->type, JSON_NULL);
	json_free(v);

	v = parse_ok("\n\n  true  \n");
	ck_assert(v->type == JSON_BOOL && v->boolean);
	json_free(v);

	v = parse_ok("[ ]");
	ck_assert_uint_eq(v->n, 0);
	json_free(v);
	v = parse_ok("{\n}");
	ck_assert_uint_eq(v->n, 0);
	json_free(v);
}
END_TEST

START_TEST(test_nested)
{
	static const char doc[] =
		"{\"a\":[1,{\"b\":null,\"c\":[true,false,[]]}],\"d\":{\"e\":{\"f\":\"g\"}},\"h\":[[[[\"deep\"]]]],"
		"\"empty\":{},\"list\":[{},{}]}";
	struct json_value *v = parse_ok(doc);
	const struct json_value *a, *obj, *c, *deep;

	ck_assert_int_eq(v->type, JSON_OBJECT);
	ck_assert_uint_eq(v->n, 5);
	ck_assert_str_eq(v->keys[0], "a");
	ck_assert_str_eq(v->keys[1], "d");
	ck_assert_str_eq(v->keys[2], "h");
	ck_assert_str_eq(v->keys[3], "empty");
	ck_assert_str_eq(v->keys[4], "list");

	a = json_get(v, "a");
	ck_assert_ptr_nonnull(a);
	ck_assert_int_eq(a->type, JSON_ARRAY);
	ck_assert_uint_eq(a->n, 2);
	ck_assert(json_number(&a->items[0]) == 1.0);
	obj = &a->items[1];
	ck_assert_int_eq(obj->type, JSON_OBJECT);
	ck_assert_int_eq(json_get(obj, "b")->type, JSON_NULL);
	c = json_get(obj, "c");
	ck_assert_uint_eq(c->n, 3);
	ck_assert(c->items[0].type == JSON_BOOL && c->items[0].boolean);
	ck_assert(c->items[1].type == JSON_BOOL && !c->items[1].boolean);
	ck_assert(c->items[2].type == JSON_ARRAY && c->items[2].n == 0);

	ck_assert_str_eq(json_string(json_get(json_get(json_get(v, "d"), "e"), "f")), "g");
	deep = json_get(v, "h");
	ck_assert_int_eq(deep->type, JSON_ARRAY);
	deep = &deep->items[0].items[0].items[0].items[0];
	ck_assert_str_eq(json_string(deep), "deep");

	ck_assert_int_eq(json_get(v, "empty")->type, JSON_OBJECT);
	ck_assert_uint_eq(json_get(v, "empty")->n, 0);
	ck_assert_uint_eq(json_get(v, "list")->n, 2);
	ck_assert_uint_eq(check_tree(v, 0), 21);

	/* Keys are compared whole, and may be empty or contain escapes. */
	json_free(v);
	v = parse_ok("{\"\":1,\"ab\":2,\"a\\u0062c\":3,\"a\\\"\":4}");
	ck_assert(json_number(json_get(v, "")) == 1.0);
	ck_assert(json_number(json_get(v, "ab")) == 2.0);
	ck_assert(json_number(json_get(v, "abc")) == 3.0);
	ck_assert(json_number(json_get(v, "a\"")) == 4.0);
	ck_assert_ptr_null(json_get(v, "a"));
	ck_assert_ptr_null(json_get(v, "abcd"));
	json_free(v);

	/* Many members: the containers grow past their first allocation. */
	{
		struct strbuf sb;
		int i;

		strbuf_init(&sb);
		strbuf_puts(&sb, "{");
		for (i = 0; i < 1000; i++)
			strbuf_printf(&sb, "%s\"k%d\":[%d,\"v%d\"]", i ? "," : "", i, i, i);
		strbuf_puts(&sb, "}");
		ck_assert(!strbuf_failed(&sb));
		v = parse_len_ok(sb.data, sb.len);
		ck_assert_uint_eq(v->n, 1000);
		for (i = 0; i < 1000; i += 37) {
			char key[16], val[16];
			const struct json_value *m;

			snprintf(key, sizeof(key), "k%d", i);
			snprintf(val, sizeof(val), "v%d", i);
			m = json_get(v, key);
			ck_assert_ptr_nonnull(m);
			ck_assert(json_number(&m->items[0]) == i);
			ck_assert_str_eq(json_string(&m->items[1]), val);
		}
		json_free(v);
		strbuf_free(&sb);
	}
}
END_TEST

START_TEST(test_string_escapes)
{
	static const struct {
		const char *json;
		const char *want;
	} cases[] = {
		{ "\"\\\"\"", "\"" },
		{ "\"\\\\\"", "\\" },
		{ "\"\\/\"", "/" },
		{ "\"\\b\\f\\n\\r\\t\"", "\b\f\n\r\t" },
		{ "\"a\\nb\\tc\"", "a\nb\tc" },
		{ "\"\\u0041\\u0062\"", "Ab" },
		{ "\"\\u001f\\u007f\"", "\x1f\x7f" },
		{ "\"\\u00e9\"", "\xc3\xa9" },           /* é: 2 bytes */
		{ "\"\\u00E9\"", "\xc3\xa9" },           /* upper-case hex */
		{ "\"\\u07ff\"", "\xdf\xbf" },           /* last 2-byte code point */
		{ "\"\\u0800\"", "\xe0\xa0\x80" },       /* first 3-byte one */
		{ "\"\\u20ac\"", "\xe2\x82\xac" },       /* € */
		{ "\"\\ud7ff\"", "\xed\x9f\xbf" },       /* just below the surrogates */
		{ "\"\\ue000\"", "\xee\x80\x80" },       /* just above them */
		{ "\"\\uffff\"", "\xef\xbf\xbf" },
		{ "\"\\ud83d\\ude00\"", "\xf0\x9f\x98\x80" }, /* 😀 from a surrogate pair */
		{ "\"\\uD834\\uDD1E\"", "\xf0\x9d\x84\x9e" }, /* 𝄞, upper-case */
		{ "\"\\ud800\\udc00\"", "\xf0\x90\x80\x80" }, /* U+10000 */
		{ "\"\\udbff\\udfff\"", "\xf4\x8f\xbf\xbf" }, /* U+10FFFF */
		{ "\"x\\ud83d\\ude00y\\u00e9z\"", "x\xf0\x9f\x98\x80y\xc3\xa9z" },
		/* Raw UTF-8 and DEL need no escape. */
		{ "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"", "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80" },
		{ "\"\x7f\"", "\x7f" },
		{ "\"<script>alert(1)</script>\"", "<script>alert(1)</script>" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct json_value *v = parse_ok(cases[i].json);

		ck_assert_int_eq(v->type, JSON_STRING);
		ck_assert_msg(strcmp(v->string, cases[i].want) == 0, "%s parsed to a different string (%zu bytes)",
			      cases[i].json, strlen(v->string));
		json_free(v);
	}

	/* \u0000 is valid JSON; the C string ends there (the reader's strings have no length). */
	{
		struct json_value *v = parse_ok("\"a\\u0000b\"");

		ck_assert_int_eq(v->type, JSON_STRING);
		ck_assert_str_eq(v->string, "a");
		json_free(v);
	}

	/* A long string, all escapes, crossing the buffer's growth steps. */
	{
		struct strbuf sb;
		struct json_value *v;
		size_t k;

		strbuf_init(&sb);
		strbuf_putc(&sb, '"');
		for (k = 0; k < 5000; k++)
			strbuf_puts(&sb, "\\ud83d\\ude00\\n");
		strbuf_putc(&sb, '"');
		v = parse_len_ok(sb.data, sb.len);
		ck_assert_uint_eq(strlen(v->string), 5000 * 5);
		for (k = 0; k < 5000; k++)
			ck_assert(memcmp(v->string + k * 5, "\xf0\x9f\x98\x80\n", 5) == 0);
		json_free(v);
		strbuf_free(&sb);
	}
}
END_TEST

START_TEST(test_numbers)
{
	static const struct {
		const char *json;
		double want;
	} cases[] = {
		{ "0", 0.0 },
		{ "-0", -0.0 },
		{ "1", 1.0 },
		{ "-1", -1.0 },
		{ "7", 7.0 },
		{ "123456789", 123456789.0 },
		{ "-987654321", -987654321.0 },
		{ "24631959552", 24631959552.0 },
		{ "9007199254740992", 9007199254740992.0 },
		{ "18446744073709551615", 18446744073709551615.0 },
		{ "0.5", 0.5 },
		{ "-0.25", -0.25 },
		{ "3.14159", 3.14159 },
		{ "1796014797.001021", 1796014797.001021 },
		{ "0.9451569907493309", 0.9451569907493309 },
		{ "1e3", 1e3 },
		{ "1E3", 1e3 },
		{ "1e+3", 1e3 },
		{ "1e-3", 1e-3 },
		{ "-2.5E-3", -2.5e-3 },
		{ "0e0", 0.0 },
		{ "0.0e+00", 0.0 },
		{ "10e01", 100.0 },
		{ "1.7976931348623157e308", 1.7976931348623157e308 },
		{ "2.2250738585072014e-308", 2.2250738585072014e-308 },
		{ "5e-324", 5e-324 },
		{ "1e-400", 0.0 },
		/* RFC 8259 puts no limit on the length of a number. */
		{ "1.0000000000000000000000000000000000000000000000000000000000000000000000000001", 1.0 },
		{ "100000000000000000000000000000000000000000000000000000000000000000000000", 1e71 },
		{ "-0.00000000000000000000000000000000000000000000000000000000000000000000000000000000001", -1e-83 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct json_value *v = parse_ok(cases[i].json);

		ck_assert_int_eq(v->type, JSON_NUMBER);
		ck_assert_msg(v->number == cases[i].want, "%s parsed to %.17g, expected %.17g", cases[i].json, v->number,
			      cases[i].want);
		ck_assert_msg(signbit(v->number) == signbit(cases[i].want), "%s: wrong sign", cases[i].json);
		json_free(v);
	}

	/* Past the range of a double: infinity, but still a number. */
	{
		struct json_value *v = parse_ok("[1e400,-1e400]");

		ck_assert(isinf(v->items[0].number) && v->items[0].number > 0);
		ck_assert(isinf(v->items[1].number) && v->items[1].number < 0);
		json_free(v);
	}

	/* Numbers end at any delimiter. */
	{
		struct json_value *v = parse_ok("[1,-2,3.5e1,0,-0.5]");

		ck_assert_uint_eq(v->n, 5);
		ck_assert(v->items[0].number == 1 && v->items[1].number == -2 && v->items[2].number == 35 &&
			  v->items[3].number == 0 && v->items[4].number == -0.5);
		json_free(v);
		v = parse_ok("{\"a\":1e2}");
		ck_assert(json_number(json_get(v, "a")) == 100);
		json_free(v);
		v = parse_ok("[0]");
		ck_assert(v->items[0].number == 0);
		json_free(v);
	}
}
END_TEST

/* ---- invalid documents ---- */

START_TEST(test_empty_input)
{
	invalid_len_at("", 0, 0);
	invalid_at(" ", 1);
	invalid_at("   ", 3);
	invalid_at("\n\t\r", 3);
}
END_TEST

START_TEST(test_trailing_commas)
{
	invalid_at("[1,2,]", 5);
	invalid_at("[1,]", 3);
	invalid_at("[,]", 1);
	invalid_at("[,1]", 1);
	invalid_at("[1,,2]", 3);
	invalid_at("{\"a\":1,}", 7);
	invalid_at("{\"a\":1 , }", 9);
	invalid_at("{,}", 1);
	invalid_at("{\"a\":1,,\"b\":2}", 7);
	invalid_at("[1,2],", 5);
}
END_TEST

START_TEST(test_single_quotes_and_bare_words)
{
	invalid_at("'a'", 0);
	invalid_at("['a']", 1);
	invalid_at("{'a':1}", 1);
	invalid_at("{\"a\":'b'}", 5);
	invalid_at("{a:1}", 1);
	invalid_at("{1:2}", 1);
	invalid_at("{null:1}", 1);
	invalid_at("tru", 0);
	invalid_at("True", 0);
	invalid_at("nul", 0);
	invalid_at("fals", 0);
	invalid_at("[t]", 1);
	invalid_at("undefined", 0);
	invalid_at("/* comment */ 1", 0);
	invalid_at("1 // comment", 2);
	invalid_at("\xef\xbb\xbf{}", 0); /* byte order mark */
}
END_TEST

START_TEST(test_control_characters)
{
	char doc[8];
	int c;

	invalid_at("\"a\tb\"", 2);
	invalid_at("[\"a\tb\"]", 3);
	invalid_at("\"a\nb\"", 2);
	invalid_at("\"\r\"", 1);
	invalid_at("{\"k\x01\":1}", 3);
	invalid_len_at("\"a\0b\"", 5, 2);
	/* Every byte below 0x20 must be escaped. */
	for (c = 0; c < 0x20; c++) {
		doc[0] = '"';
		doc[1] = (char)c;
		doc[2] = '"';
		invalid_len_at(doc, 3, 1);
	}
	/* Whitespace is exactly space, tab, LF and CR. */
	invalid_at("[1]\x0b", 3);
	invalid_at("\f[]", 0);
	invalid_at("[\xc2\xa0" "1]", 1); /* no-break space */
	invalid_len_at("[1]\0", 4, 3);
	invalid_len_at("\0", 1, 0);
}
END_TEST

START_TEST(test_bad_escapes_and_surrogates)
{
	invalid_at("\"\\ud800\"", 1);
	invalid_at("\"\\udbff\"", 1);
	invalid_at("\"\\udc00\"", 1);
	invalid_at("\"\\udfff\"", 1);
	invalid_at("\"ab\\udfff\"", 3);
	invalid_at("\"\\ud800\\u0041\"", 1);      /* high surrogate, then no low one */
	invalid_at("\"\\ud800\\ud800\"", 1);
	invalid_at("\"\\ud800\\ue000\"", 1);
	invalid_at("\"\\ud800x\"", 1);
	invalid_at("\"\\ud800\\n\"", 1);
	invalid_at("\"\\ud800\\udc0\"", 1);
	invalid_at("\"\\udc00\\ud800\"", 1);      /* the wrong way round */
	invalid_at("\"\\ud800", 1);
	/* Raw bytes must be UTF-8 (RFC 8259 §8.1); found by fuzz_jsonparse
	 * (tests/fixtures/fuzz-regressions/jsonparse). */
	invalid_at("\"\xff\"", 1);
	invalid_at("\"ab\xc3\"", 3);             /* cut sequence */
	invalid_at("\"\xc0\xaf\"", 1);          /* overlong '/' */
	invalid_at("\"\xed\xa0\x80\"", 1);      /* a surrogate, encoded */
	invalid_at("\"\xf4\x90\x80\x80\"", 1);  /* past U+10FFFF */
	invalid_len_at("\"\xe2\x82", 3, 1);       /* cut by the end of the text */
	invalid_at("\"\\x41\"", 1);
	invalid_at("\"\\'\"", 1);
	invalid_at("\"\\0\"", 1);
	invalid_at("\"\\a\"", 1);
	invalid_at("\"\\U0041\"", 1);
	invalid_at("\"\\u12g4\"", 1);
	invalid_at("\"\\u 123\"", 1);
	invalid_at("\"\\u123\"", 1);
	invalid_at("\"\\u12", 1);
	invalid_at("\"\\u", 1);
	invalid_at("\"\\", 1);
	invalid_at("{\"a\\q\":1}", 3);
}
END_TEST

START_TEST(test_bad_numbers)
{
	/* Leading zeros. */
	invalid_at("01", 1);
	invalid_at("00", 1);
	invalid_at("-01", 2);
	invalid_at("[01]", 2);
	invalid_at("007", 1);
	/* A fraction or exponent needs digits; a number needs a digit before the point. */
	invalid_at("1.", 0);
	invalid_at("[1.]", 1);
	invalid_at("1.e3", 0);
	invalid_at(".5", 0);
	invalid_at("[.5]", 1);
	invalid_at("-.5", 0);
	invalid_at("1e", 0);
	invalid_at("1e+", 0);
	invalid_at("1E-", 0);
	invalid_at("1e+-1", 0);
	invalid_at("-", 0);
	invalid_at("--1", 0);
	invalid_at("[-]", 1);
	/* No plus sign, no other bases, no separators. */
	invalid_at("+1", 0);
	invalid_at("[+1]", 1);
	invalid_at("0x1F", 1);
	invalid_at("1_000", 1);
	invalid_at("1,000", 1);
	invalid_at("1 2", 2);
	invalid_at("1.5.2", 3);
	invalid_at("1e5e5", 3);
	/* No NaN or Infinity, however spelled. */
	invalid_at("NaN", 0);
	invalid_at("nan", 0);
	invalid_at("-NaN", 0);
	invalid_at("Infinity", 0);
	invalid_at("-Infinity", 0);
	invalid_at("inf", 0);
	invalid_at("[1,Infinity]", 3);
	invalid_at("{\"a\":NaN}", 5);
	invalid_at("{\"a\":-Infinity}", 5);
}
END_TEST

START_TEST(test_unterminated)
{
	invalid_at("\"", 1);
	invalid_at("\"abc", 4);
	invalid_at("[\"abc]", 6);
	invalid_at("[", 1);
	invalid_at("[1", 2);
	invalid_at("[1,2", 4);
	invalid_at("[1,", 3);
	invalid_at("[[[]]", 5);
	invalid_at("{", 1);
	invalid_at("{\"a\"", 4);
	invalid_at("{\"a\":", 5);
	invalid_at("{\"a\":1", 6);
	invalid_at("{\"a\":1,", 7);
	invalid_at("{\"a", 3);
	invalid_at("[\"a\",{\"b\":[", 11);
	invalid_at("[1}", 2);
	invalid_at("{\"a\":1]", 6);
	invalid_at("{\"a\"}", 4);
	invalid_at("{\"a\" 1}", 5);
	invalid_at("{\"a\"::1}", 5);
	invalid_at("[1 2]", 3);
	invalid_at("{\"a\":1 \"b\":2}", 7);
}
END_TEST

START_TEST(test_trailing_garbage)
{
	invalid_at("{}x", 2);
	invalid_at("{}}", 2);
	invalid_at("[]]", 2);
	invalid_at("[] ]", 3);
	invalid_at("[1,2]]", 5);
	invalid_at("1]", 1);
	invalid_at("null null", 5);
	invalid_at("truex", 4);
	invalid_at("falsey", 5);
	invalid_at("nullnull", 4);
	invalid_at("\"a\"\"b\"", 3);
	invalid_at("{} {}", 3);
	invalid_at("0 \n x", 4);
}
END_TEST

/* n nested arrays (or objects {"a":...}) around a 0. */
static char *nest(int n, bool objects, size_t *len)
{
	struct strbuf sb;
	int i;

	strbuf_init(&sb);
	for (i = 0; i < n; i++)
		strbuf_puts(&sb, objects ? "{\"a\":" : "[");
	strbuf_putc(&sb, '0');
	for (i = 0; i < n; i++)
		strbuf_putc(&sb, objects ? '}' : ']');
	ck_assert(!strbuf_failed(&sb));
	return strbuf_steal(&sb, len);
}

START_TEST(test_depth_limit)
{
	struct json_value *v;
	const struct json_value *p;
	char *doc;
	size_t len;
	int i;

	/* Exactly JSON_MAX_DEPTH levels: accepted, and all there. */
	doc = nest(JSON_MAX_DEPTH, false, &len);
	v = parse_len_ok(doc, len);
	for (i = 0, p = v; i < JSON_MAX_DEPTH; i++, p = &p->items[0]) {
		ck_assert_int_eq(p->type, JSON_ARRAY);
		ck_assert_uint_eq(p->n, 1);
	}
	ck_assert_int_eq(p->type, JSON_NUMBER);
	json_free(v);
	free(doc);

	doc = nest(JSON_MAX_DEPTH, true, &len);
	v = parse_len_ok(doc, len);
	for (i = 0, p = v; i < JSON_MAX_DEPTH; i++)
		p = json_get(p, "a");
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(p->type, JSON_NUMBER);
	json_free(v);
	free(doc);

	/* One more: rejected where the extra level opens. */
	doc = nest(JSON_MAX_DEPTH + 1, false, &len);
	invalid_len_at(doc, len, JSON_MAX_DEPTH);
	free(doc);
	doc = nest(JSON_MAX_DEPTH + 1, true, &len);
	invalid_len_at(doc, len, (size_t)JSON_MAX_DEPTH * 5);
	free(doc);

	/* Mixed, with the scalar at the limit wrapped in an empty container. */
	{
		struct strbuf sb;

		strbuf_init(&sb);
		for (i = 0; i < JSON_MAX_DEPTH - 1; i++)
			strbuf_puts(&sb, i % 2 ? "{\"k\":" : "[");
		strbuf_puts(&sb, "[]");
		for (i = JSON_MAX_DEPTH - 2; i >= 0; i--)
			strbuf_puts(&sb, i % 2 ? "}" : "]");
		v = parse_len_ok(sb.data, sb.len);
		json_free(v);
		strbuf_reset(&sb);
		for (i = 0; i < JSON_MAX_DEPTH; i++)
			strbuf_puts(&sb, i % 2 ? "{\"k\":" : "[");
		len = sb.len; /* where the level past the limit opens */
		strbuf_puts(&sb, "{}");
		for (i = JSON_MAX_DEPTH - 1; i >= 0; i--)
			strbuf_puts(&sb, i % 2 ? "}" : "]");
		invalid_len_at(sb.data, sb.len, len);
		strbuf_free(&sb);
	}

	/* Hostile depth does not reach the stack: a million brackets, open and unclosed. */
	len = 1000000;
	doc = malloc(len);
	ck_assert_ptr_nonnull(doc);
	memset(doc, '[', len);
	invalid_len_at(doc, len, JSON_MAX_DEPTH);
	memset(doc, '{', len);
	invalid_len_at(doc, len, 1);
	for (i = 0; (size_t)i + 5 <= len; i += 5)
		memcpy(doc + i, "{\"a\":", 5);
	invalid_len_at(doc, len, (size_t)JSON_MAX_DEPTH * 5);
	free(doc);
}
END_TEST

/* ---- accessors ---- */

START_TEST(test_accessors_wrong_types)
{
	struct json_value *v = parse_ok("{\"n\":1.5,\"s\":\"str\",\"b\":true,\"z\":null,\"a\":[1,\"x\"],\"o\":{\"k\":2},"
					"\"nums\":\"12\"}");
	const struct json_value *n = json_get(v, "n"), *s = json_get(v, "s"), *b = json_get(v, "b");
	const struct json_value *z = json_get(v, "z"), *a = json_get(v, "a"), *o = json_get(v, "o");

	ck_assert(n && s && b && z && a && o);

	/* json_get: only objects have members. */
	ck_assert_ptr_null(json_get(NULL, "k"));
	ck_assert_ptr_null(json_get(n, "k"));
	ck_assert_ptr_null(json_get(s, "k"));
	ck_assert_ptr_null(json_get(b, "k"));
	ck_assert_ptr_null(json_get(z, "k"));
	ck_assert_ptr_null(json_get(a, "k"));
	ck_assert_ptr_null(json_get(a, "0"));
	ck_assert_ptr_null(json_get(o, "missing"));
	ck_assert_ptr_null(json_get(v, "N"));
	ck_assert_ptr_null(json_get(json_get(v, "missing"), "k"));
	ck_assert(json_number(json_get(o, "k")) == 2.0);

	/* json_number: NaN for anything but a number. */
	ck_assert(json_number(n) == 1.5);
	ck_assert(isnan(json_number(NULL)));
	ck_assert(isnan(json_number(s)));
	ck_assert(isnan(json_number(json_get(v, "nums"))));
	ck_assert(isnan(json_number(b)));
	ck_assert(isnan(json_number(z)));
	ck_assert(isnan(json_number(a)));
	ck_assert(isnan(json_number(o)));
	ck_assert(isnan(json_number(&a->items[1])));
	ck_assert(json_number(&a->items[0]) == 1.0);

	/* json_string: "" for anything but a string, never NULL. */
	ck_assert_str_eq(json_string(s), "str");
	ck_assert_str_eq(json_string(NULL), "");
	ck_assert_str_eq(json_string(n), "");
	ck_assert_str_eq(json_string(b), "");
	ck_assert_str_eq(json_string(z), "");
	ck_assert_str_eq(json_string(a), "");
	ck_assert_str_eq(json_string(o), "");
	ck_assert_str_eq(json_string(&a->items[1]), "x");
	json_free(v);

	/* On a scalar document. */
	v = parse_ok("3");
	ck_assert_ptr_null(json_get(v, "a"));
	ck_assert_str_eq(json_string(v), "");
	json_free(v);
	v = parse_ok("\"3\"");
	ck_assert(isnan(json_number(v)));
	json_free(v);
}
END_TEST

/* ---- the daemon's own format ---- */

static const struct json_value *family(const struct json_value *window, const char *name)
{
	const struct json_value *f = json_get(json_get(window, "metrics"), name);

	ck_assert_msg(f != NULL, "no family %s in the window", name);
	ck_assert_int_eq(f->type, JSON_ARRAY);
	return f;
}

static double first_value(const struct json_value *window, const char *name, const char *field)
{
	const struct json_value *f = family(window, name);

	ck_assert_msg(f->n > 0, "family %s is empty", name);
	return json_number(json_get(&f->items[0], field));
}

START_TEST(test_windows_fixture)
{
	static const double seq[] = { 5, 6, 7 };
	static const double start[] = { 1796015413.356960, 1796015413.860395, 1796015414.362572 };
	static const double end[] = { 1796015413.860395, 1796015414.362572, 1796015414.860378 };
	static const double last[] = { 23889813504, 23889563648, 23885438976 };
	static const double amin[] = { 23889813504, 23889563648, 23885438976 };
	static const double amax[] = { 23889813504, 23889563648, 23889526784 };
	static const size_t series[] = { 417, 417, 411 };
	static const char *const collectors[][3] = {
		{ "meminfo", "active", "procfs" }, { "psi", "active", "procfs" },   { "kswapd", "active", "tp_btf" },
		{ "reclaim", "active", "tp_btf" }, { "alloc", "active", "tp_btf" }, { "faults", "active", "iter" },
		{ "memavail", "active", "procfs" }, { "oom", "active", "tp_btf" },  { "cgroup", "active", "cgroupfs" },
	};
	size_t len, i, k;
	char *text = read_fixture(WINDOWS_FIXTURE, &len);
	struct json_value *doc = parse_len_ok(text, len);
	const struct json_value *windows, *w, *ab, *f, *sample, *labels;

	ck_assert_int_eq(doc->type, JSON_OBJECT);
	ck_assert_uint_eq(doc->n, 1);
	windows = json_get(doc, "windows");
	ck_assert_ptr_nonnull(windows);
	ck_assert_int_eq(windows->type, JSON_ARRAY);
	ck_assert_uint_eq(windows->n, 3);

	for (i = 0; i < 3; i++) {
		size_t total = 0;

		w = &windows->items[i];
		ck_assert(json_number(json_get(w, "seq")) == seq[i]);
		ck_assert_msg(fabs(json_number(json_get(w, "start")) - start[i]) < 1e-6, "window %zu start %.6f", i,
			      json_number(json_get(w, "start")));
		ck_assert_msg(fabs(json_number(json_get(w, "end")) - end[i]) < 1e-6, "window %zu end %.6f", i,
			      json_number(json_get(w, "end")));
		ck_assert(json_number(json_get(w, "start")) < json_number(json_get(w, "end")));
		ab = json_get(w, "available_bytes");
		ck_assert_int_eq(ab->type, JSON_OBJECT);
		ck_assert(json_number(json_get(ab, "last")) == last[i]);
		ck_assert(json_number(json_get(ab, "min")) == amin[i]);
		ck_assert(json_number(json_get(ab, "max")) == amax[i]);
		ck_assert_int_eq(json_get(ab, "at_pressure_min")->type, JSON_NULL);
		ck_assert(isnan(json_number(json_get(ab, "at_pressure_min"))));
		ck_assert_uint_eq(json_get(w, "metrics")->n, 82);
		for (k = 0; k < json_get(w, "metrics")->n; k++)
			total += json_get(w, "metrics")->items[k].n;
		ck_assert_uint_eq(total, series[i]);
		/* The window's gauge agrees with available_bytes.last, the end timestamp with "end". */
		ck_assert(first_value(w, "memwatch_memory_available_bytes", "value") == last[i]);
		ck_assert(fabs(first_value(w, "memwatch_window_end_timestamp_seconds", "value") - end[i]) < 1e-3);
		if (i > 0)
			ck_assert(json_number(json_get(w, "start")) == json_number(json_get(&windows->items[i - 1], "end")));
	}

	w = &windows->items[2];
	ck_assert_str_eq(json_get(w, "metrics")->keys[0], "memwatch_memory_total_bytes");
	ck_assert_str_eq(json_get(w, "metrics")->keys[81], "memwatch_series_dropped_total");
	ck_assert(first_value(w, "memwatch_memory_total_bytes", "value") == 25276026880.0);
	ck_assert(first_value(w, "memwatch_window_seconds", "value") == 0.5);
	ck_assert(first_value(w, "memwatch_memory_available_ratio", "value") == 0.9449839205108489);
	ck_assert(first_value(w, "memwatch_memory_available_slope_bytes_per_second", "value") == -12822270.414273372);
	ck_assert(first_value(w, "memwatch_page_allocated_bytes_total", "value") == 1057517568.0);
	ck_assert(first_value(w, "memwatch_page_allocated_bytes_total", "delta") == 151859200.0);
	/* A histogram: count, sum and deltas, no value. */
	sample = &family(w, "memwatch_direct_reclaim_seconds")->items[0];
	ck_assert(json_number(json_get(sample, "count")) == 0 && json_number(json_get(sample, "sum")) == 0);
	ck_assert(json_number(json_get(sample, "count_delta")) == 0 && json_number(json_get(sample, "sum_delta")) == 0);
	ck_assert_ptr_null(json_get(sample, "value"));
	/* Labelled series, "other" included. */
	f = family(w, "memwatch_process_minor_faults_total");
	ck_assert_uint_eq(f->n, 8);
	labels = json_get(&f->items[0], "labels");
	ck_assert_str_eq(json_string(json_get(labels, "pid")), "19994");
	ck_assert_str_eq(json_string(json_get(labels, "comm")), "palk");
	ck_assert(json_number(json_get(&f->items[0], "value")) == 103641);
	ck_assert(json_number(json_get(&f->items[0], "delta")) == 18006);
	ck_assert_str_eq(json_string(json_get(json_get(&f->items[1], "labels"), "comm")), "memfd:sealed-91");
	f = family(w, "memwatch_process_memcg_reclaims_total");
	ck_assert_uint_eq(f->n, 1);
	ck_assert_str_eq(json_string(json_get(json_get(&f->items[0], "labels"), "pid")), "other");
	ck_assert_str_eq(json_string(json_get(json_get(&f->items[0], "labels"), "comm")), "");
	f = family(w, "memwatch_cgroup_memory_usage_bytes");
	ck_assert_uint_eq(f->n, 51);
	ck_assert_str_eq(json_string(json_get(json_get(&f->items[1], "labels"), "cgroup")), "/process_api");
	ck_assert(json_number(json_get(&f->items[1], "value")) == 11856502784.0);
	/* Every collector, in order, with state and mode. */
	f = family(w, "memwatch_collector_info");
	ck_assert_uint_eq(f->n, 9);
	for (i = 0; i < 9; i++) {
		labels = json_get(&f->items[i], "labels");
		ck_assert_str_eq(json_string(json_get(labels, "collector")), collectors[i][0]);
		ck_assert_str_eq(json_string(json_get(labels, "state")), collectors[i][1]);
		ck_assert_str_eq(json_string(json_get(labels, "mode")), collectors[i][2]);
		ck_assert_str_eq(json_string(json_get(labels, "reason")), "");
		ck_assert(json_number(json_get(&f->items[i], "value")) == 1.0);
	}
	ck_assert_uint_gt(check_tree(doc, 0), 1000);
	json_free(doc);

	/* Every truncation of it is an error (only the final newline may go), at an offset inside the text. */
	{
		size_t close_at = len;

		while (close_at > 0 && text[close_at - 1] != '}')
			close_at--;
		ck_assert_uint_gt(close_at, 0);
		for (i = 0; i < close_at; i += i < 4096 ? 1 : 97) {
			struct json_value *v = NULL;
			size_t off = (size_t)-1;
			int r = json_parse(text, i, &v, &off);

			require(r == -EINVAL, "the fixture cut at %zu bytes parsed (%d)", i, r);
			require(off <= i, "the fixture cut at %zu bytes: error offset %zu", i, off);
		}
		doc = parse_len_ok(text, close_at);
		json_free(doc);
	}
	free(text);
}
END_TEST

/* ---- robustness ---- */

/* One parse of fuzzed input: success (then a sane tree) or -EINVAL at an offset inside it. */
static bool fuzz_one(const char *buf, size_t len, uint64_t seed, size_t iter)
{
	struct json_value *v = NULL;
	size_t off = (size_t)-1;
	int r = json_parse(buf, len, &v, &off);

	require(r == 0 || r == -EINVAL, "seed 0x%" PRIx64 " iteration %zu: json_parse returned %d", seed, iter, r);
	if (r == 0) {
		require(v != NULL, "v is NULL");
		check_tree(v, 0);
		json_free(v);
		return true;
	}
	require(v == NULL, "v is not NULL");
	require(off <= len, "seed 0x%" PRIx64 " iteration %zu: error offset %zu past the end (%zu)", seed, iter,
		off, len);
	return false;
}

START_TEST(test_fuzz_random_bytes)
{
	static const char *const tokens[] = {
		"{", "}", "[", "]", ",", ":", " ", "\n", "\"", "\\", "\"a\"", "\"k\":", "\"\\u00e9\"", "\"\\ud83d\\ude00\"",
		"\"\\ud800\"", "\\ud83d", "\\ude00", "\\u00", "\\u", "0", "1", "-", "-1.5e3", "0.25", "1e400", ".",
		"e", "+", "true", "false", "null",
		"nul", "NaN", "\t", "\x01", "\xff", "\xc3\xa9", "'",
	};
	uint64_t seed;
	size_t iter, ok = 0;
	char buf[256];

	rng_seed(0x6a736f6e70617273ULL);
	seed = rng_state;
	for (iter = 0; iter < FUZZ_RANDOM_STRINGS; iter++) {
		size_t len = 0, want = rng_below(64), i;
		char *heap;

		if (iter % 2 == 0) {
			/* Raw bytes, any value. */
			for (i = 0; i < want; i++)
				buf[len++] = (char)(rng() & 0xff);
		} else {
			/* A soup of JSON tokens, so that some of them parse and the deep paths run. */
			while (len < want) {
				const char *t = tokens[rng_below(sizeof(tokens) / sizeof(tokens[0]))];
				size_t n = strlen(t);

				if (len + n > sizeof(buf))
					break;
				memcpy(buf + len, t, n);
				len += n;
			}
		}
		/* Exactly len bytes on the heap, so ASan sees any read past the end. */
		heap = malloc(len ? len : 1);
		require(heap != NULL, "heap is NULL");
		memcpy(heap, buf, len);
		ok += fuzz_one(heap, len, seed, iter);
		free(heap);
	}
	fprintf(stderr, "jsonparse fuzz (seed 0x%" PRIx64 "): %zu of %d random inputs parsed\n", seed, ok,
		FUZZ_RANDOM_STRINGS);
	require(ok > 0, "no random input parsed: the generator does not reach the success paths");
}
END_TEST

START_TEST(test_fuzz_fixture_mutations)
{
	static const char interesting[] = "{}[],:\"\\ 0123456789-+.eEtfnu\x01\xff";
	size_t len, iter, ok = 0;
	char *text = read_fixture(WINDOWS_FIXTURE, &len);
	uint64_t seed;

	rng_seed(0x6d75746174696f6eULL);
	seed = rng_state;
	for (iter = 0; iter < FUZZ_FIXTURE_MUTATIONS; iter++) {
		size_t cap = len + 64, n = len, edits = 1 + rng_below(8), e;
		char *buf = malloc(cap);

		require(buf != NULL, "buf is NULL");
		memcpy(buf, text, len);
		for (e = 0; e < edits && n > 0; e++) {
			size_t at = rng_below(n);

			switch (rng_below(6)) {
			case 0: /* flip bits */
				buf[at] = (char)(buf[at] ^ (char)(1u << rng_below(8)));
				break;
			case 1: /* overwrite with a byte that matters to the grammar */
				buf[at] = interesting[rng_below(sizeof(interesting) - 1)];
				break;
			case 2: /* delete */
				memmove(buf + at, buf + at + 1, n - at - 1);
				n--;
				break;
			case 3: /* insert */
				if (n < cap) {
					memmove(buf + at + 1, buf + at, n - at);
					buf[at] = interesting[rng_below(sizeof(interesting) - 1)];
					n++;
				}
				break;
			case 4: /* truncate */
				n = at;
				break;
			default: /* change a digit: the document usually stays valid */
				for (; at < n && !(buf[at] >= '0' && buf[at] <= '9'); at++)
					;
				if (at < n)
					buf[at] = (char)('0' + rng_below(10));
				break;
			}
		}
		/* Exactly n bytes, so ASan sees a read past the end. */
		{
			char *exact = malloc(n ? n : 1);

			require(exact != NULL, "exact is NULL");
			memcpy(exact, buf, n);
			ok += fuzz_one(exact, n, seed, iter);
			free(exact);
		}
		free(buf);
	}
	fprintf(stderr, "jsonparse fixture mutations (seed 0x%" PRIx64 "): %zu of %d still parsed\n", seed, ok,
		FUZZ_FIXTURE_MUTATIONS);
	free(text);
}
END_TEST

/* What the daemon writes (lib/json.c), the reader reads back unchanged. */
START_TEST(test_roundtrip_daemon_writer)
{
	size_t iter;
	uint64_t seed;

	rng_seed(0x726f756e64747270ULL);
	seed = rng_state;
	for (iter = 0; iter < FUZZ_ROUNDTRIPS; iter++) {
		char raw[64];
		size_t n = rng_below(sizeof(raw)), i;
		struct strbuf sb;
		struct json_value *v;
		double num;
		union {
			uint64_t u;
			double d;
		} bits;

		for (i = 0; i < n; i++) {
			raw[i] = (char)(rng() & 0xff);
			if (raw[i] == 0)
				raw[i] = 'x';
		}
		raw[n] = '\0';
		if (iter % 3 == 0)
			snprintf(raw, sizeof(raw), "pid \xc3\xa9 \xf0\x9f\x98\x80 \"q\" \\ \x1b[2J%zu", iter);

		strbuf_init(&sb);
		json_put_string(&sb, raw);
		require(!strbuf_failed(&sb), "out of memory");
		v = parse_len_ok(sb.data, sb.len);
		require(v->type == JSON_STRING, "seed 0x%" PRIx64 " iteration %zu: type %d, not JSON_STRING", seed, iter,
				(int)v->type);
		{
			/* Valid UTF-8 comes back byte for byte; anything else as valid UTF-8 (U+FFFD). */
			const unsigned char *s = (const unsigned char *)raw;
			bool valid = true;

			while (*s) {
				size_t l = utf8_valid_len(s);

				if (!l) {
					valid = false;
					break;
				}
				s += l;
			}
			if (valid) {
				require(strcmp(v->string, raw) == 0, "seed 0x%" PRIx64 " iteration %zu: string changed",
					seed, iter);
			} else {
				s = (const unsigned char *)v->string;
				while (*s) {
					size_t l = utf8_valid_len(s);

					require(l > 0, "seed 0x%" PRIx64 " iteration %zu: invalid UTF-8 after a round trip",
						seed, iter);
					s += l;
				}
			}
		}
		json_free(v);

		strbuf_reset(&sb);
		bits.u = rng();
		num = iter % 2 ? bits.d : (double)(int64_t)rng() / (double)(1 + rng_below(1000000));
		json_put_number(&sb, num);
		require(!strbuf_failed(&sb), "out of memory");
		v = parse_len_ok(sb.data, sb.len);
		if (isfinite(num)) {
			require(v->type == JSON_NUMBER, "seed 0x%" PRIx64 " iteration %zu: type %d, not JSON_NUMBER", seed, iter,
				(int)v->type);
			require(v->number == num, "seed 0x%" PRIx64 " iteration %zu: %.17g written as %s read as %.17g",
				seed, iter, num, sb.data, v->number);
		} else {
			require(v->type == JSON_NULL, "seed 0x%" PRIx64 " iteration %zu: type %d, not JSON_NULL", seed, iter,
				(int)v->type);
		}
		json_free(v);
		strbuf_free(&sb);
	}
}
END_TEST

static Suite *jsonparse_suite(void)
{
	Suite *s = suite_create("jsonparse");
	TCase *valid = tcase_create("valid");
	TCase *invalid = tcase_create("invalid");
	TCase *api = tcase_create("api");
	TCase *fuzz = tcase_create("fuzz");

	tcase_add_test(valid, test_scalars);
	tcase_add_test(valid, test_whitespace);
	tcase_add_test(valid, test_nested);
	tcase_add_test(valid, test_string_escapes);
	tcase_add_test(valid, test_numbers);
	suite_add_tcase(s, valid);

	tcase_add_test(invalid, test_empty_input);
	tcase_add_test(invalid, test_trailing_commas);
	tcase_add_test(invalid, test_single_quotes_and_bare_words);
	tcase_add_test(invalid, test_control_characters);
	tcase_add_test(invalid, test_bad_escapes_and_surrogates);
	tcase_add_test(invalid, test_bad_numbers);
	tcase_add_test(invalid, test_unterminated);
	tcase_add_test(invalid, test_trailing_garbage);
	tcase_add_test(invalid, test_depth_limit);
	suite_add_tcase(s, invalid);

	tcase_add_test(api, test_accessors_wrong_types);
	tcase_add_test(api, test_windows_fixture);
	tcase_set_timeout(api, 60);
	suite_add_tcase(s, api);

	tcase_add_test(fuzz, test_fuzz_random_bytes);
	tcase_add_test(fuzz, test_fuzz_fixture_mutations);
	tcase_add_test(fuzz, test_roundtrip_daemon_writer);
	/* generous: sanitizers slow this down a lot; not a timing assertion */
	tcase_set_timeout(fuzz, 110);
	suite_add_tcase(s, fuzz);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(jsonparse_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
