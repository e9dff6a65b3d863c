// SPDX-License-Identifier: GPL-2.0
/* What the HTTP front-end parses itself, without libmicrohttpd: the request
 * path's endpoint, the ?windows= value and the basic_auth_users list. The
 * input is three lines: path, windows value, users list. */
#include <errno.h>
#include "fuzz.h"
#include "http_request.h"

#define MAX_CREDS 4

static void fuzz_path(const char *path)
{
	static const char *const names[] = { "/metrics", "/healthz", "/api/v1/windows", "/api/v1/events", "/" };
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

static void fuzz_users(const char *list)
{
	struct http_credential c[MAX_CREDS];
	size_t n = 99, i, colons = 0;
	const char *p;
	int r;

	r = http_credentials_parse(list, c, MAX_CREDS, &n);
	FUZZ_CHECK(r == 0 || r == -E2BIG || r == -ENOMEM);
	FUZZ_CHECK(n <= MAX_CREDS);
	if (r == -E2BIG)
		FUZZ_CHECK(n == MAX_CREDS);
	for (p = list; *p; p++)
		colons += *p == ':';
	FUZZ_CHECK(n <= colons);
	for (i = 0; i < n; i++) {
		FUZZ_CHECK(!strpbrk(c[i].name, " \t:"));
		FUZZ_CHECK(!strpbrk(c[i].hash, " \t"));
		FUZZ_CHECK(strstr(list, c[i].name) && strstr(list, c[i].hash));
		FUZZ_CHECK(http_equal_constant_time(c[i].hash, c[i].hash));
		FUZZ_CHECK(http_equal_constant_time(c[i].name, c[i].hash) == (strcmp(c[i].name, c[i].hash) == 0));
	}
	http_credentials_free(c, n);
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
	fuzz_windows(windows);
	fuzz_users(users);
	free(s);
	return 0;
}
