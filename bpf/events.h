/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_EVENTS_H
#define MEMWATCH_EVENTS_H

/* Rare, detailed events, shared by every BPF object through one ring buffer
 * (or perf buffer) that user space creates and hands to each object. */

#define EVENT_COMM_LEN 16
/* A cgroup directory's name as a kill event carries it; longer ones are cut
 * (a container's scope, "cri-containerd-<64 hex>.scope", takes 86 bytes). */
#define EVENT_CGROUP_NAME_LEN 128

enum memwatch_event_kind {
	EVENT_DIRECT_RECLAIM = 0,
	EVENT_MEMCG_RECLAIM = 1,
	EVENT_OOM_KILL = 2,
	EVENT_ALLOC_FAILURE = 3,
	EVENT_USERSPACE_KILL = 4,
	EVENT_KINDS = 5,
};

/* What ran out when the kernel's OOM killer chose a victim: the constraint
 * of struct oom_control, or inferred from the memory cgroups' page counters
 * where oom_kill_process() cannot be probed. */
enum oom_scope {
	OOM_SCOPE_UNKNOWN = 0,
	OOM_SCOPE_MEMCG = 1,
	OOM_SCOPE_GLOBAL = 2,
	OOM_SCOPE_CPUSET = 3,
	OOM_SCOPE_MEMPOLICY = 4,
	OOM_SCOPES = 5,
};

/* struct memwatch_event.flags: which fields of its kill detail the kernel gave. */
#define KILL_HAS_SCOPE (1u << 0)
#define KILL_HAS_OOM_CGROUP (1u << 1) /* oom_cgroup_id, its usage and limit */
#define KILL_HAS_RSS (1u << 2)
#define KILL_HAS_SCORE_ADJ (1u << 3)
/* Any event: avail_pages is the in-kernel sampler's computation, not the kernel's own figure. */
#define EVENT_AVAIL_SAMPLED (1u << 31)
#define KILL_SCOPE_FROM_CONTROL (1u << 4) /* scope from oom_control, not inferred */
#define KILL_HAS_PSI (1u << 5) /* the victim cgroup's memory pressure, psi_* */

/* Up to this many killer names in [collector.oom] userspace_killers. */
#define KILLERS_MAX 8

/* An OOM kill's diagnosis, or who sent a user-space kill. Pages. */
struct kill_detail {
	__u64 oom_cgroup_id;     /* the memory cgroup whose limit was hit */
	__u64 oom_usage_pages;   /* its usage and limit at the kill */
	__u64 oom_limit_pages;
	__u64 rss_anon_pages;    /* the victim's, at the kill */
	__u64 rss_file_pages;
	__u64 rss_shmem_pages;
	__s32 oom_score_adj;
	__u32 scope;             /* enum oom_scope */
	__u32 signal;            /* user-space kill: SIGTERM or SIGKILL */
	__u32 killer_pid;        /* user-space kill: the sender's tgid */
	__u32 killer;            /* user-space kill: index into the configured killers */
	__u32 pad;
	char killer_comm[EVENT_COMM_LEN];
	/* The victim's memory cgroup (cgroup_id) as it was at the kill: its
	 * parent's id and its directory's name, so that user space names a
	 * cgroup removed before it reads the kill. 0 and "": not known. */
	__u64 cgroup_parent_id;
	char cgroup_name[EVENT_CGROUP_NAME_LEN];
	/* The victim cgroup's memory pressure as the kernel last aggregated it
	 * (every 2 s while the cgroup stalls): totals in ns, avg10 in percent
	 * scaled by the kernel's FIXED_1 (2048). */
	__u64 psi_some_total_ns;
	__u64 psi_full_total_ns;
	__u64 psi_some_avg10;
	__u64 psi_full_avg10;
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
	__u32 flags;        /* KILL_HAS_* for a kill */
	char comm[EVENT_COMM_LEN];
	struct kill_detail kill; /* OOM and user-space kills only */
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
