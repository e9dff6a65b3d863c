// SPDX-License-Identifier: GPL-2.0
/* Cgroup paths and kubelet's log entry names to workload identities. The
 * layouts read here:
 *   systemd       /system.slice/nginx.service, /user.slice/user-1000.slice/
 *                 user@1000.service/app.slice/foo.service, .../session-3.scope
 *   kubelet, cgroupfs driver
 *                 /kubepods[/burstable|/besteffort]/pod<uid>/<64-hex id>
 *                 (cri-o: crio-<id>)
 *   kubelet, systemd driver
 *                 /kubepods.slice/kubepods-burstable.slice/
 *                 kubepods-burstable-pod<uid, '_' for '-'>.slice/
 *                 {cri-containerd,crio,docker}-<id>.scope, crio-conmon-<id>.scope
 *   containers without Kubernetes
 *                 /docker/<id>, /system.slice/docker-<id>.scope,
 *                 /machine.slice/libpod-<id>.scope, /libpod_parent/libpod-<id>
 * Only components count, so a mount point in front (/sys/fs/cgroup/memory)
 * and a tree nested in another one (kind's nodes: a pod below a container's
 * scope) read the same. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "cgroup_identity.h"
#include "macro.h"

#define UUID_LEN 36
#define HASH_UID_LEN 32
#define CONTAINER_ID_LEN 64
#define K8S_LABEL_MAX 63

struct span {
	const char *p;
	size_t len;
};

static bool has_prefix(struct span s, const char *prefix)
{
	size_t n = strlen(prefix);

	return s.len >= n && memcmp(s.p, prefix, n) == 0;
}

static bool has_suffix(struct span s, const char *suffix)
{
	size_t n = strlen(suffix);

	return s.len >= n && memcmp(s.p + s.len - n, suffix, n) == 0;
}

static bool equals(struct span s, const char *word)
{
	return s.len == strlen(word) && memcmp(s.p, word, s.len) == 0;
}

static struct span drop_suffix(struct span s, const char *suffix)
{
	return (struct span){ s.p, s.len - strlen(suffix) };
}

static bool is_lower_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

static bool all_lower_hex(struct span s)
{
	for (size_t i = 0; i < s.len; i++)
		if (!is_lower_hex(s.p[i]))
			return false;
	return s.len > 0;
}

static void copy_span(char *dst, size_t size, struct span s)
{
	snprintf(dst, size, "%.*s", (int)s.len, s.p);
}

/* A pod UID as kubelet writes it (a UUID, or a static pod's 32-hex hash),
 * the UUID's dashes written as sep; into ret with dashes. */
static bool read_pod_uid(struct span s, char sep, char ret[static CGROUP_POD_UID_MAX])
{
	size_t i;

	if (s.len == HASH_UID_LEN) {
		if (!all_lower_hex(s))
			return false;
	} else if (s.len == UUID_LEN) {
		for (i = 0; i < s.len; i++) {
			bool dash_here = i == 8 || i == 13 || i == 18 || i == 23;

			if (dash_here ? s.p[i] != sep : !is_lower_hex(s.p[i]))
				return false;
		}
	} else {
		return false;
	}
	copy_span(ret, CGROUP_POD_UID_MAX, s);
	for (i = 0; ret[i]; i++)
		if (ret[i] == sep)
			ret[i] = '-';
	return true;
}

/* kubepods, kubepods.slice, kubepods-burstable.slice, and with a kubelet
 * cgroup root of its own in front (kind: kubelet-kubepods.slice). */
static bool is_kubepods(struct span c)
{
	static const char word[] = "kubepods";

	for (size_t i = 0; i + sizeof(word) - 1 <= c.len; i++)
		if ((i == 0 || c.p[i - 1] == '-') && memcmp(c.p + i, word, sizeof(word) - 1) == 0) {
			size_t end = i + sizeof(word) - 1;

			return end == c.len || c.p[end] == '-' || c.p[end] == '.';
		}
	return false;
}

/* cgroupfs: pod<uid>. systemd: <...>kubepods[-<qos>]-pod<uid with '_'>.slice. */
static bool read_pod(struct span c, char ret[static CGROUP_POD_UID_MAX])
{
	static const char qos_besteffort[] = "-besteffort", qos_burstable[] = "-burstable";
	const char *pod;

	if (has_prefix(c, "pod"))
		return read_pod_uid((struct span){ c.p + 3, c.len - 3 }, '-', ret);
	if (!has_suffix(c, ".slice") || !is_kubepods(c))
		return false;
	c = drop_suffix(c, ".slice");
	pod = memmem(c.p, c.len, "-pod", 4);
	if (!pod)
		return false;
	/* What precedes -pod is kubepods or kubepods-<qos>, nothing else. */
	{
		struct span head = { c.p, (size_t)(pod - c.p) };

		if (has_suffix(head, qos_besteffort))
			head = drop_suffix(head, qos_besteffort);
		else if (has_suffix(head, qos_burstable))
			head = drop_suffix(head, qos_burstable);
		if (!has_suffix(head, "kubepods"))
			return false;
	}
	pod += 4;
	return read_pod_uid((struct span){ pod, (size_t)(c.p + c.len - pod) }, '_', ret);
}

enum container_kind { NOT_CONTAINER, CONTAINER, CONMON };

/* The runtimes' scope and directory prefixes, <prefix>-<id>[.scope]. */
static const char *const runtime_prefixes[] = {
	"docker", "cri-containerd", "crio", "libpod", "containerd", "nerdctl", "podman",
};

static enum cgroup_runtime runtime_of(struct span prefix)
{
	if (equals(prefix, "docker"))
		return CGROUP_RUNTIME_DOCKER;
	if (equals(prefix, "libpod") || equals(prefix, "podman"))
		return CGROUP_RUNTIME_PODMAN;
	return CGROUP_RUNTIME_OTHER;
}

/* c: a component; parent: the one above it (Docker's cgroupfs driver puts
 * a bare id below /docker). */
static enum container_kind read_container(struct span c, struct span parent, char ret[static CGROUP_CONTAINER_ID_MAX],
					  enum cgroup_runtime *runtime)
{
	struct span id, prefix;

	if (has_suffix(c, ".scope"))
		c = drop_suffix(c, ".scope");
	if (c.len == CONTAINER_ID_LEN && all_lower_hex(c)) {
		copy_span(ret, CGROUP_CONTAINER_ID_MAX, c);
		*runtime = equals(parent, "docker") ? CGROUP_RUNTIME_DOCKER : CGROUP_RUNTIME_OTHER;
		return CONTAINER;
	}
	if (c.len < CONTAINER_ID_LEN + 2 || c.p[c.len - CONTAINER_ID_LEN - 1] != '-')
		return NOT_CONTAINER;
	id = (struct span){ c.p + c.len - CONTAINER_ID_LEN, CONTAINER_ID_LEN };
	prefix = (struct span){ c.p, c.len - CONTAINER_ID_LEN - 1 };
	if (!all_lower_hex(id))
		return NOT_CONTAINER;
	/* crio-conmon-<id>, libpod-conmon-<id>: the runtime's monitor of the
	 * container, not the container. */
	if (has_suffix(prefix, "-conmon")) {
		prefix = drop_suffix(prefix, "-conmon");
		for (size_t i = 0; i < ARRAY_SIZE(runtime_prefixes); i++)
			if (equals(prefix, runtime_prefixes[i]))
				return CONMON;
		return NOT_CONTAINER;
	}
	for (size_t i = 0; i < ARRAY_SIZE(runtime_prefixes); i++)
		if (equals(prefix, runtime_prefixes[i])) {
			copy_span(ret, CGROUP_CONTAINER_ID_MAX, id);
			*runtime = runtime_of(prefix);
			return CONTAINER;
		}
	return NOT_CONTAINER;
}

/* A unit name with a cgroup of its own, as systemd allows it: <prefix>[@instance].<type>. */
static bool is_unit_name(struct span c)
{
	static const char *const types[] = { ".service", ".scope", ".slice", ".socket", ".mount", ".swap" };
	struct span name = { NULL, 0 };

	if (c.len >= CGROUP_UNIT_MAX)
		return false;
	for (size_t i = 0; i < ARRAY_SIZE(types); i++)
		if (has_suffix(c, types[i])) {
			name = drop_suffix(c, types[i]);
			break;
		}
	if (!name.p || name.len == 0 || name.p[0] == '@')
		return false;
	for (size_t i = 0; i < name.len; i++) {
		char ch = name.p[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
		      strchr(":-_.\\@", ch)))
			return false;
	}
	return true;
}

int cgroup_identity_parse(const char *path, struct cgroup_identity *ret)
{
	bool in_kubepods = false, workload = false;
	struct span parent = { "", 0 }, c;
	const char *p;

	*ret = (struct cgroup_identity){ .unit = "" };
	if (!path || path[0] != '/')
		return -EINVAL;

	for (p = path; *p; parent = c) {
		char id[CGROUP_CONTAINER_ID_MAX];
		enum cgroup_runtime runtime = CGROUP_RUNTIME_OTHER;

		p += strspn(p, "/");
		c = (struct span){ p, strcspn(p, "/") };
		if (c.len == 0)
			break;
		p += c.len;
		if (in_kubepods && !ret->pod_uid[0] && read_pod(c, ret->pod_uid)) {
			workload = true;
			continue;
		}
		if (is_kubepods(c)) {
			in_kubepods = workload = true;
			continue;
		}
		switch (read_container(c, parent, id, &runtime)) {
		case CONTAINER:
			/* The deepest one: a container in a container is the workload. */
			memcpy(ret->container_id, id, sizeof(id));
			ret->runtime = runtime;
			workload = true;
			continue;
		case CONMON:
			ret->container_id[0] = '\0';
			ret->runtime = CGROUP_RUNTIME_OTHER;
			workload = true;
			continue;
		case NOT_CONTAINER:
			break;
		}
		if (!workload && is_unit_name(c))
			copy_span(ret->unit, sizeof(ret->unit), c);
	}
	if (workload)
		ret->unit[0] = '\0';
	return 0;
}

/* A DNS label (namespaces, container names) or, with dots, a DNS subdomain (pod names). */
static bool is_k8s_name(struct span s, bool dots, size_t max)
{
	if (s.len == 0 || s.len > max)
		return false;
	for (size_t i = 0; i < s.len; i++) {
		char ch = s.p[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' || (dots && ch == '.')))
			return false;
	}
	return true;
}

/* Splits s at its two underscores into three non-empty parts. */
static bool split3(struct span s, struct span part[static 3])
{
	const char *a = memchr(s.p, '_', s.len), *b;

	if (!a)
		return false;
	b = memchr(a + 1, '_', (size_t)(s.p + s.len - a - 1));
	if (!b || memchr(b + 1, '_', (size_t)(s.p + s.len - b - 1)))
		return false;
	part[0] = (struct span){ s.p, (size_t)(a - s.p) };
	part[1] = (struct span){ a + 1, (size_t)(b - a - 1) };
	part[2] = (struct span){ b + 1, (size_t)(s.p + s.len - b - 1) };
	return part[0].len && part[1].len && part[2].len;
}

int kubelet_pod_dir_parse(const char *name, struct kubelet_pod_dir *ret)
{
	struct span part[3];

	*ret = (struct kubelet_pod_dir){ .pod = "" };
	if (!name || !split3((struct span){ name, strlen(name) }, part) || !is_k8s_name(part[0], false, K8S_LABEL_MAX) ||
	    !is_k8s_name(part[1], true, K8S_NAME_MAX - 1) || !read_pod_uid(part[2], '-', ret->uid)) {
		*ret = (struct kubelet_pod_dir){ .pod = "" };
		return -EINVAL;
	}
	copy_span(ret->namespace_, sizeof(ret->namespace_), part[0]);
	copy_span(ret->pod, sizeof(ret->pod), part[1]);
	return 0;
}

int kubelet_container_log_parse(const char *name, struct kubelet_container_log *ret)
{
	struct span s, part[3], id;

	*ret = (struct kubelet_container_log){ .pod = "" };
	if (!name)
		return -EINVAL;
	s = (struct span){ name, strlen(name) };
	if (!has_suffix(s, ".log"))
		return -EINVAL;
	s = drop_suffix(s, ".log");
	if (s.len < CONTAINER_ID_LEN + 2 || s.p[s.len - CONTAINER_ID_LEN - 1] != '-')
		return -EINVAL;
	id = (struct span){ s.p + s.len - CONTAINER_ID_LEN, CONTAINER_ID_LEN };
	s.len -= CONTAINER_ID_LEN + 1;
	if (!all_lower_hex(id) || !split3(s, part) || !is_k8s_name(part[0], true, K8S_NAME_MAX - 1) ||
	    !is_k8s_name(part[1], false, K8S_LABEL_MAX) || !is_k8s_name(part[2], false, K8S_LABEL_MAX))
		return -EINVAL;
	copy_span(ret->pod, sizeof(ret->pod), part[0]);
	copy_span(ret->namespace_, sizeof(ret->namespace_), part[1]);
	copy_span(ret->container, sizeof(ret->container), part[2]);
	copy_span(ret->id, sizeof(ret->id), id);
	return 0;
}
