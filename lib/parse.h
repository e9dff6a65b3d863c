/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_PARSE_H
#define MEMWATCH_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The rules every parser of kernel and configuration text in lib/ shares.
 * Text is a range [p, end): never NUL-terminated, and NUL bytes in it are
 * ordinary (non-blank, non-digit) characters.
 *
 *  - A blank is ' ' or '\t'. '\r' is not a blank: only a line's trailing
 *    run of blanks and '\r' (CRLF files) is stripped (parse_trim()), so a
 *    '\r' inside a line is junk.
 *  - Numbers are decimal, nothing else: no blank, no '+', no hex, no
 *    exponent. A number must fill its range exactly; the caller trims.
 *  - Empty input is -ENODATA, so callers can tell a missing value from a
 *    malformed one (-EINVAL); out of range is -ERANGE. *ret is written only
 *    on success. */

/* Whether [buf, buf + len) holds any text: no file these parsers read is
 * ever empty, and it keeps NULL + 0 out of their pointer arithmetic. */
bool parse_text_present(const char *buf, size_t len);

bool parse_is_blank(char c);
bool parse_is_digit(char c);

/* memcmp, not strcmp: [p, p + n) may hold NUL bytes. */
bool parse_token_eq(const char *p, size_t n, const char *s);

const char *parse_skip_blanks(const char *p, const char *end);
/* The end of the word at p: the first blank or end. */
const char *parse_word_end(const char *p, const char *end);
/* The end of [p, end) without its trailing run of blanks and '\r'. */
const char *parse_trim_end(const char *p, const char *end);
/* Leading blanks and a trailing run of blanks and '\r' off [*p, *end). */
void parse_trim(const char **p, const char **end);

struct parse_line {
	const char *start, *end; /* without the '\n' */
	bool terminated;         /* a '\n' ended it; the last line of a short read has none */
};

/* The line at *p, up to '\n' or end; advances *p past it. false at end. */
bool parse_next_line(const char **p, const char *end, struct parse_line *ret);

/* Calls fn on each line in turn; returns the first negative return of fn,
 * or 0. */
int parse_lines(const char *buf, size_t len, int (*fn)(const struct parse_line *line, void *userdata),
		void *userdata);

/* "<key><blanks><value>" of a trimmed line: the key is the first word, the
 * value the rest after its blanks (possibly empty). Returns false when the
 * line is empty. */
struct parse_kv {
	const char *key;
	size_t key_len;
	const char *val, *val_end;
};
bool parse_split_kv(const char *p, const char *end, struct parse_kv *ret);

/* A uint64_t member of a parser's output struct, found by its key. */
struct parse_field {
	const char *key;
	size_t offset;
	unsigned flag; /* its bit in the struct's present mask */
};

#define PARSE_FIELD(type, k, member, f) { k, offsetof(type, member), f }

const struct parse_field *parse_field_lookup(const struct parse_field *fields, size_t n, const char *key,
					     size_t key_len);
/* Stores v in obj's member that f names, and sets f's bit in *present. */
void parse_field_set(void *obj, unsigned *present, const struct parse_field *f, uint64_t v);

/* The digits at *p, as many as there are; advances *p past them. -EINVAL
 * when *p is not a digit (or p == end), -ERANGE past UINT64_MAX. */
int parse_u64_prefix(const char **p, const char *end, uint64_t *ret);

/* "<digits>" filling [p, end). */
int parse_u64(const char *p, const char *end, uint64_t *ret);

/* "-?<digits>" filling [p, end), in [INT64_MIN, INT64_MAX]; "-" alone is
 * -EINVAL, "-0" is 0. */
int parse_i64(const char *p, const char *end, int64_t *ret);

/* "<digits>[.<digits>]" filling [p, end), locale-independent (strtod()
 * would follow LC_NUMERIC and take blanks, signs, hex, "inf"). The integer
 * part is at most 2^53 (-ERANGE past it). Up to 9 fractional digits count,
 * fewer where the integer part is so large that more would not be exact
 * before the one rounding; later digits are accepted and ignored. */
int parse_double(const char *p, const char *end, double *ret);

#endif
