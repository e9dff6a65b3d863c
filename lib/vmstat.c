/* SPDX-License-Identifier: GPL-2.0 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "macro.h"
#include "parse.h"
#include "vmstat.h"

/* The kernel's zone names as printed in "<item>_<zone>" keys (TEXTS_FOR_ZONES
 * plus "device"). A fixed list rather than "any suffix": pgscan_direct has
 * non-zone siblings (pgscan_direct_throttle), and it bounds the state. */
static const char *const zone_names[] = {
	"dma", "dma32", "normal", "high", "movable", "device",
};

#define VMSTAT_ZONES ARRAY_SIZE(zone_names)
#define VMSTAT_SLOTS (1 + VMSTAT_ZONES) /* [0]: plain key, [1 + i]: zone i */

struct vmstat_field {
	const char *key;
	size_t key_len;
	size_t offset;
	uint64_t flag;
	bool plain; /* "<key>" counts */
	bool zoned; /* "<key>_<zone>" counts */
};

#define FIELD(k, m, f, p, z) { k, sizeof(k) - 1, offsetof(struct vmstat, m), f, p, z }

static const struct vmstat_field vmstat_fields[] = {
	FIELD("pgfault", pgfault, VMSTAT_HAS_PGFAULT, true, false),
	FIELD("pgmajfault", pgmajfault, VMSTAT_HAS_PGMAJFAULT, true, false),
	FIELD("pgfree", pgfree, VMSTAT_HAS_PGFREE, true, false),
	FIELD("pgalloc", pgalloc, VMSTAT_HAS_PGALLOC, false, true),
	FIELD("allocstall", allocstall, VMSTAT_HAS_ALLOCSTALL, true, true),
	FIELD("pgscan_kswapd", pgscan_kswapd, VMSTAT_HAS_PGSCAN_KSWAPD, true, true),
	FIELD("pgscan_direct", pgscan_direct, VMSTAT_HAS_PGSCAN_DIRECT, true, true),
	FIELD("pgsteal_kswapd", pgsteal_kswapd, VMSTAT_HAS_PGSTEAL_KSWAPD, true, true),
	FIELD("pgsteal_direct", pgsteal_direct, VMSTAT_HAS_PGSTEAL_DIRECT, true, true),
	FIELD("oom_kill", oom_kill, VMSTAT_HAS_OOM_KILL, true, false),
	FIELD("compact_stall", compact_stall, VMSTAT_HAS_COMPACT_STALL, true, false),
	FIELD("compact_fail", compact_fail, VMSTAT_HAS_COMPACT_FAIL, true, false),
	FIELD("thp_fault_alloc", thp_fault_alloc, VMSTAT_HAS_THP_FAULT_ALLOC, true, false),
	FIELD("thp_fault_fallback", thp_fault_fallback, VMSTAT_HAS_THP_FAULT_FALLBACK, true, false),
	FIELD("compact_success", compact_success, VMSTAT_HAS_COMPACT_SUCCESS, true, false),
	FIELD("compact_daemon_wake", compact_daemon_wake, VMSTAT_HAS_COMPACT_DAEMON_WAKE, true, false),
	FIELD("thp_fault_fallback_charge", thp_fault_fallback_charge, VMSTAT_HAS_THP_FAULT_FALLBACK_CHARGE, true, false),
	FIELD("thp_collapse_alloc_failed", thp_collapse_alloc_failed, VMSTAT_HAS_THP_COLLAPSE_ALLOC_FAILED, true, false),
	FIELD("thp_file_fallback", thp_file_fallback, VMSTAT_HAS_THP_FILE_FALLBACK, true, false),
	FIELD("thp_file_fallback_charge", thp_file_fallback_charge, VMSTAT_HAS_THP_FILE_FALLBACK_CHARGE, true, false),
	FIELD("thp_zero_page_alloc_failed", thp_zero_page_alloc_failed, VMSTAT_HAS_THP_ZERO_PAGE_ALLOC_FAILED, true,
	      false),
#define WORKINGSET_FIELDS(name, kind)                                                                        \
	FIELD("workingset_" name "_anon", workingset[kind][VMSTAT_WS_ANON],                                  \
	      VMSTAT_HAS_WORKINGSET(kind, VMSTAT_WS_ANON), true, false),                                     \
	FIELD("workingset_" name "_file", workingset[kind][VMSTAT_WS_FILE],                                  \
	      VMSTAT_HAS_WORKINGSET(kind, VMSTAT_WS_FILE), true, false),                                     \
	FIELD("workingset_" name, workingset[kind][VMSTAT_WS_UNSPLIT], VMSTAT_HAS_WORKINGSET(kind, VMSTAT_WS_UNSPLIT), \
	      true, false)
	WORKINGSET_FIELDS("refault", VMSTAT_WS_REFAULT),
	WORKINGSET_FIELDS("activate", VMSTAT_WS_ACTIVATE),
	WORKINGSET_FIELDS("restore", VMSTAT_WS_RESTORE),
#undef WORKINGSET_FIELDS
};

/* Parse-local state of one field: the last value seen for each key. */
struct field_state {
	uint64_t value[VMSTAT_SLOTS];
	unsigned seen;  /* bit per slot */
	bool dropped;   /* a key of it was cut by a short read */
};

/* Finds the field and slot a key feeds, or returns false. The first byte
 * rules out most of the file's ~180 keys (every nr_*) before any compare. */
static bool field_lookup(const char *key, size_t n, size_t *ret_field, size_t *ret_slot)
{
	for (size_t i = 0; n && i < ARRAY_SIZE(vmstat_fields); i++) {
		const struct vmstat_field *f = &vmstat_fields[i];
		size_t klen = f->key_len;

		if (key[0] != f->key[0] || n < klen)
			continue;
		if (f->plain && n == klen && memcmp(key, f->key, klen) == 0) {
			*ret_field = i;
			*ret_slot = 0;
			return true;
		}

		if (!f->zoned || n <= klen + 1 || memcmp(key, f->key, klen) != 0 || key[klen] != '_')
			continue;

		for (size_t z = 0; z < VMSTAT_ZONES; z++)
			if (parse_token_eq(key + klen + 1, n - klen - 1, zone_names[z])) {
				*ret_field = i;
				*ret_slot = 1 + z;
				return true;
			}
	}

	return false;
}

struct parse_state {
	struct field_state fields[ARRAY_SIZE(vmstat_fields)];
	/* Bytes a line the fields want may start with: the file's ~190 lines
	 * are mostly nr_* and numa_*, ruled out before anything is scanned. */
	bool may_start[256];
};

static int parse_line(const struct parse_line *line, void *userdata)
{
	const char *p = line->start, *end = line->end, *key, *raw_end = end;
	bool terminated = line->terminated;
	struct parse_state *ps = userdata;
	struct field_state *st = ps->fields;
	size_t field, slot;
	uint64_t v;
	int r;

	if (p < end && !ps->may_start[(unsigned char)*p])
		return 0;
	parse_trim(&p, &end);
	key = p;
	p = parse_word_end(p, end);
	/* A key running into the end of a short read may itself be cut
	 * ("pgscan_direct" of "pgscan_direct_throttle"): not a key yet. */
	if (!terminated && p == raw_end)
		return 0;
	if (!field_lookup(key, (size_t) (p - key), &field, &slot))
		return 0; /* unknown keys, blank lines and garbage are not validated */

	p = parse_skip_blanks(p, end);

	r = parse_u64(p, end, &v);
	if (r < 0 && r != -ENODATA)
		return -EINVAL;
	if (!terminated) {
		/* Short read: the digits may be cut off. Drop the whole field
		 * rather than report a number (or a partial sum) that is wrong. */
		st[field].dropped = true;
		return 0;
	}
	if (r < 0)
		return -EINVAL; /* known key without a value */

	/* Duplicate keys: last one wins, as in meminfo_parse(). */
	st[field].value[slot] = v;
	st[field].seen |= 1u << slot;
	return 0;
}

int vmstat_parse(const char *buf, size_t len, struct vmstat *out)
{
	struct parse_state ps = { .may_start = { [' '] = true, ['\t'] = true } };
	struct field_state *st = ps.fields;
	struct vmstat vs = {0};
	int r;

	if (!out || !parse_text_present(buf, len))
		return -EINVAL; /* never a valid /proc/vmstat */

	for (size_t i = 0; i < ARRAY_SIZE(vmstat_fields); i++)
		ps.may_start[(unsigned char)vmstat_fields[i].key[0]] = true;
	r = parse_lines(buf, len, parse_line, &ps);
	if (r < 0)
		return r;

	for (size_t i = 0; i < ARRAY_SIZE(vmstat_fields); i++) {
		uint64_t sum = 0;

		if (st[i].dropped || st[i].seen == 0)
			continue;

		for (size_t s = 0; s < VMSTAT_SLOTS; s++) {
			if (!(st[i].seen & (1u << s)))
				continue;
			if (st[i].value[s] > UINT64_MAX - sum)
				return -EINVAL;
			sum += st[i].value[s];
		}

		memcpy((char *) &vs + vmstat_fields[i].offset, &sum, sizeof(sum));
		vs.present |= vmstat_fields[i].flag;
	}

	*out = vs;
	return 0;
}

void workingset_resolve(const uint64_t value[3], const bool has[3], uint64_t ret[2], bool ret_has[2])
{
	if (has[VMSTAT_WS_ANON] || has[VMSTAT_WS_FILE]) {
		ret[0] = value[VMSTAT_WS_ANON];
		ret[1] = value[VMSTAT_WS_FILE];
		ret_has[0] = has[VMSTAT_WS_ANON];
		ret_has[1] = has[VMSTAT_WS_FILE];
		return;
	}
	/* Before 5.9 only file pages left shadow entries. */
	ret[0] = 0;
	ret[1] = value[VMSTAT_WS_UNSPLIT];
	ret_has[0] = false;
	ret_has[1] = has[VMSTAT_WS_UNSPLIT];
}

void vmstat_workingset(const struct vmstat *vs, unsigned kind, uint64_t ret[2], bool ret_has[2])
{
	bool has[3];

	for (unsigned v = 0; v < 3; v++)
		has[v] = vs->present & VMSTAT_HAS_WORKINGSET(kind, v);
	workingset_resolve(vs->workingset[kind], has, ret, ret_has);
}
