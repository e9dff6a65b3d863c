/* SPDX-License-Identifier: GPL-2.0 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "zoneinfo.h"
#include "fixture.h"

FIXTURE_PARSE_FILE(parse_fixture, "zoneinfo", zoneinfo_parse, struct zoneinfo)
FIXTURE_PARSE_MEM(parse_mem, zoneinfo_parse, struct zoneinfo)

/* Recorded on this machine (Linux 6.18, one node, five zones, Device last).
 * totalreserve by hand: DMA min(24090 + 16, 3840) + DMA32 (21071 + 3659)
 * + Normal (0 + 25557) + Movable min(32, 0) + Device 0 = 54127. */
static void assert_real_6_18(const struct zoneinfo *z)
{
	ck_assert_uint_eq(z->nodes, 1);
	ck_assert_uint_eq(z->zones, 5);
	ck_assert_uint_eq(z->free_pages, 3840 + 772291 + 4661399);
	ck_assert_uint_eq(z->wmark_low_pages, 13 + 2887 + 20163 + 32 + 0);
	ck_assert_uint_eq(z->totalreserve_pages, 3840 + 24730 + 25557);
	ck_assert_uint_eq(z->managed_pages, 3840 + 772808 + 5394257);
	ck_assert(z->prints_boost);
}

START_TEST(test_real_6_18)
{
	struct zoneinfo z;

	memset(&z, 0xaa, sizeof(z));
	ck_assert_int_eq(parse_fixture("real-6.18.txt", &z), 0);
	assert_real_6_18(&z);
}
END_TEST

START_TEST(test_crlf)
{
	struct zoneinfo z;

	ck_assert_int_eq(parse_fixture("crlf.txt", &z), 0);
	assert_real_6_18(&z);
}
END_TEST

/* Two nodes; node 1's DMA and DMA32 are empty; node 0's Normal zone is boosted
 * by 2000, which low and high include but the reserve does not; node 0's DMA
 * reserve (8000 + 12) is capped at its 3840 managed pages. */
START_TEST(test_numa_boosted)
{
	struct zoneinfo z;

	ck_assert_int_eq(parse_fixture("numa-2-nodes-boosted.txt", &z), 0);
	ck_assert_uint_eq(z.nodes, 2);
	ck_assert_uint_eq(z.zones, 8);
	ck_assert_uint_eq(z.free_pages, 3000 + 400000 + 900000 + 1500000);
	ck_assert_uint_eq(z.wmark_low_pages, 10 + 1300 + 8500 + 9000);
	ck_assert_uint_eq(z.totalreserve_pages, 3840 + (6500 + 1600) + (10000 - 2000) + 11000);
	ck_assert_uint_eq(z.managed_pages, 3840 + 700000 + 1900000 + 4100000);
}
END_TEST

/* Before v5.0 there is no boost line; pagesets print "high:" (a colon) too. */
START_TEST(test_linux_4_19)
{
	struct zoneinfo z;

	ck_assert_int_eq(parse_fixture("linux-4.19-no-boost.txt", &z), 0);
	ck_assert_uint_eq(z.nodes, 1);
	ck_assert_uint_eq(z.zones, 4);
	ck_assert_uint_eq(z.free_pages, 703977);
	ck_assert_uint_eq(z.wmark_low_pages, 20 + 800 + 300);
	ck_assert_uint_eq(z.totalreserve_pages, (3866 + 24) + (955 + 950) + 360);
}
END_TEST

static int parse_boosted_fixture(const char *name, uint64_t min_free_pages, struct zoneinfo *z)
{
	size_t len;
	char *buf = fixture_read("zoneinfo", name, &len);
	int r = zoneinfo_parse_boosted(buf, len, min_free_pages, z);

	free(buf);
	return r;
}

/* Recorded in the vm suite's arm64 5.10 guest (one DMA zone with all 121393
 * pages, vm.min_free_kbytes 22528: 5632 pages of 4 KiB), where zoneinfo has
 * no boost line; the -boosted copy has the 3584-page boost of a failed run
 * (2026-12-05: a 47 MiB reserve for 33 MiB) added to min, low and high. */
START_TEST(test_linux_5_10_boost_inferred)
{
	struct zoneinfo z;

	ck_assert_int_eq(parse_boosted_fixture("linux-5.10-arm64.txt", 5632, &z), 0);
	ck_assert_uint_eq(z.totalreserve_pages, 8448);
	ck_assert_uint_eq(z.wmark_low_pages, 7040);
	ck_assert(!z.prints_boost);
	/* Without min_free_kbytes, a boost is invisible: the reserve grows by it. */
	ck_assert_int_eq(parse_fixture("linux-5.10-arm64-boosted.txt", &z), 0);
	ck_assert_uint_eq(z.totalreserve_pages, 8448 + 3584);
	/* With it, the boost is min's excess over the zone's share (here all of it). */
	ck_assert_int_eq(parse_boosted_fixture("linux-5.10-arm64-boosted.txt", 5632, &z), 0);
	ck_assert_uint_eq(z.totalreserve_pages, 8448);
	ck_assert_uint_eq(z.wmark_low_pages, 7040 + 3584);
	ck_assert_uint_eq(z.free_pages, 106057);
	/* A min below the share (min_free_kbytes read as it changed) is no boost. */
	ck_assert_int_eq(parse_boosted_fixture("linux-5.10-arm64.txt", 9000, &z), 0);
	ck_assert_uint_eq(z.totalreserve_pages, 8448);
}
END_TEST

/* The share is per lowmem zone, by managed pages: 1000 pages over 1000 + 3000
 * give Normal 750 (boost 250 above that) and DMA32 250 (none); HighMem's own
 * min (managed / 1024 within 32..128: 64) leaves its boost at 36. A file
 * that prints its boost lines keeps them whatever min_free_pages says. */
START_TEST(test_boost_share_per_zone)
{
	static const char text[] = "Node 0, zone DMA32\n  pages free 10\n  min 250\n  low 300\n  high 350\n"
				   "  managed 1000\n  protection: (0, 0, 0)\n"
				   "Node 0, zone Normal\n  pages free 10\n  min 1000\n  low 1200\n  high 1400\n"
				   "  managed 3000\n  protection: (0, 0, 0)\n"
				   "Node 0, zone HighMem\n  pages free 10\n  min 100\n  low 110\n  high 120\n"
				   "  managed 65536\n  protection: (0, 0, 0)\n";
	static const char with_boost[] = "Node 0, zone Normal\n  pages free 10\n  boost 0\n  min 1000\n  low 1200\n"
					 "  high 1400\n  managed 3000\n  protection: (0)\n";
	struct zoneinfo z;

	ck_assert_int_eq(zoneinfo_parse_boosted(text, strlen(text), 1000, &z), 0);
	ck_assert_uint_eq(z.totalreserve_pages, 350 + (1400 - 250) + (120 - 36));
	ck_assert_int_eq(zoneinfo_parse_boosted(with_boost, strlen(with_boost), 1, &z), 0);
	ck_assert_uint_eq(z.totalreserve_pages, 1400);
}
END_TEST

START_TEST(test_broken_files)
{
	static const char *const broken[] = {
		"empty.txt",                   /* no zone at all */
		"garbage.bin",
		"embedded-nul.bin",
		"overflow.txt",                /* high beyond 2^64 */
		"bad-protection.txt",          /* a negative reserve */
		"unterminated-protection.txt", /* "(0, 0, 0" */
		"truncated-in-watermarks.txt", /* cut short after "low" of the Normal zone */
		/* "low\r 13": a '\r' is not a blank (lib/parse.h), only a line's
		 * trailing one is stripped, so the zone has no "low" line. */
		"cr-inside-line.txt",
	};
	struct zoneinfo z;
	size_t i;

	for (i = 0; i < sizeof(broken) / sizeof(broken[0]); i++)
		ck_assert_msg(parse_fixture(broken[i], &z) == -EINVAL, "%s parsed", broken[i]);
}
END_TEST

START_TEST(test_cut_anywhere)
{
	/* A short read at any byte either fails or, cut exactly after a
	 * zone's last line, describes fewer zones; it never reads past len. */
	size_t len, cut;
	char *full = fixture_read("zoneinfo", "real-6.18.txt", &len);
	struct zoneinfo z;

	for (cut = 0; cut < len; cut++) {
		int r = parse_mem(full, cut, &z);

		ck_assert(r == 0 || r == -EINVAL);
		if (r == 0) {
			ck_assert_uint_lt(z.zones, 5);
			ck_assert_uint_le(z.free_pages, 3840 + 772291 + 4661399);
		}
	}
	free(full);
}
END_TEST

START_TEST(test_header_variants)
{
	static const char zone_body[] =
		"  pages free     10\n        boost    0\n        min      1\n        low      2\n"
		"        high     3\n        managed  100\n        protection: (0, 0)\n";
	char text[1024];
	struct zoneinfo z;

	snprintf(text, sizeof(text), "Node 0, zone Normal\n%s", zone_body);
	ck_assert_int_eq(parse_mem(text, strlen(text), &z), 0);
	ck_assert_uint_eq(z.totalreserve_pages, 3);
	/* Tabs and a node number the kernel could print on big machines. */
	snprintf(text, sizeof(text), "Node\t1023,\tzone\tNormal\n%s", zone_body);
	ck_assert_int_eq(parse_mem(text, strlen(text), &z), 0);
	snprintf(text, sizeof(text), "Node x, zone Normal\n%s", zone_body);
	ck_assert_int_eq(parse_mem(text, strlen(text), &z), -EINVAL);
	snprintf(text, sizeof(text), "Node 0 zone Normal\n%s", zone_body);
	ck_assert_int_eq(parse_mem(text, strlen(text), &z), -EINVAL);
	snprintf(text, sizeof(text), "Node 0, zone\n%s", zone_body);
	ck_assert_int_eq(parse_mem(text, strlen(text), &z), -EINVAL);
	/* Values before any zone header are ignored, not attributed. */
	snprintf(text, sizeof(text), "        low      999\nNode 0, zone Normal\n%s", zone_body);
	ck_assert_int_eq(parse_mem(text, strlen(text), &z), 0);
	ck_assert_uint_eq(z.wmark_low_pages, 2);
	/* A value with trailing junk. */
	snprintf(text, sizeof(text), "Node 0, zone Normal\n%s        low      5 pages\n", zone_body);
	ck_assert_int_eq(parse_mem(text, strlen(text), &z), 0); /* the second low is ignored */
	snprintf(text, sizeof(text), "Node 0, zone Normal\n  pages free     10x\n%s", zone_body + 20);
	ck_assert_int_eq(parse_mem(text, strlen(text), &z), -EINVAL);
}
END_TEST

static Suite *zoneinfo_suite(void)
{
	Suite *s = suite_create("zoneinfo");
	TCase *tc = tcase_create("parse");

	tcase_add_test(tc, test_real_6_18);
	tcase_add_test(tc, test_crlf);
	tcase_add_test(tc, test_numa_boosted);
	tcase_add_test(tc, test_linux_4_19);
	tcase_add_test(tc, test_linux_5_10_boost_inferred);
	tcase_add_test(tc, test_boost_share_per_zone);
	tcase_add_test(tc, test_broken_files);
	tcase_add_test(tc, test_cut_anywhere);
	tcase_add_test(tc, test_header_variants);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(zoneinfo_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
