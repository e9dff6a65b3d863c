/* SPDX-License-Identifier: GPL-2.0 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup_identity.h"
#include "fixture.h"

#define ID1 "3d6a5c1e9b0f4a2c8e7d6b5a4c3f2e1d0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d"
#define ID2 "f00dfeed0123456789abcdef0123456789abcdef0123456789abcdef01234567"
#define UID "6f1b2d3c-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
#define UID_ "6f1b2d3c_4e5f_4a6b_8c7d_9e0f1a2b3c4d"
#define STATIC_UID "0a1b2c3d4e5f60718293a4b5c6d7e8f9"

struct want {
	const char *path, *unit, *pod_uid, *container_id;
};

static const struct want cases[] = {
	/* systemd */
	{ "/", "", "", "" },
	{ "/system.slice", "system.slice", "", "" },
	{ "/system.slice/nginx.service", "nginx.service", "", "" },
	{ "/system.slice/docker.service", "docker.service", "", "" },
	{ "/system.slice/system-getty.slice/getty@tty1.service", "getty@tty1.service", "", "" },
	{ "/user.slice/user-1000.slice/session-3.scope", "session-3.scope", "", "" },
	{ "/user.slice/user-1000.slice/user@1000.service", "user@1000.service", "", "" },
	{ "/user.slice/user-1000.slice/user@1000.service/app.slice/foo.service", "foo.service", "", "" },
	{ "/user.slice/user-1000.slice/user@1000.service/app.slice", "app.slice", "", "" },
	{ "/user.slice/user-1000.slice/user@1000.service/init.scope", "init.scope", "", "" },
	{ "/system.slice/foo\\x2dbar.service", "foo\\x2dbar.service", "", "" },
	{ "/system.slice/systemd-fsck@dev-disk-by\\x2duuid-ab12.service", "systemd-fsck@dev-disk-by\\x2duuid-ab12.service", "", "" },
	{ "/system.slice/var-lib-docker.mount", "var-lib-docker.mount", "", "" },
	{ "/system.slice/app.service/worker", "app.service", "", "" }, /* a delegated subtree */
	{ "/system.slice/.service", "system.slice", "", "" },
	{ "/system.slice/@.service", "system.slice", "", "" },
	{ "/system.slice/a b.service", "system.slice", "", "" },
	{ "/mwtest", "", "", "" },
	{ "/sys/fs/cgroup/memory/system.slice/cron.service", "cron.service", "", "" },
	{ "//system.slice//nginx.service/", "nginx.service", "", "" },
	/* Kubernetes, cgroupfs driver (v1 and v2 alike) */
	{ "/kubepods", "", "", "" },
	{ "/kubepods/burstable", "", "", "" },
	{ "/kubepods/besteffort", "", "", "" },
	{ "/kubepods/burstable/pod" UID, "", UID, "" },
	{ "/kubepods/burstable/pod" UID "/" ID1, "", UID, ID1 },
	{ "/kubepods/besteffort/pod" UID "/" ID2, "", UID, ID2 },
	{ "/kubepods/pod" UID "/" ID1, "", UID, ID1 }, /* guaranteed */
	{ "/kubepods/pod" STATIC_UID "/" ID1, "", STATIC_UID, ID1 }, /* a static pod */
	{ "/kubepods/burstable/pod" UID "/crio-" ID1, "", UID, ID1 },
	{ "/sys/fs/cgroup/memory/kubepods/burstable/pod" UID "/" ID1, "", UID, ID1 },
	{ "/kubepods/burstable/pod" UID_ "/" ID1, "", "", ID1 }, /* underscores are the systemd driver's */
	{ "/kubepods/burstable/pod6F1B2D3C-4E5F-4A6B-8C7D-9E0F1A2B3C4D", "", "", "" },
	{ "/kubepods/burstable/pod" UID "x", "", "", "" },
	{ "/kubepods/burstable/pod", "", "", "" },
	{ "/burstable/pod" UID "/" ID1, "", "", ID1 }, /* no kubepods: no pod */
	/* Kubernetes, systemd driver */
	{ "/kubepods.slice", "", "", "" },
	{ "/kubepods.slice/kubepods-burstable.slice", "", "", "" },
	{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_ ".slice", "", UID, "" },
	{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_ ".slice/cri-containerd-" ID1 ".scope",
	  "", UID, ID1 },
	{ "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_ ".slice/crio-" ID2 ".scope", "", UID,
	  ID2 },
	{ "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_ ".slice/crio-" ID2 ".scope/container",
	  "", UID, ID2 },
	{ "/kubepods.slice/kubepods-pod" UID_ ".slice/docker-" ID1 ".scope", "", UID, ID1 }, /* guaranteed */
	{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_ ".slice/crio-conmon-" ID1 ".scope", "",
	  UID, "" },
	{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" STATIC_UID ".slice/crio-" ID1 ".scope", "",
	  STATIC_UID, ID1 },
	{ "/kubepods.slice/kubepods-burstable.slice/kubepods-guaranteed-pod" UID_ ".slice", "", "", "" },
	{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID ".slice", "", "", "" },
	{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_ ".slice/cri-containerd-" ID1 ".scope.x",
	  "", UID, "" },
	{ "/sys/fs/cgroup/kubepods.slice/kubepods-pod" UID_ ".slice/cri-containerd-" ID1 ".scope", "", UID, ID1 },
	/* kind: a node is a container; kubelet runs below it with a root of its own */
	{ "/system.slice/docker-" ID2 ".scope/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-burstable.slice/"
	  "kubelet-kubepods-burstable-pod" UID_ ".slice/cri-containerd-" ID1 ".scope",
	  "", UID, ID1 },
	/* containers without Kubernetes */
	{ "/docker/" ID1, "", "", ID1 },
	{ "/docker", "", "", "" },
	{ "/system.slice/docker-" ID1 ".scope", "", "", ID1 },
	{ "/machine.slice/libpod-" ID2 ".scope", "", "", ID2 },
	{ "/machine.slice/libpod-" ID2 ".scope/container", "", "", ID2 },
	{ "/machine.slice/libpod-conmon-" ID2 ".scope", "", "", "" },
	{ "/libpod_parent/libpod-" ID2, "", "", ID2 },
	{ "/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" ID2 ".scope", "", "", ID2 },
	{ "/system.slice/containerd.service", "containerd.service", "", "" },
	{ "/system.slice/nerdctl-" ID1 ".scope", "", "", ID1 },
	{ "/docker/" ID1 "/docker/" ID2, "", "", ID2 }, /* docker in docker */
	{ "/system.slice/snap-" ID1 ".scope", "snap-" ID1 ".scope", "", "" }, /* not a runtime's */
	{ "/docker/3D6A5C1E9B0F4A2C8E7D6B5A4C3F2E1D0A9B8C7D6E5F4A3B2C1D0E9F8A7B6C5D", "", "", "" },
	{ "/docker/" "3d6a5c1e9b0f4a2c8e7d6b5a4c3f2e1d0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5", "", "", "" }, /* 63 */
	{ "/docker-" ID1 ".scope", "", "", ID1 },
};

START_TEST(test_paths)
{
	const struct want *w = &cases[_i];
	struct cgroup_identity id;
	char *copy = dup_exact(w->path, strlen(w->path) + 1);

	ck_assert_int_eq(cgroup_identity_parse(copy, &id), 0);
	ck_assert_msg(strcmp(id.unit, w->unit) == 0, "%s: unit '%s', want '%s'", w->path, id.unit, w->unit);
	ck_assert_msg(strcmp(id.pod_uid, w->pod_uid) == 0, "%s: pod uid '%s', want '%s'", w->path, id.pod_uid,
		      w->pod_uid);
	ck_assert_msg(strcmp(id.container_id, w->container_id) == 0, "%s: container id '%s', want '%s'", w->path,
		      id.container_id, w->container_id);
	free(copy);
}
END_TEST

/* Which runtime's state names the container: the deepest container's. */
static const struct {
	const char *path;
	enum cgroup_runtime runtime;
} runtimes[] = {
	{ "/docker/" ID1, CGROUP_RUNTIME_DOCKER },
	{ "/sys/fs/cgroup/memory/docker/" ID1, CGROUP_RUNTIME_DOCKER },
	{ "/system.slice/docker-" ID1 ".scope", CGROUP_RUNTIME_DOCKER },
	{ "/docker/" ID1 "/docker/" ID2, CGROUP_RUNTIME_DOCKER },
	{ "/kubepods.slice/kubepods-pod" UID_ ".slice/docker-" ID1 ".scope", CGROUP_RUNTIME_DOCKER },
	{ "/machine.slice/libpod-" ID2 ".scope", CGROUP_RUNTIME_PODMAN },
	{ "/machine.slice/libpod-" ID2 ".scope/container", CGROUP_RUNTIME_PODMAN },
	{ "/libpod_parent/libpod-" ID2, CGROUP_RUNTIME_PODMAN },
	{ "/machine.slice/machine-libpod_pod_" ID1 ".slice/libpod-" ID2 ".scope", CGROUP_RUNTIME_PODMAN },
	{ "/machine.slice/libpod-conmon-" ID2 ".scope", CGROUP_RUNTIME_OTHER },
	{ "/machine.slice/libpod-" ID2 ".scope/libpod-conmon-" ID1 ".scope", CGROUP_RUNTIME_OTHER },
	{ "/machine.slice/machine-libpod_pod_" ID1 ".slice", CGROUP_RUNTIME_OTHER },
	{ "/system.slice/docker-" ID2 ".scope/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-burstable.slice/"
	  "kubelet-kubepods-burstable-pod" UID_ ".slice/cri-containerd-" ID1 ".scope",
	  CGROUP_RUNTIME_OTHER },
	{ "/kubepods/burstable/pod" UID "/" ID1, CGROUP_RUNTIME_OTHER },
	{ "/kubepods/burstable/pod" UID "/crio-" ID1, CGROUP_RUNTIME_OTHER },
	{ "/dockerd/" ID1, CGROUP_RUNTIME_OTHER },
	{ "/" ID1, CGROUP_RUNTIME_OTHER },
	{ "/system.slice/nerdctl-" ID1 ".scope", CGROUP_RUNTIME_OTHER },
	{ "/system.slice/docker.service", CGROUP_RUNTIME_OTHER },
	{ "/docker", CGROUP_RUNTIME_OTHER },
};

START_TEST(test_runtimes)
{
	struct cgroup_identity id;
	char *copy = dup_exact(runtimes[_i].path, strlen(runtimes[_i].path) + 1);

	ck_assert_int_eq(cgroup_identity_parse(copy, &id), 0);
	ck_assert_msg(id.runtime == runtimes[_i].runtime, "%s: runtime %d, want %d", runtimes[_i].path, id.runtime,
		      runtimes[_i].runtime);
	ck_assert(id.runtime == CGROUP_RUNTIME_OTHER || id.container_id[0]);
	free(copy);
}
END_TEST

START_TEST(test_bad_paths)
{
	struct cgroup_identity id;
	char longest[8192];

	ck_assert_int_eq(cgroup_identity_parse(NULL, &id), -EINVAL);
	ck_assert_int_eq(cgroup_identity_parse("system.slice/nginx.service", &id), -EINVAL);
	ck_assert_str_eq(id.unit, "");
	ck_assert_int_eq(cgroup_identity_parse("", &id), -EINVAL);
	/* A component longer than any unit name is no unit. */
	memset(longest, 'a', sizeof(longest));
	longest[0] = '/';
	memcpy(longest + sizeof(longest) - 9, ".service", 9);
	ck_assert_int_eq(cgroup_identity_parse(longest, &id), 0);
	ck_assert_str_eq(id.unit, "");
	memcpy(longest + 1, "x.service/", 10);
	ck_assert_int_eq(cgroup_identity_parse(longest, &id), 0);
	ck_assert_str_eq(id.unit, "x.service");
}
END_TEST

START_TEST(test_pod_dirs)
{
	struct kubelet_pod_dir d;

	ck_assert_int_eq(kubelet_pod_dir_parse("shop_web-0_" UID, &d), 0);
	ck_assert_str_eq(d.namespace_, "shop");
	ck_assert_str_eq(d.pod, "web-0");
	ck_assert_str_eq(d.uid, UID);
	ck_assert_int_eq(kubelet_pod_dir_parse("kube-system_kube-apiserver-node1.example.com_" STATIC_UID, &d), 0);
	ck_assert_str_eq(d.namespace_, "kube-system");
	ck_assert_str_eq(d.pod, "kube-apiserver-node1.example.com");
	ck_assert_str_eq(d.uid, STATIC_UID);

	ck_assert_int_eq(kubelet_pod_dir_parse("shop_web-0_" UID_, &d), -EINVAL);
	ck_assert_str_eq(d.pod, "");
	ck_assert_int_eq(kubelet_pod_dir_parse("shop_web_0_" UID, &d), -EINVAL);
	ck_assert_int_eq(kubelet_pod_dir_parse("shop__" UID, &d), -EINVAL);
	ck_assert_int_eq(kubelet_pod_dir_parse("_web-0_" UID, &d), -EINVAL);
	ck_assert_int_eq(kubelet_pod_dir_parse("shop_web-0_", &d), -EINVAL);
	ck_assert_int_eq(kubelet_pod_dir_parse("shop_web-0", &d), -EINVAL);
	ck_assert_int_eq(kubelet_pod_dir_parse("Shop_web-0_" UID, &d), -EINVAL);
	ck_assert_int_eq(kubelet_pod_dir_parse("sh.op_web-0_" UID, &d), -EINVAL); /* a namespace has no dots */
	ck_assert_int_eq(kubelet_pod_dir_parse("shop_web-0_" UID "0", &d), -EINVAL);
	ck_assert_int_eq(kubelet_pod_dir_parse(".", &d), -EINVAL);
	ck_assert_int_eq(kubelet_pod_dir_parse("", &d), -EINVAL);
	ck_assert_int_eq(kubelet_pod_dir_parse(NULL, &d), -EINVAL);
}
END_TEST

START_TEST(test_container_logs)
{
	struct kubelet_container_log l;

	ck_assert_int_eq(kubelet_container_log_parse("web-0_shop_app-" ID1 ".log", &l), 0);
	ck_assert_str_eq(l.pod, "web-0");
	ck_assert_str_eq(l.namespace_, "shop");
	ck_assert_str_eq(l.container, "app");
	ck_assert_str_eq(l.id, ID1);
	/* A container name with dashes: the id is after the last one. */
	ck_assert_int_eq(kubelet_container_log_parse("coredns-5d78c9869d-x2x4q_kube-system_log-shipper-" ID2 ".log", &l), 0);
	ck_assert_str_eq(l.pod, "coredns-5d78c9869d-x2x4q");
	ck_assert_str_eq(l.namespace_, "kube-system");
	ck_assert_str_eq(l.container, "log-shipper");
	ck_assert_str_eq(l.id, ID2);

	ck_assert_int_eq(kubelet_container_log_parse("web-0_shop_app-" ID1, &l), -EINVAL);
	ck_assert_int_eq(kubelet_container_log_parse("web-0_shop_app-" ID1 ".log.1", &l), -EINVAL);
	ck_assert_int_eq(kubelet_container_log_parse("web-0_shop_app" ID1 ".log", &l), -EINVAL);
	ck_assert_int_eq(kubelet_container_log_parse("web-0_shop_-" ID1 ".log", &l), -EINVAL);
	ck_assert_int_eq(kubelet_container_log_parse("web-0_shop-" ID1 ".log", &l), -EINVAL);
	ck_assert_int_eq(kubelet_container_log_parse("web-0_shop_a_b-" ID1 ".log", &l), -EINVAL);
	ck_assert_int_eq(kubelet_container_log_parse("web-0_shop_app-" "abc.log", &l), -EINVAL);
	ck_assert_int_eq(kubelet_container_log_parse("web-0_shop_App-" ID1 ".log", &l), -EINVAL);
	ck_assert_int_eq(kubelet_container_log_parse(".log", &l), -EINVAL);
	ck_assert_int_eq(kubelet_container_log_parse(NULL, &l), -EINVAL);
	ck_assert_str_eq(l.container, "");
}
END_TEST

static Suite *cgroup_identity_suite(void)
{
	Suite *s = suite_create("cgroup_identity");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, test_paths, 0, (int)(sizeof(cases) / sizeof(cases[0])));
	tcase_add_loop_test(tc, test_runtimes, 0, (int)(sizeof(runtimes) / sizeof(runtimes[0])));
	tcase_add_test(tc, test_bad_paths);
	tcase_add_test(tc, test_pod_dirs);
	tcase_add_test(tc, test_container_logs);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return fixture_run_suite(cgroup_identity_suite());
}
