/* SPDX-License-Identifier: GPL-2.0 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "strbuf.h"

/* Invariants every non-failed strbuf must keep. */
static void assert_sane(const struct strbuf *sb)
{
	if (!sb->data) {
		ck_assert_uint_eq(sb->len, 0);
		ck_assert_uint_eq(sb->cap, 0);
		return;
	}
	ck_assert_uint_lt(sb->len, sb->cap);
	ck_assert_int_eq(sb->data[sb->len], '\0');
}

START_TEST(test_init_is_empty)
{
	struct strbuf sb;

	memset(&sb, 0xa5, sizeof(sb));
	strbuf_init(&sb);
	ck_assert_ptr_null(sb.data);
	ck_assert_uint_eq(sb.len, 0);
	ck_assert_uint_eq(sb.cap, 0);
	ck_assert(!sb.failed);
	ck_assert(!strbuf_failed(&sb));
	strbuf_free(&sb);
	ck_assert_ptr_null(sb.data);
}
END_TEST

START_TEST(test_puts_putc_append)
{
	struct strbuf sb;

	strbuf_init(&sb);
	strbuf_puts(&sb, "hello");
	assert_sane(&sb);
	ck_assert_str_eq(sb.data, "hello");
	ck_assert_uint_eq(sb.len, 5);

	strbuf_putc(&sb, ',');
	strbuf_putc(&sb, ' ');
	strbuf_append(&sb, "world!!!", 5);
	assert_sane(&sb);
	ck_assert_str_eq(sb.data, "hello, world");
	ck_assert_uint_eq(sb.len, 12);

	/* Zero-length appends change nothing. */
	strbuf_append(&sb, "ignored", 0);
	strbuf_puts(&sb, "");
	ck_assert_str_eq(sb.data, "hello, world");
	ck_assert_uint_eq(sb.len, 12);
	ck_assert(!strbuf_failed(&sb));
	strbuf_free(&sb);
	ck_assert_ptr_null(sb.data);
	ck_assert_uint_eq(sb.len, 0);
	ck_assert_uint_eq(sb.cap, 0);
}
END_TEST

START_TEST(test_embedded_nul)
{
	static const char bin[] = { 'a', '\0', 'b', '\0', '\xff' };
	struct strbuf sb;

	strbuf_init(&sb);
	strbuf_append(&sb, bin, sizeof(bin));
	strbuf_putc(&sb, '\0');
	ck_assert_uint_eq(sb.len, sizeof(bin) + 1);
	ck_assert_mem_eq(sb.data, bin, sizeof(bin));
	ck_assert_int_eq(sb.data[5], '\0');
	ck_assert_int_eq(sb.data[6], '\0'); /* terminator after the data */
	assert_sane(&sb);
	strbuf_free(&sb);
}
END_TEST

START_TEST(test_growth_keeps_content)
{
	struct strbuf sb;
	size_t i, prev_cap = 0;

	strbuf_init(&sb);
	for (i = 0; i < 100000; i++) {
		strbuf_putc(&sb, (char)('a' + i % 26));
		ck_assert_uint_eq(sb.len, i + 1);
		ck_assert_uint_ge(sb.cap, sb.len + 1);
		if (sb.cap != prev_cap) {
			/* Geometric growth from 256: always a power of two >= 256. */
			ck_assert_uint_ge(sb.cap, 256);
			ck_assert_uint_eq(sb.cap & (sb.cap - 1), 0);
			prev_cap = sb.cap;
		}
	}
	assert_sane(&sb);
	ck_assert_uint_eq(strlen(sb.data), 100000);
	for (i = 0; i < 100000; i++)
		ck_assert_int_eq(sb.data[i], 'a' + (int)(i % 26));
	ck_assert(!strbuf_failed(&sb));
	strbuf_free(&sb);
}
END_TEST

START_TEST(test_reserve)
{
	struct strbuf sb;
	char *before;

	strbuf_init(&sb);
	ck_assert(strbuf_reserve(&sb, 0));
	ck_assert_ptr_nonnull(sb.data);
	ck_assert_uint_eq(sb.cap, 256);
	ck_assert_uint_eq(sb.len, 0);

	ck_assert(strbuf_reserve(&sb, 255)); /* 255 + NUL fits */
	ck_assert_uint_eq(sb.cap, 256);
	ck_assert(strbuf_reserve(&sb, 256));
	ck_assert_uint_eq(sb.cap, 512);
	ck_assert(strbuf_reserve(&sb, 1000));
	ck_assert_uint_eq(sb.cap, 1024);
	ck_assert_uint_eq(sb.len, 0);

	/* Reserved space is really usable without another reallocation. */
	before = sb.data;
	for (int i = 0; i < 1000; i++)
		strbuf_putc(&sb, 'x');
	ck_assert_ptr_eq(sb.data, before);
	ck_assert_uint_eq(sb.cap, 1024);
	ck_assert_uint_eq(sb.len, 1000);
	ck_assert(!strbuf_failed(&sb));
	strbuf_free(&sb);
}
END_TEST

START_TEST(test_reserve_overflow_is_sticky)
{
	struct strbuf sb;

	strbuf_init(&sb);
	strbuf_puts(&sb, "abc");
	ck_assert(!strbuf_reserve(&sb, SIZE_MAX));
	ck_assert(strbuf_failed(&sb));
	/* The content so far is untouched... */
	ck_assert_str_eq(sb.data, "abc");
	ck_assert_uint_eq(sb.len, 3);

	/* ...and every later append is a no-op. */
	ck_assert(!strbuf_reserve(&sb, 1));
	strbuf_puts(&sb, "def");
	strbuf_putc(&sb, 'g');
	strbuf_append(&sb, "hij", 3);
	strbuf_printf(&sb, "%d", 42);
	ck_assert_str_eq(sb.data, "abc");
	ck_assert_uint_eq(sb.len, 3);
	ck_assert(strbuf_failed(&sb));
	strbuf_free(&sb);
	ck_assert(!strbuf_failed(&sb));
}
END_TEST

START_TEST(test_reserve_overflow_near_len)
{
	struct strbuf sb;

	strbuf_init(&sb);
	strbuf_puts(&sb, "0123456789");
	/* len + extra + 1 would wrap around. */
	ck_assert(!strbuf_reserve(&sb, SIZE_MAX - 10));
	ck_assert(strbuf_failed(&sb));
	strbuf_free(&sb);

	/* Needs more than SIZE_MAX/2 after doubling: refused before malloc. */
	strbuf_init(&sb);
	ck_assert(!strbuf_reserve(&sb, SIZE_MAX - 1));
	ck_assert(strbuf_failed(&sb));
	ck_assert_ptr_null(sb.data);
	strbuf_free(&sb);
}
END_TEST

START_TEST(test_reset)
{
	struct strbuf sb;
	char *data;
	size_t cap;

	strbuf_init(&sb);
	strbuf_reset(&sb); /* on an empty buffer: no crash, nothing allocated */
	ck_assert_ptr_null(sb.data);
	ck_assert_uint_eq(sb.len, 0);

	strbuf_puts(&sb, "some text");
	data = sb.data;
	cap = sb.cap;
	strbuf_reset(&sb);
	ck_assert_ptr_eq(sb.data, data); /* keeps the allocation */
	ck_assert_uint_eq(sb.cap, cap);
	ck_assert_uint_eq(sb.len, 0);
	ck_assert_str_eq(sb.data, "");
	strbuf_puts(&sb, "new");
	ck_assert_str_eq(sb.data, "new");

	/* reset also clears a failure */
	ck_assert(!strbuf_reserve(&sb, SIZE_MAX));
	ck_assert(strbuf_failed(&sb));
	strbuf_reset(&sb);
	ck_assert(!strbuf_failed(&sb));
	strbuf_puts(&sb, "again");
	ck_assert_str_eq(sb.data, "again");
	ck_assert_uint_eq(sb.len, 5);
	strbuf_free(&sb);
}
END_TEST

START_TEST(test_printf)
{
	struct strbuf sb;
	char big[1000];
	size_t i;

	strbuf_init(&sb);
	strbuf_printf(&sb, "%d-%s-%.3f-%c-%05u", -17, "str", 1.5, 'Z', 42u);
	ck_assert_str_eq(sb.data, "-17-str-1.500-Z-00042");
	ck_assert_uint_eq(sb.len, strlen("-17-str-1.500-Z-00042"));

	strbuf_printf(&sb, "%s", "");
	ck_assert_uint_eq(sb.len, strlen("-17-str-1.500-Z-00042"));

	/* Appends, and grows past the first 256 bytes in one call. */
	for (i = 0; i < sizeof(big) - 1; i++)
		big[i] = (char)('A' + i % 26);
	big[sizeof(big) - 1] = '\0';
	strbuf_printf(&sb, "[%s]", big);
	assert_sane(&sb);
	ck_assert_uint_eq(sb.len, 21 + 2 + sizeof(big) - 1);
	ck_assert_int_eq(memcmp(sb.data, "-17-str-1.500-Z-00042[", 22), 0);
	ck_assert_int_eq(memcmp(sb.data + 22, big, sizeof(big) - 1), 0);
	ck_assert_str_eq(sb.data + 22 + sizeof(big) - 1, "]");
	ck_assert(!strbuf_failed(&sb));
	strbuf_free(&sb);
}
END_TEST

START_TEST(test_printf_encoding_error_fails)
{
	/* In the C locale a non-ASCII wide char cannot be converted, so
	 * vsnprintf() returns -1: that must become a sticky failure. */
	static const wchar_t euro[] = { 0x20ac, 0 };
	struct strbuf sb;

	strbuf_init(&sb);
	strbuf_puts(&sb, "ok");
	strbuf_printf(&sb, "%ls", euro);
	ck_assert(strbuf_failed(&sb));
	ck_assert_uint_eq(sb.len, 2);
	ck_assert_str_eq(sb.data, "ok");
	ck_assert_ptr_null(strbuf_steal(&sb, NULL));
	ck_assert_ptr_null(sb.data);
	ck_assert(!strbuf_failed(&sb));
}
END_TEST

START_TEST(test_steal)
{
	struct strbuf sb;
	size_t len = 12345;
	char *p;

	strbuf_init(&sb);
	strbuf_puts(&sb, "payload");
	p = strbuf_steal(&sb, &len);
	ck_assert_ptr_nonnull(p);
	ck_assert_str_eq(p, "payload");
	ck_assert_uint_eq(len, 7);
	/* The strbuf is empty and reusable; it no longer owns p. */
	ck_assert_ptr_null(sb.data);
	ck_assert_uint_eq(sb.len, 0);
	ck_assert_uint_eq(sb.cap, 0);
	strbuf_puts(&sb, "second");
	ck_assert_str_eq(sb.data, "second");
	ck_assert_str_eq(p, "payload");
	free(p);

	p = strbuf_steal(&sb, NULL);
	ck_assert_str_eq(p, "second");
	free(p);
	strbuf_free(&sb);
}
END_TEST

START_TEST(test_steal_empty)
{
	struct strbuf sb;
	size_t len = 99;
	char *p;

	/* Never written to: still a valid, NUL-terminated, freeable string. */
	strbuf_init(&sb);
	p = strbuf_steal(&sb, &len);
	ck_assert_ptr_nonnull(p);
	ck_assert_str_eq(p, "");
	ck_assert_uint_eq(len, 0);
	free(p);

	/* After reset. */
	strbuf_puts(&sb, "xyz");
	strbuf_reset(&sb);
	len = 99;
	p = strbuf_steal(&sb, &len);
	ck_assert_str_eq(p, "");
	ck_assert_uint_eq(len, 0);
	free(p);
}
END_TEST

START_TEST(test_steal_after_failure)
{
	struct strbuf sb;
	size_t len = 77;

	strbuf_init(&sb);
	strbuf_puts(&sb, "partial");
	ck_assert(!strbuf_reserve(&sb, SIZE_MAX));
	ck_assert_ptr_null(strbuf_steal(&sb, &len));
	ck_assert_uint_eq(len, 77); /* untouched on failure */
	/* The buffer was released (LeakSanitizer would report it otherwise). */
	ck_assert_ptr_null(sb.data);
	ck_assert(!strbuf_failed(&sb));
}
END_TEST

START_TEST(test_free_twice)
{
	struct strbuf sb;

	strbuf_init(&sb);
	strbuf_puts(&sb, "x");
	strbuf_free(&sb);
	strbuf_free(&sb); /* must be harmless: free() of NULL */
	ck_assert_ptr_null(sb.data);
}
END_TEST

static Suite *strbuf_suite(void)
{
	Suite *s = suite_create("strbuf");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_init_is_empty);
	tcase_add_test(tc, test_puts_putc_append);
	tcase_add_test(tc, test_embedded_nul);
	tcase_add_test(tc, test_growth_keeps_content);
	tcase_add_test(tc, test_reserve);
	tcase_add_test(tc, test_reserve_overflow_is_sticky);
	tcase_add_test(tc, test_reserve_overflow_near_len);
	tcase_add_test(tc, test_reset);
	tcase_add_test(tc, test_printf);
	tcase_add_test(tc, test_printf_encoding_error_fails);
	tcase_add_test(tc, test_steal);
	tcase_add_test(tc, test_steal_empty);
	tcase_add_test(tc, test_steal_after_failure);
	tcase_add_test(tc, test_free_twice);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(strbuf_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
