// SPDX-License-Identifier: GPL-2.0
/* Every memory kill explained: the kernel's OOM kills with their diagnosis,
 * judged against the kernel's own oom-kill lines (/dev/kmsg), and the kills
 * user-space killers send, judged against the signals this test sent. Runs
 * on the host's memory hierarchy, v1 or v2 (helpers.c: mw_memcg_*). Needs
 * root.
 *
 * The killer is a child of this test that names itself (PR_SET_NAME) as the
 * configured killer would be named; the victims are children of this test in
 * memory cgroups of its own (memwatch-kill-<runner pid>-*). Every process is
 * signalled only by a PID this test got from fork(). */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include "helpers.h"

#define CG_PREFIX "memwatch-kill-"
#define MiB (1024UL * 1024UL)
#define OOM_LIMIT_BYTES (64UL * MiB)
#define OOM_TOUCH_BYTES (200UL * MiB)
#define POLL_TIMEOUT_MS 15000
#define TEST_TIMEOUT_SEC 120

#define KILLER "mwk-killer"
#define BYSTANDER "mwk-bystander"
#define VICTIM_COMM "mwk-victim"
/* The daemon folds the signals of one killer to one cgroup within this into one kill. */
#define BURST_MSEC 1000

static pid_t runner_pid;

/* ---- processes of our own ---- */

#define MAX_CHILDREN 32
static pid_t children[MAX_CHILDREN];
static size_t n_children;

static void forget_child(pid_t pid)
{
	for (size_t i = 0; i < n_children; i++)
		if (children[i] == pid) {
			children[i] = children[--n_children];
			return;
		}
}

static int reap(pid_t pid)
{
	int64_t deadline = mw_mono_ms() + WORKLOAD_TIMEOUT_MS;
	int st = -1;

	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid || (r < 0 && errno != EINTR))
			break;
		if (mw_mono_ms() >= deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			forget_child(pid);
			ck_abort_msg("child %d did not end within %d ms", (int)pid, WORKLOAD_TIMEOUT_MS);
		}
		mw_sleep_ms(10);
	}
	forget_child(pid);
	return st;
}

static void on_term(int sig)
{
	(void)sig; /* survive SIGTERM, as a process that cleans up slowly would: the killer then sends SIGKILL */
}

enum victim_kind {
	VICTIM_WAIT,  /* catch SIGTERM and wait for SIGKILL */
	VICTIM_TOUCH, /* touch OOM_TOUCH_BYTES of anonymous memory */
};

/* In a victim: touches OOM_TOUCH_BYTES of anonymous memory, past its
 * cgroup's limit, until the kernel kills it. */
static _Noreturn void touch_past_limit(void)
{
	volatile char *p = mmap(NULL, OOM_TOUCH_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		_exit(121);
	for (size_t off = 0; off < OOM_TOUCH_BYTES; off += 4096)
		p[off] = 1;
	_exit(0); /* survived: the test fails on the exit status */
}

/* A child that joins cg, sets its oom_score_adj, names itself and does its
 * work; it reports on the pipe once it is in place. */
static pid_t spawn_victim(const struct mw_memcg *cg, enum victim_kind kind, int score_adj)
{
	pid_t parent = getpid(), pid;
	int ready[2];
	char byte;

	ck_assert(n_children < MAX_CHILDREN);
	ck_assert(pipe2(ready, O_CLOEXEC) == 0);
	fflush(NULL);
	pid = fork();
	ck_assert_msg(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		char file[320], text[32];

		close(ready[0]);
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
			_exit(126);
		snprintf(file, sizeof(file), "%s/cgroup.procs", cg->path);
		snprintf(text, sizeof(text), "%d", (int)getpid());
		if (mw_write_text(file, text) < 0)
			_exit(125);
		snprintf(text, sizeof(text), "%d", score_adj);
		if (mw_write_text("/proc/self/oom_score_adj", text) < 0)
			_exit(124);
		if (prctl(PR_SET_NAME, VICTIM_COMM) < 0 || signal(SIGTERM, on_term) == SIG_ERR)
			_exit(123);
		if (write(ready[1], "r", 1) != 1)
			_exit(122);
		if (kind == VICTIM_TOUCH)
			touch_past_limit();
		for (;;)
			pause();
	}
	close(ready[1]);
	children[n_children++] = pid;
	if (read(ready[0], &byte, 1) != 1) {
		int st = reap(pid);

		ck_abort_msg("victim %d did not get into %s: exit %d", (int)pid, cg->path, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	}
	close(ready[0]);
	return pid;
}

/* A child named comm that sends each signal of sigs to every pid, in
 * order, pausing between the rounds; returns its pid once it is done. */
static pid_t run_killer(const char *comm, const pid_t *pids, size_t n, const int *sigs, size_t n_sigs)
{
	pid_t pid;
	int st;

	fflush(NULL);
	pid = fork();
	ck_assert_msg(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		if (prctl(PR_SET_NAME, comm) < 0)
			_exit(120);
		for (size_t s = 0; s < n_sigs; s++) {
			for (size_t i = 0; i < n; i++)
				if (kill(pids[i], sigs[s]) < 0)
					_exit(121);
			usleep(100 * 1000);
		}
		_exit(0);
	}
	children[n_children++] = pid;
	st = reap(pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the killer %s ended with status 0x%x", comm, st);
	return pid;
}

/* ---- memory cgroups of our own ---- */

#define MAX_CGS 8
static char cg_paths[MAX_CGS][256];
static size_t n_cgs;

static void make_cg(struct mw_memcg *cg, const struct mw_memcg *parent, const char *what, const char *limit)
{
	char name[96];

	snprintf(name, sizeof(name), "%s%d-%s", parent ? "" : CG_PREFIX, (int)runner_pid, what);
	ck_assert_msg(mw_memcg_make(cg, parent, name, limit), "cannot make memory cgroup %s (limit %s): %s", name,
		      limit ? limit : "none", strerror(errno));
	ck_assert(n_cgs < MAX_CGS);
	snprintf(cg_paths[n_cgs++], sizeof(cg_paths[0]), "%s", cg->path);
}

static void cleanup(void)
{
	while (n_children) {
		pid_t pid = children[--n_children];

		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	while (n_cgs) /* children before parents: made in that order */
		if (!mw_memcg_remove(cg_paths[--n_cgs]))
			fprintf(stderr, "could not remove %s: %m\n", cg_paths[n_cgs]);
	mw_cleanup_all();
}

/* ---- the daemon and its answers ---- */

static struct mw_daemon *start_daemon(const char *oom_section)
{
	char *text, *conf;
	struct mw_daemon *d;

	ck_assert(asprintf(&text, "[daemon]\nwindow = 500ms\nlog_level = info\n[collector.oom]\n%s\n", oom_section) > 0);
	conf = mw_write_temp_file("memwatchd.conf", text);
	free(text);
	ck_assert(conf);
	d = mw_start(conf, NULL, false);
	free(conf);
	ck_assert_msg(d != NULL, "memwatchd did not start serving /metrics");
	return d;
}

static double metric(struct mw_daemon *d, const char *name, const char *matcher)
{
	char *body = mw_scrape(d->port);
	double v = NAN;

	ck_assert_msg(body, "no answer from /metrics");
	if (!mw_metric(body, name, matcher, &v, NULL, 0))
		v = NAN;
	free(body);
	return v;
}

/* Polls until name{matcher} equals want; the last value seen otherwise. */
static double wait_metric(struct mw_daemon *d, const char *name, const char *matcher, double want)
{
	double v = NAN;

	(void)mw_poll_metric(d->port, name, matcher, POLL_TIMEOUT_MS, mw_pred_eq, want, &v);
	return v;
}

/* Each field of every event of kind and pid, as "key=JSON value" lines,
 * prefixed "e<i>." for the i-th such event; and n=<count>. */
static const char py_event_fields[] =
	"import json, sys\n"
	"d = json.load(open(sys.argv[1], 'rb'))\n"
	"m = [e for e in d['events'] if e['kind'] == sys.argv[2] and str(e['pid']) in sys.argv[3].split(',')]\n"
	"print('n=%d' % len(m))\n"
	"for i, e in enumerate(m):\n"
	"    for k, v in e.items():\n"
	"        print('e%d.%s=%s' % (i, k, json.dumps(v, sort_keys=True)))\n";

static char *events_of(struct mw_daemon *d, const char *kind, const char *pids)
{
	struct mw_http_response resp;
	char json[300], script[300], cmd[1024], *out;
	size_t len = 0, cap = 65536;
	FILE *f;
	int st;

	ck_assert(mw_http_get(d->port, "/api/v1/events", &resp) == 0 && resp.status == 200);
	snprintf(json, sizeof(json), "%s/events.%d.json", mw_tmp_root(), (int)getpid());
	snprintf(script, sizeof(script), "%s/events.%d.py", mw_tmp_root(), (int)getpid());
	ck_assert(mw_write_file(json, resp.body) == 0 && mw_write_file(script, py_event_fields) == 0);
	mw_http_response_free(&resp);
	snprintf(cmd, sizeof(cmd), "python3 %s %s %s %s 2>&1", script, json, kind, pids);
	f = popen(cmd, "r");
	ck_assert(f && (out = malloc(cap)));
	while (len + 1 < cap && fgets(out + len, (int)(cap - len), f))
		len += strlen(out + len);
	out[len] = '\0';
	st = pclose(f);
	ck_assert_msg(st == 0, "python3 on /api/v1/events exited 0x%x:\n%s", st, out);
	unlink(json);
	unlink(script);
	return out;
}

/* The value of "key=..." in the script's output, without JSON's quotes. */
static bool field(const char *out, const char *key, char *buf, size_t len)
{
	size_t klen = strlen(key);

	for (const char *p = out; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, key, klen) == 0 && p[klen] == '=') {
			const char *v = p + klen + 1;
			size_t vlen = strcspn(v, "\n");

			if (vlen >= 2 && v[0] == '"' && v[vlen - 1] == '"')
				v++, vlen -= 2;
			snprintf(buf, len, "%.*s", (int)vlen, v);
			return true;
		}
	return false;
}

static void assert_field(const char *out, const char *key, const char *want)
{
	char buf[512];

	ck_assert_msg(field(out, key, buf, sizeof(buf)), "event has no %s:\n%s", key, out);
	ck_assert_msg(strcmp(buf, want) == 0, "event %s is '%s', want '%s':\n%s", key, buf, want, out);
}

static long long field_ll(const char *out, const char *key)
{
	char buf[64], *end;
	long long v;

	ck_assert_msg(field(out, key, buf, sizeof(buf)), "event has no %s:\n%s", key, out);
	v = strtoll(buf, &end, 10);
	ck_assert_msg(end != buf && !*end, "event %s is '%s', not an integer", key, buf);
	return v;
}

/* The status page's table of recent kills has a row with every one of needles. */
static void assert_status_row(struct mw_daemon *d, const char *const *needles)
{
	struct mw_http_response resp;
	const char *table, *row;

	ck_assert(mw_http_get(d->port, "/", &resp) == 0 && resp.status == 200);
	table = strstr(resp.body, "<caption>Recent kills</caption>");
	ck_assert_msg(table, "no table of recent kills on the status page");
	for (row = strstr(table, "<tr>"); row; row = strstr(row + 4, "<tr>")) {
		const char *end = strstr(row, "</tr>");
		bool all = end != NULL;

		for (const char *const *n = needles; all && *n; n++) {
			const char *at = strstr(row, *n);

			all = at && at < end;
		}
		if (all)
			break;
	}
	ck_assert_msg(row, "no row of the status page's recent kills has %s ...:\n%.3000s", needles[0], table);
	mw_http_response_free(&resp);
}

/* ---- the kernel's own record of an OOM kill ---- */

struct kernel_oom {
	char constraint[64];
	char oom_memcg[256];
	char task_memcg[256];
	long long anon_kb, file_kb, shmem_kb, score_adj;
	long long usage_kb, limit_kb; /* "memory: usage ..., limit ..." of the OOM cgroup, before its kill */
};

/* From /dev/kmsg: the oom-kill and "Killed process" lines for pid, and the
 * last "memory: usage" line before them. */
static bool kernel_oom_lines(const char *log, pid_t pid, struct kernel_oom *k)
{
	char needle[64], killed[64];
	const char *oomkill = NULL, *line, *kl;
	bool usage_seen = false;

	*k = (struct kernel_oom){ .usage_kb = -1, .limit_kb = -1 };
	snprintf(needle, sizeof(needle), ",pid=%d,", (int)pid);
	snprintf(killed, sizeof(killed), "Killed process %d (", (int)pid);
	for (line = log; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		size_t len = strcspn(line, "\n");
		char text[1024];

		snprintf(text, sizeof(text), "%.*s", (int)len, line);
		if (!oomkill && sscanf(text, "memory: usage %lldkB, limit %lldkB", &k->usage_kb, &k->limit_kb) == 2)
			usage_seen = true;
		if (!oomkill && strstr(text, "oom-kill:") && strstr(text, needle))
			oomkill = line;
	}
	if (!oomkill || !(kl = strstr(log, killed)))
		return false;
	{
		char text[1024], *p;

		snprintf(text, sizeof(text), "%.*s", (int)strcspn(oomkill, "\n"), oomkill);
		if ((p = strstr(text, "constraint=")))
			snprintf(k->constraint, sizeof(k->constraint), "%.*s", (int)strcspn(p + 11, ","), p + 11);
		if ((p = strstr(text, "oom_memcg=")))
			snprintf(k->oom_memcg, sizeof(k->oom_memcg), "%.*s", (int)strcspn(p + 10, ","), p + 10);
		if ((p = strstr(text, "task_memcg=")))
			snprintf(k->task_memcg, sizeof(k->task_memcg), "%.*s", (int)strcspn(p + 11, ","), p + 11);
	}
	{
		const char *p = strstr(kl, "anon-rss:");

		if (!p || sscanf(p, "anon-rss:%lldkB, file-rss:%lldkB, shmem-rss:%lldkB", &k->anon_kb, &k->file_kb,
				 &k->shmem_kb) != 3)
			return false;
		p = strstr(kl, "oom_score_adj:");
		if (!p || sscanf(p, "oom_score_adj:%lld", &k->score_adj) != 1)
			return false;
	}
	return usage_seen;
}

/* ---- kernel OOM kills ---- */

/* One OOM kill in child (whose ancestor oom_cg has the limit): the daemon's
 * event and counters against the kernel's lines. */
static void oom_kill_judged(const struct mw_memcg *oom_cg, const struct mw_memcg *victim_cg, int score_adj)
{
	struct mw_daemon *d = start_daemon("");
	char matcher[600], pidstr[16], want_source[32], buf[64], *out, *log;
	double memcg0 = metric(d, "memwatch_oom_kills_total", "scope=\"memcg\"");
	double global0 = metric(d, "memwatch_oom_kills_total", "scope=\"global\"");
	struct kernel_oom k;
	int kmsg = mw_kmsg_open_end(), st;
	pid_t pid;

	ck_assert_msg(kmsg >= 0, "cannot read /dev/kmsg: %s", strerror(errno));
	ck_assert_msg(memcg0 == memcg0 && global0 == global0, "no memwatch_oom_kills_total{scope} before the kill");
	pid = spawn_victim(victim_cg, VICTIM_TOUCH, score_adj);
	st = reap(pid);
	ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "the victim was not OOM-killed: status 0x%x", st);
	mw_sleep_ms(100); /* the kernel's lines follow the kill within the same call */
	log = mw_kmsg_read(kmsg);
	close(kmsg);
	ck_assert_msg(kernel_oom_lines(log, pid, &k), "no oom-kill lines for pid %d in the kernel log:\n%s", (int)pid, log);
	ck_assert_msg(strcmp(k.constraint, "CONSTRAINT_MEMCG") == 0, "the kernel says %s", k.constraint);
	ck_assert_msg(strcmp(k.oom_memcg, oom_cg->label) == 0 && strcmp(k.task_memcg, victim_cg->label) == 0,
		      "the kernel's oom_memcg=%s task_memcg=%s, the test made %s and %s", k.oom_memcg, k.task_memcg,
		      oom_cg->label, victim_cg->label);

	ck_assert_msg(wait_metric(d, "memwatch_oom_kills_total", "scope=\"memcg\"", memcg0 + 1) == memcg0 + 1,
		      "memwatch_oom_kills_total{scope=\"memcg\"} did not go %g -> %g", memcg0, memcg0 + 1);
	ck_assert(metric(d, "memwatch_oom_kills_total", "scope=\"global\"") == global0);
	snprintf(matcher, sizeof(matcher), "cgroup=\"%s\",", victim_cg->label);
	ck_assert_msg(wait_metric(d, "memwatch_cgroup_oom_kills_total", matcher, 1) == 1,
		      "memwatch_cgroup_oom_kills_total{%s} is not 1", matcher);
	ck_assert_msg(metric(d, "memwatch_cgroup_oom_kills_total", "scope=\"memcg\"") == 1,
		      "the victim cgroup's kill is not under scope=\"memcg\"");

	snprintf(pidstr, sizeof(pidstr), "%d", (int)pid);
	out = events_of(d, "oom_kill", pidstr);
	ck_assert_msg(field_ll(out, "n") == 1, "want one oom_kill event for pid %d:\n%s", (int)pid, out);
	assert_field(out, "e0.scope", "memcg");
	if (mw_expected_kill_field("host", "scope", want_source, sizeof(want_source)) == 0)
		assert_field(out, "e0.scope_source", strcmp(want_source, "memcg_walk") == 0 ? "memcg_walk" : "oom_control");
	assert_field(out, "e0.cgroup", k.task_memcg);
	assert_field(out, "e0.cgroup_source", "table");
	assert_field(out, "e0.oom_cgroup", k.oom_memcg);
	assert_field(out, "e0.comm", VICTIM_COMM);
	ck_assert_msg(field_ll(out, "e0.anon_rss_bytes") == k.anon_kb * 1024 &&
			      field_ll(out, "e0.file_rss_bytes") == k.file_kb * 1024 &&
			      field_ll(out, "e0.shmem_rss_bytes") == k.shmem_kb * 1024,
		      "RSS anon/file/shmem %lld/%lld/%lld kB in the kernel's line, the event:\n%s", k.anon_kb, k.file_kb,
		      k.shmem_kb, out);
	ck_assert_msg(field_ll(out, "e0.oom_score_adj") == k.score_adj && k.score_adj == score_adj,
		      "oom_score_adj: the test set %d, the kernel says %lld, the event:\n%s", score_adj, k.score_adj, out);
	ck_assert_msg(field_ll(out, "e0.oom_cgroup_limit_bytes") == k.limit_kb * 1024 &&
			      k.limit_kb * 1024 == (long long)OOM_LIMIT_BYTES,
		      "OOM cgroup limit: set %lu, the kernel says %lld kB, the event:\n%s", OOM_LIMIT_BYTES, k.limit_kb, out);
	/* The kernel prints the usage before it picks the victim, the event is read
	 * at the kill: only the per-CPU charge batch (64 pages) may differ. */
	ck_assert_msg(llabs(field_ll(out, "e0.oom_cgroup_usage_bytes") - k.usage_kb * 1024) <= 64 * 4096,
		      "OOM cgroup usage %lld kB in the kernel's line, the event:\n%s", k.usage_kb, out);
	ck_assert(field(out, "e0.restored", buf, sizeof(buf)) && strcmp(buf, "false") == 0);
	{
		char limit_of[300];

		snprintf(limit_of, sizeof(limit_of), "limit of %s:", oom_cg->label);
		assert_status_row(d, (const char *const[]){ pidstr, "OOM killer, memcg", VICTIM_COMM, limit_of, NULL });
	}
	free(out);
	free(log);
	mw_assert_clean_stop(d);
}

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
	static const char conf_fmt[] = "[daemon]\nwindow = 500ms\nlog_level = info\ndebug_pause_events = %s\n";
	struct mw_memcg parent, victim_cg;
	char text[256], matcher[600], pidstr[16], *conf, *out, *log;
	struct kernel_oom k;
	struct mw_daemon *d;
	double kills0, v = NAN;
	int kmsg, st;
	pid_t pid;

	make_cg(&parent, NULL, "kept", NULL);
	make_cg(&victim_cg, &parent, "gone", "64M");
	snprintf(text, sizeof(text), conf_fmt, "yes");
	conf = mw_write_temp_file("memwatchd.conf", text);
	ck_assert(conf);
	d = mw_start(conf, NULL, false);
	ck_assert_msg(d != NULL, "memwatchd did not start serving /metrics");
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

	snprintf(text, sizeof(text), conf_fmt, "no");
	ck_assert_int_eq(mw_write_file(conf, text), 0);
	ck_assert_int_eq(mw_signal(d, SIGHUP), 0);
	ck_assert_msg(mw_poll_metric(d->port, "memwatch_config_reloads_total", "result=\"success\"", POLL_TIMEOUT_MS,
				     mw_pred_eq, 1.0, &v),
		      "memwatch_config_reloads_total{result=\"success\"} is %g after SIGHUP", v);
	free(conf);
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

/* ---- user-space killers ---- */

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

	ck_assert(n_children < MAX_CHILDREN);
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
	children[n_children++] = pid;
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

	tc = tcase_create("userspace");
	tcase_set_timeout(tc, TEST_TIMEOUT_SEC);
	tcase_add_checked_fixture(tc, NULL, cleanup);
	tcase_add_test(tc, test_userspace_killer);
	tcase_add_test(tc, test_userspace_killers_off);
	tcase_add_test(tc, test_userspace_killers_bad);
	suite_add_tcase(s, tc);
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
	srunner_free(sr);
	sweep(root);
	if (failed)
		mw_dump_daemon_logs(mw_tmp_root(), NULL);
	else
		mw_remove_tmp_root();
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
