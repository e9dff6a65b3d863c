/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_JSON_H
#define MEMWATCH_JSON_H

#include "strbuf.h"

/* A JSON string literal: quotes, backslashes and control characters escaped,
 * invalid UTF-8 replaced by U+FFFD, so any comm or path yields valid JSON. */
void json_put_string(struct strbuf *sb, const char *s);
/* Finite numbers as the exposition format prints them; NaN and infinities as null. */
void json_put_number(struct strbuf *sb, double v);

#endif
