/* SPDX-License-Identifier: GPL-2.0 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "scrape_rhythm.h"
#include "suite_main.h"

#define MS UINT64_C(1000)
#define SEC UINT64_C(1000000)

static struct scrape_rhythm scraped_at(const uint64_t *at, unsigned n)
{
	struct scrape_rhythm r = { 0 };

	for (unsigned i = 0; i < n; i++)
		scrape_rhythm_note(&r, at[i]);
	return r;
}

/* Prometheus every 15 s, a few ms of jitter: the next one is 15 s after the
 * last, and the one after a given instant is on the same grid. */
START_TEST(test_steady_scraper)
{
	const uint64_t at[] = { 100 * SEC, 115 * SEC + 3 * MS, 130 * SEC + 1 * MS, 145 * SEC };
	struct scrape_rhythm r = scraped_at(at, 4);

	ck_assert_uint_eq(scrape_rhythm_next_after(&r, 146 * SEC, 146 * SEC), 160 * SEC - 1 * MS);
	ck_assert_uint_eq(scrape_rhythm_next_after(&r, 146 * SEC, 145 * SEC), 160 * SEC - 1 * MS);
	/* The one due just after: strictly after `after`. */
	ck_assert_uint_eq(scrape_rhythm_next_after(&r, 146 * SEC, 160 * SEC - 1 * MS), 175 * SEC - 2 * MS);
	ck_assert_uint_eq(scrape_rhythm_next_after(&r, 150 * SEC, 161 * SEC), 175 * SEC - 2 * MS);
}
END_TEST

/* Two scrapes are not yet a rhythm; three are. */
START_TEST(test_needs_three)
{
	const uint64_t at[] = { 10 * SEC, 20 * SEC, 30 * SEC };
	struct scrape_rhythm r = scraped_at(at, 2);

	ck_assert_uint_eq(scrape_rhythm_next_after(&r, 21 * SEC, 21 * SEC), 0);
	r = scraped_at(at, 3);
	ck_assert_uint_eq(scrape_rhythm_next_after(&r, 31 * SEC, 31 * SEC), 40 * SEC);
}
END_TEST

/* A scrape missed (now 1.5 periods past the last): the scraper is gone or
 * late, so nothing is expected. */
START_TEST(test_missed_scrape)
{
	const uint64_t at[] = { 10 * SEC, 20 * SEC, 30 * SEC };
	struct scrape_rhythm r = scraped_at(at, 3);

	ck_assert_uint_eq(scrape_rhythm_next_after(&r, 44 * SEC, 44 * SEC), 50 * SEC);
	ck_assert_uint_eq(scrape_rhythm_next_after(&r, 45 * SEC, 45 * SEC), 0);
	ck_assert_uint_eq(scrape_rhythm_next_after(&r, 90 * SEC, 90 * SEC), 0);
}
END_TEST

/* Two Prometheus servers at different phases, or a person's curl between
 * scrapes: the intervals disagree by more than a tenth, no rhythm. */
START_TEST(test_irregular)
{
	const uint64_t pair[] = { 0, 4 * SEC, 15 * SEC, 19 * SEC };
	const uint64_t curl[] = { 0, 15 * SEC, 22 * SEC };
	const uint64_t drift[] = { 0, 10 * SEC, 22 * SEC };
	struct scrape_rhythm r = scraped_at(pair, 4);

	ck_assert_uint_eq(scrape_rhythm_next_after(&r, 20 * SEC, 20 * SEC), 0);
	r = scraped_at(curl, 3);
	ck_assert_uint_eq(scrape_rhythm_next_after(&r, 23 * SEC, 23 * SEC), 0);
	r = scraped_at(drift, 3);
	ck_assert_uint_eq(scrape_rhythm_next_after(&r, 22 * SEC, 22 * SEC), 0);
	/* Within a tenth: still a rhythm, on the last interval. */
	const uint64_t near[] = { 0, 10 * SEC, 20 * SEC + 900 * MS };
	r = scraped_at(near, 3);
	ck_assert_uint_eq(scrape_rhythm_next_after(&r, 21 * SEC, 21 * SEC), 31 * SEC + 800 * MS);
}
END_TEST

/* Scrapes noted out of order, or at one instant: no period to go by. */
START_TEST(test_out_of_order)
{
	const uint64_t back[] = { 10 * SEC, 30 * SEC, 20 * SEC };
	const uint64_t same[] = { 10 * SEC, 10 * SEC, 10 * SEC };
	struct scrape_rhythm r = scraped_at(back, 3);

	ck_assert_uint_eq(scrape_rhythm_next_after(&r, 31 * SEC, 31 * SEC), 0);
	r = scraped_at(same, 3);
	ck_assert_uint_eq(scrape_rhythm_next_after(&r, 10 * SEC, 10 * SEC), 0);
	/* now before the last scrape (a stale now): nothing. */
	r = scraped_at((const uint64_t[]){ 10 * SEC, 20 * SEC, 30 * SEC }, 3);
	ck_assert_uint_eq(scrape_rhythm_next_after(&r, 29 * SEC, 29 * SEC), 0);
}
END_TEST

/* A poller every 20 ms (a test harness, a dashboard): the next one is due
 * within a window's length, which lets no window at rest go on further. */
START_TEST(test_fast_poller)
{
	struct scrape_rhythm r = { 0 };

	for (unsigned i = 0; i < 50; i++)
		scrape_rhythm_note(&r, 5 * SEC + i * 20 * MS);
	ck_assert_uint_eq(scrape_rhythm_next_after(&r, 5 * SEC + 985 * MS, 7 * SEC), 7 * SEC + 20 * MS);
}
END_TEST

static Suite *scrape_rhythm_suite(void)
{
	Suite *s = suite_create("scrape_rhythm");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_steady_scraper);
	tcase_add_test(tc, test_needs_three);
	tcase_add_test(tc, test_missed_scrape);
	tcase_add_test(tc, test_irregular);
	tcase_add_test(tc, test_out_of_order);
	tcase_add_test(tc, test_fast_poller);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return suite_main_run(scrape_rhythm_suite());
}
