/* SPDX-License-Identifier: GPL-2.0 */
/* Journal entries as the reader sees them, and the events written into them,
 * shared by the kill journal field tests (test_kill_journal_fields*.c). */
#ifndef MEMWATCHD_TESTS_UNIT_KILL_JOURNAL_FIXTURE_H
#define MEMWATCHD_TESTS_UNIT_KILL_JOURNAL_FIXTURE_H

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "kill_journal_fields.h"

#define PAGE 4096L

/* A journal entry as the reader sees it: "NAME=value" items, each a heap
 * copy of exactly its length without a NUL (sd_journal_enumerate_data()
 * gives no terminator either), so ASan catches a read past an item. */
struct entry {
	char *item[96];
	size_t len[96];
	size_t n;
};

static inline void entry_free(struct entry *en)
{
	for (size_t i = 0; i < en->n; i++)
		free(en->item[i]);
	en->n = 0;
}

static inline void entry_from(struct entry *en, const struct journal_fields *f)
{
	en->n = 0;
	ck_assert_uint_le(f->n, ARRAY_SIZE(en->item));
	for (size_t i = 0; i < f->n; i++) {
		en->item[i] = dup_exact(f->iov[i].iov_base, f->iov[i].iov_len);
		en->len[i] = f->iov[i].iov_len;
		en->n++;
	}
}

static inline void format_into(struct entry *en, const struct journal_event *e, uint64_t suppressed)
{
	static struct journal_fields f;

	ck_assert_int_eq(journal_event_format(e, PAGE, suppressed, &f), 0);
	entry_from(en, &f);
}

static inline ssize_t entry_find(const struct entry *en, const char *name)
{
	size_t nl = strlen(name);

	for (size_t i = 0; i < en->n; i++)
		if (en->len[i] > nl && memcmp(en->item[i], name, nl) == 0 && en->item[i][nl] == '=')
			return (ssize_t)i;
	return -1;
}

/* The value of name, NUL-terminated in a static buffer; NULL when absent. */
static inline const char *entry_get(const struct entry *en, const char *name)
{
	static char buf[4096];
	ssize_t i = entry_find(en, name);
	size_t nl = strlen(name);

	if (i < 0)
		return NULL;
	ck_assert_uint_lt(en->len[i] - nl - 1, sizeof(buf));
	memcpy(buf, en->item[i] + nl + 1, en->len[i] - nl - 1);
	buf[en->len[i] - nl - 1] = '\0';
	return buf;
}

static inline void entry_set_bytes(struct entry *en, const char *name, const char *value, size_t vlen)
{
	ssize_t i = entry_find(en, name);
	size_t nl = strlen(name), len = nl + 1 + vlen;
	char *item = malloc(len);

	ck_assert_ptr_nonnull(item);
	memcpy(item, name, nl);
	item[nl] = '=';
	memcpy(item + nl + 1, value, vlen);
	if (i < 0) {
		ck_assert_uint_lt(en->n, ARRAY_SIZE(en->item));
		i = (ssize_t)en->n++;
	} else {
		free(en->item[i]);
	}
	/* exact size again */
	en->item[i] = dup_exact(item, len);
	en->len[i] = len;
	free(item);
}

static inline void entry_set(struct entry *en, const char *name, const char *value)
{
	entry_set_bytes(en, name, value, strlen(value));
}

static inline void entry_add_raw(struct entry *en, const char *item, size_t len)
{
	ck_assert_uint_lt(en->n, ARRAY_SIZE(en->item));
	en->item[en->n] = dup_exact(item, len);
	en->len[en->n++] = len;
}

static inline void entry_drop(struct entry *en, const char *name)
{
	ssize_t i = entry_find(en, name);

	ck_assert_msg(i >= 0, "%s not in the entry", name);
	free(en->item[i]);
	memmove(&en->item[i], &en->item[i + 1], (en->n - (size_t)i - 1) * sizeof(en->item[0]));
	memmove(&en->len[i], &en->len[i + 1], (en->n - (size_t)i - 1) * sizeof(en->len[0]));
	en->n--;
}

static inline int entry_parse(const struct entry *en, long page_size, struct journal_event *ret)
{
	struct iovec iov[ARRAY_SIZE(en->item)];

	for (size_t i = 0; i < en->n; i++)
		iov[i] = (struct iovec){ .iov_base = en->item[i], .iov_len = en->len[i] };
	memset(ret, 0x5a, sizeof(*ret));
	return journal_event_parse(iov, en->n, page_size, ret);
}

static inline void assert_same_double(double a, double b, const char *what)
{
	if (isnan(a) || isnan(b))
		ck_assert_msg(isnan(a) && isnan(b), "%s: %.17g vs %.17g", what, a, b);
	else
		ck_assert_msg(a == b, "%s: %.17g vs %.17g", what, a, b);
}

/* Everything /api/v1/events shows of the event. */
static inline void assert_same(const struct journal_event *a, const struct journal_event *b)
{
	ck_assert_uint_eq(a->real_usec, b->real_usec);
	ck_assert_uint_eq(a->kind, b->kind);
	ck_assert_uint_eq(a->pid, b->pid);
	ck_assert_uint_eq(a->tid, b->tid);
	ck_assert_mem_eq(a->comm, b->comm, strlen(a->comm) + 1);
	ck_assert_uint_eq(a->cgroup_id, b->cgroup_id);
	ck_assert_str_eq(a->cgroup, b->cgroup);
	assert_same_double(a->avail_bytes, b->avail_bytes, "avail_bytes");
	ck_assert_str_eq(a->avail_source, b->avail_source);
	ck_assert_uint_eq(a->value, b->value);
	ck_assert_int_eq(a->has_kill, b->has_kill);
	if (!a->has_kill)
		return;
	ck_assert_uint_eq(a->flags, b->flags);
	if (a->flags & KILL_HAS_SCOPE)
		ck_assert_str_eq(journal_oom_scope_name(a->raw.scope), journal_oom_scope_name(b->raw.scope));
	if (a->flags & KILL_HAS_OOM_CGROUP) {
		ck_assert_str_eq(a->oom_cgroup, b->oom_cgroup);
		ck_assert_uint_eq(a->raw.oom_cgroup_id, b->raw.oom_cgroup_id);
		ck_assert_uint_eq(a->raw.oom_usage_pages, b->raw.oom_usage_pages);
		ck_assert_uint_eq(a->raw.oom_limit_pages, b->raw.oom_limit_pages);
	}
	if (a->flags & KILL_HAS_RSS) {
		ck_assert_uint_eq(a->raw.rss_anon_pages, b->raw.rss_anon_pages);
		ck_assert_uint_eq(a->raw.rss_file_pages, b->raw.rss_file_pages);
		ck_assert_uint_eq(a->raw.rss_shmem_pages, b->raw.rss_shmem_pages);
	}
	if (a->flags & KILL_HAS_SCORE_ADJ)
		ck_assert_int_eq(a->raw.oom_score_adj, b->raw.oom_score_adj);
	if (a->kind == EVENT_USERSPACE_KILL) {
		ck_assert_str_eq(a->killer, b->killer);
		ck_assert_uint_eq(a->raw.killer_pid, b->raw.killer_pid);
		ck_assert_uint_eq(a->raw.signal, b->raw.signal);
	}
	ck_assert_str_eq(a->names.unit, b->names.unit);
	ck_assert_str_eq(a->names.namespace_, b->names.namespace_);
	ck_assert_str_eq(a->names.pod, b->names.pod);
	ck_assert_str_eq(a->names.container, b->names.container);
	ck_assert_str_eq(a->names.container_id, b->names.container_id);
	assert_same_double(a->psi_some_avg10, b->psi_some_avg10, "psi_some_avg10");
	assert_same_double(a->psi_full_avg10, b->psi_full_avg10, "psi_full_avg10");
	assert_same_double(a->psi_some_total_sec, b->psi_some_total_sec, "psi_some_total_sec");
	assert_same_double(a->psi_full_total_sec, b->psi_full_total_sec, "psi_full_total_sec");
	ck_assert_str_eq(a->cgroup_source, b->cgroup_source);
	ck_assert_msg(a->psi_source == b->psi_source || (a->psi_source && b->psi_source && !strcmp(a->psi_source, b->psi_source)),
		      "psi_source %s, want %s", b->psi_source ? b->psi_source : "NULL", a->psi_source ? a->psi_source : "NULL");
}

static inline void oom_kill(struct journal_event *e)
{
	journal_event_init(e);
	e->real_usec = 1796014798149024ULL;
	e->kind = EVENT_OOM_KILL;
	e->pid = 123;
	e->tid = 124;
	snprintf(e->comm, sizeof(e->comm), "foo");
	e->cgroup_id = 6701;
	snprintf(e->cgroup, sizeof(e->cgroup), "/a/b");
	e->avail_bytes = 24648093696.0;
	e->avail_source = "procfs";
	e->value = 51786; /* total_vm pages */
	e->has_kill = true;
	e->flags = KILL_HAS_SCOPE | KILL_SCOPE_FROM_CONTROL | KILL_HAS_OOM_CGROUP | KILL_HAS_RSS | KILL_HAS_SCORE_ADJ;
	e->raw.scope = OOM_SCOPE_MEMCG;
	e->raw.oom_cgroup_id = 6700;
	snprintf(e->oom_cgroup, sizeof(e->oom_cgroup), "/a");
	e->raw.oom_usage_pages = 131072;
	e->raw.oom_limit_pages = 131072;
	e->raw.rss_anon_pages = 16358;
	e->raw.rss_file_pages = 256;
	e->raw.rss_shmem_pages = 0;
	e->raw.oom_score_adj = -17;
	snprintf(e->names.unit, sizeof(e->names.unit), "y.service");
	snprintf(e->names.namespace_, sizeof(e->names.namespace_), "shop");
	snprintf(e->names.pod, sizeof(e->names.pod), "web-0");
	snprintf(e->names.container, sizeof(e->names.container), "app");
	snprintf(e->names.container_id, sizeof(e->names.container_id), "0123456789ab");
	e->psi_some_avg10 = 0.1234;
	e->psi_full_avg10 = 0.05;
	e->psi_some_total_sec = 12.345678;
	e->psi_full_total_sec = 0.1 + 0.2; /* 0.30000000000000004: all 17 digits */
	e->cgroup_source = "kill";
	e->psi_source = "kill";
}

static inline void userspace_kill(struct journal_event *e)
{
	journal_event_init(e);
	e->real_usec = 1796014800000001ULL;
	e->kind = EVENT_USERSPACE_KILL;
	e->pid = 123;
	e->tid = 123;
	snprintf(e->comm, sizeof(e->comm), "foo");
	e->cgroup_id = 99;
	snprintf(e->cgroup, sizeof(e->cgroup), "/x.slice/y.service");
	e->has_kill = true;
	snprintf(e->killer, sizeof(e->killer), "systemd-oomd");
	memcpy(e->raw.killer_comm, e->killer, sizeof(e->raw.killer_comm));
	e->raw.killer_pid = 456;
	e->raw.signal = 9;
	snprintf(e->names.unit, sizeof(e->names.unit), "y.service");
}

#endif
