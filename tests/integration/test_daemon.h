/* SPDX-License-Identifier: GPL-2.0 */
/* What test_daemon.c and test_daemon_http.c share: the configs, the bounds
 * of their waits and the steps most tests begin with. */
#ifndef MEMWATCHD_TEST_DAEMON_H
#define MEMWATCHD_TEST_DAEMON_H

#include <check.h>
#include "helpers.h"

#ifndef CONF_DIR
#error "CONF_DIR must point at tests/integration/conf"
#endif

#define CONF_BASIC CONF_DIR "/basic.conf"
#define CONF_FAST CONF_DIR "/fast.conf"
#define CONF_PSI_MISSING CONF_DIR "/psi-missing.conf"
#define CONF_UNKNOWN_KEY CONF_DIR "/unknown-key.conf"
#define CONF_PROCFS_FALLBACKS CONF_DIR "/procfs-fallbacks.conf"

#define TEST_TIMEOUT_SEC 60
#define NOTIFY_TIMEOUT_MS 10000
#define POLL_TIMEOUT_MS 10000

#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

struct mw_daemon *start_or_fail(const char *config, bool notify);
char *scrape_or_fail(struct mw_daemon *d);
double metric_or_fail(const char *body, const char *name, const char *matcher);
/* After something nasty: the daemon still runs and still serves a normal scrape. */
void assert_still_serving(struct mw_daemon *d, const char *after);
/* A config file of our own, which a test may rewrite. */
char *temp_config(const char *text);

/* The HTTP tests (test_daemon_http.c), in the order they run, into the "http" case. */
void daemon_add_http_tests(TCase *tc);

#endif
