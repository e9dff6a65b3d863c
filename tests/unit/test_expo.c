/* SPDX-License-Identifier: GPL-2.0 */
#include <check.h>
#include <float.h>
#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expo.h"

#define REPL "\xef\xbf\xbd" /* U+FFFD */

/* ck_assert_* records a checkpoint per call, far too slow for loops of
 * hundreds of thousands of iterations; this only costs on failure. */
#define REQUIRE(cond, ...)                          \
	do {                                        \
		if (!(cond))                        \
			ck_abort_msg(__VA_ARGS__); \
	} while (0)

/* Printable rendering of arbitrary bytes for failure messages. */
static const char *vis(const char *s, char *buf, size_t size)
{
	size_t o = 0;

	for (; *s && o + 5 < size; s++) {
		unsigned char c = (unsigned char)*s;

		if (c >= 0x20 && c < 0x7f && c != '\\')
			buf[o++] = (char)c;
		else
			o += (size_t)snprintf(buf + o, size - o, "\\x%02x", c);
	}
	buf[o] = '\0';
	return buf;
}

static void assert_bytes_eq(const char *got, const char *want, const char *what)
{
	char a[1024], b[1024], c[1024];

	ck_assert_msg(strcmp(got, want) == 0, "%s: got \"%s\", want \"%s\"", vis(what, c, sizeof(c)),
		      vis(got, a, sizeof(a)), vis(want, b, sizeof(b)));
}

static const char *fmt(double v, char buf[static EXPO_NUMBER_MAX])
{
	size_t n = expo_format_number(buf, v);

	REQUIRE(n == strlen(buf), "%.17g: returned %zu for \"%s\"", v, n, buf);
	REQUIRE(n < EXPO_NUMBER_MAX, "%.17g: length %zu", v, n);
	return buf;
}

struct num_case {
	double v;
	const char *want;
};

/* Expected text for every finite value; shared by the C-locale and the
 * ','-locale tests, since the output must not depend on the locale. */
static const struct num_case finite_cases[] = {
	{ 0.0, "0" },
	{ 1.0, "1" },
	{ -1.0, "-1" },
	{ 42.0, "42" },
	{ 1234567890123.0, "1234567890123" },
	{ -987654321.0, "-987654321" },
	{ 1e15, "1000000000000000" },
	{ 9007199254740991.0, "9007199254740991" },     /* 2^53 - 1: integer path */
	{ -9007199254740991.0, "-9007199254740991" },
	{ 9007199254740992.0, "9007199254740992" },     /* 2^53: %g path, still exact */
	{ 9007199254740994.0, "9007199254740994" },     /* 2^53 + 2 */
	{ -9007199254740994.0, "-9007199254740994" },
	{ 1e16, "1e+16" },
	{ 18446744073709551616.0, "1.8446744073709552e+19" }, /* 2^64 */
	{ -9223372036854775808.0, "-9.223372036854776e+18" }, /* -2^63 */
	{ 1e20, "1e+20" },
	{ 1e300, "1e+300" },
	{ -1e300, "-1e+300" },
	{ DBL_MAX, "1.7976931348623157e+308" },
	{ 0.1, "0.1" },
	{ -0.1, "-0.1" },
	{ 0.5, "0.5" },
	{ -0.25, "-0.25" },
	{ 1.5, "1.5" },
	{ 0.001, "0.001" },
	{ 123.456, "123.456" },
	{ 1e-9, "1e-09" },
	{ -1.5e-7, "-1.5e-07" },
	{ 1.0 / 3.0, "0.3333333333333333" },
	{ 2.0 / 3.0, "0.6666666666666666" },
	{ 0.1 + 0.2, "0.30000000000000004" },   /* needs all 17 digits */
	{ 100 * 1e-9, "1.0000000000000001e-07" },
	{ DBL_MIN, "2.2250738585072014e-308" },
	{ 1e-300, "1e-300" },
};

START_TEST(test_number_table)
{
	char buf[EXPO_NUMBER_MAX];
	size_t i;

	for (i = 0; i < sizeof(finite_cases) / sizeof(finite_cases[0]); i++) {
		const struct num_case *c = &finite_cases[i];

		fmt(c->v, buf);
		ck_assert_msg(strcmp(buf, c->want) == 0, "%.17g: got \"%s\", want \"%s\"", c->v, buf,
			      c->want);
		ck_assert_msg(strtod(buf, NULL) == c->v, "%s does not read back as %.17g", buf, c->v);
	}
}
END_TEST

START_TEST(test_number_special)
{
	char buf[EXPO_NUMBER_MAX];

	ck_assert_str_eq(fmt(INFINITY, buf), "+Inf");
	ck_assert_str_eq(fmt(-INFINITY, buf), "-Inf");
	ck_assert_str_eq(fmt(NAN, buf), "NaN");
	ck_assert_str_eq(fmt(-NAN, buf), "NaN");
	ck_assert_str_eq(fmt(nan("0x123"), buf), "NaN");
	ck_assert_str_eq(fmt(HUGE_VAL, buf), "+Inf");
	ck_assert_str_eq(fmt(DBL_MAX * 2, buf), "+Inf");
}
END_TEST

START_TEST(test_number_negative_zero)
{
	char buf[EXPO_NUMBER_MAX];

	/* The sign of zero is not something Prometheus keeps; either spelling
	 * is acceptable, anything else (e.g. "-0.0", "0e+00") is not. */
	fmt(-0.0, buf);
	ck_assert_msg(strcmp(buf, "0") == 0 || strcmp(buf, "-0") == 0, "-0.0 -> \"%s\"", buf);
	ck_assert(strtod(buf, NULL) == 0.0);
}
END_TEST

START_TEST(test_number_subnormal)
{
	char buf[EXPO_NUMBER_MAX];
	const double vals[] = { 5e-324, -5e-324, 2.2250738585072009e-308, 1.23456789e-310 };

	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		fmt(vals[i], buf);
		ck_assert_msg(strtod(buf, NULL) == vals[i], "%s != %.17g", buf, vals[i]);
		ck_assert_ptr_nonnull(strstr(buf, "e-3"));
	}
}
END_TEST

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rng(void)
{
	uint64_t x = rng_state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	rng_state = x;
	return x;
}

static void assert_number_charset(const char *s, double v)
{
	for (const char *p = s; *p; p++)
		REQUIRE((*p >= '0' && *p <= '9') || *p == '.' || *p == '-' || *p == '+' || *p == 'e',
			"%.17g -> \"%s\": unexpected character '%c'", v, s, *p);
}

/* Every finite double, whatever its bit pattern, must read back exactly. */
START_TEST(test_number_roundtrip_random)
{
	char buf[EXPO_NUMBER_MAX];
	int i;

	for (i = 0; i < 200000; i++) {
		uint64_t bits = rng();
		double v;

		memcpy(&v, &bits, sizeof(v));
		if (!isfinite(v))
			continue;
		fmt(v, buf);
		assert_number_charset(buf, v);
		REQUIRE(strtod(buf, NULL) == v, "%.17g -> \"%s\" reads back as %.17g", v, buf,
			strtod(buf, NULL));
	}
	/* Fractions of ordinary magnitude, the common case for gauges. */
	for (i = 0; i < 200000; i++) {
		double v = (double)(int64_t)(rng() % 2000001) / 1000.0 - 1000.0;

		fmt(v, buf);
		assert_number_charset(buf, v);
		REQUIRE(strtod(buf, NULL) == v, "%.17g -> \"%s\"", v, buf);
		if (v != floor(v))
			REQUIRE(strchr(buf, '.') != NULL || strchr(buf, 'e') != NULL, "%s", buf);
	}
}
END_TEST

/* Integers below 2^53 never get an exponent or a fraction. */
START_TEST(test_number_integers_plain)
{
	char buf[EXPO_NUMBER_MAX], want[64];
	int i;

	for (i = 0; i < 100000; i++) {
		int64_t n = (int64_t)(rng() % 9007199254740992ULL);
		double v;

		if (i & 1)
			n = -n;
		v = (double)n;
		fmt(v, buf);
		snprintf(want, sizeof(want), "%lld", (long long)n);
		REQUIRE(strcmp(buf, want) == 0, "got \"%s\", want \"%s\"", buf, want);
	}
	for (i = 0; i < 53; i++) {
		double v = ldexp(1.0, i);

		fmt(v, buf);
		snprintf(want, sizeof(want), "%llu", 1ULL << i);
		ck_assert_str_eq(buf, want);
	}
}
END_TEST

START_TEST(test_put_number_appends)
{
	struct strbuf sb;

	strbuf_init(&sb);
	strbuf_puts(&sb, "x=");
	expo_put_number(&sb, 0.25);
	strbuf_putc(&sb, ' ');
	expo_put_number(&sb, -INFINITY);
	strbuf_putc(&sb, ' ');
	expo_put_number(&sb, 1e-9);
	ck_assert_str_eq(sb.data, "x=0.25 -Inf 1e-09");
	ck_assert_uint_eq(sb.len, strlen("x=0.25 -Inf 1e-09"));
	strbuf_free(&sb);
}
END_TEST

/* Returns a ',' LC_NUMERIC locale for uselocale(), or 0 if none is installed. */
static locale_t comma_locale(const char **name)
{
	static const char *const names[] = {
		"de_DE.UTF-8", "de_DE.utf8", "de_DE", "de_DE@euro", "fr_FR.UTF-8", "fr_FR.utf8",
		"fr_FR", "ru_RU.UTF-8", "ru_RU.utf8", "nl_NL.UTF-8", "nl_NL.utf8", "it_IT.UTF-8",
		"it_IT.utf8", "es_ES.UTF-8", "es_ES.utf8", "pt_BR.UTF-8", "pt_BR.utf8",
		"sv_SE.UTF-8", "pl_PL.UTF-8", "da_DK.UTF-8", "de_AT.UTF-8", "de_CH.UTF-8",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		locale_t loc = newlocale(LC_NUMERIC_MASK, names[i], (locale_t)0);
		locale_t old;
		bool comma;

		if (!loc)
			continue;
		old = uselocale(loc);
		comma = strcmp(localeconv()->decimal_point, ",") == 0;
		uselocale(old);
		if (comma) {
			*name = names[i];
			return loc;
		}
		freelocale(loc);
	}
	return (locale_t)0;
}

START_TEST(test_number_comma_locale)
{
	char buf[EXPO_NUMBER_MAX], probe[16];
	const char *name = NULL;
	locale_t loc = comma_locale(&name);
	struct strbuf sb;
	struct metric_desc d = { .name = "m", .help = "h", .type = METRIC_GAUGE };
	size_t i;

	/* packaging/install-deps.sh --test generates de_DE.UTF-8. */
	ck_assert_msg(loc, "no locale with ',' as decimal separator installed (de_DE.UTF-8: "
			   "packaging/install-deps.sh --test generates it)");
	uselocale(loc);
	/* Make sure the locale really changes libc's formatting. */
	snprintf(probe, sizeof(probe), "%.1f", 0.5);
	ck_assert_msg(strcmp(probe, "0,5") == 0, "locale %s formats 0.5 as %s", name, probe);

	for (i = 0; i < sizeof(finite_cases) / sizeof(finite_cases[0]); i++) {
		const struct num_case *c = &finite_cases[i];

		fmt(c->v, buf);
		ck_assert_msg(strcmp(buf, c->want) == 0, "[%s] %.17g: got \"%s\", want \"%s\"", name, c->v,
			      buf, c->want);
	}
	ck_assert_str_eq(fmt(INFINITY, buf), "+Inf");
	ck_assert_str_eq(fmt(NAN, buf), "NaN");

	strbuf_init(&sb);
	expo_put_sample(&sb, "m", NULL, &d, NULL, "le", "0.5", 2.75);
	ck_assert_str_eq(sb.data, "m{le=\"0.5\"} 2.75\n");
	strbuf_free(&sb);

	uselocale(LC_GLOBAL_LOCALE);
	freelocale(loc);
}
END_TEST

struct str_case {
	const char *in;
	const char *want;
};

static const struct str_case label_cases[] = {
	{ "", "" },
	{ "plain text 123", "plain text 123" },
	{ "a\\b", "a\\\\b" },
	{ "\\", "\\\\" },
	{ "\\n", "\\\\n" }, /* a backslash followed by n, not a newline */
	{ "\"", "\\\"" },
	{ "say \"hi\"", "say \\\"hi\\\"" },
	{ "\n", "\\n" },
	{ "line1\nline2\n", "line1\\nline2\\n" },
	{ "x\\\"\n", "x\\\\\\\"\\n" },
	{ "tab\there\rcr", "tab\there\rcr" }, /* only \ " and LF are escaped */
	{ "{}=,", "{}=," },
	/* valid multibyte UTF-8 is kept byte for byte */
	{ "caf\xc3\xa9", "caf\xc3\xa9" },
	{ "\xc2\x80", "\xc2\x80" },                 /* U+0080, smallest 2-byte */
	{ "\xdf\xbf", "\xdf\xbf" },                 /* U+07FF */
	{ "\xe0\xa0\x80", "\xe0\xa0\x80" },         /* U+0800, smallest 3-byte */
	{ "\xe2\x82\xac", "\xe2\x82\xac" },         /* EURO SIGN */
	{ "\xed\x9f\xbf", "\xed\x9f\xbf" },         /* U+D7FF, just below surrogates */
	{ "\xee\x80\x80", "\xee\x80\x80" },         /* U+E000, just above surrogates */
	{ "\xef\xbf\xbf", "\xef\xbf\xbf" },         /* U+FFFF */
	{ REPL, REPL },                             /* a real U+FFFD stays one */
	{ "\xf0\x90\x80\x80", "\xf0\x90\x80\x80" }, /* U+10000, smallest 4-byte */
	{ "\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80" }, /* emoji */
	{ "\xf4\x8f\xbf\xbf", "\xf4\x8f\xbf\xbf" }, /* U+10FFFF, the last code point */
	{ "\xe6\x97\xa5\xe6\x9c\xac\"\xe8\xaa\x9e", "\xe6\x97\xa5\xe6\x9c\xac\\\"\xe8\xaa\x9e" },
	/* bytes that never occur in UTF-8 */
	{ "\xff", REPL },
	{ "\xfe", REPL },
	{ "\xff\xff", REPL REPL },
	{ "a\xff" "b", "a" REPL "b" },
	{ "\xf5\x80\x80\x80", REPL REPL REPL REPL },
	{ "\xf8\x88\x80\x80\x80", REPL REPL REPL REPL REPL },
	/* stray continuation bytes */
	{ "\x80", REPL },
	{ "\xbf", REPL },
	{ "a\x80\x80" "b", "a" REPL REPL "b" },
	/* overlong encodings */
	{ "\xc0\xaf", REPL REPL },               /* '/' in 2 bytes */
	{ "\xc1\xbf", REPL REPL },
	{ "\xc0\x80", REPL REPL },               /* "modified UTF-8" NUL */
	{ "\xc0\xa2", REPL REPL },               /* '"' smuggled past escaping */
	{ "\xe0\x80\xaf", REPL REPL REPL },      /* '/' in 3 bytes */
	{ "\xe0\x9f\xbf", REPL REPL REPL },      /* U+07FF in 3 bytes */
	{ "\xf0\x80\x80\xaf", REPL REPL REPL REPL },
	{ "\xf0\x8f\xbf\xbf", REPL REPL REPL REPL }, /* U+FFFF in 4 bytes */
	/* UTF-16 surrogates */
	{ "\xed\xa0\x80", REPL REPL REPL },      /* U+D800 */
	{ "\xed\xbf\xbf", REPL REPL REPL },      /* U+DFFF */
	{ "\xed\xa0\xbd\xed\xb8\x80", REPL REPL REPL REPL REPL REPL }, /* CESU-8 pair */
	/* beyond U+10FFFF */
	{ "\xf4\x90\x80\x80", REPL REPL REPL REPL },
	{ "\xf7\xbf\xbf\xbf", REPL REPL REPL REPL },
	/* truncated sequences, at the end and in the middle */
	{ "\xc3", REPL },
	{ "\xe2\x82", REPL REPL },
	{ "\xf0\x9f\x98", REPL REPL REPL },
	{ "\xe2\x82" "a", REPL REPL "a" },
	{ "\xf0\x9f\x98" "b", REPL REPL REPL "b" },
	{ "\xc3\xc3\xa9", REPL "\xc3\xa9" },
	/* a truncated sequence must not swallow a character that needs escaping */
	{ "\xc3\"", REPL "\\\"" },
	{ "\xe2\n", REPL "\\n" },
	{ "\xf0\x9f\\", REPL REPL "\\\\" },
	{ "ok\xe2\x82\xac\xe2\x82" "end\xff", "ok\xe2\x82\xac" REPL REPL "end" REPL },
};

START_TEST(test_label_value_escaping)
{
	struct strbuf sb;
	size_t i;

	strbuf_init(&sb);
	for (i = 0; i < sizeof(label_cases) / sizeof(label_cases[0]); i++) {
		strbuf_reset(&sb);
		expo_put_label_value(&sb, label_cases[i].in);
		strbuf_reserve(&sb, 0); /* "" appends nothing: make data non-NULL */
		ck_assert(!strbuf_failed(&sb));
		assert_bytes_eq(sb.data, label_cases[i].want, label_cases[i].in);
		ck_assert_uint_eq(sb.len, strlen(label_cases[i].want));
	}
	strbuf_free(&sb);
}
END_TEST

START_TEST(test_label_value_appends)
{
	struct strbuf sb;

	strbuf_init(&sb);
	strbuf_puts(&sb, "v=\"");
	expo_put_label_value(&sb, "a\"b");
	strbuf_putc(&sb, '"');
	ck_assert_str_eq(sb.data, "v=\"a\\\"b\"");
	strbuf_free(&sb);
}
END_TEST

/* Independent strict validator (Unicode Table 3-7); returns the sequence
 * length at s, or 0 when the bytes are not well-formed UTF-8. */
static size_t wellformed_len(const unsigned char *s)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t n, i;

	if (c <= 0x7f)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

static bool wellformed(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	while (*s) {
		size_t n = wellformed_len(s);

		if (!n)
			return false;
		s += n;
	}
	return true;
}

/* What the escaper must produce for input that is already valid UTF-8. */
static void escape_only(struct strbuf *sb, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			strbuf_puts(sb, "\\\\");
		else if (*s == '"')
			strbuf_puts(sb, "\\\"");
		else if (*s == '\n')
			strbuf_puts(sb, "\\n");
		else
			strbuf_putc(sb, *s);
	}
}

START_TEST(test_label_value_random_bytes)
{
	static const unsigned char pieces[][5] = {
		"a", "Z", "\\", "\"", "\n", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xed\x9f\xbf",
		"\xef\xbf\xbd", "\xf4\x8f\xbf\xbf",
	};
	struct strbuf in, out, ref;
	int i, valid_seen = 0, invalid_seen = 0;

	strbuf_init(&in);
	strbuf_init(&out);
	strbuf_init(&ref);
	for (i = 0; i < 50000; i++) {
		int len = (int)(rng() % 24), j;

		strbuf_reset(&in);
		for (j = 0; j < len; j++) {
			uint64_t r = rng();

			if (r % 3 == 0) {
				char c = (char)(1 + (r >> 8) % 255); /* any byte but NUL */

				strbuf_putc(&in, c);
			} else {
				strbuf_puts(&in, (const char *)pieces[(r >> 8) % (sizeof(pieces) / sizeof(pieces[0]))]);
			}
		}
		strbuf_reserve(&in, 0);
		strbuf_reset(&out);
		expo_put_label_value(&out, in.data);
		strbuf_reserve(&out, 0);
		REQUIRE(!strbuf_failed(&out), "strbuf failed");

		/* Output is always well-formed UTF-8 with nothing left unescaped. */
		REQUIRE(wellformed(out.data), "output not UTF-8 for input #%d", i);
		for (const char *p = out.data; *p; p++) {
			REQUIRE(*p != '\n' && *p != '"', "unescaped character in output #%d", i);
			if (*p == '\\') {
				p++;
				REQUIRE(*p == '\\' || *p == '"' || *p == 'n', "bad escape \\%c", *p);
			}
		}
		if (wellformed(in.data)) {
			/* Valid input is only escaped, never altered. */
			strbuf_reset(&ref);
			escape_only(&ref, in.data);
			strbuf_reserve(&ref, 0);
			REQUIRE(strcmp(out.data, ref.data) == 0, "valid input #%d was altered", i);
			valid_seen++;
		} else {
			REQUIRE(strstr(out.data, REPL) != NULL, "invalid input #%d kept as is", i);
			invalid_seen++;
		}
	}
	ck_assert_int_gt(valid_seen, 1000);
	ck_assert_int_gt(invalid_seen, 1000);
	strbuf_free(&in);
	strbuf_free(&out);
	strbuf_free(&ref);
}
END_TEST

START_TEST(test_help_escaping)
{
	static const struct str_case cases[] = {
		{ "", "" },
		{ "Free memory in bytes.", "Free memory in bytes." },
		{ "a\\b", "a\\\\b" },
		{ "two\nlines", "two\\nlines" },
		{ "quotes \"stay\" as they are", "quotes \"stay\" as they are" },
		{ "\\n\n\\", "\\\\n\\n\\\\" },
		{ "tab\tkept", "tab\tkept" },
		{ "caf\xc3\xa9", "caf\xc3\xa9" },
	};
	struct strbuf sb;

	strbuf_init(&sb);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		strbuf_reset(&sb);
		expo_put_help_text(&sb, cases[i].in);
		strbuf_reserve(&sb, 0);
		assert_bytes_eq(sb.data, cases[i].want, cases[i].in);
	}
	strbuf_free(&sb);
}
END_TEST

START_TEST(test_metric_type_name)
{
	ck_assert_str_eq(metric_type_name(METRIC_GAUGE), "gauge");
	ck_assert_str_eq(metric_type_name(METRIC_COUNTER), "counter");
	ck_assert_str_eq(metric_type_name(METRIC_HISTOGRAM), "histogram");
	ck_assert_str_eq(metric_type_name((enum metric_type)99), "gauge");
	ck_assert_str_eq(EXPO_CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8");
}
END_TEST

START_TEST(test_family_header)
{
	static const struct metric_desc gauge = {
		.name = "memwatch_mem_free_bytes",
		.help = "Free memory.\nSecond line with a \\ backslash and \"quotes\".",
		.type = METRIC_GAUGE,
	};
	static const struct metric_desc counter = {
		.name = "memwatch_reclaim_total", .help = "Reclaims.", .type = METRIC_COUNTER,
		.n_labels = 1, .labels = { "zone" },
	};
	static const struct metric_desc hist = {
		.name = "memwatch_stall_seconds", .help = "", .type = METRIC_HISTOGRAM,
	};
	struct strbuf sb;

	strbuf_init(&sb);
	expo_put_family_header(&sb, &gauge);
	ck_assert_str_eq(sb.data,
			 "# HELP memwatch_mem_free_bytes Free memory.\\nSecond line with a \\\\ backslash "
			 "and \"quotes\".\n"
			 "# TYPE memwatch_mem_free_bytes gauge\n");
	strbuf_reset(&sb);
	expo_put_family_header(&sb, &counter);
	ck_assert_str_eq(sb.data, "# HELP memwatch_reclaim_total Reclaims.\n"
				  "# TYPE memwatch_reclaim_total counter\n");
	/* Appends: a second header follows the first. */
	expo_put_family_header(&sb, &hist);
	ck_assert_str_eq(sb.data, "# HELP memwatch_reclaim_total Reclaims.\n"
				  "# TYPE memwatch_reclaim_total counter\n"
				  "# HELP memwatch_stall_seconds \n"
				  "# TYPE memwatch_stall_seconds histogram\n");
	strbuf_free(&sb);
}
END_TEST

START_TEST(test_sample_lines)
{
	static const struct metric_desc plain = { .name = "up", .help = "h", .type = METRIC_GAUGE };
	static const struct metric_desc two = {
		.name = "memwatch_events_total", .help = "h", .type = METRIC_COUNTER,
		.n_labels = 2, .labels = { "cgroup", "kind" },
	};
	static const struct metric_desc lat = {
		.name = "memwatch_lat_seconds", .help = "h", .type = METRIC_HISTOGRAM,
		.n_labels = 1, .labels = { "dev" },
	};
	const char *const vals[] = { "/sys/fs/cgroup/a\"b", "direct\\reclaim\n" };
	const char *const bad[] = { "\xff" "x", "ok" };
	const char *const with_null[] = { NULL, "k" };
	const char *const sda[] = { "sda" };
	struct strbuf sb;

	strbuf_init(&sb);
	expo_put_sample(&sb, "up", NULL, &plain, NULL, NULL, NULL, 1.0);
	ck_assert_str_eq(sb.data, "up 1\n");

	strbuf_reset(&sb);
	expo_put_sample(&sb, "up", "_extra", &plain, NULL, NULL, NULL, -0.5);
	ck_assert_str_eq(sb.data, "up_extra -0.5\n");

	strbuf_reset(&sb);
	expo_put_sample(&sb, two.name, NULL, &two, vals, NULL, NULL, 12345678.0);
	ck_assert_str_eq(sb.data, "memwatch_events_total{cgroup=\"/sys/fs/cgroup/a\\\"b\","
				  "kind=\"direct\\\\reclaim\\n\"} 12345678\n");

	strbuf_reset(&sb);
	expo_put_sample(&sb, two.name, NULL, &two, bad, NULL, NULL, NAN);
	assert_bytes_eq(sb.data, "memwatch_events_total{cgroup=\"" REPL "x\",kind=\"ok\"} NaN\n", "bad");

	/* NULL label_values, or a NULL entry, gives empty values. */
	strbuf_reset(&sb);
	expo_put_sample(&sb, two.name, NULL, &two, NULL, NULL, NULL, INFINITY);
	ck_assert_str_eq(sb.data, "memwatch_events_total{cgroup=\"\",kind=\"\"} +Inf\n");
	strbuf_reset(&sb);
	expo_put_sample(&sb, two.name, NULL, &two, with_null, NULL, NULL, -INFINITY);
	ck_assert_str_eq(sb.data, "memwatch_events_total{cgroup=\"\",kind=\"k\"} -Inf\n");

	/* The extra label: alone, after the desc's labels, escaped, NULL value. */
	strbuf_reset(&sb);
	expo_put_sample(&sb, "memwatch_lat_seconds", "_bucket", &plain, NULL, "le", "0.005", 3.0);
	ck_assert_str_eq(sb.data, "memwatch_lat_seconds_bucket{le=\"0.005\"} 3\n");
	strbuf_reset(&sb);
	expo_put_sample(&sb, lat.name, "_bucket", &lat, sda, "le", "+Inf", 7.0);
	ck_assert_str_eq(sb.data, "memwatch_lat_seconds_bucket{dev=\"sda\",le=\"+Inf\"} 7\n");
	strbuf_reset(&sb);
	expo_put_sample(&sb, lat.name, "_sum", &lat, sda, NULL, "ignored", 0.125);
	ck_assert_str_eq(sb.data, "memwatch_lat_seconds_sum{dev=\"sda\"} 0.125\n");
	strbuf_reset(&sb);
	expo_put_sample(&sb, "m", NULL, &plain, NULL, "x", "a\"\n\\", 1e-9);
	ck_assert_str_eq(sb.data, "m{x=\"a\\\"\\n\\\\\"} 1e-09\n");
	strbuf_reset(&sb);
	expo_put_sample(&sb, "m", NULL, &plain, NULL, "x", NULL, 2.0);
	ck_assert_str_eq(sb.data, "m{x=\"\"} 2\n");

	/* Lines accumulate. */
	strbuf_reset(&sb);
	expo_put_sample(&sb, "a", NULL, &plain, NULL, NULL, NULL, 1.0);
	expo_put_sample(&sb, "b", NULL, &plain, NULL, NULL, NULL, 2.0);
	ck_assert_str_eq(sb.data, "a 1\nb 2\n");
	strbuf_free(&sb);
}
END_TEST

static Suite *expo_suite(void)
{
	Suite *s = suite_create("expo");
	TCase *num = tcase_create("numbers");
	TCase *str = tcase_create("strings");

	tcase_add_test(num, test_number_table);
	tcase_add_test(num, test_number_special);
	tcase_add_test(num, test_number_negative_zero);
	tcase_add_test(num, test_number_subnormal);
	tcase_add_test(num, test_number_roundtrip_random);
	tcase_add_test(num, test_number_integers_plain);
	tcase_add_test(num, test_put_number_appends);
	tcase_add_test(num, test_number_comma_locale);
	suite_add_tcase(s, num);

	tcase_add_test(str, test_label_value_escaping);
	tcase_add_test(str, test_label_value_appends);
	tcase_add_test(str, test_label_value_random_bytes);
	tcase_add_test(str, test_help_escaping);
	tcase_add_test(str, test_metric_type_name);
	tcase_add_test(str, test_family_header);
	tcase_add_test(str, test_sample_lines);
	suite_add_tcase(s, str);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(expo_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
