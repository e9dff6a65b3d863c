// SPDX-License-Identifier: GPL-2.0
/* A window being built (its samples and histograms), sealed, and read back:
 * the formats are in lib/snapshot_text.c (with every format's body),
 * snapshot_openmetrics.c, snapshot_protobuf.c and snapshot_json.c; the
 * compaction at seal in snapshot_compact.c. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "snapshot.h"
#include "snapshot_internal.h"

void *snapshot_arena_alloc(struct snapshot *s, size_t size)
{
	struct arena_block *b = s->arena;
	void *p;

	size = (size + 15) & ~(size_t)15;
	if (!b || b->cap - b->used < size) {
		size_t cap = size > 16384 ? size : 16384;

		b = malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
		b->next = s->arena;
		b->used = 0;
		b->cap = cap;
		s->arena = b;
	}
	p = b->data + b->used;
	b->used += size;
	return p;
}

static char *arena_strdup(struct snapshot *s, const char *str)
{
	size_t n = strlen(str) + 1;
	char *p = snapshot_arena_alloc(s, n);

	if (p)
		memcpy(p, str, n);
	return p;
}

struct snapshot *snapshot_new(const struct snapshot_window *window, size_t max_series)
{
	struct snapshot *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	atomic_init(&s->refcount, 1);
	pthread_mutex_init(&s->render_lock, NULL);
	if (window)
		s->window = *window;
	s->max_series = max_series;
	return s;
}

struct snapshot *snapshot_ref(struct snapshot *s)
{
	if (s)
		refcount_take(&s->refcount);
	return s;
}

void snapshot_unref(struct snapshot *s)
{
	struct arena_block *b, *next;
	size_t i;

	if (!s || !refcount_drop(&s->refcount))
		return;
	for (i = 0; !s->compacted && i < s->n_families; i++)
		free(s->families[i].samples);
	free(s->families);
	for (b = s->arena; b; b = next) {
		next = b->next;
		free(b);
	}
	for (i = 0; i < EXPO_FORMAT__COUNT; i++) {
		free(s->bodies[i].block);
		free(s->bodies[i].gzip_block);
	}
	snapshot_renderer_unref(s->renderer);
	pthread_mutex_destroy(&s->render_lock);
	free(s);
}

/* Makes room for one more element in a doubling array (first: the first capacity). */
static int grow(void **array, size_t *cap, size_t n, size_t elem_size, size_t first)
{
	size_t new_cap;
	void *p;

	if (n < *cap)
		return 0;
	new_cap = *cap ? *cap * 2 : first;
	p = realloc(*array, new_cap * elem_size);
	if (!p)
		return -ENOMEM;
	*array = p;
	*cap = new_cap;
	return 0;
}

static struct family *family_get(struct snapshot *s, const struct metric_desc *desc)
{
	size_t i;

	/* Collectors emit a family's samples together, so the last one usually matches. */
	for (i = s->n_families; i > 0; i--)
		if (s->families[i - 1].desc == desc ||
		    (s->families[i - 1].desc->n_labels == desc->n_labels &&
		     strcmp(s->families[i - 1].desc->name, desc->name) == 0))
			return &s->families[i - 1];
	if (grow((void **)&s->families, &s->cap_families, s->n_families, sizeof(*s->families), 32) < 0)
		return NULL;
	s->families[s->n_families] = (struct family){ .desc = desc };
	return &s->families[s->n_families++];
}

static struct sample *sample_new(struct snapshot *s, const struct metric_desc *desc,
				 const char *const *label_values, int *r)
{
	struct family *f;
	struct sample *smp;
	unsigned i;

	*r = -EBUSY;
	if (s->sealed || s->compacted)
		return NULL;
	if (s->n_series >= s->max_series) {
		s->dropped_series++;
		*r = -ENOSPC;
		return NULL;
	}
	*r = -ENOMEM;
	f = family_get(s, desc);
	if (!f)
		return NULL;
	if (grow((void **)&f->samples, &f->cap, f->n, sizeof(*f->samples), 4) < 0)
		return NULL;
	smp = &f->samples[f->n];
	*smp = (struct sample){ 0 };
	if (desc->n_labels) {
		smp->label_values = snapshot_arena_alloc(s, desc->n_labels * sizeof(char *));
		if (!smp->label_values)
			return NULL;
		for (i = 0; i < desc->n_labels; i++) {
			const char *v = label_values && label_values[i] ? label_values[i] : "";

			smp->label_values[i] = arena_strdup(s, v);
			if (!smp->label_values[i])
				return NULL;
		}
	}
	f->n++;
	s->n_series++;
	*r = 0;
	return smp;
}

int snapshot_add(struct snapshot *s, const struct metric_desc *desc,
		 const char *const *label_values, double value)
{
	struct sample *smp;
	int r;

	if (desc->type == METRIC_HISTOGRAM)
		return -EINVAL;
	smp = sample_new(s, desc, label_values, &r);
	if (!smp)
		return r;
	smp->value = value;
	return 0;
}

/* bounds is either the descriptor's own (kept by reference) or the caller's (copied). */
static int add_histogram(struct snapshot *s, const struct metric_desc *desc,
			 const char *const *label_values, const double *bounds,
			 const uint64_t *counts, size_t n, double sum)
{
	return snapshot_add_histogram_data(s, desc, label_values, bounds, counts, n, sum, NULL);
}

int snapshot_add_histogram_data(struct snapshot *s, const struct metric_desc *desc,
				const char *const *label_values, const double *bounds,
				const uint64_t *counts, size_t n, double sum, struct histogram_data **ret)
{
	struct histogram_data *h;
	struct sample *smp;
	uint64_t acc = 0;
	size_t i;
	int r;

	smp = sample_new(s, desc, label_values, &r);
	if (!smp)
		return r;
	h = snapshot_arena_alloc(s, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->n = n;
	h->sum = sum;
	h->cumulative = snapshot_arena_alloc(s, (n + 1) * sizeof(uint64_t));
	if (!h->cumulative)
		return -ENOMEM;
	if (bounds == desc->bounds && n == desc->n_bounds) {
		h->bounds = bounds;
	} else {
		double *copy = snapshot_arena_alloc(s, (n ? n : 1) * sizeof(double));

		if (!copy)
			return -ENOMEM;
		h->bounds = memcpy(copy, bounds, n * sizeof(double));
	}
	for (i = 0; i <= n; i++) {
		acc += counts[i];
		h->cumulative[i] = acc;
	}
	h->extra = NULL;
	smp->hist = h;
	if (ret)
		*ret = h;
	return 0;
}

int snapshot_add_histogram(struct snapshot *s, const struct metric_desc *desc,
			   const char *const *label_values, const double *bounds,
			   const uint64_t *counts, size_t n, double sum)
{
	size_t i;

	if (desc->type != METRIC_HISTOGRAM)
		return -EINVAL;
	/* Finite and strictly increasing: a NaN or infinite bound would print
	 * a second le="+Inf" bucket or one Prometheus cannot order. */
	for (i = 0; i < n; i++)
		if (!isfinite(bounds[i]) || (i > 0 && !(bounds[i] > bounds[i - 1])))
			return -EINVAL;
	return add_histogram(s, desc, label_values, bounds, counts, n, sum);
}

/* Compacted first, so that a body rendered now reads the compact copy. */
int snapshot_seal_with(struct snapshot *s, struct snapshot_renderer *renderer)
{
	if (s->sealed)
		return 0;
	snapshot_compact(s);
	if (snapshot_render_at_seal(s, renderer) < 0)
		return -ENOMEM;
	s->sealed = true;
	return 0;
}

int snapshot_seal(struct snapshot *s)
{
	return snapshot_seal_with(s, NULL);
}

const struct snapshot_window *snapshot_window(const struct snapshot *s)
{
	return &s->window;
}

void snapshot_set_created(struct snapshot *s, size_t mark, double created_seconds)
{
	for (size_t i = mark; !s->sealed && i < s->n_families; i++)
		if (s->families[i].desc->type != METRIC_GAUGE &&
		    (s->families[i].desc->n_labels == 0 || (s->families[i].desc->flags & METRIC_FLAG_SERIES_FROM_START)))
			s->families[i].created_seconds = created_seconds;
}

void snapshot_set_max_series(struct snapshot *s, size_t max_series)
{
	s->max_series = max_series;
}

size_t snapshot_mark(const struct snapshot *s)
{
	return s->n_families;
}

const struct metric_desc *snapshot_family_desc(const struct snapshot *s, size_t i)
{
	return i < s->n_families ? s->families[i].desc : NULL;
}

void snapshot_foreach_cumulative(struct snapshot *s, size_t mark,
				 void (*fn)(struct snapshot_cumulative *c, void *ud), void *ud)
{
	size_t i, j;

	if (s->sealed)
		return;
	for (i = mark; i < s->n_families; i++) {
		struct family *f = &s->families[i];

		if (f->desc->type != METRIC_COUNTER && f->desc->type != METRIC_HISTOGRAM)
			continue;
		for (j = 0; j < f->n; j++) {
			struct sample *smp = &f->samples[j];
			struct snapshot_cumulative c = {
				.desc = f->desc,
				.labels = (const char *const *)smp->label_values,
			};

			if (smp->hist) {
				c.n = smp->hist->n;
				c.bounds = smp->hist->bounds;
				c.cumulative = smp->hist->cumulative;
				c.sum = &smp->hist->sum;
				snapshot_cumulative_native(s, smp->hist, &c);
			} else {
				c.value = &smp->value;
			}
			fn(&c, ud);
		}
	}
}

size_t snapshot_series(const struct snapshot *s)
{
	return s->n_series;
}

size_t snapshot_dropped_series(const struct snapshot *s)
{
	return s->dropped_series;
}

const struct family *snapshot_family_named(const struct snapshot *s, const char *name, size_t *i)
{
	for (; *i < s->n_families; (*i)++)
		if (strcmp(s->families[*i].desc->name, name) == 0)
			return &s->families[*i];
	return NULL;
}

void snapshot_foreach(const struct snapshot *s, const char *name,
		      void (*fn)(const char *const *labels, unsigned n_labels, double value, double sum, void *ud),
		      void *ud)
{
	const struct family *f;

	for (size_t i = 0; (f = snapshot_family_named(s, name, &i)); i++)
		for (size_t j = 0; j < f->n; j++) {
			const struct sample *smp = &f->samples[j];

			if (smp->hist)
				fn((const char *const *)smp->label_values, f->desc->n_labels,
				   (double)smp->hist->cumulative[smp->hist->n], smp->hist->sum, ud);
			else
				fn((const char *const *)smp->label_values, f->desc->n_labels, smp->value, NAN, ud);
		}
}

double snapshot_value(const struct snapshot *s, const char *name, const char *const *label_values)
{
	const struct family *f;
	unsigned k;

	for (size_t i = 0; (f = snapshot_family_named(s, name, &i)); i++)
		for (size_t j = 0; j < f->n; j++) {
			const struct sample *smp = &f->samples[j];
			bool match = true;

			for (k = 0; k < f->desc->n_labels && label_values; k++)
				if (strcmp(smp->label_values[k], label_values[k]) != 0)
					match = false;
			if (match)
				return smp->hist ? (double)smp->hist->cumulative[smp->hist->n] : smp->value;
		}
	return NAN;
}
