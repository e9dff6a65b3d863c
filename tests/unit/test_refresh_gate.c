/* SPDX-License-Identifier: GPL-2.0 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "refresh_gate.h"

#define SEC UINT64_C(1000000)

/* Nothing moves: a read on the first window, then every interval-th. */
START_TEST(test_interval)
{
	struct refresh_signal sig[1] = { { .value = 100, .threshold = 1, .present = true } };
	struct refresh_gate g;
	unsigned reads = 0;

	refresh_gate_reset(&g);
	for (unsigned w = 0; w < 30; w++) {
		if (refresh_gate_due(&g, 10, 1, sig, 1)) {
			ck_assert_msg(w % 10 == 0, "read in window %u", w);
			refresh_gate_read(&g, sig, 1, w * SEC);
			reads++;
		} else {
			refresh_gate_reuse(&g, 1);
		}
	}
	ck_assert_uint_eq(reads, 3);
	ck_assert_uint_eq(g.reads_total, 3);
	/* The last read was in window 20. */
	ck_assert_double_eq_tol(refresh_gate_age_seconds(&g, 29 * SEC), 9.0, 1e-9);
}
END_TEST

/* Windows that went on count as the lengths they span: with an interval of
 * 10, a read, a 5-length window, then a window of 4 reuses (9 < 10) and the
 * next 1-length window reads; a 12-length window reads at once. */
START_TEST(test_interval_in_lengths)
{
	struct refresh_signal sig[1] = { { .value = 100, .threshold = 1, .present = true } };
	struct refresh_gate g;

	refresh_gate_reset(&g);
	ck_assert(refresh_gate_due(&g, 10, 1, sig, 1));
	refresh_gate_read(&g, sig, 1, 0);
	ck_assert(!refresh_gate_due(&g, 10, 5, sig, 1));
	refresh_gate_reuse(&g, 5);
	ck_assert(!refresh_gate_due(&g, 10, 4, sig, 1));
	refresh_gate_reuse(&g, 4);
	ck_assert(refresh_gate_due(&g, 10, 1, sig, 1));
	refresh_gate_read(&g, sig, 1, 10 * SEC);
	ck_assert(refresh_gate_due(&g, 10, 12, sig, 1));
	/* 0 (no count given) is one length. */
	ck_assert(!refresh_gate_due(&g, 10, 0, sig, 1));
}
END_TEST

/* A signal that grows by its threshold calls for a read; less does not, and
 * the growth counts from the last read, not from the last window. */
START_TEST(test_threshold)
{
	struct refresh_signal sig[2] = { { .value = 1000, .threshold = 500, .present = true },
					 { .value = 7, .threshold = 1, .present = true } };
	struct refresh_gate g;

	refresh_gate_reset(&g);
	ck_assert(refresh_gate_due(&g, 100, 1, sig, 2));
	refresh_gate_read(&g, sig, 2, 0);
	sig[0].value = 1300;
	ck_assert(!refresh_gate_due(&g, 100, 1, sig, 2));
	refresh_gate_reuse(&g, 1);
	sig[0].value = 1499;
	ck_assert(!refresh_gate_due(&g, 100, 1, sig, 2));
	refresh_gate_reuse(&g, 1);
	sig[0].value = 1500;
	ck_assert(refresh_gate_due(&g, 100, 1, sig, 2));
	refresh_gate_read(&g, sig, 2, SEC);
	ck_assert(!refresh_gate_due(&g, 100, 1, sig, 2));
	sig[1].value = 8;
	ck_assert(refresh_gate_due(&g, 100, 1, sig, 2));
}
END_TEST

/* A counter that went back was reset: read. A signal that appears or goes
 * away changes what the gate compares: read. Interval 1 reads every window. */
START_TEST(test_reset_and_presence)
{
	struct refresh_signal sig[1] = { { .value = 50, .threshold = 10, .present = true } };
	struct refresh_gate g;

	refresh_gate_reset(&g);
	refresh_gate_read(&g, sig, 1, 0);
	sig[0].value = 49;
	ck_assert(refresh_gate_due(&g, 100, 1, sig, 1));
	sig[0].value = 50;
	ck_assert(!refresh_gate_due(&g, 100, 1, sig, 1));
	sig[0].present = false;
	ck_assert(refresh_gate_due(&g, 100, 1, sig, 1));
	refresh_gate_read(&g, sig, 1, 0);
	sig[0].value = 1000000; /* not present: its value is not looked at */
	ck_assert(!refresh_gate_due(&g, 100, 1, sig, 1));
	ck_assert(refresh_gate_due(&g, 1, 1, sig, 1));
	ck_assert(refresh_gate_due(&g, 100, 1, sig, 0));
	refresh_gate_reset(&g);
	ck_assert(refresh_gate_due(&g, 100, 1, sig, 1));
	ck_assert_double_eq(refresh_gate_age_seconds(&g, 5 * SEC), 0);
}
END_TEST

/* Expired (the last collect before a restart): due once, whatever the
 * interval; the count of reads and the age go on. */
START_TEST(test_expire)
{
	struct refresh_signal sig[1] = { { .value = 50, .threshold = 10, .present = true } };
	struct refresh_gate g;

	refresh_gate_reset(&g);
	refresh_gate_read(&g, sig, 1, SEC);
	ck_assert(!refresh_gate_due(&g, 100, 1, sig, 1));
	refresh_gate_expire(&g);
	ck_assert(refresh_gate_due(&g, 100, 1, sig, 1));
	ck_assert_uint_eq(g.reads_total, 1);
	ck_assert_double_eq_tol(refresh_gate_age_seconds(&g, 3 * SEC), 2.0, 1e-9);
	refresh_gate_read(&g, sig, 1, 3 * SEC);
	ck_assert_uint_eq(g.reads_total, 2);
	ck_assert(!refresh_gate_due(&g, 100, 1, sig, 1));
}
END_TEST

static Suite *refresh_gate_suite(void)
{
	Suite *s = suite_create("refresh_gate");
	TCase *tc = tcase_create("refresh_gate");

	tcase_add_test(tc, test_interval);
	tcase_add_test(tc, test_interval_in_lengths);
	tcase_add_test(tc, test_threshold);
	tcase_add_test(tc, test_reset_and_presence);
	tcase_add_test(tc, test_expire);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(refresh_gate_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
