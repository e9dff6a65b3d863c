/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_CGROUPFS_H
#define MEMWATCH_CGROUPFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "vmstat.h"

/* Parsers for cgroup memory controller files, v1 and v2. None of them needs
 * buf NUL-terminated. Common rules:
 *  - lines end in "\n" or "\r\n"; blanks are spaces and tabs;
 *  - values are unsigned decimal: a sign, junk or > UINT64_MAX is -EINVAL;
 *  - an empty buf is -EINVAL (no such file is ever empty);
 *  - the kernel ends every line with "\n". A last line without one is a short
 *    read whose digits may be cut: never taken as a value;
 *  - outputs are written only on success unless stated otherwise. */

/* One number or "max": memory.current, memory.max, memory.high,
 * memory.usage_in_bytes, memory.limit_in_bytes, memory.failcnt.
 * "max" gives *value = UINT64_MAX and *is_max = true. is_max may be NULL.
 * Exactly one line, "\n"-terminated, is required. Returns 0 or -EINVAL. */
int cgroup_parse_u64_or_max(const char *buf, size_t len, uint64_t *value, bool *is_max);

/* v1 limit_in_bytes reports "no limit" as PAGE_COUNTER_MAX * PAGE_SIZE
 * (9223372036854771712 with 4k pages, other values with other page sizes or
 * older kernels); any value >= 2^62 is taken as unlimited. */
#define CGROUP_V1_UNLIMITED_MIN (UINT64_C(1) << 62)
bool cgroup_v1_limit_is_unlimited(uint64_t v);

/* Flat-keyed "key value" files: v2 memory.events (low high max oom oom_kill
 * oom_group_kill), v1 memory.oom_control (oom_kill_disable under_oom
 * oom_kill), and the like. */
struct cgroup_kv {
	char key[32]; /* NUL-terminated */
	uint64_t value;
};

/* Fills out[0..*n) in file order. Keys are printable ASCII without blanks;
 * a key that does not fit key[] (> 31 bytes) is skipped, like an unknown
 * key would be by a caller. A repeated key keeps its first slot and takes
 * the last value. Blank lines are ignored; an unterminated last line is
 * dropped unless malformed.
 *
 * Returns 0; -EINVAL on a malformed line (then out and *n are untouched);
 * -ENOBUFS when there are more than max distinct keys (then *n is
 * untouched but out[0..max) has been overwritten). */
int cgroup_parse_flat_keyed(const char *buf, size_t len, struct cgroup_kv *out, size_t max,
			    size_t *n);

/* Looks a key up in a cgroup_parse_flat_keyed() result. */
const struct cgroup_kv *cgroup_kv_find(const struct cgroup_kv *kv, size_t n, const char *key);

/* memory.stat, v1 and v2, in bytes. The keys are taken literally: v1 prints
 * "rss"/"cache", not "anon"/"file", so those stay absent there; and v1's
 * unprefixed keys are local to the cgroup, its "total_" ones (and all of
 * v2's) include descendants. */
struct cgroup_memstat {
	uint64_t inactive_file, active_file, anon, file, total_inactive_file;
	/* workingset_{refault,activate,restore}{_anon,_file,} as printed:
	 * [CGROUP_MEMSTAT_LOCAL or _TOTAL (v1's total_ keys)][VMSTAT_WS_* kind]
	 * [VMSTAT_WS_ANON, _FILE, _UNSPLIT] (lib/vmstat.h). v2 prints all
	 * three kinds (split from 5.9, unsplit before, restore from 5.1); v1
	 * prints only the split refaults (5.9+), local and total_. */
	uint64_t workingset[2][3][3];
	unsigned present; /* bitmask of CGROUP_MEMSTAT_HAS_* */
};

enum { CGROUP_MEMSTAT_LOCAL, CGROUP_MEMSTAT_TOTAL };

enum {
	CGROUP_MEMSTAT_HAS_INACTIVE_FILE = 1u << 0,
	CGROUP_MEMSTAT_HAS_ACTIVE_FILE = 1u << 1,
	CGROUP_MEMSTAT_HAS_ANON = 1u << 2,
	CGROUP_MEMSTAT_HAS_FILE = 1u << 3,
	CGROUP_MEMSTAT_HAS_TOTAL_INACTIVE_FILE = 1u << 4,
	CGROUP_MEMSTAT_HAS_WORKINGSET0 = 5, /* the first of 18 bits: */
};
#define CGROUP_MEMSTAT_HAS_WORKINGSET(scope, kind, variant) \
	(1u << (CGROUP_MEMSTAT_HAS_WORKINGSET0 + 9 * (scope) + 3 * (kind) + (variant)))

/* A cgroup's refaults, activations and restores (VMSTAT_WS_* kind) as
 * anon and file figures (workingset_resolve()), hierarchical like usage:
 * v2's keys, v1's total_ ones (the local ones when a kernel has no total_).
 * ret_has[] false: not printed. */
void cgroup_memstat_workingset(const struct cgroup_memstat *ms, unsigned kind, uint64_t ret[2], bool ret_has[2]);

/* Unknown keys are ignored (not validated); a missing key leaves its
 * present bit clear; a repeated key: the last one wins. Returns 0, or
 * -EINVAL when buf is empty or a known key has a malformed value. */
int cgroup_parse_memstat(const char *buf, size_t len, struct cgroup_memstat *out);

#endif
