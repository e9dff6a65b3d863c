/* SPDX-License-Identifier: GPL-2.0 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"

/* Every range below is a heap copy of exactly its length, so ASan catches a
 * parser that reads past end. */
static char *copy;

static const char *range(const char *s, size_t len, const char **end)
{
	free(copy);
	copy = malloc(len ? len : 1);
	ck_assert_ptr_nonnull(copy);
	memcpy(copy, s, len);
	*end = copy + len;
	return copy;
}

static int u64_of(const char *s, size_t len, uint64_t *v)
{
	const char *end, *p = range(s, len, &end);

	return parse_u64(p, end, v);
}

static int i64_of(const char *s, int64_t *v)
{
	const char *end, *p = range(s, strlen(s), &end);

	return parse_i64(p, end, v);
}

static int double_of(const char *s, double *v)
{
	const char *end, *p = range(s, strlen(s), &end);

	return parse_double(p, end, v);
}

static void assert_trim(const char *in, size_t len, const char *want)
{
	const char *end, *p = range(in, len, &end);

	parse_trim(&p, &end);
	ck_assert_msg((size_t) (end - p) == strlen(want) && memcmp(p, want, strlen(want)) == 0,
		      "trim of '%s': '%.*s', want '%s'", in, (int) (end - p), p, want);
}

START_TEST(test_blanks)
{
	ck_assert(parse_is_blank(' '));
	ck_assert(parse_is_blank('\t'));
	ck_assert(!parse_is_blank('\r'));
	ck_assert(!parse_is_blank('\n'));
	ck_assert(!parse_is_blank('\v'));
	ck_assert(!parse_is_blank('\0'));
	ck_assert(parse_is_digit('0') && parse_is_digit('9'));
	ck_assert(!parse_is_digit('a') && !parse_is_digit('/') && !parse_is_digit(':'));
}
END_TEST

START_TEST(test_text_present)
{
	ck_assert(parse_text_present("a", 1));
	ck_assert(!parse_text_present("a", 0));
	ck_assert(!parse_text_present(NULL, 0));
	ck_assert(!parse_text_present(NULL, 3));
}
END_TEST

START_TEST(test_trim)
{
	const char *end, *p = range(" a \r", 4, &end);

	ck_assert_ptr_eq(parse_trim_end(p, end), p + 2); /* leading blanks stay */
	ck_assert_ptr_eq(parse_trim_end(p, p), p);

	assert_trim(" \t a b \t", 8, "a b");
	assert_trim("a\r", 2, "a");
	assert_trim("a \r \r", 5, "a"); /* a trailing run of blanks and '\r' */
	assert_trim("\ra", 2, "\ra");    /* a leading '\r' is not a blank */
	assert_trim("a\rb", 3, "a\rb");
	assert_trim(" \t \r", 4, "");
	assert_trim("", 0, "");
}
END_TEST

START_TEST(test_words_and_tokens)
{
	const char *end, *p = range("ab\tc", 4, &end);

	ck_assert_ptr_eq(parse_word_end(p, end), p + 2);
	ck_assert_ptr_eq(parse_skip_blanks(p + 2, end), p + 3);
	ck_assert_ptr_eq(parse_word_end(p + 3, end), end);
	ck_assert_ptr_eq(parse_skip_blanks(end, end), end);
	ck_assert(parse_token_eq(p, 2, "ab"));
	ck_assert(!parse_token_eq(p, 2, "a"));
	ck_assert(!parse_token_eq(p, 2, "abc"));
	ck_assert(!parse_token_eq("a\0b", 3, "a")); /* embedded NUL: not "a" */

	/* NUL is an ordinary character, neither blank nor digit. */
	p = range("a\0 ", 3, &end);
	parse_trim(&p, &end);
	ck_assert_uint_eq((size_t) (end - p), 2);
}
END_TEST

START_TEST(test_lines)
{
	const char *end, *p = range("a\n\r\nb", 5, &end), *start = p;
	struct parse_line l;

	ck_assert(parse_next_line(&p, end, &l));
	ck_assert_ptr_eq(l.start, start);
	ck_assert_ptr_eq(l.end, start + 1);
	ck_assert(l.terminated);
	ck_assert(parse_next_line(&p, end, &l));
	ck_assert_uint_eq((size_t) (l.end - l.start), 1); /* "\r": kept for parse_trim() */
	ck_assert(l.terminated);
	ck_assert(parse_next_line(&p, end, &l));
	ck_assert_ptr_eq(l.start, start + 4);
	ck_assert_ptr_eq(l.end, end);
	ck_assert(!l.terminated); /* a short read's last line */
	ck_assert(!parse_next_line(&p, end, &l));

	/* "a\n" is one line, not two: nothing follows the last '\n'. */
	p = range("a\n", 2, &end);
	ck_assert(parse_next_line(&p, end, &l));
	ck_assert(l.terminated);
	ck_assert(!parse_next_line(&p, end, &l));

	p = range("", 0, &end);
	ck_assert(!parse_next_line(&p, end, &l));
}
END_TEST

static int count_line(const struct parse_line *line, void *userdata)
{
	unsigned *n = userdata;

	if (line->end - line->start == 4 && memcmp(line->start, "stop", 4) == 0)
		return -EBADMSG;
	(*n)++;
	return 0;
}

START_TEST(test_parse_lines)
{
	const char *end, *p = range("a\n\nb", 4, &end);
	unsigned n = 0;

	ck_assert_int_eq(parse_lines(p, (size_t) (end - p), count_line, &n), 0);
	ck_assert_uint_eq(n, 3);
	n = 0;
	p = range("a\nstop\nb\n", 9, &end);
	ck_assert_int_eq(parse_lines(p, (size_t) (end - p), count_line, &n), -EBADMSG);
	ck_assert_uint_eq(n, 1); /* nothing after the first error */
}
END_TEST

struct two { uint64_t a, b; unsigned present; };

static const struct parse_field two_fields[] = {
	PARSE_FIELD(struct two, "a", a, 1u << 0),
	PARSE_FIELD(struct two, "b", b, 1u << 1),
};

START_TEST(test_fields)
{
	struct two t = { 0 };
	const struct parse_field *f;

	ck_assert_ptr_null(parse_field_lookup(two_fields, 2, "ab", 2));
	ck_assert_ptr_null(parse_field_lookup(two_fields, 2, "", 0));
	f = parse_field_lookup(two_fields, 2, "bx", 1);
	ck_assert_ptr_eq(f, &two_fields[1]);
	parse_field_set(&t, &t.present, f, 9);
	ck_assert_uint_eq(t.b, 9);
	ck_assert_uint_eq(t.a, 0);
	ck_assert_uint_eq(t.present, 2);
}
END_TEST

START_TEST(test_split_kv)
{
	const char *end, *p = range("key \t 1 2", 9, &end);
	struct parse_kv kv;

	ck_assert(parse_split_kv(p, end, &kv));
	ck_assert(parse_token_eq(kv.key, kv.key_len, "key"));
	ck_assert_uint_eq((size_t) (kv.val_end - kv.val), 3);
	ck_assert_int_eq(memcmp(kv.val, "1 2", 3), 0);

	p = range("key", 3, &end);
	ck_assert(parse_split_kv(p, end, &kv));
	ck_assert_uint_eq(kv.key_len, 3);
	ck_assert_ptr_eq(kv.val, kv.val_end); /* no value */

	p = range("", 0, &end);
	ck_assert(!parse_split_kv(p, end, &kv));
}
END_TEST

START_TEST(test_u64)
{
	uint64_t v = 7;

	ck_assert_int_eq(u64_of("0", 1, &v), 0);
	ck_assert_uint_eq(v, 0);
	ck_assert_int_eq(u64_of("007", 3, &v), 0);
	ck_assert_uint_eq(v, 7);
	ck_assert_int_eq(u64_of("18446744073709551615", 20, &v), 0);
	ck_assert_uint_eq(v, UINT64_MAX);

	v = 42;
	ck_assert_int_eq(u64_of("", 0, &v), -ENODATA);
	ck_assert_int_eq(u64_of("18446744073709551616", 20, &v), -ERANGE);
	ck_assert_int_eq(u64_of("99999999999999999999999", 23, &v), -ERANGE);
	ck_assert_int_eq(u64_of("-1", 2, &v), -EINVAL);
	ck_assert_int_eq(u64_of("+1", 2, &v), -EINVAL);
	ck_assert_int_eq(u64_of(" 1", 2, &v), -EINVAL); /* the caller trims */
	ck_assert_int_eq(u64_of("1 ", 2, &v), -EINVAL);
	ck_assert_int_eq(u64_of("1\r", 2, &v), -EINVAL);
	ck_assert_int_eq(u64_of("0x10", 4, &v), -EINVAL);
	ck_assert_int_eq(u64_of("1e3", 3, &v), -EINVAL);
	ck_assert_int_eq(u64_of("1\0", 2, &v), -EINVAL);
	ck_assert_uint_eq(v, 42); /* untouched on failure */
}
END_TEST

START_TEST(test_u64_prefix)
{
	const char *end, *p = range("123kB", 5, &end), *start = p;
	uint64_t v = 0;

	ck_assert_int_eq(parse_u64_prefix(&p, end, &v), 0);
	ck_assert_uint_eq(v, 123);
	ck_assert_ptr_eq(p, start + 3);
	ck_assert_int_eq(parse_u64_prefix(&p, end, &v), -EINVAL); /* 'k' */
	ck_assert_ptr_eq(p, start + 3);
	p = end;
	ck_assert_int_eq(parse_u64_prefix(&p, end, &v), -EINVAL);
	p = range("18446744073709551616x", 21, &end);
	ck_assert_int_eq(parse_u64_prefix(&p, end, &v), -ERANGE);
}
END_TEST

START_TEST(test_i64)
{
	int64_t v = 7;

	ck_assert_int_eq(i64_of("-1", &v), 0);
	ck_assert_int_eq(v, -1);
	ck_assert_int_eq(i64_of("-0", &v), 0);
	ck_assert_int_eq(v, 0);
	ck_assert_int_eq(i64_of("9223372036854775807", &v), 0);
	ck_assert_int_eq(v, INT64_MAX);
	ck_assert_int_eq(i64_of("-9223372036854775808", &v), 0);
	ck_assert_int_eq(v, INT64_MIN);

	v = 42;
	ck_assert_int_eq(i64_of("", &v), -ENODATA);
	ck_assert_int_eq(i64_of("-", &v), -EINVAL);
	ck_assert_int_eq(i64_of("+1", &v), -EINVAL);
	ck_assert_int_eq(i64_of("--1", &v), -EINVAL);
	ck_assert_int_eq(i64_of("- 1", &v), -EINVAL);
	ck_assert_int_eq(i64_of("1-", &v), -EINVAL);
	ck_assert_int_eq(i64_of("9223372036854775808", &v), -ERANGE);
	ck_assert_int_eq(i64_of("-9223372036854775809", &v), -ERANGE);
	ck_assert_int_eq(i64_of("-99999999999999999999", &v), -ERANGE);
	ck_assert_int_eq(v, 42);
}
END_TEST

START_TEST(test_double)
{
	double v = 7;

	ck_assert_int_eq(double_of("0", &v), 0);
	ck_assert(v == 0.0);
	ck_assert_int_eq(double_of("0.1", &v), 0);
	ck_assert(v == 0.1); /* rounded once, as the compiler rounds the literal */
	ck_assert_int_eq(double_of("12.34", &v), 0);
	ck_assert(v == 12.34);
	ck_assert_int_eq(double_of("100.00", &v), 0);
	ck_assert(v == 100.0);
	/* Nine fractional digits count, later ones are ignored, not rounded from. */
	ck_assert_int_eq(double_of("0.123456789987", &v), 0);
	ck_assert(v == 0.123456789);
	ck_assert_int_eq(double_of("9007199254740992", &v), 0);
	ck_assert(v == 9007199254740992.0);
	/* Fewer when more would not be exact. */
	ck_assert_int_eq(double_of("9007199254740992.9", &v), 0);
	ck_assert(v == 9007199254740992.0);

	v = 42;
	ck_assert_int_eq(double_of("", &v), -ENODATA);
	ck_assert_int_eq(double_of("9007199254740993", &v), -ERANGE);
	ck_assert_int_eq(double_of("1.", &v), -EINVAL);
	ck_assert_int_eq(double_of(".5", &v), -EINVAL);
	ck_assert_int_eq(double_of("1,5", &v), -EINVAL); /* never the locale's comma */
	ck_assert_int_eq(double_of("-1", &v), -EINVAL);
	ck_assert_int_eq(double_of("+1", &v), -EINVAL);
	ck_assert_int_eq(double_of("1e3", &v), -EINVAL);
	ck_assert_int_eq(double_of("0x1p3", &v), -EINVAL);
	ck_assert_int_eq(double_of("inf", &v), -EINVAL);
	ck_assert_int_eq(double_of("nan", &v), -EINVAL);
	ck_assert_int_eq(double_of(" 1", &v), -EINVAL);
	ck_assert_int_eq(double_of("1.5 ", &v), -EINVAL);
	ck_assert_int_eq(double_of("1.5\r", &v), -EINVAL);
	ck_assert_int_eq(double_of("1.2.3", &v), -EINVAL);
	ck_assert(v == 42);
}
END_TEST

static Suite *parse_suite(void)
{
	Suite *s = suite_create("parse");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_blanks);
	tcase_add_test(tc, test_text_present);
	tcase_add_test(tc, test_trim);
	tcase_add_test(tc, test_words_and_tokens);
	tcase_add_test(tc, test_lines);
	tcase_add_test(tc, test_parse_lines);
	tcase_add_test(tc, test_fields);
	tcase_add_test(tc, test_split_kv);
	tcase_add_test(tc, test_u64);
	tcase_add_test(tc, test_u64_prefix);
	tcase_add_test(tc, test_i64);
	tcase_add_test(tc, test_double);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(parse_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	free(copy);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
