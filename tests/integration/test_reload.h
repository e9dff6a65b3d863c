/* SPDX-License-Identifier: GPL-2.0 */
/* What test_reload.c, reload_scrape.c and test_reload_health.c share: the
 * test's memory cgroups and the scrapes it parses and compares. */
#ifndef MEMWATCHD_TEST_RELOAD_H
#define MEMWATCHD_TEST_RELOAD_H

#include <check.h>
#include <stddef.h>
#include <sys/types.h>
#include "helpers.h"

#define MEMCG_ROOT "/sys/fs/cgroup/memory"
#define MiB (1024ULL * 1024ULL)
#define WINDOW_TIMEOUT_MS 15000
#define WINDOWS_PER_STEP 5
#define HEALTH_CGROUPS 2000
#define MIN_COMPARED 2000

struct sample {
	char *key; /* name{labels} as printed */
	double value;
};

struct scrape {
	char *body;
	struct sample *s; /* counter and histogram lines only, sorted by key */
	size_t n, cap;
	double window_end;
	double reloads_ok;
};

/* Every counter and histogram sample a test has seen, at its highest, sorted
 * by key: a series missing from one scrape and back in a later one must be
 * back no lower (the load's processes and cgroups stay for the whole test, so
 * nothing may legitimately come back reset). */
struct ledger {
	struct sample *s;
	size_t n;
};

double realtime_now(void);
__attribute__((format(printf, 1, 2))) void note(const char *fmt, ...);
/* MEMCG_ROOT/mw-reload-<runner pid>, below which every cgroup of the tests lives. */
void test_root(char *buf, size_t len);
void memcg_make(const char *path, unsigned long long limit);

void scrape_free(struct scrape *sc);
/* The next window after `after` (seconds since the epoch), parsed. */
void scrape_after(struct mw_daemon *d, double after, struct scrape *sc);
/* Every counter and histogram sample of prev that cur still has is at least
 * as large. Returns how many were compared. */
size_t assert_monotonic(const struct scrape *prev, const struct scrape *cur, const char *when);
/* Merges sc into l, failing on any sample lower than the highest seen before;
 * returns how many samples of sc had been seen before. */
size_t ledger_merge(struct ledger *l, const struct scrape *sc, const char *when);
void ledger_free(struct ledger *l);
void collector_mode(const char *body, const char *collector, char *mode, size_t len);
/* Sends SIGHUP for text and returns the first window that ran on it. */
void reload_to(struct mw_daemon *d, const char *conf, const char *text, const struct scrape *before,
	       struct scrape *after);

/* test_reload_health.c's test, added to s with add's fixtures and timeout. */
void reload_add_health_tests(Suite *s, void (*add)(Suite *s, const char *name, const TTest *test, double timeout));

#endif
