/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_TRACKER_H
#define MEMWATCH_TRACKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Per-entity cumulative counters (per process, per cgroup) read every window:
 * turns them into window deltas, picks the top_k entities to export, and
 * folds the rest into "other" so that sums still follow the totals.
 *
 * One table, updated in place: a read (tracker_begin, tracker_read per
 * entity, tracker_update) writes each entity's new values over its row, so
 * 10,000 processes cost one row each, not one in this window's table and one
 * in the last one's. */

/* Four: what a process needs (reclaim's counts and times, faults' two); a
 * cgroup's fifteen take four trackers. Each counter costs 24 bytes a row. */
#define TRACKER_MAX_COUNTERS 4
/* Labels longer than this are cut (cgroup paths); comms fit inline. */
#define TRACKER_LABEL_MAX 256
#define TRACKER_LABEL_INLINE 16

struct tracked_row {
	uint64_t key;        /* pid, cgroup id */
	uint64_t generation; /* e.g. start time: a change means a new entity, counters restart */
	uint64_t value[TRACKER_MAX_COUNTERS]; /* as read; zero at the row's first tracker_read of a read */
	/* This read's delta, filled by tracker_update. While a read is open, a
	 * row read in it holds its previous value here. */
	uint64_t delta[TRACKER_MAX_COUNTERS];
	/* What to export: value while it only grows; after it went backwards
	 * (a BPF map entry evicted and re-created, a thread taking over the pid
	 * at exec) the sum of the deltas, so that a series of the same key and
	 * generation never goes back. */
	uint64_t total[TRACKER_MAX_COUNTERS];
	uint64_t last_change_usec;
	/* The label (comm, path): inline when it fits, else an allocation owned
	 * by the row. Set by tracker_read or tracker_row_set_label; a read that
	 * sets none keeps the previous one. */
	char *label_long;
	char label[TRACKER_LABEL_INLINE];
	uint32_t read; /* the tracker's read that last saw the row */
};

/* An entity whose row a new one took in the open read (same key, new
 * generation): its previous values, for tracker_previous. */
struct tracker_replaced {
	uint64_t key, generation;
	uint64_t value[TRACKER_MAX_COUNTERS];
};

struct tracker {
	size_t n_counters;
	unsigned rank_by[2];   /* counter indices: ranked by delta of the first, then the second */
	struct tracked_row *rows; /* in no particular order; find them with tracker_find */
	size_t n_rows, cap_rows;
	uint64_t other[TRACKER_MAX_COUNTERS]; /* cumulative deltas of everything not exported */
	uint32_t read;     /* the open (or last) read, counted from 1 */
	bool reading;
	size_t n_read, max_read; /* rows read in the open read, and how many it may have (0: any) */
	/* Open addressing on the key: row index + 1, 0 free. */
	uint32_t *index;
	unsigned index_bits;
	struct tracker_replaced *replaced;
	size_t n_replaced, cap_replaced;
	/* Kept between windows so that a steady state allocates nothing. */
	void *cand;
	size_t cap_cand;
};

void tracker_init(struct tracker *t, size_t n_counters, unsigned rank_primary, unsigned rank_secondary);
void tracker_done(struct tracker *t);

/* Opens a read of every entity; at most max_rows of them (0: no limit). */
void tracker_begin(struct tracker *t, size_t max_rows);

/* The row of (key, generation) in the open read, with its values zeroed at
 * its first call in the read, for the caller to set or add to (the threads
 * of one process). A new generation under a key is a new entity: counters
 * from zero, except that it goes on from the total of the one before when
 * both have the same label (a pid reused by a process of the same name is
 * the same series to Prometheus). label (len bytes at most, NULL: keep
 * the row's) is set when it differs. NULL for a new key when the read holds
 * max_rows already or without memory: that entity is left out. */
struct tracked_row *tracker_read(struct tracker *t, uint64_t key, uint64_t generation, const char *label,
				 size_t len);

/* A row kept as it was in the open read (its entity could not be read this
 * time): no delta, not dropped. False when there is no such row. */
bool tracker_keep(struct tracker *t, uint64_t key);

/* Voids the open read, for a source that failed part-way: every row goes
 * back to its values before the read (a row new in it to zero), so that
 * tracker_update finds nothing moved and drops nothing. */
void tracker_void_read(struct tracker *t);

/* Closes the read: each row read gets its delta against its previous value
 * (from zero for a new entity) and its total; rows not read are dropped. */
void tracker_update(struct tracker *t, uint64_t now_usec);

/* The row of key, or NULL. */
struct tracked_row *tracker_find(const struct tracker *t, uint64_t key);

/* Whether the row was read in the open read (or, after tracker_update, in the last one). */
bool tracker_row_was_read(const struct tracker *t, const struct tracked_row *r);

/* The values (key, generation) had before the open read, when the tracker
 * had that entity: false if not. */
bool tracker_previous(const struct tracker *t, uint64_t key, uint64_t generation, uint64_t *value);

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
