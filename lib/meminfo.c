/* SPDX-License-Identifier: GPL-2.0 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fileio.h"
#include "macro.h"
#include "meminfo.h"
#include "parse.h"

#define FIELD(k, m, f) PARSE_FIELD(struct meminfo, k, m, f)

static const struct parse_field meminfo_fields[] = {
	FIELD("MemTotal", total, MEMINFO_HAS_TOTAL),
	FIELD("MemFree", free, MEMINFO_HAS_FREE),
	FIELD("MemAvailable", available, MEMINFO_HAS_AVAILABLE),
	FIELD("Buffers", buffers, MEMINFO_HAS_BUFFERS),
	FIELD("Cached", cached, MEMINFO_HAS_CACHED),
	FIELD("SwapCached", swap_cached, MEMINFO_HAS_SWAP_CACHED),
	FIELD("Active(file)", active_file, MEMINFO_HAS_ACTIVE_FILE),
	FIELD("Inactive(file)", inactive_file, MEMINFO_HAS_INACTIVE_FILE),
	FIELD("AnonPages", anon_pages, MEMINFO_HAS_ANON_PAGES),
	FIELD("Shmem", shmem, MEMINFO_HAS_SHMEM),
	FIELD("SReclaimable", slab_reclaimable, MEMINFO_HAS_SLAB_RECLAIMABLE),
	FIELD("SUnreclaim", slab_unreclaimable, MEMINFO_HAS_SLAB_UNRECLAIMABLE),
	FIELD("Dirty", dirty, MEMINFO_HAS_DIRTY),
	FIELD("Writeback", writeback, MEMINFO_HAS_WRITEBACK),
	FIELD("SwapTotal", swap_total, MEMINFO_HAS_SWAP_TOTAL),
	FIELD("SwapFree", swap_free, MEMINFO_HAS_SWAP_FREE),
	FIELD("Committed_AS", committed_as, MEMINFO_HAS_COMMITTED_AS),
	FIELD("CommitLimit", commit_limit, MEMINFO_HAS_COMMIT_LIMIT),
};

/* Parses "<blanks><digits><blanks>kB" (trailing blanks already trimmed).
 * Returns 0 with the value in bytes, 1 if the text is a strict prefix of a
 * valid value (e.g. "1234" or "1234 k", as left behind by a short read),
 * or -EINVAL. */
static int parse_kb_value(const char *p, const char *end, uint64_t *ret)
{
	uint64_t v;
	int r;

	p = parse_skip_blanks(p, end);
	if (p == end)
		return 1;
	r = parse_u64_prefix(&p, end, &v);
	if (r < 0)
		return -EINVAL;

	p = parse_skip_blanks(p, end);
	if (p == end)
		return 1;
	if (*p++ != 'k')
		return -EINVAL;
	if (p == end)
		return 1;
	if (*p++ != 'B' || p != end)
		return -EINVAL;

	if (v > UINT64_MAX / 1024)
		return -EINVAL;

	*ret = v * 1024;
	return 0;
}

static int parse_line(const struct parse_line *line, void *userdata)
{
	const char *p = line->start, *end = line->end, *colon, *key_end;
	const struct parse_field *f;
	struct meminfo *mi = userdata;
	uint64_t v;
	int r;

	parse_trim(&p, &end);
	colon = memchr(p, ':', (size_t) (end - p));
	if (!colon)
		return 0; /* blank line or garbage without a key */

	key_end = colon;
	while (key_end > p && parse_is_blank(key_end[-1]))
		key_end--;

	f = parse_field_lookup(meminfo_fields, ARRAY_SIZE(meminfo_fields), p, (size_t) (key_end - p));
	if (!f)
		return 0; /* unknown keys are not validated at all */

	r = parse_kb_value(colon + 1, end, &v);
	if (r < 0)
		return r;
	if (r > 0) {
		/* An incomplete value on a line that ended properly is broken.
		 * On an unterminated last line it is a short read: the digits
		 * may be cut off, so drop the value rather than trust it or
		 * reject the whole snapshot. */
		if (line->terminated)
			return -EINVAL;
		return 0;
	}

	/* Duplicate keys: last one wins, later text is the fresher one if
	 * reads were concatenated. */
	parse_field_set(mi, &mi->present, f, v);
	return 0;
}

int meminfo_parse(const char *buf, size_t len, struct meminfo *out)
{
	struct meminfo mi = {0};
	int r;

	if (!out || !parse_text_present(buf, len))
		return -EINVAL; /* no MemTotal */

	r = parse_lines(buf, len, parse_line, &mi);
	if (r < 0)
		return r;

	if (!(mi.present & MEMINFO_HAS_TOTAL) || !(mi.present & MEMINFO_HAS_FREE))
		return -EINVAL;

	*out = mi;
	return 0;
}

int meminfo_read(struct procfile *pf, struct meminfo *out)
{
	const char *data;
	size_t len;
	int r;

	r = procfile_read(pf, &data, &len);
	if (r < 0)
		return r;
	return meminfo_parse(data, len, out);
}

int meminfo_read_available(struct procfile *pf, double *bytes)
{
	struct meminfo m;
	int r;

	r = meminfo_read(pf, &m);
	if (r < 0)
		return r;
	if (!(m.present & MEMINFO_HAS_AVAILABLE))
		return -ENODATA;
	*bytes = (double)m.available;
	return 0;
}
