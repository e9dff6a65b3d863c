// SPDX-License-Identifier: GPL-2.0
/* The memory counters of every cgroup below a root, v1 or cgroup2, read
 * straight from its mem_cgroup by a cgroup iterator: one read() for the
 * whole tree instead of four cgroupfs files per cgroup. */
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

/* memory.events' counter of one enum memcg_memory_event, where this kernel
 * has it (oom_group_kill: 5.17+); its index in the array is the kernel's. */
#define read_event(rec, memcg, slot, kernel_event)                                                          \
	do {                                                                                               \
		if (bpf_core_enum_value_exists(enum memcg_memory_event, kernel_event)) {                  \
			(rec)->events[slot] = BPF_CORE_READ(                                               \
				memcg, memory_events[bpf_core_enum_value(enum memcg_memory_event, kernel_event)] \
					       .counter);                                                  \
			(rec)->events_present |= 1u << (slot);                                             \
		}                                                                                          \
	} while (0)

SEC("iter/cgroup")
int dump_memcg(struct bpf_iter__cgroup *ctx)
{
	struct cgroup *cgrp = ctx->cgroup;
	struct cgroup_subsys_state *css;
	struct mem_cgroup___with_under_oom *with_under_oom;
	struct mem_cgroup *memcg;
	struct memcg_record *rec;
	__u32 slot;
	int id;

	if (!cgrp) {
		complete = 1; /* the call after the last cgroup */
		return 0;
	}
	if (!bpf_core_enum_value_exists(enum cgroup_subsys_id, memory_cgrp_id))
		return 1; /* stop: no memory controller in this kernel */
	id = bpf_core_enum_value(enum cgroup_subsys_id, memory_cgrp_id);
	if (id < 0 || id >= CGROUP_SUBSYS_COUNT)
		return 1;
	css = cgrp->subsys[id];
	if (!css)
		return 0; /* memory not enabled in this cgroup */
	/* The css is the first member of its mem_cgroup; the verifier knows the
	 * pointer only as a css, so the rest is read through probe-read. */
	memcg = (struct mem_cgroup *)css;
	with_under_oom = (struct mem_cgroup___with_under_oom *)css;
	slot = n_records;
	rec = bpf_map_lookup_elem(&records, &slot);
	if (!rec) {
		overflowed = 1;
		return 0;
	}
	n_records = slot + 1;
	rec->id = cgrp->kn->id;
	rec->level = cgrp->level;
	rec->name_hash = name_tag(cgrp);
	rec->usage_pages = BPF_CORE_READ(memcg, memory.usage.counter);
	rec->max_pages = BPF_CORE_READ(memcg, memory.max);
	rec->failcnt = BPF_CORE_READ(memcg, memory.failcnt);
	rec->high_pages = BPF_CORE_READ(memcg, memory.high);
	rec->watermark_pages = BPF_CORE_READ(memcg, memory.watermark);
	rec->events_present = 0;
	read_event(rec, memcg, MEMCG_RECORD_EVENT_LOW, MEMCG_LOW);
	read_event(rec, memcg, MEMCG_RECORD_EVENT_HIGH, MEMCG_HIGH);
	read_event(rec, memcg, MEMCG_RECORD_EVENT_MAX, MEMCG_MAX);
	read_event(rec, memcg, MEMCG_RECORD_EVENT_OOM, MEMCG_OOM);
	read_event(rec, memcg, MEMCG_RECORD_EVENT_OOM_KILL, MEMCG_OOM_KILL);
	read_event(rec, memcg, MEMCG_RECORD_EVENT_OOM_GROUP_KILL, MEMCG_OOM_GROUP_KILL);
	rec->under_oom = 0;
	if (bpf_core_field_exists(with_under_oom->under_oom))
		rec->under_oom = BPF_CORE_READ(with_under_oom, under_oom) != 0;
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
