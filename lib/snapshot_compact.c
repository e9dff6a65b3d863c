// SPDX-License-Identifier: GPL-2.0
/* A window's samples compacted at seal (snapshot_seal_with() in lib/snapshot.c). */
#include <assert.h>
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

struct intern {
	const char **keys; /* open addressing on the string's content */
	char **copies;
	size_t mask;
	/* Label vectors by the strings' slots: the families of one cgroup (or
	 * process) share its vector of label values. */
	struct label_vector {
		const size_t *slots; /* NULL: empty; else in slot_pool */
		unsigned n;
		char **copy;
	} *vectors;
	size_t vector_mask;
	size_t *slot_pool; /* one entry per label value of the window at most */
	size_t slot_pool_used;
};

static void intern_done(struct intern *t)
{
	free(t->keys);
	free(t->copies);
	free(t->vectors);
	free(t->slot_pool);
}

static size_t intern_slot(const struct intern *t, const char *str)
{
	uint64_t h = fnv1a_string(FNV1A_OFFSET, str);
	size_t i;

	for (i = (size_t)h & t->mask; t->keys[i] && strcmp(t->keys[i], str) != 0; i = (i + 1) & t->mask)
		;
	return i;
}

/* The slot of the vector of these string slots; *found says whether it is
 * there already. */
static struct label_vector *vector_slot(const struct intern *t, const size_t *slots, unsigned n)
{
	uint64_t h = FNV1A_OFFSET;
	size_t i;

	for (unsigned k = 0; k < n; k++)
		h = fnv1a_step(h, slots[k]);
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
void snapshot_compact(struct snapshot *s)
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
	t.slot_pool = malloc((n_values ? n_values : 1) * sizeof(*t.slot_pool));
	if (!t.vectors || !t.slot_pool)
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
			v->slots = memcpy(t.slot_pool + t.slot_pool_used, slots, n * sizeof(*slots));
			t.slot_pool_used += n;
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
