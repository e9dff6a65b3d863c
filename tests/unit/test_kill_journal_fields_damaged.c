/* SPDX-License-Identifier: GPL-2.0 */
/* lib/kill_journal_fields.c: reading entries with fields unknown, missing or
 * malformed: what is unknown stays unknown, what is malformed is refused. */
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

static Suite *kill_journal_fields_damaged_suite(void)
{
	Suite *s = suite_create("kill_journal_fields_damaged");
	TCase *tc = tcase_create("fields");

	tcase_add_test(tc, test_unknown_fields_left_out);
	tcase_add_test(tc, test_missing_fields);
	tcase_add_test(tc, test_malformed_values);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return suite_main_run(kill_journal_fields_damaged_suite());
}
