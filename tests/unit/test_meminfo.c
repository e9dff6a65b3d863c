/* SPDX-License-Identifier: GPL-2.0 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "meminfo.h"
#include "fixture.h"

#define KB(x) ((uint64_t) (x) * UINT64_C(1024))

#define MEMINFO_HAS_ALL ((MEMINFO_HAS_COMMIT_LIMIT << 1) - 1u)

FIXTURE_PARSE_FILE(parse_fixture, "meminfo", meminfo_parse, struct meminfo)
FIXTURE_PARSE_MEM(parse_mem, meminfo_parse, struct meminfo)

#define parse_str(s, mi) parse_mem((s), strlen(s), (mi))

/* Values recorded from this machine's /proc/meminfo (Linux 6.18). */
static void assert_real_6_18(const struct meminfo *mi)
{
	ck_assert_uint_eq(mi->present, MEMINFO_HAS_ALL);
	ck_assert_uint_eq(mi->total, KB(24683620));
	ck_assert_uint_eq(mi->free, KB(24381224));
	ck_assert_uint_eq(mi->available, KB(24371328));
	ck_assert_uint_eq(mi->buffers, KB(2296));
	ck_assert_uint_eq(mi->cached, KB(171992));
	ck_assert_uint_eq(mi->swap_cached, 0);
	ck_assert_uint_eq(mi->active_file, KB(11580));
	ck_assert_uint_eq(mi->inactive_file, KB(153748));
	ck_assert_uint_eq(mi->anon_pages, KB(5800));
	ck_assert_uint_eq(mi->shmem, KB(8952));
	ck_assert_uint_eq(mi->slab_reclaimable, KB(59952));
	ck_assert_uint_eq(mi->slab_unreclaimable, KB(21372));
	ck_assert_uint_eq(mi->dirty, KB(176));
	ck_assert_uint_eq(mi->writeback, 0);
	ck_assert_uint_eq(mi->swap_total, 0);
	ck_assert_uint_eq(mi->swap_free, 0);
	ck_assert_uint_eq(mi->committed_as, KB(48860));
	ck_assert_uint_eq(mi->commit_limit, KB(12341808));
}

START_TEST(test_real_6_18)
{
	struct meminfo mi;

	memset(&mi, 0xaa, sizeof(mi));
	ck_assert_int_eq(parse_fixture("real-6.18.txt", &mi), 0);
	assert_real_6_18(&mi);
}
END_TEST

START_TEST(test_crlf)
{
	struct meminfo mi;

	ck_assert_int_eq(parse_fixture("crlf.txt", &mi), 0);
	assert_real_6_18(&mi);
}
END_TEST

START_TEST(test_old_kernel_no_memavailable)
{
	struct meminfo mi;

	memset(&mi, 0xaa, sizeof(mi));
	ck_assert_int_eq(parse_fixture("linux-3.2-no-memavailable.txt", &mi), 0);
	ck_assert_uint_eq(mi.present, MEMINFO_HAS_ALL & ~(unsigned) MEMINFO_HAS_AVAILABLE);
	ck_assert_uint_eq(mi.available, 0);
	ck_assert_uint_eq(mi.total, KB(2061160));
	ck_assert_uint_eq(mi.free, KB(153432));
	ck_assert_uint_eq(mi.buffers, KB(118860));
	ck_assert_uint_eq(mi.cached, KB(1284724));
	ck_assert_uint_eq(mi.swap_cached, KB(2316));
	ck_assert_uint_eq(mi.active_file, KB(797152));
	ck_assert_uint_eq(mi.inactive_file, KB(602116));
	ck_assert_uint_eq(mi.anon_pages, KB(317576));
	ck_assert_uint_eq(mi.shmem, KB(4924));
	ck_assert_uint_eq(mi.slab_reclaimable, KB(135352));
	ck_assert_uint_eq(mi.slab_unreclaimable, KB(16932));
	ck_assert_uint_eq(mi.dirty, KB(96));
	ck_assert_uint_eq(mi.writeback, 0);
	ck_assert_uint_eq(mi.swap_total, KB(1046524));
	ck_assert_uint_eq(mi.swap_free, KB(1039084));
	ck_assert_uint_eq(mi.committed_as, KB(788364));
	ck_assert_uint_eq(mi.commit_limit, KB(2077104));
}
END_TEST

START_TEST(test_empty)
{
	struct meminfo mi;

	ck_assert_int_eq(parse_fixture("empty.txt", &mi), -EINVAL);
	ck_assert_int_eq(meminfo_parse(NULL, 0, &mi), -EINVAL);
}
END_TEST

START_TEST(test_null_args)
{
	struct meminfo mi;

	ck_assert_int_eq(meminfo_parse(NULL, 5, &mi), -EINVAL);
	ck_assert_int_eq(parse_str("MemTotal: 1 kB\nMemFree: 1 kB\n", NULL), -EINVAL);
}
END_TEST

/* Choice: an unterminated last line whose value is a strict prefix of
 * "<digits> kB" is a short read. Its digits may be cut, so the key is
 * dropped (present bit clear) and the rest of the snapshot is kept. */
START_TEST(test_truncated_midline)
{
	struct meminfo mi;

	memset(&mi, 0xaa, sizeof(mi));
	ck_assert_int_eq(parse_fixture("truncated-midline.txt", &mi), 0);
	ck_assert_uint_eq(mi.present, MEMINFO_HAS_TOTAL | MEMINFO_HAS_FREE);
	ck_assert_uint_eq(mi.total, KB(24683620));
	ck_assert_uint_eq(mi.free, KB(24381224));
	ck_assert_uint_eq(mi.available, 0);
}
END_TEST

START_TEST(test_truncated_variants)
{
	static const char head[] = "MemTotal: 100 kB\nMemFree: 50 kB\n";
	static const char *const dropped[] = {
		"Cached: 12",
		"Cached: 12 ",
		"Cached: 12\t",
		"Cached: 12 k",
		"Cached: 12k",
		"Cached:",
		"Cached:   ",
	};
	static const char *const keyless[] = {
		"Cach",
		"Cached",
	};
	static const char *const broken[] = {
		"Cached: 12x",
		"Cached: 12 kX",
		"Cached: 12 K",
		"Cached: -1",
		"Cached: 12 kB extra",
	};
	char buf[128];
	struct meminfo mi;

	for (size_t i = 0; i < sizeof(dropped) / sizeof(dropped[0]); i++) {
		snprintf(buf, sizeof(buf), "%s%s", head, dropped[i]);
		memset(&mi, 0xaa, sizeof(mi));
		ck_assert_msg(parse_str(buf, &mi) == 0, "rejected: %s", dropped[i]);
		ck_assert_uint_eq(mi.present, MEMINFO_HAS_TOTAL | MEMINFO_HAS_FREE);
		ck_assert_uint_eq(mi.total, KB(100));
		ck_assert_uint_eq(mi.free, KB(50));
		ck_assert_uint_eq(mi.cached, 0);
	}

	/* no colon yet: not even a key, ignored like any garbage line */
	for (size_t i = 0; i < sizeof(keyless) / sizeof(keyless[0]); i++) {
		snprintf(buf, sizeof(buf), "%s%s", head, keyless[i]);
		ck_assert_msg(parse_str(buf, &mi) == 0, "rejected: %s", keyless[i]);
		ck_assert_uint_eq(mi.present, MEMINFO_HAS_TOTAL | MEMINFO_HAS_FREE);
	}

	for (size_t i = 0; i < sizeof(broken) / sizeof(broken[0]); i++) {
		snprintf(buf, sizeof(buf), "%s%s", head, broken[i]);
		ck_assert_msg(parse_str(buf, &mi) == -EINVAL, "accepted: %s", broken[i]);
	}

	/* The same incomplete values are malformed once the line is terminated. */
	for (size_t i = 0; i < sizeof(dropped) / sizeof(dropped[0]); i++) {
		snprintf(buf, sizeof(buf), "%s%s\n", head, dropped[i]);
		ck_assert_msg(parse_str(buf, &mi) == -EINVAL, "accepted: %s\\n", dropped[i]);
	}

	/* A truncated required key leaves it missing. */
	ck_assert_int_eq(parse_str("MemFree: 50 kB\nMemTotal: 1234", &mi), -EINVAL);
}
END_TEST

START_TEST(test_no_trailing_newline)
{
	struct meminfo mi;

	ck_assert_int_eq(parse_str("MemTotal: 100 kB\nMemFree: 50 kB", &mi), 0);
	ck_assert_uint_eq(mi.present, MEMINFO_HAS_TOTAL | MEMINFO_HAS_FREE);
	ck_assert_uint_eq(mi.total, KB(100));
	ck_assert_uint_eq(mi.free, KB(50));

	ck_assert_int_eq(parse_str("MemTotal: 100 kB\nMemFree: 50 kB\r", &mi), 0);
	ck_assert_uint_eq(mi.free, KB(50));
}
END_TEST

START_TEST(test_garbage_binary)
{
	struct meminfo mi;

	memset(&mi, 0x5a, sizeof(mi));
	ck_assert_int_eq(parse_fixture("garbage.bin", &mi), -EINVAL);
	/* out is untouched on failure */
	ck_assert_uint_eq(mi.total, UINT64_C(0x5a5a5a5a5a5a5a5a));
	ck_assert_uint_eq(mi.present, 0x5a5a5a5au);
}
END_TEST

START_TEST(test_garbage_lines)
{
	struct meminfo mi;

	ck_assert_int_eq(parse_fixture("garbage-lines.txt", &mi), 0);
	ck_assert_uint_eq(mi.present,
			  MEMINFO_HAS_TOTAL | MEMINFO_HAS_FREE | MEMINFO_HAS_AVAILABLE |
				  MEMINFO_HAS_CACHED | MEMINFO_HAS_ACTIVE_FILE |
				  MEMINFO_HAS_INACTIVE_FILE | MEMINFO_HAS_WRITEBACK);
	ck_assert_uint_eq(mi.total, KB(8192000));
	ck_assert_uint_eq(mi.free, KB(1024000));
	ck_assert_uint_eq(mi.available, KB(4096000));
	ck_assert_uint_eq(mi.cached, KB(123));
	ck_assert_uint_eq(mi.active_file, KB(11580));
	ck_assert_uint_eq(mi.inactive_file, KB(200));
	ck_assert_uint_eq(mi.writeback, 0);
}
END_TEST

/* Choice: duplicate keys are not an error, the last occurrence wins. */
START_TEST(test_duplicate_keys)
{
	struct meminfo mi;

	ck_assert_int_eq(parse_fixture("duplicate-keys.txt", &mi), 0);
	ck_assert_uint_eq(mi.present, MEMINFO_HAS_TOTAL | MEMINFO_HAS_FREE | MEMINFO_HAS_BUFFERS);
	ck_assert_uint_eq(mi.total, KB(2000));
	ck_assert_uint_eq(mi.free, KB(200));
	ck_assert_uint_eq(mi.buffers, KB(10));

	/* A malformed duplicate still fails, even after a good one. */
	ck_assert_int_eq(parse_str("MemTotal: 1 kB\nMemFree: 1 kB\nMemFree: x kB\n", &mi), -EINVAL);
}
END_TEST

START_TEST(test_huge_values)
{
	struct meminfo mi;

	ck_assert_int_eq(parse_fixture("huge-values.txt", &mi), 0);
	ck_assert_uint_eq(mi.present, MEMINFO_HAS_TOTAL | MEMINFO_HAS_FREE |
					      MEMINFO_HAS_AVAILABLE | MEMINFO_HAS_SWAP_TOTAL);
	ck_assert_uint_eq(mi.total, UINT64_MAX - 1023);
	ck_assert_uint_eq(mi.free, UINT64_MAX - 1023);
	ck_assert_uint_eq(mi.available, 1024);
	ck_assert_uint_eq(mi.swap_total, UINT64_C(1) << 44);
}
END_TEST

START_TEST(test_overflow)
{
	struct meminfo mi;

	/* fits in uint64 as kB, but not once converted to bytes */
	ck_assert_int_eq(parse_fixture("overflow-kb.txt", &mi), -EINVAL);
	/* does not even fit in uint64 */
	ck_assert_int_eq(parse_fixture("overflow-u64.txt", &mi), -EINVAL);
	ck_assert_int_eq(parse_str("MemTotal: 18446744073709551615 kB\nMemFree: 1 kB\n", &mi),
			 -EINVAL);
	ck_assert_int_eq(parse_str("MemTotal: 99999999999999999999999999999 kB\nMemFree: 1 kB\n",
				   &mi),
			 -EINVAL);
}
END_TEST

START_TEST(test_negative)
{
	struct meminfo mi;

	memset(&mi, 0x5a, sizeof(mi));
	ck_assert_int_eq(parse_fixture("negative.txt", &mi), -EINVAL);
	/* out is untouched when a malformed value aborts the parse */
	ck_assert_uint_eq(mi.total, UINT64_C(0x5a5a5a5a5a5a5a5a));
	ck_assert_uint_eq(mi.present, 0x5a5a5a5au);

	/* unknown keys are never validated */
	ck_assert_int_eq(parse_str("MemTotal: 1 kB\nMemFree: 2 kB\nFoo: -3 kB\n", &mi), 0);
	ck_assert_uint_eq(mi.total, KB(1));
	ck_assert_uint_eq(mi.free, KB(2));
}
END_TEST

/* Choice: every key in struct meminfo is printed in kB by the kernel, so a
 * terminated line without the unit means the format is not what we think. */
START_TEST(test_missing_units)
{
	struct meminfo mi;

	ck_assert_int_eq(parse_fixture("no-units.txt", &mi), -EINVAL);
	ck_assert_int_eq(parse_str("MemTotal: 1 kB\nMemFree: 2\n", &mi), -EINVAL);
	ck_assert_int_eq(parse_str("MemTotal: 1 kB\nMemFree: 2 MB\n", &mi), -EINVAL);
	ck_assert_int_eq(parse_str("MemTotal: 1 kB\nMemFree: 2 KB\n", &mi), -EINVAL);
	ck_assert_int_eq(parse_str("MemTotal: 1 kB\nMemFree: 2 kB kB\n", &mi), -EINVAL);
	/* unitless keys outside the struct are fine */
	ck_assert_int_eq(parse_str("HugePages_Total: 7\nMemTotal: 1 kB\nMemFree: 2 kB\n", &mi), 0);
	ck_assert_uint_eq(mi.present, MEMINFO_HAS_TOTAL | MEMINFO_HAS_FREE);
	ck_assert_uint_eq(mi.total, KB(1));
	ck_assert_uint_eq(mi.free, KB(2));
}
END_TEST

START_TEST(test_missing_required)
{
	struct meminfo mi;

	ck_assert_int_eq(parse_fixture("missing-memfree.txt", &mi), -EINVAL);
	ck_assert_int_eq(parse_str("MemFree: 2 kB\nMemAvailable: 3 kB\n", &mi), -EINVAL);
	ck_assert_int_eq(parse_str("MemTotal: 2 kB\nMemAvailable: 3 kB\n", &mi), -EINVAL);
}
END_TEST

START_TEST(test_whitespace)
{
	struct meminfo mi;

	ck_assert_int_eq(parse_str("\t MemTotal \t:\t\t 7 \t kB \t\nMemFree:8kB\n\n\n", &mi), 0);
	ck_assert_uint_eq(mi.total, KB(7));
	ck_assert_uint_eq(mi.free, KB(8));
	ck_assert_uint_eq(mi.present, MEMINFO_HAS_TOTAL | MEMINFO_HAS_FREE);

	/* a CR anywhere but at the end of the line is not whitespace */
	ck_assert_int_eq(parse_str("MemTotal: 7\r kB\nMemFree: 8 kB\n", &mi), -EINVAL);
}
END_TEST

START_TEST(test_key_matching)
{
	struct meminfo mi;

	/* exact, case-sensitive keys; "Active" is not "Active(file)" */
	ck_assert_int_eq(parse_str("MemTotal: 1 kB\nMemFree: 2 kB\nActive: 3 kB\n"
				   "Active(anon): 4 kB\nmemfree: 5 kB\nMemFreeX: 6 kB\n"
				   "Active(file): 7 kB\n",
				   &mi),
			 0);
	ck_assert_uint_eq(mi.present, MEMINFO_HAS_TOTAL | MEMINFO_HAS_FREE | MEMINFO_HAS_ACTIVE_FILE);
	ck_assert_uint_eq(mi.free, KB(2));
	ck_assert_uint_eq(mi.active_file, KB(7));
}
END_TEST

START_TEST(test_embedded_nul)
{
	static const char bad[] = "MemTotal: 1 kB\nMemFree: 2\0 kB\n";
	static const char bad_key[] = "MemTotal: 1 kB\nMemFree: 2 kB\nMemFree\0: 9 kB\n";
	struct meminfo mi;

	/* NULs in unknown lines and keys are harmless */
	ck_assert_int_eq(parse_fixture("embedded-nul.bin", &mi), 0);
	ck_assert_uint_eq(mi.present, MEMINFO_HAS_TOTAL | MEMINFO_HAS_FREE | MEMINFO_HAS_DIRTY);
	ck_assert_uint_eq(mi.total, KB(4096));
	ck_assert_uint_eq(mi.free, KB(2048));
	ck_assert_uint_eq(mi.dirty, KB(8));
	ck_assert_uint_eq(mi.cached, 0);

	ck_assert_int_eq(parse_mem(bad, sizeof(bad) - 1, &mi), -EINVAL);

	ck_assert_int_eq(parse_mem(bad_key, sizeof(bad_key) - 1, &mi), 0);
	ck_assert_uint_eq(mi.free, KB(2));
}
END_TEST

START_TEST(test_long_lines)
{
	const size_t n = 1u << 20;
	static const char tail[] = "\nMemTotal: 3 kB\nMemFree:";
	static const char value[] = "1 kB\n";
	size_t len = n + sizeof(tail) - 1 + n + sizeof(value) - 1;
	char *buf = malloc(len), *p = buf;
	struct meminfo mi;

	ck_assert_ptr_nonnull(buf);
	/* 1 MiB unknown line, then MemFree padded with 1 MiB of blanks and zeros */
	memset(p, 'x', n);
	p += n;
	memcpy(p, tail, sizeof(tail) - 1);
	p += sizeof(tail) - 1;
	memset(p, ' ', n / 2);
	memset(p + n / 2, '0', n - n / 2);
	p += n;
	memcpy(p, value, sizeof(value) - 1);

	ck_assert_int_eq(meminfo_parse(buf, len, &mi), 0);
	ck_assert_uint_eq(mi.present, MEMINFO_HAS_TOTAL | MEMINFO_HAS_FREE);
	ck_assert_uint_eq(mi.total, KB(3));
	ck_assert_uint_eq(mi.free, KB(1));
	free(buf);
}
END_TEST

START_TEST(test_len_is_respected)
{
	static const char s[] = "MemTotal: 1 kB\nMemFree: 2 kB\nMemAvailable: 3 kB\n";
	struct meminfo mi;

	/* cut right after "MemFree: 2 kB": MemAvailable must not be seen */
	ck_assert_int_eq(parse_mem(s, 28, &mi), 0);
	ck_assert_uint_eq(mi.present, MEMINFO_HAS_TOTAL | MEMINFO_HAS_FREE);
	ck_assert_uint_eq(mi.free, KB(2));

	/* cut after "MemFree: 2 k": value dropped, required key missing */
	ck_assert_int_eq(parse_mem(s, 27, &mi), -EINVAL);
}
END_TEST

static Suite *meminfo_suite(void)
{
	Suite *s = suite_create("meminfo");
	TCase *tc = tcase_create("parse");

	tcase_add_test(tc, test_real_6_18);
	tcase_add_test(tc, test_crlf);
	tcase_add_test(tc, test_old_kernel_no_memavailable);
	tcase_add_test(tc, test_empty);
	tcase_add_test(tc, test_null_args);
	tcase_add_test(tc, test_truncated_midline);
	tcase_add_test(tc, test_truncated_variants);
	tcase_add_test(tc, test_no_trailing_newline);
	tcase_add_test(tc, test_garbage_binary);
	tcase_add_test(tc, test_garbage_lines);
	tcase_add_test(tc, test_duplicate_keys);
	tcase_add_test(tc, test_huge_values);
	tcase_add_test(tc, test_overflow);
	tcase_add_test(tc, test_negative);
	tcase_add_test(tc, test_missing_units);
	tcase_add_test(tc, test_missing_required);
	tcase_add_test(tc, test_whitespace);
	tcase_add_test(tc, test_key_matching);
	tcase_add_test(tc, test_embedded_nul);
	tcase_add_test(tc, test_long_lines);
	tcase_add_test(tc, test_len_is_respected);
	suite_add_tcase(s, tc);

	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(meminfo_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);

	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
