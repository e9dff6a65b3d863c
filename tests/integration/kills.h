/* SPDX-License-Identifier: GPL-2.0 */
/* What the kill tests share (kills_common.c): the processes and memory
 * cgroups of their own, the daemon and its answers, the kernel's record of an
 * OOM kill. test_kills.c runs the tests of test_kills*.c. */
#ifndef MEMWATCHD_TEST_KILLS_H
#define MEMWATCHD_TEST_KILLS_H

#include <check.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include "helpers.h"

#define CG_PREFIX "memwatch-kill-"
#define POLL_TIMEOUT_MS 15000
#define TEST_TIMEOUT_SEC 120
#define VICTIM_COMM "mwk-victim"

/* Set once by the runner (test_kills.c): names our cgroups. */
extern pid_t runner_pid;

enum victim_kind {
	VICTIM_WAIT,  /* catch SIGTERM and wait for SIGKILL */
	VICTIM_TOUCH, /* touch more anonymous memory than its cgroup's limit */
};

/* The kernel's own record of an OOM kill (/dev/kmsg). */
struct kernel_oom {
	char constraint[64];
	char oom_memcg[256];
	char task_memcg[256];
	long long anon_kb, file_kb, shmem_kb, score_adj;
	long long usage_kb, limit_kb; /* "memory: usage ..., limit ..." of the OOM cgroup, before its kill */
};

/* ---- processes of our own ---- */
/* Before each fork(): fails the test when cleanup() could not track one more child. */
void assert_child_room(void);
/* A child of ours, killed and reaped by cleanup() unless reap() got it first. */
void track_child(pid_t pid);
int reap(pid_t pid);
_Noreturn void touch_past_limit(void);
pid_t spawn_victim(const struct mw_memcg *cg, enum victim_kind kind, int score_adj);
/* Also in unified_twin (a hybrid host's cgroup2 directory), unless NULL. */
pid_t spawn_victim_in(const struct mw_memcg *cg, const char *unified_twin, enum victim_kind kind, int score_adj);
pid_t run_killer(const char *comm, const pid_t *pids, size_t n, const int *sigs, size_t n_sigs);

/* ---- memory cgroups of our own ---- */
void make_cg(struct mw_memcg *cg, const struct mw_memcg *parent, const char *what, const char *limit);
/* On a hybrid host (v1 memory, cgroup2 at /sys/fs/cgroup/unified), a cgroup2
 * directory of cg's name, where PSI accounts cg's tasks; removed by cleanup().
 * false on v2 (cg is its own) or without a cgroup2 mount. */
bool make_unified_twin(const struct mw_memcg *cg, char *path, size_t len);
/* Every test's checked teardown. */
void cleanup(void);

/* ---- the daemon and its answers ---- */
struct mw_daemon *start_daemon(const char *oom_section);
/* A daemon (500 ms windows, and sections of its own) whose event
 * consumer is paused (debug_pause_events): kills wait in the buffer until
 * resume_events() reloads it unpaused (and frees conf). */
struct mw_daemon *start_paused(const char *sections, char **conf);
void resume_events(struct mw_daemon *d, char *conf, const char *sections);
double metric(struct mw_daemon *d, const char *name, const char *matcher);
double wait_metric(struct mw_daemon *d, const char *name, const char *matcher, double want);
char *events_of(struct mw_daemon *d, const char *kind, const char *pids);
bool field(const char *out, const char *key, char *buf, size_t len);
void assert_field(const char *out, const char *key, const char *want);
long long field_ll(const char *out, const char *key);
void assert_status_row(struct mw_daemon *d, const char *const *needles);

/* ---- the kernel's own record of an OOM kill ---- */
bool kernel_oom_lines(const char *log, pid_t pid, struct kernel_oom *k);
void oom_kill_judged(const struct mw_memcg *oom_cg, const struct mw_memcg *victim_cg, int score_adj);

/* test_kills_userspace.c: the user-space killer tests, in a case of their own. */
void kills_add_userspace_tests(Suite *s);

#endif
