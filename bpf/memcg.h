/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_MEMCG_H
#define MEMWATCH_MEMCG_H

#define MEMCG_V2_EVENTS 6

/* One record per cgroup of the walked hierarchy that has a memory
 * controller, written by the cgroup iterator: what the v1 files
 * memory.usage_in_bytes, memory.limit_in_bytes, memory.failcnt and
 * memory.oom_control print, in pages where the files print bytes. */
struct memcg_record {
	__u64 id;          /* the cgroup's kernfs id: st_ino of its directory */
	__u64 usage_pages; /* page_counter_read(&memcg->memory) */
	__u64 max_pages;   /* memcg->memory.max */
	__u64 failcnt;     /* memcg->memory.failcnt */
	__u64 oom_kill;    /* memcg->memory_events[MEMCG_OOM_KILL] */
	__u32 under_oom;   /* 1 while the cgroup is under OOM (v1) */
	__u32 level;       /* 0: the hierarchy's root, whose usage the kernel sums differently */
	__u64 name_hash;   /* changes when the directory is renamed (a hash of its name's address) */
	/* cgroup2 (dump_memcg_v2) only: what memory.high, memory.events,
	 * memory.stat and memory.pressure print, each group read where the
	 * kernel has it (its MEMCG_V2_HAS_* bit); in pages where the files print
	 * bytes, in ns where memory.pressure prints us. */
	__u64 high_pages;                    /* memcg->memory.high */
	__u64 events[MEMCG_V2_EVENTS];       /* memcg->memory_events[]: low high max oom oom_kill oom_group_kill */
	__u64 inactive_file_pages;           /* vmstats->state[NR_INACTIVE_FILE] */
	__u64 workingset[3][2];              /* refault, activate, restore x anon, file */
	__u64 psi_some_ns, psi_full_ns;      /* cgrp->psi->total[PSI_AVGS][PSI_MEM_SOME, _FULL] */
	__u32 v2_present;                    /* MEMCG_V2_HAS_* */
	__u32 pad;
};

/* Bits 0..5: events[i] read (the kernel's enum has that event). */
#define MEMCG_V2_HAS_EVENT(i) (1u << (i))
#define MEMCG_V2_HAS_STAT (1u << 6) /* vmstats->state indexed by node_stat_item (up to 6.10) */
#define MEMCG_V2_HAS_PSI (1u << 7)  /* cgrp->psi set (PSI on for cgroups) */


#endif
