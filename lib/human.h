/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_HUMAN_H
#define MEMWATCH_HUMAN_H

/* Numbers for people: the status page and memwatch-top. */

#include <stddef.h>

enum human_style {
	HUMAN_UTF8,  /* a missing value is "–", microseconds "µs" */
	HUMAN_ASCII, /* "-" and "us", for any terminal */
};

/* Enough for any of them. */
#define HUMAN_MAX 32

/* 1024-based: "512.0 B", "1.5 KiB" ... "TiB"; the sign kept. Each writes at
 * most len bytes (truncating) and returns buf; NaN is a missing value. */
const char *human_bytes(char *buf, size_t len, double v, enum human_style style);
/* "250 µs" below a millisecond, "12.5 ms" below a second, else "3.00 s". */
const char *human_seconds(char *buf, size_t len, double v, enum human_style style);
/* Rounded to a whole number. */
const char *human_count(char *buf, size_t len, double v, enum human_style style);

#endif
