/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_NAMES_TABLE_H
#define MEMWATCH_NAMES_TABLE_H

#include <stddef.h>
#include <stdint.h>

/* A table of names read from a listing (kubelet's directories, Podman's
 * containers lists): an array of fixed-size entries, sorted by key. */
struct names_table {
	void *entries;
	size_t n;
};

void names_table_clear(struct names_table *t);

/* Entries of old that the new listing lacks stay, marked gone (the uint64_t
 * at gone_offset: when a listing first lacked it, 0 while listed), until
 * they have been gone for keep_usec or there is no room. fresh has room for
 * max entries; both are sorted by key (compare), and fresh is sorted again
 * after. */
void names_table_keep_gone(struct names_table *fresh, const struct names_table *old, size_t size,
			   size_t gone_offset, size_t max, int (*compare)(const void *, const void *), uint64_t now_usec,
			   uint64_t keep_usec);

#endif
