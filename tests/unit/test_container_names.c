/* SPDX-License-Identifier: GPL-2.0 */
/* Docker's and Podman's container names (lib/container_names.c), read from
 * their state on disk: the recorded files of tests/fixtures/cgroup-names/
 * docker and podman (shaped as docker.io 20.10 and podman 4.3 write them,
 * and damaged ones), then through cgroup_names_resolve() on a fake Docker
 * data root and containers/storage graph root built from them in a temp
 * dir: a name found, a rename, a removal kept for CGROUP_NAMES_KEEP_USEC, a
 * malformed file (an empty label and one report), kubelet's name first. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup_names.h"
#include "container_names.h"
#include "fixture.h"

#define ID_WEB "4f2b9c1d7e6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c"
#define ID_BAD "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90"
#define ID_BAD2 "b1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90"
#define ID_HOG "9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8b7a6f5e4d3c2b1a0f9e8d"
#define ID_INFRA "0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d"
#define ID_INPOD "5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b"
#define ID_RM "7f6e5d4c3b2a19080706f5e4d3c2b1a0f9e8d7c6b5a49382716f5e4d3c2b1a09"
#define ID_BUILDAH "1111111111111111111111111111111111111111111111111111111111111111"
#define ID_NEW "2222222222222222222222222222222222222222222222222222222222222222"
#define POD_ID "c0ffee1234567890c0ffee1234567890c0ffee1234567890c0ffee1234567890"
#define ID_APP "3d6a5c1e9b0f4a2c8e7d6b5a4c3f2e1d0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d"
#define UID_WEB_ "6f1b2d3c_4e5f_4a6b_8c7d_9e0f1a2b3c4d"

#define DOCKER_SCOPE(id) "/system.slice/docker-" id ".scope"
#define LIBPOD_SCOPE(id) "/machine.slice/libpod-" id ".scope"
#define POD_SLICE "/machine.slice/machine-libpod_pod_" POD_ID ".slice" /* podman pod create, systemd driver */
#define PODMAN_LIST "storage/overlay-containers/containers.json"

/* ---- the files ---- */

static int docker_fixture(const char *name, char out[static CONTAINER_NAME_MAX])
{
	size_t len;
	char *text = fixture_read("cgroup-names/docker", name, &len);
	int r = docker_config_name(text, len, out);

	free(text);
	return r;
}

START_TEST(test_docker_files)
{
	static const struct {
		const char *file;
		int r;
		const char *name;
	} cases[] = {
		{ "web.config.v2.json", 0, "web" }, /* not a label's or a volume's "Name" */
		{ "renamed.config.v2.json", 0, "web-renamed" },
		{ "escapes.config.v2.json", 0, "caf\xc3\xa9" },
		{ "quote.config.v2.json", 0, "say\"hi" },
		{ "no-name.config.v2.json", -ENODATA, "" },
		{ "long-name.config.v2.json", -ENOBUFS, "" },
		{ "truncated.config.v2.json", -EBADMSG, "" },
		{ "not-json.config.v2.json", -EBADMSG, "" },
		{ "empty.config.v2.json", -EBADMSG, "" },
		{ "array.config.v2.json", -EBADMSG, "" },
		{ "nested-deep.config.v2.json", -EBADMSG, "" },
		{ "name-not-string.config.v2.json", -EBADMSG, "" },
		{ "name-without-slash.config.v2.json", -EBADMSG, "" },
	};
	char name[CONTAINER_NAME_MAX];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ck_assert_msg(docker_fixture(cases[i].file, name) == cases[i].r, "%s", cases[i].file);
		ck_assert_str_eq(name, cases[i].name);
	}
}
END_TEST

struct pairs {
	char text[4096];
	size_t n;
};

static void collect(const char *id, const char *name, void *userdata)
{
	struct pairs *p = userdata;
	size_t len = strlen(p->text);

	snprintf(p->text + len, sizeof(p->text) - len, "%.12s=%s;", id, name);
	p->n++;
}

static int podman_fixture(const char *name, struct pairs *p)
{
	size_t len;
	char *text = fixture_read("cgroup-names/podman", name, &len);
	int r;

	*p = (struct pairs){ .n = 0 };
	r = podman_list_names(text, len, collect, p);
	free(text);
	return r;
}

START_TEST(test_podman_files)
{
	struct pairs p;

	ck_assert_int_eq(podman_fixture("containers.json", &p), 0);
	ck_assert_str_eq(p.text, "9e8d7c6b5a4f=hog;0c1d2e3f4a5b=c0ffee123456-infra;5a6b7c8d9e0f=pod-worker;"
				 "111111111111=working-container;");
	ck_assert_int_eq(podman_fixture("volatile-containers.json", &p), 0);
	ck_assert_str_eq(p.text, "7f6e5d4c3b2a=rm-me;");
	ck_assert_int_eq(podman_fixture("empty.containers.json", &p), 0);
	ck_assert_uint_eq(p.n, 0);
	/* The first name only; no names, an empty list, things that are not
	 * containers, a bad id, a name that is not a string: passed over. A
	 * container listed twice comes twice (the store keeps the last). */
	ck_assert_int_eq(podman_fixture("ugly.containers.json", &p), 0);
	ck_assert_str_eq(p.text, "9e8d7c6b5a4f=caf\xc3\xa9;111111111111=first-listing;111111111111=listed-twice;");
	ck_assert_int_eq(podman_fixture("truncated.containers.json", &p), -EBADMSG);
	ck_assert_int_eq(podman_fixture("object.containers.json", &p), -EBADMSG);
	ck_assert_int_eq(podman_fixture("trailing-garbage.containers.json", &p), -EBADMSG);
}
END_TEST

/* ---- the stores ---- */

static char tmpdir[256];

static void tmpdir_setup(void)
{
	fixture_tmpdir_make(tmpdir, sizeof(tmpdir), "test_container_names");
}

static void tmpdir_teardown(void)
{
	fixture_tmpdir_remove(tmpdir);
}

struct reports {
	unsigned n;
	char last[1024];
};

static void count_report(const char *source, const char *why, void *userdata)
{
	struct reports *r = userdata;

	r->n++;
	snprintf(r->last, sizeof(r->last), "%s: %s", source, why);
}

/* Writes a fixture's bytes to path through a new file renamed over it, as
 * both runtimes save theirs (a new inode each time). */
static void install(const char *subdir, const char *fixture, const char *path)
{
	char tmp[1100];
	size_t len;
	char *text = fixture_read(subdir, fixture, &len);
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "wb");
	ck_assert_msg(f != NULL, "%s: %s", tmp, strerror(errno));
	ck_assert_uint_eq(fwrite(text, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(rename(tmp, path), 0);
	free(text);
}

static const char *docker_config(const char *id)
{
	const char *dir = fixture_path(tmpdir, "docker/containers/%s", id);

	ck_assert_msg(mkdir(dir, 0755) == 0 || errno == EEXIST, "mkdir %s: %s", dir, strerror(errno));
	return fixture_path(tmpdir, "docker/containers/%s/config.v2.json", id);
}

static struct cgroup_names *names_on_tmpdir(struct reports *reports)
{
	struct cgroup_names *n = NULL;

	ck_assert_int_eq(cgroup_names_new(&n), 0);
	ck_assert_int_eq(cgroup_names_set_dirs(n, "/nonexistent/pods", "/nonexistent/containers"), 0);
	ck_assert_int_eq(cgroup_names_set_container_dirs(n, fixture_path(tmpdir, "docker"),
							 fixture_path(tmpdir, "storage")), 0);
	cgroup_names_set_report(n, count_report, reports);
	return n;
}

static const char *container_of(struct cgroup_names *n, const char *path, uint64_t now)
{
	static struct cgroup_labels l;

	cgroup_names_resolve(n, path, now, &l);
	return l.container;
}

START_TEST(test_docker_store)
{
	struct reports reports = { 0 };
	_cleanup_(cgroup_names_freep) struct cgroup_names *n = NULL;
	const uint64_t t0 = 1000 * CGROUP_NAMES_RESCAN_USEC, gone = t0 + 10 * CGROUP_NAMES_RESCAN_USEC;
	struct cgroup_labels l;
	uint64_t reads;

	fixture_mkdir(fixture_path(tmpdir, "docker"));
	fixture_mkdir(fixture_path(tmpdir, "docker/containers"));
	install("cgroup-names/docker", "web.config.v2.json", docker_config(ID_WEB));
	n = names_on_tmpdir(&reports);

	/* The systemd driver's scope and the cgroupfs driver's directory. */
	cgroup_names_resolve(n, DOCKER_SCOPE(ID_WEB), t0, &l);
	ck_assert_str_eq(l.container, "web");
	ck_assert_str_eq(l.container_id, "4f2b9c1d7e6a");
	ck_assert_str_eq(l.unit, "");
	ck_assert_str_eq(container_of(n, "/docker/" ID_WEB, t0), "web");
	ck_assert_uint_eq(cgroup_names_runtime_reads(n), 1);

	/* docker rename writes a new config.v2.json: seen at the next check,
	 * not before (a name known costs no I/O in between). */
	install("cgroup-names/docker", "renamed.config.v2.json", docker_config(ID_WEB));
	ck_assert_str_eq(container_of(n, DOCKER_SCOPE(ID_WEB), t0 + CGROUP_NAMES_RESCAN_USEC - 1), "web");
	ck_assert_uint_eq(cgroup_names_runtime_reads(n), 1);
	ck_assert_str_eq(container_of(n, DOCKER_SCOPE(ID_WEB), t0 + CGROUP_NAMES_RESCAN_USEC), "web-renamed");
	ck_assert_uint_eq(cgroup_names_runtime_reads(n), 2);
	/* Unchanged: looked at, not read again. */
	ck_assert_str_eq(container_of(n, DOCKER_SCOPE(ID_WEB), t0 + 2 * CGROUP_NAMES_RESCAN_USEC), "web-renamed");
	ck_assert_uint_eq(cgroup_names_runtime_reads(n), 2);

	/* docker rm: the name stays CGROUP_NAMES_KEEP_USEC, then goes, and
	 * a removed container is nothing to report. */
	ck_assert_int_eq(unlink(docker_config(ID_WEB)), 0);
	ck_assert_str_eq(container_of(n, DOCKER_SCOPE(ID_WEB), gone), "web-renamed");
	ck_assert_str_eq(container_of(n, DOCKER_SCOPE(ID_WEB), gone + CGROUP_NAMES_KEEP_USEC - 1), "web-renamed");
	ck_assert_str_eq(container_of(n, DOCKER_SCOPE(ID_WEB), gone + CGROUP_NAMES_KEEP_USEC), "");
	ck_assert_str_eq(container_of(n, DOCKER_SCOPE(ID_WEB), gone + 2 * CGROUP_NAMES_KEEP_USEC), "");
	ck_assert_uint_eq(reports.n, 0);

	/* Malformed files: empty labels, one report for the runtime, with the file in it. */
	install("cgroup-names/docker", "truncated.config.v2.json", docker_config(ID_BAD));
	install("cgroup-names/docker", "no-name.config.v2.json", docker_config(ID_BAD2));
	reads = cgroup_names_runtime_reads(n);
	for (unsigned w = 0; w < 5; w++) {
		ck_assert_str_eq(container_of(n, DOCKER_SCOPE(ID_BAD), t0 + w * CGROUP_NAMES_RESCAN_USEC), "");
		ck_assert_str_eq(container_of(n, DOCKER_SCOPE(ID_BAD2), t0 + w * CGROUP_NAMES_RESCAN_USEC), "");
	}
	ck_assert_uint_eq(reports.n, 1);
	ck_assert_msg(strstr(reports.last, "docker: ") && strstr(reports.last, ID_BAD "/config.v2.json") &&
			      strstr(reports.last, "not valid JSON"),
		      "%s", reports.last);
	/* Looked at each rescan interval, read again only once changed. */
	ck_assert_uint_eq(cgroup_names_runtime_reads(n), reads + 2);
	install("cgroup-names/docker", "web.config.v2.json", docker_config(ID_BAD));
	ck_assert_str_eq(container_of(n, DOCKER_SCOPE(ID_BAD), t0 + 5 * CGROUP_NAMES_RESCAN_USEC), "web");

	/* Another directory: forgotten, and its trouble is reported again. */
	ck_assert_int_eq(cgroup_names_set_container_dirs(n, fixture_path(tmpdir, "nothing"), ""), 0);
	ck_assert_str_eq(container_of(n, DOCKER_SCOPE(ID_BAD), t0), "");
	ck_assert_uint_eq(reports.n, 2);
	ck_assert_msg(strstr(reports.last, "No such file"), "%s", reports.last);
}
END_TEST

static void podman_store(const char *list_fixture)
{
	fixture_mkdir(fixture_path(tmpdir, "storage"));
	fixture_mkdir(fixture_path(tmpdir, "storage/overlay-containers"));
	fixture_mkdir(fixture_path(tmpdir, "storage/overlay-images")); /* not a containers list */
	if (list_fixture)
		install("cgroup-names/podman", list_fixture, fixture_path(tmpdir, PODMAN_LIST));
}

START_TEST(test_podman_store)
{
	struct reports reports = { 0 };
	_cleanup_(cgroup_names_freep) struct cgroup_names *n = NULL;
	const uint64_t t0 = 1000 * CGROUP_NAMES_RESCAN_USEC, gone = t0 + 10 * CGROUP_NAMES_RESCAN_USEC;
	const char *list = NULL;
	struct cgroup_labels l;

	podman_store("containers.json");
	list = fixture_path(tmpdir, PODMAN_LIST);
	install("cgroup-names/podman", "volatile-containers.json",
		fixture_path(tmpdir, "storage/overlay-containers/volatile-containers.json"));
	n = names_on_tmpdir(&reports);

	cgroup_names_resolve(n, LIBPOD_SCOPE(ID_HOG), t0, &l);
	ck_assert_str_eq(l.container, "hog");
	ck_assert_str_eq(l.container_id, "9e8d7c6b5a4f");
	ck_assert_str_eq(container_of(n, "/libpod_parent/libpod-" ID_HOG, t0), "hog");
	ck_assert_str_eq(container_of(n, LIBPOD_SCOPE(ID_RM), t0), "rm-me"); /* podman run --rm */
	/* A pod's containers, below the pod's slice: their own names, no pod's. */
	cgroup_names_resolve(n, POD_SLICE "/libpod-" ID_INPOD ".scope", t0, &l);
	ck_assert_str_eq(l.container, "pod-worker");
	ck_assert_str_eq(l.pod, "");
	ck_assert_str_eq(l.unit, "");
	ck_assert_str_eq(container_of(n, POD_SLICE "/libpod-" ID_INFRA ".scope", t0), "c0ffee123456-infra");
	/* conmon is not the container; Docker's path is not looked up in Podman's store. */
	ck_assert_str_eq(container_of(n, "/machine.slice/libpod-conmon-" ID_HOG ".scope", t0), "");
	ck_assert_str_eq(container_of(n, DOCKER_SCOPE(ID_HOG), t0), "");
	ck_assert_uint_eq(reports.n, 1); /* no Docker here */
	ck_assert_uint_eq(cgroup_names_runtime_reads(n), 2); /* the two lists, once */

	/* podman rename rewrites the list: read again at the next look. */
	install("cgroup-names/podman", "renamed.containers.json", list);
	ck_assert_str_eq(container_of(n, LIBPOD_SCOPE(ID_HOG), t0 + CGROUP_NAMES_RESCAN_USEC - 1), "hog");
	ck_assert_str_eq(container_of(n, LIBPOD_SCOPE(ID_HOG), t0 + CGROUP_NAMES_RESCAN_USEC), "hog-renamed");
	ck_assert_uint_eq(cgroup_names_runtime_reads(n), 4);
	ck_assert_str_eq(container_of(n, LIBPOD_SCOPE(ID_HOG), t0 + 3 * CGROUP_NAMES_RESCAN_USEC), "hog-renamed");
	ck_assert_uint_eq(cgroup_names_runtime_reads(n), 4); /* unchanged: not read */

	/* podman rm: kept CGROUP_NAMES_KEEP_USEC. */
	install("cgroup-names/podman", "removed.containers.json", list);
	ck_assert_str_eq(container_of(n, LIBPOD_SCOPE(ID_HOG), gone), "hog-renamed");
	ck_assert_str_eq(container_of(n, LIBPOD_SCOPE(ID_INPOD), gone), "pod-worker");
	ck_assert_str_eq(container_of(n, LIBPOD_SCOPE(ID_HOG), gone + CGROUP_NAMES_KEEP_USEC - 1), "hog-renamed");
	ck_assert_str_eq(container_of(n, LIBPOD_SCOPE(ID_HOG), gone + CGROUP_NAMES_KEEP_USEC), "");

	/* A container listed twice: its last listing; names missing: no name. */
	install("cgroup-names/podman", "ugly.containers.json", list);
	ck_assert_str_eq(container_of(n, LIBPOD_SCOPE(ID_BUILDAH), gone + 2 * CGROUP_NAMES_KEEP_USEC), "listed-twice");
	ck_assert_str_eq(container_of(n, LIBPOD_SCOPE(ID_HOG), gone + 2 * CGROUP_NAMES_KEEP_USEC), "caf\xc3\xa9");
	ck_assert_uint_eq(reports.n, 1);
}
END_TEST

/* A container started a moment ago: an OOM kill's lookup reads the lists
 * again after CGROUP_NAMES_EVENT_RESCAN_USEC, a window's not before
 * CGROUP_NAMES_RESCAN_USEC. */
START_TEST(test_podman_new_container)
{
	struct reports reports = { 0 };
	_cleanup_(cgroup_names_freep) struct cgroup_names *n = NULL;
	const uint64_t t0 = 1000 * CGROUP_NAMES_RESCAN_USEC, t1 = t0 + CGROUP_NAMES_EVENT_RESCAN_USEC;
	struct cgroup_labels l;
	char *text;
	size_t len;
	FILE *f;

	podman_store("containers.json");
	n = names_on_tmpdir(&reports);
	ck_assert_str_eq(container_of(n, LIBPOD_SCOPE(ID_NEW), t0), "");
	/* podman run --name fresh: the list gets it. */
	text = fixture_read("cgroup-names/podman", "containers.json", &len);
	f = fopen(fixture_path(tmpdir, "storage/overlay-containers/containers.json.tmp"), "wb");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "[{\"id\":\"%s\",\"names\":[\"fresh\"],\"image\":\"x\",\"layer\":\"y\"},%.*s", ID_NEW, (int)len - 1,
		text + 1);
	ck_assert_int_eq(fclose(f), 0);
	free(text);
	ck_assert_int_eq(rename(fixture_path(tmpdir, "storage/overlay-containers/containers.json.tmp"),
				fixture_path(tmpdir, PODMAN_LIST)), 0);
	ck_assert_str_eq(container_of(n, LIBPOD_SCOPE(ID_NEW), t1 - 1), "");
	cgroup_names_resolve_event(n, LIBPOD_SCOPE(ID_NEW), t1 - 1, &l);
	ck_assert_str_eq(l.container, "");
	ck_assert_str_eq(container_of(n, LIBPOD_SCOPE(ID_NEW), t1), ""); /* a window's lookup waits */
	cgroup_names_resolve_event(n, LIBPOD_SCOPE(ID_NEW), t1, &l);
	ck_assert_str_eq(l.container, "fresh");
	ck_assert_str_eq(container_of(n, LIBPOD_SCOPE(ID_HOG), t1), "hog");
	ck_assert_uint_eq(reports.n, 0);
}
END_TEST

START_TEST(test_podman_malformed)
{
	struct reports reports = { 0 };
	_cleanup_(cgroup_names_freep) struct cgroup_names *n = NULL;
	const uint64_t t0 = 1000 * CGROUP_NAMES_RESCAN_USEC;

	podman_store("truncated.containers.json");
	n = names_on_tmpdir(&reports);
	for (unsigned w = 0; w < 4; w++) {
		ck_assert_str_eq(container_of(n, LIBPOD_SCOPE(ID_HOG), t0 + w * CGROUP_NAMES_RESCAN_USEC), "");
		ck_assert_str_eq(container_of(n, LIBPOD_SCOPE(ID_INPOD), t0 + w * CGROUP_NAMES_RESCAN_USEC), "");
	}
	ck_assert_uint_eq(reports.n, 1);
	ck_assert_msg(strstr(reports.last, "podman: ") && strstr(reports.last, "overlay-containers/containers.json") &&
			      strstr(reports.last, "not valid JSON"),
		      "%s", reports.last);
	/* Read once: a list that did not change is not read again. */
	ck_assert_uint_eq(cgroup_names_runtime_reads(n), 1);
	/* Mended: named at the next look. */
	install("cgroup-names/podman", "containers.json", fixture_path(tmpdir, PODMAN_LIST));
	ck_assert_str_eq(container_of(n, LIBPOD_SCOPE(ID_HOG), t0 + 4 * CGROUP_NAMES_RESCAN_USEC), "hog");
	ck_assert_uint_eq(reports.n, 1);
}
END_TEST

/* No store: said once, whatever the number of containers and windows. */
START_TEST(test_missing_stores)
{
	struct reports reports = { 0 };
	_cleanup_(cgroup_names_freep) struct cgroup_names *n = NULL;

	n = names_on_tmpdir(&reports);
	for (unsigned w = 0; w < 3; w++) {
		ck_assert_str_eq(container_of(n, LIBPOD_SCOPE(ID_HOG), 1 + w * CGROUP_NAMES_RESCAN_USEC), "");
		ck_assert_str_eq(container_of(n, LIBPOD_SCOPE(ID_INPOD), 1 + w * CGROUP_NAMES_RESCAN_USEC), "");
	}
	ck_assert_uint_eq(reports.n, 1);
	ck_assert_msg(strstr(reports.last, "podman: ") && strstr(reports.last, "No such file"), "%s", reports.last);
	for (unsigned w = 0; w < 3; w++) {
		ck_assert_str_eq(container_of(n, DOCKER_SCOPE(ID_WEB), 1 + w * CGROUP_NAMES_RESCAN_USEC), "");
		ck_assert_str_eq(container_of(n, DOCKER_SCOPE(ID_HOG), 1 + w * CGROUP_NAMES_RESCAN_USEC), "");
	}
	ck_assert_uint_eq(reports.n, 2);
	ck_assert_msg(strstr(reports.last, "docker: "), "%s", reports.last);

	/* Empty: the runtime is off, nothing is read or said. */
	ck_assert_int_eq(cgroup_names_set_container_dirs(n, "", ""), 0);
	ck_assert_str_eq(container_of(n, DOCKER_SCOPE(ID_WEB), 1), "");
	ck_assert_str_eq(container_of(n, LIBPOD_SCOPE(ID_HOG), 1), "");
	ck_assert_uint_eq(reports.n, 2);
	ck_assert_uint_eq(cgroup_names_runtime_reads(n), 0);
}
END_TEST

/* A pod's container that kubelet names (dockershim's docker-<id>.scope):
 * kubelet's name, not Docker's k8s_... one. */
START_TEST(test_kubelet_first)
{
	struct reports reports = { 0 };
	_cleanup_(cgroup_names_freep) struct cgroup_names *n = NULL;
	char pods[1024], containers[1024];
	struct cgroup_labels l;

	fixture_mkdir(fixture_path(tmpdir, "docker"));
	fixture_mkdir(fixture_path(tmpdir, "docker/containers"));
	install("cgroup-names/docker", "web.config.v2.json", docker_config(ID_APP));
	n = names_on_tmpdir(&reports);
	snprintf(pods, sizeof(pods), "%s/cgroup-names/kubelet/pods", FIXTURES_DIR);
	snprintf(containers, sizeof(containers), "%s/cgroup-names/kubelet/containers", FIXTURES_DIR);
	ck_assert_int_eq(cgroup_names_set_dirs(n, pods, containers), 0);
	cgroup_names_resolve(n,
			     "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_WEB_
			     ".slice/docker-" ID_APP ".scope",
			     1, &l);
	ck_assert_str_eq(l.pod, "web-0");
	ck_assert_str_eq(l.container, "app");
	ck_assert_uint_eq(cgroup_names_runtime_reads(n), 0);
}
END_TEST

/* A config.v2.json past DOCKER_CONFIG_MAX (a huge environment) is refused, not read whole. */
START_TEST(test_docker_huge)
{
	struct reports reports = { 0 };
	_cleanup_(cgroup_names_freep) struct cgroup_names *n = NULL;
	FILE *f;

	fixture_mkdir(fixture_path(tmpdir, "docker"));
	fixture_mkdir(fixture_path(tmpdir, "docker/containers"));
	f = fopen(docker_config(ID_WEB), "wb");
	ck_assert_ptr_nonnull(f);
	fputs("{\"Config\":{\"Env\":[", f);
	for (unsigned i = 0; i < DOCKER_CONFIG_MAX / 100; i++)
		fprintf(f, "%s\"K%u=%0100u\"", i ? "," : "", i, i);
	fputs("]},\"Name\":\"/huge\"}", f);
	ck_assert_int_eq(fclose(f), 0);
	n = names_on_tmpdir(&reports);
	ck_assert_str_eq(container_of(n, DOCKER_SCOPE(ID_WEB), 1), "");
	ck_assert_uint_eq(reports.n, 1);
	ck_assert_msg(strstr(reports.last, "too large") || strstr(reports.last, "too big"), "%s", reports.last);
}
END_TEST

static Suite *container_names_suite(void)
{
	Suite *s = suite_create("container_names");
	TCase *files = tcase_create("files"), *stores = tcase_create("stores");

	tcase_add_test(files, test_docker_files);
	tcase_add_test(files, test_podman_files);
	suite_add_tcase(s, files);
	tcase_add_checked_fixture(stores, tmpdir_setup, tmpdir_teardown);
	tcase_add_test(stores, test_docker_store);
	tcase_add_test(stores, test_podman_store);
	tcase_add_test(stores, test_podman_new_container);
	tcase_add_test(stores, test_podman_malformed);
	tcase_add_test(stores, test_missing_stores);
	tcase_add_test(stores, test_kubelet_first);
	tcase_add_test(stores, test_docker_huge);
	suite_add_tcase(s, stores);
	return s;
}

int main(void)
{
	return fixture_run_suite(container_names_suite());
}
