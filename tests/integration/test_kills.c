// SPDX-License-Identifier: GPL-2.0
/* Every memory kill explained: the kernel's OOM kills with their diagnosis,
 * judged against the kernel's own oom-kill lines (/dev/kmsg), and the kills
 * user-space killers send, judged against the signals this test sent. Runs
 * on the host's memory hierarchy, v1 or v2 (helpers.c: mw_memcg_*). Needs
 * root.
 *
 * The kernel OOM-kill tests and the restart test are here, the user-space
 * killer tests in test_kills_userspace.c, their shared steps in
 * kills_common.c (kills.h).
 *
 * The killer is a child of this test that names itself (PR_SET_NAME) as the
 * configured killer would be named; the victims are children of this test in
 * memory cgroups of its own (memwatch-kill-<runner pid>-*). Every process is
 * signalled only by a PID this test got from fork(). */
#include <check.h>
#include <errno.h>
#include <glob.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include "kills.h"

/* ---- kernel OOM kills ---- */

START_TEST(test_oom_own_limit)
{
	struct mw_memcg cg;

	make_cg(&cg, NULL, "own", "64M");
	oom_kill_judged(&cg, &cg, 123);
}
END_TEST

/* The limit on the parent: the OOM cgroup is not the victim's. */
START_TEST(test_oom_parent_limit)
{
	struct mw_memcg parent, child;

	make_cg(&parent, NULL, "parent", "64M");
	make_cg(&child, &parent, "child", NULL);
	oom_kill_judged(&parent, &child, 500); /* raising needs no CAP_SYS_RESOURCE, which this host lacks */
}
END_TEST

/* A container's cgroup goes right after its kill, often before the daemon
 * reads the kill. With the event consumer paused (debug_pause_events), the
 * victim's cgroup is OOM-killed in and removed, then the consumer resumes:
 * the kill is still named, from its parent's path and the name the kernel
 * gave at the kill, as the kernel's own oom-kill line names it. */
START_TEST(test_oom_cgroup_removed_before_read)
{
	/* The reclaim and compaction collectors name cgroups at each window's
	 * end (per-cgroup reclaims, exemplars): one that ends between the
	 * victim's memcg reclaim and the rmdir puts the cgroup in the id -> path
	 * table, which then names the kill ("table") before the kill would. */
	static const char sections[] = "[collector.reclaim]\nenabled = no\n[collector.compaction]\nenabled = no\n";
	struct mw_memcg parent, victim_cg;
	char matcher[600], pidstr[16], *conf, *out, *log;
	struct kernel_oom k;
	struct mw_daemon *d;
	double kills0;
	int kmsg, st;
	pid_t pid;

	make_cg(&parent, NULL, "kept", NULL);
	make_cg(&victim_cg, &parent, "gone", "64M");
	d = start_paused(sections, &conf);
	kills0 = metric(d, "memwatch_oom_kills_total", "scope=\"memcg\"");
	ck_assert_msg(kills0 == kills0, "no memwatch_oom_kills_total{scope=\"memcg\"} before the kill");
	kmsg = mw_kmsg_open_end();
	ck_assert_msg(kmsg >= 0, "cannot read /dev/kmsg: %s", strerror(errno));
	pid = spawn_victim(&victim_cg, VICTIM_TOUCH, 0);
	st = reap(pid);
	ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "the victim was not OOM-killed: status 0x%x", st);
	mw_sleep_ms(100);
	log = mw_kmsg_read(kmsg);
	close(kmsg);
	ck_assert_msg(kernel_oom_lines(log, pid, &k), "no oom-kill lines for pid %d in the kernel log:\n%s", (int)pid, log);
	ck_assert_msg(strcmp(k.task_memcg, victim_cg.label) == 0, "the kernel's task_memcg=%s, the test made %s",
		      k.task_memcg, victim_cg.label);
	free(log);
	ck_assert_msg(mw_memcg_remove(victim_cg.path), "cannot remove %s: %m", victim_cg.path);

	resume_events(d, conf, sections);
	ck_assert_msg(wait_metric(d, "memwatch_oom_kills_total", "scope=\"memcg\"", kills0 + 1) == kills0 + 1,
		      "memwatch_oom_kills_total{scope=\"memcg\"} did not go %g -> %g", kills0, kills0 + 1);
	snprintf(matcher, sizeof(matcher), "cgroup=\"%s\",", victim_cg.label);
	ck_assert_msg(wait_metric(d, "memwatch_cgroup_oom_kills_total", matcher, 1) == 1,
		      "memwatch_cgroup_oom_kills_total{%s} is not 1: the removed cgroup was not named", matcher);
	snprintf(pidstr, sizeof(pidstr), "%d", (int)pid);
	out = events_of(d, "oom_kill", pidstr);
	ck_assert_msg(field_ll(out, "n") == 1, "want one oom_kill event for pid %d:\n%s", (int)pid, out);
	assert_field(out, "e0.cgroup", k.task_memcg);
	assert_field(out, "e0.cgroup_source", "kill");
	assert_field(out, "e0.oom_cgroup", k.oom_memcg);
	free(out);
	ck_assert_msg(mw_log_wait(d, POLL_TIMEOUT_MS, (const char *const[]){ pidstr, victim_cg.label, "named from the kill", NULL }),
		      "no log line names the kill of pid %s in %s from the kill", pidstr, victim_cg.label);
	mw_assert_clean_stop(d);
}
END_TEST

/* ---- every kill once over collector restarts ---- */

#define RESTARTS 40
#define MIN_KILLS_OVER_RESTARTS 20

static volatile sig_atomic_t oom_loop_stop;

static void on_oom_loop_term(int sig)
{
	(void)sig;
	oom_loop_stop = 1;
}

/* A child that, until SIGTERM, forks one victim after another into cg,
 * each touching more than cg's limit until the kernel kills it. Exits 0
 * when every victim died of SIGKILL. */
static pid_t spawn_oom_loop(const struct mw_memcg *cg)
{
	pid_t parent = getpid(), pid;

	assert_child_room();
	fflush(NULL);
	pid = fork();
	ck_assert_msg(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent || signal(SIGTERM, on_oom_loop_term) == SIG_ERR)
			_exit(126);
		while (!oom_loop_stop) {
			pid_t loop = getpid(), v = fork();
			int st;

			if (v < 0)
				_exit(125);
			if (v == 0) {
				char file[320], text[32];

				if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != loop)
					_exit(124);
				snprintf(file, sizeof(file), "%s/cgroup.procs", cg->path);
				snprintf(text, sizeof(text), "%d", (int)getpid());
				if (mw_write_text(file, text) < 0 || prctl(PR_SET_NAME, VICTIM_COMM) < 0)
					_exit(123);
				touch_past_limit();
			}
			while (waitpid(v, &st, 0) < 0)
				if (errno != EINTR)
					_exit(121);
			if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGKILL)
				_exit(120);
		}
		_exit(0);
	}
	track_child(pid);
	return pid;
}

static double metric_sum(const char *body, const char *name, const char *must_have)
{
	size_t len = strlen(name);
	double sum = 0;

	for (const char *p = body; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		const char *eol = strchr(p, '\n'), *sp;

		if (strncmp(p, name, len) != 0 || (p[len] != '{' && p[len] != ' '))
			continue;
		sp = eol ? eol : p + strlen(p);
		while (sp > p && sp[-1] != ' ')
			sp--;
		if (must_have) {
			const char *hit = strstr(p, must_have);

			if (!hit || (eol && hit > eol))
				continue;
		}
		sum += strtod(sp, NULL);
	}
	return sum;
}

static size_t count_lines_with(const char *text, const char *a, const char *b)
{
	size_t n = 0;

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		const char *eol = strchr(p, '\n'), *ha = strstr(p, a), *hb = b ? strstr(p, b) : p;

		if (ha && hb && (!eol || (ha < eol && hb < eol)))
			n++;
	}
	return n;
}

/* The oom_kill events of /api/v1/events whose cgroup is label, and how many
 * of them repeat a pid already seen. */
static const char py_cgroup_kills[] =
	"import json, sys\n"
	"d = json.load(open(sys.argv[1], 'rb'))\n"
	"m = [e['pid'] for e in d['events'] if e['kind'] == 'oom_kill' and e.get('cgroup') == sys.argv[2]]\n"
	"print(len(m), len(m) - len(set(m)))\n";

static void cgroup_kill_events(struct mw_daemon *d, const char *label, long long *n, long long *repeated)
{
	struct mw_http_response resp;
	char *out = NULL;
	int st;

	ck_assert(mw_http_get(d->port, "/api/v1/events", &resp) == 0 && resp.status == 200);
	st = mw_run_python(py_cgroup_kills, resp.body, resp.body_len, (const char *const[]){ label, NULL }, &out);
	mw_http_response_free(&resp);
	ck_assert_msg(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0 && out &&
			      sscanf(out, "%lld %lld", n, repeated) == 2,
		      "python3 on /api/v1/events: %s", out ? out : "");
	free(out);
}

/* While OOM kills follow each other in a memory cgroup, the oom collector is
 * restarted 40 times (attach raw_tp, then auto, ...: a new instance starts
 * beside the old one each time). Every kill is counted, noted per cgroup,
 * reported as an event and logged exactly once: against the kernel's own
 * counts, the host's (/proc/vmstat oom_kill) and the cgroup's. */
START_TEST(test_kills_over_restarts)
{
	static const char base[] = "[daemon]\nwindow = 200ms\nlog_level = info\nevent_history = 4096\n";
	char *conf, text[256], matcher[320], in_cgroup[320];
	long long host0, host1, cg_kills, events, repeated;
	double total0, total1, own;
	struct mw_daemon *d;
	struct mw_memcg cg;
	char *body, *log;
	pid_t loop;
	int st;

	make_cg(&cg, NULL, "restarts", "64M");
	snprintf(text, sizeof(text), "%s[collector.oom]\nattach = auto\n", base);
	conf = mw_write_temp_file("memwatchd.conf", text);
	ck_assert(conf);
	d = mw_start(conf, NULL, false);
	ck_assert_msg(d != NULL, "memwatchd did not start serving /metrics");
	body = mw_scrape(d->port);
	ck_assert(body);
	total0 = metric_sum(body, "memwatch_oom_kills_total", NULL);
	free(body);
	host0 = (long long)vmstat_get("oom_kill");

	loop = spawn_oom_loop(&cg);
	for (int i = 0; i < RESTARTS; i++) {
		int64_t deadline = mw_mono_ms() + WORKLOAD_TIMEOUT_MS;

		snprintf(text, sizeof(text), "%s[collector.oom]\nattach = %s\n", base, i % 2 ? "auto" : "raw_tp");
		ck_assert(mw_write_file(conf, text) == 0);
		ck_assert(kill(d->pid, SIGHUP) == 0);
		for (;;) {
			log = mw_log(d);
			ck_assert(log);
			st = (int)count_lines_with(log, "Configuration reloaded from", NULL);
			free(log);
			if (st == i + 1)
				break;
			ck_assert_msg(mw_mono_ms() < deadline, "reload %d not logged within %d ms", i + 1, WORKLOAD_TIMEOUT_MS);
			mw_sleep_ms(20);
		}
	}
	ck_assert(kill(loop, SIGTERM) == 0);
	st = reap(loop);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the OOM loop ended with status 0x%x", st);

	cg_kills = mw_memcg_oom_kills(cg.path);
	host1 = (long long)vmstat_get("oom_kill");
	ck_assert_msg(cg_kills >= MIN_KILLS_OVER_RESTARTS, "only %lld OOM kills in %s over %d restarts", cg_kills,
		      cg.path, RESTARTS);
	snprintf(matcher, sizeof(matcher), "cgroup=\"%s\"", cg.label);
	/* Until the last kills are in a window (or the bound). */
	for (int64_t deadline = mw_mono_ms() + POLL_TIMEOUT_MS;;) {
		body = mw_scrape(d->port);
		ck_assert(body);
		total1 = metric_sum(body, "memwatch_oom_kills_total", NULL);
		own = metric_sum(body, "memwatch_cgroup_oom_kills_total", matcher);
		free(body);
		if ((total1 - total0 >= (double)(host1 - host0) && own >= (double)cg_kills) || mw_mono_ms() >= deadline)
			break;
		mw_sleep_ms(100);
	}
	mw_sleep_ms(600); /* three windows more: a count still growing past the kernel's shows */
	body = mw_scrape(d->port);
	ck_assert(body);
	total1 = metric_sum(body, "memwatch_oom_kills_total", NULL);
	own = metric_sum(body, "memwatch_cgroup_oom_kills_total", matcher);
	free(body);
	cgroup_kill_events(d, cg.label, &events, &repeated);
	log = mw_log(d);
	ck_assert(log);
	snprintf(in_cgroup, sizeof(in_cgroup), "in cgroup %s", cg.label); /* no cgroup of ours extends it */
	fprintf(stderr, "kills: %d restarts; the kernel: %lld in %s, %lld on the host; memwatchd: +%.0f in all, "
		"%.0f in the cgroup's series, %lld events (%lld repeated), %zu log lines\n",
		RESTARTS, cg_kills, cg.label, host1 - host0, total1 - total0, own, events, repeated,
		count_lines_with(log, "OOM kill (", in_cgroup));
	ck_assert_msg(total1 - total0 == (double)(host1 - host0),
		      "memwatch_oom_kills_total grew by %.0f, /proc/vmstat oom_kill by %lld", total1 - total0, host1 - host0);
	ck_assert_msg(own == (double)cg_kills, "memwatch_cgroup_oom_kills_total{%s} is %.0f, the cgroup counted %lld",
		      matcher, own, cg_kills);
	ck_assert_msg(events == cg_kills && repeated == 0, "%lld oom_kill events for %s (%lld repeated), %lld kills",
		      events, cg.label, repeated, cg_kills);
	ck_assert_msg(count_lines_with(log, "OOM kill (", in_cgroup) == (size_t)cg_kills,
		      "%zu 'OOM kill' log lines for %s, %lld kills", count_lines_with(log, "OOM kill (", in_cgroup),
		      cg.label, cg_kills);
	free(log);
	mw_assert_clean_stop(d);
	free(conf);
}
END_TEST

static Suite *kills_suite(void)
{
	Suite *s = suite_create("memwatchd-kills");
	TCase *tc = tcase_create("oom");

	tcase_set_timeout(tc, TEST_TIMEOUT_SEC);
	tcase_add_checked_fixture(tc, NULL, cleanup);
	tcase_add_test(tc, test_oom_own_limit);
	tcase_add_test(tc, test_oom_parent_limit);
	tcase_add_test(tc, test_oom_cgroup_removed_before_read);
	tcase_add_test(tc, test_kills_over_restarts);
	suite_add_tcase(s, tc);

	kills_add_userspace_tests(s);
	return s;
}

/* Runner process, after the suite: what a failed test left under our prefix. */
static void sweep(const char *root)
{
	char pattern[300];
	glob_t g;

	snprintf(pattern, sizeof(pattern), "%s/" CG_PREFIX "%d-*/*/", root, (int)runner_pid);
	if (glob(pattern, 0, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc; i++)
			(void)mw_memcg_remove(g.gl_pathv[i]);
		globfree(&g);
	}
	snprintf(pattern, sizeof(pattern), "%s/" CG_PREFIX "%d-*/", root, (int)runner_pid);
	if (glob(pattern, 0, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc; i++)
			(void)mw_memcg_remove(g.gl_pathv[i]);
		globfree(&g);
	}
}

int main(void)
{
	const char *root;
	SRunner *sr;
	bool v2;
	int failed;

	if (geteuid() != 0) {
		fprintf(stderr, "the kill tests need root (BPF, memory cgroups, /dev/kmsg)\n");
		return 77;
	}
	if (!mw_memcg_root(&root, &v2)) {
		fprintf(stderr, "no memory controller, v1 or v2, on this host\n");
		return 99; /* every supported host has one: not a skip */
	}
	fprintf(stderr, "memory hierarchy: %s (%s)\n", root, v2 ? "v2" : "v1");
	if (mw_init_tmp_root() < 0)
		return 99;
	runner_pid = getpid();
	sr = srunner_create(kills_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	mw_keep_failures(sr);
	srunner_free(sr);
	sweep(root);
	if (failed)
		mw_dump_daemon_logs(mw_tmp_root(), NULL);
	else
		mw_remove_tmp_root();
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
