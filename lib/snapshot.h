/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_SNAPSHOT_H
#define MEMWATCH_SNAPSHOT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include "accept.h"
#include "expo.h"

/* Everything one window produced. Built by one thread, then published
 * (snapshot_seal) and never changed again; readers share it by refcount. */
struct snapshot;

struct snapshot_window {
	uint64_t seq;            /* 1, 2, 3 ... per daemon run */
	uint64_t start_mono_usec;
	uint64_t end_mono_usec;
	uint64_t start_real_usec; /* wall clock, for humans and logs */
	uint64_t end_real_usec;
};

/* max_series bounds memory: samples past it are counted, not stored. */
struct snapshot *snapshot_new(const struct snapshot_window *window, size_t max_series);
struct snapshot *snapshot_ref(struct snapshot *s);
void snapshot_unref(struct snapshot *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct snapshot *, snapshot_unref)

/* label_values has desc->n_labels entries; the strings are copied. */
int snapshot_add(struct snapshot *s, const struct metric_desc *desc,
		 const char *const *label_values, double value);

/* bounds[n] are the finite upper bounds in ascending order; counts[n + 1]
 * are per-bucket (not cumulative) counts, counts[n] being above the last bound. */
int snapshot_add_histogram(struct snapshot *s, const struct metric_desc *desc,
			   const char *const *label_values, const double *bounds,
			   const uint64_t *counts, size_t n, double sum);

/* A histogram's native (exponential) buckets: counts[i] (not cumulative) is
 * bucket first_index + i of the schema, the zero bucket [-zero_threshold,
 * zero_threshold] apart. They count the same observations as the classic
 * buckets. */
struct histogram_native {
	int32_t schema;
	int32_t first_index;
	double zero_threshold;
	uint64_t zero_count;
	size_t n;
	const uint64_t *counts;
};

/* One exemplar of classic bucket `bucket` (0 ... n_bounds, the last being
 * +Inf): the labels of an observation, its value and when it was made. */
struct histogram_exemplar {
	size_t bucket;
	unsigned n_labels;
	const char *const *label_names;
	const char *const *label_values;
	double value;
	double timestamp_seconds;
};

/* OpenMetrics bounds an exemplar's label names and values together. */
#define SNAPSHOT_EXEMPLAR_LABEL_CHARS 128

/* For a descriptor with bounds of its own (the catalogue's histograms):
 * slots[n_slots] are per-bucket counts, n_slots being desc->n_bounds + 1, the
 * last one above every bound (a kernel's clamp slot, +Inf). The bounds are
 * neither copied nor checked, and their le text is the descriptor's. With
 * native buckets (NULL: none) and exemplars (at most one per bucket; one whose labels exceed
 * SNAPSHOT_EXEMPLAR_LABEL_CHARS code points is left out). Everything is
 * copied. The formats show them where the descriptor's flags ask for them. */
int snapshot_add_histogram_full(struct snapshot *s, const struct metric_desc *desc,
				const char *const *label_values, const uint64_t *slots, size_t n_slots,
				double sum, const struct histogram_native *native,
				const struct histogram_exemplar *exemplars, size_t n_exemplars);

/* Before the first sample: s is built like `like` (the window before, a
 * reference is taken until seal), so each family created in the same place
 * gets room for as many samples as it had there at once. */
void snapshot_size_like(struct snapshot *s, struct snapshot *like);

/* Raises or lowers the series limit of a snapshot being built: the daemon
 * gives its own health series a budget of their own, on top of the
 * collectors' max_series. */
void snapshot_set_max_series(struct snapshot *s, size_t max_series);

/* A position in a snapshot being built: families created after it are those
 * of the collectors that ran since (each family has one producer). */
size_t snapshot_mark(const struct snapshot *s);
/* The descriptor of family i (families are numbered in the order they were
 * created, as snapshot_mark counts them); NULL past the last one. */
const struct metric_desc *snapshot_family_desc(const struct snapshot *s, size_t i);

/* One counter or histogram sample, writable before seal. */
struct snapshot_cumulative {
	const struct metric_desc *desc;
	const char *const *labels; /* desc->n_labels of them */
	double *value;             /* a counter's value; NULL for a histogram */
	size_t n;                  /* a histogram's finite buckets */
	const double *bounds;      /* n of them */
	uint64_t *cumulative;      /* n + 1, the last one being the count */
	double *sum;
	/* A histogram's native buckets, if has_native: n_native counts of
	 * buckets native_first ..., each a counter of its own, and the zero
	 * bucket's. snapshot_cumulative_widen_native() makes room for more. */
	bool has_native;
	int32_t native_schema, native_first;
	size_t n_native;
	uint64_t *native;
	uint64_t *zero_count;
	void *priv; /* the snapshot's */
};

/* Widens c's native range to cover buckets first ... first + n - 1 too
 * (new buckets at 0); c's pointers follow. */
int snapshot_cumulative_widen_native(struct snapshot_cumulative *c, int32_t first, size_t n);

/* Before seal: calls fn for every counter and histogram sample of the
 * families created since mark. fn may change the values. */
void snapshot_foreach_cumulative(struct snapshot *s, size_t mark,
				 void (*fn)(struct snapshot_cumulative *c, void *ud), void *ud);

/* Seals the snapshot: afterwards it is read-only, but for the bodies
 * rendered from it on demand and snapshot_trim(). A format, or its gzip
 * member, asked for in the last two windows is rendered here (a scraper that
 * comes every window then only takes a reference); any other waits for its
 * first request (snapshot_body()) and is rendered at most once per window,
 * so a window nobody scrapes costs no rendering. The renderer is shared by
 * every window: the compressor's state (~270 KiB, which a fresh one
 * allocates and zeroes), when each body was last asked for and when the
 * last windows were sealed. snapshot_seal() sets one up for this snapshot
 * alone. */
struct snapshot_renderer;
struct snapshot_renderer *snapshot_renderer_new(void);
void snapshot_renderer_unref(struct snapshot_renderer *r);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct snapshot_renderer *, snapshot_renderer_unref)
int snapshot_seal_with(struct snapshot *s, struct snapshot_renderer *renderer);
int snapshot_seal(struct snapshot *s);

/* Only the newest window's bodies are served; older ones are read through
 * their samples. Hands over every body rendered (at most two blocks per
 * format, each for free()) into blocks and returns their number, if the caller holds the
 * only reference; else 0: someone may still be sending one. The caller must
 * make sure no new reference can be taken meanwhile (the ring calls it under
 * its lock). Samples stay; no body is rendered again. */
#define SNAPSHOT_TRIM_BLOCKS (2 * EXPO_FORMAT__COUNT)
size_t snapshot_trim(struct snapshot *s, void *blocks[static SNAPSHOT_TRIM_BLOCKS]);

/* Renders the text again from the samples, e.g. for a trimmed snapshot
 * (lib/snapshot_text.c). */
int snapshot_render_text(const struct snapshot *s, struct strbuf *sb);
/* The same window in OpenMetrics 1.0 text (lib/snapshot_openmetrics.c). */
int snapshot_render_openmetrics(const struct snapshot *s, struct strbuf *sb);

/* Before seal: the families created since mark that count from a known
 * instant (the emitter says so: its counters started from zero then and
 * were carried over every restart since) get it as their OpenMetrics
 * _created, seconds since the epoch. Only unlabelled counters and
 * histograms: a labelled series (a process, a cgroup) can start later. */
void snapshot_set_created(struct snapshot *s, size_t mark, double created_seconds);

const struct snapshot_window *snapshot_window(const struct snapshot *s);
/* A format's body, or its gzip member, rendered on this call if it was not
 * yet; NULL before seal, once trimmed, for a format with no renderer, if
 * rendering ran out of memory (a later call tries again) or, for the gzip
 * member, if compressing failed. Safe from any thread holding a reference. */
const void *snapshot_body(const struct snapshot *s, enum expo_format format, bool gzip, size_t *len);
/* The text's body and gzip member, as snapshot_body(). */
const char *snapshot_text(const struct snapshot *s, size_t *len);
const void *snapshot_gzip(const struct snapshot *s, size_t *len);
/* Whether the format's body is rendered (at seal or by a request so far). */
bool snapshot_rendered(const struct snapshot *s, enum expo_format format);
size_t snapshot_series(const struct snapshot *s);
size_t snapshot_dropped_series(const struct snapshot *s);

/* One window as a JSON object: window times, available memory (last, min,
 * max), and every series; counters and histograms also carry their change
 * since prev (may be NULL). */
int snapshot_render_json(struct strbuf *sb, const struct snapshot *s, const struct snapshot *prev);

/* Calls fn for every sample of the named family: its label values (n_labels
 * of them, in the descriptor's order), value (a histogram's count) and, for
 * histograms, sum. */
void snapshot_foreach(const struct snapshot *s, const char *name,
		      void (*fn)(const char *const *labels, unsigned n_labels, double value, double sum, void *ud),
		      void *ud);

/* A counter's or a histogram's change since the window before (the JSON
 * API's delta, count_delta and sum_delta): known only where both windows have
 * the series, the same in every label. A value below the one before is a
 * counter that started again from zero, so all of it is the change; for a
 * histogram its count falling says so, for the sum too. */
struct snapshot_change {
	double value;   /* a counter's; NAN for a histogram */
	uint64_t count; /* a histogram's count's; 0 for a counter */
	double sum;     /* a histogram's sum's; NAN for a counter */
};

/* Calls fn for every sample of the named family in s with its change since
 * prev, the window before s (may be NULL), or NULL where none is known: no
 * prev, a gauge, or a series prev lacks (it may have been exported before
 * that, or counted in "other" until now, so its whole value is no change of
 * one window). The status page's tables and charts read changes here;
 * snapshot_render_json() applies the same rule (lib/snapshot_change.c). */
void snapshot_foreach_change(const struct snapshot *s, const struct snapshot *prev, const char *name,
			     void (*fn)(const char *const *labels, unsigned n_labels,
					const struct snapshot_change *c, void *ud),
			     void *ud);

/* Structured read access (JSON API, tests). Returns NAN when absent. */
double snapshot_value(const struct snapshot *s, const char *name, const char *const *label_values);

#endif
