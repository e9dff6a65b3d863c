// SPDX-License-Identifier: GPL-2.0
/* Page faults per process. A BPF task iterator reads every thread's fault
 * counters straight from task_struct once per window; where iterators are
 * missing, /proc/PID/stat is the fallback. System totals from /proc/vmstat. */
#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "collector.h"
#include "config.h"
#include "core.h"
#include "faults.h"
#include "faults.skel.h"
#include "fileio.h"
#include "log.h"
#include "procstat.h"
#include "refresh_gate.h"
#include "tracker.h"
#include "vmstat.h"
#include "vmstat_source.h"

enum { FAULT_MAJOR, FAULT_MINOR, FAULT_COUNTERS };

struct faults_config {
	uint64_t top_k;
	uint64_t max_processes;
	uint64_t series_ttl_msec;
	uint64_t walk_interval; /* windows; 1: every window */
	uint64_t walk_faults;   /* pgfault growth that walks at once */
	bool use_bpf;
	char proc_root[256];
};

struct faults_state {
	struct faults_config cfg;
	struct faults_bpf *skel;
	struct bpf_link *iter;
	struct tracker procs;
	struct vmstat_source *vmstat; /* NULL: not readable */
	char *buf; /* ITER_CHUNK bytes */
	/* The last walk's export, re-exported until the next walk: pointers
	 * into procs.rows, which stay until the next tracker_update. */
	struct refresh_gate gate;
	const struct tracked_row **top;
	size_t n_top, cap_top, n_tracked;
};

static void faults_config_defaults(void *cfg)
{
	struct faults_config *c = cfg;

	*c = (struct faults_config){ .top_k = 10, .max_processes = 65536, .series_ttl_msec = 0,
				       .walk_interval = 1, .walk_faults = 32768, .use_bpf = true };
	snprintf(c->proc_root, sizeof(c->proc_root), "/proc");
}

/* A bool, not a choice: auto and bpf are the same (the BPF iterator, /proc if it fails). */
static int parse_source(const char *value, void *use_bpf, char *errmsg, size_t errlen)
{
	if (strcmp(value, "auto") == 0 || strcmp(value, "bpf") == 0)
		*(bool *)use_bpf = true;
	else if (strcmp(value, "procfs") == 0)
		*(bool *)use_bpf = false;
	else {
		snprintf(errmsg, errlen, "'%s' is not one of auto, bpf, procfs", value);
		return -EINVAL;
	}
	return 0;
}

static const struct config_key faults_keys[] = {
	CONFIG_KEY_UINT("top_k", struct faults_config, top_k, 1, 1000),
	CONFIG_KEY_UINT("max_processes", struct faults_config, max_processes, 64, 4194304),
	CONFIG_KEY_DURATION("series_ttl", struct faults_config, series_ttl_msec, 0, 86400000),
	CONFIG_KEY_UINT("walk_interval", struct faults_config, walk_interval, 1, 3600),
	CONFIG_KEY_UINT("walk_faults", struct faults_config, walk_faults, 1, UINT64_C(1) << 40),
	CONFIG_KEY_CUSTOM("source", struct faults_config, use_bpf, parse_source),
	CONFIG_KEY_PATH("proc_root", struct faults_config, proc_root),
};

static int faults_configure(void *cfg, const char *key, const char *value, char *errmsg, size_t errlen)
{
	return config_key_apply(faults_keys, ARRAY_SIZE(faults_keys), cfg, key, value, errmsg, errlen);
}

static int start_iterator(struct faults_state *s)
{
	int r;

	log_set_libbpf_quiet(true);
	s->skel = faults_bpf__open_and_load();
	if (!s->skel) {
		r = -errno;
		goto out;
	}
	s->iter = bpf_program__attach_iter(s->skel->progs.dump_task_faults, NULL);
	r = s->iter ? 0 : -errno;
out:
	log_set_libbpf_quiet(false);
	return r;
}

static int faults_start(void *priv, const void *cfg, const struct collector_context *ctx,
			struct collector_status *st)
{
	struct faults_state *s = priv;
	char path[300];
	int r = -EOPNOTSUPP;

	s->cfg = *(const struct faults_config *)cfg;
	tracker_init(&s->procs, FAULT_COUNTERS, FAULT_MAJOR, FAULT_MINOR);
	snprintf(path, sizeof(path), "%s/vmstat", s->cfg.proc_root);
	/* Unreadable: no system-wide figures, s->vmstat stays NULL. */
	(void)vmstat_source_open(path, &s->vmstat);
	if (s->cfg.use_bpf) {
		r = start_iterator(s);
		if (r == 0) {
			snprintf(st->mode, sizeof(st->mode), "iter");
			return 0;
		}
		log_debug_errno(r, "faults: task iterator unavailable, reading %s/PID/stat instead: %m",
				s->cfg.proc_root);
		st->state = COLLECTOR_DEGRADED;
		collector_status_note_bpf_error(st, r);
		collector_status_set_reason(st, "BPF task iterator unavailable (%s): reading /proc/PID/stat",
					    strerror(-r));
	}
	snprintf(st->mode, sizeof(st->mode), "procfs");
	return 0;
}

/* The iterator's output is read in chunks of this size and added up as it
 * comes, rather than whole: 10,000 threads are half a megabyte of records. */
#define ITER_CHUNK 65536

static int cmp_tgid(const void *a, const void *b)
{
	const struct tracked_row *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

/* Threads come in tid order, so those of one process that are not next to
 * each other got rows of their own: one row per process, or the process
 * would be exported twice, each time with part of its faults. */
static size_t merge_threads(struct tracked_row *rows, size_t n)
{
	size_t i, k = 0;

	/* The iterator goes in pid order: with no thread apart from its
	 * process, the rows are sorted already and each key is there once. */
	for (i = 1; i < n && rows[i - 1].key < rows[i].key; i++)
		;
	if (i >= n)
		return n;
	qsort(rows, n, sizeof(*rows), cmp_tgid);
	for (i = 0; i < n; i++) {
		if (k > 0 && rows[k - 1].key == rows[i].key) {
			rows[k - 1].value[FAULT_MAJOR] += rows[i].value[FAULT_MAJOR];
			rows[k - 1].value[FAULT_MINOR] += rows[i].value[FAULT_MINOR];
			if (!rows[k - 1].generation)
				rows[k - 1].generation = rows[i].generation;
			rows[i] = (struct tracked_row){ 0 }; /* comms are inline: nothing to free */
			continue;
		}
		if (k != i) {
			rows[k] = rows[i];
			rows[i] = (struct tracked_row){ 0 };
		}
		k++;
	}
	return k;
}

/* The row of key in rows[0..n), sorted by key but for rows added out of
 * order (a thread with a lower tid than its leader, after pid wrap-around,
 * which merge_threads sorts out): NULL when the search misses it. */
static struct tracked_row *find_row(struct tracked_row *rows, size_t n, uint64_t key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (rows[mid].key < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && rows[lo].key == key ? &rows[lo] : NULL;
}

/* Rows go into the tracker's buffer, grown as processes turn up and reused
 * from window to window: at 10,000 processes a fresh table each window would
 * cost a megabyte of page faults. */
static size_t read_iterator(struct faults_state *s, struct tracked_row **ret)
{
	struct tracked_row *rows;
	size_t n = 0, used = 0, i;
	int fd;

	rows = *ret = tracker_next(&s->procs, 1);
	if (!rows)
		return 0;
	if (!s->buf) {
		s->buf = malloc(ITER_CHUNK);
		if (!s->buf)
			return 0;
	}
	fd = bpf_iter_create(bpf_link__fd(s->iter));
	if (fd < 0)
		return 0;
	for (;;) {
		ssize_t got = read(fd, s->buf + used, ITER_CHUNK - used);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		used += (size_t)got;

		/* Records come per thread, in pid order: sum the threads of each process. */
		for (i = 0; i + sizeof(struct fault_record) <= used; i += sizeof(struct fault_record)) {
			struct fault_record rec;
			struct tracked_row *row = NULL;

			memcpy(&rec, s->buf + i, sizeof(rec));
			/* Threads come after their leader (tid order), so the rows stay
			 * in key order: the process is the last row, or an earlier one
			 * when other processes started between its threads. */
			if (n > 0 && rows[n - 1].key == rec.tgid)
				row = &rows[n - 1];
			else if (n > 0 && rec.tgid < rows[n - 1].key)
				row = find_row(rows, n, rec.tgid);
			if (!row) {
				struct tracked_row *grown;

				if (n == s->cfg.max_processes)
					continue;
				grown = tracker_next(&s->procs, n + 1);
				if (!grown)
					goto out; /* without memory, this window has what was read */
				rows = grown;
				row = &rows[n++];
				row->key = rec.tgid;
			}
			row->value[FAULT_MAJOR] += rec.maj_flt;
			row->value[FAULT_MINOR] += rec.min_flt;
			/* The process's start, not a thread's: else the tracker sees a new process. */
			if (rec.leader)
				row->generation = rec.start_boottime_ns;
			(void)tracker_row_set_label(row, rec.comm, FAULTS_COMM_LEN); /* a comm fits inline */
		}
		/* A record cut at the end of a read waits for the rest. */
		used -= i;
		memmove(s->buf, s->buf + i, used);
	}
out:
	close(fd);
	*ret = rows;
	return merge_threads(rows, n);
}

static size_t read_procfs(struct faults_state *s, struct tracked_row **ret)
{
	struct tracked_row *rows;
	size_t n = 0;
	struct dirent *de;
	DIR *d;

	rows = *ret = tracker_next(&s->procs, 1);
	if (!rows)
		return 0;
	d = opendir(s->cfg.proc_root);
	if (!d)
		return 0;
	while ((de = readdir(d)) && n < s->cfg.max_processes) {
		char path[sizeof(s->cfg.proc_root) + sizeof(de->d_name) + 8], *text = NULL;
		struct procstat ps;
		size_t len;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "%s/%s/stat", s->cfg.proc_root, de->d_name);
		/* Processes exit while we walk: skip whatever is gone. */
		if (read_full_file(path, 4096, &text, &len) < 0)
			continue;
		if (procstat_parse(text, len, &ps) == 0) {
			struct tracked_row *grown = tracker_next(&s->procs, n + 1);

			if (!grown) {
				free(text);
				break;
			}
			rows = grown;
			rows[n].key = (uint64_t)ps.pid;
			rows[n].generation = ps.starttime;
			rows[n].value[FAULT_MAJOR] = ps.majflt;
			rows[n].value[FAULT_MINOR] = ps.minflt;
			(void)tracker_row_set_label(&rows[n], ps.comm, 15);
			n++;
		}
		free(text);
	}
	closedir(d);
	*ret = rows;
	return n;
}

static void put_process(struct snapshot *snap, const char *pid, const char *comm, const uint64_t *v)
{
	const char *const labels[] = { pid, comm };

	snapshot_add(snap, METRIC(MW_PROCESS_MAJOR_FAULTS_TOTAL), labels, (double)v[FAULT_MAJOR]);
	snapshot_add(snap, METRIC(MW_PROCESS_MINOR_FAULTS_TOTAL), labels, (double)v[FAULT_MINOR]);
}

/* Thrashing: the kernel's shadow-entry counters, anon and file. */
static void put_refaults(struct snapshot *snap, const struct vmstat *vm)
{
	static const enum metric_id families[_VMSTAT_WS_MAX] = {
		[VMSTAT_WS_REFAULT] = MW_MEMORY_REFAULTS_TOTAL,
		[VMSTAT_WS_ACTIVATE] = MW_MEMORY_REFAULT_ACTIVATIONS_TOTAL,
		[VMSTAT_WS_RESTORE] = MW_MEMORY_REFAULT_RESTORES_TOTAL,
	};
	static const char *const types[2] = { "anon", "file" };

	for (unsigned k = 0; k < _VMSTAT_WS_MAX; k++) {
		uint64_t v[2];
		bool has[2];

		vmstat_workingset(vm, k, v, has);
		for (unsigned t = 0; t < 2; t++)
			if (has[t])
				snapshot_add(snap, METRIC(families[k]), (const char *const[]){ types[t] }, (double)v[t]);
	}
}

static void put_thp(struct snapshot *snap, const struct vmstat *vm)
{
	static const struct {
		enum metric_id family;
		const char *label;
		uint64_t flag;
		size_t offset;
	} rows[] = {
		{ MW_THP_FAULT_FALLBACKS_TOTAL, "fallback", VMSTAT_HAS_THP_FAULT_FALLBACK,
		  offsetof(struct vmstat, thp_fault_fallback) },
		{ MW_THP_FAULT_FALLBACKS_TOTAL, "charge", VMSTAT_HAS_THP_FAULT_FALLBACK_CHARGE,
		  offsetof(struct vmstat, thp_fault_fallback_charge) },
		{ MW_THP_ALLOCATION_FAILURES_TOTAL, "collapse", VMSTAT_HAS_THP_COLLAPSE_ALLOC_FAILED,
		  offsetof(struct vmstat, thp_collapse_alloc_failed) },
		{ MW_THP_ALLOCATION_FAILURES_TOTAL, "file", VMSTAT_HAS_THP_FILE_FALLBACK,
		  offsetof(struct vmstat, thp_file_fallback) },
		{ MW_THP_ALLOCATION_FAILURES_TOTAL, "file_charge", VMSTAT_HAS_THP_FILE_FALLBACK_CHARGE,
		  offsetof(struct vmstat, thp_file_fallback_charge) },
		{ MW_THP_ALLOCATION_FAILURES_TOTAL, "zero_page", VMSTAT_HAS_THP_ZERO_PAGE_ALLOC_FAILED,
		  offsetof(struct vmstat, thp_zero_page_alloc_failed) },
	};

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		uint64_t v;

		if (!(vm->present & rows[i].flag))
			continue;
		memcpy(&v, (const char *)vm + rows[i].offset, sizeof(v));
		snapshot_add(snap, METRIC(rows[i].family), (const char *const[]){ rows[i].label }, (double)v);
	}
}

/* What moves when the host's memory does: walk_faults faults (major ones
 * count 32 times: each is a read from disk), or any direct reclaim or OOM
 * kill, calls for a walk (see docs/metrics.md). */
enum { SIG_PGFAULT, SIG_PGMAJFAULT, SIG_ALLOCSTALL, SIG_OOM_KILL, N_SIGNALS };
#define MAJOR_FAULT_WEIGHT 32

static size_t host_signals(const struct faults_state *s, const struct vmstat *vm, struct refresh_signal *sig)
{
	if (!vm)
		return 0;
	sig[SIG_PGFAULT] = (struct refresh_signal){ vm->pgfault, s->cfg.walk_faults,
						    (vm->present & VMSTAT_HAS_PGFAULT) != 0 };
	sig[SIG_PGMAJFAULT] = (struct refresh_signal){ vm->pgmajfault,
						       (s->cfg.walk_faults + MAJOR_FAULT_WEIGHT - 1) / MAJOR_FAULT_WEIGHT,
						       (vm->present & VMSTAT_HAS_PGMAJFAULT) != 0 };
	sig[SIG_ALLOCSTALL] = (struct refresh_signal){ vm->allocstall, 1, (vm->present & VMSTAT_HAS_ALLOCSTALL) != 0 };
	sig[SIG_OOM_KILL] = (struct refresh_signal){ vm->oom_kill, 1, (vm->present & VMSTAT_HAS_OOM_KILL) != 0 };
	return N_SIGNALS;
}

/* Every process read, ranked, and the export chosen: kept in s->top. */
static int walk(struct faults_state *s, uint64_t now)
{
	struct tracked_row *rows;
	size_t n;

	if (s->cap_top < s->cfg.top_k) {
		const struct tracked_row **p = realloc(s->top, s->cfg.top_k * sizeof(*p));

		if (!p)
			return -ENOMEM;
		s->top = p;
		s->cap_top = s->cfg.top_k;
	}
	s->n_top = 0;
	n = s->iter ? read_iterator(s, &rows) : read_procfs(s, &rows);
	if (!rows)
		return -ENOMEM;
	tracker_update(&s->procs, rows, n, now);
	s->n_tracked = n;
	s->n_top = tracker_select(&s->procs, s->cfg.top_k, s->cfg.series_ttl_msec * USEC_PER_MSEC, now, s->top);
	return 0;
}

static int faults_collect(void *priv, struct snapshot *snap)
{
	struct faults_state *s = priv;
	uint64_t now = now_mono_usec();
	struct refresh_signal sig[N_SIGNALS];
	const struct vmstat *vm = NULL;
	size_t n_sig, i;
	char pid[16];
	int r;

	if (s->vmstat && vmstat_source_get(s->vmstat, &vm) < 0)
		vm = NULL;
	n_sig = host_signals(s, vm, sig);
	/* Without the host's counters nothing says the processes stood still. */
	if (!vm || refresh_gate_due(&s->gate, s->cfg.walk_interval, sig, n_sig)) {
		r = walk(s, now);
		if (r < 0)
			return r;
		refresh_gate_read(&s->gate, sig, n_sig, now);
	} else {
		refresh_gate_reuse(&s->gate);
	}
	snapshot_add(snap, METRIC(MW_FAULT_TRACKED_PROCESSES), NULL, (double)s->n_tracked);
	for (i = 0; i < s->n_top; i++) {
		snprintf(pid, sizeof(pid), "%" PRIu64, s->top[i]->key);
		put_process(snap, pid, tracker_row_label(s->top[i]), s->top[i]->total);
	}
	put_process(snap, "other", "", s->procs.other);
	snapshot_add(snap, METRIC(MW_FAULT_PROCESS_AGE_SECONDS), NULL, refresh_gate_age_seconds(&s->gate, now));
	snapshot_add(snap, METRIC(MW_FAULT_PROCESS_WALKS_TOTAL), NULL, (double)s->gate.reads_total);

	if (vm) {
		if ((vm->present & VMSTAT_HAS_PGFAULT) && (vm->present & VMSTAT_HAS_PGMAJFAULT)) {
			snapshot_add(snap, METRIC(MW_MAJOR_FAULTS_TOTAL), NULL, (double)vm->pgmajfault);
			snapshot_add(snap, METRIC(MW_MINOR_FAULTS_TOTAL), NULL,
				     (double)(vm->pgfault >= vm->pgmajfault ? vm->pgfault - vm->pgmajfault : 0));
		}
		put_refaults(snap, vm);
		put_thp(snap, vm);
	}
	return 0;
}

/* top_k, max_processes and series_ttl apply in place; another source or /proc needs a new instance. */
static int faults_reload(void *priv, const void *cfg)
{
	struct faults_state *s = priv;
	const struct faults_config *c = cfg;

	if (c->use_bpf != s->cfg.use_bpf || strcmp(c->proc_root, s->cfg.proc_root) != 0)
		return -EAGAIN;
	s->cfg = *c;
	/* Another top_k or series_ttl chooses another export: walk in the next window. */
	s->gate.primed = false;
	s->n_top = 0;
	return 0;
}

static uint64_t faults_series_hold_msec(const void *cfg)
{
	return ((const struct faults_config *)cfg)->series_ttl_msec;
}

static void faults_stop(void *priv)
{
	struct faults_state *s = priv;

	bpf_link__destroy(s->iter);
	faults_bpf__destroy(s->skel);
	tracker_done(&s->procs);
	vmstat_source_unref(s->vmstat);
	free(s->buf);
	free(s->top);
}

const struct collector_ops faults_collector = {
	.name = "faults",
	.summary = "major and minor page faults per process (BPF task iterator, /proc fallback) and system-wide",
	.default_enabled = true,
	.config_size = sizeof(struct faults_config),
	.config_defaults = faults_config_defaults,
	.configure = faults_configure,
	.priv_size = sizeof(struct faults_state),
	.start = faults_start,
	.collect = faults_collect,
	.reload = faults_reload,
	.stop = faults_stop,
	.series_hold_msec = faults_series_hold_msec,
};
