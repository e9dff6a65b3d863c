/* SPDX-License-Identifier: GPL-2.0 */
/* Kernel layout drift, in one place. */
#ifndef MEMWATCH_CORE_FIXES_BPF_H
#define MEMWATCH_CORE_FIXES_BPF_H

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

/* task_struct.real_start_time became start_boottime in v5.5
 * (commit cf25e24db61c "time: Rename tsk->real_start_time to ->start_boottime"). */
struct task_struct___pre55 {
	u64 real_start_time;
} __attribute__((preserve_access_index));

static __always_inline __u64 task_start_boottime(struct task_struct *task)
{
	struct task_struct *leader = BPF_CORE_READ(task, group_leader);

	if (bpf_core_field_exists(leader->start_boottime))
		return BPF_CORE_READ(leader, start_boottime);
	return BPF_CORE_READ((struct task_struct___pre55 *)leader, real_start_time);
}

/* The id of the cgroup holding the task's memory controller: on cgroup v2 that
 * is the task's cgroup (or the nearest ancestor with memory enabled), on v1 and
 * hybrid hosts the cgroup in the v1 memory hierarchy. bpf_get_current_cgroup_id()
 * only ever answers for v2, which on a hybrid host has no memory controller. */
static __always_inline __u64 task_memcg_id(struct task_struct *task)
{
	struct cgroup_subsys_state *css = NULL;
	struct css_set *cgroups;
	int id;

	if (!bpf_core_enum_value_exists(enum cgroup_subsys_id, memory_cgrp_id))
		return bpf_get_current_cgroup_id();
	id = bpf_core_enum_value(enum cgroup_subsys_id, memory_cgrp_id);
	cgroups = BPF_CORE_READ(task, cgroups);
	if (!cgroups || id < 0 || id >= CGROUP_SUBSYS_COUNT)
		return 0;
	bpf_probe_read_kernel(&css, sizeof(css), &cgroups->subsys[id]);
	if (!css)
		return 0;
	return BPF_CORE_READ(css, cgroup, kn, id);
}

#endif
