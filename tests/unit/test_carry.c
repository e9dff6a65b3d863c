/* SPDX-License-Identifier: GPL-2.0 */
/* lib/carry.c: counters carried over a collector restart. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "carry.h"
#include "snapshot.h"
#include "strbuf.h"

static const struct metric_desc reclaims = {
	"memwatch_reclaims_total", "Reclaims.", METRIC_COUNTER,
};
static const struct metric_desc per_pid = {
	"memwatch_process_reclaims_total", "Per process.", METRIC_COUNTER, 2, { "pid", "comm" },
};
static const struct metric_desc usage = {
	"memwatch_usage_bytes", "A gauge.", METRIC_GAUGE,
};
static const struct metric_desc stall = {
	"memwatch_stall_seconds", "Stalls.", METRIC_HISTOGRAM,
};

static const double bounds[2] = { 0.001, 0.01 };

static struct snapshot *snap(void)
{
	struct snapshot *s = snapshot_new(NULL, 1000);

	ck_assert_ptr_nonnull(s);
	return s;
}

static void add_counter(struct snapshot *s, const struct metric_desc *d, const char *pid, double v)
{
	const char *const labels[] = { pid, "worker" };

	ck_assert_int_eq(snapshot_add(s, d, d->n_labels ? labels : NULL, v), 0);
}

/* counts are per bucket (last: above 0.01), as snapshot_add_histogram takes them */
static void add_hist(struct snapshot *s, uint64_t a, uint64_t b, uint64_t c, double sum)
{
	const uint64_t counts[3] = { a, b, c };

	ck_assert_int_eq(snapshot_add_histogram(s, &stall, NULL, bounds, counts, 2, sum), 0);
}

static double value(struct snapshot *s, const struct metric_desc *d, const char *pid)
{
	const char *const labels[] = { pid, "worker" };

	return snapshot_value(s, d->name, d->n_labels ? labels : NULL);
}

struct hist_seen {
	double count, sum;
};

static void on_hist(const char *const *labels, unsigned n, double v, double sum, void *ud)
{
	struct hist_seen *h = ud;

	h->count = v;
	h->sum = sum;
}

static struct hist_seen hist(struct snapshot *s)
{
	struct hist_seen h = { NAN, NAN };

	snapshot_foreach(s, stall.name, on_hist, &h);
	return h;
}

/* A BPF counter starts from zero in the new instance: it continues from what
 * was exported, and what both instances counted during the overlap counts once. */
START_TEST(test_counter_from_zero)
{
	struct carry *c = carry_new();
	struct snapshot *last = snap(), *first = snap(), *w = snap();

	add_counter(last, &reclaims, NULL, 478);
	add_counter(last, &usage, NULL, 5); /* gauges are not carried */
	ck_assert_int_eq(carry_record(c, last, 0, 0), 0);
	ck_assert_uint_eq(carry_size(c), 1);

	add_counter(first, &reclaims, NULL, 3); /* counted by both during the overlap */
	carry_splice(c, first, 0);

	add_counter(w, &reclaims, NULL, 10);
	add_counter(w, &usage, NULL, 1);
	ck_assert_int_eq(carry_apply(c, w, 0, 1000), 0);
	ck_assert(value(w, &reclaims, NULL) == 478 + 10 - 3);
	ck_assert(value(w, &usage, NULL) == 1);
	snapshot_unref(last);
	snapshot_unref(first);
	snapshot_unref(w);
	carry_free(c);
}
END_TEST

/* A kernel counter (/proc/vmstat) never stopped: no offset at all. */
START_TEST(test_counter_continuing)
{
	struct carry *c = carry_new();
	struct snapshot *last = snap(), *first = snap(), *w = snap();

	add_counter(last, &reclaims, NULL, 1000);
	ck_assert_int_eq(carry_record(c, last, 0, 0), 0);
	add_counter(first, &reclaims, NULL, 1005);
	carry_splice(c, first, 0);
	add_counter(w, &reclaims, NULL, 1010);
	ck_assert_int_eq(carry_apply(c, w, 0, 1000), 0);
	ck_assert(value(w, &reclaims, NULL) == 1010);
	snapshot_unref(last);
	snapshot_unref(first);
	snapshot_unref(w);
	carry_free(c);
}
END_TEST

/* Every bucket, the count and the sum continue. */
START_TEST(test_histogram)
{
	struct carry *c = carry_new();
	struct snapshot *last = snap(), *first = snap(), *w = snap();
	struct hist_seen h;

	add_hist(last, 5, 3, 2, 0.5);
	ck_assert_int_eq(carry_record(c, last, 0, 0), 0);
	add_hist(first, 1, 0, 0, 0.0005);
	carry_splice(c, first, 0);
	add_hist(w, 2, 1, 1, 0.1);
	ck_assert_int_eq(carry_apply(c, w, 0, 1000), 0);
	h = hist(w);
	/* old (cumulative 5, 8, 10) - first (1, 1, 1) + now (2, 3, 4) */
	ck_assert(h.count == 10 - 1 + 4);
	ck_assert(fabs(h.sum - (0.5 - 0.0005 + 0.1)) < 1e-12);
	{
		struct strbuf sb;

		strbuf_init(&sb);
		ck_assert_int_eq(snapshot_render_text(w, &sb), 0);
		/* cumulative: 5 - 1 + 2, 8 - 1 + 3 */
		ck_assert_ptr_nonnull(strstr(sb.data, "memwatch_stall_seconds_bucket{le=\"0.001\"} 6\n"));
		ck_assert_ptr_nonnull(strstr(sb.data, "memwatch_stall_seconds_bucket{le=\"0.01\"} 10\n"));
		ck_assert_ptr_nonnull(strstr(sb.data, "memwatch_stall_seconds_bucket{le=\"+Inf\"} 13\n"));
		strbuf_free(&sb);
	}
	snapshot_unref(last);
	snapshot_unref(first);
	snapshot_unref(w);
	carry_free(c);
}
END_TEST

static const char *const native_le[2] = { "0.001", "0.01" };
static const struct metric_desc native_stall = {
	.name = "memwatch_native_stall_seconds", .help = "Stalls.", .type = METRIC_HISTOGRAM,
	.n_bounds = 2, .bounds = bounds, .le = native_le, .flags = METRIC_FLAG_NATIVE_HISTOGRAM,
};

static void add_native(struct snapshot *s, const uint64_t *classic, int32_t first, const uint64_t *counts, size_t n,
		       uint64_t zero)
{
	const struct histogram_native nat = { .schema = 3, .first_index = first, .zero_threshold = 0x1p-20,
					      .zero_count = zero, .n = n, .counts = counts };

	ck_assert_int_eq(snapshot_add_histogram_full(s, &native_stall, NULL, classic, 3, 0.1, &nat, NULL, 0), 0);
}

struct native_seen {
	int32_t first;
	size_t n;
	uint64_t counts[8], zero;
};

static void on_native(struct snapshot_cumulative *c, void *ud)
{
	struct native_seen *seen = ud;

	ck_assert(c->has_native);
	ck_assert_uint_le(c->n_native, 8);
	seen->first = c->native_first;
	seen->n = c->n_native;
	memcpy(seen->counts, c->native, c->n_native * sizeof(uint64_t));
	seen->zero = *c->zero_count;
}

/* Each native bucket is a counter of its own: after the restart it continues
 * from what was exported, also where the new instance has not counted yet
 * (the range widens to hold it). */
START_TEST(test_native_histogram)
{
	struct carry *c = carry_new();
	struct snapshot *last = snap(), *first = snap(), *w = snap();
	struct native_seen seen = { 0 };

	/* old: buckets -10: 3, -8: 2, zero 1 (6 stalls) */
	add_native(last, (const uint64_t[]){ 1, 5, 0 }, -10, (const uint64_t[]){ 3, 0, 2 }, 3, 1);
	ck_assert_int_eq(carry_record(c, last, 0, 0), 0);
	/* new, at the switch: -8: 1 */
	add_native(first, (const uint64_t[]){ 0, 1, 0 }, -8, (const uint64_t[]){ 1 }, 1, 0);
	carry_splice(c, first, 0);
	/* new, a window on: -9: 4, -8: 2, zero 1 */
	add_native(w, (const uint64_t[]){ 1, 6, 0 }, -9, (const uint64_t[]){ 4, 2 }, 2, 1);
	ck_assert_int_eq(carry_apply(c, w, 0, 1000), 0);
	snapshot_foreach_cumulative(w, 0, on_native, &seen);
	/* -10: 3 carried; -9: 4; -8: 2 + (2 - 1); zero: 1 + 1 */
	ck_assert_int_eq(seen.first, -10);
	ck_assert_uint_eq(seen.n, 3);
	ck_assert_uint_eq(seen.counts[0], 3);
	ck_assert_uint_eq(seen.counts[1], 4);
	ck_assert_uint_eq(seen.counts[2], 3);
	ck_assert_uint_eq(seen.zero, 2);
	snapshot_unref(last);
	snapshot_unref(first);
	snapshot_unref(w);
	carry_free(c);
}
END_TEST

/* A per-process series the new instance has not seen yet stays at its carried
 * value while held; when it comes back it continues from there. */
START_TEST(test_held_then_back)
{
	struct carry *c = carry_new();
	struct snapshot *last = snap(), *first = snap(), *w1 = snap(), *w2 = snap();

	add_counter(last, &per_pid, "42", 50);
	ck_assert_int_eq(carry_record(c, last, 0, 5000), 0);
	carry_splice(c, first, 0); /* nothing from pid 42 yet */

	ck_assert_int_eq(carry_apply(c, w1, 0, 1000), 0);
	ck_assert(value(w1, &per_pid, "42") == 50);

	add_counter(w2, &per_pid, "42", 5); /* a fresh map entry */
	ck_assert_int_eq(carry_apply(c, w2, 0, 2000), 0);
	ck_assert(value(w2, &per_pid, "42") == 55);
	snapshot_unref(last);
	snapshot_unref(first);
	snapshot_unref(w1);
	snapshot_unref(w2);
	carry_free(c);
}
END_TEST

/* Not seen within its hold: the series ended with the old instance. */
START_TEST(test_hold_expires)
{
	struct carry *c = carry_new();
	struct snapshot *last = snap(), *w1 = snap(), *w2 = snap();

	add_counter(last, &per_pid, "42", 50);
	add_counter(last, &per_pid, "43", 7);
	ck_assert_int_eq(carry_record(c, last, 0, 5000), 0);
	add_counter(w1, &per_pid, "43", 9); /* at or above: a kernel count, no offset */
	ck_assert_int_eq(carry_apply(c, w1, 0, 1000), 0);
	ck_assert(value(w1, &per_pid, "42") == 50);
	ck_assert(value(w1, &per_pid, "43") == 9);
	ck_assert_int_eq(carry_apply(c, w2, 0, 6000), 0);
	ck_assert(isnan(value(w2, &per_pid, "42")));
	ck_assert_uint_eq(carry_size(c), 1); /* 43, decided, stays */
	snapshot_unref(last);
	snapshot_unref(w1);
	snapshot_unref(w2);
	carry_free(c);
}
END_TEST

/* A restart right after a restart: the first one's held series are kept. */
START_TEST(test_restart_twice)
{
	struct carry *c1 = carry_new(), *c2 = carry_new();
	struct snapshot *last1 = snap(), *last2 = snap(), *first2 = snap(), *w = snap();

	add_counter(last1, &per_pid, "42", 50);
	add_counter(last1, &reclaims, NULL, 100);
	ck_assert_int_eq(carry_record(c1, last1, 0, 9000), 0);
	/* The second instance exported reclaims (carried) but not pid 42. */
	add_counter(last2, &reclaims, NULL, 2);
	ck_assert_int_eq(carry_apply(c1, last2, 0, 1000), 0);
	ck_assert(value(last2, &reclaims, NULL) == 102);
	ck_assert_int_eq(carry_record(c2, last2, 0, 9000), 0);
	ck_assert_int_eq(carry_keep_held(c2, c1, 1000), 0);
	carry_splice(c2, first2, 0);

	add_counter(w, &reclaims, NULL, 1);
	add_counter(w, &per_pid, "42", 1);
	ck_assert_int_eq(carry_apply(c2, w, 0, 2000), 0);
	ck_assert(value(w, &reclaims, NULL) == 103);
	ck_assert(value(w, &per_pid, "42") == 51);
	snapshot_unref(last1);
	snapshot_unref(last2);
	snapshot_unref(first2);
	snapshot_unref(w);
	carry_free(c1);
	carry_free(c2);
}
END_TEST

/* Restarts closer together than the hold, as the core makes them: the old
 * instance's last values include what its carry held, and the next carry
 * records them. The hold still ends one hold after the first restart. */
START_TEST(test_hold_not_renewed_by_restarts)
{
	struct carry *c1 = carry_new(), *c2 = carry_new();
	struct snapshot *last1 = snap(), *last2 = snap(), *w1 = snap(), *w2 = snap();

	add_counter(last1, &per_pid, "42", 50);
	ck_assert_int_eq(carry_record(c1, last1, 0, 5000), 0);
	/* Restart at 1000: the second instance never saw pid 42. */
	ck_assert_int_eq(carry_apply(c1, last2, 0, 1000), 0);
	ck_assert(value(last2, &per_pid, "42") == 50);
	ck_assert_int_eq(carry_record(c2, last2, 0, 6000), 0);
	ck_assert_int_eq(carry_keep_held(c2, c1, 1000), 0);

	ck_assert_int_eq(carry_apply(c2, w1, 0, 4000), 0);
	ck_assert(value(w1, &per_pid, "42") == 50);
	ck_assert_int_eq(carry_apply(c2, w2, 0, 5500), 0);
	ck_assert(isnan(value(w2, &per_pid, "42")));
	ck_assert_uint_eq(carry_size(c2), 0);
	snapshot_unref(last1);
	snapshot_unref(last2);
	snapshot_unref(w1);
	snapshot_unref(w2);
	carry_free(c1);
	carry_free(c2);
}
END_TEST

/* Only the families since the mark belong to the collector. */
START_TEST(test_mark)
{
	struct carry *c = carry_new();
	struct snapshot *last = snap(), *w = snap();
	size_t mark;

	add_counter(last, &reclaims, NULL, 100);
	ck_assert_int_eq(carry_record(c, last, 0, 0), 0);
	add_counter(w, &reclaims, NULL, 1); /* another collector's family, before the mark */
	mark = snapshot_mark(w);
	ck_assert_int_eq(carry_apply(c, w, mark, 1000), 0);
	ck_assert(value(w, &reclaims, NULL) == 1);
	snapshot_unref(last);
	snapshot_unref(w);
	carry_free(c);
}
END_TEST

static Suite *carry_suite(void)
{
	Suite *s = suite_create("carry");
	TCase *tc = tcase_create("carry");

	tcase_add_test(tc, test_counter_from_zero);
	tcase_add_test(tc, test_counter_continuing);
	tcase_add_test(tc, test_histogram);
	tcase_add_test(tc, test_native_histogram);
	tcase_add_test(tc, test_held_then_back);
	tcase_add_test(tc, test_hold_expires);
	tcase_add_test(tc, test_restart_twice);
	tcase_add_test(tc, test_hold_not_renewed_by_restarts);
	tcase_add_test(tc, test_mark);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(carry_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
