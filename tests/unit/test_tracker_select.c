/* SPDX-License-Identifier: GPL-2.0 */
/* lib/tracker.c: the rows exported per window: ranking, top k and the
 * "other" row, time to live, idle rows. */
#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracker.h"

#include "tracker_fixture.h"
#include "suite_main.h"

/* Ranked by NS delta, then COUNT delta, then most recent change, then key. */
START_TEST(test_ranking)
{
	static const struct spec w1[] = {
		{ 10, 1, { 1, 0, 0 }, "changed at 1000" },
		{ 12, 1, { 0, 0, 0 }, "never changed" },
	};
	static const struct spec w2[] = {
		{ 10, 1, { 1, 0, 0 }, "" },
		{ 11, 1, { 0, 0, 1 }, "changed at 2000" },
		{ 12, 1, { 0, 0, 0 }, "" },
		{ 13, 1, { 0, 1, 0 }, "changed at 2000" },
	};
	/* In this window's deltas (previous values are 0 for keys 1..7). */
	static const struct spec w3[] = {
		{ 7, 1, { 0, 0, 999 }, "only EXTRA" },
		{ 6, 1, { 3, 20, 0 }, "" },
		{ 5, 1, { 5, 0, 0 }, "" },
		{ 4, 1, { 0, 50, 0 }, "" },
		{ 3, 1, { 0, 1, 0 }, "" },
		{ 2, 1, { 9, 20, 0 }, "" },
		{ 1, 1, { 3, 20, 0 }, "" },
		{ 10, 1, { 1, 0, 0 }, "" },
		{ 11, 1, { 0, 0, 1 }, "" },
		{ 12, 1, { 0, 0, 0 }, "" },
		{ 13, 1, { 0, 1, 0 }, "" },
	};
	static const uint64_t want[] = { 4, 2, 1, 6, 3, 5, 7, 11, 13, 10 };
	const struct tracked_row *out[16];
	struct tracker t;
	size_t n;

	tracker_init(&t, N_COUNTERS, C_NS, C_COUNT);
	update(&t, w1, 2, 1000);
	update(&t, w2, 4, 2000);
	update(&t, w3, 11, 3000);
	/* The ttl keeps the rows that changed at 1000 and 2000 as candidates;
	 * key 12 never changed and is not one. */
	n = tracker_select(&t, 16, 5000, 3000, out);
	assert_keys(out, n, want, 10);
	for (n = 0; n < 10; n++)
		ck_assert_ptr_eq(out[n], get(&t, out[n]->key)); /* points into the table */
	assert_other(&t, 0, 0, 0);
	tracker_done(&t);

	/* The secondary counter breaks ties of the primary one, whatever their
	 * indices: rank by EXTRA, then NS. */
	{
		static const struct spec w[] = {
			{ 1, 1, { 100, 1, 5 }, "" },
			{ 2, 1, { 0, 2, 5 }, "" },
			{ 3, 1, { 0, 0, 6 }, "" },
			{ 4, 1, { 50, 0, 0 }, "" },
		};
		static const uint64_t want2[] = { 3, 2, 1, 4 };

		tracker_init(&t, N_COUNTERS, C_EXTRA, C_NS);
		update(&t, w, 4, 1000);
		n = tracker_select(&t, 16, 0, 1000, out);
		assert_keys(out, n, want2, 4);
		tracker_done(&t);
	}
}
END_TEST

START_TEST(test_top_k_and_other)
{
	static const struct spec w1[] = {
		{ 1, 1, { 1, 100, 0 }, "k1" },
		{ 2, 1, { 2, 50, 0 }, "k2" },
		{ 3, 1, { 3, 10, 0 }, "k3" },
		{ 4, 1, { 1, 5, 0 }, "k4" },
	};
	static const struct spec w2[] = {
		{ 1, 1, { 1, 100, 0 }, "" },
		{ 2, 1, { 5, 80, 0 }, "" },
		{ 3, 1, { 4, 200, 0 }, "" },
		{ 4, 1, { 2, 6, 0 }, "" },
	};
	static const struct spec w3[] = {
		{ 2, 1, { 5, 80, 0 }, "" },
		{ 3, 1, { 4, 200, 0 }, "" },
		{ 4, 1, { 10, 6, 0 }, "" },
		{ 5, 1, { 1, 1000, 0 }, "k5" },
	};
	static const struct spec w4[] = {
		{ 2, 1, { 6, 81, 1 }, "" },
		{ 3, 1, { 5, 201, 1 }, "" },
		{ 4, 1, { 11, 7, 1 }, "" },
		{ 5, 1, { 2, 1001, 1 }, "" },
	};
	static const struct spec w5[] = {
		{ 2, 1, { 6, 81, 1 }, "" },
		{ 3, 1, { 105, 201, 1 }, "" },
		{ 4, 1, { 11, 7, 1 }, "" },
		{ 5, 1, { 2, 1001, 1 }, "" },
	};
	const struct tracked_row *out[4];
	struct tracker t;
	size_t n;

	tracker_init(&t, N_COUNTERS, C_NS, C_COUNT);

	update(&t, w1, 4, 1000);
	n = tracker_select(&t, 2, 0, 1000, out);
	assert_keys(out, n, (const uint64_t[]){ 1, 2 }, 2);
	assert_other(&t, 4, 15, 0); /* k3 + k4 */

	update(&t, w2, 4, 2000);
	n = tracker_select(&t, 2, 0, 2000, out);
	/* k1 did not change: not a candidate with ttl 0 (and adds nothing). */
	assert_keys(out, n, (const uint64_t[]){ 3, 2 }, 2);
	assert_other(&t, 5, 16, 0); /* + k4's (1, 1) */

	update(&t, w3, 4, 3000);
	n = tracker_select(&t, 2, 0, 3000, out);
	assert_keys(out, n, (const uint64_t[]){ 5, 4 }, 2);
	assert_other(&t, 5, 16, 0);

	/* All equal: the lowest keys win. */
	update(&t, w4, 4, 4000);
	n = tracker_select(&t, 2, 0, 4000, out);
	assert_keys(out, n, (const uint64_t[]){ 2, 3 }, 2);
	assert_other(&t, 7, 18, 2); /* + k4's and k5's (1, 1, 1) */

	/* top_k 0: all of it goes to other. */
	update(&t, w5, 4, 5000);
	n = tracker_select(&t, 0, 0, 5000, out);
	ck_assert_uint_eq(n, 0);
	assert_other(&t, 107, 18, 2);

	/* Nothing changed: nothing exported, nothing added. */
	update(&t, w5, 4, 6000);
	n = tracker_select(&t, 4, 0, 6000, out);
	ck_assert_uint_eq(n, 0);
	assert_other(&t, 107, 18, 2);

	/* Fewer candidates than top_k: all of them exported, nothing added. */
	update(&t, w4, 4, 7000); /* k3's COUNT went backwards: a reset */
	n = tracker_select(&t, 4, 0, 7000, out);
	assert_keys(out, n, (const uint64_t[]){ 3 }, 1);
	ck_assert_uint_eq(out[0]->delta[C_COUNT], 5);
	assert_other(&t, 107, 18, 2);
	tracker_done(&t);
}
END_TEST

/* other, checked against the rows that were not exported, over windows with
 * churn. */
START_TEST(test_other_is_sum_of_rest)
{
	enum { WINDOWS = 12, KEYS = 9, TOP_K = 3 };
	const struct tracked_row *out[TOP_K];
	uint64_t prev_other[N_COUNTERS] = { 0 }, values[KEYS] = { 0 };
	struct tracker t;
	size_t w;

	tracker_init(&t, N_COUNTERS, C_NS, C_COUNT);
	for (w = 0; w < WINDOWS; w++) {
		struct spec sp[KEYS];
		uint64_t rest[N_COUNTERS] = { 0 };
		size_t i, n = 0, k;

		for (i = 0; i < KEYS; i++) {
			if ((i + w) % 4 == 0)
				continue; /* absent this window */
			values[i] += (i * 7 + w * 3) % 5;
			sp[n++] = (struct spec){ i + 1, 1, { values[i], values[i] * 10, w }, "" };
		}
		update(&t, sp, n, 1000 * (w + 1));
		k = tracker_select(&t, TOP_K, 1500, 1000 * (w + 1), out);
		ck_assert_uint_le(k, TOP_K);
		for (i = 0; i < t.n_rows; i++) {
			const struct tracked_row *r = &t.rows[i];
			bool exported = false;
			size_t j, c;

			for (j = 0; j < k; j++)
				if (out[j] == r)
					exported = true;
			if (!exported)
				for (c = 0; c < N_COUNTERS; c++)
					rest[c] += r->delta[c];
		}
		for (i = 0; i < N_COUNTERS; i++) {
			ck_assert_uint_ge(t.other[i], prev_other[i]);
			ck_assert_uint_eq(t.other[i] - prev_other[i], rest[i]);
			prev_other[i] = t.other[i];
		}
	}
	ck_assert_uint_gt(t.other[C_NS], 0);
	tracker_done(&t);
}
END_TEST

START_TEST(test_ttl)
{
	static const struct spec w1[] = {
		{ 1, 1, { 1, 1, 0 }, "" },
		{ 2, 1, { 1, 1, 0 }, "" },
	};
	static const struct spec w2[] = {
		{ 1, 1, { 2, 2, 0 }, "" },
		{ 2, 1, { 1, 1, 0 }, "" },
	};
	static const struct spec w3[] = {
		{ 1, 1, { 3, 3, 0 }, "" },
		{ 2, 1, { 2, 2, 0 }, "" },
	};
	const struct tracked_row *out[4];
	struct tracker zero, ttl;
	size_t n;

	tracker_init(&zero, N_COUNTERS, C_NS, C_COUNT);
	tracker_init(&ttl, N_COUNTERS, C_NS, C_COUNT);
	update(&zero, w1, 2, 1000);
	update(&ttl, w1, 2, 1000);
	ck_assert_uint_eq(tracker_select(&zero, 4, 0, 1000, out), 2);
	ck_assert_uint_eq(tracker_select(&ttl, 4, 1500, 1000, out), 2);

	/* ttl 0: only what changed in this window. */
	update(&zero, w2, 2, 2000);
	n = tracker_select(&zero, 4, 0, 2000, out);
	assert_keys(out, n, (const uint64_t[]){ 1 }, 1);

	/* An idle row within the ttl is still a candidate, ranked after the
	 * changed one; at exactly ttl it still is. */
	update(&ttl, w2, 2, 2000);
	n = tracker_select(&ttl, 4, 1500, 2000, out);
	assert_keys(out, n, (const uint64_t[]){ 1, 2 }, 2);
	update(&ttl, w2, 2, 2500);
	n = tracker_select(&ttl, 4, 1500, 2500, out);
	assert_keys(out, n, (const uint64_t[]){ 1, 2 }, 2);
	ck_assert_uint_eq(get(&ttl, 1)->last_change_usec, 2000);
	ck_assert_uint_eq(get(&ttl, 2)->last_change_usec, 1000);
	/* Beyond it, it is not. */
	update(&ttl, w2, 2, 2501);
	n = tracker_select(&ttl, 4, 1500, 2501, out);
	assert_keys(out, n, (const uint64_t[]){ 1 }, 1);
	update(&ttl, w2, 2, 3500);
	n = tracker_select(&ttl, 4, 1500, 3500, out);
	assert_keys(out, n, (const uint64_t[]){ 1 }, 1);
	update(&ttl, w2, 2, 3501);
	n = tracker_select(&ttl, 4, 1500, 3501, out);
	ck_assert_uint_eq(n, 0);
	/* Idle rows had nothing to add. */
	assert_other(&zero, 0, 0, 0);
	assert_other(&ttl, 0, 0, 0);

	/* An idle candidate can still lose the top_k cut: its zero delta goes to
	 * other, which does not move. */
	update(&ttl, w3, 2, 5000);
	n = tracker_select(&ttl, 4, 1500, 5000, out);
	assert_keys(out, n, (const uint64_t[]){ 1, 2 }, 2);
	update(&ttl, w3, 2, 6000);
	n = tracker_select(&ttl, 1, 1500, 6000, out);
	assert_keys(out, n, (const uint64_t[]){ 1 }, 1);
	assert_other(&ttl, 0, 0, 0);
	tracker_done(&zero);
	tracker_done(&ttl);
}
END_TEST

START_TEST(test_row_idle)
{
	struct tracked_row r = { .key = 1 };

	/* Never changed: idle whatever the ttl. */
	ck_assert(tracker_row_idle(&r, 0, 0));
	ck_assert(tracker_row_idle(&r, UINT64_MAX, 5000));

	r.last_change_usec = 1000;
	ck_assert(!tracker_row_idle(&r, 500, 1000));
	ck_assert(!tracker_row_idle(&r, 500, 1400));
	ck_assert(!tracker_row_idle(&r, 500, 1500));
	ck_assert(tracker_row_idle(&r, 500, 1501));
	ck_assert(!tracker_row_idle(&r, 0, 1000));
	ck_assert(tracker_row_idle(&r, 0, 1001));
	ck_assert(!tracker_row_idle(&r, UINT64_MAX, UINT64_MAX));
}
END_TEST

static Suite *tracker_select_suite(void)
{
	Suite *s = suite_create("tracker_select");
	TCase *sel = tcase_create("select");

	tcase_add_test(sel, test_ranking);
	tcase_add_test(sel, test_top_k_and_other);
	tcase_add_test(sel, test_other_is_sum_of_rest);
	tcase_add_test(sel, test_ttl);
	tcase_add_test(sel, test_row_idle);
	suite_add_tcase(s, sel);
	return s;
}

int main(void)
{
	return suite_main_run(tracker_select_suite());
}
