/* SPDX-License-Identifier: GPL-2.0 */
/* The three exposition formats of one fixed window, byte for byte against
 * tests/fixtures/formats/ (written by hand for the text formats and checked
 * with promtool; the protobuf one decoded with protoc --decode_raw). */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "fixture.h"
#include "metrics.pb-c.h"
#include "snapshot.h"
#include "strbuf.h"

static const struct metric_desc avail_bytes = {
	.name = "memwatch_test_available_bytes",
	.help = "Available \"now\", a \\ and a\nnewline.",
	.type = METRIC_GAUGE,
	.unit = METRIC_UNIT_BYTES,
};

static const struct metric_desc kills_total = {
	.name = "memwatch_test_kills_total",
	.help = "Kills.",
	.type = METRIC_COUNTER,
};

static const struct metric_desc cgroup_seconds_total = {
	.name = "memwatch_test_cgroup_seconds_total",
	.help = "Stall time by cgroup.",
	.type = METRIC_COUNTER,
	.unit = METRIC_UNIT_SECONDS,
	.n_labels = 1,
	.labels = { "cgroup" },
};

static const double bounds[] = { 0.001, 0.01, 0.1 };
static const char *const le[] = { "0.001", "0.01", "0.1" };
static const struct metric_desc stall_seconds = {
	.name = "memwatch_test_stall_seconds",
	.help = "Stalls.",
	.type = METRIC_HISTOGRAM,
	.unit = METRIC_UNIT_SECONDS,
	.n_bounds = 3,
	.bounds = bounds,
	.le = le,
	.flags = METRIC_FLAG_NATIVE_HISTOGRAM | METRIC_FLAG_EXEMPLARS,
};

/* The same 8 observations as the classic buckets { 1, 0, 5, 2 }: one in the
 * zero bucket, three in native bucket -40, two in -38 (both within 0.01 to
 * 0.1 s) and two in -8 (0.5 s). */
static const uint64_t native_counts[] = { 3, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
					  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2 };
static const struct histogram_native stall_native = {
	.schema = 3,
	.first_index = -40,
	.zero_threshold = 0x1p-20,
	.zero_count = 1,
	.n = sizeof(native_counts) / sizeof(native_counts[0]),
	.counts = native_counts,
};
static const char *const exemplar_names[] = { "pid", "comm", "cgroup" };
/* 3 + 2 + 4 + 2 + 6 + 111 = 128 characters: fits; one more does not. */
#define CGROUP_111 "/long/" "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\xc3\xa9"
static const struct histogram_exemplar stall_exemplars[] = {
	{ .bucket = 0, .n_labels = 3, .label_names = exemplar_names,
	  .label_values = (const char *const[]){ "42", "dd", CGROUP_111 "b" }, .value = 1e-6, .timestamp_seconds = 1 },
	{ .bucket = 2, .n_labels = 3, .label_names = exemplar_names,
	  .label_values = (const char *const[]){ "42", "dd", "/x\"y" }, .value = 0.05, .timestamp_seconds = 1700000001.5 },
	{ .bucket = 3, .n_labels = 3, .label_names = exemplar_names,
	  .label_values = (const char *const[]){ "43", "\xff\xff", CGROUP_111 }, .value = 0.5, .timestamp_seconds = 1700000002.125 },
};

static const struct metric_desc ratio = {
	.name = "memwatch_test_ratio",
	.help = "A ratio, by zone.",
	.type = METRIC_GAUGE,
	.unit = METRIC_UNIT_RATIO,
	.n_labels = 2,
	.labels = { "zone", "node" },
};

#define CREATED 1700000000.25

static struct snapshot *fixed_window_with(struct snapshot_renderer *renderer)
{
	struct snapshot_window w = { .seq = 7 };
	struct snapshot *s = snapshot_new(&w, 100);
	size_t mark;

	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(snapshot_add(s, &avail_bytes, NULL, 123456789), 0);
	mark = snapshot_mark(s);
	ck_assert_int_eq(snapshot_add(s, &kills_total, NULL, 3), 0);
	ck_assert_int_eq(snapshot_add(s, &cgroup_seconds_total, (const char *const[]){ "/a\"b\\c\nd" }, 0.5), 0);
	ck_assert_int_eq(snapshot_add(s, &cgroup_seconds_total, (const char *const[]){ "other" }, 1e-7), 0);
	ck_assert_int_eq(snapshot_add_histogram_full(s, &stall_seconds, NULL, (const uint64_t[]){ 1, 0, 5, 2 }, 4, 0.75,
						     &stall_native, stall_exemplars, 3),
			 0);
	snapshot_set_created(s, mark, CREATED);
	ck_assert_int_eq(snapshot_add(s, &ratio, (const char *const[]){ "Normal", "0" }, NAN), 0);
	ck_assert_int_eq(snapshot_add(s, &ratio, (const char *const[]){ "DMA", "0" }, INFINITY), 0);
	ck_assert_int_eq(snapshot_seal_with(s, renderer), 0);
	return s;
}

static struct snapshot *fixed_window(void)
{
	return fixed_window_with(NULL);
}

static void assert_gunzips_to(const void *gz, size_t gz_len, const char *body, size_t len)
{
	unsigned char *plain = malloc(len + 1);
	z_stream zs = { 0 };

	ck_assert_ptr_nonnull(gz);
	ck_assert_ptr_nonnull(plain);
	ck_assert_int_eq(inflateInit2(&zs, 15 + 16), Z_OK);
	zs.next_in = (Bytef *)gz;
	zs.avail_in = (uInt)gz_len;
	zs.next_out = plain;
	zs.avail_out = (uInt)(len + 1);
	ck_assert_int_eq(inflate(&zs, Z_FINISH), Z_STREAM_END);
	ck_assert_uint_eq(zs.total_out, len);
	ck_assert(memcmp(plain, body, len) == 0);
	inflateEnd(&zs);
	free(plain);
}

static void check_body(enum expo_format f, const char *fixture)
{
	struct snapshot *s = fixed_window();
	size_t want_len, len, gz_len;
	char *want = fixture_read("formats", fixture, &want_len);
	const char *body = snapshot_body(s, f, false, &len);
	const unsigned char *gz = snapshot_body(s, f, true, &gz_len);

	ck_assert_ptr_nonnull(body);
	/* MEMWATCH_WRITE_FIXTURE=1 writes the binary one anew, to be checked by hand. */
	if (getenv("MEMWATCH_WRITE_FIXTURE") && f == EXPO_FORMAT_PROTOBUF) {
		FILE *out = fopen(FIXTURES_DIR "/formats/window.pb", "wb");

		ck_assert_ptr_nonnull(out);
		ck_assert_uint_eq(fwrite(body, 1, len, out), len);
		fclose(out);
	}
	ck_assert_msg(len == want_len && memcmp(body, want, len) == 0, "%s: got %zu bytes:\n%.*s", fixture, len,
		      (int)len, body);
	/* Its gzip copy holds the same bytes. */
	assert_gunzips_to(gz, gz_len, body, len);
	free(want);
	snapshot_unref(s);
}

START_TEST(test_text)
{
	check_body(EXPO_FORMAT_TEXT, "window.prom");
}
END_TEST

START_TEST(test_openmetrics)
{
	check_body(EXPO_FORMAT_OPENMETRICS, "window.om");
}
END_TEST

START_TEST(test_protobuf)
{
	check_body(EXPO_FORMAT_PROTOBUF, "window.pb");
}
END_TEST

/* The delimited stream read back by libprotobuf-c: lengths, then families. */
static Io__Prometheus__Client__MetricFamily *next_family(const uint8_t **p, const uint8_t *end)
{
	uint64_t len = 0;
	unsigned shift = 0;

	ck_assert(*p < end);
	do {
		ck_assert(*p < end);
		len |= (uint64_t)(**p & 0x7f) << shift;
		shift += 7;
	} while (*(*p)++ & 0x80);
	ck_assert_uint_le(len, (uint64_t)(end - *p));
	*p += len;
	return io__prometheus__client__metric_family__unpack(NULL, len, *p - len);
}

START_TEST(test_protobuf_decoded)
{
	struct snapshot *s = fixed_window();
	size_t len;
	const uint8_t *p = snapshot_body(s, EXPO_FORMAT_PROTOBUF, false, &len), *end = p + len;
	Io__Prometheus__Client__MetricFamily *mf;
	Io__Prometheus__Client__Histogram *h;

	mf = next_family(&p, end);
	ck_assert_ptr_nonnull(mf);
	ck_assert_str_eq(mf->name, "memwatch_test_available_bytes");
	ck_assert_str_eq(mf->help, avail_bytes.help);
	ck_assert_int_eq(mf->type, IO__PROMETHEUS__CLIENT__METRIC_TYPE__GAUGE);
	ck_assert_uint_eq(mf->n_metric, 1);
	ck_assert(mf->metric[0]->gauge && mf->metric[0]->gauge->value == 123456789);
	io__prometheus__client__metric_family__free_unpacked(mf, NULL);

	mf = next_family(&p, end);
	ck_assert_str_eq(mf->name, "memwatch_test_kills_total");
	ck_assert_int_eq(mf->type, IO__PROMETHEUS__CLIENT__METRIC_TYPE__COUNTER);
	ck_assert(mf->metric[0]->counter->value == 3);
	ck_assert_int_eq(mf->metric[0]->counter->created_timestamp->seconds, 1700000000);
	ck_assert_int_eq(mf->metric[0]->counter->created_timestamp->nanos, 250000000);
	io__prometheus__client__metric_family__free_unpacked(mf, NULL);

	mf = next_family(&p, end);
	ck_assert_uint_eq(mf->n_metric, 2);
	ck_assert_uint_eq(mf->metric[0]->n_label, 1);
	ck_assert_str_eq(mf->metric[0]->label[0]->name, "cgroup");
	ck_assert_str_eq(mf->metric[0]->label[0]->value, "/a\"b\\c\nd");
	ck_assert_ptr_null(mf->metric[0]->counter->created_timestamp);
	io__prometheus__client__metric_family__free_unpacked(mf, NULL);

	mf = next_family(&p, end);
	ck_assert_int_eq(mf->type, IO__PROMETHEUS__CLIENT__METRIC_TYPE__HISTOGRAM);
	h = mf->metric[0]->histogram;
	ck_assert_uint_eq(h->sample_count, 8);
	ck_assert(h->sample_sum == 0.75);
	ck_assert_uint_eq(h->n_bucket, 3);
	ck_assert(h->bucket[0]->upper_bound == 0.001 && h->bucket[0]->cumulative_count == 1);
	ck_assert(h->bucket[2]->upper_bound == 0.1 && h->bucket[2]->cumulative_count == 6);
	/* Native: schema 3, the zero bucket, spans over the populated buckets
	 * (-40; then -38, one empty bucket on; then -8) and their deltas. */
	ck_assert(h->has_schema && h->schema == 3);
	ck_assert(h->zero_threshold == 0x1p-20);
	ck_assert_uint_eq(h->zero_count, 1);
	ck_assert_uint_eq(h->n_positive_span, 3);
	ck_assert_int_eq(h->positive_span[0]->offset, -40);
	ck_assert_uint_eq(h->positive_span[0]->length, 1);
	ck_assert_int_eq(h->positive_span[1]->offset, 1);
	ck_assert_int_eq(h->positive_span[2]->offset, 29);
	ck_assert_uint_eq(h->n_positive_delta, 3);
	ck_assert_int_eq(h->positive_delta[0], 3);
	ck_assert_int_eq(h->positive_delta[1], -1);
	ck_assert_int_eq(h->positive_delta[2], 0);
	ck_assert_uint_eq(h->n_negative_span, 0);
	/* Exemplars: the one of 129 characters is left out, +Inf has no bucket here. */
	ck_assert_ptr_null(h->bucket[0]->exemplar);
	ck_assert_ptr_null(h->bucket[1]->exemplar);
	ck_assert_ptr_nonnull(h->bucket[2]->exemplar);
	ck_assert_uint_eq(h->bucket[2]->exemplar->n_label, 3);
	ck_assert_str_eq(h->bucket[2]->exemplar->label[0]->name, "pid");
	ck_assert_str_eq(h->bucket[2]->exemplar->label[0]->value, "42");
	ck_assert_str_eq(h->bucket[2]->exemplar->label[1]->value, "dd");
	ck_assert_str_eq(h->bucket[2]->exemplar->label[2]->value, "/x\"y");
	ck_assert(h->bucket[2]->exemplar->value == 0.05);
	ck_assert_int_eq(h->bucket[2]->exemplar->timestamp->seconds, 1700000001);
	ck_assert_int_eq(h->bucket[2]->exemplar->timestamp->nanos, 500000000);
	io__prometheus__client__metric_family__free_unpacked(mf, NULL);

	mf = next_family(&p, end);
	ck_assert_str_eq(mf->name, "memwatch_test_ratio");
	ck_assert(isnan(mf->metric[0]->gauge->value) && isinf(mf->metric[1]->gauge->value));
	io__prometheus__client__metric_family__free_unpacked(mf, NULL);
	ck_assert_ptr_eq(p, end);
	snapshot_unref(s);
}
END_TEST

/* Trimmed, a window has no body in any format. */
START_TEST(test_trimmed)
{
	struct snapshot *s = fixed_window();
	void *blocks[SNAPSHOT_TRIM_BLOCKS];
	size_t len = 1, n;

	/* Every format had been asked for before. */
	for (int f = 0; f < EXPO_FORMAT__COUNT; f++)
		ck_assert_ptr_nonnull(snapshot_body(s, f, false, NULL));
	n = snapshot_trim(s, blocks);
	ck_assert_uint_eq(n, EXPO_FORMAT__COUNT);
	for (int f = 0; f < EXPO_FORMAT__COUNT; f++) {
		ck_assert_ptr_null(snapshot_body(s, f, false, &len));
		ck_assert_uint_eq(len, 0);
		ck_assert_ptr_null(snapshot_body(s, f, true, &len));
	}
	while (n)
		free(blocks[--n]);
	snapshot_unref(s);
}
END_TEST

static char *rendered_by(int (*render)(const struct snapshot *, struct strbuf *), const struct snapshot *s,
			 size_t *len)
{
	struct strbuf sb;

	strbuf_init(&sb);
	ck_assert_int_eq(render(s, &sb), 0);
	return strbuf_steal(&sb, len);
}

/* A window nobody asked for is sealed without a body; a format waits for its
 * first request, which renders it once: later requests get the same bytes at
 * the same place. */
START_TEST(test_rendered_on_first_request)
{
	struct snapshot *s = fixed_window();
	size_t len, again_len, want_len;
	const char *body, *again;
	char *want;

	ck_assert(!snapshot_rendered(s, EXPO_FORMAT_TEXT));
	ck_assert(!snapshot_rendered(s, EXPO_FORMAT_OPENMETRICS));
	ck_assert(!snapshot_rendered(s, EXPO_FORMAT_PROTOBUF));
	body = snapshot_body(s, EXPO_FORMAT_OPENMETRICS, true, &len);
	ck_assert_ptr_nonnull(body);
	ck_assert(snapshot_rendered(s, EXPO_FORMAT_OPENMETRICS));
	ck_assert(!snapshot_rendered(s, EXPO_FORMAT_PROTOBUF));
	again = snapshot_body(s, EXPO_FORMAT_OPENMETRICS, true, &again_len);
	ck_assert_ptr_eq(again, body);
	ck_assert_uint_eq(again_len, len);
	body = snapshot_body(s, EXPO_FORMAT_OPENMETRICS, false, &len);
	want = rendered_by(snapshot_render_openmetrics, s, &want_len);
	ck_assert_uint_eq(len, want_len);
	ck_assert_mem_eq(body, want, len);
	free(want);
	snapshot_unref(s);
}
END_TEST

static size_t trim_and_free(struct snapshot *s)
{
	void *blocks[SNAPSHOT_TRIM_BLOCKS];
	size_t n = snapshot_trim(s, blocks);

	for (size_t i = 0; i < n; i++)
		free(blocks[i]);
	return n;
}

/* A body asked for in two windows in a row (or every other window) is
 * rendered at the next seals, by the renderer the windows share, with its
 * gzip member in the same block only if that was asked for; one asked for
 * once (a scraper every 15 windows), or nobody asked for, is not. Two
 * windows later without a request, nothing is rendered at seal again. */
START_TEST(test_asked_format_rendered_at_seal)
{
	struct snapshot_renderer *r = snapshot_renderer_new();
	struct snapshot *w[9];
	size_t len;

	ck_assert_ptr_nonnull(r);
	w[0] = fixed_window_with(r);
	ck_assert(!snapshot_rendered(w[0], EXPO_FORMAT_PROTOBUF));
	ck_assert_ptr_nonnull(snapshot_body(w[0], EXPO_FORMAT_PROTOBUF, false, NULL));
	ck_assert_ptr_nonnull(snapshot_body(w[0], EXPO_FORMAT_TEXT, true, NULL));
	/* Asked once: rendered on request only. A second request in the same
	 * window is not a second window. */
	ck_assert_ptr_nonnull(snapshot_body(w[0], EXPO_FORMAT_PROTOBUF, false, NULL));
	w[1] = fixed_window_with(r);
	ck_assert(!snapshot_rendered(w[1], EXPO_FORMAT_PROTOBUF));
	ck_assert(!snapshot_rendered(w[1], EXPO_FORMAT_TEXT));
	ck_assert_ptr_nonnull(snapshot_body(w[1], EXPO_FORMAT_PROTOBUF, false, NULL));
	ck_assert_ptr_nonnull(snapshot_body(w[1], EXPO_FORMAT_TEXT, true, NULL));
	/* Asked in two windows in a row. */
	w[2] = fixed_window_with(r);
	ck_assert(snapshot_rendered(w[2], EXPO_FORMAT_PROTOBUF));
	ck_assert(snapshot_rendered(w[2], EXPO_FORMAT_TEXT));
	ck_assert(!snapshot_rendered(w[2], EXPO_FORMAT_OPENMETRICS));
	/* Protobuf plain (one block), the text with its gzip member (one block). */
	ck_assert_ptr_nonnull(snapshot_body(w[2], EXPO_FORMAT_TEXT, true, &len));
	ck_assert_uint_gt(len, 0);
	ck_assert_uint_eq(trim_and_free(w[2]), 2);
	/* The protobuf was last asked for in w[1]: one window ago, then two. */
	w[3] = fixed_window_with(r);
	ck_assert(snapshot_rendered(w[3], EXPO_FORMAT_PROTOBUF));
	w[4] = fixed_window_with(r);
	ck_assert(!snapshot_rendered(w[4], EXPO_FORMAT_PROTOBUF));
	/* The text was asked for in w[2]: two windows ago. */
	ck_assert(snapshot_rendered(w[4], EXPO_FORMAT_TEXT));
	w[5] = fixed_window_with(r);
	ck_assert(!snapshot_rendered(w[5], EXPO_FORMAT_TEXT));
	/* Every third window: too rare to render for. */
	ck_assert_ptr_nonnull(snapshot_body(w[5], EXPO_FORMAT_OPENMETRICS, false, NULL));
	w[6] = fixed_window_with(r);
	w[7] = fixed_window_with(r);
	w[8] = fixed_window_with(r);
	ck_assert_ptr_nonnull(snapshot_body(w[8], EXPO_FORMAT_OPENMETRICS, false, NULL));
	snapshot_unref(w[6]);
	w[6] = fixed_window_with(r);
	ck_assert(!snapshot_rendered(w[6], EXPO_FORMAT_OPENMETRICS));
	for (size_t i = 0; i < 9; i++)
		snapshot_unref(w[i]);
	snapshot_renderer_unref(r);
}
END_TEST

/* A gzip member asked for after its body was served plain is compressed
 * then, in a block of its own, and decompresses to that body. */
START_TEST(test_gzip_after_plain)
{
	struct snapshot *s = fixed_window();
	size_t len, gz_len;
	const char *body = snapshot_body(s, EXPO_FORMAT_TEXT, false, &len);
	const void *gz, *again;

	ck_assert_ptr_nonnull(body);
	gz = snapshot_body(s, EXPO_FORMAT_TEXT, true, &gz_len);
	ck_assert_ptr_nonnull(gz);
	again = snapshot_body(s, EXPO_FORMAT_TEXT, true, NULL);
	ck_assert_ptr_eq(again, gz);
	ck_assert_ptr_eq(snapshot_body(s, EXPO_FORMAT_TEXT, false, NULL), body);
	assert_gunzips_to(gz, gz_len, body, len);
	ck_assert_uint_eq(trim_and_free(s), 2);
	snapshot_unref(s);
}
END_TEST

#define RACERS 8

struct racer {
	struct snapshot *s;
	const void *body;
	size_t len;
};

static void *first_request(void *arg)
{
	struct racer *racer = arg;

	racer->body = snapshot_body(racer->s, EXPO_FORMAT_PROTOBUF, true, &racer->len);
	return NULL;
}

/* Scrapes arriving together for a format not yet rendered share one render. */
START_TEST(test_concurrent_first_requests)
{
	struct snapshot *s = fixed_window();
	struct racer racers[RACERS];
	pthread_t threads[RACERS];
	size_t i;

	for (i = 0; i < RACERS; i++) {
		racers[i] = (struct racer){ .s = snapshot_ref(s) };
		ck_assert_int_eq(pthread_create(&threads[i], NULL, first_request, &racers[i]), 0);
	}
	for (i = 0; i < RACERS; i++) {
		ck_assert_int_eq(pthread_join(threads[i], NULL), 0);
		ck_assert_ptr_nonnull(racers[i].body);
		ck_assert_ptr_eq(racers[i].body, racers[0].body);
		ck_assert_uint_eq(racers[i].len, racers[0].len);
		snapshot_unref(racers[i].s);
	}
	snapshot_unref(s);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("formats");
	TCase *tc = tcase_create("fixed window");

	tcase_add_test(tc, test_text);
	tcase_add_test(tc, test_openmetrics);
	tcase_add_test(tc, test_protobuf);
	tcase_add_test(tc, test_protobuf_decoded);
	tcase_add_test(tc, test_trimmed);
	tcase_add_test(tc, test_rendered_on_first_request);
	tcase_add_test(tc, test_asked_format_rendered_at_seal);
	tcase_add_test(tc, test_gzip_after_plain);
	tcase_add_test(tc, test_concurrent_first_requests);
	suite_add_tcase(s, tc);
	return fixture_run_suite(s);
}
