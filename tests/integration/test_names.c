// SPDX-License-Identifier: GPL-2.0
/* End-to-end tests of the workload names on per-cgroup families: real memory
 * cgroups on this host's memory hierarchy (v1, or cgroup2 with the memory
 * controller passed down each level) laid out as kubelet lays them out
 * (the cgroupfs driver's kubepods/burstable/pod<uid>/<id> and the systemd
 * driver's kubepods-besteffort-pod<uid>.slice/crio-<id>.scope), a systemd
 * service, a docker container and podman containers (one in a pod), below one
 * directory of this run; kubelet's log directories, a Docker data root and a
 * containers/storage graph root in a temporary directory the configuration
 * points at. Then
 * a process in the "container" is OOM-killed, the container goes, and its
 * OOM count stays with its pod's names until series_ttl. Needs root. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "helpers.h"

#define RUN_PREFIX "memwatch-names-"
#define MiB (1024UL * 1024UL)
#define OOM_TOUCH_BYTES (200UL * MiB)
#define CG_LIMIT "64M"
#define OOM_TTL_SEC 12
#define TEST_TIMEOUT_SEC 150
#define POLL_TIMEOUT_MS 15000

static pid_t runner_pid;
/* The memory controller's hierarchy (mw_memcg_root): v1's or a cgroup2 mount. */
static const char *memcg_root;
static bool memcg_v2;

/* This run's names: ids made from the runner's pid, so that two runs never share one. */
struct layout {
	char run[64];     /* below memcg_root */
	char uid_web[40], uid_web_[40], uid_job[40], uid_job_[40];
	char id_app[65], id_job[65], id_docker[65], id_podman[65], id_pod[65], id_in_pod[65];
	/* cgroup labels: paths below memcg_root */
	char pod_web[200], app[300], pod_job[200], job[300], job_conmon[300], service[200], docker[200];
	char podman[200], in_pod[300];
	char kubelet[300], pods[320], containers[320], docker_dir[320], podman_dir[320];
	char app_log[600], app_pod_dir[600];
};

static void make_id(char *buf, unsigned seed)
{
	snprintf(buf, 65, "%08x%08x%08x%08x%08x%08x%08x%08x", seed, 0xabcdef01u, seed ^ 0x5a5a5a5au, 0x12345678u,
		 seed * 7u, 0x0badcafeu, seed + 1u, 0xfeedf00du);
}

static void make_uid(char *dashes, char *underscores, unsigned seed, unsigned kind)
{
	snprintf(dashes, 40, "%08x-%04x-4%03x-8%03x-%012x", seed, kind, kind, kind, seed);
	snprintf(underscores, 40, "%s", dashes);
	for (char *p = underscores; *p; p++)
		if (*p == '-')
			*p = '_';
}

static void layout_init(struct layout *l)
{
	unsigned seed = (unsigned)runner_pid;

	snprintf(l->run, sizeof(l->run), RUN_PREFIX "%d", (int)runner_pid);
	make_uid(l->uid_web, l->uid_web_, seed, 0x111);
	make_uid(l->uid_job, l->uid_job_, seed, 0x222);
	make_id(l->id_app, seed);
	make_id(l->id_job, seed + 1000);
	make_id(l->id_docker, seed + 2000);
	snprintf(l->pod_web, sizeof(l->pod_web), "/%s/kubepods/burstable/pod%s", l->run, l->uid_web);
	snprintf(l->app, sizeof(l->app), "%s/%s", l->pod_web, l->id_app);
	snprintf(l->pod_job, sizeof(l->pod_job),
		 "/%s/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod%s.slice", l->run, l->uid_job_);
	snprintf(l->job, sizeof(l->job), "%s/crio-%s.scope", l->pod_job, l->id_job);
	snprintf(l->job_conmon, sizeof(l->job_conmon), "%s/crio-conmon-%s.scope", l->pod_job, l->id_job);
	snprintf(l->service, sizeof(l->service), "/%s/system.slice/mw\\x2dnames.service", l->run);
	snprintf(l->docker, sizeof(l->docker), "/%s/docker/%s", l->run, l->id_docker);
	make_id(l->id_podman, seed + 3000);
	make_id(l->id_pod, seed + 4000);
	make_id(l->id_in_pod, seed + 5000);
	snprintf(l->podman, sizeof(l->podman), "/%s/machine.slice/libpod-%s.scope", l->run, l->id_podman);
	snprintf(l->in_pod, sizeof(l->in_pod), "/%s/machine.slice/machine-libpod_pod_%s.slice/libpod-%s.scope", l->run,
		 l->id_pod, l->id_in_pod);
	snprintf(l->docker_dir, sizeof(l->docker_dir), "%s/docker", mw_tmp_root());
	snprintf(l->podman_dir, sizeof(l->podman_dir), "%s/storage", mw_tmp_root());
	snprintf(l->kubelet, sizeof(l->kubelet), "%s/kubelet", mw_tmp_root());
	snprintf(l->pods, sizeof(l->pods), "%s/pods", l->kubelet);
	snprintf(l->containers, sizeof(l->containers), "%s/containers", l->kubelet);
	snprintf(l->app_pod_dir, sizeof(l->app_pod_dir), "%s/shop_web-0_%s", l->pods, l->uid_web);
	snprintf(l->app_log, sizeof(l->app_log), "%s/web-0_shop_app-%s.log", l->containers, l->id_app);
}

/* mkdir -p of a cgroup below memcg_root, one level at a time (on v2 each
 * parent passes the memory controller down); the leaf gets the limit. */
static void cg_make(const char *rel, const char *limit)
{
	struct mw_memcg parent, cg;
	const char *p = rel + 1;
	char part[256];

	for (bool top = true;; top = false) {
		const char *slash = strchr(p, '/');
		int len = slash ? (int)(slash - p) : (int)strlen(p);

		snprintf(part, sizeof(part), "%.*s", len, p);
		ck_assert_msg(mw_memcg_make(&cg, top ? NULL : &parent, part, slash ? NULL : limit), "mkdir %s below %s: %s",
			      part, top ? memcg_root : parent.path, strerror(errno));
		if (!slash)
			return;
		parent = cg;
		p = slash + 1;
	}
}

static int remove_visited(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	if (flag == FTW_DP && !mw_memcg_remove(path))
		fprintf(stderr, "could not remove %s: %m\n", path);
	return 0;
}

static int unlink_visited(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	if (remove(path) < 0)
		fprintf(stderr, "could not remove %s: %m\n", path);
	return 0;
}

/* The run's cgroups and kubelet directories, whatever a test left. */
static void sweep(void)
{
	char path[300];

	snprintf(path, sizeof(path), "%s/" RUN_PREFIX "%d", memcg_root, (int)runner_pid);
	nftw(path, remove_visited, 16, FTW_DEPTH | FTW_PHYS);
	if (mw_tmp_root()[0]) {
		static const char *const dirs[] = { "kubelet", "docker", "storage" };

		for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
			snprintf(path, sizeof(path), "%s/%s", mw_tmp_root(), dirs[i]);
			nftw(path, unlink_visited, 16, FTW_DEPTH | FTW_PHYS);
		}
	}
}

static void teardown(void)
{
	int killed = mw_cleanup_all();

	sweep();
	ck_assert_msg(killed == 0, "%d daemon(s) ignored SIGTERM and had to be killed", killed);
}

static void mkdir_or_fail(const char *path)
{
	ck_assert_msg(mkdir(path, 0755) == 0, "mkdir %s: %s", path, strerror(errno));
}

/* Kubelet's view of the two pods: their log directories and the containers' links. */
static void make_kubelet_dirs(const struct layout *l)
{
	char dir[700], target[800], link[800];

	mkdir_or_fail(l->kubelet);
	mkdir_or_fail(l->pods);
	mkdir_or_fail(l->containers);
	mkdir_or_fail(l->app_pod_dir);
	snprintf(dir, sizeof(dir), "%s/app", l->app_pod_dir);
	mkdir_or_fail(dir);
	snprintf(target, sizeof(target), "%s/0.log", dir);
	ck_assert_int_eq(mw_write_file(target, ""), 0);
	ck_assert_msg(symlink(target, l->app_log) == 0, "symlink %s: %s", l->app_log, strerror(errno));

	snprintf(dir, sizeof(dir), "%s/batch_report-1_%s", l->pods, l->uid_job);
	mkdir_or_fail(dir);
	snprintf(dir + strlen(dir), sizeof(dir) - strlen(dir), "/report");
	mkdir_or_fail(dir);
	snprintf(target, sizeof(target), "%s/0.log", dir);
	ck_assert_int_eq(mw_write_file(target, ""), 0);
	snprintf(link, sizeof(link), "%s/report-1_batch_report-%s.log", l->containers, l->id_job);
	ck_assert_msg(symlink(target, link) == 0, "symlink %s: %s", link, strerror(errno));
}

/* Docker's and Podman's own state, as they write it: the container's
 * config.v2.json ("Name" with a '/'; nested "Name"s that are not it) and
 * containers/storage's containers.json. */
static void make_runtime_state(const struct layout *l)
{
	char path[800], text[2048];

	mkdir_or_fail(l->docker_dir);
	snprintf(path, sizeof(path), "%s/containers", l->docker_dir);
	mkdir_or_fail(path);
	snprintf(path + strlen(path), sizeof(path) - strlen(path), "/%s", l->id_docker);
	mkdir_or_fail(path);
	snprintf(path + strlen(path), sizeof(path) - strlen(path), "/config.v2.json");
	snprintf(text, sizeof(text),
		 "{\"StreamConfig\":{},\"State\":{\"Running\":true,\"Pid\":1},\"ID\":\"%s\",\"Config\":{\"Labels\":"
		 "{\"Name\":\"not-it\"}},\"Name\":\"/mw-docker-web\",\"Driver\":\"overlay2\",\"MountPoints\":{\"/d\":"
		 "{\"Name\":\"vol\",\"Driver\":\"local\"}}}",
		 l->id_docker);
	ck_assert_int_eq(mw_write_file(path, text), 0);

	mkdir_or_fail(l->podman_dir);
	snprintf(path, sizeof(path), "%s/overlay-containers", l->podman_dir);
	mkdir_or_fail(path);
	snprintf(path + strlen(path), sizeof(path) - strlen(path), "/containers.json");
	snprintf(text, sizeof(text),
		 "[{\"id\":\"%s\",\"names\":[\"mw-podman-hog\"],\"image\":\"i\",\"layer\":\"l\","
		 "\"metadata\":\"{\\\"name\\\":\\\"mw-podman-hog\\\"}\",\"created\":\"2026-12-04T18:41:02Z\"},"
		 "{\"id\":\"%s\",\"names\":[\"mw-pod-worker\"],\"image\":\"i\",\"layer\":\"l\"}]",
		 l->id_podman, l->id_in_pod);
	ck_assert_int_eq(mw_write_file(path, text), 0);
}

static void make_cgroups(const struct layout *l)
{
	cg_make(l->pod_web, NULL);
	cg_make(l->app, CG_LIMIT);
	cg_make(l->pod_job, NULL);
	cg_make(l->job, CG_LIMIT);
	cg_make(l->job_conmon, CG_LIMIT);
	cg_make(l->service, CG_LIMIT);
	cg_make(l->docker, CG_LIMIT);
	cg_make(l->podman, CG_LIMIT);
	cg_make(l->in_pod, CG_LIMIT);
}

static struct mw_daemon *start_daemon(const struct layout *l)
{
	char text[2048], *conf;
	struct mw_daemon *d;

	snprintf(text, sizeof(text),
		 "[daemon]\nwindow = 500ms\n\n"
		 "[collector.cgroup]\nv1_root = %s\nv2_root = %s\ninclude = /%s/*\ntop_k = 50\n"
		 "kubelet_pods_dir = %s\nkubelet_containers_dir = %s\ndocker_dir = %s\npodman_storage_dir = %s\n\n"
		 "[collector.oom]\nseries_ttl = %ds\n\n"
		 "[collector.reclaim]\nseries_ttl = 10m\n",
		 memcg_v2 ? "none" : memcg_root, memcg_v2 ? memcg_root : "none", l->run, l->pods, l->containers,
		 l->docker_dir, l->podman_dir, OOM_TTL_SEC);
	conf = mw_write_temp_file("memwatchd.conf", text);
	ck_assert_ptr_nonnull(conf);
	d = mw_start(conf, NULL, false);
	free(conf);
	ck_assert_msg(d != NULL, "memwatchd did not start serving /metrics (log above)");
	return d;
}

/* The six identity labels of a cgroup, as a matcher (escaped like the exposition). */
static void identity(char *buf, size_t len, const char *cgroup, const char *unit, const char *ns, const char *pod,
		     const char *container, const char *id)
{
	char escaped_cgroup[512], escaped_unit[300];
	size_t o = 0;

	for (const char *p = cgroup; *p && o + 2 < sizeof(escaped_cgroup); p++) {
		if (*p == '\\')
			escaped_cgroup[o++] = '\\';
		escaped_cgroup[o++] = *p;
	}
	escaped_cgroup[o] = '\0';
	o = 0;
	for (const char *p = unit; *p && o + 2 < sizeof(escaped_unit); p++) {
		if (*p == '\\')
			escaped_unit[o++] = '\\';
		escaped_unit[o++] = *p;
	}
	escaped_unit[o] = '\0';
	snprintf(buf, len, "cgroup=\"%s\",unit=\"%s\",namespace=\"%s\",pod=\"%s\",container=\"%s\",container_id=\"%.12s\"",
		 escaped_cgroup, escaped_unit, ns, pod, container, id);
}

/* How many lines of the daemon's log hold needle. */
static unsigned log_lines_with(const struct mw_daemon *d, const char *needle)
{
	char *log = mw_log(d);
	unsigned n = 0;

	for (const char *p = log; p && (p = strstr(p, needle)); p += strlen(needle))
		n++;
	free(log);
	return n;
}

static void expect_sample(const char *body, const char *name, const char *matcher)
{
	ck_assert_msg(mw_metric(body, name, matcher, NULL, NULL, 0), "no %s{%s} in:\n%s", name, matcher, body);
}

/* Every series of the family has all six identity labels (and event only for events). */
static void expect_label_names(const char *body, const char *name, size_t want_labels)
{
	size_t len = strlen(name), n = 0;

	for (const char *p = body; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		const char *end = strchr(p, '\n');
		size_t commas = 0;

		if (strncmp(p, name, len) != 0 || p[len] != '{')
			continue;
		for (const char *q = p; q < (end ? end : p + strlen(p)); q++)
			commas += *q == '=' ? 1 : 0;
		ck_assert_msg(commas == want_labels, "%s: a series with %zu labels, want %zu:\n%.*s", name, commas,
			      want_labels, (int)(end ? end - p : (long)strlen(p)), p);
		n++;
	}
	ck_assert_msg(n > 0, "no %s series", name);
}

START_TEST(test_live_names)
{
	struct layout l;
	struct mw_daemon *d;
	char m[1024], *body, *out = NULL;
	int rc;

	layout_init(&l);
	make_kubelet_dirs(&l);
	make_runtime_state(&l);
	make_cgroups(&l);
	d = start_daemon(&l);

	identity(m, sizeof(m), l.app, "", "shop", "web-0", "app", l.id_app);
	ck_assert_msg(mw_poll_metric(d->port, "memwatch_cgroup_info", m, POLL_TIMEOUT_MS, mw_pred_eq, 1, NULL),
		      "no memwatch_cgroup_info{%s} 1", m);
	body = mw_scrape(d->port);
	ck_assert_ptr_nonnull(body);
	expect_sample(body, "memwatch_cgroup_memory_usage_bytes", m);
	expect_sample(body, "memwatch_cgroup_memory_limit_bytes", m);
	identity(m, sizeof(m), l.pod_web, "", "shop", "web-0", "", "");
	expect_sample(body, "memwatch_cgroup_info", m);
	identity(m, sizeof(m), l.job, "", "batch", "report-1", "report", l.id_job);
	expect_sample(body, "memwatch_cgroup_info", m);
	expect_sample(body, "memwatch_cgroup_memory_events_total", m);
	identity(m, sizeof(m), l.job_conmon, "", "batch", "report-1", "", "");
	expect_sample(body, "memwatch_cgroup_info", m);
	identity(m, sizeof(m), l.pod_job, "", "batch", "report-1", "", "");
	expect_sample(body, "memwatch_cgroup_info", m);
	identity(m, sizeof(m), l.service, "mw\\x2dnames.service", "", "", "", "");
	expect_sample(body, "memwatch_cgroup_info", m);
	/* Docker's and Podman's names from their state; a pod's container is
	 * named, its pod is not (only libpod's database has that). */
	identity(m, sizeof(m), l.docker, "", "", "", "mw-docker-web", l.id_docker);
	expect_sample(body, "memwatch_cgroup_info", m);
	expect_sample(body, "memwatch_cgroup_memory_usage_bytes", m);
	identity(m, sizeof(m), l.podman, "", "", "", "mw-podman-hog", l.id_podman);
	expect_sample(body, "memwatch_cgroup_info", m);
	expect_sample(body, "memwatch_cgroup_memory_limit_bytes", m);
	identity(m, sizeof(m), l.in_pod, "", "", "", "mw-pod-worker", l.id_in_pod);
	expect_sample(body, "memwatch_cgroup_info", m);
	identity(m, sizeof(m), "other", "", "", "", "", "");
	expect_sample(body, "memwatch_cgroup_memory_usage_bytes", m);
	ck_assert_msg(!mw_metric(body, "memwatch_cgroup_info", "cgroup=\"other\"", NULL, NULL, 0),
		      "memwatch_cgroup_info for other, which is no cgroup");
	expect_label_names(body, "memwatch_cgroup_memory_usage_bytes", 6);
	expect_label_names(body, "memwatch_cgroup_info", 6);
	expect_label_names(body, "memwatch_cgroup_memory_events_total", 7);
	expect_label_names(body, "memwatch_cgroup_reclaims_total", 6);
	rc = mw_promtool_check(body, strlen(body), &out);
	ck_assert_msg(rc == 0, "promtool check metrics exited %d:\n%s", rc, out ? out : "");
	free(out);
	free(body);
	ck_assert_uint_eq(log_lines_with(d, "container names:"), 0);
	mw_assert_clean_stop(d);
}
END_TEST

static void __attribute__((noreturn)) oom_workload(const char *procs)
{
	char buf[32];
	volatile char *p;

	snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
	if (mw_write_text(procs, buf) < 0)
		_exit(125);
	if (prctl(PR_SET_NAME, "mwnames-victim") < 0)
		_exit(121);
	p = mmap(NULL, OOM_TOUCH_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		_exit(122);
	for (size_t off = 0; off < OOM_TOUCH_BYTES; off += 4096)
		p[off] = 1;
	_exit(0); /* survived: the test fails on the exit status */
}

/* The kernel's own count of OOM kills in the cgroup (v1 memory.oom_control,
 * 4.13+; v2 memory.events). */
static long kernel_oom_kills(const char *rel)
{
	char path[600];

	snprintf(path, sizeof(path), "%s%s", memcg_root, rel);
	return (long)mw_memcg_oom_kills(path);
}

static bool present(int port, const char *name, const char *matcher, double *value)
{
	char *body = mw_scrape(port);
	bool r = body && mw_metric(body, name, matcher, value, NULL, 0);

	free(body);
	return r;
}

START_TEST(test_oom_count_outlives_the_container)
{
	struct layout l;
	struct mw_daemon *d;
	char m[1024], procs[600], path[600];
	double kills = 0, reclaims = 0, discovered = 0;
	int64_t removed_ms, gone_ms = -1;
	long kernel;
	pid_t pid;
	int st;

	layout_init(&l);
	make_kubelet_dirs(&l);
	make_cgroups(&l);
	d = start_daemon(&l);
	identity(m, sizeof(m), l.app, "", "shop", "web-0", "app", l.id_app);
	ck_assert_msg(mw_poll_metric(d->port, "memwatch_cgroup_info", m, POLL_TIMEOUT_MS, mw_pred_eq, 1, NULL),
		      "no memwatch_cgroup_info{%s} 1", m);

	snprintf(procs, sizeof(procs), "%s%s/cgroup.procs", memcg_root, l.app);
	fflush(NULL);
	pid = fork();
	ck_assert_msg(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
			_exit(126);
		oom_workload(procs);
	}
	{
		int64_t deadline = mw_mono_ms() + WORKLOAD_TIMEOUT_MS;

		while (waitpid(pid, &st, WNOHANG) == 0) {
			if (mw_mono_ms() >= deadline) {
				kill(pid, SIGKILL);
				waitpid(pid, &st, 0);
				ck_abort_msg("the OOM workload did not finish within %d ms", WORKLOAD_TIMEOUT_MS);
			}
			mw_sleep_ms(10);
		}
	}
	ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "the workload was not OOM-killed: status 0x%x", st);
	kernel = kernel_oom_kills(l.app);
	ck_assert_msg(kernel == 1, "the kernel counts %ld OOM kills in %s, want 1", kernel, l.app);

	/* Counted with the pod's names, as many as the kernel counts. */
	ck_assert_msg(mw_poll_metric(d->port, "memwatch_cgroup_oom_kills_total", m, POLL_TIMEOUT_MS, mw_pred_eq,
				     (double)kernel, &kills),
		      "memwatch_cgroup_oom_kills_total{%s} is %g, want %ld", m, kills, kernel);
	ck_assert_msg(mw_poll_metric(d->port, "memwatch_cgroup_reclaims_total", m, POLL_TIMEOUT_MS, mw_pred_gt, 0,
				     &reclaims),
		      "no memcg reclaim counted for {%s} before the kill", m);

	ck_assert(present(d->port, "memwatch_cgroups_discovered", NULL, &discovered));
	/* Kubelet removes the container: its log link, the pod's logs, the cgroups. */
	ck_assert_int_eq(unlink(l.app_log), 0);
	nftw(l.app_pod_dir, unlink_visited, 16, FTW_DEPTH | FTW_PHYS);
	ck_assert_msg(access(l.app_pod_dir, F_OK) < 0 && errno == ENOENT, "%s is still there", l.app_pod_dir);
	snprintf(path, sizeof(path), "%s%s", memcg_root, l.app);
	ck_assert_msg(mw_memcg_remove(path), "cannot remove %s: %s", path, strerror(errno));
	snprintf(path, sizeof(path), "%s%s", memcg_root, l.pod_web);
	ck_assert_msg(mw_memcg_remove(path), "cannot remove %s: %s", path, strerror(errno));
	removed_ms = mw_mono_ms();

	/* The cgroup collector's series end with the cgroup ... */
	ck_assert_msg(mw_poll_metric(d->port, "memwatch_cgroups_discovered", NULL, POLL_TIMEOUT_MS, mw_pred_eq,
				     discovered - 2, NULL),
		      "the walk still finds the two removed cgroups (%g before)", discovered);
	ck_assert_msg(!present(d->port, "memwatch_cgroup_info", m, NULL), "memwatch_cgroup_info{%s} after removal", m);
	/* ... the OOM count and the reclaim totals stay, with the names. */
	ck_assert_msg(present(d->port, "memwatch_cgroup_oom_kills_total", m, &kills) && kills == 1,
		      "memwatch_cgroup_oom_kills_total{%s} gone (or not 1: %g) right after the removal", m, kills);
	ck_assert_msg(present(d->port, "memwatch_cgroup_reclaims_total", m, NULL),
		      "memwatch_cgroup_reclaims_total{%s} lost its names or ended after the removal", m);
	mw_sleep_ms(OOM_TTL_SEC * 1000 / 2);
	ck_assert_msg(present(d->port, "memwatch_cgroup_oom_kills_total", m, &kills) && kills == 1,
		      "memwatch_cgroup_oom_kills_total{%s} gone (or not 1: %g) half a series_ttl after the removal", m,
		      kills);

	/* Then gone, series_ttl after the removal (windows of 500 ms; the daemon
	 * sees the removal in the window after it). */
	while (mw_mono_ms() - removed_ms < (OOM_TTL_SEC + 10) * 1000) {
		if (!present(d->port, "memwatch_cgroup_oom_kills_total", m, NULL)) {
			gone_ms = mw_mono_ms();
			break;
		}
		mw_sleep_ms(200);
	}
	ck_assert_msg(gone_ms >= 0, "memwatch_cgroup_oom_kills_total{%s} still there %d s after the removal", m,
		      OOM_TTL_SEC + 10);
	ck_assert_msg(gone_ms - removed_ms >= OOM_TTL_SEC * 1000 - 500,
		      "memwatch_cgroup_oom_kills_total{%s} gone %lld ms after the removal, series_ttl is %d s", m,
		      (long long)(gone_ms - removed_ms), OOM_TTL_SEC);
	ck_assert_msg(!present(d->port, "memwatch_cgroup_oom_kills_total", "pod=\"web-0\"", NULL),
		      "another memwatch_cgroup_oom_kills_total series of pod web-0");
	/* No Docker or Podman state in this test (make_runtime_state not run):
	 * their containers went unnamed for some 40 windows, said once each. */
	ck_assert_uint_eq(log_lines_with(d, "no docker container names: "), 1);
	ck_assert_uint_eq(log_lines_with(d, "no podman container names: "), 1);
	mw_assert_clean_stop(d);
}
END_TEST

static Suite *names_suite(void)
{
	Suite *s = suite_create("memwatchd-names");
	TCase *tc = tcase_create("live");

	/* A failed test leaves its cgroups and directories: the next one starts clean. */
	tcase_add_checked_fixture(tc, sweep, teardown);
	tcase_add_unchecked_fixture(tc, NULL, sweep);
	tcase_set_timeout(tc, TEST_TIMEOUT_SEC);
	tcase_add_test(tc, test_live_names);
	tcase_add_test(tc, test_oom_count_outlives_the_container);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr;
	int failed;

	if (geteuid() != 0) {
		fprintf(stderr, "memwatchd name tests need root (BPF, memory cgroups): skipping\n");
		return 77;
	}
	if (access(MEMWATCHD_PATH, X_OK) < 0) {
		fprintf(stderr, "%s: %m\n", MEMWATCHD_PATH);
		return 99;
	}
	if (!mw_memcg_root(&memcg_root, &memcg_v2)) {
		fprintf(stderr, "no memory cgroup hierarchy (v1 memory, or cgroup2 with memory): %s\n",
			mw_under_ci() ? "failing (CI=true)" : "skipping");
		return mw_under_ci() ? EXIT_FAILURE : 77;
	}
	fprintf(stderr, "memory cgroups: %s (%s)\n", memcg_root, memcg_v2 ? "cgroup2" : "v1");
	if (mw_init_tmp_root() < 0) {
		fprintf(stderr, "cannot create a temporary directory: %m\n");
		return 99;
	}
	runner_pid = getpid();
	sr = srunner_create(names_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	mw_keep_failures(sr);
	srunner_free(sr);
	sweep();
	if (failed) {
		mw_dump_daemon_logs(mw_tmp_root(), NULL);
		fprintf(stderr, "daemon logs and configs kept in %s\n", mw_tmp_root());
	} else {
		mw_remove_tmp_root();
	}
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
