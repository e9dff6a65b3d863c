/* SPDX-License-Identifier: GPL-2.0 */
/* lib/snapshot.c: building a window's snapshot (families, labels, series
 * limits, sealing, value lookup) and its lifetime (references, threads).
 * Histograms: test_snapshot_histogram.c; the rendered copies:
 * test_snapshot_output.c. */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snapshot.h"

#include "snapshot_fixture.h"
#include "suite_main.h"

START_TEST(test_window_copied)
{
	struct snapshot_window w = {
		.seq = 7, .start_mono_usec = 100, .end_mono_usec = 200,
		.start_real_usec = 1700000000000000ULL, .end_real_usec = 1700000000000100ULL,
	};
	struct snapshot *s = snapshot_new(&w, 10);
	const struct snapshot_window *got;

	ck_assert_ptr_nonnull(s);
	w.seq = 99; /* copied, not referenced */
	got = snapshot_window(s);
	ck_assert_uint_eq(got->seq, 7);
	ck_assert_uint_eq(got->start_mono_usec, 100);
	ck_assert_uint_eq(got->end_mono_usec, 200);
	ck_assert_uint_eq(got->start_real_usec, 1700000000000000ULL);
	ck_assert_uint_eq(got->end_real_usec, 1700000000000100ULL);
	snapshot_unref(s);

	s = snapshot_new(NULL, 10);
	ck_assert_uint_eq(snapshot_window(s)->seq, 0);
	ck_assert_uint_eq(snapshot_window(s)->end_real_usec, 0);
	snapshot_unref(s);
}
END_TEST

START_TEST(test_empty_snapshot)
{
	struct snapshot *s = new_snap(10);
	size_t len = 123;

	/* Nothing rendered before seal. */
	ck_assert_ptr_null(snapshot_text(s, &len));
	ck_assert_uint_eq(len, 0);
	ck_assert_uint_eq(snapshot_series(s), 0);
	ck_assert_uint_eq(snapshot_dropped_series(s), 0);
	ck_assert_str_eq(seal_text(s), "");
	ck_assert(isnan(snapshot_value(s, "memwatch_free_bytes", NULL)));
	snapshot_unref(s);
}
END_TEST

START_TEST(test_render_exact)
{
	struct snapshot *s = new_snap(100);
	const char *const a[] = { "a" };
	const char *const b[] = { "b\"q\\\n" };

	ck_assert_int_eq(snapshot_add(s, &free_bytes, NULL, 1024.0), 0);
	ck_assert_int_eq(snapshot_add(s, &events_total, a, 3.0), 0);
	ck_assert_int_eq(snapshot_add(s, &events_total, b, 0.5), 0);
	ck_assert_uint_eq(snapshot_series(s), 3);
	ck_assert_str_eq(seal_text(s),
			 "# HELP memwatch_free_bytes Free memory.\n"
			 "# TYPE memwatch_free_bytes gauge\n"
			 "memwatch_free_bytes 1024\n"
			 "# HELP memwatch_events_total Events seen.\n"
			 "# TYPE memwatch_events_total counter\n"
			 "memwatch_events_total{kind=\"a\"} 3\n"
			 "memwatch_events_total{kind=\"b\\\"q\\\\\\n\"} 0.5\n");
	snapshot_unref(s);
}
END_TEST

START_TEST(test_label_values_copied)
{
	struct snapshot *s = new_snap(100);
	char cg[32], lvl[32];
	const char *lv[] = { cg, lvl };

	snprintf(cg, sizeof(cg), "/user.slice");
	snprintf(lvl, sizeof(lvl), "some");
	ck_assert_int_eq(snapshot_add(s, &pressure, lv, 0.25), 0);
	/* The caller's buffers are reused at once, as collectors do. */
	snprintf(cg, sizeof(cg), "/system.slice");
	snprintf(lvl, sizeof(lvl), "full");
	ck_assert_int_eq(snapshot_add(s, &pressure, lv, 0.125), 0);
	memset(cg, 'X', sizeof(cg) - 1);
	memset(lvl, 'Y', sizeof(lvl) - 1);
	ck_assert_str_eq(seal_text(s),
			 "# HELP memwatch_pressure_ratio Pressure.\n"
			 "# TYPE memwatch_pressure_ratio gauge\n"
			 "memwatch_pressure_ratio{cgroup=\"/user.slice\",level=\"some\"} 0.25\n"
			 "memwatch_pressure_ratio{cgroup=\"/system.slice\",level=\"full\"} 0.125\n");
	snapshot_unref(s);
}
END_TEST

START_TEST(test_null_label_values)
{
	struct snapshot *s = new_snap(100);
	const char *const one_null[] = { NULL, "full" };

	ck_assert_int_eq(snapshot_add(s, &pressure, NULL, 1.0), 0);
	ck_assert_int_eq(snapshot_add(s, &pressure, one_null, 2.0), 0);
	ck_assert_str_eq(seal_text(s),
			 "# HELP memwatch_pressure_ratio Pressure.\n"
			 "# TYPE memwatch_pressure_ratio gauge\n"
			 "memwatch_pressure_ratio{cgroup=\"\",level=\"\"} 1\n"
			 "memwatch_pressure_ratio{cgroup=\"\",level=\"full\"} 2\n");
	snapshot_unref(s);
}
END_TEST

START_TEST(test_families_grouped)
{
	/* Same name, different desc object: still one family. */
	static const struct metric_desc events_copy = {
		.name = "memwatch_events_total", .help = "Other help.", .type = METRIC_COUNTER,
		.n_labels = 1, .labels = { "kind" },
	};
	struct snapshot *s = new_snap(100);
	const char *const x[] = { "x" }, *const y[] = { "y" }, *const z[] = { "z" };
	const char *const cg[] = { "/", "some" };

	ck_assert_int_eq(snapshot_add(s, &events_total, x, 1.0), 0);
	ck_assert_int_eq(snapshot_add(s, &free_bytes, NULL, 10.0), 0);
	ck_assert_int_eq(snapshot_add(s, &events_total, y, 2.0), 0);
	ck_assert_int_eq(snapshot_add(s, &pressure, cg, 0.5), 0);
	ck_assert_int_eq(snapshot_add(s, &events_copy, z, 3.0), 0);
	ck_assert_int_eq(snapshot_add(s, &free_bytes, NULL, 11.0), 0);
	ck_assert_uint_eq(snapshot_series(s), 6);
	ck_assert_str_eq(seal_text(s),
			 "# HELP memwatch_events_total Events seen.\n"
			 "# TYPE memwatch_events_total counter\n"
			 "memwatch_events_total{kind=\"x\"} 1\n"
			 "memwatch_events_total{kind=\"y\"} 2\n"
			 "memwatch_events_total{kind=\"z\"} 3\n"
			 "# HELP memwatch_free_bytes Free memory.\n"
			 "# TYPE memwatch_free_bytes gauge\n"
			 "memwatch_free_bytes 10\n"
			 "memwatch_free_bytes 11\n"
			 "# HELP memwatch_pressure_ratio Pressure.\n"
			 "# TYPE memwatch_pressure_ratio gauge\n"
			 "memwatch_pressure_ratio{cgroup=\"/\",level=\"some\"} 0.5\n");
	snapshot_unref(s);
}
END_TEST

/* Many families, interleaved round-robin: every family's block must be
 * contiguous, in first-seen order, with its samples in insertion order. */
START_TEST(test_many_families_interleaved)
{
	enum { NF = 70, PER = 5 };
	static struct metric_desc descs[NF];
	static char names[NF][32];
	struct snapshot *s = new_snap(NF * PER);
	struct strbuf want;
	const char *text;
	int f, k;

	for (f = 0; f < NF; f++) {
		snprintf(names[f], sizeof(names[f]), "fam_%02d", f);
		descs[f] = (struct metric_desc){ .name = names[f], .help = "h", .type = METRIC_GAUGE };
	}
	for (k = 0; k < PER; k++)
		for (f = 0; f < NF; f++)
			ck_assert_int_eq(snapshot_add(s, &descs[f], NULL, f * 100 + k), 0);
	strbuf_init(&want);
	for (f = 0; f < NF; f++) {
		strbuf_printf(&want, "# HELP %s h\n# TYPE %s gauge\n", names[f], names[f]);
		for (k = 0; k < PER; k++)
			strbuf_printf(&want, "%s %d\n", names[f], f * 100 + k);
	}
	text = seal_text(s);
	ck_assert_str_eq(text, want.data);
	ck_assert_uint_eq(snapshot_series(s), NF * PER);
	strbuf_free(&want);
	snapshot_unref(s);
}
END_TEST

static const struct metric_desc fam_a = { .name = "fam_a", .help = "h", .type = METRIC_GAUGE };
static const struct metric_desc fam_b = { .name = "fam_b", .help = "h", .type = METRIC_GAUGE };
static const struct metric_desc fam_c = { .name = "fam_c", .help = "h", .type = METRIC_GAUGE };

/* Adds one gauge per descriptor, in order, with the values 1, 2, ... */
static void add_in_turn(struct snapshot *s, const struct metric_desc *const *descs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		ck_assert_int_eq(snapshot_add(s, descs[i], NULL, (double)(i + 1)), 0);
}

/* A family is its name and label count, whichever descriptor object adds
 * to it: a copy of one, met between other families, adds to the same block. */
START_TEST(test_family_shared_by_equal_descriptors)
{
	const struct metric_desc copy_of_a = fam_a;
	const struct metric_desc *const adds[] = { &fam_a, &fam_b, &copy_of_a, &fam_b, &fam_a };
	struct snapshot *s = new_snap(10);

	add_in_turn(s, adds, 5);
	ck_assert_str_eq(seal_text(s), "# HELP fam_a h\n# TYPE fam_a gauge\nfam_a 1\nfam_a 3\nfam_a 5\n"
				       "# HELP fam_b h\n# TYPE fam_b gauge\nfam_b 2\nfam_b 4\n");
	snapshot_unref(s);
}
END_TEST

/* Families in the window before's order are taken as new without a lookup;
 * one of them met again later still adds to its own block. */
START_TEST(test_like_order_then_revisit)
{
	const struct metric_desc copy_of_b = fam_b;
	const struct metric_desc *const adds[] = { &fam_a, &fam_b, &fam_c, &fam_a, &copy_of_b };
	struct snapshot *before = new_snap(10), *s = new_snap(10);

	add_in_turn(before, adds, 2);
	(void)seal_text(before);
	snapshot_size_like(s, before);
	add_in_turn(s, adds, 5);
	ck_assert_str_eq(seal_text(s), "# HELP fam_a h\n# TYPE fam_a gauge\nfam_a 1\nfam_a 4\n"
				       "# HELP fam_b h\n# TYPE fam_b gauge\nfam_b 2\nfam_b 5\n"
				       "# HELP fam_c h\n# TYPE fam_c gauge\nfam_c 3\n");
	snapshot_unref(before);
	snapshot_unref(s);
}
END_TEST

/* Sized like the window before: more samples than it had, fewer, families in
 * another order or new ones all come out as without it. */
START_TEST(test_sized_like_previous_window)
{
	enum { NF = 6 };
	static struct metric_desc descs[NF];
	static char names[NF][32];
	static const int before_n[NF] = { 3, 0, 5, 1, 2, 4 };
	static const int order[NF] = { 0, 2, 1, 3, 5, 4 };
	static const int now_n[NF] = { 7, 2, 5, 0, 1, 3 };
	struct snapshot *before = new_snap(1000), *plain = new_snap(1000), *like = new_snap(1000);
	char label[16];
	int f, k;

	for (f = 0; f < NF; f++) {
		snprintf(names[f], sizeof(names[f]), "fam_%d", f);
		descs[f] = (struct metric_desc){ .name = names[f], .help = "h", .type = METRIC_GAUGE,
						 .n_labels = 1, .labels = { "k" } };
		for (k = 0; k < before_n[f]; k++) {
			snprintf(label, sizeof(label), "%d", k);
			ck_assert_int_eq(snapshot_add(before, &descs[f], (const char *const[]){ label }, k), 0);
		}
	}
	(void)seal_text(before);
	snapshot_size_like(like, before);
	for (int i = 0; i < NF; i++)
		for (f = order[i], k = 0; k < now_n[f]; k++) {
			snprintf(label, sizeof(label), "%d", k);
			ck_assert_int_eq(snapshot_add(plain, &descs[f], (const char *const[]){ label }, f * 10 + k), 0);
			ck_assert_int_eq(snapshot_add(like, &descs[f], (const char *const[]){ label }, f * 10 + k), 0);
		}
	ck_assert_str_eq(seal_text(like), seal_text(plain));
	ck_assert_uint_eq(snapshot_series(like), snapshot_series(plain));
	snapshot_unref(before);
	snapshot_unref(plain);
	snapshot_unref(like);
}
END_TEST

START_TEST(test_max_series)
{
	struct snapshot *s = new_snap(3);
	const char *const k[] = { "k" };
	const double bounds[] = { 1 };
	const uint64_t counts[] = { 1, 2 };
	const uint64_t slots[] = { 1, 2, 3 };

	ck_assert_int_eq(snapshot_add(s, &free_bytes, NULL, 1), 0);
	ck_assert_int_eq(snapshot_add_histogram(s, &stall, k, bounds, counts, 1, 1), 0);
	ck_assert_int_eq(snapshot_add(s, &events_total, k, 2), 0);
	ck_assert_uint_eq(snapshot_series(s), 3);
	ck_assert_uint_eq(snapshot_dropped_series(s), 0);

	ck_assert_int_eq(snapshot_add(s, &free_bytes, NULL, 4), -ENOSPC);
	ck_assert_int_eq(snapshot_add(s, &pressure, NULL, 5), -ENOSPC);
	ck_assert_int_eq(snapshot_add_histogram(s, &stall, k, bounds, counts, 1, 1), -ENOSPC);
	ck_assert_int_eq(add_log2(s, &plain_hist, NULL, slots, 3, 1.0, 0), -ENOSPC);
	ck_assert_uint_eq(snapshot_series(s), 3);
	ck_assert_uint_eq(snapshot_dropped_series(s), 4);

	/* A dropped sample leaves no trace in the text, not even a header. */
	ck_assert_str_eq(seal_text(s),
			 "# HELP memwatch_free_bytes Free memory.\n"
			 "# TYPE memwatch_free_bytes gauge\n"
			 "memwatch_free_bytes 1\n"
			 "# HELP memwatch_stall_seconds Stall time.\n"
			 "# TYPE memwatch_stall_seconds histogram\n"
			 "memwatch_stall_seconds_bucket{dev=\"k\",le=\"1\"} 1\n"
			 "memwatch_stall_seconds_bucket{dev=\"k\",le=\"+Inf\"} 3\n"
			 "memwatch_stall_seconds_sum{dev=\"k\"} 1\n"
			 "memwatch_stall_seconds_count{dev=\"k\"} 3\n"
			 "# HELP memwatch_events_total Events seen.\n"
			 "# TYPE memwatch_events_total counter\n"
			 "memwatch_events_total{kind=\"k\"} 2\n");
	snapshot_unref(s);
}
END_TEST

START_TEST(test_max_series_zero)
{
	struct snapshot *s = new_snap(0);

	ck_assert_int_eq(snapshot_add(s, &free_bytes, NULL, 1), -ENOSPC);
	ck_assert_int_eq(snapshot_add(s, &free_bytes, NULL, 2), -ENOSPC);
	ck_assert_uint_eq(snapshot_series(s), 0);
	ck_assert_uint_eq(snapshot_dropped_series(s), 2);
	ck_assert_str_eq(seal_text(s), "");
	snapshot_unref(s);
}
END_TEST

START_TEST(test_many_series_grow)
{
	enum { N = 5000 };
	struct snapshot *s = new_snap(N);
	char lbl[32];
	const char *lv[] = { lbl };
	const char *text;
	size_t i;

	for (i = 0; i < N; i++) {
		snprintf(lbl, sizeof(lbl), "k%zu", i);
		if (snapshot_add(s, &events_total, lv, (double)i) != 0)
			ck_abort_msg("add %zu failed", i);
	}
	ck_assert_int_eq(snapshot_add(s, &events_total, lv, 0), -ENOSPC);
	ck_assert_uint_eq(snapshot_series(s), N);
	ck_assert_uint_eq(snapshot_dropped_series(s), 1);
	text = seal_text(s);
	ck_assert_ptr_nonnull(strstr(text, "\nmemwatch_events_total{kind=\"k0\"} 0\n"));
	ck_assert_ptr_nonnull(strstr(text, "\nmemwatch_events_total{kind=\"k4999\"} 4999\n"));
	for (i = 0; i < N; i += 499) {
		snprintf(lbl, sizeof(lbl), "k%zu", i);
		ck_assert_double_eq(snapshot_value(s, "memwatch_events_total", lv), (double)i);
	}
	snapshot_unref(s);
}
END_TEST

START_TEST(test_add_after_seal)
{
	struct snapshot *s = new_snap(100);
	const double bounds[] = { 1 };
	const uint64_t counts[] = { 1, 2 };
	const uint64_t slots[] = { 1, 2 };
	const char *t1, *t2;
	size_t len1, len2;

	ck_assert_int_eq(snapshot_add(s, &free_bytes, NULL, 1), 0);
	ck_assert_int_eq(snapshot_seal(s), 0);
	t1 = snapshot_text(s, &len1);

	ck_assert_int_eq(snapshot_add(s, &free_bytes, NULL, 2), -EBUSY);
	ck_assert_int_eq(snapshot_add_histogram(s, &plain_hist, NULL, bounds, counts, 1, 0), -EBUSY);
	ck_assert_int_eq(add_log2(s, &plain_hist, NULL, slots, 2, 1.0, 0), -EBUSY);
	ck_assert_uint_eq(snapshot_series(s), 1);
	ck_assert_uint_eq(snapshot_dropped_series(s), 0);

	/* Sealing again is a no-op that keeps the same text. */
	ck_assert_int_eq(snapshot_seal(s), 0);
	t2 = snapshot_text(s, &len2);
	ck_assert_ptr_eq(t1, t2);
	ck_assert_uint_eq(len1, len2);
	ck_assert_str_eq(t2, "# HELP memwatch_free_bytes Free memory.\n"
			     "# TYPE memwatch_free_bytes gauge\n"
			     "memwatch_free_bytes 1\n");
	ck_assert_ptr_nonnull(snapshot_text(s, NULL));
	snapshot_unref(s);
}
END_TEST

START_TEST(test_seal_full_snapshot_refused_too)
{
	/* Once sealed, even a full snapshot answers -EBUSY and does not count drops. */
	struct snapshot *s = new_snap(1);

	ck_assert_int_eq(snapshot_add(s, &free_bytes, NULL, 1), 0);
	ck_assert_int_eq(snapshot_seal(s), 0);
	ck_assert_int_eq(snapshot_add(s, &free_bytes, NULL, 2), -EBUSY);
	ck_assert_uint_eq(snapshot_dropped_series(s), 0);
	snapshot_unref(s);
}
END_TEST

START_TEST(test_value_lookup)
{
	struct snapshot *s = new_snap(100);
	const char *const some[] = { "/a", "some" }, *const full[] = { "/a", "full" };
	const char *const other[] = { "/b", "some" }, *const prefix[] = { "/a", "som" };
	const char *const kind_x[] = { "x" };
	const double bounds[] = { 1, 2 };
	const uint64_t counts[] = { 3, 4, 5 };

	ck_assert_int_eq(snapshot_add(s, &free_bytes, NULL, 4096), 0);
	ck_assert_int_eq(snapshot_add(s, &pressure, some, 0.25), 0);
	ck_assert_int_eq(snapshot_add(s, &pressure, full, 0.75), 0);
	ck_assert_int_eq(snapshot_add(s, &events_total, kind_x, -3), 0);
	ck_assert_int_eq(snapshot_add_histogram(s, &plain_hist, NULL, bounds, counts, 2, 99), 0);

	/* Lookups work before and after sealing. */
	for (int round = 0; round < 2; round++) {
		ck_assert_double_eq(snapshot_value(s, "memwatch_free_bytes", NULL), 4096);
		ck_assert_double_eq(snapshot_value(s, "memwatch_pressure_ratio", some), 0.25);
		ck_assert_double_eq(snapshot_value(s, "memwatch_pressure_ratio", full), 0.75);
		ck_assert_double_eq(snapshot_value(s, "memwatch_events_total", kind_x), -3);
		/* NULL label values: the first sample of the family */
		ck_assert_double_eq(snapshot_value(s, "memwatch_pressure_ratio", NULL), 0.25);
		/* histograms answer with their count */
		ck_assert_double_eq(snapshot_value(s, "memwatch_size_bytes", NULL), 12);
		ck_assert(isnan(snapshot_value(s, "memwatch_pressure_ratio", other)));
		ck_assert(isnan(snapshot_value(s, "memwatch_pressure_ratio", prefix)));
		ck_assert(isnan(snapshot_value(s, "memwatch_free", NULL)));
		ck_assert(isnan(snapshot_value(s, "memwatch_free_bytes_total", NULL)));
		ck_assert(isnan(snapshot_value(s, "", NULL)));
		ck_assert_int_eq(snapshot_seal(s), 0);
	}
	snapshot_unref(s);
}
END_TEST

START_TEST(test_refcount)
{
	struct snapshot *s = new_snap(10);
	const char *text;

	ck_assert_int_eq(snapshot_add(s, &free_bytes, NULL, 5), 0);
	ck_assert_int_eq(snapshot_seal(s), 0);
	ck_assert_ptr_eq(snapshot_ref(s), s);
	ck_assert_ptr_eq(snapshot_ref(s), s);
	snapshot_unref(s);
	snapshot_unref(s);
	/* Still alive: one reference left (ASan flags a use after free). */
	text = snapshot_text(s, NULL);
	ck_assert_str_eq(text, "# HELP memwatch_free_bytes Free memory.\n"
			       "# TYPE memwatch_free_bytes gauge\n"
			       "memwatch_free_bytes 5\n");
	snapshot_unref(s); /* frees; LeakSanitizer fails the test otherwise */

	ck_assert_ptr_null(snapshot_ref(NULL));
	snapshot_unref(NULL);
}
END_TEST

START_TEST(test_cleanup_attribute)
{
	_cleanup_(snapshot_unrefp) struct snapshot *s = new_snap(10);
	_cleanup_(snapshot_unrefp) struct snapshot *none = NULL;

	ck_assert_int_eq(snapshot_add(s, &free_bytes, NULL, 5), 0);
	ck_assert_ptr_null(none);
}
END_TEST

/* Unsealed snapshots with arena data must be freed completely too. */
START_TEST(test_unref_unsealed)
{
	struct snapshot *s = new_snap(100000);
	char big[20000];
	const char *lv[] = { big, "x" };
	const uint64_t slots[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };

	memset(big, 'v', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	/* Label values larger than an arena block, plus many small ones. */
	ck_assert_int_eq(snapshot_add(s, &pressure, lv, 1), 0);
	for (int i = 0; i < 2000; i++)
		if (add_log2(s, &stall, NULL, slots, 8, 1.0, 1) != 0)
			ck_abort_msg("histogram %d", i);
	ck_assert_uint_eq(snapshot_series(s), 2001);
	snapshot_unref(s);
}
END_TEST

struct ref_arg {
	struct snapshot *s;
	int iterations;
};

static void *ref_worker(void *p)
{
	struct ref_arg *a = p;

	for (int i = 0; i < a->iterations; i++) {
		struct snapshot *r = snapshot_ref(a->s);

		if (snapshot_text(r, NULL)[0] != '#')
			abort();
		snapshot_unref(r);
	}
	return NULL;
}

START_TEST(test_refcount_threads)
{
	struct snapshot *s = new_snap(10);
	struct ref_arg arg = { .s = s, .iterations = 50000 };
	pthread_t th[4];
	int i;

	ck_assert_int_eq(snapshot_add(s, &free_bytes, NULL, 5), 0);
	ck_assert_int_eq(snapshot_seal(s), 0);
	for (i = 0; i < 4; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, ref_worker, &arg), 0);
	for (i = 0; i < 4; i++)
		ck_assert_int_eq(pthread_join(th[i], NULL), 0);
	/* Exactly our own reference is left. */
	ck_assert_str_eq(snapshot_text(s, NULL), "# HELP memwatch_free_bytes Free memory.\n"
						 "# TYPE memwatch_free_bytes gauge\n"
						 "memwatch_free_bytes 5\n");
	snapshot_unref(s);
}
END_TEST

static Suite *snapshot_suite(void)
{
	Suite *s = suite_create("snapshot");
	TCase *core = tcase_create("core");
	TCase *life = tcase_create("lifetime");

	tcase_add_test(core, test_window_copied);
	tcase_add_test(core, test_empty_snapshot);
	tcase_add_test(core, test_render_exact);
	tcase_add_test(core, test_label_values_copied);
	tcase_add_test(core, test_null_label_values);
	tcase_add_test(core, test_families_grouped);
	tcase_add_test(core, test_many_families_interleaved);
	tcase_add_test(core, test_family_shared_by_equal_descriptors);
	tcase_add_test(core, test_like_order_then_revisit);
	tcase_add_test(core, test_sized_like_previous_window);
	tcase_add_test(core, test_max_series);
	tcase_add_test(core, test_max_series_zero);
	tcase_add_test(core, test_many_series_grow);
	tcase_add_test(core, test_add_after_seal);
	tcase_add_test(core, test_seal_full_snapshot_refused_too);
	tcase_add_test(core, test_value_lookup);
	suite_add_tcase(s, core);

	tcase_add_test(life, test_refcount);
	tcase_add_test(life, test_cleanup_attribute);
	tcase_add_test(life, test_unref_unsealed);
	tcase_add_test(life, test_refcount_threads);
	tcase_set_timeout(life, 60);
	suite_add_tcase(s, life);
	return s;
}

int main(void)
{
	return suite_main_run(snapshot_suite());
}
