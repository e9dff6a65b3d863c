/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_CONTAINER_NAMES_H
#define MEMWATCH_CONTAINER_NAMES_H

#include <stddef.h>
#include <stdint.h>
#include "cgroup_identity.h"

/* Container id -> the name its runtime gave it, read from the runtime's own
 * state on disk (never its socket), for lib/cgroup_names.c:
 *   Docker  <docker_dir>/containers/<id>/config.v2.json, its "Name" without
 *           the leading '/' (docker rename writes the file again);
 *   Podman  containers/storage's lists <podman_storage_dir>/<driver>-containers/
 *           containers.json and volatile-containers.json (podman run --rm):
 *           arrays of {"id", "names": [<the container's name>, ...]}.
 * A Podman pod's name is not there (it is in libpod's database only), so a
 * pod's containers get their own names and no pod name.
 *
 * Not thread-safe: cgroup_names calls it under its lock. */

#define CONTAINER_NAME_MAX 128 /* a name and its NUL; a longer one is not used */
#define DOCKER_CONFIG_MAX (1u << 20)
#define PODMAN_LIST_MAX (16u << 20)
#define PODMAN_LIST_FILES 16 /* lists read at most, of all the <driver>-containers */

enum container_source {
	CONTAINER_SOURCE_DOCKER,
	CONTAINER_SOURCE_PODMAN,
	CONTAINER_SOURCES,
};

/* Says why a source gives no names: once per source, until its directory is
 * set again. source: "docker" or "podman". */
typedef void (*container_names_report_fn)(const char *source, const char *why, void *userdata);

struct container_names;

int container_names_new(struct container_names **ret);
void container_names_free(struct container_names *c);

/* dir "": that source is off. What was learnt from an old directory is
 * forgotten, and its report may come again. */
int container_names_set_dir(struct container_names *c, enum container_source source, const char *dir);
void container_names_set_report(struct container_names *c, container_names_report_fn fn, void *userdata);

/* The name of the container id made by runtime into name ("" if unknown).
 * A name known is checked again every recheck_usec (renames); a miss reads
 * the state again if it was read more than miss_usec ago. A container whose
 * state went stays named for keep_usec. */
struct container_names_timing {
	uint64_t recheck_usec, miss_usec, keep_usec;
};
void container_names_lookup(struct container_names *c, enum cgroup_runtime runtime, const char *id, uint64_t now_usec,
			    const struct container_names_timing *timing, char name[static CONTAINER_NAME_MAX]);

/* Reads of the runtimes' files so far (config.v2.json, a containers list), for tests. */
uint64_t container_names_reads(struct container_names *c);

/* The name in a config.v2.json / the id -> name pairs in a containers.json,
 * for the lookups and the fuzzer. -EBADMSG: not such a file; -ENODATA: no
 * name in it; -ENOBUFS: a name too long. */
int docker_config_name(const char *text, size_t len, char name[static CONTAINER_NAME_MAX]);
typedef void (*podman_list_fn)(const char *id, const char *name, void *userdata);
int podman_list_names(const char *text, size_t len, podman_list_fn fn, void *userdata);

#endif
