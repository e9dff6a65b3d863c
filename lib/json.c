// SPDX-License-Identifier: GPL-2.0
#include <math.h>
#include <stdint.h>
#include "expo.h"
#include "json.h"
#include "utf8.h"

void json_put_string(struct strbuf *sb, const char *str)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");

	strbuf_putc(sb, '"');
	while (*s) {
		size_t n;

		if (*s == '"' || *s == '\\') {
			strbuf_putc(sb, '\\');
			strbuf_putc(sb, (char)*s++);
			continue;
		}
		if (*s < 0x20 || *s == 0x7f) {
			strbuf_printf(sb, "\\u%04x", *s++);
			continue;
		}
		n = utf8_valid_len(s);
		if (n == 0) {
			strbuf_append(sb, "\\ufffd", 6);
			s++;
			continue;
		}
		strbuf_append(sb, (const char *)s, n);
		s += n;
	}
	strbuf_putc(sb, '"');
}

void json_put_number(struct strbuf *sb, double v)
{
	if (!isfinite(v)) {
		strbuf_puts(sb, "null");
		return;
	}
	expo_put_number(sb, v);
}
