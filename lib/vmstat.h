/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_VMSTAT_H
#define MEMWATCH_VMSTAT_H

#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>

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
	uint64_t compact_success, compact_daemon_wake;
	uint64_t thp_fault_fallback_charge;                 /* >= 5.9 */
	uint64_t thp_collapse_alloc_failed;
	uint64_t thp_file_fallback, thp_file_fallback_charge; /* >= 5.9 */
	uint64_t thp_zero_page_alloc_failed;
	/* Shadow-entry counters as printed: [VMSTAT_WS_*][VMSTAT_WS_ANON, _FILE,
	 * _UNSPLIT]. The split keys are >= 5.9; before, only the unsplit ones
	 * (workingset_refault ...), which count file pages alone: anon pages
	 * had no shadow entries then. workingset_resolve() gives the anon/file
	 * figures for either. */
	uint64_t workingset[3][3];
	uint64_t present; /* bitmask of VMSTAT_HAS_* */
};

#define VMSTAT_HAS_PGFAULT (UINT64_C(1) << 0)
#define VMSTAT_HAS_PGMAJFAULT (UINT64_C(1) << 1)
#define VMSTAT_HAS_PGFREE (UINT64_C(1) << 2)
#define VMSTAT_HAS_PGALLOC (UINT64_C(1) << 3)
#define VMSTAT_HAS_ALLOCSTALL (UINT64_C(1) << 4)
#define VMSTAT_HAS_PGSCAN_KSWAPD (UINT64_C(1) << 5)
#define VMSTAT_HAS_PGSCAN_DIRECT (UINT64_C(1) << 6)
#define VMSTAT_HAS_PGSTEAL_KSWAPD (UINT64_C(1) << 7)
#define VMSTAT_HAS_PGSTEAL_DIRECT (UINT64_C(1) << 8)
#define VMSTAT_HAS_OOM_KILL (UINT64_C(1) << 9)
#define VMSTAT_HAS_COMPACT_STALL (UINT64_C(1) << 10)
#define VMSTAT_HAS_COMPACT_FAIL (UINT64_C(1) << 11)
#define VMSTAT_HAS_THP_FAULT_ALLOC (UINT64_C(1) << 12)
#define VMSTAT_HAS_THP_FAULT_FALLBACK (UINT64_C(1) << 13)
#define VMSTAT_HAS_COMPACT_SUCCESS (UINT64_C(1) << 14)
#define VMSTAT_HAS_COMPACT_DAEMON_WAKE (UINT64_C(1) << 15)
#define VMSTAT_HAS_THP_FAULT_FALLBACK_CHARGE (UINT64_C(1) << 16)
#define VMSTAT_HAS_THP_COLLAPSE_ALLOC_FAILED (UINT64_C(1) << 17)
#define VMSTAT_HAS_THP_FILE_FALLBACK (UINT64_C(1) << 18)
#define VMSTAT_HAS_THP_FILE_FALLBACK_CHARGE (UINT64_C(1) << 19)
#define VMSTAT_HAS_THP_ZERO_PAGE_ALLOC_FAILED (UINT64_C(1) << 20)
/* bit VMSTAT_HAS_WORKINGSET(kind, variant) for workingset[kind][variant] */
#define VMSTAT_HAS_WORKINGSET0 21
#define VMSTAT_HAS_WORKINGSET(k, v) (UINT64_C(1) << (VMSTAT_HAS_WORKINGSET0 + 3 * (k) + (v)))

/* The shadow-entry counters: refaults (evicted pages read back), those of
 * them activated at once (their refault distance fit the active list), and
 * restores (refaulted pages that had been in the workingset). */
enum { VMSTAT_WS_REFAULT, VMSTAT_WS_ACTIVATE, VMSTAT_WS_RESTORE, _VMSTAT_WS_MAX };
enum { VMSTAT_WS_ANON, VMSTAT_WS_FILE, VMSTAT_WS_UNSPLIT };

/* Anon and file figures of one kind from its three printed variants
 * (value[], with has[v] telling which were printed): the split keys when
 * any of them is printed, else the unsplit one as file. ret_has[0] (anon),
 * ret_has[1] (file) tell what is known. Shared with memory.stat, whose keys
 * split the same way. */
void workingset_resolve(const uint64_t value[3], const bool has[3], uint64_t ret[2], bool ret_has[2]);
/* The same for vmstat's workingset[kind]. */
void vmstat_workingset(const struct vmstat *vs, unsigned kind, uint64_t ret[2], bool ret_has[2]);


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
