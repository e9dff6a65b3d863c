// SPDX-License-Identifier: GPL-2.0
/* Page faults per process, read straight from task_struct by a task iterator:
 * no /proc walk, and the same numbers /proc/PID/stat prints. */
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

char LICENSE[] SEC("license") = "GPL";
