/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_JSON_READ_H
#define MEMWATCH_JSON_READ_H

#include <stddef.h>

/* A small, strict reader of JSON text (RFC 8259) for the few values the
 * daemon takes from other programs' state files: a member of an object by
 * its key, the elements of an array, a string's value. No tree is built:
 * each call walks the text again, and every value it walks over is checked,
 * so text that is truncated or not JSON is refused, never half-read.
 * Nesting deeper than JSON_READ_MAX_DEPTH is refused too (the walk recurses).
 *
 * Errors: -EBADMSG the text is not valid JSON or not of the kind asked for
 * (an object, an array, a string); -ENOENT no such member; -ENOBUFS a string
 * longer than the buffer given for it. */
#define JSON_READ_MAX_DEPTH 64

/* A piece of the text: a value, with no whitespace around it. */
struct json_span {
	const char *p;
	size_t len;
};

/* s is exactly one JSON value, with only whitespace around it. Returns 0 and
 * the value (whitespace trimmed) in *ret, or -EBADMSG. */
int json_read_value(const char *s, size_t len, struct json_span *ret);

/* The value of the member key in the object obj. A key given twice: its last
 * value, as Go's encoding/json (which wrote the files read here) takes it. */
int json_read_member(struct json_span obj, const char *key, struct json_span *ret);

/* Walks the array arr: *pos starts at 0. Returns 1 and the next element in
 * *ret, 0 after the last one, or -EBADMSG. */
int json_read_next(struct json_span arr, size_t *pos, struct json_span *ret);

/* The value of the string v, escapes decoded (\u with surrogate pairs into
 * UTF-8), NUL-terminated, into buf. A string holding U+0000 or a lone
 * surrogate is -EBADMSG, as is one whose text is not valid UTF-8. */
int json_read_string(struct json_span v, char *buf, size_t size);

#endif
