/* SPDX-License-Identifier: GPL-2.0 */
/* lib/tracker.c: a window's update of the tracked rows (deltas, generations,
 * labels, reads in place). Ranking and the rest: test_tracker_select.c; the
 * conservation property on random windows: test_tracker_property.c. */
#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracker.h"

#include "tracker_fixture.h"
#include "suite_main.h"

START_TEST(test_init_done)
{
	struct tracker t;

	tracker_init(&t, N_COUNTERS, C_NS, C_COUNT);
	ck_assert_uint_eq(t.n_counters, N_COUNTERS);
	ck_assert_uint_eq(t.rank_by[0], C_NS);
	ck_assert_uint_eq(t.rank_by[1], C_COUNT);
	ck_assert_ptr_null(t.rows);
	ck_assert_uint_eq(t.n_rows, 0);
	assert_other(&t, 0, 0, 0);
	tracker_done(&t);
	tracker_done(&t); /* twice is harmless */

	tracker_init(&t, 100, 0, 1);
	ck_assert_uint_eq(t.n_counters, TRACKER_MAX_COUNTERS);
	tracker_done(&t);
}
END_TEST

START_TEST(test_first_window)
{
	static const struct spec w1[] = {
		{ 30, 1, { 3, 300, 0 }, "c" },
		{ 10, 1, { 1, 100, 7 }, "a" },
		{ 20, 1, { 0, 0, 0 }, "b" },
		{ 5, 1, { 0, 0, 9 }, "" },
	};
	struct tracker t;

	tracker_init(&t, N_COUNTERS, C_NS, C_COUNT);
	update(&t, w1, 4, 1000);
	assert_indexed(&t);
	/* In the order read. */
	ck_assert_uint_eq(t.rows[0].key, 30);
	ck_assert_uint_eq(t.rows[3].key, 5);
	/* No previous window: the deltas are the values. */
	assert_delta(&t, 5, 0, 0, 9);
	assert_delta(&t, 10, 1, 100, 7);
	assert_delta(&t, 20, 0, 0, 0);
	assert_delta(&t, 30, 3, 300, 0);
	/* Changed rows are stamped; a row that never changed is not. */
	ck_assert_uint_eq(get(&t, 5)->last_change_usec, 1000);
	ck_assert_uint_eq(get(&t, 10)->last_change_usec, 1000);
	ck_assert_uint_eq(get(&t, 20)->last_change_usec, 0);
	ck_assert_uint_eq(get(&t, 30)->last_change_usec, 1000);
	ck_assert_str_eq(tracker_row_label(get(&t, 10)), "a");
	ck_assert_str_eq(tracker_row_label(get(&t, 20)), "b");
	ck_assert_str_eq(tracker_row_label(get(&t, 5)), "");
	ck_assert_uint_eq(get(&t, 10)->generation, 1);
	ck_assert_uint_eq(get(&t, 10)->value[C_NS], 100);
	tracker_done(&t);
}
END_TEST

START_TEST(test_second_window)
{
	static const struct spec w1[] = {
		{ 1, 7, { 1, 100, 5 }, "a" },
		{ 2, 7, { 2, 200, 0 }, "b" },
		{ 3, 7, { 0, 0, 0 }, "c" },
	};
	static const struct spec w2[] = {
		{ 3, 7, { 4, 40, 0 }, "c" },
		{ 2, 7, { 2, 200, 0 }, "b" },
		{ 1, 7, { 5, 150, 5 }, "a" },
	};
	static const struct spec w3[] = {
		{ 1, 7, { 5, 150, 6 }, "a" },
		{ 2, 7, { 2, 200, 0 }, "b" },
		{ 3, 7, { 4, 40, 0 }, "c" },
	};
	struct tracker t;

	tracker_init(&t, N_COUNTERS, C_NS, C_COUNT);
	update(&t, w1, 3, 1000);
	update(&t, w2, 3, 2000);
	assert_indexed(&t);
	assert_delta(&t, 1, 4, 50, 0);
	assert_delta(&t, 2, 0, 0, 0);
	assert_delta(&t, 3, 4, 40, 0);
	ck_assert_uint_eq(get(&t, 1)->last_change_usec, 2000);
	ck_assert_uint_eq(get(&t, 2)->last_change_usec, 1000); /* carried over */
	ck_assert_uint_eq(get(&t, 3)->last_change_usec, 2000);

	/* A change in a counter that is not ranked on still counts as a change. */
	update(&t, w3, 3, 3000);
	assert_delta(&t, 1, 0, 0, 1);
	assert_delta(&t, 2, 0, 0, 0);
	assert_delta(&t, 3, 0, 0, 0);
	ck_assert_uint_eq(get(&t, 1)->last_change_usec, 3000);
	ck_assert_uint_eq(get(&t, 2)->last_change_usec, 1000);
	ck_assert_uint_eq(get(&t, 3)->last_change_usec, 2000);
	tracker_done(&t);
}
END_TEST

START_TEST(test_vanished_key_comes_back)
{
	static const struct spec w1[] = {
		{ 1, 1, { 1, 10, 0 }, "a" },
		{ 2, 1, { 2, 20, 0 }, "b" },
		{ 3, 1, { 3, 30, 0 }, "c" },
	};
	static const struct spec w2[] = {
		{ 1, 1, { 1, 11, 0 }, "a" },
		{ 3, 1, { 3, 33, 0 }, "c" },
	};
	static const struct spec w3[] = {
		{ 1, 1, { 1, 11, 0 }, "" },
		{ 2, 1, { 2, 25, 0 }, "" },
		{ 3, 1, { 3, 33, 0 }, "" },
	};
	struct tracker t;

	tracker_init(&t, N_COUNTERS, C_NS, C_COUNT);
	update(&t, w1, 3, 1000);
	update(&t, w2, 2, 2000);
	ck_assert_ptr_null(find(&t, 2));
	assert_delta(&t, 1, 0, 1, 0);
	assert_delta(&t, 3, 0, 3, 0);
	/* Key 2 was not in the previous window: a new entity, counted from zero;
	 * its old label is forgotten. */
	update(&t, w3, 3, 3000);
	assert_delta(&t, 2, 2, 25, 0);
	ck_assert_uint_eq(get(&t, 2)->last_change_usec, 3000);
	ck_assert_str_eq(tracker_row_label(get(&t, 2)), "");
	ck_assert_str_eq(tracker_row_label(get(&t, 1)), "a");
	ck_assert_str_eq(tracker_row_label(get(&t, 3)), "c");
	assert_delta(&t, 1, 0, 0, 0);
	ck_assert_uint_eq(get(&t, 1)->last_change_usec, 2000);
	tracker_done(&t);
}
END_TEST

START_TEST(test_generation_change)
{
	static const struct spec w1[] = {
		{ 42, 100, { 5, 500, 1 }, "old" },
		{ 43, 100, { 1, 10, 0 }, "keep" },
	};
	/* Pid 42 reused by a new process with larger counters: from zero, not
	 * the difference. */
	static const struct spec w2[] = {
		{ 42, 200, { 7, 700, 2 }, "" },
		{ 43, 100, { 1, 10, 0 }, "" },
	};
	/* Reused again, nothing counted yet: no delta and never changed. */
	static const struct spec w3[] = {
		{ 42, 300, { 0, 0, 0 }, "new" },
		{ 43, 100, { 1, 10, 0 }, "" },
	};
	/* Reused with smaller counters: no "went backwards" confusion either. */
	static const struct spec w4[] = {
		{ 42, 400, { 9, 90, 0 }, "newer" },
	};
	struct tracker t;

	tracker_init(&t, N_COUNTERS, C_NS, C_COUNT);
	update(&t, w1, 2, 1000);
	update(&t, w2, 2, 2000);
	assert_delta(&t, 42, 7, 700, 2);
	ck_assert_uint_eq(get(&t, 42)->generation, 200);
	ck_assert_uint_eq(get(&t, 42)->last_change_usec, 2000);
	/* The old process' label does not stick to the new one... */
	ck_assert_str_eq(tracker_row_label(get(&t, 42)), "");
	/* ...while a same-generation row keeps its label. */
	ck_assert_str_eq(tracker_row_label(get(&t, 43)), "keep");
	assert_delta(&t, 43, 0, 0, 0);

	update(&t, w3, 2, 3000);
	assert_delta(&t, 42, 0, 0, 0);
	ck_assert_uint_eq(get(&t, 42)->last_change_usec, 0);
	ck_assert(tracker_row_idle(get(&t, 42), UINT64_MAX, 3000));
	ck_assert_str_eq(tracker_row_label(get(&t, 42)), "new");

	update(&t, w4, 1, 4000);
	assert_delta(&t, 42, 9, 90, 0);
	ck_assert_str_eq(tracker_row_label(get(&t, 42)), "newer");
	tracker_done(&t);
}
END_TEST

/* total, the value exported, never goes back for one key and generation: a
 * raw value that went backwards (a map entry re-created, a thread taking over
 * the pid at exec) continues from the last total; a new generation starts over. */
START_TEST(test_total_never_backwards)
{
	static const struct spec w1[] = { { 1, 1, { 100, 1000, 5 }, "x" } };
	static const struct spec w2[] = { { 1, 1, { 30, 1500, 5 }, "" } };
	static const struct spec w3[] = { { 1, 1, { 40, 1500, 5 }, "" } };
	static const struct spec w4[] = { { 1, 2, { 3, 10, 0 }, "" } };
	struct tracker t;

	tracker_init(&t, N_COUNTERS, C_NS, C_COUNT);
	update(&t, w1, 1, 1000);
	ck_assert_uint_eq(get(&t, 1)->total[C_COUNT], 100);
	update(&t, w2, 1, 2000);
	ck_assert_uint_eq(get(&t, 1)->total[C_COUNT], 130);
	ck_assert_uint_eq(get(&t, 1)->total[C_NS], 1500);
	update(&t, w3, 1, 3000);
	ck_assert_uint_eq(get(&t, 1)->total[C_COUNT], 140);
	ck_assert_uint_eq(get(&t, 1)->total[C_EXTRA], 5);
	update(&t, w4, 1, 4000);
	ck_assert_uint_eq(get(&t, 1)->total[C_COUNT], 3);
	ck_assert_uint_eq(get(&t, 1)->total[C_NS], 10);
	tracker_done(&t);
}
END_TEST

/* A pid reused between two windows by a process of the same name is the
 * same series ({pid, comm}) to Prometheus: its total goes on from the
 * predecessor's; under another name it starts over (another series). */
START_TEST(test_reused_key_same_label)
{
	static const struct spec w1[] = { { 7, 1, { 100, 1000, 5 }, "python3" } };
	static const struct spec w2[] = { { 7, 2, { 3, 10, 0 }, "python3" } };
	static const struct spec w3[] = { { 7, 2, { 4, 12, 0 }, "python3" } };
	static const struct spec w4[] = { { 7, 3, { 1, 1, 1 }, "sh" } };
	struct tracker t;

	tracker_init(&t, N_COUNTERS, C_NS, C_COUNT);
	update(&t, w1, 1, 1000);
	update(&t, w2, 1, 2000);
	assert_delta(&t, 7, 3, 10, 0);
	ck_assert_uint_eq(get(&t, 7)->total[C_COUNT], 103);
	ck_assert_uint_eq(get(&t, 7)->total[C_NS], 1010);
	ck_assert_uint_eq(get(&t, 7)->total[C_EXTRA], 5);
	update(&t, w3, 1, 3000);
	assert_delta(&t, 7, 1, 2, 0);
	ck_assert_uint_eq(get(&t, 7)->total[C_COUNT], 104);
	update(&t, w4, 1, 4000);
	ck_assert_uint_eq(get(&t, 7)->total[C_COUNT], 1);
	ck_assert_uint_eq(get(&t, 7)->total[C_EXTRA], 1);
	tracker_done(&t);
}
END_TEST

START_TEST(test_counter_backwards)
{
	static const struct spec w1[] = {
		{ 1, 1, { 100, 1000, 50 }, "x" },
	};
	/* COUNT went backwards (entry evicted and re-created): its delta is the
	 * new value; the others are differences as usual. */
	static const struct spec w2[] = {
		{ 1, 1, { 30, 1500, 50 }, "" },
	};
	static const struct spec w3[] = {
		{ 1, 1, { 0, 1500, 50 }, "" },
	};
	static const struct spec w4[] = {
		{ 1, 1, { 4, 1500, 50 }, "" },
	};
	struct tracker t;

	tracker_init(&t, N_COUNTERS, C_NS, C_COUNT);
	update(&t, w1, 1, 1000);
	update(&t, w2, 1, 2000);
	assert_delta(&t, 1, 30, 500, 0);
	ck_assert_uint_eq(get(&t, 1)->last_change_usec, 2000);
	ck_assert_str_eq(tracker_row_label(get(&t, 1)), "x");
	/* Back to zero: no delta, hence no change. */
	update(&t, w3, 1, 3000);
	assert_delta(&t, 1, 0, 0, 0);
	ck_assert_uint_eq(get(&t, 1)->last_change_usec, 2000);
	update(&t, w4, 1, 4000);
	assert_delta(&t, 1, 4, 0, 0);
	ck_assert_uint_eq(get(&t, 1)->last_change_usec, 4000);
	tracker_done(&t);
}
END_TEST

START_TEST(test_label_carried_over)
{
	static const struct spec w1[] = { { 9, 1, { 1, 1, 1 }, "bash" } };
	static const struct spec w2[] = { { 9, 1, { 2, 2, 2 }, "" } };
	static const struct spec w4[] = { { 9, 1, { 3, 3, 3 }, "zsh" } };
	static char long_label[TRACKER_LABEL_MAX];
	struct spec wl[] = { { 9, 1, { 4, 4, 4 }, long_label } };
	struct tracker t;

	tracker_init(&t, N_COUNTERS, C_NS, C_COUNT);
	update(&t, w1, 1, 1000);
	update(&t, w2, 1, 2000);
	ck_assert_str_eq(tracker_row_label(get(&t, 9)), "bash");
	/* Carried over again: a carried label is the previous one next time. */
	update(&t, w2, 1, 3000);
	ck_assert_str_eq(tracker_row_label(get(&t, 9)), "bash");
	/* A non-empty label replaces it. */
	update(&t, w4, 1, 4000);
	ck_assert_str_eq(tracker_row_label(get(&t, 9)), "zsh");
	update(&t, w2, 1, 5000);
	ck_assert_str_eq(tracker_row_label(get(&t, 9)), "zsh");

	/* A label of the maximum length survives being carried. */
	memset(long_label, 'L', sizeof(long_label) - 1);
	long_label[sizeof(long_label) - 1] = '\0';
	update(&t, wl, 1, 6000);
	update(&t, w2, 1, 7000);
	ck_assert_uint_eq(strlen(tracker_row_label(get(&t, 9))), TRACKER_LABEL_MAX - 1);
	ck_assert_str_eq(tracker_row_label(get(&t, 9)), long_label);
	tracker_done(&t);
}
END_TEST

/* Labels of every length: a comm stays inline, a path takes an allocation;
 * changing, carrying and dropping them leaks nothing (run under LSan). */
START_TEST(test_label_lengths)
{
	static char path[400], cut[TRACKER_LABEL_MAX];
	const char *fifteen = "0123456789abcde", *sixteen = "0123456789abcdef";
	struct tracked_row r = { .key = 1 };
	struct tracker t;
	size_t i;

	memset(path, 'p', sizeof(path) - 1);
	path[0] = '/';
	memcpy(cut, path, sizeof(cut) - 1);

	/* The longest inline one, and the shortest that is not. */
	ck_assert_int_eq(tracker_row_set_label(&r, fifteen, SIZE_MAX), 0);
	ck_assert_ptr_null(r.label_long);
	ck_assert_str_eq(tracker_row_label(&r), fifteen);
	ck_assert_int_eq(tracker_row_set_label(&r, sixteen, SIZE_MAX), 0);
	ck_assert_ptr_nonnull(r.label_long);
	ck_assert_str_eq(tracker_row_label(&r), sixteen);
	/* len bounds an unterminated source (a kernel comm buffer). */
	ck_assert_int_eq(tracker_row_set_label(&r, sixteen, 4), 0);
	ck_assert_ptr_null(r.label_long);
	ck_assert_str_eq(tracker_row_label(&r), "0123");
	/* Cut at TRACKER_LABEL_MAX - 1, as the inline array used to. */
	ck_assert_int_eq(tracker_row_set_label(&r, path, SIZE_MAX), 0);
	ck_assert_str_eq(tracker_row_label(&r), cut);
	ck_assert_int_eq(tracker_row_set_label(&r, "", SIZE_MAX), 0);
	ck_assert_ptr_null(r.label_long);
	ck_assert_str_eq(tracker_row_label(&r), "");

	tracker_init(&t, N_COUNTERS, C_NS, C_COUNT);
	{
		const struct spec w1[] = {
			{ 1, 1, { 1, 1, 1 }, "/system.slice/long-enough.service" },
			{ 2, 1, { 1, 1, 1 }, "short" },
			{ 3, 1, { 1, 1, 1 }, path },
		};
		/* Carried (empty), changed long to short and short to long, evicted. */
		const struct spec w2[] = {
			{ 1, 1, { 2, 2, 2 }, "" },
			{ 2, 1, { 2, 2, 2 }, "/user.slice/user-1000.slice" },
			{ 3, 1, { 2, 2, 2 }, "bash" },
		};
		const struct spec w3[] = {
			{ 1, 1, { 3, 3, 3 }, "" },
			{ 2, 1, { 3, 3, 3 }, "" },
		};
		/* A new generation does not inherit the long label. */
		const struct spec w4[] = {
			{ 1, 2, { 1, 1, 1 }, "" },
			{ 2, 1, { 4, 4, 4 }, "/a/different/path/now" },
		};

		update(&t, w1, 3, 1000);
		ck_assert_str_eq(tracker_row_label(get(&t, 3)), cut);
		update(&t, w2, 3, 2000);
		ck_assert_str_eq(tracker_row_label(get(&t, 1)), "/system.slice/long-enough.service");
		ck_assert_str_eq(tracker_row_label(get(&t, 2)), "/user.slice/user-1000.slice");
		ck_assert_str_eq(tracker_row_label(get(&t, 3)), "bash");
		update(&t, w3, 2, 3000);
		ck_assert_ptr_null(find(&t, 3));
		ck_assert_str_eq(tracker_row_label(get(&t, 1)), "/system.slice/long-enough.service");
		ck_assert_str_eq(tracker_row_label(get(&t, 2)), "/user.slice/user-1000.slice");
		update(&t, w4, 2, 4000);
		ck_assert_str_eq(tracker_row_label(get(&t, 1)), "");
		ck_assert_str_eq(tracker_row_label(get(&t, 2)), "/a/different/path/now");
	}

	/* The way the daemon reads them, with a long label set at some reads
	 * and kept by the others. */
	for (i = 0; i < 5; i++) {
		size_t j;

		tracker_begin(&t, 0);
		for (j = 0; j < 3; j++) {
			bool set = i == 0 || (i == 3 && j == 2);
			struct tracked_row *row = tracker_read(&t, j + 1, 2, set ? path : NULL, SIZE_MAX);

			ck_assert_ptr_nonnull(row);
			row->value[C_NS] = i;
		}
		tracker_update(&t, 5000 + i);
		for (j = 0; j < 3; j++)
			ck_assert_str_eq(tracker_row_label(get(&t, j + 1)), cut);
	}
	/* A read left open frees its rows' labels too. */
	tracker_begin(&t, 0);
	ck_assert_ptr_nonnull(tracker_read(&t, 77, 1, path, SIZE_MAX));
	tracker_done(&t);
}
END_TEST

/* One table, updated in place: rows stay where they are from window to
 * window, the table grows as entities turn up and is given back after a
 * burst; rows that were not read go. */
START_TEST(test_table_in_place)
{
	struct tracker t;
	const struct tracked_row *out[4];
	struct tracked_row *first;
	size_t i, w;

	tracker_init(&t, N_COUNTERS, C_NS, C_COUNT);
	tracker_begin(&t, 0);
	tracker_update(&t, 1000);
	ck_assert_uint_eq(t.n_rows, 0);
	ck_assert_ptr_null(tracker_find(&t, 1));

	for (w = 0; w < 3; w++) {
		tracker_begin(&t, 0);
		for (i = 0; i < 3; i++) {
			struct tracked_row *r = tracker_read(&t, 10 - i, 1, NULL, 0);

			ck_assert_ptr_nonnull(r);
			/* Zeroed at its first read, whatever it held. */
			ck_assert_uint_eq(r->value[C_NS], 0);
			r->value[C_NS] = 5 * (w + 1);
		}
		tracker_update(&t, 2000 + w);
		if (w == 0)
			first = t.rows;
		ck_assert_ptr_eq(t.rows, first);
		assert_delta(&t, 8, 0, 5, 0);
		assert_indexed(&t);
	}

	/* Growing keeps what was read, and the index finds it all. */
	tracker_begin(&t, 0);
	for (i = 0; i < 1000; i++) {
		struct tracked_row *r = tracker_read(&t, i + 1, 1, NULL, 0);

		ck_assert_ptr_nonnull(r);
		r->value[C_COUNT] = i;
	}
	for (i = 0; i < 1000; i++)
		ck_assert_uint_eq(tracker_find(&t, i + 1)->value[C_COUNT], i);
	tracker_update(&t, 4000);
	ck_assert_uint_eq(t.n_rows, 1000);
	assert_indexed(&t);
	ck_assert_uint_eq(get(&t, 1000)->delta[C_COUNT], 999);
	ck_assert_uint_eq(get(&t, 8)->delta[C_COUNT], 7);
	ck_assert_uint_eq(get(&t, 8)->delta[C_NS], 0); /* 15 before, 0 now: a reset, from zero */
	ck_assert_uint_eq(tracker_select(&t, 4, 0, 4000, out), 4);

	/* Back to a few rows: the large table and the index do not stay. */
	for (w = 0; w < 3; w++) {
		tracker_begin(&t, 0);
		ck_assert_ptr_nonnull(tracker_read(&t, 1, 1, NULL, 0));
		ck_assert_ptr_nonnull(tracker_read(&t, 2, 1, NULL, 0));
		tracker_update(&t, 5000 + w);
		ck_assert_uint_eq(tracker_select(&t, 4, 0, 5000 + w, out), 0);
	}
	ck_assert_uint_eq(t.n_rows, 2);
	assert_indexed(&t);
	ck_assert_uint_lt(t.cap_rows, 1000);
	ck_assert_uint_lt((size_t)1 << t.index_bits, 1000);
	ck_assert_uint_lt(t.cap_cand, 1000);
	tracker_done(&t);
	ck_assert_ptr_null(t.rows);
	ck_assert_ptr_null(t.index);
	ck_assert_ptr_null(t.cand);
}
END_TEST

/* The threads of a process add up in its row; max_rows bounds the new
 * entities of a read, not the ones read before. */
START_TEST(test_read_accumulates_and_bounds)
{
	struct tracker t;
	struct tracked_row *r;

	tracker_init(&t, N_COUNTERS, C_NS, C_COUNT);
	tracker_begin(&t, 2);
	r = tracker_read(&t, 5, 1, "leader", SIZE_MAX);
	r->value[C_COUNT] += 3;
	r = tracker_read(&t, 6, 1, "other", SIZE_MAX);
	r->value[C_COUNT] += 1;
	ck_assert_ptr_null(tracker_read(&t, 7, 1, "too many", SIZE_MAX));
	r = tracker_read(&t, 5, 1, "leader", SIZE_MAX); /* a thread of 5: no new row */
	ck_assert_ptr_nonnull(r);
	r->value[C_COUNT] += 4;
	tracker_update(&t, 1000);
	ck_assert_uint_eq(t.n_rows, 2);
	ck_assert_ptr_null(find(&t, 7));
	assert_delta(&t, 5, 7, 0, 0);
	ck_assert_uint_eq(get(&t, 5)->total[C_COUNT], 7);

	/* The next read starts each row from zero again. */
	tracker_begin(&t, 2);
	r = tracker_read(&t, 5, 1, NULL, 0);
	ck_assert_uint_eq(r->value[C_COUNT], 0);
	r->value[C_COUNT] += 9;
	r = tracker_read(&t, 5, 1, NULL, 0);
	r->value[C_COUNT] += 1;
	tracker_update(&t, 2000);
	assert_delta(&t, 5, 3, 0, 0);
	ck_assert_str_eq(tracker_row_label(get(&t, 5)), "leader");
	ck_assert_ptr_null(find(&t, 6)); /* not read: gone */
	tracker_done(&t);
}
END_TEST

/* A row kept (its entity unreadable this time) has no delta and stays;
 * tracker_previous gives the values from before the open read, also of an
 * entity whose key a new one took in it. */
/* A read voided part-way (its source failed) leaves every entity as it was:
 * no delta, nobody dropped, the next read's deltas against the values before
 * the voided one; an entity new in it counts from zero. */
START_TEST(test_void_read)
{
	static const struct spec w1[] = {
		{ 1, 1, { 10, 20, 30 }, "a" },
		{ 2, 1, { 1, 2, 3 }, "b" },
		{ 3, 1, { 4, 5, 6 }, "c" },
	};
	static const struct spec w3[] = {
		{ 1, 1, { 11, 20, 30 }, "a" },
		{ 2, 1, { 3, 2, 3 }, "b" },
		{ 3, 1, { 4, 5, 6 }, "c" },
		{ 4, 1, { 9, 0, 0 }, "d" },
	};
	struct tracker t;
	struct tracked_row *r;

	tracker_init(&t, N_COUNTERS, C_NS, C_COUNT);
	update(&t, w1, 3, 1000);
	tracker_begin(&t, 0);
	r = tracker_read(&t, 2, 1, NULL, 0); /* half its threads read: less than before */
	r->value[C_COUNT] = 0;
	r = tracker_read(&t, 4, 1, "d", SIZE_MAX);
	r->value[C_COUNT] = 8;
	tracker_void_read(&t);
	tracker_update(&t, 2000);

	ck_assert_uint_eq(t.n_rows, 4);
	for (uint64_t key = 1; key <= 4; key++)
		assert_delta(&t, key, 0, 0, 0);
	ck_assert_uint_eq(get(&t, 2)->total[C_COUNT], 1);
	ck_assert_uint_eq(get(&t, 2)->last_change_usec, 1000);
	ck_assert_uint_eq(get(&t, 4)->total[C_COUNT], 0);

	update(&t, w3, 4, 3000);
	assert_delta(&t, 1, 1, 0, 0);
	assert_delta(&t, 2, 2, 0, 0);
	assert_delta(&t, 3, 0, 0, 0);
	assert_delta(&t, 4, 9, 0, 0);
	ck_assert_uint_eq(get(&t, 2)->total[C_COUNT], 3);
	ck_assert_uint_eq(get(&t, 4)->total[C_COUNT], 9);
	tracker_done(&t);
}
END_TEST

START_TEST(test_keep_and_previous)
{
	static const struct spec w1[] = {
		{ 1, 1, { 10, 20, 30 }, "a" },
		{ 2, 1, { 1, 2, 3 }, "b" },
		{ 3, 1, { 4, 5, 6 }, "c" },
	};
	struct tracker t;
	struct tracked_row *r;
	uint64_t v[TRACKER_MAX_COUNTERS];

	tracker_init(&t, N_COUNTERS, C_NS, C_COUNT);
	update(&t, w1, 3, 1000);
	tracker_begin(&t, 0);
	ck_assert(tracker_keep(&t, 1));
	ck_assert(!tracker_keep(&t, 99));
	r = tracker_read(&t, 2, 1, NULL, 0);
	r->value[C_COUNT] = 5;
	r = tracker_read(&t, 3, 2, "d", SIZE_MAX); /* a new process under pid 3 */
	r->value[C_COUNT] = 1;
	ck_assert(tracker_row_was_read(&t, tracker_find(&t, 2)));

	ck_assert(tracker_previous(&t, 1, 1, v));
	ck_assert_uint_eq(v[C_NS], 20);
	ck_assert(tracker_previous(&t, 2, 1, v)); /* read in this one: from before it */
	ck_assert_uint_eq(v[C_COUNT], 1);
	ck_assert(tracker_previous(&t, 3, 1, v)); /* replaced in this one */
	ck_assert_uint_eq(v[C_EXTRA], 6);
	ck_assert(!tracker_previous(&t, 3, 7, v));
	ck_assert(!tracker_previous(&t, 99, 1, v));
	tracker_update(&t, 2000);

	ck_assert_uint_eq(t.n_rows, 3);
	assert_delta(&t, 1, 0, 0, 0);
	ck_assert_uint_eq(get(&t, 1)->total[C_NS], 20);
	ck_assert_uint_eq(get(&t, 1)->last_change_usec, 1000);
	assert_delta(&t, 2, 4, 0, 0);
	ck_assert_uint_eq(get(&t, 2)->value[C_NS], 0); /* a read sets all it has */
	assert_delta(&t, 3, 1, 0, 0);
	ck_assert_uint_eq(get(&t, 3)->total[C_COUNT], 1);
	ck_assert_str_eq(tracker_row_label(get(&t, 3)), "d");
	/* After the read, the replaced entity is gone for good. */
	ck_assert(!tracker_previous(&t, 3, 1, v));
	ck_assert(tracker_previous(&t, 3, 2, v));
	ck_assert_uint_eq(v[C_COUNT], 1);
	tracker_done(&t);
}
END_TEST

START_TEST(test_empty_window)
{
	static const struct spec w1[] = {
		{ 1, 1, { 1, 10, 0 }, "a" },
		{ 2, 1, { 2, 20, 0 }, "b" },
	};
	static const struct spec w3[] = {
		{ 1, 1, { 1, 15, 0 }, "" },
	};
	const struct tracked_row *out[2] = { NULL, NULL };
	struct tracker t;
	size_t n;

	tracker_init(&t, N_COUNTERS, C_NS, C_COUNT);
	/* Empty from the start. */
	update(&t, NULL, 0, 500);
	ck_assert_uint_eq(tracker_select(&t, 2, 0, 500, out), 0);
	ck_assert_ptr_null(out[0]);

	update(&t, w1, 2, 1000);
	n = tracker_select(&t, 1, 0, 1000, out);
	assert_keys(out, n, (const uint64_t[]){ 2 }, 1);
	assert_other(&t, 1, 10, 0);

	out[0] = out[1] = NULL;
	update(&t, NULL, 0, 2000);
	ck_assert_uint_eq(tracker_select(&t, 2, 5000, 2000, out), 0);
	ck_assert_ptr_null(out[0]);
	assert_other(&t, 1, 10, 0);

	/* After an empty window, everything is new again. */
	update(&t, w3, 1, 3000);
	assert_delta(&t, 1, 1, 15, 0);
	ck_assert_str_eq(tracker_row_label(get(&t, 1)), "");
	tracker_done(&t);

	/* Done right after an empty window frees the 1-element array. */
	tracker_init(&t, N_COUNTERS, C_NS, C_COUNT);
	update(&t, NULL, 0, 1000);
	tracker_done(&t);
}
END_TEST

static Suite *tracker_suite(void)
{
	Suite *s = suite_create("tracker");
	TCase *upd = tcase_create("update");

	tcase_add_test(upd, test_init_done);
	tcase_add_test(upd, test_first_window);
	tcase_add_test(upd, test_second_window);
	tcase_add_test(upd, test_vanished_key_comes_back);
	tcase_add_test(upd, test_generation_change);
	tcase_add_test(upd, test_counter_backwards);
	tcase_add_test(upd, test_total_never_backwards);
	tcase_add_test(upd, test_reused_key_same_label);
	tcase_add_test(upd, test_label_carried_over);
	tcase_add_test(upd, test_label_lengths);
	tcase_add_test(upd, test_table_in_place);
	tcase_add_test(upd, test_read_accumulates_and_bounds);
	tcase_add_test(upd, test_keep_and_previous);
	tcase_add_test(upd, test_void_read);
	tcase_add_test(upd, test_empty_window);
	suite_add_tcase(s, upd);
	return s;
}

int main(void)
{
	return suite_main_run(tracker_suite());
}
