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
	__u64 avail_pages;  /* available memory at the event (bpf/memavail.bpf.h); 0 if unknown */
	__u64 avail_ts_ns;  /* when that value was computed */
	__u64 value;        /* order (reclaim, allocation failure); victim's total_vm pages (OOM) */
	__u32 kind;
	__u32 pid;          /* tgid of the current task; the victim's pid for an OOM kill */
	__u32 tid;
	__u32 flags;
	char comm[EVENT_COMM_LEN];
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
