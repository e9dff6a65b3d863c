// SPDX-License-Identifier: GPL-2.0
/* /proc/vmstat text -> vmstat_parse(). */
#include <errno.h>
#include "fuzz.h"
#include "vmstat.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vmstat v, untouched;
	int r;

	memset(&v, 0xa5, sizeof(v));
	untouched = v;
	r = vmstat_parse((const char *)data, size, &v);
	FUZZ_CHECK(r == 0 || r == -EINVAL);
	if (r < 0) {
		/* "out is written only on success" */
		FUZZ_CHECK(memcmp(&v, &untouched, sizeof(v)) == 0);
		return 0;
	}
	FUZZ_CHECK(size > 0);
	FUZZ_CHECK((v.present & ~((VMSTAT_HAS_WORKINGSET(_VMSTAT_WS_MAX - 1, VMSTAT_WS_UNSPLIT) << 1) - 1)) == 0);
	/* A field is present only if a line of the text names it. */
	if (v.present & VMSTAT_HAS_PGFAULT)
		FUZZ_CHECK(memmem(data, size, "pgfault", 7));
	if (v.present & VMSTAT_HAS_PGALLOC)
		FUZZ_CHECK(memmem(data, size, "pgalloc", 7));
	if (v.present & VMSTAT_HAS_OOM_KILL)
		FUZZ_CHECK(memmem(data, size, "oom_kill ", 9) || memmem(data, size, "oom_kill\t", 9));
	return 0;
}
