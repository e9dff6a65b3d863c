/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_LABEL_BASE_H
#define MEMWATCH_LABEL_BASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Rows tracked by an id but exported by a label can meet under one label: a
 * cgroup removed and made again under the same path (a restarted service, a
 * recreated container) is a new id with the old path. One series must come of
 * them, and it must not go back. When the new row takes the label over, the
 * old row's totals are retired here under it, and the new row is exported on
 * top of them. */

#define LABEL_BASE_COUNTERS 6

struct label_base {
	uint64_t key; /* the retired row's id */
	char *label;
	uint64_t total[LABEL_BASE_COUNTERS];
	uint64_t used_usec; /* retired, or last added to an exported row */
};

struct label_bases {
	struct label_base *v;
	size_t n, cap, max;
};

/* max: how many retired rows are kept at most (the least recently used goes first). */
void label_bases_init(struct label_bases *b, size_t max);
void label_bases_done(struct label_bases *b);

/* Retires key's totals (n counters) under label; retiring the same key again
 * replaces them. 0, or -ENOMEM (nothing retired), -EINVAL (n too large). */
int label_bases_retire(struct label_bases *b, uint64_t key, const char *label, const uint64_t *total, size_t n,
		       uint64_t now_usec);

/* Adds to total (n counters) what rows other than key retired under label,
 * and marks those as used at now_usec. True when there was any. */
bool label_bases_add(struct label_bases *b, const char *label, uint64_t key, uint64_t *total, size_t n,
		     uint64_t now_usec);

/* Forgets what was not used since before cutoff_usec. */
void label_bases_expire(struct label_bases *b, uint64_t cutoff_usec);

#endif
