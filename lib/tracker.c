// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "tracker.h"

/* A buffer kept between windows larger than this many times what the window
 * needed is given back: a burst of processes must not pin its memory. */
#define SHRINK_FACTOR 4
#define SHRINK_SLACK 64
#define MIN_ROWS 16

void tracker_init(struct tracker *t, size_t n_counters, unsigned rank_primary, unsigned rank_secondary)
{
	*t = (struct tracker){
		.n_counters = n_counters > TRACKER_MAX_COUNTERS ? TRACKER_MAX_COUNTERS : n_counters,
		.rank_by = { rank_primary, rank_secondary },
	};
}

static bool oversized(size_t cap, size_t n)
{
	return cap > SHRINK_FACTOR * (n + SHRINK_SLACK);
}

void tracker_done(struct tracker *t)
{
	for (size_t i = 0; i < t->n_rows; i++)
		free(t->rows[i].label_long);
	free(t->rows);
	free(t->index);
	free(t->replaced);
	free(t->cand);
	tracker_init(t, t->n_counters, t->rank_by[0], t->rank_by[1]);
}

/* --- the index: key -> row -------------------------------------------- */

static size_t index_home(const struct tracker *t, uint64_t key)
{
	return (size_t)((key * 0x9E3779B97F4A7C15ULL) >> (64 - t->index_bits));
}

static void index_insert(struct tracker *t, size_t row)
{
	size_t mask = ((size_t)1 << t->index_bits) - 1, h = index_home(t, t->rows[row].key);

	while (t->index[h])
		h = (h + 1) & mask;
	t->index[h] = (uint32_t)(row + 1);
}

/* An index for at least n rows at most half full, filled from the rows.
 * Without memory for a larger one the old one is refilled if it can hold
 * them, else -ENOMEM. */
static int index_rebuild(struct tracker *t, size_t n)
{
	unsigned bits = 5;

	while (((size_t)1 << bits) < 2 * n)
		bits++;
	if (!t->index || bits > t->index_bits || bits + 2 < t->index_bits) {
		uint32_t *p = realloc(t->index, ((size_t)1 << bits) * sizeof(*p));

		if (p) {
			t->index = p;
			t->index_bits = bits;
		} else if (!t->index || ((size_t)1 << t->index_bits) < 2 * n) {
			return -ENOMEM;
		}
	}
	memset(t->index, 0, ((size_t)1 << t->index_bits) * sizeof(*t->index));
	for (size_t i = 0; i < t->n_rows; i++)
		index_insert(t, i);
	return 0;
}

struct tracked_row *tracker_find(const struct tracker *t, uint64_t key)
{
	size_t mask, h;

	if (!t->index)
		return NULL;
	mask = ((size_t)1 << t->index_bits) - 1;
	for (h = index_home(t, key); t->index[h]; h = (h + 1) & mask)
		if (t->rows[t->index[h] - 1].key == key)
			return &t->rows[t->index[h] - 1];
	return NULL;
}

/* --- labels --------------------------------------------------------------- */

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

static bool label_is(const struct tracked_row *r, const char *s, size_t len)
{
	size_t n = strnlen(s, len < TRACKER_LABEL_MAX - 1 ? len : TRACKER_LABEL_MAX - 1);
	const char *cur = tracker_row_label(r);

	return strnlen(cur, n + 1) == n && memcmp(cur, s, n) == 0;
}

static void clear_label(struct tracked_row *r)
{
	free(r->label_long);
	r->label_long = NULL;
	r->label[0] = '\0';
}

/* --- a read --------------------------------------------------------------- */

void tracker_begin(struct tracker *t, size_t max_rows)
{
	if (++t->read == 0)
		t->read = 1;
	t->reading = true;
	t->n_read = 0;
	t->max_read = max_rows;
	t->n_replaced = 0;
}

/* Best effort: without memory tracker_previous misses the entity replaced. */
static void remember_replaced(struct tracker *t, const struct tracked_row *r)
{
	if (t->n_replaced == t->cap_replaced) {
		size_t cap = t->cap_replaced ? 2 * t->cap_replaced : 8;
		struct tracker_replaced *p = realloc(t->replaced, cap * sizeof(*p));

		if (!p)
			return;
		t->replaced = p;
		t->cap_replaced = cap;
	}
	t->replaced[t->n_replaced] = (struct tracker_replaced){ .key = r->key, .generation = r->generation };
	memcpy(t->replaced[t->n_replaced].value, r->value, sizeof(r->value));
	t->n_replaced++;
}

static struct tracked_row *append_row(struct tracker *t, uint64_t key)
{
	struct tracked_row *r;

	if (t->n_rows == t->cap_rows) {
		size_t cap = t->cap_rows ? 2 * t->cap_rows : MIN_ROWS;

		if (cap > UINT32_MAX - 1 || cap > SIZE_MAX / sizeof(*r))
			return NULL;
		r = realloc(t->rows, cap * sizeof(*r));
		if (!r)
			return NULL;
		t->rows = r;
		t->cap_rows = cap;
	}
	if (!t->index || ((size_t)1 << t->index_bits) < 2 * (t->n_rows + 1)) {
		if (index_rebuild(t, t->n_rows + 1) < 0)
			return NULL;
	}
	r = &t->rows[t->n_rows];
	*r = (struct tracked_row){ .key = key };
	index_insert(t, t->n_rows);
	t->n_rows++;
	return r;
}

struct tracked_row *tracker_read(struct tracker *t, uint64_t key, uint64_t generation, const char *label,
				 size_t len)
{
	struct tracked_row *r = tracker_find(t, key);

	if (r && r->read == t->read) {
		if (label && !label_is(r, label, len))
			(void)tracker_row_set_label(r, label, len);
		return r;
	}
	if (!r) {
		if (t->max_read && t->n_read >= t->max_read)
			return NULL;
		r = append_row(t, key);
		if (!r)
			return NULL;
		r->generation = generation;
	} else if (r->generation == generation) {
		memcpy(r->delta, r->value, sizeof(r->delta));
		memset(r->value, 0, sizeof(r->value));
	} else {
		remember_replaced(t, r);
		if (!label || !(r->label_long || r->label[0]) || !label_is(r, label, len))
			memset(r->total, 0, sizeof(r->total));
		memset(r->value, 0, sizeof(r->value));
		memset(r->delta, 0, sizeof(r->delta));
		r->generation = generation;
		r->last_change_usec = 0;
		if (!label)
			clear_label(r);
	}
	if (label && !label_is(r, label, len))
		(void)tracker_row_set_label(r, label, len); /* without memory: no label */
	r->read = t->read;
	t->n_read++;
	return r;
}

bool tracker_keep(struct tracker *t, uint64_t key)
{
	struct tracked_row *r = tracker_find(t, key);

	if (!r)
		return false;
	if (r->read != t->read) {
		memcpy(r->delta, r->value, sizeof(r->delta));
		r->read = t->read;
		t->n_read++;
	}
	return true;
}

void tracker_void_read(struct tracker *t)
{
	size_t i;

	for (i = 0; i < t->n_rows; i++) {
		struct tracked_row *r = &t->rows[i];

		if (r->read == t->read) {
			memcpy(r->value, r->delta, sizeof(r->value));
		} else {
			memcpy(r->delta, r->value, sizeof(r->delta));
			r->read = t->read;
			t->n_read++;
		}
	}
}

bool tracker_row_was_read(const struct tracker *t, const struct tracked_row *r)
{
	return r->read == t->read;
}

bool tracker_previous(const struct tracker *t, uint64_t key, uint64_t generation, uint64_t *value)
{
	const struct tracked_row *r = tracker_find(t, key);
	size_t i;

	if (r && r->generation == generation) {
		/* Read in the open read: the previous values wait in delta. */
		memcpy(value, t->reading && r->read == t->read ? r->delta : r->value, sizeof(r->value));
		return true;
	}
	for (i = 0; t->reading && i < t->n_replaced; i++)
		if (t->replaced[i].key == key && t->replaced[i].generation == generation) {
			memcpy(value, t->replaced[i].value, sizeof(t->replaced[i].value));
			return true;
		}
	return false;
}

void tracker_update(struct tracker *t, uint64_t now_usec)
{
	size_t i, j = 0, c;
	bool moved = false;

	for (i = 0; i < t->n_rows; i++) {
		struct tracked_row *r = &t->rows[i];
		bool changed = false;

		if (r->read != t->read) {
			free(r->label_long);
			moved = true;
			continue;
		}
		for (c = 0; c < t->n_counters; c++) {
			uint64_t before = r->delta[c];

			/* A counter going backwards was reset (entry evicted and re-created). */
			r->delta[c] = r->value[c] >= before ? r->value[c] - before : r->value[c];
			r->total[c] += r->delta[c];
			if (r->delta[c])
				changed = true;
		}
		if (changed)
			r->last_change_usec = now_usec;
		if (j != i)
			t->rows[j] = *r;
		j++;
	}
	t->n_rows = j;
	t->reading = false;
	if (oversized(t->cap_rows, j)) {
		size_t cap = j < MIN_ROWS ? MIN_ROWS : j;
		struct tracked_row *p = realloc(t->rows, cap * sizeof(*p));

		if (p) {
			t->rows = p;
			t->cap_rows = cap;
		}
		moved = true;
	}
	/* Refilling the index in place needs no memory: it cannot fail here. */
	if (moved)
		(void)index_rebuild(t, j);
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
	struct candidate *cand;
	size_t i, n = 0, keep;

	/* Only rows that changed lately compete: at rest that is a few. */
	for (i = 0; i < t->n_rows; i++)
		if (t->rows[i].last_change_usec == now_usec || !tracker_row_idle(&t->rows[i], ttl_usec, now_usec))
			n++;
	cand = candidates(t, n);
	if (!cand) {
		for (i = 0; i < t->n_rows; i++)
			add_to_other(t, &t->rows[i]);
		return 0;
	}
	n = 0;
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
