// SPDX-License-Identifier: GPL-2.0
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

const char *const journal_field_names[F_COUNT] = {
	[F_MESSAGE_ID] = "MESSAGE_ID",
	[F_KIND] = "MEMWATCH_KIND",
	[F_TIMESTAMP] = "MEMWATCH_TIMESTAMP_USEC",
	[F_PID] = "MEMWATCH_PID",
	[F_TID] = "MEMWATCH_TID",
	[F_COMM] = "MEMWATCH_COMM",
	[F_CGROUP] = "MEMWATCH_CGROUP",
	[F_CGROUP_ID] = "MEMWATCH_CGROUP_ID",
	[F_AVAIL] = "MEMWATCH_AVAILABLE_BYTES",
	[F_AVAIL_SOURCE] = "MEMWATCH_AVAILABLE_SOURCE",
	[F_ORDER] = "MEMWATCH_ORDER",
	[F_SUPPRESSED] = "MEMWATCH_SUPPRESSED",
	[F_TOTAL_VM] = "MEMWATCH_TOTAL_VM_BYTES",
	[F_SCOPE] = "MEMWATCH_SCOPE",
	[F_SCOPE_SOURCE] = "MEMWATCH_SCOPE_SOURCE",
	[F_OOM_CGROUP] = "MEMWATCH_OOM_CGROUP",
	[F_OOM_CGROUP_ID] = "MEMWATCH_OOM_CGROUP_ID",
	[F_USAGE] = "MEMWATCH_OOM_CGROUP_USAGE_BYTES",
	[F_LIMIT] = "MEMWATCH_OOM_CGROUP_LIMIT_BYTES",
	[F_ANON] = "MEMWATCH_ANON_RSS_BYTES",
	[F_FILE] = "MEMWATCH_FILE_RSS_BYTES",
	[F_SHMEM] = "MEMWATCH_SHMEM_RSS_BYTES",
	[F_SCORE_ADJ] = "MEMWATCH_OOM_SCORE_ADJ",
	[F_KILLER] = "MEMWATCH_KILLER",
	[F_KILLER_PID] = "MEMWATCH_KILLER_PID",
	[F_SIGNAL] = "MEMWATCH_SIGNAL",
	[F_UNIT] = "MEMWATCH_UNIT",
	[F_NAMESPACE] = "MEMWATCH_NAMESPACE",
	[F_POD] = "MEMWATCH_POD",
	[F_CONTAINER] = "MEMWATCH_CONTAINER",
	[F_CONTAINER_ID] = "MEMWATCH_CONTAINER_ID",
	[F_PSI_SOME_AVG10] = "MEMWATCH_PSI_SOME_AVG10",
	[F_PSI_FULL_AVG10] = "MEMWATCH_PSI_FULL_AVG10",
	[F_PSI_SOME_TOTAL] = "MEMWATCH_PSI_SOME_TOTAL_SEC",
	[F_PSI_FULL_TOTAL] = "MEMWATCH_PSI_FULL_TOTAL_SEC",
	[F_CGROUP_SOURCE] = "MEMWATCH_CGROUP_SOURCE",
	[F_PSI_SOURCE] = "MEMWATCH_PSI_SOURCE",
};


const char *const journal_kind_names[EVENT_KINDS] = {
	[EVENT_DIRECT_RECLAIM] = "direct_reclaim",
	[EVENT_MEMCG_RECLAIM] = "memcg_reclaim",
	[EVENT_OOM_KILL] = "oom_kill",
	[EVENT_ALLOC_FAILURE] = "alloc_failure",
	[EVENT_USERSPACE_KILL] = "userspace_kill",
};

const char *const journal_scope_names[OOM_SCOPES] = {
	[OOM_SCOPE_UNKNOWN] = "unknown",
	[OOM_SCOPE_MEMCG] = "memcg",
	[OOM_SCOPE_GLOBAL] = "global",
	[OOM_SCOPE_CPUSET] = "cpuset",
	[OOM_SCOPE_MEMPOLICY] = "mempolicy",
};

/* daemon/collectors/memavail.c's source_name(): a restored event points at
 * these, as a live one points at that function's literals. */
const char *const journal_avail_sources[JOURNAL_AVAIL_SOURCES] = { "none", "fexit", "kprobe", "counters", "procfs" };
const char *const journal_cgroup_sources[JOURNAL_CGROUP_SOURCES] = { "none", "table", "kill" };
const char *const journal_psi_sources[JOURNAL_PSI_SOURCES] = { "kill", "file" };

const char *journal_event_kind_name(unsigned kind)
{
	return kind < EVENT_KINDS && journal_kind_names[kind] ? journal_kind_names[kind] : "unknown";
}

const char *journal_oom_scope_name(unsigned scope)
{
	return scope < OOM_SCOPES ? journal_scope_names[scope] : "unknown";
}

bool journal_event_is_kill(unsigned kind)
{
	return kind == EVENT_OOM_KILL || kind == EVENT_USERSPACE_KILL;
}

const char *journal_event_message_id(unsigned kind)
{
	return kind == EVENT_OOM_KILL ? KILL_JOURNAL_ID_OOM_KILL :
	       kind == EVENT_USERSPACE_KILL ? KILL_JOURNAL_ID_USERSPACE_KILL : KILL_JOURNAL_ID_PRESSURE;
}

void journal_event_init(struct journal_event *e)
{
	*e = (struct journal_event){
		.kind = EVENT_KINDS,
		.avail_bytes = NAN,
		.avail_source = journal_avail_sources[0],
		.cgroup_source = journal_cgroup_sources[0],
		.psi_some_avg10 = NAN,
		.psi_full_avg10 = NAN,
		.psi_some_total_sec = NAN,
		.psi_full_total_sec = NAN,
	};
}

/* Writing. */

static void put(struct journal_fields *f, const void *p, size_t n)
{
	if (f->overflow || n > sizeof(f->buf) - f->used) {
		f->overflow = true;
		return;
	}
	memcpy(f->buf + f->used, p, n);
	f->used += n;
}

static void _printf_(2, 0) vputf(struct journal_fields *f, const char *fmt, va_list ap)
{
	size_t room = sizeof(f->buf) - f->used;
	int n;

	if (f->overflow)
		return;
	n = vsnprintf(f->buf + f->used, room, fmt, ap);
	if (n < 0 || (size_t)n >= room) {
		f->overflow = true;
		return;
	}
	f->used += (size_t)n;
}

static void _printf_(2, 3) putf(struct journal_fields *f, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vputf(f, fmt, ap);
	va_end(ap);
}

static size_t field_begin(struct journal_fields *f, enum field id)
{
	size_t start = f->used;

	putf(f, "%s=", journal_field_names[id]);
	return start;
}

static void field_end(struct journal_fields *f, size_t start)
{
	if (f->overflow)
		return;
	if (f->n == ARRAY_SIZE(f->iov)) {
		f->overflow = true;
		return;
	}
	f->iov[f->n++] = (struct iovec){ .iov_base = f->buf + start, .iov_len = f->used - start };
}

/* Raw bytes: the value is what the event said, newlines and all
 * (sd_journal_sendv() sends such a field in its binary form). */
static void add_string(struct journal_fields *f, enum field id, const char *value, size_t size)
{
	size_t start, len = strnlen(value, size);

	if (!len)
		return;
	start = field_begin(f, id);
	put(f, value, len);
	field_end(f, start);
}

static void _printf_(3, 4) add_printf(struct journal_fields *f, enum field id, const char *fmt, ...)
{
	size_t start = field_begin(f, id);
	va_list ap;

	va_start(ap, fmt);
	vputf(f, fmt, ap);
	va_end(ap);
	field_end(f, start);
}

/* The shortest decimal that reads back as the same double (as the exposition
 * formats print it): the JSON of a restored event is the original's. */
static void add_double(struct journal_fields *f, enum field id, double v)
{
	char buf[EXPO_NUMBER_MAX];
	size_t start, n;

	if (!isfinite(v))
		return;
	n = expo_format_number(buf, v);
	start = field_begin(f, id);
	put(f, buf, n);
	field_end(f, start);
}

/* For people: a comm or path with a newline, a backslash or bytes that are
 * not UTF-8 is written with escapes, on one line. */
static void put_escaped(struct journal_fields *f, const char *s, size_t size)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + strnlen(s, size);

	while (p < end) {
		size_t n;

		if (*p == '\\') {
			put(f, "\\\\", 2);
			p++;
			continue;
		}
		if (*p == '\n') {
			put(f, "\\n", 2);
			p++;
			continue;
		}
		n = *p < 0x20 || *p == 0x7f ? 0 : utf8_valid_len(p);
		if (n == 0 || p + n > end) {
			putf(f, "\\x%02x", *p++);
			continue;
		}
		put(f, p, n);
		p += n;
	}
}

#define PUT_ESCAPED(f, array) put_escaped(f, array, sizeof(array))

static void put_bytes(struct journal_fields *f, uint64_t pages, long page_size)
{
	char buf[HUMAN_MAX];

	putf(f, "%s", human_bytes(buf, sizeof(buf), (double)pages * (double)page_size, HUMAN_ASCII));
}

static const char *signal_name(uint32_t sig)
{
	return sig == 9 ? "SIGKILL" : sig == 15 ? "SIGTERM" : NULL;
}

static void put_victim(struct journal_fields *f, const struct journal_event *e)
{
	putf(f, "pid %" PRIu32 " (", e->pid);
	PUT_ESCAPED(f, e->comm);
	putf(f, ")");
	if (e->cgroup[0]) {
		putf(f, " in ");
		PUT_ESCAPED(f, e->cgroup);
	}
}

static void put_kill_context(struct journal_fields *f, const struct journal_event *e)
{
	if (e->names.pod[0]) {
		putf(f, ", pod ");
		if (e->names.namespace_[0]) {
			PUT_ESCAPED(f, e->names.namespace_);
			putf(f, "/");
		}
		PUT_ESCAPED(f, e->names.pod);
		if (e->names.container[0]) {
			putf(f, " container ");
			PUT_ESCAPED(f, e->names.container);
		}
	}
	if (isfinite(e->psi_some_avg10)) {
		putf(f, ", memory pressure avg10 some %.1f%%", e->psi_some_avg10 * 100);
		if (isfinite(e->psi_full_avg10))
			putf(f, " full %.1f%%", e->psi_full_avg10 * 100);
	}
}

static void put_message(struct journal_fields *f, const struct journal_event *e, long page_size, uint64_t suppressed)
{
	size_t start = f->used;
	const struct kill_detail *k = &e->raw;
	char buf[HUMAN_MAX];

	putf(f, "MESSAGE=");
	if (e->kind == EVENT_OOM_KILL) {
		putf(f, "OOM kill");
		if (e->has_kill && (e->flags & KILL_HAS_SCOPE))
			putf(f, " (%s scope)", journal_oom_scope_name(k->scope));
		putf(f, ": ");
		put_victim(f, e);
		if (e->has_kill && (e->flags & KILL_HAS_OOM_CGROUP)) {
			putf(f, ", limit hit");
			if (e->oom_cgroup[0]) {
				putf(f, " in ");
				PUT_ESCAPED(f, e->oom_cgroup);
			}
			putf(f, " (usage ");
			put_bytes(f, k->oom_usage_pages, page_size);
			putf(f, ", limit ");
			put_bytes(f, k->oom_limit_pages, page_size);
			putf(f, ")");
		}
		if (e->has_kill && (e->flags & KILL_HAS_RSS)) {
			putf(f, ", anon-rss ");
			put_bytes(f, k->rss_anon_pages, page_size);
			putf(f, ", file-rss ");
			put_bytes(f, k->rss_file_pages, page_size);
			putf(f, ", shmem-rss ");
			put_bytes(f, k->rss_shmem_pages, page_size);
		}
		if (e->has_kill && (e->flags & KILL_HAS_SCORE_ADJ))
			putf(f, ", oom_score_adj %" PRId32, k->oom_score_adj);
		if (e->has_kill)
			put_kill_context(f, e);
	} else if (e->kind == EVENT_USERSPACE_KILL) {
		if (e->has_kill && e->killer[0])
			PUT_ESCAPED(f, e->killer);
		else
			putf(f, "A user-space killer");
		putf(f, " killed ");
		put_victim(f, e);
		if (e->has_kill) {
			if (signal_name(k->signal))
				putf(f, " with %s", signal_name(k->signal));
			else
				putf(f, " with signal %" PRIu32, k->signal);
			put_kill_context(f, e);
		}
	} else {
		putf(f, "%s: ", e->kind == EVENT_DIRECT_RECLAIM ? "Direct reclaim" :
				e->kind == EVENT_MEMCG_RECLAIM ? "Memcg reclaim" :
				e->kind == EVENT_ALLOC_FAILURE ? "Page allocation failure" : "Pressure instant");
		put_victim(f, e);
		putf(f, ", order %" PRIu64, e->value);
		if (isfinite(e->avail_bytes))
			putf(f, ", %s available", human_bytes(buf, sizeof(buf), e->avail_bytes, HUMAN_ASCII));
		if (suppressed)
			putf(f, " (%" PRIu64 " more %s instants since the last one not logged)", suppressed,
			     journal_event_kind_name(e->kind));
	}
	field_end(f, start);
}

int journal_event_format(const struct journal_event *e, long page_size, uint64_t suppressed,
			 struct journal_fields *f)
{
	const struct kill_detail *k = &e->raw;
	bool kill = journal_event_is_kill(e->kind);
	uint64_t ps = page_size > 0 ? (uint64_t)page_size : 1;
	size_t start;

	f->n = 0;
	f->used = 0;
	f->overflow = false;
	add_printf(f, F_MESSAGE_ID, "%s", journal_event_message_id(e->kind));
	start = f->used;
	putf(f, "PRIORITY=%d", kill ? 3 : 4);
	field_end(f, start);
	start = f->used;
	putf(f, "SYSLOG_IDENTIFIER=memwatchd");
	field_end(f, start);
	put_message(f, e, (long)ps, suppressed);

	add_printf(f, F_KIND, "%s", journal_event_kind_name(e->kind));
	add_printf(f, F_TIMESTAMP, "%" PRIu64, e->real_usec);
	add_printf(f, F_PID, "%" PRIu32, e->pid);
	add_printf(f, F_TID, "%" PRIu32, e->tid);
	add_string(f, F_COMM, e->comm, sizeof(e->comm));
	add_string(f, F_CGROUP, e->cgroup, sizeof(e->cgroup));
	add_printf(f, F_CGROUP_ID, "%" PRIu64, e->cgroup_id);
	add_double(f, F_AVAIL, e->avail_bytes);
	add_printf(f, F_AVAIL_SOURCE, "%s", e->avail_source ? e->avail_source : "none");
	if (!kill) {
		add_printf(f, F_ORDER, "%" PRIu64, e->value);
		if (suppressed)
			add_printf(f, F_SUPPRESSED, "%" PRIu64, suppressed);
	}
	/* Pages times the page size wrap as /api/v1/events computes them; only
	 * counts of more than 2^64 bytes, which no kernel reports, would not
	 * read back the same. */
	if (e->kind == EVENT_OOM_KILL)
		add_printf(f, F_TOTAL_VM, "%" PRIu64, e->value * ps);
	if (kill && e->has_kill) {
		if (e->kind == EVENT_OOM_KILL) {
			if (e->flags & KILL_HAS_SCOPE) {
				add_printf(f, F_SCOPE, "%s", journal_oom_scope_name(k->scope));
				add_printf(f, F_SCOPE_SOURCE, "%s",
					   e->flags & KILL_SCOPE_FROM_CONTROL ? "oom_control" : "memcg_walk");
			}
			if (e->flags & KILL_HAS_OOM_CGROUP) {
				add_string(f, F_OOM_CGROUP, e->oom_cgroup, sizeof(e->oom_cgroup));
				add_printf(f, F_OOM_CGROUP_ID, "%" PRIu64, (uint64_t)k->oom_cgroup_id);
				add_printf(f, F_USAGE, "%" PRIu64, (uint64_t)k->oom_usage_pages * ps);
				add_printf(f, F_LIMIT, "%" PRIu64, (uint64_t)k->oom_limit_pages * ps);
			}
			if (e->flags & KILL_HAS_RSS) {
				add_printf(f, F_ANON, "%" PRIu64, (uint64_t)k->rss_anon_pages * ps);
				add_printf(f, F_FILE, "%" PRIu64, (uint64_t)k->rss_file_pages * ps);
				add_printf(f, F_SHMEM, "%" PRIu64, (uint64_t)k->rss_shmem_pages * ps);
			}
			if (e->flags & KILL_HAS_SCORE_ADJ)
				add_printf(f, F_SCORE_ADJ, "%" PRId32, (int32_t)k->oom_score_adj);
		} else {
			add_string(f, F_KILLER, e->killer, sizeof(e->killer));
			add_printf(f, F_KILLER_PID, "%" PRIu32, (uint32_t)k->killer_pid);
			if (signal_name(k->signal))
				add_printf(f, F_SIGNAL, "%s", signal_name(k->signal));
			else
				add_printf(f, F_SIGNAL, "%" PRIu32, (uint32_t)k->signal);
		}
		add_string(f, F_UNIT, e->names.unit, sizeof(e->names.unit));
		add_string(f, F_NAMESPACE, e->names.namespace_, sizeof(e->names.namespace_));
		add_string(f, F_POD, e->names.pod, sizeof(e->names.pod));
		add_string(f, F_CONTAINER, e->names.container, sizeof(e->names.container));
		add_string(f, F_CONTAINER_ID, e->names.container_id, sizeof(e->names.container_id));
		add_double(f, F_PSI_SOME_AVG10, e->psi_some_avg10);
		add_double(f, F_PSI_FULL_AVG10, e->psi_full_avg10);
		add_double(f, F_PSI_SOME_TOTAL, e->psi_some_total_sec);
		add_double(f, F_PSI_FULL_TOTAL, e->psi_full_total_sec);
		add_printf(f, F_CGROUP_SOURCE, "%s", e->cgroup_source ? e->cgroup_source : "none");
		if (e->psi_source)
			add_printf(f, F_PSI_SOURCE, "%s", e->psi_source);
	}
	return f->overflow ? -ENOBUFS : 0;
}

/* Reading. */
