// SPDX-License-Identifier: GPL-2.0
/* cgroup v2 through the BPF cgroup iterator (daemon/collectors/cgroup_bpf_v2.c)
 * against the kernel's own files, value for value: memory.current,
 * memory.max, memory.high, memory.events, memory.stat (inactive_file and the
 * workingset counters) and memory.pressure of every cgroup the daemon exports.
 * The test's own cgroups hold steady workloads (anonymous memory, page cache,
 * one OOM kill behind them): there the daemon's figures must equal the files
 * read before and after its window, which must agree with each other. Every
 * other cgroup (the guest's own, moving) is bounded: a counter between the
 * files read before and after, a gauge equal where the two reads agree. The
 * collector's mode (which field groups BPF serves on this kernel) must be
 * tests/expectations/cgroup_path.tsv's. Needs root and cgroup2 with the
 * memory controller (tests/system's system-v2); elsewhere it exits 77. */
#include <check.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "helpers.h"

#define MiB (1024UL * 1024UL)
#define WINDOW_SEC 2
#define WINDOW_TIMEOUT_MS 30000
#define ATTEMPTS 8
#define MAX_CGROUPS 256
#define N_FIELDS 18

static pid_t runner_pid;
static const char *memcg_root;
static struct mw_memcg parent, cgs[3];
static pid_t kids[3] = { -1, -1, -1 };

/* One cgroup's figures as the daemon exports them (bytes, counts, seconds). */
static const struct field {
	const char *metric, *matcher; /* extra label pair, or NULL */
	bool counter;
} fields[N_FIELDS] = {
	{ "memwatch_cgroup_memory_usage_bytes", NULL, false },
	{ "memwatch_cgroup_memory_limit_bytes", NULL, false },
	{ "memwatch_cgroup_memory_high_bytes", NULL, false },
	{ "memwatch_cgroup_memory_working_set_bytes", NULL, false },
	{ "memwatch_cgroup_memory_events_total", "event=\"low\"", true },
	{ "memwatch_cgroup_memory_events_total", "event=\"high\"", true },
	{ "memwatch_cgroup_memory_events_total", "event=\"max\"", true },
	{ "memwatch_cgroup_memory_events_total", "event=\"oom\"", true },
	{ "memwatch_cgroup_memory_events_total", "event=\"oom_kill\"", true },
	{ "memwatch_cgroup_memory_events_total", "event=\"oom_group_kill\"", true },
	{ "memwatch_cgroup_memory_refaults_total", "type=\"anon\"", true },
	{ "memwatch_cgroup_memory_refaults_total", "type=\"file\"", true },
	{ "memwatch_cgroup_memory_refault_activations_total", "type=\"anon\"", true },
	{ "memwatch_cgroup_memory_refault_activations_total", "type=\"file\"", true },
	{ "memwatch_cgroup_memory_refault_restores_total", "type=\"anon\"", true },
	{ "memwatch_cgroup_memory_refault_restores_total", "type=\"file\"", true },
	{ "memwatch_cgroup_pressure_memory_some_seconds_total", NULL, true },
	{ "memwatch_cgroup_pressure_memory_full_seconds_total", NULL, true },
};

/* The same figures from the cgroup's files; NAN: the file does not print it
 * (no limit: "max"). */
struct figures {
	double v[N_FIELDS];
	bool ok;
};

static bool write_text(const char *dir, const char *name, const char *text)
{
	char path[512];
	bool ok;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
	close(fd);
	return ok;
}

static bool read_text(const char *dir, const char *name, char *buf, size_t len)
{
	char path[512];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return true;
}

static double one_value(const char *dir, const char *name)
{
	char buf[64];

	if (!read_text(dir, name, buf, sizeof(buf)))
		return -1;
	return strncmp(buf, "max", 3) == 0 ? NAN : strtod(buf, NULL);
}

/* "key value" lines; -1 when absent. */
static double keyed(const char *text, const char *key)
{
	size_t n = strlen(key);

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, key, n) == 0 && p[n] == ' ')
			return strtod(p + n + 1, NULL);
	return -1;
}

static double pressure_total(const char *text, const char *line)
{
	const char *p = strstr(text, line), *t;

	t = p ? strstr(p, "total=") : NULL;
	return t ? strtod(t + 6, NULL) / 1e6 : -1;
}

static void read_figures(const char *dir, struct figures *f)
{
	static char stat[16384];
	char events[512], pressure[512];
	static const char *const event_keys[] = { "low", "high", "max", "oom", "oom_kill", "oom_group_kill" };
	static const char *const ws_keys[] = { "workingset_refault_anon", "workingset_refault_file",
					       "workingset_activate_anon", "workingset_activate_file",
					       "workingset_restore_anon", "workingset_restore_file" };
	double usage;

	f->ok = read_text(dir, "memory.events", events, sizeof(events)) &&
		read_text(dir, "memory.stat", stat, sizeof(stat)) &&
		read_text(dir, "memory.pressure", pressure, sizeof(pressure));
	usage = one_value(dir, "memory.current");
	f->ok = f->ok && usage >= 0;
	if (!f->ok)
		return;
	f->v[0] = usage;
	f->v[1] = one_value(dir, "memory.max");
	f->v[2] = one_value(dir, "memory.high");
	f->v[3] = usage > keyed(stat, "inactive_file") ? usage - keyed(stat, "inactive_file") : 0;
	for (int i = 0; i < 6; i++)
		f->v[4 + i] = keyed(events, event_keys[i]);
	for (int i = 0; i < 6; i++)
		f->v[10 + i] = keyed(stat, ws_keys[i]);
	f->v[16] = pressure_total(pressure, "some ");
	f->v[17] = pressure_total(pressure, "full ");
}

static bool same(double a, double b)
{
	if (isnan(a) || isnan(b))
		return isnan(a) && isnan(b);
	return fabs(a - b) <= 1e-6 * (fabs(a) > 1 ? fabs(a) : 1);
}

/* The daemon's figure i of the cgroup labelled label; NAN: not exported. */
static double exported(const char *body, const char *label, int i)
{
	char matcher[512];
	double v;

	snprintf(matcher, sizeof(matcher), "cgroup=\"%s\"%s%s", label, fields[i].matcher ? "," : "",
		 fields[i].matcher ? fields[i].matcher : "");
	return mw_metric(body, fields[i].metric, matcher, &v, NULL, 0) ? v : NAN;
}

static double realtime(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char *window_after(struct mw_daemon *d, double after)
{
	int64_t deadline = mw_mono_ms() + WINDOW_TIMEOUT_MS;
	double end;

	for (;;) {
		char *body = mw_scrape(d->port);

		if (body && mw_metric(body, "memwatch_window_end_timestamp_seconds", NULL, &end, NULL, 0) && end > after)
			return body;
		free(body);
		ck_assert_msg(mw_running(d), "memwatchd exited while waiting for a window");
		ck_assert_msg(mw_mono_ms() < deadline, "no window ending after %.3f was published", after);
		mw_sleep_ms(50);
	}
}

/* In cg: anon_mib of anonymous memory and file_mib of page cache (a file
 * written in /tmp), then sleep; or, with anon_mib past the limit, die of an
 * OOM kill. */
static pid_t workload(const struct mw_memcg *cg, size_t anon_mib, size_t file_mib)
{
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		char procs[300], me[32], file[64], block[4096];
		char *p;
		int fd;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg->path);
		snprintf(me, sizeof(me), "%d\n", getpid());
		fd = open(procs, O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, me, strlen(me)) < 0)
			_exit(3);
		close(fd);
		snprintf(file, sizeof(file), "/tmp/memwatch-v2bpf-%d", getpid());
		fd = open(file, O_CREAT | O_RDWR | O_TRUNC | O_CLOEXEC, 0600);
		memset(block, 'x', sizeof(block));
		for (size_t i = 0; fd >= 0 && i < file_mib * MiB / sizeof(block); i++)
			if (write(fd, block, sizeof(block)) < 0)
				_exit(4);
		unlink(file);
		p = mmap(NULL, anon_mib * MiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			_exit(5);
		for (size_t i = 0; i < anon_mib * MiB; i += 4096)
			p[i] = 1;
		for (;;)
			pause();
	}
	return pid;
}

/* The cgroups the daemon exported, by label (not "other"). */
static size_t exported_labels(const char *body, char labels[][256], size_t max)
{
	const char *name = "memwatch_cgroup_memory_usage_bytes{";
	size_t n = 0;

	for (const char *p = strstr(body, name); p && n < max; p = strstr(p + 1, name)) {
		char raw[1024];
		const char *end = strchr(p, '}');
		size_t len = end ? (size_t)(end - p - strlen(name)) : 0;

		if (!end || len >= sizeof(raw))
			continue;
		memcpy(raw, p + strlen(name), len);
		raw[len] = '\0';
		if (mw_label(raw, "cgroup", labels[n], sizeof(labels[n])) && strcmp(labels[n], "other") != 0)
			n++;
	}
	return n;
}

START_TEST(test_bpf_agrees_with_files)
{
	static char labels[MAX_CGROUPS][256];
	static struct figures before[MAX_CGROUPS], after[MAX_CGROUPS];
	char name[64], conf[512], mode[64], want[64], info[256], *path, *body = NULL;
	struct mw_daemon *d;
	size_t n = 0, checked_other = 0;
	int attempt, status;

	snprintf(name, sizeof(name), "memwatch-v2bpf-%d", (int)runner_pid);
	ck_assert_msg(mw_memcg_make(&parent, NULL, name, NULL), "making %s: %m", name);
	ck_assert(mw_memcg_make(&cgs[0], &parent, "steady", "64M"));
	ck_assert(mw_memcg_make(&cgs[1], &parent, "high", NULL));
	ck_assert(mw_memcg_make(&cgs[2], &parent, "oom", "16M"));
	ck_assert(write_text(cgs[1].path, "memory.high", "200M"));
	kids[0] = workload(&cgs[0], 8, 4);
	kids[1] = workload(&cgs[1], 4, 2);
	kids[2] = workload(&cgs[2], 32, 0); /* past memory.max, no swap: OOM-killed */
	ck_assert(waitpid(kids[2], &status, 0) == kids[2]);
	kids[2] = -1;
	ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "the OOM workload was not killed (%#x)", status);
	mw_sleep_ms(3000); /* touched, and the PSI averaging (2 s) has folded the stalls in */

	snprintf(conf, sizeof(conf),
		 "[daemon]\nwindow = %ds\n\n[collector.cgroup]\ntop_k = %d\nrefresh_interval = 1\nstat_interval = 1\n",
		 WINDOW_SEC, MAX_CGROUPS - 1);
	path = mw_write_temp_file("memwatchd.conf", conf);
	ck_assert_ptr_nonnull(path);
	d = mw_start(path, NULL, false);
	free(path);
	ck_assert_msg(d != NULL, "memwatchd did not start (log above)");

	body = window_after(d, 0);
	ck_assert_msg(mw_metric(body, "memwatch_collector_info", "collector=\"cgroup\"", NULL, info, sizeof(info)) &&
			      mw_label(info, "mode", mode, sizeof(mode)),
		      "no memwatch_collector_info{collector=\"cgroup\"}");
	fprintf(stderr, "cgroup collector mode: %s\n", mode);
	ck_assert_msg(strncmp(mode, "iter", 4) == 0, "the cgroup2 tree is not read by the iterator: mode %s", mode);
	free(body);

	for (attempt = 0; attempt < ATTEMPTS; attempt++) {
		double t0;
		bool steady = true;

		body = window_after(d, 0);
		n = exported_labels(body, labels, MAX_CGROUPS);
		free(body);
		for (size_t i = 0; i < n; i++) {
			char dir[512];

			snprintf(dir, sizeof(dir), "%s%s", memcg_root, labels[i]);
			read_figures(dir, &before[i]);
		}
		t0 = realtime();
		body = window_after(d, t0);
		for (size_t i = 0; i < n; i++) {
			char dir[512];

			snprintf(dir, sizeof(dir), "%s%s", memcg_root, labels[i]);
			read_figures(dir, &after[i]);
			if (strncmp(labels[i], parent.label, strlen(parent.label)) == 0)
				for (int k = 0; k < N_FIELDS; k++)
					steady = steady && before[i].ok && after[i].ok && same(before[i].v[k], after[i].v[k]);
		}
		if (steady)
			break;
		free(body);
		body = NULL;
	}
	ck_assert_msg(attempt < ATTEMPTS, "the test's cgroups never held still across a window");

	for (size_t i = 0; i < n; i++) {
		bool ours = strncmp(labels[i], parent.label, strlen(parent.label)) == 0;

		if (!before[i].ok || !after[i].ok)
			continue; /* gone in between */
		for (int k = 0; k < N_FIELDS; k++) {
			double v = exported(body, labels[i], k), lo = before[i].v[k], hi = after[i].v[k];

			if (fields[k].counter && !ours && lo >= 0 && hi >= 0 && !isnan(v)) {
				ck_assert_msg(v >= lo - 1e-6 && v <= hi + 1e-6, "%s %s{%s}: %.9g not within the files' %.9g..%.9g",
					      labels[i], fields[k].metric, fields[k].matcher ? fields[k].matcher : "", v, lo, hi);
				continue;
			}
			if (!same(lo, hi))
				continue; /* a gauge that moved: no single value to hold it to */
			if (lo < 0) /* the file does not print it: neither may the daemon */
				ck_assert_msg(isnan(v), "%s %s{%s}: %.9g, the files print none", labels[i], fields[k].metric,
					      fields[k].matcher ? fields[k].matcher : "", v);
			else
				ck_assert_msg(same(v, lo), "%s %s{%s}: daemon %.9g, files %.9g", labels[i], fields[k].metric,
					      fields[k].matcher ? fields[k].matcher : "", v, lo);
		}
		checked_other += !ours;
	}
	fprintf(stderr, "%zu cgroups compared (%zu not the test's) after %d attempt(s)\n", n, checked_other, attempt + 1);
	ck_assert_msg(exported(body, cgs[2].label, 8) >= 1, "the OOM kill is not in %s's events", cgs[2].label);
	ck_assert_msg(!isnan(exported(body, cgs[1].label, 2)), "no memory.high for %s", cgs[1].label);
	/* Last, so that a kernel taking another path still shows whether its figures agree. */
	if (mw_expected_value("cgroup_path.tsv", "host", "mode", want, sizeof(want)) == 0)
		ck_assert_msg(strcmp(mode, want) == 0, "cgroup mode %s, want %s (tests/expectations/cgroup_path.tsv)", mode,
			      want);
	free(body);
	mw_assert_clean_stop(d);
}
END_TEST

static void cleanup(void)
{
	for (int i = 0; i < 3; i++)
		if (kids[i] > 0) {
			kill(kids[i], SIGKILL);
			waitpid(kids[i], NULL, 0);
			kids[i] = -1;
		}
	for (int i = 2; i >= 0; i--)
		if (cgs[i].path[0])
			(void)mw_memcg_remove(cgs[i].path);
	if (parent.path[0])
		(void)mw_memcg_remove(parent.path);
	(void)mw_cleanup_all();
}

int main(void)
{
	Suite *s;
	TCase *tc;
	bool v2;
	SRunner *sr;
	int failed;

	if (geteuid() != 0) {
		fprintf(stderr, "the cgroup v2 BPF test needs root (memory cgroups, BPF): skipping\n");
		return 77;
	}
	if (!mw_memcg_root(&memcg_root, &v2) || !v2) {
		fprintf(stderr, "no cgroup2 tree with the memory controller (tests/system's system-v2 has one): skipping\n");
		return 77;
	}
	if (mw_init_tmp_root() < 0)
		return 99;
	runner_pid = getpid();
	s = suite_create("cgroup_v2bpf");
	tc = tcase_create("agree");
	tcase_add_checked_fixture(tc, NULL, cleanup);
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_bpf_agrees_with_files);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	if (failed) {
		mw_dump_daemon_logs(mw_tmp_root(), NULL);
		fprintf(stderr, "daemon logs and configs kept in %s\n", mw_tmp_root());
	} else {
		mw_remove_tmp_root();
	}
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
