// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "label_base.h"

void label_bases_init(struct label_bases *b, size_t max)
{
	*b = (struct label_bases){ .max = max ? max : 1 };
}

void label_bases_done(struct label_bases *b)
{
	size_t i;

	for (i = 0; i < b->n; i++)
		free(b->v[i].label);
	free(b->v);
	*b = (struct label_bases){ 0 };
}

static void drop(struct label_bases *b, size_t i)
{
	free(b->v[i].label);
	b->v[i] = b->v[--b->n];
}

static size_t least_recently_used(const struct label_bases *b)
{
	size_t i, lru = 0;

	for (i = 1; i < b->n; i++)
		if (b->v[i].used_usec < b->v[lru].used_usec)
			lru = i;
	return lru;
}

int label_bases_retire(struct label_bases *b, uint64_t key, const char *label, const uint64_t *total, size_t n,
		       uint64_t now_usec)
{
	struct label_base *e = NULL;
	size_t i;

	if (n > LABEL_BASE_COUNTERS)
		return -EINVAL;
	for (i = 0; i < b->n && !e; i++)
		if (b->v[i].key == key && strcmp(b->v[i].label, label) == 0)
			e = &b->v[i];
	if (!e) {
		char *copy = strdup(label);

		if (!copy)
			return -ENOMEM;
		if (b->n == b->max)
			drop(b, least_recently_used(b));
		if (b->n == b->cap) {
			size_t cap = b->cap ? 2 * b->cap : 8;
			struct label_base *v = realloc(b->v, cap * sizeof(*v));

			if (!v) {
				free(copy);
				return -ENOMEM;
			}
			b->v = v;
			b->cap = cap;
		}
		e = &b->v[b->n++];
		*e = (struct label_base){ .key = key, .label = copy };
	}
	memset(e->total, 0, sizeof(e->total));
	memcpy(e->total, total, n * sizeof(*total));
	e->used_usec = now_usec;
	return 0;
}

bool label_bases_add(struct label_bases *b, const char *label, uint64_t key, uint64_t *total, size_t n,
		     uint64_t now_usec)
{
	bool any = false;
	size_t i, c;

	if (n > LABEL_BASE_COUNTERS)
		n = LABEL_BASE_COUNTERS;
	for (i = 0; i < b->n; i++) {
		struct label_base *e = &b->v[i];

		if (e->key == key || strcmp(e->label, label) != 0)
			continue;
		for (c = 0; c < n; c++)
			total[c] += e->total[c];
		e->used_usec = now_usec;
		any = true;
	}
	return any;
}

void label_bases_expire(struct label_bases *b, uint64_t cutoff_usec)
{
	size_t i = 0;

	while (i < b->n)
		if (b->v[i].used_usec < cutoff_usec)
			drop(b, i);
		else
			i++;
}
