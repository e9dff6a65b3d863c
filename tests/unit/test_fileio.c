/* SPDX-License-Identifier: GPL-2.0 */
/* procfile: a file read whole however its buffer starts, and a whole-read
 * (procfile_open_whole) giving the same text as a read to EOF. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "suite_main.h"

/* A regular file larger than the first buffer (4096): the buffer grows and
 * the text comes back whole, in either mode. */
static void check_grows(bool whole)
{
	char path[] = "/tmp/memwatch-fileio-XXXXXX", *text;
	struct procfile pf;
	const char *data;
	size_t len, n = 10000;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	text = malloc(n);
	ck_assert_ptr_nonnull(text);
	for (size_t i = 0; i < n; i++)
		text[i] = (char)('a' + i % 26);
	ck_assert_int_eq(write(fd, text, n), (ssize_t)n);
	close(fd);
	ck_assert_int_eq(whole ? procfile_open_whole(&pf, path, 1 << 20) : procfile_open(&pf, path, 1 << 20), 0);
	ck_assert_int_eq(procfile_read(&pf, &data, &len), 0);
	ck_assert_uint_eq(len, n);
	ck_assert(memcmp(data, text, n) == 0);
	/* Again, from the grown buffer: the same text. */
	ck_assert_int_eq(procfile_read(&pf, &data, &len), 0);
	ck_assert_uint_eq(len, n);
	procfile_close(&pf);
	unlink(path);
	free(text);
}

START_TEST(test_regular_file_grows)
{
	check_grows(false);
	check_grows(true);
}
END_TEST

/* The names of the lines of a text, without their values (which move). */
static char *line_names(const char *data)
{
	size_t cap = strlen(data) + 1, used = 0;
	char *out = malloc(cap);

	ck_assert_ptr_nonnull(out);
	for (const char *p = data; *p;) {
		const char *colon = strchr(p, ':'), *nl = strchr(p, '\n');

		ck_assert_ptr_nonnull(nl);
		if (colon && colon < nl) {
			memcpy(out + used, p, (size_t)(colon - p) + 1);
			used += (size_t)(colon - p) + 1;
		}
		p = nl + 1;
	}
	out[used] = '\0';
	return out;
}

/* /proc/meminfo is one seq_file record: a single read hands out every line
 * the read to EOF does, ending in a newline. */
START_TEST(test_meminfo_whole_read)
{
	struct procfile whole, to_eof;
	const char *a, *b;
	char *names_a, *names_b;
	size_t la, lb;

	ck_assert_int_eq(procfile_open_whole(&whole, "/proc/meminfo", 1 << 20), 0);
	ck_assert_int_eq(procfile_open(&to_eof, "/proc/meminfo", 1 << 20), 0);
	ck_assert_int_eq(procfile_read(&whole, &a, &la), 0);
	ck_assert_int_eq(procfile_read(&to_eof, &b, &lb), 0);
	ck_assert_uint_gt(la, 0);
	ck_assert_int_eq(a[la - 1], '\n');
	names_a = line_names(a);
	names_b = line_names(b);
	ck_assert_str_eq(names_a, names_b);
	ck_assert_ptr_nonnull(strstr(names_a, "MemAvailable:"));
	free(names_a);
	free(names_b);
	procfile_close(&whole);
	procfile_close(&to_eof);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("fileio");
	TCase *tc = tcase_create("procfile");

	tcase_add_test(tc, test_regular_file_grows);
	tcase_add_test(tc, test_meminfo_whole_read);
	suite_add_tcase(s, tc);
	return suite_main_run(s);
}
