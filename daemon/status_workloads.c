// SPDX-License-Identifier: GPL-2.0
/* The per-workload view: the status page's Workloads table and the page of
 * one cgroup (GET /cgroup?path=...), both from the windows in the ring, as
 * plain HTML with inline SVG: no script, nothing fetched from elsewhere. Every
 * number also stands in a <data value="..."> element, exact, so a reader (or a
 * test) can compare it with the same window of /api/v1/windows. */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "catalogue.h"
#include "config.h"
#include "human.h"
#include "macro.h"
#include "status_html.h"
#include "status_workloads.h"

/* The identity labels of the per-cgroup families, by name. */
enum { NAME_CGROUP, NAME_UNIT, NAME_NAMESPACE, NAME_POD, NAME_CONTAINER, NAME_CONTAINER_ID, NAME__COUNT };
static const char *const name_labels[NAME__COUNT] = { "cgroup", "unit", "namespace", "pod", "container",
						      "container_id" };

/* One cgroup in one window. Changes are over the window (the one rule of
 * snapshot_foreach_change); NAN where unknown. */
struct workload {
	char *names[NAME__COUNT];
	double usage, limit, ratio, eta;
	double reclaims, reclaim_seconds, psi_some; /* changes */
	double oom_kills, oom_kills_change;         /* summed over the scope label */
};

struct workloads {
	struct workload *w;
	size_t n, cap;
	const char *only; /* a cgroup page: just this path */
	bool failed;
};

static void workloads_free(struct workloads *ws)
{
	for (size_t i = 0; i < ws->n; i++)
		for (size_t k = 0; k < NAME__COUNT; k++)
			free(ws->w[i].names[k]);
	free(ws->w);
	*ws = (struct workloads){ .only = ws->only };
}

/* The value of label `name` in a sample of family desc; "" if it has none. */
static const char *label_named(const struct metric_desc *desc, const char *const *l, unsigned n, const char *name)
{
	for (unsigned i = 0; i < n && i < desc->n_labels; i++)
		if (strcmp(desc->labels[i], name) == 0)
			return l[i];
	return "";
}

static void add_info(const char *const *l, unsigned n, double v, double sum, void *ud)
{
	const struct metric_desc *desc = METRIC(MW_CGROUP_INFO);
	struct workloads *ws = ud;
	const char *path = label_named(desc, l, n, "cgroup");
	struct workload *w;

	if (ws->failed || strcmp(path, "other") == 0 || (ws->only && strcmp(path, ws->only) != 0))
		return;
	if (ws->n == ws->cap) {
		size_t cap = ws->cap ? ws->cap * 2 : 16;
		struct workload *p = realloc(ws->w, cap * sizeof(*p));

		if (!p) {
			ws->failed = true;
			return;
		}
		ws->w = p;
		ws->cap = cap;
	}
	w = &ws->w[ws->n];
	*w = (struct workload){ .usage = NAN, .limit = NAN, .ratio = NAN, .eta = NAN, .reclaims = NAN,
				.reclaim_seconds = NAN, .psi_some = NAN, .oom_kills = NAN, .oom_kills_change = NAN };
	for (size_t k = 0; k < NAME__COUNT; k++)
		if (!(w->names[k] = strdup(label_named(desc, l, n, name_labels[k])))) {
			while (k > 0)
				free(w->names[--k]);
			ws->failed = true;
			return;
		}
	ws->n++;
}

static int cmp_path(const void *a, const void *b)
{
	return strcmp(((const struct workload *)a)->names[NAME_CGROUP], ((const struct workload *)b)->names[NAME_CGROUP]);
}

static struct workload *find(struct workloads *ws, const char *path)
{
	struct workload key = { .names = { (char *)path } };

	return ws->n ? bsearch(&key, ws->w, ws->n, sizeof(*ws->w), cmp_path) : NULL;
}

/* Fills one field of every workload from one family. */
struct fill {
	struct workloads *ws;
	const struct metric_desc *desc;
	size_t field; /* offsetof(struct workload, ...) */
	bool sum;     /* add up the series of a cgroup (oom kills: one per scope) */
};

static void put_field(struct fill *f, const char *const *l, unsigned n, double v)
{
	struct workload *w = find(f->ws, label_named(f->desc, l, n, "cgroup"));
	double *field;

	if (!w)
		return;
	field = (double *)((char *)w + f->field);
	*field = f->sum && !isnan(*field) ? *field + v : v;
}

static void fill_value(const char *const *l, unsigned n, double v, double sum, void *ud)
{
	put_field(ud, l, n, v);
}

static void fill_change(const char *const *l, unsigned n, const struct snapshot_change *c, void *ud)
{
	if (c)
		put_field(ud, l, n, c->value);
}

/* Every cgroup window s exports (or just ws->only), with its numbers. */
static int workloads_collect(struct workloads *ws, const struct snapshot *s, const struct snapshot *prev)
{
	static const struct {
		int id;
		size_t field;
		bool change, sum;
	} families[] = {
		{ MW_CGROUP_MEMORY_USAGE_BYTES, offsetof(struct workload, usage), false, false },
		{ MW_CGROUP_MEMORY_LIMIT_BYTES, offsetof(struct workload, limit), false, false },
		{ MW_CGROUP_MEMORY_USAGE_RATIO, offsetof(struct workload, ratio), false, false },
		{ MW_CGROUP_MEMORY_LIMIT_ETA_SECONDS, offsetof(struct workload, eta), false, false },
		{ MW_CGROUP_RECLAIMS_TOTAL, offsetof(struct workload, reclaims), true, false },
		{ MW_CGROUP_RECLAIM_SECONDS_TOTAL, offsetof(struct workload, reclaim_seconds), true, false },
		{ MW_CGROUP_PRESSURE_MEMORY_SOME_SECONDS_TOTAL, offsetof(struct workload, psi_some), true, false },
		{ MW_CGROUP_OOM_KILLS_TOTAL, offsetof(struct workload, oom_kills), false, true },
		{ MW_CGROUP_OOM_KILLS_TOTAL, offsetof(struct workload, oom_kills_change), true, true },
	};

	snapshot_foreach(s, METRIC_NAME(MW_CGROUP_INFO), add_info, ws);
	if (ws->failed)
		return -ENOMEM;
	if (ws->n)
		qsort(ws->w, ws->n, sizeof(*ws->w), cmp_path);
	for (size_t i = 0; i < ARRAY_SIZE(families); i++) {
		struct fill f = { ws, METRIC(families[i].id), families[i].field, families[i].sum };

		if (families[i].change)
			snapshot_foreach_change(s, prev, f.desc->name, fill_change, &f);
		else
			snapshot_foreach(s, f.desc->name, fill_value, &f);
	}
	return 0;
}

static double or_below(double v, double below)
{
	return isnan(v) ? below : v;
}

/* The ranking the page states: reclaim stall time in the window, then PSI
 * some time in the window, then usage against limit; then the path. */
static int cmp_pressure(const void *a, const void *b)
{
	const struct workload *x = a, *y = b;
	double k[3][2] = {
		{ or_below(x->reclaim_seconds, -1), or_below(y->reclaim_seconds, -1) },
		{ or_below(x->psi_some, -1), or_below(y->psi_some, -1) },
		{ or_below(x->ratio, -1), or_below(y->ratio, -1) },
	};

	for (size_t i = 0; i < 3; i++)
		if (k[i][0] != k[i][1])
			return k[i][0] < k[i][1] ? 1 : -1;
	return cmp_path(a, b);
}

/* ---- HTML pieces ---- */

/* A number, shown for people and kept exact in the element's value. */
static void put_data(struct strbuf *sb, const char *cls, double v, void (*fmt)(struct strbuf *, double))
{
	if (isnan(v)) {
		strbuf_printf(sb, "<td><data class=\"%s\" value=\"\">–</data></td>", cls);
		return;
	}
	strbuf_printf(sb, "<td><data class=\"%s\" value=\"%.17g\">", cls, v);
	fmt(sb, v);
	strbuf_puts(sb, "</data></td>");
}

static void put_eta(struct strbuf *sb, double v)
{
	if (isinf(v))
		strbuf_puts(sb, "not in sight");
	else
		put_seconds(sb, v);
}

/* Query-string escaping: everything but unreserved characters and '/'. */
static void put_url_path(struct strbuf *sb, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr("-._~/", c))
			strbuf_putc(sb, (char)c);
		else
			strbuf_printf(sb, "%%%02X", c);
	}
}

void put_window_stamp(struct strbuf *sb, const struct snapshot *s, const char *id)
{
	const struct snapshot_window *w = snapshot_window(s);
	time_t t = (time_t)(w->end_real_usec / 1000000);
	struct tm tm;
	char when[48];

	gmtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
	strbuf_printf(sb,
		      "window <data class=\"window-seq\" id=\"%s-seq\" value=\"%llu\">#%llu</data>, ended "
		      "<data class=\"window-end\" id=\"%s-end\" value=\"%llu.%06llu\">%s UTC</data>",
		      id, (unsigned long long)w->seq, (unsigned long long)w->seq, id,
		      (unsigned long long)(w->end_real_usec / 1000000), (unsigned long long)(w->end_real_usec % 1000000),
		      when);
}

/* unit; namespace/pod; container name and id: whichever the cgroup has. */
static void put_names(struct strbuf *sb, const struct workload *w)
{
	char pod[600], ctr[600];
	const char *id = w->names[NAME_CONTAINER_ID];

	snprintf(pod, sizeof(pod), "%s%s%s", w->names[NAME_NAMESPACE], *w->names[NAME_NAMESPACE] ? "/" : "",
		 w->names[NAME_POD]);
	snprintf(ctr, sizeof(ctr), "%s%s%.12s%s", w->names[NAME_CONTAINER],
		 *id ? (*w->names[NAME_CONTAINER] ? " (" : "") : "", id, *id && *w->names[NAME_CONTAINER] ? ")" : "");
	put_cell(sb, w->names[NAME_UNIT]);
	put_cell(sb, pod);
	put_cell(sb, ctr);
}

/* Usage, a bar against the limit (CSS only), and the limit. */
static void put_usage(struct strbuf *sb, const struct workload *w)
{
	double share = w->ratio > 1 ? 1 : w->ratio < 0 ? 0 : w->ratio;

	put_data(sb, "usage", w->usage, put_bytes);
	strbuf_puts(sb, "<td>");
	if (!isnan(share))
		strbuf_printf(sb, "<span class=\"bar%s\"><span style=\"width:%.1f%%\"></span></span> ",
			      w->ratio >= 0.9 ? " high" : "", share * 100);
	if (isnan(w->ratio))
		strbuf_puts(sb, "<data class=\"ratio\" value=\"\">no limit</data></td>");
	else
		strbuf_printf(sb, "<data class=\"ratio\" value=\"%.17g\">%.1f%%</data></td>", w->ratio, w->ratio * 100);
	put_data(sb, "limit", w->limit, put_bytes);
}

static void put_pressure(struct strbuf *sb, const struct workload *w)
{
	put_data(sb, "eta", w->eta, put_eta);
	put_data(sb, "reclaims", w->reclaims, put_count);
	put_data(sb, "reclaim-seconds", w->reclaim_seconds, put_seconds);
	put_data(sb, "psi-some", w->psi_some, put_seconds);
	put_data(sb, "oom-kills", w->oom_kills, put_count);
}

static const char numbers_header[] =
	"<th>usage</th><th>of limit</th><th>limit</th><th>ETA to limit</th><th>reclaim stalls</th>"
	"<th>stall time</th><th>PSI some</th><th>OOM kills</th>";

void workloads_table(struct strbuf *sb, const struct snapshot *s, const struct snapshot *prev)
{
	struct workloads ws = { 0 };
	size_t i;

	if (!s)
		return;
	strbuf_puts(sb, "<table id=\"workloads\" class=\"workloads\"><caption>Workloads: ");
	put_window_stamp(sb, s, "workloads");
	strbuf_printf(sb, "</caption>\n<tr><td colspan=\"12\">The top %d cgroups by reclaim stall time in the window, "
			  "then memory pressure (PSI some) in the window, then usage against limit. Stalls, stall "
			  "time and PSI are the changes in the window; OOM kills since the daemon started.</td></tr>\n"
			  "<tr><th>cgroup</th><th>unit</th><th>pod</th><th>container</th>%s</tr>\n",
		      WORKLOADS_ROWS, numbers_header);
	if (workloads_collect(&ws, s, prev) < 0) {
		strbuf_puts(sb, "<tr><td colspan=\"12\">out of memory</td></tr></table>\n");
		workloads_free(&ws);
		return;
	}
	if (ws.n)
		qsort(ws.w, ws.n, sizeof(*ws.w), cmp_pressure);
	for (i = 0; i < ws.n && i < WORKLOADS_ROWS; i++) {
		const struct workload *w = &ws.w[i];

		strbuf_puts(sb, "<tr class=\"workload\" data-cgroup=\"");
		put_html(sb, w->names[NAME_CGROUP]);
		strbuf_puts(sb, "\"><td><a href=\"/cgroup?path=");
		put_url_path(sb, w->names[NAME_CGROUP]);
		strbuf_puts(sb, "\">");
		put_html(sb, w->names[NAME_CGROUP]);
		strbuf_puts(sb, "</a></td>");
		put_names(sb, w);
		put_usage(sb, w);
		put_pressure(sb, w);
		strbuf_puts(sb, "</tr>\n");
	}
	if (!ws.n)
		strbuf_puts(sb, "<tr><td colspan=\"12\">no cgroup exported</td></tr>\n");
	strbuf_puts(sb, "</table>\n");
	workloads_free(&ws);
}

/* ---- the page of one cgroup ---- */

static void page_head(struct strbuf *sb, const char *title_path, double refresh)
{
	strbuf_puts(sb, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
	if (refresh > 0)
		strbuf_printf(sb, "<meta http-equiv=\"refresh\" content=\"%.0f\">", refresh < 2 ? 2.0 : refresh);
	strbuf_puts(sb, "<title>memwatchd: ");
	put_html(sb, title_path);
	strbuf_printf(sb, "</title><style>%s</style></head><body>\n", status_style);
}

void workloads_not_found(struct strbuf *sb, const char *path)
{
	page_head(sb, "no such cgroup", 0);
	strbuf_puts(sb, "<h1>No such cgroup</h1>\n<p>The newest window exports no cgroup <code>");
	put_html(sb, path);
	strbuf_puts(sb, "</code>: it is not there, not watched (the cgroup collector's include, exclude, "
			"max_depth and top_k), or gone longer than its series are kept. "
			"<a href=\"/\">Back to the status page</a>.</p>\n</body></html>\n");
}

/* One cgroup over n windows: columns of the charts and the table. */
struct cgroup_series {
	double *t, *usage, *limit, *stall, *psi, *kills;
};

static void cgroup_series_free(struct cgroup_series *c)
{
	free(c->t);
	free(c->usage);
	free(c->limit);
	free(c->stall);
	free(c->psi);
	free(c->kills);
}

static void window_row(struct strbuf *sb, const struct snapshot *s, const struct workload *w)
{
	const struct snapshot_window *win = snapshot_window(s);

	strbuf_printf(sb, "<tr class=\"window\" data-seq=\"%llu\"><td>%llu</td>", (unsigned long long)win->seq,
		      (unsigned long long)win->seq);
	strbuf_printf(sb, "<td><data class=\"end\" value=\"%llu.%06llu\">%llu.%06llu</data></td>",
		      (unsigned long long)(win->end_real_usec / 1000000), (unsigned long long)(win->end_real_usec % 1000000),
		      (unsigned long long)(win->end_real_usec / 1000000), (unsigned long long)(win->end_real_usec % 1000000));
	if (w) {
		put_usage(sb, w);
		put_pressure(sb, w);
	} else {
		strbuf_puts(sb, "<td colspan=\"8\">not exported in this window</td>");
	}
	strbuf_puts(sb, "</tr>\n");
}

static void snapshots_unref(struct snapshot *(*snaps)[HISTORY_MAX])
{
	for (size_t i = 0; i < HISTORY_MAX; i++)
		snapshot_unref((*snaps)[i]);
}

int workloads_cgroup_page(struct strbuf *sb, struct snapshot_ring *ring, const char *path)
{
	_cleanup_(snapshots_unref) struct snapshot *snaps[HISTORY_MAX] = { NULL };
	size_t n = snapshot_ring_recent(ring, snaps, ARRAY_SIZE(snaps)), i, n_marks = 0, first_row;
	struct cgroup_series c = { calloc(n + 1, sizeof(double)), calloc(n + 1, sizeof(double)),
				   calloc(n + 1, sizeof(double)), calloc(n + 1, sizeof(double)),
				   calloc(n + 1, sizeof(double)), calloc(n + 1, sizeof(double)) };
	struct workloads newest = { .only = path };
	struct mark marks[MAX_MARKS];
	const struct workload *w;
	double window;
	int r = 0;

	if (!c.t || !c.usage || !c.limit || !c.stall || !c.psi || !c.kills) {
		r = -ENOMEM;
		goto out;
	}
	if (n == 0 || (r = workloads_collect(&newest, snaps[n - 1], n > 1 ? snaps[n - 2] : NULL)) < 0 ||
	    newest.n == 0) {
		r = r < 0 ? r : -ENOENT;
		goto out;
	}
	w = &newest.w[0];
	for (i = 0; i < n; i++) {
		struct workloads one = { .only = path };

		c.t[i] = (double)snapshot_window(snaps[i])->end_real_usec / 1e6;
		c.usage[i] = c.limit[i] = c.stall[i] = c.psi[i] = c.kills[i] = NAN;
		if (workloads_collect(&one, snaps[i], i ? snaps[i - 1] : NULL) < 0) {
			workloads_free(&one);
			r = -ENOMEM;
			goto out;
		}
		if (one.n) {
			c.usage[i] = one.w[0].usage;
			c.limit[i] = one.w[0].limit;
			c.stall[i] = one.w[0].reclaim_seconds;
			c.psi[i] = one.w[0].psi_some;
			c.kills[i] = one.w[0].oom_kills_change;
		}
		workloads_free(&one);
		if (c.kills[i] > 0 && n_marks < MAX_MARKS) {
			marks[n_marks].t = c.t[i];
			snprintf(marks[n_marks].label, sizeof(marks[0].label), "%.0f OOM kill%s in window #%llu",
				 c.kills[i], c.kills[i] == 1 ? "" : "s",
				 (unsigned long long)snapshot_window(snaps[i])->seq);
			n_marks++;
		}
	}

	window = snapshot_value(snaps[n - 1], METRIC_NAME(MW_WINDOW_SECONDS), NULL);
	page_head(sb, path, isnan(window) ? 2 : window);
	strbuf_puts(sb, "<h1>Cgroup <code>");
	put_html(sb, path);
	strbuf_puts(sb, "</code></h1>\n<table class=\"names\"><tr><th>unit</th><th>pod</th><th>container</th></tr><tr>");
	put_names(sb, w);
	strbuf_puts(sb, "</tr></table>\n<p>Showing ");
	put_window_stamp(sb, snaps[n - 1], "cgroup");
	strbuf_printf(sb, ", and the %zu windows before it that the daemon keeps. "
			  "<a href=\"/\">Status page</a> · <a href=\"/api/v1/windows\">/api/v1/windows</a></p>\n",
		      n - 1);
	draw_chart(sb, &(struct chart){ "Usage and limit (red marks: OOM kills)", n, c.t,
					{ { "usage", "#1f77b4", c.usage }, { "limit", "#7f7f7f", c.limit } }, 2, NULL,
					NULL, put_bytes, marks, n_marks });
	draw_chart(sb, &(struct chart){ "Reclaim stall time per window", n, c.t, { { "stall", "#ff7f0e", c.stall } }, 1,
					NULL, NULL, put_seconds, marks, n_marks });
	draw_chart(sb, &(struct chart){ "Memory pressure (PSI some), time stalled per window", n, c.t,
					{ { "some", "#9467bd", c.psi } }, 1, NULL, NULL, put_seconds, marks, n_marks });

	first_row = n > CGROUP_TABLE_WINDOWS ? n - CGROUP_TABLE_WINDOWS : 0;
	strbuf_printf(sb, "<table id=\"cgroup-windows\"><caption>The newest %zu windows, newest first</caption>"
			  "<tr><th>window</th><th>end (s since the epoch)</th>%s</tr>\n",
		      n - first_row, numbers_header);
	for (i = n; i > first_row; i--) {
		struct workloads one = { .only = path };

		if (workloads_collect(&one, snaps[i - 1], i > 1 ? snaps[i - 2] : NULL) < 0) {
			workloads_free(&one);
			r = -ENOMEM;
			goto out;
		}
		window_row(sb, snaps[i - 1], one.n ? &one.w[0] : NULL);
		workloads_free(&one);
	}
	strbuf_puts(sb, "</table>\n</body></html>\n");
	r = strbuf_failed(sb) ? -ENOMEM : 0;
out:
	workloads_free(&newest);
	cgroup_series_free(&c);
	return r;
}
