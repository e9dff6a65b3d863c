// SPDX-License-Identifier: GPL-2.0
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "catalogue.h"
#include "config.h"
#include "event_channel.h"
#include "expo.h"
#include "human.h"
#include "status_page.h"

#include "status_html.h"
#include "status_workloads.h"

#define CHART_W 720
#define CHART_H 150
#define PLOT_X 70
#define PLOT_Y 22
#define PLOT_W (CHART_W - PLOT_X - 10)
#define PLOT_H (CHART_H - PLOT_Y - 24)
#define TOP_ROWS 8

/* Everything system-provided (comm, cgroup paths, reasons) goes through here. */
void put_html(struct strbuf *sb, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': strbuf_puts(sb, "&amp;"); break;
		case '<': strbuf_puts(sb, "&lt;"); break;
		case '>': strbuf_puts(sb, "&gt;"); break;
		case '"': strbuf_puts(sb, "&quot;"); break;
		case '\'': strbuf_puts(sb, "&#39;"); break;
		default:
			if ((unsigned char)*s < 0x20)
				strbuf_putc(sb, ' ');
			else
				strbuf_putc(sb, *s);
		}
	}
}

/* <td>text</td>, the text made harmless */
void put_cell(struct strbuf *sb, const char *text)
{
	strbuf_puts(sb, "<td>");
	put_html(sb, text);
	strbuf_puts(sb, "</td>");
}

void put_bytes(struct strbuf *sb, double v)
{
	char buf[HUMAN_MAX];

	strbuf_puts(sb, human_bytes(buf, sizeof(buf), v, HUMAN_UTF8));
}

void put_seconds(struct strbuf *sb, double v)
{
	char buf[HUMAN_MAX];

	strbuf_puts(sb, human_seconds(buf, sizeof(buf), v, HUMAN_UTF8));
}

static double xpos(const struct chart *c, double t)
{
	double t0 = c->t[0], t1 = c->t[c->n - 1];

	return PLOT_X + (t1 > t0 ? (t - t0) / (t1 - t0) : 1.0) * PLOT_W;
}

void draw_chart(struct strbuf *sb, const struct chart *c)
{
	double lo = INFINITY, hi = -INFINITY;
	size_t i, k;

	for (k = 0; k < c->n_series; k++)
		for (i = 0; i < c->n; i++)
			if (!isnan(c->series[k].v[i])) {
				lo = fmin(lo, c->series[k].v[i]);
				hi = fmax(hi, c->series[k].v[i]);
			}
	for (i = 0; c->band_lo && i < c->n; i++)
		if (!isnan(c->band_lo[i]) && !isnan(c->band_hi[i])) {
			lo = fmin(lo, c->band_lo[i]);
			hi = fmax(hi, c->band_hi[i]);
		}
	strbuf_printf(sb, "<figure><figcaption>");
	put_html(sb, c->title);
	strbuf_printf(sb, "</figcaption><svg class=\"chart\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
			  "role=\"img\" aria-label=\"", CHART_W, CHART_H, CHART_W, CHART_H);
	put_html(sb, c->title);
	strbuf_puts(sb, "\">");
	strbuf_printf(sb, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" class=\"plot\"/>", PLOT_X, PLOT_Y, PLOT_W,
		      PLOT_H);
	if (c->n < 2 || !isfinite(lo)) {
		strbuf_printf(sb, "<text x=\"%d\" y=\"%d\">no data yet</text></svg></figure>\n", PLOT_X + 10,
			      PLOT_Y + PLOT_H / 2);
		return;
	}
	if (lo > 0 && lo < hi * 0.5)
		lo = 0;
	if (hi <= lo)
		hi = lo + (lo ? fabs(lo) * 0.01 : 1);
#define YPOS(v) (PLOT_Y + PLOT_H - ((v) - lo) / (hi - lo) * PLOT_H)
	if (c->band_lo) {
		strbuf_puts(sb, "<polygon class=\"band\" points=\"");
		for (i = 0; i < c->n; i++)
			if (!isnan(c->band_hi[i]))
				strbuf_printf(sb, "%.1f,%.1f ", xpos(c, c->t[i]), YPOS(c->band_hi[i]));
		for (i = c->n; i > 0; i--)
			if (!isnan(c->band_lo[i - 1]))
				strbuf_printf(sb, "%.1f,%.1f ", xpos(c, c->t[i - 1]), YPOS(c->band_lo[i - 1]));
		strbuf_puts(sb, "\"/>");
	}
	for (k = 0; k < c->n_series; k++) {
		strbuf_printf(sb, "<polyline class=\"series\" data-series=\"%s\" stroke=\"%s\" points=\"", c->series[k].name,
			      c->series[k].color);
		for (i = 0; i < c->n; i++)
			if (!isnan(c->series[k].v[i]))
				strbuf_printf(sb, "%.1f,%.1f ", xpos(c, c->t[i]), YPOS(c->series[k].v[i]));
		strbuf_puts(sb, "\"/>");
	}
#undef YPOS
	for (i = 0; i < c->n_marks; i++) {
		double x = xpos(c, c->marks[i].t);

		if (x < PLOT_X || x > PLOT_X + PLOT_W)
			continue;
		strbuf_printf(sb, "<line class=\"mark\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\"><title>", x, x, PLOT_Y,
			      PLOT_Y + PLOT_H);
		put_html(sb, c->marks[i].label);
		strbuf_puts(sb, "</title></line>");
	}
	strbuf_printf(sb, "<text x=\"%d\" y=\"%d\" class=\"axis\">", 2, PLOT_Y + 10);
	c->fmt(sb, hi);
	strbuf_printf(sb, "</text><text x=\"%d\" y=\"%d\" class=\"axis\">", 2, PLOT_Y + PLOT_H);
	c->fmt(sb, lo);
	strbuf_printf(sb, "</text><text x=\"%d\" y=\"%d\" class=\"axis\">-%.0f s</text>", PLOT_X, CHART_H - 6,
		      c->t[c->n - 1] - c->t[0]);
	strbuf_printf(sb, "<text x=\"%d\" y=\"%d\" class=\"axis\" text-anchor=\"end\">now</text>", PLOT_X + PLOT_W,
		      CHART_H - 6);
	for (k = 0; k < c->n_series; k++)
		strbuf_printf(sb, "<text x=\"%d\" y=\"14\" style=\"fill:%s\" class=\"legend\">%s</text>",
			      PLOT_X + (int)k * 150, c->series[k].color, c->series[k].name);
	strbuf_puts(sb, "</svg></figure>\n");
}

static void take_change(const char *const *l, unsigned n, const struct snapshot_change *c, void *ud)
{
	if (c)
		*(struct snapshot_change *)ud = *c;
}

/* The change of an unlabelled counter or histogram since prev; NAN where none is known. */
static struct snapshot_change change_of(const struct snapshot *s, const struct snapshot *prev, const char *name)
{
	struct snapshot_change c = { .value = NAN, .sum = NAN };

	snapshot_foreach_change(s, prev, name, take_change, &c);
	return c;
}

/* Per second over the windows from a's end to b's. */
static double rate(const struct snapshot *a, const struct snapshot *b, double change)
{
	double dt = ((double)snapshot_window(b)->end_real_usec - (double)snapshot_window(a)->end_real_usec) / 1e6;

	return dt > 0 ? change / dt : NAN;
}

/* Per-series changes of the latest window, for the "top" tables. */
struct row {
	char key[300];
	char label[300];
	double delta;
};

struct rows {
	struct row *r;
	size_t n, cap;
};

/* The row of a series' first two labels (its process or cgroup), added at 0
 * if new; NULL without memory. */
static struct row *row_of(struct rows *rows, const char *const *l, unsigned n)
{
	char key[sizeof(rows->r->key)];
	struct row *row;
	size_t i;

	snprintf(key, sizeof(key), "%s\x1f%s", n > 0 ? l[0] : "", n > 1 ? l[1] : "");
	for (i = 0; i < rows->n; i++)
		if (strcmp(rows->r[i].key, key) == 0)
			return &rows->r[i];
	if (rows->n == rows->cap) {
		size_t cap = rows->cap ? rows->cap * 2 : 32;
		struct row *r = realloc(rows->r, cap * sizeof(*r));

		if (!r)
			return NULL;
		rows->r = r;
		rows->cap = cap;
	}
	row = &rows->r[rows->n++];
	memset(row, 0, sizeof(*row));
	memcpy(row->key, key, sizeof(key));
	if (n > 1)
		snprintf(row->label, sizeof(row->label), "%s (%s)", l[1], l[0]);
	else
		snprintf(row->label, sizeof(row->label), "%s", n ? l[0] : "");
	return row;
}

static void add_change(const char *const *l, unsigned n, const struct snapshot_change *c, void *ud)
{
	struct row *row;

	if (!c)
		return;
	row = row_of(ud, l, n);
	if (row)
		row->delta += c->value;
}

static int cmp_delta(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	return x->delta < y->delta ? 1 : x->delta > y->delta ? -1 : 0;
}

/* Latest window's change of each series of the named counter families
 * (summed by row), largest first. */
static void top_deltas(const struct snapshot *cur, const struct snapshot *prev, const char *const *names,
		       size_t n_names, struct rows *out)
{
	for (size_t f = 0; cur && f < n_names; f++)
		snapshot_foreach_change(cur, prev, names[f], add_change, out);
	if (out->n)
		qsort(out->r, out->n, sizeof(*out->r), cmp_delta);
}

static void top_table(struct strbuf *sb, const char *title, const char *what, const char *span, struct rows *rows,
		      void (*fmt)(struct strbuf *, double))
{
	size_t i, shown = 0;

	strbuf_puts(sb, "<table><caption>");
	put_html(sb, title);
	strbuf_puts(sb, "</caption><tr><th>");
	put_html(sb, what);
	strbuf_puts(sb, "</th><th>");
	put_html(sb, span);
	strbuf_puts(sb, "</th></tr>\n");
	for (i = 0; i < rows->n && shown < TOP_ROWS; i++) {
		if (rows->r[i].delta <= 0 || strncmp(rows->r[i].key, "other", 5) == 0)
			continue;
		strbuf_puts(sb, "<tr>");
		put_cell(sb, rows->r[i].label);
		strbuf_puts(sb, "<td>");
		fmt(sb, rows->r[i].delta);
		strbuf_puts(sb, "</td></tr>\n");
		shown++;
	}
	if (!shown)
		strbuf_puts(sb, "<tr><td colspan=\"2\">none</td></tr>\n");
	strbuf_puts(sb, "</table>\n");
	free(rows->r);
}

void put_count(struct strbuf *sb, double v)
{
	char buf[HUMAN_MAX];

	strbuf_puts(sb, human_count(buf, sizeof(buf), v, HUMAN_UTF8));
}

static void put_rate_bytes(struct strbuf *sb, double v)
{
	put_bytes(sb, v);
	strbuf_puts(sb, "/s");
}

void put_percent(struct strbuf *sb, double v)
{
	strbuf_printf(sb, "%.1f%%", v * 100);
}

static void collector_row(const char *const *l, unsigned n, double v, double hs, void *ud)
{
	struct strbuf *sb = ud;
	unsigned i;

	if (n < 4)
		return;
	strbuf_printf(sb, "<tr class=\"%s\">", l[1]);
	for (i = 0; i < 4; i++)
		put_cell(sb, l[i]);
	strbuf_puts(sb, "</tr>\n");
}

struct marks_ctx {
	struct mark *marks;
	size_t n;
	double since;
};

static void add_mark(const struct event_record *e, void *ud)
{
	struct marks_ctx *m = ud;
	double t = (double)e->real_usec / 1e6;

	if ((e->kind != EVENT_OOM_KILL && e->kind != EVENT_USERSPACE_KILL) || t < m->since || m->n == MAX_MARKS)
		return;
	m->marks[m->n].t = t;
	if (e->kind == EVENT_OOM_KILL)
		snprintf(m->marks[m->n].label, sizeof(m->marks[0].label), "OOM kill: %u %s %s", e->pid, e->comm,
			 e->cgroup);
	else
		snprintf(m->marks[m->n].label, sizeof(m->marks[0].label), "%s killed %u %s %s",
			 e->kill ? e->kill->killer : "?", e->pid, e->comm, e->cgroup);
	m->n++;
}

static void recent_event_row(const struct event_record *e, void *ud)
{
	struct strbuf *sb = ud;
	const struct kill_record *k = e->kill;
	time_t t = (time_t)(e->real_usec / 1000000);
	struct tm tm;
	char when[48], avail[HUMAN_MAX], by[64], why[400], rss[HUMAN_MAX];

	if (e->kind != EVENT_OOM_KILL && e->kind != EVENT_USERSPACE_KILL)
		return;
	gmtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
	if (k && k->restored)
		strncat(when, " (before the restart)", sizeof(when) - strlen(when) - 1);
	why[0] = rss[0] = '\0';
	if (e->kind == EVENT_OOM_KILL) {
		snprintf(by, sizeof(by), "OOM killer, %s",
			 oom_scope_name(k && (k->flags & KILL_HAS_SCOPE) ? k->raw.scope : OOM_SCOPE_UNKNOWN));
		if (k && (k->flags & KILL_HAS_OOM_CGROUP)) {
			char usage[HUMAN_MAX], limit[HUMAN_MAX];
			double page = (double)sysconf(_SC_PAGESIZE);

			snprintf(why, sizeof(why), "limit of %s: %s of %s", k->oom_cgroup[0] ? k->oom_cgroup : "?",
				 human_bytes(usage, sizeof(usage), (double)k->raw.oom_usage_pages * page, HUMAN_UTF8),
				 human_bytes(limit, sizeof(limit), (double)k->raw.oom_limit_pages * page, HUMAN_UTF8));
		}
		if (k && (k->flags & KILL_HAS_RSS))
			human_bytes(rss, sizeof(rss), (double)k->raw.rss_anon_pages * (double)sysconf(_SC_PAGESIZE),
				    HUMAN_UTF8);
	} else {
		snprintf(by, sizeof(by), "%s", k ? k->killer : "?");
		if (k)
			snprintf(why, sizeof(why), "%s%s", k->raw.signal == 9 ? "SIGKILL" : "SIGTERM",
				 isnan(k->psi_some_avg10) ? "" : ", memory pressure");
		if (k && !isnan(k->psi_some_avg10))
			snprintf(why + strlen(why), sizeof(why) - strlen(why), " some %.0f%%", k->psi_some_avg10 * 100);
	}
	strbuf_printf(sb, "<tr><td>%s</td>", when);
	put_cell(sb, by);
	strbuf_printf(sb, "<td>%u</td>", e->pid);
	put_cell(sb, e->comm);
	put_cell(sb, e->cgroup);
	put_cell(sb, why);
	put_cell(sb, rss);
	put_cell(sb, human_bytes(avail, sizeof(avail), e->avail_bytes, HUMAN_UTF8));
	strbuf_puts(sb, "</tr>\n");
}

const char status_style[] =
	"body{font:14px/1.4 sans-serif;margin:1em 2em;color:#222;background:#fafafa}"
	"h1{font-size:20px}figure{margin:0 0 1em}figcaption{font-weight:bold}"
	".chart .plot{fill:#fff;stroke:#ccc}.chart .series{fill:none;stroke-width:1.5}"
	".chart .band{fill:#9ecae1;opacity:.5}.chart .mark{stroke:#d62728;stroke-width:2}"
	".chart text{font-size:11px;fill:#555}table{border-collapse:collapse;margin:0 2em 1em 0;display:inline-table;vertical-align:top}"
	"td,th{border:1px solid #ddd;padding:2px 8px;text-align:left}caption{font-weight:bold;text-align:left}"
	"tr.degraded{background:#fff3cd}tr.failed{background:#f8d7da}"
	".bar{display:inline-block;width:60px;height:8px;background:#e5e5e5;vertical-align:middle}"
	".bar span{display:block;height:8px;background:#1f77b4}.bar.high span{background:#d62728}"
	"table.workloads{display:table}";

/* The newest window whose faults collector walked the processes (its walk
 * count grew over the window before): per-process faults change only there,
 * and a window between two walks would show an empty table. 0: none shown. */
static size_t last_process_walk(struct snapshot *const *snaps, size_t n)
{
	for (size_t i = n; i-- > 1;) {
		double now = snapshot_value(snaps[i], METRIC_NAME(MW_FAULT_PROCESS_WALKS_TOTAL), NULL);
		double before = snapshot_value(snaps[i - 1], METRIC_NAME(MW_FAULT_PROCESS_WALKS_TOTAL), NULL);

		if (now > before)
			return i;
	}
	return 0;
}

/* The references snapshot_ring_recent() handed out; the rest are NULL. */
static void snapshots_unref(struct snapshot *(*snaps)[HISTORY_MAX])
{
	for (size_t i = 0; i < HISTORY_MAX; i++)
		snapshot_unref((*snaps)[i]);
}

int status_page_render(struct strbuf *sb, struct snapshot_ring *ring, struct event_channel *events)
{
	_cleanup_(snapshots_unref) struct snapshot *snaps[HISTORY_MAX] = { NULL };
	size_t n = snapshot_ring_recent(ring, snaps, ARRAY_SIZE(snaps)), i;
	_cleanup_free_ double *t = calloc(n + 1, sizeof(double)), *avail = calloc(n + 1, sizeof(double));
	_cleanup_free_ double *amin = calloc(n + 1, sizeof(double)), *amax = calloc(n + 1, sizeof(double));
	_cleanup_free_ double *direct = calloc(n + 1, sizeof(double)), *memcg = calloc(n + 1, sizeof(double));
	_cleanup_free_ double *allocr = calloc(n + 1, sizeof(double)), *some = calloc(n + 1, sizeof(double));
	_cleanup_free_ double *full = calloc(n + 1, sizeof(double));
	struct mark marks[MAX_MARKS];
	struct marks_ctx mctx = { marks, 0, 0 };
	const struct snapshot *last = n ? snaps[n - 1] : NULL, *prev = n > 1 ? snaps[n - 2] : NULL;
	double window = last ? snapshot_value(last, METRIC_NAME(MW_WINDOW_SECONDS), NULL) : NAN;

	if (!t || !avail || !amin || !amax || !direct || !memcg || !allocr || !some || !full)
		return -1;
	for (i = 0; i < n; i++) {
		const struct snapshot *s = snaps[i], *p = i ? snaps[i - 1] : NULL;

		t[i] = (double)snapshot_window(s)->end_real_usec / 1e6;
		avail[i] = snapshot_value(s, METRIC_NAME(MW_MEMORY_AVAILABLE_BYTES), NULL);
		amin[i] = snapshot_value(s, METRIC_NAME(MW_MEMORY_AVAILABLE_WINDOW_MIN_BYTES), NULL);
		amax[i] = snapshot_value(s, METRIC_NAME(MW_MEMORY_AVAILABLE_WINDOW_MAX_BYTES), NULL);
		direct[i] = memcg[i] = allocr[i] = some[i] = full[i] = NAN;
		if (!p)
			continue;
		direct[i] = change_of(s, p, METRIC_NAME(MW_DIRECT_RECLAIM_SECONDS)).sum;
		memcg[i] = change_of(s, p, METRIC_NAME(MW_MEMCG_RECLAIM_SECONDS)).sum;
		allocr[i] = rate(p, s, change_of(s, p, METRIC_NAME(MW_PAGE_ALLOCATED_BYTES_TOTAL)).value);
		some[i] = rate(p, s, change_of(s, p, METRIC_NAME(MW_PRESSURE_MEMORY_SOME_SECONDS_TOTAL)).value);
		full[i] = rate(p, s, change_of(s, p, METRIC_NAME(MW_PRESSURE_MEMORY_FULL_SECONDS_TOTAL)).value);
	}
	if (n)
		mctx.since = t[0];
	event_channel_foreach_recent(events, add_mark, &mctx);

	strbuf_printf(sb, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
			  "<meta http-equiv=\"refresh\" content=\"%.0f\">"
			  "<title>memwatchd</title><style>%s</style></head><body>\n",
		      isnan(window) || window < 2 ? 2.0 : window, status_style);
	strbuf_printf(sb, "<h1>memwatchd %s</h1>\n<p>", MEMWATCHD_VERSION);
	if (last) {
		double start = snapshot_value(last, METRIC_NAME(MW_START_TIME_SECONDS), NULL);

		strbuf_printf(sb, "Window %.1f s, %zu windows shown, up %.0f s. Available now: ", window, n,
			      t[n - 1] - start);
		put_bytes(sb, avail[n - 1]);
		strbuf_puts(sb, ", lowest in the last window: ");
		put_bytes(sb, amin[n - 1]);
		strbuf_puts(sb, ". Showing ");
		put_window_stamp(sb, last, "status");
	} else {
		strbuf_puts(sb, "No window collected yet.");
	}
	strbuf_puts(sb, ". <a href=\"/metrics\">/metrics</a> · <a href=\"/api/v1/windows\">/api/v1/windows</a> · "
			"<a href=\"/api/v1/events\">/api/v1/events</a> · <a href=\"/healthz\">/healthz</a></p>\n");

	draw_chart(sb, &(struct chart){ "Available memory (line: end of window; band: window min–max)", n, t,
					{ { "available", "#1f77b4", avail } }, 1, amin, amax, put_bytes, marks, mctx.n });
	draw_chart(sb, &(struct chart){ "Reclaim stall time per window", n, t,
					{ { "direct", "#d62728", direct }, { "memcg", "#ff7f0e", memcg } }, 2, NULL, NULL,
					put_seconds, marks, mctx.n });
	draw_chart(sb, &(struct chart){ "Page allocation rate", n, t, { { "allocated", "#2ca02c", allocr } }, 1, NULL,
					NULL, put_rate_bytes, marks, mctx.n });
	draw_chart(sb, &(struct chart){ "Memory pressure stall (PSI), share of time", n, t,
					{ { "some", "#9467bd", some }, { "full", "#8c564b", full } }, 2, NULL, NULL,
					put_percent, marks, mctx.n });

	workloads_table(sb, last, prev);

	{
		const char *const proc_reclaim[] = { METRIC_NAME(MW_PROCESS_DIRECT_RECLAIM_SECONDS_TOTAL),
						     METRIC_NAME(MW_PROCESS_MEMCG_RECLAIM_SECONDS_TOTAL) };
		const char *const cg_reclaim[] = { METRIC_NAME(MW_CGROUP_RECLAIM_SECONDS_TOTAL) };
		const char *const proc_major[] = { METRIC_NAME(MW_PROCESS_MAJOR_FAULTS_TOTAL) };
		const char *const proc_minor[] = { METRIC_NAME(MW_PROCESS_MINOR_FAULTS_TOTAL) };
		struct rows a = { 0 }, b = { 0 }, c = { 0 }, d = { 0 };

		size_t walked = last_process_walk(snaps, n);
		char span[64] = "last window";

		if (walked && walked + 1 < n)
			snprintf(span, sizeof(span), "last walk (window #%" PRIu64 ")",
				 snapshot_window(snaps[walked])->seq);
		top_deltas(last, prev, proc_reclaim, 2, &a);
		top_table(sb, "Processes stalled in reclaim", "process (pid)", "last window", &a, put_seconds);
		top_deltas(last, prev, cg_reclaim, 1, &b);
		top_table(sb, "Cgroups stalled in reclaim", "cgroup", "last window", &b, put_seconds);
		top_deltas(walked ? snaps[walked] : last, walked ? snaps[walked - 1] : prev, proc_major, 1, &c);
		top_table(sb, "Major faults", "process (pid)", span, &c, put_count);
		top_deltas(walked ? snaps[walked] : last, walked ? snaps[walked - 1] : prev, proc_minor, 1, &d);
		top_table(sb, "Minor faults", "process (pid)", span, &d, put_count);
	}

	strbuf_puts(sb, "<table><caption>Recent kills</caption><tr><th>time (UTC)</th><th>by</th><th>pid</th>"
			"<th>comm</th><th>cgroup</th><th>why</th><th>anon RSS</th><th>available</th></tr>\n");
	event_channel_foreach_recent(events, recent_event_row, sb);
	strbuf_puts(sb, "</table>\n");

	strbuf_puts(sb, "<table><caption>Collectors</caption><tr><th>collector</th><th>state</th><th>mode</th>"
			"<th>reason</th></tr>\n");
	if (last)
		snapshot_foreach(last, METRIC_NAME(MW_COLLECTOR_INFO), collector_row, sb);
	strbuf_puts(sb, "</table>\n</body></html>\n");
	return strbuf_failed(sb) ? -1 : 0;
}
