/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_EVENTS_H
#define MEMWATCH_EVENTS_H

/* Rare, detailed events, shared by every BPF object through one ring buffer
 * (or perf buffer) that user space creates and hands to each object. */

#define EVENT_COMM_LEN 16

enum memwatch_event_kind {
	EVENT_DIRECT_RECLAIM = 0,
	EVENT_MEMCG_RECLAIM = 1,
	EVENT_OOM_KILL = 2,
	EVENT_ALLOC_FAILURE = 3,
	EVENT_KINDS = 4,
};

struct memwatch_event {
	__u64 ts_ns;        /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u64 cgroup_id;    /* memory cgroup of the task (the victim for an OOM kill) */
	__u64 avail_pages;  /* latest si_mem_available() seen by the memavail programs; 0 if none */
	__u64 avail_ts_ns;  /* when that value was computed */
	__u64 value;        /* order (reclaim, allocation failure); victim's total_vm pages (OOM) */
	__u32 kind;
	__u32 pid;          /* tgid of the current task; the victim's pid for an OOM kill */
	__u32 tid;
	__u32 flags;
	char comm[EVENT_COMM_LEN];
};

/* Shared with the memavail programs: the kernel's own last answer, or what
 * the pressure programs need to compute it themselves (counters method). */
struct memavail_latest {
	__u64 pages;
	__u64 ts_ns;
	__u64 calls; /* how often si_mem_available returned (all callers) */
	/* Written by user space. */
	__u64 compute;            /* nonzero: compute at each pressure instant from zone and node counters */
	__u64 totalreserve_pages; /* from /proc/zoneinfo, re-read when the watermarks are set up again */
	__u64 wmark_low_pages;    /* sum of the zones' low watermarks, for kernels whose zones we cannot read */
};

/* One computation of MemAvailable from the kernel's counters, as si_mem_available() does it. */
struct memavail_calc {
	__s64 available_pages;
	__u64 free_pages;
	__u64 file_pages;        /* active + inactive file LRU */
	__u64 reclaimable_pages; /* reclaimable slab + kernel misc reclaimable */
	__u64 wmark_low_pages;
	__u64 kernel_reserve_pages; /* sum of pgdat->totalreserve_pages, to cross-check user space's */
	__u32 nodes;
	__u32 zones;
	__s32 error; /* 0, or why it could not be computed (enum memavail_calc_error) */
	__u32 pad;
};

enum memavail_calc_error {
	MEMAVAIL_CALC_OK = 0,
	MEMAVAIL_CALC_NO_NODE = 1,     /* no pglist_data reachable from the current task's memory cgroup */
	MEMAVAIL_CALC_TOO_MANY = 2,    /* more nodes or zones than the bounded loops cover */
	MEMAVAIL_CALC_NO_LAYOUT = 3,   /* a field or enum value this kernel does not have */
};

/* Kernel-side counters of the event channel, per BPF object. */
struct event_counters {
	__u64 dropped[EVENT_KINDS]; /* buffer full: reservation or output failed */
	__u64 gated[EVENT_KINDS];   /* suppressed by the rate gate */
	__u64 emitted[EVENT_KINDS];
	__u64 gate_ns;              /* written by user space; 0 disables the gate */
	__u64 last_ns[EVENT_KINDS];
};

#endif
