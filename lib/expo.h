/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_EXPO_H
#define MEMWATCH_EXPO_H

/* Prometheus text exposition format 0.0.4, written without locale or libc
 * float formatting surprises. */

#include "strbuf.h"

#define EXPO_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"
#define METRIC_MAX_LABELS 8
#define EXPO_NUMBER_MAX 32

enum metric_type {
	METRIC_GAUGE,
	METRIC_COUNTER,
	METRIC_HISTOGRAM,
};

/* The base unit a family's values are in; the name ends in its suffix
 * (lib/catalogue.c's unit test holds every family to that). */
enum metric_unit {
	METRIC_UNIT_NONE, /* a count, a state, an info family */
	METRIC_UNIT_BYTES,
	METRIC_UNIT_SECONDS,
	METRIC_UNIT_RATIO,
	METRIC_UNIT_BYTES_PER_SECOND,
};

/* Static description of one metric family. The daemon's families are all in
 * lib/catalogue.c; the fields after labels are for the docs and the checks,
 * but for a histogram's bounds, which snapshot_add_histogram_full() uses. */
struct metric_desc {
	const char *name;
	const char *help;
	enum metric_type type;
	unsigned n_labels;
	const char *labels[METRIC_MAX_LABELS];
	enum metric_unit unit;
	const char *owner;  /* the collector that emits it, or "daemon" */
	const char *source; /* where the value comes from, for docs/metrics.md */
	/* A histogram's finite upper bounds (ascending, +Inf follows) and the
	 * same as exposition text, so that no window formats them again. */
	size_t n_bounds;
	const double *bounds;
	const char *const *le;
	/* METRIC_FLAG_*: what a histogram carries beyond its classic buckets in
	 * the formats that can say it (lib/snapshot_openmetrics.c, _protobuf.c),
	 * and which labelled counters have a _created. */
	unsigned flags;
};

/* Native (exponential) buckets in the protobuf format. */
#define METRIC_FLAG_NATIVE_HISTOGRAM (1u << 0)
/* Exemplars on the classic buckets in OpenMetrics and protobuf. */
#define METRIC_FLAG_EXEMPLARS (1u << 1)
/* A labelled counter whose series all count from the collector's start (a
 * fixed set: a scope, a configured killer), so that instant is their
 * _created, as for unlabelled ones. */
#define METRIC_FLAG_SERIES_FROM_START (1u << 2)

const char *metric_type_name(enum metric_type t);

/* Shortest text that reads back as the same double: integers without a
 * fraction, "+Inf", "-Inf", "NaN". Returns the length written. */
size_t expo_format_number(char buf[static EXPO_NUMBER_MAX], double v);
void expo_put_number(struct strbuf *sb, double v);

/* Escapes \ " and newline; invalid UTF-8 becomes U+FFFD, since one bad
 * byte from a process name would make Prometheus reject the whole scrape. */
void expo_put_label_value(struct strbuf *sb, const char *value);
/* HELP text escapes only \ and newline. */
void expo_put_help_text(struct strbuf *sb, const char *text);

void expo_put_family_header(struct strbuf *sb, const struct metric_desc *desc);

/* One sample line: name{labels,extra="x"} value. extra_name may be NULL. */
void expo_put_sample(struct strbuf *sb, const char *name, const char *suffix,
		     const struct metric_desc *desc, const char *const *label_values,
		     const char *extra_name, const char *extra_value, double value);
/* The same without the newline, for a line that goes on (an exemplar). */
void expo_put_sample_open(struct strbuf *sb, const char *name, const char *suffix,
			  const struct metric_desc *desc, const char *const *label_values,
			  const char *extra_name, const char *extra_value, double value);

#endif
