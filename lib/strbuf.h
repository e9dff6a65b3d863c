/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_STRBUF_H
#define MEMWATCH_STRBUF_H

#include <stdbool.h>
#include <stddef.h>
#include "macro.h"

/* Growable byte buffer. An allocation failure is sticky: later appends are
 * no-ops and strbuf_failed() says so, so callers check once at the end. */
struct strbuf {
	char *data;
	size_t len;
	size_t cap;
	bool failed;
};

void strbuf_init(struct strbuf *sb);
void strbuf_free(struct strbuf *sb);
void strbuf_reset(struct strbuf *sb);
bool strbuf_reserve(struct strbuf *sb, size_t extra);
void strbuf_append(struct strbuf *sb, const char *s, size_t n);
void strbuf_puts(struct strbuf *sb, const char *s);
void strbuf_putc(struct strbuf *sb, char c);
void strbuf_printf(struct strbuf *sb, const char *fmt, ...) _printf_(2, 3);
/* Hands the NUL-terminated buffer to the caller; the strbuf is left empty. */
char *strbuf_steal(struct strbuf *sb, size_t *len);

static inline bool strbuf_failed(const struct strbuf *sb)
{
	return sb->failed;
}

#endif
