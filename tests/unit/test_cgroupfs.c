/* SPDX-License-Identifier: GPL-2.0 */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroupfs.h"
#include "fixture.h"

/* Fixtures under cgroup/:
 *  v1/  recorded on this machine (Linux 6.18, hybrid host, memory controller
 *       on v1): the root, "fixture-rec" (64M limit; a 16M process plus a
 *       100M one that the memcg OOM killer took) and an empty
 *       'my "odd" cgroup';
 *  v2/  hand-written on the layout of Linux 6.8: the root (which has no
 *       memory.current/max/high/events), "workload" (hit its 64M max, one
 *       OOM kill) and an idle 'my "odd" cgroup';
 *  files/  single files: other kernels, and broken ones. */

#define ODD "my \"odd\" cgroup"

#define MEMSTAT_HAS_V2 \
	(CGROUP_MEMSTAT_HAS_INACTIVE_FILE | CGROUP_MEMSTAT_HAS_ACTIVE_FILE | CGROUP_MEMSTAT_HAS_ANON | \
	 CGROUP_MEMSTAT_HAS_FILE)
#define MEMSTAT_HAS_V1 \
	(CGROUP_MEMSTAT_HAS_INACTIVE_FILE | CGROUP_MEMSTAT_HAS_ACTIVE_FILE | \
	 CGROUP_MEMSTAT_HAS_TOTAL_INACTIVE_FILE)

static char *read_fixture(const char *name, size_t *ret_len)
{
	return fixture_read("cgroup", name, ret_len);
}

/* --- cgroup_parse_u64_or_max() --- */

static int value_mem(const void *s, size_t len, uint64_t *v, bool *is_max)
{
	char *buf = dup_exact(s, len);
	int r = cgroup_parse_u64_or_max(buf, len, v, is_max);

	free(buf);
	return r;
}

#define value_str(s, v, m) value_mem((s), strlen(s), (v), (m))

static int value_fixture(const char *name, uint64_t *v, bool *is_max)
{
	size_t len;
	char *buf = read_fixture(name, &len);
	int r = cgroup_parse_u64_or_max(buf, len, v, is_max);

	free(buf);
	return r;
}

static void assert_value(const char *name, uint64_t want, bool want_max)
{
	uint64_t v = 0xdeadbeef;
	bool is_max = !want_max;

	ck_assert_msg(value_fixture(name, &v, &is_max) == 0, "rejected %s", name);
	ck_assert_msg(v == want, "%s: got %" PRIu64 ", want %" PRIu64, name, v, want);
	ck_assert_msg(is_max == want_max, "%s: is_max %d", name, is_max);
}

START_TEST(test_value_v1_recorded)
{
	assert_value("v1/memory.usage_in_bytes", 361836544, false);
	assert_value("v1/memory.limit_in_bytes", UINT64_C(9223372036854771712), false);
	assert_value("v1/memory.failcnt", 0, false);
	assert_value("v1/fixture-rec/memory.usage_in_bytes", 28344320, false);
	assert_value("v1/fixture-rec/memory.limit_in_bytes", 64 << 20, false);
	assert_value("v1/fixture-rec/memory.failcnt", 140, false);
	assert_value("v1/" ODD "/memory.usage_in_bytes", 0, false);
	assert_value("v1/" ODD "/memory.limit_in_bytes", UINT64_C(9223372036854771712), false);
	assert_value("v1/" ODD "/memory.failcnt", 0, false);
}
END_TEST

START_TEST(test_value_v2)
{
	assert_value("v2/workload/memory.current", 66891776, false);
	assert_value("v2/workload/memory.max", 64 << 20, false);
	assert_value("v2/workload/memory.high", UINT64_MAX, true);
	assert_value("v2/" ODD "/memory.current", 8716288, false);
	assert_value("v2/" ODD "/memory.max", UINT64_MAX, true);
	assert_value("v2/" ODD "/memory.high", 512 << 20, false);
}
END_TEST

START_TEST(test_value_ugly)
{
	uint64_t v;
	bool is_max;

	assert_value("files/value-crlf.txt", 64 << 20, false);
	assert_value("files/value-max-crlf.txt", UINT64_MAX, true);
	/* a number equal to UINT64_MAX is still a number, not "max" */
	assert_value("files/value-huge.txt", UINT64_MAX, false);

	/* out is untouched on failure */
	v = 7;
	is_max = true;
	ck_assert_int_eq(value_fixture("files/empty.txt", &v, &is_max), -EINVAL);
	ck_assert_int_eq(value_fixture("files/value-overflow.txt", &v, &is_max), -EINVAL);
	ck_assert_int_eq(value_fixture("files/value-negative.txt", &v, &is_max), -EINVAL);
	/* "6710" could be the start of "67108864" */
	ck_assert_int_eq(value_fixture("files/value-truncated.txt", &v, &is_max), -EINVAL);
	ck_assert_int_eq(value_fixture("files/value-two-lines.txt", &v, &is_max), -EINVAL);
	ck_assert_int_eq(value_fixture("files/garbage.bin", &v, &is_max), -EINVAL);
	ck_assert_uint_eq(v, 7);
	ck_assert(is_max);
}
END_TEST

START_TEST(test_value_strings)
{
	static const char *const bad[] = {
		"\n", " \n", "\r\n", "max", "5", "Max\n", "MAX\n", "maximum\n", "ma\n", "max max\n",
		"5 6\n", "0x10\n", "+5\n", "5.0\n", "5k\n", "5\n\n", "5\n6", "\n5\n",
		"5\r 6\n", "1e3\n",
	};
	static const char nul_value[] = "5\0\n";
	static const char nul_max[] = "max\0\n";
	uint64_t v;
	bool is_max;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(value_str(bad[i], &v, &is_max) == -EINVAL, "accepted \"%s\"", bad[i]);
	ck_assert_int_eq(value_mem(nul_value, sizeof(nul_value) - 1, &v, &is_max), -EINVAL);
	ck_assert_int_eq(value_mem(nul_max, sizeof(nul_max) - 1, &v, &is_max), -EINVAL);

	ck_assert_int_eq(value_str(" \t5 \t\n", &v, &is_max), 0);
	ck_assert_uint_eq(v, 5);
	ck_assert(!is_max);
	ck_assert_int_eq(value_str("0\n", &v, &is_max), 0);
	ck_assert_uint_eq(v, 0);
	ck_assert(!is_max);
	ck_assert_int_eq(value_str("007\n", &v, &is_max), 0);
	ck_assert_uint_eq(v, 7);
	ck_assert_int_eq(value_str(" max \r\n", &v, &is_max), 0);
	ck_assert_uint_eq(v, UINT64_MAX);
	ck_assert(is_max);

	/* is_max is optional, value is not */
	ck_assert_int_eq(value_str("max\n", &v, NULL), 0);
	ck_assert_uint_eq(v, UINT64_MAX);
	ck_assert_int_eq(value_str("42\n", &v, NULL), 0);
	ck_assert_uint_eq(v, 42);
	ck_assert_int_eq(value_str("42\n", NULL, &is_max), -EINVAL);
	ck_assert_int_eq(cgroup_parse_u64_or_max(NULL, 0, &v, &is_max), -EINVAL);
	ck_assert_int_eq(cgroup_parse_u64_or_max(NULL, 3, &v, &is_max), -EINVAL);
}
END_TEST

START_TEST(test_v1_unlimited)
{
	uint64_t v;

	ck_assert(cgroup_v1_limit_is_unlimited(UINT64_C(9223372036854771712))); /* 4k pages */
	ck_assert(cgroup_v1_limit_is_unlimited(UINT64_C(9223372036854710272))); /* 64k pages */
	ck_assert(cgroup_v1_limit_is_unlimited(UINT64_C(9223372036854775807))); /* res_counter */
	ck_assert(cgroup_v1_limit_is_unlimited(UINT64_MAX));
	ck_assert(cgroup_v1_limit_is_unlimited(UINT64_C(1) << 62));
	ck_assert(!cgroup_v1_limit_is_unlimited((UINT64_C(1) << 62) - 1));
	ck_assert(!cgroup_v1_limit_is_unlimited(UINT64_C(64) << 20));
	ck_assert(!cgroup_v1_limit_is_unlimited(0));

	/* end to end on files */
	ck_assert_int_eq(value_fixture("v1/memory.limit_in_bytes", &v, NULL), 0);
	ck_assert(cgroup_v1_limit_is_unlimited(v));
	ck_assert_int_eq(value_fixture("v1/" ODD "/memory.limit_in_bytes", &v, NULL), 0);
	ck_assert(cgroup_v1_limit_is_unlimited(v));
	ck_assert_int_eq(value_fixture("v1/fixture-rec/memory.limit_in_bytes", &v, NULL), 0);
	ck_assert(!cgroup_v1_limit_is_unlimited(v));
	ck_assert_int_eq(value_fixture("files/v1-limit-res-counter-3.10.txt", &v, NULL), 0);
	ck_assert_uint_eq(v, UINT64_C(9223372036854775807));
	ck_assert(cgroup_v1_limit_is_unlimited(v));
	ck_assert_int_eq(value_fixture("files/v1-limit-64k-pages.txt", &v, NULL), 0);
	ck_assert_uint_eq(v, UINT64_C(9223372036854710272));
	ck_assert(cgroup_v1_limit_is_unlimited(v));
}
END_TEST

/* --- cgroup_parse_flat_keyed() --- */

#define KV_MAX 64

struct kv_want {
	const char *key;
	uint64_t value;
};

static int kv_mem(const void *s, size_t len, struct cgroup_kv *kv, size_t max, size_t *n)
{
	char *buf = dup_exact(s, len);
	int r = cgroup_parse_flat_keyed(buf, len, kv, max, n);

	free(buf);
	return r;
}

#define kv_str(s, kv, max, n) kv_mem((s), strlen(s), (kv), (max), (n))

static int kv_fixture(const char *name, struct cgroup_kv *kv, size_t max, size_t *n)
{
	size_t len;
	char *buf = read_fixture(name, &len);
	int r = cgroup_parse_flat_keyed(buf, len, kv, max, n);

	free(buf);
	return r;
}

/* Exactly these entries, in this order. */
static void assert_kv(const struct cgroup_kv *kv, size_t n, const struct kv_want *want, size_t n_want)
{
	ck_assert_uint_eq(n, n_want);
	for (size_t i = 0; i < n_want; i++) {
		ck_assert_ptr_nonnull(memchr(kv[i].key, '\0', sizeof(kv[i].key)));
		ck_assert_str_eq(kv[i].key, want[i].key);
		ck_assert_uint_eq(kv[i].value, want[i].value);
	}
}

#define ASSERT_KV(kv, n, ...)                                                  \
	do {                                                                   \
		static const struct kv_want w_[] = { __VA_ARGS__ };            \
		assert_kv((kv), (n), w_, sizeof(w_) / sizeof(w_[0]));          \
	} while (0)

START_TEST(test_kv_v1_oom_control)
{
	struct cgroup_kv kv[KV_MAX];
	size_t n = 99;

	ck_assert_int_eq(kv_fixture("v1/memory.oom_control", kv, KV_MAX, &n), 0);
	ASSERT_KV(kv, n, { "oom_kill_disable", 0 }, { "under_oom", 0 }, { "oom_kill", 0 });

	ck_assert_int_eq(kv_fixture("v1/fixture-rec/memory.oom_control", kv, KV_MAX, &n), 0);
	ASSERT_KV(kv, n, { "oom_kill_disable", 0 }, { "under_oom", 0 }, { "oom_kill", 1 });

	ck_assert_int_eq(kv_fixture("v1/" ODD "/memory.oom_control", kv, KV_MAX, &n), 0);
	ASSERT_KV(kv, n, { "oom_kill_disable", 0 }, { "under_oom", 0 }, { "oom_kill", 0 });
}
END_TEST

START_TEST(test_kv_v2_events)
{
	struct cgroup_kv kv[KV_MAX];
	const struct cgroup_kv *e;
	size_t n;

	ck_assert_int_eq(kv_fixture("v2/workload/memory.events", kv, KV_MAX, &n), 0);
	ASSERT_KV(kv, n, { "low", 0 }, { "high", 0 }, { "max", 12 }, { "oom", 1 }, { "oom_kill", 1 },
		  { "oom_group_kill", 0 });

	e = cgroup_kv_find(kv, n, "oom_kill");
	ck_assert_ptr_eq(e, &kv[4]);
	ck_assert_ptr_null(cgroup_kv_find(kv, n, "oom_kil"));
	ck_assert_ptr_null(cgroup_kv_find(kv, n, "oom_kill_"));
	ck_assert_ptr_null(cgroup_kv_find(kv, n, "OOM"));
	ck_assert_ptr_null(cgroup_kv_find(kv, 4, "oom_kill")); /* only the first n */
	ck_assert_ptr_null(cgroup_kv_find(NULL, 0, "oom_kill"));

	ck_assert_int_eq(kv_fixture("v2/" ODD "/memory.events", kv, KV_MAX, &n), 0);
	ASSERT_KV(kv, n, { "low", 0 }, { "high", 0 }, { "max", 0 }, { "oom", 0 }, { "oom_kill", 0 },
		  { "oom_group_kill", 0 });
}
END_TEST

/* Generic enough for a whole memory.stat. */
START_TEST(test_kv_v1_memory_stat)
{
	struct cgroup_kv kv[KV_MAX];
	size_t n;

	ck_assert_int_eq(kv_fixture("v1/memory.stat", kv, KV_MAX, &n), 0);
	ck_assert_uint_eq(n, 42);
	ck_assert_str_eq(kv[0].key, "cache");
	ck_assert_str_eq(kv[41].key, "total_unevictable");
	ck_assert_uint_eq(cgroup_kv_find(kv, n, "hierarchical_memory_limit")->value,
			  UINT64_C(9223372036854771712));
	ck_assert_uint_eq(cgroup_kv_find(kv, n, "total_inactive_file")->value, 122859520);
	ck_assert_uint_eq(cgroup_kv_find(kv, n, "inactive_file")->value, 8192);
}
END_TEST

START_TEST(test_kv_crlf)
{
	struct cgroup_kv kv[KV_MAX];
	size_t n;

	ck_assert_int_eq(kv_fixture("files/events-crlf.txt", kv, KV_MAX, &n), 0);
	ASSERT_KV(kv, n, { "low", 0 }, { "high", 3 }, { "max", 12 }, { "oom", 1 }, { "oom_kill", 1 },
		  { "oom_group_kill", 0 });
}
END_TEST

/* An unterminated last line is dropped, whether its value or its key is cut. */
START_TEST(test_kv_truncated)
{
	struct cgroup_kv kv[KV_MAX];
	size_t n;

	ck_assert_int_eq(kv_fixture("files/events-truncated.txt", kv, KV_MAX, &n), 0);
	ASSERT_KV(kv, n, { "low", 0 }, { "high", 0 }, { "max", 12 }, { "oom", 1 });

	ck_assert_int_eq(kv_fixture("files/events-truncated-key.txt", kv, KV_MAX, &n), 0);
	ASSERT_KV(kv, n, { "low", 0 }, { "high", 0 }, { "max", 12 });

	ck_assert_int_eq(kv_str("low 1\nhigh ", kv, KV_MAX, &n), 0);
	ASSERT_KV(kv, n, { "low", 1 });
	ck_assert_int_eq(kv_str("low 1\nhigh 2\r", kv, KV_MAX, &n), 0);
	ASSERT_KV(kv, n, { "low", 1 });
	/* unless malformed */
	ck_assert_int_eq(kv_str("low 1\nhigh 2x", kv, KV_MAX, &n), -EINVAL);
	ck_assert_int_eq(kv_str("low 1\nhigh -", kv, KV_MAX, &n), -EINVAL);
	ck_assert_int_eq(kv_str("low 1\nhi\x01", kv, KV_MAX, &n), -EINVAL);
	/* and a terminated line must be complete */
	ck_assert_int_eq(kv_str("low 1\nhigh\n", kv, KV_MAX, &n), -EINVAL);
	ck_assert_int_eq(kv_str("low 1\nhigh \n", kv, KV_MAX, &n), -EINVAL);
}
END_TEST

/* Choice: a repeated key keeps its first slot and takes the last value. */
START_TEST(test_kv_duplicate)
{
	struct cgroup_kv kv[KV_MAX];
	size_t n;

	ck_assert_int_eq(kv_fixture("files/events-duplicate.txt", kv, KV_MAX, &n), 0);
	ASSERT_KV(kv, n, { "low", 0 }, { "high", 0 }, { "max", 13 }, { "oom", 1 }, { "oom_kill", 2 },
		  { "oom_group_kill", 0 });

	/* only distinct keys count against max */
	ck_assert_int_eq(kv_str("a 1\nb 2\na 3\nb 4\na 5\n", kv, 2, &n), 0);
	ASSERT_KV(kv, n, { "a", 5 }, { "b", 4 });
}
END_TEST

START_TEST(test_kv_malformed)
{
	static const char *const fixtures[] = {
		"files/empty.txt",
		"files/garbage.bin",
		"files/events-negative.txt",
		"files/events-overflow.txt",
		"files/events-missing-value.txt",
	};
	static const char *const bad[] = {
		"low 0\nhigh 1 2\n", "low 0\nhigh 0x1\n", "low 0\n 5\n" /* key "5", no value */,
		"low 0\nhigh +1\n", "low 0\nhi\xffgh 1\n", "low 0\nhigh\r 1\n", "low\n",
		"low 0\nhigh 1\r 2\n",
	};
	static const char nul_key[] = "low 0\nhi\0gh 1\n";
	struct cgroup_kv kv[KV_MAX];
	size_t n;

	for (size_t i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
		/* out and n are untouched */
		memset(kv, 0x5a, sizeof(kv));
		n = 99;
		ck_assert_msg(kv_fixture(fixtures[i], kv, KV_MAX, &n) == -EINVAL, "accepted %s", fixtures[i]);
		ck_assert_uint_eq(n, 99);
		ck_assert_uint_eq((unsigned char) kv[0].key[0], 0x5a);
	}

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(kv_str(bad[i], kv, KV_MAX, &n) == -EINVAL, "accepted \"%s\"", bad[i]);
	ck_assert_int_eq(kv_mem(nul_key, sizeof(nul_key) - 1, kv, KV_MAX, &n), -EINVAL);

	ck_assert_int_eq(cgroup_parse_flat_keyed(NULL, 0, kv, KV_MAX, &n), -EINVAL);
	ck_assert_int_eq(cgroup_parse_flat_keyed(NULL, 3, kv, KV_MAX, &n), -EINVAL);
	ck_assert_int_eq(kv_str("low 0\n", NULL, 1, &n), -EINVAL);
	ck_assert_int_eq(kv_str("low 0\n", kv, KV_MAX, NULL), -EINVAL);
}
END_TEST

START_TEST(test_kv_blank_lines)
{
	struct cgroup_kv kv[KV_MAX];
	size_t n;

	ck_assert_int_eq(kv_str("\n \t\nlow \t 1 \t\n\r\n\nhigh 2\n", kv, KV_MAX, &n), 0);
	ASSERT_KV(kv, n, { "low", 1 }, { "high", 2 });
}
END_TEST

START_TEST(test_kv_huge_and_long_keys)
{
	struct cgroup_kv kv[KV_MAX];
	size_t n;

	ck_assert_int_eq(kv_fixture("files/events-huge.txt", kv, KV_MAX, &n), 0);
	ASSERT_KV(kv, n, { "low", UINT64_MAX }, { "high", 0 });

	/* a 33-byte key does not fit and is skipped; the rest is kept */
	ck_assert_int_eq(kv_fixture("files/events-long-key.txt", kv, KV_MAX, &n), 0);
	ASSERT_KV(kv, n, { "low", 0 }, { "high", 0 }, { "max", 12 }, { "oom", 1 }, { "oom_kill", 1 },
		  { "oom_group_kill", 0 }, { "sock_throttled", 2 });

	/* 31 bytes fit, 32 do not */
	ck_assert_int_eq(kv_str("abcdefghijklmnopqrstuvwxyz01234 1\n"
				"abcdefghijklmnopqrstuvwxyz012345 2\n",
				kv, KV_MAX, &n),
			 0);
	ASSERT_KV(kv, n, { "abcdefghijklmnopqrstuvwxyz01234", 1 });

	/* a skipped key is still validated */
	ck_assert_int_eq(kv_str("abcdefghijklmnopqrstuvwxyz012345 x\n", kv, KV_MAX, &n), -EINVAL);
}
END_TEST

START_TEST(test_kv_enobufs)
{
	struct cgroup_kv kv[KV_MAX];
	size_t n;

	/* 6 keys fit in 6 */
	ck_assert_int_eq(kv_fixture("v2/workload/memory.events", kv, 6, &n), 0);
	ck_assert_uint_eq(n, 6);

	/* not in 5: n is untouched, nothing past max is written */
	memset(kv, 0x5a, sizeof(kv));
	n = 99;
	ck_assert_int_eq(kv_fixture("v2/workload/memory.events", kv, 5, &n), -ENOBUFS);
	ck_assert_uint_eq(n, 99);
	ck_assert_uint_eq((unsigned char) kv[5].key[0], 0x5a);

	ck_assert_int_eq(kv_fixture("v2/workload/memory.events", NULL, 0, &n), -ENOBUFS);
	/* a file with only blank lines needs no room */
	ck_assert_int_eq(kv_str("\n\n", NULL, 0, &n), 0);
	ck_assert_uint_eq(n, 0);
	/* a malformed file is -EINVAL whatever the room */
	ck_assert_int_eq(kv_str("low 0\nhigh 0\nmax -1\n", kv, 1, &n), -EINVAL);
}
END_TEST

/* --- cgroup_parse_memstat() --- */

FIXTURE_PARSE_MEM(memstat_mem, cgroup_parse_memstat, struct cgroup_memstat)

#define memstat_str(s, ms) memstat_mem((s), strlen(s), (ms))

static int memstat_fixture(const char *name, struct cgroup_memstat *ms)
{
	size_t len;
	char *buf = read_fixture(name, &len);
	int r;

	memset(ms, 0xaa, sizeof(*ms));
	r = cgroup_parse_memstat(buf, len, ms);
	free(buf);
	return r;
}

static void assert_memstat(const struct cgroup_memstat *ms, unsigned present, uint64_t inactive_file,
			   uint64_t active_file, uint64_t anon, uint64_t file, uint64_t total_inactive_file)
{
	/* the workingset bits have a test of their own */
	ck_assert_uint_eq(ms->present & ((1u << CGROUP_MEMSTAT_HAS_WORKINGSET0) - 1), present);
	ck_assert_uint_eq(ms->inactive_file, inactive_file);
	ck_assert_uint_eq(ms->active_file, active_file);
	ck_assert_uint_eq(ms->anon, anon);
	ck_assert_uint_eq(ms->file, file);
	ck_assert_uint_eq(ms->total_inactive_file, total_inactive_file);
}

START_TEST(test_memstat_v1_recorded)
{
	struct cgroup_memstat ms;

	/* v1 prints rss/cache, not anon/file: those stay absent */
	ck_assert_int_eq(memstat_fixture("v1/memory.stat", &ms), 0);
	assert_memstat(&ms, MEMSTAT_HAS_V1, 8192, 315392, 0, 0, 122859520);

	ck_assert_int_eq(memstat_fixture("v1/fixture-rec/memory.stat", &ms), 0);
	assert_memstat(&ms, MEMSTAT_HAS_V1, 0, 0, 0, 0, 0);

	ck_assert_int_eq(memstat_fixture("v1/" ODD "/memory.stat", &ms), 0);
	assert_memstat(&ms, MEMSTAT_HAS_V1, 0, 0, 0, 0, 0);
}
END_TEST

START_TEST(test_memstat_v2)
{
	struct cgroup_memstat ms;

	/* file_mapped, anon_thp, inactive_anon ... must not be taken for these */
	ck_assert_int_eq(memstat_fixture("v2/memory.stat", &ms), 0);
	assert_memstat(&ms, MEMSTAT_HAS_V2, 2911031296, 1103847424, 1205325824, 4120051712, 0);

	ck_assert_int_eq(memstat_fixture("v2/workload/memory.stat", &ms), 0);
	assert_memstat(&ms, MEMSTAT_HAS_V2, 8654848, 2572288, 52142080, 11227136, 0);

	ck_assert_int_eq(memstat_fixture("v2/" ODD "/memory.stat", &ms), 0);
	assert_memstat(&ms, MEMSTAT_HAS_V2, 1576960, 802816, 6127616, 2379776, 0);
}
END_TEST

START_TEST(test_memstat_other_kernels)
{
	struct cgroup_memstat ms;

	ck_assert_int_eq(memstat_fixture("files/v2-memory.stat-4.19.txt", &ms), 0);
	assert_memstat(&ms, MEMSTAT_HAS_V2, 41070592, 25784320, 21262336, 66990080, 0);

	ck_assert_int_eq(memstat_fixture("files/v1-memory.stat-3.10.txt", &ms), 0);
	assert_memstat(&ms, MEMSTAT_HAS_V1, 712466432, 291053568, 0, 0, 712466432);
}
END_TEST

static void assert_workingset(const struct cgroup_memstat *ms, unsigned kind, bool has_anon, uint64_t anon,
			      bool has_file, uint64_t file)
{
	uint64_t v[2];
	bool has[2];

	cgroup_memstat_workingset(ms, kind, v, has);
	ck_assert_int_eq(has[0], has_anon);
	ck_assert_int_eq(has[1], has_file);
	if (has_anon)
		ck_assert_uint_eq(v[0], anon);
	if (has_file)
		ck_assert_uint_eq(v[1], file);
}

/* Refaults, activations, restores: v2 split (5.9+), v2 unsplit (older: file
 * pages only), v1's hierarchical total_ keys (refaults only), nothing (3.10). */
START_TEST(test_memstat_workingset)
{
	struct cgroup_memstat ms;

	ck_assert_int_eq(memstat_fixture("v2/workload/memory.stat", &ms), 0);
	assert_workingset(&ms, VMSTAT_WS_REFAULT, true, 0, true, 3412);
	assert_workingset(&ms, VMSTAT_WS_ACTIVATE, true, 0, true, 1201);
	assert_workingset(&ms, VMSTAT_WS_RESTORE, true, 0, true, 610);

	ck_assert_int_eq(memstat_fixture("files/v2-memory.stat-5.4.txt", &ms), 0);
	assert_workingset(&ms, VMSTAT_WS_REFAULT, false, 0, true, 48211);
	assert_workingset(&ms, VMSTAT_WS_ACTIVATE, false, 0, true, 9102);
	assert_workingset(&ms, VMSTAT_WS_RESTORE, false, 0, false, 0);

	/* v1 on 6.18: total_ (755 is the cgroup's own) */
	ck_assert_int_eq(memstat_fixture("v1/memory.stat", &ms), 0);
	assert_workingset(&ms, VMSTAT_WS_REFAULT, true, 0, true, 294332);
	assert_workingset(&ms, VMSTAT_WS_ACTIVATE, false, 0, false, 0);
	/* a v1 without total_ ones: the local keys */
	ck_assert_int_eq(memstat_str("workingset_refault_anon 3\nworkingset_refault_file 5\n", &ms), 0);
	assert_workingset(&ms, VMSTAT_WS_REFAULT, true, 3, true, 5);

	ck_assert_int_eq(memstat_fixture("files/v1-memory.stat-3.10.txt", &ms), 0);
	assert_workingset(&ms, VMSTAT_WS_REFAULT, false, 0, false, 0);
}
END_TEST

START_TEST(test_memstat_crlf)
{
	struct cgroup_memstat ms;

	ck_assert_int_eq(memstat_fixture("files/memstat-crlf.txt", &ms), 0);
	assert_memstat(&ms, MEMSTAT_HAS_V2, 8654848, 2572288, 52142080, 11227136, 0);
}
END_TEST

START_TEST(test_memstat_truncated)
{
	struct cgroup_memstat ms;

	/* cut in "inactive_file 8654848": dropped, active_file never came */
	ck_assert_int_eq(memstat_fixture("files/memstat-truncated.txt", &ms), 0);
	assert_memstat(&ms, CGROUP_MEMSTAT_HAS_ANON | CGROUP_MEMSTAT_HAS_FILE, 0, 0, 52142080, 11227136, 0);

	/* a complete earlier duplicate does not stand in for the cut one */
	ck_assert_int_eq(memstat_str("anon 5\nfile 6\nanon 7", &ms), 0);
	assert_memstat(&ms, CGROUP_MEMSTAT_HAS_FILE, 0, 0, 0, 6, 0);

	/* a cut key is no key: "file" may be the start of "file_mapped" */
	ck_assert_int_eq(memstat_str("file 6\nfile", &ms), 0);
	assert_memstat(&ms, CGROUP_MEMSTAT_HAS_FILE, 0, 0, 0, 6, 0);
	ck_assert_int_eq(memstat_str("file 6\nfile ", &ms), 0);
	assert_memstat(&ms, 0, 0, 0, 0, 0, 0);

	ck_assert_int_eq(memstat_str("file 6\nanon 1x", &ms), -EINVAL);
}
END_TEST

START_TEST(test_memstat_duplicate)
{
	struct cgroup_memstat ms;

	ck_assert_int_eq(memstat_fixture("files/memstat-duplicate.txt", &ms), 0);
	assert_memstat(&ms, CGROUP_MEMSTAT_HAS_ANON | CGROUP_MEMSTAT_HAS_FILE | CGROUP_MEMSTAT_HAS_INACTIVE_FILE,
		       5, 0, 4, 2, 0);
}
END_TEST

START_TEST(test_memstat_malformed)
{
	struct cgroup_memstat ms;

	memset(&ms, 0x5a, sizeof(ms));
	ck_assert_int_eq(cgroup_parse_memstat(NULL, 0, &ms), -EINVAL);
	ck_assert_int_eq(cgroup_parse_memstat(NULL, 3, &ms), -EINVAL);
	ck_assert_int_eq(memstat_str("anon 1\n", NULL), -EINVAL);
	ck_assert_uint_eq(ms.present, 0x5a5a5a5au);

	ck_assert_int_eq(memstat_fixture("files/empty.txt", &ms), -EINVAL);
	ck_assert_int_eq(memstat_fixture("files/memstat-negative.txt", &ms), -EINVAL);
	ck_assert_int_eq(memstat_fixture("files/memstat-overflow.txt", &ms), -EINVAL);
	/* out is untouched on failure */
	ck_assert_uint_eq(ms.present, 0xaaaaaaaau);
	ck_assert_uint_eq(ms.anon, UINT64_C(0xaaaaaaaaaaaaaaaa));

	ck_assert_int_eq(memstat_str("anon\n", &ms), -EINVAL);
	ck_assert_int_eq(memstat_str("anon 1 2\n", &ms), -EINVAL);
	ck_assert_int_eq(memstat_str("total_inactive_file 0x5\n", &ms), -EINVAL);

	/* unknown keys, garbage included, are never validated */
	ck_assert_int_eq(memstat_str("hierarchical_memory_limit -1\nfile_mapped x\nanon 3\n", &ms), 0);
	assert_memstat(&ms, CGROUP_MEMSTAT_HAS_ANON, 0, 0, 3, 0, 0);
	ck_assert_int_eq(memstat_fixture("files/garbage.bin", &ms), 0);
	assert_memstat(&ms, 0, 0, 0, 0, 0, 0);
}
END_TEST

START_TEST(test_memstat_huge)
{
	struct cgroup_memstat ms;

	ck_assert_int_eq(memstat_fixture("files/memstat-huge.txt", &ms), 0);
	assert_memstat(&ms, CGROUP_MEMSTAT_HAS_ANON | CGROUP_MEMSTAT_HAS_TOTAL_INACTIVE_FILE, 0, 0, UINT64_MAX,
		       0, UINT64_MAX);
}
END_TEST

static Suite *cgroupfs_suite(void)
{
	Suite *s = suite_create("cgroupfs");
	TCase *tc;

	tc = tcase_create("u64_or_max");
	tcase_add_test(tc, test_value_v1_recorded);
	tcase_add_test(tc, test_value_v2);
	tcase_add_test(tc, test_value_ugly);
	tcase_add_test(tc, test_value_strings);
	tcase_add_test(tc, test_v1_unlimited);
	suite_add_tcase(s, tc);

	tc = tcase_create("flat_keyed");
	tcase_add_test(tc, test_kv_v1_oom_control);
	tcase_add_test(tc, test_kv_v2_events);
	tcase_add_test(tc, test_kv_v1_memory_stat);
	tcase_add_test(tc, test_kv_crlf);
	tcase_add_test(tc, test_kv_truncated);
	tcase_add_test(tc, test_kv_duplicate);
	tcase_add_test(tc, test_kv_malformed);
	tcase_add_test(tc, test_kv_blank_lines);
	tcase_add_test(tc, test_kv_huge_and_long_keys);
	tcase_add_test(tc, test_kv_enobufs);
	suite_add_tcase(s, tc);

	tc = tcase_create("memstat");
	tcase_add_test(tc, test_memstat_v1_recorded);
	tcase_add_test(tc, test_memstat_v2);
	tcase_add_test(tc, test_memstat_other_kernels);
	tcase_add_test(tc, test_memstat_workingset);
	tcase_add_test(tc, test_memstat_crlf);
	tcase_add_test(tc, test_memstat_truncated);
	tcase_add_test(tc, test_memstat_duplicate);
	tcase_add_test(tc, test_memstat_malformed);
	tcase_add_test(tc, test_memstat_huge);
	suite_add_tcase(s, tc);

	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(cgroupfs_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);

	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
