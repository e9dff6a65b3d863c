// SPDX-License-Identifier: GPL-2.0
#include <dirent.h>
#include <stddef.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cgroup_names.h"
#include "container_names.h"
#include "hash.h"
#include "names_table.h"

struct pod_entry {
	char uid[CGROUP_POD_UID_MAX];
	char namespace_[K8S_LABEL_NAME_MAX];
	char pod[K8S_NAME_MAX];
	uint64_t gone_since_usec; /* when a listing first lacked it; 0: in the last listing */
};

struct container_entry {
	char id[CGROUP_CONTAINER_ID_MAX];
	char container[K8S_LABEL_NAME_MAX];
	/* Of "<namespace>/<pod>" in the log's name: checked against the pod
	 * the cgroup path names, so that a container is never put in another
	 * pod than the one it is in. */
	uint64_t pod_hash;
	uint64_t gone_since_usec;
};

struct cgroup_names {
	pthread_mutex_t lock;
	char pods_dir[PATH_MAX], containers_dir[PATH_MAX];
	struct names_table pods, containers; /* sorted by uid, by id */
	struct container_names *runtimes;    /* Docker's and Podman's names */
	bool scanned;
	uint64_t last_scan_usec;
	uint64_t scans;
};

static uint64_t hash_pod(const char *namespace_, const char *pod)
{
	return fnv1a_string(fnv1a_string(fnv1a_string(FNV1A_OFFSET, namespace_), "/"), pod);
}

void cgroup_labels_values(const char *cgroup, const struct cgroup_labels *labels,
			  const char *out[static CGROUP_LABELS_N])
{
	out[0] = cgroup;
	out[1] = labels ? labels->unit : "";
	out[2] = labels ? labels->namespace_ : "";
	out[3] = labels ? labels->pod : "";
	out[4] = labels ? labels->container : "";
	out[5] = labels ? labels->container_id : "";
}

int cgroup_names_new(struct cgroup_names **ret)
{
	struct cgroup_names *n = calloc(1, sizeof(*n));

	if (!n)
		return -ENOMEM;
	if (container_names_new(&n->runtimes) < 0) {
		free(n);
		return -ENOMEM;
	}
	pthread_mutex_init(&n->lock, NULL);
	snprintf(n->pods_dir, sizeof(n->pods_dir), "/var/log/pods");
	snprintf(n->containers_dir, sizeof(n->containers_dir), "/var/log/containers");
	(void)container_names_set_dir(n->runtimes, CONTAINER_SOURCE_DOCKER, "/var/lib/docker");
	(void)container_names_set_dir(n->runtimes, CONTAINER_SOURCE_PODMAN, "/var/lib/containers/storage");
	*ret = n;
	return 0;
}

void cgroup_names_free(struct cgroup_names *n)
{
	if (!n)
		return;
	names_table_clear(&n->pods);
	names_table_clear(&n->containers);
	container_names_free(n->runtimes);
	pthread_mutex_destroy(&n->lock);
	free(n);
}

int cgroup_names_set_dirs(struct cgroup_names *n, const char *pods_dir, const char *containers_dir)
{
	if (strlen(pods_dir) >= sizeof(n->pods_dir) || strlen(containers_dir) >= sizeof(n->containers_dir))
		return -ENAMETOOLONG;
	pthread_mutex_lock(&n->lock);
	if (strcmp(n->pods_dir, pods_dir) != 0 || strcmp(n->containers_dir, containers_dir) != 0) {
		snprintf(n->pods_dir, sizeof(n->pods_dir), "%s", pods_dir);
		snprintf(n->containers_dir, sizeof(n->containers_dir), "%s", containers_dir);
		names_table_clear(&n->pods);
		names_table_clear(&n->containers);
		n->scanned = false;
	}
	pthread_mutex_unlock(&n->lock);
	return 0;
}

int cgroup_names_set_container_dirs(struct cgroup_names *n, const char *docker_dir, const char *podman_storage_dir)
{
	int r;

	if (strlen(docker_dir) >= PATH_MAX || strlen(podman_storage_dir) >= PATH_MAX)
		return -ENAMETOOLONG;
	pthread_mutex_lock(&n->lock);
	r = container_names_set_dir(n->runtimes, CONTAINER_SOURCE_DOCKER, docker_dir);
	if (r >= 0)
		r = container_names_set_dir(n->runtimes, CONTAINER_SOURCE_PODMAN, podman_storage_dir);
	pthread_mutex_unlock(&n->lock);
	return r;
}

void cgroup_names_set_report(struct cgroup_names *n, container_names_report_fn fn, void *userdata)
{
	pthread_mutex_lock(&n->lock);
	container_names_set_report(n->runtimes, fn, userdata);
	pthread_mutex_unlock(&n->lock);
}

uint64_t cgroup_names_runtime_reads(struct cgroup_names *n)
{
	uint64_t reads;

	pthread_mutex_lock(&n->lock);
	reads = container_names_reads(n->runtimes);
	pthread_mutex_unlock(&n->lock);
	return reads;
}

uint64_t cgroup_names_scans(struct cgroup_names *n)
{
	uint64_t scans;

	pthread_mutex_lock(&n->lock);
	scans = n->scans;
	pthread_mutex_unlock(&n->lock);
	return scans;
}

static int compare_pods(const void *a, const void *b)
{
	return strcmp(((const struct pod_entry *)a)->uid, ((const struct pod_entry *)b)->uid);
}

static int compare_containers(const void *a, const void *b)
{
	return strcmp(((const struct container_entry *)a)->id, ((const struct container_entry *)b)->id);
}

static void closedirp(DIR **d)
{
	if (*d)
		closedir(*d);
}

/* Fills an entry from a directory entry's name; false: not one to keep. */
typedef bool (*entry_from_name_fn)(const char *name, void *entry);

static bool pod_from_name(const char *name, void *entry)
{
	struct pod_entry *e = entry;
	struct kubelet_pod_dir p;

	if (kubelet_pod_dir_parse(name, &p) < 0 || strlen(p.namespace_) >= K8S_LABEL_NAME_MAX)
		return false;
	*e = (struct pod_entry){ 0 };
	snprintf(e->uid, sizeof(e->uid), "%s", p.uid);
	snprintf(e->namespace_, sizeof(e->namespace_), "%s", p.namespace_);
	snprintf(e->pod, sizeof(e->pod), "%s", p.pod);
	return true;
}

static bool container_from_name(const char *name, void *entry)
{
	struct container_entry *e = entry;
	struct kubelet_container_log l;

	if (kubelet_container_log_parse(name, &l) < 0 || strlen(l.namespace_) >= K8S_LABEL_NAME_MAX ||
	    strlen(l.container) >= K8S_LABEL_NAME_MAX)
		return false;
	*e = (struct container_entry){ .pod_hash = hash_pod(l.namespace_, l.pod) };
	snprintf(e->id, sizeof(e->id), "%s", l.id);
	snprintf(e->container, sizeof(e->container), "%s", l.container);
	return true;
}

/* One listing of a directory into a new table of up to max entries of size bytes. */
static int list_dir(const char *dir, size_t max, size_t size, entry_from_name_fn from_name, struct names_table *ret)
{
	_cleanup_(closedirp) DIR *d = opendir(dir);
	struct dirent *de;
	char *e;
	size_t n = 0;

	*ret = (struct names_table){ NULL, 0 };
	if (!d)
		return -errno;
	e = calloc(max, size);
	if (!e)
		return -ENOMEM;
	while (n < max && (de = readdir(d)))
		if (from_name(de->d_name, e + n * size))
			n++;
	*ret = (struct names_table){ e, n };
	return 0;
}

/* A directory that cannot be listed (no kubelet here) leaves what was known. */
static void rescan_locked(struct cgroup_names *n, uint64_t now_usec)
{
	struct names_table t;

	n->scanned = true;
	n->last_scan_usec = now_usec;
	n->scans++;
	if (list_dir(n->pods_dir, CGROUP_NAMES_MAX_PODS, sizeof(struct pod_entry), pod_from_name, &t) == 0) {
		qsort(t.entries, t.n, sizeof(struct pod_entry), compare_pods);
		names_table_keep_gone(&t, &n->pods, sizeof(struct pod_entry),
				      offsetof(struct pod_entry, gone_since_usec), CGROUP_NAMES_MAX_PODS, compare_pods,
				      now_usec, CGROUP_NAMES_KEEP_USEC);
		names_table_clear(&n->pods);
		n->pods = t;
	}
	if (list_dir(n->containers_dir, CGROUP_NAMES_MAX_CONTAINERS, sizeof(struct container_entry), container_from_name,
		     &t) == 0) {
		qsort(t.entries, t.n, sizeof(struct container_entry), compare_containers);
		names_table_keep_gone(&t, &n->containers, sizeof(struct container_entry),
				      offsetof(struct container_entry, gone_since_usec), CGROUP_NAMES_MAX_CONTAINERS,
				      compare_containers, now_usec, CGROUP_NAMES_KEEP_USEC);
		names_table_clear(&n->containers);
		n->containers = t;
	}
}

static const struct pod_entry *find_pod(const struct cgroup_names *n, const char *uid)
{
	struct pod_entry key;

	snprintf(key.uid, sizeof(key.uid), "%s", uid);
	return names_table_find(&n->pods, &key, sizeof(key), compare_pods);
}

static const struct container_entry *find_container(const struct cgroup_names *n, const char *id)
{
	struct container_entry key;

	snprintf(key.id, sizeof(key.id), "%s", id);
	return names_table_find(&n->containers, &key, sizeof(key), compare_containers);
}

static bool may_rescan(const struct cgroup_names *n, uint64_t now_usec, uint64_t interval_usec)
{
	return !n->scanned || now_usec - n->last_scan_usec >= interval_usec;
}

static void resolve_kubelet_locked(struct cgroup_names *n, const struct cgroup_identity *id, uint64_t now_usec,
				   uint64_t rescan_interval_usec, struct cgroup_labels *ret)
{
	const struct pod_entry *pod = NULL;
	const struct container_entry *container = NULL;

	pod = find_pod(n, id->pod_uid);
	if (id->container_id[0])
		container = find_container(n, id->container_id);
	if ((!pod || (id->container_id[0] && !container)) && may_rescan(n, now_usec, rescan_interval_usec)) {
		rescan_locked(n, now_usec);
		pod = find_pod(n, id->pod_uid);
		if (id->container_id[0])
			container = find_container(n, id->container_id);
	}
	if (pod) {
		snprintf(ret->namespace_, sizeof(ret->namespace_), "%s", pod->namespace_);
		snprintf(ret->pod, sizeof(ret->pod), "%s", pod->pod);
		if (container && container->pod_hash == hash_pod(pod->namespace_, pod->pod))
			snprintf(ret->container, sizeof(ret->container), "%s", container->container);
	}
}

static void resolve(struct cgroup_names *n, const char *path, uint64_t now_usec, uint64_t rescan_interval_usec,
		    struct cgroup_labels *ret)
{
	struct cgroup_identity id;

	*ret = (struct cgroup_labels){ .unit = "" };
	if (cgroup_identity_parse(path, &id) < 0)
		return;
	snprintf(ret->unit, sizeof(ret->unit), "%s", id.unit);
	snprintf(ret->container_id, sizeof(ret->container_id), "%.*s", CGROUP_CONTAINER_ID_SHORT, id.container_id);
	if (!n)
		return;
	pthread_mutex_lock(&n->lock);
	/* Kubelet's directories name containers of pods only. */
	if (id.pod_uid[0])
		resolve_kubelet_locked(n, &id, now_usec, rescan_interval_usec, ret);
	/* Kubelet's name first: the runtime's is made up by kubelet (k8s_...). */
	if (!ret->container[0] && id.container_id[0] && id.runtime != CGROUP_RUNTIME_OTHER) {
		const struct container_names_timing timing = {
			.recheck_usec = CGROUP_NAMES_RESCAN_USEC,
			.miss_usec = rescan_interval_usec,
			.keep_usec = CGROUP_NAMES_KEEP_USEC,
		};

		container_names_lookup(n->runtimes, id.runtime, id.container_id, now_usec, &timing, ret->container);
	}
	pthread_mutex_unlock(&n->lock);
}

void cgroup_names_resolve(struct cgroup_names *n, const char *path, uint64_t now_usec, struct cgroup_labels *ret)
{
	resolve(n, path, now_usec, CGROUP_NAMES_RESCAN_USEC, ret);
}

void cgroup_names_resolve_event(struct cgroup_names *n, const char *path, uint64_t now_usec,
				struct cgroup_labels *ret)
{
	resolve(n, path, now_usec, CGROUP_NAMES_EVENT_RESCAN_USEC, ret);
}
