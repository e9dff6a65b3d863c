/* SPDX-License-Identifier: GPL-2.0 */
#include <check.h>
#include <stdbool.h>
#include <stdlib.h>

#include "accept_encoding.h"
#include "fixture.h"

static bool gzip_for(const char *value)
{
	struct accept_encoding ae;

	accept_encoding_init(&ae);
	accept_encoding_parse(&ae, value);
	return accept_encoding_gzip(&ae);
}

static const struct {
	const char *value;
	bool gzip;
} cases[] = {
	/* what Prometheus sends, and the usual browser and curl lists */
	{ "gzip", true },
	{ "gzip, deflate, br", true },
	{ "deflate, gzip;q=1.0, *;q=0.5", true },
	{ "br;q=1.0, gzip;q=0.8, *;q=0.1", true },
	/* tokens and parameter names are case-insensitive, blanks are optional */
	{ "GZIP", true },
	{ "GZip ;Q=0.5", true },
	{ "  gzip\t;\tq=0.001  ", true },
	{ "x-gzip", true },
	{ "*", true },
	{ "identity;q=0.5, *", true },
	{ ",,gzip,,", true },
	{ "gzip;level=9", true },
	/* not acceptable */
	{ NULL, false },
	{ "", false },
	{ "identity", false },
	{ "deflate, br", false },
	{ "gzip;q=0", false },
	{ "gzip;q=0.000", false },
	{ "gzip; q=0 ,identity", false },
	{ "gzip;q=0, *", false },
	{ "*;q=0", false },
	{ "gzip2, gzipped, xgzip, gz", false },
	/* ranked below identity, which only counts when named */
	{ "gzip;q=0.5, identity", false },
	{ "gzip;q=0.5, identity;q=0.4", true },
	{ "gzip;q=0.5, *", true },
	{ "gzip;q=0.5", true },
	/* malformed weights count as q=0: plain text is always safe */
	{ "gzip;q=2", false },
	{ "gzip;q=1.5", false },
	{ "gzip;q=1.001", false },
	{ "gzip;q=0.5555", false },
	{ "gzip;q=", false },
	{ "gzip;q", false },
	{ "gzip;q=abc", false },
	{ "gzip;q=-1", false },
	{ "gzip junk", false },
	{ "gzip;q=0.5 junk", false },
	/* listed twice: the lower weight */
	{ "gzip, gzip;q=0", false },
	{ "gzip;q=0, gzip", false },
};

START_TEST(test_cases)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_msg(gzip_for(cases[i].value) == cases[i].gzip, "\"%s\": want gzip=%d",
			      cases[i].value ? cases[i].value : "(null)", cases[i].gzip);
}
END_TEST

/* Several header lines are one list. */
START_TEST(test_several_fields)
{
	struct accept_encoding ae;

	accept_encoding_init(&ae);
	accept_encoding_parse(&ae, "deflate");
	accept_encoding_parse(&ae, "gzip");
	ck_assert(accept_encoding_gzip(&ae));

	accept_encoding_init(&ae);
	accept_encoding_parse(&ae, "gzip");
	accept_encoding_parse(&ae, "identity;q=1, gzip;q=0");
	ck_assert(!accept_encoding_gzip(&ae));
}
END_TEST

/* A long hostile value: linear, no overrun (ASan), and a sane answer. */
START_TEST(test_long_value)
{
	size_t n = 64 * 1024, i;
	char *v = malloc(n + 8);

	ck_assert_ptr_nonnull(v);
	for (i = 0; i < n; i++)
		v[i] = "a;=q, \t"[i % 7];
	v[n] = '\0';
	ck_assert(!gzip_for(v));
	for (i = 0; i + 1 < n; i += 2) {
		v[i] = ';';
		v[i + 1] = ' ';
	}
	ck_assert(!gzip_for(v));
	free(v);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("accept_encoding");
	TCase *tc = tcase_create("parse");

	tcase_add_test(tc, test_cases);
	tcase_add_test(tc, test_several_fields);
	tcase_add_test(tc, test_long_value);
	suite_add_tcase(s, tc);
	return fixture_run_suite(s);
}
