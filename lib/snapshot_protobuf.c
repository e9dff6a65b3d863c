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

static int family_scratch_alloc(struct family_scratch *fs, const struct family *f)
{
	size_t n = f->n, n_pairs = f->n * f->desc->n_labels, n_buckets = 0;

	for (size_t i = 0; i < f->n; i++)
		if (f->samples[i].hist)
			n_buckets += f->samples[i].hist->n;
	fs->metrics = calloc(n, sizeof(*fs->metrics));
	fs->metric_ptrs = calloc(n, sizeof(*fs->metric_ptrs));
	fs->pairs = calloc(n_pairs ? n_pairs : 1, sizeof(*fs->pairs));
	fs->pair_ptrs = calloc(n_pairs ? n_pairs : 1, sizeof(*fs->pair_ptrs));
	fs->repaired = calloc(n_pairs ? n_pairs : 1, sizeof(*fs->repaired));
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
