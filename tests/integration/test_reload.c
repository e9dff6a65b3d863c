// SPDX-License-Identifier: GPL-2.0
/* Reloads under load never take a counter backwards, and the daemon's own
 * health series survive a small max_series. Real daemon, real BPF, real
 * memory cgroups (v1, at /sys/fs/cgroup/memory). Needs root.
 *
 * - continuity: while a child reclaims in a 64 MiB memory cgroup and another
 *   one faults, every collector gets a key changed by SIGHUP, in place (its
 *   BPF programs must stay the same ones) or by a restart (a new attach
 *   flavour, new map sizes, another source). Every window is scraped; every
 *   sample of every counter and histogram (buckets, _sum, _count) must be at
 *   least what it was in the window before, and the load's per-process and
 *   per-cgroup series must stay.
 * - off and on: a collector switched off loses its series, and has them again
 *   once switched back on.
 * - health budget: with thousands of memory cgroups and max_series = 100, the
 *   daemon's own series are all there, and the series cut from the cgroup
 *   collector are counted, exactly, in memwatch_series_dropped_total
 *   (test_reload_health.c).
 *
 * Cgroups live below MEMCG_ROOT/mw-reload-<runner pid>; the runner removes
 * that tree after every test, however it ended. Children die with the test
 * process (PR_SET_PDEATHSIG) and are only signalled by the PID fork() gave. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "test_reload.h"

static pid_t runner_pid;

/* ---- small utilities ---- */

double realtime_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((format(printf, 1, 2))) void note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("reload: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* ---- cgroups ---- */

void test_root(char *buf, size_t len)
{
	snprintf(buf, len, MEMCG_ROOT "/mw-reload-%d", (int)runner_pid);
}

void memcg_make(const char *path, unsigned long long limit)
{
	char file[512], value[32];
	int r;

	ck_assert_msg(mkdir(path, 0755) == 0 || errno == EEXIST, "mkdir %s: %s", path, strerror(errno));
	if (!limit)
		return;
	snprintf(file, sizeof(file), "%s/memory.limit_in_bytes", path);
	snprintf(value, sizeof(value), "%llu", limit);
	r = mw_write_text(file, value);
	ck_assert_msg(r == 0, "cannot write %s to %s: %s", value, file, strerror(-r));
}

static int rmdir_retry(const char *path)
{
	int64_t deadline = mw_mono_ms() + 10000;

	for (;;) {
		if (rmdir(path) == 0 || errno == ENOENT)
			return 0;
		if (errno != EBUSY || mw_mono_ms() >= deadline)
			return -errno;
		mw_sleep_ms(50);
	}
}

/* Removes the test tree: its (empty, or emptied by the children's death)
 * cgroups, depth first. Runs in the runner after each test, and at exit. */
static void remove_test_tree(void)
{
	char root[256], path[600];
	struct dirent *de;
	DIR *d;

	test_root(root, sizeof(root));
	d = opendir(root);
	if (!d)
		return;
	while ((de = readdir(d)))
		if (de->d_type == DT_DIR && de->d_name[0] != '.') {
			snprintf(path, sizeof(path), "%s/%s", root, de->d_name);
			if (rmdir_retry(path) < 0)
				fprintf(stderr, "cleanup: cannot remove cgroup %s: %m\n", path);
		}
	closedir(d);
	if (rmdir_retry(root) < 0)
		fprintf(stderr, "cleanup: cannot remove cgroup %s: %m\n", root);
}

/* ---- load ---- */

static pid_t spawn_in(const char *cgroup, void (*body)(const void *arg), const void *arg)
{
	pid_t parent = getpid(), pid = fork();

	ck_assert_msg(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		char file[512], me[32];

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(1);
		snprintf(file, sizeof(file), "%s/cgroup.procs", cgroup);
		snprintf(me, sizeof(me), "%d", (int)getpid());
		if (mw_write_text(file, me) < 0)
			_exit(2);
		body(arg);
		_exit(0);
	}
	return pid;
}

/* Reads a sparse file through the page cache again and again: a 64 MiB
 * cgroup has to reclaim all along (kernel-facts: memcg reclaim recipe). */
static void reclaim_body(const void *arg)
{
	const char *path = arg;
	static char buf[1 << 20];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	off_t off = 0;

	if (fd < 0)
		_exit(3);
	for (;;) {
		ssize_t n = pread(fd, buf, sizeof(buf), off);

		if (n <= 0) {
			off = 0;
			continue;
		}
		off += n;
		if (off % (32 * (off_t)MiB) == 0)
			usleep(2000); /* a shared machine: leave the daemon some CPU */
	}
}

/* Touches fresh anonymous memory in a loop: minor faults all along. */
static void fault_body(const void *arg)
{
	const size_t len = 8 * MiB;

	(void)arg;
	for (;;) {
		char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			_exit(4);
		for (size_t i = 0; i < len; i += 4096)
			p[i] = 1;
		munmap(p, len);
		usleep(20000);
	}
}

static void stop_child(pid_t pid)
{
	int st;

	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
}

/* ---- continuity across reloads ---- */

struct step {
	const char *what;
	const char *extra;        /* config appended to the base */
	const char *restarts;     /* collector expected to run a new instance, or NULL: all in place */
	const char *mode_after;   /* that collector's mode afterwards, or NULL */
};

/* The base configuration with a step's keys laid over it: a section or key
 * may appear only once in a file. */
static char *config_text(const char *cgroup_root, const char *extra)
{
	const char *base[][3] = {
		{ "daemon", "window", "200ms" },
		{ "daemon", "sample_interval", "50ms" },
		{ "collector.reclaim", "series_ttl", "10m" },
		{ "collector.faults", "top_k", "1000" },
		{ "collector.faults", "series_ttl", "10m" },
		{ "collector.cgroup", "v1_root", cgroup_root },
		{ "collector.cgroup", "v2_root", "none" },
	};
	char sections[16][128], keys[32][3][128], *text = NULL, *p;
	size_t n_sections = 0, n_keys = 0, i, j, len = 0;
	const char *line, *next;
	char section[64] = "";
	FILE *f;

	for (i = 0; i < sizeof(base) / sizeof(base[0]); i++) {
		snprintf(keys[n_keys][0], 128, "%s", base[i][0]);
		snprintf(keys[n_keys][1], 128, "%s", base[i][1]);
		snprintf(keys[n_keys++][2], 128, "%s", base[i][2]);
	}
	for (line = extra; line && *line; line = next) {
		char k[128], v[128];

		next = strchr(line, '\n');
		next = next ? next + 1 : NULL;
		if (sscanf(line, "[%63[^]]]", section) == 1)
			continue;
		if (sscanf(line, "%127s = %127[^\n]", k, v) != 2)
			continue;
		for (i = 0; i < n_keys; i++)
			if (strcmp(keys[i][0], section) == 0 && strcmp(keys[i][1], k) == 0)
				break;
		ck_assert(i < 32);
		if (i == n_keys)
			n_keys++;
		snprintf(keys[i][0], 128, "%s", section);
		snprintf(keys[i][1], 128, "%s", k);
		snprintf(keys[i][2], 128, "%s", v);
	}
	for (i = 0; i < n_keys; i++) {
		for (j = 0; j < n_sections && strcmp(sections[j], keys[i][0]) != 0; j++)
			;
		ck_assert(n_sections < 16 || j < n_sections);
		if (j == n_sections)
			memcpy(sections[n_sections++], keys[i][0], sizeof(sections[0]));
	}
	f = open_memstream(&text, &len);
	ck_assert(f != NULL);
	for (j = 0; j < n_sections; j++) {
		fprintf(f, "[%s]\n", sections[j]);
		for (i = 0; i < n_keys; i++)
			if (strcmp(keys[i][0], sections[j]) == 0)
				fprintf(f, "%s = %s\n", keys[i][1], keys[i][2]);
	}
	fclose(f);
	p = text;
	ck_assert(p != NULL);
	return p;
}

/* The series of the load's process and cgroup that the window has. */
static void load_series(const struct scrape *sc, pid_t reclaimer, const char *cg_label, char keys[][256],
			size_t *n, size_t max)
{
	char pid_label[64], cg_match[300];

	snprintf(pid_label, sizeof(pid_label), "pid=\"%d\"", (int)reclaimer);
	snprintf(cg_match, sizeof(cg_match), "cgroup=\"%s\"", cg_label);
	*n = 0;
	for (size_t i = 0; i < sc->n && *n < max; i++) {
		const char *k = sc->s[i].key;

		if ((strncmp(k, "memwatch_process_", 17) == 0 && strstr(k, pid_label)) ||
		    (strncmp(k, "memwatch_cgroup_reclaim", 23) == 0 && strstr(k, cg_match)))
			snprintf(keys[(*n)++], 256, "%s", k);
	}
}

START_TEST(test_reload_continuity)
{
	static const struct step steps[] = {
		{ "reclaim top_k", "[collector.reclaim]\ntop_k = 20\n", NULL, NULL },
		{ "reclaim series_ttl", "[collector.reclaim]\ntop_k = 20\nseries_ttl = 15m\n", NULL, NULL },
		{ "faults top_k and max_processes", "[collector.faults]\ntop_k = 500\nmax_processes = 32768\n", NULL,
		  NULL },
		{ "daemon window", "[daemon]\nwindow = 300ms\n", NULL, NULL },
		{ "cgroup top_k and stat_interval", "[collector.cgroup]\ntop_k = 20\nstat_interval = 3\n", NULL, NULL },
		{ "meminfo exhaustion_horizon", "[collector.meminfo]\nexhaustion_horizon = 2m\n", NULL, NULL },
		{ "psi path", "[collector.psi]\npath = /proc/./pressure/memory\n", NULL, NULL },
		{ "alloc vmstat_path", "[collector.alloc]\nvmstat_path = /proc/./vmstat\n", NULL, NULL },
		{ "reclaim attach = raw_tp", "[collector.reclaim]\nattach = raw_tp\n", "reclaim", "raw_tp" },
		{ "reclaim max_processes", "[collector.reclaim]\nattach = raw_tp\nmax_processes = 8192\n", "reclaim",
		  "raw_tp" },
		{ "kswapd attach = raw_tp", "[collector.kswapd]\nattach = raw_tp\n", "kswapd", "raw_tp" },
		{ "oom attach = raw_tp", "[collector.oom]\nattach = raw_tp\n", "oom", "raw_tp" },
		{ "alloc trace = yes", "[collector.alloc]\ntrace = yes\n", "alloc", NULL },
		{ "alloc attach = raw_tp", "[collector.alloc]\ntrace = yes\nattach = raw_tp\n", "alloc", "raw_tp" },
		{ "alloc trace = no", "[collector.alloc]\ntrace = no\n", "alloc", "vmstat" },
		{ "faults source = procfs", "[collector.faults]\nsource = procfs\n", "faults", "procfs" },
		{ "memavail method = procfs", "[collector.memavail]\nmethod = procfs\n", "memavail", "procfs" },
		{ "back to the defaults", "", "reclaim", NULL },
	};
	char root[256], cg[300], cg_label[128], sparse[512], *conf, *text, mode[64];
	char before_keys[64][256], after_keys[64][256];
	unsigned ids0[512], ids1[512];
	struct scrape prev, cur;
	double reclaims0, reclaims1;
	size_t compared = 0, n_before, n_after;
	struct ledger ledger = { 0 };
	pid_t reclaimer, faulter;
	struct mw_daemon *d;
	int fd;

	test_root(root, sizeof(root));
	memcg_make(root, 0);
	snprintf(cg, sizeof(cg), "%s/load", root);
	snprintf(cg_label, sizeof(cg_label), "/mw-reload-%d/load", (int)runner_pid);
	memcg_make(cg, 64 * MiB);
	snprintf(sparse, sizeof(sparse), "%s/sparse", mw_tmp_root());
	fd = open(sparse, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ck_assert_msg(fd >= 0 && ftruncate(fd, 1 << 30) == 0, "cannot create the sparse file %s", sparse);
	close(fd);

	text = config_text(root, "");
	conf = mw_write_temp_file("memwatchd.conf", text);
	ck_assert(conf != NULL);
	d = mw_start(conf, NULL, false);
	ck_assert_msg(d != NULL, "memwatchd did not start with\n%s", text);
	free(text);

	reclaimer = spawn_in(cg, reclaim_body, sparse);
	faulter = spawn_in(cg, fault_body, NULL);

	/* Load first: the reclaimer's process and cgroup series are there. */
	scrape_after(d, realtime_now(), &prev);
	{
		int64_t deadline = mw_mono_ms() + WINDOW_TIMEOUT_MS;

		for (;;) {
			load_series(&prev, reclaimer, cg_label, before_keys, &n_before, 64);
			if (n_before >= 6)
				break;
			ck_assert_msg(mw_mono_ms() < deadline, "no reclaim series for pid %d and cgroup %s after %d ms",
				      (int)reclaimer, cg_label, WINDOW_TIMEOUT_MS);
			scrape_after(d, prev.window_end, &cur);
			scrape_free(&prev);
			prev = cur;
		}
	}
	ck_assert_msg(mw_metric(prev.body, "memwatch_memcg_reclaim_total", NULL, &reclaims0, NULL, 0),
		      "no memwatch_memcg_reclaim_total");

	for (size_t s = 0; s < sizeof(steps) / sizeof(steps[0]); s++) {
		const struct step *st = &steps[s];
		size_t n0 = mw_held_prog_ids(d->pid, ids0, 512), n1;
		double r_before = NAN, r_after = NAN;

		mw_metric(prev.body, "memwatch_memcg_reclaim_total", NULL, &r_before, NULL, 0);
		load_series(&prev, reclaimer, cg_label, before_keys, &n_before, 64);
		text = config_text(root, st->extra);
		(void)ledger_merge(&ledger, &prev, st->what);
		reload_to(d, conf, text, &prev, &cur);
		free(text);
		compared += assert_monotonic(&prev, &cur, st->what);
		(void)ledger_merge(&ledger, &cur, st->what);

		/* The load's series are all still there. */
		load_series(&cur, reclaimer, cg_label, after_keys, &n_after, 64);
		for (size_t i = 0; i < n_before; i++) {
			bool found = false;

			for (size_t j = 0; j < n_after && !found; j++)
				found = strcmp(before_keys[i], after_keys[j]) == 0;
			ck_assert_msg(found, "%s: %s was exported before the reload, not after", st->what,
				      before_keys[i]);
		}

		n1 = mw_held_prog_ids(d->pid, ids1, 512);
		if (!st->restarts)
			ck_assert_msg(n0 == n1 && memcmp(ids0, ids1, n0 * sizeof(*ids0)) == 0,
				      "%s: applied in place, yet the daemon's BPF programs changed (%zu before, %zu after)",
				      st->what, n0, n1);
		else
			ck_assert_msg(n0 != n1 || memcmp(ids0, ids1, n0 * sizeof(*ids0)) != 0,
				      "%s: %s needed new programs, yet the daemon holds the same %zu", st->what,
				      st->restarts, n0);
		if (st->mode_after) {
			collector_mode(cur.body, st->restarts, mode, sizeof(mode));
			ck_assert_msg(strcmp(mode, st->mode_after) == 0, "%s: %s runs in mode %s, not %s", st->what,
				      st->restarts, mode, st->mode_after);
		}

		/* A few windows on the new configuration, each against the one before. */
		for (int w = 0; w < WINDOWS_PER_STEP; w++) {
			scrape_free(&prev);
			prev = cur;
			scrape_after(d, prev.window_end, &cur);
			compared += assert_monotonic(&prev, &cur, st->what);
			(void)ledger_merge(&ledger, &cur, st->what);
		}
		mw_metric(cur.body, "memwatch_memcg_reclaim_total", NULL, &r_after, NULL, 0);
		note("%-32s programs %zu -> %zu, memwatch_memcg_reclaim_total %.0f -> %.0f", st->what, n0, n1,
		     r_before, r_after);
		scrape_free(&prev);
		prev = cur;
	}
	ck_assert_msg(mw_metric(prev.body, "memwatch_memcg_reclaim_total", NULL, &reclaims1, NULL, 0),
		      "no memwatch_memcg_reclaim_total at the end");
	note("%zu sample comparisons, %zu series in the ledger; memcg reclaims %.0f -> %.0f under load", compared,
	     ledger.n, reclaims0, reclaims1);
	/* Each step compares a few windows of every counter the daemon exports
	 * (hundreds): far fewer would mean the scrapes were not read. */
	ck_assert_msg(compared >= MIN_COMPARED, "only %zu sample comparisons across the reloads, want %d at least",
		      compared, MIN_COMPARED);
	ledger_free(&ledger);
	ck_assert_msg(reclaims1 > reclaims0, "the load made no memcg reclaim counted across the reloads");
	scrape_free(&prev);

	stop_child(reclaimer);
	stop_child(faulter);
	unlink(sparse);
	mw_assert_clean_stop(d);
	free(conf);
}
END_TEST

/* ---- a collector switched off and on ---- */

START_TEST(test_reload_off_and_on)
{
	static const char on[] = "[daemon]\nwindow = 200ms\nsample_interval = 50ms\n";
	static const char off[] = "[daemon]\nwindow = 200ms\nsample_interval = 50ms\n[collector.reclaim]\nenabled = no\n";
	struct scrape a, b, c;
	char *conf, mode[64], labels[1024], state[32];
	struct mw_daemon *d;
	double v;

	conf = mw_write_temp_file("memwatchd.conf", on);
	ck_assert(conf != NULL);
	d = mw_start(conf, NULL, false);
	ck_assert(d != NULL);
	scrape_after(d, realtime_now(), &a);
	ck_assert_msg(mw_metric(a.body, "memwatch_memcg_reclaim_total", NULL, &v, NULL, 0),
		      "reclaim on: no memwatch_memcg_reclaim_total");
	collector_mode(a.body, "reclaim", mode, sizeof(mode));

	reload_to(d, conf, off, &a, &b);
	ck_assert_msg(!mw_metric(b.body, "memwatch_memcg_reclaim_total", NULL, NULL, NULL, 0) &&
			      !mw_metric(b.body, "memwatch_memcg_reclaim_seconds_count", NULL, NULL, NULL, 0) &&
			      !mw_metric(b.body, "memwatch_cgroup_reclaims_total", NULL, NULL, NULL, 0),
		      "reclaim switched off, its series are still exported");
	ck_assert(mw_metric(b.body, "memwatch_collector_info", "collector=\"reclaim\"", NULL, labels, sizeof(labels)));
	ck_assert(mw_label(labels, "state", state, sizeof(state)));
	ck_assert_msg(strcmp(state, "disabled") == 0, "reclaim switched off is in state %s", state);
	assert_monotonic(&a, &b, "reclaim switched off");

	reload_to(d, conf, on, &b, &c);
	ck_assert_msg(mw_metric(c.body, "memwatch_memcg_reclaim_total", NULL, &v, NULL, 0) &&
			      mw_metric(c.body, "memwatch_memcg_reclaim_seconds_count", NULL, NULL, NULL, 0),
		      "reclaim switched back on, its series are not back");
	collector_mode(c.body, "reclaim", mode, sizeof(mode));
	/* The others kept counting through both reloads. */
	assert_monotonic(&b, &c, "reclaim switched back on");
	scrape_free(&a);
	scrape_free(&b);
	scrape_free(&c);
	mw_assert_clean_stop(d);
	free(conf);
}
END_TEST

/* ---- runner ---- */

static void teardown_daemons(void)
{
	int killed = mw_cleanup_all();

	ck_assert_msg(killed == 0, "%d daemon(s) ignored SIGTERM and had to be killed", killed);
}

static void on_fatal_signal(int sig)
{
	if (getpid() == runner_pid)
		remove_test_tree();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void add_test(Suite *s, const char *name, const TTest *test, double timeout)
{
	TCase *tc = tcase_create(name);

	tcase_add_checked_fixture(tc, NULL, teardown_daemons);
	tcase_add_unchecked_fixture(tc, NULL, remove_test_tree);
	tcase_set_timeout(tc, timeout);
	tcase_add_test(tc, test);
	suite_add_tcase(s, tc);
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_fatal_signal };
	Suite *s;
	SRunner *sr;
	int failed;

	if (geteuid() != 0) {
		fprintf(stderr, "memwatchd reload tests need root (BPF, cgroups): skipping\n");
		return 77;
	}
	if (access(MEMWATCHD_PATH, X_OK) < 0) {
		fprintf(stderr, "%s: %m\n", MEMWATCHD_PATH);
		return 99;
	}
	if (access(MEMCG_ROOT "/cgroup.procs", F_OK) < 0) {
		fprintf(stderr, "no cgroup v1 memory hierarchy at " MEMCG_ROOT ": these tests need one\n");
		return 99;
	}
	if (mw_init_tmp_root() < 0) {
		fprintf(stderr, "cannot create a temporary directory: %m\n");
		return 99;
	}
	runner_pid = getpid();
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	s = suite_create("reload");
	add_test(s, "continuity", test_reload_continuity, 300);
	add_test(s, "off_and_on", test_reload_off_and_on, 60);
	reload_add_health_tests(s, add_test);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	mw_keep_failures(sr);
	srunner_free(sr);
	remove_test_tree();
	if (failed) {
		mw_dump_daemon_logs(mw_tmp_root(), NULL);
		fprintf(stderr, "daemon logs kept in %s\n", mw_tmp_root());
	} else {
		mw_remove_tmp_root();
	}
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
