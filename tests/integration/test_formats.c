/* SPDX-License-Identifier: GPL-2.0 */
/* /metrics in each exposition format, chosen by the Accept header the way a
 * real client sends it: the Content-Type names the format, the body is that
 * format (Prometheus itself parses it in the ops suite), gzip works for each. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "helpers.h"
#include "metrics.pb-c.h"

#define CONF_BASIC CONF_DIR "/basic.conf"
#define TEXT_TYPE "text/plain; version=0.0.4; charset=utf-8"
#define OM_TYPE "application/openmetrics-text; version=1.0.0; charset=utf-8"
#define PB_TYPE "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited"
#define PB_RANGE "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited"

/* What Prometheus 2.42 sends, without and with --enable-feature=native-histograms. */
#define PROMETHEUS_ACCEPT                                                                         \
	"application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75," \
	"text/plain;version=0.0.4;q=0.5,*/*;q=0.1"

#define PROMETHEUS_NATIVE_ACCEPT                                                                  \
	PB_RANGE ",application/openmetrics-text;version=1.0.0;q=0.8,"                                    \
	"application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"

static void teardown(void)
{
	ck_assert_int_eq(mw_cleanup_all(), 0);
}

static char *gunzip(const char *in, size_t len, size_t *out_len)
{
	size_t cap = 1 << 20;
	char *out = malloc(cap);
	z_stream zs = { 0 };
	int r;

	ck_assert_ptr_nonnull(out);
	ck_assert_int_eq(inflateInit2(&zs, 15 + 16), Z_OK);
	zs.next_in = (Bytef *)in;
	zs.avail_in = (uInt)len;
	zs.next_out = (Bytef *)out;
	zs.avail_out = (uInt)cap - 1;
	r = inflate(&zs, Z_FINISH);
	ck_assert_msg(r == Z_STREAM_END, "gzip body of %zu bytes does not inflate in 1 MiB: %d", len, r);
	out[zs.total_out] = '\0';
	*out_len = zs.total_out;
	inflateEnd(&zs);
	return out;
}

/* GET /metrics with these headers; the Content-Type must be want_type. */
static void scrape(struct mw_daemon *d, const char *headers, const char *want_type, struct mw_http_response *resp)
{
	char ctype[256], vary[128];

	ck_assert_int_eq(mw_http_request(d->port, "GET", "/metrics", headers, resp), 0);
	ck_assert_int_eq(resp->status, 200);
	ck_assert_msg(mw_http_header(resp, "Content-Type", ctype, sizeof(ctype)), "%s: no Content-Type", headers);
	ck_assert_msg(strcmp(ctype, want_type) == 0, "%s: Content-Type %s, want %s", headers, ctype, want_type);
	ck_assert_msg(mw_http_header(resp, "Vary", vary, sizeof(vary)), "%s: no Vary", headers);
	ck_assert_msg(strstr(vary, "Accept") && strstr(vary, "Accept-Encoding"), "%s: Vary: %s", headers, vary);
}

static void check_text(const char *body, size_t len, const char *what)
{
	char *out = NULL;
	int rc;

	ck_assert_msg(strncmp(body, "# HELP ", 7) == 0, "%s: text starts '%.20s'", what, body);
	ck_assert_msg(strstr(body, "\n# TYPE memwatch_oom_kills_total counter\n"), "%s: no counter TYPE", what);
	ck_assert_msg(!strstr(body, "# EOF") && !strstr(body, "_created"), "%s: OpenMetrics in the text", what);
	rc = mw_promtool_check(body, len, &out);
	ck_assert_msg(rc == 0, "%s: promtool check metrics exited %d:\n%s", what, rc, out ? out : "");
	free(out);
}

static void check_openmetrics(const char *body, size_t len, const char *what)
{
	ck_assert_msg(len > 6 && strcmp(body + len - 6, "# EOF\n") == 0, "%s: does not end in # EOF", what);
	ck_assert_msg(strstr(body, "# EOF") == body + len - 6, "%s: # EOF before the end", what);
	ck_assert_msg(strncmp(body, "# TYPE ", 7) == 0, "%s: starts '%.20s'", what, body);
	/* A counter's family is named without _total, its sample with it. */
	ck_assert_msg(strstr(body, "\n# TYPE memwatch_oom_kills counter\n"), "%s: no counter family", what);
	ck_assert_msg(!strstr(body, "# TYPE memwatch_oom_kills_total"), "%s: _total in a family name", what);
	ck_assert_msg(strstr(body, "\nmemwatch_oom_kills_total{scope=\"memcg\"} "), "%s: no _total sample", what);
	/* The oom collector counts from its start, each scope too: _created is
	 * the daemon's start, within a minute of now. */
	{
		const char *c = strstr(body, "\nmemwatch_oom_kills_created{scope=\"memcg\"} ");
		double created, now = (double)time(NULL);

		ck_assert_msg(c != NULL, "%s: no memwatch_oom_kills_created{scope=\"memcg\"}", what);
		created = strtod(c + strlen("\nmemwatch_oom_kills_created{scope=\"memcg\"} "), NULL);
		ck_assert_msg(created <= now + 1 && created > now - 60, "%s: created %f, now %f", what, created, now);
	}
	/* A kernel counter since boot has none; neither has a gauge or a
	 * per-cgroup series (it may begin after the start). */
	ck_assert_msg(!strstr(body, "memwatch_pressure_memory_some_seconds_created"), "%s: PSI _created", what);
	ck_assert_msg(!strstr(body, "memwatch_memory_available_bytes_created"), "%s: gauge _created", what);
	ck_assert_msg(strstr(body, "\n# UNIT memwatch_memory_available_bytes bytes\n"), "%s: no UNIT", what);
	ck_assert_msg(strstr(body, "\n# UNIT memwatch_memcg_reclaim_seconds seconds\n"), "%s: no histogram UNIT", what);
	ck_assert_msg(strstr(body, "\nmemwatch_memcg_reclaim_seconds_bucket{le=\"+Inf\"} "), "%s: no +Inf bucket", what);
	ck_assert_msg(strstr(body, "\nmemwatch_memcg_reclaim_seconds_created "), "%s: no histogram _created", what);
	ck_assert_msg(!strstr(body, "memwatch_cgroup_memory_events_created"), "%s: per-cgroup _created", what);
}

/* ---- every value of one window, the same in each format ---- */

struct sample {
	char *key; /* name{labels}, a histogram bucket's le as %.17g */
	double value;
};

struct samples {
	struct sample *v;
	size_t n, cap;
};

static void samples_add(struct samples *s, const char *key, double value)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 1024;
		s->v = realloc(s->v, s->cap * sizeof(*s->v));
		ck_assert_ptr_nonnull(s->v);
	}
	s->v[s->n].key = strdup(key);
	ck_assert_ptr_nonnull(s->v[s->n].key);
	s->v[s->n++].value = value;
}

static void samples_free(struct samples *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i].key);
	free(s->v);
	*s = (struct samples){ 0 };
}

static const struct sample *samples_find(const struct samples *s, const char *key)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->v[i].key, key) == 0)
			return &s->v[i];
	return NULL;
}

/* le="..." of a bucket key as %.17g of its value, so that "1.024e-06" and a
 * protobuf double 1.024e-06 name the same bucket. */
static void normalize_le(char *key, size_t size)
{
	char *le = strstr(key, "le=\"");
	char rest[64];
	double b;

	if (!le)
		return;
	b = strtod(le + 4, NULL);
	snprintf(rest, sizeof(rest), "le=\"%.17g\"}", b);
	snprintf(le, size - (size_t)(le - key), "%s", rest);
}

/* Text or OpenMetrics: every sample line, exemplars cut off. */
static void parse_exposition(const char *body, struct samples *out)
{
	for (const char *line = body; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		char text[4096], *sp, *ex;
		size_t len = strcspn(line, "\n");
		double value;

		if (line[0] == '#' || len == 0 || len >= sizeof(text))
			continue;
		memcpy(text, line, len);
		text[len] = '\0';
		ex = strstr(text, " # {");
		if (ex)
			*ex = '\0';
		sp = strrchr(text, ' ');
		ck_assert_msg(sp != NULL, "a sample line without a value: %s", text);
		*sp = '\0';
		value = strtod(sp + 1, NULL); /* before the key grows over it */
		normalize_le(text, sizeof(text));
		samples_add(out, text, value);
	}
}

/* A label value as the text format escapes it. */
static void escape_label(char *buf, size_t size, const char *v)
{
	size_t o = 0;

	for (; *v && o + 3 < size; v++) {
		if (*v == '\\' || *v == '"' || *v == '\n') {
			buf[o++] = '\\';
			buf[o++] = *v == '\n' ? 'n' : *v;
		} else {
			buf[o++] = *v;
		}
	}
	buf[o] = '\0';
}

static void pb_key(char *buf, size_t size, const char *name, const char *suffix,
		   const Io__Prometheus__Client__Metric *m, const double *le)
{
	size_t used = (size_t)snprintf(buf, size, "%s%s", name, suffix);

	for (size_t i = 0; i < m->n_label; i++) {
		char value[1024];

		escape_label(value, sizeof(value), m->label[i]->value);
		used += (size_t)snprintf(buf + used, size - used, "%s%s=\"%s\"", i ? "," : "{", m->label[i]->name,
					 value);
	}
	if (le)
		used += (size_t)snprintf(buf + used, size - used, "%sle=\"%.17g\"", m->n_label ? "," : "{", *le);
	if (m->n_label || le)
		snprintf(buf + used, size - used, "}");
}

/* The delimited protobuf stream as the samples the text format would show. */
static void parse_protobuf(const uint8_t *p, size_t len, struct samples *out)
{
	const uint8_t *end = p + len;

	while (p < end) {
		Io__Prometheus__Client__MetricFamily *mf;
		uint64_t n = 0;
		unsigned shift = 0;

		do {
			n |= (uint64_t)(*p & 0x7f) << shift;
			shift += 7;
		} while (*p++ & 0x80);
		mf = io__prometheus__client__metric_family__unpack(NULL, n, p);
		ck_assert_ptr_nonnull(mf);
		for (size_t i = 0; i < mf->n_metric; i++) {
			const Io__Prometheus__Client__Metric *m = mf->metric[i];
			char key[4096];

			if (m->counter || m->gauge) {
				pb_key(key, sizeof(key), mf->name, "", m, NULL);
				samples_add(out, key, m->counter ? m->counter->value : m->gauge->value);
			} else if (m->histogram) {
				const double inf = INFINITY;

				for (size_t b = 0; b < m->histogram->n_bucket; b++) {
					pb_key(key, sizeof(key), mf->name, "_bucket", m, &m->histogram->bucket[b]->upper_bound);
					samples_add(out, key, (double)m->histogram->bucket[b]->cumulative_count);
				}
				pb_key(key, sizeof(key), mf->name, "_bucket", m, &inf);
				samples_add(out, key, (double)m->histogram->sample_count);
				pb_key(key, sizeof(key), mf->name, "_count", m, NULL);
				samples_add(out, key, (double)m->histogram->sample_count);
				pb_key(key, sizeof(key), mf->name, "_sum", m, NULL);
				samples_add(out, key, m->histogram->sample_sum);
			}
		}
		io__prometheus__client__metric_family__free_unpacked(mf, NULL);
		p += n;
	}
}

/* Every sample of the text format is in the other with the same value; the
 * other has nothing more but what skip allows (OpenMetrics' _created). */
static void assert_same_samples(const struct samples *text, const struct samples *other, const char *what,
				const char *skip_suffix)
{
	size_t extra = 0;

	for (size_t i = 0; i < text->n; i++) {
		const struct sample *o = samples_find(other, text->v[i].key);

		ck_assert_msg(o != NULL, "%s: no %s (text: %.17g)", what, text->v[i].key, text->v[i].value);
		ck_assert_msg(mw_same_value(o->value, text->v[i].value), "%s: %s is %.17g, the text says %.17g", what,
			      text->v[i].key, o->value, text->v[i].value);
	}
	for (size_t i = 0; i < other->n; i++)
		if (!samples_find(text, other->v[i].key)) {
			const char *brace = strchr(other->v[i].key, '{');
			size_t nlen = brace ? (size_t)(brace - other->v[i].key) : strlen(other->v[i].key);

			ck_assert_msg(skip_suffix && nlen > strlen(skip_suffix) &&
					      strncmp(other->v[i].key + nlen - strlen(skip_suffix), skip_suffix,
						      strlen(skip_suffix)) == 0,
				      "%s: %s is not in the text format", what, other->v[i].key);
			extra++;
		}
	fprintf(stderr, "%s: %zu samples, each the same as in the text format%s (%zu %s)\n", what, text->n,
		skip_suffix ? ", and" : "", extra, skip_suffix ? skip_suffix : "extra");
}

static double window_end(const struct samples *s)
{
	const struct sample *w = samples_find(s, "memwatch_window_end_timestamp_seconds");

	ck_assert_ptr_nonnull(w);
	return w->value;
}

/* The three formats of one window (a window is rendered once per format,
 * so the bodies of one window are its values), until three scrapes in a row
 * show the same window. */
static void same_window_bodies(struct mw_daemon *d, struct samples *text, struct samples *om, struct samples *pb)
{
	for (int attempt = 0; attempt < 50; attempt++) {
		struct mw_http_response resp;

		scrape(d, "", TEXT_TYPE, &resp);
		parse_exposition(resp.body, text);
		mw_http_response_free(&resp);
		scrape(d, "Accept: " PROMETHEUS_ACCEPT "\r\n", OM_TYPE, &resp);
		parse_exposition(resp.body, om);
		mw_http_response_free(&resp);
		scrape(d, "Accept: " PROMETHEUS_NATIVE_ACCEPT "\r\n", PB_TYPE, &resp);
		parse_protobuf((const uint8_t *)resp.body, resp.body_len, pb);
		mw_http_response_free(&resp);
		if (window_end(text) == window_end(om) && window_end(om) == window_end(pb))
			return;
		samples_free(text);
		samples_free(om);
		samples_free(pb);
	}
	ck_abort_msg("no three scrapes in a row of the same window in 50 tries");
}

START_TEST(test_formats_same_values)
{
	struct mw_daemon *d = mw_start(CONF_BASIC, NULL, false);
	struct samples text = { 0 }, om = { 0 }, pb = { 0 };

	ck_assert_ptr_nonnull(d);
	same_window_bodies(d, &text, &om, &pb);
	ck_assert_msg(text.n > 100, "only %zu samples in the text format", text.n);
	assert_same_samples(&text, &om, "OpenMetrics", "_created");
	assert_same_samples(&text, &pb, "protobuf", NULL);
	samples_free(&text);
	samples_free(&om);
	samples_free(&pb);
}
END_TEST

/* The delimited stream, read back by libprotobuf-c: every family unpacks,
 * the stream ends on a message boundary, and the ones we look at are there. */
static void check_protobuf(const uint8_t *p, size_t len, const char *what)
{
	const uint8_t *end = p + len;
	size_t families = 0;
	bool oom = false, memcg = false;

	while (p < end) {
		Io__Prometheus__Client__MetricFamily *mf;
		uint64_t n = 0;
		unsigned shift = 0;

		do {
			ck_assert_msg(p < end && shift < 64, "%s: a length runs past the end", what);
			n |= (uint64_t)(*p & 0x7f) << shift;
			shift += 7;
		} while (*p++ & 0x80);
		ck_assert_msg(n <= (uint64_t)(end - p), "%s: message of %llu bytes past the end", what,
			      (unsigned long long)n);
		mf = io__prometheus__client__metric_family__unpack(NULL, n, p);
		ck_assert_msg(mf != NULL, "%s: family %zu does not unpack", what, families);
		ck_assert_msg(mf->name && strncmp(mf->name, "memwatch_", 9) == 0, "%s: family %s", what, mf->name);
		ck_assert_msg(mf->n_metric > 0, "%s: %s has no metric", what, mf->name);
		if (strcmp(mf->name, "memwatch_oom_kills_total") == 0) {
			oom = true;
			ck_assert_int_eq(mf->type, IO__PROMETHEUS__CLIENT__METRIC_TYPE__COUNTER);
			ck_assert_ptr_nonnull(mf->metric[0]->counter);
		}
		if (strcmp(mf->name, "memwatch_memcg_reclaim_seconds") == 0) {
			const Io__Prometheus__Client__Histogram *h = mf->metric[0]->histogram;

			memcg = true;
			ck_assert_int_eq(mf->type, IO__PROMETHEUS__CLIENT__METRIC_TYPE__HISTOGRAM);
			ck_assert_ptr_nonnull(h);
			ck_assert_uint_eq(h->n_bucket, 25);
			ck_assert(h->bucket[0]->upper_bound == 1.024e-06);
			ck_assert_uint_le(h->bucket[24]->cumulative_count, h->sample_count);
		}
		io__prometheus__client__metric_family__free_unpacked(mf, NULL);
		p += n;
		families++;
	}
	ck_assert_msg(oom && memcg, "%s: %zu families, oom %d, memcg histogram %d", what, families, oom, memcg);
}

START_TEST(test_formats_negotiated)
{
	struct mw_daemon *d = mw_start(CONF_BASIC, NULL, false);
	struct mw_http_response resp;
	char *plain;
	size_t plain_len;

	ck_assert_ptr_nonnull(d);

	scrape(d, "", TEXT_TYPE, &resp);
	check_text(resp.body, resp.body_len, "no Accept");
	mw_http_response_free(&resp);
	scrape(d, "Accept: */*\r\n", TEXT_TYPE, &resp);
	check_text(resp.body, resp.body_len, "curl");
	mw_http_response_free(&resp);
	scrape(d, "Accept: text/plain;version=0.0.4;q=0.5, application/openmetrics-text;version=0.0.1\r\n", TEXT_TYPE,
	       &resp);
	check_text(resp.body, resp.body_len, "OpenMetrics 0.0.1 only");
	mw_http_response_free(&resp);

	scrape(d, "Accept: " PROMETHEUS_ACCEPT "\r\n", OM_TYPE, &resp);
	check_openmetrics(resp.body, resp.body_len, "Prometheus 2.42");
	mw_http_response_free(&resp);
	/* Two Accept lines are one list. */
	scrape(d, "Accept: text/plain;q=0.2\r\nAccept: application/openmetrics-text;q=0.3\r\n", OM_TYPE, &resp);
	check_openmetrics(resp.body, resp.body_len, "two lines");
	mw_http_response_free(&resp);

	scrape(d, "Accept: " PROMETHEUS_ACCEPT "\r\nAccept-Encoding: gzip\r\n", OM_TYPE, &resp);
	{
		char enc[32];

		ck_assert_msg(mw_http_header(&resp, "Content-Encoding", enc, sizeof(enc)) && strcmp(enc, "gzip") == 0,
			      "OpenMetrics with gzip asked: not gzip");
	}
	plain = gunzip(resp.body, resp.body_len, &plain_len);
	check_openmetrics(plain, plain_len, "OpenMetrics gzip");
	free(plain);
	mw_http_response_free(&resp);

	scrape(d, "Accept: " PROMETHEUS_NATIVE_ACCEPT "\r\n", PB_TYPE, &resp);
	check_protobuf((const uint8_t *)resp.body, resp.body_len, "protobuf");
	mw_http_response_free(&resp);
	scrape(d, "Accept: " PROMETHEUS_NATIVE_ACCEPT "\r\nAccept-Encoding: gzip\r\n", PB_TYPE, &resp);
	plain = gunzip(resp.body, resp.body_len, &plain_len);
	check_protobuf((const uint8_t *)plain, plain_len, "protobuf gzip");
	free(plain);
	mw_http_response_free(&resp);
}
END_TEST

static Suite *formats_suite(void)
{
	Suite *s = suite_create("formats");
	TCase *tc = tcase_create("negotiation");

	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, test_formats_negotiated);
	tcase_add_test(tc, test_formats_same_values);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr;
	int failed;

	if (geteuid() != 0) {
		fprintf(stderr, "memwatchd integration tests need root (BPF): skipping\n");
		return 77;
	}
	if (mw_init_tmp_root() < 0) {
		fprintf(stderr, "cannot create a temporary directory: %m\n");
		return 99;
	}
	sr = srunner_create(formats_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	mw_keep_failures(sr);
	srunner_free(sr);
	if (failed) {
		mw_dump_daemon_logs(mw_tmp_root(), NULL);
		fprintf(stderr, "daemon logs and configs kept in %s\n", mw_tmp_root());
	} else {
		mw_remove_tmp_root();
	}
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
