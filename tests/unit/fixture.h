/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by the unit tests: exact-length fixture buffers and
 * per-test-case temporary directories. Everything is static inline so a
 * test only pays for what it uses. */
#ifndef MEMWATCHD_TESTS_UNIT_FIXTURE_H
#define MEMWATCHD_TESTS_UNIT_FIXTURE_H

#include <check.h>
#include <errno.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifndef FIXTURES_DIR
#error "FIXTURES_DIR must be defined by the build"
#endif

/* Exact-size heap copy without a NUL, so ASan catches any read past len. */
static inline char *dup_exact(const void *p, size_t len)
{
	char *b = malloc(len > 0 ? len : 1);

	ck_assert_ptr_nonnull(b);
	if (len > 0)
		memcpy(b, p, len);
	return b;
}

/* FIXTURES_DIR/<subdir>/<name> as an exact-size heap buffer without a NUL
 * (see dup_exact()); fails the test if the file is missing or > 64 KiB. */
static inline char *fixture_read(const char *subdir, const char *name, size_t *ret_len)
{
	char path[4096], tmp[65536];
	size_t len;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/%s", FIXTURES_DIR, subdir, name);
	f = fopen(path, "rb");
	ck_assert_msg(f != NULL, "cannot open fixture %s", path);
	len = fread(tmp, 1, sizeof(tmp), f);
	ck_assert_msg(!ferror(f) && feof(f), "cannot read fixture %s", path);
	fclose(f);

	*ret_len = len;
	return dup_exact(tmp, len);
}

/* FIXTURE_PARSE_MEM(name, parse, type) defines
 *	static int name(const void *s, size_t len, type *out)
 * which runs parse(buf, len, out) on an exact-size heap copy of s without a
 * NUL (see dup_exact()). */
#define FIXTURE_PARSE_MEM(name, parse, type)                   \
	static int name(const void *s, size_t len, type *out) \
	{                                                     \
		char *buf = dup_exact(s, len);                \
		int r = parse(buf, len, out);                 \
                                                              \
		free(buf);                                    \
		return r;                                     \
	}

/* FIXTURE_PARSE_FILE(name, subdir, parse, type) defines
 *	static int name(const char *fixture, type *out)
 * which runs parse(buf, len, out) on FIXTURES_DIR/subdir/fixture, read by
 * fixture_read() (exact size, no NUL). */
#define FIXTURE_PARSE_FILE(name, subdir, parse, type)                 \
	static int name(const char *fixture, type *out)              \
	{                                                            \
		size_t len;                                          \
		char *buf = fixture_read((subdir), fixture, &len);   \
		int r = parse(buf, len, out);                        \
                                                                     \
		free(buf);                                           \
		return r;                                            \
	}

static inline int fixture_rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	return remove(path);
}

/* Makes $TMPDIR (or /tmp) /<prefix>.XXXXXX into dir; aborts on failure
 * (it runs in an unchecked fixture, outside any test). */
static inline void fixture_tmpdir_make(char *dir, size_t size, const char *prefix)
{
	const char *base = getenv("TMPDIR");

	snprintf(dir, size, "%s/%s.XXXXXX", base && *base ? base : "/tmp", prefix);
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		abort();
	}
}

/* Runs the suite; the exit status says whether every test passed. */
static inline int fixture_run_suite(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* dir/<printf>, in a static buffer (one of four, so a few can be live). */
static inline __attribute__((format(printf, 2, 3))) const char *fixture_path(const char *dir, const char *fmt, ...)
{
	static char bufs[4][1024];
	static unsigned next;
	char *buf = bufs[next++ % 4];
	va_list ap;
	int n;

	n = snprintf(buf, sizeof(bufs[0]), "%s/", dir);
	va_start(ap, fmt);
	vsnprintf(buf + n, sizeof(bufs[0]) - (size_t)n, fmt, ap);
	va_end(ap);
	return buf;
}

static inline void fixture_mkdir(const char *path)
{
	ck_assert_msg(mkdir(path, 0755) == 0, "mkdir %s: %s", path, strerror(errno));
}

/* Removes the tree made by fixture_tmpdir_make(), if any, and clears dir. */
static inline void fixture_tmpdir_remove(char *dir)
{
	if (dir[0])
		nftw(dir, fixture_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	dir[0] = '\0';
}

#endif
