/* SPDX-License-Identifier: GPL-2.0 */
/* Identity labels on fixture trees laid out as kubelet (both cgroup drivers),
 * systemd, docker and podman lay them out, on v1 (a memory hierarchy) and v2,
 * with a kubelet-style pods and containers directory. */
#include <check.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup_names.h"
#include "fixture.h"

#define UID_WEB "6f1b2d3c-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
#define UID_DNS "0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9"
#define UID_JOB "c0ffee00-1234-4abc-9def-0123456789ab"
#define UID_GONE "deadbeef-0000-4000-8000-000000000001"
#define UID_WEB_ "6f1b2d3c_4e5f_4a6b_8c7d_9e0f1a2b3c4d"
#define UID_DNS_ "0b1c2d3e_4f50_4617_8293_a4b5c6d7e8f9"
#define UID_JOB_ "c0ffee00_1234_4abc_9def_0123456789ab"
#define UID_GONE_ "deadbeef_0000_4000_8000_000000000001"
#define ID_APP "3d6a5c1e9b0f4a2c8e7d6b5a4c3f2e1d0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d"
#define ID_PAUSE "a1a1a1a1b2b2b2b2c3c3c3c3d4d4d4d4e5e5e5e5f6f6f6f6a7a7a7a7b8b8b8b8"
#define ID_DNS "5e4d3c2b1a09f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a392817060"
#define ID_JOB "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define ID_GONE "9999999999999999999999999999999999999999999999999999999999999999"
#define ID_STRAY "8888888888888888888888888888888888888888888888888888888888888888"
#define ID_DOCKER "f00dfeed0123456789abcdef0123456789abcdef0123456789abcdef01234567"
#define ID_PODMAN "beefcafe0123456789abcdef0123456789abcdef0123456789abcdef76543210"

struct want {
	const char *path, *unit, *namespace_, *pod, *container, *container_id;
};

#define NONE "", "", "", "", ""
#define WEB(container, id) "", "shop", "web-0", container, id
#define DNS(container, id) "", "kube-system", "coredns-5d78c9869d-x2x4q", container, id
#define JOB(container, id) "", "batch", "report-28391-abcde", container, id

/* Every cgroup of the cgroupfs-driver trees (v1-cgroupfs/memory and v2-cgroupfs). */
static const struct want cgroupfs[] = {
	{ "/", NONE },
	{ "/kubepods", NONE },
	{ "/kubepods/burstable", NONE },
	{ "/kubepods/burstable/pod" UID_WEB, WEB("", "") },
	{ "/kubepods/burstable/pod" UID_WEB "/" ID_APP, WEB("app", "3d6a5c1e9b0f") },
	/* The sandbox has no log: no container name, its id all the same. */
	{ "/kubepods/burstable/pod" UID_WEB "/" ID_PAUSE, WEB("", "a1a1a1a1b2b2") },
	/* Its only log is another pod's: never named from there. */
	{ "/kubepods/burstable/pod" UID_WEB "/" ID_STRAY, WEB("", "888888888888") },
	{ "/kubepods/pod" UID_DNS, DNS("", "") },
	{ "/kubepods/pod" UID_DNS "/" ID_DNS, DNS("coredns", "5e4d3c2b1a09") },
	{ "/kubepods/besteffort", NONE },
	{ "/kubepods/besteffort/pod" UID_JOB, JOB("", "") },
	{ "/kubepods/besteffort/pod" UID_JOB "/crio-" ID_JOB, JOB("report", "0123456789ab") },
	/* No pod directory: the pod stays unnamed, and so does its container. */
	{ "/kubepods/besteffort/pod" UID_GONE, NONE },
	{ "/kubepods/besteffort/pod" UID_GONE "/" ID_GONE, "", "", "", "", "999999999999" },
	{ "/system.slice", "system.slice", "", "", "", "" },
	{ "/system.slice/nginx.service", "nginx.service", "", "", "", "" },
	{ "/system.slice/foo\\x2dbar.service", "foo\\x2dbar.service", "", "", "", "" },
	{ "/user.slice", "user.slice", "", "", "", "" },
	{ "/user.slice/user-1000.slice", "user-1000.slice", "", "", "", "" },
	{ "/user.slice/user-1000.slice/session-3.scope", "session-3.scope", "", "", "", "" },
	{ "/docker", NONE },
	{ "/docker/" ID_DOCKER, "", "", "", "", "f00dfeed0123" },
};

#define KS "/kubepods.slice"
#define BURSTABLE KS "/kubepods-burstable.slice"
#define BESTEFFORT KS "/kubepods-besteffort.slice"
#define POD_WEB BURSTABLE "/kubepods-burstable-pod" UID_WEB_ ".slice"
#define POD_DNS KS "/kubepods-pod" UID_DNS_ ".slice"
#define POD_JOB BESTEFFORT "/kubepods-besteffort-pod" UID_JOB_ ".slice"
#define POD_GONE BESTEFFORT "/kubepods-besteffort-pod" UID_GONE_ ".slice"

/* Every cgroup of the systemd-driver trees. */
static const struct want systemd[] = {
	{ "/", NONE },
	{ KS, NONE },
	{ BURSTABLE, NONE },
	{ POD_WEB, WEB("", "") },
	{ POD_WEB "/cri-containerd-" ID_APP ".scope", WEB("app", "3d6a5c1e9b0f") },
	{ POD_WEB "/cri-containerd-" ID_PAUSE ".scope", WEB("", "a1a1a1a1b2b2") },
	{ POD_WEB "/cri-containerd-" ID_STRAY ".scope", WEB("", "888888888888") },
	{ POD_DNS, DNS("", "") },
	{ POD_DNS "/crio-" ID_DNS ".scope", DNS("coredns", "5e4d3c2b1a09") },
	/* cri-o's monitor of the container is the pod's, not the container's. */
	{ POD_DNS "/crio-conmon-" ID_DNS ".scope", DNS("", "") },
	{ BESTEFFORT, NONE },
	{ POD_JOB, JOB("", "") },
	{ POD_JOB "/docker-" ID_JOB ".scope", JOB("report", "0123456789ab") },
	{ POD_GONE, NONE },
	{ POD_GONE "/cri-containerd-" ID_GONE ".scope", "", "", "", "", "999999999999" },
	{ "/system.slice", "system.slice", "", "", "", "" },
	{ "/system.slice/nginx.service", "nginx.service", "", "", "", "" },
	{ "/system.slice/foo\\x2dbar.service", "foo\\x2dbar.service", "", "", "", "" },
	{ "/system.slice/docker-" ID_DOCKER ".scope", "", "", "", "", "f00dfeed0123" },
	{ "/machine.slice", "machine.slice", "", "", "", "" },
	{ "/machine.slice/libpod-" ID_PODMAN ".scope", "", "", "", "", "beefcafe0123" },
	{ "/machine.slice/libpod-conmon-" ID_PODMAN ".scope", NONE },
	{ "/user.slice", "user.slice", "", "", "", "" },
	{ "/user.slice/user-1000.slice", "user-1000.slice", "", "", "", "" },
	{ "/user.slice/user-1000.slice/session-3.scope", "session-3.scope", "", "", "", "" },
	{ "/user.slice/user-1000.slice/user@1000.service", "user@1000.service", "", "", "", "" },
	{ "/user.slice/user-1000.slice/user@1000.service/app.slice", "app.slice", "", "", "", "" },
	{ "/user.slice/user-1000.slice/user@1000.service/app.slice/foo.service", "foo.service", "", "", "", "" },
};

struct tree {
	const char *dir;       /* below FIXTURES_DIR/cgroup-names */
	const char *hierarchy; /* the hierarchy's root below dir: v1 has one per controller */
	const char *memory_file;
	const struct want *cgroups;
	size_t n_cgroups;
};

static const struct tree trees[] = {
	{ "v1-cgroupfs", "/memory", "memory.usage_in_bytes", cgroupfs, sizeof(cgroupfs) / sizeof(cgroupfs[0]) },
	{ "v2-cgroupfs", "", "memory.current", cgroupfs, sizeof(cgroupfs) / sizeof(cgroupfs[0]) },
	{ "v1-systemd", "/memory", "memory.usage_in_bytes", systemd, sizeof(systemd) / sizeof(systemd[0]) },
	{ "v2-systemd", "", "memory.current", systemd, sizeof(systemd) / sizeof(systemd[0]) },
};

static const struct tree *walked;
static size_t root_len, n_walked;
static char walk_error[1024];

static const struct want *find_want(const struct tree *t, const char *rel)
{
	for (size_t i = 0; i < t->n_cgroups; i++)
		if (strcmp(t->cgroups[i].path, rel) == 0)
			return &t->cgroups[i];
	return NULL;
}

/* Every directory of the tree is a cgroup the table lists, with its memory file. */
static int visit(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	char file[4096];
	const char *rel = path[root_len] ? path + root_len : "/";

	if (flag != FTW_D)
		return 0;
	n_walked++;
	snprintf(file, sizeof(file), "%s/%s", path, walked->memory_file);
	if (!find_want(walked, rel)) {
		snprintf(walk_error, sizeof(walk_error), "%s: %s is not in the test's table", walked->dir, rel);
		return 1;
	}
	if (access(file, R_OK) != 0) {
		snprintf(walk_error, sizeof(walk_error), "%s: %s has no %s", walked->dir, rel, walked->memory_file);
		return 1;
	}
	return 0;
}

static void assert_labels(const char *tree, const struct want *w, const struct cgroup_labels *l)
{
	ck_assert_msg(strcmp(l->unit, w->unit) == 0, "%s %s: unit '%s', want '%s'", tree, w->path, l->unit, w->unit);
	ck_assert_msg(strcmp(l->namespace_, w->namespace_) == 0, "%s %s: namespace '%s', want '%s'", tree, w->path,
		      l->namespace_, w->namespace_);
	ck_assert_msg(strcmp(l->pod, w->pod) == 0, "%s %s: pod '%s', want '%s'", tree, w->path, l->pod, w->pod);
	ck_assert_msg(strcmp(l->container, w->container) == 0, "%s %s: container '%s', want '%s'", tree, w->path,
		      l->container, w->container);
	ck_assert_msg(strcmp(l->container_id, w->container_id) == 0, "%s %s: container_id '%s', want '%s'", tree,
		      w->path, l->container_id, w->container_id);
}

static struct cgroup_names *fixture_names(void)
{
	struct cgroup_names *n = NULL;
	char pods[1024], containers[1024];

	ck_assert_int_eq(cgroup_names_new(&n), 0);
	snprintf(pods, sizeof(pods), "%s/cgroup-names/kubelet/pods", FIXTURES_DIR);
	snprintf(containers, sizeof(containers), "%s/cgroup-names/kubelet/containers", FIXTURES_DIR);
	ck_assert_int_eq(cgroup_names_set_dirs(n, pods, containers), 0);
	/* The host's Docker and Podman are not read: test_container_names.c has theirs. */
	ck_assert_int_eq(cgroup_names_set_container_dirs(n, "", ""), 0);
	return n;
}

START_TEST(test_fixture_trees)
{
	const struct tree *t = &trees[_i];
	_cleanup_(cgroup_names_freep) struct cgroup_names *n = fixture_names();
	char root[1024];

	snprintf(root, sizeof(root), "%s/cgroup-names/%s%s", FIXTURES_DIR, t->dir, t->hierarchy);
	walked = t;
	root_len = strlen(root);
	n_walked = 0;
	walk_error[0] = '\0';
	ck_assert_msg(nftw(root, visit, 16, FTW_PHYS) == 0, "%s", walk_error[0] ? walk_error : strerror(errno));
	/* ... and every cgroup the table lists is in the tree. */
	ck_assert_uint_eq(n_walked, t->n_cgroups);
	for (size_t i = 0; i < t->n_cgroups; i++) {
		struct cgroup_labels l;

		cgroup_names_resolve(n, t->cgroups[i].path, 1, &l);
		assert_labels(t->dir, &t->cgroups[i], &l);
	}
	/* Each miss would list the directories again, but not before the rescan interval. */
	ck_assert_uint_eq(cgroup_names_scans(n), 1);
}
END_TEST

/* Without the directories (no kubelet on the host), what the path says. */
START_TEST(test_without_kubelet)
{
	_cleanup_(cgroup_names_freep) struct cgroup_names *n = NULL;
	struct cgroup_labels l;
	const char *v[CGROUP_LABELS_N];

	ck_assert_int_eq(cgroup_names_new(&n), 0);
	ck_assert_int_eq(cgroup_names_set_dirs(n, "/nonexistent/pods", "/nonexistent/containers"), 0);
	ck_assert_int_eq(cgroup_names_set_container_dirs(n, "", ""), 0);
	cgroup_names_resolve(n, "/kubepods/pod" UID_DNS "/" ID_DNS, 1, &l);
	ck_assert_str_eq(l.pod, "");
	ck_assert_str_eq(l.namespace_, "");
	ck_assert_str_eq(l.container, "");
	ck_assert_str_eq(l.container_id, "5e4d3c2b1a09");
	cgroup_names_resolve(NULL, "/system.slice/nginx.service", 1, &l);
	ck_assert_str_eq(l.unit, "nginx.service");
	cgroup_names_resolve(n, "not/a/path", 1, &l);
	ck_assert_str_eq(l.unit, "");
	ck_assert_str_eq(l.container_id, "");

	cgroup_labels_values("/x", &l, v);
	ck_assert_str_eq(v[0], "/x");
	cgroup_labels_values("other", NULL, v);
	ck_assert_str_eq(v[0], "other");
	for (size_t i = 1; i < CGROUP_LABELS_N; i++)
		ck_assert_str_eq(v[i], "");
	ck_assert_int_eq(cgroup_names_set_dirs(n, "/a", "/b"), 0);
}
END_TEST

static char tmpdir[256];

static void tmpdir_setup(void)
{
	fixture_tmpdir_make(tmpdir, sizeof(tmpdir), "test_cgroup_names");
}

static void tmpdir_teardown(void)
{
	fixture_tmpdir_remove(tmpdir);
}

#define tpath(...) fixture_path(tmpdir, __VA_ARGS__)

static void touch(const char *path)
{
	FILE *f = fopen(path, "w");

	ck_assert_msg(f != NULL, "%s: %s", path, strerror(errno));
	fclose(f);
}

/* A pod that appears is found at the next listing after the rescan interval;
 * one that goes stays known for the keep time, then is forgotten. */
START_TEST(test_pods_come_and_go)
{
	_cleanup_(cgroup_names_freep) struct cgroup_names *n = NULL;
	const char *path = "/kubepods/burstable/pod" UID_WEB "/" ID_APP;
	char pods[512], containers[512], pod_dir[512], log[512];
	const uint64_t t0 = 1000 * USEC_PER_SEC;
	struct cgroup_labels l;

	snprintf(pods, sizeof(pods), "%s", tpath("come-and-go-pods"));
	snprintf(containers, sizeof(containers), "%s", tpath("come-and-go-containers"));
	snprintf(pod_dir, sizeof(pod_dir), "%s", tpath("come-and-go-pods/shop_web-0_" UID_WEB));
	snprintf(log, sizeof(log), "%s", tpath("come-and-go-containers/web-0_shop_app-" ID_APP ".log"));
	fixture_mkdir(pods);
	fixture_mkdir(containers);
	ck_assert_int_eq(cgroup_names_new(&n), 0);
	ck_assert_int_eq(cgroup_names_set_dirs(n, pods, containers), 0);

	cgroup_names_resolve(n, path, t0, &l);
	ck_assert_str_eq(l.pod, "");
	ck_assert_uint_eq(cgroup_names_scans(n), 1);

	fixture_mkdir(pod_dir);
	touch(log);
	/* Not listed again before the rescan interval ... */
	cgroup_names_resolve(n, path, t0 + CGROUP_NAMES_EVENT_RESCAN_USEC - 1, &l);
	ck_assert_str_eq(l.pod, "");
	cgroup_names_resolve_event(n, path, t0 + CGROUP_NAMES_EVENT_RESCAN_USEC - 1, &l);
	ck_assert_str_eq(l.pod, "");
	cgroup_names_resolve(n, path, t0 + CGROUP_NAMES_EVENT_RESCAN_USEC, &l);
	ck_assert_str_eq(l.pod, "");
	ck_assert_uint_eq(cgroup_names_scans(n), 1);
	/* ... but an OOM kill's lookup, whose cgroup soon goes, after the shorter one. */
	cgroup_names_resolve_event(n, path, t0 + CGROUP_NAMES_EVENT_RESCAN_USEC, &l);
	ck_assert_uint_eq(cgroup_names_scans(n), 2);
	ck_assert_str_eq(l.namespace_, "shop");
	ck_assert_str_eq(l.pod, "web-0");
	ck_assert_str_eq(l.container, "app");
	cgroup_names_resolve(n, path, t0 + CGROUP_NAMES_RESCAN_USEC, &l);
	ck_assert_uint_eq(cgroup_names_scans(n), 2);
	ck_assert_str_eq(l.pod, "web-0");

	/* Known: no listing for it. */
	cgroup_names_resolve(n, path, t0 + 100 * CGROUP_NAMES_RESCAN_USEC, &l);
	ck_assert_uint_eq(cgroup_names_scans(n), 2);

	/* Kubelet removed the pod's logs; another pod's miss lists them again. */
	ck_assert_int_eq(unlink(log), 0);
	ck_assert_int_eq(rmdir(pod_dir), 0);
	{
		const uint64_t gone = t0 + 200 * CGROUP_NAMES_RESCAN_USEC;

		cgroup_names_resolve(n, "/kubepods/pod" UID_DNS, gone, &l);
		ck_assert_uint_eq(cgroup_names_scans(n), 3);
		cgroup_names_resolve(n, path, gone + 1, &l);
		ck_assert_str_eq(l.pod, "web-0");
		ck_assert_str_eq(l.container, "app");
		/* Still known at every listing within the keep time... */
		cgroup_names_resolve(n, "/kubepods/pod" UID_DNS, gone + CGROUP_NAMES_KEEP_USEC - CGROUP_NAMES_RESCAN_USEC, &l);
		ck_assert_uint_eq(cgroup_names_scans(n), 4);
		cgroup_names_resolve(n, path, gone + CGROUP_NAMES_KEEP_USEC - CGROUP_NAMES_RESCAN_USEC, &l);
		ck_assert_str_eq(l.pod, "web-0");
		/* ... and forgotten at the first one after it. */
		cgroup_names_resolve(n, "/kubepods/pod" UID_DNS, gone + CGROUP_NAMES_KEEP_USEC, &l);
		ck_assert_uint_eq(cgroup_names_scans(n), 5);
		cgroup_names_resolve(n, path, gone + CGROUP_NAMES_KEEP_USEC, &l);
		ck_assert_str_eq(l.pod, "");
		ck_assert_str_eq(l.container, "");
		ck_assert_str_eq(l.container_id, "3d6a5c1e9b0f");
	}
}
END_TEST

/* More pods than the table holds: the first ones listed are kept, the rest
 * unnamed rather than named wrongly. */
START_TEST(test_bounded)
{
	_cleanup_(cgroup_names_freep) struct cgroup_names *n = NULL;
	char pods[512], containers[512], uid[64], path[256];
	size_t named = 0;
	struct cgroup_labels l;

	snprintf(pods, sizeof(pods), "%s", tpath("bounded-pods"));
	snprintf(containers, sizeof(containers), "%s", tpath("bounded-containers"));
	fixture_mkdir(pods);
	fixture_mkdir(containers);
	for (unsigned i = 0; i < CGROUP_NAMES_MAX_PODS + 10; i++) {
		snprintf(uid, sizeof(uid), "%08x-0000-4000-8000-000000000000", i);
		fixture_mkdir(tpath("bounded-pods/ns_pod-%u_%s", i, uid));
	}
	ck_assert_int_eq(cgroup_names_new(&n), 0);
	ck_assert_int_eq(cgroup_names_set_dirs(n, pods, containers), 0);
	for (unsigned i = 0; i < CGROUP_NAMES_MAX_PODS + 10; i++) {
		char want[32];

		snprintf(path, sizeof(path), "/kubepods/pod%08x-0000-4000-8000-000000000000", i);
		cgroup_names_resolve(n, path, 1, &l);
		snprintf(want, sizeof(want), "pod-%u", i);
		if (l.pod[0]) {
			ck_assert_str_eq(l.pod, want);
			named++;
		}
	}
	ck_assert_uint_eq(named, CGROUP_NAMES_MAX_PODS);
}
END_TEST

static Suite *cgroup_names_suite(void)
{
	Suite *s = suite_create("cgroup_names");
	TCase *tc = tcase_create("fixtures"), *tmp = tcase_create("tmpdir");

	tcase_add_loop_test(tc, test_fixture_trees, 0, (int)(sizeof(trees) / sizeof(trees[0])));
	tcase_add_test(tc, test_without_kubelet);
	suite_add_tcase(s, tc);
	/* Each test makes its own directories below tmpdir. */
	tcase_add_unchecked_fixture(tmp, tmpdir_setup, tmpdir_teardown);
	tcase_add_test(tmp, test_pods_come_and_go);
	tcase_add_test(tmp, test_bounded);
	suite_add_tcase(s, tmp);
	return s;
}

int main(void)
{
	return fixture_run_suite(cgroup_names_suite());
}
