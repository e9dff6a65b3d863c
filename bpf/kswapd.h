/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_KSWAPD_H
#define MEMWATCH_KSWAPD_H

/* MAX_NUMNODES on x86_64 distribution kernels (NODES_SHIFT 10). */
#define KSWAPD_MAX_NODES 1024

/* Plain types only: this header is shared by the BPF program and user space. */
struct kswapd_counters {
	__u64 wakeups;          /* mm_vmscan_kswapd_wake: kswapd starts balancing a node */
	__u64 wakeup_requests;  /* mm_vmscan_wakeup_kswapd: an allocation asked for kswapd */
	__u64 awake_ns;         /* completed wake -> sleep intervals, all nodes */
	__u64 awake_since_ns[KSWAPD_MAX_NODES]; /* 0 = asleep; else bpf_ktime_get_ns() at wake */
};

#endif
