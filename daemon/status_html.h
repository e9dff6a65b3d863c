/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCHD_STATUS_HTML_H
#define MEMWATCHD_STATUS_HTML_H

/* What the status page (status_page.c) shares with its workloads table and
 * the cgroup pages (status_workloads.c): escaping, number cells and the
 * inline SVG chart. */
#include <stddef.h>
#include "event_channel.h"
#include "strbuf.h"

#define MAX_MARKS 64

/* Everything system-provided (comm, cgroup paths, reasons) goes through here. */
void put_html(struct strbuf *sb, const char *s);
/* <td>text</td>, the text made harmless */
void put_cell(struct strbuf *sb, const char *text);
void put_bytes(struct strbuf *sb, double v);
void put_seconds(struct strbuf *sb, double v);
void put_count(struct strbuf *sb, double v);
void put_percent(struct strbuf *sb, double v);

struct chart_series {
	const char *name;
	const char *color;
	const double *v;
};

struct mark {
	double t;
	char label[EVENT_COMM_LEN + 300];
};

struct chart {
	const char *title;
	size_t n;
	const double *t;        /* window end times, seconds */
	struct chart_series series[3];
	size_t n_series;
	const double *band_lo, *band_hi; /* optional min–max band */
	void (*fmt)(struct strbuf *sb, double v);
	const struct mark *marks;
	size_t n_marks;
};

void draw_chart(struct strbuf *sb, const struct chart *c);

/* The pages' one style sheet, inline. */
extern const char status_style[];

#endif
