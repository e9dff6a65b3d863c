/* SPDX-License-Identifier: GPL-2.0 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "psi.h"

enum {
	PSI_FIELD_AVG10 = 1u << 0,
	PSI_FIELD_AVG60 = 1u << 1,
	PSI_FIELD_AVG300 = 1u << 2,
	PSI_FIELD_TOTAL = 1u << 3,
	PSI_FIELD_ALL = PSI_FIELD_AVG10 | PSI_FIELD_AVG60 | PSI_FIELD_AVG300 | PSI_FIELD_TOTAL,
};

/* Fractional digits kept; more are accepted but ignored. Keeps the
 * numerator below 2^53 so the final division is the only rounding. */
#define PSI_FRAC_DIGITS_MAX 9

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool token_eq(const char *p, size_t n, const char *s)
{
	return strlen(s) == n && memcmp(p, s, n) == 0;
}

/* Locale-independent "<digits>[.<digits>]" in [0, 100]. strtod() would
 * honour LC_NUMERIC and stop at the '.' under e.g. de_DE. */
static int parse_percent(const char *p, const char *end, double *ret)
{
	uint64_t ip = 0, frac = 0, scale = 1;
	double v;

	if (p == end || !is_digit(*p))
		return -EINVAL;

	for (; p < end && is_digit(*p); p++) {
		ip = ip * 10 + (uint64_t) (*p - '0');
		if (ip > 100)
			return -EINVAL;
	}

	if (p < end) {
		unsigned n = 0;

		if (*p++ != '.' || p == end)
			return -EINVAL;

		for (; p < end; p++, n++) {
			if (!is_digit(*p))
				return -EINVAL;
			if (n < PSI_FRAC_DIGITS_MAX) {
				frac = frac * 10 + (uint64_t) (*p - '0');
				scale *= 10;
			}
		}
	}

	/* Both operands are exact, so this rounds once, like strtod(). */
	v = (double) (ip * scale + frac) / (double) scale;
	if (v > 100.0)
		return -EINVAL;

	*ret = v;
	return 0;
}

static int parse_u64(const char *p, const char *end, uint64_t *ret)
{
	uint64_t v = 0;

	if (p == end)
		return -EINVAL;

	for (; p < end; p++) {
		unsigned d;

		if (!is_digit(*p))
			return -EINVAL;
		d = (unsigned) (*p - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -EINVAL;
		v = v * 10 + d;
	}

	*ret = v;
	return 0;
}

/* Parses the "key=value ..." part after "some"/"full". */
static int parse_fields(const char *p, const char *end, struct psi_line *ret)
{
	struct psi_line l = {0};
	unsigned seen = 0;
	int r;

	for (;;) {
		const char *tok, *eq;
		unsigned bit;

		while (p < end && is_blank(*p))
			p++;
		if (p == end)
			break;

		tok = p;
		while (p < end && !is_blank(*p))
			p++;

		eq = memchr(tok, '=', (size_t) (p - tok));
		if (!eq || eq == tok)
			return -EINVAL;

		if (token_eq(tok, (size_t) (eq - tok), "avg10")) {
			bit = PSI_FIELD_AVG10;
			r = parse_percent(eq + 1, p, &l.avg10);
		} else if (token_eq(tok, (size_t) (eq - tok), "avg60")) {
			bit = PSI_FIELD_AVG60;
			r = parse_percent(eq + 1, p, &l.avg60);
		} else if (token_eq(tok, (size_t) (eq - tok), "avg300")) {
			bit = PSI_FIELD_AVG300;
			r = parse_percent(eq + 1, p, &l.avg300);
		} else if (token_eq(tok, (size_t) (eq - tok), "total")) {
			bit = PSI_FIELD_TOTAL;
			r = parse_u64(eq + 1, p, &l.total_usec);
		} else
			continue; /* newer kernels may add fields */

		if (r < 0)
			return r;
		/* A repeated field makes the line ambiguous. */
		if (seen & bit)
			return -EINVAL;
		seen |= bit;
	}

	if (seen != PSI_FIELD_ALL)
		return -EINVAL;

	*ret = l;
	return 0;
}

int psi_parse(const char *buf, size_t len, struct psi_stats *out)
{
	struct psi_stats s = {0};
	const char *p, *end;
	int r;

	if (!out || (!buf && len > 0))
		return -EINVAL;
	if (len == 0)
		return -EINVAL; /* no "some"; also avoids NULL + 0 */

	p = buf;
	end = buf + len;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t) (end - p));
		const char *line_end = eol ? eol : end;
		const char *tok;

		while (p < line_end && is_blank(*p))
			p++;
		while (line_end > p && (is_blank(line_end[-1]) || line_end[-1] == '\r'))
			line_end--;

		tok = p;
		while (p < line_end && !is_blank(*p))
			p++;

		/* Duplicate lines: last one wins, as in meminfo_parse(). */
		if (token_eq(tok, (size_t) (p - tok), "some")) {
			r = parse_fields(p, line_end, &s.some);
			if (r < 0)
				return r;
			s.has_some = true;
		} else if (token_eq(tok, (size_t) (p - tok), "full")) {
			r = parse_fields(p, line_end, &s.full);
			if (r < 0)
				return r;
			s.has_full = true;
		}
		/* Other lines (blank, garbage) are ignored. */

		p = eol ? eol + 1 : end;
	}

	if (!s.has_some)
		return -EINVAL;

	*out = s;
	return 0;
}
