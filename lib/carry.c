// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "carry.h"
#include "hash.h"

#define NO_HISTOGRAM SIZE_MAX

struct carry_entry {
	char *key; /* name NUL label NUL label NUL ... */
	size_t key_len;
	uint64_t hash;
	const struct metric_desc *desc;
	bool decided;
	uint64_t seen;       /* the apply round it was last produced in */
	uint64_t hold_until; /* mono usec */
	size_t n;            /* finite buckets, or NO_HISTOGRAM for a counter */
	double value;        /* a counter's value, a histogram's sum */
	double off_value;
	double *bounds;      /* n */
	uint64_t *cumulative, *off_cumulative; /* n + 1 each */
	/* A native histogram's buckets native_first ... (n_native of them) and
	 * its zero bucket, each a counter carried on its own. */
	bool has_native;
	int32_t native_schema, native_first;
	size_t n_native;
	uint64_t *native, *off_native;
	uint64_t zero, off_zero;
};

struct carry {
	struct carry_entry **entries;
	size_t n, cap;
	size_t *slots; /* open addressing: index + 1, 0 = empty */
	size_t mask;
	uint64_t round;
};

/* The key of a sample: its family's name, then its label values, each NUL-ended. */
static char *make_key(const struct metric_desc *desc, const char *const *labels, size_t *ret_len)
{
	size_t len = strlen(desc->name) + 1, off;
	unsigned k;
	char *key;

	for (k = 0; k < desc->n_labels; k++)
		len += strlen(labels && labels[k] ? labels[k] : "") + 1;
	key = malloc(len);
	if (!key)
		return NULL;
	off = strlen(desc->name) + 1;
	memcpy(key, desc->name, off);
	for (k = 0; k < desc->n_labels; k++) {
		const char *v = labels && labels[k] ? labels[k] : "";
		size_t l = strlen(v) + 1;

		memcpy(key + off, v, l);
		off += l;
	}
	*ret_len = len;
	return key;
}

static void entry_free(struct carry_entry *e)
{
	if (!e)
		return;
	free(e->key);
	free(e->bounds);
	free(e->cumulative);
	free(e->off_cumulative);
	free(e->native);
	free(e->off_native);
	free(e);
}

static uint64_t gap_u(uint64_t carried, uint64_t now)
{
	return carried > now ? carried - now : 0;
}

/* The native buckets of s, as recorded (offsets 0). */
static int native_record(struct carry_entry *e, const struct snapshot_cumulative *s)
{
	if (!s->has_native)
		return 0;
	e->native = calloc(s->n_native ? s->n_native : 1, sizeof(*e->native));
	e->off_native = calloc(s->n_native ? s->n_native : 1, sizeof(*e->off_native));
	if (!e->native || !e->off_native)
		return -ENOMEM;
	e->has_native = true;
	e->native_schema = s->native_schema;
	e->native_first = s->native_first;
	e->n_native = s->n_native;
	memcpy(e->native, s->native, s->n_native * sizeof(uint64_t));
	e->zero = *s->zero_count;
	return 0;
}

static uint64_t native_at(const struct snapshot_cumulative *s, int64_t index)
{
	int64_t i = index - s->native_first;

	return i >= 0 && i < (int64_t)s->n_native ? s->native[i] : 0;
}

static bool same_native(const struct carry_entry *e, const struct snapshot_cumulative *s)
{
	return e->has_native && s->has_native && e->native_schema == s->native_schema;
}

/* offsets: what keeps each native bucket from going below its carried count
 * (splice), or all of it (a series that started from zero). */
static void native_offsets(struct carry_entry *e, const struct snapshot_cumulative *s, bool all)
{
	if (!same_native(e, s))
		return;
	for (size_t i = 0; i < e->n_native; i++)
		e->off_native[i] = all ? e->native[i] : gap_u(e->native[i], native_at(s, e->native_first + (int64_t)i));
	e->off_zero = all ? e->zero : gap_u(e->zero, *s->zero_count);
}

static void native_apply(const struct carry_entry *e, struct snapshot_cumulative *s)
{
	size_t lo = e->n_native, hi = 0;

	if (!same_native(e, s))
		return;
	for (size_t i = 0; i < e->n_native; i++)
		if (e->off_native[i]) {
			if (lo > i)
				lo = i;
			hi = i + 1;
		}
	*s->zero_count += e->off_zero;
	if (hi == 0)
		return;
	/* Without memory the native buckets stay as counted: they are a view
	 * of the classic ones, which carry on. */
	if (snapshot_cumulative_widen_native(s, e->native_first + (int32_t)lo, hi - lo) < 0)
		return;
	for (size_t i = lo; i < hi; i++)
		s->native[e->native_first + (int64_t)i - s->native_first] += e->off_native[i];
}

DEFINE_TRIVIAL_CLEANUP_FUNC(struct carry_entry *, entry_free)

struct carry *carry_new(void)
{
	return calloc(1, sizeof(struct carry));
}

void carry_free(struct carry *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		entry_free(c->entries[i]);
	free(c->entries);
	free(c->slots);
	free(c);
}

size_t carry_size(const struct carry *c)
{
	return c ? c->n : 0;
}

static struct carry_entry *find(const struct carry *c, const char *key, size_t len, uint64_t hash)
{
	size_t i;

	if (!c->slots)
		return NULL;
	for (i = (size_t)hash & c->mask; c->slots[i]; i = (i + 1) & c->mask) {
		struct carry_entry *e = c->entries[c->slots[i] - 1];

		if (e->hash == hash && e->key_len == len && memcmp(e->key, key, len) == 0)
			return e;
	}
	return NULL;
}

/* Rebuilds the index for at least want entries. */
static int reindex(struct carry *c, size_t want)
{
	size_t cap = 16, i, *slots;

	while (cap < 2 * want)
		cap *= 2;
	slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	free(c->slots);
	c->slots = slots;
	c->mask = cap - 1;
	for (i = 0; i < c->n; i++) {
		size_t s = (size_t)c->entries[i]->hash & c->mask;

		while (c->slots[s])
			s = (s + 1) & c->mask;
		c->slots[s] = i + 1;
	}
	return 0;
}

/* Takes over e. */
static int insert(struct carry *c, struct carry_entry *e)
{
	size_t s;

	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		struct carry_entry **p = realloc(c->entries, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		c->entries = p;
		c->cap = cap;
	}
	if (!c->slots || 2 * (c->n + 1) > c->mask + 1) {
		int r = reindex(c, c->n + 1);

		if (r < 0)
			return r;
	}
	c->entries[c->n++] = e;
	for (s = (size_t)e->hash & c->mask; c->slots[s]; s = (s + 1) & c->mask)
		;
	c->slots[s] = c->n;
	return 0;
}

static struct carry_entry *entry_new(const struct metric_desc *desc, const char *const *labels, size_t n)
{
	_cleanup_(entry_freep) struct carry_entry *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->desc = desc;
	e->n = n;
	e->key = make_key(desc, labels, &e->key_len);
	if (!e->key)
		return NULL;
	e->hash = hash_bytes(e->key, e->key_len);
	if (n != NO_HISTOGRAM) {
		e->bounds = calloc(n ? n : 1, sizeof(*e->bounds));
		e->cumulative = calloc(n + 1, sizeof(*e->cumulative));
		e->off_cumulative = calloc(n + 1, sizeof(*e->off_cumulative));
		if (!e->bounds || !e->cumulative || !e->off_cumulative)
			return NULL;
	}
	return TAKE_PTR(e);
}

struct record_ctx {
	struct carry *c;
	uint64_t hold_until;
	int r;
};

static void record_one(struct snapshot_cumulative *s, void *ud)
{
	struct record_ctx *ctx = ud;
	_cleanup_(entry_freep) struct carry_entry *e = NULL;
	int r;

	if (ctx->r < 0)
		return;
	e = entry_new(s->desc, s->labels, s->value ? NO_HISTOGRAM : s->n);
	if (!e) {
		ctx->r = -ENOMEM;
		return;
	}
	e->hold_until = ctx->hold_until;
	if (s->value) {
		e->value = *s->value;
	} else {
		memcpy(e->bounds, s->bounds, s->n * sizeof(double));
		memcpy(e->cumulative, s->cumulative, (s->n + 1) * sizeof(uint64_t));
		e->value = *s->sum;
		if (native_record(e, s) < 0) {
			ctx->r = -ENOMEM;
			return;
		}
	}
	if (find(ctx->c, e->key, e->key_len, e->hash))
		return; /* a family repeated: the first sample wins */
	r = insert(ctx->c, e);
	if (r < 0) {
		ctx->r = r;
		return;
	}
	TAKE_PTR(e); /* the table has it */
}

int carry_record(struct carry *c, struct snapshot *snap, size_t mark, uint64_t hold_until_usec)
{
	struct record_ctx ctx = { c, hold_until_usec, 0 };

	snapshot_foreach_cumulative(snap, mark, record_one, &ctx);
	return ctx.r;
}

static struct carry_entry *entry_copy(const struct carry_entry *o)
{
	_cleanup_(entry_freep) struct carry_entry *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	*e = *o;
	e->bounds = NULL;
	e->cumulative = e->off_cumulative = NULL;
	e->key = malloc(o->key_len);
	if (!e->key)
		return NULL;
	memcpy(e->key, o->key, o->key_len);
	if (o->n != NO_HISTOGRAM) {
		e->bounds = malloc((o->n ? o->n : 1) * sizeof(double));
		e->cumulative = malloc((o->n + 1) * sizeof(uint64_t));
		e->off_cumulative = calloc(o->n + 1, sizeof(uint64_t));
		if (!e->bounds || !e->cumulative || !e->off_cumulative)
			return NULL;
		memcpy(e->bounds, o->bounds, o->n * sizeof(double));
		memcpy(e->cumulative, o->cumulative, (o->n + 1) * sizeof(uint64_t));
	}
	e->native = e->off_native = NULL;
	e->off_zero = 0;
	if (o->has_native) {
		e->native = malloc((o->n_native ? o->n_native : 1) * sizeof(uint64_t));
		e->off_native = calloc(o->n_native ? o->n_native : 1, sizeof(uint64_t));
		if (!e->native || !e->off_native)
			return NULL;
		memcpy(e->native, o->native, o->n_native * sizeof(uint64_t));
	}
	return TAKE_PTR(e);
}

int carry_keep_held(struct carry *c, const struct carry *prev, uint64_t now_usec)
{
	size_t i;
	int r;

	for (i = 0; prev && i < prev->n; i++) {
		const struct carry_entry *o = prev->entries[i];
		struct carry_entry *e;

		if (o->decided || o->hold_until <= now_usec)
			continue;
		e = find(c, o->key, o->key_len, o->hash);
		if (e) {
			/* Recorded from what prev exported while holding it: the old
			 * instance never produced it. Its hold runs from the restart
			 * that began it; restarted from each later restart, a series
			 * would be held for ever by restarts less than a hold apart. */
			if (e->hold_until > o->hold_until)
				e->hold_until = o->hold_until;
			continue;
		}
		e = entry_copy(o);
		if (!e)
			return -ENOMEM;
		r = insert(c, e);
		if (r < 0) {
			entry_free(e);
			return r;
		}
	}
	return 0;
}

static bool same_bounds(const struct carry_entry *e, const struct snapshot_cumulative *s)
{
	return e->n == s->n && memcmp(e->bounds, s->bounds, s->n * sizeof(double)) == 0;
}

static double gap(double carried, double now)
{
	return carried > now ? carried - now : 0;
}

static struct carry_entry *lookup(struct carry *c, const struct snapshot_cumulative *s)
{
	size_t len;
	_cleanup_free_ char *key = make_key(s->desc, s->labels, &len);

	return key ? find(c, key, len, hash_bytes(key, len)) : NULL;
}

/* At the switch: whatever keeps the series from going below what was exported. */
static void splice_one(struct snapshot_cumulative *s, void *ud)
{
	struct carry_entry *e = lookup(ud, s);
	size_t i;

	if (!e || e->decided)
		return;
	e->decided = true;
	if (s->value) {
		if (e->n == NO_HISTOGRAM)
			e->off_value = gap(e->value, *s->value);
		return;
	}
	if (e->n == NO_HISTOGRAM || !same_bounds(e, s))
		return; /* the shape changed: nothing to line up with */
	for (i = 0; i <= e->n; i++)
		e->off_cumulative[i] = gap_u(e->cumulative[i], s->cumulative[i]);
	e->off_value = gap(e->value, *s->sum);
	native_offsets(e, s, false);
}

void carry_splice(struct carry *c, struct snapshot *first, size_t mark)
{
	snapshot_foreach_cumulative(first, mark, splice_one, c);
}

/* Seen for the first time after the switch: it started from zero (a new BPF
 * map entry) unless it is already at or above the carried value. */
static void decide_late(struct carry_entry *e, const struct snapshot_cumulative *s)
{
	size_t i;

	e->decided = true;
	if (s->value) {
		if (e->n == NO_HISTOGRAM && *s->value < e->value)
			e->off_value = e->value;
		return;
	}
	if (e->n == NO_HISTOGRAM || !same_bounds(e, s) || s->cumulative[s->n] >= e->cumulative[e->n])
		return;
	for (i = 0; i <= e->n; i++)
		e->off_cumulative[i] = e->cumulative[i];
	e->off_value = e->value;
	native_offsets(e, s, true);
}

struct apply_ctx {
	struct carry *c;
};

static void apply_one(struct snapshot_cumulative *s, void *ud)
{
	struct apply_ctx *ctx = ud;
	struct carry_entry *e = lookup(ctx->c, s);
	size_t i;

	if (!e)
		return;
	e->seen = ctx->c->round;
	if (!e->decided)
		decide_late(e, s);
	if (s->value) {
		if (e->n == NO_HISTOGRAM)
			*s->value += e->off_value;
		return;
	}
	if (e->n == NO_HISTOGRAM || !same_bounds(e, s))
		return;
	for (i = 0; i <= s->n; i++)
		s->cumulative[i] += e->off_cumulative[i];
	*s->sum += e->off_value;
	native_apply(e, s);
}

/* Exports a held series at its carried value. */
static int emit_held(struct snapshot *snap, const struct carry_entry *e)
{
	const char *labels[METRIC_MAX_LABELS];
	const char *p = e->key + strlen(e->key) + 1;
	uint64_t counts[65], prev = 0;
	unsigned k;
	size_t i;

	for (k = 0; k < e->desc->n_labels && k < METRIC_MAX_LABELS; k++) {
		labels[k] = p;
		p += strlen(p) + 1;
	}
	if (e->n == NO_HISTOGRAM)
		return snapshot_add(snap, e->desc, labels, e->value);
	if (e->n + 1 > sizeof(counts) / sizeof(counts[0]))
		return -E2BIG;
	for (i = 0; i <= e->n; i++) {
		counts[i] = e->cumulative[i] - prev;
		prev = e->cumulative[i];
	}
	return snapshot_add_histogram(snap, e->desc, labels, e->bounds, counts, e->n, e->value);
}

int carry_apply(struct carry *c, struct snapshot *snap, size_t mark, uint64_t now_usec)
{
	struct apply_ctx ctx = { c };
	size_t i, kept = 0;
	bool expired = false;
	int r = 0;

	if (c->n && !c->slots && reindex(c, c->n) < 0)
		return -ENOMEM; /* nothing found without an index: skip the window's offsets */
	c->round++;
	snapshot_foreach_cumulative(snap, mark, apply_one, &ctx);
	for (i = 0; i < c->n; i++) {
		struct carry_entry *e = c->entries[i];

		if (e->decided || e->seen == c->round)
			continue;
		if (e->hold_until > now_usec) {
			int k = emit_held(snap, e);

			if (k == -ENOMEM)
				r = k;
		} else {
			expired = true;
		}
	}
	if (!expired)
		return r;
	/* Not produced within its hold: the series ended with the old instance. */
	for (i = 0; i < c->n; i++) {
		struct carry_entry *e = c->entries[i];

		if (!e->decided && e->seen != c->round && e->hold_until <= now_usec)
			entry_free(e);
		else
			c->entries[kept++] = e;
	}
	c->n = kept;
	if (reindex(c, c->n) < 0) {
		free(c->slots); /* rebuilt on the next round */
		c->slots = NULL;
		c->mask = 0;
		return -ENOMEM;
	}
	return r;
}
