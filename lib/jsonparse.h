/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_JSONPARSE_H
#define MEMWATCH_JSONPARSE_H

#include <stdbool.h>
#include <stddef.h>

/* A small JSON reader for the daemon's own API (memwatchd --top): a tree of
 * values, strict RFC 8259 syntax, nesting limited so hostile input cannot
 * exhaust the stack. */

enum json_type { JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT };

struct json_value {
	enum json_type type;
	bool boolean;
	double number;
	char *string;            /* JSON_STRING: UTF-8, NUL-terminated */
	struct json_value *items; /* JSON_ARRAY and JSON_OBJECT */
	char **keys;             /* JSON_OBJECT: keys[i] names items[i] */
	size_t n;
};

#define JSON_MAX_DEPTH 64

/* Returns 0, -EINVAL on a syntax error (with *error_offset set), -ENOMEM. */
int json_parse(const char *text, size_t len, struct json_value **ret, size_t *error_offset);
void json_free(struct json_value *v);

/* Member of an object, or NULL (also when v is not an object). */
const struct json_value *json_get(const struct json_value *v, const char *key);
/* The number, or NAN when v is missing or not a number. */
double json_number(const struct json_value *v);
/* The string, or "" when v is missing or not a string. */
const char *json_string(const struct json_value *v);

#endif
