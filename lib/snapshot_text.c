// SPDX-License-Identifier: GPL-2.0
/* A window in the Prometheus text format 0.0.4, and every format's body:
 * rendered at seal or on its first request, gzipped beside it, trimmed once a
 * newer window is served. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <zlib.h>
#include "snapshot_internal.h"

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

/* Level 1: a third of the time of zlib's default level 6 on a 40 KB body
 * for 13 % more bytes; compressing was most of a scrape's CPU. */
#define GZIP_LEVEL 1

/* The windows in which a format (or its gzip member) was last asked for,
 * and the one before: the count of seals at the request, 0 for never. */
struct asked {
	_Atomic uint64_t last, before;
};

/* A format asked for since the seal before last, by a scraper that comes at
 * least every other window, is rendered at seal: that scraper then only
 * takes a reference. One that comes less often (Prometheus every 15 s, 1 s
 * windows) renders on its request instead: rendering and compressing at the
 * seals after each of its scrapes would be thrown away. Counted in windows,
 * not time, so that how long a window lasts does not matter. */
struct snapshot_renderer {
	atomic_uint refcount;
	pthread_mutex_t lock; /* the compressor's; windows are compressed one at a time */
	z_stream zs;
	bool zs_ready;
	_Atomic uint64_t seals;
	struct asked asked[EXPO_FORMAT__COUNT];
	struct asked gzip_asked[EXPO_FORMAT__COUNT];
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

static struct snapshot_renderer *renderer_ref(struct snapshot_renderer *r)
{
	refcount_take(&r->refcount);
	return r;
}

void snapshot_renderer_unref(struct snapshot_renderer *r)
{
	if (!r || !refcount_drop(&r->refcount))
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

/* At seal number n: asked in one of the last two windows, and before that
 * at most two windows earlier. */
static bool asked_every_window(const struct asked *a, uint64_t n)
{
	uint64_t last = atomic_load_explicit(&a->last, memory_order_relaxed);
	uint64_t before = atomic_load_explicit(&a->before, memory_order_relaxed);

	return last != 0 && last + 2 >= n && before != 0 && last - before <= 2;
}

/* Relaxed: a lost update only renders one body at seal too many or too few.
 * A second request in the same window changes nothing. */
static void note_asked(struct asked *a, uint64_t seals)
{
	uint64_t last = atomic_load_explicit(&a->last, memory_order_relaxed);

	if (last == seals)
		return;
	atomic_store_explicit(&a->before, last, memory_order_relaxed);
	atomic_store_explicit(&a->last, seals, memory_order_relaxed);
}

int snapshot_render_at_seal(struct snapshot *s, struct snapshot_renderer *renderer)
{
	uint64_t n;

	s->renderer = renderer ? renderer_ref(renderer) : snapshot_renderer_new();
	if (!s->renderer)
		return -ENOMEM;
	n = atomic_fetch_add_explicit(&s->renderer->seals, 1, memory_order_relaxed) + 1;
	for (size_t f = 0; f < EXPO_FORMAT__COUNT; f++) {
		bool gzip = asked_every_window(&s->renderer->gzip_asked[f], n);

		if (renderers[f] && (gzip || asked_every_window(&s->renderer->asked[f], n)) &&
		    render_body(s, f, gzip) < 0)
			return -ENOMEM;
	}
	return 0;
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
	note_asked(gzip ? &s->renderer->gzip_asked[f] : &s->renderer->asked[f],
		   atomic_load_explicit(&s->renderer->seals, memory_order_relaxed));
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
