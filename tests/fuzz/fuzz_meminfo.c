// SPDX-License-Identifier: GPL-2.0
/* /proc/meminfo text -> meminfo_parse(). */
#include <errno.h>
#include "fuzz.h"
#include "meminfo.h"

/* Whether a line of the input is "key:" (blanks allowed around the key): a
 * field reported present must have been in the text. */
static int has_line(const uint8_t *data, size_t size, const char *key)
{
	size_t n = strlen(key);
	const uint8_t *p = data, *end = data + size;

	while (p < end) {
		const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
		const uint8_t *eol = nl ? nl : end, *q = p;

		while (q < eol && (*q == ' ' || *q == '\t'))
			q++;
		if ((size_t)(eol - q) > n && memcmp(q, key, n) == 0) {
			q += n;
			while (q < eol && (*q == ' ' || *q == '\t'))
				q++;
			if (q < eol && *q == ':')
				return 1;
		}
		p = nl ? nl + 1 : end;
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct {
		const char *key;
		unsigned flag;
	} keys[] = {
		{ "MemTotal", MEMINFO_HAS_TOTAL },       { "MemFree", MEMINFO_HAS_FREE },
		{ "MemAvailable", MEMINFO_HAS_AVAILABLE }, { "Buffers", MEMINFO_HAS_BUFFERS },
		{ "Cached", MEMINFO_HAS_CACHED },         { "SwapTotal", MEMINFO_HAS_SWAP_TOTAL },
		{ "SwapFree", MEMINFO_HAS_SWAP_FREE },    { "CommitLimit", MEMINFO_HAS_COMMIT_LIMIT },
	};
	struct meminfo m;
	size_t i;
	int r;

	memset(&m, 0xa5, sizeof(m));
	r = meminfo_parse((const char *)data, size, &m);
	FUZZ_CHECK(r == 0 || r == -EINVAL);
	if (r < 0)
		return 0;
	/* MemTotal and MemFree are required; no bit beyond the known fields. */
	FUZZ_CHECK((m.present & (MEMINFO_HAS_TOTAL | MEMINFO_HAS_FREE)) == (MEMINFO_HAS_TOTAL | MEMINFO_HAS_FREE));
	FUZZ_CHECK((m.present & ~((MEMINFO_HAS_COMMIT_LIMIT << 1) - 1)) == 0);
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (m.present & keys[i].flag)
			FUZZ_CHECK(has_line(data, size, keys[i].key));
	/* Values are kB converted to bytes: a multiple of 1024. */
	FUZZ_CHECK(m.total % 1024 == 0 && m.free % 1024 == 0);
	return 0;
}
