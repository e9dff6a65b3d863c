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
