// SPDX-License-Identifier: GPL-2.0
/* The status page's Workloads table and a cgroup page (GET /cgroup?path=)
 * in headless Chromium, against two memory cgroups of the test's own: every
 * number shown for them must equal the same window of /api/v1/windows, read
 * by python3 (workloads_fixture.c). The page names its window (sequence
 * number); each number is read from its <data value>, which is what the cell
 * shows, exact. Part of test_ui. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "workloads_test.h"

#ifndef CHROMIUM_PATH
#define CHROMIUM_PATH "/usr/bin/chromium"
#endif

/* The value of the first <data class="cls" value="..."> in text; NAN for "". */
static double data_value(const char *text, const char *cls, bool *found)
{
	char needle[96];
	const char *p;
	char *end;
	double v;

	snprintf(needle, sizeof(needle), "class=\"%s\" value=\"", cls);
	p = strstr(text, needle);
	*found = p != NULL;
	if (!p)
		return NAN;
	p += strlen(needle);
	if (*p == '"')
		return NAN;
	errno = 0;
	v = strtod(p, &end);
	*found = errno == 0 && *end == '"';
	return v;
}

/* The element from the first `open` up to its `close` (malloc'd), or NULL. */
static char *section(const char *html, const char *open, const char *close)
{
	const char *start = strstr(html, open), *end;

	if (!start)
		return NULL;
	end = strstr(start, close);
	return end ? strndup(start, (size_t)(end - start)) : NULL;
}

/* The window a page names: <data id="<id>-seq" value="N">. */
static uint64_t page_seq(const char *html, const char *id)
{
	char needle[64];
	const char *p;
	unsigned long long seq = 0;

	snprintf(needle, sizeof(needle), "id=\"%s-seq\" value=\"", id);
	p = strstr(html, needle);
	ck_assert_msg(p && sscanf(p + strlen(needle), "%llu", &seq) == 1 && seq > 0,
		      "the page does not say which window it shows (%s)", needle);
	return seq;
}

/* Every field of one row (a Workloads row or a window of a cgroup page) equals want. */
static void assert_row(const char *row, const struct wl_numbers *want, const char *what)
{
	for (size_t i = 0; i < WL_FIELDS; i++) {
		bool found;
		double shown = data_value(row, wl_classes[i], &found);

		ck_assert_msg(found, "%s: no <data class=\"%s\"> in\n%s", what, wl_classes[i], row);
		ck_assert_msg(mw_same_value(shown, wl_field(want, i)),
			      "%s, window %llu: %s is %.17g on the page, %.17g in /api/v1/windows\n%s", what,
			      (unsigned long long)want->seq, wl_classes[i], shown, wl_field(want, i), row);
	}
}

static char *dump(int port, const char *path, const char *tag)
{
	char *out_path = chromium(port, path, "--dump-dom", tag), *dom = mw_read_file(out_path, NULL);

	free(out_path);
	ck_assert_msg(dom && strstr(dom, "</html>"), "chromium --dump-dom %s gave no document", path);
	ck_assert_msg(!strstr(dom, "<script"), "%s has a <script> element", path);
	return dom;
}

/* GET / until row a of the Workloads table shows reclaim stalls in its window:
 * the column can show more than none. */
static void wait_for_stalls(const struct wl_fixture *f)
{
	char open[400];
	int64_t deadline = mw_mono_ms() + WL_TIMEOUT_MS;

	snprintf(open, sizeof(open), "<tr class=\"workload\" data-cgroup=\"%s\">", f->label[0]);
	for (;;) {
		struct mw_http_response resp;
		char *row;
		bool found = false;
		double stalls = NAN;

		ck_assert_int_eq(mw_http_get(f->d->port, "/", &resp), 0);
		row = section(resp.body ? resp.body : "", open, "</tr>");
		if (row)
			stalls = data_value(row, "reclaims", &found);
		free(row);
		if (stalls > 0 && strstr(resp.body, f->label[1])) {
			mw_http_response_free(&resp);
			return;
		}
		if (mw_mono_ms() >= deadline) {
			fprintf(stderr, "---- GET / ----\n%s\n----\n", resp.body ? resp.body : "");
			mw_http_response_free(&resp);
			ck_abort_msg("the Workloads table did not show reclaim stalls of %s in a window within %d ms",
				     f->label[0], WL_TIMEOUT_MS);
		}
		mw_http_response_free(&resp);
		mw_sleep_ms(250);
	}
}

START_TEST(test_workloads_table)
{
	struct wl_fixture f;
	char *dom, *table, *json;
	uint64_t seq;

	require_program(CHROMIUM_PATH, "chromium");
	wl_fixture_start(&f);
	wait_for_stalls(&f);

	dom = dump(f.d->port, "/", "wl-table");
	json = wl_fetch_windows(f.d->port, "table");
	table = section(dom, "<table id=\"workloads\"", "</table>");
	ck_assert_msg(table != NULL, "no Workloads table in the DOM");
	ck_assert_msg(strstr(table, "by reclaim stall time in the window, then memory pressure (PSI some)"),
		      "the Workloads table does not state its ranking rule:\n%s", table);
	seq = page_seq(dom, "workloads");
	fprintf(stderr, "Workloads table of window %llu\n", (unsigned long long)seq);
	for (int i = 0; i < 2; i++) {
		char open[400], href[450], what[400];
		char *row;
		struct wl_numbers want = wl_numbers_of(json, f.label[i], seq);

		snprintf(open, sizeof(open), "<tr class=\"workload\" data-cgroup=\"%s\">", f.label[i]);
		row = section(table, open, "</tr>");
		ck_assert_msg(row != NULL, "no Workloads row for %s:\n%s", f.label[i], table);
		snprintf(href, sizeof(href), "href=\"/cgroup?path=%s\"", f.label[i]);
		ck_assert_msg(strstr(row, href), "the row of %s does not link to its page (%s):\n%s", f.label[i], href,
			      row);
		snprintf(what, sizeof(what), "Workloads row %s", f.label[i]);
		assert_row(row, &want, what);
		/* Independent of the daemon: the limit the test wrote. */
		ck_assert_msg(want.limit == (i == 0 ? 64.0 : 256.0) * 1024 * 1024, "%s: limit %.0f", f.label[i],
			      want.limit);
		free(row);
	}
	free(table);
	free(dom);
	free(json);
	wl_fixture_stop(&f);
}
END_TEST

START_TEST(test_cgroup_page)
{
	static struct wl_numbers all[512];
	struct wl_fixture f;
	struct mw_http_response resp;
	char path[400], *dom, *json, *table;
	size_t n, i, checked = 0;
	uint64_t seq;

	require_program(CHROMIUM_PATH, "chromium");
	wl_fixture_start(&f);
	wait_for_stalls(&f);
	{
		/* Stalls can show in the second window: let the page have windows to compare. */
		struct timespec now;

		clock_gettime(CLOCK_REALTIME, &now);
		free(mw_window_after(f.d->port, (double)now.tv_sec + now.tv_nsec / 1e9 + 3.0, WL_TIMEOUT_MS));
	}

	/* Strict query: a path not exported is a 404 page; junk is a 400. */
	ck_assert_int_eq(mw_http_get(f.d->port, "/cgroup?path=/no-such-cgroup-here", &resp), 0);
	ck_assert_msg(resp.status == 404 && strstr(resp.body, "No such cgroup"), "unknown path: status %d", resp.status);
	mw_http_response_free(&resp);
	for (const char *const *bad = (const char *const[]){ "/cgroup", "/cgroup?path=", "/cgroup?path=a",
							    "/cgroup?path=/a/../b", "/cgroup?path=/a%00b",
							    "/cgroup?path=/a&path=/b", "/cgroup?path=/a&x=1", NULL };
	     *bad; bad++) {
		ck_assert_int_eq(mw_http_get(f.d->port, *bad, &resp), 0);
		ck_assert_msg(resp.status == 400, "GET %s: status %d, not 400", *bad, resp.status);
		mw_http_response_free(&resp);
	}

	snprintf(path, sizeof(path), "/cgroup?path=%s", f.label[0]);
	dom = dump(f.d->port, path, "wl-page");
	json = wl_fetch_windows(f.d->port, "page");
	seq = page_seq(dom, "cgroup");
	ck_assert_msg(strstr(dom, "<svg class=\"chart\""), "no chart on %s", path);
	ck_assert_msg(strstr(dom, "data-series=\"usage\""), "no usage series on %s", path);
	table = section(dom, "<table id=\"cgroup-windows\"", "</table>");
	ck_assert_msg(table != NULL, "no table of windows on %s", path);
	n = wl_numbers_all(json, f.label[0], all, sizeof(all) / sizeof(all[0]));
	for (i = 0; i < n; i++) {
		char open[96], what[450], *row;

		if (all[i].seq > seq || !all[i].has_prev)
			continue; /* newer than the page, or its changes unknown to the answer */
		snprintf(open, sizeof(open), "<tr class=\"window\" data-seq=\"%llu\">", (unsigned long long)all[i].seq);
		row = section(table, open, "</tr>");
		if (!row) {
			/* The table holds the newest CGROUP_TABLE_WINDOWS (60) before the page's. */
			ck_assert_msg(seq - all[i].seq >= 60, "window %llu missing from the table of %s",
				      (unsigned long long)all[i].seq, path);
			continue;
		}
		snprintf(what, sizeof(what), "%s window row", path);
		assert_row(row, &all[i], what);
		free(row);
		checked++;
	}
	fprintf(stderr, "%s: %zu windows up to %llu equal /api/v1/windows\n", path, checked, (unsigned long long)seq);
	ck_assert_msg(checked >= 4, "only %zu windows of %s could be compared", checked, path);
	free(table);
	free(dom);
	free(json);
	wl_fixture_stop(&f);
}
END_TEST

void ui_workloads_add(Suite *s)
{
	suite_add_tcase(s, ui_tcase("workloads_table", test_workloads_table));
	suite_add_tcase(s, ui_tcase("cgroup_page", test_cgroup_page));
}
