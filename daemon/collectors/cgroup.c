// SPDX-License-Identifier: GPL-2.0
/* Memory cgroups: usage, limits, events, working set and pressure of every
 * memory cgroup, walked each window under the cgroup2 root, the v1 memory
 * hierarchy, or both on hybrid hosts (v1 memory files, the cgroup2 twin's
 * memory.pressure). The top_k cgroups are exported; the rest are folded into
 * cgroup="other". */
#include <linux/capability.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cgroup_internal.h"
#include "cgroup_names.h"
#include "clock.h"
#include "config.h"
#include "vmstat.h"

#define ROOT_SIZE sizeof(((struct cgroup_config *)NULL)->v1_root)
#define GLOBS_SIZE sizeof(((struct cgroup_config *)NULL)->include)
_Static_assert(sizeof(((struct cgroup_config *)NULL)->v2_root) == ROOT_SIZE, "one parse_root for both roots");
_Static_assert(sizeof(((struct cgroup_config *)NULL)->exclude) == GLOBS_SIZE, "one parse_globs for both lists");
#define RUNTIME_DIR_SIZE sizeof(((struct cgroup_config *)NULL)->docker_dir)
_Static_assert(sizeof(((struct cgroup_config *)NULL)->podman_storage_dir) == RUNTIME_DIR_SIZE,
	       "one parse_runtime_dir for both");

static int parse_root(const char *value, void *field, char *errmsg, size_t errlen)
{
	if (strcmp(value, "auto") != 0 && strcmp(value, "none") != 0 &&
	    (value[0] != '/' || strlen(value) >= ROOT_SIZE)) {
		snprintf(errmsg, errlen, "'%s' is not auto, none or an absolute path shorter than %zu bytes", value,
			 ROOT_SIZE);
		return -EINVAL;
	}
	snprintf(field, ROOT_SIZE, "%s", value);
	return 0;
}

/* docker_dir, podman_storage_dir: a path, or none for a runtime not read
 * ("" in the field: a key may not be empty). */
static int parse_runtime_dir(const char *value, void *field, char *errmsg, size_t errlen)
{
	if (strcmp(value, "none") == 0) {
		*(char *)field = '\0';
		return 0;
	}
	if (value[0] != '/' || strlen(value) >= RUNTIME_DIR_SIZE) {
		snprintf(errmsg, errlen, "'%s' is not none or an absolute path shorter than %zu bytes", value,
			 RUNTIME_DIR_SIZE);
		return -EINVAL;
	}
	snprintf(field, RUNTIME_DIR_SIZE, "%s", value);
	return 0;
}

/* Docker and Podman keep their state readable by root alone; the unit runs
 * as a dynamic user, which reads it through CAP_DAC_READ_SEARCH. */
static uint64_t cgroup_capabilities(const void *cfg)
{
	const struct cgroup_config *c = cfg;

	return c->docker_dir[0] || c->podman_storage_dir[0] ? 1ULL << CAP_DAC_READ_SEARCH : 0;
}

/* lib/cgroup_names.h tells once per runtime why its state gives no names. */
static void log_container_names_why(const char *source, const char *why, void *userdata)
{
	log_warning("Collector cgroup: no %s container names: %s", source, why);
}

static int parse_globs(const char *value, void *field, char *errmsg, size_t errlen)
{
	int r;

	if (strlen(value) >= GLOBS_SIZE) {
		snprintf(errmsg, errlen, "longer than %zu bytes", GLOBS_SIZE - 1);
		return -EINVAL;
	}
	r = cgroup_globs_parse(value, NULL);
	if (r < 0) {
		snprintf(errmsg, errlen,
			 "'%s' is not a list of at most %d glob patterns separated by blanks or commas, each "
			 "starting with '/', '*', '?' or '[' (paths look like /system.slice/app.service)",
			 value, CGROUP_GLOBS_MAX);
		return -EINVAL;
	}
	snprintf(field, GLOBS_SIZE, "%s", value);
	return 0;
}

/* auto and bpf are the same: the iterator where it loads, cgroupfs where not. */
static const struct config_choice source_choices[] = {
	{ "auto", true },
	{ "bpf", true },
	{ "cgroupfs", false },
	{ NULL, 0 },
};

#define CG struct cgroup_config

static const struct collector_key cgroup_keys[] = {
	{ CONFIG_KEY_CUSTOM("v1_root", CG, v1_root, parse_root), "auto" },
	{ CONFIG_KEY_CUSTOM("v2_root", CG, v2_root, parse_root), "auto" },
	{ CONFIG_KEY_CUSTOM("include", CG, include, parse_globs), NULL }, /* "": every cgroup */
	{ CONFIG_KEY_CUSTOM("exclude", CG, exclude, parse_globs), NULL }, /* "": none */
	{ CONFIG_KEY_UINT("max_depth", CG, max_depth, 0, 64), "8" },
	{ CONFIG_KEY_UINT("max_cgroups", CG, max_cgroups, 1, 1000000), "10000" },
	{ CONFIG_KEY_UINT("top_k", CG, top_k, 1, 10000), "50" },
	{ CONFIG_KEY_UINT("stat_interval", CG, stat_interval, 1, 3600), "10" },
	{ CONFIG_KEY_UINT("refresh_interval", CG, refresh_interval, 1, 3600), "5" },
	{ CONFIG_KEY_PATH("kubelet_pods_dir", CG, kubelet_pods_dir), "/var/log/pods" },
	{ CONFIG_KEY_PATH("kubelet_containers_dir", CG, kubelet_containers_dir), "/var/log/containers" },
	{ CONFIG_KEY_CUSTOM("docker_dir", CG, docker_dir, parse_runtime_dir), "/var/lib/docker" },
	{ CONFIG_KEY_CUSTOM("podman_storage_dir", CG, podman_storage_dir, parse_runtime_dir),
	  "/var/lib/containers/storage" },
	{ CONFIG_KEY_DURATION("exhaustion_horizon", CG, horizon_msec, 1000, 3600000), "60s" },
	{ CONFIG_KEY_CHOICE("source", CG, use_bpf, source_choices), "auto" },
};

static int cgroup_probe(const void *cfg, const struct collector_context *ctx, struct collector_status *st)
{
	_cleanup_free_ char *buf = malloc(CGROUP_READ_BUF_SIZE);
	struct roots r;
	int k;

	snprintf(st->mode, sizeof(st->mode), "cgroupfs");
	if (!buf)
		return -ENOMEM;
	k = cgroup_roots_resolve(cfg, ctx->cgroups, buf, &r, st);
	if (k < 0)
		return k;
	cgroup_roots_close(&r);
	return 0;
}

/* ---- output ---- */

/* labels: CGROUP_LABELS_N values (cgroup_labels_values), the path first. */
static void put_workingset(struct snapshot *snap, const char *const *labels, unsigned i, double v)
{
	static const enum metric_id families[] = {
		[VMSTAT_WS_REFAULT] = MW_CGROUP_MEMORY_REFAULTS_TOTAL,
		[VMSTAT_WS_ACTIVATE] = MW_CGROUP_MEMORY_REFAULT_ACTIVATIONS_TOTAL,
		[VMSTAT_WS_RESTORE] = MW_CGROUP_MEMORY_REFAULT_RESTORES_TOTAL,
	};
	const char *with_type[CGROUP_LABELS_N + 1];

	memcpy(with_type, labels, CGROUP_LABELS_N * sizeof(*labels));
	with_type[CGROUP_LABELS_N] = i % 2 ? "file" : "anon";
	snapshot_add(snap, METRIC(families[i / 2]), with_type, v);
}

static void put_counter(struct snapshot *snap, const char *const *labels, unsigned c, double v)
{
	const char *with_event[CGROUP_LABELS_N + 1];

	if (c >= C_WORKINGSET0) {
		put_workingset(snap, labels, c - C_WORKINGSET0, v);
	} else if (c == C_SOME) {
		snapshot_add(snap, METRIC(MW_CGROUP_PRESSURE_MEMORY_SOME_SECONDS_TOTAL), labels, v / 1e6);
	} else if (c == C_FULL) {
		snapshot_add(snap, METRIC(MW_CGROUP_PRESSURE_MEMORY_FULL_SECONDS_TOTAL), labels, v / 1e6);
	} else {
		memcpy(with_event, labels, CGROUP_LABELS_N * sizeof(*labels));
		with_event[CGROUP_LABELS_N] = cgroup_event_name(c - C_EVENT0);
		snapshot_add(snap, METRIC(MW_CGROUP_MEMORY_EVENTS_TOTAL), with_event, v);
	}
}

/* The time to the limit, for a cgroup whose usage rises over the horizon. */
static bool limit_eta(const struct cgroup_state *s, const struct cached *cached, const struct cgroup_mem *m,
		      uint64_t now, double *eta)
{
	double slope;

	if (!cached || !cached->usage_trend.points || !m->has_limit)
		return false;
	if (!trend_slope(&cached->usage_trend, s->cfg.horizon_msec * USEC_PER_MSEC, now, &slope))
		return false;
	return trend_eta((double)m->usage, (double)m->limit, slope, eta);
}

/* Every cgroup with a limit gets a point per window, exported or not, so one
 * that enters the top_k has its history. Without memory for the points a
 * cgroup has no ETA. */
static void feed_trends(struct cgroup_state *s, uint64_t now)
{
	for (size_t i = 0; i < s->n_entries; i++) {
		const struct entry *e = &s->entries[i];
		struct cached *c;

		if (!e->mem.has_limit)
			continue;
		c = file_cache_find(s, e->key);
		if (!c)
			continue;
		if (!c->usage_trend.points) {
			struct trend_point *p = calloc(CGROUP_TREND_POINTS, sizeof(*p));

			if (!p)
				continue;
			trend_init(&c->usage_trend, p, CGROUP_TREND_POINTS);
		}
		trend_add(&c->usage_trend, s->cfg.horizon_msec * USEC_PER_MSEC, now, (double)e->mem.usage);
	}
}

static void put_peak(struct snapshot *snap, const char *const *labels, const struct cgroup_peak *p)
{
	const char *with_method[CGROUP_LABELS_N + 1];

	memcpy(with_method, labels, CGROUP_LABELS_N * sizeof(*labels));
	with_method[CGROUP_LABELS_N] = cgroup_peak_method_name(p->method);
	snapshot_add(snap, METRIC(MW_CGROUP_MEMORY_WINDOW_PEAK_BYTES), with_method, (double)p->value);
}

static void put_cgroup(struct snapshot *snap, const char *const *labels, const struct cgroup_mem *m,
		       const double *eta)
{
	unsigned c;

	snapshot_add(snap, METRIC(MW_CGROUP_INFO), labels, 1);
	snapshot_add(snap, METRIC(MW_CGROUP_MEMORY_USAGE_BYTES), labels, (double)m->usage);
	if (m->has_limit) {
		snapshot_add(snap, METRIC(MW_CGROUP_MEMORY_LIMIT_BYTES), labels, (double)m->limit);
		if (m->limit > 0)
			snapshot_add(snap, METRIC(MW_CGROUP_MEMORY_USAGE_RATIO), labels, (double)m->usage / (double)m->limit);
		if (eta)
			snapshot_add(snap, METRIC(MW_CGROUP_MEMORY_LIMIT_ETA_SECONDS), labels, *eta);
	}
	if (m->has_high)
		snapshot_add(snap, METRIC(MW_CGROUP_MEMORY_HIGH_BYTES), labels, (double)m->high);
	if (m->has_inactive_file)
		snapshot_add(snap, METRIC(MW_CGROUP_MEMORY_WORKING_SET_BYTES), labels, (double)cgroup_working_set(m->usage, m->inactive_file));
	if (m->has_under_oom)
		snapshot_add(snap, METRIC(MW_CGROUP_MEMORY_UNDER_OOM), labels, m->under_oom ? 1 : 0);
	for (c = 0; c < N_COUNTERS; c++) {
		bool present;
		uint64_t v = cgroup_counter_value(m, c, &present);

		if (present)
			put_counter(snap, labels, c, (double)v);
	}
}

/* After a read: the order of export, which cgroups are exported, and
 * "other" (its counters add this read's deltas). The windows until the next
 * read export the same. */
static int rank_and_fold(struct cgroup_state *s)
{
	size_t i;
	unsigned c;

	free(s->rank);
	s->rank = cgroup_rank_entries(s);
	if (!s->rank)
		return -ENOMEM;
	s->n_keep = s->n_entries < s->cfg.top_k ? s->n_entries : (size_t)s->cfg.top_k;
	s->other_usage = s->other_ws = 0;
	for (i = 0; i < s->n_entries; i++) {
		const struct entry *e = &s->entries[s->rank[i].index];
		struct cached *cached = file_cache_find(s, e->key);

		if (cached)
			cached->exported = i < s->n_keep;
		if (i < s->n_keep)
			continue;
		if (cached) /* the peak is read only while exported: at most top_k files */
			cgroup_peak_close(s, &cached->peak);
		s->other_usage += e->mem.usage;
		if (e->mem.has_inactive_file)
			s->other_ws += cgroup_working_set(e->mem.usage, e->mem.inactive_file);
		for (c = 0; c < N_COUNTERS; c++)
			s->trackers[c / TRACKER_MAX_COUNTERS].other[c % TRACKER_MAX_COUNTERS] +=
				cgroup_row_delta(s, s->rank[i].index, c);
	}
	return 0;
}

static void emit(struct cgroup_state *s, struct snapshot *snap, uint64_t now)
{
	const char *labels[CGROUP_LABELS_N];
	struct cgroup_labels names;
	size_t i;
	unsigned c;

	for (i = 0; s->rank && i < s->n_keep; i++) {
		const struct entry *e = &s->entries[s->rank[i].index];
		struct cached *cached = file_cache_find(s, e->key);
		double eta;

		cgroup_names_resolve(s->names, s->rank[i].path, now, &names);
		cgroup_labels_values(s->rank[i].path, &names, labels);
		put_cgroup(snap, labels, &e->mem, limit_eta(s, cached, &e->mem, now, &eta) ? &eta : NULL);
		if (cached && cached->peak.read_at == s->peak_windows)
			put_peak(snap, labels, &cached->peak);
	}
	cgroup_labels_values("other", NULL, labels);
	snapshot_add(snap, METRIC(MW_CGROUP_MEMORY_USAGE_BYTES), labels, (double)s->other_usage);
	snapshot_add(snap, METRIC(MW_CGROUP_MEMORY_WORKING_SET_BYTES), labels, (double)s->other_ws);
	for (c = 0; c < N_COUNTERS; c++)
		if (s->seen & (1u << c))
			put_counter(snap, labels, c,
				    (double)s->trackers[c / TRACKER_MAX_COUNTERS].other[c % TRACKER_MAX_COUNTERS]);
}

static uint64_t thread_cpu_usec(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) < 0)
		return 0;
	return (uint64_t)ts.tv_sec * USEC_PER_SEC + (uint64_t)ts.tv_nsec / 1000;
}

/* What says the last read is out of date: the tree changed (mkdir, rmdir,
 * rename), a memcg reclaimed at its limit, the host reclaimed directly or
 * OOM-killed. Usage that moves without any of them is read again every
 * refresh_interval windows. */
enum { SIG_TREE, SIG_MEMCG_RECLAIM, SIG_ALLOCSTALL, SIG_OOM_KILL, N_SIGNALS };

static size_t host_signals(const struct cgroup_state *s, const struct vmstat *vm, struct refresh_signal *sig)
{
	sig[SIG_TREE] = (struct refresh_signal){ cgroup_bpf_watch_count(s, CGROUP_WATCH_TREE), 1,
						 cgroup_bpf_watched(s, CGROUP_WATCH_TREE) };
	sig[SIG_MEMCG_RECLAIM] = (struct refresh_signal){ cgroup_bpf_watch_count(s, CGROUP_WATCH_RECLAIM), 1,
							  cgroup_bpf_watched(s, CGROUP_WATCH_RECLAIM) };
	sig[SIG_ALLOCSTALL] = (struct refresh_signal){ vm->allocstall, 1, (vm->present & VMSTAT_HAS_ALLOCSTALL) != 0 };
	sig[SIG_OOM_KILL] = (struct refresh_signal){ vm->oom_kill, 1, (vm->present & VMSTAT_HAS_OOM_KILL) != 0 };
	return N_SIGNALS;
}

/* The next window reads; the count of reads is a counter and goes on. */
static void gate_restart(struct cgroup_state *s)
{
	uint64_t reads = s->gate.reads_total;

	refresh_gate_reset(&s->gate);
	s->gate.reads_total = reads;
}

/* Only the iterator's reads of an unchanged tree wait: cgroupfs has no
 * watch on its tree, and without the tree's tracepoints (or the host's
 * reclaim and OOM counters) nothing says when the last read went stale. */
static bool may_wait(const struct cgroup_state *s, const struct vmstat *vm)
{
	return vm && s->layout_valid && cgroup_bpf_covers_tree(s) && cgroup_bpf_watched(s, CGROUP_WATCH_TREE) &&
	       (vm->present & VMSTAT_HAS_OOM_KILL);
}

/* Reads every cgroup (the iterator, or the walk) and ranks them. The
 * points and deltas are stamped now, the window's time: the ETA is fitted
 * at it, and a later stamp would be in its future. */
static int read_cgroups(struct cgroup_state *s, uint64_t now)
{
	uint64_t t0 = now_mono_usec(), cpu0 = thread_cpu_usec(), t1, cpu;
	int r;

	r = cgroup_scan(s, &s->walk_truncated);
	t1 = now_mono_usec();
	cpu = thread_cpu_usec();
	if (r < 0)
		return r;
	s->walk_seconds = (double)(t1 - t0) / 1e6;
	s->walk_cpu_seconds = (double)(cpu - cpu0) / 1e6;
	s->skipped_total += s->skipped;
	r = cgroup_trackers_update(s, now);
	if (r < 0)
		return r;
	feed_trends(s, now);
	return rank_and_fold(s);
}

static int cgroup_collect(void *priv, struct snapshot *snap)
{
	struct cgroup_state *s = priv;
	struct refresh_signal sig[N_SIGNALS];
	const struct vmstat *vm = NULL;
	uint64_t now = now_mono_usec();
	size_t n_sig = 0;
	int r;

	s->memcg_fresh = false; /* until this window's read, if it reads */
	if (s->vmstat && vmstat_source_get(s->vmstat, &vm) < 0)
		vm = NULL;
	if (vm)
		n_sig = host_signals(s, vm, sig);
	/* The signals are taken before the read: what moves during it calls for the next. */
	if (!may_wait(s, vm) ||
	    refresh_gate_due(&s->gate, s->cfg.refresh_interval, collector_window_lengths(s->window_lengths), sig, n_sig)) {
		/* The entries go first: the last read's order of export no longer fits them. */
		free(s->rank);
		s->rank = NULL;
		r = read_cgroups(s, now);
		if (r < 0) {
			gate_restart(s);
			return r;
		}
		refresh_gate_read(&s->gate, sig, n_sig, now);
		s->read_fresh = false;
	} else {
		refresh_gate_reuse(&s->gate, collector_window_lengths(s->window_lengths));
	}
	cgroup_peak_collect(s);
	emit(s, snap, now);
	snapshot_add(snap, METRIC(MW_CGROUPS_DISCOVERED), NULL, (double)s->n_entries);
	snapshot_add(snap, METRIC(MW_CGROUP_WALK_SECONDS), NULL, s->walk_seconds);
	snapshot_add(snap, METRIC(MW_CGROUP_WALK_CPU_SECONDS), NULL, s->walk_cpu_seconds);
	snapshot_add(snap, METRIC(MW_CGROUP_WALK_SKIPPED_TOTAL), NULL, (double)s->skipped_total);
	snapshot_add(snap, METRIC(MW_CGROUP_WALK_TRUNCATED), NULL, s->walk_truncated ? 1 : 0);
	snapshot_add(snap, METRIC(MW_CGROUP_OPEN_FILES), NULL, (double)s->open_files);
	snapshot_add(snap, METRIC(MW_CGROUP_AGE_SECONDS), NULL, refresh_gate_age_seconds(&s->gate, now));
	snapshot_add(snap, METRIC(MW_CGROUP_READS_TOTAL), NULL, (double)s->gate.reads_total);
	return 0;
}

/* ---- life cycle ---- */

static bool same_iterator_root(const struct roots *a, const struct roots *b)
{
	bool a_v2, b_v2;

	if (cgroup_bpf_root_fd(a, &a_v2) < 0 || cgroup_bpf_root_fd(b, &b_v2) < 0 || a_v2 != b_v2)
		return false;
	return strcmp(a_v2 ? a->v2 : a->v1, b_v2 ? b->v2 : b->v1) == 0;
}

static int apply_config(struct cgroup_state *s, const struct cgroup_config *c, struct collector_status *st)
{
	_cleanup_(cgroup_globs_free) struct cgroup_globs inc = { .n = 0 }, exc = { .n = 0 };
	bool same_iterator;
	struct roots r;
	int k;

	k = cgroup_roots_resolve(c, s->hierarchy, s->buf, &r, st);
	if (k < 0)
		return k;
	k = cgroup_globs_parse(c->include, &inc);
	if (k >= 0)
		k = cgroup_globs_parse(c->exclude, &exc);
	if (k < 0) {
		cgroup_roots_close(&r);
		collector_status_set_reason(st, "bad include/exclude patterns");
		return k;
	}
	/* A reload that keeps the walked tree and the source keeps its iterator,
	 * which holds the cgroup it was attached to, not the old fd. */
	same_iterator = s->memcg_iter && same_iterator_root(&r, &s->roots) && c->use_bpf &&
			 c->max_cgroups == s->cfg.max_cgroups; /* the records array is sized by it */
	cgroup_roots_close(&s->roots);
	cgroup_globs_free(&s->include);
	cgroup_globs_free(&s->exclude);
	if (s->names) {
		k = cgroup_names_set_dirs(s->names, c->kubelet_pods_dir, c->kubelet_containers_dir);
		if (k < 0)
			log_warning("Collector cgroup: the kubelet directories are not used: %s", strerror(-k));
		k = cgroup_names_set_container_dirs(s->names, c->docker_dir, c->podman_storage_dir);
		if (k < 0)
			log_warning("Collector cgroup: the container runtimes' directories are not used: %s",
				    strerror(-k));
		cgroup_names_set_report(s->names, log_container_names_why, NULL);
	}
	s->roots = r;
	s->include = inc;
	s->exclude = exc;
	inc = exc = (struct cgroup_globs){ .n = 0 }; /* now s's */
	s->cfg = *c;
	s->layout_valid = false; /* other roots or patterns: walk again */
	gate_restart(s);
	/* Otherwise the iterator is rooted at the new v1 tree's directory. */
	if (same_iterator) {
		k = 1;
	} else {
		cgroup_bpf_stop(s);
		k = cgroup_bpf_start(s);
	}
	if (k < 0) {
		log_debug_errno(k, "cgroup: BPF cgroup iterator unavailable, reading cgroupfs instead: %m");
		st->state = COLLECTOR_DEGRADED;
		collector_status_note_bpf_error(st, k);
		collector_status_set_reason(st, "BPF cgroup iterator unavailable (%s): reading cgroupfs",
					    strerror(-k));
	}
	snprintf(st->mode, sizeof(st->mode), "%s", k > 0 ? "iter" : "cgroupfs");
	log_info("Collector cgroup: %s%s%s%s%s", r.v1_fd >= 0 ? "v1 memory hierarchy at " : "", r.v1,
		 r.v1_fd >= 0 && r.v2_fd >= 0 ? ", " : "",
		 r.v2_fd < 0 ? "" : r.v2_memory ? "cgroup2 memory hierarchy at " : "cgroup2 pressure from ",
		 r.v2_fd >= 0 ? r.v2 : "");
	return 0;
}


static int cgroup_start(void *priv, const void *cfg, const struct collector_context *ctx,
			struct collector_status *st)
{
	struct cgroup_state *s = priv;
	size_t k;

	s->window_lengths = ctx->window_lengths;
	s->hierarchy = ctx->cgroups;
	s->names = ctx->names;
	s->roots = (struct roots){ .v1_fd = -1, .v2_fd = -1 };
	strbuf_init(&s->paths);
	for (k = 0; k < N_TRACKERS; k++)
		tracker_init(&s->trackers[k], TRACKER_MAX_COUNTERS, 0, 0);
	s->initialized = true;
	/* Unreadable: every window reads, nothing would say when a read went stale. */
	(void)vmstat_source_open(ctx->vmstat, "/proc/vmstat", &s->vmstat);
	s->open_files_max = file_cache_budget();
	snprintf(st->mode, sizeof(st->mode), "cgroupfs");
	s->buf = malloc(CGROUP_READ_BUF_SIZE);
	if (!s->buf)
		return -ENOMEM;
	return apply_config(s, cfg, st);
}

static int cgroup_reload(void *priv, const void *cfg)
{
	struct cgroup_state *s = priv;
	struct collector_status st = { .state = COLLECTOR_ACTIVE };

	return apply_config(s, cfg, &st);
}

/* Reads every cgroup and every memory.stat at the next collect. */
static void cgroup_read_fresh(void *priv)
{
	struct cgroup_state *s = priv;

	if (!s->initialized)
		return;
	refresh_gate_expire(&s->gate);
	s->read_fresh = true;
}

static void cgroup_stop(void *priv)
{
	struct cgroup_state *s = priv;
	size_t k;

	if (!s->initialized)
		return;
	cgroup_bpf_free(s);
	file_cache_free(s);
	cgroup_roots_close(&s->roots);
	cgroup_globs_free(&s->include);
	cgroup_globs_free(&s->exclude);
	for (k = 0; k < N_TRACKERS; k++)
		tracker_done(&s->trackers[k]);
	strbuf_free(&s->paths);
	vmstat_source_unref(s->vmstat);
	free(s->rank);
	free(s->entries);
	free(s->failed);
	free(s->buf);
	*s = (struct cgroup_state){ .initialized = false };
}

const struct collector_ops cgroup_collector = {
	.name = "cgroup",
	.summary = "memory cgroups (v1, v2, hybrid): usage, limits, working set, events and pressure; top_k plus other",
	.default_enabled = true,
	.config_size = sizeof(struct cgroup_config),
	.keys = cgroup_keys,
	.n_keys = ARRAY_SIZE(cgroup_keys),
	.priv_size = sizeof(struct cgroup_state),
	.probe = cgroup_probe,
	.start = cgroup_start,
	.collect = cgroup_collect,
	.reload = cgroup_reload,
	.stop = cgroup_stop,
	.read_fresh = cgroup_read_fresh,
	.capabilities = cgroup_capabilities,
};
