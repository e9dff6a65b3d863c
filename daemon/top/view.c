// SPDX-License-Identifier: GPL-2.0
/* The screen of memwatch-top, laid out for its current size: the fixed part
 * (available memory, trend, stalls) on top, then the chart (taller on a tall
 * terminal), the per-process and per-cgroup tables with as many rows as fit
 * (and a third table, faults, on a wide one), recent OOM kills, collectors. */
#include <curses.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <wchar.h>
#include "catalogue.h"
#include "human.h"
#include "macro.h"
#include "utf8.h"
#include "view.h"
#include "view_internal.h"

#define VALUE_WIDTH 10
#define TABLE_GAP 2
#define WIDE_COLS 150 /* room for a third table */
#define ROWS_MAX 256

const char *term_safe(char *buf, size_t len, const char *s, bool utf8)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t o = 0;

	while (*p && o + 1 < len) {
		size_t n = utf8_valid_len(p);

		if (n == 0 || *p < 0x20 || *p == 0x7f || (n == 2 && p[0] == 0xc2 && p[1] < 0xa0) || (n > 1 && !utf8)) {
			buf[o++] = '?';
			p += n ? n : 1;
			continue;
		}
		if (o + n >= len)
			break;
		memcpy(buf + o, p, n);
		o += n;
		p += n;
	}
	buf[o] = '\0';
	return buf;
}

/* ---- the JSON of one window ---- */

double num(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

const char *str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

const json_t *family(const json_t *window, const char *name)
{
	const json_t *f = json_object_get(json_object_get(window, "metrics"), name);

	return json_is_array(f) ? f : NULL;
}

static double metric(const json_t *window, const char *name, const char *field)
{
	const json_t *f = family(window, name);

	return f && json_array_size(f) ? num(json_array_get(f, 0), field) : NAN;
}

const json_t *last_window(const json_t *doc)
{
	const json_t *list = json_object_get(doc, "windows");
	size_t n = json_array_size(list);

	return n ? json_array_get(list, n - 1) : NULL;
}

/* The newest window whose process walk ran in it: walks are gated
 * ([collector.faults] walk_interval), and the windows in between repeat the
 * walk's figures with no delta. Its deltas are the faults since the walk
 * before. The last window when none in the list walked (or no age is
 * exported: every window walks). */
static size_t fault_walk_window(const json_t *doc)
{
	const json_t *list = json_object_get(doc, "windows");
	size_t n = json_array_size(list);

	for (size_t i = n; i > 0; i--) {
		double age = metric(json_array_get(list, i - 1), METRIC_NAME(MW_FAULT_PROCESS_AGE_SECONDS), "value");

		if (isnan(age) || age == 0)
			return i - 1;
	}
	return n ? n - 1 : 0;
}

int view_windows_since_fault_walk(const json_t *doc)
{
	const json_t *last = last_window(doc);
	double age = metric(last, METRIC_NAME(MW_FAULT_PROCESS_AGE_SECONDS), "value");
	double len = metric(last, METRIC_NAME(MW_WINDOW_SECONDS), "value");

	if (!last || !(age > 0) || !(len > 0))
		return 0;
	return age / len > 3600 ? 3600 : (int)(age / len + 0.5);
}

bool chart_history_add(struct chart_history *h, const json_t *windows)
{
	const json_t *list = json_object_get(windows, "windows");
	bool had = h->n > 0, first_new = true, gap = false;
	uint64_t newest = had ? h->seq[h->n - 1] : 0;
	size_t i;

	for (i = 0; i < json_array_size(list); i++) {
		const json_t *w = json_array_get(list, i);
		double seq = num(w, "seq");

		if (!(seq >= 0) || (h->n && (uint64_t)seq <= h->seq[h->n - 1]))
			continue;
		/* The first new window does not follow the newest kept: windows were missed. */
		if (first_new && had && (uint64_t)seq > newest + 1)
			gap = true;
		first_new = false;
		if (h->n == CHART_MAX) {
			memmove(h->seq, h->seq + 1, (CHART_MAX - 1) * sizeof(h->seq[0]));
			memmove(h->min, h->min + 1, (CHART_MAX - 1) * sizeof(h->min[0]));
			h->n--;
		}
		h->seq[h->n] = (uint64_t)seq;
		h->min[h->n] = num(json_object_get(w, "available_bytes"), "min");
		h->n++;
	}
	return gap;
}

/* ---- drawing helpers ---- */

/* Bytes of s that fit in cols columns (wide characters count two). */
static size_t fit(const char *s, int cols, int *used)
{
	mbstate_t st = { 0 };
	size_t o = 0, len = strlen(s);
	int w = 0;

	while (o < len) {
		wchar_t wc;
		size_t n = mbrtowc(&wc, s + o, len - o, &st);
		int cw;

		if (n == (size_t)-1 || n == (size_t)-2 || n == 0) {
			n = 1;
			cw = 1;
			memset(&st, 0, sizeof(st));
		} else {
			cw = wcwidth(wc);
			if (cw < 0)
				cw = 1;
		}
		if (w + cw > cols)
			break;
		w += cw;
		o += n;
	}
	if (used)
		*used = w;
	return o;
}

/* Text at (y, x), cut at the right edge; returns the column after it. */
int put(int y, int x, attr_t a, const char *s)
{
	int used = 0;
	size_t n;

	if (y < 0 || y >= LINES || x >= COLS)
		return x;
	n = fit(s, COLS - x, &used);
	attron(a);
	mvaddnstr(y, x, s, (int)n);
	attroff(a);
	return x + used;
}

int putf(int y, int x, attr_t a, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return put(y, x, a, buf);
}

/* Bytes and columns of the character at s (an invalid byte: one and one). */
static size_t char_step(const char *s, int *cols)
{
	mbstate_t st = { 0 };
	wchar_t wc;
	size_t n = mbrtowc(&wc, s, MB_CUR_MAX, &st);

	if (n == (size_t)-1 || n == (size_t)-2 || n == 0) {
		*cols = 1;
		return 1;
	}
	*cols = wcwidth(wc) < 0 ? 1 : wcwidth(wc);
	return n;
}

/* s in exactly width columns: cut, or padded with blanks; a path that does not
 * fit keeps its tail (the cgroup's own name) behind "...". */
void cell(char *buf, size_t len, const char *s, int width, bool keep_tail)
{
	int used = 0, total = 0;
	size_t n, o = 0, pad;

	if (len < 8) {
		buf[0] = '\0';
		return;
	}
	fit(s, 1 << 20, &total);
	if (keep_tail && total > width && width > 3) {
		while (*s && total > width - 3) {
			int w;

			s += char_step(s, &w);
			total -= w;
		}
		memcpy(buf, "...", 3);
		o = 3;
		width -= 3;
	}
	if (width < 0)
		width = 0;
	n = fit(s, width, &used);
	/* Never more than buf holds: fewer characters, then fewer blanks. */
	while (o + n + 1 > len && width > 0)
		n = fit(s, --width, &used);
	pad = (size_t)(width - used);
	if (o + n + pad + 1 > len)
		pad = len - 1 - o - n;
	memcpy(buf + o, s, n);
	o += n;
	memset(buf + o, ' ', pad);
	o += pad;
	buf[o] = '\0';
}

attr_t color(const struct view *v, short pair)
{
	return v->colors ? COLOR_PAIR(pair) : A_NORMAL;
}

/* ---- tables ---- */

struct row {
	char label[256];
	double value;
	const json_t *sample;
};

struct table {
	const char *title;
	struct row rows[ROWS_MAX];
	size_t n;
	const char *unit, *second_unit; /* column headers */
	bool seconds;         /* values are seconds, else counts */
	bool keep_tail;       /* labels are paths */
	const json_t *second; /* faults: the major family, shown beside minor */
	const char *second_name;
	/* faults: the answer's windows and the index of the one shown, for the
	 * series new in it (see delta_since_exported); NULL: none. */
	const json_t *windows;
	size_t at;
};

/* The delta of a counter sample s of family name in window `at` of the
 * answer: its "delta", or for a series the window before did not have (a
 * process that entered the exported set in this walk) its value against the
 * newest earlier window that had it, or against zero if none did (new since
 * then, or never exported in the windows fetched). */
static double delta_since_exported(const json_t *windows, size_t at, const char *name, const json_t *s,
				   const char *key)
{
	const json_t *list = json_object_get(windows, "windows");
	const char *want = str(json_object_get(s, "labels"), key);
	double d = num(s, "delta"), v = num(s, "value");

	if (!isnan(d) || !windows || at == 0)
		return d;
	for (size_t w = at; w > 0; w--) {
		const json_t *f = family(json_array_get(list, w - 1), name);

		for (size_t i = 0; i < json_array_size(f); i++) {
			const json_t *o = json_array_get(f, i);
			double old = num(o, "value");

			if (strcmp(str(json_object_get(o, "labels"), key), want) == 0 && !isnan(old))
				return v >= old ? v - old : v;
		}
	}
	return v;
}

static int cmp_row(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	return x->value < y->value ? 1 : x->value > y->value ? -1 : 0;
}

/* The series of a family with the largest "delta" in one window, "other" left out. */
static void table_fill(struct table *t, const json_t *window, const char *name, const char *key, bool utf8)
{
	const json_t *f = family(window, name);
	size_t i;

	t->n = 0;
	for (i = 0; i < json_array_size(f); i++) {
		const json_t *s = json_array_get(f, i), *labels = json_object_get(s, "labels");
		const char *k = str(labels, key);
		double d = delta_since_exported(t->windows, t->at, name, s, key);
		char a[24], b[256];
		size_t klen = strlen(k);
		struct row *r;

		if (strcmp(k, "other") == 0 || !(d > 0))
			continue;
		if (t->n == ROWS_MAX) {
			/* Keep the largest: replace the smallest kept. */
			qsort(t->rows, t->n, sizeof(t->rows[0]), cmp_row);
			if (d <= t->rows[t->n - 1].value)
				continue;
			t->n--;
		}
		r = &t->rows[t->n++];
		if (strcmp(key, "pid") == 0)
			snprintf(r->label, sizeof(r->label), "%-7s %s", term_safe(a, 8, k, utf8),
				 term_safe(b, 16, str(labels, "comm"), utf8));
		else /* a path: its tail is what tells it apart */
			snprintf(r->label, sizeof(r->label), "%s",
				 term_safe(b, sizeof(b), klen >= sizeof(b) ? k + klen - (sizeof(b) - 1) : k, utf8));
		r->value = d;
		r->sample = s;
	}
	qsort(t->rows, t->n, sizeof(t->rows[0]), cmp_row);
}

/* The delta of the series of the table's second family whose label key
 * equals that of sample s. */
static double delta_of_same(const struct table *t, const char *name, const json_t *s, const char *key)
{
	const char *want = str(json_object_get(s, "labels"), key);
	size_t i;

	for (i = 0; i < json_array_size(t->second); i++) {
		const json_t *o = json_array_get(t->second, i);

		if (strcmp(str(json_object_get(o, "labels"), key), want) == 0)
			return delta_since_exported(t->windows, t->at, name, o, key);
	}
	return NAN;
}

static void table_draw(const struct view *v, const struct table *t, int y, int x, int width, int rows)
{
	int label_w = width - VALUE_WIDTH - 1 - (t->second ? VALUE_WIDTH + 1 : 0);
	char buf[512], a[32], b[32];
	int i;

	if (label_w < 8)
		label_w = 8;
	cell(buf, sizeof(buf), t->title, label_w, false);
	if (t->second)
		putf(y, x, A_BOLD, "%s %*s %*s", buf, VALUE_WIDTH, t->unit, VALUE_WIDTH, t->second_unit);
	else
		putf(y, x, A_BOLD, "%s %*s", buf, VALUE_WIDTH, t->unit);
	for (i = 0; i < rows && (size_t)i < t->n; i++) {
		const struct row *r = &t->rows[i];

		if (t->seconds)
			human_seconds(a, sizeof(a), r->value, HUMAN_ASCII);
		else
			human_count(a, sizeof(a), r->value, HUMAN_ASCII);
		cell(buf, sizeof(buf), r->label, label_w, t->keep_tail);
		if (t->second) {
			human_count(b, sizeof(b), delta_of_same(t, t->second_name, r->sample, "pid"), HUMAN_ASCII);
			putf(y + 1 + i, x, A_NORMAL, "%s %*s %*s", buf, VALUE_WIDTH, a, VALUE_WIDTH, b);
		} else {
			putf(y + 1 + i, x, A_NORMAL, "%s %*s", buf, VALUE_WIDTH, a);
		}
	}
	if (t->n == 0 && rows > 0)
		put(y + 1, x, color(v, PAIR_OK), "none");
}

/* ---- sections ---- */

void draw_title(const struct view *v)
{
	char when[48], url[256];
	time_t now = time(NULL);
	int x, room, wlen;
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%H:%M:%S UTC  w: workloads  q: quit", &tm);
	wlen = (int)strlen(when);
	x = put(0, 0, A_BOLD, "memwatch-top  ");
	/* The URL gets what the clock leaves; on a very narrow terminal there is no clock. */
	room = COLS - x - wlen - 2;
	if (room < 8) {
		put(0, x, A_NORMAL, v->url);
		return;
	}
	cell(url, sizeof(url), v->url, room, false);
	put(0, x, A_NORMAL, url);
	put(0, COLS - wlen, A_NORMAL, when);
}

/* A message wrapped over the lines from y; returns the line after it. */
int draw_wrapped(int y, int x, attr_t a, const char *text)
{
	const char *p = text;

	while (*p && y < LINES) {
		int used = 0;
		size_t n = fit(p, COLS - x, &used);
		char line[1024];

		if (n == 0)
			break;
		/* Break at a blank when the rest does not fit. */
		if (p[n]) {
			size_t k = n;

			while (k > 0 && p[k] != ' ')
				k--;
			if (k > 0)
				n = k;
		}
		snprintf(line, sizeof(line), "%.*s", (int)n, p);
		put(y++, x, a, line);
		p += n;
		while (*p == ' ')
			p++;
	}
	return y;
}

static void draw_chart(const struct view *v, int y, int height)
{
	static const char *const bars[] = { " ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█" };
	static const char ascii[] = " .:-=+*#%@";
	const struct chart_history *h = v->history;
	int width = COLS - 4, col, r;
	double lo = INFINITY, hi = -INFINITY;
	size_t start, i;

	if (!h || width < 1 || height < 1)
		return;
	start = h->n > (size_t)width ? h->n - (size_t)width : 0;
	for (i = start; i < h->n; i++) {
		if (!isnan(h->min[i])) {
			lo = fmin(lo, h->min[i]);
			hi = fmax(hi, h->min[i]);
		}
	}
	attron(color(v, PAIR_CHART));
	for (i = start, col = 2; i < h->n; i++, col++) {
		/* Level in eighths of a row: 1 (lowest seen) to 8 * height (highest). */
		int level;

		if (isnan(h->min[i]) || !isfinite(lo))
			continue;
		level = hi > lo ? 1 + (int)((h->min[i] - lo) / (hi - lo) * (8.0 * height - 1) + 0.5) : 8 * height;
		for (r = 0; r < height; r++) {
			int fill = level - 8 * r; /* eighths in this row, counted from the bottom */

			if (fill <= 0)
				break;
			if (fill > 8)
				fill = 8;
			if (v->utf8)
				mvaddstr(y + height - 1 - r, col, bars[fill]);
			else
				mvaddch(y + height - 1 - r, col, (chtype)ascii[fill]);
		}
	}
	attroff(color(v, PAIR_CHART));
}

/* The collectors as "name:mode" items, wrapped; drawn only when draw is set.
 * Returns the number of lines. */
static int draw_collectors(const struct view *v, const json_t *window, int y, bool draw)
{
	const json_t *f = family(window, METRIC_NAME(MW_COLLECTOR_INFO));
	int x = 11, lines = 1;
	size_t i;

	if (draw)
		put(y, 0, A_BOLD, "Collectors ");
	for (i = 0; i < json_array_size(f); i++) {
		const json_t *l = json_object_get(json_array_get(f, i), "labels");
		const char *state = str(l, "state");
		char a[32], b[32], item[80];
		short pair = strcmp(state, "active") == 0 ? 0 : strcmp(state, "degraded") == 0 ? PAIR_WARN : PAIR_ERROR;
		int w = 0;

		snprintf(item, sizeof(item), "%s:%s%s ", term_safe(a, 24, str(l, "collector"), v->utf8),
			 term_safe(b, 24, str(l, "mode"), v->utf8),
			 pair == 0			   ? ""
			 : strcmp(state, "degraded") == 0 ? "(degraded)"
			 : strcmp(state, "disabled") == 0 ? "(off)"
							   : "(!)");
		fit(item, 1 << 20, &w);
		if (x + w > COLS) {
			lines++;
			x = 2;
		}
		if (draw)
			put(y + lines - 1, x, pair ? color(v, pair) : A_NORMAL, item);
		x += w;
	}
	return lines;
}

/* Who killed: the kernel's OOM killer and what ran out, or a user-space killer. */
static void kill_by(const json_t *e, char *buf, size_t len, bool utf8)
{
	char raw[64];

	if (strcmp(str(e, "kind"), "oom_kill") == 0)
		snprintf(raw, sizeof(raw), "oom:%s", *str(e, "scope") ? str(e, "scope") : "?");
	else
		snprintf(raw, sizeof(raw), "%s", str(e, "killer"));
	term_safe(buf, len, raw, utf8);
}

static void draw_events(const struct view *v, int y, int rows)
{
	const json_t *ev = json_object_get(v->events, "events");
	bool wide = COLS >= 120;
	size_t i, shown = 0;

	put(y, 0, A_BOLD, "Recent kills");
	if (wide)
		putf(y, 14, A_BOLD, " %-19s %-7s %-16s %-14s %12s  %s", "time (UTC)", "pid", "comm", "by", "available",
		     "cgroup");
	for (i = json_array_size(ev); i > 0 && (int)shown < rows; i--) {
		const json_t *e = json_array_get(ev, i - 1);
		char t[24], comm[24], by[24], cg[512], avail[32];

		if (strcmp(str(e, "kind"), "oom_kill") != 0 && strcmp(str(e, "kind"), "userspace_kill") != 0)
			continue;
		term_safe(t, 20, str(e, "time"), v->utf8);
		term_safe(comm, 17, str(e, "comm"), v->utf8);
		kill_by(e, by, 15, v->utf8);
		term_safe(cg, sizeof(cg), str(e, "cgroup"), v->utf8);
		if (wide) {
			human_bytes(avail, sizeof(avail), num(e, "available_bytes"), HUMAN_ASCII);
			putf(y + 1 + (int)shown, 14, A_NORMAL, " %-19s %-7.0f %-16s %-14s %12s  %s", t, num(e, "pid"), comm,
			     by, avail, cg);
		} else {
			putf(y + 1 + (int)shown, 0, A_NORMAL, "  %-19s  %-7.0f %-16s %-14s %s", t, num(e, "pid"), comm, by,
			     cg);
		}
		shown++;
	}
	if (!shown && rows > 0)
		put(y + 1, 2, color(v, PAIR_OK), "none");
}

void view_draw(const struct view *v)
{
	static struct table procs, cgroups, faults;
	const json_t *last = last_window(v->windows);
	char a[32], b[32], c[32], d[32];
	int y, chart_h, collector_lines, rest, event_rows, table_rows, ntables, tw;
	double eta;

	if (v->workloads) {
		workloads_draw(v);
		return;
	}
	erase();
	draw_title(v);
	if (v->problem || !last) {
		char text[1200];

		if (v->problem)
			snprintf(text, sizeof(text), "%s: %s", v->problem_title, v->problem);
		else
			snprintf(text, sizeof(text), "The daemon has not published a window yet.");
		y = draw_wrapped(2, 0, A_BOLD | color(v, PAIR_ERROR), text);
		put(y + 1, 0, A_NORMAL, "Retrying every second.");
		refresh();
		return;
	}

	human_bytes(a, sizeof(a), num(json_object_get(last, "available_bytes"), "last"), HUMAN_ASCII);
	human_bytes(b, sizeof(b), num(json_object_get(last, "available_bytes"), "min"), HUMAN_ASCII);
	human_bytes(c, sizeof(c), num(json_object_get(last, "available_bytes"), "max"), HUMAN_ASCII);
	putf(2, 0, A_NORMAL, "Available %s (%.1f%%)   window min %s  max %s", a,
	     metric(last, METRIC_NAME(MW_MEMORY_AVAILABLE_RATIO), "value") * 100, b, c);
	eta = metric(last, METRIC_NAME(MW_MEMORY_EXHAUSTION_ETA_SECONDS), "value");
	human_bytes(a, sizeof(a), metric(last, METRIC_NAME(MW_MEMORY_AVAILABLE_SLOPE_BYTES_PER_SECOND), "value"), HUMAN_ASCII);
	if (isnan(eta) || isinf(eta))
		putf(3, 0, A_NORMAL, "Trend %s/s   exhaustion: not in sight", a);
	else
		putf(3, 0, eta < 60 ? A_BOLD | color(v, PAIR_ERROR) : A_NORMAL, "Trend %s/s   exhaustion in %.0f s", a,
		     eta);

	/* One chart row on 24 lines, up to six on a tall terminal. */
	chart_h = LINES >= 30 ? (LINES - 24) / 6 + 1 : 1;
	if (chart_h > 6)
		chart_h = 6;
	draw_chart(v, 4, chart_h);
	y = 4 + chart_h + 1;

	human_seconds(a, sizeof(a), metric(last, METRIC_NAME(MW_DIRECT_RECLAIM_SECONDS), "sum_delta"), HUMAN_ASCII);
	human_seconds(b, sizeof(b), metric(last, METRIC_NAME(MW_MEMCG_RECLAIM_SECONDS), "sum_delta"), HUMAN_ASCII);
	human_count(c, sizeof(c), metric(last, METRIC_NAME(MW_KSWAPD_WAKEUPS_TOTAL), "delta"), HUMAN_ASCII);
	human_count(d, sizeof(d), metric(last, METRIC_NAME(MW_OOM_KILLS_TOTAL), "value"), HUMAN_ASCII);
	putf(y++, 0, A_NORMAL, "Reclaim stall in last window: direct %s  memcg %s", a, b);
	putf(y++, 0, A_NORMAL, "kswapd wakes %s  OOM kills %s  PSI avg10: some %.1f%%  full %.1f%%", c, d,
	     metric(last, METRIC_NAME(MW_PRESSURE_MEMORY_SOME_AVG10_RATIO), "value") * 100,
	     metric(last, METRIC_NAME(MW_PRESSURE_MEMORY_FULL_AVG10_RATIO), "value") * 100);
	y++;

	/* What is left below goes to the tables, a third of it (at most 10) to the kills. */
	collector_lines = draw_collectors(v, last, 0, false);
	rest = LINES - y - collector_lines - 2; /* the two tables' and the kills' headers */
	event_rows = rest / 3 < 1 ? 1 : rest / 3 > 10 ? 10 : rest / 3;
	table_rows = rest - event_rows < 1 ? 1 : rest - event_rows;

	procs.title = "Top stalled processes";
	procs.unit = "stall";
	procs.seconds = true;
	table_fill(&procs, last, METRIC_NAME(MW_PROCESS_DIRECT_RECLAIM_SECONDS_TOTAL), "pid", v->utf8);
	if (!procs.n)
		table_fill(&procs, last, METRIC_NAME(MW_PROCESS_MEMCG_RECLAIM_SECONDS_TOTAL), "pid", v->utf8);
	cgroups.title = "Top stalled cgroups";
	cgroups.unit = "stall";
	cgroups.seconds = true;
	cgroups.keep_tail = true;
	table_fill(&cgroups, last, METRIC_NAME(MW_CGROUP_RECLAIM_SECONDS_TOTAL), "cgroup", v->utf8);
	ntables = COLS >= WIDE_COLS ? 3 : 2;
	tw = (COLS - (ntables - 1) * TABLE_GAP) / ntables;
	table_draw(v, &procs, y, 0, tw, table_rows);
	table_draw(v, &cgroups, y, tw + TABLE_GAP, tw, table_rows);
	if (ntables == 3) {
		faults.title = "Top faulting processes";
		faults.unit = "minor";
		faults.second_unit = "major";
		size_t at = fault_walk_window(v->windows);
		const json_t *walked = json_array_get(json_object_get(v->windows, "windows"), at);

		faults.windows = v->windows;
		faults.at = at;
		faults.second_name = METRIC_NAME(MW_PROCESS_MAJOR_FAULTS_TOTAL);
		faults.second = family(walked, faults.second_name);
		table_fill(&faults, walked, METRIC_NAME(MW_PROCESS_MINOR_FAULTS_TOTAL), "pid", v->utf8);
		table_draw(v, &faults, y, 2 * (tw + TABLE_GAP), tw, table_rows);
	}
	y += 1 + table_rows;

	draw_events(v, y, event_rows);
	y += 1 + event_rows;
	draw_collectors(v, last, y, true);
	refresh();
}
