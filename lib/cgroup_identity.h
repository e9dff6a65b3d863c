/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_CGROUP_IDENTITY_H
#define MEMWATCH_CGROUP_IDENTITY_H

#include <stddef.h>

/* What a cgroup path says about the workload in it, read from the path alone
 * (no I/O): the systemd unit, the Kubernetes pod's UID, the container's id.
 * The names a path does not carry (namespace, pod and container names) come
 * from kubelet's log directories, whose entry names these parse too. */

#define CGROUP_UNIT_MAX 256      /* systemd's UNIT_NAME_MAX, and its NUL */
#define CGROUP_POD_UID_MAX 40    /* a UUID with dashes (36), or a static pod's 32-hex hash */
#define CGROUP_CONTAINER_ID_MAX 65 /* 64 hex digits */
#define CGROUP_CONTAINER_ID_SHORT 12 /* as docker ps shows it */
#define K8S_NAME_MAX 254         /* a DNS subdomain (pod): 253; namespaces and containers: 63 */

/* Which runtime made a container's cgroup, from its name: docker-<id>.scope
 * or /docker/<id> (Docker), libpod-<id>.scope or /libpod_parent/libpod-<id>
 * (Podman). The others (a bare id below a pod, crio-, cri-containerd-) are
 * named by kubelet if at all. */
enum cgroup_runtime {
	CGROUP_RUNTIME_OTHER,
	CGROUP_RUNTIME_DOCKER,
	CGROUP_RUNTIME_PODMAN,
};

struct cgroup_identity {
	/* The deepest systemd unit of the path (nginx.service, session-3.scope,
	 * user@1000.service, app.slice) spelled as systemd spells it, escapes
	 * such as \x2d kept; "" for a cgroup of a pod or a container, so that
	 * the labels do not depend on the cgroup driver. */
	char unit[CGROUP_UNIT_MAX];
	/* The pod's UID with dashes (the systemd driver's underscores turned
	 * back), "" outside a pod. */
	char pod_uid[CGROUP_POD_UID_MAX];
	/* The container's full id (lower-case hex), "" for a cgroup that is not
	 * (inside) a container's, such as a pod's or a crio/libpod conmon's. */
	char container_id[CGROUP_CONTAINER_ID_MAX];
	/* Of that container; OTHER when there is none. */
	enum cgroup_runtime runtime;
};

/* Reads path ("/kubepods/burstable/pod<uid>/<id>", "/system.slice/x.service",
 * with or without a mount point in front: only its components count). Every
 * field it cannot tell is "". Returns 0, or -EINVAL for NULL or a path that
 * does not start with '/' (ret all "" then). */
int cgroup_identity_parse(const char *path, struct cgroup_identity *ret);

/* The pod directory kubelet logs into, <namespace>_<name>_<uid>. */
struct kubelet_pod_dir {
	char namespace_[K8S_NAME_MAX];
	char pod[K8S_NAME_MAX];
	char uid[CGROUP_POD_UID_MAX];
};

/* name: one entry of the pods directory. -EINVAL: not a pod directory's name. */
int kubelet_pod_dir_parse(const char *name, struct kubelet_pod_dir *ret);

/* A container's log link, <pod>_<namespace>_<container>-<64-hex id>.log. */
struct kubelet_container_log {
	char pod[K8S_NAME_MAX];
	char namespace_[K8S_NAME_MAX];
	char container[K8S_NAME_MAX];
	char id[CGROUP_CONTAINER_ID_MAX];
};

/* name: one entry of the containers directory. -EINVAL: not such a link's name. */
int kubelet_container_log_parse(const char *name, struct kubelet_container_log *ret);

#endif
