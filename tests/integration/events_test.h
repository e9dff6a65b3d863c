// SPDX-License-Identifier: GPL-2.0
/* What the event tests (test_events.c, test_events_memavail.c) share: the
 * cgroups, files and processes a test creates and the runner sweeps
 * (events_fixture.c), the daemon and its scrapes (events_fixture.c), and JSON
 * checked by python3's json module (events_json.c). */
#ifndef MEMWATCHD_ITEST_EVENTS_TEST_H
#define MEMWATCHD_ITEST_EVENTS_TEST_H

#include <stdbool.h>
#include <stddef.h>
#include <check.h>
#include <sys/types.h>
#include <linux/types.h>
#include "events.h"
#include "helpers.h"

#define CG_PREFIX "memwatch-ev-"

#define MiB (1024UL * 1024UL)
#define SPARSE_BYTES (1024UL * MiB)
#define OOM_TOUCH_BYTES (200UL * MiB)
#define CG_LIMIT "64M"

#define TEST_TIMEOUT_SEC 120
#define POLL_TIMEOUT_MS 15000

/* One event in the ring buffer: struct memwatch_event plus the 8-byte record
 * header (BPF_RINGBUF_HDR_SZ), rounded up to 8 bytes. */
#define RINGBUF_HDR_BYTES 8
#define EVENT_RECORD_BYTES ((sizeof(struct memwatch_event) + RINGBUF_HDR_BYTES + 7) / 8 * 8)
#define SMALL_BUFFER_BYTES 4096

#define OOM_COMM "mwev-oomvictim"
/* A double quote, a backslash, a control character and two bytes that are not UTF-8. */
#define HOSTILE_COMM "mw\"q\\b\x01\xff\xfe"
/* What it must come back as after JSON decoding, as hex of its UTF-8: the
 * invalid bytes become U+FFFD (ef bf bd) each, the rest is unchanged. */
#define HOSTILE_COMM_HEX "6d772271" "5c62" "01" "efbfbd" "efbfbd"

#define PRESSURE "memwatch_pressure_events_total"
#define RECEIVED "memwatch_events_received_total"
#define GATED "memwatch_events_gated_total"
#define DROPPED "memwatch_events_dropped_total"
#define MEMCG_RECLAIMS "memwatch_memcg_reclaim_total"
#define K_MEMCG "kind=\"memcg_reclaim\""
#define CH_RINGBUF "channel=\"ringbuf\""
#define CH_PERFBUF "channel=\"perfbuf\""
#define CH_CONSUMER "channel=\"consumer\""

/* Loop tests run through both event channels: 0 the ring buffer (what this
 * kernel has), 1 the perf buffer older kernels fall back to (forced with
 * debug_perf_buffer). Each test runs in its own process (check's fork mode). */
extern int channel_i;
extern pid_t runner_pid; /* the process that runs main(): names our cgroups and files */
/* The memory controller's hierarchy (mw_memcg_root): v1's, or a cgroup2 mount. */
extern const char *memcg_root;
extern bool memcg_v2;
const char *kernel_channel(void);
/* Starts a loop test on channel i; the daemon logs which one it opened. */
void use_channel(int i);

double real_now(void);

/* ---- what a test creates, undone by teardown (or by the runner's sweep) ---- */

#define MAX_TRACKED 16

struct cg {
	char name[64];
	char path[256];
	char label[80]; /* the cgroup label the daemon gives it: "/name" */
};


void cg_create(struct cg *cg, const char *limit);
void cg_destroy(struct cg *cg);
/* A 1 GiB sparse file on a disk file system (reading it fills the page
 * cache with zero pages: memcg reclaim at the cgroup's limit, no disk I/O). */
char *sparse_file(void);

/* ---- workloads in a memory cgroup ---- */

enum workload_kind {
	WL_OOM,  /* touch 200 MiB of anonymous memory */
	WL_DD,   /* dd the sparse file to /dev/null */
	WL_READ, /* read the sparse file ourselves (so that comm is ours), passes times or for min_ms */
};

struct workload {
	enum workload_kind kind;
	const char *file;
	const char *comm;
	int passes;
	int min_ms;
};
/* Forks a workload that moves itself into cg first. It dies with the test
 * (PR_SET_PDEATHSIG), and is only ever signalled by this PID. */
pid_t spawn_workload(const struct cg *cg, const struct workload *w);
/* waitpid(WNOHANG): true once the child exited (status stored). */
bool child_done(pid_t pid, int *status);
/* Bounded wait; a child that overstays is killed (by its PID) and the test fails. */
int wait_child(pid_t pid, const char *what);
void assert_exited_ok(int st, const char *what);

/* Checked teardown: runs in the test's process after it passed. */
void teardown(void);
/* Runner process, after each test case and at exit: whatever a failed test
 * left behind under our own name prefix. */
void sweep(void);

/* ---- the daemon ---- */

/* As the memavail method: the collector switched off. */
#define MEMAVAIL_OFF "off"

/* The text of a config: window, history and extra [daemon] keys; the memavail
 * method (NULL: auto; MEMAVAIL_OFF: enabled = no). */
char *config_text(const char *window, int history, const char *daemon_extra, const char *memavail_method);
char *temp_config_full(const char *window, int history, const char *daemon_extra, const char *memavail_method);
char *temp_config(const char *daemon_extra, const char *memavail_method);

struct series {
	const char *name, *matcher;
};

/* The memcg reclaim series of the channel in use (use_channel). */
extern struct series memcg_series[5];
#define N_MEMCG_SERIES 5

struct mw_daemon *start_or_fail(const char *config);
char *scrape_or_fail(struct mw_daemon *d);
double metric_or_fail(const char *body, const char *name, const char *matcher);
void expect_status(struct mw_daemon *d, const char *path, int want);
/* GET /metrics 200 with a normal body, /healthz 200, and the process runs. */
void assert_serving(struct mw_daemon *d, const char *when);
/* `promtool check metrics` must accept the exposition as served right now. */
void assert_promtool(struct mw_daemon *d, const char *when);
/* Scrapes until the window end timestamp moves past what body showed. */
char *next_window(struct mw_daemon *d, const char *body);
/* Scrapes window after window until every series holds the same value in two
 * consecutive windows (the workload and the consumer are done). */
char *scrape_settled(struct mw_daemon *d, const struct series *s, size_t n);
/* memwatch_collector_info of a collector: its state, mode and reason labels. */
void collector_info(const char *body, const char *collector, char *state, char *mode, char *reason, size_t len);

/* ---- the kernel's own count of BPF program runs (BPF_ENABLE_STATS) ---- */

int bpf_stats_on(void);
unsigned long long prog_run_cnt(pid_t pid, const char *name);

/* The program on vmscan:mm_vmscan_memcg_reclaim_begin: each of its runs is one
 * memcg reclaim pressure instant (tp_btf, the mode this host attaches). */
#define MEMCG_BEGIN_PROG "memcg_begin_btf"
/* The same for direct reclaim and OOM kills (oom:mark_victim). */
#define DIRECT_BEGIN_PROG "direct_begin_btf"
#define MARK_VICTIM_PROG "mark_victim_btf"

/* ---- JSON, checked by a real parser: python3's json module (events_json.c) ---- */

/* argv: file kind pid. The events of that kind and pid, fields of the first. */
extern const char py_events[];
/* argv: file metric. Per window: has all keys, seq, start, end, value and delta of the metric's first sample. */
extern const char py_windows[];
/* GETs path (200 expected) and runs script on the body; fails unless it parses. */
char *json_fields(struct mw_daemon *d, const char *path, const char *script, const char *const *args);
/* The value of a "key=value" line of the script's output. */
bool field(const char *out, const char *key, char *buf, size_t len);
long long field_int(const char *out, const char *key);
void hex_of(const char *s, char *buf, size_t len);

struct window_row {
	int keys;
	long long seq;
	double start, end, value, delta;
};

/* Parses the rows py_windows printed; returns how many windows there were. */
size_t window_rows(const char *out, struct window_row *rows, size_t max);
/* Windows oldest first, consecutive, each complete, deltas consistent; the growth over all of them. */
double check_window_rows(const struct window_row *w, size_t n, const char *out);

/* The test cases of test_events_memavail.c, for events_suite(). */
void add_memavail_tests(TCase *tc);

#endif
