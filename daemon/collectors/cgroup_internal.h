/* SPDX-License-Identifier: GPL-2.0 */
/* The cgroup collector's parts (collectors/cgroup*.c): what they share. */
#ifndef MEMWATCH_COLLECTORS_CGROUP_INTERNAL_H
#define MEMWATCH_COLLECTORS_CGROUP_INTERNAL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "cgroup_walk.h"
#include "refresh_gate.h"
#include "collector.h"
#include "strbuf.h"
#include "tracker.h"
#include "trend.h"

/* Counters kept per cgroup: stall times, one per event kind, then memory.stat's
 * refaults, activations and restores (kind-major, anon then file). */
enum {
	C_SOME,
	C_FULL,
	C_EVENT0,
	C_WORKINGSET0 = C_EVENT0 + _CGROUP_EVENT_MAX,
	N_COUNTERS = C_WORKINGSET0 + 3 * 2,
};
#define N_TRACKERS ((N_COUNTERS + TRACKER_MAX_COUNTERS - 1) / TRACKER_MAX_COUNTERS)

/* v1 and v2 inode numbers come from different kernfs roots and can collide. */
#define KEY_V1 (UINT64_C(1) << 63)

struct cgroup_config {
	char v1_root[256]; /* "auto", "none" or a path */
	char v2_root[256];
	char include[1024];
	char exclude[1024];
	uint64_t max_depth;
	uint64_t max_cgroups;
	uint64_t top_k;
	uint64_t stat_interval; /* reads between memory.stat reads of a cgroup not exported */
	uint64_t refresh_interval; /* windows between reads of the iterator while nothing says the tree moved */
	char kubelet_pods_dir[256];       /* <namespace>_<pod>_<uid>/: pod names */
	char kubelet_containers_dir[256]; /* <pod>_<namespace>_<container>-<id>.log: container names */
	char docker_dir[256];             /* containers/<id>/config.v2.json: Docker's names; "": off */
	char podman_storage_dir[256];     /* <driver>-containers/containers.json: Podman's names; "": off */
	uint64_t horizon_msec;  /* exhaustion_horizon: the span of usage the limit ETA is fitted over */
	int use_bpf; /* source = auto or bpf: the cgroup iterator for v1 counters (a choice, so an int) */
};

/* Usage points kept per cgroup with a limit, for its ETA (16 bytes each). */
#define CGROUP_TREND_POINTS 64

struct cgroup_hierarchy;

struct roots {
	int v1_fd, v2_fd;   /* -1 when absent */
	bool v2_memory;     /* the cgroup2 tree has the memory controller */
	bool pressure;      /* the cgroup2 tree has memory.pressure */
	char v1[PATH_MAX], v2[PATH_MAX];
};

struct entry {
	uint64_t key;
	size_t path_off; /* into paths */
	struct cgroup_mem mem;
};

/* cgroup_peak.c: how a cgroup's window peak is known (the label "method"). */
enum { CGROUP_PEAK_SAMPLED, CGROUP_PEAK_LIFETIME_RISE, CGROUP_PEAK_FD_RESET };

struct cgroup_peak {
	int fd;            /* memory.peak / memory.max_usage_in_bytes; -1: not open */
	unsigned method;   /* CGROUP_PEAK_* */
	bool tried;        /* opened, or found it cannot be */
	uint64_t read_at;  /* the collect (peak_windows) value is for */
	uint64_t lifetime; /* what fd said then */
	uint64_t value;    /* this window's peak */
};

/* A cgroup's files kept open between windows, by key, and what its
 * memory.stat said last time it was read. */
struct cached {
	uint64_t key; /* 0: empty slot */
	uint64_t seen; /* the window it was last walked in */
	struct cgroup_files files;
	uint64_t inactive_file;
	uint64_t stat_usage, stat_events; /* usage and the events' sum when memory.stat was read */
	uint64_t workingset[3][2];
	unsigned workingset_present;
	bool stat_read, has_inactive_file;
	bool exported; /* in the last window's top_k */
	struct trend usage_trend; /* points: NULL until the cgroup has a limit */
	struct cgroup_peak peak;  /* read while exported */
};

#define CGROUP_WATCHES 4 /* cgroup_bpf.c's tracepoints */

struct cgroup_state {
	bool initialized;
	struct cgroup_config cfg;
	struct cgroup_hierarchy *hierarchy; /* the core's (collector_context), for the roots */
	struct cgroup_names *names;         /* the core's: the identity labels; NULL: the path's only */
	struct roots roots;
	struct cgroup_globs include, exclude;
	char *buf; /* CGROUP_READ_BUF_SIZE */

	/* This window's walk. */
	struct entry *entries;
	size_t n_entries, cap_entries;
	struct strbuf paths;
	uint64_t *failed; /* keys of cgroups skipped in this window */
	size_t n_failed, cap_failed;
	size_t skipped;

	struct tracker trackers[N_TRACKERS];
	unsigned seen; /* bit per counter: some cgroup had it, so "other" exports it */
	uint64_t skipped_total;

	/* Open-addressing table of kept-open files, rebuilt when cgroups go. */
	struct cached *cache;
	size_t cache_cap, cache_n, cache_seen;
	uint64_t window;
	size_t open_files, open_files_max;

	/* cgroup_bpf.c: the iterator (NULL: cgroupfs only) and this window's records, by id. */
	struct memcg_bpf *memcg_skel;
	struct bpf_link *memcg_iter;
	struct memcg_record *memcg;
	size_t n_memcg, cap_memcg;
	void *memcg_map; /* the program's records array, mapped */
	size_t memcg_map_len, memcg_slots;
	uint64_t page_size;
	bool memcg_v2; /* the iterator walks the cgroup2 tree, not v1's */
	uint64_t memcg_signature; /* of this window's records: ids, names, levels */
	bool memcg_fresh; /* the records were read in this window (a refresh) */
	/* cgroup_scan.c: the last full walk's entries can be read again without
	 * a walk while the records' signature stays the one it saw. */
	bool layout_valid, layout_truncated;
	uint64_t layout_signature;
	struct bpf_link *memcg_watch[CGROUP_WATCHES]; /* NULL: not attached */

	/* cgroup.c: when to read again, and what the windows in between export:
	 * the last read's order of export and sums of "other", and its walk. */
	struct refresh_gate gate;
	bool read_fresh; /* the next read reads every memory.stat too (the last collect before a restart) */
	struct vmstat_source *vmstat; /* NULL: not readable (then every window reads) */
	const uint64_t *window_lengths; /* collector_context's */
	struct cgroup_rank *rank;     /* n_entries of them; NULL until a read ranked */
	size_t n_keep;
	uint64_t other_usage, other_ws;
	double walk_seconds, walk_cpu_seconds;
	bool walk_truncated;
	uint64_t peak_windows; /* cgroup_peak.c: collects so far */
};

/* cgroup_roots.c: the trees to walk. */
/* hierarchy: where "auto" roots come from (NULL: -ENOMEM for them). */
int cgroup_roots_resolve(const struct cgroup_config *c, struct cgroup_hierarchy *hierarchy, char *buf,
			 struct roots *ret, struct collector_status *st);
void cgroup_roots_close(struct roots *r);

/* cgroup_files.c: files kept open between windows, by key. */
uint64_t cgroup_key_mix(uint64_t key);
struct cached *file_cache_get(struct cgroup_state *s, uint64_t key);
struct cached *file_cache_find(struct cgroup_state *s, uint64_t key);
void file_cache_sweep(struct cgroup_state *s);
void file_cache_free(struct cgroup_state *s);
struct cgroup_files *file_cache_files(struct cgroup_state *s, struct cached *c);
void file_cache_count_opened(struct cgroup_state *s, const struct cgroup_files *f, unsigned before);
size_t file_cache_budget(void);

/* cgroup_bpf.c: counters from a BPF cgroup iterator. start returns 1
 * when it runs, 0 when not asked for or not applicable (no memory tree it
 * can walk, not a cgroupfs, a kernel before 6.1), -errno when it failed
 * (cgroupfs then serves). */
int cgroup_bpf_root_fd(const struct roots *r, bool *v2);
int cgroup_bpf_start(struct cgroup_state *s);
void cgroup_bpf_stop(struct cgroup_state *s);
void cgroup_bpf_free(struct cgroup_state *s);
/* The counts of the programs that watch for what makes a read out of date
 * (tp_btf): the tree's three tracepoints as one, and memcg limit reclaim. */
enum { CGROUP_WATCH_TREE = 0, CGROUP_WATCH_RECLAIM = 3 };
bool cgroup_bpf_watched(const struct cgroup_state *s, unsigned watch);
uint64_t cgroup_bpf_watch_count(const struct cgroup_state *s, unsigned watch);
/* This window's records list every cgroup the walk reads (one tree with
 * memory, the iterator's). */
bool cgroup_bpf_covers_tree(const struct cgroup_state *s);
/* Reads this window's records; 0 also when there is no iterator. */
int cgroup_bpf_refresh(struct cgroup_state *s);
/* Fills m (memory.stat and pressure aside) for the cgroup of the v1 tree
 * (v1) or cgroup2 tree with this inode from this window's records; false
 * when they do not have it. */
bool cgroup_bpf_lookup(const struct cgroup_state *s, uint64_t ino, bool v1, struct cgroup_mem *m);
/* The lifetime peak in bytes of the cgroup with this key (KEY_V1 or not),
 * when this window's iterator pass read it: false when the records are
 * older than this window or do not have it. */
bool cgroup_bpf_watermark(const struct cgroup_state *s, uint64_t key, uint64_t *bytes);

/* cgroup_peak.c: the window peak of every exported cgroup, each collect
 * after the order of export is known; its fd counts in open_files. */
void cgroup_peak_init(struct cgroup_peak *p);
void cgroup_peak_close(struct cgroup_state *s, struct cgroup_peak *p);
void cgroup_peak_collect(struct cgroup_state *s);
const char *cgroup_peak_method_name(unsigned method);

/* cgroup_scan.c: one window's walk into s->entries (and s->failed). */
int cgroup_scan(struct cgroup_state *s, bool *truncated);

/* cgroup_rank.c: per-cgroup counters through lib/tracker, and the order of export. */
uint64_t cgroup_counter_value(const struct cgroup_mem *m, unsigned c, bool *present);
int cgroup_trackers_update(struct cgroup_state *s, uint64_t now);
/* The window delta of counter c of entry i (s->entries). */
uint64_t cgroup_row_delta(const struct cgroup_state *s, size_t i, unsigned c);
/* This window's entries, most interesting first (calloc'd, n_entries + 1). */
struct cgroup_rank *cgroup_rank_entries(const struct cgroup_state *s);

#endif
