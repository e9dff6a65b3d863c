/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_SNAPSHOT_INTERNAL_H
#define MEMWATCH_SNAPSHOT_INTERNAL_H

/* The inside of a snapshot, shared by lib/snapshot.c (building, sealing,
 * the text) and lib/snapshot_json.c (the JSON API's view of a window). */

#include <pthread.h>
#include "accept.h"
#include "snapshot.h"

struct histogram_data {
	size_t n;          /* finite buckets; +Inf follows */
	const double *bounds; /* the descriptor's own, or a copy in the snapshot */
	uint64_t *cumulative; /* n + 1 entries, last one is the total count */
	double sum;
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

struct snapshot {
	atomic_uint refcount;
	bool sealed;
	bool compacted; /* one block at families holds samples, labels and histograms */
	struct snapshot_window window;
	struct family *families;
	size_t n_families, cap_families;
	size_t n_series, max_series, dropped_series;
	struct arena_block *arena;
	/* Each format's body (the text ones NUL-terminated) and its gzip member
	 * share one block. The text is rendered at seal, like every format asked
	 * for lately; any other on its first request, under render_lock, once. */
	struct snapshot_renderer *renderer;
	pthread_mutex_t render_lock;
	bool trimmed;
	struct snapshot_body {
		atomic_bool ready; /* release: the fields below are set */
		char *block;
		const char *data;
		size_t len;
		const char *gzip; /* into block; NULL if compressing failed */
		size_t gzip_len;
	} bodies[EXPO_FORMAT__COUNT];
};

#endif
