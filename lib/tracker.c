// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>
#include <string.h>
#include "tracker.h"

void tracker_init(struct tracker *t, size_t n_counters, unsigned rank_primary, unsigned rank_secondary)
{
	*t = (struct tracker){
		.n_counters = n_counters > TRACKER_MAX_COUNTERS ? TRACKER_MAX_COUNTERS : n_counters,
		.rank_by = { rank_primary, rank_secondary },
	};
}

void tracker_done(struct tracker *t)
{
	free(t->rows);
	t->rows = NULL;
	t->n_rows = 0;
}

static int cmp_key(const void *a, const void *b)
{
	const struct tracked_row *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

void tracker_update(struct tracker *t, struct tracked_row *fresh, size_t n, uint64_t now_usec)
{
	size_t i, j = 0, c;

	qsort(fresh, n, sizeof(*fresh), cmp_key);
	for (i = 0; i < n; i++) {
		struct tracked_row *r = &fresh[i];
		const struct tracked_row *old = NULL;
		bool changed = false;

		while (j < t->n_rows && t->rows[j].key < r->key)
			j++;
		if (j < t->n_rows && t->rows[j].key == r->key && t->rows[j].generation == r->generation)
			old = &t->rows[j];
		for (c = 0; c < t->n_counters; c++) {
			uint64_t before = old ? old->value[c] : 0;

			/* A counter going backwards was reset (entry evicted and re-created). */
			r->delta[c] = r->value[c] >= before ? r->value[c] - before : r->value[c];
			if (r->delta[c])
				changed = true;
		}
		r->last_change_usec = changed ? now_usec : old ? old->last_change_usec : 0;
		if (!r->label[0] && old)
			memcpy(r->label, old->label, sizeof(r->label));
	}
	free(t->rows);
	t->rows = fresh;
	t->n_rows = n;
}

bool tracker_row_idle(const struct tracked_row *r, uint64_t ttl_usec, uint64_t now_usec)
{
	return r->last_change_usec == 0 || now_usec - r->last_change_usec > ttl_usec;
}

/* The ranking keys are copied next to the row: qsort takes no context. */
struct candidate {
	const struct tracked_row *row;
	uint64_t primary, secondary;
};

static int cmp_rank(const void *x, const void *y)
{
	const struct candidate *r = x, *s = y;

	if (r->primary != s->primary)
		return r->primary < s->primary ? 1 : -1;
	if (r->secondary != s->secondary)
		return r->secondary < s->secondary ? 1 : -1;
	if (r->row->last_change_usec != s->row->last_change_usec)
		return r->row->last_change_usec < s->row->last_change_usec ? 1 : -1;
	return r->row->key < s->row->key ? -1 : r->row->key > s->row->key;
}

static void add_to_other(struct tracker *t, const struct tracked_row *r)
{
	for (size_t c = 0; c < t->n_counters; c++)
		t->other[c] += r->delta[c];
}

size_t tracker_select(struct tracker *t, size_t top_k, uint64_t ttl_usec, uint64_t now_usec,
		      const struct tracked_row **out)
{
	struct candidate *cand;
	size_t i, n = 0, keep;

	cand = malloc((t->n_rows ? t->n_rows : 1) * sizeof(*cand));
	if (!cand) {
		for (i = 0; i < t->n_rows; i++)
			add_to_other(t, &t->rows[i]);
		return 0;
	}
	for (i = 0; i < t->n_rows; i++) {
		const struct tracked_row *r = &t->rows[i];

		if (r->last_change_usec == now_usec || !tracker_row_idle(r, ttl_usec, now_usec))
			cand[n++] = (struct candidate){ r, r->delta[t->rank_by[0]], r->delta[t->rank_by[1]] };
		else
			add_to_other(t, r);
	}
	qsort(cand, n, sizeof(*cand), cmp_rank);
	keep = n < top_k ? n : top_k;
	for (i = 0; i < keep; i++)
		out[i] = cand[i].row;
	for (; i < n; i++)
		add_to_other(t, cand[i].row);
	free(cand);
	return keep;
}
