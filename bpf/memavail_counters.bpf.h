/* SPDX-License-Identifier: GPL-2.0 */
/* MemAvailable computed in BPF the way si_mem_available() computes it, for
 * kernels where neither fexit nor a kretprobe can catch the kernel's own
 * answer. The global counter arrays (vm_zone_stat, vm_node_stat) are not
 * reachable without data symbols in kallsyms, so the per-node and per-zone
 * copies are summed instead, reached through BTF pointers:
 *   current task -> its memory cgroup (or an ancestor) -> nodeinfo[nid]
 *   -> lruvec.pgdat -> the fallback zonelist, which lists the zones of every
 *   node with memory, grouped by node -> each node's pglist_data.
 * totalreserve_pages comes from user space (/proc/zoneinfo). */
#ifndef MEMWATCH_MEMAVAIL_COUNTERS_BPF_H
#define MEMWATCH_MEMAVAIL_COUNTERS_BPF_H

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include "memavail.h"

#define MEMAVAIL_MAX_ZONEREFS 64
#define MEMAVAIL_MEMCG_DEPTH 16

/* Reclaimable slab was a page counter under this name before v5.9. */
enum node_stat_item___pre59 { NR_SLAB_RECLAIMABLE___pre59 = 0 };

/* Once found, a node's pglist_data stays: nodes are never freed. Per object. */
static __u64 memavail_pgdat_cache;

static __always_inline __s64 read_atomic_long(const void *base, __u64 offset)
{
	__s64 v = 0;

	bpf_probe_read_kernel(&v, sizeof(v), (const char *)base + offset);
	return v;
}

static __always_inline struct pglist_data *memavail_find_pgdat(void)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct cgroup_subsys_state *css = NULL;
	struct css_set *cgroups;
	__u32 nid = bpf_get_numa_node_id();
	__u64 nodeinfo_off;
	int id, depth;

	if (memavail_pgdat_cache)
		return (struct pglist_data *)memavail_pgdat_cache;
	if (!bpf_core_enum_value_exists(enum cgroup_subsys_id, memory_cgrp_id) ||
	    !bpf_core_field_exists(struct mem_cgroup, nodeinfo) || !bpf_core_field_exists(struct lruvec, pgdat))
		return NULL;
	id = bpf_core_enum_value(enum cgroup_subsys_id, memory_cgrp_id);
	cgroups = BPF_CORE_READ(task, cgroups);
	if (!cgroups || id < 0 || id >= CGROUP_SUBSYS_COUNT || nid >= 1024)
		return NULL;
	bpf_probe_read_kernel(&css, sizeof(css), &cgroups->subsys[id]);
	nodeinfo_off = bpf_core_field_offset(struct mem_cgroup, nodeinfo);
	/* lruvec.pgdat is filled in lazily, the first time the cgroup touches
	 * the node: walk up until a cgroup has (the root always ends up so). */
	for (depth = 0; depth < MEMAVAIL_MEMCG_DEPTH && css; depth++) {
		struct mem_cgroup_per_node *pn = NULL;
		struct pglist_data *pgdat;

		/* css is the first member of struct mem_cgroup. */
		bpf_probe_read_kernel(&pn, sizeof(pn), (char *)css + nodeinfo_off + nid * sizeof(void *));
		pgdat = pn ? BPF_CORE_READ(pn, lruvec.pgdat) : NULL;
		if (pgdat) {
			memavail_pgdat_cache = (__u64)pgdat;
			return pgdat;
		}
		css = BPF_CORE_READ(css, parent);
	}
	return NULL;
}

static __always_inline int memavail_node_stat_items(__u32 *active_file, __u32 *inactive_file,
						    __s32 *slab_reclaimable, __s32 *misc_reclaimable)
{
	if (!bpf_core_enum_value_exists(enum node_stat_item, NR_ACTIVE_FILE) ||
	    !bpf_core_enum_value_exists(enum node_stat_item, NR_INACTIVE_FILE))
		return -1;
	*active_file = bpf_core_enum_value(enum node_stat_item, NR_ACTIVE_FILE);
	*inactive_file = bpf_core_enum_value(enum node_stat_item, NR_INACTIVE_FILE);
	*slab_reclaimable = -1;
	if (bpf_core_enum_value_exists(enum node_stat_item, NR_SLAB_RECLAIMABLE_B))
		*slab_reclaimable = bpf_core_enum_value(enum node_stat_item, NR_SLAB_RECLAIMABLE_B);
	else if (bpf_core_enum_value_exists(enum node_stat_item___pre59, NR_SLAB_RECLAIMABLE___pre59))
		*slab_reclaimable = bpf_core_enum_value(enum node_stat_item___pre59, NR_SLAB_RECLAIMABLE___pre59);
	*misc_reclaimable = -1;
	if (bpf_core_enum_value_exists(enum node_stat_item, NR_KERNEL_MISC_RECLAIMABLE))
		*misc_reclaimable = bpf_core_enum_value(enum node_stat_item, NR_KERNEL_MISC_RECLAIMABLE);
	return 0;
}

/* Adds one node's counters to c. */
static __always_inline void memavail_add_node(struct memavail_calc *c, const struct pglist_data *pgdat)
{
	__u64 vm_stat = bpf_core_field_offset(struct pglist_data, vm_stat);
	__u32 active_file, inactive_file;
	__s32 slab, misc;
	__s64 v;

	if (memavail_node_stat_items(&active_file, &inactive_file, &slab, &misc) < 0) {
		c->error = MEMAVAIL_CALC_NO_LAYOUT;
		return;
	}
	c->nodes++;
	v = read_atomic_long(pgdat, vm_stat + active_file * sizeof(__s64)) +
	    read_atomic_long(pgdat, vm_stat + inactive_file * sizeof(__s64));
	c->file_pages += v > 0 ? v : 0;
	v = 0;
	if (slab >= 0)
		v += read_atomic_long(pgdat, vm_stat + slab * sizeof(__s64));
	if (misc >= 0)
		v += read_atomic_long(pgdat, vm_stat + misc * sizeof(__s64));
	c->reclaimable_pages += v > 0 ? v : 0;
	if (bpf_core_enum_value_exists(enum node_stat_item, NR_FILE_DIRTY)) {
		v = read_atomic_long(pgdat, vm_stat + bpf_core_enum_value(enum node_stat_item, NR_FILE_DIRTY) * sizeof(__s64));
		c->dirty_pages += v > 0 ? v : 0;
	}
	if (bpf_core_field_exists(pgdat->totalreserve_pages))
		c->kernel_reserve_pages += BPF_CORE_READ(pgdat, totalreserve_pages);
}

/* Adds one zone's free pages and low watermark to c. */
static __always_inline void memavail_add_zone(struct memavail_calc *c, const struct zone *zone, bool own_watermarks)
{
	__u32 free_item = bpf_core_enum_value(enum zone_stat_item, NR_FREE_PAGES);
	__s64 v;

	c->zones++;
	v = read_atomic_long(zone, bpf_core_field_offset(struct zone, vm_stat) + free_item * sizeof(__s64));
	c->free_pages += v > 0 ? v : 0;
	if (!own_watermarks)
		return;
	/* low_wmark_pages(): the low watermark plus the current boost. */
	c->wmark_low_pages += read_atomic_long(zone, bpf_core_field_offset(struct zone, _watermark) +
						     bpf_core_enum_value(enum zone_watermarks, WMARK_LOW) *
							     sizeof(unsigned long));
	if (bpf_core_field_exists(zone->watermark_boost))
		c->wmark_low_pages += BPF_CORE_READ(zone, watermark_boost);
}

/* The last computation's details, for user space (memavail_compute_now). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct memavail_calc);
} memavail_scratch SEC(".maps");

/* The scratch computation (*cp), zeroed, for a walk of the current node's
 * zonelist from *first: true where the walk cannot start (why in
 * (*cp)->error, unless there is no scratch entry). */
static __always_inline bool memavail_calc_start(struct memavail_calc **cp, const struct pglist_data **first)
{
	__u32 zero = 0;
	struct memavail_calc *c = bpf_map_lookup_elem(&memavail_scratch, &zero);

	*cp = c;
	if (!c)
		return true;
	__builtin_memset(c, 0, sizeof(*c));
	if (!bpf_core_type_exists(struct zoneref) || !bpf_core_field_exists(struct pglist_data, vm_stat) ||
	    !bpf_core_field_exists(struct zone, vm_stat) ||
	    !bpf_core_enum_value_exists(enum zone_stat_item, NR_FREE_PAGES))
		c->error = MEMAVAIL_CALC_NO_LAYOUT;
	else if (!(*first = memavail_find_pgdat()))
		c->error = MEMAVAIL_CALC_NO_NODE;
	return c->error != 0;
}

/* Entry i of the node's first zonelist (ZONELIST_FALLBACK), and its zone:
 * NULL past the last. */
static __always_inline const char *memavail_zoneref(const struct pglist_data *first, __u32 i)
{
	return (const char *)first + bpf_core_field_offset(struct pglist_data, node_zonelists) +
	       i * bpf_core_type_size(struct zoneref);
}

static __always_inline const struct zone *memavail_zoneref_zone(const char *zoneref)
{
	const struct zone *zone = NULL;

	bpf_probe_read_kernel(&zone, sizeof(zone), zoneref + bpf_core_field_offset(struct zoneref, zone));
	return zone;
}

static __always_inline bool memavail_own_watermarks(void)
{
	return bpf_core_field_exists(struct zone, _watermark) &&
	       bpf_core_enum_value_exists(enum zone_watermarks, WMARK_LOW);
}

/* A zone of the walk, and its node where the walk reaches a new one (the
 * zonelist groups zones by node). */
static __always_inline void memavail_add_zone_of(struct memavail_calc *c, const struct zone *zone, __u64 pgdat,
						 __u64 *last, bool own_watermarks)
{
	memavail_add_zone(c, zone, own_watermarks);
	if (pgdat && pgdat != *last) {
		*last = pgdat;
		memavail_add_node(c, (const struct pglist_data *)pgdat);
	}
}

/* After a zonelist walk that stopped at entry i: the error, or 0 with the
 * fallback low watermark where the zones' own cannot be read. */
static __always_inline __s32 memavail_walk_end(struct memavail_calc *c, __u32 i, bool own_watermarks,
					       __u64 wmark_low_fallback)
{
	if (i == MEMAVAIL_MAX_ZONEREFS && !c->error)
		c->error = MEMAVAIL_CALC_TOO_MANY;
	if (!own_watermarks)
		c->wmark_low_pages = wmark_low_fallback;
	return c->error;
}

/* si_mem_available()'s arithmetic on the counters gathered in c. */
static __always_inline __s64 memavail_finish(struct memavail_calc *c, __u64 totalreserve_pages)
{
	__u64 pagecache, reclaimable, half;
	__s64 available;

	/* Unsigned halves: BPF has no signed division. */
	available = (__s64)c->free_pages - (__s64)totalreserve_pages;
	pagecache = c->file_pages;
	half = pagecache / 2;
	pagecache -= half < c->wmark_low_pages ? half : c->wmark_low_pages;
	available += pagecache;
	reclaimable = c->reclaimable_pages;
	half = reclaimable / 2;
	reclaimable -= half < c->wmark_low_pages ? half : c->wmark_low_pages;
	available += reclaimable;
	c->available_pages = available > 0 ? available : 0;
	return c->available_pages;
}

/* si_mem_available(), from the per-node and per-zone counters: available
 * pages, or a negative enum memavail_calc_error. Zones without memory are not
 * in the zonelist: their low watermarks (a few pages at most) are left out.
 * A global function, so the verifier checks it once, on its own, instead of
 * once per state of every caller (which on 6.1 exceeds its limit). */
__noinline __s64 memavail_compute(__u64 totalreserve_pages, __u64 wmark_low_fallback)
{
	bool own_watermarks = memavail_own_watermarks();
	const struct pglist_data *first = NULL;
	struct memavail_calc *c = NULL;
	__u64 last = 0;
	__u32 i;

	if (memavail_calc_start(&c, &first))
		return -(c ? c->error : MEMAVAIL_CALC_NO_LAYOUT);
	/* ZONELIST_FALLBACK is the first zonelist; it ends with a NULL zone. */
	for (i = 0; i < MEMAVAIL_MAX_ZONEREFS; i++) {
		const struct zone *zone = memavail_zoneref_zone(memavail_zoneref(first, i));

		if (!zone)
			break;
		memavail_add_zone_of(c, zone, (__u64)BPF_CORE_READ(zone, zone_pgdat), &last, own_watermarks);
	}
	if (memavail_walk_end(c, i, own_watermarks, wmark_low_fallback))
		return -c->error;
	return memavail_finish(c, totalreserve_pages);
}

#endif
