// SPDX-License-Identifier: GPL-2.0
/* Direct and memcg reclaim: who stalls, for how long, under which cgroup.
 * The kernel sums everything (bpf/reclaim.bpf.c); each window this reads the
 * cumulative counters, works out per-window deltas, and exports the top_k
 * processes and cgroups by stall time, folding the rest into "other". */
#include <linux/types.h>
#include <bpf/bpf.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bpf_attach.h"
#include "cgroup_names.h"
#include "clock.h"
#include "collector.h"
#include "config.h"
#include "events.h"
#include "label_base.h"
#include "reclaim.h"
#include "reclaim.skel.h"
#include "tracker.h"

DEFINE_BPF_SKEL_OPS(reclaim_bpf);

/* The first exported bucket is 2^10 ns (about 1 us): shorter stalls are
 * folded into it; every bound is still a power of two of nanoseconds. */
#define FIRST_EXPORTED_SLOT 10
_Static_assert(RECLAIM_SLOTS - FIRST_EXPORTED_SLOT == RECLAIM_SECONDS_BOUNDS + 1,
	       "the catalogue's reclaim buckets are the exported slots but the last");
#define SWEEP_EVERY_WINDOWS 30
/* How long a removed cgroup's totals stay the base of its path's next cgroup
 * while that one is not exported, beyond series_ttl. */
#define RECREATED_KEEP_USEC (60 * USEC_PER_SEC)

struct reclaim_config {
	int flavour;
	uint64_t top_k;
	uint64_t max_processes;
	uint64_t max_cgroups;
	uint64_t series_ttl_msec;
	char cgroup_root[256]; /* "" = found in /proc/self/mountinfo */
};

enum { PROC_DIRECT_COUNT, PROC_DIRECT_NS, PROC_MEMCG_COUNT, PROC_MEMCG_NS, PROC_COUNTERS };
enum { CG_COUNT, CG_NS, CG_COUNTERS };

struct reclaim_state {
	struct bpf_attachment bpf;
	struct collector_context ctx;
	struct reclaim_config cfg;
	struct tracker procs, cgroups;
	struct label_bases recreated; /* totals of removed cgroups whose path a new one took */
	struct collector_cgroup_table paths; /* none: no cgroup paths, no per-cgroup series */
	uint64_t windows;
	/* The kernel's map_writes when the maps were last read; a delete of
	 * ours (maps_stale) reads them again too. */
	uint64_t maps_read_at;
	bool maps_stale;
};

static const struct bpf_hook reclaim_hooks[] = {
	{ "vmscan", "mm_vmscan_direct_reclaim_begin", BPF_HOOK_PROGS(reclaim_bpf, direct_begin) },
	{ "vmscan", "mm_vmscan_direct_reclaim_end", BPF_HOOK_PROGS(reclaim_bpf, direct_end) },
	{ "vmscan", "mm_vmscan_memcg_reclaim_begin", BPF_HOOK_PROGS(reclaim_bpf, memcg_begin),
	  .optional = true },
	{ "vmscan", "mm_vmscan_memcg_reclaim_end", BPF_HOOK_PROGS(reclaim_bpf, memcg_end),
	  .optional = true },
	{ "vmscan", "mm_vmscan_memcg_softlimit_reclaim_begin",
	  BPF_HOOK_PROGS(reclaim_bpf, softlimit_begin), .optional = true },
	{ "vmscan", "mm_vmscan_memcg_softlimit_reclaim_end",
	  BPF_HOOK_PROGS(reclaim_bpf, softlimit_end), .optional = true },
};

enum { HOOK_MEMCG_END = 3, HOOK_SOFTLIMIT_END = 5 };

static const enum metric_id total_ids[RECLAIM_KINDS] = {
	MW_DIRECT_RECLAIM_TOTAL, MW_MEMCG_RECLAIM_TOTAL, MW_MEMCG_SOFTLIMIT_RECLAIM_TOTAL,
};
static const enum metric_id seconds_ids[RECLAIM_KINDS] = {
	MW_DIRECT_RECLAIM_SECONDS, MW_MEMCG_RECLAIM_SECONDS, MW_MEMCG_SOFTLIMIT_RECLAIM_SECONDS,
};
static const enum metric_id pages_ids[RECLAIM_KINDS] = {
	MW_DIRECT_RECLAIM_PAGES_TOTAL, MW_MEMCG_RECLAIM_PAGES_TOTAL, MW_MEMCG_SOFTLIMIT_RECLAIM_PAGES_TOTAL,
};

static const struct collector_key reclaim_keys[] = {
	{ BPF_ATTACH_KEY(struct reclaim_config, flavour), "auto" },
	{ CONFIG_KEY_UINT("top_k", struct reclaim_config, top_k, 1, 1000), "10" },
	{ CONFIG_KEY_UINT("max_processes", struct reclaim_config, max_processes, 64, 1048576), "4096" },
	{ CONFIG_KEY_UINT("max_cgroups", struct reclaim_config, max_cgroups, 64, 1048576), "4096" },
	{ CONFIG_KEY_DURATION("series_ttl", struct reclaim_config, series_ttl_msec, 0, 86400000), "5m" },
	{ CONFIG_KEY_PATH("cgroup_root", struct reclaim_config, cgroup_root), NULL }, /* "": from mountinfo */
};

static int reclaim_probe(const void *cfg, const struct collector_context *ctx, struct collector_status *st)
{
	return bpf_hooks_probe(reclaim_hooks, ARRAY_SIZE(reclaim_hooks), st);
}

static int size_maps(void *skel, void *userdata)
{
	struct reclaim_bpf *obj = skel;
	const struct reclaim_state *s = userdata;
	int r;

	r = bpf_map__set_max_entries(obj->maps.processes, (__u32)s->cfg.max_processes);
	if (r == 0)
		r = bpf_map__set_max_entries(obj->maps.cgroups, (__u32)s->cfg.max_cgroups);
	if (r == 0)
		r = event_channel_prepare(s->ctx.events, obj->maps.events, &obj->rodata->events_use_ringbuf);
	if (r == 0)
		r = bpf_shared_map_reuse(s->ctx.shared_maps, obj->maps.memavail);
	return r;
}

/* The shared id -> path table of cgroup_root, or of the memory hierarchy. */
static int open_paths(struct collector_cgroup_table *t, struct cgroup_hierarchy *h, const struct reclaim_config *c)
{
	return collector_cgroup_table_open(t, h, c->cgroup_root, c->max_cgroups * 4);
}

static int reclaim_start(void *priv, const void *cfg, const struct collector_context *ctx,
			 struct collector_status *st)
{
	struct reclaim_state *s = priv;
	int r;

	s->cfg = *(const struct reclaim_config *)cfg;
	s->ctx = *ctx;
	r = bpf_attach_hooks(&s->bpf, &reclaim_bpf_skel_ops, reclaim_hooks, ARRAY_SIZE(reclaim_hooks),
			     s->cfg.flavour, size_maps, s, st);
	if (r < 0)
		return r;
	event_channel_add_source(s->ctx.events, &((struct reclaim_bpf *)s->bpf.skel)->bss->event_counters);
	tracker_init(&s->procs, PROC_COUNTERS, PROC_DIRECT_NS, PROC_MEMCG_NS);
	tracker_init(&s->cgroups, CG_COUNTERS, CG_NS, CG_COUNT);
	label_bases_init(&s->recreated, s->cfg.max_cgroups);
	if (open_paths(&s->paths, ctx->cgroups, &s->cfg) < 0) {
		st->state = COLLECTOR_DEGRADED;
		collector_status_set_reason(st, "no memory cgroup hierarchy found: per-cgroup series are off");
	}
	return 0;
}

static bool process_alive(uint32_t tgid)
{
	return kill((pid_t)tgid, 0) == 0 || errno != ESRCH;
}

#define READ_BATCH 64
#define READ_BATCH_VALUE_MAX 64

/* Reads a whole BPF hash map into the tracker, one row per entry (at most
 * max); read turns a value into its row. In batches (BPF_MAP_LOOKUP_BATCH,
 * 5.6+: one system call per 64 entries where the walk took two per entry);
 * entry by entry where the kernel refuses it (older kernels, a bucket larger
 * than a batch). */
/* Unchanged maps are not read: every row stands as it was. */
static void read_map(int fd, bool changed, size_t key_size, void *value, size_t value_size, size_t max,
		     struct tracker *t, struct tracked_row *(*read)(struct tracker *t, uint64_t key, const void *value))
{
	uint64_t key = 0, next = 0, batch = 0, keys[READ_BATCH];
	unsigned char values[READ_BATCH * READ_BATCH_VALUE_MAX];
	bool first = true, done = false;
	void *prev = NULL;

	tracker_begin(t, max);
	if (!changed) {
		tracker_void_read(t);
		return;
	}
	while (value_size <= READ_BATCH_VALUE_MAX && !done) {
		__u32 count = READ_BATCH;
		int r = bpf_map_lookup_batch(fd, first ? NULL : &batch, &batch, keys, values, &count, NULL);

		/* The entry walk reads it all again; a row read twice in one pass
		 * keeps its start of window (tracker_read). */
		if (r < 0 && errno != ENOENT)
			goto one_by_one;
		done = r < 0; /* ENOENT: the last batch */
		first = false;
		for (__u32 i = 0; i < count; i++) {
			uint64_t k = key_size == 4 ? *(uint32_t *)((unsigned char *)keys + i * key_size)
						   : *(uint64_t *)((unsigned char *)keys + i * key_size);

			memcpy(value, values + i * value_size, value_size);
			(void)read(t, k, value); /* NULL: max reached, or no memory */
		}
	}
	if (!first)
		return;
one_by_one:
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, value) < 0)
			continue; /* deleted in between */
		(void)read(t, key_size == 4 ? (uint32_t)key : key, value); /* NULL: max reached, or no memory */
	}
}

static struct tracked_row *read_process(struct tracker *t, uint64_t key, const void *value)
{
	const struct reclaim_process *p = value;
	struct tracked_row *row = tracker_read(t, key, p->start_boottime_ns, p->comm, RECLAIM_COMM_LEN);

	if (row) {
		row->value[PROC_DIRECT_COUNT] = p->direct_count;
		row->value[PROC_DIRECT_NS] = p->direct_ns;
		row->value[PROC_MEMCG_COUNT] = p->memcg_count;
		row->value[PROC_MEMCG_NS] = p->memcg_ns;
	}
	return row;
}

static struct tracked_row *read_cgroup(struct tracker *t, uint64_t key, const void *value)
{
	const struct reclaim_cgroup *c = value;
	struct tracked_row *row = tracker_read(t, key, 0, NULL, 0);

	if (row) {
		row->value[CG_COUNT] = c->direct_count + c->memcg_count;
		row->value[CG_NS] = c->direct_ns + c->memcg_ns;
	}
	return row;
}

static void put_process(struct snapshot *snap, const char *pid, const char *comm, const uint64_t *v)
{
	const char *const labels[] = { pid, comm };

	snapshot_add(snap, METRIC(MW_PROCESS_DIRECT_RECLAIMS_TOTAL), labels, (double)v[PROC_DIRECT_COUNT]);
	snapshot_add(snap, METRIC(MW_PROCESS_DIRECT_RECLAIM_SECONDS_TOTAL), labels, (double)v[PROC_DIRECT_NS] / 1e9);
	snapshot_add(snap, METRIC(MW_PROCESS_MEMCG_RECLAIMS_TOTAL), labels, (double)v[PROC_MEMCG_COUNT]);
	snapshot_add(snap, METRIC(MW_PROCESS_MEMCG_RECLAIM_SECONDS_TOTAL), labels, (double)v[PROC_MEMCG_NS] / 1e9);
}

static void collect_processes(struct reclaim_state *s, struct snapshot *snap, uint64_t now, bool changed)
{
	int fd = bpf_map__fd(((struct reclaim_bpf *)s->bpf.skel)->maps.processes);
	uint64_t ttl = s->cfg.series_ttl_msec * USEC_PER_MSEC;
	_cleanup_free_ const struct tracked_row **top = NULL;
	struct reclaim_process value;
	size_t n, i;
	char pid[16];

	read_map(fd, changed, 4, &value, sizeof(value), s->cfg.max_processes, &s->procs, read_process);
	tracker_update(&s->procs, now);
	/* An exited process stays exported for series_ttl, so a short-lived one is
	 * not missed by the next scrape; after that its entry is dropped. */
	if (s->windows % SWEEP_EVERY_WINDOWS == 0)
		for (i = 0; i < s->procs.n_rows; i++) {
			const struct tracked_row *r = &s->procs.rows[i];
			__u32 k = (__u32)r->key;

			if (tracker_row_idle(r, ttl, now) && !process_alive(k) && bpf_map_delete_elem(fd, &k) == 0)
				s->maps_stale = true;
		}
	top = calloc(s->cfg.top_k, sizeof(*top));
	if (!top)
		return;
	n = tracker_select(&s->procs, s->cfg.top_k, ttl, now, top);
	for (i = 0; i < n; i++) {
		snprintf(pid, sizeof(pid), "%" PRIu64, top[i]->key);
		put_process(snap, pid, tracker_row_label(top[i]), top[i]->total);
	}
	put_process(snap, "other", "", s->procs.other);
}

static int cmp_label_then_key(const void *a, const void *b)
{
	const struct tracked_row *x = *(const struct tracked_row *const *)a, *y = *(const struct tracked_row *const *)b;
	int c = strcmp(tracker_row_label(x), tracker_row_label(y));

	return c ? c : (x->key > y->key) - (x->key < y->key);
}

/* A removed cgroup whose path a newer cgroup took (ids only grow) would be a
 * second series of the same labels for series_ttl, and the newer one's
 * smaller count would follow it. Its totals are retired under the path
 * instead, the newer one is exported on top of them, and its map entry goes. */
static void retire_recreated(struct reclaim_state *s, int fd, uint64_t now)
{
	_cleanup_free_ struct tracked_row **named = NULL;
	size_t i, n = 0;
	bool any_removed = false;

	for (i = 0; i < s->cgroups.n_rows && !any_removed; i++)
		any_removed = tracker_row_label(&s->cgroups.rows[i])[0] &&
			      cgroup_hierarchy_lookup(s->paths.hierarchy, s->paths.id, s->cgroups.rows[i].key, now,
						      NULL, 0) < 0;
	if (!any_removed)
		return;
	named = calloc(s->cgroups.n_rows, sizeof(*named));
	if (!named)
		return;
	for (i = 0; i < s->cgroups.n_rows; i++)
		if (tracker_row_label(&s->cgroups.rows[i])[0])
			named[n++] = &s->cgroups.rows[i];
	qsort(named, n, sizeof(*named), cmp_label_then_key);
	for (i = 0; i + 1 < n; i++) {
		struct tracked_row *old = named[i];

		if (strcmp(tracker_row_label(old), tracker_row_label(named[i + 1])) != 0 ||
		    cgroup_hierarchy_lookup(s->paths.hierarchy, s->paths.id, old->key, now, NULL, 0) == 0)
			continue;
		if (label_bases_retire(&s->recreated, old->key, tracker_row_label(old), old->total, CG_COUNTERS,
				       now) < 0)
			continue;
		if (bpf_map_delete_elem(fd, &old->key) == 0)
			s->maps_stale = true;
		/* Neither exported nor folded into "other": its totals are the base now. */
		memset(old->delta, 0, sizeof(old->delta));
		old->last_change_usec = 0;
	}
}

static void collect_cgroups(struct reclaim_state *s, struct snapshot *snap, uint64_t now, bool changed)
{
	int fd = bpf_map__fd(((struct reclaim_bpf *)s->bpf.skel)->maps.cgroups);
	uint64_t ttl = s->cfg.series_ttl_msec * USEC_PER_MSEC;
	_cleanup_free_ const struct tracked_row **top = NULL;
	struct reclaim_cgroup value;
	char path[PATH_MAX];
	const char *labels[CGROUP_LABELS_N];
	struct cgroup_labels names;
	size_t n, i;

	read_map(fd, changed, 8, &value, sizeof(value), s->cfg.max_cgroups, &s->cgroups, read_cgroup);
	/* No path: removed. It keeps its last one (the row's label) until it goes idle. */
	for (i = 0; i < s->cgroups.n_rows && s->paths.id >= 0; i++) {
		struct tracked_row *r = &s->cgroups.rows[i];

		if (tracker_row_was_read(&s->cgroups, r) &&
		    cgroup_hierarchy_lookup(s->paths.hierarchy, s->paths.id, r->key, now, path, sizeof(path)) == 0 &&
		    strcmp(tracker_row_label(r), path) != 0)
			(void)tracker_row_set_label(r, path, SIZE_MAX); /* without memory: none, as if removed */
	}
	tracker_update(&s->cgroups, now);
	if (s->paths.id >= 0)
		retire_recreated(s, fd, now);
	label_bases_expire(&s->recreated, now > ttl + RECREATED_KEEP_USEC ? now - ttl - RECREATED_KEEP_USEC : 0);
	for (i = 0; i < s->cgroups.n_rows && s->paths.id >= 0; i++) {
		const struct tracked_row *r = &s->cgroups.rows[i];

		if (tracker_row_idle(r, ttl, now) &&
		    cgroup_hierarchy_lookup(s->paths.hierarchy, s->paths.id, r->key, now, NULL, 0) < 0 &&
		    bpf_map_delete_elem(fd, &r->key) == 0)
			s->maps_stale = true;
	}
	top = calloc(s->cfg.top_k, sizeof(*top));
	if (!top)
		return;
	n = tracker_select(&s->cgroups, s->cfg.top_k, ttl, now, top);
	for (i = 0; i < n; i++) {
		const char *label = tracker_row_label(top[i]);
		uint64_t total[CG_COUNTERS];

		if (!label[0]) {
			/* Never resolved (removed before we saw it): fold it in. */
			s->cgroups.other[CG_COUNT] += top[i]->delta[CG_COUNT];
			s->cgroups.other[CG_NS] += top[i]->delta[CG_NS];
			continue;
		}
		/* A removed cgroup keeps its path (the row's label) and its names
		 * (cgroup_names keeps those of pods gone) while it is exported. */
		cgroup_names_resolve(s->ctx.names, label, now, &names);
		cgroup_labels_values(label, &names, labels);
		memcpy(total, top[i]->total, sizeof(total));
		(void)label_bases_add(&s->recreated, label, top[i]->key, total, CG_COUNTERS, now);
		snapshot_add(snap, METRIC(MW_CGROUP_RECLAIMS_TOTAL), labels, (double)total[CG_COUNT]);
		snapshot_add(snap, METRIC(MW_CGROUP_RECLAIM_SECONDS_TOTAL), labels, (double)total[CG_NS] / 1e9);
	}
	cgroup_labels_values("other", NULL, labels);
	snapshot_add(snap, METRIC(MW_CGROUP_RECLAIMS_TOTAL), labels, (double)s->cgroups.other[CG_COUNT]);
	snapshot_add(snap, METRIC(MW_CGROUP_RECLAIM_SECONDS_TOTAL), labels, (double)s->cgroups.other[CG_NS] / 1e9);
}

static int reclaim_collect(void *priv, struct snapshot *snap)
{
	struct reclaim_state *s = priv;
	struct reclaim_bpf *skel = s->bpf.skel;
	uint64_t now = now_mono_usec();
	struct latency_hist_source src = {
		.first_slot = FIRST_EXPORTED_SLOT,
		.window = latency_hist_next_window(&skel->bss->exemplar_window),
		.now_mono_ns = now * 1000,
		.now_real_ns = now_real_usec() * 1000,
		.cgroup_path = exemplar_cgroup_path,
		.userdata = &s->paths,
	};
	uint64_t writes;
	bool changed;
	int kind;

	for (kind = 0; kind < RECLAIM_KINDS; kind++) {
		const struct reclaim_histogram *h = &skel->bss->histograms[kind];
		uint64_t count = 0;

		if ((kind == RECLAIM_MEMCG && !s->bpf.hook_present[HOOK_MEMCG_END]) ||
		    (kind == RECLAIM_MEMCG_SOFTLIMIT && !s->bpf.hook_present[HOOK_SOFTLIMIT_END]))
			continue;
		src.h = &h->latency;
		if (latency_hist_export(snap, METRIC(seconds_ids[kind]), NULL, &src, &count) < 0)
			continue;
		/* The counter is the histogram's count, read once, so the two always agree. */
		snapshot_add(snap, METRIC(total_ids[kind]), NULL, (double)count);
		snapshot_add(snap, METRIC(pages_ids[kind]), NULL, (double)__atomic_load_n(&h->pages, __ATOMIC_RELAXED));
	}
	snapshot_add(snap, METRIC(MW_RECLAIM_UNMATCHED_ENDS_TOTAL), NULL, (double)__atomic_load_n(&skel->bss->unmatched_ends, __ATOMIC_RELAXED));
	/* Loaded before the maps are read: a write landing after the read moves it again. */
	writes = __atomic_load_n(&skel->bss->map_writes, __ATOMIC_ACQUIRE);
	changed = s->windows == 0 || s->maps_stale || writes != s->maps_read_at;
	s->maps_stale = false;
	collect_processes(s, snap, now, changed);
	collect_cgroups(s, snap, now, changed);
	s->maps_read_at = writes;
	s->windows++;
	return 0;
}

/* top_k, series_ttl and cgroup_root apply in place; a new flavour or new map
 * sizes need a new BPF object. */
static int reclaim_reload(void *priv, const void *cfg)
{
	struct reclaim_state *s = priv;
	const struct reclaim_config *c = cfg;

	if (!bpf_attachment_serves(&s->bpf, s->cfg.flavour, c->flavour) || c->max_processes != s->cfg.max_processes ||
	    c->max_cgroups != s->cfg.max_cgroups)
		return -EAGAIN;
	if (strcmp(c->cgroup_root, s->cfg.cgroup_root) != 0) {
		struct collector_cgroup_table paths;

		if (open_paths(&paths, s->paths.hierarchy, c) < 0 && s->paths.id >= 0)
			log_warning("Collector reclaim: no memory cgroup hierarchy at the new cgroup_root; per-cgroup "
				    "series keep their last paths");
		collector_cgroup_table_close(&s->paths);
		s->paths = paths;
	}
	s->cfg = *c;
	return 0;
}

static uint64_t reclaim_series_hold_msec(const void *cfg)
{
	return ((const struct reclaim_config *)cfg)->series_ttl_msec;
}

static void reclaim_stop(void *priv)
{
	struct reclaim_state *s = priv;

	if (s->bpf.skel)
		event_channel_remove_source(s->ctx.events, &((struct reclaim_bpf *)s->bpf.skel)->bss->event_counters);
	bpf_attachment_destroy(&s->bpf);
	collector_cgroup_table_close(&s->paths);
	tracker_done(&s->procs);
	tracker_done(&s->cgroups);
	label_bases_done(&s->recreated);
}

const struct collector_ops reclaim_collector = {
	.name = "reclaim",
	.summary = "direct and memcg reclaim stalls: counts, latency histograms, per process and per cgroup",
	.default_enabled = true,
	.config_size = sizeof(struct reclaim_config),
	.keys = reclaim_keys,
	.n_keys = ARRAY_SIZE(reclaim_keys),
	.priv_size = sizeof(struct reclaim_state),
	.probe = reclaim_probe,
	.start = reclaim_start,
	.collect = reclaim_collect,
	.reload = reclaim_reload,
	.stop = reclaim_stop,
	.series_hold_msec = reclaim_series_hold_msec,
	.counts_from_start = true,
};
