// SPDX-License-Identifier: GPL-2.0
/* The cgroup iterator on a cgroup2 tree (bpf/memcg.bpf.c, dump_memcg_v2):
 * what memory.current, memory.max, memory.high and memory.events print for
 * every cgroup, read from its mem_cgroup in one pass; memory.stat's figures
 * where the kernel indexes its statistics by node item and an rstat flush is
 * at hand (6.1 to 6.10: the cgroup_rstat_flush kfunc, else a read of the
 * root's memory.stat, which flushes as every memory.stat reader does);
 * memory.pressure's totals where cgroups have PSI.
 * Each group the kernel does not serve is read from cgroupfs, per cgroup
 * (cgroup_scan.c), and the collector's mode names it. */
#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "cgroup_internal.h"
#include "memcg.h"
#include "memcg.skel.h"
#include "memcg_flush.skel.h"

_Static_assert(CGROUP_EVENT_OOM_GROUP_KILL - CGROUP_EVENT_LOW == MEMCG_V2_EVENTS - 1, "the record's events in order");
_Static_assert(VMSTAT_WS_REFAULT == 0 && VMSTAT_WS_RESTORE == 2 && VMSTAT_WS_ANON == 0 && VMSTAT_WS_FILE == 1,
	       "the record's workingset in order");

/* The flush iterator: the cgroup2 root alone. NULL when the kernel has no
 * cgroup_rstat_flush kfunc (then memory.stat stays with cgroupfs). */
static int flush_start(struct cgroup_state *s)
{
	LIBBPF_OPTS(bpf_iter_attach_opts, opts);
	union bpf_iter_link_info linfo;

	s->flush_skel = memcg_flush_bpf__open_and_load();
	if (!s->flush_skel)
		return -errno;
	memset(&linfo, 0, sizeof(linfo));
	linfo.cgroup.cgroup_fd = (__u32)s->roots.v2_fd;
	linfo.cgroup.order = BPF_CGROUP_ITER_SELF_ONLY;
	opts.link_info = &linfo;
	opts.link_info_len = sizeof(linfo);
	s->flush_iter = bpf_program__attach_iter(s->flush_skel->progs.flush_memcg_stats, &opts);
	return s->flush_iter ? 0 : -errno;
}

static void flush_stop(struct cgroup_state *s)
{
	bpf_link__destroy(s->flush_iter);
	memcg_flush_bpf__destroy(s->flush_skel);
	s->flush_iter = NULL;
	s->flush_skel = NULL;
	if (s->flush_stat_fd >= 0)
		close(s->flush_stat_fd);
	s->flush_stat_fd = -1;
}

/* Reading memory.stat makes the kernel flush before it prints (on 6.1 when
 * enough updates are pending, the same rule every reader of the file gets). */
static int flush_by_reading(struct cgroup_state *s)
{
	if (pread(s->flush_stat_fd, s->buf, CGROUP_READ_BUF_SIZE, 0) < 0)
		return -errno;
	return 0;
}

void cgroup_bpf_v2_stop(struct cgroup_state *s)
{
	flush_stop(s);
	s->v2_stat = s->v2_psi = false;
	s->v2_fields = 0;
}

void cgroup_bpf_v2_flush(struct cgroup_state *s)
{
	int r;

	if (!s->v2_stat)
		return;
	r = s->flush_iter ? cgroup_bpf_run_iter(s->flush_iter) : flush_by_reading(s);
	/* Without it the statistics are not used: a failed flush reads them from cgroupfs. */
	if (r < 0) {
		log_warning("Collector cgroup: the rstat flush failed: memory.stat from cgroupfs from now on");
		s->v2_stat = false;
	}
}

int cgroup_bpf_v2_start(struct cgroup_state *s)
{
	int r = flush_start(s);

	if (r < 0) {
		log_debug_errno(r, "cgroup: no rstat flush from BPF (cgroup_rstat_flush kfunc): %m");
		flush_stop(s);
		s->flush_stat_fd = openat(s->roots.v2_fd, "memory.stat", O_RDONLY | O_CLOEXEC);
	}
	/* The program says at its last call what this kernel lets it read. */
	r = cgroup_bpf_refresh(s);
	if (r < 0)
		return r;
	s->v2_fields = s->memcg_skel->bss->v2_fields;
	s->v2_stat = (s->v2_fields & MEMCG_V2_HAS_STAT) && (s->flush_iter || s->flush_stat_fd >= 0);
	s->v2_psi = (s->v2_fields & MEMCG_V2_HAS_PSI) && s->roots.pressure;
	if (!s->v2_stat)
		flush_stop(s); /* nothing to flush for */
	log_info("Collector cgroup: cgroup2 through the BPF iterator: usage, max, high, events%s%s; from cgroupfs:%s%s%s",
		 !s->v2_stat	 ? ""
		 : s->flush_iter ? ", memory.stat (cgroup_rstat_flush)"
				 : ", memory.stat (flushed by reading the root's)",
		 s->v2_psi ? ", pressure" : "", s->v2_stat ? "" : " memory.stat",
		 s->v2_psi || !s->roots.pressure ? "" : " pressure",
		 s->v2_stat && (s->v2_psi || !s->roots.pressure) ? " nothing" : "");
	return 0;
}

void cgroup_bpf_mode(const struct cgroup_state *s, char *buf, size_t len)
{
	snprintf(buf, len, "iter%s%s", !s->memcg_v2 || s->v2_stat ? "" : ",stat=cgroupfs",
		 !s->memcg_v2 || s->v2_psi || !s->roots.pressure ? "" : ",psi=cgroupfs");
}

/* memory.max and memory.high print "max" for PAGE_COUNTER_MAX (LONG_MAX / PAGE_SIZE). */
static bool pages_to_bytes(const struct cgroup_state *s, uint64_t pages, uint64_t *bytes)
{
	if (pages >= (uint64_t)INT64_MAX / s->page_size) {
		*bytes = UINT64_MAX;
		return false;
	}
	*bytes = pages * s->page_size;
	return true;
}

void cgroup_bpf_v2_fill(const struct cgroup_state *s, const struct memcg_record *rec, struct cgroup_mem *m)
{
	*m = (struct cgroup_mem){ .v1 = false, .usage = rec->usage_pages * s->page_size };
	m->has_limit = pages_to_bytes(s, rec->max_pages, &m->limit);
	m->has_high = pages_to_bytes(s, rec->high_pages, &m->high);
	/* The record's events are in enum cgroup_event's order, low to oom_group_kill. */
	for (unsigned i = 0; i < MEMCG_V2_EVENTS; i++)
		if (rec->v2_present & MEMCG_V2_HAS_EVENT(i)) {
			m->events[CGROUP_EVENT_LOW + i] = rec->events[i];
			m->events_present |= 1u << (CGROUP_EVENT_LOW + i);
		}
	if (s->v2_stat && (rec->v2_present & MEMCG_V2_HAS_STAT)) {
		m->inactive_file = rec->inactive_file_pages * s->page_size;
		m->has_inactive_file = true;
		for (unsigned k = 0; k < 3; k++)
			for (unsigned t = 0; t < 2; t++) {
				m->workingset[k][t] = rec->workingset[k][t];
				m->workingset_present |= 1u << (2 * k + t);
			}
	}
	if (s->v2_psi && (rec->v2_present & MEMCG_V2_HAS_PSI)) {
		m->has_pressure = m->has_pressure_full = true;
		m->pressure_some_usec = rec->psi_some_ns / 1000;
		m->pressure_full_usec = rec->psi_full_ns / 1000;
	}
}
