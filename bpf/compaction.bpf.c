// SPDX-License-Identifier: GPL-2.0
/* Direct compaction stalls, timed per thread in the kernel, and every zone
 * compaction run by who ran it (an allocating task, kcompactd, or a write to
 * compact_memory).
 *
 * A stall is what /proc/vmstat compact_stall counts: __alloc_pages_direct_compact()
 * counts COMPACTSTALL exactly when try_to_compact_pages() returns anything but
 * COMPACT_SKIPPED. Two ways to see that:
 *
 *  fexit       fentry/fexit on try_to_compact_pages(): the call's own duration
 *              and return value. Exact.
 *  tracepoint  where fentry cannot attach. The stall opens at
 *              mm_compaction_try_to_compact_pages (the function's entry, past its
 *              __GFP_IO check). The function's result is above COMPACT_SKIPPED
 *              exactly when some zone was deferred (mm_compaction_deferred), was
 *              compacted (mm_compaction_begin/_end) or already met its watermark
 *              (COMPACT_SUCCESS, which calls compaction_defer_reset():
 *              mm_compaction_defer_reset): the first of these counts the stall.
 *              No tracepoint marks the function's return, so the stall lasts
 *              until the last of them, and it goes into the histogram when the
 *              thread is seen leaving: compaction_defer_reset() (success), its
 *              next direct reclaim or direct compaction, or its exit. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "memwatch.bpf.h"
#include "core_fixes.bpf.h"
#include "compaction.h"
#include "latency_hist.bpf.h"

#define PF_KTHREAD 0x00200000 /* include/linux/sched.h, unchanged since 2.6 */

/* Set before load: stalls are counted and timed by the fexit program. */
const volatile bool stall_by_fexit = false;

struct compaction_counters counters = {};
/* Raised by user space at each window's end: the exemplars' window. */
__u64 exemplar_window = 0;

struct open_stall {
	__u64 begin_ns;
	__u64 last_ns; /* the latest sign of work (tracepoint method) */
	__u64 counted;
};

/* Thread id -> its direct compaction in progress. */
BPF_LRU_HASH(__u32, struct open_stall, 16384) stalls SEC(".maps");
/* Thread id -> begin of the zone compaction it is running. */
BPF_LRU_HASH(__u32, __u64, 16384) run_starts SEC(".maps");

static __always_inline __u32 current_tid(void)
{
	return (__u32)bpf_get_current_pid_tgid();
}

/* A stall of the current thread ended at end_ns; it is the exemplar's. */
static __always_inline void observe_stall(__u64 ns, __u64 end_ns)
{
	latency_record(&counters.stall, *(volatile __u64 *)&exemplar_window, ns, end_ns,
		       bpf_get_current_pid_tgid() >> 32, task_memcg_id((struct task_struct *)bpf_get_current_task()));
}

/* --- fexit method --- */

SEC("?fentry/try_to_compact_pages")
int BPF_PROG(try_to_compact_pages_entry)
{
	__u32 tid = current_tid();
	struct open_stall fresh = { .begin_ns = bpf_ktime_get_ns() };

	bpf_map_update_elem(&stalls, &tid, &fresh, BPF_ANY);
	return 0;
}

SEC("?fexit/try_to_compact_pages")
int BPF_PROG(try_to_compact_pages_exit, unsigned int gfp_mask, unsigned int order, unsigned int alloc_flags,
	     const void *ac, int prio, void *capture, int ret)
{
	__u32 tid = current_tid();
	struct open_stall *s = bpf_map_lookup_elem(&stalls, &tid);

	if (!s)
		return 0;
	if (ret != bpf_core_enum_value(enum compact_result, COMPACT_SKIPPED)) {
		__u64 now = bpf_ktime_get_ns();

		counter_add(&counters.stalls, 1);
		observe_stall(now - s->begin_ns, now);
	}
	bpf_map_delete_elem(&stalls, &tid);
	return 0;
}

/* --- tracepoint method --- */

/* The thread's stall is over: into the histogram if it was one. */
static __always_inline int close_stall(void)
{
	__u32 tid = current_tid();
	struct open_stall *s = bpf_map_lookup_elem(&stalls, &tid);

	if (!s)
		return 0;
	if (s->counted)
		observe_stall(s->last_ns - s->begin_ns, s->last_ns);
	bpf_map_delete_elem(&stalls, &tid);
	return 0;
}

static __always_inline int open_stall(void)
{
	__u32 tid = current_tid();
	struct open_stall fresh = {};

	close_stall();
	fresh.begin_ns = bpf_ktime_get_ns();
	bpf_map_update_elem(&stalls, &tid, &fresh, BPF_ANY);
	return 0;
}

/* A zone was deferred, compacted or found ready: try_to_compact_pages() will
 * return more than COMPACT_SKIPPED, so vmstat counts this stall. */
static __always_inline int stall_worked(void)
{
	__u32 tid = current_tid();
	struct open_stall *s;

	if (stall_by_fexit)
		return 0;
	s = bpf_map_lookup_elem(&stalls, &tid);
	if (!s)
		return 0;
	if (!s->counted) {
		s->counted = 1;
		counter_add(&counters.stalls, 1);
	}
	s->last_ns = bpf_ktime_get_ns();
	return 0;
}

static __always_inline int stall_ready(void)
{
	stall_worked();
	return close_stall();
}

/* --- zone compaction runs, both methods --- */

static __always_inline __u32 current_compaction_task(__u32 tid)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	char comm[16];

	if (bpf_map_lookup_elem(&stalls, &tid))
		return COMPACTION_TASK_DIRECT;
	if (BPF_CORE_READ(task, flags) & PF_KTHREAD) {
		bpf_get_current_comm(comm, sizeof(comm));
		if (comm[0] == 'k' && comm[1] == 'c' && comm[2] == 'o' && comm[3] == 'm' && comm[4] == 'p' &&
		    comm[5] == 'a' && comm[6] == 'c' && comm[7] == 't' && comm[8] == 'd')
			return COMPACTION_TASK_KCOMPACTD;
	}
	return COMPACTION_TASK_MANUAL;
}

static __always_inline int run_begin(void)
{
	__u32 tid = current_tid();
	__u64 ts = bpf_ktime_get_ns();

	bpf_map_update_elem(&run_starts, &tid, &ts, BPF_ANY);
	return 0;
}

static __always_inline int run_end(void)
{
	__u32 tid = current_tid();
	__u64 *start = bpf_map_lookup_elem(&run_starts, &tid), delta;
	__u32 task;

	stall_worked();
	if (!start)
		return 0; /* begun before the program was attached */
	delta = bpf_ktime_get_ns() - *start;
	bpf_map_delete_elem(&run_starts, &tid);
	task = current_compaction_task(tid);
	if (task >= COMPACTION_TASKS)
		return 0;
	counter_add(&counters.runs[task], 1);
	counter_add(&counters.run_ns[task], delta);
	return 0;
}

TP_FLAVOURS(run_begin, compaction, mm_compaction_begin, run_begin(), void, run_begin())
TP_FLAVOURS(run_end, compaction, mm_compaction_end, run_end(), void, run_end())
TP_FLAVOURS(stall_begin, compaction, mm_compaction_try_to_compact_pages, open_stall(), void, open_stall())
TP_FLAVOURS(zone_deferred, compaction, mm_compaction_deferred, stall_worked(), void, stall_worked())
TP_FLAVOURS(defer_reset, compaction, mm_compaction_defer_reset, stall_ready(), void, stall_ready())
TP_FLAVOURS(reclaim_begin, vmscan, mm_vmscan_direct_reclaim_begin, close_stall(), void, close_stall())
TP_FLAVOURS(thread_exit, sched, sched_process_exit, close_stall(), void, close_stall())

char LICENSE[] SEC("license") = "GPL";
