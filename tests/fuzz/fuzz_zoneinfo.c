// SPDX-License-Identifier: GPL-2.0
/* /proc/zoneinfo text -> zoneinfo_parse(). */
#include <errno.h>
#include "fuzz.h"
#include "zoneinfo.h"

static size_t count(const uint8_t *data, size_t size, const char *needle)
{
	size_t n = 0, len = strlen(needle);
	const uint8_t *p = data, *end = data + size, *hit;

	while (p < end && (hit = memmem(p, (size_t)(end - p), needle, len))) {
		n++;
		p = hit + len;
	}
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct zoneinfo z;
	int r;

	r = zoneinfo_parse((const char *)data, size, &z);
	FUZZ_CHECK(r == 0 || r == -EINVAL);
	if (r < 0)
		return 0;
	FUZZ_CHECK(z.zones >= 1 && z.nodes >= 1 && z.nodes <= z.zones);
	/* Each zone starts with a "Node N, zone NAME" line (a tab may stand for the
	 * blank): never more zones than those. */
	FUZZ_CHECK(z.zones <= count(data, size, "Node ") + count(data, size, "Node\t"));
	/* The reserve of each zone is capped at its managed pages, so the sums are too. */
	FUZZ_CHECK(z.totalreserve_pages <= z.managed_pages);
	FUZZ_CHECK(size > 0 && data[size - 1] == '\n');
	{
		/* With the boost inferred from vm.min_free_kbytes (here the first
		 * bytes, any value): the same file parses, its zones and free pages
		 * unchanged, and the reserve can only shrink, never past managed. */
		struct zoneinfo b;
		uint64_t min_free = 0;

		memcpy(&min_free, data, size < sizeof(min_free) ? size : sizeof(min_free));
		FUZZ_CHECK(zoneinfo_parse_boosted((const char *)data, size, min_free, &b) == 0);
		FUZZ_CHECK(b.zones == z.zones && b.free_pages == z.free_pages && b.managed_pages == z.managed_pages);
		FUZZ_CHECK(b.totalreserve_pages <= z.totalreserve_pages);
	}
	return 0;
}
