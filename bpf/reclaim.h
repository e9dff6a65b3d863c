/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_RECLAIM_H
#define MEMWATCH_RECLAIM_H

#include "latency_hist.h"

#define RECLAIM_SLOTS LATENCY_CLASSIC_SLOTS
#define RECLAIM_COMM_LEN 16

enum reclaim_kind {
	RECLAIM_DIRECT = 0,
	RECLAIM_MEMCG = 1,
	RECLAIM_MEMCG_SOFTLIMIT = 2,
	RECLAIM_KINDS = 3,
};

struct reclaim_histogram {
	struct latency_histogram latency;
	__u64 pages; /* nr_reclaimed from the end event */
};

/* Per process (tgid). A reused pid is told apart by its start time. */
struct reclaim_process {
	__u64 start_boottime_ns;
	__u64 direct_count;
	__u64 direct_ns;
	__u64 direct_pages;
	__u64 memcg_count;
	__u64 memcg_ns;
	char comm[RECLAIM_COMM_LEN];
};

/* Per memory cgroup (kernfs id of the cgroup that holds the task's memory controller). */
struct reclaim_cgroup {
	__u64 direct_count;
	__u64 direct_ns;
	__u64 memcg_count;
	__u64 memcg_ns;
	__u64 pages;
};

#endif
