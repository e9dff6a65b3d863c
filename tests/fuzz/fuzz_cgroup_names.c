// SPDX-License-Identifier: GPL-2.0
/* Kubelet's log directory names, as they come from outside, through
 * cgroup_names.c's listings and lookups. The input is a script, a line each:
 *   p NAME   an entry NAME appears in the pods directory
 *   c NAME   an entry NAME appears in the containers directory
 *   x        every entry of both goes (the pods ended)
 *   t N      the clock moves on by N seconds
 *   PATH     a cgroup path resolved, as a series (even lines) or for an event
 * The entries are made for real, in a directory of this process's own, since
 * cgroup_names.c lists directories itself (removed at exit; a crash leaves
 * it behind, as /dev/shm/fuzz-cgroup-names.XXXXXX or under TMPDIR). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cgroup_names.h"
#include "fuzz.h"

#define MAX_LINES 128

static char base[PATH_MAX], pods_dir[PATH_MAX], containers_dir[PATH_MAX];

static void empty_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char path[PATH_MAX * 2];

	if (!d)
		abort();
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (rmdir(path) < 0 && unlink(path) < 0)
			abort();
	}
	closedir(d);
}

static void cleanup(void)
{
	empty_dir(pods_dir);
	empty_dir(containers_dir);
	rmdir(pods_dir);
	rmdir(containers_dir);
	rmdir(base);
}

static void setup_once(void)
{
	const char *tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");

	if (base[0])
		return;
	snprintf(base, sizeof(base), "%s/fuzz-cgroup-names.XXXXXX", tmp ? tmp : "/tmp");
	if (!mkdtemp(base))
		abort();
	snprintf(pods_dir, sizeof(pods_dir), "%s/pods", base);
	snprintf(containers_dir, sizeof(containers_dir), "%s/containers", base);
	if (mkdir(pods_dir, 0700) < 0 || mkdir(containers_dir, 0700) < 0)
		abort();
	atexit(cleanup);
}

/* Whether name can be a directory entry at all. */
static bool entry_name(const char *name)
{
	return name[0] && strlen(name) <= NAME_MAX && !strchr(name, '/') && strcmp(name, ".") && strcmp(name, "..");
}

static void make_entry(const char *dir, const char *name, bool is_dir)
{
	char path[PATH_MAX * 2];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (is_dir) {
		if (mkdir(path, 0700) < 0 && errno != EEXIST)
			abort();
		return;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		abort();
	close(fd);
}

struct seen {
	const char *pods[MAX_LINES], *containers[MAX_LINES];
	size_t n_pods, n_containers;
};

/* Whether a pod entry made by this input names (namespace, pod) for uid. */
static bool pod_was_listed(const struct seen *s, const char *uid, const char *ns, const char *pod)
{
	struct kubelet_pod_dir p;

	for (size_t i = 0; i < s->n_pods; i++)
		if (kubelet_pod_dir_parse(s->pods[i], &p) == 0 && !strcmp(p.uid, uid) && !strcmp(p.namespace_, ns) &&
		    !strcmp(p.pod, pod))
			return true;
	return false;
}

/* Whether a container log made by this input names container id in (namespace, pod). */
static bool container_was_listed(const struct seen *s, const char *id, const char *ns, const char *pod,
				 const char *container)
{
	struct kubelet_container_log l;

	for (size_t i = 0; i < s->n_containers; i++)
		if (kubelet_container_log_parse(s->containers[i], &l) == 0 && !strcmp(l.id, id) &&
		    !strcmp(l.namespace_, ns) && !strcmp(l.pod, pod) && !strcmp(l.container, container))
			return true;
	return false;
}

static void check_labels(const struct seen *s, const char *path, const struct cgroup_labels *lab, bool looked_up)
{
	struct cgroup_identity id;
	bool parsed = cgroup_identity_parse(path, &id) == 0;

	FUZZ_CHECK(fuzz_terminated(lab->unit, sizeof(lab->unit)) &&
		   fuzz_terminated(lab->namespace_, sizeof(lab->namespace_)) &&
		   fuzz_terminated(lab->pod, sizeof(lab->pod)) &&
		   fuzz_terminated(lab->container, sizeof(lab->container)) &&
		   fuzz_terminated(lab->container_id, sizeof(lab->container_id)));
	/* What the path says, as cgroup_identity.c reads it. */
	FUZZ_CHECK(!strcmp(lab->unit, parsed ? id.unit : ""));
	FUZZ_CHECK(!strncmp(lab->container_id, parsed ? id.container_id : "", CGROUP_CONTAINER_ID_SHORT));
	/* What the directories say: only for a pod of the path, never a guess. */
	FUZZ_CHECK(!lab->pod[0] == !lab->namespace_[0]);
	FUZZ_CHECK(!lab->container[0] || lab->pod[0]);
	if (!lab->pod[0])
		return;
	FUZZ_CHECK(looked_up && parsed && id.pod_uid[0]);
	FUZZ_CHECK(pod_was_listed(s, id.pod_uid, lab->namespace_, lab->pod));
	if (lab->container[0])
		FUZZ_CHECK(id.container_id[0] &&
			   container_was_listed(s, id.container_id, lab->namespace_, lab->pod, lab->container));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *script = fuzz_cstring(data, size), *line, *save = NULL;
	struct cgroup_names *n = NULL;
	struct cgroup_labels lab;
	struct seen s = { .n_pods = 0 };
	uint64_t now = 1000 * USEC_PER_SEC;
	size_t lines = 0;

	setup_once();
	empty_dir(pods_dir);
	empty_dir(containers_dir);
	if (cgroup_names_new(&n) < 0)
		abort();
	FUZZ_CHECK(cgroup_names_set_dirs(n, pods_dir, containers_dir) == 0);
	/* Not the host's Docker or Podman: fuzz_container_names reads their files. */
	FUZZ_CHECK(cgroup_names_set_container_dirs(n, "", "") == 0);
	for (line = strtok_r(script, "\n", &save); line && lines < MAX_LINES; line = strtok_r(NULL, "\n", &save), lines++) {
		if ((line[0] == 'p' || line[0] == 'c') && line[1] == ' ') {
			if (!entry_name(line + 2))
				continue;
			make_entry(line[0] == 'p' ? pods_dir : containers_dir, line + 2, line[0] == 'p');
			if (line[0] == 'p')
				s.pods[s.n_pods++] = line + 2;
			else
				s.containers[s.n_containers++] = line + 2;
		} else if (!strcmp(line, "x")) {
			empty_dir(pods_dir);
			empty_dir(containers_dir);
		} else if (line[0] == 't' && line[1] == ' ') {
			now += strtoull(line + 2, NULL, 10) % (10 * 24 * 3600) * USEC_PER_SEC;
		} else {
			if (lines % 2)
				cgroup_names_resolve_event(n, line, now, &lab);
			else
				cgroup_names_resolve(n, line, now, &lab);
			check_labels(&s, line, &lab, true);
			cgroup_names_resolve(NULL, line, now, &lab);
			check_labels(&s, line, &lab, false);
		}
	}
	cgroup_names_free(n);
	free(script);
	return 0;
}
