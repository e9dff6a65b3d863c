/* SPDX-License-Identifier: GPL-2.0 */
/* What the collector tests share (collectors_common.c, collectors_procs.c):
 * the cleanup journal, their resources, the daemon and the processes they
 * start. test_collectors.c runs the tests of the test_collectors_*.c files. */
#ifndef MEMWATCHD_TEST_COLLECTORS_H
#define MEMWATCHD_TEST_COLLECTORS_H

#include <check.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "helpers.h"

#define PERF_PATH "/usr/bin/perf"
#define TRACEFS_DIR "/sys/kernel/tracing"
#define MEMCG_ROOT "/sys/fs/cgroup/memory"

#define KiB 1024ULL
#define MiB (1024ULL * KiB)
#define GiB (1024ULL * MiB)

#define WINDOW_TIMEOUT_MS 10000

/* The helper mode of this binary, run under perf by the allocation failure test. */
#define KMEM_HELPER_FLAG "--kmem-charge-failure-helper"
/* io_uring rings for this many entries need one order-9 (2 MiB) compound page. */
#define KMEM_HELPER_ENTRIES 32768
#define KMEM_HELPER_ATTEMPTS 32

/* Set once by the runner (test_collectors.c). */
extern char journal_path[400];
extern pid_t runner_pid;
extern bool tracefs_mounted_by_us;

/* Retries of a workload whose shape did not come out as intended. */
#define MAX_ATTEMPTS 4

/* A /proc counter's value at the moment a window's collectors ran lies in [lo, hi]. */
#define BRACKET_COUNTERS 3

struct bracket {
	unsigned long long lo[BRACKET_COUNTERS], hi[BRACKET_COUNTERS];
};

/* A workload of our own, forked before perf starts so that its PID can go
 * into perf's filters: it waits until perf's workload opens the gate, then
 * execs argv (stdout and stderr to log), holding the write end of `done`
 * until it ends. */
struct workload {
	pid_t pid;
	int gate_w; /* perf's workload writes a byte here to start ours */
	int done_r; /* and reads here until EOF: ours has ended */
};

/* What spawn_toucher() gives its child. */
struct toucher_args {
	const char *cg;
	size_t len;
};

/* ---- collectors_common.c ---- */
double realtime_now(void);
int64_t mono_ns(void);
__attribute__((format(printf, 1, 2))) void note(const char *fmt, ...);
unsigned long long read_ull(const char *path);
unsigned long long meminfo_bytes(const char *field);
void drop_file(const char *path);
void memcg_path(char *buf, size_t len, const char *suffix);
void memcg_create(const char *path, unsigned long long limit);
void memcg_remove(const char *path);
int memcg_join(const char *path);
void sparse_create(char *path, size_t len, const char *name, unsigned long long size);
struct mw_daemon *start_with_config(const char *text);
size_t count_series(const char *body, const char *prefix);
double metric_or_fail(const char *body, const char *name, const char *matcher);
char *wait_window_after(struct mw_daemon *d, double after);
char *wait_window_after_ms(struct mw_daemon *d, double after, int timeout_ms);
char *next_window(struct mw_daemon *d);
char *window_bracket(struct mw_daemon *d, double after, void (*read_counters)(unsigned long long v[BRACKET_COUNTERS]),
		     struct bracket *b);
void reclaim_runs(unsigned long long v[BRACKET_COUNTERS]);
void pgalloc_pages(unsigned long long v[BRACKET_COUNTERS]);
void assert_collector(const char *body, const char *collector, const char *want_mode, char *mode,
		      size_t mode_len);
void assert_traced_mode(const char *collector, const char *mode);
void held_progs(pid_t pid, const char *prefix, unsigned *total, unsigned *matching);
void assert_promtool(const char *body);
double assert_histogram(const char *body, const char *name);
void journal_replay(void);
void replay_after_test(void);
void on_fatal_signal(int sig);
void teardown_daemons(void);
void reload_config(struct mw_daemon *d, const char *conf, const char *text);

/* ---- collectors_procs.c ---- */
void child_init(void);
int wait_child(pid_t pid, int timeout_ms, const char *what);
struct workload workload_spawn(const char *const *argv, const char *log);
int perf_around(const char *const *events, struct workload *w, const char *out, int timeout_ms, int *w_status);
pid_t perf_start(const char *const *events, const char *out);
void perf_stop(pid_t pid);
void perf_counts(const char *out, unsigned long long *counts, size_t n);
void read_exact(int fd, void *buf, size_t len, int timeout_ms, const char *what);
void write_byte(int fd, char c);
void touch(volatile char *p, size_t len);
/* A child's start: waits for a byte on cmd, then touches len fresh bytes. */
void touch_on_go(int cmd, size_t len);
pid_t spawn_child(void (*fn)(const void *arg, int cmd, int rep), const void *arg, int *cmd_fd, int *rep_fd);
pid_t spawn_toucher(const char *cg, size_t len, int *cmd_fd, int *rep_fd);

/* test_collectors.c: a test in a case of its own, with the journal replayed after it. */
void collectors_add_test(Suite *s, const char *name, const TTest *test, double timeout);
/* Each test file's tests, in the order they run. */
void collectors_add_reclaim_tests(Suite *s);
void collectors_add_direct_reclaim_tests(Suite *s);
void collectors_add_faults_tests(Suite *s);
void collectors_add_allocs_tests(Suite *s);
void collectors_add_exhaustion_tests(Suite *s);
void collectors_add_sampler_tests(Suite *s);
/* test_collectors_allocs.c: this binary's helper mode (KMEM_HELPER_FLAG). */
int kmem_failure_helper(const char *cg, const char *result_path);

#endif
