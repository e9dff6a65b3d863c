// SPDX-License-Identifier: GPL-2.0
/* The kill tests' shared steps: children of our own (victims, the killer),
 * memory cgroups of our own and their cleanup, the daemon and its answers,
 * the kernel's own oom-kill lines and one OOM kill judged against them. See
 * kills.h. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "kills.h"

#define MiB (1024UL * 1024UL)
#define OOM_LIMIT_BYTES (64UL * MiB)
#define OOM_TOUCH_BYTES (200UL * MiB)

pid_t runner_pid;

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

void assert_child_room(void)
{
	ck_assert(n_children < MAX_CHILDREN);
}

void track_child(pid_t pid)
{
	children[n_children++] = pid;
}

int reap(pid_t pid)
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

/* In a victim: touches OOM_TOUCH_BYTES of anonymous memory, past its
 * cgroup's limit, until the kernel kills it. */
_Noreturn void touch_past_limit(void)
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
pid_t spawn_victim(const struct mw_memcg *cg, enum victim_kind kind, int score_adj)
{
	return spawn_victim_in(cg, NULL, kind, score_adj);
}

pid_t spawn_victim_in(const struct mw_memcg *cg, const char *unified_twin, enum victim_kind kind, int score_adj)
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
		snprintf(file, sizeof(file), "%s/cgroup.procs", unified_twin ? unified_twin : "");
		if (unified_twin && mw_write_text(file, text) < 0)
			_exit(119);
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
pid_t run_killer(const char *comm, const pid_t *pids, size_t n, const int *sigs, size_t n_sigs)
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

void make_cg(struct mw_memcg *cg, const struct mw_memcg *parent, const char *what, const char *limit)
{
	char name[96];

	snprintf(name, sizeof(name), "%s%d-%s", parent ? "" : CG_PREFIX, (int)runner_pid, what);
	ck_assert_msg(mw_memcg_make(cg, parent, name, limit), "cannot make memory cgroup %s (limit %s): %s", name,
		      limit ? limit : "none", strerror(errno));
	ck_assert(n_cgs < MAX_CGS);
	snprintf(cg_paths[n_cgs++], sizeof(cg_paths[0]), "%s", cg->path);
}

bool make_unified_twin(const struct mw_memcg *cg, char *path, size_t len)
{
	const char *root, *name = strrchr(cg->path, '/');
	bool v2;

	if (!mw_memcg_root(&root, &v2) || v2 || access("/sys/fs/cgroup/unified/cgroup.procs", F_OK) < 0 || !name)
		return false;
	ck_assert(snprintf(path, len, "/sys/fs/cgroup/unified%s", name) < (int)len);
	ck_assert_msg(mkdir(path, 0755) == 0 || errno == EEXIST, "mkdir %s: %s", path, strerror(errno));
	ck_assert(n_cgs < MAX_CGS);
	snprintf(cg_paths[n_cgs++], sizeof(cg_paths[0]), "%s", path);
	return true;
}

void cleanup(void)
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

struct mw_daemon *start_daemon(const char *oom_section)
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

static char *paused_config(bool paused, const char *sections)
{
	char *text;

	ck_assert(asprintf(&text, "[daemon]\nwindow = 500ms\nlog_level = info\ndebug_pause_events = %s\n%s",
			   paused ? "yes" : "no", sections) > 0);
	return text;
}

struct mw_daemon *start_paused(const char *sections, char **conf)
{
	char *text = paused_config(true, sections);
	struct mw_daemon *d;

	*conf = mw_write_temp_file("memwatchd.conf", text);
	free(text);
	ck_assert(*conf);
	d = mw_start(*conf, NULL, false);
	ck_assert_msg(d != NULL, "memwatchd did not start serving /metrics");
	return d;
}

void resume_events(struct mw_daemon *d, char *conf, const char *sections)
{
	char *text = paused_config(false, sections);
	double v = NAN;

	ck_assert_int_eq(mw_write_file(conf, text), 0);
	free(text);
	free(conf);
	ck_assert_int_eq(mw_signal(d, SIGHUP), 0);
	ck_assert_msg(mw_poll_metric(d->port, "memwatch_config_reloads_total", "result=\"success\"", POLL_TIMEOUT_MS,
				     mw_pred_eq, 1.0, &v),
		      "memwatch_config_reloads_total{result=\"success\"} is %g after SIGHUP", v);
}

double metric(struct mw_daemon *d, const char *name, const char *matcher)
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
double wait_metric(struct mw_daemon *d, const char *name, const char *matcher, double want)
{
	double v = NAN;

	(void)mw_poll_metric(d->port, name, matcher, POLL_TIMEOUT_MS, mw_pred_eq, want, &v);
	return v;
}

/* Each field of every event of kind and pid, as "key=JSON value" lines,
 * prefixed "e<i>." for the i-th such event (an object's members also as
 * "e<i>.key.member="); and n=<count>. */
static const char py_event_fields[] =
	"import json, sys\n"
	"d = json.load(open(sys.argv[1], 'rb'))\n"
	"m = [e for e in d['events'] if e['kind'] == sys.argv[2] and str(e['pid']) in sys.argv[3].split(',')]\n"
	"print('n=%d' % len(m))\n"
	"for i, e in enumerate(m):\n"
	"    for k, v in e.items():\n"
	"        print('e%d.%s=%s' % (i, k, json.dumps(v, sort_keys=True)))\n"
	"        for k2, v2 in (v.items() if isinstance(v, dict) else ()):\n"
	"            print('e%d.%s.%s=%s' % (i, k, k2, json.dumps(v2)))\n";

char *events_of(struct mw_daemon *d, const char *kind, const char *pids)
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
bool field(const char *out, const char *key, char *buf, size_t len)
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

void assert_field(const char *out, const char *key, const char *want)
{
	char buf[512];

	ck_assert_msg(field(out, key, buf, sizeof(buf)), "event has no %s:\n%s", key, out);
	ck_assert_msg(strcmp(buf, want) == 0, "event %s is '%s', want '%s':\n%s", key, buf, want, out);
}

long long field_ll(const char *out, const char *key)
{
	char buf[64], *end;
	long long v;

	ck_assert_msg(field(out, key, buf, sizeof(buf)), "event has no %s:\n%s", key, out);
	v = strtoll(buf, &end, 10);
	ck_assert_msg(end != buf && !*end, "event %s is '%s', not an integer", key, buf);
	return v;
}

/* The status page's table of recent kills has a row with every one of needles. */
void assert_status_row(struct mw_daemon *d, const char *const *needles)
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

/* From /dev/kmsg: the oom-kill and "Killed process" lines for pid, and the
 * last "memory: usage" line before them. */
bool kernel_oom_lines(const char *log, pid_t pid, struct kernel_oom *k)
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

/* One OOM kill in child (whose ancestor oom_cg has the limit): the daemon's
 * event and counters against the kernel's lines. */
void oom_kill_judged(const struct mw_memcg *oom_cg, const struct mw_memcg *victim_cg, int score_adj)
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
