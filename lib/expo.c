// SPDX-License-Identifier: GPL-2.0
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "expo.h"
#include "utf8.h"

const char *metric_type_name(enum metric_type t)
{
	switch (t) {
	case METRIC_COUNTER:
		return "counter";
	case METRIC_HISTOGRAM:
		return "histogram";
	case METRIC_GAUGE:
	default:
		return "gauge";
	}
}

static size_t format_uint(char *buf, uint64_t v)
{
	char tmp[24];
	size_t n = 0, i;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (i = 0; i < n; i++)
		buf[i] = tmp[n - 1 - i];
	buf[n] = '\0';
	return n;
}

size_t expo_format_number(char buf[static EXPO_NUMBER_MAX], double v)
{
	int prec, n = 0;
	char *p;

	if (isnan(v))
		return (size_t)snprintf(buf, EXPO_NUMBER_MAX, "NaN");
	if (isinf(v))
		return (size_t)snprintf(buf, EXPO_NUMBER_MAX, v > 0 ? "+Inf" : "-Inf");
	/* Exact integers below 2^53 print as integers; most counters are. */
	if (v == floor(v) && fabs(v) < 9007199254740992.0) {
		if (v < 0) {
			buf[0] = '-';
			return 1 + format_uint(buf + 1, (uint64_t)-v);
		}
		return format_uint(buf, (uint64_t)v);
	}
	for (prec = 15; prec <= 17; prec++) {
		n = snprintf(buf, EXPO_NUMBER_MAX, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	/* Whatever the locale's decimal separator was, Prometheus wants '.'. */
	for (p = buf; *p; p++)
		if (!((*p >= '0' && *p <= '9') || *p == '-' || *p == '+' || *p == 'e' || *p == 'E'))
			*p = '.';
	return (size_t)n;
}

void expo_put_number(struct strbuf *sb, double v)
{
	char buf[EXPO_NUMBER_MAX];
	size_t n = expo_format_number(buf, v);

	strbuf_append(sb, buf, n);
}

void expo_put_label_value(struct strbuf *sb, const char *value)
{
	const unsigned char *s = (const unsigned char *)value;

	while (*s) {
		size_t n;

		switch (*s) {
		case '\\':
			strbuf_append(sb, "\\\\", 2);
			s++;
			continue;
		case '"':
			strbuf_append(sb, "\\\"", 2);
			s++;
			continue;
		case '\n':
			strbuf_append(sb, "\\n", 2);
			s++;
			continue;
		}
		n = utf8_valid_len(s);
		if (n == 0) {
			strbuf_append(sb, "\xef\xbf\xbd", 3);
			s++;
			continue;
		}
		strbuf_append(sb, (const char *)s, n);
		s += n;
	}
}

void expo_put_help_text(struct strbuf *sb, const char *text)
{
	for (; *text; text++) {
		if (*text == '\\')
			strbuf_append(sb, "\\\\", 2);
		else if (*text == '\n')
			strbuf_append(sb, "\\n", 2);
		else
			strbuf_putc(sb, *text);
	}
}

void expo_put_family_header(struct strbuf *sb, const struct metric_desc *desc)
{
	strbuf_puts(sb, "# HELP ");
	strbuf_puts(sb, desc->name);
	strbuf_putc(sb, ' ');
	expo_put_help_text(sb, desc->help);
	strbuf_puts(sb, "\n# TYPE ");
	strbuf_puts(sb, desc->name);
	strbuf_putc(sb, ' ');
	strbuf_puts(sb, metric_type_name(desc->type));
	strbuf_putc(sb, '\n');
}

static void put_label(struct strbuf *sb, bool *first, const char *name, const char *value)
{
	strbuf_putc(sb, *first ? '{' : ',');
	*first = false;
	strbuf_puts(sb, name);
	strbuf_append(sb, "=\"", 2);
	expo_put_label_value(sb, value ? value : "");
	strbuf_putc(sb, '"');
}

void expo_put_sample(struct strbuf *sb, const char *name, const char *suffix,
		     const struct metric_desc *desc, const char *const *label_values,
		     const char *extra_name, const char *extra_value, double value)
{
	expo_put_sample_open(sb, name, suffix, desc, label_values, extra_name, extra_value, value);
	strbuf_putc(sb, '\n');
}

void expo_put_sample_open(struct strbuf *sb, const char *name, const char *suffix,
			  const struct metric_desc *desc, const char *const *label_values,
			  const char *extra_name, const char *extra_value, double value)
{
	bool first = true;
	unsigned i;

	strbuf_puts(sb, name);
	if (suffix)
		strbuf_puts(sb, suffix);
	for (i = 0; i < desc->n_labels; i++)
		put_label(sb, &first, desc->labels[i], label_values ? label_values[i] : "");
	if (extra_name)
		put_label(sb, &first, extra_name, extra_value);
	if (!first)
		strbuf_putc(sb, '}');
	strbuf_putc(sb, ' ');
	expo_put_number(sb, value);
}
