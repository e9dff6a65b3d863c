// SPDX-License-Identifier: GPL-2.0
/* Acceptance tests of the BPF and procfs collectors against real memory
 * pressure on the running kernel, each checked against an independent count:
 * perf on the same tracepoints, /proc/vmstat, /proc/PID/stat. Needs root.
 *
 * Every test is bounded and undoes what it creates (cgroups, files, the
 * tracefs mount). A failed assertion ends a test's process at once (check's
 * fork mode), so each resource is written to a journal before it is created,
 * and the runner process replays the journal after every test. Processes a
 * test starts die with it (PR_SET_PDEATHSIG) and are only ever signalled by
 * the PID it got from fork().
 *
 * The tests are in test_collectors_*.c, their shared steps in
 * collectors_common.c and collectors_procs.c (collectors.h). */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>
#include "collectors.h"

/* ---- runner ---- */

void collectors_add_test(Suite *s, const char *name, const TTest *test, double timeout)
{
	TCase *tc = tcase_create(name);

	tcase_add_checked_fixture(tc, NULL, teardown_daemons);
	tcase_add_unchecked_fixture(tc, NULL, replay_after_test);
	tcase_set_timeout(tc, timeout);
	tcase_add_test(tc, test);
	suite_add_tcase(s, tc);
}

static Suite *collectors_suite(void)
{
	Suite *s = suite_create("collectors");

	collectors_add_reclaim_tests(s);
	collectors_add_direct_reclaim_tests(s);
	collectors_add_faults_tests(s);
	collectors_add_allocs_tests(s);
	collectors_add_exhaustion_tests(s);
	collectors_add_sampler_tests(s);
	return s;
}

/* perf and attach = tracepoint need tracefs; mounts it when it is not there. */
static int ensure_tracefs(void)
{
	if (access(TRACEFS_DIR "/events", F_OK) == 0)
		return 0;
	if (mount("nodev", TRACEFS_DIR, "tracefs", 0, NULL) < 0)
		return -errno;
	tracefs_mounted_by_us = true;
	return 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_fatal_signal };
	SRunner *sr;
	int failed, r;

	if (argc == 4 && strcmp(argv[1], KMEM_HELPER_FLAG) == 0)
		return kmem_failure_helper(argv[2], argv[3]);
	if (geteuid() != 0) {
		fprintf(stderr, "memwatchd collector tests need root (BPF, cgroups, perf): skipping\n");
		return 77;
	}
	if (access(MEMWATCHD_PATH, X_OK) < 0) {
		fprintf(stderr, "%s: %m\n", MEMWATCHD_PATH);
		return 99;
	}
	if (mw_init_tmp_root() < 0) {
		fprintf(stderr, "cannot create a temporary directory: %m\n");
		return 99;
	}
	runner_pid = getpid();
	snprintf(journal_path, sizeof(journal_path), "%s/cleanup.journal", mw_tmp_root());
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	r = ensure_tracefs();
	if (r < 0) {
		fprintf(stderr, "cannot mount tracefs at " TRACEFS_DIR ": %s\n", strerror(-r));
		mw_remove_tmp_root();
		return 99;
	}

	sr = srunner_create(collectors_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	mw_keep_failures(sr);
	srunner_free(sr);

	journal_replay();
	if (tracefs_mounted_by_us && umount2(TRACEFS_DIR, 0) < 0)
		fprintf(stderr, "cannot unmount the tracefs we mounted at " TRACEFS_DIR ": %m\n");
	if (failed) {
		mw_dump_daemon_logs(mw_tmp_root(), "*.txt.log");
		fprintf(stderr, "daemon logs and perf output kept in %s\n", mw_tmp_root());
	} else {
		mw_remove_tmp_root();
	}
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
