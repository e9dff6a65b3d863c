/* SPDX-License-Identifier: GPL-2.0 */
/* lib/snapshot.c: histograms, on explicit and on log2 bounds (as BPF
 * keeps them), and the ones refused. */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snapshot.h"

#include "snapshot_fixture.h"
#include "suite_main.h"

START_TEST(test_histogram_explicit)
{
	struct snapshot *s = new_snap(100);
	const char *const sda[] = { "sda" };
	const double bounds[] = { 0.1, 0.5, 1.0 };
	const uint64_t counts[] = { 1, 2, 3, 4 };

	ck_assert_int_eq(snapshot_add_histogram(s, &stall, sda, bounds, counts, 3, 12.5), 0);
	ck_assert_uint_eq(snapshot_series(s), 1);
	ck_assert_double_eq(snapshot_value(s, "memwatch_stall_seconds", sda), 10.0);
	ck_assert_str_eq(seal_text(s),
			 "# HELP memwatch_stall_seconds Stall time.\n"
			 "# TYPE memwatch_stall_seconds histogram\n"
			 "memwatch_stall_seconds_bucket{dev=\"sda\",le=\"0.1\"} 1\n"
			 "memwatch_stall_seconds_bucket{dev=\"sda\",le=\"0.5\"} 3\n"
			 "memwatch_stall_seconds_bucket{dev=\"sda\",le=\"1\"} 6\n"
			 "memwatch_stall_seconds_bucket{dev=\"sda\",le=\"+Inf\"} 10\n"
			 "memwatch_stall_seconds_sum{dev=\"sda\"} 12.5\n"
			 "memwatch_stall_seconds_count{dev=\"sda\"} 10\n");
	snapshot_unref(s);
}
END_TEST

START_TEST(test_histogram_bounds_copied_and_two_series)
{
	struct snapshot *s = new_snap(100);
	const char *const a[] = { "a" }, *const b[] = { "b" };
	double bounds[] = { 1, 2 };
	uint64_t counts[] = { 0, 5, 0 };

	ck_assert_int_eq(snapshot_add_histogram(s, &stall, a, bounds, counts, 2, 7.0), 0);
	bounds[0] = 100;
	bounds[1] = 200;
	counts[0] = 9;
	counts[1] = 9;
	counts[2] = 9;
	ck_assert_int_eq(snapshot_add_histogram(s, &stall, b, bounds, counts, 2, 0.0), 0);
	ck_assert_uint_eq(snapshot_series(s), 2);
	ck_assert_str_eq(seal_text(s),
			 "# HELP memwatch_stall_seconds Stall time.\n"
			 "# TYPE memwatch_stall_seconds histogram\n"
			 "memwatch_stall_seconds_bucket{dev=\"a\",le=\"1\"} 0\n"
			 "memwatch_stall_seconds_bucket{dev=\"a\",le=\"2\"} 5\n"
			 "memwatch_stall_seconds_bucket{dev=\"a\",le=\"+Inf\"} 5\n"
			 "memwatch_stall_seconds_sum{dev=\"a\"} 7\n"
			 "memwatch_stall_seconds_count{dev=\"a\"} 5\n"
			 "memwatch_stall_seconds_bucket{dev=\"b\",le=\"100\"} 9\n"
			 "memwatch_stall_seconds_bucket{dev=\"b\",le=\"200\"} 18\n"
			 "memwatch_stall_seconds_bucket{dev=\"b\",le=\"+Inf\"} 27\n"
			 "memwatch_stall_seconds_sum{dev=\"b\"} 0\n"
			 "memwatch_stall_seconds_count{dev=\"b\"} 27\n");
	snapshot_unref(s);
}
END_TEST

START_TEST(test_histogram_no_finite_bounds)
{
	struct snapshot *s = new_snap(100);
	const uint64_t counts[] = { 4 };

	ck_assert_int_eq(snapshot_add_histogram(s, &plain_hist, NULL, NULL, counts, 0, 4096.0), 0);
	ck_assert_str_eq(seal_text(s),
			 "# HELP memwatch_size_bytes Sizes.\n"
			 "# TYPE memwatch_size_bytes histogram\n"
			 "memwatch_size_bytes_bucket{le=\"+Inf\"} 4\n"
			 "memwatch_size_bytes_sum 4096\n"
			 "memwatch_size_bytes_count 4\n");
	snapshot_unref(s);
}
END_TEST

START_TEST(test_histogram_rejects_bad_bounds)
{
	static const struct {
		double b[3];
		size_t n;
	} bad[] = {
		{ { 1, 1 }, 2 },             /* equal */
		{ { 2, 1 }, 2 },             /* decreasing */
		{ { 1, 2, 2 }, 3 },          /* equal at the end */
		{ { 1, 3, 2 }, 3 },          /* decreasing in the middle */
		{ { -1, -2 }, 2 },
		{ { 1, NAN }, 2 },
		{ { NAN, 1 }, 2 },
		{ { NAN }, 1 },              /* NaN is not a bound */
		{ { 1, INFINITY }, 2 },      /* +Inf is implicit, not a finite bound */
		{ { INFINITY }, 1 },
		{ { -INFINITY, 0 }, 2 },
	};
	const uint64_t counts[4] = { 1, 1, 1, 1 };
	struct snapshot *s = new_snap(100);
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(snapshot_add_histogram(s, &plain_hist, NULL, bad[i].b, counts, bad[i].n, 0) ==
				      -EINVAL,
			      "bad bounds #%zu accepted", i);
	/* Rejected histograms are neither stored nor counted as dropped. */
	ck_assert_uint_eq(snapshot_series(s), 0);
	ck_assert_uint_eq(snapshot_dropped_series(s), 0);
	ck_assert_str_eq(seal_text(s), "");
	snapshot_unref(s);
}
END_TEST

START_TEST(test_type_mismatch_rejected)
{
	struct snapshot *s = new_snap(100);
	const double bounds[] = { 1 };
	const uint64_t counts[] = { 1, 1 };
	const uint64_t slots[] = { 1, 1 };
	const char *const a[] = { "a" };

	ck_assert_int_eq(snapshot_add(s, &stall, a, 1.0), -EINVAL);
	ck_assert_int_eq(snapshot_add_histogram(s, &free_bytes, NULL, bounds, counts, 1, 1.0), -EINVAL);
	ck_assert_int_eq(snapshot_add_histogram(s, &events_total, a, bounds, counts, 1, 1.0), -EINVAL);
	ck_assert_int_eq(add_log2(s, &free_bytes, NULL, slots, 2, 1.0, 0), -EINVAL);
	ck_assert_int_eq(snapshot_add_histogram_full(s, &free_bytes, NULL, slots, 2, 0, NULL, NULL, 0), -EINVAL);
	ck_assert_uint_eq(snapshot_series(s), 0);
	ck_assert_str_eq(seal_text(s), "");
	snapshot_unref(s);
}
END_TEST

START_TEST(test_log2_histogram)
{
	struct snapshot *s = new_snap(100);
	const char *const nvme[] = { "nvme0n1" };
	/* slot k counts 2^(k-1) < v <= 2^k raw units; the last slot is the clamp. */
	const uint64_t slots[] = { 1, 0, 2, 3, 4 };

	ck_assert_int_eq(add_log2(s, &stall, nvme, slots, 5, 0.5, 3.0), 0);
	ck_assert_double_eq(snapshot_value(s, "memwatch_stall_seconds", nvme), 10.0);
	ck_assert_str_eq(seal_text(s),
			 "# HELP memwatch_stall_seconds Stall time.\n"
			 "# TYPE memwatch_stall_seconds histogram\n"
			 "memwatch_stall_seconds_bucket{dev=\"nvme0n1\",le=\"0.5\"} 1\n"
			 "memwatch_stall_seconds_bucket{dev=\"nvme0n1\",le=\"1\"} 1\n"
			 "memwatch_stall_seconds_bucket{dev=\"nvme0n1\",le=\"2\"} 3\n"
			 "memwatch_stall_seconds_bucket{dev=\"nvme0n1\",le=\"4\"} 6\n"
			 "memwatch_stall_seconds_bucket{dev=\"nvme0n1\",le=\"+Inf\"} 10\n"
			 "memwatch_stall_seconds_sum{dev=\"nvme0n1\"} 1.5\n"
			 "memwatch_stall_seconds_count{dev=\"nvme0n1\"} 10\n");
	snapshot_unref(s);
}
END_TEST

START_TEST(test_log2_histogram_nanoseconds)
{
	struct snapshot *s = new_snap(100);
	const uint64_t slots[] = { 0, 1, 0, 0, 7 };

	/* 1e-9 scales nanoseconds to seconds; 2^k * 1e-9 is exact in binary
	 * relative to 1e-9, so the bounds print as short decimals. */
	ck_assert_int_eq(add_log2(s, &plain_hist, NULL, slots, 5, 1e-9, 4.0), 0);
	ck_assert_str_eq(seal_text(s),
			 "# HELP memwatch_size_bytes Sizes.\n"
			 "# TYPE memwatch_size_bytes histogram\n"
			 "memwatch_size_bytes_bucket{le=\"1e-09\"} 0\n"
			 "memwatch_size_bytes_bucket{le=\"2e-09\"} 1\n"
			 "memwatch_size_bytes_bucket{le=\"4e-09\"} 1\n"
			 "memwatch_size_bytes_bucket{le=\"8e-09\"} 1\n"
			 "memwatch_size_bytes_bucket{le=\"+Inf\"} 8\n"
			 "memwatch_size_bytes_sum 4e-09\n"
			 "memwatch_size_bytes_count 8\n");
	snapshot_unref(s);
}
END_TEST

START_TEST(test_histogram_slots_descriptor_bounds)
{
	struct snapshot *s = new_snap(100);
	const char *const sda[] = { "sda" }, *const sdb[] = { "sdb" };
	const uint64_t slots[] = { 1, 2, 3, 4 };
	const char *expected =
		"# HELP memwatch_own_seconds Own bounds.\n"
		"# TYPE memwatch_own_seconds histogram\n"
		"memwatch_own_seconds_bucket{dev=\"sda\",le=\"0.50\"} 1\n"
		"memwatch_own_seconds_bucket{dev=\"sda\",le=\"1.0\"} 3\n"
		"memwatch_own_seconds_bucket{dev=\"sda\",le=\"2.0\"} 6\n"
		"memwatch_own_seconds_bucket{dev=\"sda\",le=\"+Inf\"} 10\n"
		"memwatch_own_seconds_sum{dev=\"sda\"} 2.5\n"
		"memwatch_own_seconds_count{dev=\"sda\"} 10\n"
		"memwatch_own_seconds_bucket{dev=\"sdb\",le=\"0.5\"} 1\n"
		"memwatch_own_seconds_bucket{dev=\"sdb\",le=\"1\"} 3\n"
		"memwatch_own_seconds_bucket{dev=\"sdb\",le=\"2\"} 6\n"
		"memwatch_own_seconds_bucket{dev=\"sdb\",le=\"+Inf\"} 10\n"
		"memwatch_own_seconds_sum{dev=\"sdb\"} 1\n"
		"memwatch_own_seconds_count{dev=\"sdb\"} 10\n";
	const double copy[] = { 0.5, 1, 2 };
	struct strbuf sb;

	/* one slot per bound and one above them, no other count */
	ck_assert_int_eq(snapshot_add_histogram_full(s, &own_hist, sda, slots, 3, 0, NULL, NULL, 0), -EINVAL);
	ck_assert_int_eq(snapshot_add_histogram_full(s, &own_hist, sda, slots, 5, 0, NULL, NULL, 0), -EINVAL);
	ck_assert_int_eq(snapshot_add_histogram_full(s, &plain_hist, NULL, slots, 4, 0, NULL, NULL, 0), -EINVAL);
	ck_assert_uint_eq(snapshot_series(s), 0);
	ck_assert_int_eq(snapshot_add_histogram_full(s, &own_hist, sda, slots, 4, 2.5, NULL, NULL, 0), 0);
	/* the same values from elsewhere are formatted as usual */
	ck_assert_int_eq(snapshot_add_histogram(s, &own_hist, sdb, copy, slots, 3, 1), 0);
	ck_assert_str_eq(seal_text(s), expected);
	/* compacted at seal, the descriptor's bounds still give its text */
	strbuf_init(&sb);
	ck_assert_int_eq(snapshot_render_text(s, &sb), 0);
	ck_assert_uint_eq(sb.len, strlen(expected));
	ck_assert_mem_eq(sb.data, expected, sb.len);
	strbuf_free(&sb);
	snapshot_unref(s);
}
END_TEST

START_TEST(test_log2_histogram_limits)
{
	struct snapshot *s = new_snap(100);
	uint64_t slots[65];
	const char *text;
	size_t i;

	for (i = 0; i < 65; i++)
		slots[i] = 1;
	/* scale 0 or negative cannot give increasing bounds */
	ck_assert_int_eq(add_log2(s, &plain_hist, NULL, slots, 4, 0.0, 0), -EINVAL);
	ck_assert_int_eq(add_log2(s, &plain_hist, NULL, slots, 4, -1.0, 0), -EINVAL);
	ck_assert_uint_eq(snapshot_series(s), 0);

	/* Two slots: one finite bound (2^0 * scale) and the clamp slot as +Inf. */
	ck_assert_int_eq(add_log2(s, &plain_hist, NULL, slots, 2, 1.0, 2.0), 0);
	/* 64 slots: bounds up to 2^62; slot 63 is only +Inf. */
	ck_assert_int_eq(add_log2(s, &stall, NULL, slots, 64, 1.0, 0), 0);
	text = seal_text(s);
	ck_assert_ptr_nonnull(strstr(text, "memwatch_size_bytes_bucket{le=\"1\"} 1\n"
					   "memwatch_size_bytes_bucket{le=\"+Inf\"} 2\n"
					   "memwatch_size_bytes_sum 2\n"
					   "memwatch_size_bytes_count 2\n"));
	ck_assert_ptr_null(strstr(text, "memwatch_size_bytes_bucket{le=\"2\"}"));
	ck_assert_ptr_nonnull(strstr(text, "memwatch_stall_seconds_bucket{dev=\"\",le=\"1\"} 1\n"));
	ck_assert_ptr_nonnull(strstr(text, "memwatch_stall_seconds_bucket{dev=\"\",le=\"4.611686018427388e+18\"} 63\n"
					   "memwatch_stall_seconds_bucket{dev=\"\",le=\"+Inf\"} 64\n"));
	ck_assert_ptr_null(strstr(text, "le=\"9.223372036854776e+18\""));
	ck_assert_ptr_null(strstr(text, "le=\"9223372036854775808\""));
	snapshot_unref(s);
}
END_TEST

static Suite *snapshot_histogram_suite(void)
{
	Suite *s = suite_create("snapshot_histogram");
	TCase *hist = tcase_create("histogram");

	tcase_add_test(hist, test_histogram_explicit);
	tcase_add_test(hist, test_histogram_bounds_copied_and_two_series);
	tcase_add_test(hist, test_histogram_no_finite_bounds);
	tcase_add_test(hist, test_histogram_rejects_bad_bounds);
	tcase_add_test(hist, test_type_mismatch_rejected);
	tcase_add_test(hist, test_log2_histogram);
	tcase_add_test(hist, test_log2_histogram_nanoseconds);
	tcase_add_test(hist, test_log2_histogram_limits);
	tcase_add_test(hist, test_histogram_slots_descriptor_bounds);
	suite_add_tcase(s, hist);
	return s;
}

int main(void)
{
	return suite_main_run(snapshot_histogram_suite());
}
