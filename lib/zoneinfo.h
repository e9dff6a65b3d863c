/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_ZONEINFO_H
#define MEMWATCH_ZONEINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What si_mem_available() needs from /proc/zoneinfo, in pages, summed over
 * every zone of every node. */
struct zoneinfo {
	uint64_t free_pages;         /* "pages free" */
	uint64_t wmark_low_pages;    /* "low": low_wmark_pages(), the boost included */
	uint64_t totalreserve_pages; /* as calculate_totalreserve_pages() derives it */
	uint64_t managed_pages;
	uint64_t highmem_managed_pages;
	unsigned nodes;
	unsigned zones;
	bool prints_boost; /* a "boost" line (5.10 has none) */
};

/* Parses the text of /proc/zoneinfo (buf need not be NUL-terminated).
 * totalreserve_pages follows the kernel: per zone, the largest lowmem
 * reserve against the zones above it ("protection") plus the high watermark
 * without its boost, at most the zone's managed pages.
 * Returns 0; -EINVAL on a malformed value of a key used, on a zone missing
 * one of them (a file cut short), on a file not ending in a newline, or when
 * there is no zone at all. */
int zoneinfo_parse(const char *buf, size_t len, struct zoneinfo *out);

/* zoneinfo_parse(), and where the file prints no boost (5.10 does not), each
 * zone's boost taken as its min above its share of min_free_pages
 * (vm.min_free_kbytes in pages; 0: none inferred), so that a boosted zone
 * does not inflate totalreserve_pages. */
int zoneinfo_parse_boosted(const char *buf, size_t len, uint64_t min_free_pages, struct zoneinfo *out);

#endif
