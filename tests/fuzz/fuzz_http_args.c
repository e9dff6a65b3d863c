// SPDX-License-Identifier: GPL-2.0
/* What the HTTP front-end parses itself, without libmicrohttpd: the request
 * path's endpoint, the ?windows= value, /cgroup's ?path= (the first line again), and the constant-time comparison
 * of credentials. The input is three lines: path, windows value, and two
 * words to compare (basic_auth_users is parsed by the configuration:
 * fuzz_config_values). */
#include <errno.h>
#include "fuzz.h"
#include "http_request.h"

static void fuzz_path(const char *path)
{
	static const char *const names[] = { "/metrics", "/healthz", "/api/v1/windows", "/api/v1/events", "/",
					      "/cgroup" };
	enum http_endpoint e = http_endpoint_of(path);
	size_t i, matches = 0;

	/* An endpoint only for an exact match, never for a prefix or a variant. */
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		matches += strcmp(path, names[i]) == 0;
	FUZZ_CHECK((e == HTTP_ENDPOINT_UNKNOWN) == (matches == 0));
}

static void fuzz_windows(const char *arg)
{
	uint64_t v = 0;
	int r = http_windows_parse(arg, &v);
	size_t i;

	FUZZ_CHECK(r == 0 || r == -EINVAL || r == -ERANGE);
	if (r < 0) {
		FUZZ_CHECK(v == 0);
		return;
	}
	FUZZ_CHECK(v >= 1);
	for (i = 0; arg[i]; i++)
		FUZZ_CHECK(arg[i] >= '0' && arg[i] <= '9');
	FUZZ_CHECK(i > 0);
}

/* The path check against a plain reading of its rule: split at '/', every
 * segment but "/"'s one non-empty, not "." or "..", printable. */
static void fuzz_cgroup_path(const char *arg)
{
	size_t len = strlen(arg), i;
	bool ok = len > 0 && len <= HTTP_CGROUP_PATH_MAX && arg[0] == '/';

	for (i = 0; ok && i < len; i++)
		ok = (unsigned char)arg[i] >= 0x20 && arg[i] != 0x7f;
	if (ok && len > 1) {
		char *copy = strdup(arg), *seg = copy + 1, *slash;

		FUZZ_CHECK(copy);
		for (; ok; seg = slash + 1) {
			slash = strchr(seg, '/');
			if (slash)
				*slash = '\0';
			ok = *seg && strcmp(seg, ".") != 0 && strcmp(seg, "..") != 0;
			if (!slash)
				break;
		}
		free(copy);
	}
	FUZZ_CHECK((http_cgroup_path_check(arg, len) == 0) == ok);
}

static void fuzz_compare(const char *words)
{
	const char *blank = strchr(words, ' ');
	char *a = strndup(words, blank ? (size_t)(blank - words) : strlen(words));
	const char *b = blank ? blank + 1 : "";

	FUZZ_CHECK(a);
	FUZZ_CHECK(http_equal_constant_time(a, a));
	FUZZ_CHECK(http_equal_constant_time(a, b) == (strcmp(a, b) == 0));
	free(a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstring(data, size), *windows = s, *users = s, *nl;

	if ((nl = strchr(s, '\n'))) {
		*nl = '\0';
		windows = users = nl + 1;
		if ((nl = strchr(windows, '\n'))) {
			*nl = '\0';
			users = nl + 1;
		}
	}
	fuzz_path(s);
	fuzz_cgroup_path(s);
	fuzz_windows(windows);
	fuzz_compare(users);
	free(s);
	return 0;
}
