// SPDX-License-Identifier: GPL-2.0
#include <stddef.h>
#include <strings.h>
#include "accept_encoding.h"
#include "parse.h"

static bool token_eq(const char *p, size_t len, const char *word)
{
	size_t n = 0;

	while (word[n])
		n++;
	return len == n && strncasecmp(p, word, n) == 0;
}

int accept_qvalue_parse(const char *p, size_t len)
{
	int q, scale = 100;
	size_t i;

	if (len == 0 || (p[0] != '0' && p[0] != '1'))
		return -1;
	q = (p[0] - '0') * 1000;
	if (len == 1)
		return q;
	if (p[1] != '.' || len > 5)
		return -1;
	for (i = 2; i < len; i++, scale /= 10) {
		if (!parse_is_digit(p[i]))
			return -1;
		q += (p[i] - '0') * scale;
	}
	return q <= 1000 ? q : -1;
}

/* A coding listed twice keeps the lower weight: when in doubt, plain text. */
static void set_weight(int *slot, int q)
{
	if (*slot < 0 || q < *slot)
		*slot = q;
}

void accept_encoding_init(struct accept_encoding *ae)
{
	*ae = (struct accept_encoding){ .gzip = -1, .identity = -1, .any = -1 };
}

void accept_encoding_parse(struct accept_encoding *ae, const char *value)
{
	const char *p = value;

	if (!value)
		return;
	while (*p) {
		const char *elem_end = p, *tok, *tok_end;
		int q = 1000;

		while (*elem_end && *elem_end != ',')
			elem_end++;
		tok = parse_skip_blanks(p, elem_end);
		tok_end = tok;
		while (tok_end < elem_end && *tok_end != ';' && !parse_is_blank(*tok_end))
			tok_end++;

		/* Parameters: only q means anything; a malformed one makes the coding unacceptable. */
		for (const char *param = tok_end; param < elem_end;) {
			const char *name, *name_end, *val, *val_end;

			param = parse_skip_blanks(param, elem_end);
			if (param == elem_end)
				break;
			if (*param != ';') {
				q = 0;
				break;
			}
			name = parse_skip_blanks(param + 1, elem_end);
			name_end = name;
			while (name_end < elem_end && *name_end != '=' && *name_end != ';' && !parse_is_blank(*name_end))
				name_end++;
			val = parse_skip_blanks(name_end, elem_end);
			val_end = val;
			if (val < elem_end && *val == '=') {
				val = parse_skip_blanks(val + 1, elem_end);
				val_end = val;
				while (val_end < elem_end && *val_end != ';' && !parse_is_blank(*val_end))
					val_end++;
			}
			if (token_eq(name, (size_t)(name_end - name), "q")) {
				q = accept_qvalue_parse(val, (size_t)(val_end - val));
				if (q < 0)
					q = 0;
			}
			param = val_end;
		}

		if (token_eq(tok, (size_t)(tok_end - tok), "gzip") ||
		    token_eq(tok, (size_t)(tok_end - tok), "x-gzip"))
			set_weight(&ae->gzip, q);
		else if (token_eq(tok, (size_t)(tok_end - tok), "identity"))
			set_weight(&ae->identity, q);
		else if (token_eq(tok, (size_t)(tok_end - tok), "*"))
			set_weight(&ae->any, q);

		p = *elem_end ? elem_end + 1 : elem_end;
	}
}

bool accept_encoding_gzip(const struct accept_encoding *ae)
{
	int gzip = ae->gzip >= 0 ? ae->gzip : ae->any >= 0 ? ae->any : 0;

	/* An unnamed identity is acceptable too (RFC 9110 §12.5.3) but has no
	 * weight of its own; only a client that names it can prefer it. */
	return gzip > 0 && (ae->identity < 0 || gzip >= ae->identity);
}
