/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_SNAPSHOT_INTERNAL_H
#define MEMWATCH_SNAPSHOT_INTERNAL_H

/* The inside of a snapshot, shared by the lib/snapshot*.c files: building
 * and reading (snapshot.c, snapshot_histogram.c), compacting at seal
 * (snapshot_compact.c), the formats (snapshot_text.c with every format's
 * body, snapshot_openmetrics.c, snapshot_protobuf.c, snapshot_json.c) and
 * a series' change between two windows (snapshot_change.c). */

#include <pthread.h>
#include "accept.h"
#include "snapshot.h"

/* A histogram's native buckets and exemplars, in one position-independent
 * block (copied as it is when the snapshot is compacted): the header, the
 * n_native bucket counts followed by the zero bucket's, then n_exemplars
 * records, ascending by bucket. */
struct histogram_extra {
	size_t size; /* of the whole block, a multiple of 8 */
	int32_t schema;
	int32_t first_index;
	double zero_threshold;
	uint32_t has_native; /* then the zero bucket and n_native buckets (maybe none) */
	uint32_t pad;
	size_t n_native;
	size_t n_exemplars;
	uint64_t native[]; /* n_native + 1 */
};

struct exemplar_record {
	size_t size; /* of the record and its text, a multiple of 8 */
	size_t bucket;
	double value;
	double timestamp_seconds;
	unsigned n_labels;
	char text[]; /* name\0value\0 per label */
};

static inline const struct exemplar_record *histogram_extra_exemplars(const struct histogram_extra *x)
{
	return (const struct exemplar_record *)(x->native + x->n_native + 1);
}

static inline const struct exemplar_record *exemplar_record_next(const struct exemplar_record *r)
{
	return (const struct exemplar_record *)((const char *)r + r->size);
}

struct histogram_data {
	size_t n;          /* finite buckets; +Inf follows */
	const double *bounds; /* the descriptor's own, or a copy in the snapshot */
	uint64_t *cumulative; /* n + 1 entries, last one is the total count */
	double sum;
	struct histogram_extra *extra; /* NULL: classic buckets only */
};

struct sample {
	char **label_values;
	double value;
	struct histogram_data *hist;
};

struct family {
	const struct metric_desc *desc;
	struct sample *samples;
	size_t n, cap;
	double created_seconds; /* when its counting began (epoch); 0: not known */
};

/* Bump allocator: a snapshot's small strings die together. */
struct arena_block {
	struct arena_block *next;
	size_t used, cap;
	char data[];
};

#define FAMILY_BY_DESC_SLOTS 256

struct snapshot {
	atomic_uint refcount;
	bool sealed;
	bool compacted; /* one block at families holds samples, labels and histograms */
	struct snapshot_window window;
	struct family *families;
	size_t n_families, cap_families;
	size_t n_series, max_series, dropped_series;
	struct arena_block *arena;
	/* While building: the window before, whose families (in the same order)
	 * size this one's arrays (snapshot_size_like); dropped at seal. */
	struct snapshot *like;
	/* While building: family index + 1 by name and label count (open
	 * addressing, 0 free), so a new family costs no scan of the others;
	 * made at the first lookup that needs it (families in the order of
	 * the window before need none). */
	uint32_t *family_index;
	size_t family_index_mask;
	/* While building: family index + 1 by the descriptor's address (a cache
	 * in front of family_index, which hashes the name). */
	uint32_t family_by_desc[FAMILY_BY_DESC_SLOTS];
	/* Each format's body (the text ones NUL-terminated) and its gzip member
	 * share one block when both are rendered together (at seal, for a format
	 * asked for lately); a gzip member asked for later gets one of its own.
	 * Rendered under render_lock, at most once each. */
	struct snapshot_renderer *renderer;
	pthread_mutex_t render_lock;
	bool trimmed;
	struct snapshot_body {
		atomic_bool ready; /* release: block, data and len are set */
		atomic_bool gzip_ready; /* release: gzip and gzip_len are set */
		char *block;
		char *gzip_block; /* NULL: the gzip member, if any, is in block */
		const char *data;
		size_t len;
		const char *gzip;
		size_t gzip_len;
	} bodies[EXPO_FORMAT__COUNT];
};

/* Makes room for one more element in a doubling array (first: the first capacity). */
int snapshot_grow_array(void **array, size_t *cap, size_t n, size_t elem_size, size_t first);

/* A snapshot's or a renderer's references: the acq_rel of the last drop
 * orders every holder's reads before the free. */
static inline void refcount_take(atomic_uint *refcount)
{
	atomic_fetch_add_explicit(refcount, 1, memory_order_relaxed);
}

/* True when that was the last reference. */
static inline bool refcount_drop(atomic_uint *refcount)
{
	return atomic_fetch_sub_explicit(refcount, 1, memory_order_acq_rel) == 1;
}

/* The snapshot's arena (lib/snapshot.c): 16-byte aligned, freed with it. */
void *snapshot_arena_alloc(struct snapshot *s, size_t size);
/* A histogram sample; bounds as in snapshot_add_histogram(), unchecked.
 * *ret (if not NULL) is its data, for the caller to add an extra block to. */
int snapshot_add_histogram_data(struct snapshot *s, const struct metric_desc *desc,
				const char *const *label_values, const double *bounds,
				const uint64_t *counts, size_t n, double sum, struct histogram_data **ret);

/* Copies the samples into one right-sized block, labels and bounds shared
 * (lib/snapshot_compact.c). Best effort: on failure nothing changes. */
void snapshot_compact(struct snapshot *s);

/* At seal: takes a reference to renderer (NULL: a new one of its own) and
 * renders the bodies asked for lately (lib/snapshot_text.c). */
int snapshot_render_at_seal(struct snapshot *s, struct snapshot_renderer *renderer);

/* The window as delimited io.prometheus.client.MetricFamily messages
 * (lib/snapshot_protobuf.c), served through snapshot_body(). */
int snapshot_render_protobuf(const struct snapshot *s, struct strbuf *sb);

/* The next family named name, from family *i on (which it leaves at that
 * family); NULL past the last. */
const struct family *snapshot_family_named(const struct snapshot *s, const char *name, size_t *i);

/* The family of s (may be NULL) with desc's name and number of labels, and
 * the sample of f (may be NULL) with like's label values; NULL if none
 * (lib/snapshot_change.c). */
const struct family *snapshot_find_family(const struct snapshot *s, const struct metric_desc *desc);
const struct sample *snapshot_find_sample(const struct family *f, const struct sample *like);
/* now's change since before, a sample of the same series in the window
 * before (NULL: none), as struct snapshot_change tells; false if not known. */
bool snapshot_sample_change(const struct family *f, const struct sample *now, const struct sample *before,
			    struct snapshot_change *c);

/* Fills c's native fields from h (lib/snapshot_histogram.c). */
void snapshot_cumulative_native(struct snapshot *s, struct histogram_data *h, struct snapshot_cumulative *c);

#endif
