/* SPDX-License-Identifier: GPL-2.0 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmstat.h"
#include "fixture.h"

/* The fields every test below knew before the workingset and THP ones. */
#define VMSTAT_HAS_BASE ((VMSTAT_HAS_THP_FAULT_FALLBACK << 1) - 1u)
#define WS_SPLIT(kind) (VMSTAT_HAS_WORKINGSET(kind, VMSTAT_WS_ANON) | VMSTAT_HAS_WORKINGSET(kind, VMSTAT_WS_FILE))
#define WS_ALL_SPLIT (WS_SPLIT(VMSTAT_WS_REFAULT) | WS_SPLIT(VMSTAT_WS_ACTIVATE) | WS_SPLIT(VMSTAT_WS_RESTORE))
/* Everything a 6.18 kernel prints. */
#define VMSTAT_HAS_ALL                                                                                   \
	(VMSTAT_HAS_BASE | VMSTAT_HAS_COMPACT_SUCCESS | VMSTAT_HAS_COMPACT_DAEMON_WAKE |                  \
	 VMSTAT_HAS_THP_FAULT_FALLBACK_CHARGE | VMSTAT_HAS_THP_COLLAPSE_ALLOC_FAILED |                    \
	 VMSTAT_HAS_THP_FILE_FALLBACK | VMSTAT_HAS_THP_FILE_FALLBACK_CHARGE |                             \
	 VMSTAT_HAS_THP_ZERO_PAGE_ALLOC_FAILED | WS_ALL_SPLIT)

FIXTURE_PARSE_FILE(parse_fixture, "vmstat", vmstat_parse, struct vmstat)
FIXTURE_PARSE_MEM(parse_mem, vmstat_parse, struct vmstat)

#define parse_str(s, vs) parse_mem((s), strlen(s), (vs))

/* Recorded from this machine's /proc/vmstat (Linux 6.18, x86_64). */
static void assert_real_6_18(const struct vmstat *vs)
{
	ck_assert_uint_eq(vs->present, VMSTAT_HAS_ALL);
	ck_assert_uint_eq(vs->pgfault, 24827184);
	ck_assert_uint_eq(vs->pgmajfault, 3174);
	ck_assert_uint_eq(vs->pgfree, 26815768);
	ck_assert_uint_eq(vs->pgalloc, 25739609); /* dma 0 + dma32 0 + normal + movable 0 + device 0 */
	ck_assert_uint_eq(vs->allocstall, 0);
	ck_assert_uint_eq(vs->pgscan_kswapd, 0);
	/* not pgscan_direct_throttle, pgscan_khugepaged, pgscan_proactive, pgscan_file (495720) */
	ck_assert_uint_eq(vs->pgscan_direct, 0);
	ck_assert_uint_eq(vs->pgsteal_kswapd, 0);
	ck_assert_uint_eq(vs->pgsteal_direct, 0);
	ck_assert_uint_eq(vs->oom_kill, 3);
	ck_assert_uint_eq(vs->compact_stall, 0);
	ck_assert_uint_eq(vs->compact_fail, 0);
	ck_assert_uint_eq(vs->thp_fault_alloc, 0);
	ck_assert_uint_eq(vs->thp_fault_fallback, 0);
	ck_assert_uint_eq(vs->workingset[VMSTAT_WS_REFAULT][VMSTAT_WS_FILE], 336216);
	ck_assert_uint_eq(vs->workingset[VMSTAT_WS_ACTIVATE][VMSTAT_WS_FILE], 101620);
	ck_assert_uint_eq(vs->workingset[VMSTAT_WS_REFAULT][VMSTAT_WS_ANON], 0);
	ck_assert_uint_eq(vs->workingset[VMSTAT_WS_RESTORE][VMSTAT_WS_FILE], 0);
}

START_TEST(test_real_6_18)
{
	struct vmstat vs;

	memset(&vs, 0xaa, sizeof(vs));
	ck_assert_int_eq(parse_fixture("real-6.18.txt", &vs), 0);
	assert_real_6_18(&vs);
}
END_TEST

START_TEST(test_crlf)
{
	struct vmstat vs;

	memset(&vs, 0xaa, sizeof(vs));
	ck_assert_int_eq(parse_fixture("crlf.txt", &vs), 0);
	assert_real_6_18(&vs);
}
END_TEST

/* 3.10: reclaim counters per zone, plain allocstall, no oom_kill. */
START_TEST(test_centos7_3_10)
{
	struct vmstat vs;

	memset(&vs, 0xaa, sizeof(vs));
	ck_assert_int_eq(parse_fixture("linux-3.10-centos7.txt", &vs), 0);
	ck_assert_uint_eq(vs.present, (VMSTAT_HAS_BASE & ~VMSTAT_HAS_OOM_KILL) | VMSTAT_HAS_COMPACT_SUCCESS |
					      VMSTAT_HAS_THP_COLLAPSE_ALLOC_FAILED | VMSTAT_HAS_THP_ZERO_PAGE_ALLOC_FAILED |
					      VMSTAT_HAS_WORKINGSET(VMSTAT_WS_REFAULT, VMSTAT_WS_UNSPLIT) |
					      VMSTAT_HAS_WORKINGSET(VMSTAT_WS_ACTIVATE, VMSTAT_WS_UNSPLIT));
	ck_assert_uint_eq(vs.compact_success, 35);
	ck_assert_uint_eq(vs.thp_collapse_alloc_failed, 3);
	ck_assert_uint_eq(vs.workingset[VMSTAT_WS_REFAULT][VMSTAT_WS_UNSPLIT], 310245);
	ck_assert_uint_eq(vs.workingset[VMSTAT_WS_ACTIVATE][VMSTAT_WS_UNSPLIT], 98123);
	ck_assert_uint_eq(vs.oom_kill, 0);
	ck_assert_uint_eq(vs.pgfault, 987654321);
	ck_assert_uint_eq(vs.pgmajfault, 12345);
	ck_assert_uint_eq(vs.pgfree, 1333400000);
	ck_assert_uint_eq(vs.pgalloc, UINT64_C(1024) + 98765432 + 1234567890 + 0);
	ck_assert_uint_eq(vs.allocstall, 4711);
	ck_assert_uint_eq(vs.pgsteal_kswapd, 0 + 1200345 + 9876543 + 0);
	ck_assert_uint_eq(vs.pgsteal_direct, 0 + 2345 + 45678 + 0);
	ck_assert_uint_eq(vs.pgscan_kswapd, 0 + 1500000 + 12000000 + 0);
	/* pgscan_direct_throttle 17 is not a zone */
	ck_assert_uint_eq(vs.pgscan_direct, 0 + 3000 + 60000 + 0);
	ck_assert_uint_eq(vs.compact_stall, 42);
	ck_assert_uint_eq(vs.compact_fail, 7);
	ck_assert_uint_eq(vs.thp_fault_alloc, 3456);
	ck_assert_uint_eq(vs.thp_fault_fallback, 89);
}
END_TEST

/* 5.4 on 32-bit ARM: a highmem zone, no THP, no compaction. */
START_TEST(test_arm32_highmem_missing_fields)
{
	struct vmstat vs;

	memset(&vs, 0xaa, sizeof(vs));
	ck_assert_int_eq(parse_fixture("linux-5.4-arm32-highmem.txt", &vs), 0);
	ck_assert_uint_eq(vs.present,
			  (VMSTAT_HAS_BASE & ~(VMSTAT_HAS_COMPACT_STALL | VMSTAT_HAS_COMPACT_FAIL |
					       VMSTAT_HAS_THP_FAULT_ALLOC | VMSTAT_HAS_THP_FAULT_FALLBACK)) |
				  VMSTAT_HAS_WORKINGSET(VMSTAT_WS_REFAULT, VMSTAT_WS_UNSPLIT) |
				  VMSTAT_HAS_WORKINGSET(VMSTAT_WS_ACTIVATE, VMSTAT_WS_UNSPLIT) |
				  VMSTAT_HAS_WORKINGSET(VMSTAT_WS_RESTORE, VMSTAT_WS_UNSPLIT));
	ck_assert_uint_eq(vs.compact_stall, 0);
	ck_assert_uint_eq(vs.compact_fail, 0);
	ck_assert_uint_eq(vs.thp_fault_alloc, 0);
	ck_assert_uint_eq(vs.thp_fault_fallback, 0);
	ck_assert_uint_eq(vs.pgfault, 45678901);
	ck_assert_uint_eq(vs.pgmajfault, 2345);
	ck_assert_uint_eq(vs.pgfree, 60123456);
	ck_assert_uint_eq(vs.pgalloc, 51234567 + 8765432 + 0);
	ck_assert_uint_eq(vs.allocstall, 12 + 3 + 0);
	ck_assert_uint_eq(vs.pgsteal_kswapd, 81234);
	ck_assert_uint_eq(vs.pgsteal_direct, 567);
	ck_assert_uint_eq(vs.pgscan_kswapd, 90123);
	ck_assert_uint_eq(vs.pgscan_direct, 612);
	ck_assert_uint_eq(vs.oom_kill, 1);
}
END_TEST

/* Split kernels give anon and file; older ones print one counter, which
 * counted file pages only (anon pages had no shadow entries before 5.9). */
START_TEST(test_workingset_split_and_unsplit)
{
	struct vmstat vs;
	uint64_t v[2];
	bool has[2];

	ck_assert_int_eq(parse_fixture("real-6.18.txt", &vs), 0);
	vmstat_workingset(&vs, VMSTAT_WS_REFAULT, v, has);
	ck_assert(has[0] && has[1]);
	ck_assert_uint_eq(v[0], 0);
	ck_assert_uint_eq(v[1], 336216);

	ck_assert_int_eq(parse_fixture("linux-5.4-arm32-highmem.txt", &vs), 0);
	vmstat_workingset(&vs, VMSTAT_WS_REFAULT, v, has);
	ck_assert(!has[0] && has[1]);
	ck_assert_uint_eq(v[1], 18234);
	vmstat_workingset(&vs, VMSTAT_WS_RESTORE, v, has);
	ck_assert(!has[0] && has[1]);
	ck_assert_uint_eq(v[1], 1203);

	/* 3.10 has no workingset_restore at all */
	ck_assert_int_eq(parse_fixture("linux-3.10-centos7.txt", &vs), 0);
	vmstat_workingset(&vs, VMSTAT_WS_RESTORE, v, has);
	ck_assert(!has[0] && !has[1]);
	vmstat_workingset(&vs, VMSTAT_WS_ACTIVATE, v, has);
	ck_assert(!has[0] && has[1]);
	ck_assert_uint_eq(v[1], 98123);

	/* the split keys win over an unsplit one printed beside them */
	ck_assert_int_eq(parse_str("workingset_refault 9\nworkingset_refault_file 4\n", &vs), 0);
	vmstat_workingset(&vs, VMSTAT_WS_REFAULT, v, has);
	ck_assert(!has[0] && has[1]);
	ck_assert_uint_eq(v[1], 4);
}
END_TEST

START_TEST(test_empty)
{
	struct vmstat vs;

	ck_assert_int_eq(parse_fixture("empty.txt", &vs), -EINVAL);
	ck_assert_int_eq(vmstat_parse(NULL, 0, &vs), -EINVAL);
}
END_TEST

START_TEST(test_null_args)
{
	struct vmstat vs;

	ck_assert_int_eq(vmstat_parse(NULL, 5, &vs), -EINVAL);
	ck_assert_int_eq(parse_str("pgfault 1\n", NULL), -EINVAL);
}
END_TEST

/* Choice: an unterminated last line may have had its digits cut, so its
 * field is dropped; the rest of the snapshot is kept. */
START_TEST(test_truncated_midline)
{
	struct vmstat vs;

	memset(&vs, 0xaa, sizeof(vs));
	ck_assert_int_eq(parse_fixture("truncated-midline.txt", &vs), 0);
	/* everything before pgfault is kept; pgfault (cut) and all after are absent */
	ck_assert_uint_eq(vs.present, VMSTAT_HAS_PGALLOC | VMSTAT_HAS_ALLOCSTALL | VMSTAT_HAS_PGFREE | WS_ALL_SPLIT);
	ck_assert_uint_eq(vs.pgalloc, 25739609);
	ck_assert_uint_eq(vs.allocstall, 0);
	ck_assert_uint_eq(vs.pgfree, 26815768);
	ck_assert_uint_eq(vs.pgfault, 0);
	ck_assert_uint_eq(vs.pgmajfault, 0);
}
END_TEST

/* A cut component drops the whole sum, not just its zone. */
START_TEST(test_truncated_sum)
{
	struct vmstat vs;

	memset(&vs, 0xaa, sizeof(vs));
	ck_assert_int_eq(parse_fixture("truncated-pgalloc.txt", &vs), 0);
	ck_assert_uint_eq(vs.present, WS_ALL_SPLIT); /* they come before pgalloc_* */
	ck_assert_uint_eq(vs.pgalloc, 0);

	ck_assert_int_eq(parse_str("pgalloc_dma32 5\npgfault 3\npgalloc_normal 1", &vs), 0);
	ck_assert_uint_eq(vs.present, VMSTAT_HAS_PGFAULT);
	ck_assert_uint_eq(vs.pgalloc, 0);
	ck_assert_uint_eq(vs.pgfault, 3);

	/* a complete earlier duplicate does not stand in for the cut one */
	ck_assert_int_eq(parse_str("pgfault 3\npgfault 4", &vs), 0);
	ck_assert_uint_eq(vs.present, 0);
}
END_TEST

START_TEST(test_truncated_variants)
{
	static const char head[] = "pgfault 7\n";
	static const char *const dropped[] = {
		"pgmajfault 12", "pgmajfault ", "pgmajfault\t", "pgmajfault 12\r",
		"pgmajfault 12 ", "pgmajfault   \t",
	};
	/* the key itself may be cut: not even a key */
	static const char *const keyless[] = {
		"pgmaj", "pgmajfault", "pgscan_direct", "oom_kill",
	};
	static const char *const broken[] = {
		"pgmajfault 12x", "pgmajfault -1", "pgmajfault +1", "pgmajfault 1 2",
		"pgmajfault x", "pgmajfault 99999999999999999999",
	};
	char buf[128];
	struct vmstat vs;

	for (size_t i = 0; i < sizeof(dropped) / sizeof(dropped[0]); i++) {
		snprintf(buf, sizeof(buf), "%s%s", head, dropped[i]);
		memset(&vs, 0xaa, sizeof(vs));
		ck_assert_msg(parse_str(buf, &vs) == 0, "rejected: %s", dropped[i]);
		ck_assert_uint_eq(vs.present, VMSTAT_HAS_PGFAULT);
		ck_assert_uint_eq(vs.pgfault, 7);
		ck_assert_uint_eq(vs.pgmajfault, 0);
	}

	for (size_t i = 0; i < sizeof(keyless) / sizeof(keyless[0]); i++) {
		snprintf(buf, sizeof(buf), "pgscan_direct 9\noom_kill 8\n%s", keyless[i]);
		ck_assert_msg(parse_str(buf, &vs) == 0, "rejected: %s", keyless[i]);
		ck_assert_uint_eq(vs.present, VMSTAT_HAS_PGSCAN_DIRECT | VMSTAT_HAS_OOM_KILL);
		ck_assert_uint_eq(vs.pgscan_direct, 9);
		ck_assert_uint_eq(vs.oom_kill, 8);
	}

	for (size_t i = 0; i < sizeof(broken) / sizeof(broken[0]); i++) {
		snprintf(buf, sizeof(buf), "%s%s", head, broken[i]);
		ck_assert_msg(parse_str(buf, &vs) == -EINVAL, "accepted: %s", broken[i]);
	}

	/* The same values are complete or malformed once the line is terminated. */
	ck_assert_int_eq(parse_str("pgfault 7\npgmajfault 12\n", &vs), 0);
	ck_assert_uint_eq(vs.pgmajfault, 12);
	ck_assert_int_eq(parse_str("pgfault 7\npgmajfault 12\r\n", &vs), 0);
	ck_assert_uint_eq(vs.pgmajfault, 12);
	ck_assert_int_eq(parse_str("pgfault 7\npgmajfault\n", &vs), -EINVAL);
	ck_assert_int_eq(parse_str("pgfault 7\npgmajfault \n", &vs), -EINVAL);
}
END_TEST

START_TEST(test_garbage_binary)
{
	static const char junk_value[] = "pgfault \xff\x01\x02\n";
	struct vmstat vs;

	/* nothing looks like a known key: not an error, just nothing present */
	memset(&vs, 0x5a, sizeof(vs));
	ck_assert_int_eq(parse_fixture("garbage.bin", &vs), 0);
	ck_assert_uint_eq(vs.present, 0);
	ck_assert_uint_eq(vs.pgfault, 0);

	/* a known key followed by junk is */
	memset(&vs, 0x5a, sizeof(vs));
	ck_assert_int_eq(parse_mem(junk_value, sizeof(junk_value) - 1, &vs), -EINVAL);
	ck_assert_uint_eq(vs.pgfault, UINT64_C(0x5a5a5a5a5a5a5a5a));
	ck_assert_uint_eq(vs.present, UINT64_C(0x5a5a5a5a5a5a5a5a));
}
END_TEST

START_TEST(test_garbage_lines)
{
	struct vmstat vs;

	ck_assert_int_eq(parse_fixture("garbage-lines.txt", &vs), 0);
	ck_assert_uint_eq(vs.present, VMSTAT_HAS_PGFAULT | VMSTAT_HAS_PGALLOC |
					      VMSTAT_HAS_PGSCAN_DIRECT | VMSTAT_HAS_OOM_KILL);
	ck_assert_uint_eq(vs.pgfault, 1000);
	/* not pgalloc_dma32_extra, pgalloc_, pgalloc or pgallocnormal */
	ck_assert_uint_eq(vs.pgalloc, 200);
	/* not pgscan_direct_throttle, pgscan_khugepaged or pgscan_proactive */
	ck_assert_uint_eq(vs.pgscan_direct, 30);
	ck_assert_uint_eq(vs.oom_kill, 2);
	ck_assert_uint_eq(vs.pgmajfault, 0);
}
END_TEST

/* Choice: the last occurrence of a key wins, per zone within a sum. */
START_TEST(test_duplicate_keys)
{
	struct vmstat vs;

	ck_assert_int_eq(parse_fixture("duplicate-keys.txt", &vs), 0);
	ck_assert_uint_eq(vs.present, VMSTAT_HAS_PGFAULT | VMSTAT_HAS_PGALLOC |
					      VMSTAT_HAS_ALLOCSTALL | VMSTAT_HAS_OOM_KILL);
	ck_assert_uint_eq(vs.pgfault, 2);
	ck_assert_uint_eq(vs.pgalloc, 10 + 1000);
	/* plain and per-zone allocstall are distinct keys, both count */
	ck_assert_uint_eq(vs.allocstall, 3 + 4);
	ck_assert_uint_eq(vs.oom_kill, 0);

	/* A malformed duplicate still fails, even after a good one. */
	ck_assert_int_eq(parse_str("pgfault 1\npgfault x\n", &vs), -EINVAL);
}
END_TEST

START_TEST(test_huge_values)
{
	struct vmstat vs;

	ck_assert_int_eq(parse_fixture("huge-values.txt", &vs), 0);
	ck_assert_uint_eq(vs.present, VMSTAT_HAS_PGFAULT | VMSTAT_HAS_PGMAJFAULT |
					      VMSTAT_HAS_PGALLOC | VMSTAT_HAS_OOM_KILL);
	ck_assert_uint_eq(vs.pgfault, UINT64_MAX);
	ck_assert_uint_eq(vs.pgmajfault, 42);
	ck_assert_uint_eq(vs.pgalloc, UINT64_MAX); /* sums exactly to the limit */
	ck_assert_uint_eq(vs.oom_kill, UINT64_C(1) << 63);
}
END_TEST

START_TEST(test_overflow)
{
	struct vmstat vs;

	memset(&vs, 0x5a, sizeof(vs));
	ck_assert_int_eq(parse_fixture("overflow-u64.txt", &vs), -EINVAL);
	ck_assert_int_eq(parse_fixture("overflow-sum.txt", &vs), -EINVAL);
	ck_assert_uint_eq(vs.pgfault, UINT64_C(0x5a5a5a5a5a5a5a5a));
	ck_assert_uint_eq(vs.present, UINT64_C(0x5a5a5a5a5a5a5a5a));

	ck_assert_int_eq(parse_str("allocstall 18446744073709551615\nallocstall_normal 1\n", &vs),
			 -EINVAL);
	/* an overflowing unknown key is not our business */
	ck_assert_int_eq(parse_str("nr_free_pages 99999999999999999999999\npgfault 1\n", &vs), 0);
	ck_assert_uint_eq(vs.present, VMSTAT_HAS_PGFAULT);
}
END_TEST

START_TEST(test_negative)
{
	struct vmstat vs;

	memset(&vs, 0x5a, sizeof(vs));
	ck_assert_int_eq(parse_fixture("negative.txt", &vs), -EINVAL);
	ck_assert_uint_eq(vs.pgfault, UINT64_C(0x5a5a5a5a5a5a5a5a));
	ck_assert_uint_eq(vs.present, UINT64_C(0x5a5a5a5a5a5a5a5a));

	/* unknown keys are never validated */
	ck_assert_int_eq(parse_str("nr_zone_write_pending -3\npgfault 1\n", &vs), 0);
	ck_assert_uint_eq(vs.present, VMSTAT_HAS_PGFAULT);
	ck_assert_uint_eq(vs.pgfault, 1);
}
END_TEST

START_TEST(test_zones)
{
	struct vmstat vs;

	ck_assert_int_eq(parse_str("pgalloc_dma 1\npgalloc_dma32 2\npgalloc_normal 4\npgalloc_high 8\n"
				   "pgalloc_movable 16\npgalloc_device 32\npgalloc_dma64 64\n"
				   "pgalloc_Normal 128\npgalloc_normal_x 256\n",
				   &vs),
			 0);
	ck_assert_uint_eq(vs.present, VMSTAT_HAS_PGALLOC);
	ck_assert_uint_eq(vs.pgalloc, 63);

	/* Zone keys only; a plain key and zone keys (no kernel prints both)
	 * add up. */
	ck_assert_int_eq(parse_str("pgsteal_kswapd 100\npgsteal_kswapd_normal 1\n"
				   "pgsteal_direct_throttle 5\npgsteal_directnormal 6\n"
				   "pgsteal_direct_normal 7\n",
				   &vs),
			 0);
	ck_assert_uint_eq(vs.present, VMSTAT_HAS_PGSTEAL_KSWAPD | VMSTAT_HAS_PGSTEAL_DIRECT);
	ck_assert_uint_eq(vs.pgsteal_kswapd, 101);
	ck_assert_uint_eq(vs.pgsteal_direct, 7);

	/* "pgalloc" alone is no key of any kernel */
	ck_assert_int_eq(parse_str("pgalloc 5\n", &vs), 0);
	ck_assert_uint_eq(vs.present, 0);
}
END_TEST

START_TEST(test_whitespace)
{
	struct vmstat vs;

	ck_assert_int_eq(parse_str("\t pgfault \t 7 \t\n\n\npgfree\t8\n", &vs), 0);
	ck_assert_uint_eq(vs.present, VMSTAT_HAS_PGFAULT | VMSTAT_HAS_PGFREE);
	ck_assert_uint_eq(vs.pgfault, 7);
	ck_assert_uint_eq(vs.pgfree, 8);

	/* a CR anywhere but at the end of the line is not whitespace */
	ck_assert_int_eq(parse_str("pgfault 7\r 8\n", &vs), -EINVAL);
	/* "pgfault\r" is not the key pgfault */
	ck_assert_int_eq(parse_str("pgfault\r 7\n", &vs), 0);
	ck_assert_uint_eq(vs.present, 0);
}
END_TEST

START_TEST(test_embedded_nul)
{
	static const char bad[] = "pgfault 1\0\n";
	static const char bad_key[] = "pgfault 1\npgfault\0 9\npgfree 2\n";
	struct vmstat vs;

	ck_assert_int_eq(parse_mem(bad, sizeof(bad) - 1, &vs), -EINVAL);

	ck_assert_int_eq(parse_mem(bad_key, sizeof(bad_key) - 1, &vs), 0);
	ck_assert_uint_eq(vs.present, VMSTAT_HAS_PGFAULT | VMSTAT_HAS_PGFREE);
	ck_assert_uint_eq(vs.pgfault, 1);
	ck_assert_uint_eq(vs.pgfree, 2);
}
END_TEST

START_TEST(test_len_is_respected)
{
	static const char s[] = "pgfault 1\npgfree 22\npgmajfault 3\n";
	struct vmstat vs;

	/* cut right after "pgfree 22\n": pgmajfault must not be seen */
	ck_assert_int_eq(parse_mem(s, 20, &vs), 0);
	ck_assert_uint_eq(vs.present, VMSTAT_HAS_PGFAULT | VMSTAT_HAS_PGFREE);
	ck_assert_uint_eq(vs.pgfree, 22);

	/* cut after "pgfree 2": dropped, not taken as 2 */
	ck_assert_int_eq(parse_mem(s, 18, &vs), 0);
	ck_assert_uint_eq(vs.present, VMSTAT_HAS_PGFAULT);
	ck_assert_uint_eq(vs.pgfree, 0);
}
END_TEST

static Suite *vmstat_suite(void)
{
	Suite *s = suite_create("vmstat");
	TCase *tc = tcase_create("parse");

	tcase_add_test(tc, test_real_6_18);
	tcase_add_test(tc, test_crlf);
	tcase_add_test(tc, test_centos7_3_10);
	tcase_add_test(tc, test_workingset_split_and_unsplit);
	tcase_add_test(tc, test_arm32_highmem_missing_fields);
	tcase_add_test(tc, test_empty);
	tcase_add_test(tc, test_null_args);
	tcase_add_test(tc, test_truncated_midline);
	tcase_add_test(tc, test_truncated_sum);
	tcase_add_test(tc, test_truncated_variants);
	tcase_add_test(tc, test_garbage_binary);
	tcase_add_test(tc, test_garbage_lines);
	tcase_add_test(tc, test_duplicate_keys);
	tcase_add_test(tc, test_huge_values);
	tcase_add_test(tc, test_overflow);
	tcase_add_test(tc, test_negative);
	tcase_add_test(tc, test_zones);
	tcase_add_test(tc, test_whitespace);
	tcase_add_test(tc, test_embedded_nul);
	tcase_add_test(tc, test_len_is_respected);
	suite_add_tcase(s, tc);

	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(vmstat_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);

	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
