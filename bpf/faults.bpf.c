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
		rec.min_flt += BPF_CORE_READ(task, signal, min_flt);
		rec.maj_flt += BPF_CORE_READ(task, signal, maj_flt);
	}
	rec.start_boottime_ns = task_start_boottime(task);
	BPF_CORE_READ_STR_INTO(&rec.comm, leader, comm);
	bpf_seq_write(seq, &rec, sizeof(rec));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
