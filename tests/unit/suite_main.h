/* SPDX-License-Identifier: GPL-2.0 */
/* The main() of a unit test executable split by concern from a larger one:
 * runs its one suite, exits 0 only when every test in it passed. */
#ifndef MEMWATCHD_TESTS_UNIT_SUITE_MAIN_H
#define MEMWATCHD_TESTS_UNIT_SUITE_MAIN_H

#include <check.h>
#include <stdlib.h>

static inline int suite_main_run(Suite *suite)
{
	SRunner *sr = srunner_create(suite);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif
