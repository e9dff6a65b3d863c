// SPDX-License-Identifier: GPL-2.0
/* One config value through every value parser: booleans, numbers, durations,
 * log levels, percentages, paths, cgroup globs and basic_auth_users. */
#include <errno.h>
#include <math.h>
#include "cgroup_walk.h"
#include "config.h"
#include "fuzz.h"

static void fuzz_numbers(const char *s)
{
	uint64_t v, bounds[][2] = { { 0, UINT64_MAX }, { 1, 1000 }, { 64, 4194304 }, { 100, 60000 } };
	size_t i;
	int r;

	for (i = 0; i < sizeof(bounds) / sizeof(bounds[0]); i++) {
		r = config_parse_uint(s, bounds[i][0], bounds[i][1], &v);
		FUZZ_CHECK(r == 0 || r == -EINVAL || r == -ERANGE);
		if (r == 0) {
			FUZZ_CHECK(v >= bounds[i][0] && v <= bounds[i][1]);
			FUZZ_CHECK(s[0] >= '0' && s[0] <= '9');
		}
		r = config_parse_duration_msec(s, bounds[i][0], bounds[i][1], &v);
		FUZZ_CHECK(r == 0 || r == -EINVAL || r == -ERANGE);
		if (r == 0)
			FUZZ_CHECK(v >= bounds[i][0] && v <= bounds[i][1]);
	}
	/* A plain number is a number of milliseconds. */
	if (config_parse_uint(s, 0, UINT64_MAX / 2000, &v) == 0) {
		uint64_t ms;

		FUZZ_CHECK(config_parse_duration_msec(s, 0, UINT64_MAX, &ms) == 0 && ms == v);
	}
}

static void fuzz_words(const char *s)
{
	bool b;
	int level, again;
	double ratio;
	int r;

	r = config_parse_bool(s, &b);
	FUZZ_CHECK(r == 0 || r == -EINVAL);
	r = config_parse_log_level(s, &level);
	FUZZ_CHECK(r == 0 || r == -EINVAL);
	if (r == 0) {
		/* The canonical name parses back to the same level. */
		FUZZ_CHECK(level >= 3 && level <= 7);
		FUZZ_CHECK(config_parse_log_level(log_level_name(level), &again) == 0 && again == level);
	}
	r = config_parse_percent(s, &ratio);
	FUZZ_CHECK(r == 0 || r == -EINVAL);
	if (r == 0) {
		const char *rest = s + strspn(s, "0123456789.");

		FUZZ_CHECK(isfinite(ratio) && ratio >= 0 && ratio <= 1);
		FUZZ_CHECK(*rest == '\0' || strcmp(rest, "%") == 0);
	}
}

static void fuzz_path(const char *s)
{
	char buf[64], err[128];
	int r;

	memset(buf, 0xa5, sizeof(buf));
	r = config_parse_path(s, buf, sizeof(buf), err, sizeof(err));
	FUZZ_CHECK(r == 0 || r == -EINVAL);
	if (r == 0)
		FUZZ_CHECK(strcmp(buf, s) == 0 && buf[0] == '/');
	else
		FUZZ_CHECK(fuzz_terminated(err, sizeof(err)));
}

static void fuzz_globs(const char *s)
{
	struct cgroup_globs g;
	size_t i;
	int r, r_count;

	r_count = cgroup_globs_parse(s, NULL);
	r = cgroup_globs_parse(s, &g);
	FUZZ_CHECK(r == r_count);
	FUZZ_CHECK(r == 0 || r == -EINVAL || r == -E2BIG);
	if (r < 0)
		return;
	FUZZ_CHECK(g.n <= CGROUP_GLOBS_MAX);
	for (i = 0; i < g.n; i++) {
		FUZZ_CHECK(g.pattern[i] && strlen(g.pattern[i]) <= CGROUP_GLOB_LEN_MAX);
		FUZZ_CHECK(strchr("/*?[", g.pattern[i][0]));
		FUZZ_CHECK(strstr(s, g.pattern[i]));
	}
	cgroup_globs_match(&g, "/system.slice/a.service");
	cgroup_globs_free(&g);
}

static void fuzz_users(const char *s)
{
	static struct basic_auth_users u;
	size_t i;
	int r = basic_auth_users_parse(s, &u);

	FUZZ_CHECK(r == 0 || r == -EINVAL || r == -E2BIG || r == -ENAMETOOLONG);
	if (r < 0) {
		FUZZ_CHECK(u.n == 0);
		return;
	}
	FUZZ_CHECK(u.n >= 1 && u.n <= BASIC_AUTH_USERS_MAX);
	for (i = 0; i < u.n; i++) {
		const struct basic_auth_user *a = &u.user[i];

		FUZZ_CHECK(a->name[0] && !strpbrk(a->name, " \t:"));
		FUZZ_CHECK(a->hash[0] == '$' && !strpbrk(a->hash, " \t:"));
		FUZZ_CHECK(strstr(s, a->name) && strstr(s, a->hash));
	}
	FUZZ_CHECK(basic_auth_users_equal(&u, &u));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstring(data, size);

	fuzz_numbers(s);
	fuzz_words(s);
	fuzz_path(s);
	fuzz_globs(s);
	fuzz_users(s);
	free(s);
	return 0;
}
