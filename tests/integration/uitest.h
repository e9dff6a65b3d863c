/* SPDX-License-Identifier: GPL-2.0 */
/* What the two UI test programs share (test_ui: the status page in Chromium;
 * test_top: memwatch-top in tmux): a journal of what a test created, replayed
 * after every test even when an assertion ended it; worker processes with a
 * chosen name; a memory cgroup and a sparse file for a reclaiming worker; a
 * bounded run of a program; and the common main(). */
#ifndef MEMWATCHD_ITEST_UITEST_H
#define MEMWATCHD_ITEST_UITEST_H

#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "helpers.h"

#ifndef TMUX_PATH
#define TMUX_PATH "/usr/bin/tmux"
#endif

#define MEMCG_V1_ROOT "/sys/fs/cgroup/memory"
#define CGROUP_V2_ROOT "/sys/fs/cgroup"

#define KiB 1024ULL
#define MiB (1024ULL * KiB)
#define GiB (1024ULL * MiB)

#define TEST_TIMEOUT_SEC 150
#define TMUX_TIMEOUT_MS 10000

/* A required program: the UI tests never skip for want of one. */
void require_program(const char *path, const char *package);

/* The journal: "tmux NAME", "file PATH" or "cgroup PATH", written before the
 * thing is created; replayed (tmux servers, files, cgroups) after each test. */
void journal_add(const char *kind, const char *what);
void journal_replay(void);
void drop_file(const char *path);
/* rmdir, retried while tasks that were killed are still on their way out. */
int remove_cgroup(const char *path, int timeout_ms);
/* `tmux -L name kill-server`, bounded; the server's panes get SIGHUP from it. */
void tmux_kill_server(const char *name);

/* A daemon with this configuration text, serving on a free loopback port. */
struct mw_daemon *start_daemon_with(const char *config);

enum work {
	WORK_TOUCH,      /* maps, touches and unmaps 32 MiB every 20 ms */
	WORK_TOUCH_SLOW, /* 4 MiB every 100 ms: about 10,000 minor faults a second */
	WORK_READ,  /* reads a file round and round */
};
/* Forks a worker called name (its comm), in cgroup procs_file if given, and
 * waits until it has its name and cgroup. It dies with the test. */
pid_t spawn_worker(const char *name, enum work work, const char *procs_file, const char *file);
void stop_worker(pid_t pid);

/* Runs argv in a process group of its own, stdout and stderr to files, at
 * most timeout_ms; whatever is left of the group afterwards is killed by its
 * group id. Returns the wait status, or -1 when the bound was hit. */
int run_bounded(const char *const *argv, const char *out_path, const char *err_path, const char *home,
		int timeout_ms);

struct memcg {
	char path[256];
	char procs[300];
};
/* A 64 MiB memory cgroup: v1 (hybrid hosts) or v2. */
void memcg_create(struct memcg *cg, const char *tag);
void memcg_remove(const struct memcg *cg);
/* A fresh 1 GiB sparse file on a disk file system (holes of a tmpfs file fill no page cache). */
void sparse_create(char *path, size_t len, const char *tag);

/* One test per TCase: the journal is replayed after each. */
TCase *ui_tcase(const char *name, const TTest *test);
/* Root check (77 without), a temp tree, a private tmux socket directory, the
 * suite run, the journal replayed; daemon logs kept when a test failed. */
int ui_main(Suite *suite, const char *const *programs);

#endif
