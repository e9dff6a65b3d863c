// SPDX-License-Identifier: GPL-2.0
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include "strbuf.h"

void strbuf_init(struct strbuf *sb)
{
	*sb = (struct strbuf){ 0 };
}

void strbuf_free(struct strbuf *sb)
{
	free(sb->data);
	strbuf_init(sb);
}

void strbuf_reset(struct strbuf *sb)
{
	sb->len = 0;
	sb->failed = false;
	if (sb->data)
		sb->data[0] = '\0';
}

/* Sticky: every later append is a no-op, and strbuf_failed() says so. */
static bool mark_failed(struct strbuf *sb)
{
	sb->failed = true;
	return false;
}

bool strbuf_reserve(struct strbuf *sb, size_t extra)
{
	size_t need, cap;
	char *p;

	if (sb->failed)
		return false;
	if (extra > SIZE_MAX - sb->len - 1)
		return mark_failed(sb);
	need = sb->len + extra + 1;
	if (need <= sb->cap)
		return true;
	cap = sb->cap ? sb->cap : 256;
	while (cap < need) {
		if (cap > SIZE_MAX / 2)
			return mark_failed(sb);
		cap *= 2;
	}
	p = realloc(sb->data, cap);
	if (!p)
		return mark_failed(sb);
	/* A fresh allocation holds garbage; keep data NUL-terminated. */
	p[sb->len] = '\0';
	sb->data = p;
	sb->cap = cap;
	return true;
}

void strbuf_append(struct strbuf *sb, const char *s, size_t n)
{
	if (!strbuf_reserve(sb, n))
		return;
	memcpy(sb->data + sb->len, s, n);
	sb->len += n;
	sb->data[sb->len] = '\0';
}

void strbuf_puts(struct strbuf *sb, const char *s)
{
	strbuf_append(sb, s, strlen(s));
}

void strbuf_putc(struct strbuf *sb, char c)
{
	strbuf_append(sb, &c, 1);
}

void strbuf_printf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (sb->failed)
		return;
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0) {
		sb->failed = true;
		return;
	}
	if (!strbuf_reserve(sb, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	sb->len += (size_t)n;
}

char *strbuf_steal(struct strbuf *sb, size_t *len)
{
	char *p;

	if (sb->failed || !strbuf_reserve(sb, 0)) {
		strbuf_free(sb);
		return NULL;
	}
	p = sb->data;
	if (len)
		*len = sb->len;
	strbuf_init(sb);
	return p;
}
