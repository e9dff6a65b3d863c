/* SPDX-License-Identifier: GPL-2.0 */
/* The per-workload view's tests (ui_workloads.c: the status page's Workloads
 * table and a cgroup page in Chromium; top_workloads.c: memwatch-top's
 * Workloads screen in tmux) and what they share (workloads_fixture.c): two
 * memory cgroups of the test's own with different limits and workloads, a
 * daemon that watches just them, and the reference numbers of a window, read
 * from /api/v1/windows by python3's json module, the changes worked out there
 * from two windows' values. */
#ifndef MEMWATCHD_ITEST_WORKLOADS_TEST_H
#define MEMWATCHD_ITEST_WORKLOADS_TEST_H

#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include "uitest.h"

#define WL_TIMEOUT_MS 40000

struct wl_fixture {
	struct memcg cg[2];  /* [0]: 64 MiB, a reader beyond it (reclaim); [1]: 256 MiB, 32 MiB touched */
	char label[2][300];  /* as the daemon names them */
	char sparse[400];
	pid_t workers[2];
	struct mw_daemon *d;
};

/* The cgroups, their workers and a daemon with 500 ms windows watching both. */
void wl_fixture_start(struct wl_fixture *f);
void wl_fixture_stop(struct wl_fixture *f);

/* One cgroup in one window, as /api/v1/windows tells it. NAN for a series the
 * window lacks; changes NAN also when the window before is not in the answer. */
struct wl_numbers {
	uint64_t seq;
	bool has_prev; /* the window before is in the answer */
	double usage, ratio, limit, eta, reclaims, reclaim_seconds, psi_some, oom_kills;
};
#define WL_FIELDS 8
/* The fields in struct order, and the class of their <data> on the pages. */
extern const char *const wl_classes[WL_FIELDS];
double wl_field(const struct wl_numbers *n, size_t i);

/* GET /api/v1/windows into a file of the test's temp tree; returns its path (malloc'd). */
char *wl_fetch_windows(int port, const char *tag);
/* Every window of the answer at json_path exporting label, oldest first: at most max. */
size_t wl_numbers_all(const char *json_path, const char *label, struct wl_numbers *out, size_t max);
/* The one for seq, asserted to be there. */
struct wl_numbers wl_numbers_of(const char *json_path, const char *label, uint64_t seq);
/* NAN equals NAN; otherwise exact. */

/* In test_ui.c: chromium --headless <what> http://127.0.0.1:port<path>; the path of its stdout. */
char *chromium(int port, const char *path, const char *what, const char *tag);

void ui_workloads_add(Suite *s);
void top_workloads_add(Suite *s);

#endif
