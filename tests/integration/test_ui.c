// SPDX-License-Identifier: GPL-2.0
/* The status page at GET / end to end, rendered by a real browser (headless
 * Chromium: screenshot and DOM), with a process whose name is markup. Needs
 * root (the daemon loads BPF); without it, exits 77. Chromium is required, not
 * optional: without it the tests fail and say which Debian package is
 * missing. The terminal view, memwatch-top, is tested in test_top.c; the
 * Workloads table and the cgroup pages in ui_workloads.c.
 *
 * Every test is bounded and undoes what it creates (uitest.h: the journal).
 * Processes a test starts die with it (PR_SET_PDEATHSIG) and are only ever
 * signalled by the PID (or process group) it got from fork(). */
#include <check.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>
#include "uitest.h"
#include "workloads_test.h"

#ifndef CHROMIUM_PATH
#define CHROMIUM_PATH "/usr/bin/chromium"
#endif

#define CHROMIUM_TIMEOUT_MS 90000
#define PAGE_TIMEOUT_MS 30000

/* 15 bytes: all of it fits in a task's comm. */
#define MARKUP_NAME "<script>alert(1"
#define MARKUP_ESCAPED "&lt;script&gt;alert(1"

/* 500 ms windows, each ending at its length; every series of the faults collector, so that the test's own
 * processes are exported whatever else runs on the host; a process walk every
 * fourth window only, so that most pages fall between two walks. */
static const char ui_config[] = "# memwatchd UI tests\n"
				"[daemon]\n"
				"window = 500ms\n"
				"quiet_read_interval = 0\n"
				"\n"
				"[collector.memavail]\n"
				"method = procfs\n"
				"\n"
				"[collector.faults]\n"
				"top_k = 1000\n"
				"walk_interval = 4\n"
				"walk_faults = 1099511627776\n";

static char *strcasestr_n(const char *hay, const char *needle)
{
	size_t n = strlen(needle);

	for (; *hay; hay++)
		if (strncasecmp(hay, needle, n) == 0)
			return (char *)hay;
	return NULL;
}

/* ---- the daemon's page ---- */

static char *get_page(struct mw_daemon *d)
{
	struct mw_http_response resp;
	char *body;
	int r = mw_http_get(d->port, "/", &resp);

	ck_assert_msg(r == 0 && resp.status == 200, "GET / on port %d: r=%d status %d", d->port, r, resp.status);
	body = resp.body;
	resp.body = NULL;
	mw_http_response_free(&resp);
	return body;
}

/* "Window 0.5 s, N windows shown" on the status page. */
static size_t windows_shown(const char *html)
{
	const char *p = strstr(html, "<p>Window ");
	double w;
	size_t n;

	if (!p || sscanf(p, "<p>Window %lf s, %zu windows shown", &w, &n) != 2)
		return 0;
	return n;
}

/* Polls GET / until it holds at least min_windows windows and every needle. */
static char *wait_page(struct mw_daemon *d, size_t min_windows, const char *const *needles, int timeout_ms)
{
	int64_t deadline = mw_mono_ms() + timeout_ms;

	for (;;) {
		char *html = get_page(d);
		bool ok = windows_shown(html) >= min_windows;
		const char *const *n;

		for (n = needles; ok && n && *n; n++)
			ok = strstr(html, *n) != NULL;
		if (ok)
			return html;
		if (mw_mono_ms() >= deadline) {
			fprintf(stderr, "---- GET / at the time limit ----\n%s\n----\n", html);
			free(html);
			return NULL;
		}
		free(html);
		mw_sleep_ms(250);
	}
}

/* Every collector the daemon reports, from memwatch_collector_info in /metrics. */
static size_t collectors_of(struct mw_daemon *d, char names[][64], size_t max)
{
	char *body = mw_scrape(d->port), *line, *save = NULL;
	size_t n = 0;

	ck_assert_msg(body != NULL, "GET /metrics failed");
	for (line = strtok_r(body, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char labels[1024];
		const char *open = line + strlen("memwatch_collector_info{"), *close;

		if (strncmp(line, "memwatch_collector_info{", strlen("memwatch_collector_info{")) != 0)
			continue;
		close = strrchr(line, '}');
		if (!close || close < open || (size_t)(close - open) >= sizeof(labels) || n == max)
			continue;
		memcpy(labels, open, (size_t)(close - open));
		labels[close - open] = '\0';
		if (mw_label(labels, "collector", names[n], sizeof(names[n])))
			n++;
	}
	free(body);
	return n;
}

/* ---- running Chromium ---- */

/* chromium --headless ... <what> URL (path on the daemon) with a fresh
 * profile; returns the path of its stdout (malloc'd); asserts it exited 0. */
char *chromium(int port, const char *path, const char *what, const char *tag)
{
	char profile[400], out[450], err[450], url[512], *tail;
	char user_data[450];
	const char *argv[32];
	size_t n = 0;
	int st;

	snprintf(profile, sizeof(profile), "%s/chromium-%s.XXXXXX", mw_tmp_root(), tag);
	ck_assert_msg(mkdtemp(profile) != NULL, "mkdtemp %s: %s", profile, strerror(errno));
	snprintf(user_data, sizeof(user_data), "--user-data-dir=%s", profile);
	snprintf(out, sizeof(out), "%s.stdout", profile);
	snprintf(err, sizeof(err), "%s.stderr", profile);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", port, path);
	argv[n++] = CHROMIUM_PATH;
	argv[n++] = "--headless";
	argv[n++] = "--no-sandbox";
	argv[n++] = "--disable-gpu";
	argv[n++] = "--disable-background-networking";
	argv[n++] = "--disable-component-update";
	argv[n++] = "--disable-sync";
	argv[n++] = "--no-first-run";
	argv[n++] = user_data;
	argv[n++] = what;
	argv[n++] = "--window-size=900,1600";
	argv[n++] = url;
	argv[n] = NULL;

	st = run_bounded(argv, out, err, profile, CHROMIUM_TIMEOUT_MS);
	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		tail = mw_read_file(err, NULL);
		fprintf(stderr, "---- chromium %s stderr ----\n%s\n----\n", what, tail ? tail : "");
		free(tail);
	}
	ck_assert_msg(st != -1, "chromium %s %s did not finish within %d ms (killed)", what, url, CHROMIUM_TIMEOUT_MS);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "chromium %s %s ended with status 0x%x (stderr above)", what,
		      url, st);
	return strdup(out);
}

static struct mw_daemon *start_ui_daemon(void)
{
	return start_daemon_with(ui_config);
}

/* ---- PNG ---- */

struct png_info {
	uint32_t width, height;
	size_t idat_bytes;
	unsigned idat_byte_values; /* distinct byte values in the compressed image data */
	size_t colors;             /* distinct RGB colours */
	double top_share;          /* share of the most frequent colour (the background) */
	size_t near[2];            /* pixels close to the two series colours asked for */
};

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int paeth(int a, int b, int c)
{
	int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);

	return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

static bool near_color(const unsigned char *px, uint32_t rgb)
{
	int i;

	for (i = 0; i < 3; i++)
		if (abs((int)px[i] - (int)((rgb >> (16 - 8 * i)) & 0xff)) > 24)
			return false;
	return true;
}

/* Walks the chunks (CRCs checked), inflates and unfilters the image (8-bit
 * RGB or RGBA, not interlaced) and counts its colours. NULL or the reason. */
static const char *png_analyze(const unsigned char *buf, size_t len, const uint32_t want[2], struct png_info *info)
{
	static const unsigned char sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
	unsigned char *idat = NULL, *raw = NULL, *prev, *cur, *bitmap = NULL;
	bool seen[256] = { false }, ihdr = false, iend = false;
	unsigned bpp = 0, *counts = NULL, top = 0;
	size_t pos = 8, stride = 0, y, x;
	uLongf raw_len;
	const char *why = NULL;

	memset(info, 0, sizeof(*info));
	if (len < 8 || memcmp(buf, sig, 8) != 0)
		return "no PNG signature";
	while (!iend) {
		uint32_t clen, crc;
		const unsigned char *type, *data;

		if (len - pos < 12)
			return "truncated chunk";
		clen = be32(buf + pos);
		if (clen > len - pos - 12)
			return "chunk longer than the file";
		type = buf + pos + 4;
		data = type + 4;
		crc = (uint32_t)crc32(crc32(0L, Z_NULL, 0), type, clen + 4);
		if (crc != be32(data + clen)) {
			why = "chunk CRC mismatch";
			goto out;
		}
		if (!ihdr && memcmp(type, "IHDR", 4) != 0) {
			why = "first chunk is not IHDR";
			goto out;
		}
		if (memcmp(type, "IHDR", 4) == 0) {
			if (clen != 13 || ihdr) {
				why = "bad IHDR";
				goto out;
			}
			ihdr = true;
			info->width = be32(data);
			info->height = be32(data + 4);
			if (data[8] != 8 || (data[9] != 2 && data[9] != 6) || data[10] || data[11] || data[12]) {
				why = "not 8-bit RGB/RGBA, non-interlaced";
				goto out;
			}
			bpp = data[9] == 6 ? 4 : 3;
			if (!info->width || !info->height || info->width > 10000 || info->height > 10000) {
				why = "implausible size";
				goto out;
			}
			stride = (size_t)info->width * bpp;
		} else if (memcmp(type, "IDAT", 4) == 0) {
			unsigned char *more = realloc(idat, info->idat_bytes + clen + 1);

			if (!more) {
				why = "out of memory";
				goto out;
			}
			idat = more;
			memcpy(idat + info->idat_bytes, data, clen);
			info->idat_bytes += clen;
			for (x = 0; x < clen; x++)
				seen[data[x]] = true;
		} else if (memcmp(type, "IEND", 4) == 0) {
			iend = true;
		}
		pos += 12 + clen;
	}
	if (pos != len) {
		why = "bytes after IEND";
		goto out;
	}
	for (x = 0; x < 256; x++)
		info->idat_byte_values += seen[x];
	if (!info->idat_bytes) {
		why = "no image data";
		goto out;
	}
	raw_len = (uLongf)((stride + 1) * info->height);
	raw = malloc(raw_len + 1);
	bitmap = calloc(1, 1u << 21); /* one bit per 24-bit colour */
	counts = calloc(1u << 18, sizeof(*counts)); /* 6 bits a channel: #fafafa is not #ffffff */
	if (!raw || !bitmap || !counts) {
		why = "out of memory";
		goto out;
	}
	if (uncompress(raw, &raw_len, idat, info->idat_bytes) != Z_OK || raw_len != (stride + 1) * info->height) {
		why = "image data does not inflate to width x height";
		goto out;
	}
	prev = NULL;
	for (y = 0; y < info->height; y++) {
		unsigned char filter = raw[y * (stride + 1)];

		cur = raw + y * (stride + 1) + 1;
		if (filter > 4) {
			why = "bad scanline filter";
			goto out;
		}
		for (x = 0; x < stride; x++) {
			int a = x >= bpp ? cur[x - bpp] : 0, b = prev ? prev[x] : 0;
			int c = prev && x >= bpp ? prev[x - bpp] : 0, v = cur[x];

			switch (filter) {
			case 1: v += a; break;
			case 2: v += b; break;
			case 3: v += (a + b) / 2; break;
			case 4: v += paeth(a, b, c); break;
			default: break;
			}
			cur[x] = (unsigned char)v;
		}
		for (x = 0; x < stride; x += bpp) {
			uint32_t rgb = (uint32_t)cur[x] << 16 | (uint32_t)cur[x + 1] << 8 | cur[x + 2];
			unsigned q = (cur[x] >> 2) << 12 | (cur[x + 1] >> 2) << 6 | cur[x + 2] >> 2;

			if (!(bitmap[rgb >> 3] & (1u << (rgb & 7)))) {
				bitmap[rgb >> 3] |= (unsigned char)(1u << (rgb & 7));
				info->colors++;
			}
			counts[q]++;
			info->near[0] += near_color(cur + x, want[0]);
			info->near[1] += near_color(cur + x, want[1]);
		}
		prev = cur;
	}
	for (x = 0; x < 1u << 18; x++)
		if (counts[x] > top)
			top = counts[x];
	info->top_share = (double)top / ((double)info->width * info->height);
out:
	free(idat);
	free(raw);
	free(bitmap);
	free(counts);
	if (!why && !ihdr)
		why = "no IHDR";
	return why;
}

/* ---- the rendered DOM ---- */

/* The tag starting at p ("<name ..."), copied without the brackets. */
static bool tag_text(const char *p, char *buf, size_t len)
{
	const char *end = strchr(p, '>');

	if (!end || (size_t)(end - p) >= len)
		return false;
	memcpy(buf, p, (size_t)(end - p));
	buf[end - p] = '\0';
	return true;
}

static bool attr(const char *tag, const char *name, char *buf, size_t len)
{
	char key[64];
	const char *p, *end;

	snprintf(key, sizeof(key), " %s=\"", name);
	p = strstr(tag, key);
	if (!p)
		return false;
	p += strlen(key);
	end = strchr(p, '"');
	if (!end || (size_t)(end - p) >= len)
		return false;
	memcpy(buf, p, (size_t)(end - p));
	buf[end - p] = '\0';
	return true;
}

/* Coordinate pairs "x,y x,y ..." inside the chart's viewBox; -1 if malformed. */
static int point_pairs(const char *points)
{
	const char *p = points;
	int n = 0;

	for (;;) {
		char *end;
		double x, y;

		while (*p == ' ')
			p++;
		if (!*p)
			return n;
		x = strtod(p, &end);
		if (end == p || *end != ',')
			return -1;
		p = end + 1;
		y = strtod(p, &end);
		if (end == p || (*end && *end != ' '))
			return -1;
		p = end;
		if (!isfinite(x) || !isfinite(y) || x < 0 || x > 720 || y < 0 || y > 150)
			return -1;
		n++;
	}
}

struct dom_info {
	int chart_svgs;
	int polylines;       /* class="series" */
	int drawn_polylines; /* ... with at least two points */
	bool available_drawn, allocated_drawn;
};

static void analyze_dom(const char *dom, struct dom_info *info)
{
	static char tag[1 << 16], value[1 << 16];
	const char *p;

	memset(info, 0, sizeof(*info));
	for (p = strstr(dom, "<svg"); p; p = strstr(p + 1, "<svg"))
		if (tag_text(p, tag, sizeof(tag)) && attr(tag, "class", value, sizeof(value)) &&
		    strcmp(value, "chart") == 0)
			info->chart_svgs++;
	for (p = strstr(dom, "<polyline"); p; p = strstr(p + 1, "<polyline")) {
		char series[64] = "";
		int pairs;

		ck_assert_msg(tag_text(p, tag, sizeof(tag)), "unterminated <polyline in the DOM");
		if (!attr(tag, "class", value, sizeof(value)) || strcmp(value, "series") != 0)
			continue;
		info->polylines++;
		attr(tag, "data-series", series, sizeof(series));
		ck_assert_msg(attr(tag, "points", value, sizeof(value)), "polyline %s without points: <%s>", series, tag);
		pairs = point_pairs(value);
		ck_assert_msg(pairs >= 0, "polyline %s: malformed or out-of-chart points \"%s\"", series, value);
		if (pairs >= 2) {
			info->drawn_polylines++;
			info->available_drawn |= strcmp(series, "available") == 0;
			info->allocated_drawn |= strcmp(series, "allocated") == 0;
		}
	}
}

/* The markup of the table with this caption, malloc'd, or NULL. */
static char *table_section(const char *html, const char *caption)
{
	char needle[128];
	const char *start, *end;

	snprintf(needle, sizeof(needle), "<caption>%s</caption>", caption);
	start = strstr(html, needle);
	if (!start)
		return NULL;
	end = strstr(start, "</table>");
	if (!end)
		return NULL;
	return strndup(start, (size_t)(end - start));
}


/* ==== a. the status page in Chromium ==== */

START_TEST(test_status_page_chromium)
{
	static const char *const known[] = { "meminfo", "psi", "kswapd", "reclaim", "alloc", "faults", "memavail", "oom" };
	static const uint32_t series_colors[2] = { 0x1f77b4, 0x2ca02c }; /* available, allocated */
	char names[64][64], png_path[450], *html, *out_path, *dom, *table;
	struct mw_daemon *d;
	struct dom_info di;
	struct png_info pi;
	unsigned char *png;
	size_t n_collectors, png_len, i, k;
	const char *why;
	pid_t worker;

	require_program(CHROMIUM_PATH, "chromium");
	d = start_ui_daemon();
	/* Some activity: page allocations and faults for the charts and tables. */
	worker = spawn_worker("mw-ui-activity", WORK_TOUCH, NULL, NULL);
	html = wait_page(d, 8, (const char *const[]){ "mw-ui-activity (", NULL }, PAGE_TIMEOUT_MS);
	ck_assert_msg(html != NULL, "GET / did not show 8 windows and the activity worker within %d ms", PAGE_TIMEOUT_MS);
	free(html);

	/* The screenshot: a real PNG of the requested size, with the charts drawn in it. */
	snprintf(png_path, sizeof(png_path), "%s/page.png", mw_tmp_root());
	{
		char arg[500];

		snprintf(arg, sizeof(arg), "--screenshot=%s", png_path);
		unlink(png_path);
		out_path = chromium(d->port, "/", arg, "shot");
		free(out_path);
	}
	png = (unsigned char *)mw_read_file(png_path, &png_len);
	ck_assert_msg(png != NULL, "chromium wrote no screenshot at %s", png_path);
	ck_assert_msg(png_len > 20 * 1024, "the screenshot is only %zu bytes: a blank page?", png_len);
	why = png_analyze(png, png_len, series_colors, &pi);
	ck_assert_msg(why == NULL, "%s is not a valid PNG: %s", png_path, why);
	fprintf(stderr, "screenshot: %ux%u, %zu bytes, %zu of image data (%u byte values), %zu colours, top colour %.1f%%, "
		"%zu + %zu pixels in the series colours\n",
		pi.width, pi.height, png_len, pi.idat_bytes, pi.idat_byte_values, pi.colors, pi.top_share * 100, pi.near[0],
		pi.near[1]);
	ck_assert_msg(pi.width == 900 && pi.height == 1600, "screenshot is %ux%u, not 900x1600", pi.width, pi.height);
	ck_assert_msg(pi.idat_bytes > 16 * 1024 && pi.idat_byte_values >= 250,
		      "the screenshot's image data is %zu bytes with %u distinct byte values: too uniform to be the page",
		      pi.idat_bytes, pi.idat_byte_values);
	ck_assert_msg(pi.colors >= 64, "the screenshot has %zu distinct colours: blank or nearly", pi.colors);
	ck_assert_msg(pi.top_share < 0.9, "%.1f%% of the screenshot is one colour: blank or nearly", pi.top_share * 100);
	ck_assert_msg(pi.near[0] >= 100, "only %zu pixels in the colour of the available-memory line (#1f77b4)",
		      pi.near[0]);
	ck_assert_msg(pi.near[1] >= 100, "only %zu pixels in the colour of the allocation-rate line (#2ca02c)",
		      pi.near[1]);
	free(png);

	/* The DOM as the browser built it. */
	out_path = chromium(d->port, "/", "--dump-dom", "dom");
	dom = mw_read_file(out_path, NULL);
	free(out_path);
	ck_assert_msg(dom && strstr(dom, "</html>"), "chromium --dump-dom gave no document");
	analyze_dom(dom, &di);
	ck_assert_msg(di.chart_svgs >= 4, "%d <svg class=\"chart\"> in the DOM, expected at least 4", di.chart_svgs);
	ck_assert_msg(di.drawn_polylines >= 4,
		      "%d of %d <polyline class=\"series\"> have two or more points, expected at least 4",
		      di.drawn_polylines, di.polylines);
	ck_assert_msg(di.available_drawn, "the available-memory series has fewer than two points");
	ck_assert_msg(di.allocated_drawn, "the allocation-rate series has fewer than two points");

	/* Every collector the daemon runs is in the collectors table. */
	n_collectors = collectors_of(d, names, 64);
	for (k = 0; k < sizeof(known) / sizeof(known[0]); k++) {
		for (i = 0; i < n_collectors && strcmp(names[i], known[k]) != 0; i++)
			;
		ck_assert_msg(i < n_collectors, "collector %s not in memwatch_collector_info", known[k]);
	}
	table = table_section(dom, "Collectors");
	ck_assert_msg(table != NULL, "no Collectors table in the DOM");
	for (i = 0; i < n_collectors; i++) {
		char cell[100];

		snprintf(cell, sizeof(cell), "<td>%s</td>", names[i]);
		ck_assert_msg(strstr(table, cell), "collector %s missing from the Collectors table:\n%s", names[i], table);
	}
	free(table);
	free(dom);

	stop_worker(worker);
	mw_assert_clean_stop(d);
}
END_TEST

/* ==== b. markup in a process name is text ==== */

START_TEST(test_markup_in_comm)
{
	char label[64], *html, *out_path, *dom, *table;
	struct mw_daemon *d;
	pid_t worker;

	require_program(CHROMIUM_PATH, "chromium");
	d = start_ui_daemon();
	/* A process that faults a lot, so that it tops the minor-faults table. */
	worker = spawn_worker(MARKUP_NAME, WORK_TOUCH, NULL, NULL);
	snprintf(label, sizeof(label), "<td>%s (%d)</td>", MARKUP_ESCAPED, (int)worker);
	html = wait_page(d, 2, (const char *const[]){ label, NULL }, PAGE_TIMEOUT_MS);
	if (!html) {
		html = get_page(d);
		ck_assert_msg(!strstr(html, MARKUP_NAME), "GET / has the process name as raw markup (page above)");
		ck_abort_msg("GET / did not list the worker as %s within %d ms (page above)", label, PAGE_TIMEOUT_MS);
	}
	table = table_section(html, "Minor faults");
	ck_assert_msg(table && strstr(table, label), "the worker is not in the Minor faults table");
	free(table);
	ck_assert_msg(!strstr(html, "<script>alert(1"), "GET / has the process name as raw markup");
	ck_assert_msg(!strcasestr_n(html, "<script"), "GET / has a <script> element");
	free(html);

	/* In the browser: text in a cell, no script element. The faults tables
	 * show the newest window that walked the processes, so the worker, the
	 * host's top faulter, is in every page (it was missing from windows
	 * between two walks before the page looked back for the walk). */
	out_path = chromium(d->port, "/", "--dump-dom", "markup");
	dom = mw_read_file(out_path, NULL);
	free(out_path);
	ck_assert_msg(dom && strstr(dom, "</html>"), "chromium --dump-dom gave no document");
	ck_assert_msg(!strcasestr_n(dom, "<script"), "the rendered DOM has a <script> element");
	table = table_section(dom, "Minor faults");
	ck_assert_msg(table && strstr(table, MARKUP_ESCAPED),
		      "the rendered DOM does not show the process name as text; its Minor faults table:\n%s",
		      table ? table : "(none)");
	free(table);
	free(dom);

	stop_worker(worker);
	mw_assert_clean_stop(d);
}
END_TEST

static Suite *ui_suite(void)
{
	Suite *s = suite_create("ui");

	suite_add_tcase(s, ui_tcase("status_page", test_status_page_chromium));
	suite_add_tcase(s, ui_tcase("markup", test_markup_in_comm));
	ui_workloads_add(s);
	return s;
}

int main(void)
{
	return ui_main(ui_suite(), (const char *const[]){ MEMWATCHD_PATH, NULL });
}
