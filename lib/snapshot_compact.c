// SPDX-License-Identifier: GPL-2.0
/* A window's samples compacted at seal (snapshot_seal_with() in lib/snapshot.c). */
#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "hash.h"
#include "snapshot_internal.h"

/* A sealed window is kept for `history` windows, so its samples are copied
 * into one right-sized block: the arena's part-used last block, the doubling
 * sample arrays and a malloc header per family cost about twice the data. A
 * label value that repeats within the window (a cgroup's path in each cgroup
 * family, a collector's name in each collector family) is stored once, so is
 * a vector of label values that repeats (one cgroup's in each of its
 * families), and so are bounds equal to those of the family's previous
 * histogram. */

struct interned_string {
	const char *str; /* build-time */
	size_t len;
	uint64_t hash;
	char *copy; /* in the block, once compact_into() met it */
};

/* One cgroup's (or process's) vector of label values, shared by its families. */
struct label_vector {
	const uint32_t *strings; /* ordinals into intern.strings, in intern.ordinal_pool */
	unsigned n;
	uint64_t hash;
	char **copy; /* in the block, once compact_into() met it */
};

/* Open addressing: ordinal + 1 per slot, 0 free. */
struct intern_table {
	uint32_t *slots;
	size_t mask;
};

/* The window's distinct label values and vectors, each sample's looked up
 * once: sample_vector[] keeps every labelled sample's vector for
 * compact_into(). The tables grow with what is distinct (a few hundred
 * values for thousands of samples): sized by the samples, they were zeroed
 * and faulted in afresh every window. */
struct intern {
	struct interned_string *strings;
	size_t n_strings, cap_strings;
	struct intern_table string_table;
	struct label_vector *vectors;
	size_t n_vectors, cap_vectors;
	struct intern_table vector_table;
	uint32_t *ordinal_pool; /* one entry per label value of the window at most */
	size_t pool_used;
	uint32_t *sample_vector; /* per labelled sample, in order */
};

static void intern_done(struct intern *t)
{
	free(t->strings);
	free(t->string_table.slots);
	free(t->vectors);
	free(t->vector_table.slots);
	free(t->ordinal_pool);
	free(t->sample_vector);
}

#define INTERN_FIRST_CAP 64

static uint64_t string_hash(const struct intern *t, size_t i)
{
	return t->strings[i].hash;
}

static uint64_t vector_hash(const struct intern *t, size_t i)
{
	return t->vectors[i].hash;
}

/* Files ordinal n (entries 0..n-1 are in tb already) under hash h, first
 * doubling tb when it would be more than half full. */
static int table_add(const struct intern *t, struct intern_table *tb, size_t n, uint64_t h,
		     uint64_t (*hash_of)(const struct intern *t, size_t i))
{
	size_t cap = tb->slots ? tb->mask + 1 : INTERN_FIRST_CAP, j;

	if (!tb->slots || 2 * (n + 1) > cap) {
		uint32_t *fresh;

		while (2 * (n + 1) > cap)
			cap *= 2;
		fresh = calloc(cap, sizeof(*fresh));
		if (!fresh)
			return -ENOMEM;
		for (size_t i = 0; i < n; i++) {
			for (j = (size_t)hash_of(t, i) & (cap - 1); fresh[j]; j = (j + 1) & (cap - 1))
				;
			fresh[j] = (uint32_t)i + 1;
		}
		free(tb->slots);
		tb->slots = fresh;
		tb->mask = cap - 1;
	}
	for (j = (size_t)h & tb->mask; tb->slots[j]; j = (j + 1) & tb->mask)
		;
	tb->slots[j] = (uint32_t)n + 1;
	return 0;
}

/* str's ordinal, a new one when it is new (*added). */
static int intern_string(struct intern *t, const char *str, uint32_t *ret, bool *added)
{
	size_t len = strlen(str), i;
	uint64_t h = hash_bytes(str, len);
	const struct intern_table *tb = &t->string_table;
	struct interned_string *is;
	uint32_t o;

	*added = false;
	for (i = (size_t)h & tb->mask; tb->slots && (o = tb->slots[i]); i = (i + 1) & tb->mask) {
		is = &t->strings[o - 1];
		if (is->hash == h && is->len == len && memcmp(is->str, str, len) == 0) {
			*ret = o - 1;
			return 0;
		}
	}
	if (snapshot_grow_array((void **)&t->strings, &t->cap_strings, t->n_strings, sizeof(*t->strings),
				INTERN_FIRST_CAP) < 0)
		return -ENOMEM;
	t->strings[t->n_strings] = (struct interned_string){ .str = str, .len = len, .hash = h };
	if (table_add(t, &t->string_table, t->n_strings, h, string_hash) < 0)
		return -ENOMEM;
	*ret = (uint32_t)t->n_strings++;
	*added = true;
	return 0;
}

/* The vector of these ordinals' ordinal, a new one when it is new (*added). */
static int intern_vector(struct intern *t, const uint32_t *strings, unsigned n, uint32_t *ret, bool *added)
{
	const struct intern_table *tb = &t->vector_table;
	uint64_t h = n;
	struct label_vector *v;
	uint32_t o;
	size_t i;

	for (unsigned k = 0; k < n; k++)
		h = hash_mix(h ^ strings[k]);
	*added = false;
	for (i = (size_t)h & tb->mask; tb->slots && (o = tb->slots[i]); i = (i + 1) & tb->mask) {
		v = &t->vectors[o - 1];
		if (v->hash == h && v->n == n && memcmp(v->strings, strings, n * sizeof(*strings)) == 0) {
			*ret = o - 1;
			return 0;
		}
	}
	if (snapshot_grow_array((void **)&t->vectors, &t->cap_vectors, t->n_vectors, sizeof(*t->vectors),
				INTERN_FIRST_CAP) < 0)
		return -ENOMEM;
	t->vectors[t->n_vectors] = (struct label_vector){
		.strings = memcpy(t->ordinal_pool + t->pool_used, strings, n * sizeof(*strings)), .n = n, .hash = h
	};
	t->pool_used += n;
	if (table_add(t, &t->vector_table, t->n_vectors, h, vector_hash) < 0)
		return -ENOMEM;
	*ret = (uint32_t)t->n_vectors++;
	*added = true;
	return 0;
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

static char *intern_copy(struct interned_string *is, char **strings)
{
	if (!is->copy) {
		is->copy = memcpy(*strings, is->str, is->len + 1);
		*strings += is->len + 1;
	}
	return is->copy;
}

/* Fills block (sized by snapshot_compact) from the build-time data. */
static void compact_into(const struct snapshot *s, struct intern *t, char *block, size_t strings_at)
{
	struct family *nf = (struct family *)block;
	struct sample *ns = (struct sample *)(nf + s->n_families);
	char *p = (char *)(ns + s->n_series), *strings = block + strings_at;
	size_t i, j, labelled = 0;
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
				struct label_vector *v = &t->vectors[t->sample_vector[labelled++]];

				if (!v->copy) {
					v->copy = (char **)p;
					p += v->n * sizeof(char *);
					for (k = 0; k < v->n; k++)
						v->copy[k] = intern_copy(&t->strings[v->strings[k]], &strings);
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
void snapshot_compact(struct snapshot *s)
{
	_cleanup_(intern_done) struct intern t = { 0 };
	size_t size, strings = 0, n_values = 0, n_labelled = 0, labelled = 0, i, j;
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
	t.ordinal_pool = malloc((n_values ? n_values : 1) * sizeof(*t.ordinal_pool));
	t.sample_vector = malloc((n_labelled ? n_labelled : 1) * sizeof(*t.sample_vector));
	if (!t.ordinal_pool || !t.sample_vector)
		return;
	for (i = 0; i < s->n_families; i++)
		for (j = 0; j < s->families[i].n; j++) {
			unsigned n = s->families[i].desc->n_labels;
			uint32_t ordinals[METRIC_MAX_LABELS];
			bool added;

			if (!n)
				continue;
			if (n > METRIC_MAX_LABELS)
				return; /* no descriptor has as many: keep the build-time data */
			for (k = 0; k < n; k++) {
				if (intern_string(&t, s->families[i].samples[j].label_values[k], &ordinals[k], &added) < 0)
					return;
				if (added)
					strings += t.strings[ordinals[k]].len + 1;
			}
			if (intern_vector(&t, ordinals, n, &t.sample_vector[labelled++], &added) < 0)
				return;
			if (added)
				size += n * sizeof(char *);
		}
	block = malloc(size + strings);
	if (!block)
		return;
	compact_into(s, &t, block, size);
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
