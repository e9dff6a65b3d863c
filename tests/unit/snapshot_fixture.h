/* SPDX-License-Identifier: GPL-2.0 */
/* Descriptors and helpers shared by the snapshot tests (test_snapshot*.c):
 * a gauge, a counter, a labelled gauge, histograms on copied and on the
 * descriptor's own bounds; a snapshot made, sealed and rendered. */
#ifndef MEMWATCHD_TESTS_UNIT_SNAPSHOT_FIXTURE_H
#define MEMWATCHD_TESTS_UNIT_SNAPSHOT_FIXTURE_H

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "snapshot.h"

static const struct metric_desc free_bytes = {
	.name = "memwatch_free_bytes",
	.help = "Free memory.",
	.type = METRIC_GAUGE,
};

static const struct metric_desc events_total = {
	.name = "memwatch_events_total",
	.help = "Events seen.",
	.type = METRIC_COUNTER,
	.n_labels = 1,
	.labels = { "kind" },
};

static const struct metric_desc pressure = {
	.name = "memwatch_pressure_ratio",
	.help = "Pressure.",
	.type = METRIC_GAUGE,
	.n_labels = 2,
	.labels = { "cgroup", "level" },
};

static const struct metric_desc stall = {
	.name = "memwatch_stall_seconds",
	.help = "Stall time.",
	.type = METRIC_HISTOGRAM,
	.n_labels = 1,
	.labels = { "dev" },
};

static const struct metric_desc plain_hist = {
	.name = "memwatch_size_bytes",
	.help = "Sizes.",
	.type = METRIC_HISTOGRAM,
};

/* Bounds that print other than expo_format_number would print them: a
 * histogram on the descriptor's bounds shows the descriptor's le text. */
static const double own_bounds[] = { 0.5, 1, 2 };
static const char *const own_le[] = { "0.50", "1.0", "2.0" };
static const struct metric_desc own_hist = {
	.name = "memwatch_own_seconds",
	.help = "Own bounds.",
	.type = METRIC_HISTOGRAM,
	.n_labels = 1,
	.labels = { "dev" },
	.n_bounds = 3,
	.bounds = own_bounds,
	.le = own_le,
};

/* Log2 slots as a BPF program keeps them: slot k counts values v with
 * 2^(k-1) < v <= 2^k raw units, scale converts to the base unit, the last
 * slot is the clamp slot (+Inf). Through the general path, bounds copied. */
static inline int add_log2(struct snapshot *s, const struct metric_desc *desc, const char *const *labels,
		    const uint64_t *slots, size_t n_slots, double scale, double raw_sum)
{
	double bounds[64];
	size_t i;

	ck_assert_uint_ge(n_slots, 2);
	ck_assert_uint_le(n_slots, 64);
	for (i = 0; i + 1 < n_slots; i++)
		bounds[i] = ldexp(1.0, (int)i) * scale;
	return snapshot_add_histogram(s, desc, labels, bounds, slots, n_slots - 1, raw_sum * scale);
}

static inline struct snapshot *new_snap(size_t max_series)
{
	struct snapshot *s = snapshot_new(NULL, max_series);

	ck_assert_ptr_nonnull(s);
	return s;
}

static inline const char *seal_text(struct snapshot *s)
{
	size_t len = 0;
	const char *t;

	ck_assert_int_eq(snapshot_seal(s), 0);
	t = snapshot_text(s, &len);
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(len, strlen(t));
	return t;
}

#endif
