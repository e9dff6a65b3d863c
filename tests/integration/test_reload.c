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
 *   collector are counted, exactly, in memwatch_series_dropped_total.
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
#include "helpers.h"

#define MEMCG_ROOT "/sys/fs/cgroup/memory"
#define MiB (1024ULL * 1024ULL)
#define WINDOW_TIMEOUT_MS 15000
#define WINDOWS_PER_STEP 5
#define HEALTH_CGROUPS 2000

static pid_t runner_pid;

/* ---- small utilities ---- */

static double realtime_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((format(printf, 1, 2))) static void note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("reload: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* ---- cgroups ---- */

static void test_root(char *buf, size_t len)
{
	snprintf(buf, len, MEMCG_ROOT "/mw-reload-%d", (int)runner_pid);
}

static void memcg_make(const char *path, unsigned long long limit)
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

/* ---- exposition ---- */

enum kind { KIND_OTHER, KIND_COUNTER, KIND_HISTOGRAM };

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

static int cmp_sample(const void *a, const void *b)
{
	return strcmp(((const struct sample *)a)->key, ((const struct sample *)b)->key);
}

struct family_type {
	char name[128];
	enum kind kind;
};

static int cmp_family(const void *a, const void *b)
{
	return strcmp(((const struct family_type *)a)->name, ((const struct family_type *)b)->name);
}

/* The counter and histogram families of a scrape, from its # TYPE lines, sorted. */
static struct family_type *family_types(const char *body, size_t *n)
{
	struct family_type *t = NULL;
	size_t cap = 0;
	const char *p;

	*n = 0;
	for (p = strstr(body, "# TYPE "); p; p = strstr(p + 1, "\n# TYPE ")) {
		char name[128], type[32];

		if (*p == '\n')
			p++;
		if (sscanf(p, "# TYPE %127s %31s", name, type) != 2)
			continue;
		if (strcmp(type, "counter") != 0 && strcmp(type, "histogram") != 0)
			continue;
		if (*n == cap) {
			cap = cap ? 2 * cap : 64;
			t = realloc(t, cap * sizeof(*t));
			ck_assert(t != NULL);
		}
		snprintf(t[*n].name, sizeof(t[*n].name), "%s", name);
		t[(*n)++].kind = strcmp(type, "counter") == 0 ? KIND_COUNTER : KIND_HISTOGRAM;
	}
	qsort(t, *n, sizeof(*t), cmp_family);
	return t;
}

static enum kind line_kind(const struct family_type *t, size_t n, const char *name, size_t len)
{
	static const char *const suffixes[] = { "_bucket", "_sum", "_count" };
	struct family_type like;
	const struct family_type *f;

	snprintf(like.name, sizeof(like.name), "%.*s", (int)len, name);
	f = bsearch(&like, t, n, sizeof(*t), cmp_family);
	if (f && f->kind == KIND_COUNTER)
		return KIND_COUNTER;
	for (size_t i = 0; i < 3; i++) {
		size_t sl = strlen(suffixes[i]);

		if (len > sl && memcmp(name + len - sl, suffixes[i], sl) == 0) {
			snprintf(like.name, sizeof(like.name), "%.*s", (int)(len - sl), name);
			f = bsearch(&like, t, n, sizeof(*t), cmp_family);
			if (f && f->kind == KIND_HISTOGRAM)
				return KIND_HISTOGRAM;
		}
	}
	return KIND_OTHER;
}

static void scrape_free(struct scrape *sc)
{
	for (size_t i = 0; i < sc->n; i++)
		free(sc->s[i].key);
	free(sc->s);
	free(sc->body);
	*sc = (struct scrape){ 0 };
}

static void parse_scrape(struct scrape *sc, char *body)
{
	size_t n_types;
	struct family_type *types = family_types(body, &n_types);
	char *line, *next;

	*sc = (struct scrape){ .body = body, .window_end = NAN, .reloads_ok = NAN };
	mw_metric(body, "memwatch_window_end_timestamp_seconds", NULL, &sc->window_end, NULL, 0);
	mw_metric(body, "memwatch_config_reloads_total", "result=\"success\"", &sc->reloads_ok, NULL, 0);
	for (line = body; line && *line; line = next) {
		char *nl = strchr(line, '\n'), *sp;
		size_t name_len;

		next = nl ? nl + 1 : NULL;
		if (*line == '#' || *line == '\n')
			continue;
		name_len = strcspn(line, "{ ");
		/* The value follows the last blank: label values may hold blanks. */
		sp = memrchr(line, ' ', nl ? (size_t)(nl - line) : strlen(line));
		if (!sp || line_kind(types, n_types, line, name_len) == KIND_OTHER)
			continue;
		if (sc->n == sc->cap) {
			sc->cap = sc->cap ? 2 * sc->cap : 512;
			sc->s = realloc(sc->s, sc->cap * sizeof(*sc->s));
			ck_assert(sc->s != NULL);
		}
		sc->s[sc->n].key = strndup(line, (size_t)(sp - line));
		sc->s[sc->n].value = strtod(sp + 1, NULL);
		ck_assert(sc->s[sc->n].key != NULL);
		sc->n++;
	}
	qsort(sc->s, sc->n, sizeof(*sc->s), cmp_sample);
	free(types);
}

static const struct sample *find_sample(const struct scrape *sc, const char *key)
{
	struct sample like = { .key = (char *)key };

	return bsearch(&like, sc->s, sc->n, sizeof(*sc->s), cmp_sample);
}

/* The next window after `after` (seconds since the epoch), parsed. */
static void scrape_after(struct mw_daemon *d, double after, struct scrape *sc)
{
	int64_t deadline = mw_mono_ms() + WINDOW_TIMEOUT_MS;

	for (;;) {
		char *body = mw_scrape(d->port);
		double end = NAN;

		if (body && mw_metric(body, "memwatch_window_end_timestamp_seconds", NULL, &end, NULL, 0) &&
		    end > after) {
			parse_scrape(sc, body);
			return;
		}
		free(body);
		ck_assert_msg(mw_mono_ms() < deadline, "no window ended after %.3f within %d ms", after,
			      WINDOW_TIMEOUT_MS);
		mw_sleep_ms(20);
	}
}

/* Every counter and histogram sample of prev that cur still has is at least
 * as large. Returns how many were compared. */
static size_t assert_monotonic(const struct scrape *prev, const struct scrape *cur, const char *when)
{
	size_t compared = 0;

	for (size_t i = 0; i < prev->n; i++) {
		const struct sample *c = find_sample(cur, prev->s[i].key);

		if (!c)
			continue;
		compared++;
		ck_assert_msg(c->value >= prev->s[i].value,
			      "%s: %s went backwards from %.17g (window ending %.3f) to %.17g (window ending %.3f)",
			      when, prev->s[i].key, prev->s[i].value, prev->window_end, c->value, cur->window_end);
	}
	return compared;
}

#define MIN_COMPARED 2000

/* Every counter and histogram sample a test has seen, at its highest, sorted
 * by key: a series missing from one scrape and back in a later one must be
 * back no lower (the load's processes and cgroups stay for the whole test, so
 * nothing may legitimately come back reset). */
struct ledger {
	struct sample *s;
	size_t n;
};

/* Merges sc into l, failing on any sample lower than the highest seen before;
 * returns how many samples of sc had been seen before. */
static size_t ledger_merge(struct ledger *l, const struct scrape *sc, const char *when)
{
	struct sample *merged = calloc(l->n + sc->n + 1, sizeof(*merged));
	size_t i = 0, j = 0, n = 0, seen = 0;

	ck_assert(merged != NULL);
	while (i < l->n || j < sc->n) {
		int c = i == l->n ? 1 : j == sc->n ? -1 : strcmp(l->s[i].key, sc->s[j].key);

		if (c < 0) {
			merged[n++] = l->s[i++];
			continue;
		}
		if (c == 0) {
			ck_assert_msg(sc->s[j].value >= l->s[i].value,
				      "%s: %s is %.17g (window ending %.3f), below the %.17g it showed before "
				      "(a series that dropped out and came back reset)",
				      when, sc->s[j].key, sc->s[j].value, sc->window_end, l->s[i].value);
			free(l->s[i++].key);
			seen++;
		}
		merged[n].key = strdup(sc->s[j].key);
		ck_assert(merged[n].key != NULL);
		merged[n++].value = sc->s[j++].value;
	}
	free(l->s);
	l->s = merged;
	l->n = n;
	return seen;
}

static void ledger_free(struct ledger *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->s[i].key);
	free(l->s);
	*l = (struct ledger){ 0 };
}

/* The BPF programs the daemon holds (prog_id lines of /proc/PID/fdinfo), sorted. */
static size_t held_prog_ids(pid_t pid, unsigned *ids, size_t max)
{
	char dir[64], path[384];
	struct dirent *de;
	size_t n = 0;
	DIR *dp;

	snprintf(dir, sizeof(dir), "/proc/%d/fdinfo", (int)pid);
	dp = opendir(dir);
	ck_assert_msg(dp != NULL, "opendir %s: %s", dir, strerror(errno));
	while ((de = readdir(dp))) {
		char *text, *p;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		text = mw_read_file(path, NULL);
		for (p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
			unsigned id;
			size_t i;

			if (strncmp(p, "prog_id:", 8) != 0)
				continue;
			id = (unsigned)strtoul(p + 8, NULL, 10);
			for (i = 0; i < n && ids[i] != id; i++)
				;
			if (i == n && n < max)
				ids[n++] = id;
		}
		free(text);
	}
	closedir(dp);
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && ids[j - 1] > ids[j]; j--) {
			unsigned t = ids[j];

			ids[j] = ids[j - 1];
			ids[j - 1] = t;
		}
	return n;
}

static void collector_mode(const char *body, const char *collector, char *mode, size_t len)
{
	char matcher[64], labels[1024];

	snprintf(matcher, sizeof(matcher), "collector=\"%s\"", collector);
	ck_assert_msg(mw_metric(body, "memwatch_collector_info", matcher, NULL, labels, sizeof(labels)) &&
			      mw_label(labels, "mode", mode, len),
		      "no memwatch_collector_info{%s}", matcher);
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

/* Sends SIGHUP for text and returns the first window that ran on it. */
static void reload_to(struct mw_daemon *d, const char *conf, const char *text, const struct scrape *before,
		      struct scrape *after)
{
	int64_t deadline = mw_mono_ms() + WINDOW_TIMEOUT_MS;
	double t = before->window_end;
	int r = mw_write_file(conf, text);

	ck_assert_msg(r == 0, "cannot write %s: %s", conf, strerror(-r));
	ck_assert_int_eq(mw_signal(d, SIGHUP), 0);
	for (;;) {
		scrape_after(d, t, after);
		if (after->reloads_ok > before->reloads_ok)
			return;
		/* Each window still on the old configuration is checked too. */
		assert_monotonic(before, after, "while the reload was pending");
		t = after->window_end;
		ck_assert_msg(mw_mono_ms() < deadline, "memwatch_config_reloads_total{result=\"success\"} still %g",
			      after->reloads_ok);
		scrape_free(after);
	}
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
		size_t n0 = held_prog_ids(d->pid, ids0, 512), n1;
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

		n1 = held_prog_ids(d->pid, ids1, 512);
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

/* ---- the daemon's own series and max_series ---- */

static bool cgroup_family(const char *name, size_t len)
{
	static const char *const fams[] = {
		"memwatch_cgroup_memory_", "memwatch_cgroup_pressure_", "memwatch_cgroups_discovered",
		"memwatch_cgroup_walk_", "memwatch_cgroup_open_files", "memwatch_cgroup_info",
		"memwatch_cgroup_age_seconds", "memwatch_cgroup_reads_total",
	};

	for (size_t i = 0; i < sizeof(fams) / sizeof(fams[0]); i++)
		if (len >= strlen(fams[i]) && strncmp(name, fams[i], strlen(fams[i])) == 0)
			return true;
	return false;
}

/* The daemon's own families (core.c's meta-metrics and the event channel). */
static bool health_family(const char *name, size_t len)
{
	static const char *const fams[] = {
		"memwatch_build_info", "memwatch_collector_", "memwatch_window_seconds",
		"memwatch_sample_interval_seconds", "memwatch_window_end_timestamp_seconds",
		"memwatch_start_time_seconds", "memwatch_series_dropped_total", "memwatch_config_reloads_total",
		"memwatch_events_", "memwatch_pressure_events_total",
	};

	for (size_t i = 0; i < sizeof(fams) / sizeof(fams[0]); i++)
		if (len >= strlen(fams[i]) && strncmp(name, fams[i], strlen(fams[i])) == 0)
			return true;
	return false;
}

struct series_count {
	size_t health, collectors, cgroup, cgroup_labelled;
	size_t per_test_cgroup[HEALTH_CGROUPS + 1]; /* [HEALTH_CGROUPS] is the root */
};

/* Counts series as max_series does: a histogram (all its lines) is one. */
static void count_series(const char *body, const char *prefix, struct series_count *c)
{
	const char *line, *next;

	memset(c, 0, sizeof(*c));
	for (line = body; line && *line; line = next) {
		const char *nl = strchr(line, '\n');
		size_t name_len = strcspn(line, "{ \n"), plen = strlen(prefix);
		char label[300] = "";
		const char *cgl;

		next = nl ? nl + 1 : NULL;
		if (*line == '#' || *line == '\n')
			continue;
		/* A histogram counts once, at its _count line. */
		if ((name_len > 7 && memcmp(line + name_len - 7, "_bucket", 7) == 0) ||
		    (name_len > 4 && memcmp(line + name_len - 4, "_sum", 4) == 0))
			continue;
		if (health_family(line, name_len)) {
			c->health++;
			continue;
		}
		c->collectors++;
		if (!cgroup_family(line, name_len))
			continue;
		c->cgroup++;
		cgl = strstr(line, "cgroup=\"");
		if (!cgl || (nl && cgl > nl))
			continue;
		cgl += 8;
		snprintf(label, sizeof(label), "%.*s", (int)strcspn(cgl, "\""), cgl);
		if (strcmp(label, "other") == 0)
			continue;
		c->cgroup_labelled++;
		if (strcmp(label, "/") == 0) {
			c->per_test_cgroup[HEALTH_CGROUPS]++;
		} else if (strncmp(label, prefix, plen) == 0) {
			long i = strtol(label + plen, NULL, 10);

			if (i >= 0 && i < HEALTH_CGROUPS)
				c->per_test_cgroup[i]++;
		}
	}
}

static const char *const collector_names[] = {
	"meminfo", "psi", "kswapd", "reclaim", "alloc", "faults", "memavail", "oom", "cgroup", "compaction",
};

START_TEST(test_health_budget)
{
	char root[256], path[400], *conf, *text;
	struct series_count *cnt = calloc(1, sizeof(*cnt));
	struct scrape a, b, c;
	double windows, discovered, dropped_a, dropped_b, win_s;
	size_t per_cgroup, would_be, cut_per_window;
	struct mw_daemon *d;

	ck_assert(cnt != NULL);
	test_root(root, sizeof(root));
	memcg_make(root, 0);
	for (int i = 0; i < HEALTH_CGROUPS; i++) {
		snprintf(path, sizeof(path), "%s/c%04d", root, i);
		memcg_make(path, 0);
	}
	/* Uncapped first: what the cgroup collector exports for these cgroups. */
	ck_assert(asprintf(&text,
			   "[daemon]\nwindow = 1s\nmax_series = 1000000\n"
			   "[collector.cgroup]\nv1_root = %s\nv2_root = none\ntop_k = 10000\nmax_cgroups = 100000\n",
			   root) >= 0);
	conf = mw_write_temp_file("memwatchd.conf", text);
	free(text);
	ck_assert(conf != NULL);
	d = mw_start(conf, NULL, false);
	ck_assert(d != NULL);
	scrape_after(d, realtime_now(), &a);
	ck_assert_msg(mw_metric(a.body, "memwatch_cgroups_discovered", NULL, &discovered, NULL, 0),
		      "no memwatch_cgroups_discovered");
	/* Our cgroups and the root of the walk: nothing else below it. */
	ck_assert_msg(discovered == HEALTH_CGROUPS + 1, "the cgroup collector read %.0f cgroups; we made %d and a root",
		      discovered, HEALTH_CGROUPS);
	count_series(a.body, "/c", cnt);
	per_cgroup = cnt->per_test_cgroup[0];
	ck_assert_msg(per_cgroup > 0, "no series for cgroup /c0000");
	for (int i = 0; i < HEALTH_CGROUPS; i++)
		ck_assert_msg(cnt->per_test_cgroup[i] == per_cgroup, "cgroup /c%04d has %zu series, /c0000 %zu", i,
			      cnt->per_test_cgroup[i], per_cgroup);
	ck_assert_msg(cnt->cgroup_labelled == (HEALTH_CGROUPS + 1) * per_cgroup,
		      "%zu series name one of our %d cgroups or the root; %zu each would be %zu", cnt->cgroup_labelled,
		      HEALTH_CGROUPS, per_cgroup, (size_t)(HEALTH_CGROUPS + 1) * per_cgroup);
	would_be = cnt->cgroup;
	note("uncapped: %zu collector series, %zu of the cgroup collector (%zu per cgroup), %zu of the daemon's own",
	     cnt->collectors, cnt->cgroup, per_cgroup, cnt->health);
	for (size_t i = 0; i < sizeof(collector_names) / sizeof(collector_names[0]); i++) {
		char m[64];
		double v;

		snprintf(m, sizeof(m), "collector=\"%s\"", collector_names[i]);
		ck_assert_msg(mw_metric(a.body, "memwatch_series_dropped_total", m, &v, NULL, 0) && v == 0,
			      "uncapped: memwatch_series_dropped_total{%s} is not 0", m);
	}

	/* The smallest cap: the daemon's own series must all stay. */
	ck_assert(asprintf(&text,
			   "[daemon]\nwindow = 1s\nmax_series = 100\n"
			   "[collector.cgroup]\nv1_root = %s\nv2_root = none\ntop_k = 10000\nmax_cgroups = 100000\n",
			   root) >= 0);
	reload_to(d, conf, text, &a, &b);
	free(text);
	scrape_after(d, b.window_end, &c);
	count_series(c.body, "/c", cnt);
	note("max_series = 100: %zu collector series (%zu of the cgroup collector), %zu of the daemon's own",
	     cnt->collectors, cnt->cgroup, cnt->health);
	ck_assert_msg(cnt->collectors == 100, "with max_series = 100 the window has %zu collector series",
		      cnt->collectors);
	ck_assert_msg(mw_metric(c.body, "memwatch_build_info", NULL, NULL, NULL, 0), "no memwatch_build_info");
	ck_assert_msg(mw_metric(c.body, "memwatch_config_reloads_total", "result=\"success\"", NULL, NULL, 0),
		      "no memwatch_config_reloads_total");
	ck_assert_msg(mw_metric(c.body, "memwatch_events_received_total", NULL, NULL, NULL, 0),
		      "no memwatch_events_received_total");
	for (size_t i = 0; i < sizeof(collector_names) / sizeof(collector_names[0]); i++) {
		char m[64];

		snprintf(m, sizeof(m), "collector=\"%s\"", collector_names[i]);
		ck_assert_msg(mw_metric(c.body, "memwatch_collector_up", m, NULL, NULL, 0), "no memwatch_collector_up{%s}",
			      m);
		ck_assert_msg(mw_metric(c.body, "memwatch_collector_info", m, NULL, NULL, 0),
			      "no memwatch_collector_info{%s}", m);
		ck_assert_msg(mw_metric(c.body, "memwatch_series_dropped_total", m, NULL, NULL, 0),
			      "no memwatch_series_dropped_total{%s}", m);
	}
	/* Per window, the cgroup collector loses exactly what did not fit. */
	ck_assert(mw_metric(b.body, "memwatch_series_dropped_total", "collector=\"cgroup\"", &dropped_a, NULL, 0));
	ck_assert(mw_metric(c.body, "memwatch_series_dropped_total", "collector=\"cgroup\"", &dropped_b, NULL, 0));
	ck_assert(mw_metric(c.body, "memwatch_window_seconds", NULL, &win_s, NULL, 0));
	windows = round((c.window_end - b.window_end) / win_s);
	cut_per_window = would_be - cnt->cgroup;
	note("memwatch_series_dropped_total{collector=\"cgroup\"} %.0f -> %.0f over %.0f window(s); %zu would be, %zu "
	     "exported",
	     dropped_a, dropped_b, windows, would_be, cnt->cgroup);
	ck_assert_msg(windows >= 1, "the two scrapes are of the same window");
	ck_assert_msg(dropped_b > 0, "the cgroup collector's cut series are not counted");
	ck_assert_msg(dropped_b - dropped_a == windows * (double)cut_per_window,
		      "the cgroup collector would export %zu series and exports %zu, yet its dropped count grew by "
		      "%.0f in %.0f window(s)",
		      would_be, cnt->cgroup, dropped_b - dropped_a, windows);
	{
		char *out = NULL;
		int rc = mw_promtool_check(c.body, strlen(c.body), &out);

		ck_assert_msg(rc == 0, "promtool check metrics failed (%d):\n%s", rc, out ? out : "");
		free(out);
	}
	scrape_free(&a);
	scrape_free(&b);
	scrape_free(&c);
	mw_assert_clean_stop(d);
	free(conf);
	free(cnt);
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
	add_test(s, "health_budget", test_health_budget, 180);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
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
