/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers for the memwatchd integration tests (helpers.c, helpers_http.c,
 * helpers_host.c): run the real daemon, talk to it over
 * HTTP on 127.0.0.1 and over an sd_notify socket, and read its logs. */
#ifndef MEMWATCHD_ITEST_HELPERS_H
#define MEMWATCHD_ITEST_HELPERS_H

#include <check.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifndef MEMWATCHD_PATH
#error "MEMWATCHD_PATH must point at the daemon binary"
#endif
#ifndef PROMTOOL_PATH
#define PROMTOOL_PATH "/usr/bin/promtool"
#endif

/* Bounds of every wait; none of them is asserted on, they only stop a hang. */
#define MW_START_TIMEOUT_MS 10000
#define MW_STOP_TIMEOUT_MS 10000
#define MW_IO_TIMEOUT_MS 5000

#define MW_MAX_NOTIFY_MSGS 256

struct mw_daemon {
	pid_t pid;            /* 0 once reaped */
	int port;             /* what --listen was given, 0 if the caller passed its own */
	char dir[256];        /* private temp directory */
	char log_path[300];   /* the daemon's stderr */
	char out_path[300];   /* the daemon's stdout */
	char notify_path[300];
	int notify_fd;        /* -1 without a notify socket */
	char *notify_msgs[MW_MAX_NOTIFY_MSGS]; /* every datagram received so far */
	size_t n_notify_msgs;
	size_t notify_cursor; /* next datagram mw_notify_wait() looks at */
	bool exited;
	int wait_status;      /* from waitpid() once exited */
	bool killed;          /* needed SIGKILL: a test failure */
};

struct mw_http_response {
	int status;       /* 0 when nothing parseable came back */
	char *raw;        /* everything received, NUL-terminated */
	size_t raw_len;
	char *headers;    /* header block after the status line, NUL-terminated copy */
	char *body;       /* NUL-terminated copy */
	size_t body_len;
};

/* Called once by main() before the tests run: every daemon directory lives below it. */
int mw_init_tmp_root(void);
const char *mw_tmp_root(void);
/* Removes the tree (main() keeps it when a test failed, for the daemon logs). */
void mw_remove_tmp_root(void);

/* A loopback port that was free a moment ago: bind 127.0.0.1:0, getsockname, close. */
int mw_free_port(void);

/* Writes text to a file in a fresh temp directory, returns a malloc'd path. */
char *mw_write_temp_file(const char *name, const char *text);
int mw_write_file(const char *path, const char *text);
/* Writes text into an existing file in place, in one write (cgroupfs, /proc/sys):
 * 0 or a negative errno. */
int mw_write_text(const char *path, const char *text);
/* The whole file, malloc'd and NUL-terminated, or NULL. */
char *mw_read_file(const char *path, size_t *len);

/* Forks and execs the daemon with args (NULL-terminated, without argv[0]);
 * stdout and stderr go to files in d->dir, stdin is /dev/null. With notify,
 * a datagram socket is bound in d->dir and passed as NOTIFY_SOCKET; without
 * it, NOTIFY_SOCKET is removed from the environment (as are LISTEN_* and
 * WATCHDOG_*). The daemon is heap-allocated and registered, so that
 * mw_cleanup_all() stops and frees it even when the test fails; it also gets
 * SIGTERM if the test process dies first (PR_SET_PDEATHSIG). NULL on error. */
struct mw_daemon *mw_spawn(const char *const *args, bool notify);
/* mw_spawn with [--config config] --listen 127.0.0.1:<free port> plus extra
 * args, then waits until GET /metrics answers 200. Retries with a new port
 * when the one picked was taken meanwhile. NULL on failure, after printing
 * the daemon's log to stderr. */
struct mw_daemon *mw_start(const char *config, const char *const *extra, bool notify);
/* Polls GET /metrics until it answers 200, the daemon exits, or timeout. 0 or -errno. */
int mw_wait_ready(struct mw_daemon *d, int timeout_ms);
/* waitpid(WNOHANG): true while the daemon has not exited. */
bool mw_running(struct mw_daemon *d);
/* Waits at most timeout_ms for the daemon to exit by itself. 0 when it did. */
int mw_wait_exit(struct mw_daemon *d, int timeout_ms);
/* Sends sig to the daemon, by PID, if it has not been reaped. */
int mw_signal(struct mw_daemon *d, int sig);
/* SIGTERM, bounded wait, SIGKILL as the last resort (sets d->killed).
 * Returns the waitpid() status, or -1 if the daemon never started. */
int mw_stop(struct mw_daemon *d);
/* Stops every daemon this process started that still runs, closes the
 * sockets and frees them. For teardown. Returns how many needed SIGKILL. */
int mw_cleanup_all(void);
/* Runs the daemon to completion (bounded) with args; stdout and stderr
 * returned malloc'd. Returns the waitpid() status, or -1 if it had to be killed. */
int mw_run(const char *const *args, char **out, char **err);
/* Prints the daemon's log to stderr, for diagnosis of a failure. */
void mw_dump_log(const struct mw_daemon *d, const char *why);
/* Stops d with SIGTERM and fails the test unless it exited 0 by itself,
 * without a sanitizer report (its log is printed first if not). */
void mw_assert_clean_stop(struct mw_daemon *d);
/* Prints every daemon log left under dir (and files matching extra_glob,
 * if not NULL) to stderr, for meson's error log. */
void mw_keep_failures(SRunner *sr);
void mw_dump_daemon_logs(const char *dir, const char *extra_glob);

/* The daemon's stderr so far, malloc'd. */
char *mw_log(const struct mw_daemon *d);
/* Polls the log until a line contains every one of the NULL-terminated needles. */
bool mw_log_wait(const struct mw_daemon *d, int timeout_ms, const char *const *needles);
/* Sanitizer reports in the log ("runtime error:", "AddressSanitizer", ...), or NULL. */
const char *mw_sanitizer_report(const char *log);

/* Waits for a datagram with a line starting with key (e.g. "READY=1"),
 * looking at datagrams after the previous match first. Returns the whole
 * datagram (owned by d) or NULL on timeout. */
const char *mw_notify_wait(struct mw_daemon *d, const char *key, int timeout_ms);
/* The value of "KEY=..." lines in a datagram, copied into buf. */
bool mw_notify_field(const char *msg, const char *key, char *buf, size_t len);

/* HTTP/1.1 request to 127.0.0.1:port with Connection: close. Returns 0 or -errno. */
int mw_http_request(int port, const char *method, const char *path, const char *extra_headers,
		    struct mw_http_response *resp);
int mw_http_get(int port, const char *path, struct mw_http_response *resp);
/* GET from a given loopback source address, e.g. "127.0.0.2". */
int mw_http_get_from(int port, const char *src, const char *path, struct mw_http_response *resp);
/* Sends raw bytes (send errors such as EPIPE after the server gave up are not
 * errors) and reads until EOF or timeout_ms of silence. resp may be NULL.
 * Returns 0 or -errno for a failed connect. */
int mw_http_raw(int port, const void *data, size_t len, int timeout_ms, struct mw_http_response *resp);
/* A connected socket to 127.0.0.1:port, optionally from source address src (e.g. "127.0.0.2"). */
int mw_connect(int port, const char *src);
/* Sends a whole request on an open connection (see mw_connect) and reads one
 * response (until its Content-Length, the end of the headers for HEAD, EOF or
 * timeout); the connection stays open for the next. 0, or -EPROTO when no
 * response came back. */
int mw_http_exchange(int fd, const char *request, bool head, struct mw_http_response *resp);
void mw_http_response_free(struct mw_http_response *resp);
/* Case-insensitive header lookup; value copied without surrounding blanks. */
bool mw_http_header(const struct mw_http_response *resp, const char *name, char *buf, size_t len);
/* GET /metrics, body returned malloc'd or NULL unless 200. */
char *mw_scrape(int port);

/* /proc/vmstat: the sum of the fields whose names start with prefix, and
 * one field (the test fails when none is there). */
unsigned long long vmstat_sum(const char *prefix);
unsigned long long vmstat_get(const char *name);

/* helpers_json.c: runs python3 -c script FILE args... with the body in FILE;
 * its stdout and stderr in *out (malloc'd). Returns the wait status, -1 when
 * it ran past 30 s. */
int mw_run_python(const char *script, const char *body, size_t len, const char *const *args, char **out);
/* The first window the ring keeps whose end is after `after` (wall clock, as
 * memwatch_window_end_timestamp_seconds), as exposition lines for
 * mw_metric(): every counter and gauge of /api/v1/windows, the window's end
 * and its sequence number as mw_test_window_seq. Waits up to timeout_ms for
 * such a window; fails if it has already left the ring. */
char *mw_window_after(int port, double after, int timeout_ms);

/* Finds the first sample of metric `name` in exposition text whose labels
 * include every pair of matcher (same syntax: a="x",b="y"; NULL or "" for
 * any). Stores the value and, if labels is not NULL, the raw label text
 * between the braces. */
bool mw_metric(const char *text, const char *name, const char *matcher, double *value, char *labels,
	       size_t labels_len);
/* Value of one label in raw label text, unescaped. */
bool mw_label(const char *labels, const char *label, char *buf, size_t len);
/* Scrapes until metric `name` (with matcher) satisfies pred, at most timeout_ms. */
bool mw_poll_metric(int port, const char *name, const char *matcher, int timeout_ms,
		    bool (*pred)(double v, double arg), double arg, double *last);
bool mw_pred_eq(double v, double arg);
bool mw_pred_gt(double v, double arg);
/* Equal, or both NAN (a value neither side has). */
bool mw_same_value(double a, double b);

/* Runs `promtool check metrics` on text; returns its exit code (or -1) and
 * its combined output (malloc'd) in output if not NULL. */
int mw_promtool_check(const char *text, size_t len, char **output);

/* /proc/meminfo field in kB, or -1. */
long long mw_proc_meminfo_kb(const char *field);

void mw_sleep_ms(int ms);
/* Monotonic milliseconds, to bound waits (never asserted on). */
int64_t mw_mono_ms(void);

/* MemTotal that no zone manages yet (deferred_init=lazy), in bytes, or -1. */
double mw_memory_outside_zones(void);
/* Noted by mw_spawn: the same with MemAvailable when the daemon started. */
void mw_note_zones_at_spawn(void);
/* The condition zone-managed-agree: the memory outside the zones within the
 * daemon's 2% tolerance of MemAvailable, now and at the last spawn: 1, 0, or
 * -EAGAIN within half a point of it, or when the two reads disagree. */
int mw_zone_managed_agree(double *outside, double *meminfo);

/* One row of tests/expectations/collectors.tsv (see expectations.py there). */
struct mw_expectation {
	char state[16];
	char mode[32];
	char reason[256];    /* substring the reason must contain; "" for none */
	char condition[64];  /* "" for an unconditional row */
	bool undetermined;   /* the condition sits at its edge: either row holds */
	int line;
};
/* The row for collector in environment ("host") on this kernel (uname -r,
 * fnmatch), conditions evaluated here, independently of the daemon. A kernel
 * without rows fails the test when CI=true, and otherwise says so loudly and
 * returns -ENOENT (the caller skips its assertion). */
int mw_expectation(const char *environment, const char *collector, struct mw_expectation *out);
/* The one reading of CI (tests/expectations/expectations.py under_ci): CI=true. */
bool mw_under_ci(void);
/* The same from kill_fields.tsv (beside it): where a kill's feature comes
 * from (memwatch_oom_feature_info's source). */
int mw_expected_kill_field(const char *environment, const char *feature, char *source, size_t len);
/* The same for any table of 4 columns (environment, kernel, key, value)
 * beside collectors.tsv, by file name: "kill_fields.tsv", "cgroup_peak.tsv". */
int mw_expected_value(const char *table, const char *environment, const char *key, char *value, size_t len);
/* True when state/mode/reason are what want says; otherwise why says what differs. */
bool mw_expect_matches(const struct mw_expectation *want, const char *collector, const char *state, const char *mode,
		       const char *reason, char *why, size_t why_len);
/* Asserts memwatch_collector_info for collector in a scrape is exactly the
 * host's row (stored in ret if not NULL). False when the kernel has no row. */
bool mw_assert_collector_expected(const char *body, const char *collector, struct mw_expectation *ret);

/* ---- memory cgroups of a test's own, on v1 or v2 ---- */

/* The memory controller's hierarchy on this host: v1's /sys/fs/cgroup/memory,
 * or a cgroup2 mount whose cgroup.controllers lists memory (its
 * subtree_control gets +memory). false: neither. */
bool mw_memcg_root(const char **root, bool *v2);

struct mw_memcg {
	char path[256];  /* the directory */
	char label[256]; /* as the daemon names it: the path below the hierarchy root */
};

/* mkdir name under parent (NULL: the hierarchy root), and a hard limit
 * (v1 memory.limit_in_bytes, v2 memory.max) unless limit is NULL. On v2 a
 * parent passes memory down to its children. false with errno. */
bool mw_memcg_make(struct mw_memcg *cg, const struct mw_memcg *parent, const char *name, const char *limit);
/* rmdir, after SIGKILL to the tasks it still lists (only a test's own
 * workloads can be there), bounded. */
bool mw_memcg_remove(const char *path);

/* ---- the kernel's log, read from /dev/kmsg ---- */

/* Open at the end: the next reads see only what the kernel logs from now. */
int mw_kmsg_open_end(void);
/* Every message logged since, one a line (without the record prefix). */
char *mw_kmsg_read(int fd);

/* ---- the kernel's counts for a memory cgroup (v1 or v2) ---- */

/* The kernel's own counts for a memory cgroup at path, from its files (v1 or
 * v2 as mw_memcg_root says): OOM kills (v1 memory.oom_control oom_kill, v2
 * memory.events oom_kill), and charges that met the hard limit (v1
 * memory.failcnt counts every charge that failed against it; v2
 * memory.events max counts every time usage was about to go over memory.max,
 * reclaim then making room or not). -1 when the file cannot be read. */
long long mw_memcg_oom_kills(const char *path);
long long mw_memcg_limit_hits(const char *path);

/* ---- bounds under emulation ---- */

/* The bound on a daemon's start in mw_start: MW_START_TIMEOUT_MS, times
 * MW_TEST_SLOWDOWN (1 to 100) when the environment sets it, as the system-v2
 * guest does (TCG runs the daemon many times slower than the host). Only a
 * bound on a hang, never asserted on. */
int mw_start_timeout_ms(void);
/* Any other bound on a hang (a workload that must end), scaled the same way. */
int mw_hang_bound_ms(int ms);
#define WORKLOAD_TIMEOUT_MS mw_hang_bound_ms(60000)

/* The distinct BPF programs process pid holds by an fd of the program or of
 * a link to it (the prog_id lines of /proc/PID/fdinfo/FD), sorted; fails
 * the test when there are more than max. */
size_t mw_held_prog_ids(pid_t pid, unsigned *ids, size_t max);

#endif
