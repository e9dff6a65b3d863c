// SPDX-License-Identifier: GPL-2.0
/* What the integration tests read from the host, independently of the
 * daemon: /proc/meminfo, the memory outside the zones, the expectation
 * table for this kernel, memory cgroups of their own, /dev/kmsg. */
#include <arpa/inet.h>
#include <check.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <ftw.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "helpers.h"

long long mw_proc_meminfo_kb(const char *field)
{
	char *text = mw_read_file("/proc/meminfo", NULL), *p;
	size_t flen = strlen(field);
	long long v = -1;

	if (!text)
		return -1;
	for (p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, field, flen) == 0 && p[flen] == ':') {
			v = strtoll(p + flen + 1, NULL, 10);
			break;
		}
	free(text);
	return v;
}


/* What the kernel counts in MemTotal, MemFree and MemAvailable but no zone
 * manages yet: a kernel booted with deferred_init=lazy (this CI host's) hands
 * its pages to the zones only as allocations need them (deferred_grow_zone),
 * so the zones' own counters, which the counters method sums, miss it. Zero
 * on other kernels, where MemTotal is the zones' managed pages. Bytes, or -1. */
double mw_memory_outside_zones(void)
{
	unsigned long long managed = 0, v;
	long long total_kb = mw_proc_meminfo_kb("MemTotal");
	char line[256];
	double outside;
	FILE *f = fopen("/proc/zoneinfo", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, " managed %llu", &v) == 1)
			managed += v;
	fclose(f);
	if (total_kb < 0 || managed == 0)
		return -1;
	outside = (double)total_kb * 1024.0 - (double)managed * (double)sysconf(_SC_PAGESIZE);
	return outside > 0 ? outside : 0;
}

/* The condition zone-managed-agree, from the memory outside the zones as a
 * share of MemAvailable: the counters method is that far from MemAvailable
 * (it agrees to the page where nothing is outside), and the daemon uses it
 * within its 2% tolerance. Half a point either side of 2% is the edge, where
 * the daemon's own reads a moment earlier may fall either way. */
#define ZONES_TOLERANCE 0.02
#define ZONES_EDGE 0.005

static int zones_classify(double outside, double meminfo)
{
	double share;

	if (outside < 0 || meminfo <= 0)
		return -EIO;
	share = outside / meminfo;
	if (share < ZONES_TOLERANCE - ZONES_EDGE)
		return 1;
	if (share > ZONES_TOLERANCE + ZONES_EDGE)
		return 0;
	return -EAGAIN;
}

/* Read when the last daemon was spawned: it decides at start-up, and a zone
 * may grow between then and the test's check. */
static double outside_at_spawn = -1, meminfo_at_spawn = -1;

void mw_note_zones_at_spawn(void)
{
	outside_at_spawn = mw_memory_outside_zones();
	meminfo_at_spawn = (double)mw_proc_meminfo_kb("MemAvailable") * 1024.0;
}

int mw_zone_managed_agree(double *outside, double *meminfo)
{
	double o = mw_memory_outside_zones(), m = (double)mw_proc_meminfo_kb("MemAvailable") * 1024.0;
	int now = zones_classify(o, m), then;

	if (outside)
		*outside = o;
	if (meminfo)
		*meminfo = m;
	if (outside_at_spawn < 0)
		return now;
	then = zones_classify(outside_at_spawn, meminfo_at_spawn);
	return then == now ? now : -EAGAIN;
}

/* ---- the expectation table (tests/expectations/collectors.tsv) ---- */

/* Every test binary that compiles helpers.c should get -DEXPECTATIONS_TSV
 * (expectations_arg in meson.build); one without it fails only if it asks. */
#ifdef EXPECTATIONS_TSV
static const char *const expectations_tsv = EXPECTATIONS_TSV;
#else
static const char *const expectations_tsv = NULL;
#endif

/* Evaluates a base condition (the "-agree" form) independently of the
 * daemon: 1 holds, 0 does not, -EAGAIN at its edge, -1 unknown condition. */
static int eval_condition(const char *base)
{
	if (strcmp(base, "zone-managed-agree") == 0) {
		double outside, meminfo;
		int holds = mw_zone_managed_agree(&outside, &meminfo);
		char spawn[96] = "no daemon spawned yet";

		if (outside_at_spawn >= 0)
			snprintf(spawn, sizeof(spawn), "at the last daemon's spawn %.0f MiB of %.0f MiB",
				 outside_at_spawn / 1048576, meminfo_at_spawn / 1048576);
		fprintf(stderr, "expectations: zone-managed-agree is %s: %.0f MiB of MemTotal outside the zones "
				"(%.2f%% of MemAvailable %.0f MiB; %s)\n",
			holds == 1 ? "true" : holds == 0 ? "false" : "at its edge (not judged)", outside / 1048576,
			meminfo > 0 ? 100 * outside / meminfo : NAN, meminfo / 1048576, spawn);
		return holds == 1 || holds == 0 ? holds : holds == -EAGAIN ? -EAGAIN : -1;
	}
	return -1;
}

bool mw_under_ci(void)
{
	const char *ci = getenv("CI");

	return ci && strcmp(ci, "true") == 0;
}

int mw_expectation(const char *environment, const char *collector, struct mw_expectation *out)
{
	char release[sizeof(((struct utsname *)0)->release)], line[1024];
	struct utsname u;
	bool matched_any = false;
	int lineno = 0, r = -ENOENT;
	FILE *f;

	ck_assert(uname(&u) == 0);
	snprintf(release, sizeof(release), "%s", u.release);
	*out = (struct mw_expectation){ 0 };
	ck_assert_msg(expectations_tsv != NULL,
		      "this test binary was built without -DEXPECTATIONS_TSV (expectations_arg in tests/integration/meson.build)");
	f = fopen(expectations_tsv, "re");
	ck_assert_msg(f != NULL, "cannot open %s: %s", expectations_tsv, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		char *cols[7], *save = NULL, *p;
		int n = 0;

		lineno++;
		line[strcspn(line, "\n")] = '\0';
		if (line[0] == '#' || line[strspn(line, " \t")] == '\0')
			continue;
		for (p = strtok_r(line, "\t", &save); p && n < 7; p = strtok_r(NULL, "\t", &save))
			cols[n++] = p;
		ck_assert_msg(n == 7 && !p, "%s:%d: not 7 tab-separated columns", expectations_tsv, lineno);
		if (strcmp(cols[0], environment) != 0 || fnmatch(cols[1], release, 0) != 0)
			continue;
		matched_any = true;
		if (r == 0 || strcmp(cols[2], collector) != 0)
			continue;
		if (strcmp(cols[6], "-") != 0) {
			/* "x-disagree" is the negation of "x-agree", which the test evaluates. */
			char base[128];
			size_t len = strlen(cols[6]);
			bool negated = len > 9 && strcmp(cols[6] + len - 9, "-disagree") == 0;
			int holds;

			snprintf(base, sizeof(base), "%.*s%s", (int)(negated ? len - 9 : len), cols[6],
				 negated ? "-agree" : "");
			holds = eval_condition(base);
			ck_assert_msg(holds >= 0 || holds == -EAGAIN, "%s:%d: condition %s, which these tests cannot evaluate",
				      expectations_tsv, lineno, base);
			if (holds == -EAGAIN)
				out->undetermined = true;
			else if (negated ? holds : !holds)
				continue;
		}
		snprintf(out->state, sizeof(out->state), "%s", cols[3]);
		snprintf(out->mode, sizeof(out->mode), "%s", cols[4]);
		snprintf(out->reason, sizeof(out->reason), "%s", strcmp(cols[5], "-") == 0 ? "" : cols[5]);
		snprintf(out->condition, sizeof(out->condition), "%s", strcmp(cols[6], "-") == 0 ? "" : cols[6]);
		out->line = lineno;
		r = 0;
	}
	fclose(f);
	if (!matched_any) {
		bool ci = mw_under_ci();

		fprintf(stderr, "\n*** no expectation row for kernel %s (environment %s), add one to "
				"tests/expectations/collectors.tsv ***\n%s\n\n",
			release, environment, ci ? "CI=true: failing" : "skipping this assertion (CI is not true)");
		ck_assert_msg(!ci, "no expectation row for kernel %s, add one to tests/expectations/collectors.tsv",
			      release);
		return -ENOENT;
	}
	ck_assert_msg(r == 0, "tests/expectations/collectors.tsv has rows for %s on kernel %s, but none for collector %s",
		      environment, release, collector);
	return 0;
}

int mw_expected_kill_field(const char *environment, const char *feature, char *source, size_t len)
{
	return mw_expected_value("kill_fields.tsv", environment, feature, source, len);
}

int mw_expected_value(const char *table, const char *environment, const char *key, char *value, size_t len)
{
	char release[sizeof(((struct utsname *)0)->release)], line[512], path[PATH_MAX];
	const char *slash;
	struct utsname u;
	bool matched_any = false, ci = mw_under_ci();
	int r = -ENOENT;
	FILE *f;

	ck_assert(uname(&u) == 0);
	snprintf(release, sizeof(release), "%s", u.release);
	const char *tsv = expectations_tsv ? expectations_tsv : "";

	ck_assert_msg(tsv[0], "built without -DEXPECTATIONS_TSV");
	slash = strrchr(tsv, '/');
	ck_assert(slash);
	snprintf(path, sizeof(path), "%.*s/%s", (int)(slash - tsv), tsv, table);
	f = fopen(path, "re");
	ck_assert_msg(f != NULL, "cannot open %s: %s", path, strerror(errno));
	while (r < 0 && fgets(line, sizeof(line), f)) {
		char *cols[4], *save = NULL, *p;
		int n = 0;

		line[strcspn(line, "\n")] = '\0';
		if (line[0] == '#' || line[strspn(line, " \t")] == '\0')
			continue;
		for (p = strtok_r(line, "\t", &save); p && n < 4; p = strtok_r(NULL, "\t", &save))
			cols[n++] = p;
		ck_assert_msg(n == 4 && !p, "%s: a row without 4 tab-separated columns", path);
		if (strcmp(cols[0], environment) != 0 || fnmatch(cols[1], release, 0) != 0)
			continue;
		matched_any = true;
		if (strcmp(cols[2], key) == 0) {
			snprintf(value, len, "%s", cols[3]);
			r = 0;
		}
	}
	fclose(f);
	if (!matched_any) {
		fprintf(stderr, "\n*** no row for kernel %s (environment %s) in %s ***\n%s\n\n", release, environment, path,
			ci ? "CI=true: failing" : "skipping this assertion (CI is not true)");
		ck_assert_msg(!ci, "no row for kernel %s in %s", release, path);
		return -ENOENT;
	}
	ck_assert_msg(r == 0, "%s has rows for %s on kernel %s, but none for %s", path, environment, release, key);
	return 0;
}

bool mw_expect_matches(const struct mw_expectation *want, const char *collector, const char *state, const char *mode,
		       const char *reason, char *why, size_t why_len)
{
	if (want->undetermined) {
		/* The kernel sits at the edge of the row's condition: either row is its behaviour. */
		fprintf(stderr, "expectations: %s %s/%s not judged: condition %s at its edge (collectors.tsv line %d)\n",
			collector, state, mode, want->condition, want->line);
		return true;
	}
	if (strcmp(state, want->state) != 0 || strcmp(mode, want->mode) != 0)
		snprintf(why, why_len, "%s: %s/%s, want %s/%s (collectors.tsv line %d%s%s) reason '%s'", collector, state,
			 mode, want->state, want->mode, want->line, want->condition[0] ? ", condition " : "",
			 want->condition, reason);
	else if (!want->reason[0] && reason[0])
		snprintf(why, why_len, "%s: reason '%s', want none (collectors.tsv line %d)", collector, reason,
			 want->line);
	else if (want->reason[0] && !strstr(reason, want->reason))
		snprintf(why, why_len, "%s: reason '%s' lacks '%s' (collectors.tsv line %d)", collector, reason,
			 want->reason, want->line);
	else
		return true;
	return false;
}

bool mw_assert_collector_expected(const char *body, const char *collector, struct mw_expectation *ret)
{
	char matcher[96], labels[1024], state[64], mode[64], reason[512], why[1024];
	struct mw_expectation want;
	double v = NAN;

	if (mw_expectation("host", collector, &want) < 0)
		return false;
	snprintf(matcher, sizeof(matcher), "collector=\"%s\"", collector);
	ck_assert_msg(mw_metric(body, "memwatch_collector_info", matcher, &v, labels, sizeof(labels)),
		      "no memwatch_collector_info{%s} in:\n%s", matcher, body);
	ck_assert(v == 1.0);
	ck_assert(mw_label(labels, "state", state, sizeof(state)));
	ck_assert(mw_label(labels, "mode", mode, sizeof(mode)));
	ck_assert(mw_label(labels, "reason", reason, sizeof(reason)));
	ck_assert_msg(mw_expect_matches(&want, collector, state, mode, reason, why, sizeof(why)), "%s", why);
	ck_assert_msg(mw_metric(body, "memwatch_collector_up", matcher, &v, NULL, 0), "no memwatch_collector_up{%s}",
		      matcher);
	ck_assert_msg(v == (strcmp(want.state, "active") == 0 ? 1.0 : 0.0) || strcmp(want.state, "degraded") == 0,
		      "memwatch_collector_up{%s} is %g with state %s", matcher, v, want.state);
	if (ret)
		*ret = want;
	return true;
}

/* ---- memory cgroups ---- */

static bool mw_write_all(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	size_t len = strlen(text);
	bool ok;

	if (fd < 0)
		return false;
	ok = write(fd, text, len) == (ssize_t)len;
	close(fd);
	return ok;
}

bool mw_memcg_root(const char **root, bool *v2)
{
	static const char *const v2_roots[] = { "/sys/fs/cgroup", "/sys/fs/cgroup/unified" };
	char file[300], *text;

	if (access("/sys/fs/cgroup/memory/memory.limit_in_bytes", F_OK) == 0) {
		*root = "/sys/fs/cgroup/memory";
		*v2 = false;
		return true;
	}
	for (size_t i = 0; i < sizeof(v2_roots) / sizeof(v2_roots[0]); i++) {
		bool has;

		snprintf(file, sizeof(file), "%s/cgroup.controllers", v2_roots[i]);
		text = mw_read_file(file, NULL);
		has = text && strstr(text, "memory");
		free(text);
		if (!has)
			continue;
		snprintf(file, sizeof(file), "%s/cgroup.subtree_control", v2_roots[i]);
		(void)mw_write_all(file, "+memory");
		*root = v2_roots[i];
		*v2 = true;
		return true;
	}
	return false;
}

bool mw_memcg_make(struct mw_memcg *cg, const struct mw_memcg *parent, const char *name, const char *limit)
{
	const char *root;
	char file[320];
	bool v2;

	if (!mw_memcg_root(&root, &v2)) {
		errno = ENOENT;
		return false;
	}
	if (snprintf(cg->path, sizeof(cg->path), "%s/%s", parent ? parent->path : root, name) >= (int)sizeof(cg->path) ||
	    snprintf(cg->label, sizeof(cg->label), "%s/%s", parent ? parent->label : "", name) >= (int)sizeof(cg->label)) {
		errno = ENAMETOOLONG;
		return false;
	}
	if (mkdir(cg->path, 0755) < 0 && errno != EEXIST)
		return false;
	if (parent && v2) {
		snprintf(file, sizeof(file), "%s/cgroup.subtree_control", parent->path);
		if (!mw_write_all(file, "+memory"))
			return false;
	}
	if (limit) {
		snprintf(file, sizeof(file), "%s/%s", cg->path, v2 ? "memory.max" : "memory.limit_in_bytes");
		if (!mw_write_all(file, limit))
			return false;
	}
	return true;
}

bool mw_memcg_remove(const char *path)
{
	int64_t deadline = mw_mono_ms() + 10000;
	char procs[PATH_MAX + 16];

	snprintf(procs, sizeof(procs), "%s/cgroup.procs", path);
	for (;;) {
		char *text, *p, *end;

		if (rmdir(path) == 0 || errno == ENOENT)
			return true;
		if (errno != EBUSY || mw_mono_ms() >= deadline)
			return false;
		text = mw_read_file(procs, NULL);
		for (p = text; p;) {
			long pid = strtol(p, &end, 10);

			if (end == p)
				break;
			if (pid > 1)
				kill((pid_t)pid, SIGKILL);
			p = end;
		}
		free(text);
		mw_sleep_ms(50);
	}
}

/* ---- /dev/kmsg ---- */

int mw_kmsg_open_end(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0 && lseek(fd, 0, SEEK_END) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

char *mw_kmsg_read(int fd)
{
	size_t cap = 65536, len = 0;
	char *all = malloc(cap), rec[8192];

	if (!all)
		return NULL;
	all[0] = '\0';
	for (;;) {
		ssize_t n = read(fd, rec, sizeof(rec) - 1);
		const char *msg;
		size_t mlen;

		if (n < 0 && errno == EPIPE)
			continue; /* overwritten records: go on with what is there */
		if (n <= 0)
			break;
		rec[n] = '\0';
		msg = strchr(rec, ';');
		if (!msg)
			continue;
		msg++;
		mlen = strcspn(msg, "\n");
		if (len + mlen + 2 > cap) {
			char *bigger = realloc(all, cap * 2 + mlen);

			if (!bigger)
				break;
			all = bigger;
			cap = cap * 2 + mlen;
		}
		memcpy(all + len, msg, mlen);
		len += mlen;
		all[len++] = '\n';
		all[len] = '\0';
	}
	return all;
}

/* ---- the kernel's counts for a memory cgroup (v1 or v2) ---- */

/* The number after "key " in a file of "key value" lines; key NULL: the file's one number. */
static long long memcg_file_value(const char *path, const char *file, const char *key)
{
	char name[PATH_MAX + 32], *text, *p;
	long long v = -1;

	snprintf(name, sizeof(name), "%s/%s", path, file);
	text = mw_read_file(name, NULL);
	for (p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		size_t len = key ? strlen(key) : 0;

		if (!key || (strncmp(p, key, len) == 0 && p[len] == ' ')) {
			v = strtoll(p + len, NULL, 10);
			break;
		}
	}
	free(text);
	return v;
}

long long mw_memcg_oom_kills(const char *path)
{
	const char *root;
	bool v2;

	if (!mw_memcg_root(&root, &v2))
		return -1;
	return v2 ? memcg_file_value(path, "memory.events", "oom_kill")
		  : memcg_file_value(path, "memory.oom_control", "oom_kill");
}

long long mw_memcg_limit_hits(const char *path)
{
	const char *root;
	bool v2;

	if (!mw_memcg_root(&root, &v2))
		return -1;
	return v2 ? memcg_file_value(path, "memory.events", "max") : memcg_file_value(path, "memory.failcnt", NULL);
}

size_t mw_held_prog_ids(pid_t pid, unsigned *ids, size_t max)
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
		if (!text)
			continue; /* closed meanwhile */
		for (p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
			unsigned id;
			size_t i;

			if (strncmp(p, "prog_id:", 8) != 0)
				continue;
			id = (unsigned)strtoul(p + 8, NULL, 10);
			for (i = 0; i < n && ids[i] != id; i++)
				;
			if (i == n) {
				ck_assert_msg(n < max, "pid %d holds more than %zu BPF programs", (int)pid, max);
				ids[n++] = id;
			}
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

/* The sum of the /proc/vmstat fields named name, or (prefix) whose names
 * start with it; the test fails when there is none. */
static unsigned long long vmstat_fields(const char *name, bool prefix)
{
	char *text = mw_read_file("/proc/vmstat", NULL), *p;
	size_t len = strlen(name);
	unsigned long long sum = 0;
	bool found = false;

	ck_assert_msg(text != NULL, "cannot read /proc/vmstat");
	for (p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		const char *sp = strchr(p, ' ');

		if (sp && strncmp(p, name, len) == 0 && (prefix || p + len == sp)) {
			sum += strtoull(sp + 1, NULL, 10);
			found = true;
		}
	}
	free(text);
	ck_assert_msg(found, "no %s%s field in /proc/vmstat", name, prefix ? "*" : "");
	return sum;
}

unsigned long long vmstat_sum(const char *prefix)
{
	return vmstat_fields(prefix, true);
}

unsigned long long vmstat_get(const char *name)
{
	return vmstat_fields(name, false);
}
