/* SPDX-License-Identifier: GPL-2.0 */
/* lib/json_read.c, the strict reader of other programs' JSON state files:
 * on small texts (each an exact-size copy without a NUL, so ASan sees any
 * read past the end), RFC 8259's edges, and depth. The runtimes' real-shaped
 * files are in test_container_names.c. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "json_read.h"

/* json_read_value() on an exact-size copy of text. */
static int value_of(const char *text, char **copy, struct json_span *v)
{
	*copy = dup_exact(text, strlen(text));
	return json_read_value(*copy, strlen(text), v);
}

static int valid(const char *text)
{
	struct json_span v;
	char *copy;
	int r = value_of(text, &copy, &v);

	free(copy);
	return r;
}

START_TEST(test_grammar)
{
	static const char *const good[] = {
		"{}", "[]", " {\"a\" : [1, -2.5e+3, 0.0, 1E9, true, false, null, \"\"]}\n", "\"x\"", "0", "-0", "1.5",
		"[[[[]]]]", "{\"a\":{\"b\":{}}}", "\"\\u00e9\\ud83d\\ude00\\\"\\\\\\/\\b\\f\\n\\r\\t\"", "\"\xc3\xa9\"",
		"\"\\u0000\"", "\t[ 1 , 2 ]\r\n",
	};
	static const char *const bad[] = {
		"", " ", "{", "[", "{\"a\"}", "{\"a\":}", "{\"a\":1,}", "[1,]", "[,1]", "{a:1}", "{'a':1}", "01", "1.",
		".5", "-", "1e", "+1", "tru", "nul", "True", "\"abc", "\"\\x\"", "\"\\u12\"", "\"\\u12g4\"",
		"\"\\ud800\"", "\"\\udc00\"", "\"\\ud800\\u0041\"", "\"a\nb\"", "\"\xc3\"", "\"\xff\"",
		"\"\xed\xa0\x80\"",
		"\"\xc0\xaf\"", "{} {}", "[1] x", "[1 2]", "{\"a\" 1}", "{\"a\":1 \"b\":2}", "NaN", "[Infinity]",
	};

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		ck_assert_msg(valid(good[i]) == 0, "refused: %s", good[i]);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(valid(bad[i]) == -EBADMSG, "taken: %s", bad[i]);
}
END_TEST

/* Nesting: up to the limit read, past it refused, never a stack overflow. */
START_TEST(test_depth)
{
	size_t deep = 100000;
	char *s = malloc(2 * deep);
	struct json_span v;

	ck_assert_ptr_nonnull(s);
	for (size_t depth = JSON_READ_MAX_DEPTH; depth <= JSON_READ_MAX_DEPTH + 1; depth++) {
		memset(s, '[', depth);
		memset(s + depth, ']', depth);
		ck_assert_int_eq(json_read_value(s, 2 * depth, &v), depth <= JSON_READ_MAX_DEPTH ? 0 : -EBADMSG);
	}
	memset(s, '[', deep);
	memset(s + deep, ']', deep);
	ck_assert_int_eq(json_read_value(s, 2 * deep, &v), -EBADMSG);
	free(s);
}
END_TEST

START_TEST(test_member)
{
	char *copy, buf[64];
	struct json_span doc, v;

	ck_assert_int_eq(value_of(" {\"Name\":\"/a\",\"Config\":{\"Name\":\"inner\"},"
				  "\"N\\u0061me\":\"/b\",\"x\":[\"Name\"]} ",
				  &copy, &doc), 0);
	/* Only members of this object, not of the ones inside; the last of a key given twice. */
	ck_assert_int_eq(json_read_member(doc, "Name", &v), 0);
	ck_assert_int_eq(json_read_string(v, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "/b");
	ck_assert_int_eq(json_read_member(doc, "Config", &v), 0);
	ck_assert_int_eq(json_read_member(v, "Name", &v), 0);
	ck_assert_int_eq(json_read_string(v, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "inner");
	ck_assert_int_eq(json_read_member(doc, "name", &v), -ENOENT);
	ck_assert_int_eq(json_read_member(doc, "x", &v), 0);
	ck_assert_int_eq(json_read_string(v, buf, sizeof(buf)), -EBADMSG); /* an array, not a string */
	ck_assert_int_eq(json_read_member(v, "Name", &v), -EBADMSG);        /* not an object */
	free(copy);

	ck_assert_int_eq(value_of("{}", &copy, &doc), 0);
	ck_assert_int_eq(json_read_member(doc, "Name", &v), -ENOENT);
	free(copy);
	/* A key longer than any asked for is walked over, not cut. */
	{
		char text[1200];

		snprintf(text, sizeof(text), "{\"%0999d\":1,\"k\":\"v\"}", 0);
		ck_assert_int_eq(value_of(text, &copy, &doc), 0);
		ck_assert_int_eq(json_read_member(doc, "k", &v), 0);
		ck_assert_int_eq(json_read_string(v, buf, sizeof(buf)), 0);
		ck_assert_str_eq(buf, "v");
		free(copy);
	}
}
END_TEST

START_TEST(test_array)
{
	char *copy, buf[16];
	struct json_span doc, v;
	size_t pos = 0;
	const char *want[] = { "a", "[1,{}]", "{\"b\":[]}", "null" };
	size_t n = 0;
	int r;

	ck_assert_int_eq(value_of("[ \"a\" , [1,{}],{\"b\":[]} ,null ]", &copy, &doc), 0);
	while ((r = json_read_next(doc, &pos, &v)) > 0) {
		ck_assert_uint_lt(n, 4);
		if (n == 0) {
			ck_assert_int_eq(json_read_string(v, buf, sizeof(buf)), 0);
			ck_assert_str_eq(buf, want[0]);
		} else {
			ck_assert_uint_eq(v.len, strlen(want[n]));
			ck_assert(memcmp(v.p, want[n], v.len) == 0);
		}
		n++;
	}
	ck_assert_int_eq(r, 0);
	ck_assert_uint_eq(n, 4);
	ck_assert_int_eq(json_read_next(doc, &pos, &v), 0); /* and stays at the end */
	free(copy);

	ck_assert_int_eq(value_of("[ ]", &copy, &doc), 0);
	pos = 0;
	ck_assert_int_eq(json_read_next(doc, &pos, &v), 0);
	free(copy);
	ck_assert_int_eq(value_of("{\"a\":1}", &copy, &doc), 0);
	pos = 0;
	ck_assert_int_eq(json_read_next(doc, &pos, &v), -EBADMSG);
	free(copy);
}
END_TEST

START_TEST(test_string)
{
	char *copy, buf[8];
	struct json_span v;

	ck_assert_int_eq(value_of("\"caf\\u00e9 \\\"\"", &copy, &v), 0);
	ck_assert_int_eq(json_read_string(v, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "caf\xc3\xa9 \"");
	free(copy);
	ck_assert_int_eq(value_of("\"\\ud83d\\ude00\"", &copy, &v), 0);
	ck_assert_int_eq(json_read_string(v, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "\xf0\x9f\x98\x80");
	free(copy);
	/* Exactly the room for 7 bytes and the NUL, then one too many. */
	ck_assert_int_eq(value_of("\"1234567\"", &copy, &v), 0);
	ck_assert_int_eq(json_read_string(v, buf, sizeof(buf)), 0);
	free(copy);
	ck_assert_int_eq(value_of("\"12345678\"", &copy, &v), 0);
	ck_assert_int_eq(json_read_string(v, buf, sizeof(buf)), -ENOBUFS);
	ck_assert_str_eq(buf, "");
	free(copy);
	/* U+0000 is JSON, but would cut a C string short. */
	ck_assert_int_eq(value_of("\"a\\u0000b\"", &copy, &v), 0);
	ck_assert_int_eq(json_read_string(v, buf, sizeof(buf)), -EBADMSG);
	free(copy);
	ck_assert_int_eq(value_of("12", &copy, &v), 0);
	ck_assert_int_eq(json_read_string(v, buf, sizeof(buf)), -EBADMSG);
	free(copy);
}
END_TEST

static Suite *json_read_suite(void)
{
	Suite *s = suite_create("json_read");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_grammar);
	tcase_add_test(tc, test_depth);
	tcase_add_test(tc, test_member);
	tcase_add_test(tc, test_array);
	tcase_add_test(tc, test_string);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return fixture_run_suite(json_read_suite());
}
