// SPDX-License-Identifier: GPL-2.0
/* The kills user-space killers send, judged against the signals this test
 * sent: the killer is a child of this test named (PR_SET_NAME) as a
 * configured killer would be. Run by test_kills.c. */
#include <check.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "kills.h"

#define KILLER "mwk-killer"
#define BYSTANDER "mwk-bystander"
/* The daemon folds the signals of one killer to one cgroup within this into one kill. */
#define BURST_MSEC 1000

static void victims_in(const struct mw_memcg *cg, pid_t *pids, size_t n)
{
	for (size_t i = 0; i < n; i++)
		pids[i] = spawn_victim(cg, VICTIM_WAIT, 0);
}

static void reap_all(const pid_t *pids, size_t n, int want_sig)
{
	for (size_t i = 0; i < n; i++) {
		int st = reap(pids[i]);

		ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == want_sig, "victim %d: status 0x%x, want signal %d",
			      (int)pids[i], st, want_sig);
	}
}

START_TEST(test_userspace_killer)
{
	static const int term_then_kill[] = { SIGTERM, SIGKILL }, kill_only[] = { SIGKILL };
	struct mw_daemon *d = start_daemon("userspace_killers = " KILLER ", earlyoom");
	struct mw_memcg a, b;
	pid_t in_a[3], in_b[1], both[4], late[1], killer;
	char matcher_a[400], matcher_b[400], pids[128], buf[64], *out;
	const char *k = "killer=\"" KILLER "\"";

	make_cg(&a, NULL, "a", NULL);
	make_cg(&b, NULL, "b", NULL);
	ck_assert_msg(metric(d, "memwatch_userspace_kills_total", k) == 0 &&
			      metric(d, "memwatch_userspace_kills_total", "killer=\"earlyoom\"") == 0 &&
			      metric(d, "memwatch_userspace_kill_signals_total", k) == 0,
		      "the configured killers do not start at 0");
	ck_assert(isnan(metric(d, "memwatch_userspace_kills_total", "killer=\"systemd-oomd\"")));

	/* One burst: SIGTERM to four processes in two cgroups, then SIGKILL to the
	 * same four: two kills, eight signals. */
	victims_in(&a, in_a, 3);
	victims_in(&b, in_b, 1);
	memcpy(both, in_a, sizeof(in_a));
	both[3] = in_b[0];
	killer = run_killer(KILLER, both, 4, term_then_kill, 2);
	reap_all(both, 4, SIGKILL);
	ck_assert_msg(wait_metric(d, "memwatch_userspace_kill_signals_total", k, 8) == 8,
		      "memwatch_userspace_kill_signals_total{%s} is not 8 (4 SIGTERM + 4 SIGKILL sent)", k);
	ck_assert_msg(wait_metric(d, "memwatch_userspace_kills_total", k, 2) == 2,
		      "memwatch_userspace_kills_total{%s} is not 2 (one burst to each of two cgroups)", k);
	snprintf(matcher_a, sizeof(matcher_a), "cgroup=\"%s\",", a.label);
	snprintf(matcher_b, sizeof(matcher_b), "cgroup=\"%s\",", b.label);
	ck_assert(wait_metric(d, "memwatch_cgroup_userspace_kills_total", matcher_a, 1) == 1);
	ck_assert(wait_metric(d, "memwatch_cgroup_userspace_kills_total", matcher_b, 1) == 1);
	snprintf(pids, sizeof(pids), "%d,%d,%d", (int)in_a[0], (int)in_a[1], (int)in_a[2]);
	out = events_of(d, "userspace_kill", pids);
	ck_assert_msg(field_ll(out, "n") == 1, "want one userspace_kill event for the processes of %s:\n%s", a.label, out);
	assert_field(out, "e0.killer", KILLER);
	assert_field(out, "e0.signal", "SIGTERM");
	assert_field(out, "e0.comm", VICTIM_COMM);
	assert_field(out, "e0.cgroup", a.label);
	ck_assert(field_ll(out, "e0.killer_pid") == killer);
	ck_assert(field(out, "e0.available_bytes", buf, sizeof(buf)) && strcmp(buf, "null") != 0);
	free(out);

	/* Later, past the burst: a new kill of the same cgroup, by SIGKILL alone. */
	mw_sleep_ms(BURST_MSEC + 200);
	victims_in(&a, late, 1);
	killer = run_killer(KILLER, late, 1, kill_only, 1);
	reap_all(late, 1, SIGKILL);
	ck_assert(wait_metric(d, "memwatch_cgroup_userspace_kills_total", matcher_a, 2) == 2);
	ck_assert(metric(d, "memwatch_userspace_kills_total", k) == 3);
	snprintf(pids, sizeof(pids), "%d", (int)late[0]);
	out = events_of(d, "userspace_kill", pids);
	ck_assert_msg(field_ll(out, "n") == 1, "no userspace_kill event for %d:\n%s", (int)late[0], out);
	assert_field(out, "e0.signal", "SIGKILL");
	ck_assert(field_ll(out, "e0.killer_pid") == killer);
	free(out);
	assert_status_row(d, (const char *const[]){ pids, KILLER, VICTIM_COMM, "SIGKILL", NULL });

	/* A process not on the list counts nothing, whatever it kills. */
	victims_in(&a, late, 1);
	(void)run_killer(BYSTANDER, late, 1, term_then_kill, 2);
	reap_all(late, 1, SIGKILL);
	mw_sleep_ms(1200); /* two windows: a kill, had it counted, would show */
	ck_assert(metric(d, "memwatch_userspace_kills_total", k) == 3);
	ck_assert(metric(d, "memwatch_userspace_kill_signals_total", k) == 9);
	ck_assert(metric(d, "memwatch_userspace_kills_total", "killer=\"earlyoom\"") == 0);
	ck_assert(metric(d, "memwatch_cgroup_userspace_kills_total", matcher_a) == 2);
	mw_assert_clean_stop(d);
}
END_TEST

/* The victim cgroup's "total=" figures of memory.pressure, in seconds. */
static bool read_pressure_totals(const char *dir, double *some, double *full)
{
	char file[320], *text, *p;
	bool ok;

	snprintf(file, sizeof(file), "%s/memory.pressure", dir);
	text = mw_read_file(file, NULL);
	ok = text && (p = strstr(text, "some ")) && (p = strstr(p, "total=")) && (*some = strtod(p + 6, NULL) / 1e6, true) &&
	     (p = strstr(text, "full ")) && (p = strstr(p, "total=")) && (*full = strtod(p + 6, NULL) / 1e6, true);
	free(text);
	return ok;
}

static double field_double(const char *out, const char *key)
{
	char buf[64];

	ck_assert_msg(field(out, key, buf, sizeof(buf)), "event has no %s:\n%s", key, out);
	return strtod(buf, NULL);
}

/* systemd-oomd removes its victim's unit, a container runtime its scope, as
 * soon as the kill empties it: the kill's pressure is read in the kernel at
 * the kill. Here the event consumer is paused (debug_pause_events) while the
 * cgroup is stalled in reclaim, killed and removed, then resumes: the event
 * still carries the pressure, equal to what the cgroup's own memory.pressure
 * said just before the kill (reading the file aggregates; nothing stalled
 * after). */
START_TEST(test_userspace_kill_pressure_outlives_cgroup)
{
	static const char sections[] = "[collector.oom]\nuserspace_killers = " KILLER "\n";
	static const int kill_only[] = { SIGKILL };
	struct mw_memcg cg;
	char text[256], twin[300], pidstr[16], want[32], *conf, *out;
	const char *psi_dir;
	double some = NAN, full = NAN, v = NAN;
	struct mw_daemon *d;
	pid_t toucher, victim;
	bool has_twin;
	int st;

	d = start_paused(sections, &conf);
	if (mw_expected_kill_field("host", "pressure", want, sizeof(want)) == 0) {
		snprintf(text, sizeof(text), "feature=\"pressure\",source=\"%s\"", want);
		ck_assert_msg(metric(d, "memwatch_oom_feature_info", text) == 1, "no memwatch_oom_feature_info{%s}", text);
	}
	make_cg(&cg, NULL, "psi", "32M");
	has_twin = make_unified_twin(&cg, twin, sizeof(twin));
	psi_dir = has_twin ? twin : cg.path;
	/* Reclaim at the limit stalls (try_charge_memcg's psi_memstall_enter) before the OOM kill. */
	toucher = spawn_victim_in(&cg, has_twin ? twin : NULL, VICTIM_TOUCH, 0);
	st = reap(toucher);
	ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "the toucher was not OOM-killed: status 0x%x", st);
	victim = spawn_victim_in(&cg, has_twin ? twin : NULL, VICTIM_WAIT, 0);
	ck_assert_msg(read_pressure_totals(psi_dir, &some, &full), "cannot read %s/memory.pressure", psi_dir);
	ck_assert_msg(some > 0, "%s/memory.pressure: some total=0 after an OOM kill at the limit", psi_dir);
	(void)run_killer(KILLER, &victim, 1, kill_only, 1);
	st = reap(victim);
	ck_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	if (has_twin)
		ck_assert_msg(mw_memcg_remove(twin), "cannot remove %s: %m", twin);
	ck_assert_msg(mw_memcg_remove(cg.path), "cannot remove %s: %m", cg.path);

	resume_events(d, conf, sections);
	ck_assert(wait_metric(d, "memwatch_userspace_kills_total", "killer=\"" KILLER "\"", 1) == 1);
	snprintf(pidstr, sizeof(pidstr), "%d", (int)victim);
	out = events_of(d, "userspace_kill", pidstr);
	ck_assert_msg(field_ll(out, "n") == 1, "want one userspace_kill event for pid %d:\n%s", (int)victim, out);
	assert_field(out, "e0.cgroup_pressure.source", "kill");
	/* The file prints microseconds; the kernel keeps nanoseconds. */
	ck_assert_msg(fabs(field_double(out, "e0.cgroup_pressure.some_seconds_total") - some) < 1e-5 &&
			      fabs(field_double(out, "e0.cgroup_pressure.full_seconds_total") - full) < 1e-5,
		      "the kill's pressure is not what %s/memory.pressure said just before it (some %.6f, full %.6f s):\n%s",
		      psi_dir, some, full, out);
	v = field_double(out, "e0.cgroup_pressure.some_avg10");
	ck_assert_msg(v >= 0 && v <= 1 && field_double(out, "e0.cgroup_pressure.full_avg10") <= v,
		      "avg10 out of range (ratios, full <= some):\n%s", out);
	free(out);
	mw_assert_clean_stop(d);
}
END_TEST

/* Off: no program on signal_generate, no series. */
START_TEST(test_userspace_killers_off)
{
	struct mw_daemon *d = start_daemon("userspace_killers = none");
	char want[32];

	ck_assert(isnan(metric(d, "memwatch_userspace_kills_total", NULL)));
	ck_assert(metric(d, "memwatch_oom_feature_info", "feature=\"userspace_kills\",source=\"off\"") == 1);
	if (mw_expected_kill_field("host", "scope", want, sizeof(want)) == 0) {
		char matcher[64];

		snprintf(matcher, sizeof(matcher), "feature=\"scope\",source=\"%s\"", want);
		ck_assert_msg(metric(d, "memwatch_oom_feature_info", matcher) == 1, "no memwatch_oom_feature_info{%s}",
			      matcher);
	}
	mw_assert_clean_stop(d);
}
END_TEST

/* A name longer than a comm: the file, line and key, and exit 2. */
START_TEST(test_userspace_killers_bad)
{
	char *conf = mw_write_temp_file("bad.conf", "[collector.oom]\n\nuserspace_killers = a-name-of-sixteen\n");
	char *err = NULL;
	int st;

	st = mw_run((const char *const[]){ "--config", conf, "--check", NULL }, NULL, &err);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 2, "status 0x%x, want exit 2:\n%s", st, err ? err : "");
	ck_assert_msg(err && strstr(err, conf) && strstr(err, ":3") && strstr(err, "userspace_killers"),
		      "the error does not name the file, line 3 and the key:\n%s", err ? err : "");
	free(err);
	free(conf);
}
END_TEST

void kills_add_userspace_tests(Suite *s)
{
	TCase *tc = tcase_create("userspace");

	tcase_set_timeout(tc, TEST_TIMEOUT_SEC);
	tcase_add_checked_fixture(tc, NULL, cleanup);
	tcase_add_test(tc, test_userspace_killer);
	tcase_add_test(tc, test_userspace_kill_pressure_outlives_cgroup);
	tcase_add_test(tc, test_userspace_killers_off);
	tcase_add_test(tc, test_userspace_killers_bad);
	suite_add_tcase(s, tc);
}
