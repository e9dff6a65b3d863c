/* SPDX-License-Identifier: GPL-2.0 */
/* Emitting into the shared event channel. Include once per BPF object that
 * sends events; user space replaces the events map with the shared one before
 * load (bpf_map__reuse_fd) and sets events_use_ringbuf. */
#ifndef MEMWATCH_EVENTS_BPF_H
#define MEMWATCH_EVENTS_BPF_H

#include <bpf/bpf_helpers.h>
#include "events.h"
#include "core_fixes.bpf.h"

/* Read-only after load so the verifier drops the branch for the other buffer kind. */
const volatile bool events_use_ringbuf = true;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} events SEC(".maps");

struct event_counters event_counters = {};

/* At most one event of a kind per gate_ns, so a reclaim storm stays cheap. */
static __always_inline bool event_gate_pass(__u64 kind, __u64 now)
{
	__u64 gate = event_counters.gate_ns, last;

	barrier_var(kind);
	if (kind >= EVENT_KINDS)
		return false;
	last = event_counters.last_ns[kind];
	if (gate && last && now - last < gate) {
		__sync_fetch_and_add(&event_counters.gated[kind], 1);
		return false;
	}
	event_counters.last_ns[kind] = now; /* racy across CPUs; a rare extra event is fine */
	return true;
}

/* An event about the current task: who, in which memory cgroup, and when. */
static __always_inline void event_from_current(struct memwatch_event *e, __u32 kind, __u64 now, __u64 value)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();

	e->ts_ns = now;
	e->kind = kind;
	e->pid = pid_tgid >> 32;
	e->tid = (__u32)pid_tgid;
	e->value = value;
	e->cgroup_id = task_memcg_id((struct task_struct *)bpf_get_current_task());
	bpf_get_current_comm(e->comm, sizeof(e->comm));
}

static __always_inline void event_emit(void *ctx, struct memwatch_event *e)
{
	__u64 kind = e->kind;
	long r;

	/* The barrier keeps clang from indexing with a register the check never saw. */
	barrier_var(kind);
	if (kind >= EVENT_KINDS)
		return;
	if (events_use_ringbuf)
		r = bpf_ringbuf_output(&events, e, sizeof(*e), 0);
	else
		r = bpf_perf_event_output(ctx, &events, BPF_F_CURRENT_CPU, e, sizeof(*e));
	if (r)
		__sync_fetch_and_add(&event_counters.dropped[kind], 1);
	else
		__sync_fetch_and_add(&event_counters.emitted[kind], 1);
}

#endif
