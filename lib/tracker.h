/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_TRACKER_H
#define MEMWATCH_TRACKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Per-entity cumulative counters (per process, per cgroup) read every window:
 * turns them into window deltas, picks the top_k entities to export, and
 * folds the rest into "other" so that sums still follow the totals. */

#define TRACKER_MAX_COUNTERS 6
#define TRACKER_LABEL_MAX 256

struct tracked_row {
	uint64_t key;        /* pid, cgroup id */
	uint64_t generation; /* e.g. start time: a change means a new entity, counters restart */
	uint64_t value[TRACKER_MAX_COUNTERS];
	uint64_t delta[TRACKER_MAX_COUNTERS]; /* this window; filled by tracker_update */
	uint64_t last_change_usec;            /* carried over by tracker_update */
	char label[TRACKER_LABEL_MAX];        /* comm, path; an empty one keeps the previous label */
};

struct tracker {
	size_t n_counters;
	unsigned rank_by[2];   /* counter indices: ranked by delta of the first, then the second */
	struct tracked_row *rows; /* this window, sorted by key */
	size_t n_rows;
	uint64_t other[TRACKER_MAX_COUNTERS]; /* cumulative deltas of everything not exported */
};

void tracker_init(struct tracker *t, size_t n_counters, unsigned rank_primary, unsigned rank_secondary);
void tracker_done(struct tracker *t);

/* Takes over fresh (n rows, malloc'ed, any order): sorts it, computes each row's
 * delta against the previous window (from zero for a new key or generation), and
 * frees the previous table. */
void tracker_update(struct tracker *t, struct tracked_row *fresh, size_t n, uint64_t now_usec);

/* Fills out (room for top_k) with the rows to export: changed in this window, or
 * within ttl_usec of their last change; ranked by delta, then recency. Every other
 * row's deltas are added to t->other. Returns how many. */
size_t tracker_select(struct tracker *t, size_t top_k, uint64_t ttl_usec, uint64_t now_usec,
		      const struct tracked_row **out);

/* True when the row has not changed for longer than ttl_usec (or never did). */
bool tracker_row_idle(const struct tracked_row *r, uint64_t ttl_usec, uint64_t now_usec);

#endif
