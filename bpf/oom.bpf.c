// SPDX-License-Identifier: GPL-2.0
/* OOM kills on oom:mark_victim. The tracepoint changed: older kernels pass
 * only the victim's pid, newer ones the victim task_struct and its uid
 * (see docs/kernel-compat.md). User space reads the kernel's BTF and tells
 * us which through victim_is_task. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "memwatch.bpf.h"
#include "core_fixes.bpf.h"
#include "events.bpf.h"
#include "memavail.bpf.h"

const volatile bool victim_is_task = true;

__u64 oom_kills = 0;

static __always_inline int report_victim(void *ctx, struct task_struct *victim, __u32 pid)
{
	struct memwatch_event e = {};

	counter_add(&oom_kills, 1);
	e.ts_ns = bpf_ktime_get_ns();
	e.kind = EVENT_OOM_KILL;
	e.pid = pid;
	if (victim) {
		struct mm_struct *mm = BPF_CORE_READ(victim, mm);

		e.pid = BPF_CORE_READ(victim, tgid);
		e.tid = BPF_CORE_READ(victim, pid);
		e.cgroup_id = task_memcg_id(victim);
		BPF_CORE_READ_STR_INTO(&e.comm, victim, comm);
		if (mm)
			e.value = BPF_CORE_READ(mm, total_vm);
	}
	memavail_fill_event(&e);
	/* OOM kills are never gated: each one matters. */
	event_emit(ctx, &e);
	return 0;
}

static __always_inline int handle_mark_victim(void *ctx, __u64 arg0)
{
	if (victim_is_task)
		return report_victim(ctx, (struct task_struct *)arg0, 0);
	return report_victim(ctx, NULL, (__u32)arg0);
}

/* The classic format has carried the pid field on every kernel. */
TP_FLAVOURS(mark_victim, oom, mark_victim, handle_mark_victim(ctx, ctx[0]), struct trace_event_raw_mark_victim,
	    report_victim(ctx, NULL, ctx->pid))

char LICENSE[] SEC("license") = "GPL";
