/* SPDX-License-Identifier: GPL-2.0 */
/* lib/tracker.c: on random windows (a deterministic generator), nothing is
 * lost or counted twice between the exported rows and "other". */
#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracker.h"

#include "tracker_fixture.h"
#include "suite_main.h"

/* xorshift64*: deterministic, so a failure can be replayed. */
static uint64_t rng_state;

static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ULL;
}

static uint64_t rnd_below(uint64_t n)
{
	return rnd() % n;
}

struct model_entry {
	bool present;
	uint64_t gen;
	uint64_t v[N_COUNTERS];
	uint64_t last_change;
};

/* Random rows over 200 windows: what is exported plus what other grew by
 * equals all the deltas, window by window and in total; the deltas, the
 * candidate count and the ranking match an independent model. */
START_TEST(test_property_conservation)
{
	enum { WINDOWS = 200, KEYS = 40, MAX_TOP_K = 8 };
	static const uint64_t ttls[] = { 0, 1000, 2500, 10000 };
	struct model_entry model[KEYS];
	uint64_t total_all[N_COUNTERS] = { 0 }, total_exported[N_COUNTERS] = { 0 };
	uint64_t other_before[N_COUNTERS];
	const struct tracked_row *out[MAX_TOP_K];
	struct tracker t;
	size_t w, c, exported_rows = 0, cut_rows = 0;

	rng_state = 0x9e3779b97f4a7c15ULL ^ (uint64_t)_i;
	memset(model, 0, sizeof(model));
	tracker_init(&t, N_COUNTERS, C_NS, C_COUNT);
	for (w = 0; w < WINDOWS; w++) {
		uint64_t now = 1000 * (w + 1), ttl = ttls[rnd_below(4)];
		uint64_t want_delta[KEYS][N_COUNTERS], window_all[N_COUNTERS] = { 0 };
		uint64_t window_exported[N_COUNTERS] = { 0 };
		bool in_window[KEYS];
		struct tracked_row fresh[KEYS];
		size_t top_k = rnd_below(MAX_TOP_K + 1), n = 0, candidates = 0, k, i;

		memset(fresh, 0, sizeof(fresh));
		for (i = 0; i < KEYS; i++) {
			struct model_entry *m = &model[i];
			struct tracked_row *r;
			uint64_t gen = m->gen;
			bool same, changed = false;

			in_window[i] = rnd_below(5) != 0;
			if (!in_window[i]) {
				m->present = false;
				continue;
			}
			if (rnd_below(20) == 0)
				gen++; /* reused key */
			same = m->present && gen == m->gen;
			r = &fresh[n++];
			r->key = i * 1000 + 7;
			r->generation = gen;
			for (c = 0; c < N_COUNTERS; c++) {
				uint64_t before = same ? m->v[c] : 0, v;

				switch (rnd_below(8)) {
				case 0:
					v = rnd_below(50); /* reset: may go backwards */
					break;
				case 1:
				case 2:
				case 3:
					v = before; /* unchanged */
					break;
				default:
					v = before + rnd_below(1000);
				}
				r->value[c] = v;
				want_delta[i][c] = v >= before ? v - before : v;
				window_all[c] += want_delta[i][c];
				if (want_delta[i][c])
					changed = true;
				m->v[c] = v;
			}
			m->last_change = changed ? now : same ? m->last_change : 0;
			m->gen = gen;
			m->present = true;
			if (m->last_change && now - m->last_change <= ttl)
				candidates++;
		}
		/* Shuffle: tracker_read takes any order. */
		for (i = n; i > 1; i--) {
			size_t j = rnd_below(i);
			struct tracked_row tmp = fresh[i - 1];

			fresh[i - 1] = fresh[j];
			fresh[j] = tmp;
		}
		tracker_begin(&t, 0);
		for (i = 0; i < n; i++) {
			struct tracked_row *r = tracker_read(&t, fresh[i].key, fresh[i].generation, NULL, 0);

			ck_assert_ptr_nonnull(r);
			memcpy(r->value, fresh[i].value, sizeof(r->value));
		}
		tracker_update(&t, now);
		ck_assert_uint_eq(t.n_rows, n);
		assert_indexed(&t);
		for (i = 0; i < KEYS; i++) {
			const struct tracked_row *r = find(&t, i * 1000 + 7);

			ck_assert(!r == !in_window[i]);
			if (!r)
				continue;
			for (c = 0; c < N_COUNTERS; c++)
				ck_assert_uint_eq(r->delta[c], want_delta[i][c]);
			ck_assert_uint_eq(r->last_change_usec, model[i].last_change);
		}

		memcpy(other_before, t.other, sizeof(other_before));
		k = tracker_select(&t, top_k, ttl, now, out);
		ck_assert_uint_eq(k, candidates < top_k ? candidates : top_k);
		exported_rows += k;
		cut_rows += candidates - k;
		for (i = 0; i < k; i++) {
			for (c = 0; c < N_COUNTERS; c++)
				window_exported[c] += out[i]->delta[c];
			ck_assert(!tracker_row_idle(out[i], ttl, now));
			if (i > 0) {
				const struct tracked_row *a = out[i - 1], *b = out[i];

				ck_assert_uint_ge(a->delta[C_NS], b->delta[C_NS]);
				if (a->delta[C_NS] == b->delta[C_NS]) {
					ck_assert_uint_ge(a->delta[C_COUNT], b->delta[C_COUNT]);
					if (a->delta[C_COUNT] == b->delta[C_COUNT]) {
						ck_assert_uint_ge(a->last_change_usec, b->last_change_usec);
						if (a->last_change_usec == b->last_change_usec)
							ck_assert_uint_lt(a->key, b->key);
					}
				}
			}
		}
		for (c = 0; c < N_COUNTERS; c++) {
			ck_assert_uint_ge(t.other[c], other_before[c]);
			ck_assert_uint_eq(window_exported[c] + (t.other[c] - other_before[c]), window_all[c]);
			total_all[c] += window_all[c];
			total_exported[c] += window_exported[c];
		}
	}
	for (c = 0; c < N_COUNTERS; c++)
		ck_assert_uint_eq(total_exported[c] + t.other[c], total_all[c]);
	/* The run did exercise both sides of the cut. */
	ck_assert_uint_gt(exported_rows, 100);
	ck_assert_uint_gt(cut_rows, 100);
	tracker_done(&t);
}
END_TEST

static Suite *tracker_property_suite(void)
{
	Suite *s = suite_create("tracker_property");
	TCase *prop = tcase_create("property");

	tcase_add_loop_test(prop, test_property_conservation, 0, 4);
	suite_add_tcase(s, prop);
	return s;
}

int main(void)
{
	return suite_main_run(tracker_property_suite());
}
