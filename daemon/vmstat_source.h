/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCHD_VMSTAT_SOURCE_H
#define MEMWATCHD_VMSTAT_SOURCE_H

#include <stdint.h>
#include "vmstat.h"

/* /proc/vmstat, read and parsed at most once per window however many
 * collectors take figures from it: one open file per path, shared, and a
 * parsed table that the first reader of a window fills for the others.
 * Only the main thread uses it (every collector callback runs there). */
struct vmstat_source;

/* A reference to path's source, opened on first use. -errno when path
 * cannot be opened. */
int vmstat_source_open(const char *path, struct vmstat_source **ret);
void vmstat_source_unref(struct vmstat_source *src);

/* The table of the current window: read and parsed on the first call after
 * vmstat_sources_next_window(), the same table (or error) after that. */
int vmstat_source_get(struct vmstat_source *src, const struct vmstat **ret);

/* The core, at each window's end before any collector collects. */
void vmstat_sources_next_window(void);

/* How many times src's file has been read: the tests' counting hook. */
uint64_t vmstat_source_reads(const struct vmstat_source *src);

#endif
