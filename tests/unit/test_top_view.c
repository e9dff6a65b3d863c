/* SPDX-License-Identifier: GPL-2.0 */
/* memwatch-top's screen without a terminal: ncurses draws into its own
 * screen (output to /dev/null), the test reads it back cell by cell. The
 * windows and events are made here with known numbers, so every expectation
 * is the test's own (sizes 80x24 and 200x60, the order of the tables, the
 * rows that fit), never the view's arithmetic. */
#include <check.h>
#include <curses.h>
#include <jansson.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "view.h"

#define N_PROCS 20
#define N_CGROUPS 12
#define N_FAULTERS 30
#define N_KILLS 5

static SCREEN *screen;
static FILE *out, *in;

/* ---- term_safe and the chart's history: no terminal needed ---- */

START_TEST(test_term_safe)
{
	char buf[64];

	ck_assert_str_eq(term_safe(buf, sizeof(buf), "\x1b[2Jmw", true), "?[2Jmw");
	ck_assert_str_eq(term_safe(buf, sizeof(buf), "a\tb\nc\x7f", true), "a?b?c?");
	/* C1 CSI (U+009B) as UTF-8: a terminal may obey it like ESC [. */
	ck_assert_str_eq(term_safe(buf, sizeof(buf), "x\xc2\x9b" "2J", true), "x?2J");
	ck_assert_str_eq(term_safe(buf, sizeof(buf), "bad\xff\xfe", true), "bad??");
	ck_assert_str_eq(term_safe(buf, sizeof(buf), "caf\xc3\xa9", true), "caf\xc3\xa9");
	ck_assert_str_eq(term_safe(buf, sizeof(buf), "caf\xc3\xa9", false), "caf?");
	/* Cut between characters: 4 bytes of room, "é" needs 2 after "ab". */
	ck_assert_str_eq(term_safe(buf, 4, "ab\xc3\xa9", true), "ab");
	ck_assert_str_eq(term_safe(buf, sizeof(buf), NULL, true), "");
}
END_TEST

static json_t *windows_of_seqs(unsigned first, unsigned last)
{
	json_t *list = json_array();
	unsigned s;

	for (s = first; s <= last; s++)
		json_array_append_new(list, json_pack("{s:f, s:{s:f}}", "seq", (double)s, "available_bytes", "min",
						      (double)s * 1000));
	return json_pack("{s:o}", "windows", list);
}

START_TEST(test_chart_history)
{
	static struct chart_history h;
	json_t *w;

	memset(&h, 0, sizeof(h));
	w = windows_of_seqs(1, 3);
	ck_assert(!chart_history_add(&h, w));
	json_decref(w);
	ck_assert_uint_eq(h.n, 3);
	/* Overlapping the newest kept: no gap, nothing twice. */
	w = windows_of_seqs(3, 5);
	ck_assert(!chart_history_add(&h, w));
	json_decref(w);
	ck_assert_uint_eq(h.n, 5);
	ck_assert_uint_eq(h.seq[4], 5);
	ck_assert(h.min[4] == 5000);
	/* Right after the newest kept: no gap. */
	w = windows_of_seqs(6, 6);
	ck_assert(!chart_history_add(&h, w));
	json_decref(w);
	/* Windows 7 and 8 never seen: a gap. */
	w = windows_of_seqs(9, 10);
	ck_assert(chart_history_add(&h, w));
	json_decref(w);
	ck_assert_uint_eq(h.n, 8);
	/* Full: the oldest go. */
	w = windows_of_seqs(11, 11 + CHART_MAX);
	chart_history_add(&h, w);
	json_decref(w);
	ck_assert_uint_eq(h.n, CHART_MAX);
	ck_assert_uint_eq(h.seq[CHART_MAX - 1], 11 + CHART_MAX);
	ck_assert_uint_eq(h.seq[0], 12);
}
END_TEST

/* ---- a daemon's answers, made up ---- */

static json_t *series(json_t *labels, double value, double delta)
{
	return json_pack("{s:o, s:f, s:f}", "labels", labels, "value", value, "delta", delta);
}

/* Process i stalled (i + 1) ms in the window, cgroup i (i + 1) * 2 ms; faulter
 * i had 1000 + i minor and i major faults. Process 7 is named with an escape. */
static json_t *make_windows(void)
{
	json_t *procs = json_array(), *cgroups = json_array(), *minor = json_array(), *major = json_array();
	json_t *collectors = json_array(), *metrics, *list = json_array();
	static const char *const names[] = { "meminfo", "psi", "kswapd", "reclaim", "alloc", "faults", "memavail",
					     "oom", "cgroup" };
	char pid[16], comm[32], path[512];
	int i;

	for (i = 0; i < N_PROCS; i++) {
		snprintf(pid, sizeof(pid), "%d", 1000 + i);
		snprintf(comm, sizeof(comm), i == 7 ? "\x1b[2Jevil" : "stall%02d", i);
		json_array_append_new(procs,
				      series(json_pack("{s:s, s:s}", "pid", pid, "comm", comm), 1, (i + 1) * 1e-3));
	}
	json_array_append_new(procs, series(json_pack("{s:s, s:s}", "pid", "other", "comm", ""), 5, 5));
	for (i = 0; i < N_CGROUPS; i++) {
		/* The longest stall has a path longer than any table cell: its tail must show. */
		if (i == N_CGROUPS - 1)
			snprintf(path, sizeof(path), "/kubepods/%0400d/cg%02d", 0, i);
		else
			snprintf(path, sizeof(path), "/cg%02d", i);
		json_array_append_new(cgroups, series(json_pack("{s:s}", "cgroup", path), 1, (i + 1) * 2e-3));
	}
	for (i = 0; i < N_FAULTERS; i++) {
		snprintf(pid, sizeof(pid), "%d", 2000 + i);
		snprintf(comm, sizeof(comm), "fault%02d", i);
		json_array_append_new(minor, series(json_pack("{s:s, s:s}", "pid", pid, "comm", comm), 1e6, 1000 + i));
		json_array_append_new(major, series(json_pack("{s:s, s:s}", "pid", pid, "comm", comm), 1e3, i));
	}
	for (i = 0; i < 9; i++)
		json_array_append_new(collectors,
				      json_pack("{s:{s:s, s:s, s:s}, s:f}", "labels", "collector", names[i], "state",
						i == 6 ? "degraded" : "active", "mode", "procfs", "value", 1.0));
	metrics = json_pack("{s:o, s:o, s:o, s:o, s:o, s:[{s:f}], s:[{s:f}], s:[{s:f}]}",
			    "memwatch_process_direct_reclaim_seconds_total", procs,
			    "memwatch_cgroup_reclaim_seconds_total", cgroups,
			    "memwatch_process_minor_faults_total", minor,
			    "memwatch_process_major_faults_total", major,
			    "memwatch_collector_info", collectors,
			    "memwatch_memory_available_ratio", "value", 0.5,
			    "memwatch_window_seconds", "value", 1.0,
			    "memwatch_oom_kills_total", "value", (double)N_KILLS);
	json_array_append_new(list, json_pack("{s:f, s:{s:f, s:f, s:f}, s:o}", "seq", 1.0, "available_bytes", "last",
					      2048.0 * 1048576, "min", 2047.0 * 1048576, "max", 2049.0 * 1048576,
					      "metrics", metrics));
	return json_pack("{s:o}", "windows", list);
}

/* Kills of pids 3000..3004, oldest first, with pressure instants between:
 * the kernel's (memcg scope) at even pids, earlyoom's at odd ones. */
static json_t *make_events(void)
{
	json_t *list = json_array();
	char comm[32], when[32];
	int i;

	for (i = 0; i < N_KILLS; i++) {
		snprintf(comm, sizeof(comm), "victim%d", i);
		snprintf(when, sizeof(when), "2026-11-30T10:00:0%d.000000Z", i);
		json_array_append_new(list, json_pack("{s:s, s:s, s:f, s:s}", "kind", "memcg_reclaim", "time", when,
						      "pid", 1.0, "comm", "x"));
		json_array_append_new(list, json_pack("{s:s, s:s, s:f, s:s, s:s, s:f, s:s}", "kind",
						      i % 2 ? "userspace_kill" : "oom_kill", "time", when,
						      "pid", 3000.0 + i, "comm", comm, "cgroup", "/victims",
						      "available_bytes", 1048576.0, i % 2 ? "killer" : "scope",
						      i % 2 ? "earlyoom" : "memcg"));
	}
	return json_pack("{s:o}", "events", list);
}

/* ---- the screen ---- */

static void screen_setup(void)
{
	ck_assert_ptr_nonnull(setlocale(LC_ALL, "C.UTF-8"));
	out = fopen("/dev/null", "w");
	in = fopen("/dev/null", "r");
	ck_assert(out && in);
	screen = newterm("xterm", out, in);
	ck_assert_msg(screen != NULL, "newterm(xterm) failed: terminfo for xterm (ncurses-base) missing?");
}

static void screen_teardown(void)
{
	endwin();
	delscreen(screen);
	fclose(out);
	fclose(in);
}

/* Line y of the screen as UTF-8, trailing blanks dropped. */
static void line_at(int y, char *buf, size_t len)
{
	wchar_t w[512];
	size_t n;

	ck_assert_int_ne(mvinnwstr(y, 0, w, COLS < 511 ? COLS : 511), ERR);
	n = wcstombs(buf, w, len - 1);
	ck_assert(n != (size_t)-1);
	buf[n] = '\0';
	while (n > 0 && buf[n - 1] == ' ')
		buf[--n] = '\0';
}

/* The first line containing needle, or -1. */
static int find_line(const char *needle, char *buf, size_t len)
{
	int y;

	for (y = 0; y < LINES; y++) {
		line_at(y, buf, len);
		if (strstr(buf, needle))
			return y;
	}
	return -1;
}

static void draw_at(int lines, int cols, const struct chart_history *h)
{
	json_t *windows = make_windows(), *events = make_events();
	struct view v = {
		.url = "http://127.0.0.1:9577",
		.windows = windows,
		.events = events,
		.history = h,
		.utf8 = true,
	};

	ck_assert_int_eq(resizeterm(lines, cols), OK);
	view_draw(&v);
	json_decref(windows);
	json_decref(events);
}

/* Rows of the stalled-processes table: "pid comm" rows below its header. */
static int process_rows(char first[][32], int max)
{
	char buf[2048];
	int y = find_line("Top stalled processes", buf, sizeof(buf)), n = 0;

	ck_assert_int_ge(y, 0);
	for (y++; y < LINES && n < max; y++, n++) {
		line_at(y, buf, sizeof(buf));
		if (sscanf(buf, "%31s", first[n]) != 1 || strncmp(first[n], "10", 2) != 0)
			break;
	}
	return n;
}

static int chart_rows(void)
{
	char buf[2048];
	int y, n = 0;

	for (y = 0; y < LINES; y++) {
		line_at(y, buf, sizeof(buf));
		if (strstr(buf, "\xe2\x96\x88")) /* U+2588, a full block */
			n++;
	}
	return n;
}

START_TEST(test_80x24)
{
	static struct chart_history h;
	char buf[2048], pids[64][32];
	json_t *w = windows_of_seqs(1, 200);
	int n, y;

	chart_history_add(&h, w);
	json_decref(w);
	draw_at(24, 80, &h);
	line_at(0, buf, sizeof(buf));
	ck_assert_msg(strncmp(buf, "memwatch-top  http://127.0.0.1:9577", 35) == 0 && strstr(buf, "q: quit"),
		      "title: %s", buf);
	ck_assert_int_eq(find_line("Available 2.0 GiB (50.0%)   window min 2.0 GiB  max 2.0 GiB", buf, sizeof(buf)), 2);
	ck_assert_int_eq(chart_rows(), 1);
	/* Longest stall first: process 19 (20 ms), then 18 ... */
	n = process_rows(pids, 64);
	ck_assert_int_ge(n, 4);
	ck_assert_str_eq(pids[0], "1019");
	ck_assert_str_eq(pids[1], "1018");
	ck_assert_int_eq(find_line("1019    stall19", buf, sizeof(buf)) >= 0, 1);
	ck_assert_msg(strstr(buf, "20.0 ms"), "row of 1019: %s", buf);
	ck_assert_msg(strstr(buf, "  ...000") && strstr(buf, "0/cg11 ") && strstr(buf, "24.0 ms"), "first cgroup row: %s",
		      buf);
	ck_assert_int_eq(find_line("Top faulting processes", buf, sizeof(buf)), -1);
	/* Newest kill first. */
	y = find_line("Recent kills", buf, sizeof(buf));
	ck_assert_int_gt(y, 0);
	line_at(y + 1, buf, sizeof(buf));
	ck_assert_msg(strstr(buf, "3004") && strstr(buf, "victim4") && strstr(buf, "oom:memcg") && strstr(buf, "/victims"),
		      "first kill: %s", buf);
	line_at(y + 2, buf, sizeof(buf));
	ck_assert_msg(strstr(buf, "3003") && strstr(buf, "victim3") && strstr(buf, "earlyoom"), "second kill: %s", buf);
	ck_assert_int_ge(find_line("memavail:procfs(degraded)", buf, sizeof(buf)), 0);
	/* The collectors end on the last line: nothing was cut at the bottom. */
	line_at(LINES - 1, buf, sizeof(buf));
	ck_assert_msg(strstr(buf, "cgroup:procfs"), "last line: %s", buf);
}
END_TEST

START_TEST(test_200x60)
{
	static struct chart_history h;
	char buf[2048], pids[64][32];
	json_t *w = windows_of_seqs(1, 300);
	int n, y, i;

	chart_history_add(&h, w);
	json_decref(w);
	draw_at(60, 200, &h);
	line_at(0, buf, sizeof(buf));
	ck_assert_msg(strlen(buf) == 200 && strstr(buf, "q: quit"), "the title does not span 200 columns: %s", buf);
	ck_assert_int_gt(chart_rows(), 1);
	/* All 20 stalled processes fit, in order; "other" is not one. */
	n = process_rows(pids, 64);
	ck_assert_int_eq(n, N_PROCS);
	for (i = 0; i < N_PROCS; i++) {
		char want[16];

		snprintf(want, sizeof(want), "%d", 1000 + N_PROCS - 1 - i);
		ck_assert_str_eq(pids[i], want);
	}
	/* The escape in a name is shown, not sent. */
	ck_assert_int_ge(find_line("1007    ?[2Jevil", buf, sizeof(buf)), 0);
	/* The third table: minor and major faults of the same process on a row. */
	y = find_line("Top faulting processes", buf, sizeof(buf));
	ck_assert_int_gt(y, 0);
	ck_assert_int_ge(find_line("2029    fault29", buf, sizeof(buf)), y + 1);
	{
		const char *p = strstr(buf, "2029    fault29");
		double minor, major;

		ck_assert(sscanf(p + strlen("2029    fault29"), "%lf %lf", &minor, &major) == 2);
		ck_assert(minor == 1029 && major == 29);
	}
	/* Every kill, newest first, with the available memory column. */
	y = find_line("Recent kills", buf, sizeof(buf));
	ck_assert_msg(strstr(buf, "available") && strstr(buf, " by "), "no available and by columns on a wide screen: %s",
		      buf);
	for (i = 0; i < N_KILLS; i++) {
		char want[16];

		line_at(y + 1 + i, buf, sizeof(buf));
		snprintf(want, sizeof(want), "victim%d", N_KILLS - 1 - i);
		ck_assert_msg(strstr(buf, want) && strstr(buf, "1.0 MiB") &&
				      strstr(buf, (N_KILLS - 1 - i) % 2 ? "earlyoom" : "oom:memcg"),
			      "kill %d: %s", i, buf);
	}
	/* One line of collectors, the last. */
	line_at(LINES - 1, buf, sizeof(buf));
	ck_assert_msg(strncmp(buf, "Collectors meminfo:", 19) == 0 && strstr(buf, "cgroup:procfs"), "last line: %s",
		      buf);
}
END_TEST

/* One window of the faults families: minor counts of pids, each {pid, value,
 * delta or NAN: none, as for a series the window before did not have}. */
static json_t *fault_window(double seq, double age, const double (*rows)[3], size_t n)
{
	json_t *minor = json_array(), *major = json_array();
	char pid[16];

	for (size_t i = 0; i < n; i++) {
		json_t *labels;

		snprintf(pid, sizeof(pid), "%.0f", rows[i][0]);
		labels = json_pack("{s:s, s:s}", "pid", pid, "comm", "w");

		json_array_append_new(minor, isnan(rows[i][2]) ? json_pack("{s:O, s:f}", "labels", labels, "value",
									    rows[i][1])
							       : series(json_incref(labels), rows[i][1], rows[i][2]));
		json_array_append_new(major, json_pack("{s:o, s:f}", "labels", labels, "value", 0.0));
	}
	return json_pack("{s:f, s:{s:f, s:f, s:f}, s:{s:o, s:o, s:[{s:f}], s:[{s:f}]}}", "seq", seq,
			 "available_bytes", "last", 1.0, "min", 1.0, "max", 1.0, "metrics",
			 "memwatch_process_minor_faults_total", minor, "memwatch_process_major_faults_total", major,
			 "memwatch_fault_process_age_seconds", "value", age, "memwatch_window_seconds", "value", 1.0);
}

/* The process walk runs every few windows: the faults table shows the newest
 * window that walked, and a process new in it counts from its last export in
 * the windows before (pid 11: 90 against 60) or from zero (pid 12). */
START_TEST(test_faults_of_the_last_walk)
{
	const double w0[][3] = { { 11, 60, NAN }, { 10, 5, NAN } };
	const double w1[][3] = { { 10, 5, 0 } };
	const double w2[][3] = { { 10, 25, 20 }, { 11, 90, NAN }, { 12, 40, NAN } };
	const double w3[][3] = { { 10, 25, 0 }, { 11, 90, 0 }, { 12, 40, 0 } };
	json_t *list = json_array(), *windows, *events = json_pack("{s:[]}", "events");
	char buf[2048];
	struct view v = { .url = "http://127.0.0.1:9577", .utf8 = true };
	double minor = 0;
	const char *p;

	json_array_append_new(list, fault_window(1, 0, w0, 2));
	json_array_append_new(list, fault_window(2, 1, w1, 1));
	json_array_append_new(list, fault_window(3, 0, w2, 3));
	json_array_append_new(list, fault_window(4, 1, w3, 3));
	windows = json_pack("{s:o}", "windows", list);
	v.windows = windows;
	v.events = events;
	ck_assert_int_eq(view_windows_since_fault_walk(windows), 1);
	ck_assert_int_eq(resizeterm(60, 200), OK);
	view_draw(&v);
	ck_assert_int_ge(find_line("12      w", buf, sizeof(buf)), 0);
	p = strstr(buf, "12      w");
	ck_assert(sscanf(p + strlen("12      w"), "%lf", &minor) == 1 && minor == 40);
	ck_assert_int_ge(find_line("11      w", buf, sizeof(buf)), 0);
	p = strstr(buf, "11      w");
	ck_assert(sscanf(p + strlen("11      w"), "%lf", &minor) == 1 && minor == 30);
	ck_assert_int_ge(find_line("10      w", buf, sizeof(buf)), 0);
	p = strstr(buf, "10      w");
	ck_assert(sscanf(p + strlen("10      w"), "%lf", &minor) == 1 && minor == 20);
	json_decref(windows);
	json_decref(events);
}
END_TEST

START_TEST(test_problem_wraps)
{
	struct view v = {
		.url = "https://db1.example.org:9577",
		.problem_title = "Authentication failed",
		.problem = "HTTP 401 from db1.example.org:9577: wrong user or password (--user, --password-file)",
		.utf8 = true,
	};
	char buf[2048], all[4096] = "";
	int y;

	ck_assert_int_eq(resizeterm(24, 40), OK);
	view_draw(&v);
	for (y = 2; y < 8; y++) {
		line_at(y, buf, sizeof(buf));
		ck_assert_uint_le(strlen(buf), 40);
		strcat(all, buf);
		strcat(all, " ");
	}
	ck_assert_msg(strstr(all, "Authentication failed: HTTP 401 from") && strstr(all, "wrong user or password"),
		      "the message is not all there: %s", all);
	ck_assert_int_ge(find_line("Retrying every second.", buf, sizeof(buf)), 3);
}
END_TEST

/* Any size, however small or large, draws within it (ASan watches the rest). */
START_TEST(test_any_size)
{
	static const int sizes[][2] = { { 1, 1 }, { 3, 10 }, { 5, 20 }, { 10, 30 }, { 24, 79 }, { 24, 149 },
					{ 24, 150 }, { 100, 300 }, { 300, 500 } };
	static struct chart_history h;
	json_t *w = windows_of_seqs(1, 600);
	char buf[2048];
	size_t i;

	chart_history_add(&h, w);
	json_decref(w);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		draw_at(sizes[i][0], sizes[i][1], &h);
		ck_assert_int_eq(LINES, sizes[i][0]);
		ck_assert_int_eq(COLS, sizes[i][1]);
		line_at(0, buf, sizeof(buf));
		ck_assert_msg(strncmp(buf, "memwatch-top", sizes[i][1] < 12 ? (size_t)sizes[i][1] : 12) == 0,
			      "%dx%d: title \"%s\"", sizes[i][1], sizes[i][0], buf);
	}
}
END_TEST

/* ---- the Workloads screen (key w) ---- */

/* Cgroup i: a stall of s[i] ms (< 0: none), PSI p[i] ms, usage ratio r[i]
 * (< 0: no limit); the ranking must follow stall, then PSI, then ratio. */
static json_t *workloads_window(void)
{
	static const double st[] = { -1, 5, -1, -1, 9, -1, -1, -1, -1, -1, -1, -1, -1 };
	static const double ps[] = { -1, -1, 3, 7, -1, -1, -1, -1, -1, -1, -1, -1, -1 };
	static const double ra[] = { 0.1, 0.2, 0.3, 0.4, 0.5, 0.95, -1, 0.6, 0.7, 0.05, 0.01, 0.02, 0.03 };
	json_t *info = json_array(), *usage = json_array(), *limit = json_array(), *ratio = json_array();
	json_t *stall = json_array(), *psi = json_array(), *metrics, *list = json_array();
	char path[64];

	for (size_t i = 0; i < sizeof(ra) / sizeof(ra[0]); i++) {
		snprintf(path, sizeof(path), i == 6 ? "/esc\x1b[2J%02zu" : "/wl%02zu", i);
		json_array_append_new(info, series(json_pack("{s:s, s:s}", "cgroup", path, "unit", "u.service"), 1, 0));
		json_array_append_new(usage, json_pack("{s:{s:s}, s:f}", "labels", "cgroup", path, "value",
						       (double)(i + 1) * 1048576));
		if (ra[i] >= 0) {
			json_array_append_new(limit, json_pack("{s:{s:s}, s:f}", "labels", "cgroup", path, "value",
							       (double)(i + 1) * 1048576 / ra[i]));
			json_array_append_new(ratio, json_pack("{s:{s:s}, s:f}", "labels", "cgroup", path, "value", ra[i]));
		}
		if (st[i] >= 0)
			json_array_append_new(stall, series(json_pack("{s:s}", "cgroup", path), 1, st[i] * 1e-3));
		if (ps[i] >= 0)
			json_array_append_new(psi, series(json_pack("{s:s}", "cgroup", path), 1, ps[i] * 1e-3));
	}
	json_array_append_new(info, series(json_pack("{s:s}", "cgroup", "other"), 1, 0));
	metrics = json_pack("{s:o, s:o, s:o, s:o, s:o, s:o}", "memwatch_cgroup_info", info,
			    "memwatch_cgroup_memory_usage_bytes", usage, "memwatch_cgroup_memory_limit_bytes", limit,
			    "memwatch_cgroup_memory_usage_ratio", ratio, "memwatch_cgroup_reclaim_seconds_total", stall,
			    "memwatch_cgroup_pressure_memory_some_seconds_total", psi);
	json_array_append_new(list, json_pack("{s:f, s:f, s:o}", "seq", 42.0, "end", 1.5e9, "metrics", metrics));
	return json_pack("{s:o}", "windows", list);
}

START_TEST(test_workloads_screen)
{
	/* stall 9, 5; PSI 7, 3; then ratio .95 .7 .6 .1 .05 .03 */
	static const char *const order[] = { "/wl04", "/wl01", "/wl03", "/wl02", "/wl05",
					     "/wl08", "/wl07", "/wl00", "/wl09", "/wl12" };
	json_t *windows = workloads_window();
	struct view v = { .url = "http://127.0.0.1:9577", .windows = windows, .utf8 = true, .workloads = true };
	char buf[1024];
	int y, first;

	ck_assert_int_eq(resizeterm(40, 200), OK);
	view_draw(&v);
	ck_assert_msg(find_line("Workloads: window #42,", buf, sizeof(buf)) == 2, "no window line: %s", buf);
	first = find_line("CGROUP", buf, sizeof(buf)) + 1;
	ck_assert_msg(strstr(buf, "USED MiB") && strstr(buf, "NAMES"), "header: %s", buf);
	for (y = 0; y < 10; y++) {
		line_at(first + y, buf, sizeof(buf));
		ck_assert_msg(strncmp(buf, order[y], strlen(order[y])) == 0, "row %d is \"%s\", expected %s", y, buf,
			      order[y]);
	}
	line_at(first, buf, sizeof(buf));
	ck_assert_msg(strstr(buf, "u.service") && strstr(buf, " 5.0 ") && strstr(buf, " 9.0 "),
		      "row of /wl04 (5 MiB, 9 ms stall): %s", buf);
	line_at(first + 10, buf, sizeof(buf));
	ck_assert_msg(buf[0] == '\0', "more than 10 rows: %s", buf);
	ck_assert_msg(find_line("other", buf, sizeof(buf)) < 0, "\"other\" shown: %s", buf);
	/* Narrow: no names column, no bar; still drawn. */
	ck_assert_int_eq(resizeterm(24, 80), OK);
	view_draw(&v);
	ck_assert_msg(find_line("CGROUP", buf, sizeof(buf)) >= 0 && !strstr(buf, "NAMES"), "80 columns: %s", buf);
	json_decref(windows);
}
END_TEST

static Suite *top_view_suite(void)
{
	Suite *s = suite_create("top_view");
	TCase *tc = tcase_create("text");

	tcase_add_test(tc, test_term_safe);
	tcase_add_test(tc, test_chart_history);
	suite_add_tcase(s, tc);
	tc = tcase_create("screen");
	tcase_add_checked_fixture(tc, screen_setup, screen_teardown);
	tcase_add_test(tc, test_80x24);
	tcase_add_test(tc, test_200x60);
	tcase_add_test(tc, test_faults_of_the_last_walk);
	tcase_add_test(tc, test_problem_wraps);
	tcase_add_test(tc, test_any_size);
	tcase_add_test(tc, test_workloads_screen);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(top_view_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
