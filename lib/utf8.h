/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_UTF8_H
#define MEMWATCH_UTF8_H

#include <stddef.h>

/* Length of the valid UTF-8 sequence at s (1 to 4), or 0 if it is not valid:
 * overlong forms, surrogates and code points past U+10FFFF are invalid. */
size_t utf8_valid_len(const unsigned char *s);

/* Code points as the formats write them (lib/expo.c): a byte that is not
 * valid UTF-8 counts as the one U+FFFD it becomes. */
size_t utf8_chars(const char *s);
/* The end of s that has at most max_chars code points (counted so). */
const char *utf8_tail(const char *s, size_t max_chars);

#endif
