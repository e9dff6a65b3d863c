/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_CGROUP_NAMES_H
#define MEMWATCH_CGROUP_NAMES_H

#include <stdint.h>
#include "cgroup_identity.h"
#include "container_names.h"
#include "macro.h"

/* The identity labels of a cgroup: what its path says (cgroup_identity.h),
 * with the pod's namespace and name and the container's name looked up in
 * kubelet's log directories, and for a Docker or Podman container outside
 * Kubernetes (or one kubelet does not name) in the runtime's own state
 * (container_names.h). A name that cannot be found is "", never a guess. */
#define K8S_LABEL_NAME_MAX 64 /* a DNS label (namespace, container) and its NUL */

struct cgroup_labels {
	char unit[CGROUP_UNIT_MAX];
	char namespace_[K8S_LABEL_NAME_MAX];
	char pod[K8S_NAME_MAX];
	char container[CONTAINER_NAME_MAX]; /* kubelet's (63 at most), Docker's or Podman's */
	char container_id[CGROUP_CONTAINER_ID_SHORT + 1];
};

/* The label values of a per-cgroup family, in the catalogue's order:
 * cgroup, unit, namespace, pod, container, container_id. labels NULL: all
 * but the cgroup empty (the "other" series). */
#define CGROUP_LABELS_N 6
void cgroup_labels_values(const char *cgroup, const struct cgroup_labels *labels,
			  const char *out[static CGROUP_LABELS_N]);

/* Pod UID -> namespace and name from <pods_dir>/<namespace>_<pod>_<uid>/,
 * container id -> name from <containers_dir>/<pod>_<namespace>_<name>-<id>.log.
 * Both directories are listed again when a lookup misses, at most every
 * CGROUP_NAMES_RESCAN_USEC; a pod or container whose entry went stays known
 * for CGROUP_NAMES_KEEP_USEC (its cgroup may be exported for a while
 * yet), within CGROUP_NAMES_MAX_PODS / _CONTAINERS entries. Thread-safe. */
#define CGROUP_NAMES_RESCAN_USEC (5 * USEC_PER_SEC)
#define CGROUP_NAMES_KEEP_USEC (3600 * USEC_PER_SEC)
#define CGROUP_NAMES_MAX_PODS 2048
#define CGROUP_NAMES_MAX_CONTAINERS 8192

struct cgroup_names;

/* With the kubelet default directories /var/log/pods and /var/log/containers. */
int cgroup_names_new(struct cgroup_names **ret);
void cgroup_names_free(struct cgroup_names *n);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct cgroup_names *, cgroup_names_free)

/* Other directories: what was learnt from the old ones is forgotten. */
int cgroup_names_set_dirs(struct cgroup_names *n, const char *pods_dir, const char *containers_dir);

/* Docker's data root and Podman's (root) containers/storage graph root, by
 * default /var/lib/docker and /var/lib/containers/storage; "": not read. A
 * Docker or Podman container's name, when kubelet's directories do not
 * give one, is looked up there: Docker's config.v2.json of the container is
 * looked at again every CGROUP_NAMES_RESCAN_USEC, Podman's lists are read
 * again when they changed. Kept CGROUP_NAMES_KEEP_USEC after removal. */
int cgroup_names_set_container_dirs(struct cgroup_names *n, const char *docker_dir, const char *podman_storage_dir);

/* fn is told why a runtime's state gives no names, once per runtime (again
 * after its directory is set to another one). Called with n's lock held:
 * fn must not call into n. */
void cgroup_names_set_report(struct cgroup_names *n, container_names_report_fn fn, void *userdata);

/* The labels of the cgroup at path (below its hierarchy's root). n NULL:
 * what the path alone says. now_usec: CLOCK_MONOTONIC. */
void cgroup_names_resolve(struct cgroup_names *n, const char *path, uint64_t now_usec, struct cgroup_labels *ret);

/* The same for an event that names a cgroup which may soon be gone (an OOM
 * kill): a miss lists the directories again unless that was done within
 * CGROUP_NAMES_EVENT_RESCAN_USEC, so a pod that started a moment ago is named. */
#define CGROUP_NAMES_EVENT_RESCAN_USEC (100 * USEC_PER_MSEC)
void cgroup_names_resolve_event(struct cgroup_names *n, const char *path, uint64_t now_usec,
				struct cgroup_labels *ret);

/* Directory listings so far, for tests. */
uint64_t cgroup_names_scans(struct cgroup_names *n);
/* Reads of the runtimes' files so far, for tests. */
uint64_t cgroup_names_runtime_reads(struct cgroup_names *n);

#endif
