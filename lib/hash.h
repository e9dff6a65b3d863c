/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_HASH_H
#define MEMWATCH_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* FNV-1a, 64 bits: the hash of the daemon's open-addressing tables. */
#define FNV1A_OFFSET 14695981039346656037ULL

static inline uint64_t fnv1a_step(uint64_t h, uint64_t value)
{
	return (h ^ value) * 1099511628211ULL;
}

/* Every bit of x into the low ones, which index the tables (splitmix64's finaliser). */
static inline uint64_t hash_mix(uint64_t x)
{
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* h (FNV1A_OFFSET to start) carried on over the bytes of str, NUL excluded. */
static inline uint64_t fnv1a_string(uint64_t h, const char *str)
{
	for (const unsigned char *c = (const unsigned char *)str; *c; c++)
		h = fnv1a_step(h, *c);
	return h;
}

/* The n bytes at p, eight at a time: the label values of a window, where
 * FNV-1a's byte at a time was most of the seal. */
static inline uint64_t hash_bytes(const char *p, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ n, w;

	for (; n >= 8; p += 8, n -= 8) {
		memcpy(&w, p, 8);
		h = (h ^ w) * 0xbf58476d1ce4e5b9ULL;
		h ^= h >> 31;
	}
	w = 0;
	memcpy(&w, p, n);
	return hash_mix(h ^ w);
}

#endif
