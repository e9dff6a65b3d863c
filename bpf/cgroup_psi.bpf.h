/* SPDX-License-Identifier: GPL-2.0 */
/* A cgroup's memory pressure as the kernel last aggregated it, read at a kill:
 * the killed cgroup is often removed (systemd-oomd's unit, a container) before
 * user space could read its memory.pressure. */
#ifndef MEMWATCH_CGROUP_PSI_BPF_H
#define MEMWATCH_CGROUP_PSI_BPF_H

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include "events.h"

/* enum psi_states, stable since PSI came (4.20); BTF flattens psi_group's
 * total[aggregators][states - 1] and avg[states - 1][3], and the number of
 * states differs by kernel and config, so only row 0 (PSI_AVGS) of total and
 * column 0 (avg10) of avg are read, by offset. */
#define PSI_MEM_SOME_NR 2
#define PSI_MEM_FULL_NR 3

/* Before v5.19 (commit 5f69a6577bc3 "psi: dont alloc memory for psi by
 * default") struct cgroup held its psi_group, since then a pointer to it. */
struct cgroup___psi_embedded {
	struct psi_group psi;
} __attribute__((preserve_access_index));

/* psi_group.enabled came with cgroup.pressure (v6.1). */
struct psi_group___enabled {
	bool enabled;
} __attribute__((preserve_access_index));

static __always_inline struct psi_group *cgroup_psi_group(struct cgroup *cgrp)
{
	struct psi_group *g = NULL;

	if (!cgrp || BPF_CORE_READ(cgrp, level) == 0)
		return NULL; /* the root's pressure is the system's, read from its file */
	/* Each flavour is checked before use: without CONFIG_PSI neither exists,
	 * and a failed relocation only loads where the verifier sees it unreached. */
	if (bpf_core_field_exists(cgrp->psi))
		g = BPF_CORE_READ(cgrp, psi);
	else if (bpf_core_field_exists(struct cgroup___psi_embedded, psi))
		g = (struct psi_group *)((char *)cgrp + bpf_core_field_offset(struct cgroup___psi_embedded, psi));
	else
		return NULL;
	/* No per-CPU state: PSI is off (psi=0), and the figures are zeros, not pressure. */
	if (!g || !BPF_CORE_READ(g, pcpu))
		return NULL;
	if (bpf_core_field_exists(struct psi_group___enabled, enabled) &&
	    !BPF_CORE_READ((struct psi_group___enabled *)g, enabled))
		return NULL;
	return g;
}

static __always_inline __u64 psi_read_u64(struct psi_group *g, __u32 field_offset, __u32 index)
{
	__u64 v = 0;

	bpf_probe_read_kernel(&v, sizeof(v), (char *)g + field_offset + index * sizeof(__u64));
	return v;
}

/* The cgroup whose pressure describes a kill in memcg: the memory cgroup's
 * own where it is on the unified hierarchy, else (v1 memory on a hybrid host)
 * the task's unified cgroup, the only one PSI accounts. */
static __always_inline struct cgroup *kill_pressure_cgroup(struct task_struct *task, struct mem_cgroup *memcg)
{
	struct cgroup *dfl = BPF_CORE_READ(task, cgroups, dfl_cgrp), *cgrp = NULL;

	if (memcg)
		cgrp = BPF_CORE_READ(memcg, css.cgroup);
	if (cgrp && dfl && BPF_CORE_READ(cgrp, root) == BPF_CORE_READ(dfl, root))
		return cgrp;
	return dfl;
}

static __always_inline void kill_read_pressure(struct memwatch_event *e, struct task_struct *task,
					       struct mem_cgroup *memcg)
{
	struct psi_group *g = cgroup_psi_group(kill_pressure_cgroup(task, memcg));
	__u32 total, avg;

	if (!g)
		return;
	total = bpf_core_field_offset(struct psi_group, total);
	avg = bpf_core_field_offset(struct psi_group, avg);
	e->kill.psi_some_total_ns = psi_read_u64(g, total, PSI_MEM_SOME_NR);
	e->kill.psi_full_total_ns = psi_read_u64(g, total, PSI_MEM_FULL_NR);
	e->kill.psi_some_avg10 = psi_read_u64(g, avg, PSI_MEM_SOME_NR * 3);
	e->kill.psi_full_avg10 = psi_read_u64(g, avg, PSI_MEM_FULL_NR * 3);
	e->flags |= KILL_HAS_PSI;
}

#endif
