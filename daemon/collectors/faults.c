// SPDX-License-Identifier: GPL-2.0
/* Page faults per process. A BPF walk reads every process's fault counters
 * straight from task_struct, only when the host moved (or every
 * walk_interval windows): one program run with the kfunc task iterator
 * (6.7+), else the iter/task iterator, else /proc/PID/stat. Processes that exit between walks report
 * their final counts from an exit hook, applied at the next walk, so far
 * apart walks lose nothing. System totals from /proc/vmstat. */
#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "clock.h"
#include "collector.h"
#include "config.h"
#include "faults.h"
#include "faults.skel.h"
#include "faults_walk.skel.h"
#include "fileio.h"
#include "parse.h"
#include "procstat.h"
#include "refresh_gate.h"
#include "tracker.h"
#include "vmstat.h"

enum { FAULT_MAJOR, FAULT_MINOR, FAULT_COUNTERS };

struct faults_config {
	uint64_t top_k;
	uint64_t max_processes;
	uint64_t series_ttl_msec;
	uint64_t walk_interval; /* windows; 1: every window */
	uint64_t walk_faults;   /* pgfault growth that walks at once */
	int source;             /* enum faults_source: a choice, so an int */
	char proc_root[256];
};

struct faults_state {
	struct faults_config cfg;
	struct faults_bpf *skel;
	struct faults_walk_bpf *walk; /* NULL: no kfunc iterator, iter/task walks */
	const struct fault_record *walk_records; /* its array, mapped */
	size_t walk_slots;
	struct bpf_link *iter;
	struct bpf_link *exit_hook; /* NULL: exits between walks are not seen */
	struct ring_buffer *exit_ring;
	/* Exits read from the ring, applied at the next walk. */
	struct fault_record *exits;
	size_t n_exits, cap_exits;
	uint64_t exits_total, exits_dropped; /* dropped: no room here */
	struct tracker procs;
	struct vmstat_source *vmstat; /* NULL: not readable */
	const uint64_t *window_lengths; /* collector_context's */
	char *buf; /* ITER_CHUNK bytes */
	/* The last walk's export, re-exported until the next walk: pointers
	 * into procs.rows, which stand still until the next walk. */
	struct refresh_gate gate;
	const struct tracked_row **top;
	size_t n_top, cap_top, n_tracked;
};

enum faults_source { SOURCE_PROCFS, SOURCE_BPF, SOURCE_ITER };

/* auto and bpf are the same: the kfunc walk, else the iter/task walk, else
 * /proc. iter: the iter/task walk even where the kfunc walk runs. */
static const struct config_choice source_choices[] = {
	{ "auto", SOURCE_BPF },
	{ "bpf", SOURCE_BPF },
	{ "iter", SOURCE_ITER },
	{ "procfs", SOURCE_PROCFS },
	{ NULL, 0 },
};

static const struct collector_key faults_keys[] = {
	{ CONFIG_KEY_UINT("top_k", struct faults_config, top_k, 1, 1000), "10" },
	{ CONFIG_KEY_UINT("max_processes", struct faults_config, max_processes, 64, 4194304), "65536" },
	{ CONFIG_KEY_DURATION("series_ttl", struct faults_config, series_ttl_msec, 0, 86400000), "0" },
	{ CONFIG_KEY_UINT("walk_interval", struct faults_config, walk_interval, 1, 3600), "10" },
	{ CONFIG_KEY_UINT("walk_faults", struct faults_config, walk_faults, 1, UINT64_C(1) << 40), "32768" },
	{ CONFIG_KEY_CHOICE("source", struct faults_config, source, source_choices), "auto" },
	{ CONFIG_KEY_PATH("proc_root", struct faults_config, proc_root), "/proc" },
};

static int on_exit_record(void *ctx, void *data, size_t size)
{
	struct faults_state *s = ctx;

	if (size < sizeof(struct fault_record))
		return 0;
	s->exits_total++;
	if (s->n_exits == s->cap_exits) {
		size_t cap = s->cap_exits ? s->cap_exits * 2 : 64;
		struct fault_record *p;

		if (cap > s->cfg.max_processes || !(p = realloc(s->exits, cap * sizeof(*p)))) {
			s->exits_dropped++;
			return 0;
		}
		s->exits = p;
		s->cap_exits = cap;
	}
	memcpy(&s->exits[s->n_exits++], data, sizeof(struct fault_record));
	return 0;
}

/* The exit hook on its own: without it the walks still run, and a process
 * that exits loses what it did since the last walk (the collector says so). */
static int attach_exit_hook(struct faults_state *s)
{
	int r;

	s->exit_hook = bpf_program__attach(s->skel->progs.record_exit);
	if (!s->exit_hook)
		return -errno;
	s->exit_ring = ring_buffer__new(bpf_map__fd(s->skel->maps.exits), on_exit_record, s, NULL);
	if (!s->exit_ring) {
		r = -errno;
		bpf_link__destroy(s->exit_hook);
		s->exit_hook = NULL;
		return r;
	}
	return 0;
}

static void close_walk(struct faults_state *s)
{
	if (s->walk_records)
		munmap((void *)s->walk_records, s->walk_slots * sizeof(struct fault_record));
	s->walk_records = NULL;
	faults_walk_bpf__destroy(s->walk);
	s->walk = NULL;
	s->walk_slots = 0;
}

/* The kfunc walk with room for slots processes. */
static int open_walk(struct faults_state *s, size_t slots)
{
	struct faults_walk_bpf *w;
	void *records;
	int r;

	w = faults_walk_bpf__open();
	if (!w)
		return -errno;
	r = bpf_map__set_max_entries(w->maps.walk_records, (uint32_t)slots);
	if (r == 0)
		r = faults_walk_bpf__load(w);
	if (r < 0) {
		faults_walk_bpf__destroy(w);
		return r;
	}
	records = mmap(NULL, slots * sizeof(struct fault_record), PROT_READ, MAP_SHARED,
		       bpf_map__fd(w->maps.walk_records), 0);
	if (records == MAP_FAILED) {
		r = -errno;
		faults_walk_bpf__destroy(w);
		return r;
	}
	close_walk(s);
	s->walk = w;
	s->walk_records = records;
	s->walk_slots = slots;
	return 0;
}

/* Loads the walk and the exit hook, each on its own: a kernel that refuses
 * one keeps the other. Returns the walk's error, 0 if one runs (kfunc or
 * iter/task); *exit_err gets the exit hook's. */
static int start_bpf(struct faults_state *s, int *exit_err)
{
	size_t slots = FAULTS_WALK_MIN_SLOTS;
	int r;

	log_set_libbpf_quiet(true);
	while (slots < s->cfg.max_processes / 16)
		slots *= 2;
	if (slots > s->cfg.max_processes)
		slots = s->cfg.max_processes;
	r = s->cfg.source == SOURCE_ITER ? -EOPNOTSUPP : open_walk(s, slots);
	if (r < 0 && s->cfg.source != SOURCE_ITER)
		log_debug_errno(r, "faults: no kfunc task iterator, walking with iter/task: %m");
	*exit_err = 0;
	s->skel = faults_bpf__open();
	if (!s->skel) {
		*exit_err = -errno;
		r = s->walk ? 0 : *exit_err;
		goto out;
	}
	if (s->walk)
		bpf_program__set_autoload(s->skel->progs.dump_task_faults, false);
	if (faults_bpf__load(s->skel) < 0) {
		/* Perhaps only the exit hook's tracepoint or BTF is missing. */
		*exit_err = -errno;
		faults_bpf__destroy(s->skel);
		s->skel = NULL;
		if (s->walk) {
			r = 0;
			goto out;
		}
		s->skel = faults_bpf__open();
		if (!s->skel) {
			r = -errno;
			goto out;
		}
		bpf_program__set_autoload(s->skel->progs.record_exit, false);
		if (faults_bpf__load(s->skel) < 0) {
			r = -errno;
			faults_bpf__destroy(s->skel);
			s->skel = NULL;
			goto out;
		}
	} else {
		*exit_err = attach_exit_hook(s);
	}
	if (s->walk) {
		r = 0;
		goto out;
	}
	s->iter = bpf_program__attach_iter(s->skel->progs.dump_task_faults, NULL);
	r = s->iter ? 0 : -errno;
	if (r < 0 && !s->exit_hook) {
		faults_bpf__destroy(s->skel);
		s->skel = NULL;
	}
out:
	log_set_libbpf_quiet(false);
	return r;
}

static int faults_start(void *priv, const void *cfg, const struct collector_context *ctx,
			struct collector_status *st)
{
	struct faults_state *s = priv;
	char path[300];
	int r, exit_err = -EOPNOTSUPP;

	s->cfg = *(const struct faults_config *)cfg;
	tracker_init(&s->procs, FAULT_COUNTERS, FAULT_MAJOR, FAULT_MINOR);
	snprintf(path, sizeof(path), "%s/vmstat", s->cfg.proc_root);
	/* Unreadable: no system-wide figures, s->vmstat stays NULL. */
	s->window_lengths = ctx->window_lengths;
	(void)vmstat_source_open(ctx->vmstat, path, &s->vmstat);
	if (s->cfg.source != SOURCE_PROCFS) {
		r = start_bpf(s, &exit_err);
		if (r == 0)
			snprintf(st->mode, sizeof(st->mode), "%s", s->walk ? "kfunc" : "iter");
		if (r == 0 && exit_err == 0)
			return 0;
		st->state = COLLECTOR_DEGRADED;
		collector_status_note_bpf_error(st, r < 0 ? r : exit_err);
		if (r == 0) {
			log_debug_errno(exit_err, "faults: exit hook unavailable: %m");
			collector_status_set_reason(st, "exit hook tp_btf/sched_process_exit unavailable (%s): a process "
						    "exiting between walks loses its faults since the last walk",
						    strerror(-exit_err));
			return 0;
		}
		log_debug_errno(r, "faults: task iterator unavailable, reading %s/PID/stat instead: %m",
				s->cfg.proc_root);
		collector_status_set_reason(st, "BPF task iterator unavailable (%s): reading /proc/PID/stat%s",
					    strerror(-r), s->exit_hook ? "" : "; exits between walks not seen");
	}
	snprintf(st->mode, sizeof(st->mode), "procfs");
	return 0;
}

/* The iterator's output is read in chunks of this size and added up as it
 * comes, rather than whole: 10,000 threads are half a megabyte of records. */
#define ITER_CHUNK 65536

/* The iterator's records go straight into the tracker's rows, which stay
 * from window to window: at 10,000 processes a fresh table each window would
 * cost a megabyte of page faults, and a second one for the last window's
 * values as much again.
 *
 * Fails without opening a tracker read when the iterator cannot start (no
 * memory, no file descriptor left); a read that fails part-way is voided:
 * nothing moves, nothing is dropped, so that nobody's lifetime counts come
 * back as new in the next walk. */
static int read_iterator(struct faults_state *s)
{
	size_t used = 0, i;
	int fd, r = 0;

	if (!s->buf) {
		s->buf = malloc(ITER_CHUNK);
		if (!s->buf)
			return -ENOMEM;
	}
	fd = bpf_iter_create(bpf_link__fd(s->iter));
	if (fd < 0)
		return fd;
	tracker_begin(&s->procs, s->cfg.max_processes);
	for (;;) {
		ssize_t got = read(fd, s->buf + used, ITER_CHUNK - used);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			r = -errno;
			tracker_void_read(&s->procs);
			break;
		}
		if (got == 0)
			break;
		used += (size_t)got;

		/* Records come per thread, each with its process's start and comm:
		 * the threads of a process add up in its row. */
		for (i = 0; i + sizeof(struct fault_record) <= used; i += sizeof(struct fault_record)) {
			struct fault_record rec;
			struct tracked_row *row;

			memcpy(&rec, s->buf + i, sizeof(rec));
			row = tracker_read(&s->procs, rec.tgid, rec.start_boottime_ns, rec.comm, FAULTS_COMM_LEN);
			if (!row)
				continue; /* max_processes read already, or no memory for it */
			row->value[FAULT_MAJOR] += rec.maj_flt;
			row->value[FAULT_MINOR] += rec.min_flt;
		}
		/* A record cut at the end of a read waits for the rest. */
		used -= i;
		memmove(s->buf, s->buf + i, used);
	}
	close(fd);
	return r;
}

/* One program run fills the array with a record per process. A walk that
 * found more processes than slots loads a larger array (up to
 * max_processes) and runs again; if that fails, the processes past the end
 * are left out as max_processes leaves them out. */
static int run_walk(struct faults_state *s)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	size_t seen, slots;

	if (bpf_prog_test_run_opts(bpf_program__fd(s->walk->progs.walk_processes), &opts) < 0)
		return -errno;
	seen = s->walk->bss->walk_seen;
	if (seen <= s->walk_slots || s->walk_slots >= s->cfg.max_processes)
		return 0;
	for (slots = s->walk_slots; slots < seen;)
		slots *= 2;
	if (slots > s->cfg.max_processes)
		slots = s->cfg.max_processes;
	if (open_walk(s, slots) < 0)
		return 0;
	log_debug("faults: %zu processes, walk array grown to %zu", seen, slots);
	return bpf_prog_test_run_opts(bpf_program__fd(s->walk->progs.walk_processes), &opts) < 0 ? -errno : 0;
}

static int read_walk(struct faults_state *s)
{
	size_t filled, i;
	int r;

	r = run_walk(s);
	if (r < 0)
		return r;
	filled = s->walk->bss->walk_filled;
	if (filled > s->walk_slots)
		filled = s->walk_slots;
	tracker_begin(&s->procs, s->cfg.max_processes);
	for (i = 0; i < filled; i++) {
		const struct fault_record *rec = &s->walk_records[i];
		struct tracked_row *row = tracker_read(&s->procs, rec->tgid, rec->start_boottime_ns, rec->comm,
						       FAULTS_COMM_LEN);

		if (!row)
			continue;
		row->value[FAULT_MAJOR] = rec->maj_flt;
		row->value[FAULT_MINOR] = rec->min_flt;
	}
	return 0;
}

/* Only a process that is gone is left out of the walk. One whose stat could
 * not be read for another reason (no file descriptor, no memory) or not be
 * parsed keeps its row as it was: dropped, it would come back in the next
 * walk with its lifetime counts as new. */
static bool process_gone(int r)
{
	return r == -ENOENT || r == -ESRCH;
}

static int read_procfs(struct faults_state *s)
{
	struct dirent *de;
	DIR *d;

	d = opendir(s->cfg.proc_root);
	if (!d)
		return -errno;
	tracker_begin(&s->procs, s->cfg.max_processes);
	while ((de = readdir(d))) {
		char path[sizeof(s->cfg.proc_root) + sizeof(de->d_name) + 8], *text = NULL;
		struct procstat ps;
		uint64_t pid;
		size_t len;
		int r;

		if (parse_u64(de->d_name, de->d_name + strlen(de->d_name), &pid) < 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s/stat", s->cfg.proc_root, de->d_name);
		r = read_full_file(path, 4096, &text, &len);
		if (r < 0) {
			if (!process_gone(r))
				(void)tracker_keep(&s->procs, pid);
			continue;
		}
		if (procstat_parse(text, len, &ps) == 0 && (uint64_t)ps.pid == pid) {
			struct tracked_row *row = tracker_read(&s->procs, pid, ps.starttime, ps.comm, 15);

			if (row) {
				row->value[FAULT_MAJOR] = ps.majflt;
				row->value[FAULT_MINOR] = ps.minflt;
			}
		} else {
			(void)tracker_keep(&s->procs, pid);
		}
		free(text);
	}
	closedir(d);
	return 0;
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

static void drain_exits(struct faults_state *s)
{
	if (s->exit_ring)
		(void)ring_buffer__consume(s->exit_ring);
}

static int cmp_exit(const void *a, const void *b)
{
	const struct fault_record *x = a, *y = b;

	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	return x->start_boottime_ns < y->start_boottime_ns ? -1 : x->start_boottime_ns > y->start_boottime_ns;
}

/* What an exited process adds that was never exported: its final counts
 * against the last walk's, if that walk saw it. */
static void fold_into_other(struct faults_state *s, const struct fault_record *e)
{
	uint64_t was[TRACKER_MAX_COUNTERS] = { 0 };

	if (!tracker_previous(&s->procs, e->tgid, e->start_boottime_ns, was))
		memset(was, 0, sizeof(was));
	s->procs.other[FAULT_MAJOR] += e->maj_flt > was[FAULT_MAJOR] ? e->maj_flt - was[FAULT_MAJOR] : 0;
	s->procs.other[FAULT_MINOR] += e->min_flt > was[FAULT_MINOR] ? e->min_flt - was[FAULT_MINOR] : 0;
}

/* The processes that exited since the last walk are read with their final
 * counts, so that the tracker turns what they did since the last walk into
 * deltas like any other process's; the next walk no longer has them. A pid
 * the walk found taken by a newer process, or that exited twice, has the
 * older one's rest folded into "other". */
static void apply_exits(struct faults_state *s)
{
	size_t i;

	if (!s->n_exits)
		return;
	qsort(s->exits, s->n_exits, sizeof(*s->exits), cmp_exit);
	for (i = 0; i < s->n_exits; i++) {
		const struct fault_record *e = &s->exits[i];
		struct tracked_row *row = tracker_find(&s->procs, e->tgid);

		if (row && tracker_row_was_read(&s->procs, row)) {
			if (row->generation != e->start_boottime_ns) {
				fold_into_other(s, e);
				continue;
			}
			/* Walked while it exited: the larger of the two is the later. */
			if (e->maj_flt > row->value[FAULT_MAJOR])
				row->value[FAULT_MAJOR] = e->maj_flt;
			if (e->min_flt > row->value[FAULT_MINOR])
				row->value[FAULT_MINOR] = e->min_flt;
			continue;
		}
		if ((i + 1 < s->n_exits && s->exits[i + 1].tgid == e->tgid) ||
		    !(row = tracker_read(&s->procs, e->tgid, e->start_boottime_ns, e->comm, FAULTS_COMM_LEN))) {
			fold_into_other(s, e);
			continue;
		}
		row->value[FAULT_MAJOR] = e->maj_flt;
		row->value[FAULT_MINOR] = e->min_flt;
	}
	s->n_exits = 0;
}

/* Every process read, ranked, and the export chosen: kept in s->top. */
static int walk(struct faults_state *s, uint64_t now)
{
	int r;

	if (s->cap_top < s->cfg.top_k) {
		const struct tracked_row **p = realloc(s->top, s->cfg.top_k * sizeof(*p));

		if (!p)
			return -ENOMEM;
		s->top = p;
		s->cap_top = s->cfg.top_k;
	}
	/* Not opened: the tracker and the last walk's export stand as they were. */
	r = s->walk ? read_walk(s) : s->iter ? read_iterator(s) : read_procfs(s);
	if (r < 0 && !s->procs.reading)
		return r;
	drain_exits(s);
	apply_exits(s);
	tracker_update(&s->procs, now);
	s->n_tracked = s->procs.n_rows;
	s->n_top = tracker_select(&s->procs, s->cfg.top_k, s->cfg.series_ttl_msec * USEC_PER_MSEC, now, s->top);
	return r;
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
	/* Without the exit hook, a walk skipped is a process's last faults lost. */
	if (!vm || refresh_gate_due(&s->gate, s->exit_ring ? s->cfg.walk_interval : 1,
					 collector_window_lengths(s->window_lengths), sig, n_sig)) {
		r = walk(s, now);
		if (r < 0)
			return r;
		refresh_gate_read(&s->gate, sig, n_sig, now);
	} else {
		refresh_gate_reuse(&s->gate, collector_window_lengths(s->window_lengths));
	}
	snapshot_add(snap, METRIC(MW_FAULT_TRACKED_PROCESSES), NULL, (double)s->n_tracked);
	for (i = 0; i < s->n_top; i++) {
		snprintf(pid, sizeof(pid), "%" PRIu64, s->top[i]->key);
		put_process(snap, pid, tracker_row_label(s->top[i]), s->top[i]->total);
	}
	put_process(snap, "other", "", s->procs.other);
	snapshot_add(snap, METRIC(MW_FAULT_PROCESS_AGE_SECONDS), NULL, refresh_gate_age_seconds(&s->gate, now));
	snapshot_add(snap, METRIC(MW_FAULT_PROCESS_WALKS_TOTAL), NULL, (double)s->gate.reads_total);
	if (s->exit_ring) {
		drain_exits(s);
		snapshot_add(snap, METRIC(MW_FAULT_PROCESS_EXITS_TOTAL), NULL, (double)s->exits_total);
		snapshot_add(snap, METRIC(MW_FAULT_PROCESS_EXITS_DROPPED_TOTAL), NULL,
			     (double)(s->exits_dropped + s->skel->bss->exits_dropped));
	}

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

	if (c->source != s->cfg.source || strcmp(c->proc_root, s->cfg.proc_root) != 0)
		return -EAGAIN;
	s->cfg = *c;
	/* Another top_k or series_ttl chooses another export: walk in the next window. */
	refresh_gate_expire(&s->gate);
	s->n_top = 0;
	return 0;
}

/* The exit ring holds a few thousand records, drained at every window's
 * end; a burst of exits that fills half of it wakes the daemon to drain it
 * sooner (the program's wake-up flags), so that none is dropped. */
static int faults_sample(void *priv, uint64_t now_usec)
{
	drain_exits(priv);
	return 0;
}

static bool faults_wants_samples(void *priv)
{
	return false;
}

static int faults_wake_fd(void *priv)
{
	struct faults_state *s = priv;

	return s->exit_ring ? ring_buffer__epoll_fd(s->exit_ring) : -1;
}

/* Walks, and applies the exits read since the last walk. */
static void faults_read_fresh(void *priv)
{
	refresh_gate_expire(&((struct faults_state *)priv)->gate);
}

static uint64_t faults_series_hold_msec(const void *cfg)
{
	return ((const struct faults_config *)cfg)->series_ttl_msec;
}

static void faults_stop(void *priv)
{
	struct faults_state *s = priv;

	ring_buffer__free(s->exit_ring);
	bpf_link__destroy(s->exit_hook);
	bpf_link__destroy(s->iter);
	faults_bpf__destroy(s->skel);
	close_walk(s);
	free(s->exits);
	tracker_done(&s->procs);
	vmstat_source_unref(s->vmstat);
	free(s->buf);
	free(s->top);
}

const struct collector_ops faults_collector = {
	.name = "faults",
	.summary = "major and minor page faults per process (BPF task walk and exit hook, /proc fallback) and system-wide",
	.default_enabled = true,
	.config_size = sizeof(struct faults_config),
	.keys = faults_keys,
	.n_keys = ARRAY_SIZE(faults_keys),
	.priv_size = sizeof(struct faults_state),
	.start = faults_start,
	.sample = faults_sample,
	.wants_samples = faults_wants_samples,
	.wake_fd = faults_wake_fd,
	.collect = faults_collect,
	.reload = faults_reload,
	.stop = faults_stop,
	.series_hold_msec = faults_series_hold_msec,
	.read_fresh = faults_read_fresh,
};
