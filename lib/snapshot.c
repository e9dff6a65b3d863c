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
#include "hash.h"
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
	snapshot_unref(s->like);
	free(s->family_index);
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

/* Makes room for one more sample in a family, doubling its array in the
 * arena: a window's arrays die with it, and hundreds of small ones freed
 * every window left the allocator's fast bins to be consolidated by the
 * next window's first large request. */
static int samples_grow(struct snapshot *s, struct family *f)
{
	size_t cap = f->cap ? 2 * f->cap : 4;
	struct sample *p;

	if (f->n < f->cap)
		return 0;
	p = snapshot_arena_alloc(s, cap * sizeof(*p));
	if (!p)
		return -ENOMEM;
	if (f->n)
		memcpy(p, f->samples, f->n * sizeof(*p));
	f->samples = p;
	f->cap = cap;
	return 0;
}

int snapshot_grow_array(void **array, size_t *cap, size_t n, size_t elem_size, size_t first)
{
	size_t new_cap;
	void *p;

	if (n < *cap)
		return 0;
	new_cap = *cap ? *cap * 2 : first;
	p = reallocarray(*array, new_cap, elem_size);
	if (!p)
		return -ENOMEM;
	*array = p;
	*cap = new_cap;
	return 0;
}

void snapshot_size_like(struct snapshot *s, struct snapshot *like)
{
	if (s->sealed || s->n_families || s->like || !like)
		return;
	s->like = snapshot_ref(like);
	if (like->n_families) {
		s->families = malloc(like->n_families * sizeof(*s->families));
		s->cap_families = s->families ? like->n_families : 0;
	}
}

static size_t family_hash(const struct metric_desc *desc)
{
	return (size_t)(hash_bytes(desc->name, strlen(desc->name)) ^ desc->n_labels);
}

static bool same_family(const struct metric_desc *a, const struct metric_desc *b)
{
	return a == b || (a->n_labels == b->n_labels && strcmp(a->name, b->name) == 0);
}

/* The slot of desc's family in the index: its own, or the free one it would take. */
static size_t family_slot(const struct snapshot *s, const struct metric_desc *desc)
{
	size_t i = family_hash(desc) & s->family_index_mask;

	while (s->family_index[i] && !same_family(s->families[s->family_index[i] - 1].desc, desc))
		i = (i + 1) & s->family_index_mask;
	return i;
}

/* Room for one more family in the index, at most half full. */
static int family_index_grow(struct snapshot *s)
{
	size_t cap = s->family_index ? s->family_index_mask + 1 : 64;
	uint32_t *old = s->family_index;

	if (old && 2 * (s->n_families + 1) <= cap)
		return 0;
	while (2 * (s->n_families + 1) > cap)
		cap *= 2;
	s->family_index = calloc(cap, sizeof(*s->family_index));
	if (!s->family_index) {
		s->family_index = old;
		return -ENOMEM;
	}
	free(old);
	s->family_index_mask = cap - 1;
	for (size_t f = 0; f < s->n_families; f++)
		s->family_index[family_slot(s, s->families[f].desc)] = (uint32_t)(f + 1);
	return 0;
}

static struct family *family_get(struct snapshot *s, const struct metric_desc *desc)
{
	uint32_t *cached = &s->family_by_desc[((uintptr_t)desc / sizeof(void *)) % FAMILY_BY_DESC_SLOTS];
	const struct family *before;
	bool known_new;
	size_t slot = 0;

	/* Collectors emit a family's samples together, so the last one usually
	 * matches; one cgroup's or process's families in turn find theirs by
	 * the descriptor's address. */
	if (s->n_families && s->families[s->n_families - 1].desc == desc)
		return &s->families[s->n_families - 1];
	if (*cached && s->families[*cached - 1].desc == desc)
		return &s->families[*cached - 1];
	before = s->like && s->n_families < s->like->n_families ? &s->like->families[s->n_families] : NULL;
	/* As long as no lookup needed the index, every family came in the
	 * window before's order, so its next one is new here: no name hashed. */
	known_new = !s->family_index && before && before->desc == desc;
	if (!known_new) {
		if (family_index_grow(s) < 0)
			return NULL;
		slot = family_slot(s, desc);
		if (s->family_index[slot]) {
			*cached = s->family_index[slot];
			return &s->families[s->family_index[slot] - 1];
		}
	}
	if (s->n_families >= UINT32_MAX - 1 ||
	    snapshot_grow_array((void **)&s->families, &s->cap_families, s->n_families, sizeof(*s->families), 32) < 0)
		return NULL;
	if (!known_new)
		s->family_index[slot] = (uint32_t)(s->n_families + 1);
	*cached = (uint32_t)(s->n_families + 1);
	s->families[s->n_families] = (struct family){ .desc = desc };
	if (before && before->desc == desc && before->n) {
		struct sample *samples = snapshot_arena_alloc(s, before->n * sizeof(*samples));

		if (samples) {
			s->families[s->n_families].samples = samples;
			s->families[s->n_families].cap = before->n;
		}
	}
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
	if (samples_grow(s, f) < 0)
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
	snapshot_unref(TAKE_PTR(s->like));
	free(TAKE_PTR(s->family_index));
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
