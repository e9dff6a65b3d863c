/* SPDX-License-Identifier: GPL-2.0 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "parse.h"
#include "psi.h"

enum {
	PSI_FIELD_AVG10 = 1u << 0,
	PSI_FIELD_AVG60 = 1u << 1,
	PSI_FIELD_AVG300 = 1u << 2,
	PSI_FIELD_TOTAL = 1u << 3,
	PSI_FIELD_ALL = PSI_FIELD_AVG10 | PSI_FIELD_AVG60 | PSI_FIELD_AVG300 | PSI_FIELD_TOTAL,
};

/* "<digits>[.<digits>]" in [0, 100], the kernel's avg format. */
static int parse_percent(const char *p, const char *end, double *ret)
{
	double v;

	if (parse_double(p, end, &v) < 0 || v > 100.0)
		return -EINVAL;
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

		p = parse_skip_blanks(p, end);
		if (p == end)
			break;

		tok = p;
		p = parse_word_end(p, end);

		eq = memchr(tok, '=', (size_t) (p - tok));
		if (!eq || eq == tok)
			return -EINVAL;

		if (parse_token_eq(tok, (size_t) (eq - tok), "avg10")) {
			bit = PSI_FIELD_AVG10;
			r = parse_percent(eq + 1, p, &l.avg10);
		} else if (parse_token_eq(tok, (size_t) (eq - tok), "avg60")) {
			bit = PSI_FIELD_AVG60;
			r = parse_percent(eq + 1, p, &l.avg60);
		} else if (parse_token_eq(tok, (size_t) (eq - tok), "avg300")) {
			bit = PSI_FIELD_AVG300;
			r = parse_percent(eq + 1, p, &l.avg300);
		} else if (parse_token_eq(tok, (size_t) (eq - tok), "total")) {
			bit = PSI_FIELD_TOTAL;
			r = parse_u64(eq + 1, p, &l.total_usec) < 0 ? -EINVAL : 0;
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
	struct parse_line line;
	const char *p;
	int r;

	if (!out || !parse_text_present(buf, len))
		return -EINVAL; /* no "some" */

	p = buf;
	while (parse_next_line(&p, buf + len, &line)) {
		const char *tok = line.start, *line_end = line.end, *tok_end;

		parse_trim(&tok, &line_end);
		tok_end = parse_word_end(tok, line_end);

		/* Duplicate lines: last one wins, as in meminfo_parse(). */
		if (parse_token_eq(tok, (size_t) (tok_end - tok), "some")) {
			r = parse_fields(tok_end, line_end, &s.some);
			if (r < 0)
				return r;
			s.has_some = true;
		} else if (parse_token_eq(tok, (size_t) (tok_end - tok), "full")) {
			r = parse_fields(tok_end, line_end, &s.full);
			if (r < 0)
				return r;
			s.has_full = true;
		}
		/* Other lines (blank, garbage) are ignored. */
	}

	if (!s.has_some)
		return -EINVAL;

	*out = s;
	return 0;
}
