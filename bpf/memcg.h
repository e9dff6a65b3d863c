/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_MEMCG_H
#define MEMWATCH_MEMCG_H

/* The memory.events counters a record carries, in the order of
 * lib/cgroup_walk.h's enum cgroup_event (its first six). */
enum {
	MEMCG_RECORD_EVENT_LOW,
	MEMCG_RECORD_EVENT_HIGH,
	MEMCG_RECORD_EVENT_MAX,
	MEMCG_RECORD_EVENT_OOM,
	MEMCG_RECORD_EVENT_OOM_KILL,
	MEMCG_RECORD_EVENT_OOM_GROUP_KILL, /* 5.17+ */
	MEMCG_RECORD_EVENTS,
};

/* One record per cgroup of the walked hierarchy that has a memory
 * controller, written by the cgroup iterator: what v1's memory.usage_in_bytes,
 * memory.limit_in_bytes, memory.failcnt and memory.oom_control, or cgroup2's
 * memory.current, memory.max, memory.high and memory.events print, in pages
 * where the files print bytes. */
struct memcg_record {
	__u64 id;          /* the cgroup's kernfs id: st_ino of its directory */
	__u64 usage_pages; /* page_counter_read(&memcg->memory) */
	__u64 max_pages;   /* memcg->memory.max */
	__u64 high_pages;  /* memcg->memory.high (cgroup2's memory.high) */
	__u64 failcnt;     /* memcg->memory.failcnt (v1) */
	/* memcg->memory_events[]: hierarchical, or local with the cgroup2
	 * mount option memory_localevents, as memory.events prints them */
	__u64 events[MEMCG_RECORD_EVENTS];
	__u64 name_hash;   /* changes when the directory is renamed (a hash of its name's address) */
	/* memcg->memory.watermark: the lifetime peak v1's memory.max_usage_in_bytes
	 * and cgroup2's memory.peak (unless reset through the fd, 6.12+) print */
	__u64 watermark_pages;
	__u32 events_present; /* bit (1u << MEMCG_RECORD_EVENT_*): the kernel has the event */
	__u32 under_oom;   /* 1 while the cgroup is under OOM (v1) */
	__u32 level;       /* 0: the hierarchy's root, whose usage the kernel sums differently */
	__u32 unused;
};

#endif
