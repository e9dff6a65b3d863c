/* SPDX-License-Identifier: GPL-2.0 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "procstat.h"
#include "fixture.h"

static char *read_fixture(const char *name, size_t *ret_len)
{
	return fixture_read("procstat", name, ret_len);
}

static int parse_fixture(const char *name, struct procstat *ps)
{
	size_t len;
	char *buf = read_fixture(name, &len);
	int r;

	memset(ps, 0xaa, sizeof(*ps));
	r = procstat_parse(buf, len, ps);
	free(buf);
	return r;
}

FIXTURE_PARSE_MEM(parse_mem, procstat_parse, struct procstat)

#define parse_str(s, ps) parse_mem((s), strlen(s), (ps))

struct expect {
	int pid;
	const char *comm;
	char state;
	uint64_t minflt, cminflt, majflt, cmajflt, utime, stime, starttime, rss_pages;
};

static void assert_procstat(const struct procstat *ps, const struct expect *e)
{
	ck_assert_int_eq(ps->pid, e->pid);
	/* comm must be NUL-terminated within the array */
	ck_assert_ptr_nonnull(memchr(ps->comm, '\0', sizeof(ps->comm)));
	ck_assert_str_eq(ps->comm, e->comm);
	ck_assert_int_eq(ps->state, e->state);
	ck_assert_uint_eq(ps->minflt, e->minflt);
	ck_assert_uint_eq(ps->cminflt, e->cminflt);
	ck_assert_uint_eq(ps->majflt, e->majflt);
	ck_assert_uint_eq(ps->cmajflt, e->cmajflt);
	ck_assert_uint_eq(ps->utime, e->utime);
	ck_assert_uint_eq(ps->stime, e->stime);
	ck_assert_uint_eq(ps->starttime, e->starttime);
	ck_assert_uint_eq(ps->rss_pages, e->rss_pages);
}

/* Fixtures named real-6.18-* were recorded on this machine (Linux 6.18,
 * x86_64); the odd comms were set with prctl(PR_SET_NAME). */

/* One fixture, one expected line each. */
static const struct {
	const char *fixture;
	struct expect e;
} real_fixtures[] = {
	{ "real-6.18-self.txt", { 18367, "cat", 'R', 122, 0, 0, 0, 0, 0, 175637, 394 } },
	/* priority 10 and nice -10 (fields 18, 19) are negative-capable and skipped */
	{ "real-6.18-init.txt", { 1, "process_api", 'S', 26319, 10855988, 0, 1255, 242, 511, 20, 2756 } },
	{ "real-6.18-kthreadd.txt", { 2, "kthreadd", 'S', 0, 0, 0, 0, 0, 0, 20, 0 } },
	/* 6.x prints kworker names longer than TASK_COMM_LEN */
	{ "real-6.18-kworker-long.txt",
	  { 11329, "kworker/1:0-cgroup_pidlist_destroy", 'I', 0, 0, 0, 0, 0, 0, 108996, 0 } },
	{ "real-6.18-zombie.txt", { 18507, "python3", 'Z', 228, 0, 0, 0, 0, 0, 176403, 0 } },
	{ "real-6.18-comm-spaces.txt", { 18503, "my prog name", 'S', 2331, 0, 0, 0, 2, 1, 176383, 3736 } },
	{ "real-6.18-comm-newline.txt", { 18505, "two\nlines) S", 'S', 2331, 0, 0, 0, 2, 1, 176393, 3741 } },
	{ "real-6.18-comm-empty.txt", { 18506, "", 'S', 2330, 0, 0, 0, 3, 1, 176398, 3741 } },
};

/* loop test over real_fixtures[] */
START_TEST(test_real_fixture)
{
	struct procstat ps;

	ck_assert_msg(parse_fixture(real_fixtures[_i].fixture, &ps) == 0, "parsing %s",
		      real_fixtures[_i].fixture);
	assert_procstat(&ps, &real_fixtures[_i].e);
}
END_TEST

/* comm ")) (x) R 1 2 (" looks like the end of comm and a state to a
 * parser that stops at the first ')'. */
START_TEST(test_comm_parens)
{
	static const struct expect e = { 18504, ")) (x) R 1 2 (", 'S', 2329, 0, 0, 0, 1, 2, 176388, 3738 };
	struct procstat ps;

	ck_assert_int_eq(parse_fixture("real-6.18-comm-parens.txt", &ps), 0);
	assert_procstat(&ps, &e);

	ck_assert_int_eq(parse_str("7 ()) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21\n", &ps),
			 0);
	ck_assert_str_eq(ps.comm, ")");
	ck_assert_int_eq(ps.state, 'S');
	ck_assert_uint_eq(ps.minflt, 7);
	ck_assert_uint_eq(ps.rss_pages, 21);

	ck_assert_int_eq(parse_str("7 (() S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21\n", &ps),
			 0);
	ck_assert_str_eq(ps.comm, "(");
}
END_TEST

START_TEST(test_comm_truncated)
{
	static const char head[] = "99 (";
	static const char tail[] = ") R 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21\n";
	char buf[256], comm[100];
	struct procstat ps;

	/* 63 bytes fit exactly, 64 and 99 are cut to 63 */
	for (size_t n = 62; n <= 99; n++) {
		memset(comm, 'a', n);
		comm[n - 1] = 'z';
		comm[n] = '\0';
		snprintf(buf, sizeof(buf), "%s%s%s", head, comm, tail);
		memset(&ps, 0xaa, sizeof(ps));
		ck_assert_int_eq(parse_str(buf, &ps), 0);
		ck_assert_uint_eq(strlen(ps.comm), n < 63 ? n : 63);
		ck_assert_int_eq(memcmp(ps.comm, comm, n < 63 ? n : 63), 0);
		ck_assert_int_eq(ps.state, 'R');
		ck_assert_uint_eq(ps.rss_pages, 21);
	}
}
END_TEST

/* comm is copied as is, NUL and high bytes included */
START_TEST(test_comm_binary)
{
	static const char s[] = "5 (a\0b\xff\t) D 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21\n";
	struct procstat ps;

	ck_assert_int_eq(parse_mem(s, sizeof(s) - 1, &ps), 0);
	ck_assert_int_eq(memcmp(ps.comm, "a\0b\xff\t", 6), 0);
	ck_assert_int_eq(ps.state, 'D');
	ck_assert_int_eq(ps.pid, 5);
}
END_TEST

/* 2.6.32 has 44 fields, 6.x 52: everything past 24 is ignored. */
START_TEST(test_old_kernel)
{
	static const struct expect e = { 2211, "sshd", 'S', 1205, 12345, 3, 17, 12, 7, 4512, 307 };
	struct procstat ps;

	ck_assert_int_eq(parse_fixture("linux-2.6.32-rhel6.txt", &ps), 0);
	assert_procstat(&ps, &e);
}
END_TEST

START_TEST(test_crlf)
{
	static const struct expect e = { 18367, "cat", 'R', 122, 0, 0, 0, 0, 0, 175637, 394 };
	struct procstat ps;

	ck_assert_int_eq(parse_fixture("crlf.txt", &ps), 0);
	assert_procstat(&ps, &e);

	/* CRLF right after field 24 */
	ck_assert_int_eq(parse_str("1 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21\r\n", &ps),
			 0);
	ck_assert_uint_eq(ps.rss_pages, 21);
	/* a lone CR is not a line end */
	ck_assert_int_eq(parse_str("1 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21\r", &ps),
			 -EINVAL);
}
END_TEST

START_TEST(test_empty)
{
	struct procstat ps;

	ck_assert_int_eq(parse_fixture("empty.txt", &ps), -EINVAL);
	ck_assert_int_eq(procstat_parse(NULL, 0, &ps), -EINVAL);
}
END_TEST

START_TEST(test_null_args)
{
	struct procstat ps;

	ck_assert_int_eq(procstat_parse(NULL, 5, &ps), -EINVAL);
	ck_assert_int_eq(parse_str("1 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21\n", NULL),
			 -EINVAL);
}
END_TEST

START_TEST(test_truncated)
{
	struct procstat ps;

	ck_assert_int_eq(parse_fixture("truncated-midline.txt", &ps), -EINVAL);
	/* "394" may be the start of "3941" */
	ck_assert_int_eq(parse_fixture("truncated-after-rss.txt", &ps), -EINVAL);
	ck_assert_int_eq(parse_fixture("truncated-in-comm.txt", &ps), -EINVAL);

	/* out is untouched on failure */
	memset(&ps, 0x5a, sizeof(ps));
	ck_assert_int_eq(parse_str("1 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20\n", &ps),
			 -EINVAL);
	ck_assert_int_eq(ps.pid, 0x5a5a5a5a);
	ck_assert_uint_eq(ps.minflt, UINT64_C(0x5a5a5a5a5a5a5a5a));

	/* every proper prefix of a record ending at field 24 is rejected */
	{
		static const char full[] = "12 (a b) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21\n";

		for (size_t n = 0; n < sizeof(full) - 1; n++)
			ck_assert_msg(parse_mem(full, n, &ps) == -EINVAL, "accepted %zu bytes", n);
		ck_assert_int_eq(parse_mem(full, sizeof(full) - 1, &ps), 0);
		ck_assert_str_eq(ps.comm, "a b");
		ck_assert_uint_eq(ps.starttime, 19);
		ck_assert_uint_eq(ps.rss_pages, 21);
	}

	/* but anything may follow field 24 once it is terminated */
	ck_assert_int_eq(parse_str("1 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22", &ps),
			 0);
	ck_assert_uint_eq(ps.rss_pages, 21);
}
END_TEST

START_TEST(test_garbage)
{
	struct procstat ps;

	ck_assert_int_eq(parse_fixture("garbage.bin", &ps), -EINVAL);
	/* junk in a skipped field */
	ck_assert_int_eq(parse_str("1 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 1x 14 15 16 17 18 19 20 21\n", &ps),
			 -EINVAL);
	ck_assert_int_eq(parse_str("1 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 - 14 15 16 17 18 19 20 21\n", &ps),
			 -EINVAL);
	/* bad state */
	ck_assert_int_eq(parse_str("1 (x) 5 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21\n", &ps),
			 -EINVAL);
	ck_assert_int_eq(parse_str("1 (x) SS 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21\n", &ps),
			 -EINVAL);
	/* no blank after ')' */
	ck_assert_int_eq(parse_str("1 (x)S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21\n", &ps),
			 -EINVAL);
	/* bad pid */
	ck_assert_int_eq(parse_str("0 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21\n", &ps),
			 -EINVAL);
	ck_assert_int_eq(parse_str("2147483648 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21\n",
				   &ps),
			 -EINVAL);
	ck_assert_int_eq(parse_str("-1 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21\n", &ps),
			 -EINVAL);
	ck_assert_int_eq(parse_str(" 1 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21\n", &ps),
			 -EINVAL);
	ck_assert_int_eq(parse_str("1(x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21\n", &ps),
			 -EINVAL);
	/* no parentheses */
	ck_assert_int_eq(parse_str("1 x S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21\n", &ps),
			 -EINVAL);
	ck_assert_int_eq(parse_str("1 (x S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21\n", &ps),
			 -EINVAL);

	/* pid at the limit is fine */
	ck_assert_int_eq(parse_str("2147483647 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21\n",
				   &ps),
			 0);
	ck_assert_int_eq(ps.pid, 2147483647);
}
END_TEST

START_TEST(test_huge_values)
{
	struct procstat ps;

	ck_assert_int_eq(parse_fixture("huge-values.txt", &ps), 0);
	ck_assert_uint_eq(ps.minflt, UINT64_MAX);
	ck_assert_uint_eq(ps.utime, UINT64_MAX);
	ck_assert_uint_eq(ps.stime, 1);
	ck_assert_uint_eq(ps.starttime, UINT64_C(1) << 63);
	ck_assert_uint_eq(ps.rss_pages, UINT64_MAX);
}
END_TEST

START_TEST(test_overflow)
{
	struct procstat ps;

	ck_assert_int_eq(parse_fixture("overflow.txt", &ps), -EINVAL);
	/* skipped fields may be any size: only their shape is checked */
	ck_assert_int_eq(parse_str("1 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 -99999999999999999999999 15 16 17 "
				   "18 19 20 21\n",
				   &ps),
			 0);
	ck_assert_uint_eq(ps.starttime, 19);
}
END_TEST

START_TEST(test_negative)
{
	struct procstat ps;

	ck_assert_int_eq(parse_fixture("negative.txt", &ps), -EINVAL);

	/* cutime, cstime, priority, nice are signed and not returned */
	ck_assert_int_eq(parse_fixture("negative-ok.txt", &ps), 0);
	ck_assert_uint_eq(ps.minflt, 10);
	ck_assert_uint_eq(ps.cminflt, 20);
	ck_assert_uint_eq(ps.majflt, 30);
	ck_assert_uint_eq(ps.cmajflt, 40);
	ck_assert_uint_eq(ps.utime, 50);
	ck_assert_uint_eq(ps.stime, 60);
	ck_assert_uint_eq(ps.starttime, 100);
	ck_assert_uint_eq(ps.rss_pages, 5);
}
END_TEST

START_TEST(test_whitespace)
{
	struct procstat ps;

	/* the kernel uses single spaces; runs of blanks are tolerated */
	ck_assert_int_eq(parse_str("3  ( x )\tS 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18   19 20 21\t\n",
				   &ps),
			 0);
	ck_assert_str_eq(ps.comm, " x ");
	ck_assert_int_eq(ps.state, 'S');
	ck_assert_uint_eq(ps.starttime, 19);
	ck_assert_uint_eq(ps.rss_pages, 21);
}
END_TEST

START_TEST(test_len_is_respected)
{
	static const char s[] = "1 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22\n";
	struct procstat ps;

	/* cut after "21 ": fine; cut after "2" of "21": field 24 may be cut */
	ck_assert_int_eq(parse_mem(s, sizeof(s) - 4, &ps), 0);
	ck_assert_uint_eq(ps.rss_pages, 21);
	ck_assert_int_eq(parse_mem(s, sizeof(s) - 6, &ps), -EINVAL);
}
END_TEST

static Suite *procstat_suite(void)
{
	Suite *s = suite_create("procstat");
	TCase *tc = tcase_create("parse");

	tcase_add_loop_test(tc, test_real_fixture, 0, (int) (sizeof(real_fixtures) / sizeof(real_fixtures[0])));
	tcase_add_test(tc, test_comm_parens);
	tcase_add_test(tc, test_comm_truncated);
	tcase_add_test(tc, test_comm_binary);
	tcase_add_test(tc, test_old_kernel);
	tcase_add_test(tc, test_crlf);
	tcase_add_test(tc, test_empty);
	tcase_add_test(tc, test_null_args);
	tcase_add_test(tc, test_truncated);
	tcase_add_test(tc, test_garbage);
	tcase_add_test(tc, test_huge_values);
	tcase_add_test(tc, test_overflow);
	tcase_add_test(tc, test_negative);
	tcase_add_test(tc, test_whitespace);
	tcase_add_test(tc, test_len_is_respected);
	suite_add_tcase(s, tc);

	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(procstat_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);

	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
