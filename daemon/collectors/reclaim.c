// SPDX-License-Identifier: GPL-2.0
/* Direct and memcg reclaim: who stalls, for how long, under which cgroup.
 * The kernel sums everything (bpf/reclaim.bpf.c); each window this reads the
 * cumulative counters, works out per-window deltas, and exports the top_k
 * processes and cgroups by stall time, folding the rest into "other". */
#include <linux/types.h>
#include <bpf/bpf.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bpf_attach.h"
#include "cgroup_paths.h"
#include "collector.h"
#include "config.h"
#include "core.h"
#include "fileio.h"
#include "log.h"
#include "reclaim.h"
#include "reclaim.skel.h"

DEFINE_BPF_SKEL_OPS(reclaim_bpf);

/* The first exported bucket is 2^10 ns (about 1 us): shorter stalls are
 * folded into it; every bound is still a power of two of nanoseconds. */
#define FIRST_EXPORTED_SLOT 10
#define SWEEP_EVERY_WINDOWS 30

struct reclaim_config {
	int flavour;
	uint64_t top_k;
	uint64_t max_processes;
	uint64_t max_cgroups;
	uint64_t series_ttl_msec;
	char cgroup_root[256]; /* "" = found in /proc/self/mountinfo */
};

/* One tracked BPF map entry and what it was last window. */
struct row {
	uint64_t key;
	union {
		struct reclaim_process proc;
		struct reclaim_cgroup cg;
	} v;
	uint64_t window_ns;      /* stall time added in this window */
	uint64_t last_change_usec;
	char *path;              /* cgroups: last resolved path, kept after the cgroup is removed */
};

struct other {
	uint64_t count, ns, memcg_count, memcg_ns;
};

struct reclaim_state {
	struct bpf_attachment bpf;
	struct reclaim_config cfg;
	struct row *procs, *cgroups;
	size_t n_procs, n_cgroups;
	struct other other_proc, other_cgroup;
	struct cgroup_paths *paths;
	uint64_t windows;
};

static const struct bpf_hook reclaim_hooks[] = {
	{ "vmscan", "mm_vmscan_direct_reclaim_begin", { "direct_begin_btf", "direct_begin_raw", "direct_begin_tp" } },
	{ "vmscan", "mm_vmscan_direct_reclaim_end", { "direct_end_btf", "direct_end_raw", "direct_end_tp" } },
	{ "vmscan", "mm_vmscan_memcg_reclaim_begin", { "memcg_begin_btf", "memcg_begin_raw", "memcg_begin_tp" },
	  .optional = true },
	{ "vmscan", "mm_vmscan_memcg_reclaim_end", { "memcg_end_btf", "memcg_end_raw", "memcg_end_tp" },
	  .optional = true },
	{ "vmscan", "mm_vmscan_memcg_softlimit_reclaim_begin",
	  { "softlimit_begin_btf", "softlimit_begin_raw", "softlimit_begin_tp" }, .optional = true },
	{ "vmscan", "mm_vmscan_memcg_softlimit_reclaim_end",
	  { "softlimit_end_btf", "softlimit_end_raw", "softlimit_end_tp" }, .optional = true },
};

enum { HOOK_MEMCG_END = 3, HOOK_SOFTLIMIT_END = 5 };

static const struct metric_desc desc_total[RECLAIM_KINDS] = {
	{ "memwatch_direct_reclaim_total", "Direct reclaim stalls: an allocating task had to reclaim memory itself.", METRIC_COUNTER },
	{ "memwatch_memcg_reclaim_total", "Memory cgroup limit reclaims: a task charging a cgroup at its limit had to reclaim.", METRIC_COUNTER },
	{ "memwatch_memcg_softlimit_reclaim_total", "Memory cgroup soft limit reclaims (cgroup v1, from kswapd or direct reclaim).", METRIC_COUNTER },
};
static const struct metric_desc desc_seconds[RECLAIM_KINDS] = {
	{ "memwatch_direct_reclaim_seconds", "Direct reclaim stall time per stall; buckets are powers of two nanoseconds.", METRIC_HISTOGRAM },
	{ "memwatch_memcg_reclaim_seconds", "Memory cgroup limit reclaim stall time per stall.", METRIC_HISTOGRAM },
	{ "memwatch_memcg_softlimit_reclaim_seconds", "Memory cgroup soft limit reclaim time per run.", METRIC_HISTOGRAM },
};
static const struct metric_desc desc_pages[RECLAIM_KINDS] = {
	{ "memwatch_direct_reclaim_pages_total", "Pages reclaimed by direct reclaim.", METRIC_COUNTER },
	{ "memwatch_memcg_reclaim_pages_total", "Pages reclaimed by memory cgroup limit reclaim.", METRIC_COUNTER },
	{ "memwatch_memcg_softlimit_reclaim_pages_total", "Pages reclaimed by memory cgroup soft limit reclaim.", METRIC_COUNTER },
};
static const struct metric_desc desc_proc_direct_seconds = {
	"memwatch_process_direct_reclaim_seconds_total", "Time the process spent stalled in direct reclaim.",
	METRIC_COUNTER, 2, { "pid", "comm" },
};
static const struct metric_desc desc_proc_direct_count = {
	"memwatch_process_direct_reclaims_total", "Direct reclaim stalls of the process.",
	METRIC_COUNTER, 2, { "pid", "comm" },
};
static const struct metric_desc desc_proc_memcg_seconds = {
	"memwatch_process_memcg_reclaim_seconds_total",
	"Time the process spent stalled in memory cgroup limit reclaim.", METRIC_COUNTER, 2, { "pid", "comm" },
};
static const struct metric_desc desc_proc_memcg_count = {
	"memwatch_process_memcg_reclaims_total", "Memory cgroup limit reclaim stalls of the process.",
	METRIC_COUNTER, 2, { "pid", "comm" },
};
static const struct metric_desc desc_cgroup_seconds = {
	"memwatch_cgroup_reclaim_seconds_total",
	"Time tasks of the memory cgroup spent stalled in direct or memcg reclaim.", METRIC_COUNTER, 1, { "cgroup" },
};
static const struct metric_desc desc_cgroup_count = {
	"memwatch_cgroup_reclaims_total", "Direct and memcg reclaim stalls of tasks in the memory cgroup.",
	METRIC_COUNTER, 1, { "cgroup" },
};
static const struct metric_desc desc_unmatched = {
	"memwatch_reclaim_unmatched_ends_total",
	"Reclaim end events without a recorded begin (attached mid-stall, or the start map was full).",
	METRIC_COUNTER,
};

static void reclaim_config_defaults(void *cfg)
{
	struct reclaim_config *c = cfg;

	*c = (struct reclaim_config){
		.flavour = -1,
		.top_k = 10,
		.max_processes = 4096,
		.max_cgroups = 4096,
		.series_ttl_msec = 300000,
	};
}

static int reclaim_configure(void *cfg, const char *key, const char *value, char *errmsg, size_t errlen)
{
	struct reclaim_config *c = cfg;
	int r;

	if (strcmp(key, "attach") == 0)
		return bpf_parse_attach_key(value, &c->flavour, errmsg, errlen);
	if (strcmp(key, "top_k") == 0) {
		r = config_parse_uint(value, 1, 1000, &c->top_k);
		if (r < 0)
			snprintf(errmsg, errlen, "'%s' is not a number between 1 and 1000", value);
		return r;
	}
	if (strcmp(key, "max_processes") == 0 || strcmp(key, "max_cgroups") == 0) {
		r = config_parse_uint(value, 64, 1048576, key[4] == 'p' ? &c->max_processes : &c->max_cgroups);
		if (r < 0)
			snprintf(errmsg, errlen, "'%s' is not a number between 64 and 1048576", value);
		return r;
	}
	if (strcmp(key, "series_ttl") == 0) {
		r = config_parse_duration_msec(value, 0, 86400000, &c->series_ttl_msec);
		if (r < 0)
			snprintf(errmsg, errlen, "'%s' is not a duration between 0 and 24h (e.g. 5m, 300s)", value);
		return r;
	}
	if (strcmp(key, "cgroup_root") == 0) {
		if (value[0] != '/' || strlen(value) >= sizeof(c->cgroup_root)) {
			snprintf(errmsg, errlen, "'%s' is not an absolute path", value);
			return -EINVAL;
		}
		snprintf(c->cgroup_root, sizeof(c->cgroup_root), "%s", value);
		return 0;
	}
	return -ENOENT;
}

static int reclaim_probe(const void *cfg, struct collector_status *st)
{
	return bpf_hooks_probe(reclaim_hooks, ARRAY_SIZE(reclaim_hooks), st);
}

static int size_maps(void *skel, void *userdata)
{
	struct reclaim_bpf *obj = skel;
	const struct reclaim_config *c = userdata;
	int r;

	r = bpf_map__set_max_entries(obj->maps.processes, (__u32)c->max_processes);
	if (r == 0)
		r = bpf_map__set_max_entries(obj->maps.cgroups, (__u32)c->max_cgroups);
	return r;
}

static struct cgroup_paths *open_cgroup_paths(const struct reclaim_config *c)
{
	char root[256], *mountinfo = NULL;

	if (c->cgroup_root[0]) {
		snprintf(root, sizeof(root), "%s", c->cgroup_root);
	} else {
		enum cgroup_memory_mode mode = CGROUP_MEMORY_NONE;

		if (read_full_file("/proc/self/mountinfo", 4 << 20, &mountinfo, NULL) == 0)
			mode = cgroup_find_memory_root(mountinfo, root, sizeof(root), cgroup_v2_has_memory);
		free(mountinfo);
		if (mode == CGROUP_MEMORY_NONE)
			return NULL;
	}
	return cgroup_paths_new(root, 64, c->max_cgroups * 4, USEC_PER_SEC);
}

static int reclaim_start(void *priv, const void *cfg, struct collector_status *st)
{
	struct reclaim_state *s = priv;
	int r;

	s->cfg = *(const struct reclaim_config *)cfg;
	r = bpf_attach_hooks(&s->bpf, &reclaim_bpf_skel_ops, reclaim_hooks, ARRAY_SIZE(reclaim_hooks),
			     s->cfg.flavour, size_maps, &s->cfg, st);
	if (r < 0)
		return r;
	s->paths = open_cgroup_paths(&s->cfg);
	if (!s->paths) {
		st->state = COLLECTOR_DEGRADED;
		collector_status_set_reason(st, "no memory cgroup hierarchy found: per-cgroup series are off");
	}
	return 0;
}

static int cmp_row(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

static uint64_t sub(uint64_t now, uint64_t before)
{
	/* A reset (reused pid, LRU eviction and re-insert) starts from zero again. */
	return now >= before ? now - before : now;
}

/* Reads a whole LRU map into rows sorted by key and carries over what each
 * key had last window. value_size is that of the BPF value. */
static int read_rows(int fd, size_t key_size, size_t value_size, size_t max, struct row *old, size_t n_old,
		     struct row **ret, size_t *ret_n)
{
	struct row *rows;
	uint64_t key = 0, next = 0;
	size_t n = 0;
	void *prev = NULL;

	rows = calloc(max ? max : 1, sizeof(*rows));
	if (!rows)
		return -ENOMEM;
	while (n < max && bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		rows[n].key = key_size == 4 ? (uint64_t)(uint32_t)key : key;
		if (bpf_map_lookup_elem(fd, &key, &rows[n].v) == 0)
			n++;
	}
	(void)value_size;
	qsort(rows, n, sizeof(*rows), cmp_row);
	/* Carry over the change time; window deltas are computed by the caller. */
	for (size_t i = 0, j = 0; i < n; i++) {
		while (j < n_old && old[j].key < rows[i].key)
			j++;
		if (j < n_old && old[j].key == rows[i].key) {
			rows[i].last_change_usec = old[j].last_change_usec;
			rows[i].path = old[j].path;
			old[j].path = NULL;
		}
	}
	*ret = rows;
	*ret_n = n;
	return 0;
}

static void free_rows(struct row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(rows[i].path);
	free(rows);
}

static const struct row *find_row(const struct row *rows, size_t n, uint64_t key)
{
	struct row k = { .key = key };

	return bsearch(&k, rows, n, sizeof(*rows), cmp_row);
}

static int cmp_window_desc(const void *a, const void *b)
{
	const struct row *const *x = a, *const *y = b;

	if ((*x)->window_ns != (*y)->window_ns)
		return (*x)->window_ns < (*y)->window_ns ? 1 : -1;
	if ((*x)->last_change_usec != (*y)->last_change_usec)
		return (*x)->last_change_usec < (*y)->last_change_usec ? 1 : -1;
	return cmp_row(*x, *y);
}

static bool process_alive(uint32_t tgid)
{
	return kill((pid_t)tgid, 0) == 0 || errno != ESRCH;
}

static void collect_processes(struct reclaim_state *s, struct snapshot *snap, uint64_t now)
{
	int fd = bpf_map__fd(((struct reclaim_bpf *)s->bpf.skel)->maps.processes);
	uint64_t ttl = s->cfg.series_ttl_msec * USEC_PER_MSEC;
	struct row *rows = NULL, **rank = NULL;
	size_t n = 0, n_rank = 0, i, exported = 0;
	bool sweep = s->windows % SWEEP_EVERY_WINDOWS == 0;
	char pid[16];

	if (read_rows(fd, 4, sizeof(struct reclaim_process), s->cfg.max_processes, s->procs, s->n_procs,
		      &rows, &n) < 0)
		return;
	rank = calloc(n ? n : 1, sizeof(*rank));
	for (i = 0; i < n && rank; i++) {
		struct row *r = &rows[i];
		const struct row *o = find_row(s->procs, s->n_procs, r->key);
		struct reclaim_process before = { 0 };
		uint64_t d_count, d_ns, d_mcount, d_mns;

		if (o && o->v.proc.start_boottime_ns == r->v.proc.start_boottime_ns)
			before = o->v.proc;
		d_count = sub(r->v.proc.direct_count, before.direct_count);
		d_ns = sub(r->v.proc.direct_ns, before.direct_ns);
		d_mcount = sub(r->v.proc.memcg_count, before.memcg_count);
		d_mns = sub(r->v.proc.memcg_ns, before.memcg_ns);
		r->window_ns = d_ns + d_mns;
		if (d_count || d_mcount)
			r->last_change_usec = now;
		/* A process that exited stays visible for series_ttl, so a short-lived
		 * one is not missed by the next scrape; then it expires. */
		if (r->last_change_usec && (r->window_ns || now - r->last_change_usec <= ttl)) {
			rank[n_rank++] = r;
			continue;
		}
		if (sweep && !process_alive((uint32_t)r->key)) {
			__u32 k = (__u32)r->key;

			bpf_map_delete_elem(fd, &k);
		}
		s->other_proc.count += d_count;
		s->other_proc.ns += d_ns;
		s->other_proc.memcg_count += d_mcount;
		s->other_proc.memcg_ns += d_mns;
	}
	if (rank)
		qsort(rank, n_rank, sizeof(*rank), cmp_window_desc);
	for (i = 0; i < n_rank; i++) {
		struct row *r = rank[i];
		const struct reclaim_process *p = &r->v.proc;
		char comm[RECLAIM_COMM_LEN + 1];

		if (exported >= s->cfg.top_k) {
			const struct row *o = find_row(s->procs, s->n_procs, r->key);
			struct reclaim_process before = { 0 };

			if (o && o->v.proc.start_boottime_ns == p->start_boottime_ns)
				before = o->v.proc;
			s->other_proc.count += sub(p->direct_count, before.direct_count);
			s->other_proc.ns += sub(p->direct_ns, before.direct_ns);
			s->other_proc.memcg_count += sub(p->memcg_count, before.memcg_count);
			s->other_proc.memcg_ns += sub(p->memcg_ns, before.memcg_ns);
			continue;
		}
		exported++;
		snprintf(pid, sizeof(pid), "%u", (unsigned)r->key);
		memcpy(comm, p->comm, RECLAIM_COMM_LEN);
		comm[RECLAIM_COMM_LEN] = '\0';
		snapshot_add(snap, &desc_proc_direct_count, (const char *const[]){ pid, comm }, (double)p->direct_count);
		snapshot_add(snap, &desc_proc_direct_seconds, (const char *const[]){ pid, comm }, (double)p->direct_ns / 1e9);
		snapshot_add(snap, &desc_proc_memcg_count, (const char *const[]){ pid, comm }, (double)p->memcg_count);
		snapshot_add(snap, &desc_proc_memcg_seconds, (const char *const[]){ pid, comm }, (double)p->memcg_ns / 1e9);
	}
	snapshot_add(snap, &desc_proc_direct_count, (const char *const[]){ "other", "" }, (double)s->other_proc.count);
	snapshot_add(snap, &desc_proc_direct_seconds, (const char *const[]){ "other", "" }, (double)s->other_proc.ns / 1e9);
	snapshot_add(snap, &desc_proc_memcg_count, (const char *const[]){ "other", "" }, (double)s->other_proc.memcg_count);
	snapshot_add(snap, &desc_proc_memcg_seconds, (const char *const[]){ "other", "" }, (double)s->other_proc.memcg_ns / 1e9);
	free(rank);
	free_rows(s->procs, s->n_procs);
	s->procs = rows;
	s->n_procs = n;
}

static void collect_cgroups(struct reclaim_state *s, struct snapshot *snap, uint64_t now)
{
	int fd = bpf_map__fd(((struct reclaim_bpf *)s->bpf.skel)->maps.cgroups);
	uint64_t ttl = s->cfg.series_ttl_msec * USEC_PER_MSEC;
	struct row *rows = NULL, **rank = NULL;
	size_t n = 0, n_rank = 0, i, exported = 0;

	if (read_rows(fd, 8, sizeof(struct reclaim_cgroup), s->cfg.max_cgroups, s->cgroups, s->n_cgroups,
		      &rows, &n) < 0)
		return;
	rank = calloc(n ? n : 1, sizeof(*rank));
	for (i = 0; i < n && rank; i++) {
		struct row *r = &rows[i];
		const struct row *o = find_row(s->cgroups, s->n_cgroups, r->key);
		struct reclaim_cgroup before = o ? o->v.cg : (struct reclaim_cgroup){ 0 };
		uint64_t d_count = sub(r->v.cg.direct_count + r->v.cg.memcg_count,
				       before.direct_count + before.memcg_count);
		uint64_t d_ns = sub(r->v.cg.direct_ns + r->v.cg.memcg_ns, before.direct_ns + before.memcg_ns);

		const char *path = s->paths ? cgroup_paths_lookup(s->paths, r->key, now) : NULL;
		bool active;

		r->window_ns = d_ns;
		if (d_count)
			r->last_change_usec = now;
		if (path && (!r->path || strcmp(path, r->path) != 0)) {
			free(r->path);
			r->path = strdup(path);
		}
		active = r->last_change_usec && (r->window_ns || now - r->last_change_usec <= ttl);
		/* A removed cgroup keeps its last path for series_ttl, then expires. */
		if (!path && !active && s->paths)
			bpf_map_delete_elem(fd, &r->key);
		if (r->path && active) {
			rank[n_rank++] = r;
			continue;
		}
		s->other_cgroup.count += d_count;
		s->other_cgroup.ns += d_ns;
	}
	if (rank)
		qsort(rank, n_rank, sizeof(*rank), cmp_window_desc);
	for (i = 0; i < n_rank; i++) {
		struct row *r = rank[i];
		const struct reclaim_cgroup *c = &r->v.cg;

		if (exported >= s->cfg.top_k) {
			const struct row *o = find_row(s->cgroups, s->n_cgroups, r->key);
			struct reclaim_cgroup before = o ? o->v.cg : (struct reclaim_cgroup){ 0 };

			s->other_cgroup.count += sub(c->direct_count + c->memcg_count,
						     before.direct_count + before.memcg_count);
			s->other_cgroup.ns += sub(c->direct_ns + c->memcg_ns, before.direct_ns + before.memcg_ns);
			continue;
		}
		exported++;
		snapshot_add(snap, &desc_cgroup_count, (const char *const[]){ r->path },
			     (double)(c->direct_count + c->memcg_count));
		snapshot_add(snap, &desc_cgroup_seconds, (const char *const[]){ r->path },
			     (double)(c->direct_ns + c->memcg_ns) / 1e9);
	}
	snapshot_add(snap, &desc_cgroup_count, (const char *const[]){ "other" }, (double)s->other_cgroup.count);
	snapshot_add(snap, &desc_cgroup_seconds, (const char *const[]){ "other" }, (double)s->other_cgroup.ns / 1e9);
	free(rank);
	free_rows(s->cgroups, s->n_cgroups);
	s->cgroups = rows;
	s->n_cgroups = n;
}

static int reclaim_collect(void *priv, struct snapshot *snap)
{
	struct reclaim_state *s = priv;
	struct reclaim_bpf *skel = s->bpf.skel;
	uint64_t now = now_mono_usec();
	int kind;

	for (kind = 0; kind < RECLAIM_KINDS; kind++) {
		const struct reclaim_histogram *h = &skel->bss->histograms[kind];
		uint64_t slots[RECLAIM_SLOTS - FIRST_EXPORTED_SLOT], count = 0;
		size_t i;

		if ((kind == RECLAIM_MEMCG && !s->bpf.hook_present[HOOK_MEMCG_END]) ||
		    (kind == RECLAIM_MEMCG_SOFTLIMIT && !s->bpf.hook_present[HOOK_SOFTLIMIT_END]))
			continue;
		memset(slots, 0, sizeof(slots));
		for (i = 0; i < RECLAIM_SLOTS; i++) {
			uint64_t v = __atomic_load_n(&h->slots[i], __ATOMIC_RELAXED);

			slots[i < FIRST_EXPORTED_SLOT ? 0 : i - FIRST_EXPORTED_SLOT] += v;
			count += v;
		}
		/* The counter is the histogram's count, read once, so the two always agree. */
		snapshot_add(snap, &desc_total[kind], NULL, (double)count);
		snapshot_add_log2_histogram_from(snap, &desc_seconds[kind], NULL, slots, ARRAY_SIZE(slots),
						 FIRST_EXPORTED_SLOT, 1e-9,
						 (double)__atomic_load_n(&h->sum_ns, __ATOMIC_RELAXED));
		snapshot_add(snap, &desc_pages[kind], NULL, (double)__atomic_load_n(&h->pages, __ATOMIC_RELAXED));
	}
	snapshot_add(snap, &desc_unmatched, NULL, (double)__atomic_load_n(&skel->bss->unmatched_ends, __ATOMIC_RELAXED));
	collect_processes(s, snap, now);
	collect_cgroups(s, snap, now);
	s->windows++;
	return 0;
}

static void reclaim_stop(void *priv)
{
	struct reclaim_state *s = priv;

	bpf_attachment_destroy(&s->bpf);
	cgroup_paths_free(s->paths);
	free_rows(s->procs, s->n_procs);
	free_rows(s->cgroups, s->n_cgroups);
}

const struct collector_ops reclaim_collector = {
	.name = "reclaim",
	.summary = "direct and memcg reclaim stalls: counts, latency histograms, per process and per cgroup",
	.default_enabled = true,
	.config_size = sizeof(struct reclaim_config),
	.config_defaults = reclaim_config_defaults,
	.configure = reclaim_configure,
	.priv_size = sizeof(struct reclaim_state),
	.probe = reclaim_probe,
	.start = reclaim_start,
	.collect = reclaim_collect,
	.stop = reclaim_stop,
};
