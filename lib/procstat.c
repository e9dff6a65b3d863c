/* SPDX-License-Identifier: GPL-2.0 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "macro.h"
#include "parse.h"
#include "procstat.h"

/* Number of the last field we need (rss). */
#define PROCSTAT_LAST_FIELD 24

struct procstat_field {
	unsigned no; /* proc(5) field number */
	size_t offset;
};

#define FIELD(n, m) { n, offsetof(struct procstat, m) }

/* Sorted by field number. */
static const struct procstat_field procstat_fields[] = {
	FIELD(10, minflt),
	FIELD(11, cminflt),
	FIELD(12, majflt),
	FIELD(13, cmajflt),
	FIELD(14, utime),
	FIELD(15, stime),
	FIELD(22, starttime),
	FIELD(24, rss_pages),
};

static bool is_letter(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Does a token end at p? Blanks end it; so does the line end, "\n" or
 * "\r\n". The end of buf does not: a short read may have cut the token. */
static bool is_token_end(const char *p, const char *end)
{
	if (p == end)
		return false;
	if (parse_is_blank(*p) || *p == '\n')
		return true;
	return *p == '\r' && p + 1 < end && p[1] == '\n';
}

/* Parses one unsigned decimal token at *p, leaving *p after it. */
static int parse_u64_token(const char **p, const char *end, uint64_t *ret)
{
	const char *s = *p;
	uint64_t v;

	if (parse_u64_prefix(&s, end, &v) < 0)
		return -EINVAL;
	if (!is_token_end(s, end))
		return -EINVAL;

	*p = s;
	*ret = v;
	return 0;
}

/* Skips a field we do not return: "-?<digits>", any magnitude. */
static int skip_int_token(const char **p, const char *end)
{
	const char *s = *p;

	if (s < end && *s == '-')
		s++;
	if (s == end || !parse_is_digit(*s))
		return -EINVAL;
	while (s < end && parse_is_digit(*s))
		s++;
	if (!is_token_end(s, end))
		return -EINVAL;

	*p = s;
	return 0;
}

/* Requires at least one blank, then skips all of them. */
static int skip_separator(const char **p, const char *end)
{
	const char *s = *p;

	if (s == end || !parse_is_blank(*s))
		return -EINVAL;
	*p = parse_skip_blanks(s, end);
	return 0;
}

int procstat_parse(const char *buf, size_t len, struct procstat *out)
{
	struct procstat ps = {0};
	const char *p, *end, *open_paren, *close_paren;
	size_t next = 0, comm_len;
	uint64_t pid;
	int r;

	if (!out || !parse_text_present(buf, len))
		return -EINVAL;

	p = buf;
	end = buf + len;

	/* 1: "<pid> (" */
	r = parse_u64_token(&p, end, &pid);
	if (r < 0)
		return r;
	if (pid == 0 || pid > INT_MAX)
		return -EINVAL;
	r = skip_separator(&p, end);
	if (r < 0)
		return r;

	/* 2: comm can hold anything, ')' and newlines included, but the
	 * kernel prints nothing after it that could contain a ')'. */
	if (p == end || *p != '(')
		return -EINVAL;
	open_paren = p;
	close_paren = memrchr(open_paren + 1, ')', (size_t) (end - open_paren - 1));
	if (!close_paren)
		return -EINVAL;

	comm_len = (size_t) (close_paren - open_paren - 1);
	if (comm_len > sizeof(ps.comm) - 1)
		comm_len = sizeof(ps.comm) - 1;
	memcpy(ps.comm, open_paren + 1, comm_len);
	ps.comm[comm_len] = '\0';
	p = close_paren + 1;

	/* 3: one letter */
	r = skip_separator(&p, end);
	if (r < 0)
		return r;
	if (p == end || !is_letter(*p) || !is_token_end(p + 1, end))
		return -EINVAL;
	ps.state = *p++;

	/* 4-24 */
	for (unsigned no = 4; no <= PROCSTAT_LAST_FIELD; no++) {
		r = skip_separator(&p, end);
		if (r < 0)
			return r;

		if (next < ARRAY_SIZE(procstat_fields) && procstat_fields[next].no == no) {
			uint64_t v;

			r = parse_u64_token(&p, end, &v);
			if (r < 0)
				return r;
			memcpy((char *) &ps + procstat_fields[next].offset, &v, sizeof(v));
			next++;
		} else {
			r = skip_int_token(&p, end);
			if (r < 0)
				return r;
		}
	}

	ps.pid = (int) pid;
	*out = ps;
	return 0;
}
