// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "tracker.h"

/* A buffer kept between windows larger than this many times what the window
 * needed is given back: a burst of processes must not pin its memory. */
#define SHRINK_FACTOR 4
#define SHRINK_SLACK 64

void tracker_init(struct tracker *t, size_t n_counters, unsigned rank_primary, unsigned rank_secondary)
{
	*t = (struct tracker){
		.n_counters = n_counters > TRACKER_MAX_COUNTERS ? TRACKER_MAX_COUNTERS : n_counters,
		.rank_by = { rank_primary, rank_secondary },
	};
}

static void free_labels(struct tracked_row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(rows[i].label_long);
		rows[i].label_long = NULL;
	}
}

static bool oversized(size_t cap, size_t n)
{
	return cap > SHRINK_FACTOR * (n + SHRINK_SLACK);
}

void tracker_done(struct tracker *t)
{
	if (t->rows)
		free_labels(t->rows, t->n_rows);
	free(t->rows);
	if (t->next)
		free_labels(t->next, t->zeroed_next);
	free(t->next);
	free(t->cand);
	t->rows = t->next = NULL;
	t->cand = NULL;
	t->n_rows = t->cap_rows = t->cap_next = t->zeroed_next = t->cap_cand = 0;
}

struct tracked_row *tracker_next(struct tracker *t, size_t n)
{
	if (n == 0)
		n = 1;
	if (n > t->cap_next) {
		size_t cap = t->cap_next * 2 > n ? t->cap_next * 2 : n;
		struct tracked_row *p;

		if (cap < 16)
			cap = 16;
		if (cap > SIZE_MAX / sizeof(*p))
			return NULL;
		p = realloc(t->next, cap * sizeof(*p));
		if (!p)
			return NULL;
		t->next = p;
		t->cap_next = cap;
	}
	if (n > t->zeroed_next) {
		memset(t->next + t->zeroed_next, 0, (n - t->zeroed_next) * sizeof(*t->next));
		t->zeroed_next = n;
	}
	return t->next;
}

int tracker_row_set_label(struct tracked_row *r, const char *s, size_t len)
{
	size_t n = strnlen(s, len < TRACKER_LABEL_MAX - 1 ? len : TRACKER_LABEL_MAX - 1);

	free(r->label_long);
	r->label_long = NULL;
	r->label[0] = '\0';
	if (n < sizeof(r->label)) {
		memcpy(r->label, s, n);
		r->label[n] = '\0';
		return 0;
	}
	r->label_long = strndup(s, n);
	return r->label_long ? 0 : -ENOMEM;
}

const char *tracker_row_label(const struct tracked_row *r)
{
	return r->label_long ? r->label_long : r->label;
}

static bool has_label(const struct tracked_row *r)
{
	return r->label_long || r->label[0];
}

static bool same_label(const struct tracked_row *a, const struct tracked_row *b)
{
	return has_label(a) && has_label(b) && strcmp(tracker_row_label(a), tracker_row_label(b)) == 0;
}

static int cmp_key(const void *a, const void *b)
{
	const struct tracked_row *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

void tracker_update(struct tracker *t, struct tracked_row *fresh, size_t n, uint64_t now_usec)
{
	struct tracked_row *old_rows = t->rows;
	size_t i, j = 0, c, old_n = t->n_rows, old_cap = t->cap_rows, cap = n;

	if (fresh == t->next) {
		cap = t->cap_next;
		t->next = NULL;
		t->cap_next = t->zeroed_next = 0;
	}
	/* Collectors mostly hand over tables in key order already (pids from
	 * the task iterator): a qsort of 10,000 rows of 200 bytes each window
	 * was a tenth of the daemon's time. */
	for (i = 1; i < n && fresh[i - 1].key <= fresh[i].key; i++)
		;
	if (i < n)
		qsort(fresh, n, sizeof(*fresh), cmp_key);
	for (i = 0; i < n; i++) {
		struct tracked_row *r = &fresh[i];
		struct tracked_row *old = NULL, *predecessor = NULL;
		bool changed = false;

		while (j < old_n && old_rows[j].key < r->key)
			j++;
		if (j < old_n && old_rows[j].key == r->key) {
			if (old_rows[j].generation == r->generation)
				old = &old_rows[j];
			else if (same_label(&old_rows[j], r))
				predecessor = &old_rows[j];
		}
		for (c = 0; c < t->n_counters; c++) {
			uint64_t before = old ? old->value[c] : 0;

			/* A counter going backwards was reset (entry evicted and re-created). */
			r->delta[c] = r->value[c] >= before ? r->value[c] - before : r->value[c];
			r->total[c] = old ? old->total[c] + r->delta[c] : r->value[c];
			/* A new entity under the key and label of the one before it
			 * (a pid reused by a process of the same name between two
			 * windows) is the same series to Prometheus: it goes on from
			 * the predecessor's total instead of starting over. */
			if (predecessor)
				r->total[c] += predecessor->total[c];
			if (r->delta[c])
				changed = true;
		}
		r->last_change_usec = changed ? now_usec : old ? old->last_change_usec : 0;
		if (!has_label(r) && old) {
			/* Moved, not copied: the old table is about to go. */
			memcpy(r->label, old->label, sizeof(r->label));
			r->label_long = old->label_long;
			old->label_long = NULL;
		}
	}
	t->rows = fresh;
	t->n_rows = n;
	t->cap_rows = cap;

	/* The old table becomes the next one's buffer, unless one is kept
	 * already (fresh came from elsewhere) or it is far too large. */
	if (old_rows)
		free_labels(old_rows, old_n);
	if (t->next || oversized(old_cap, n)) {
		free(old_rows);
	} else {
		t->next = old_rows;
		t->cap_next = old_rows ? old_cap : 0;
		t->zeroed_next = 0;
	}
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

static struct candidate *candidates(struct tracker *t, size_t n)
{
	if (n == 0)
		n = 1;
	if (n > t->cap_cand || oversized(t->cap_cand, n)) {
		size_t cap = n > t->cap_cand && t->cap_cand * 2 > n ? t->cap_cand * 2 : n;
		struct candidate *p = realloc(t->cand, cap * sizeof(*p));

		if (!p)
			return NULL;
		t->cand = p;
		t->cap_cand = cap;
	}
	return t->cand;
}

size_t tracker_select(struct tracker *t, size_t top_k, uint64_t ttl_usec, uint64_t now_usec,
		      const struct tracked_row **out)
{
	struct candidate *cand = candidates(t, t->n_rows);
	size_t i, n = 0, keep;

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
	return keep;
}
