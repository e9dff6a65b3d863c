// SPDX-License-Identifier: GPL-2.0
/* /proc/PID/stat text -> procstat_parse(). */
#include <errno.h>
#include "fuzz.h"
#include "procstat.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct procstat ps, untouched;
	const uint8_t *open, *close;
	size_t comm_len;
	int r;

	memset(&ps, 0xa5, sizeof(ps));
	untouched = ps;
	r = procstat_parse((const char *)data, size, &ps);
	FUZZ_CHECK(r == 0 || r == -EINVAL);
	if (r < 0) {
		FUZZ_CHECK(memcmp(&ps, &untouched, sizeof(ps)) == 0);
		return 0;
	}
	FUZZ_CHECK(ps.pid >= 1);
	FUZZ_CHECK((ps.state >= 'A' && ps.state <= 'Z') || (ps.state >= 'a' && ps.state <= 'z'));
	FUZZ_CHECK(fuzz_terminated(ps.comm, sizeof(ps.comm)));
	/* comm is what lies between the first '(' and the last ')', cut to fit. */
	open = memchr(data, '(', size);
	close = memrchr(data, ')', size);
	FUZZ_CHECK(open && close && open < close);
	comm_len = (size_t)(close - open - 1);
	if (memchr(open + 1, '\0', comm_len) == NULL) {
		size_t want = comm_len < sizeof(ps.comm) - 1 ? comm_len : sizeof(ps.comm) - 1;

		FUZZ_CHECK(strlen(ps.comm) == want && memcmp(ps.comm, open + 1, want) == 0);
	}
	return 0;
}
