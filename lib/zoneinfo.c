/* SPDX-License-Identifier: GPL-2.0 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "macro.h"
#include "parse.h"
#include "zoneinfo.h"

#define ZONEINFO_MAX_ZONE_TYPES 8

#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define MIN(a, b) ((a) < (b) ? (a) : (b))

enum {
	HAS_FREE = 1u << 0,
	HAS_LOW = 1u << 1,
	HAS_HIGH = 1u << 2,
	HAS_MANAGED = 1u << 3,
	HAS_PROTECTION = 1u << 4,
	HAS_ALL = (1u << 5) - 1,
};

struct zone_parse {
	bool open;
	long node;
	unsigned index; /* the zone's type: its position within the node */
	unsigned present;
	bool has_min, has_boost, highmem;
	uint64_t free, min, low, high, boost, managed;
	uint64_t protection[ZONEINFO_MAX_ZONE_TYPES];
	unsigned n_protection;
	/* The whole file's, for the boost of kernels that do not print it. */
	bool boost_seen;
	uint64_t lowmem_managed;
	uint64_t min_free_pages; /* 0: no boost inferred */
};

static void skip_blanks(const char **p, const char *end)
{
	*p = parse_skip_blanks(*p, end);
}

/* "<number>" and nothing else on the rest of the line. */
static int parse_sole_value(const char *p, const char *end, uint64_t *ret)
{
	skip_blanks(&p, end);
	if (parse_u64_prefix(&p, end, ret) < 0)
		return -EINVAL;
	skip_blanks(&p, end);
	return p == end ? 0 : -EINVAL;
}

/* "(0, 3018, 24090)" */
static int parse_protection(const char *p, const char *end, struct zone_parse *z)
{
	skip_blanks(&p, end);
	if (p == end || *p++ != '(')
		return -EINVAL;
	z->n_protection = 0;
	for (;;) {
		uint64_t v;

		skip_blanks(&p, end);
		if (parse_u64_prefix(&p, end, &v) < 0)
			return -EINVAL;
		if (z->n_protection < ZONEINFO_MAX_ZONE_TYPES)
			z->protection[z->n_protection++] = v;
		skip_blanks(&p, end);
		if (p < end && *p == ',') {
			p++;
			continue;
		}
		if (p < end && *p == ')') {
			p++;
			break;
		}
		return -EINVAL;
	}
	skip_blanks(&p, end);
	return p == end ? 0 : -EINVAL;
}

/* Where zoneinfo has no boost line (5.10), min, low and high have the boost
 * in them: it is what the zone's min has above the share of
 * vm.min_free_kbytes that __setup_per_zone_wmarks() gives it. */
static uint64_t inferred_boost(const struct zone_parse *z)
{
	uint64_t nominal;

	if (z->highmem) {
		nominal = MIN(MAX(z->managed / 1024, UINT64_C(32)), UINT64_C(128));
	} else {
		if (!z->lowmem_managed)
			return 0;
		nominal = (uint64_t)((unsigned __int128)z->min_free_pages * z->managed / z->lowmem_managed);
	}
	return z->min > nominal ? z->min - nominal : 0;
}

static int zone_finish(struct zone_parse *z, struct zoneinfo *out)
{
	uint64_t reserve = 0, high;
	unsigned j;

	if (!z->open)
		return 0;
	z->open = false;
	/* Every zone, populated or not, prints all of these: a zone without
	 * them is a file cut short. */
	if (z->present != HAS_ALL)
		return -EINVAL;
	out->zones++;
	out->free_pages += z->free;
	out->wmark_low_pages += z->low;
	out->managed_pages += z->managed;
	if (z->highmem)
		out->highmem_managed_pages += z->managed;
	/* Reserves against allocations that could have used a higher zone. */
	for (j = z->index; j < z->n_protection; j++)
		reserve = MAX(reserve, z->protection[j]);
	if (z->has_boost)
		z->boost_seen = true;
	else if (z->min_free_pages && z->has_min)
		z->boost = inferred_boost(z);
	/* The reserve was computed right after the boost was reset to 0. */
	high = z->high > z->boost ? z->high - z->boost : 0;
	if (reserve > UINT64_MAX - high)
		return -EINVAL;
	reserve += high;
	out->totalreserve_pages += MIN(reserve, z->managed);
	return 0;
}

/* "Node 0, zone   Normal" */
static int zone_start(const char *p, const char *end, struct zone_parse *z, struct zoneinfo *out)
{
	uint64_t node;
	size_t n;

	p += strlen("Node");
	skip_blanks(&p, end);
	if (parse_u64_prefix(&p, end, &node) < 0 || node > 1u << 20)
		return -EINVAL;
	if (p == end || *p++ != ',')
		return -EINVAL;
	skip_blanks(&p, end);
	n = (size_t)(parse_word_end(p, end) - p);
	if (!parse_token_eq(p, n, "zone"))
		return -EINVAL;
	p += n;
	skip_blanks(&p, end);
	if (p == end)
		return -EINVAL;
	if (out->zones == 0 || (long)node != z->node) {
		out->nodes++;
		z->index = 0;
	} else {
		z->index++;
	}
	z->node = (long)node;
	z->open = true;
	z->present = 0;
	z->has_min = z->has_boost = false;
	z->highmem = parse_token_eq(p, (size_t)(parse_word_end(p, end) - p), "HighMem");
	z->free = z->min = z->low = z->high = z->boost = z->managed = 0;
	z->n_protection = 0;
	return 0;
}

static int parse_line(const char *p, const char *end, struct zone_parse *z, struct zoneinfo *out)
{
	uint64_t *target = NULL;
	unsigned flag = 0;
	size_t n;

	end = parse_trim_end(p, end);
	if (p < end && !parse_is_blank(*p)) {
		/* Only zone headers start in the first column. */
		if (end - p >= 4 && memcmp(p, "Node", 4) == 0 && (end - p == 4 || parse_is_blank(p[4]))) {
			int r = zone_finish(z, out);

			return r < 0 ? r : zone_start(p, end, z, out);
		}
		return 0;
	}
	if (!z->open)
		return 0;
	skip_blanks(&p, end);
	n = (size_t)(parse_word_end(p, end) - p);
	if (parse_token_eq(p, n, "pages")) {
		p += n;
		skip_blanks(&p, end);
		n = (size_t)(parse_word_end(p, end) - p);
		if (!parse_token_eq(p, n, "free"))
			return 0;
		target = &z->free, flag = HAS_FREE;
	} else if (parse_token_eq(p, n, "min")) {
		if (z->has_min)
			return 0;
		z->has_min = true;
		target = &z->min;
	} else if (parse_token_eq(p, n, "low")) {
		target = &z->low, flag = HAS_LOW;
	} else if (parse_token_eq(p, n, "high")) {
		target = &z->high, flag = HAS_HIGH;
	} else if (parse_token_eq(p, n, "boost")) {
		z->has_boost = true;
		target = &z->boost;
	} else if (parse_token_eq(p, n, "managed")) {
		target = &z->managed, flag = HAS_MANAGED;
	} else if (parse_token_eq(p, n, "protection:")) {
		if (z->present & HAS_PROTECTION)
			return 0;
		z->present |= HAS_PROTECTION;
		return parse_protection(p + n, end, z);
	} else {
		return 0; /* per-node and per-zone statistics, pagesets, "high:" of a pageset */
	}
	if (z->present & flag)
		return 0; /* only the first: later "high" lines would be a pageset's, on kernels that print one without a colon */
	if (parse_sole_value(p + n, end, target) < 0)
		return -EINVAL;
	z->present |= flag;
	return 0;
}

/* One pass over the file; with min_free_pages, lowmem_managed is the first
 * pass's sum over the zones that take a share of it. */
static int parse_pass(const char *buf, size_t len, uint64_t min_free_pages, uint64_t lowmem_managed,
		      struct zoneinfo *out)
{
	struct zone_parse z = { .node = -1, .min_free_pages = min_free_pages, .lowmem_managed = lowmem_managed };
	const char *p = buf, *end = buf + len;
	int r;

	memset(out, 0, sizeof(*out));
	/* The kernel ends every line; without the last newline the read was cut short. */
	if (len == 0 || buf[len - 1] != '\n')
		return -EINVAL;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *line_end = nl ? nl : end;

		if (memchr(p, '\0', (size_t)(line_end - p)))
			return -EINVAL;
		r = parse_line(p, line_end, &z, out);
		if (r < 0)
			return r;
		p = nl ? nl + 1 : end;
	}
	r = zone_finish(&z, out);
	if (r < 0)
		return r;
	out->prints_boost = z.boost_seen;
	return out->zones ? 0 : -EINVAL;
}

int zoneinfo_parse_boosted(const char *buf, size_t len, uint64_t min_free_pages, struct zoneinfo *out)
{
	int r = parse_pass(buf, len, 0, 0, out);

	if (r < 0 || out->prints_boost || !min_free_pages)
		return r;
	return parse_pass(buf, len, min_free_pages, out->managed_pages - out->highmem_managed_pages, out);
}

int zoneinfo_parse(const char *buf, size_t len, struct zoneinfo *out)
{
	return zoneinfo_parse_boosted(buf, len, 0, out);
}
