// SPDX-License-Identifier: GPL-2.0
/* What the cgroup collector's tests share (test_cgroup.c: fixture trees;
 * test_cgroup_live.c: real memory cgroups; test_cgroup_faults.c: top_k and
 * "other" for processes): starting the daemon and reading its exposition. */
#ifndef MEMWATCHD_ITEST_CGROUP_TEST_H
#define MEMWATCHD_ITEST_CGROUP_TEST_H

#include <check.h>
#include "helpers.h"

#define TEST_TIMEOUT_SEC 120
#define POLL_TIMEOUT_MS 15000
#define MIB (1024.0 * 1024.0)

/* Checked teardown: every daemon stopped by SIGTERM. */
void teardown(void);
char *temp_config(const char *text);
struct mw_daemon *start_or_fail(const char *config);
double metric_or_fail(const char *body, const char *name, const char *matcher);
void expect(const char *body, const char *name, const char *matcher, double want);
void expect_absent(const char *body, const char *name, const char *matcher);
void expect_promtool_ok(const char *body);
/* Wall clock, as memwatch_window_end_timestamp_seconds. */
double real_now(void);
/* A test case with teardown and the timeout. */
TCase *cgroup_tcase(const char *name);

/* test_cgroup_live.c: names the run's cgroup (before the tests fork), the
 * tcase of its tests, and the cleanup the runner also does at exit. */
void live_init(void);
TCase *live_tcase(void);
void live_cleanup(void);
/* test_cgroup_faults.c */
TCase *faults_tcase(void);

#endif
