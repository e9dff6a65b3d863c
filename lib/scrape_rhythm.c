// SPDX-License-Identifier: GPL-2.0
#include "scrape_rhythm.h"

void scrape_rhythm_note(struct scrape_rhythm *r, uint64_t now_usec)
{
	unsigned i;

	if (r->n == SCRAPE_RHYTHM_KEPT) {
		for (i = 1; i < SCRAPE_RHYTHM_KEPT; i++)
			r->at_usec[i - 1] = r->at_usec[i];
		r->n--;
	}
	r->at_usec[r->n++] = now_usec;
}

uint64_t scrape_rhythm_next_after(const struct scrape_rhythm *r, uint64_t now_usec, uint64_t after_usec)
{
	uint64_t first, second, period, last, k;

	if (r->n < SCRAPE_RHYTHM_KEPT)
		return 0;
	/* The clock is monotonic; a scrape noted out of order (two threads) is no rhythm. */
	if (r->at_usec[1] <= r->at_usec[0] || r->at_usec[2] <= r->at_usec[1])
		return 0;
	first = r->at_usec[1] - r->at_usec[0];
	second = r->at_usec[2] - r->at_usec[1];
	if ((first > second ? first - second : second - first) * 10 > second)
		return 0;
	period = second;
	last = r->at_usec[2];
	if (now_usec < last || (now_usec - last) * 2 >= period * 3)
		return 0;
	if (after_usec < last)
		return last + period;
	k = (after_usec - last) / period + 1;
	return last + k * period;
}
