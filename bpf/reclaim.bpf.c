// SPDX-License-Identifier: GPL-2.0
/* Direct, memcg and memcg-softlimit reclaim: count, stall time histogram,
 * pages reclaimed, per process and per memory cgroup. Everything is summed in
 * the kernel; user space only reads cumulative counters. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "memwatch.bpf.h"
#include "core_fixes.bpf.h"
#include "reclaim.h"
#include "events.bpf.h"
#include "memavail.bpf.h"
#include "latency_hist.bpf.h"

struct reclaim_histogram histograms[RECLAIM_KINDS] = {};
/* Raised by user space at each window's end: the exemplars' window. */
__u64 exemplar_window = 0;
/* end events with no recorded begin (start map full, or attached mid-stall) */
__u64 unmatched_ends = 0;
/* Raised after every write to processes and cgroups: user space reads the
 * maps again only when it moved since its last read. */
__u64 map_writes = 0;

/* Thread id << 2 | kind -> begin timestamp. Softlimit reclaim runs nested
 * inside direct reclaim, hence the kind in the key. */
BPF_LRU_HASH(__u64, __u64, 16384) starts SEC(".maps");

/* max_entries set from [collector.reclaim] max_processes and max_cgroups */
BPF_LRU_HASH(__u32, struct reclaim_process, 4096) processes SEC(".maps");
BPF_LRU_HASH(__u64, struct reclaim_cgroup, 4096) cgroups SEC(".maps");

/* The start of a stall is a pressure instant: tell user space (rate-gated),
 * with the kernel's latest available-memory figure. */
static __always_inline void emit_pressure_event(void *ctx, enum reclaim_kind kind, __u64 now, int order)
{
	__u32 ekind = kind == RECLAIM_DIRECT ? EVENT_DIRECT_RECLAIM : EVENT_MEMCG_RECLAIM;
	struct memwatch_event e = {};

	if (!event_gate_pass(ekind, now))
		return;
	event_from_current(&e, ekind, now, order);
	memavail_fill_event(&e);
	event_emit(ctx, &e);
}

static __always_inline int handle_begin(void *ctx, enum reclaim_kind kind, int order)
{
	__u64 key = (bpf_get_current_pid_tgid() & 0xffffffff) << 2 | kind;
	__u64 ts = bpf_ktime_get_ns();

	bpf_map_update_elem(&starts, &key, &ts, BPF_ANY);
	if (kind != RECLAIM_MEMCG_SOFTLIMIT)
		emit_pressure_event(ctx, kind, ts, order);
	return 0;
}

static __always_inline void account_process(struct task_struct *task, __u32 tgid,
					    enum reclaim_kind kind, __u64 delta, __u64 pages)
{
	__u64 start = task_start_boottime(task);
	struct reclaim_process *p, fresh = { .start_boottime_ns = start };

	p = bpf_map_lookup_elem(&processes, &tgid);
	if (!p || p->start_boottime_ns != start) {
		/* First stall of this process, or its pid was reused by a new one. */
		bpf_get_current_comm(fresh.comm, sizeof(fresh.comm));
		bpf_map_update_elem(&processes, &tgid, &fresh, p ? BPF_EXIST : BPF_NOEXIST);
		p = bpf_map_lookup_elem(&processes, &tgid);
		if (!p)
			return;
	}
	if (kind == RECLAIM_DIRECT) {
		counter_add(&p->direct_count, 1);
		counter_add(&p->direct_ns, delta);
		counter_add(&p->direct_pages, pages);
	} else {
		counter_add(&p->memcg_count, 1);
		counter_add(&p->memcg_ns, delta);
	}
}

static __always_inline void account_cgroup(struct task_struct *task, enum reclaim_kind kind,
					   __u64 delta, __u64 pages)
{
	__u64 id = task_memcg_id(task);
	struct reclaim_cgroup *c, zero = {};

	c = bpf_map_lookup_elem(&cgroups, &id);
	if (!c) {
		bpf_map_update_elem(&cgroups, &id, &zero, BPF_NOEXIST);
		c = bpf_map_lookup_elem(&cgroups, &id);
		if (!c)
			return;
	}
	if (kind == RECLAIM_DIRECT) {
		counter_add(&c->direct_count, 1);
		counter_add(&c->direct_ns, delta);
	} else {
		counter_add(&c->memcg_count, 1);
		counter_add(&c->memcg_ns, delta);
	}
	counter_add(&c->pages, pages);
}

static __always_inline int handle_end(enum reclaim_kind kind, __u64 nr_reclaimed)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u64 key = (pid_tgid & 0xffffffff) << 2 | kind;
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct reclaim_histogram *h;
	__u64 *start, delta, now;

	start = bpf_map_lookup_elem(&starts, &key);
	if (!start) {
		counter_add(&unmatched_ends, 1);
		return 0;
	}
	now = bpf_ktime_get_ns();
	delta = now - *start;
	bpf_map_delete_elem(&starts, &key);

	if (kind >= RECLAIM_KINDS)
		return 0;
	h = &histograms[kind];
	latency_record(&h->latency, *(volatile __u64 *)&exemplar_window, delta, now,
		       pid_tgid >> 32, task_memcg_id(task));
	counter_add(&h->pages, nr_reclaimed);

	/* Softlimit reclaim runs inside kswapd or direct reclaim: already charged there. */
	if (kind != RECLAIM_MEMCG_SOFTLIMIT) {
		account_process(task, pid_tgid >> 32, kind, delta, nr_reclaimed);
		account_cgroup(task, kind, delta, nr_reclaimed);
		__sync_fetch_and_add(&map_writes, 1);
	}
	return 0;
}

/* One begin/end pair per kind, each in three attach flavours. */
#define RECLAIM_HOOKS(name, tp, kind)                                                                          \
	TP_FLAVOURS(name##_begin, vmscan, tp##_begin, handle_begin(ctx, kind, order),                          \
		    struct trace_event_raw_mm_vmscan_direct_reclaim_begin_template,                            \
		    handle_begin(ctx, kind, ctx->order), int order)                                            \
	TP_FLAVOURS(name##_end, vmscan, tp##_end, handle_end(kind, nr_reclaimed),                              \
		    struct trace_event_raw_mm_vmscan_direct_reclaim_end_template,                              \
		    handle_end(kind, ctx->nr_reclaimed), unsigned long nr_reclaimed)

RECLAIM_HOOKS(direct, mm_vmscan_direct_reclaim, RECLAIM_DIRECT)
RECLAIM_HOOKS(memcg, mm_vmscan_memcg_reclaim, RECLAIM_MEMCG)
RECLAIM_HOOKS(softlimit, mm_vmscan_memcg_softlimit_reclaim, RECLAIM_MEMCG_SOFTLIMIT)

char LICENSE[] SEC("license") = "GPL";
