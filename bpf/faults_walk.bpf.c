// SPDX-License-Identifier: GPL-2.0
/* Page faults per process in one program run (6.7+: the open-coded task
 * iterator kfuncs). The iter/task walk in faults.bpf.c pays a seq_file
 * round trip, a pid lookup and a record per thread; this one follows the
 * task list, sums each process's threads in the kernel and writes one
 * record per process into an array user space maps. Kernels without the
 * kfuncs keep the iter/task walk. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include "core_fixes.bpf.h"
#include "faults.h"

#define PF_KTHREAD 0x00200000

/* The kernel's struct bpf_iter_task, under a name of our own: a vmlinux.h
 * made from an older kernel's BTF lacks it, and kfunc arguments are matched
 * against the running kernel's types, not by name. */
struct mw_iter_task {
	__u64 opaque[3];
} __attribute__((aligned(8)));

enum { MW_TASK_ITER_ALL_THREADS = 1 };

extern int bpf_iter_task_new(struct mw_iter_task *it, struct task_struct *task, unsigned int flags) __ksym __weak;
extern struct task_struct *bpf_iter_task_next(struct mw_iter_task *it) __ksym __weak;
extern void bpf_iter_task_destroy(struct mw_iter_task *it) __ksym __weak;
extern void bpf_rcu_read_lock(void) __ksym __weak;
extern void bpf_rcu_read_unlock(void) __ksym __weak;

/* Sized by user space before loading (FAULTS_WALK_MIN_SLOTS and up). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct fault_record);
	__uint(max_entries, FAULTS_WALK_MIN_SLOTS);
} walk_records SEC(".maps");

/* Written by the last run: records filled, and processes seen (more than
 * filled when the array was too small). */
__u64 walk_filled = 0;
__u64 walk_seen = 0;

static __always_inline __u64 leader_start_boottime(struct task_struct *leader)
{
	if (bpf_core_field_exists(leader->start_boottime))
		return leader->start_boottime;
	return ((struct task_struct___pre55 *)leader)->real_start_time;
}

/* Threads come process by process. A record per process, as /proc/PID/stat
 * counts: the threads that left (signal), and every thread still on the
 * list, a zombie leader included. Processes whose every thread exited are
 * left to the exit hook, which has their final counts. */
SEC("syscall")
int walk_processes(void *ctx)
{
	struct mw_iter_task threads;
	struct task_struct *t;
	__u32 tgid = 0, slot = 0, filled = 0;
	__u64 seen = 0;
	bool recording = false;

	bpf_rcu_read_lock();
	bpf_iter_task_new(&threads, NULL, MW_TASK_ITER_ALL_THREADS);
	while ((t = bpf_iter_task_next(&threads))) {
		struct fault_record *rec;

		if (t->flags & PF_KTHREAD)
			continue;
		if (t->tgid != tgid) {
			struct signal_struct *sig = t->signal;
			struct task_struct *leader = t->group_leader;

			tgid = t->tgid;
			recording = false;
			if (sig->live.counter == 0)
				continue;
			seen++;
			slot = filled;
			rec = bpf_map_lookup_elem(&walk_records, &slot);
			if (!rec)
				continue;
			filled++;
			recording = true;
			rec->tgid = tgid;
			rec->leader = 1;
			rec->min_flt = sig->min_flt + t->min_flt;
			rec->maj_flt = sig->maj_flt + t->maj_flt;
			rec->start_boottime_ns = leader_start_boottime(leader);
			bpf_probe_read_kernel(&rec->comm, sizeof(rec->comm), leader->comm);
			continue;
		}
		/* The process's other threads: one lookup each, none for a process of one. */
		if (!recording)
			continue;
		rec = bpf_map_lookup_elem(&walk_records, &slot);
		if (!rec)
			continue;
		rec->min_flt += t->min_flt;
		rec->maj_flt += t->maj_flt;
	}
	bpf_iter_task_destroy(&threads);
	bpf_rcu_read_unlock();
	walk_filled = filled;
	walk_seen = seen;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
