// SPDX-License-Identifier: GPL-2.0
/* Reading a kill back from its journal fields (kill_journal_fields.h). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "expo.h"
#include "human.h"
#include "kill_journal_fields.h"
#include "kill_journal_internal.h"
#include "macro.h"
#include "parse.h"
#include "utf8.h"

/* struct journal_event_parser.bytes[], and its have bits. */
enum { B_USAGE, B_LIMIT, B_ANON, B_FILE, B_SHMEM, B_TOTAL_VM, B_COUNT };
#define HAVE_BYTES(b) (1u << (b))
#define HAVE_ORDER (1u << B_COUNT)
#define HAVE_SCOPE (1u << (B_COUNT + 1))
#define HAVE_SCOPE_SOURCE (1u << (B_COUNT + 2))
#define HAVE_SCORE_ADJ (1u << (B_COUNT + 3))

void journal_event_parse_begin(struct journal_event_parser *p)
{
	*p = (struct journal_event_parser){ .id_kind = EVENT_KINDS, .field_kind = EVENT_KINDS };
	journal_event_init(&p->ev);
}

/* A string field: no NUL inside and room for it, else it stays empty. */
static void take_string(char *dst, size_t size, const char *v, size_t len)
{
	dst[0] = '\0';
	if (len >= size || memchr(v, '\0', len))
		return;
	memcpy(dst, v, len);
	dst[len] = '\0';
}

static bool take_u64(const char *v, size_t len, uint64_t *ret)
{
	return parse_u64(v, v + len, ret) == 0;
}

static bool take_u32(const char *v, size_t len, uint32_t *ret)
{
	uint64_t x;

	if (!take_u64(v, len, &x) || x > UINT32_MAX)
		return false;
	*ret = (uint32_t)x;
	return true;
}

/* "-?digits[.digits][e[+-]digits]", finite: what add_double() writes. No
 * blanks, hex, "inf" or "nan", which strtod() would take. */
static bool take_double(const char *v, size_t len, double *ret)
{
	char buf[64], *end;
	size_t i = 0;
	double x;

	if (len == 0 || len >= sizeof(buf))
		return false;
	if (v[i] == '-')
		i++;
	if (i == len || !parse_is_digit(v[i]))
		return false;
	while (i < len && parse_is_digit(v[i]))
		i++;
	if (i < len && v[i] == '.') {
		if (++i == len || !parse_is_digit(v[i]))
			return false;
		while (i < len && parse_is_digit(v[i]))
			i++;
	}
	if (i < len && (v[i] == 'e' || v[i] == 'E')) {
		if (++i < len && (v[i] == '+' || v[i] == '-'))
			i++;
		if (i == len || !parse_is_digit(v[i]))
			return false;
		while (i < len && parse_is_digit(v[i]))
			i++;
	}
	if (i != len)
		return false;
	memcpy(buf, v, len);
	buf[len] = '\0';
	/* The daemon never calls setlocale(): strtod() reads '.' as the point. */
	x = strtod(buf, &end);
	if (*end || !isfinite(x))
		return false;
	*ret = x;
	return true;
}

/* The index of [v, v + len) in names[0..n), or n. */
static size_t lookup(const char *const *names, size_t n, const char *v, size_t len)
{
	for (size_t i = 0; i < n; i++)
		if (names[i] && parse_token_eq(v, len, names[i]))
			return i;
	return n;
}

static void take_bytes(struct journal_event_parser *p, unsigned b, const char *v, size_t len)
{
	if (take_u64(v, len, &p->bytes[b]))
		p->have |= HAVE_BYTES(b);
	else
		p->have &= ~HAVE_BYTES(b);
}

static void take_psi(double *dst, const char *v, size_t len)
{
	if (!take_double(v, len, dst) || *dst < 0)
		*dst = NAN;
}

void journal_event_parse_field(struct journal_event_parser *p, const void *data, size_t len)
{
	const char *item = data, *eq = memchr(item, '=', len), *v;
	struct journal_event *e = &p->ev;
	size_t id, vlen;
	int64_t i64;

	if (!eq)
		return;
	id = lookup(journal_field_names, F_COUNT, item, (size_t)(eq - item));
	v = eq + 1;
	vlen = len - (size_t)(v - item);
	switch (id) {
	case F_MESSAGE_ID:
		p->id_seen = true;
		p->id_pressure = parse_token_eq(v, vlen, KILL_JOURNAL_ID_PRESSURE);
		p->id_kind = parse_token_eq(v, vlen, KILL_JOURNAL_ID_OOM_KILL) ? EVENT_OOM_KILL :
			     parse_token_eq(v, vlen, KILL_JOURNAL_ID_USERSPACE_KILL) ? EVENT_USERSPACE_KILL : EVENT_KINDS;
		break;
	case F_KIND:
		p->field_kind = (unsigned)lookup(journal_kind_names, EVENT_KINDS, v, vlen);
		break;
	case F_TIMESTAMP:
		if (!take_u64(v, vlen, &e->real_usec))
			e->real_usec = 0;
		break;
	case F_PID:
		if (!take_u32(v, vlen, &e->pid))
			e->pid = 0;
		break;
	case F_TID:
		if (!take_u32(v, vlen, &e->tid))
			e->tid = 0;
		break;
	case F_COMM:
		take_string(e->comm, sizeof(e->comm), v, vlen);
		break;
	case F_CGROUP:
		take_string(e->cgroup, sizeof(e->cgroup), v, vlen);
		break;
	case F_CGROUP_ID:
		if (!take_u64(v, vlen, &e->cgroup_id))
			e->cgroup_id = 0;
		break;
	case F_AVAIL:
		if (!take_double(v, vlen, &e->avail_bytes) || e->avail_bytes < 0)
			e->avail_bytes = NAN;
		break;
	case F_CGROUP_SOURCE: {
		size_t s = lookup(journal_cgroup_sources, JOURNAL_CGROUP_SOURCES, v, vlen);

		e->cgroup_source = journal_cgroup_sources[s < JOURNAL_CGROUP_SOURCES ? s : 0];
		break;
	}
	case F_PSI_SOURCE: {
		size_t s = lookup(journal_psi_sources, JOURNAL_PSI_SOURCES, v, vlen);

		e->psi_source = s < JOURNAL_PSI_SOURCES ? journal_psi_sources[s] : NULL;
		break;
	}
	case F_AVAIL_SOURCE: {
		size_t s = lookup(journal_avail_sources, JOURNAL_AVAIL_SOURCES, v, vlen);

		e->avail_source = journal_avail_sources[s < JOURNAL_AVAIL_SOURCES ? s : 0];
		break;
	}
	case F_ORDER:
		if (take_u64(v, vlen, &p->order))
			p->have |= HAVE_ORDER;
		else
			p->have &= ~HAVE_ORDER;
		break;
	case F_TOTAL_VM:
		take_bytes(p, B_TOTAL_VM, v, vlen);
		break;
	case F_SCOPE:
		p->scope = (unsigned)lookup(journal_scope_names, OOM_SCOPES, v, vlen);
		if (p->scope < OOM_SCOPES)
			p->have |= HAVE_SCOPE;
		else
			p->have &= ~HAVE_SCOPE;
		break;
	case F_SCOPE_SOURCE:
		p->scope_control = parse_token_eq(v, vlen, "oom_control");
		if (p->scope_control || parse_token_eq(v, vlen, "memcg_walk"))
			p->have |= HAVE_SCOPE_SOURCE;
		else
			p->have &= ~HAVE_SCOPE_SOURCE;
		break;
	case F_OOM_CGROUP:
		take_string(e->oom_cgroup, sizeof(e->oom_cgroup), v, vlen);
		break;
	case F_OOM_CGROUP_ID: {
		uint64_t x;

		e->raw.oom_cgroup_id = take_u64(v, vlen, &x) ? x : 0;
		break;
	}
	case F_USAGE:
		take_bytes(p, B_USAGE, v, vlen);
		break;
	case F_LIMIT:
		take_bytes(p, B_LIMIT, v, vlen);
		break;
	case F_ANON:
		take_bytes(p, B_ANON, v, vlen);
		break;
	case F_FILE:
		take_bytes(p, B_FILE, v, vlen);
		break;
	case F_SHMEM:
		take_bytes(p, B_SHMEM, v, vlen);
		break;
	case F_SCORE_ADJ:
		if (parse_i64(v, v + vlen, &i64) == 0 && i64 >= INT32_MIN && i64 <= INT32_MAX) {
			p->score_adj = (int32_t)i64;
			p->have |= HAVE_SCORE_ADJ;
		} else {
			p->have &= ~HAVE_SCORE_ADJ;
		}
		break;
	case F_KILLER:
		take_string(e->killer, sizeof(e->killer), v, vlen);
		break;
	case F_KILLER_PID: {
		uint32_t x;

		e->raw.killer_pid = take_u32(v, vlen, &x) ? x : 0;
		break;
	}
	case F_SIGNAL: {
		uint32_t x;

		if (parse_token_eq(v, vlen, "SIGKILL"))
			x = 9;
		else if (parse_token_eq(v, vlen, "SIGTERM"))
			x = 15;
		else if (!take_u32(v, vlen, &x))
			x = 0;
		e->raw.signal = x;
		break;
	}
	case F_UNIT:
		take_string(e->names.unit, sizeof(e->names.unit), v, vlen);
		break;
	case F_NAMESPACE:
		take_string(e->names.namespace_, sizeof(e->names.namespace_), v, vlen);
		break;
	case F_POD:
		take_string(e->names.pod, sizeof(e->names.pod), v, vlen);
		break;
	case F_CONTAINER:
		take_string(e->names.container, sizeof(e->names.container), v, vlen);
		break;
	case F_CONTAINER_ID:
		take_string(e->names.container_id, sizeof(e->names.container_id), v, vlen);
		break;
	case F_PSI_SOME_AVG10:
		take_psi(&e->psi_some_avg10, v, vlen);
		break;
	case F_PSI_FULL_AVG10:
		take_psi(&e->psi_full_avg10, v, vlen);
		break;
	case F_PSI_SOME_TOTAL:
		take_psi(&e->psi_some_total_sec, v, vlen);
		break;
	case F_PSI_FULL_TOTAL:
		take_psi(&e->psi_full_total_sec, v, vlen);
		break;
	default:
		break; /* MEMWATCH_SUPPRESSED, the journal's own fields, anything else */
	}
}

/* Bytes back to pages: exact for what this machine wrote. */
static uint64_t to_pages(uint64_t bytes, uint64_t page_size)
{
	return bytes / page_size + (bytes % page_size >= (page_size + 1) / 2 ? 1 : 0);
}

int journal_event_parse_end(struct journal_event_parser *p, long page_size, struct journal_event *ret)
{
	struct journal_event *e = &p->ev;
	uint64_t ps = page_size > 0 ? (uint64_t)page_size : 1;
	bool all;

	if (p->id_kind < EVENT_KINDS)
		e->kind = p->id_kind; /* a kill's own id */
	else if ((!p->id_seen || p->id_pressure) && p->field_kind < EVENT_KINDS &&
		 !(p->id_pressure && journal_event_is_kill(p->field_kind)))
		e->kind = p->field_kind; /* the pressure instants' id, or none at all */
	else
		return -EINVAL;       /* someone else's MESSAGE_ID, or no kind */

	if (e->kind == EVENT_OOM_KILL)
		e->value = p->have & HAVE_BYTES(B_TOTAL_VM) ? to_pages(p->bytes[B_TOTAL_VM], ps) : 0;
	else if (e->kind == EVENT_USERSPACE_KILL)
		e->value = 0;
	else
		e->value = p->have & HAVE_ORDER ? p->order : 0;

	e->has_kill = journal_event_is_kill(e->kind);
	if (!e->has_kill) {
		/* Kill fields in a pressure instant's entry mean nothing. */
		e->raw = (struct kill_detail){ 0 };
		e->oom_cgroup[0] = e->killer[0] = '\0';
		e->names = (struct cgroup_labels){ .unit = "" };
		e->psi_some_avg10 = e->psi_full_avg10 = e->psi_some_total_sec = e->psi_full_total_sec = NAN;
		*ret = *e;
		return 0;
	}

	e->flags = 0;
	if ((p->have & (HAVE_SCOPE | HAVE_SCOPE_SOURCE)) == (HAVE_SCOPE | HAVE_SCOPE_SOURCE)) {
		e->flags |= KILL_HAS_SCOPE | (p->scope_control ? KILL_SCOPE_FROM_CONTROL : 0);
		e->raw.scope = p->scope;
	}
	all = (p->have & (HAVE_BYTES(B_USAGE) | HAVE_BYTES(B_LIMIT))) == (HAVE_BYTES(B_USAGE) | HAVE_BYTES(B_LIMIT));
	if (all) {
		e->flags |= KILL_HAS_OOM_CGROUP;
		e->raw.oom_usage_pages = to_pages(p->bytes[B_USAGE], ps);
		e->raw.oom_limit_pages = to_pages(p->bytes[B_LIMIT], ps);
	} else {
		/* The path and id go with the counters: a path alone is not shown. */
		e->oom_cgroup[0] = '\0';
		e->raw.oom_cgroup_id = 0;
	}
	all = (p->have & (HAVE_BYTES(B_ANON) | HAVE_BYTES(B_FILE) | HAVE_BYTES(B_SHMEM))) ==
	      (HAVE_BYTES(B_ANON) | HAVE_BYTES(B_FILE) | HAVE_BYTES(B_SHMEM));
	if (all) {
		e->flags |= KILL_HAS_RSS;
		e->raw.rss_anon_pages = to_pages(p->bytes[B_ANON], ps);
		e->raw.rss_file_pages = to_pages(p->bytes[B_FILE], ps);
		e->raw.rss_shmem_pages = to_pages(p->bytes[B_SHMEM], ps);
	}
	if (p->have & HAVE_SCORE_ADJ) {
		e->flags |= KILL_HAS_SCORE_ADJ;
		e->raw.oom_score_adj = p->score_adj;
	}
	memcpy(e->raw.killer_comm, e->killer, sizeof(e->raw.killer_comm));
	*ret = *e;
	return 0;
}

int journal_event_parse(const struct iovec *fields, size_t n, long page_size, struct journal_event *ret)
{
	struct journal_event_parser p;

	journal_event_parse_begin(&p);
	for (size_t i = 0; i < n; i++)
		journal_event_parse_field(&p, fields[i].iov_base, fields[i].iov_len);
	return journal_event_parse_end(&p, page_size, ret);
}
