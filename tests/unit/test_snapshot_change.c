/* SPDX-License-Identifier: GPL-2.0 */
/* A series' change from one window to the next (lib/snapshot_change.c), on
 * small windows made by hand, and the JSON API saying the same. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalogue.h"
#include "snapshot.h"
#include "strbuf.h"

/* The families the status page reads changes of, from the catalogue. */
#define ALLOCATED METRIC(MW_PAGE_ALLOCATED_BYTES_TOTAL)    /* a counter */
#define MINOR_FAULTS METRIC(MW_PROCESS_MINOR_FAULTS_TOTAL) /* pid, comm */
#define AVAILABLE METRIC(MW_MEMORY_AVAILABLE_BYTES)        /* a gauge */
#define STALL METRIC(MW_DIRECT_RECLAIM_SECONDS)            /* a histogram */

static const double stall_bounds[] = { 0.5, 1 };

/* What snapshot_foreach_change() gave for one series. */
struct seen {
	char labels[64];
	bool known;
	struct snapshot_change c;
};

struct seen_list {
	struct seen s[16];
	size_t n;
};

static void record(const char *const *labels, unsigned n_labels, const struct snapshot_change *c, void *ud)
{
	struct seen_list *l = ud;
	struct seen *s;
	size_t used = 0;

	ck_assert_uint_lt(l->n, 16);
	s = &l->s[l->n++];
	memset(s, 0, sizeof(*s));
	for (unsigned k = 0; k < n_labels; k++)
		used += (size_t)snprintf(s->labels + used, sizeof(s->labels) - used, "%s%s", k ? "," : "", labels[k]);
	s->known = c != NULL;
	if (c)
		s->c = *c;
}

static struct seen_list changes(const struct snapshot *s, const struct snapshot *prev, const char *name)
{
	struct seen_list l = { .n = 0 };

	snapshot_foreach_change(s, prev, name, record, &l);
	return l;
}

static struct snapshot *window(uint64_t seq)
{
	struct snapshot_window w = { .seq = seq };
	struct snapshot *s = snapshot_new(&w, 100);

	ck_assert_ptr_nonnull(s);
	return s;
}

static void add_faults(struct snapshot *s, const char *pid, const char *comm, double value)
{
	ck_assert_int_eq(snapshot_add(s, MINOR_FAULTS, (const char *const[]){ pid, comm }, value), 0);
}

/* Bounds of its own, copied: the change reads only the count and the sum. */
static void add_stall(struct snapshot *s, uint64_t le_half, uint64_t le_one, uint64_t above, double sum)
{
	const uint64_t counts[] = { le_half, le_one, above };

	ck_assert_int_eq(snapshot_add_histogram(s, STALL, NULL, stall_bounds, counts, 2, sum), 0);
}

/* The JSON of window s (after prev) has want in family's array. */
static void assert_json_has(const struct snapshot *s, const struct snapshot *prev, const struct metric_desc *family,
			    const char *want)
{
	struct strbuf sb;
	char key[128];
	const char *at;

	snprintf(key, sizeof(key), "\"%s\":[", family->name);
	strbuf_init(&sb);
	ck_assert_int_eq(snapshot_render_json(&sb, s, prev), 0);
	at = strstr(sb.data, key);
	ck_assert_msg(at && strstr(at, want) && strstr(at, want) < strchr(at, ']'), "no %s%s in %s", key, want,
		      sb.data);
	strbuf_free(&sb);
}

START_TEST(test_counter_grows_and_restarts)
{
	struct snapshot *a = window(1), *b = window(2), *c = window(3);
	struct seen_list l;

	ck_assert_int_eq(snapshot_add(a, ALLOCATED, NULL, 10), 0);
	ck_assert_int_eq(snapshot_add(b, ALLOCATED, NULL, 15), 0);
	ck_assert_int_eq(snapshot_add(c, ALLOCATED, NULL, 3), 0);
	ck_assert_int_eq(snapshot_seal(a), 0);
	ck_assert_int_eq(snapshot_seal(b), 0);
	ck_assert_int_eq(snapshot_seal(c), 0);

	l = changes(b, a, ALLOCATED->name);
	ck_assert_uint_eq(l.n, 1);
	ck_assert(l.s[0].known);
	ck_assert(l.s[0].c.value == 5);
	ck_assert(isnan(l.s[0].c.sum));
	ck_assert_uint_eq(l.s[0].c.count, 0);
	assert_json_has(b, a, ALLOCATED, "{\"value\":15,\"delta\":5}]");

	/* Below the window before: counting again from zero, all 3 are new. */
	l = changes(c, b, ALLOCATED->name);
	ck_assert(l.s[0].known && l.s[0].c.value == 3);
	assert_json_has(c, b, ALLOCATED, "{\"value\":3,\"delta\":3}]");

	/* Against the same value: no change, which is known. */
	l = changes(b, b, ALLOCATED->name);
	ck_assert(l.s[0].known && l.s[0].c.value == 0);
	snapshot_unref(a);
	snapshot_unref(b);
	snapshot_unref(c);
}
END_TEST

START_TEST(test_no_window_before)
{
	struct snapshot *a = window(1);
	struct seen_list l;

	ck_assert_int_eq(snapshot_add(a, ALLOCATED, NULL, 10), 0);
	add_stall(a, 1, 0, 0, 0.25);
	ck_assert_int_eq(snapshot_seal(a), 0);
	l = changes(a, NULL, ALLOCATED->name);
	ck_assert_uint_eq(l.n, 1);
	ck_assert(!l.s[0].known);
	l = changes(a, NULL, STALL->name);
	ck_assert_uint_eq(l.n, 1);
	ck_assert(!l.s[0].known);
	assert_json_has(a, NULL, ALLOCATED, "{\"value\":10}]");
	assert_json_has(a, NULL, STALL, "{\"count\":1,\"sum\":0.25}]");
	/* A family nobody wrote: no call at all. */
	ck_assert_uint_eq(changes(a, NULL, MINOR_FAULTS->name).n, 0);
	snapshot_unref(a);
}
END_TEST

/* A series is the same one in both windows only with every label the same;
 * one the window before lacks has no change: it may have been exported
 * before that, or counted in "other" until now. */
START_TEST(test_series_matched_by_every_label)
{
	/* The faults family's name with one label less: another family. */
	const struct metric_desc faults_by_pid = {
		.name = MINOR_FAULTS->name, .type = METRIC_COUNTER, .n_labels = 1, .labels = { "pid" },
	};
	struct snapshot *a = window(1), *b = window(2);
	struct seen_list l;

	add_faults(a, "10", "hog", 100);
	add_faults(a, "11", "cat", 7);
	ck_assert_int_eq(snapshot_add(a, &faults_by_pid, (const char *const[]){ "12" }, 1), 0);
	add_faults(b, "11", "cat", 9);
	add_faults(b, "10", "hog", 160);
	add_faults(b, "10", "hog2", 4); /* pid 10 after exec: a new series */
	add_faults(b, "12", "new", 40);
	ck_assert_int_eq(snapshot_seal(a), 0);
	ck_assert_int_eq(snapshot_seal(b), 0);

	l = changes(b, a, MINOR_FAULTS->name);
	ck_assert_uint_eq(l.n, 4);
	ck_assert_str_eq(l.s[0].labels, "11,cat");
	ck_assert(l.s[0].known && l.s[0].c.value == 2);
	ck_assert_str_eq(l.s[1].labels, "10,hog");
	ck_assert(l.s[1].known && l.s[1].c.value == 60);
	ck_assert_str_eq(l.s[2].labels, "10,hog2");
	ck_assert(!l.s[2].known);
	/* Not the one-label family of the same name in a. */
	ck_assert_str_eq(l.s[3].labels, "12,new");
	ck_assert(!l.s[3].known);
	assert_json_has(b, a, MINOR_FAULTS, "{\"labels\":{\"pid\":\"10\",\"comm\":\"hog\"},\"value\":160,\"delta\":60}");
	assert_json_has(b, a, MINOR_FAULTS, "{\"labels\":{\"pid\":\"10\",\"comm\":\"hog2\"},\"value\":4}");
	assert_json_has(b, a, MINOR_FAULTS, "{\"labels\":{\"pid\":\"12\",\"comm\":\"new\"},\"value\":40}]");
	snapshot_unref(a);
	snapshot_unref(b);
}
END_TEST

START_TEST(test_gauge_has_no_change)
{
	struct snapshot *a = window(1), *b = window(2);
	struct seen_list l;

	ck_assert_int_eq(snapshot_add(a, AVAILABLE, NULL, 1000), 0);
	ck_assert_int_eq(snapshot_add(b, AVAILABLE, NULL, 600), 0);
	l = changes(b, a, AVAILABLE->name);
	ck_assert_uint_eq(l.n, 1);
	ck_assert(!l.s[0].known);
	assert_json_has(b, a, AVAILABLE, "{\"value\":600}]");
	snapshot_unref(a);
	snapshot_unref(b);
}
END_TEST

START_TEST(test_histogram_count_and_sum)
{
	struct snapshot *a = window(1), *b = window(2), *c = window(3), *d = window(4);
	struct seen_list l;

	add_stall(a, 2, 1, 1, 3.5);
	add_stall(b, 3, 4, 1, 6.75);
	/* Fewer observations than before: counting again, the sum too, though it grew. */
	add_stall(c, 1, 0, 1, 9);
	/* More observations and a smaller sum: negative ones, no restart. */
	add_stall(d, 2, 0, 1, 8.5);
	ck_assert_int_eq(snapshot_seal(a), 0);
	ck_assert_int_eq(snapshot_seal(b), 0);

	l = changes(b, a, STALL->name);
	ck_assert_uint_eq(l.n, 1);
	ck_assert(l.s[0].known);
	ck_assert_uint_eq(l.s[0].c.count, 4);
	ck_assert(l.s[0].c.sum == 3.25);
	ck_assert(isnan(l.s[0].c.value));
	assert_json_has(b, a, STALL, "{\"count\":8,\"sum\":6.75,\"count_delta\":4,\"sum_delta\":3.25}]");

	l = changes(c, b, STALL->name);
	ck_assert(l.s[0].known);
	ck_assert_uint_eq(l.s[0].c.count, 2);
	ck_assert(l.s[0].c.sum == 9);
	assert_json_has(c, b, STALL, "{\"count\":2,\"sum\":9,\"count_delta\":2,\"sum_delta\":9}]");

	l = changes(d, c, STALL->name);
	ck_assert(l.s[0].known);
	ck_assert_uint_eq(l.s[0].c.count, 1);
	ck_assert(l.s[0].c.sum == -0.5);
	assert_json_has(d, c, STALL, "{\"count\":3,\"sum\":8.5,\"count_delta\":1,\"sum_delta\":-0.5}]");
	snapshot_unref(a);
	snapshot_unref(b);
	snapshot_unref(c);
	snapshot_unref(d);
}
END_TEST

static Suite *snapshot_change_suite(void)
{
	Suite *s = suite_create("snapshot_change");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_counter_grows_and_restarts);
	tcase_add_test(tc, test_no_window_before);
	tcase_add_test(tc, test_series_matched_by_every_label);
	tcase_add_test(tc, test_gauge_has_no_change);
	tcase_add_test(tc, test_histogram_count_and_sum);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(snapshot_change_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : 0;
}
