// SPDX-License-Identifier: GPL-2.0
/* /proc/pressure/memory and cgroup memory.pressure text -> psi_parse(). */
#include <errno.h>
#include <math.h>
#include "fuzz.h"
#include "psi.h"

static void check_line(const struct psi_line *l)
{
	FUZZ_CHECK(isfinite(l->avg10) && l->avg10 >= 0 && l->avg10 <= 100);
	FUZZ_CHECK(isfinite(l->avg60) && l->avg60 >= 0 && l->avg60 <= 100);
	FUZZ_CHECK(isfinite(l->avg300) && l->avg300 >= 0 && l->avg300 <= 100);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct psi_stats ps;
	int r;

	r = psi_parse((const char *)data, size, &ps);
	FUZZ_CHECK(r == 0 || r == -EINVAL);
	if (r < 0)
		return 0;
	FUZZ_CHECK(ps.has_some);
	FUZZ_CHECK(memmem(data, size, "some", 4));
	check_line(&ps.some);
	if (ps.has_full) {
		FUZZ_CHECK(memmem(data, size, "full", 4));
		check_line(&ps.full);
	}
	return 0;
}
