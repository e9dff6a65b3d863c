// SPDX-License-Identifier: GPL-2.0
/* /proc/self/mountinfo text -> cgroup_find_memory_root(). */
#include "cgroup_mounts.h"
#include "fuzz.h"

/* Stands in for reading cgroup.controllers: a mount point "has memory" when
 * its name contains an 'm', so both answers are reachable. */
static bool fake_v2_has_memory(const char *mountpoint)
{
	FUZZ_CHECK(mountpoint != NULL);
	return strchr(mountpoint, 'm') != NULL;
}

/* Whether some line has fstype (the first word after " - ") equal to want
 * and mentions root (escaped or not, it shares its first bytes). */
static bool line_with_fstype(const char *text, const char *want)
{
	const char *line = text;
	size_t n = strlen(want);

	while (line && *line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		const char *sep = memmem(line, len, " - ", 3);

		/* strtok_r in the parser skips repeated blanks before the fstype */
		if (sep) {
			const char *f = sep + 3;

			while (*f == ' ')
				f++;
			if (strncmp(f, want, n) == 0 && (f[n] == ' ' || f[n] == '\n' || f[n] == '\0'))
				return true;
		}
		line = nl ? nl + 1 : NULL;
	}
	return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_cstring(data, size);
	char root[64];
	enum cgroup_memory_mode mode;

	memset(root, 0xa5, sizeof(root));
	mode = cgroup_find_memory_root(text, root, sizeof(root), fake_v2_has_memory);
	FUZZ_CHECK(mode == CGROUP_MEMORY_NONE || mode == CGROUP_MEMORY_V1 || mode == CGROUP_MEMORY_V2);
	if (mode != CGROUP_MEMORY_NONE) {
		FUZZ_CHECK(fuzz_terminated(root, sizeof(root)));
		FUZZ_CHECK(line_with_fstype(text, mode == CGROUP_MEMORY_V2 ? "cgroup2" : "cgroup"));
		if (mode == CGROUP_MEMORY_V1)
			FUZZ_CHECK(memmem(text, size, "memory", 6));
	}
	/* Without a callback, no cgroup2 mount can be chosen. */
	mode = cgroup_find_memory_root(text, root, sizeof(root), NULL);
	FUZZ_CHECK(mode != CGROUP_MEMORY_V2);
	free(text);
	return 0;
}
