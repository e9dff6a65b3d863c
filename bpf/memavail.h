/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_MEMAVAIL_H
#define MEMWATCH_MEMAVAIL_H

/* Available memory at the instant of pressure: what the memavail programs and
 * the pressure programs (through bpf/memavail.bpf.h) share with user space. */

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
	/* Written by the in-kernel sampler (memavail_sampler.bpf.c), computed
	 * from the counters every sample interval; newer than pages when nothing
	 * else made the kernel compute it since. */
	__u64 sampled_pages;
	__u64 sampled_ts_ns;
};

/* The in-kernel sampler's ring: one entry per sample interval, written at
 * head % MEMAVAIL_SAMPLES, head counting every sample ever written. */
#define MEMAVAIL_SAMPLES 1024

struct memavail_sample {
	__u64 ts_ns; /* CLOCK_MONOTONIC */
	__u64 pages;
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
	__u64 dirty_pages; /* not in the computation: the sampler watches it move */
};

enum memavail_calc_error {
	MEMAVAIL_CALC_OK = 0,
	MEMAVAIL_CALC_NO_NODE = 1,     /* no pglist_data reachable from the current task's memory cgroup */
	MEMAVAIL_CALC_TOO_MANY = 2,    /* more nodes or zones than the bounded loops cover */
	MEMAVAIL_CALC_NO_LAYOUT = 3,   /* a field or enum value this kernel does not have */
};

#endif
