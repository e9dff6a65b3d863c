/* SPDX-License-Identifier: GPL-2.0 */
/* The status page's Workloads table and a cgroup page
 * (daemon/status_workloads.c) on windows made by hand: the numbers in their
 * <data> elements against the figures put in, the ranking the page states,
 * the window named, escaping, and an unknown path. */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalogue.h"
#include "fixture.h"
#include "ring.h"
#include "snapshot.h"
#include "status_workloads.h"
#include "strbuf.h"

#define MiB 1048576.0
#define MARKUP "/<b>\"x\"&y"

/* Window seq (1, 2, 3): cgroup /a stalls 0.25 s more each window (3 stalls),
 * /b not at all but has PSI 0.5 s per window, /c is at 90% of its limit,
 * MARKUP has nothing. /a has OOM kills in two scopes, one more in window 3. */
static struct snapshot *window(uint64_t seq)
{
	struct snapshot_window w = { .seq = seq, .end_real_usec = 1700000000000000ULL + seq * 500000 };
	struct snapshot *s = snapshot_new(&w, 1000);
	static const char *const paths[] = { "/a", "/b", "/c", MARKUP };
	double k = (double)seq;

	ck_assert_ptr_nonnull(s);
	for (size_t i = 0; i < 4; i++) {
		const char *lv[7] = { paths[i], i == 0 ? "a.service" : "", "", "", i == 1 ? "web" : "", "", "" };

		ck_assert_int_eq(snapshot_add(s, METRIC(MW_CGROUP_INFO), lv, 1), 0);
		ck_assert_int_eq(snapshot_add(s, METRIC(MW_CGROUP_MEMORY_USAGE_BYTES), lv, (double)(i + 1) * 9 * MiB), 0);
		if (i < 3) {
			double limit = i == 2 ? 30 * MiB : 100 * MiB;

			ck_assert_int_eq(snapshot_add(s, METRIC(MW_CGROUP_MEMORY_LIMIT_BYTES), lv, limit), 0);
			ck_assert_int_eq(snapshot_add(s, METRIC(MW_CGROUP_MEMORY_USAGE_RATIO), lv,
						      (double)(i + 1) * 9 * MiB / limit),
					 0);
		}
		if (i == 0) {
			const char *scoped[7] = { paths[0], "a.service", "", "", "", "", "memcg" };

			ck_assert_int_eq(snapshot_add(s, METRIC(MW_CGROUP_RECLAIMS_TOTAL), lv, 3 * k), 0);
			ck_assert_int_eq(snapshot_add(s, METRIC(MW_CGROUP_RECLAIM_SECONDS_TOTAL), lv, 0.25 * k), 0);
			ck_assert_int_eq(snapshot_add(s, METRIC(MW_CGROUP_MEMORY_LIMIT_ETA_SECONDS), lv, 42), 0);
			ck_assert_int_eq(snapshot_add(s, METRIC(MW_CGROUP_OOM_KILLS_TOTAL), scoped, seq >= 3 ? 2 : 1), 0);
			scoped[6] = "global";
			ck_assert_int_eq(snapshot_add(s, METRIC(MW_CGROUP_OOM_KILLS_TOTAL), scoped, 4), 0);
		}
		if (i == 1)
			ck_assert_int_eq(snapshot_add(s, METRIC(MW_CGROUP_PRESSURE_MEMORY_SOME_SECONDS_TOTAL), lv, 0.5 * k),
					 0);
	}
	ck_assert_int_eq(snapshot_seal(s), 0);
	return s;
}

static struct snapshot_ring *ring_of(uint64_t n)
{
	struct snapshot_ring *r = snapshot_ring_new(8);

	ck_assert_ptr_nonnull(r);
	for (uint64_t seq = 1; seq <= n; seq++) {
		snapshot_ring_publish(r, window(seq)); /* takes the reference */
	}
	return r;
}

/* The value of <data class="cls" value="..."> after `from`; NAN for "". */
static double data_after(const char *from, const char *cls)
{
	char needle[64];
	const char *p;

	snprintf(needle, sizeof(needle), "class=\"%s\" value=\"", cls);
	p = strstr(from, needle);
	ck_assert_msg(p != NULL, "no %s after\n%s", cls, from);
	p += strlen(needle);
	return *p == '"' ? NAN : strtod(p, NULL);
}

START_TEST(test_table)
{
	struct snapshot_ring *r = ring_of(3);
	struct snapshot *snaps[2] = { NULL, NULL };
	struct strbuf sb;
	const char *a, *b, *c, *m;

	ck_assert_uint_eq(snapshot_ring_recent(r, snaps, 2), 2);
	strbuf_init(&sb);
	workloads_table(&sb, snaps[1], snaps[0]);
	ck_assert(!strbuf_failed(&sb));
	ck_assert_ptr_nonnull(strstr(sb.data, "id=\"workloads-seq\" value=\"3\""));
	ck_assert_ptr_nonnull(strstr(sb.data, "id=\"workloads-end\" value=\"1700000001.500000\""));
	ck_assert_ptr_nonnull(strstr(sb.data, "by reclaim stall time in the window, then memory pressure"));
	a = strstr(sb.data, "data-cgroup=\"/a\"");
	b = strstr(sb.data, "data-cgroup=\"/b\"");
	c = strstr(sb.data, "data-cgroup=\"/c\"");
	m = strstr(sb.data, "data-cgroup=\"/&lt;b&gt;&quot;x&quot;&amp;y\"");
	/* stall first, then PSI, then usage against limit, then none */
	ck_assert_msg(a && b && c && m && a < b && b < c && c < m, "order:\n%s", sb.data);
	ck_assert_ptr_nonnull(strstr(sb.data, "href=\"/cgroup?path=/%3Cb%3E%22x%22%26y\""));
	ck_assert_ptr_null(strstr(sb.data, "<b>"));
	ck_assert_ptr_nonnull(strstr(a, "<td>a.service</td>"));
	ck_assert_ptr_nonnull(strstr(b, "<td>web</td>"));
	ck_assert(data_after(a, "usage") == 9 * MiB);
	ck_assert(data_after(a, "limit") == 100 * MiB);
	ck_assert(data_after(a, "ratio") == 9 * MiB / (100 * MiB));
	ck_assert(data_after(a, "eta") == 42);
	ck_assert(data_after(a, "reclaims") == 3);
	ck_assert(data_after(a, "reclaim-seconds") == 0.25);
	ck_assert(data_after(a, "oom-kills") == 6);
	ck_assert(isnan(data_after(a, "psi-some")));
	ck_assert(data_after(b, "psi-some") == 0.5);
	ck_assert(isnan(data_after(b, "reclaims")));
	ck_assert(data_after(c, "ratio") == 27 * MiB / (30 * MiB));
	ck_assert_ptr_nonnull(strstr(c, "class=\"bar high\""));
	ck_assert(isnan(data_after(m, "limit")));
	strbuf_free(&sb);
	snapshot_unref(snaps[0]);
	snapshot_unref(snaps[1]);
	snapshot_ring_free(r);
}
END_TEST

START_TEST(test_cgroup_page)
{
	struct snapshot_ring *r = ring_of(3);
	struct strbuf sb;
	const char *w1, *w2, *w3;

	strbuf_init(&sb);
	ck_assert_int_eq(workloads_cgroup_page(&sb, r, "/a"), 0);
	ck_assert_ptr_nonnull(strstr(sb.data, "id=\"cgroup-seq\" value=\"3\""));
	ck_assert_ptr_null(strstr(sb.data, "<script"));
	ck_assert_ptr_nonnull(strstr(sb.data, "data-series=\"usage\""));
	ck_assert_ptr_nonnull(strstr(sb.data, "data-series=\"limit\""));
	/* The OOM kill of window 3 is marked. */
	ck_assert_ptr_nonnull(strstr(sb.data, "1 OOM kill in window #3"));
	w3 = strstr(sb.data, "data-seq=\"3\"");
	w2 = strstr(sb.data, "data-seq=\"2\"");
	w1 = strstr(sb.data, "data-seq=\"1\"");
	ck_assert_msg(w3 && w2 && w1 && w3 < w2 && w2 < w1, "windows newest first:\n%s", sb.data);
	ck_assert(data_after(w3, "end") == 1700000001.5);
	ck_assert(data_after(w2, "reclaim-seconds") == 0.25);
	ck_assert(data_after(w2, "oom-kills") == 5);
	/* The oldest window has none before it: no change known. */
	ck_assert(isnan(data_after(w1, "reclaims")));
	strbuf_free(&sb);

	strbuf_init(&sb);
	ck_assert_int_eq(workloads_cgroup_page(&sb, r, "/nope"), -ENOENT);
	strbuf_free(&sb);
	strbuf_init(&sb);
	workloads_not_found(&sb, MARKUP);
	ck_assert_ptr_nonnull(strstr(sb.data, "/&lt;b&gt;"));
	strbuf_free(&sb);
	snapshot_ring_free(r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("status_workloads");
	TCase *tc = tcase_create("html");

	tcase_add_test(tc, test_table);
	tcase_add_test(tc, test_cgroup_page);
	suite_add_tcase(s, tc);
	return fixture_run_suite(s);
}
