/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_CGROUP_NAMES_H
#define MEMWATCH_CGROUP_NAMES_H

#include <stdint.h>
#include "cgroup_identity.h"
#include "macro.h"

/* The identity labels of a cgroup: what its path says (cgroup_identity.h),
 * with the pod's namespace and name and the container's name looked up in
 * kubelet's log directories. A name that cannot be found is "", never a
 * guess. */
#define K8S_LABEL_NAME_MAX 64 /* a DNS label (namespace, container) and its NUL */

struct cgroup_labels {
	char unit[CGROUP_UNIT_MAX];
	char namespace_[K8S_LABEL_NAME_MAX];
	char pod[K8S_NAME_MAX];
	char container[K8S_LABEL_NAME_MAX];
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

#endif
