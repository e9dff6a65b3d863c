/* SPDX-License-Identifier: GPL-2.0 */
/* Counters, windows and assertions shared by the tracker tests
 * (test_tracker*.c). */
#ifndef MEMWATCHD_TESTS_UNIT_TRACKER_FIXTURE_H
#define MEMWATCHD_TESTS_UNIT_TRACKER_FIXTURE_H

#include <check.h>
#include <stdint.h>
#include <string.h>

#include "tracker.h"

/* Counters used by most tests: ranked by NS, then COUNT; EXTRA is tracked
 * but never ranked on. */
enum { C_COUNT, C_NS, C_EXTRA, N_COUNTERS };

struct spec {
	uint64_t key, gen;
	uint64_t v[N_COUNTERS];
	const char *label;
};

/* A window as the daemon's collectors read one: every entity through
 * tracker_read, in the order given; a label of "" (or none) keeps the row's. */
static inline void update(struct tracker *t, const struct spec *sp, size_t n, uint64_t now)
{
	size_t i;

	tracker_begin(t, 0);
	for (i = 0; i < n; i++) {
		const char *label = sp[i].label && sp[i].label[0] ? sp[i].label : NULL;
		struct tracked_row *r = tracker_read(t, sp[i].key, sp[i].gen, label, SIZE_MAX);

		ck_assert_ptr_nonnull(r);
		memcpy(r->value, sp[i].v, sizeof(sp[i].v));
	}
	tracker_update(t, now);
	ck_assert_uint_eq(t->n_rows, n);
}

static inline const struct tracked_row *find(const struct tracker *t, uint64_t key)
{
	size_t i;

	for (i = 0; i < t->n_rows; i++)
		if (t->rows[i].key == key)
			return &t->rows[i];
	return NULL;
}

static inline const struct tracked_row *get(const struct tracker *t, uint64_t key)
{
	const struct tracked_row *r = find(t, key);

	ck_assert_msg(r != NULL, "key %llu missing", (unsigned long long)key);
	return r;
}

static inline void assert_delta(const struct tracker *t, uint64_t key, uint64_t count, uint64_t ns, uint64_t extra)
{
	const struct tracked_row *r = get(t, key);

	ck_assert_msg(r->delta[C_COUNT] == count && r->delta[C_NS] == ns && r->delta[C_EXTRA] == extra,
		      "key %llu: delta (%llu,%llu,%llu), want (%llu,%llu,%llu)", (unsigned long long)key,
		      (unsigned long long)r->delta[C_COUNT], (unsigned long long)r->delta[C_NS],
		      (unsigned long long)r->delta[C_EXTRA], (unsigned long long)count, (unsigned long long)ns,
		      (unsigned long long)extra);
}

/* Every row is found through the index, once. */
static inline void assert_indexed(const struct tracker *t)
{
	size_t i;

	for (i = 0; i < t->n_rows; i++)
		ck_assert_ptr_eq(tracker_find(t, t->rows[i].key), &t->rows[i]);
}

static inline void assert_keys(const struct tracked_row *const *out, size_t n, const uint64_t *want, size_t n_want)
{
	size_t i;

	ck_assert_uint_eq(n, n_want);
	for (i = 0; i < n; i++)
		ck_assert_msg(out[i]->key == want[i], "rank %zu: key %llu, want %llu", i,
			      (unsigned long long)out[i]->key, (unsigned long long)want[i]);
}

static inline void assert_other(const struct tracker *t, uint64_t count, uint64_t ns, uint64_t extra)
{
	ck_assert_msg(t->other[C_COUNT] == count && t->other[C_NS] == ns && t->other[C_EXTRA] == extra,
		      "other (%llu,%llu,%llu), want (%llu,%llu,%llu)", (unsigned long long)t->other[C_COUNT],
		      (unsigned long long)t->other[C_NS], (unsigned long long)t->other[C_EXTRA],
		      (unsigned long long)count, (unsigned long long)ns, (unsigned long long)extra);
}

#endif
