/* SPDX-License-Identifier: GPL-2.0 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fileio.h"
#include "macro.h"
#include "meminfo.h"

struct meminfo_field {
	const char *key;
	size_t offset;
	unsigned flag;
};

#define FIELD(k, m, f) { k, offsetof(struct meminfo, m), f }

static const struct meminfo_field meminfo_fields[] = {
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

/* '\r' is deliberately not a blank here: it is only stripped at line end
 * (CRLF), anything else with a CR in it is treated as garbage. */
static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static const struct meminfo_field *field_lookup(const char *key, size_t n)
{
	for (size_t i = 0; i < ARRAY_SIZE(meminfo_fields); i++)
		/* memcmp, not strncmp: key may contain NUL bytes */
		if (strlen(meminfo_fields[i].key) == n &&
		    memcmp(meminfo_fields[i].key, key, n) == 0)
			return &meminfo_fields[i];
	return NULL;
}

/* Parses "<blanks><digits><blanks>kB" (trailing blanks already trimmed).
 * Returns 0 with the value in bytes, 1 if the text is a strict prefix of a
 * valid value (e.g. "1234" or "1234 k", as left behind by a short read),
 * or -EINVAL. */
static int parse_kb_value(const char *p, const char *end, uint64_t *ret)
{
	uint64_t v = 0;
	bool any = false;

	while (p < end && is_blank(*p))
		p++;

	for (; p < end && is_digit(*p); p++) {
		unsigned d = (unsigned) (*p - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -EINVAL;
		v = v * 10 + d;
		any = true;
	}
	if (!any)
		return p == end ? 1 : -EINVAL;

	while (p < end && is_blank(*p))
		p++;
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

static int parse_line(const char *p, const char *end, bool terminated, struct meminfo *mi)
{
	const struct meminfo_field *f;
	const char *colon, *key_end;
	uint64_t v;
	int r;

	while (p < end && is_blank(*p))
		p++;
	while (end > p && (is_blank(end[-1]) || end[-1] == '\r'))
		end--;

	colon = memchr(p, ':', (size_t) (end - p));
	if (!colon)
		return 0; /* blank line or garbage without a key */

	key_end = colon;
	while (key_end > p && is_blank(key_end[-1]))
		key_end--;

	f = field_lookup(p, (size_t) (key_end - p));
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
		if (terminated)
			return -EINVAL;
		return 0;
	}

	/* Duplicate keys: last one wins, later text is the fresher one if
	 * reads were concatenated. */
	memcpy((char *) mi + f->offset, &v, sizeof(v));
	mi->present |= f->flag;
	return 0;
}

int meminfo_parse(const char *buf, size_t len, struct meminfo *out)
{
	struct meminfo mi = {0};
	const char *p, *end;
	int r;

	if (!out || (!buf && len > 0))
		return -EINVAL;
	if (len == 0)
		return -EINVAL; /* no MemTotal; also avoids NULL + 0 */

	p = buf;
	end = buf + len;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t) (end - p));

		r = parse_line(p, eol ? eol : end, eol != NULL, &mi);
		if (r < 0)
			return r;

		p = eol ? eol + 1 : end;
	}

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
