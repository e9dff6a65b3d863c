// SPDX-License-Identifier: GPL-2.0
#include <stdint.h>
#include "utf8.h"

/* Length of the valid UTF-8 sequence at s, or 0 if it is not valid. */
size_t utf8_valid_len(const unsigned char *s)
{
	unsigned char c = s[0];
	size_t n, i;
	uint32_t cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

size_t utf8_chars(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t chars = 0, n;

	for (; *s; s += n ? n : 1, chars++)
		n = utf8_valid_len(s);
	return chars;
}

const char *utf8_tail(const char *str, size_t max_chars)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t chars = utf8_chars(str), n;

	for (; chars > max_chars; s += n ? n : 1, chars--)
		n = utf8_valid_len(s);
	return (const char *)s;
}
