/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_HASH_H
#define MEMWATCH_HASH_H

#include <stdint.h>

/* FNV-1a, 64 bits: the hash of the daemon's open-addressing tables. */
#define FNV1A_OFFSET 14695981039346656037ULL

static inline uint64_t fnv1a_step(uint64_t h, uint64_t value)
{
	return (h ^ value) * 1099511628211ULL;
}

/* h (FNV1A_OFFSET to start) carried on over the bytes of str, NUL excluded. */
static inline uint64_t fnv1a_string(uint64_t h, const char *str)
{
	for (const unsigned char *c = (const unsigned char *)str; *c; c++)
		h = fnv1a_step(h, *c);
	return h;
}

#endif
