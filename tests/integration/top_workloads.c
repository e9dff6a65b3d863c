// SPDX-License-Identifier: GPL-2.0
/* memwatch-top's Workloads screen (key w) in tmux, against two memory
 * cgroups of the test's own: the rows shown for them must be the same
 * window's numbers of /api/v1/windows (read by python3, workloads_fixture.c),
 * in the screen's documented formats (MiB and ms with one decimal, whole
 * seconds and counts, "-" for none). The screen names its window. Part of
 * test_top. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "term.h"
#include "workloads_test.h"

#define WL_COLS 200
#define WL_LINES 50

/* As memwatch-top writes a number: "%.<prec>f" of v / scale, "-" for none. */
static const char *fixed(char *buf, size_t len, double v, double scale, int prec)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else if (isinf(v))
		snprintf(buf, len, "inf");
	else
		snprintf(buf, len, "%.*f", prec, v / scale);
	return buf;
}

/* The row of label: the columns after the path and the (empty) names. */
static void assert_top_row(const char *screen, const char *label, const struct wl_numbers *want)
{
	/* USED MiB, the bar, LIMIT MiB, USE%, ETA s, STALLS, STALL ms, PSI ms, OOM */
	static const struct {
		int field; /* of wl_field, -1: the bar */
		double scale;
		int prec;
	} cols[] = { { 0, 1048576.0, 1 }, { -1, 0, 0 }, { 2, 1048576.0, 1 }, { 1, 0.01, 1 }, { 3, 1, 0 },
		     { 4, 1, 0 },         { 5, 0.001, 1 }, { 6, 0.001, 1 },    { 7, 1, 0 } };
	char line[1024], *tok, *save = NULL;
	const char *start = strstr(screen, label), *end;
	size_t i;

	ck_assert_msg(start && (start == screen || start[-1] == '\n'), "no row of %s on the screen:\n%s", label, screen);
	end = strchr(start, '\n');
	snprintf(line, sizeof(line), "%.*s", end ? (int)(end - start) : (int)strlen(start), start);
	tok = strtok_r(line + strlen(label), " ", &save);
	for (i = 0; i < sizeof(cols) / sizeof(cols[0]); i++, tok = strtok_r(NULL, " ", &save)) {
		char expect[64];

		ck_assert_msg(tok != NULL, "the row of %s has only %zu columns: \"%.*s\"", label, i,
			      end ? (int)(end - start) : 200, start);
		if (cols[i].field < 0) {
			ck_assert_msg(tok[0] == '[' && strlen(tok) == 10, "the row of %s has no usage bar: \"%s\"", label,
				      tok);
			continue;
		}
		fixed(expect, sizeof(expect), wl_field(want, (size_t)cols[i].field), cols[i].scale, cols[i].prec);
		ck_assert_msg(strcmp(tok, expect) == 0,
			      "%s, window %llu: column %zu (%s) is \"%s\" on the screen, \"%s\" from /api/v1/windows",
			      label, (unsigned long long)want->seq, i, wl_classes[cols[i].field], tok, expect);
	}
	ck_assert_msg(tok == NULL, "the row of %s has more columns than expected: \"%s\"", label, tok);
}

START_TEST(test_top_workloads)
{
	struct wl_fixture f;
	char url[64], *screen, *json, *p;
	unsigned long long seq = 0;
	struct term t;
	bool found;
	int st;

	require_program(TMUX_PATH, "tmux");
	wl_fixture_start(&f);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", f.d->port);
	term_start(&t, "wl", WL_COLS, WL_LINES, (const char *const[]){ MEMWATCH_TOP_PATH, "--url", url, NULL });
	screen = term_wait(&t, (const char *const[]){ "Available ", NULL }, WL_TIMEOUT_MS, &found);
	ck_assert_msg(found, "memwatch-top did not show the daemon; screen:\n%s", screen);
	ck_assert_msg(strstr(screen, "w: workloads"), "the title does not offer key w:\n%s", screen);
	free(screen);

	st = tmux(&t, (const char *const[]){ "send-keys", "-t", "top", "w", NULL }, NULL);
	ck_assert_msg(st == 0, "tmux send-keys w failed (0x%x)", st);
	/* A window whose changes can be judged: the window before it is in
	 * /api/v1/windows too (the first windows have none; the screen then
	 * shows no change at all). Waited for, the screen redraws each window. */
	for (int64_t deadline = mw_mono_ms() + WL_TIMEOUT_MS;;) {
		struct wl_numbers all[128];
		size_t n;
		bool judged = false;

		screen = term_wait(&t, (const char *const[]){ "Workloads: window #", f.label[0], f.label[1], NULL },
				   WL_TIMEOUT_MS, &found);
		ck_assert_msg(found, "the Workloads screen did not show both cgroups; screen:\n%s", screen);
		/* The window named and the rows drawn come from one capture: one drawing. */
		p = strstr(screen, "Workloads: window #");
		ck_assert_msg(sscanf(p, "Workloads: window #%llu", &seq) == 1 && seq > 0, "no window number:\n%s",
			      screen);
		json = wl_fetch_windows(f.d->port, "top");
		n = wl_numbers_all(json, f.label[0], all, sizeof(all) / sizeof(all[0]));
		for (size_t i = 0; i < n; i++)
			judged |= all[i].seq == seq && all[i].has_prev;
		if (judged)
			break;
		ck_assert_msg(mw_mono_ms() < deadline, "no Workloads screen of a window with one before it in %d ms",
			      WL_TIMEOUT_MS);
		free(screen);
		free(json);
		mw_sleep_ms(500);
	}
	assert_fits(screen, WL_COLS, WL_LINES);
	ck_assert_msg(strstr(screen, "by reclaim stall time in the window, then PSI some"),
		      "the Workloads screen does not state its ranking:\n%s", screen);
	for (int i = 0; i < 2; i++) {
		struct wl_numbers want = wl_numbers_of(json, f.label[i], seq);

		assert_top_row(screen, f.label[i], &want);
	}
	fprintf(stderr, "memwatch-top's Workloads screen, window %llu, equals /api/v1/windows\n", seq);
	free(screen);
	free(json);

	/* w again: back to the main screen. */
	st = tmux(&t, (const char *const[]){ "send-keys", "-t", "top", "w", NULL }, NULL);
	ck_assert_msg(st == 0, "tmux send-keys w failed (0x%x)", st);
	screen = term_wait_for(&t, (const char *const[]){ "Available ", NULL }, "Workloads: window #", WL_TIMEOUT_MS,
			       &found);
	ck_assert_msg(found, "w did not go back to the main screen:\n%s", screen);
	free(screen);
	term_key_exits(&t, "q");
	wl_fixture_stop(&f);
}
END_TEST

void top_workloads_add(Suite *s)
{
	suite_add_tcase(s, ui_tcase("workloads", test_top_workloads));
}
