// SPDX-License-Identifier: GPL-2.0
/* One rstat flush of a cgroup2 tree before the memcg iterator reads its
 * statistics (memory.stat flushes the same way before it prints): a
 * sleepable cgroup iterator over the root alone calls the kfunc. A kernel
 * without cgroup_rstat_flush as a kfunc (before 6.1; css_rstat_flush from
 * 6.16) fails to load this object, and memory.stat stays with cgroupfs. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

extern void cgroup_rstat_flush(struct cgroup *cgrp) __ksym;

__u32 flushed = 0;

SEC("iter.s/cgroup")
int flush_memcg_stats(struct bpf_iter__cgroup *ctx)
{
	struct cgroup *cgrp = ctx->cgroup;

	if (!cgrp)
		return 0;
	cgroup_rstat_flush(cgrp);
	flushed++;
	return 1; /* the root only */
}

char LICENSE[] SEC("license") = "GPL";
