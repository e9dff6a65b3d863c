// SPDX-License-Identifier: GPL-2.0
/* Cgroup paths and kubelet's log entry names -> cgroup_identity_parse(),
 * kubelet_pod_dir_parse(), kubelet_container_log_parse(). */
#include <errno.h>
#include "cgroup_identity.h"
#include "fuzz.h"

static int all_hex(const char *s)
{
	for (; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
			return 0;
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstring(data, size);
	struct cgroup_identity id;
	struct kubelet_pod_dir pd;
	struct kubelet_container_log cl;
	int r;

	r = cgroup_identity_parse(s, &id);
	FUZZ_CHECK(r == 0 || r == -EINVAL);
	FUZZ_CHECK(fuzz_terminated(id.unit, sizeof(id.unit)) && fuzz_terminated(id.pod_uid, sizeof(id.pod_uid)) &&
		   fuzz_terminated(id.container_id, sizeof(id.container_id)));
	/* Whatever it names is in the path, and never a guess. */
	FUZZ_CHECK(!id.unit[0] || (strstr(s, id.unit) && !strchr(id.unit, '/')));
	FUZZ_CHECK(!id.container_id[0] || (strlen(id.container_id) == 64 && all_hex(id.container_id) &&
					   strstr(s, id.container_id)));
	FUZZ_CHECK(!id.pod_uid[0] || strlen(id.pod_uid) == 32 || strlen(id.pod_uid) == 36);
	FUZZ_CHECK(!(id.unit[0] && (id.pod_uid[0] || id.container_id[0])));
	/* A runtime is said only of a container, and only one whose runtime the path names. */
	FUZZ_CHECK(id.runtime == CGROUP_RUNTIME_OTHER ||
		   (id.container_id[0] && (strstr(s, "docker") || strstr(s, "libpod") || strstr(s, "podman"))));
	if (r < 0)
		FUZZ_CHECK(!id.unit[0] && !id.pod_uid[0] && !id.container_id[0]);

	r = kubelet_pod_dir_parse(s, &pd);
	FUZZ_CHECK(r == 0 || r == -EINVAL);
	if (r == 0)
		FUZZ_CHECK(pd.namespace_[0] && pd.pod[0] && strstr(s, pd.namespace_) && strstr(s, pd.pod) &&
			   strstr(s, pd.uid) && !strchr(pd.pod, '_'));
	r = kubelet_container_log_parse(s, &cl);
	FUZZ_CHECK(r == 0 || r == -EINVAL);
	if (r == 0)
		FUZZ_CHECK(cl.container[0] && strstr(s, cl.container) && strlen(cl.id) == 64 && strstr(s, cl.id) &&
			   !strchr(cl.container, '_'));
	free(s);
	return 0;
}
