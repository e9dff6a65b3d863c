/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_FUZZ_H
#define MEMWATCH_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* libFuzzer's entry point: data is a heap copy of exactly size bytes, so an
 * over-read past it is an ASan report. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A property of the parser's answer, not only "no crash": abort() is a crash
 * to libFuzzer, which then saves the input. */
#define FUZZ_CHECK(cond)                                                                     \
	do {                                                                                 \
		if (!(cond)) {                                                               \
			fprintf(stderr, "%s:%d: property violated: %s\n", __FILE__, __LINE__, #cond); \
			abort();                                                             \
		}                                                                            \
	} while (0)

/* The input as a C string, for the parsers that take one: cut at the first NUL. */
static inline char *fuzz_cstring(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/* Whether buf[0..len) holds NUL-terminated text (a fixed-size output field). */
static inline int fuzz_terminated(const char *buf, size_t len)
{
	return memchr(buf, '\0', len) != NULL;
}

#endif
