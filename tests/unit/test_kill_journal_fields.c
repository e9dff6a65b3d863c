/* SPDX-License-Identifier: GPL-2.0 */
/* lib/kill_journal_fields.c: events as journal fields and back (round trips,
 * kinds and ids, hostile strings, the largest entry, page sizes). Entries
 * missing, adding or garbling fields: test_kill_journal_fields_damaged.c. */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"
#include "kill_journal_fields.h"

#include "kill_journal_fixture.h"
#include "suite_main.h"

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
	ck_assert_str_eq(entry_get(&en, "MEMWATCH_CGROUP_SOURCE"), "kill");
	ck_assert_str_eq(entry_get(&en, "MEMWATCH_PSI_SOURCE"), "kill");
	/* Nothing of the other kinds. */
	ck_assert_ptr_null(entry_get(&en, "MEMWATCH_KILLER"));
	ck_assert_ptr_null(entry_get(&en, "MEMWATCH_SIGNAL"));
	ck_assert_ptr_null(entry_get(&en, "MEMWATCH_ORDER"));
	ck_assert_ptr_null(entry_get(&en, "MEMWATCH_SUPPRESSED"));
	ck_assert_uint_eq(en.n, 35);

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
	tcase_add_test(tc, test_kind_and_ids);
	tcase_add_test(tc, test_hostile_strings);
	tcase_add_test(tc, test_largest_entry_fits);
	tcase_add_test(tc, test_page_size);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return suite_main_run(kill_journal_fields_suite());
}
