/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_SCRAPE_RHYTHM_H
#define MEMWATCH_SCRAPE_RHYTHM_H

#include <stdint.h>

/* When the next scrape of /metrics will come, from when the last ones came:
 * Prometheus scrapes a target at a fixed interval and phase. A window at rest
 * can then go on to just before that scrape and be published fresh for it,
 * instead of ending every quiet_read_interval whether anyone reads or not. */

#define SCRAPE_RHYTHM_KEPT 3

struct scrape_rhythm {
	uint64_t at_usec[SCRAPE_RHYTHM_KEPT]; /* the last scrapes, oldest first */
	unsigned n;
};

void scrape_rhythm_note(struct scrape_rhythm *r, uint64_t now_usec);
/* The first scrape due after `after`, on the period of the last scrapes,
 * where their intervals agree within a tenth (one scraper, or scrapers in
 * step) and none was missed since (now is less than one and a half periods
 * past the last); 0 otherwise. */
uint64_t scrape_rhythm_next_after(const struct scrape_rhythm *r, uint64_t now_usec, uint64_t after_usec);

#endif
