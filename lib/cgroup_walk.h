/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_CGROUP_WALK_H
#define MEMWATCH_CGROUP_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "macro.h"

/* Walking memory cgroup trees (v1 memory hierarchy, cgroup2) and reading one
 * cgroup's memory files, relative to directory fds and without following
 * symlinks. Cgroups come and go during a walk: a directory or file that is
 * gone is reported as such (-ENOENT, -ENODEV), never as half-read values. */

/* ---- include / exclude patterns ---- */

#define CGROUP_GLOBS_MAX 64
#define CGROUP_GLOB_LEN_MAX 255

/* fnmatch(3) patterns, without FNM_PATHNAME: a star also matches '/', so
 * "/system.slice/" followed by a star takes everything below system.slice. */
struct cgroup_globs {
	char *pattern[CGROUP_GLOBS_MAX];
	size_t n;
};

/* Splits text at blanks and commas. Every pattern must start with '/', '*',
 * '?' or '[' (paths all start with '/'; anything else can never match).
 * Returns 0, -EINVAL for such a pattern (or one longer than
 * CGROUP_GLOB_LEN_MAX), -E2BIG for more than CGROUP_GLOBS_MAX, -ENOMEM.
 * With ret == NULL only validates. */
int cgroup_globs_parse(const char *text, struct cgroup_globs *ret);
void cgroup_globs_free(struct cgroup_globs *g);
/* Does any pattern match path? */
bool cgroup_globs_match(const struct cgroup_globs *g, const char *path);
/* No includes means everything; excludes win over includes. */
bool cgroup_path_selected(const struct cgroup_globs *include, const struct cgroup_globs *exclude,
			  const char *path);

/* ---- the walk ---- */

/* One cgroup, as the walk hands it to the callback. Its directory is only
 * opened when asked for (cgroup_dir_fd): a cgroup whose files are kept open
 * costs one fstatat() per walk. Everything is valid during the call only. */
struct cgroup_dir {
	const char *path; /* "/" for the root, "/a/b" below it */
	unsigned depth;   /* 0 for the root */
	uint64_t ino;     /* inode number: the kernfs id, stable while the cgroup exists */
	/* The walk's own: */
	int parent_fd, parent_shadow_fd;
	const char *name;
	int fd, shadow_fd;
	bool shadow_tried;
};

/* The cgroup's directory (O_NOFOLLOW), opened on first use and checked to be
 * the one the walk saw; owned by the walk. -errno when it is gone. */
int cgroup_dir_fd(struct cgroup_dir *d);
/* The directory of the same relative path in the shadow tree, or -ENOENT. */
int cgroup_dir_shadow_fd(struct cgroup_dir *d);

/* Return 0 to go on, > 0 to skip this cgroup's children, < 0 to stop the walk. */
typedef int (*cgroup_walk_fn)(struct cgroup_dir *d, void *userdata);

struct cgroup_walk_opts {
	unsigned max_depth; /* children deeper than this are not visited; 0 = the root only */
	size_t max_cgroups; /* stop after calling back for this many */
};

struct cgroup_walk_stats {
	size_t visited;  /* callbacks made */
	size_t vanished; /* listed by readdir, but gone before they could be looked at */
	size_t listed;   /* directories read with readdir */
	bool truncated;  /* stopped at max_cgroups */
};

/* Pre-order, depth-first walk from root_fd (not consumed; may be a cached
 * fd). shadow_root_fd (or -1) is a second tree walked in step: each cgroup
 * can open the directory of the same relative path there (the cgroup2 tree
 * of a hybrid host, whose memory.pressure goes with the v1 memory cgroup).
 * Symlinks are never followed, nor mounts of other file systems (a cgroup2
 * tree mounted inside the v1 one). A directory whose link count is 2 has no
 * subdirectories (kernfs, ext4 and tmpfs keep that count exact) and is not
 * read. Returns 0 (also when cut short by max_cgroups), the callback's
 * negative value, or -EMFILE, -ENFILE, -ENOMEM when the walk itself cannot
 * go on. */
int cgroup_walk(int root_fd, int shadow_root_fd, const struct cgroup_walk_opts *opts, cgroup_walk_fn fn,
		void *userdata, struct cgroup_walk_stats *stats);

/* ---- one cgroup's memory files ---- */

enum cgroup_event {
	CGROUP_EVENT_LOW,            /* v2 memory.events */
	CGROUP_EVENT_HIGH,           /* v2 */
	CGROUP_EVENT_MAX,            /* v2 */
	CGROUP_EVENT_OOM,            /* v2 */
	CGROUP_EVENT_OOM_KILL,       /* v2 memory.events, v1 memory.oom_control (4.13+) */
	CGROUP_EVENT_OOM_GROUP_KILL, /* v2, 5.17+ */
	CGROUP_EVENT_FAILCNT,        /* v1 memory.failcnt */
	_CGROUP_EVENT_MAX,
};

/* The label value of the event: "low", "high", ..., "failcnt". */
const char *cgroup_event_name(enum cgroup_event e);

struct cgroup_mem {
	uint64_t usage;         /* memory.current / memory.usage_in_bytes */
	uint64_t limit;         /* valid when has_limit */
	uint64_t high;          /* valid when has_high (v2) */
	uint64_t inactive_file; /* valid when has_inactive_file */
	uint64_t events[_CGROUP_EVENT_MAX];
	unsigned events_present; /* bit (1u << enum cgroup_event) */
	uint64_t pressure_some_usec, pressure_full_usec;
	/* memory.stat refaults, activations, restores: [VMSTAT_WS_* kind][0 anon, 1 file] */
	uint64_t workingset[3][2];
	unsigned workingset_present; /* bit (1u << (2 * kind + type)) */
	bool has_limit, has_high, has_inactive_file;
	bool has_under_oom, under_oom; /* v1 */
	bool has_pressure, has_pressure_full;
	bool v1;
};

/* One cgroup's files, kept open between walks and re-read with pread() from
 * offset 0 (seq_file regenerates the text): saves an open and a close per
 * file and window. Slots: the five memory files, then memory.pressure. */
#define CGROUP_FILES 6
#define CGROUP_FILE_PRESSURE 5
struct cgroup_files {
	int fd[CGROUP_FILES]; /* -1: not open */
};

void cgroup_files_init(struct cgroup_files *f);
/* Closes every open file; returns how many were open. */
unsigned cgroup_files_close(struct cgroup_files *f);
unsigned cgroup_files_count(const struct cgroup_files *f);

/* A scratch buffer for file contents, reused across reads. */
#define CGROUP_READ_BUF_SIZE 65536

/* Reads name below dfd (O_NOFOLLOW) into buf[0..cap-1), NUL-terminated.
 * Returns 0, -errno from open/read (-ENOENT, -ENODEV when the cgroup is
 * gone), or -EFBIG when the file does not fit. */
int cgroup_read_at(int dfd, const char *name, char *buf, size_t cap, size_t *len);

/* The readers below take the cgroup's directory fd and, optionally, f: then
 * files already open in f are re-read and the others are opened relative to
 * dfd (which may be -1 when f has them all) and left open in f. Without f
 * every file is opened and closed. All or nothing: out is written only when
 * every file was read and parsed; otherwise the first error is returned and
 * f may hold some files (the caller closes them when the cgroup is gone).
 * buf: CGROUP_READ_BUF_SIZE bytes. */

/* v1: memory.usage_in_bytes, .limit_in_bytes ("unlimited" sentinel: no
 * limit), .failcnt, .oom_control, .stat (total_inactive_file, else
 * inactive_file). */
int cgroup_read_v1(int dfd, struct cgroup_files *f, char *buf, struct cgroup_mem *out);

/* What the four v1 files other than memory.stat say, however they were read
 * (cgroupfs, or the kernel's counters through a BPF cgroup iterator). */
struct cgroup_v1_counters {
	uint64_t usage, limit, failcnt, oom_kill; /* bytes, bytes, counts */
	bool has_oom_kill, has_under_oom, under_oom;
};
/* Fills m from c exactly as cgroup_read_v1 does from the files (memory.stat aside). */
void cgroup_mem_set_v1_counters(struct cgroup_mem *m, const struct cgroup_v1_counters *c);
/* Only memory.stat of a v1 or cgroup2 cgroup (slot 4 of f): sets m's
 * inactive_file and working set fields as cgroup_read_v1 and cgroup_read_v2
 * do; m is untouched on failure. */
int cgroup_read_stat(int dfd, struct cgroup_files *f, char *buf, struct cgroup_mem *m);

/* cgroup2's counters from elsewhere (a BPF cgroup iterator): memory.max and
 * memory.high as the files would print them ("max": none), the
 * memory.events counters the kernel has (bit 1u << enum cgroup_event, of
 * CGROUP_EVENT_LOW to CGROUP_EVENT_OOM_GROUP_KILL). */
struct cgroup_v2_counters {
	uint64_t usage, max, high; /* bytes */
	bool max_is_max, high_is_max;
	uint64_t events[CGROUP_EVENT_OOM_GROUP_KILL + 1];
	unsigned events_present;
};
/* Fills m from c exactly as cgroup_read_v2 does from the files (memory.stat aside). */
void cgroup_mem_set_v2_counters(struct cgroup_mem *m, const struct cgroup_v2_counters *c);

/* v2: memory.current, .max, .high ("max": none), .events, .stat
 * (inactive_file). Not for the root cgroup, which has no memory.current. */
int cgroup_read_v2(int dfd, struct cgroup_files *f, char *buf, struct cgroup_mem *out);

/* Either of the two, with flags: CGROUP_READ_SKIP_STAT leaves memory.stat out
 * (the costly one: the kernel flushes and formats dozens of counters, twice
 * over on v1 with its total_ ones), so has_inactive_file stays false. */
#define CGROUP_READ_SKIP_STAT 1u
int cgroup_read_memory(int dfd, struct cgroup_files *f, bool v1, unsigned flags, char *buf, struct cgroup_mem *out);

/* memory.pressure (v2, or the cgroup2 twin of a v1 cgroup on a hybrid host):
 * sets the pressure fields of out only on success. */
int cgroup_read_pressure(int dfd, struct cgroup_files *f, char *buf, struct cgroup_mem *out);

/* True when f has every file cgroup_read_v1/v2 needs (pressure aside). */
bool cgroup_files_complete(const struct cgroup_files *f);

/* Does the directory list "memory" in cgroup.controllers? false also when
 * there is no such file. */
bool cgroup_dir_has_memory_controller(int dfd, char *buf);

/* cAdvisor's working set: usage minus inactive file pages, never below 0. */
uint64_t cgroup_working_set(uint64_t usage, uint64_t inactive_file);

/* ---- ranking for top_k ---- */

struct cgroup_rank {
	size_t index; /* the caller's */
	const char *path;
	uint64_t usage, limit;
	bool has_limit;
	uint64_t pressure_some_delta; /* stall time in this window */
};

/* Most interesting first: cgroups with a limit, by usage/limit descending;
 * then by pressure stall time in the window, then usage, both descending;
 * the path breaks ties, so the order is stable from window to window. */
void cgroup_rank_sort(struct cgroup_rank *r, size_t n);

#endif
