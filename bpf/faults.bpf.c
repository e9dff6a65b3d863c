// SPDX-License-Identifier: GPL-2.0
/* Page faults per process, read straight from task_struct by a task iterator:
 * no /proc walk, and the same numbers /proc/PID/stat prints. A process that
 * exits between two walks leaves its final counts in a ring buffer, so that
 * walks can be far apart without losing what it did since the last one. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "core_fixes.bpf.h"
#include "faults.h"

#define PF_KTHREAD 0x00200000

/* ctx->task is a trusted BTF pointer: its fields, and those of the structs
 * it points to, are plain loads here. BPF_CORE_READ would make each one a
 * bpf_probe_read_kernel() call, which was the program's largest cost at
 * 10,000 tasks a window. */
static __always_inline __u64 leader_start_boottime(struct task_struct *leader)
{
	if (bpf_core_field_exists(leader->start_boottime))
		return leader->start_boottime;
	return ((struct task_struct___pre55 *)leader)->real_start_time;
}

SEC("iter/task")
int dump_task_faults(struct bpf_iter__task *ctx)
{
	struct seq_file *seq = ctx->meta->seq;
	struct task_struct *task = ctx->task, *leader;
	struct fault_record rec = {};

	if (!task || (task->flags & PF_KTHREAD) || !task->mm)
		return 0;
	leader = task->group_leader;
	rec.tgid = task->tgid;
	rec.leader = task->pid == task->tgid;
	rec.min_flt = task->min_flt;
	rec.maj_flt = task->maj_flt;
	if (rec.leader) {
		rec.min_flt += task->signal->min_flt;
		rec.maj_flt += task->signal->maj_flt;
	}
	rec.start_boottime_ns = leader_start_boottime(leader);
	bpf_probe_read_kernel(&rec.comm, sizeof(rec.comm), leader->comm);
	bpf_seq_write(seq, &rec, sizeof(rec));
	return 0;
}

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, FAULTS_EXITS_RINGBUF_BYTES);
} exits SEC(".maps");

/* Exits the ring buffer had no room for: user space drains it at every
 * window's end, and when half of it is full (the wake-up below), so only a
 * burst of thousands of exits faster than the daemon wakes fills it. */
__u64 exits_dropped = 0;

/* Once per exiting thread; only the last one of its process records. By then
 * the threads released before it have added theirs to signal->min_flt, and a
 * leader that exited earlier waits, a zombie, with its own: what is still
 * missing is a sibling exiting at the same instant (exit_group), which the
 * last walk may have seen, so user space keeps the larger of the two. */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(record_exit, struct task_struct *task)
{
	struct task_struct *leader;
	struct signal_struct *sig;
	struct fault_record *rec;

	if (task->flags & PF_KTHREAD)
		return 0;
	sig = task->signal;
	if (BPF_CORE_READ(sig, live.counter) != 0)
		return 0;
	leader = task->group_leader;
	rec = bpf_ringbuf_reserve(&exits, sizeof(*rec), 0);
	if (!rec) {
		__sync_fetch_and_add(&exits_dropped, 1);
		return 0;
	}
	rec->tgid = task->tgid;
	rec->leader = 1;
	rec->min_flt = BPF_CORE_READ(sig, min_flt) + task->min_flt;
	rec->maj_flt = BPF_CORE_READ(sig, maj_flt) + task->maj_flt;
	if (leader != task) {
		rec->min_flt += BPF_CORE_READ(leader, min_flt);
		rec->maj_flt += BPF_CORE_READ(leader, maj_flt);
	}
	rec->start_boottime_ns = task_start_boottime(task);
	bpf_probe_read_kernel(&rec->comm, sizeof(rec->comm), leader->comm);
	/* No wake-up per record: the daemon sleeps until the window ends unless
	 * the ring is half full. */
	bpf_ringbuf_submit(rec, bpf_ringbuf_query(&exits, BPF_RB_AVAIL_DATA) >= FAULTS_EXITS_RINGBUF_BYTES / 2 ?
					BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
