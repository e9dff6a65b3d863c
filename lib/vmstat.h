/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_VMSTAT_H
#define MEMWATCH_VMSTAT_H

#include <stdint.h>
#include <stddef.h>

/* Event counters from /proc/vmstat, as printed (pages or events). */
struct vmstat {
	uint64_t pgfault, pgmajfault, pgfree;
	uint64_t pgalloc;    /* sum of every pgalloc_<zone> */
	uint64_t allocstall; /* sum of every allocstall_<zone> (and plain "allocstall" on old kernels) */
	/* Plain key on >= 4.8 (node LRUs); the sum of <key>_<zone> before. */
	uint64_t pgscan_kswapd, pgscan_direct, pgsteal_kswapd, pgsteal_direct;
	uint64_t oom_kill; /* >= 4.13 */
	uint64_t compact_stall, compact_fail; /* CONFIG_COMPACTION */
	uint64_t thp_fault_alloc, thp_fault_fallback; /* CONFIG_TRANSPARENT_HUGEPAGE */
	unsigned present; /* bitmask of VMSTAT_HAS_* */
};

enum {
	VMSTAT_HAS_PGFAULT = 1u << 0,
	VMSTAT_HAS_PGMAJFAULT = 1u << 1,
	VMSTAT_HAS_PGFREE = 1u << 2,
	VMSTAT_HAS_PGALLOC = 1u << 3,
	VMSTAT_HAS_ALLOCSTALL = 1u << 4,
	VMSTAT_HAS_PGSCAN_KSWAPD = 1u << 5,
	VMSTAT_HAS_PGSCAN_DIRECT = 1u << 6,
	VMSTAT_HAS_PGSTEAL_KSWAPD = 1u << 7,
	VMSTAT_HAS_PGSTEAL_DIRECT = 1u << 8,
	VMSTAT_HAS_OOM_KILL = 1u << 9,
	VMSTAT_HAS_COMPACT_STALL = 1u << 10,
	VMSTAT_HAS_COMPACT_FAIL = 1u << 11,
	VMSTAT_HAS_THP_FAULT_ALLOC = 1u << 12,
	VMSTAT_HAS_THP_FAULT_FALLBACK = 1u << 13,
};

/* Parses the text of /proc/vmstat (buf need not be NUL-terminated).
 *
 * Summed fields take "<key>_<zone>" for the kernel's zone names (dma,
 * dma32, normal, high, movable, device) only, so pgscan_direct_throttle or
 * pgscan_khugepaged never leak into pgscan_direct.
 *
 * Unknown keys are ignored (their values are not validated), a field whose
 * keys are all absent has its present bit clear, so a file without any of
 * them parses with present == 0. A repeated key: the last one wins (per
 * zone for sums). An unterminated last line is a short read: if its value
 * was reached, the digits may be cut and the field is dropped (the whole
 * sum, for a summed field); if only its key was, the key may be cut too
 * ("pgscan_direct" of "pgscan_direct_throttle") and the line is ignored.
 *
 * Returns 0, or -EINVAL when buf is empty, a known key has a malformed
 * value (empty, sign, non-digit, trailing junk, > UINT64_MAX) or a sum
 * overflows. out is written only on success. */
int vmstat_parse(const char *buf, size_t len, struct vmstat *out);

#endif
