// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>
#include <string.h>
#include "names_table.h"

void names_table_clear(struct names_table *t)
{
	free(t->entries);
	*t = (struct names_table){ NULL, 0 };
}

void names_table_keep_gone(struct names_table *fresh, const struct names_table *old, size_t size,
			   size_t gone_offset, size_t max, int (*compare)(const void *, const void *), uint64_t now_usec,
			   uint64_t keep_usec)
{
	size_t n_fresh = fresh->n;
	char *to = fresh->entries;
	const char *from = old->entries;

	for (size_t i = 0; i < old->n && fresh->n < max; i++) {
		const char *e = from + i * size;
		char *kept = to + fresh->n * size;
		uint64_t gone;

		if (n_fresh && bsearch(e, to, n_fresh, size, compare))
			continue;
		memcpy(&gone, e + gone_offset, sizeof(gone));
		if (!gone)
			gone = now_usec;
		if (now_usec - gone >= keep_usec)
			continue;
		memcpy(kept, e, size);
		memcpy(kept + gone_offset, &gone, sizeof(gone));
		fresh->n++;
	}
	if (fresh->n)
		qsort(fresh->entries, fresh->n, size, compare);
}
