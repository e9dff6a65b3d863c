/* SPDX-License-Identifier: GPL-2.0 */
/* Available memory at a pressure instant, for every BPF object that reports
 * pressure (and for the memavail programs themselves): the memavail map, which
 * user space replaces before load with the one instance all objects share
 * (bpf_map__reuse_fd), and what a pressure program stamps into its event. */
#ifndef MEMWATCH_MEMAVAIL_BPF_H
#define MEMWATCH_MEMAVAIL_BPF_H

#include <bpf/bpf_helpers.h>
#include "events.h"
#include "memavail.h"
#include "memavail_counters.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct memavail_latest);
} memavail SEC(".maps");

/* The kernel's latest figure (fexit or kretprobe) or the in-kernel sampler's,
 * whichever is newer, or one computed now from its counters when user space
 * chose that method. */
static __always_inline void memavail_fill_event(struct memwatch_event *e)
{
	__u32 zero = 0;
	struct memavail_latest *m = bpf_map_lookup_elem(&memavail, &zero);

	if (!m)
		return;
	if (m->compute) {
		__s64 pages = memavail_compute(m->totalreserve_pages, m->wmark_low_pages);

		/* Computed at the event, so it carries the event's own time. */
		if (pages >= 0) {
			e->avail_pages = pages;
			e->avail_ts_ns = e->ts_ns;
		}
		return;
	}
	/* The sampler's figure, when the kernel computed none since. */
	if (m->sampled_ts_ns > m->ts_ns) {
		e->avail_pages = m->sampled_pages;
		e->avail_ts_ns = m->sampled_ts_ns;
		e->flags |= EVENT_AVAIL_SAMPLED;
		return;
	}
	e->avail_pages = m->pages;
	e->avail_ts_ns = m->ts_ns;
}

#endif
