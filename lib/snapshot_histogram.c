// SPDX-License-Identifier: GPL-2.0
/* A histogram sample with native buckets and exemplars: both go into one
 * block next to the classic buckets (struct histogram_extra), which the
 * compaction at seal copies as it is. */
#include <errno.h>
#include <string.h>
#include "snapshot.h"
#include "snapshot_internal.h"
#include "utf8.h"

#define ALIGN8(n) (((n) + 7) & ~(size_t)7)

/* The record's size, or 0 if its labels are too long for OpenMetrics. */
static size_t exemplar_size(const struct histogram_exemplar *e)
{
	size_t text = 0, chars = 0;

	for (unsigned k = 0; k < e->n_labels; k++) {
		chars += utf8_chars(e->label_names[k]) + utf8_chars(e->label_values[k]);
		text += strlen(e->label_names[k]) + strlen(e->label_values[k]) + 2;
	}
	if (chars > SNAPSHOT_EXEMPLAR_LABEL_CHARS)
		return 0;
	return ALIGN8(sizeof(struct exemplar_record) + text);
}

static void put_exemplar(struct exemplar_record *r, const struct histogram_exemplar *e, size_t size)
{
	char *t = r->text;

	*r = (struct exemplar_record){ .size = size, .bucket = e->bucket, .value = e->value,
				       .timestamp_seconds = e->timestamp_seconds, .n_labels = e->n_labels };
	for (unsigned k = 0; k < e->n_labels; k++) {
		size_t a = strlen(e->label_names[k]) + 1, b = strlen(e->label_values[k]) + 1;

		memcpy(t, e->label_names[k], a);
		memcpy(t + a, e->label_values[k], b);
		t += a + b;
	}
	memset(t, 0, (char *)r + size - t);
}

int snapshot_add_histogram_full(struct snapshot *s, const struct metric_desc *desc,
				const char *const *label_values, const uint64_t *slots, size_t n_slots,
				double sum, const struct histogram_native *native,
				const struct histogram_exemplar *exemplars, size_t n_exemplars)
{
	struct histogram_data *h;
	struct histogram_extra *x;
	struct exemplar_record *r;
	size_t size, n_native = native ? native->n : 0, kept = 0, i;
	int rc;

	if (desc->type != METRIC_HISTOGRAM || !desc->bounds || n_slots != desc->n_bounds + 1)
		return -EINVAL;
	for (i = 0; i < n_exemplars; i++)
		if (exemplars[i].bucket > desc->n_bounds || (i > 0 && exemplars[i].bucket <= exemplars[i - 1].bucket))
			return -EINVAL;
	rc = snapshot_add_histogram_data(s, desc, label_values, desc->bounds, slots, desc->n_bounds, sum, &h);
	if (rc < 0 || (!native && n_exemplars == 0))
		return rc;
	size = sizeof(*x) + (n_native + 1) * sizeof(uint64_t);
	for (i = 0; i < n_exemplars; i++)
		size += exemplar_size(&exemplars[i]);
	x = snapshot_arena_alloc(s, size);
	if (!x)
		return -ENOMEM; /* the classic buckets are in */
	*x = (struct histogram_extra){ .size = size, .n_native = n_native };
	if (native) {
		x->has_native = 1;
		x->schema = native->schema;
		x->first_index = native->first_index;
		x->zero_threshold = native->zero_threshold;
		memcpy(x->native, native->counts, n_native * sizeof(uint64_t));
	}
	x->native[n_native] = native ? native->zero_count : 0;
	r = (struct exemplar_record *)histogram_extra_exemplars(x);
	for (i = 0; i < n_exemplars; i++) {
		size_t rsize = exemplar_size(&exemplars[i]);

		if (rsize == 0)
			continue;
		put_exemplar(r, &exemplars[i], rsize);
		r = (struct exemplar_record *)exemplar_record_next(r);
		kept++;
	}
	x->n_exemplars = kept;
	h->extra = x;
	return 0;
}

struct cumulative_priv {
	struct snapshot *s;
	struct histogram_data *h;
};

void snapshot_cumulative_native(struct snapshot *s, struct histogram_data *h, struct snapshot_cumulative *c)
{
	struct histogram_extra *x = h->extra;
	struct cumulative_priv *p;

	c->has_native = x && x->has_native;
	if (!c->has_native)
		return;
	c->native_schema = x->schema;
	c->native_first = x->first_index;
	c->n_native = x->n_native;
	c->native = x->native;
	c->zero_count = &x->native[x->n_native];
	p = snapshot_arena_alloc(s, sizeof(*p));
	if (p)
		*p = (struct cumulative_priv){ s, h };
	c->priv = p;
}

int snapshot_cumulative_widen_native(struct snapshot_cumulative *c, int32_t first, size_t n)
{
	struct cumulative_priv *p = c->priv;
	const struct histogram_extra *old;
	struct histogram_extra *x;
	int64_t lo, hi;
	size_t n_new, exemplar_bytes, size;

	if (!c->has_native || !p)
		return -EINVAL;
	if (n == 0)
		return 0;
	old = p->h->extra;
	lo = old->n_native ? old->first_index : first;
	hi = old->n_native ? (int64_t)old->first_index + (int64_t)old->n_native : (int64_t)first + (int64_t)n;
	if (first < lo)
		lo = first;
	if ((int64_t)first + (int64_t)n > hi)
		hi = (int64_t)first + (int64_t)n;
	n_new = (size_t)(hi - lo);
	if (n_new == old->n_native)
		return 0;
	exemplar_bytes = old->size - (sizeof(*old) + (old->n_native + 1) * sizeof(uint64_t));
	size = sizeof(*x) + (n_new + 1) * sizeof(uint64_t) + exemplar_bytes;
	x = snapshot_arena_alloc(p->s, size);
	if (!x)
		return -ENOMEM;
	*x = *old;
	x->size = size;
	x->first_index = (int32_t)lo;
	x->n_native = n_new;
	memset(x->native, 0, (n_new + 1) * sizeof(uint64_t));
	if (old->n_native)
		memcpy(x->native + (old->first_index - lo), old->native, old->n_native * sizeof(uint64_t));
	x->native[n_new] = old->native[old->n_native];
	memcpy((char *)histogram_extra_exemplars(x), histogram_extra_exemplars(old), exemplar_bytes);
	p->h->extra = x;
	c->native_first = x->first_index;
	c->n_native = n_new;
	c->native = x->native;
	c->zero_count = &x->native[n_new];
	return 0;
}
