// SPDX-License-Identifier: GPL-2.0
/* One window as a stream of io.prometheus.client.MetricFamily messages, each
 * behind its length as a varint (the "delimited" encoding Prometheus asks
 * for), packed by libprotobuf-c from lib/metrics.proto. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "metrics.pb-c.h"
#include "snapshot.h"
#include "snapshot_internal.h"
#include "utf8.h"

typedef Io__Prometheus__Client__MetricFamily MetricFamily;
typedef Io__Prometheus__Client__Metric Metric;
typedef Io__Prometheus__Client__LabelPair LabelPair;
typedef Io__Prometheus__Client__Gauge Gauge;
typedef Io__Prometheus__Client__Counter Counter;
typedef Io__Prometheus__Client__Histogram Histogram;
typedef Io__Prometheus__Client__Bucket Bucket;
typedef Io__Prometheus__Client__Timestamp Timestamp;
typedef Io__Prometheus__Client__BucketSpan BucketSpan;
typedef Io__Prometheus__Client__Exemplar Exemplar;

/* Everything one family's messages point at, freed once it is packed. */
struct family_scratch {
	Metric *metrics;
	Metric **metric_ptrs;
	LabelPair *pairs;
	LabelPair **pair_ptrs;
	Gauge *gauges;
	Counter *counters;
	Histogram *histograms;
	Bucket *buckets;
	Bucket **bucket_ptrs;
	char **repaired; /* label values made valid UTF-8, one per pair at most */
	size_t n_repaired;
	/* native buckets and exemplars, for the families whose flags ask */
	BucketSpan *spans;
	BucketSpan **span_ptrs;
	int64_t *deltas;
	Exemplar *exemplars;
	Timestamp *exemplar_times;
	LabelPair *exemplar_pairs;
	LabelPair **exemplar_pair_ptrs;
	size_t n_spans, n_deltas, n_exemplars, n_exemplar_pairs;
};

static void family_scratch_done(struct family_scratch *fs)
{
	for (size_t i = 0; i < fs->n_repaired; i++)
		free(fs->repaired[i]);
	free(fs->repaired);
	free(fs->metrics);
	free(fs->metric_ptrs);
	free(fs->pairs);
	free(fs->pair_ptrs);
	free(fs->gauges);
	free(fs->counters);
	free(fs->histograms);
	free(fs->buckets);
	free(fs->bucket_ptrs);
	free(fs->spans);
	free(fs->span_ptrs);
	free(fs->deltas);
	free(fs->exemplars);
	free(fs->exemplar_times);
	free(fs->exemplar_pairs);
	free(fs->exemplar_pair_ptrs);
}

/* Protobuf strings are UTF-8, and the text repairs a bad byte into U+FFFD
 * (lib/expo.c): the same here, so that all formats carry the same label. */
static char *valid_utf8(struct family_scratch *fs, const char *value)
{
	const unsigned char *s = (const unsigned char *)value;
	size_t n, len = 0;
	char *copy;

	for (s = (const unsigned char *)value; *s; s += n) {
		n = utf8_valid_len(s);
		if (n == 0)
			break;
	}
	if (!*s)
		return (char *)value;
	copy = malloc(strlen(value) * 3 + 1);
	if (!copy)
		return NULL;
	for (s = (const unsigned char *)value; *s;) {
		n = utf8_valid_len(s);
		if (n == 0) {
			memcpy(copy + len, "\xef\xbf\xbd", 3);
			len += 3;
			s++;
			continue;
		}
		memcpy(copy + len, s, n);
		len += n;
		s += n;
	}
	copy[len] = '\0';
	fs->repaired[fs->n_repaired++] = copy;
	return copy;
}

static bool shows_native(const struct metric_desc *d, const struct histogram_data *h)
{
	return (d->flags & METRIC_FLAG_NATIVE_HISTOGRAM) && h->extra && h->extra->has_native;
}

static bool shows_exemplars(const struct metric_desc *d, const struct histogram_data *h)
{
	return (d->flags & METRIC_FLAG_EXEMPLARS) && h->extra && h->extra->n_exemplars;
}

static int family_scratch_alloc(struct family_scratch *fs, const struct family *f)
{
	size_t n = f->n, n_pairs = f->n * f->desc->n_labels, n_buckets = 0, n_native = 0, n_ex = 0, n_ex_pairs = 0;

	for (size_t i = 0; i < f->n; i++) {
		const struct histogram_data *h = f->samples[i].hist;

		if (!h)
			continue;
		n_buckets += h->n;
		if (shows_native(f->desc, h))
			n_native += h->extra->n_native + 1; /* at most a span per bucket, or the no-op span */
		if (shows_exemplars(f->desc, h)) {
			const struct exemplar_record *r = histogram_extra_exemplars(h->extra);

			for (size_t k = 0; k < h->extra->n_exemplars; k++, r = exemplar_record_next(r))
				n_ex_pairs += r->n_labels;
			n_ex += h->extra->n_exemplars;
		}
	}
	if (n_native) {
		fs->spans = calloc(n_native, sizeof(*fs->spans));
		fs->span_ptrs = calloc(n_native, sizeof(*fs->span_ptrs));
		fs->deltas = calloc(n_native, sizeof(*fs->deltas));
		if (!fs->spans || !fs->span_ptrs || !fs->deltas)
			return -ENOMEM;
	}
	if (n_ex) {
		fs->exemplars = calloc(n_ex, sizeof(*fs->exemplars));
		fs->exemplar_times = calloc(n_ex, sizeof(*fs->exemplar_times));
		fs->exemplar_pairs = calloc(n_ex_pairs ? n_ex_pairs : 1, sizeof(*fs->exemplar_pairs));
		fs->exemplar_pair_ptrs = calloc(n_ex_pairs ? n_ex_pairs : 1, sizeof(*fs->exemplar_pair_ptrs));
		if (!fs->exemplars || !fs->exemplar_times || !fs->exemplar_pairs || !fs->exemplar_pair_ptrs)
			return -ENOMEM;
	}
	fs->metrics = calloc(n, sizeof(*fs->metrics));
	fs->metric_ptrs = calloc(n, sizeof(*fs->metric_ptrs));
	fs->pairs = calloc(n_pairs ? n_pairs : 1, sizeof(*fs->pairs));
	fs->pair_ptrs = calloc(n_pairs ? n_pairs : 1, sizeof(*fs->pair_ptrs));
	fs->repaired = calloc(n_pairs + n_ex_pairs ? n_pairs + n_ex_pairs : 1, sizeof(*fs->repaired));
	fs->gauges = calloc(n, sizeof(*fs->gauges));
	fs->counters = calloc(n, sizeof(*fs->counters));
	fs->histograms = calloc(n, sizeof(*fs->histograms));
	fs->buckets = calloc(n_buckets ? n_buckets : 1, sizeof(*fs->buckets));
	fs->bucket_ptrs = calloc(n_buckets ? n_buckets : 1, sizeof(*fs->bucket_ptrs));
	if (!fs->metrics || !fs->metric_ptrs || !fs->pairs || !fs->pair_ptrs || !fs->repaired || !fs->gauges ||
	    !fs->counters || !fs->histograms || !fs->buckets || !fs->bucket_ptrs)
		return -ENOMEM;
	return 0;
}

static void put_varint(struct strbuf *sb, uint64_t v)
{
	char buf[10];
	size_t n = 0;

	do {
		buf[n] = (char)(v & 0x7f);
		v >>= 7;
		if (v)
			buf[n] |= (char)0x80;
		n++;
	} while (v);
	strbuf_append(sb, buf, n);
}

/* Spans of consecutive non-empty buckets, each offset counting the empty ones
 * skipped; deltas from one populated bucket to the next, the first from 0. */
static void set_native(Histogram *ph, const struct histogram_extra *x, struct family_scratch *fs)
{
	BucketSpan **spans = &fs->span_ptrs[fs->n_spans];
	int64_t *deltas = &fs->deltas[fs->n_deltas], prev = 0;
	size_t n_spans = 0, n_deltas = 0, gap = 0;
	bool open = false;

	ph->has_schema = ph->has_zero_threshold = ph->has_zero_count = true;
	ph->schema = x->schema;
	ph->zero_threshold = x->zero_threshold;
	ph->zero_count = x->native[x->n_native];
	for (size_t i = 0; i < x->n_native; i++) {
		BucketSpan *span;

		if (x->native[i] == 0) {
			gap++;
			open = false;
			continue;
		}
		if (!open) {
			span = &fs->spans[fs->n_spans + n_spans];
			io__prometheus__client__bucket_span__init(span);
			span->has_offset = span->has_length = true;
			span->offset = (int32_t)(n_spans == 0 ? x->first_index + (int64_t)gap : (int64_t)gap);
			spans[n_spans++] = span;
			gap = 0;
			open = true;
		}
		spans[n_spans - 1]->length++;
		deltas[n_deltas++] = (int64_t)x->native[i] - prev;
		prev = (int64_t)x->native[i];
	}
	if (n_spans == 0) {
		/* No observation yet: a no-op span still says "native". */
		BucketSpan *span = &fs->spans[fs->n_spans];

		io__prometheus__client__bucket_span__init(span);
		span->has_offset = span->has_length = true;
		spans[n_spans++] = span;
	}
	ph->n_positive_span = n_spans;
	ph->positive_span = spans;
	ph->n_positive_delta = n_deltas;
	ph->positive_delta = deltas;
	fs->n_spans += n_spans;
	fs->n_deltas += n_deltas;
}

static int set_exemplar(Exemplar *e, const struct exemplar_record *r, struct family_scratch *fs)
{
	Timestamp *ts = &fs->exemplar_times[fs->n_exemplars];
	const char *t = r->text;

	io__prometheus__client__exemplar__init(e);
	io__prometheus__client__timestamp__init(ts);
	e->label = &fs->exemplar_pair_ptrs[fs->n_exemplar_pairs];
	e->n_label = r->n_labels;
	for (unsigned k = 0; k < r->n_labels; k++) {
		LabelPair *lp = &fs->exemplar_pairs[fs->n_exemplar_pairs];

		io__prometheus__client__label_pair__init(lp);
		lp->name = (char *)t;
		t += strlen(t) + 1;
		lp->value = valid_utf8(fs, t);
		if (!lp->value)
			return -ENOMEM;
		t += strlen(t) + 1;
		fs->exemplar_pair_ptrs[fs->n_exemplar_pairs++] = lp;
	}
	e->has_value = true;
	e->value = r->value;
	ts->has_seconds = ts->has_nanos = true;
	ts->seconds = (int64_t)floor(r->timestamp_seconds);
	ts->nanos = (int32_t)((r->timestamp_seconds - floor(r->timestamp_seconds)) * 1e9);
	e->timestamp = ts;
	fs->n_exemplars++;
	return 0;
}

static void set_histogram(Histogram *ph, const struct histogram_data *h, Bucket **bucket_ptrs, Bucket *buckets)
{
	io__prometheus__client__histogram__init(ph);
	ph->has_sample_count = true;
	ph->sample_count = h->cumulative[h->n];
	ph->has_sample_sum = true;
	ph->sample_sum = h->sum;
	/* The finite buckets: Prometheus adds +Inf from the count. */
	for (size_t b = 0; b < h->n; b++) {
		io__prometheus__client__bucket__init(&buckets[b]);
		buckets[b].has_cumulative_count = true;
		buckets[b].cumulative_count = h->cumulative[b];
		buckets[b].has_upper_bound = true;
		buckets[b].upper_bound = h->bounds[b];
		bucket_ptrs[b] = &buckets[b];
	}
	ph->n_bucket = h->n;
	ph->bucket = bucket_ptrs;
}

static int put_family(struct strbuf *sb, const struct family *f)
{
	_cleanup_(family_scratch_done) struct family_scratch fs = { 0 };
	const struct metric_desc *d = f->desc;
	MetricFamily mf = IO__PROMETHEUS__CLIENT__METRIC_FAMILY__INIT;
	Timestamp created = IO__PROMETHEUS__CLIENT__TIMESTAMP__INIT;
	bool has_created = f->created_seconds > 0 && d->type != METRIC_GAUGE;
	size_t pair = 0, bucket = 0, size;
	int r;

	r = family_scratch_alloc(&fs, f);
	if (r < 0)
		return r;
	if (has_created) {
		created.has_seconds = created.has_nanos = true;
		created.seconds = (int64_t)floor(f->created_seconds);
		created.nanos = (int32_t)((f->created_seconds - floor(f->created_seconds)) * 1e9);
	}
	mf.name = (char *)d->name;
	mf.help = (char *)d->help;
	mf.has_type = true;
	mf.type = d->type == METRIC_COUNTER	? IO__PROMETHEUS__CLIENT__METRIC_TYPE__COUNTER
		  : d->type == METRIC_HISTOGRAM ? IO__PROMETHEUS__CLIENT__METRIC_TYPE__HISTOGRAM
						: IO__PROMETHEUS__CLIENT__METRIC_TYPE__GAUGE;
	for (size_t i = 0; i < f->n; i++) {
		const struct sample *smp = &f->samples[i];
		Metric *m = &fs.metrics[i];

		io__prometheus__client__metric__init(m);
		m->label = &fs.pair_ptrs[pair];
		m->n_label = d->n_labels;
		for (unsigned k = 0; k < d->n_labels; k++, pair++) {
			LabelPair *lp = &fs.pairs[pair];

			io__prometheus__client__label_pair__init(lp);
			lp->name = (char *)d->labels[k];
			lp->value = valid_utf8(&fs, smp->label_values[k]);
			if (!lp->value)
				return -ENOMEM;
			fs.pair_ptrs[pair] = lp;
		}
		if (smp->hist) {
			set_histogram(&fs.histograms[i], smp->hist, &fs.bucket_ptrs[bucket], &fs.buckets[bucket]);
			if (shows_native(d, smp->hist))
				set_native(&fs.histograms[i], smp->hist->extra, &fs);
			if (shows_exemplars(d, smp->hist)) {
				const struct exemplar_record *ex = histogram_extra_exemplars(smp->hist->extra);

				/* +Inf's exemplar has no bucket of its own: Prometheus adds it. */
				for (size_t k = 0; k < smp->hist->extra->n_exemplars; k++, ex = exemplar_record_next(ex)) {
					if (ex->bucket >= smp->hist->n)
						continue;
					r = set_exemplar(&fs.exemplars[fs.n_exemplars], ex, &fs);
					if (r < 0)
						return r;
					fs.buckets[bucket + ex->bucket].exemplar = &fs.exemplars[fs.n_exemplars - 1];
				}
			}
			bucket += smp->hist->n;
			if (has_created)
				fs.histograms[i].created_timestamp = &created;
			m->histogram = &fs.histograms[i];
		} else if (d->type == METRIC_COUNTER) {
			io__prometheus__client__counter__init(&fs.counters[i]);
			fs.counters[i].has_value = true;
			fs.counters[i].value = smp->value;
			if (has_created)
				fs.counters[i].created_timestamp = &created;
			m->counter = &fs.counters[i];
		} else {
			io__prometheus__client__gauge__init(&fs.gauges[i]);
			fs.gauges[i].has_value = true;
			fs.gauges[i].value = smp->value;
			m->gauge = &fs.gauges[i];
		}
		fs.metric_ptrs[i] = m;
	}
	mf.n_metric = f->n;
	mf.metric = fs.metric_ptrs;
	size = io__prometheus__client__metric_family__get_packed_size(&mf);
	put_varint(sb, size);
	if (!strbuf_reserve(sb, size))
		return -ENOMEM;
	sb->len += io__prometheus__client__metric_family__pack(&mf, (uint8_t *)sb->data + sb->len);
	sb->data[sb->len] = '\0';
	return 0;
}

int snapshot_render_protobuf(const struct snapshot *s, struct strbuf *sb)
{
	strbuf_reserve(sb, 4096 + s->n_series * 64);
	for (size_t i = 0; i < s->n_families; i++) {
		if (s->families[i].n == 0)
			continue;
		if (put_family(sb, &s->families[i]) < 0)
			return -ENOMEM;
	}
	return strbuf_failed(sb) ? -ENOMEM : 0;
}
