// SPDX-License-Identifier: GPL-2.0
/* The cgroup collector's counters and ranking: window deltas of every
 * cgroup's stall times and events through lib/tracker, and the order in which
 * cgroups are exported (top_k first). */
#include <errno.h>
#include <stdlib.h>
#include "cgroup_internal.h"

uint64_t cgroup_counter_value(const struct cgroup_mem *m, unsigned c, bool *present)
{
	if (c == C_SOME) {
		*present = m->has_pressure;
		return m->pressure_some_usec;
	}
	if (c == C_FULL) {
		*present = m->has_pressure_full;
		return m->pressure_full_usec;
	}
	if (c >= C_WORKINGSET0) {
		unsigned i = c - C_WORKINGSET0;

		*present = m->workingset_present & (1u << i);
		return m->workingset[i / 2][i % 2];
	}
	*present = m->events_present & (1u << (c - C_EVENT0));
	return m->events[c - C_EVENT0];
}

/* Window deltas through lib/tracker. A cgroup skipped in this window keeps
 * its row as it was: dropping it would count its whole history again into
 * "other" when it comes back. */
int cgroup_trackers_update(struct cgroup_state *s, uint64_t now)
{
	size_t i, k;

	for (k = 0; k < N_TRACKERS; k++)
		tracker_begin(&s->trackers[k], 0);
	for (i = 0; i < s->n_entries; i++) {
		const struct cgroup_mem *m = &s->entries[i].mem;
		struct tracked_row *rows[N_TRACKERS];
		unsigned c;

		for (k = 0; k < N_TRACKERS; k++)
			rows[k] = tracker_read(&s->trackers[k], s->entries[i].key, 0, NULL, 0);
		for (c = 0; c < N_COUNTERS; c++) {
			bool present;
			uint64_t v = cgroup_counter_value(m, c, &present);

			/* Without memory for its row a new cgroup has no deltas this window. */
			if (rows[c / TRACKER_MAX_COUNTERS])
				rows[c / TRACKER_MAX_COUNTERS]->value[c % TRACKER_MAX_COUNTERS] = v;
			if (present)
				s->seen |= 1u << c;
		}
	}
	for (i = 0; i < s->n_failed; i++)
		for (k = 0; k < N_TRACKERS; k++)
			(void)tracker_keep(&s->trackers[k], s->failed[i]);
	for (k = 0; k < N_TRACKERS; k++)
		tracker_update(&s->trackers[k], now);
	return 0;
}

/* The entries are in key order (cgroup_scan sorts them), and so are the rows
 * of cgroups seen since the first read: entry i is mostly row i. */
uint64_t cgroup_row_delta(const struct cgroup_state *s, size_t i, unsigned c)
{
	const struct tracker *t = &s->trackers[c / TRACKER_MAX_COUNTERS];
	uint64_t key = s->entries[i].key;
	const struct tracked_row *r = i < t->n_rows && t->rows[i].key == key ? &t->rows[i] : tracker_find(t, key);

	return r ? r->delta[c % TRACKER_MAX_COUNTERS] : 0;
}

struct cgroup_rank *cgroup_rank_entries(const struct cgroup_state *s)
{
	struct cgroup_rank *rank = calloc(s->n_entries + 1, sizeof(*rank));
	size_t i;

	if (!rank)
		return NULL;
	for (i = 0; i < s->n_entries; i++) {
		const struct entry *e = &s->entries[i];

		rank[i] = (struct cgroup_rank){
			.index = i,
			.path = s->paths.data + e->path_off,
			.usage = e->mem.usage,
			.limit = e->mem.limit,
			.has_limit = e->mem.has_limit,
			.pressure_some_delta = cgroup_row_delta(s, i, C_SOME),
		};
	}
	cgroup_rank_sort(rank, s->n_entries);
	return rank;
}
