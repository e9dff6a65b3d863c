/* SPDX-License-Identifier: GPL-2.0 */
#include <check.h>
#include <errno.h>
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

static void entry_free(struct entry *en)
{
	for (size_t i = 0; i < en->n; i++)
		free(en->item[i]);
	en->n = 0;
}

static void entry_from(struct entry *en, const struct journal_fields *f)
{
	en->n = 0;
	ck_assert_uint_le(f->n, ARRAY_SIZE(en->item));
	for (size_t i = 0; i < f->n; i++) {
		en->item[i] = dup_exact(f->iov[i].iov_base, f->iov[i].iov_len);
		en->len[i] = f->iov[i].iov_len;
		en->n++;
	}
}

static void format_into(struct entry *en, const struct journal_event *e, uint64_t suppressed)
{
	static struct journal_fields f;

	ck_assert_int_eq(journal_event_format(e, PAGE, suppressed, &f), 0);
	entry_from(en, &f);
}

static ssize_t entry_find(const struct entry *en, const char *name)
{
	size_t nl = strlen(name);

	for (size_t i = 0; i < en->n; i++)
		if (en->len[i] > nl && memcmp(en->item[i], name, nl) == 0 && en->item[i][nl] == '=')
			return (ssize_t)i;
	return -1;
}

/* The value of name, NUL-terminated in a static buffer; NULL when absent. */
static const char *entry_get(const struct entry *en, const char *name)
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

static void entry_set_bytes(struct entry *en, const char *name, const char *value, size_t vlen)
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

static void entry_set(struct entry *en, const char *name, const char *value)
{
	entry_set_bytes(en, name, value, strlen(value));
}

static void entry_add_raw(struct entry *en, const char *item, size_t len)
{
	ck_assert_uint_lt(en->n, ARRAY_SIZE(en->item));
	en->item[en->n] = dup_exact(item, len);
	en->len[en->n++] = len;
}

static void entry_drop(struct entry *en, const char *name)
{
	ssize_t i = entry_find(en, name);

	ck_assert_msg(i >= 0, "%s not in the entry", name);
	free(en->item[i]);
	memmove(&en->item[i], &en->item[i + 1], (en->n - (size_t)i - 1) * sizeof(en->item[0]));
	memmove(&en->len[i], &en->len[i + 1], (en->n - (size_t)i - 1) * sizeof(en->len[0]));
	en->n--;
}

static int entry_parse(const struct entry *en, long page_size, struct journal_event *ret)
{
	struct iovec iov[ARRAY_SIZE(en->item)];

	for (size_t i = 0; i < en->n; i++)
		iov[i] = (struct iovec){ .iov_base = en->item[i], .iov_len = en->len[i] };
	memset(ret, 0x5a, sizeof(*ret));
	return journal_event_parse(iov, en->n, page_size, ret);
}

static void assert_same_double(double a, double b, const char *what)
{
	if (isnan(a) || isnan(b))
		ck_assert_msg(isnan(a) && isnan(b), "%s: %.17g vs %.17g", what, a, b);
	else
		ck_assert_msg(a == b, "%s: %.17g vs %.17g", what, a, b);
}

/* Everything /api/v1/events shows of the event. */
static void assert_same(const struct journal_event *a, const struct journal_event *b)
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
}

static void oom_kill(struct journal_event *e)
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
}

static void userspace_kill(struct journal_event *e)
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

START_TEST(test_oom_kill_round_trip)
{
	struct journal_event e, back;
	struct entry en;

	oom_kill(&e);
	format_into(&en, &e, 0);
	ck_assert_str_eq(entry_get(&en, "MESSAGE_ID"), KILL_JOURNAL_ID_OOM_KILL);
	ck_assert_str_eq(entry_get(&en, "PRIORITY"), "3");
	ck_assert_str_eq(entry_get(&en, "SYSLOG_IDENTIFIER"), "memwatchd");
	ck_assert_str_eq(entry_get(&en, "MESSAGE"),
			 "OOM kill (memcg scope): pid 123 (foo) in /a/b, limit hit in /a (usage 512.0 MiB, limit "
			 "512.0 MiB), anon-rss 63.9 MiB, file-rss 1.0 MiB, shmem-rss 0.0 B, oom_score_adj -17, pod "
			 "shop/web-0 container app, memory pressure avg10 some 12.3% full 5.0%");
	ck_assert_str_eq(entry_get(&en, "MEMWATCH_KIND"), "oom_kill");
	ck_assert_str_eq(entry_get(&en, "MEMWATCH_TIMESTAMP_USEC"), "1796014798149024");
	ck_assert_str_eq(entry_get(&en, "MEMWATCH_PID"), "123");
	ck_assert_str_eq(entry_get(&en, "MEMWATCH_TID"), "124");
	ck_assert_str_eq(entry_get(&en, "MEMWATCH_COMM"), "foo");
	ck_assert_str_eq(entry_get(&en, "MEMWATCH_CGROUP"), "/a/b");
	ck_assert_str_eq(entry_get(&en, "MEMWATCH_CGROUP_ID"), "6701");
	ck_assert_str_eq(entry_get(&en, "MEMWATCH_AVAILABLE_BYTES"), "24648093696");
	ck_assert_str_eq(entry_get(&en, "MEMWATCH_AVAILABLE_SOURCE"), "procfs");
	ck_assert_str_eq(entry_get(&en, "MEMWATCH_TOTAL_VM_BYTES"), "212115456");
	ck_assert_str_eq(entry_get(&en, "MEMWATCH_SCOPE"), "memcg");
	ck_assert_str_eq(entry_get(&en, "MEMWATCH_SCOPE_SOURCE"), "oom_control");
	ck_assert_str_eq(entry_get(&en, "MEMWATCH_OOM_CGROUP"), "/a");
	ck_assert_str_eq(entry_get(&en, "MEMWATCH_OOM_CGROUP_ID"), "6700");
	ck_assert_str_eq(entry_get(&en, "MEMWATCH_OOM_CGROUP_USAGE_BYTES"), "536870912");
	ck_assert_str_eq(entry_get(&en, "MEMWATCH_OOM_CGROUP_LIMIT_BYTES"), "536870912");
	ck_assert_str_eq(entry_get(&en, "MEMWATCH_ANON_RSS_BYTES"), "67002368");
	ck_assert_str_eq(entry_get(&en, "MEMWATCH_FILE_RSS_BYTES"), "1048576");
	ck_assert_str_eq(entry_get(&en, "MEMWATCH_SHMEM_RSS_BYTES"), "0");
	ck_assert_str_eq(entry_get(&en, "MEMWATCH_OOM_SCORE_ADJ"), "-17");
	ck_assert_str_eq(entry_get(&en, "MEMWATCH_UNIT"), "y.service");
	ck_assert_str_eq(entry_get(&en, "MEMWATCH_NAMESPACE"), "shop");
	ck_assert_str_eq(entry_get(&en, "MEMWATCH_POD"), "web-0");
	ck_assert_str_eq(entry_get(&en, "MEMWATCH_CONTAINER"), "app");
	ck_assert_str_eq(entry_get(&en, "MEMWATCH_CONTAINER_ID"), "0123456789ab");
	ck_assert_str_eq(entry_get(&en, "MEMWATCH_PSI_SOME_AVG10"), "0.1234");
	ck_assert_str_eq(entry_get(&en, "MEMWATCH_PSI_FULL_AVG10"), "0.05");
	ck_assert_str_eq(entry_get(&en, "MEMWATCH_PSI_SOME_TOTAL_SEC"), "12.345678");
	ck_assert_str_eq(entry_get(&en, "MEMWATCH_PSI_FULL_TOTAL_SEC"), "0.30000000000000004");
	/* Nothing of the other kinds. */
	ck_assert_ptr_null(entry_get(&en, "MEMWATCH_KILLER"));
	ck_assert_ptr_null(entry_get(&en, "MEMWATCH_SIGNAL"));
	ck_assert_ptr_null(entry_get(&en, "MEMWATCH_ORDER"));
	ck_assert_ptr_null(entry_get(&en, "MEMWATCH_SUPPRESSED"));
	ck_assert_uint_eq(en.n, 33);

	ck_assert_int_eq(entry_parse(&en, PAGE, &back), 0);
	assert_same(&e, &back);
	ck_assert_uint_eq(back.raw.scope, OOM_SCOPE_MEMCG);
	ck_assert_mem_eq(back.raw.killer_comm, (char[EVENT_COMM_LEN]){ 0 }, EVENT_COMM_LEN);
	entry_free(&en);
}
END_TEST

START_TEST(test_userspace_kill_round_trip)
{
	struct journal_event e, back;
	struct entry en;

	userspace_kill(&e);
	format_into(&en, &e, 0);
	ck_assert_str_eq(entry_get(&en, "MESSAGE_ID"), KILL_JOURNAL_ID_USERSPACE_KILL);
	ck_assert_str_eq(entry_get(&en, "PRIORITY"), "3");
	ck_assert_str_eq(entry_get(&en, "MESSAGE"), "systemd-oomd killed pid 123 (foo) in /x.slice/y.service with SIGKILL");
	ck_assert_str_eq(entry_get(&en, "MEMWATCH_KIND"), "userspace_kill");
	ck_assert_str_eq(entry_get(&en, "MEMWATCH_KILLER"), "systemd-oomd");
	ck_assert_str_eq(entry_get(&en, "MEMWATCH_KILLER_PID"), "456");
	ck_assert_str_eq(entry_get(&en, "MEMWATCH_SIGNAL"), "SIGKILL");
	ck_assert_str_eq(entry_get(&en, "MEMWATCH_AVAILABLE_SOURCE"), "none");
	/* Unknown: left out. */
	ck_assert_ptr_null(entry_get(&en, "MEMWATCH_AVAILABLE_BYTES"));
	ck_assert_ptr_null(entry_get(&en, "MEMWATCH_PSI_SOME_AVG10"));
	ck_assert_ptr_null(entry_get(&en, "MEMWATCH_POD"));
	/* An OOM kill's diagnosis is not a user-space kill's. */
	ck_assert_ptr_null(entry_get(&en, "MEMWATCH_SCOPE"));
	ck_assert_ptr_null(entry_get(&en, "MEMWATCH_TOTAL_VM_BYTES"));
	ck_assert_int_eq(entry_parse(&en, PAGE, &back), 0);
	assert_same(&e, &back);
	ck_assert_str_eq(back.raw.killer_comm, "systemd-oomd");
	entry_free(&en);

	/* SIGTERM, and a signal without a name here. */
	e.raw.signal = 15;
	e.killer[0] = '\0';
	format_into(&en, &e, 0);
	ck_assert_str_eq(entry_get(&en, "MESSAGE"), "A user-space killer killed pid 123 (foo) in /x.slice/y.service with SIGTERM");
	ck_assert_ptr_null(entry_get(&en, "MEMWATCH_KILLER"));
	ck_assert_int_eq(entry_parse(&en, PAGE, &back), 0);
	assert_same(&e, &back);
	entry_free(&en);
	e.raw.signal = 6;
	format_into(&en, &e, 0);
	ck_assert_str_eq(entry_get(&en, "MEMWATCH_SIGNAL"), "6");
	ck_assert_int_eq(entry_parse(&en, PAGE, &back), 0);
	ck_assert_uint_eq(back.raw.signal, 6);
	entry_free(&en);
}
END_TEST

START_TEST(test_pressure_instant)
{
	struct journal_event e, back;
	struct entry en;

	journal_event_init(&e);
	e.real_usec = 1796014798148000ULL;
	e.kind = EVENT_DIRECT_RECLAIM;
	e.pid = 77;
	e.tid = 78;
	snprintf(e.comm, sizeof(e.comm), "hog");
	e.cgroup_id = 5;
	snprintf(e.cgroup, sizeof(e.cgroup), "/mwoom");
	e.avail_bytes = 1.5 * 1024 * 1024 * 1024;
	e.avail_source = "fexit";
	e.value = 2;
	format_into(&en, &e, 3);
	ck_assert_str_eq(entry_get(&en, "MESSAGE_ID"), KILL_JOURNAL_ID_PRESSURE);
	ck_assert_str_eq(entry_get(&en, "PRIORITY"), "4");
	ck_assert_str_eq(entry_get(&en, "MESSAGE"), "Direct reclaim: pid 77 (hog) in /mwoom, order 2, 1.5 GiB available "
						    "(3 more direct_reclaim instants since the last one not logged)");
	ck_assert_str_eq(entry_get(&en, "MEMWATCH_ORDER"), "2");
	ck_assert_str_eq(entry_get(&en, "MEMWATCH_SUPPRESSED"), "3");
	ck_assert_ptr_null(entry_get(&en, "MEMWATCH_TOTAL_VM_BYTES"));
	ck_assert_ptr_null(entry_get(&en, "MEMWATCH_UNIT"));
	ck_assert_int_eq(entry_parse(&en, PAGE, &back), 0);
	assert_same(&e, &back);
	entry_free(&en);

	e.kind = EVENT_ALLOC_FAILURE;
	e.avail_bytes = NAN;
	format_into(&en, &e, 0);
	ck_assert_str_eq(entry_get(&en, "MESSAGE"), "Page allocation failure: pid 77 (hog) in /mwoom, order 2");
	ck_assert_ptr_null(entry_get(&en, "MEMWATCH_SUPPRESSED"));
	/* The kill fields of a pressure instant's entry mean nothing. */
	entry_set(&en, "MEMWATCH_ANON_RSS_BYTES", "4096");
	entry_set(&en, "MEMWATCH_KILLER", "x");
	ck_assert_int_eq(entry_parse(&en, PAGE, &back), 0);
	assert_same(&e, &back);
	ck_assert_uint_eq(back.flags, 0);
	ck_assert_str_eq(back.killer, "");
	entry_free(&en);

	e.kind = EVENT_MEMCG_RECLAIM;
	format_into(&en, &e, 0);
	ck_assert_str_eq(entry_get(&en, "MEMWATCH_KIND"), "memcg_reclaim");
	ck_assert_int_eq(entry_parse(&en, PAGE, &back), 0);
	assert_same(&e, &back);
	/* The pressure id with a kill's kind is not ours. */
	entry_set(&en, "MEMWATCH_KIND", "oom_kill");
	ck_assert_int_eq(entry_parse(&en, PAGE, &back), -EINVAL);
	entry_free(&en);
}
END_TEST

/* Each KILL_HAS_* bit alone, and none: what is unknown stays unknown. */
START_TEST(test_unknown_fields_left_out)
{
	static const uint32_t bits[] = { 0, KILL_HAS_SCOPE, KILL_HAS_SCOPE | KILL_SCOPE_FROM_CONTROL, KILL_HAS_OOM_CGROUP,
					 KILL_HAS_RSS, KILL_HAS_SCORE_ADJ };
	static const char *const scope_fields[] = { "MEMWATCH_SCOPE", "MEMWATCH_SCOPE_SOURCE" };
	static const char *const cgroup_fields[] = { "MEMWATCH_OOM_CGROUP", "MEMWATCH_OOM_CGROUP_ID",
						     "MEMWATCH_OOM_CGROUP_USAGE_BYTES", "MEMWATCH_OOM_CGROUP_LIMIT_BYTES" };
	static const char *const rss_fields[] = { "MEMWATCH_ANON_RSS_BYTES", "MEMWATCH_FILE_RSS_BYTES",
						  "MEMWATCH_SHMEM_RSS_BYTES" };
	struct journal_event e, back;
	struct entry en;

	for (size_t i = 0; i < ARRAY_SIZE(bits); i++) {
		oom_kill(&e);
		e.flags = bits[i];
		e.psi_some_avg10 = e.psi_full_avg10 = e.psi_some_total_sec = e.psi_full_total_sec = NAN;
		e.names = (struct cgroup_labels){ .unit = "" };
		format_into(&en, &e, 0);
		for (size_t k = 0; k < ARRAY_SIZE(scope_fields); k++)
			ck_assert_int_eq(entry_find(&en, scope_fields[k]) >= 0, !!(bits[i] & KILL_HAS_SCOPE));
		for (size_t k = 0; k < ARRAY_SIZE(cgroup_fields); k++)
			ck_assert_int_eq(entry_find(&en, cgroup_fields[k]) >= 0, !!(bits[i] & KILL_HAS_OOM_CGROUP));
		for (size_t k = 0; k < ARRAY_SIZE(rss_fields); k++)
			ck_assert_int_eq(entry_find(&en, rss_fields[k]) >= 0, !!(bits[i] & KILL_HAS_RSS));
		ck_assert_int_eq(entry_find(&en, "MEMWATCH_OOM_SCORE_ADJ") >= 0, !!(bits[i] & KILL_HAS_SCORE_ADJ));
		ck_assert_int_lt(entry_find(&en, "MEMWATCH_PSI_SOME_AVG10"), 0);
		ck_assert_int_lt(entry_find(&en, "MEMWATCH_UNIT"), 0);
		ck_assert_int_eq(entry_parse(&en, PAGE, &back), 0);
		assert_same(&e, &back);
		entry_free(&en);
	}

	/* No scope: the message says none. */
	oom_kill(&e);
	e.flags = 0;
	e.cgroup[0] = '\0';
	e.psi_some_avg10 = NAN;
	e.names.pod[0] = '\0';
	format_into(&en, &e, 0);
	ck_assert_str_eq(entry_get(&en, "MESSAGE"), "OOM kill: pid 123 (foo)");
	ck_assert_ptr_null(entry_get(&en, "MEMWATCH_CGROUP"));
	entry_free(&en);

	/* A scope past the known ones reads as "unknown", as the API shows it. */
	oom_kill(&e);
	e.raw.scope = 77;
	format_into(&en, &e, 0);
	ck_assert_str_eq(entry_get(&en, "MEMWATCH_SCOPE"), "unknown");
	ck_assert_int_eq(entry_parse(&en, PAGE, &back), 0);
	ck_assert_uint_eq(back.raw.scope, OOM_SCOPE_UNKNOWN);
	ck_assert(back.flags & KILL_HAS_SCOPE);
	entry_free(&en);

	/* Some PSI without full (a kernel without the full line). */
	oom_kill(&e);
	e.psi_full_avg10 = e.psi_full_total_sec = NAN;
	format_into(&en, &e, 0);
	ck_assert_ptr_null(entry_get(&en, "MEMWATCH_PSI_FULL_AVG10"));
	ck_assert_int_eq(entry_parse(&en, PAGE, &back), 0);
	assert_same(&e, &back);
	entry_free(&en);

	/* A kill without its record (it could not be allocated): no details. */
	oom_kill(&e);
	e.has_kill = false;
	format_into(&en, &e, 0);
	ck_assert_ptr_null(entry_get(&en, "MEMWATCH_SCOPE"));
	ck_assert_ptr_null(entry_get(&en, "MEMWATCH_UNIT"));
	ck_assert_str_eq(entry_get(&en, "MESSAGE"), "OOM kill: pid 123 (foo) in /a/b");
	entry_free(&en);
}
END_TEST

/* Each field missing in turn: the entry still reads, that value unknown. */
START_TEST(test_missing_fields)
{
	struct journal_event e, back;
	struct entry full, en;

	oom_kill(&e);
	format_into(&full, &e, 0);
	for (size_t i = 0; i < full.n; i++) {
		const char *eq = memchr(full.item[i], '=', full.len[i]);
		char name[64];

		ck_assert_ptr_nonnull(eq);
		snprintf(name, sizeof(name), "%.*s", (int)(eq - full.item[i]), full.item[i]);
		format_into(&en, &e, 0);
		entry_drop(&en, name);
		ck_assert_msg(entry_parse(&en, PAGE, &back) == 0, "without %s", name);
		ck_assert_uint_eq(back.kind, EVENT_OOM_KILL);
		if (strcmp(name, "MEMWATCH_TIMESTAMP_USEC") == 0)
			ck_assert_uint_eq(back.real_usec, 0);
		else
			ck_assert_uint_eq(back.real_usec, e.real_usec);
		if (strcmp(name, "MEMWATCH_ANON_RSS_BYTES") == 0 || strcmp(name, "MEMWATCH_SHMEM_RSS_BYTES") == 0)
			ck_assert_uint_eq(back.flags & KILL_HAS_RSS, 0);
		if (strcmp(name, "MEMWATCH_OOM_CGROUP_LIMIT_BYTES") == 0) {
			ck_assert_uint_eq(back.flags & KILL_HAS_OOM_CGROUP, 0);
			ck_assert_str_eq(back.oom_cgroup, "");
		}
		if (strcmp(name, "MEMWATCH_OOM_CGROUP") == 0) {
			/* The counters are there: the flag too, with no path. */
			ck_assert(back.flags & KILL_HAS_OOM_CGROUP);
			ck_assert_str_eq(back.oom_cgroup, "");
		}
		if (strcmp(name, "MEMWATCH_SCOPE_SOURCE") == 0)
			ck_assert_uint_eq(back.flags & (KILL_HAS_SCOPE | KILL_SCOPE_FROM_CONTROL), 0);
		if (strcmp(name, "MEMWATCH_AVAILABLE_BYTES") == 0)
			ck_assert(isnan(back.avail_bytes));
		if (strcmp(name, "MEMWATCH_AVAILABLE_SOURCE") == 0)
			ck_assert_str_eq(back.avail_source, "none");
		if (strcmp(name, "MEMWATCH_COMM") == 0)
			ck_assert_str_eq(back.comm, "");
		if (strcmp(name, "MEMWATCH_PSI_SOME_AVG10") == 0) {
			ck_assert(isnan(back.psi_some_avg10));
			assert_same_double(back.psi_full_avg10, e.psi_full_avg10, "full");
		}
		if (strcmp(name, "MEMWATCH_TOTAL_VM_BYTES") == 0)
			ck_assert_uint_eq(back.value, 0);
		if (strcmp(name, "MEMWATCH_OOM_SCORE_ADJ") == 0)
			ck_assert_uint_eq(back.flags & KILL_HAS_SCORE_ADJ, 0);
		entry_free(&en);
	}
	entry_free(&full);

	/* Neither MESSAGE_ID nor MEMWATCH_KIND: not an event of ours. */
	format_into(&en, &e, 0);
	entry_drop(&en, "MESSAGE_ID");
	entry_drop(&en, "MEMWATCH_KIND");
	ck_assert_int_eq(entry_parse(&en, PAGE, &back), -EINVAL);
	entry_free(&en);
	ck_assert_int_eq(journal_event_parse(NULL, 0, PAGE, &back), -EINVAL);
}
END_TEST

struct bad {
	const char *field, *value;
};

START_TEST(test_malformed_values)
{
	static const struct bad bad[] = {
		{ "MEMWATCH_PID", "abc" }, { "MEMWATCH_PID", "" }, { "MEMWATCH_PID", "4294967296" },
		{ "MEMWATCH_PID", "-1" }, { "MEMWATCH_PID", " 12" }, { "MEMWATCH_PID", "12 " }, { "MEMWATCH_PID", "0x10" },
		{ "MEMWATCH_TID", "18446744073709551616" },
		{ "MEMWATCH_TIMESTAMP_USEC", "18446744073709551616" }, { "MEMWATCH_TIMESTAMP_USEC", "1.5" },
		{ "MEMWATCH_CGROUP_ID", "+5" },
		{ "MEMWATCH_AVAILABLE_BYTES", "abc" }, { "MEMWATCH_AVAILABLE_BYTES", "" },
		{ "MEMWATCH_AVAILABLE_BYTES", "nan" }, { "MEMWATCH_AVAILABLE_BYTES", "inf" },
		{ "MEMWATCH_AVAILABLE_BYTES", "1e999" }, { "MEMWATCH_AVAILABLE_BYTES", "-1" },
		{ "MEMWATCH_AVAILABLE_BYTES", "0x10" }, { "MEMWATCH_AVAILABLE_BYTES", " 1" },
		{ "MEMWATCH_AVAILABLE_BYTES", "1." }, { "MEMWATCH_AVAILABLE_BYTES", ".5" },
		{ "MEMWATCH_AVAILABLE_BYTES", "1e" }, { "MEMWATCH_AVAILABLE_BYTES", "1,5" },
		{ "MEMWATCH_AVAILABLE_SOURCE", "magic" }, { "MEMWATCH_AVAILABLE_SOURCE", "" },
		{ "MEMWATCH_TOTAL_VM_BYTES", "-4096" },
		{ "MEMWATCH_SCOPE", "MEMCG" }, { "MEMWATCH_SCOPE", "" }, { "MEMWATCH_SCOPE_SOURCE", "guess" },
		{ "MEMWATCH_OOM_CGROUP_USAGE_BYTES", "abc" }, { "MEMWATCH_OOM_CGROUP_LIMIT_BYTES", "99999999999999999999" },
		{ "MEMWATCH_ANON_RSS_BYTES", "" }, { "MEMWATCH_FILE_RSS_BYTES", "1 2" }, { "MEMWATCH_SHMEM_RSS_BYTES", "x" },
		{ "MEMWATCH_OOM_SCORE_ADJ", "2147483648" }, { "MEMWATCH_OOM_SCORE_ADJ", "-2147483649" },
		{ "MEMWATCH_OOM_SCORE_ADJ", "-" }, { "MEMWATCH_OOM_SCORE_ADJ", "" },
		{ "MEMWATCH_PSI_SOME_AVG10", "12%" }, { "MEMWATCH_PSI_FULL_AVG10", "-0.5" },
		{ "MEMWATCH_PSI_SOME_TOTAL_SEC", "1e400" }, { "MEMWATCH_PSI_FULL_TOTAL_SEC", "" },
		{ "MEMWATCH_KIND", "banana" },
		{ "MEMWATCH_OOM_CGROUP_ID", "x" },
	};
	struct journal_event e, back;
	struct entry en;

	oom_kill(&e);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		const char *f = bad[i].field;

		format_into(&en, &e, 0);
		entry_set(&en, f, bad[i].value);
		ck_assert_msg(entry_parse(&en, PAGE, &back) == 0, "%s=%s", f, bad[i].value);
		ck_assert_uint_eq(back.kind, EVENT_OOM_KILL); /* from MESSAGE_ID */
		if (strcmp(f, "MEMWATCH_PID") == 0)
			ck_assert_uint_eq(back.pid, 0);
		else
			ck_assert_uint_eq(back.pid, 123);
		if (strcmp(f, "MEMWATCH_TID") == 0)
			ck_assert_uint_eq(back.tid, 0);
		if (strcmp(f, "MEMWATCH_TIMESTAMP_USEC") == 0)
			ck_assert_uint_eq(back.real_usec, 0);
		if (strcmp(f, "MEMWATCH_CGROUP_ID") == 0)
			ck_assert_uint_eq(back.cgroup_id, 0);
		if (strcmp(f, "MEMWATCH_AVAILABLE_BYTES") == 0)
			ck_assert_msg(isnan(back.avail_bytes), "%s=%s", f, bad[i].value);
		else
			ck_assert(back.avail_bytes == e.avail_bytes);
		if (strcmp(f, "MEMWATCH_AVAILABLE_SOURCE") == 0)
			ck_assert_str_eq(back.avail_source, "none");
		if (strcmp(f, "MEMWATCH_TOTAL_VM_BYTES") == 0)
			ck_assert_uint_eq(back.value, 0);
		if (strncmp(f, "MEMWATCH_SCOPE", strlen("MEMWATCH_SCOPE")) == 0)
			ck_assert_uint_eq(back.flags & (KILL_HAS_SCOPE | KILL_SCOPE_FROM_CONTROL), 0);
		else
			ck_assert(back.flags & KILL_HAS_SCOPE);
		if (strstr(f, "USAGE") || strstr(f, "LIMIT"))
			ck_assert_uint_eq(back.flags & KILL_HAS_OOM_CGROUP, 0);
		if (strcmp(f, "MEMWATCH_OOM_CGROUP_ID") == 0) {
			ck_assert_uint_eq(back.raw.oom_cgroup_id, 0);
			ck_assert(back.flags & KILL_HAS_OOM_CGROUP);
		}
		if (strstr(f, "RSS"))
			ck_assert_uint_eq(back.flags & KILL_HAS_RSS, 0);
		else
			ck_assert(back.flags & KILL_HAS_RSS);
		if (strcmp(f, "MEMWATCH_OOM_SCORE_ADJ") == 0)
			ck_assert_uint_eq(back.flags & KILL_HAS_SCORE_ADJ, 0);
		if (strcmp(f, "MEMWATCH_PSI_SOME_AVG10") == 0)
			ck_assert(isnan(back.psi_some_avg10));
		if (strcmp(f, "MEMWATCH_PSI_FULL_AVG10") == 0)
			ck_assert(isnan(back.psi_full_avg10));
		if (strcmp(f, "MEMWATCH_PSI_SOME_TOTAL_SEC") == 0)
			ck_assert(isnan(back.psi_some_total_sec));
		if (strcmp(f, "MEMWATCH_PSI_FULL_TOTAL_SEC") == 0)
			ck_assert(isnan(back.psi_full_total_sec));
		entry_free(&en);
	}

	/* The extremes that do fit are taken. */
	format_into(&en, &e, 0);
	entry_set(&en, "MEMWATCH_OOM_SCORE_ADJ", "-2147483648");
	entry_set(&en, "MEMWATCH_PID", "4294967295");
	entry_set(&en, "MEMWATCH_CGROUP_ID", "18446744073709551615");
	entry_set(&en, "MEMWATCH_AVAILABLE_BYTES", "1.5e3");
	ck_assert_int_eq(entry_parse(&en, PAGE, &back), 0);
	ck_assert_int_eq(back.raw.oom_score_adj, INT32_MIN);
	ck_assert_uint_eq(back.pid, UINT32_MAX);
	ck_assert_uint_eq(back.cgroup_id, UINT64_MAX);
	ck_assert(back.avail_bytes == 1500);
	entry_free(&en);
}
END_TEST

START_TEST(test_kind_and_ids)
{
	struct journal_event e, back;
	struct entry en;

	oom_kill(&e);
	format_into(&en, &e, 0);
	/* The kill's own id wins over MEMWATCH_KIND. */
	entry_set(&en, "MEMWATCH_KIND", "direct_reclaim");
	ck_assert_int_eq(entry_parse(&en, PAGE, &back), 0);
	ck_assert_uint_eq(back.kind, EVENT_OOM_KILL);
	/* Someone else's MESSAGE_ID: not ours, whatever the fields say. */
	entry_set(&en, "MESSAGE_ID", "fc2e22bc6ee647b6b90729ab34a250b1");
	entry_set(&en, "MEMWATCH_KIND", "oom_kill");
	ck_assert_int_eq(entry_parse(&en, PAGE, &back), -EINVAL);
	entry_set(&en, "MESSAGE_ID", "");
	ck_assert_int_eq(entry_parse(&en, PAGE, &back), -EINVAL);
	entry_set(&en, "MESSAGE_ID", KILL_JOURNAL_ID_OOM_KILL "0");
	ck_assert_int_eq(entry_parse(&en, PAGE, &back), -EINVAL);
	/* No MESSAGE_ID: MEMWATCH_KIND says. */
	entry_drop(&en, "MESSAGE_ID");
	ck_assert_int_eq(entry_parse(&en, PAGE, &back), 0);
	ck_assert_uint_eq(back.kind, EVENT_OOM_KILL);
	entry_set(&en, "MEMWATCH_KIND", "userspace_kill");
	ck_assert_int_eq(entry_parse(&en, PAGE, &back), 0);
	ck_assert_uint_eq(back.kind, EVENT_USERSPACE_KILL);
	entry_set(&en, "MEMWATCH_KIND", "oom_kill ");
	ck_assert_int_eq(entry_parse(&en, PAGE, &back), -EINVAL);
	entry_free(&en);

	/* Items without '=', the journal's own fields and unknown ones are
	 * ignored; of a field given twice the last counts. */
	format_into(&en, &e, 0);
	entry_add_raw(&en, "JUNK", 4);
	entry_add_raw(&en, "", 0);
	entry_add_raw(&en, "=", 1);
	entry_add_raw(&en, "_PID=1", 6);
	entry_add_raw(&en, "MEMWATCH_FUTURE=1", 17);
	entry_add_raw(&en, "MEMWATCH_PID=999", 16);
	ck_assert_int_eq(entry_parse(&en, PAGE, &back), 0);
	ck_assert_uint_eq(back.pid, 999);
	back.pid = e.pid;
	assert_same(&e, &back);
	entry_free(&en);

	ck_assert_str_eq(journal_event_kind_name(EVENT_KINDS), "unknown");
	ck_assert_str_eq(journal_oom_scope_name(OOM_SCOPES), "unknown");
	ck_assert_str_eq(journal_event_message_id(EVENT_MEMCG_RECLAIM), KILL_JOURNAL_ID_PRESSURE);
}
END_TEST

/* A comm or path is whatever the task made it: quotes, backslashes,
 * newlines, bytes that are not UTF-8. The field keeps the bytes, the
 * message escapes them onto one line. */
START_TEST(test_hostile_strings)
{
	static const char comm[] = "a\"b\\c\nd\xff\xc3(e\x01";
	static const char cgroup[] = "/x\ny/\xe2\x82\xac\xed\xa0\x80";
	struct journal_event e, back;
	struct entry en;
	const char *msg;

	userspace_kill(&e);
	ck_assert_uint_lt(strlen(comm), sizeof(e.comm));
	memcpy(e.comm, comm, sizeof(comm));
	snprintf(e.cgroup, sizeof(e.cgroup), "%s", cgroup);
	snprintf(e.killer, sizeof(e.killer), "kill\ner");
	format_into(&en, &e, 0);
	msg = entry_get(&en, "MESSAGE");
	ck_assert_str_eq(msg, "kill\\ner killed pid 123 (a\"b\\\\c\\nd\\xff\\xc3(e\\x01) in /x\\ny/\xe2\x82\xac"
			      "\\xed\\xa0\\x80 with SIGKILL");
	ck_assert_ptr_null(strchr(msg, '\n'));
	ck_assert_str_eq(entry_get(&en, "MEMWATCH_COMM"), comm);
	ck_assert_str_eq(entry_get(&en, "MEMWATCH_CGROUP"), cgroup);
	ck_assert_int_eq(entry_parse(&en, PAGE, &back), 0);
	assert_same(&e, &back);

	/* A NUL inside, or more than fits: the string is unknown. */
	entry_set_bytes(&en, "MEMWATCH_COMM", "ab\0cd", 5);
	entry_set(&en, "MEMWATCH_KILLER", "0123456789abcdefX"); /* 17 bytes: longer than a comm */
	entry_set(&en, "MEMWATCH_UNIT", "");
	ck_assert_int_eq(entry_parse(&en, PAGE, &back), 0);
	ck_assert_str_eq(back.comm, "");
	ck_assert_str_eq(back.killer, "");
	ck_assert_str_eq(back.names.unit, "");
	ck_assert_str_eq(back.cgroup, cgroup);
	/* Exactly a comm's 16 bytes fit. */
	entry_set(&en, "MEMWATCH_COMM", "0123456789abcdef");
	ck_assert_int_eq(entry_parse(&en, PAGE, &back), 0);
	ck_assert_str_eq(back.comm, "0123456789abcdef");
	entry_free(&en);
}
END_TEST

/* Every string full of bytes that the message escapes fourfold: it fits. */
START_TEST(test_largest_entry_fits)
{
	static struct journal_fields f;
	struct journal_event e, back;
	struct entry en;

	oom_kill(&e);
	memset(e.comm, 0xff, sizeof(e.comm) - 1);
	memset(e.cgroup, 0xff, sizeof(e.cgroup) - 1);
	memset(e.oom_cgroup, 0x01, sizeof(e.oom_cgroup) - 1);
	memset(e.killer, 0xfe, sizeof(e.killer) - 1);
	memset(e.names.unit, 0xfd, sizeof(e.names.unit) - 1);
	memset(e.names.namespace_, 0xfc, sizeof(e.names.namespace_) - 1);
	memset(e.names.pod, 0xfb, sizeof(e.names.pod) - 1);
	memset(e.names.container, 0xfa, sizeof(e.names.container) - 1);
	memset(e.names.container_id, 0xf9, sizeof(e.names.container_id) - 1);
	e.pid = e.tid = UINT32_MAX;
	e.cgroup_id = e.real_usec = UINT64_MAX;
	e.avail_bytes = -1.2345678901234567e-300;
	e.raw.oom_score_adj = INT32_MIN;
	ck_assert_int_eq(journal_event_format(&e, PAGE, UINT64_MAX, &f), 0);
	ck_assert(!f.overflow);
	ck_assert_uint_le(f.used, sizeof(f.buf));
	e.kind = EVENT_USERSPACE_KILL;
	e.raw.signal = UINT32_MAX;
	ck_assert_int_eq(journal_event_format(&e, PAGE, UINT64_MAX, &f), 0);
	e.kind = EVENT_ALLOC_FAILURE;
	ck_assert_int_eq(journal_event_format(&e, PAGE, UINT64_MAX, &f), 0);

	/* Strings that fill their buffers round-trip too. */
	oom_kill(&e);
	memset(e.cgroup, 'c', sizeof(e.cgroup) - 1);
	memset(e.oom_cgroup, 'o', sizeof(e.oom_cgroup) - 1);
	memset(e.comm, 'x', sizeof(e.comm) - 1);
	memset(e.names.pod, 'p', sizeof(e.names.pod) - 1);
	format_into(&en, &e, 0);
	ck_assert_int_eq(entry_parse(&en, PAGE, &back), 0);
	assert_same(&e, &back);
	entry_free(&en);
}
END_TEST

/* Byte counts are pages times the page size; read where pages are larger
 * they become the nearest number of pages. */
START_TEST(test_page_size)
{
	struct journal_event e, back;
	struct entry en;

	oom_kill(&e);
	e.raw.rss_file_pages = 3;
	format_into(&en, &e, 0);
	ck_assert_str_eq(entry_get(&en, "MEMWATCH_FILE_RSS_BYTES"), "12288");
	ck_assert_int_eq(entry_parse(&en, 16384, &back), 0);
	ck_assert_uint_eq(back.raw.rss_file_pages, 1);        /* 0.75 */
	ck_assert_uint_eq(back.raw.oom_limit_pages, 32768);   /* 512 MiB */
	ck_assert_uint_eq(back.value, (51786 * 4096 + 8192) / 16384);
	ck_assert_int_eq(entry_parse(&en, 4096, &back), 0);
	ck_assert_uint_eq(back.raw.rss_file_pages, 3);
	entry_free(&en);
}
END_TEST

static Suite *kill_journal_fields_suite(void)
{
	Suite *s = suite_create("kill_journal_fields");
	TCase *tc = tcase_create("fields");

	tcase_add_test(tc, test_oom_kill_round_trip);
	tcase_add_test(tc, test_userspace_kill_round_trip);
	tcase_add_test(tc, test_pressure_instant);
	tcase_add_test(tc, test_unknown_fields_left_out);
	tcase_add_test(tc, test_missing_fields);
	tcase_add_test(tc, test_malformed_values);
	tcase_add_test(tc, test_kind_and_ids);
	tcase_add_test(tc, test_hostile_strings);
	tcase_add_test(tc, test_largest_entry_fits);
	tcase_add_test(tc, test_page_size);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(kill_journal_fields_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
