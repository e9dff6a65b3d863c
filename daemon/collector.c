// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
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
