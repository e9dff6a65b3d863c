/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_COMPACTION_H
#define MEMWATCH_COMPACTION_H

#include "latency_hist.h"

/* Who ran a zone's compaction (one compact_zone(), mm_compaction_begin to _end). */
enum compaction_task {
	COMPACTION_TASK_DIRECT = 0,    /* an allocating task, inside try_to_compact_pages() */
	COMPACTION_TASK_KCOMPACTD = 1, /* the per-node kcompactd thread (background and proactive) */
	COMPACTION_TASK_MANUAL = 2,    /* a write to /proc/sys/vm/compact_memory or a node's compact file */
	COMPACTION_TASKS = 3,
};

/* Cumulative, never reset; read by user space through the mapped .bss. */
struct compaction_counters {
	__u64 stalls;                         /* try_to_compact_pages() that did not return COMPACT_SKIPPED */
	struct latency_histogram stall;       /* their durations, once each stall is over */
	__u64 runs[COMPACTION_TASKS];
	__u64 run_ns[COMPACTION_TASKS];
};

#endif
