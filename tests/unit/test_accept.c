/* SPDX-License-Identifier: GPL-2.0 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "accept.h"
#include "fixture.h"

#define TEXT EXPO_FORMAT_TEXT
#define OM EXPO_FORMAT_OPENMETRICS
#define PB EXPO_FORMAT_PROTOBUF
#define PB_RANGE "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited"

static enum expo_format format_for(const char *value)
{
	struct accept_format af;

	accept_format_init(&af);
	accept_format_parse(&af, value);
	return accept_format_choose(&af);
}

static const struct {
	const char *value;
	enum expo_format want;
} cases[] = {
	/* what Prometheus 2.42 sends: without and with --enable-feature=native-histograms */
	{ "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,"
	  "text/plain;version=0.0.4;q=0.5,*/*;q=0.1", OM },
	{ PB_RANGE ",application/openmetrics-text;version=1.0.0;q=0.8,application/openmetrics-text;version=0.0.1;q=0.75,"
	  "text/plain;version=0.0.4;q=0.5,*/*;q=0.1", PB },
	/* Prometheus before OpenMetrics, curl, a browser, nothing: the text */
	{ "text/plain;version=0.0.4;q=1,*/*;q=0.1", TEXT },
	{ "*/*", TEXT },
	{ "text/html,application/xhtml+xml,application/xml;q=0.9,image/webp,*/*;q=0.8", TEXT },
	{ NULL, TEXT },
	{ "", TEXT },
	{ "text/*, application/*", TEXT },
	/* the highest weight wins; equal weights, the first named */
	{ "text/plain;q=0.5, application/openmetrics-text;q=0.6", OM },
	{ "application/openmetrics-text;q=0.6, text/plain;q=0.7", TEXT },
	{ "application/openmetrics-text, " PB_RANGE, OM },
	{ PB_RANGE ", application/openmetrics-text", PB },
	{ PB_RANGE ";q=0.3, application/openmetrics-text;q=0.2", PB },
	/* case, blanks, quoted values, a trailing ";" */
	{ "APPLICATION/OpenMetrics-Text ; Version=1.0.0", OM },
	{ "  application/openmetrics-text\t;\tversion=\"1.0.0\"  ;  ", OM },
	{ "application/vnd.google.protobuf; proto=\"io.prometheus.client.MetricFamily\"; encoding=\"delimited\"", PB },
	{ "text/plain; foo=\"a,b;q=0\", application/openmetrics-text;q=0.5", TEXT },
	{ "text/plain;q=0.4; version=9.9.9, application/openmetrics-text;q=0.3", TEXT }, /* after q: accept-ext */
	/* versions and protobuf encodings we do not speak are not named at all */
	{ "application/openmetrics-text;version=0.0.1", TEXT },
	{ "application/openmetrics-text;version=2.0.0, text/plain;q=0.1", TEXT },
	{ "text/plain;version=1.0.0, application/openmetrics-text;q=0.1", OM },
	{ "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=text", TEXT },
	{ "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily", TEXT },
	{ "application/vnd.google.protobuf;encoding=delimited", TEXT },
	{ "application/vnd.google.protobuf;proto=io.prometheus.client.Other;encoding=delimited", TEXT },
	{ "application/vnd.google.protobuf;proto=IO.PROMETHEUS.CLIENT.METRICFAMILY;encoding=delimited", TEXT },
	/* q=0 means not acceptable; malformed weights count as 0 */
	{ "application/openmetrics-text;q=0", TEXT },
	{ "application/openmetrics-text;q=0.000, " PB_RANGE ";q=0", TEXT },
	{ "application/openmetrics-text;q=2", TEXT },
	{ "application/openmetrics-text;q=1.001", TEXT },
	{ "application/openmetrics-text;q=0.5555", TEXT },
	{ "application/openmetrics-text;q=", TEXT },
	{ "application/openmetrics-text;q", TEXT },
	{ "application/openmetrics-text;q=-1", TEXT },
	{ "application/openmetrics-text;q=abc, text/plain;q=0.001", TEXT },
	/* not media ranges: ignored whole */
	{ "application/openmetrics-text junk", TEXT },
	{ "application/openmetrics-text;version=1.0.0 junk", TEXT },
	{ "application/openmetrics-text;version", TEXT },
	{ "application/openmetrics-text;=1.0.0", TEXT },
	{ "application/openmetrics-text;version=\"1.0.0", TEXT },
	{ "application/", TEXT },
	{ "/openmetrics-text", TEXT },
	{ "application openmetrics-text", TEXT },
	{ ",,,;;;===\"\"\"", TEXT },
	{ "application/openmetrics-text;version=\"1.0.0\\\"", TEXT },
	{ ",, application/openmetrics-text ,,", OM },
	/* named twice: the lower weight */
	{ "application/openmetrics-text, application/openmetrics-text;q=0", TEXT },
	{ "application/openmetrics-text;q=0.2, text/plain;q=0.3, application/openmetrics-text;q=0.9", TEXT },
};

START_TEST(test_cases)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_msg(format_for(cases[i].value) == cases[i].want, "\"%s\": want %d, got %d",
			      cases[i].value ? cases[i].value : "(null)", cases[i].want, format_for(cases[i].value));
}
END_TEST

/* Several header lines are one list. */
START_TEST(test_several_fields)
{
	struct accept_format af;

	accept_format_init(&af);
	accept_format_parse(&af, "text/plain;q=0.4");
	accept_format_parse(&af, NULL);
	accept_format_parse(&af, "application/openmetrics-text;q=0.5");
	ck_assert_int_eq(accept_format_choose(&af), OM);
	accept_format_parse(&af, "application/openmetrics-text;q=0");
	ck_assert_int_eq(accept_format_choose(&af), TEXT);
}
END_TEST

START_TEST(test_content_types)
{
	ck_assert_str_eq(expo_format_content_type(TEXT), "text/plain; version=0.0.4; charset=utf-8");
	ck_assert_str_eq(expo_format_content_type(OM), "application/openmetrics-text; version=1.0.0; charset=utf-8");
	ck_assert_str_eq(expo_format_content_type(PB), "application/vnd.google.protobuf; "
			 "proto=io.prometheus.client.MetricFamily; encoding=delimited");
	ck_assert_str_eq(expo_format_content_type(EXPO_FORMAT__COUNT), expo_format_content_type(TEXT));
}
END_TEST

/* Each Content-Type we send, read back as an Accept value, names its format. */
START_TEST(test_content_types_read_back)
{
	for (int f = 0; f < EXPO_FORMAT__COUNT; f++)
		ck_assert_int_eq(format_for(expo_format_content_type(f)), f);
}
END_TEST

/* A long hostile value: linear, no overrun (ASan), and a sane answer. */
START_TEST(test_long_value)
{
	size_t n = 64 * 1024, i;
	char *v = malloc(n + 64);

	ck_assert_ptr_nonnull(v);
	for (i = 0; i < n; i++)
		v[i] = "a/;=q, \t\"\\"[i % 10];
	v[n] = '\0';
	ck_assert_int_eq(format_for(v), TEXT);
	/* an unclosed quote to the end, then what would otherwise be chosen */
	memset(v, ' ', n);
	memcpy(v, "text/plain;x=\"", 14);
	strcpy(v + n - 40, ", application/openmetrics-text");
	ck_assert_int_eq(format_for(v), TEXT);
	for (i = 0; i + 1 < n; i += 2) {
		v[i] = ',';
		v[i + 1] = ' ';
	}
	strcpy(v + n - 40, "application/openmetrics-text");
	ck_assert_int_eq(format_for(v), OM);
	free(v);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("accept");
	TCase *tc = tcase_create("negotiate");

	tcase_add_test(tc, test_cases);
	tcase_add_test(tc, test_several_fields);
	tcase_add_test(tc, test_content_types);
	tcase_add_test(tc, test_content_types_read_back);
	tcase_add_test(tc, test_long_value);
	suite_add_tcase(s, tc);
	return fixture_run_suite(s);
}
