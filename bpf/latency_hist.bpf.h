/* SPDX-License-Identifier: GPL-2.0 */
/* Records one stall into a struct latency_histogram (bpf/latency_hist.h):
 * classic slot, native bucket, sum, and the window's exemplar of its slot. */
#ifndef MEMWATCH_LATENCY_HIST_BPF_H
#define MEMWATCH_LATENCY_HIST_BPF_H

#include "memwatch.bpf.h"
#include "latency_hist.h"

/* The window user space is collecting; it raises it at each window's end, so
 * an exemplar slot with an older number is free for this window's stalls. */
static __always_inline void latency_offer_exemplar(struct latency_exemplar *e, __u64 window, __u64 ns,
						   __u64 now, __u32 tgid, __u64 cgroup_id)
{
	/* Two stalls of one slot ending at once on two CPUs may mix their
	 * fields; user space only reads a slot it sees unchanged twice. */
	if (e->window == window && e->ns >= ns)
		return;
	e->window = window;
	e->ns = ns;
	e->end_ktime_ns = now;
	e->cgroup_id = cgroup_id;
	e->pid = tgid;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
}

static __always_inline void latency_record(struct latency_histogram *h, __u64 window, __u64 ns, __u64 now,
					   __u32 tgid, __u64 cgroup_id)
{
	__u32 slot = log2_slot_ceil(ns), native = latency_native_slot(ns);

	if (slot >= LATENCY_CLASSIC_SLOTS)
		slot = LATENCY_CLASSIC_SLOTS - 1;
	if (native >= LATENCY_NATIVE_SLOTS)
		native = LATENCY_NATIVE_SLOTS - 1;
	counter_add(&h->slots[slot], 1);
	counter_add(&h->native[native], 1);
	counter_add(&h->sum_ns, ns);
	latency_offer_exemplar(&h->exemplars[slot], window, ns, now, tgid, cgroup_id);
}

#endif
