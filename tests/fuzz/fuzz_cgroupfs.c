// SPDX-License-Identifier: GPL-2.0
/* One cgroupfs file, v1 or v2, through each of its parsers: single values
 * (memory.current, memory.max, limit_in_bytes ...), flat-keyed files
 * (memory.events, memory.oom_control) and memory.stat. */
#include <errno.h>
#include "cgroupfs.h"
#include "fuzz.h"

#define MAX_KEYS 8

static void fuzz_value(const uint8_t *data, size_t size)
{
	uint64_t v = 42;
	bool is_max = false;
	int r;

	r = cgroup_parse_u64_or_max((const char *)data, size, &v, &is_max);
	FUZZ_CHECK(r == 0 || r == -EINVAL);
	if (r < 0) {
		FUZZ_CHECK(v == 42 && !is_max);
		return;
	}
	/* Exactly one line, terminated. */
	FUZZ_CHECK(size > 0 && data[size - 1] == '\n');
	FUZZ_CHECK(memchr(data, '\n', size) == data + size - 1);
	if (is_max)
		FUZZ_CHECK(v == UINT64_MAX && memmem(data, size, "max", 3));
}

static void fuzz_flat_keyed(const uint8_t *data, size_t size)
{
	struct cgroup_kv kv[MAX_KEYS], untouched[MAX_KEYS];
	size_t n = 1000, i, j;
	int r;

	memset(kv, 0xa5, sizeof(kv));
	memcpy(untouched, kv, sizeof(kv));
	r = cgroup_parse_flat_keyed((const char *)data, size, kv, MAX_KEYS, &n);
	FUZZ_CHECK(r == 0 || r == -EINVAL || r == -ENOBUFS);
	if (r < 0) {
		FUZZ_CHECK(n == 1000);
		if (r == -EINVAL)
			FUZZ_CHECK(memcmp(kv, untouched, sizeof(kv)) == 0);
		return;
	}
	FUZZ_CHECK(n <= MAX_KEYS);
	for (i = 0; i < n; i++) {
		size_t len;

		FUZZ_CHECK(fuzz_terminated(kv[i].key, sizeof(kv[i].key)));
		len = strlen(kv[i].key);
		FUZZ_CHECK(len > 0 && len < sizeof(kv[i].key));
		FUZZ_CHECK(strpbrk(kv[i].key, " \t\r\n") == NULL);
		/* Every key reported is in the text. */
		FUZZ_CHECK(memmem(data, size, kv[i].key, len));
		/* A repeated key keeps its first slot. */
		for (j = 0; j < i; j++)
			FUZZ_CHECK(strcmp(kv[i].key, kv[j].key) != 0);
		FUZZ_CHECK(cgroup_kv_find(kv, n, kv[i].key) == &kv[i]);
	}
}

static void fuzz_memstat(const uint8_t *data, size_t size)
{
	struct cgroup_memstat ms;
	int r;

	r = cgroup_parse_memstat((const char *)data, size, &ms);
	FUZZ_CHECK(r == 0 || r == -EINVAL);
	if (r < 0)
		return;
	FUZZ_CHECK((ms.present & ~((CGROUP_MEMSTAT_HAS_WORKINGSET(CGROUP_MEMSTAT_TOTAL, _VMSTAT_WS_MAX - 1, VMSTAT_WS_UNSPLIT) << 1) - 1)) == 0);
	if (ms.present & CGROUP_MEMSTAT_HAS_INACTIVE_FILE)
		FUZZ_CHECK(memmem(data, size, "inactive_file", 13));
	if (ms.present & CGROUP_MEMSTAT_HAS_ANON)
		FUZZ_CHECK(memmem(data, size, "anon", 4));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_value(data, size);
	fuzz_flat_keyed(data, size);
	fuzz_memstat(data, size);
	return 0;
}
