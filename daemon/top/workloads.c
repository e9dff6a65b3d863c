// SPDX-License-Identifier: GPL-2.0
/* memwatch-top's Workloads screen (key w): the status page's Workloads table
 * in the terminal. The top cgroups of the newest window fetched, ranked the
 * same way (reclaim stall time in the window, then PSI some in the window,
 * then usage against limit, then the path), with the window's "delta"s of the
 * JSON API as the changes. Numbers are plain fixed formats (MiB with one
 * decimal, milliseconds, whole seconds), so what is shown can be compared with
 * the same window of /api/v1/windows digit for digit. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "catalogue.h"
#include "view_internal.h"

#define WL_ROWS_MAX 10 /* as the status page's WORKLOADS_ROWS */
#define WL_SAMPLES_MAX 4096
#define NAMES_MIN_COLS 120 /* room for the names column */
#define BAR_MIN_COLS 100   /* room for the usage bar */

struct wl_row {
	const json_t *info; /* its memwatch_cgroup_info sample: the names */
	const char *path;
	double usage, limit, ratio, eta, reclaims, stall, psi, oom;
};

/* The value (or "delta") of the cgroup's sample in a family of window w;
 * sum: add up its series (OOM kills: one per scope). NAN when it has none. */
static double of_cgroup(const json_t *w, int id, const char *path, const char *field, bool sum)
{
	const json_t *f = family(w, METRIC_NAME(id));
	double v = NAN;

	for (size_t i = 0; i < json_array_size(f); i++) {
		const json_t *s = json_array_get(f, i);
		double x;

		if (strcmp(str(json_object_get(s, "labels"), "cgroup"), path) != 0)
			continue;
		x = num(s, field);
		if (!sum)
			return x;
		if (!isnan(x))
			v = isnan(v) ? x : v + x;
	}
	return v;
}

static double or_below(double v)
{
	return isnan(v) ? -1 : v;
}

static int cmp_pressure(const void *a, const void *b)
{
	const struct wl_row *x = a, *y = b;
	double k[3][2] = {
		{ or_below(x->stall), or_below(y->stall) },
		{ or_below(x->psi), or_below(y->psi) },
		{ or_below(x->ratio), or_below(y->ratio) },
	};

	for (size_t i = 0; i < 3; i++)
		if (k[i][0] != k[i][1])
			return k[i][0] < k[i][1] ? 1 : -1;
	return strcmp(x->path, y->path);
}

/* "%.<prec>f" of v scaled, or "-" for none. */
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

/* unit, namespace/pod, container (id): whichever the cgroup has. */
static void names_of(const json_t *info, char *buf, size_t len, bool utf8)
{
	const json_t *l = json_object_get(info, "labels");
	char raw[768], *p = raw;
	const char *unit = str(l, "unit"), *ns = str(l, "namespace"), *pod = str(l, "pod");
	const char *ctr = str(l, "container"), *id = str(l, "container_id");

	raw[0] = '\0';
	if (*unit)
		p += snprintf(p, sizeof(raw) - (size_t)(p - raw), "%s ", unit);
	if (*pod && p < raw + sizeof(raw))
		p += snprintf(p, sizeof(raw) - (size_t)(p - raw), "%s%s%s ", ns, *ns ? "/" : "", pod);
	if (*ctr && p < raw + sizeof(raw))
		p += snprintf(p, sizeof(raw) - (size_t)(p - raw), "%s ", ctr);
	if (*id && p < raw + sizeof(raw))
		snprintf(p, sizeof(raw) - (size_t)(p - raw), "%.12s", id);
	term_safe(buf, len, raw, utf8);
}

static void bar(char *buf, double ratio)
{
	int full = isnan(ratio) ? 0 : ratio >= 1 ? 8 : ratio <= 0 ? 0 : (int)(ratio * 8 + 0.5);

	if (isnan(ratio)) {
		snprintf(buf, 11, "%-10s", "");
		return;
	}
	buf[0] = '[';
	for (int i = 0; i < 8; i++)
		buf[1 + i] = i < full ? '#' : '.';
	buf[9] = ']';
	buf[10] = '\0';
}

void workloads_draw(const struct view *v)
{
	const json_t *w = last_window(v->windows), *info = family(w, METRIC_NAME(MW_CGROUP_INFO));
	static struct wl_row rows[WL_SAMPLES_MAX];
	bool names = COLS >= NAMES_MIN_COLS, bars = COLS >= BAR_MIN_COLS;
	/* the columns after the path, each with the blank before it */
	int numbers = 10 + 11 + 8 + 10 + 9 + 11 + 10 + 6 + (bars ? 11 : 0);
	int path_w = COLS - numbers - 1, names_w = 0, y;
	size_t n = 0, i;

	erase();
	draw_title(v);
	if (v->problem || !w) {
		draw_wrapped(2, 0, A_BOLD | color(v, PAIR_ERROR),
			     v->problem ? v->problem : "The daemon has not published a window yet.");
		refresh();
		return;
	}
	if (names) {
		names_w = path_w / 2;
		path_w -= names_w + 1;
	}
	if (path_w < 8)
		path_w = 8;
	putf(2, 0, A_BOLD, "Workloads: window #%.0f, ended %.6f (s since the epoch)", num(w, "seq"), num(w, "end"));
	put(3, 0, A_NORMAL,
	    "Top cgroups by reclaim stall time in the window, then PSI some in the window, then usage/limit. "
	    "w: back");

	for (i = 0; i < json_array_size(info) && n < WL_SAMPLES_MAX; i++) {
		const json_t *s = json_array_get(info, i);
		const char *path = str(json_object_get(s, "labels"), "cgroup");
		struct wl_row *r = &rows[n];

		if (strcmp(path, "other") == 0)
			continue;
		*r = (struct wl_row){
			.info = s,
			.path = path,
			.usage = of_cgroup(w, MW_CGROUP_MEMORY_USAGE_BYTES, path, "value", false),
			.limit = of_cgroup(w, MW_CGROUP_MEMORY_LIMIT_BYTES, path, "value", false),
			.ratio = of_cgroup(w, MW_CGROUP_MEMORY_USAGE_RATIO, path, "value", false),
			.eta = of_cgroup(w, MW_CGROUP_MEMORY_LIMIT_ETA_SECONDS, path, "value", false),
			.reclaims = of_cgroup(w, MW_CGROUP_RECLAIMS_TOTAL, path, "delta", false),
			.stall = of_cgroup(w, MW_CGROUP_RECLAIM_SECONDS_TOTAL, path, "delta", false),
			.psi = of_cgroup(w, MW_CGROUP_PRESSURE_MEMORY_SOME_SECONDS_TOTAL, path, "delta", false),
			.oom = of_cgroup(w, MW_CGROUP_OOM_KILLS_TOTAL, path, "value", true),
		};
		n++;
	}
	if (n)
		qsort(rows, n, sizeof(rows[0]), cmp_pressure);

	{
		char pbuf[256], nbuf[256];

		cell(pbuf, sizeof(pbuf), "CGROUP", path_w, false);
		cell(nbuf, sizeof(nbuf), "NAMES", names_w, false);
		putf(5, 0, A_BOLD, "%s %s%s%9s%s %10s %7s %9s %8s %10s %9s %5s", pbuf, names ? nbuf : "",
		     names ? " " : "", "USED MiB", bars ? " USAGE     " : "", "LIMIT MiB", "USE%", "ETA s", "STALLS",
		     "STALL ms", "PSI ms", "OOM");
	}
	y = 6;
	for (i = 0; i < n && i < WL_ROWS_MAX && y < LINES; i++, y++) {
		const struct wl_row *r = &rows[i];
		char pbuf[256], nbuf[256], safe[1024], names_raw[256], b[11];
		char u[24], l[24], pc[24], e[24], st[24], sm[24], ps[24], oo[24];

		term_safe(safe, sizeof(safe), r->path, v->utf8);
		cell(pbuf, sizeof(pbuf), safe, path_w, true);
		names_of(r->info, names_raw, sizeof(names_raw), v->utf8);
		cell(nbuf, sizeof(nbuf), names_raw, names_w, false);
		bar(b, r->ratio);
		putf(y, 0, r->ratio >= 0.9 || r->stall > 0 ? color(v, PAIR_WARN) : A_NORMAL,
		     "%s %s%s%9s%s%s %10s %7s %9s %8s %10s %9s %5s", pbuf, names ? nbuf : "", names ? " " : "",
		     fixed(u, sizeof(u), r->usage, 1048576.0, 1), bars ? " " : "", bars ? b : "",
		     fixed(l, sizeof(l), r->limit, 1048576.0, 1), fixed(pc, sizeof(pc), r->ratio, 0.01, 1),
		     fixed(e, sizeof(e), r->eta, 1, 0), fixed(st, sizeof(st), r->reclaims, 1, 0),
		     fixed(sm, sizeof(sm), r->stall, 0.001, 1), fixed(ps, sizeof(ps), r->psi, 0.001, 1),
		     fixed(oo, sizeof(oo), r->oom, 1, 0));
	}
	if (n == 0)
		put(6, 0, color(v, PAIR_OK), "no cgroup exported");
	refresh();
}
