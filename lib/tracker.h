/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_TRACKER_H
#define MEMWATCH_TRACKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Per-entity cumulative counters (per process, per cgroup) read every window:
 * turns them into window deltas, picks the top_k entities to export, and
 * folds the rest into "other" so that sums still follow the totals. */

/* Four: what a process needs (reclaim's counts and times, faults' two); a
 * cgroup's fifteen take four trackers. Each counter costs 24 bytes a row in
 * two tables, 10,000 processes a row each. */
#define TRACKER_MAX_COUNTERS 4
/* Labels longer than this are cut (cgroup paths); comms fit inline. */
#define TRACKER_LABEL_MAX 256
#define TRACKER_LABEL_INLINE 16

struct tracked_row {
	uint64_t key;        /* pid, cgroup id */
	uint64_t generation; /* e.g. start time: a change means a new entity, counters restart */
	uint64_t value[TRACKER_MAX_COUNTERS];
	uint64_t delta[TRACKER_MAX_COUNTERS]; /* this window; filled by tracker_update */
	/* What to export, filled by tracker_update: value while it only grows;
	 * after it went backwards (a BPF map entry evicted and re-created, a
	 * thread taking over the pid at exec) the sum of the deltas, so that a
	 * series of the same key and generation never goes back. */
	uint64_t total[TRACKER_MAX_COUNTERS];
	uint64_t last_change_usec;            /* carried over by tracker_update */
	/* The label (comm, path), set with tracker_row_set_label and read with
	 * tracker_row_label; none keeps the previous window's. A row holds tens of
	 * thousands of processes at scale: a comm stays inline, only a longer
	 * label takes an allocation, owned by the row. */
	char *label_long;
	char label[TRACKER_LABEL_INLINE];
};

struct tracker {
	size_t n_counters;
	unsigned rank_by[2];   /* counter indices: ranked by delta of the first, then the second */
	struct tracked_row *rows; /* this window, sorted by key */
	size_t n_rows, cap_rows;
	uint64_t other[TRACKER_MAX_COUNTERS]; /* cumulative deltas of everything not exported */
	/* Kept between windows so that a steady state allocates nothing. */
	struct tracked_row *next; /* the previous window's table, reused for the next one */
	size_t cap_next, zeroed_next;
	void *cand;
	size_t cap_cand;
};

void tracker_init(struct tracker *t, size_t n_counters, unsigned rank_primary, unsigned rank_secondary);
void tracker_done(struct tracker *t);

/* The table for the next window, with room for at least n rows: rows not
 * handed out before are zeroed, the others are kept as filled, so it can be
 * grown row by row. NULL without memory (the table, as filled so far, stays
 * with the tracker). Pass it to tracker_update. */
struct tracked_row *tracker_next(struct tracker *t, size_t n);

/* Takes over fresh (n rows: tracker_next's, or malloc'ed; any order): sorts
 * it, computes each row's delta against the previous window (from zero for a
 * new key or generation), and keeps the previous table for tracker_next (or
 * frees it when it is much larger than needed). */
void tracker_update(struct tracker *t, struct tracked_row *fresh, size_t n, uint64_t now_usec);

/* Fills out (room for top_k) with the rows to export: changed in this window, or
 * within ttl_usec of their last change; ranked by delta, then recency. Every other
 * row's deltas are added to t->other. Returns how many. */
size_t tracker_select(struct tracker *t, size_t top_k, uint64_t ttl_usec, uint64_t now_usec,
		      const struct tracked_row **out);

/* True when the row has not changed for longer than ttl_usec (or never did). */
bool tracker_row_idle(const struct tracked_row *r, uint64_t ttl_usec, uint64_t now_usec);

/* Sets the label to the first len bytes of s (up to a NUL, cut at
 * TRACKER_LABEL_MAX - 1). -ENOMEM leaves the row without a label. */
int tracker_row_set_label(struct tracked_row *r, const char *s, size_t len);
/* The row's label; "" when it has none. */
const char *tracker_row_label(const struct tracked_row *r);

#endif
