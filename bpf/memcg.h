/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_MEMCG_H
#define MEMWATCH_MEMCG_H

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
};


#endif
