/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_UTF8_H
#define MEMWATCH_UTF8_H

#include <stddef.h>

/* Length of the valid UTF-8 sequence at s (1 to 4), or 0 if it is not valid:
 * overlong forms, surrogates and code points past U+10FFFF are invalid. */
size_t utf8_valid_len(const unsigned char *s);

#endif
