// SPDX-License-Identifier: GPL-2.0
/* The memory counters of every cgroup below a root, read straight from its
 * mem_cgroup by a cgroup iterator: one read() for the whole tree instead of
 * four cgroupfs files per cgroup. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "memcg.h"

/* The records go into an array that user space maps, not into the
 * iterator's seq_file: a cgroup iterator must finish within one read()
 * (its cgroup_mutex is dropped between reads, and a second read fails
 * with EOPNOTSUPP), and the seq_file takes 32 KiB, some 580 records. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1); /* sized by user space before load */
	__type(key, __u32);
	__type(value, struct memcg_record);
} records SEC(".maps");

/* Set to 0 by user space before each read. */
__u32 n_records = 0;
__u32 overflowed = 0; /* a cgroup found no room */
__u32 complete = 0;   /* the walk reached its end */

/* What tells user space that a cgroup was renamed (v1 allows it): its path
 * changed under the same id. A rename gives the kernfs node a new copy of
 * its name (kernfs_rename_ns), so the pointer says it without the string
 * being read; mixed, so no kernel address reaches the records. */
static __always_inline __u64 name_tag(struct cgroup *cgrp)
{
	__u64 h = 0;

	/* Read as a number: the verifier lets no kernel pointer into a map. */
	bpf_probe_read_kernel(&h, sizeof(h), &cgrp->kn->name);
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

/* v1's OOM state, a member of mem_cgroup in the kernels that have it. A
 * vmlinux.h without it (Debian's 6.12, whose BTF the arm64 build uses) must
 * still compile; where the kernel lacks it, under_oom stays 0. */
struct mem_cgroup___with_under_oom {
	int under_oom;
} __attribute__((preserve_access_index));

/* The record of the cgroup the iterator is at: NULL when it has no memory
 * controller, or no room; *memcg is its mem_cgroup. The common fields are
 * filled. */
static __always_inline struct memcg_record *begin_record(struct cgroup *cgrp, struct mem_cgroup **memcg)
{
	struct cgroup_subsys_state *css;
	struct memcg_record *rec;
	__u32 slot;
	int id;

	id = bpf_core_enum_value(enum cgroup_subsys_id, memory_cgrp_id);
	if (id < 0 || id >= CGROUP_SUBSYS_COUNT)
		return NULL;
	css = cgrp->subsys[id];
	if (!css)
		return NULL; /* memory not enabled in this cgroup */
	/* The css is the first member of its mem_cgroup; the verifier knows the
	 * pointer only as a css, so the rest is read through probe-read. */
	*memcg = (struct mem_cgroup *)css;
	slot = n_records;
	rec = bpf_map_lookup_elem(&records, &slot);
	if (!rec) {
		overflowed = 1;
		return NULL;
	}
	n_records = slot + 1;
	rec->id = cgrp->kn->id;
	rec->level = cgrp->level;
	rec->name_hash = name_tag(cgrp);
	rec->usage_pages = BPF_CORE_READ(*memcg, memory.usage.counter);
	rec->max_pages = BPF_CORE_READ(*memcg, memory.max);
	rec->oom_kill = BPF_CORE_READ(*memcg, memory_events[bpf_core_enum_value(enum memcg_memory_event, MEMCG_OOM_KILL)].counter);
	return rec;
}

SEC("iter/cgroup")
int dump_memcg(struct bpf_iter__cgroup *ctx)
{
	struct mem_cgroup___with_under_oom *with_under_oom;
	struct cgroup *cgrp = ctx->cgroup;
	struct mem_cgroup *memcg;
	struct memcg_record *rec;

	if (!cgrp) {
		complete = 1; /* the call after the last cgroup */
		return 0;
	}
	if (!bpf_core_enum_value_exists(enum cgroup_subsys_id, memory_cgrp_id))
		return 1; /* stop: no memory controller in this kernel */
	rec = begin_record(cgrp, &memcg);
	if (!rec)
		return 0;
	with_under_oom = (struct mem_cgroup___with_under_oom *)memcg;
	rec->failcnt = BPF_CORE_READ(memcg, memory.failcnt);
	rec->under_oom = 0;
	if (bpf_core_field_exists(with_under_oom->under_oom))
		rec->under_oom = BPF_CORE_READ(with_under_oom, under_oom) != 0;
	return 0;
}

/* ---- cgroup2 ---- */

/* Which MEMCG_V2_HAS_* groups this kernel lets the v2 walk read, set at the
 * call after the last cgroup (the collector names its path by them). */
__u32 v2_fields = 0;

/* memory.stat's figures come from vmstats->state where that array is
 * indexed by node_stat_item: 6.1 to 6.10 (a pointer to MEMCG_NR_STAT
 * entries, the node items first). From 6.11 the kernel packs the array
 * through an index table built at boot (memcg_stats_index()), which BTF
 * does not describe: memory.stat stays with cgroupfs there. */
static __always_inline bool stat_direct(void)
{
	struct memcg_vmstats *vs = NULL;

	return bpf_core_field_exists(struct mem_cgroup, vmstats) && bpf_core_field_exists(vs->state) &&
	       bpf_core_enum_value_exists(enum node_stat_item, NR_VM_NODE_STAT_ITEMS) &&
	       bpf_core_field_size(vs->state) >=
		       bpf_core_enum_value(enum node_stat_item, NR_VM_NODE_STAT_ITEMS) * sizeof(long) &&
	       bpf_core_enum_value_exists(enum node_stat_item, NR_INACTIVE_FILE) &&
	       bpf_core_enum_value_exists(enum node_stat_item, WORKINGSET_REFAULT_ANON) &&
	       bpf_core_enum_value_exists(enum node_stat_item, WORKINGSET_REFAULT_FILE) &&
	       bpf_core_enum_value_exists(enum node_stat_item, WORKINGSET_ACTIVATE_ANON) &&
	       bpf_core_enum_value_exists(enum node_stat_item, WORKINGSET_ACTIVATE_FILE) &&
	       bpf_core_enum_value_exists(enum node_stat_item, WORKINGSET_RESTORE_ANON) &&
	       bpf_core_enum_value_exists(enum node_stat_item, WORKINGSET_RESTORE_FILE);
}

/* memcg_page_state(): a per-CPU remainder can leave the sum below 0 for a while. */
static __always_inline __u64 state_read(const void *state, int item)
{
	long v = 0;

	bpf_probe_read_kernel(&v, sizeof(v), state + item * sizeof(long));
	return v < 0 ? 0 : (__u64)v;
}

#define NODE_ITEM(name) bpf_core_enum_value(enum node_stat_item, name)

static __always_inline void read_stat(struct mem_cgroup *memcg, struct memcg_record *rec)
{
	struct memcg_vmstats *vs = BPF_CORE_READ(memcg, vmstats);
	const void *state;

	if (!vs)
		return;
	state = (const void *)vs + bpf_core_field_offset(vs->state);
	rec->inactive_file_pages = state_read(state, NODE_ITEM(NR_INACTIVE_FILE));
	rec->workingset[0][0] = state_read(state, NODE_ITEM(WORKINGSET_REFAULT_ANON));
	rec->workingset[0][1] = state_read(state, NODE_ITEM(WORKINGSET_REFAULT_FILE));
	rec->workingset[1][0] = state_read(state, NODE_ITEM(WORKINGSET_ACTIVATE_ANON));
	rec->workingset[1][1] = state_read(state, NODE_ITEM(WORKINGSET_ACTIVATE_FILE));
	rec->workingset[2][0] = state_read(state, NODE_ITEM(WORKINGSET_RESTORE_ANON));
	rec->workingset[2][1] = state_read(state, NODE_ITEM(WORKINGSET_RESTORE_FILE));
	rec->v2_present |= MEMCG_V2_HAS_STAT;
}

/* cgrp->psi: a pointer from 6.1 (embedded before), NULL when PSI is off for
 * cgroups. memory.pressure prints total[PSI_AVGS][PSI_MEM_SOME, _FULL]
 * after folding in the per-CPU times; here they are as last folded (the
 * averaging work does it every 2 s while the group has tasks). */
static __always_inline bool psi_reachable(void)
{
	struct cgroup *c = NULL;

	return bpf_core_field_exists(c->psi) && bpf_core_enum_value_exists(enum psi_states, PSI_MEM_SOME) &&
	       bpf_core_enum_value_exists(enum psi_states, PSI_MEM_FULL) &&
	       bpf_core_enum_value_exists(enum psi_states, NR_PSI_STATES) &&
	       bpf_core_enum_value_exists(enum psi_aggregators, PSI_AVGS);
}

static __always_inline void read_psi(struct cgroup *cgrp, struct memcg_record *rec)
{
	struct psi_group *psi = BPF_CORE_READ(cgrp, psi);
	__u64 row, base;

	if (!psi)
		return;
	row = bpf_core_enum_value(enum psi_aggregators, PSI_AVGS) *
	      (bpf_core_enum_value(enum psi_states, NR_PSI_STATES) - 1);
	base = bpf_core_field_offset(psi->total);
	bpf_probe_read_kernel(&rec->psi_some_ns, sizeof(__u64),
			      (void *)psi + base + (row + bpf_core_enum_value(enum psi_states, PSI_MEM_SOME)) * 8);
	bpf_probe_read_kernel(&rec->psi_full_ns, sizeof(__u64),
			      (void *)psi + base + (row + bpf_core_enum_value(enum psi_states, PSI_MEM_FULL)) * 8);
	rec->v2_present |= MEMCG_V2_HAS_PSI;
}

/* memory.events, in the file's order; an event the kernel's enum lacks is
 * not printed there either. */
#define READ_EVENT(i, name)                                                                                  \
	do {                                                                                                 \
		if (bpf_core_enum_value_exists(enum memcg_memory_event, name)) {                            \
			rec->events[i] = BPF_CORE_READ(                                                      \
				memcg, memory_events[bpf_core_enum_value(enum memcg_memory_event, name)].counter); \
			rec->v2_present |= MEMCG_V2_HAS_EVENT(i);                                            \
		}                                                                                            \
	} while (0)

#define EVENT_EXISTS(i, name) \
	(bpf_core_enum_value_exists(enum memcg_memory_event, name) ? MEMCG_V2_HAS_EVENT(i) : 0u)

SEC("iter/cgroup")
int dump_memcg_v2(struct bpf_iter__cgroup *ctx)
{
	struct cgroup *cgrp = ctx->cgroup;
	struct mem_cgroup *memcg;
	struct memcg_record *rec;

	if (!cgrp) {
		v2_fields = EVENT_EXISTS(0, MEMCG_LOW) | EVENT_EXISTS(1, MEMCG_HIGH) | EVENT_EXISTS(2, MEMCG_MAX) |
			    EVENT_EXISTS(3, MEMCG_OOM) | EVENT_EXISTS(4, MEMCG_OOM_KILL) |
			    EVENT_EXISTS(5, MEMCG_OOM_GROUP_KILL) | (stat_direct() ? MEMCG_V2_HAS_STAT : 0) |
			    (psi_reachable() ? MEMCG_V2_HAS_PSI : 0);
		complete = 1;
		return 0;
	}
	if (!bpf_core_enum_value_exists(enum cgroup_subsys_id, memory_cgrp_id))
		return 1;
	rec = begin_record(cgrp, &memcg);
	if (!rec)
		return 0;
	rec->failcnt = 0;
	rec->under_oom = 0;
	rec->v2_present = 0;
	rec->high_pages = BPF_CORE_READ(memcg, memory.high);
	READ_EVENT(0, MEMCG_LOW);
	READ_EVENT(1, MEMCG_HIGH);
	READ_EVENT(2, MEMCG_MAX);
	READ_EVENT(3, MEMCG_OOM);
	READ_EVENT(4, MEMCG_OOM_KILL);
	READ_EVENT(5, MEMCG_OOM_GROUP_KILL);
	if (stat_direct())
		read_stat(memcg, rec);
	if (psi_reachable())
		read_psi(cgrp, rec);
	return 0;
}

/* What says that the last read of the tree may be out of date, counted as
 * it happens (user space reads the iterator again when one grew): a cgroup
 * made, removed or renamed (any hierarchy: the tracepoints do not say
 * which), and a memcg's limit reclaim (a charge that hit its limit:
 * failcnt, the events, usage near the limit). Each program is loaded only
 * where its tracepoint exists. */
__u64 tree_changes = 0;
__u64 memcg_reclaims = 0;

SEC("tp_btf/cgroup_mkdir")
int memcg_tree_mkdir(void *ctx)
{
	__sync_fetch_and_add(&tree_changes, 1);
	return 0;
}

SEC("tp_btf/cgroup_rmdir")
int memcg_tree_rmdir(void *ctx)
{
	__sync_fetch_and_add(&tree_changes, 1);
	return 0;
}

SEC("tp_btf/cgroup_rename")
int memcg_tree_rename(void *ctx)
{
	__sync_fetch_and_add(&tree_changes, 1);
	return 0;
}

SEC("tp_btf/mm_vmscan_memcg_reclaim_begin")
int memcg_reclaim_begin(void *ctx)
{
	__sync_fetch_and_add(&memcg_reclaims, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
