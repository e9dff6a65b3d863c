/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_MEMINFO_H
#define MEMWATCH_MEMINFO_H

#include <stdint.h>
#include <stddef.h>

/* Values from /proc/meminfo, converted to bytes. */
struct meminfo {
	uint64_t total;
	uint64_t free;
	uint64_t available;
	uint64_t buffers;
	uint64_t cached;
	uint64_t swap_cached;
	uint64_t active_file;
	uint64_t inactive_file;
	uint64_t anon_pages;
	uint64_t shmem;
	uint64_t slab_reclaimable;
	uint64_t slab_unreclaimable;
	uint64_t dirty;
	uint64_t writeback;
	uint64_t swap_total;
	uint64_t swap_free;
	uint64_t committed_as;
	uint64_t commit_limit;
	unsigned present; /* bitmask of MEMINFO_HAS_* */
};

enum {
	MEMINFO_HAS_TOTAL = 1u << 0,
	MEMINFO_HAS_FREE = 1u << 1,
	MEMINFO_HAS_AVAILABLE = 1u << 2,
	MEMINFO_HAS_BUFFERS = 1u << 3,
	MEMINFO_HAS_CACHED = 1u << 4,
	MEMINFO_HAS_SWAP_CACHED = 1u << 5,
	MEMINFO_HAS_ACTIVE_FILE = 1u << 6,
	MEMINFO_HAS_INACTIVE_FILE = 1u << 7,
	MEMINFO_HAS_ANON_PAGES = 1u << 8,
	MEMINFO_HAS_SHMEM = 1u << 9,
	MEMINFO_HAS_SLAB_RECLAIMABLE = 1u << 10,
	MEMINFO_HAS_SLAB_UNRECLAIMABLE = 1u << 11,
	MEMINFO_HAS_DIRTY = 1u << 12,
	MEMINFO_HAS_WRITEBACK = 1u << 13,
	MEMINFO_HAS_SWAP_TOTAL = 1u << 14,
	MEMINFO_HAS_SWAP_FREE = 1u << 15,
	MEMINFO_HAS_COMMITTED_AS = 1u << 16,
	MEMINFO_HAS_COMMIT_LIMIT = 1u << 17,
};

/* Parses the text of /proc/meminfo (buf need not be NUL-terminated).
 * Returns 0, or -EINVAL when MemTotal or MemFree is missing or a known
 * key has a malformed value. Unknown keys are ignored. */
int meminfo_parse(const char *buf, size_t len, struct meminfo *out);

struct procfile;
/* Re-reads an open /proc/meminfo and parses it. */
int meminfo_read(struct procfile *pf, struct meminfo *out);
/* MemAvailable in bytes from an open /proc/meminfo; -ENODATA on kernels without it. */
int meminfo_read_available(struct procfile *pf, double *bytes);

#endif
