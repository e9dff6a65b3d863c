// SPDX-License-Identifier: GPL-2.0
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include "clock.h"
#include <zlib.h>
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
		atomic_fetch_add_explicit(&s->refcount, 1, memory_order_relaxed);
	return s;
}

void snapshot_unref(struct snapshot *s)
{
	struct arena_block *b, *next;
	size_t i;

	if (!s || atomic_fetch_sub_explicit(&s->refcount, 1, memory_order_acq_rel) != 1)
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

int snapshot_add_histogram_slots(struct snapshot *s, const struct metric_desc *desc,
				 const char *const *label_values, const uint64_t *slots,
				 size_t n_slots, double sum)
{
	/* The descriptor's bounds are constant and checked by the catalogue's unit test. */
	if (desc->type != METRIC_HISTOGRAM || !desc->bounds || n_slots != desc->n_bounds + 1)
		return -EINVAL;
	return add_histogram(s, desc, label_values, desc->bounds, slots, desc->n_bounds, sum);
}

/* --- compaction at seal ------------------------------------------------- */

/* A sealed window is kept for `history` windows, so its samples are copied
 * into one right-sized block: the arena's part-used last block, the doubling
 * sample arrays and a malloc header per family cost about twice the data. A
 * label value that repeats within the window (a cgroup's path in each cgroup
 * family, a collector's name in each collector family) is stored once, so is
 * a vector of label values that repeats (one cgroup's in each of its
 * families), and so are bounds equal to those of the family's previous
 * histogram. */

struct intern {
	const char **keys; /* open addressing on the string's content */
	char **copies;
	size_t mask;
	/* Label vectors by the strings' slots: the families of one cgroup (or
	 * process) share its vector of label values. */
	struct label_vector {
		const size_t *slots; /* NULL: empty */
		unsigned n;
		char **copy;
	} *vectors;
	size_t vector_mask;
};

static void intern_done(struct intern *t)
{
	free(t->keys);
	free(t->copies);
	if (t->vectors)
		for (size_t i = 0; i <= t->vector_mask; i++)
			free((void *)t->vectors[i].slots);
	free(t->vectors);
}

static size_t intern_slot(const struct intern *t, const char *str)
{
	uint64_t h = 14695981039346656037ULL; /* FNV-1a */
	const unsigned char *c;
	size_t i;

	for (c = (const unsigned char *)str; *c; c++)
		h = (h ^ *c) * 1099511628211ULL;
	for (i = (size_t)h & t->mask; t->keys[i] && strcmp(t->keys[i], str) != 0; i = (i + 1) & t->mask)
		;
	return i;
}

/* The slot of the vector of these string slots; *found says whether it is
 * there already. */
static struct label_vector *vector_slot(const struct intern *t, const size_t *slots, unsigned n)
{
	uint64_t h = 14695981039346656037ULL;
	size_t i;

	for (unsigned k = 0; k < n; k++)
		h = (h ^ slots[k]) * 1099511628211ULL;
	for (i = (size_t)(h ^ n) & t->vector_mask;
	     t->vectors[i].slots &&
	     (t->vectors[i].n != n || memcmp(t->vectors[i].slots, slots, n * sizeof(*slots)) != 0);
	     i = (i + 1) & t->vector_mask)
		;
	return &t->vectors[i];
}

static bool shares_bounds(const struct histogram_data *prev, const struct histogram_data *h)
{
	return prev && prev->n == h->n && memcmp(prev->bounds, h->bounds, h->n * sizeof(double)) == 0;
}

/* The descriptor's bounds are constant: the compact copy points at them too. */
static bool desc_bounds(const struct family *f, const struct histogram_data *h)
{
	return h->bounds == f->desc->bounds;
}

static char *intern_copy(struct intern *t, const char *str, char **strings)
{
	size_t slot = intern_slot(t, str), len;

	if (!t->copies[slot]) {
		len = strlen(str) + 1;
		t->copies[slot] = memcpy(*strings, str, len);
		*strings += len;
	}
	return t->copies[slot];
}

/* Fills block (sized by snapshot_compact) from the build-time data. */
static void compact_into(const struct snapshot *s, struct intern *t, char *block, size_t strings_at)
{
	struct family *nf = (struct family *)block;
	struct sample *ns = (struct sample *)(nf + s->n_families);
	char *p = (char *)(ns + s->n_series), *strings = block + strings_at;
	size_t i, j;
	unsigned k;

	/* Everything before the strings is a multiple of 8 bytes, so stays aligned. */
	for (i = 0; i < s->n_families; i++) {
		const struct family *f = &s->families[i];
		const struct histogram_data *prev = NULL;
		double *prev_bounds = NULL;

		nf[i] = (struct family){ .desc = f->desc, .samples = ns, .n = f->n, .cap = f->n,
					 .created_seconds = f->created_seconds };
		for (j = 0; j < f->n; j++, ns++) {
			const struct sample *o = &f->samples[j];
			struct histogram_data *h;

			*ns = (struct sample){ .value = o->value };
			if (f->desc->n_labels) {
				size_t slots[METRIC_MAX_LABELS];
				struct label_vector *v;

				for (k = 0; k < f->desc->n_labels; k++)
					slots[k] = intern_slot(t, o->label_values[k]);
				v = vector_slot(t, slots, f->desc->n_labels);
				if (!v->copy) {
					v->copy = (char **)p;
					p += f->desc->n_labels * sizeof(char *);
					for (k = 0; k < f->desc->n_labels; k++)
						v->copy[k] = intern_copy(t, o->label_values[k], &strings);
				}
				ns->label_values = v->copy;
			}
			if (!o->hist)
				continue;
			h = (struct histogram_data *)p;
			p += sizeof(*h);
			*h = (struct histogram_data){ .n = o->hist->n, .sum = o->hist->sum, .cumulative = (uint64_t *)p };
			p += (h->n + 1) * sizeof(uint64_t);
			memcpy(h->cumulative, o->hist->cumulative, (h->n + 1) * sizeof(uint64_t));
			if (o->hist->extra) {
				h->extra = memcpy(p, o->hist->extra, o->hist->extra->size);
				p += o->hist->extra->size;
			}
			ns->hist = h;
			if (desc_bounds(f, o->hist)) {
				h->bounds = o->hist->bounds;
				continue;
			}
			if (!shares_bounds(prev, o->hist)) {
				prev_bounds = memcpy(p, o->hist->bounds, h->n * sizeof(double));
				p += h->n * sizeof(double);
			}
			h->bounds = prev_bounds;
			prev = o->hist;
		}
	}
	assert(p == block + strings_at);
}

/* Best effort: on failure the build-time data stays, which is just as good. */
static void snapshot_compact(struct snapshot *s)
{
	_cleanup_(intern_done) struct intern t = { 0 };
	size_t size, strings = 0, n_values = 0, n_labelled = 0, cap = 16, vector_cap = 16, i, j;
	struct arena_block *b, *next;
	char *block;
	unsigned k;

	if (s->compacted || s->n_families == 0)
		return;
	size = s->n_families * sizeof(struct family) + s->n_series * sizeof(struct sample);
	for (i = 0; i < s->n_families; i++) {
		const struct family *f = &s->families[i];
		const struct histogram_data *prev = NULL;

		for (j = 0; j < f->n; j++) {
			const struct histogram_data *h = f->samples[j].hist;

			n_values += f->desc->n_labels;
			n_labelled += f->desc->n_labels > 0;
			if (!h)
				continue;
			size += sizeof(*h) + (h->n + 1) * sizeof(uint64_t);
			if (h->extra)
				size += h->extra->size;
			if (desc_bounds(f, h))
				continue;
			if (!shares_bounds(prev, h))
				size += h->n * sizeof(double);
			prev = h;
		}
	}
	while (cap < 2 * n_values)
		cap *= 2;
	t.keys = calloc(cap, sizeof(*t.keys));
	t.copies = calloc(cap, sizeof(*t.copies));
	t.mask = cap - 1;
	if (!t.keys || !t.copies)
		return;
	/* A vector per labelled sample at most: sized by those, not by the
	 * values, it stays below the mmap threshold (a fresh mapping to fault in
	 * every window). */
	while (vector_cap < 2 * n_labelled)
		vector_cap *= 2;
	t.vectors = calloc(vector_cap, sizeof(*t.vectors));
	t.vector_mask = vector_cap - 1;
	if (!t.vectors)
		return;
	for (i = 0; i < s->n_families; i++)
		for (j = 0; j < s->families[i].n; j++) {
			unsigned n = s->families[i].desc->n_labels;
			size_t slots[METRIC_MAX_LABELS];
			struct label_vector *v;

			if (!n)
				continue;
			if (n > METRIC_MAX_LABELS)
				return; /* no descriptor has as many: keep the build-time data */
			for (k = 0; k < n; k++) {
				const char *str = s->families[i].samples[j].label_values[k];
				size_t slot = intern_slot(&t, str);

				if (!t.keys[slot]) {
					t.keys[slot] = str;
					strings += strlen(str) + 1;
				}
				slots[k] = slot;
			}
			v = vector_slot(&t, slots, n);
			if (v->slots)
				continue;
			v->slots = malloc(n * sizeof(*slots));
			if (!v->slots)
				return;
			memcpy((void *)v->slots, slots, n * sizeof(*slots));
			v->n = n;
			size += n * sizeof(char *);
		}
	block = malloc(size + strings);
	if (!block)
		return;
	compact_into(s, &t, block, size);
	for (i = 0; i < s->n_families; i++)
		free(s->families[i].samples);
	free(s->families);
	for (b = s->arena; b; b = next) {
		next = b->next;
		free(b);
	}
	s->arena = NULL;
	s->families = (struct family *)block;
	s->cap_families = s->n_families;
	s->compacted = true;
}

static void render_family(struct strbuf *sb, const struct family *f)
{
	const struct metric_desc *d = f->desc;
	char le[EXPO_NUMBER_MAX];
	size_t i, b;

	if (f->n == 0)
		return;
	expo_put_family_header(sb, d);
	for (i = 0; i < f->n; i++) {
		const struct sample *smp = &f->samples[i];
		const char *const *lv = (const char *const *)smp->label_values;

		if (!smp->hist) {
			expo_put_sample(sb, d->name, NULL, d, lv, NULL, NULL, smp->value);
			continue;
		}
		for (b = 0; b < smp->hist->n; b++) {
			const char *text = le;

			if (smp->hist->bounds == d->bounds && d->le)
				text = d->le[b];
			else
				expo_format_number(le, smp->hist->bounds[b]);
			expo_put_sample(sb, d->name, "_bucket", d, lv, "le", text,
					(double)smp->hist->cumulative[b]);
		}
		expo_put_sample(sb, d->name, "_bucket", d, lv, "le", "+Inf",
				(double)smp->hist->cumulative[smp->hist->n]);
		expo_put_sample(sb, d->name, "_sum", d, lv, NULL, NULL, smp->hist->sum);
		expo_put_sample(sb, d->name, "_count", d, lv, NULL, NULL,
				(double)smp->hist->cumulative[smp->hist->n]);
	}
}

/* Level 6 is zlib's default: within a few percent of 9's size at a fraction of its time. */
#define GZIP_LEVEL 6

/* A format (or its gzip member) asked for since the seal before last is
 * rendered at seal: a scraper that comes every window, or nearly, then only
 * takes a reference. One that comes less often (Prometheus every 15 s, 1 s
 * windows) renders on its first request instead: rendering and compressing
 * every window for it would throw away all but one in fifteen. */
struct snapshot_renderer {
	atomic_uint refcount;
	pthread_mutex_t lock; /* the compressor's; windows are compressed one at a time */
	z_stream zs;
	bool zs_ready;
	uint64_t sealed_usec[2]; /* the last two seals, newest first; under lock */
	_Atomic uint64_t asked_usec[EXPO_FORMAT__COUNT]; /* CLOCK_MONOTONIC; 0: never */
	_Atomic uint64_t gzip_asked_usec[EXPO_FORMAT__COUNT];
};

struct snapshot_renderer *snapshot_renderer_new(void)
{
	struct snapshot_renderer *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	atomic_init(&r->refcount, 1);
	pthread_mutex_init(&r->lock, NULL);
	/* windowBits 15 + 16: a gzip header and trailer instead of zlib's.
	 * Without the compressor every body is served plain. */
	r->zs_ready = deflateInit2(&r->zs, GZIP_LEVEL, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK;
	return r;
}

struct snapshot_renderer *snapshot_renderer_ref(struct snapshot_renderer *r)
{
	if (r)
		atomic_fetch_add_explicit(&r->refcount, 1, memory_order_relaxed);
	return r;
}

void snapshot_renderer_unref(struct snapshot_renderer *r)
{
	if (!r || atomic_fetch_sub_explicit(&r->refcount, 1, memory_order_acq_rel) != 1)
		return;
	if (r->zs_ready)
		deflateEnd(&r->zs);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

/* Compresses in[len] into out (room for gzip_bound() bytes); returns the
 * compressed length or < 0. Under r->lock. */
static ssize_t gzip_compress(struct snapshot_renderer *r, const char *in, size_t len, char *out, size_t cap)
{
	int ret;

	r->zs.next_in = (Bytef *)in;
	r->zs.avail_in = (uInt)len;
	r->zs.next_out = (Bytef *)out;
	r->zs.avail_out = (uInt)cap;
	/* With a deflateBound() buffer, one Z_FINISH call is guaranteed to finish. */
	ret = deflate(&r->zs, Z_FINISH);
	return ret == Z_STREAM_END ? (ssize_t)r->zs.total_out : -EIO;
}

/* deflateBound() after a reset: a finished stream has its gzip trailer
 * marked written, and the bound would leave it out. One deflate() call takes
 * at most UINT_MAX bytes; no window comes near that. 0: no gzip copy.
 * Under r->lock. */
static size_t gzip_bound(struct snapshot_renderer *r, size_t len)
{
	if (!r->zs_ready || len > UINT_MAX / 2 || deflateReset(&r->zs) != Z_OK)
		return 0;
	return deflateBound(&r->zs, (uLong)len);
}

int snapshot_render_text(const struct snapshot *s, struct strbuf *sb)
{
	size_t i;

	strbuf_reserve(sb, 4096 + s->n_series * 96);
	for (i = 0; i < s->n_families; i++)
		render_family(sb, &s->families[i]);
	return strbuf_failed(sb) ? -ENOMEM : 0;
}

typedef int (*render_fn)(const struct snapshot *s, struct strbuf *sb);

static const render_fn renderers[EXPO_FORMAT__COUNT] = {
	[EXPO_FORMAT_TEXT] = snapshot_render_text,
	[EXPO_FORMAT_OPENMETRICS] = snapshot_render_openmetrics,
	[EXPO_FORMAT_PROTOBUF] = snapshot_render_protobuf,
};

static void publish_gzip(struct snapshot_body *b, const char *gzip, ssize_t gz_len)
{
	if (gz_len <= 0)
		return;
	b->gzip = gzip;
	b->gzip_len = (size_t)gz_len;
	atomic_store_explicit(&b->gzip_ready, true, memory_order_release);
}

/* Renders one format, and with gzip its gzip member behind the body's NUL in
 * the same block. On a failed compression there is no gzip copy and scrapes
 * get the plain body: never an error. Under s->render_lock. */
static int render_body(struct snapshot *s, enum expo_format f, bool gzip)
{
	_cleanup_(strbuf_free) struct strbuf sb;
	struct snapshot_body *b = &s->bodies[f];
	struct snapshot_renderer *r = s->renderer;
	ssize_t gz_len = -1;
	size_t len, cap, bound = 0;
	char *block, *smaller;

	strbuf_init(&sb);
	if (renderers[f](s, &sb) < 0)
		return -ENOMEM;
	len = sb.len;
	cap = sb.cap;
	block = strbuf_steal(&sb, NULL);
	if (!block)
		return -ENOMEM;
	if (gzip) {
		pthread_mutex_lock(&r->lock);
		bound = gzip_bound(r, len);
		if (bound && cap < len + 1 + bound) {
			char *bigger = realloc(block, len + 1 + bound);

			if (bigger) {
				block = bigger;
				cap = len + 1 + bound;
			}
		}
		if (bound && cap >= len + 1 + bound)
			gz_len = gzip_compress(r, block, len, block + len + 1, bound);
		pthread_mutex_unlock(&r->lock);
	}
	/* Right-sized: the capacity doubled while rendering, and the bound is generous. */
	smaller = realloc(block, len + 1 + (gz_len > 0 ? (size_t)gz_len : 0));
	if (smaller)
		block = smaller;
	b->block = block;
	b->data = block;
	b->len = len;
	publish_gzip(b, block + len + 1, gz_len);
	atomic_store_explicit(&b->ready, true, memory_order_release);
	return 0;
}

/* The gzip member of a body rendered without one, in a block of its own.
 * Under s->render_lock. */
static void compress_body(struct snapshot *s, enum expo_format f)
{
	struct snapshot_body *b = &s->bodies[f];
	struct snapshot_renderer *r = s->renderer;
	ssize_t gz_len = -1;
	size_t bound;
	char *out;

	pthread_mutex_lock(&r->lock);
	bound = gzip_bound(r, b->len);
	out = bound ? malloc(bound) : NULL;
	if (out)
		gz_len = gzip_compress(r, b->data, b->len, out, bound);
	pthread_mutex_unlock(&r->lock);
	if (gz_len <= 0) {
		free(out);
		return;
	}
	b->gzip_block = out;
	publish_gzip(b, out, gz_len);
}

static bool asked_lately(const _Atomic uint64_t *asked, uint64_t since)
{
	uint64_t at = atomic_load_explicit(asked, memory_order_relaxed);

	return at != 0 && at >= since;
}

int snapshot_seal_with(struct snapshot *s, struct snapshot_renderer *renderer)
{
	uint64_t since;

	if (s->sealed)
		return 0;
	snapshot_compact(s);
	s->renderer = renderer ? snapshot_renderer_ref(renderer) : snapshot_renderer_new();
	if (!s->renderer)
		return -ENOMEM;
	pthread_mutex_lock(&s->renderer->lock);
	since = s->renderer->sealed_usec[1];
	s->renderer->sealed_usec[1] = s->renderer->sealed_usec[0];
	s->renderer->sealed_usec[0] = now_mono_usec();
	pthread_mutex_unlock(&s->renderer->lock);
	for (size_t f = 0; f < EXPO_FORMAT__COUNT; f++) {
		bool gzip = asked_lately(&s->renderer->gzip_asked_usec[f], since);

		if (renderers[f] && (gzip || asked_lately(&s->renderer->asked_usec[f], since)) &&
		    render_body(s, f, gzip) < 0)
			return -ENOMEM;
	}
	s->sealed = true;
	return 0;
}

int snapshot_seal(struct snapshot *s)
{
	return snapshot_seal_with(s, NULL);
}

size_t snapshot_trim(struct snapshot *s, void *blocks[static SNAPSHOT_TRIM_BLOCKS])
{
	size_t n = 0;

	/* The acquire pairs with the release in other holders' unref: whatever
	 * they sent from a body is done before we hand it over, and no render
	 * is under way (a renderer holds a reference). */
	if (!s->sealed || s->trimmed || atomic_load_explicit(&s->refcount, memory_order_acquire) != 1)
		return 0;
	s->trimmed = true;
	for (size_t f = 0; f < EXPO_FORMAT__COUNT; f++) {
		struct snapshot_body *b = &s->bodies[f];

		if (b->block)
			blocks[n++] = b->block;
		if (b->gzip_block)
			blocks[n++] = b->gzip_block;
		atomic_store_explicit(&b->ready, false, memory_order_relaxed);
		atomic_store_explicit(&b->gzip_ready, false, memory_order_relaxed);
		b->block = b->gzip_block = NULL;
		b->data = b->gzip = NULL;
		b->len = b->gzip_len = 0;
	}
	return n;
}

const struct snapshot_window *snapshot_window(const struct snapshot *s)
{
	return &s->window;
}

bool snapshot_rendered(const struct snapshot *s, enum expo_format format)
{
	return (unsigned)format < EXPO_FORMAT__COUNT &&
	       atomic_load_explicit(&s->bodies[format].ready, memory_order_acquire);
}

const void *snapshot_body(const struct snapshot *cs, enum expo_format format, bool gzip, size_t *len)
{
	/* The bodies are a cache filled on demand, under render_lock: the
	 * window they render does not change. */
	struct snapshot *s = (struct snapshot *)cs;
	enum expo_format f = (unsigned)format < EXPO_FORMAT__COUNT ? format : EXPO_FORMAT_TEXT;
	struct snapshot_body *b = &s->bodies[f];

	if (len)
		*len = 0;
	if (!s->sealed || !renderers[f])
		return NULL;
	atomic_store_explicit(gzip ? &s->renderer->gzip_asked_usec[f] : &s->renderer->asked_usec[f],
			      now_mono_usec(), memory_order_relaxed);
	if (!atomic_load_explicit(gzip ? &b->gzip_ready : &b->ready, memory_order_acquire)) {
		pthread_mutex_lock(&s->render_lock);
		if (!s->trimmed && !atomic_load_explicit(&b->ready, memory_order_relaxed))
			(void)render_body(s, f, gzip);
		else if (!s->trimmed && gzip && !atomic_load_explicit(&b->gzip_ready, memory_order_relaxed))
			compress_body(s, f);
		pthread_mutex_unlock(&s->render_lock);
		if (!atomic_load_explicit(gzip ? &b->gzip_ready : &b->ready, memory_order_acquire))
			return NULL;
	}
	if (len)
		*len = gzip ? b->gzip_len : b->len;
	return gzip ? b->gzip : b->data;
}

const char *snapshot_text(const struct snapshot *s, size_t *len)
{
	return snapshot_body(s, EXPO_FORMAT_TEXT, false, len);
}

const void *snapshot_gzip(const struct snapshot *s, size_t *len)
{
	return snapshot_body(s, EXPO_FORMAT_TEXT, true, len);
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

void snapshot_foreach(const struct snapshot *s, const char *name,
		      void (*fn)(const char *const *labels, unsigned n_labels, double value, double sum, void *ud),
		      void *ud)
{
	size_t i, j;

	for (i = 0; i < s->n_families; i++) {
		const struct family *f = &s->families[i];

		if (strcmp(f->desc->name, name) != 0)
			continue;
		for (j = 0; j < f->n; j++) {
			const struct sample *smp = &f->samples[j];

			if (smp->hist)
				fn((const char *const *)smp->label_values, f->desc->n_labels,
				   (double)smp->hist->cumulative[smp->hist->n], smp->hist->sum, ud);
			else
				fn((const char *const *)smp->label_values, f->desc->n_labels, smp->value, NAN, ud);
		}
	}
}

double snapshot_value(const struct snapshot *s, const char *name, const char *const *label_values)
{
	size_t i, j;
	unsigned k;

	for (i = 0; i < s->n_families; i++) {
		const struct family *f = &s->families[i];

		if (strcmp(f->desc->name, name) != 0)
			continue;
		for (j = 0; j < f->n; j++) {
			const struct sample *smp = &f->samples[j];
			bool match = true;

			for (k = 0; k < f->desc->n_labels && label_values; k++)
				if (strcmp(smp->label_values[k], label_values[k]) != 0)
					match = false;
			if (match)
				return smp->hist ? (double)smp->hist->cumulative[smp->hist->n] : smp->value;
		}
	}
	return NAN;
}
