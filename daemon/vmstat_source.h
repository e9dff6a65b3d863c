/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCHD_VMSTAT_SOURCE_H
#define MEMWATCHD_VMSTAT_SOURCE_H

#include <stdbool.h>
#include <stdint.h>
#include "macro.h"
#include "meminfo.h"
#include "vmstat.h"

/* /proc/vmstat (and /proc/meminfo at the window's end), read and parsed at
 * most once per window however many collectors take figures from it: in a
 * struct vmstat_sources, one open file per path and kind, shared, and a
 * parsed table that the first reader of a window fills for the others. The core makes the one set (core_init), hands it to
 * the collectors (collector_context.vmstat), starts each window on it before
 * any collector collects, and frees it (core_done) after the last collector
 * stopped. Only the main thread uses it (every collector callback runs there). */
struct vmstat_sources;
struct vmstat_source;

int vmstat_sources_new(struct vmstat_sources **ret);
/* Every source opened in set must have been unreferenced. */
void vmstat_sources_free(struct vmstat_sources *set);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct vmstat_sources *, vmstat_sources_free)
/* The core, at each window's end before any collector collects. */
void vmstat_sources_next_window(struct vmstat_sources *set);

/* A reference to path's source in set, opened on first use. -errno when
 * path cannot be opened; -ENOMEM without a set (none could be made). */
int vmstat_source_open(struct vmstat_sources *set, const char *path, struct vmstat_source **ret);
void vmstat_source_unref(struct vmstat_source *src);

/* The table of the current window: read and parsed on the first call after
 * vmstat_sources_next_window(), the same table (or error) after that. */
int vmstat_source_get(struct vmstat_source *src, const struct vmstat **ret);

/* The same for /proc/meminfo: its figures at the window's end, for every
 * collector that reports them or compares with them. */
int meminfo_source_open(struct vmstat_sources *set, const char *path, struct vmstat_source **ret);
int meminfo_source_get(struct vmstat_source *src, const struct meminfo **ret);

/* How many times src's file has been read: the tests' counting hook. */
uint64_t vmstat_source_reads(const struct vmstat_source *src);

#endif
