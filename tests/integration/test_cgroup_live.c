// SPDX-License-Identifier: GPL-2.0
/* The cgroup collector on a real memory cgroup of this run with a 64 MiB
 * limit and workloads in it, and its two sources (the BPF cgroup iterator
 * and cgroupfs) on the same tree, against the cgroup's own files. On the
 * host's hierarchy, v1 or cgroup2 (mw_memcg_root); where the two differ in
 * what the kernel offers, each test says how. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cgroup_test.h"
/* ---- a real memory cgroup ---- */

static const char *live_root; /* where the memory controller is */
static bool live_v1;
static char live_path[512];   /* our cgroup */
static char live_name[64];    /* "/memwatch-cgtest-PID" */
static char sparse_path[512];
static char child_path[600];  /* our cgroup's child, in the sources test */
/* Where the workloads run: our cgroup, except in the sources test on
 * cgroup2, where a cgroup whose children have the memory controller holds no
 * processes ("no internal processes"): there, its leaf child work. */
static char work_path[600];
/* Empty children beside it: more records than a cgroup iterator's seq_file
 * holds in one read (32 KiB, ~580 of them). */
#define BULK_CGROUPS 700

static bool find_live_root(void)
{
	bool v2;

	if (!mw_memcg_root(&live_root, &v2))
		return false;
	live_v1 = !v2;
	return true;
}

/* Kills what a cgroup of ours still holds and removes it (bounded). */
static void remove_cgroup(const char *path)
{
	if (!mw_memcg_remove(path))
		fprintf(stderr, "could not remove %s: %m\n", path);
}

/* Kills whatever is left in our cgroup and removes it; also after a failed
 * test (an unchecked fixture runs in the parent process). */
void live_cleanup(void)
{
	char path[700];
	int i;

	if (!live_path[0] || access(live_path, F_OK) < 0)
		return;
	/* The sources test's children, if it stopped half-way. */
	remove_cgroup(child_path);
	snprintf(path, sizeof(path), "%s/capped", live_path);
	(void)rmdir(path);
	if (strcmp(work_path, live_path) != 0)
		remove_cgroup(work_path);
	for (i = 0; i < BULK_CGROUPS; i++) {
		snprintf(path, sizeof(path), "%s/bulk%d", live_path, i);
		(void)rmdir(path);
	}
	snprintf(path, sizeof(path), "%s/late", live_path);
	(void)rmdir(path);
	snprintf(path, sizeof(path), "%s/renamed", live_path);
	(void)rmdir(path);
	remove_cgroup(live_path);
	if (sparse_path[0])
		unlink(sparse_path);
}

static void join_cgroup(void)
{
	char procs[640], pid[32];

	snprintf(procs, sizeof(procs), "%s/cgroup.procs", work_path);
	snprintf(pid, sizeof(pid), "%d\n", getpid());
	if (mw_write_text(procs, pid) < 0)
		_exit(3);
}

/* A child in the cgroup holding 48 MiB of touched anonymous memory until killed. */
static pid_t spawn_anon_holder(void)
{
	int fds[2];
	pid_t pid;
	char c;

	ck_assert_int_eq(pipe(fds), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		size_t len = 48u << 20;
		char *p;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(fds[0]);
		join_cgroup();
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			_exit(4);
		memset(p, 0x5a, len);
		(void)!write(fds[1], "x", 1);
		for (;;)
			pause();
	}
	close(fds[1]);
	ck_assert_msg(read(fds[0], &c, 1) == 1, "the 48 MiB child died before touching its memory");
	close(fds[0]);
	return pid;
}

/* A child in the cgroup reading a 1 GiB sparse file: page cache far over the limit. */
static void run_reader(void)
{
	int status, fd;
	pid_t pid;

	snprintf(sparse_path, sizeof(sparse_path), "%s/sparse-1g", mw_tmp_root());
	fd = open(sparse_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, 1LL << 30), 0);
	close(fd);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		static char chunk[1 << 20];
		ssize_t n;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		join_cgroup();
		fd = open(sparse_path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			_exit(5);
		while ((n = read(fd, chunk, sizeof(chunk))) > 0)
			;
		_exit(n < 0 ? 6 : 0);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the reader failed: status 0x%x", status);
}

/* The run's cgroup with a limit, made by mw_memcg_make (v1
 * memory.limit_in_bytes, v2 memory.max); fails without a hierarchy. */
static void make_live_cgroup(struct mw_memcg *cg, const char *limit)
{
	ck_assert_msg(find_live_root(), "no writable memory cgroup hierarchy (v1 memory, or cgroup2 with memory)");
	ck_assert_msg(access(live_path, F_OK) < 0, "%s is there already", live_path);
	ck_assert_msg(mw_memcg_make(cg, NULL, live_name + 1, limit), "cannot make %s with a limit of %s: %m", live_path,
		      limit);
	ck_assert_str_eq(cg->path, live_path);
}

START_TEST(test_live_cgroup)
{
	char text[1024], matcher[256], *conf, *body;
	const char *event;
	struct mw_daemon *d;
	struct mw_memcg cg;
	double v = NAN, window, t0;
	long long kernel_hits;
	pid_t holder;
	int status;

	make_live_cgroup(&cg, "67108864");
	snprintf(work_path, sizeof(work_path), "%s", live_path);

	/* Only ours: other tests may run cgroups of their own meanwhile. */
	snprintf(text, sizeof(text), "[daemon]\nwindow = 1s\nquiet_read_interval = 0\n\n[collector.cgroup]\ninclude = %s\n", live_name);
	conf = temp_config(text);
	d = start_or_fail(conf);
	free(conf);
	snprintf(matcher, sizeof(matcher), "cgroup=\"%s\"", live_name);

	holder = spawn_anon_holder();
	ck_assert_msg(mw_poll_metric(d->port, "memwatch_cgroup_memory_usage_bytes", matcher, POLL_TIMEOUT_MS,
				     mw_pred_gt, 46 * MIB, &v),
		      "usage of %s is %g, want > 46 MiB", live_name, v);
	run_reader();

	/* The limit met: v1 counts failed charges (memory.failcnt), v2 the
	 * times usage was about to pass memory.max (memory.events max); the
	 * daemon exports the kernel's name for each. Nothing charges now (the
	 * holder is idle): the kernel's count stands still and the daemon's
	 * must reach it. */
	event = live_v1 ? "failcnt" : "max";
	kernel_hits = mw_memcg_limit_hits(live_path);
	ck_assert_msg(kernel_hits > 0, "the kernel counts %lld limit hits (%s) in %s after the reader", kernel_hits, event,
		      live_path);
	snprintf(text, sizeof(text), "cgroup=\"%s\",event=\"%s\"", live_name, event);
	ck_assert_msg(mw_poll_metric(d->port, "memwatch_cgroup_memory_events_total", text, POLL_TIMEOUT_MS, mw_pred_eq,
				     (double)kernel_hits, &v),
		      "memwatch_cgroup_memory_events_total{%s} is %g, the kernel's %s says %lld", text, v,
		      live_v1 ? "memory.failcnt" : "memory.events", kernel_hits);
	snprintf(text, sizeof(text), "cgroup=\"%s\",event=\"%s\"", live_name, live_v1 ? "max" : "failcnt");
	body = mw_scrape(d->port);
	ck_assert_ptr_nonnull(body);
	expect_absent(body, "memwatch_cgroup_memory_events_total", text);
	free(body);
	body = mw_scrape(d->port);
	ck_assert_ptr_nonnull(body);
	expect(body, "memwatch_cgroup_memory_limit_bytes", matcher, 67108864);
	v = metric_or_fail(body, "memwatch_cgroup_memory_usage_bytes", matcher);
	ck_assert_msg(v > 46 * MIB && v <= 64 * MIB, "usage %g not between 46 and 64 MiB", v);
	v = metric_or_fail(body, "memwatch_cgroup_memory_working_set_bytes", matcher);
	ck_assert_msg(v > 40 * MIB && v <= 64 * MIB, "working set %g not between 40 and 64 MiB", v);
	ck_assert(metric_or_fail(body, "memwatch_cgroup_memory_usage_ratio", matcher) > 0.7);
	/* Only our cgroup is included. */
	expect(body, "memwatch_cgroups_discovered", NULL, 1);
	expect_absent(body, "memwatch_cgroup_memory_usage_bytes", "cgroup=\"/\"");
	expect_promtool_ok(body);
	window = metric_or_fail(body, "memwatch_window_seconds", NULL);
	if (mw_metric(body, "memwatch_collector_up", "collector=\"reclaim\"", &v, NULL, 0) && v == 1) {
		free(body);
		ck_assert_msg(mw_poll_metric(d->port, "memwatch_cgroup_reclaims_total", matcher, POLL_TIMEOUT_MS,
					     mw_pred_gt, 0, &v),
			      "memwatch_cgroup_reclaims_total{%s} is %g, want > 0", matcher, v);
	} else {
		fprintf(stderr, "reclaim collector not up: memwatch_cgroup_reclaims_total not checked\n");
		free(body);
	}

	/* Remove it: its series go within two windows. */
	kill(holder, SIGKILL);
	ck_assert_int_eq(waitpid(holder, &status, 0), holder);
	live_cleanup();
	ck_assert_msg(access(live_path, F_OK) < 0, "cannot remove %s", live_path);
	/* Judged by the windows' own end times, not by when a scrape came
	 * back: on a loaded machine scrapes lag, windows do not move. */
	t0 = real_now();
	for (;;) {
		double end;
		bool present;

		body = mw_scrape(d->port);
		ck_assert_ptr_nonnull(body);
		present = mw_metric(body, "memwatch_cgroup_memory_usage_bytes", matcher, NULL, NULL, 0);
		end = metric_or_fail(body, "memwatch_window_end_timestamp_seconds", NULL);
		if (!present) {
			ck_assert_msg(end - t0 <= 2 * window, "%s was still in the window that ended %.2f s after rmdir",
				      live_name, end - t0);
			expect(body, "memwatch_cgroups_discovered", NULL, 0);
			expect_promtool_ok(body);
		} else {
			ck_assert_msg(end - t0 <= 2 * window, "%s still exported in the window that ended %.2f s after rmdir",
				      live_name, end - t0);
		}
		free(body);
		if (!present)
			break;
		mw_sleep_ms(50);
	}
	mw_assert_clean_stop(d);
}
END_TEST

/* ---- the BPF cgroup iterator and cgroupfs on the same tree ---- */

/* A child of ours with a 16 MiB limit, killed by the memcg OOM killer
 * while touching 32 MiB: failcnt and oom_kill of its own. */
static void run_oom_victim(void)
{
	int status;
	pid_t pid;

	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		char procs[700], me[32];
		size_t len = 32u << 20;
		char *p;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		snprintf(procs, sizeof(procs), "%s/cgroup.procs", child_path);
		snprintf(me, sizeof(me), "%d\n", getpid());
		if (mw_write_text(procs, me) < 0)
			_exit(3);
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			_exit(4);
		memset(p, 0x5a, len);
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
		      "the 32 MiB child of a 16 MiB cgroup was not OOM-killed: status 0x%x", status);
}

/* One cgroup as its own files say, read by the test: the independent count.
 * v1: memory.usage_in_bytes, limit_in_bytes, failcnt, oom_control's oom_kill
 * and under_oom. cgroup2: memory.current, memory.max, memory.high and every
 * key of memory.events; it has no under_oom. NAN: the daemon must export
 * no such series (a "max", a key this kernel does not print). */
static const char *const v2_events[] = { "low", "high", "max", "oom", "oom_kill", "oom_group_kill" };
#define N_V2_EVENTS (sizeof(v2_events) / sizeof(v2_events[0]))

struct cgroup_files {
	double usage, limit, high, limit_hits, oom_kill, under_oom;
	double events[N_V2_EVENTS];
};

/* A number, or NAN when the file says "max" or has no key. */
static double file_number(const char *dir, const char *name, const char *key)
{
	char path[700], *text, *p;
	double v = NAN;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	text = mw_read_file(path, NULL);
	ck_assert_msg(text != NULL, "cannot read %s", path);
	p = text;
	if (key) {
		/* At the start of a line, so that "oom_kill " is not found in "oom_group_kill ". */
		size_t n = strlen(key);
		char *line = text;

		for (p = NULL; line && !p; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
			if (strncmp(line, key, n) == 0)
				p = line + n;
	}
	if (p && strncmp(p, "max", 3) != 0)
		v = strtod(p, NULL);
	free(text);
	return v;
}

static struct cgroup_files read_cgroup_files(const char *dir)
{
	struct cgroup_files f;
	char key[32];

	if (!live_v1) {
		f = (struct cgroup_files){
			.usage = file_number(dir, "memory.current", NULL),
			.limit = file_number(dir, "memory.max", NULL),
			.high = file_number(dir, "memory.high", NULL),
			.limit_hits = (double)mw_memcg_limit_hits(dir),
			.oom_kill = (double)mw_memcg_oom_kills(dir),
			.under_oom = NAN,
		};
		for (size_t i = 0; i < N_V2_EVENTS; i++) {
			snprintf(key, sizeof(key), "%s ", v2_events[i]);
			f.events[i] = file_number(dir, "memory.events", key);
		}
		return f;
	}
	f = (struct cgroup_files){
		.usage = file_number(dir, "memory.usage_in_bytes", NULL),
		.limit = file_number(dir, "memory.limit_in_bytes", NULL),
		.high = NAN,
		.limit_hits = (double)mw_memcg_limit_hits(dir),
		.oom_kill = (double)mw_memcg_oom_kills(dir),
		.under_oom = file_number(dir, "memory.oom_control", "under_oom "),
	};
	/* v1 prints no "max": no limit is the page counter's maximum in bytes,
	 * LONG_MAX rounded down to a page (9223372036854771712 with 4 KiB). */
	if (f.limit > 9.2e18)
		f.limit = NAN;
	for (size_t i = 0; i < N_V2_EVENTS; i++)
		f.events[i] = NAN;
	return f;
}

/* The daemon's figures for the cgroup named name equal the files'; else why
 * says which not. The limit hits are event="failcnt" on v1, "max" on v2,
 * where every key of memory.events is compared too. */
static bool daemon_matches(const char *body, const char *name, const struct cgroup_files *f, char *why, size_t len)
{
	const char *hits_event = live_v1 ? "failcnt" : "max";
	char m[256], me[300];
	double usage = NAN, limit = NAN, high = NAN, hits = NAN, oom_kill = NAN, under_oom = NAN;
	bool ok;
	int at;

	snprintf(m, sizeof(m), "cgroup=\"%s\"", name);
	mw_metric(body, "memwatch_cgroup_memory_usage_bytes", m, &usage, NULL, 0);
	mw_metric(body, "memwatch_cgroup_memory_limit_bytes", m, &limit, NULL, 0);
	mw_metric(body, "memwatch_cgroup_memory_high_bytes", m, &high, NULL, 0);
	mw_metric(body, "memwatch_cgroup_memory_under_oom", m, &under_oom, NULL, 0);
	snprintf(me, sizeof(me), "%s,event=\"%s\"", m, hits_event);
	mw_metric(body, "memwatch_cgroup_memory_events_total", me, &hits, NULL, 0);
	snprintf(me, sizeof(me), "%s,event=\"oom_kill\"", m);
	mw_metric(body, "memwatch_cgroup_memory_events_total", me, &oom_kill, NULL, 0);
	at = snprintf(why, len, "%s: usage %.0f (file %.0f), limit %.0f (%.0f), high %.0f (%.0f), %s %.0f (%.0f), "
		      "oom_kill %.0f (%.0f), under_oom %.0f (%.0f)", name, usage, f->usage, limit, f->limit, high, f->high,
		      hits_event, hits, f->limit_hits, oom_kill, f->oom_kill, under_oom, f->under_oom);
	ok = usage == f->usage && mw_same_value(limit, f->limit) && mw_same_value(high, f->high) && hits == f->limit_hits &&
	     oom_kill == f->oom_kill && mw_same_value(under_oom, f->under_oom);
	for (size_t i = 0; !live_v1 && i < N_V2_EVENTS; i++) {
		double v = NAN;

		snprintf(me, sizeof(me), "%s,event=\"%s\"", m, v2_events[i]);
		mw_metric(body, "memwatch_cgroup_memory_events_total", me, &v, NULL, 0);
		if (at >= 0 && (size_t)at < len)
			at += snprintf(why + at, len - (size_t)at, ", %s %.0f (%.0f)", v2_events[i], v, f->events[i]);
		ok = ok && mw_same_value(v, f->events[i]);
	}
	return ok;
}

/* ---- every bulk cgroup, from one parse of each scrape ---- */

/* The samples of the compared families for cgroups below ours, by
 * "family|cgroup|event" (event "" for the gauges), sorted. */
struct sample {
	char key[400];
	double v;
};

static const char *const bulk_families[] = {
	"memwatch_cgroup_memory_usage_bytes",
	"memwatch_cgroup_memory_limit_bytes",
	"memwatch_cgroup_memory_high_bytes",
	"memwatch_cgroup_memory_events_total",
};

static int cmp_sample(const void *a, const void *b)
{
	return strcmp(((const struct sample *)a)->key, ((const struct sample *)b)->key);
}

static struct sample *parse_samples(const char *body, size_t *n)
{
	size_t cap = 8192, len = strlen(live_name);
	struct sample *v = malloc(cap * sizeof(*v));
	const char *line;

	ck_assert_ptr_nonnull(v);
	*n = 0;
	for (line = body; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		char labels[1024], cg[200], event[64] = "";
		const char *brace = strchr(line, '{'), *end, *nl = strchr(line, '\n');
		size_t f;

		if (!brace || (nl && brace > nl))
			continue;
		for (f = 0; f < sizeof(bulk_families) / sizeof(bulk_families[0]); f++)
			if ((size_t)(brace - line) == strlen(bulk_families[f]) &&
			    strncmp(line, bulk_families[f], (size_t)(brace - line)) == 0)
				break;
		if (f == sizeof(bulk_families) / sizeof(bulk_families[0]))
			continue;
		end = strstr(brace, "} ");
		if (!end || (nl && end > nl) || (size_t)(end - brace - 1) >= sizeof(labels))
			continue;
		snprintf(labels, sizeof(labels), "%.*s", (int)(end - brace - 1), brace + 1);
		if (!mw_label(labels, "cgroup", cg, sizeof(cg)) || strncmp(cg, live_name, len) != 0 || cg[len] != '/')
			continue;
		(void)mw_label(labels, "event", event, sizeof(event));
		if (*n == cap) {
			cap *= 2;
			v = realloc(v, cap * sizeof(*v));
			ck_assert_ptr_nonnull(v);
		}
		snprintf(v[*n].key, sizeof(v[*n].key), "%s|%s|%s", bulk_families[f], cg, event);
		v[*n].v = strtod(end + 2, NULL);
		(*n)++;
	}
	qsort(v, *n, sizeof(*v), cmp_sample);
	return v;
}

static double sample_of(const struct sample *v, size_t n, const char *family, const char *cg, const char *event)
{
	struct sample key;
	const struct sample *hit;

	snprintf(key.key, sizeof(key.key), "%s|%s|%s", family, cg, event);
	hit = bsearch(&key, v, n, sizeof(*v), cmp_sample);
	return hit ? hit->v : NAN;
}

struct figure {
	const char *family, *event;
	double want;
};

/* Every bulk cgroup (empty, idle) has, in both daemons' scrapes, the
 * figures its files print: usage, limit, high and each event (v1: failcnt
 * and oom_kill). Returns how many figures were compared; why says the
 * first that differs. */
static size_t bulk_mismatches(const char *body_bpf, const char *body_fs, size_t *compared, char *why, size_t len)
{
	size_t n_bpf, n_fs, bad = 0;
	struct sample *bpf = parse_samples(body_bpf, &n_bpf), *fs = parse_samples(body_fs, &n_fs);

	*compared = 0;
	for (int i = 0; i < BULK_CGROUPS; i++) {
		char path[700], cg[128];
		struct cgroup_files f;
		struct figure fig[3 + N_V2_EVENTS + 2];
		size_t k = 0;

		snprintf(cg, sizeof(cg), "%s/bulk%d", live_name, i);
		snprintf(path, sizeof(path), "%s/bulk%d", live_path, i);
		f = read_cgroup_files(path);
		fig[k++] = (struct figure){ "memwatch_cgroup_memory_usage_bytes", "", f.usage };
		fig[k++] = (struct figure){ "memwatch_cgroup_memory_limit_bytes", "", f.limit };
		fig[k++] = (struct figure){ "memwatch_cgroup_memory_high_bytes", "", f.high };
		if (live_v1) {
			fig[k++] = (struct figure){ "memwatch_cgroup_memory_events_total", "failcnt", f.limit_hits };
			fig[k++] = (struct figure){ "memwatch_cgroup_memory_events_total", "oom_kill", f.oom_kill };
		} else {
			for (size_t e = 0; e < N_V2_EVENTS; e++)
				fig[k++] = (struct figure){ "memwatch_cgroup_memory_events_total", v2_events[e], f.events[e] };
		}
		for (size_t j = 0; j < k; j++) {
			double a = sample_of(bpf, n_bpf, fig[j].family, cg, fig[j].event);
			double b = sample_of(fs, n_fs, fig[j].family, cg, fig[j].event);

			(*compared)++;
			if (mw_same_value(a, fig[j].want) && mw_same_value(b, fig[j].want))
				continue;
			if (!bad++)
				snprintf(why, len, "%s %s%s%s: source=bpf %.0f, source=cgroupfs %.0f, files %.0f", cg,
					 fig[j].family, fig[j].event[0] ? " " : "", fig[j].event, a, b, fig[j].want);
		}
	}
	free(bpf);
	free(fs);
	return bad;
}

static void expect_cgroup_mode(const char *body, const char *mode)
{
	char matcher[128];
	double v = NAN;

	snprintf(matcher, sizeof(matcher), "collector=\"cgroup\",state=\"active\",mode=\"%s\"", mode);
	ck_assert_msg(mw_metric(body, "memwatch_collector_info", matcher, &v, NULL, 0) && v == 1,
		      "memwatch_collector_info{%s} is not 1", matcher);
}

/* Waits (bounded: a hang, not a measure) until d exports the cgroup named
 * name, or not (present), and fails if a window that ended more than two
 * windows after the change at t0 did not: judged by the windows' own end
 * times (each stamped before its walk), not by when a scrape came back,
 * since the scrapes of 700 cgroups lag under emulation and windows do not. */
static void expect_exported_by(struct mw_daemon *d, const char *source, const char *name, bool present, double t0,
			       const char *op)
{
	int64_t deadline = mw_mono_ms() + POLL_TIMEOUT_MS;
	char matcher[320];

	snprintf(matcher, sizeof(matcher), "cgroup=\"%s\"", name);
	for (;;) {
		char *body = mw_scrape(d->port);
		double end, window;
		bool ok;

		ck_assert_ptr_nonnull(body);
		ok = mw_metric(body, "memwatch_cgroup_memory_usage_bytes", matcher, NULL, NULL, 0) == present;
		end = metric_or_fail(body, "memwatch_window_end_timestamp_seconds", NULL);
		window = metric_or_fail(body, "memwatch_window_seconds", NULL);
		free(body);
		if (ok)
			return;
		ck_assert_msg(end - t0 <= 2 * window, "%s: %s still %s in source=%s's window that ended %.2f s after it",
			      op, name, present ? "not exported" : "exported", source, end - t0);
		ck_assert_msg(mw_mono_ms() < deadline, "%s: source=%s showed no window after it in %d ms", op, source,
			      POLL_TIMEOUT_MS);
		mw_sleep_ms(100);
	}
}

/* Does op on our cgroup's child (mkdir /late, rename /late to /renamed,
 * rmdir /renamed), then expects child (a path below ours) exported, or
 * not, by both daemons within two windows. */
static void expect_tree_change(struct mw_daemon *a, struct mw_daemon *b, const char *op, const char *child,
			       bool present)
{
	char path[700], from[700], name[300];
	double t0 = real_now();

	snprintf(path, sizeof(path), "%s%s", live_path, child);
	snprintf(name, sizeof(name), "%s%s", live_name, child);
	if (strcmp(op, "mkdir") == 0) {
		ck_assert_msg(mkdir(path, 0755) == 0, "mkdir %s: %m", path);
	} else if (strcmp(op, "rename") == 0 && present) {
		snprintf(from, sizeof(from), "%s/late", live_path);
		ck_assert_msg(rename(from, path) == 0, "rename %s %s: %m", from, path);
	} else if (strcmp(op, "rmdir") == 0) {
		ck_assert_msg(rmdir(path) == 0, "rmdir %s: %m", path);
	}
	expect_exported_by(a, "bpf", name, present, t0, op);
	expect_exported_by(b, "cgroupfs", name, present, t0, op);
}

/* A window of d that read every cgroup after its read number *reads (the
 * iterator's side exports an older read for up to refresh_interval windows
 * while nothing moved): memwatch_cgroup_reads_total past it, age 0. */
static char *scrape_fresh_read(struct mw_daemon *d, double *reads)
{
	int64_t t0 = mw_mono_ms();

	for (;;) {
		char *body = mw_scrape(d->port);
		double n, age;

		ck_assert_ptr_nonnull(body);
		n = metric_or_fail(body, "memwatch_cgroup_reads_total", NULL);
		age = metric_or_fail(body, "memwatch_cgroup_age_seconds", NULL);
		if (n > *reads && age == 0) {
			*reads = n;
			return body;
		}
		free(body);
		ck_assert_msg(mw_mono_ms() - t0 < POLL_TIMEOUT_MS, "no read of the cgroups after read %.0f in %d ms",
			      *reads, POLL_TIMEOUT_MS);
		mw_sleep_ms(100);
	}
}

/* source = bpf and source = cgroupfs give every cgroup of the same tree the
 * figures its own files print. source = bpf is the cgroup iterator where
 * the kernel has one (6.1+), v1 or cgroup2, as the expectation table's
 * cgroup row for this kernel says (its mode), and cgroupfs before. */
START_TEST(test_live_sources_agree)
{
	char text[1024], child_name[128], capped_name[128], why_bpf[1024], why_fs[1024], why_bulk[512] = "", *conf;
	size_t n_bad = 0, n_compared = 0;
	struct mw_memcg live, child, capped, bulk, work;
	struct mw_expectation want;
	struct mw_daemon *bpf, *fs;
	pid_t holder;
	int status, round;
	double reads_bpf = 0, reads_fs = 0, n_cgroups;
	bool ok = false, iter = false;

	make_live_cgroup(&live, "67108864");
	snprintf(child_name, sizeof(child_name), "%s/victim", live_name);
	ck_assert_msg(mw_memcg_make(&child, &live, "victim", "16777216"), "cannot make %s: %m", child_path);
	/* Idle, with a memory.high of 8 MiB under its 12 MiB limit (cgroup2). */
	snprintf(capped_name, sizeof(capped_name), "%s/capped", live_name);
	ck_assert_msg(mw_memcg_make(&capped, &live, "capped", "12582912"), "cannot make %s/capped: %m", live_path);
	if (!live_v1) {
		snprintf(text, sizeof(text), "%s/memory.high", capped.path);
		ck_assert_msg(mw_write_text(text, "8388608\n") == 0, "cannot write %s: %m", text);
	}
	for (int i = 0; i < BULK_CGROUPS; i++) {
		snprintf(text, sizeof(text), "bulk%d", i);
		ck_assert_msg(mw_memcg_make(&bulk, &live, text, NULL), "cannot make %s/%s: %m", live_path, text);
	}
	/* Ours, its victim, capped and the bulk, and on cgroup2 the leaf the workloads run in. */
	n_cgroups = BULK_CGROUPS + 3;
	if (!live_v1) {
		ck_assert_msg(mw_memcg_make(&work, &live, "work", NULL), "cannot make %s: %m", work_path);
		n_cgroups++;
	} else {
		snprintf(work_path, sizeof(work_path), "%s", live_path);
	}
	holder = spawn_anon_holder();
	run_reader();
	run_oom_victim();

	snprintf(text, sizeof(text), "[daemon]\nwindow = 1s\nquiet_read_interval = 0\n\n[collector.cgroup]\ninclude = %s %s/*\ntop_k = 1000\nsource = bpf\n",
		 live_name, live_name);
	conf = temp_config(text);
	bpf = start_or_fail(conf);
	free(conf);
	snprintf(text, sizeof(text),
		 "[daemon]\nwindow = 1s\nquiet_read_interval = 0\n\n[collector.cgroup]\ninclude = %s %s/*\ntop_k = 1000\nsource = cgroupfs\n", live_name,
		 live_name);
	conf = temp_config(text);
	fs = start_or_fail(conf);
	free(conf);

	/* Both windows are read after the workload settled; a round that saw a
	 * window from before (or a page charged meanwhile) is tried again. */
	for (round = 0; round < 10 && !ok; round++) {
		struct cgroup_files parent, victim, idle;
		char *body_bpf, *body_fs;

		mw_sleep_ms(1100);
		body_bpf = scrape_fresh_read(bpf, &reads_bpf);
		body_fs = scrape_fresh_read(fs, &reads_fs);
		ck_assert_ptr_nonnull(body_bpf);
		ck_assert_ptr_nonnull(body_fs);
		if (round == 0) {
			double n_bpf, n_fs, open_bpf, open_fs;

			ck_assert_msg(mw_expectation("host", "cgroup", &want) == 0,
				      "no expectation row for the cgroup collector on this kernel");
			iter = strcmp(want.mode, "iter") == 0;
			expect_cgroup_mode(body_bpf, want.mode);
			expect_cgroup_mode(body_fs, "cgroupfs");
			n_bpf = metric_or_fail(body_bpf, "memwatch_cgroups_discovered", NULL);
			n_fs = metric_or_fail(body_fs, "memwatch_cgroups_discovered", NULL);
			ck_assert_msg(n_bpf == n_cgroups && n_fs == n_cgroups,
				      "cgroups discovered: source=bpf %.0f, source=cgroupfs %.0f, want %.0f", n_bpf, n_fs,
				      n_cgroups);
			open_bpf = metric_or_fail(body_bpf, "memwatch_cgroup_open_files", NULL);
			open_fs = metric_or_fail(body_fs, "memwatch_cgroup_open_files", NULL);
			if (iter)
				/* The iterator reads the four counter files of every
				 * cgroup (v1 usage, limit, failcnt, oom_control; cgroup2
				 * current, max, high, events), leaving memory.stat,
				 * memory.pressure and cgroup2's memory.peak to cgroupfs. */
				ck_assert_msg(open_fs - open_bpf >= 4 * n_bpf && open_bpf <= 3 * n_bpf,
					      "files kept open: source=bpf %.0f (want at most 3 per cgroup), "
					      "source=cgroupfs %.0f (want 4 more per cgroup) for %.0f cgroups",
					      open_bpf, open_fs, n_bpf);
			else
				ck_assert_msg(open_bpf == open_fs && open_fs >= n_fs,
					      "files kept open without an iterator, both from cgroupfs: source=bpf %.0f, "
					      "source=cgroupfs %.0f for %.0f cgroups", open_bpf, open_fs, n_fs);
		}
		parent = read_cgroup_files(live_path);
		victim = read_cgroup_files(child_path);
		idle = read_cgroup_files(capped.path);
		ck_assert_msg(victim.oom_kill == 1 && victim.limit_hits > 0,
			      "the victim's cgroup: oom_kill %.0f, limit hits %.0f", victim.oom_kill, victim.limit_hits);
		ck_assert_msg(live_v1 || idle.high == 8388608, "capped's memory.high reads %.0f, not the 8 MiB written",
			      idle.high);
		n_bad = bulk_mismatches(body_bpf, body_fs, &n_compared, why_bulk, sizeof(why_bulk));
		ok = daemon_matches(body_bpf, live_name, &parent, why_bpf, sizeof(why_bpf)) &&
		     daemon_matches(body_bpf, child_name, &victim, why_bpf, sizeof(why_bpf)) &&
		     daemon_matches(body_bpf, capped_name, &idle, why_bpf, sizeof(why_bpf)) &&
		     daemon_matches(body_fs, live_name, &parent, why_fs, sizeof(why_fs)) &&
		     daemon_matches(body_fs, child_name, &victim, why_fs, sizeof(why_fs)) &&
		     daemon_matches(body_fs, capped_name, &idle, why_fs, sizeof(why_fs));
		ok = ok && n_bad == 0;
		free(body_bpf);
		free(body_fs);
	}
	ck_assert_msg(ok, "after 10 windows the daemons still differ from cgroupfs: bpf: %s; cgroupfs: %s; bulk: %zu of "
		      "%zu figures differ (%s)", why_bpf, why_fs, n_bad, n_compared, why_bulk);
	/* Usage, limit, high and every event of each bulk cgroup, v1: 5, cgroup2: 9. */
	ck_assert_msg(n_compared == (size_t)BULK_CGROUPS * (live_v1 ? 5 : 3 + N_V2_EVENTS),
		      "compared %zu figures of %d bulk cgroups", n_compared, BULK_CGROUPS);

	/* The tree changes under the daemons: a cgroup made, renamed, removed.
	 * Each shows within two windows on both, though the BPF side reads an
	 * unchanged tree again without walking it. v1 allows the rename; cgroup2
	 * has no rename of cgroups (its kernfs ops lack one: EPERM). */
	expect_tree_change(bpf, fs, "mkdir", "/late", true);
	if (live_v1) {
		expect_tree_change(bpf, fs, "rename", "/renamed", true);
		expect_tree_change(bpf, fs, "rename", "/late", false);
		expect_tree_change(bpf, fs, "rmdir", "/renamed", false);
	} else {
		char from[700], to[700];

		snprintf(from, sizeof(from), "%s/late", live_path);
		snprintf(to, sizeof(to), "%s/renamed", live_path);
		ck_assert_msg(rename(from, to) < 0 && errno == EPERM, "rename of a cgroup2 cgroup: %s, want EPERM",
			      strerror(errno));
		expect_tree_change(bpf, fs, "rmdir", "/late", false);
	}
	kill(holder, SIGKILL);
	ck_assert_int_eq(waitpid(holder, &status, 0), holder);
	mw_assert_clean_stop(bpf);
	mw_assert_clean_stop(fs);
	live_cleanup();
}
END_TEST

void live_init(void)
{
	/* Known to the parent, so that its unchecked teardown can clean up after a failed child. */
	snprintf(live_name, sizeof(live_name), "/memwatch-cgtest-%d", (int)getpid());
	if (find_live_root()) {
		snprintf(live_path, sizeof(live_path), "%s%s", live_root, live_name);
		snprintf(child_path, sizeof(child_path), "%s/victim", live_path);
		snprintf(work_path, sizeof(work_path), "%s%s", live_path, live_v1 ? "" : "/work");
	}
}

TCase *live_tcase(void)
{
	TCase *tc = cgroup_tcase("live");

	tcase_add_unchecked_fixture(tc, NULL, live_cleanup);
	tcase_add_test(tc, test_live_cgroup);
	tcase_add_test(tc, test_live_sources_agree);
	return tc;
}
