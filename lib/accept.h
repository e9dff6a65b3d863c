/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_ACCEPT_H
#define MEMWATCH_ACCEPT_H

/* Which exposition format a scrape gets, from its Accept header fields
 * (RFC 9110 §12.5.1), the way Prometheus's client libraries choose. */

enum expo_format {
	EXPO_FORMAT_TEXT,        /* text/plain; version=0.0.4: the default */
	EXPO_FORMAT_OPENMETRICS, /* application/openmetrics-text; version=1.0.0 */
	EXPO_FORMAT_PROTOBUF,    /* io.prometheus.client.MetricFamily, length-delimited */
	EXPO_FORMAT__COUNT,
};

/* The Content-Type each format is served with, naming it exactly. */
const char *expo_format_content_type(enum expo_format f);

/* Weights in thousandths (0..1000), -1 while a format has not been named;
 * rank orders equal weights: the format named first wins. */
struct accept_format {
	int weight[EXPO_FORMAT__COUNT];
	unsigned rank[EXPO_FORMAT__COUNT];
	unsigned n_named;
};

void accept_format_init(struct accept_format *af);
/* Adds one Accept field value; call once per line. NULL is ignored. */
void accept_format_parse(struct accept_format *af, const char *value);
/* The named format with the highest weight above 0 (ties: named first);
 * the text format when none is named, or only wildcards and others. */
enum expo_format accept_format_choose(const struct accept_format *af);

#endif
