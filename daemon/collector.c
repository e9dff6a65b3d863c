// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include "cgroup_hierarchy.h"
#include "clock.h"
#include "collector.h"
#include "privileges.h"

const struct collector_ops *const all_collectors[] = {
	&meminfo_collector,
	&psi_collector,
	&kswapd_collector,
	&reclaim_collector,
	&alloc_collector,
	&faults_collector,
	&memavail_collector,
	&oom_collector,
	&cgroup_collector,
	&compaction_collector,
};
const size_t n_all_collectors = ARRAY_SIZE(all_collectors);

const char *collector_state_name(enum collector_state s)
{
	switch (s) {
	case COLLECTOR_DISABLED:
		return "disabled";
	case COLLECTOR_ACTIVE:
		return "active";
	case COLLECTOR_DEGRADED:
		return "degraded";
	case COLLECTOR_FAILED:
	default:
		return "failed";
	}
}

void collector_status_set_reason(struct collector_status *st, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(st->reason, sizeof(st->reason), fmt, ap);
	va_end(ap);
}

void collector_status_note_bpf_error(struct collector_status *st, int r)
{
	if (r == -EPERM && !bpf_privileged())
		st->unprivileged = true;
}

int collector_cgroup_table_open(struct collector_cgroup_table *t, struct cgroup_hierarchy *h, const char *root,
				size_t max_entries)
{
	struct cgroup_hierarchy_roots roots;

	*t = (struct collector_cgroup_table){ .hierarchy = h, .id = -ENOMEM };
	if (!h)
		return t->id;
	if (root && !root[0])
		root = NULL;
	if (!root) {
		cgroup_hierarchy_roots(h, &roots);
		if (roots.mode == CGROUP_MEMORY_NONE)
			return t->id = -ENOENT;
	}
	t->id = cgroup_hierarchy_table_acquire(h, root, max_entries);
	return t->id < 0 ? t->id : 0;
}

void collector_cgroup_table_close(struct collector_cgroup_table *t)
{
	cgroup_hierarchy_table_release(t->hierarchy, t->id);
	t->id = -1;
}

int exemplar_cgroup_path(uint64_t id, char *buf, size_t len, void *table)
{
	const struct collector_cgroup_table *t = table;

	if (!t->hierarchy || t->id < 0)
		return -ENOENT;
	return cgroup_hierarchy_lookup(t->hierarchy, t->id, id, now_mono_usec(), buf, len);
}
