// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "config.h"
#include "http_request.h"

enum http_endpoint http_endpoint_of(const char *path)
{
	static const struct {
		const char *path;
		enum http_endpoint endpoint;
	} table[] = {
		{ "/metrics", HTTP_ENDPOINT_METRICS },
		{ "/healthz", HTTP_ENDPOINT_HEALTHZ },
		{ "/api/v1/windows", HTTP_ENDPOINT_WINDOWS },
		{ "/api/v1/events", HTTP_ENDPOINT_EVENTS },
		{ "/", HTTP_ENDPOINT_STATUS },
		{ "/cgroup", HTTP_ENDPOINT_CGROUP },
	};
	size_t i;

	if (!path)
		return HTTP_ENDPOINT_UNKNOWN;
	for (i = 0; i < ARRAY_SIZE(table); i++)
		if (strcmp(path, table[i].path) == 0)
			return table[i].endpoint;
	return HTTP_ENDPOINT_UNKNOWN;
}

int http_windows_parse(const char *arg, uint64_t *ret)
{
	uint64_t v;
	int r;

	r = config_parse_uint(arg, 0, UINT64_MAX, &v);
	if (r < 0)
		return r;
	if (v == 0)
		return -EINVAL;
	*ret = v;
	return 0;
}

int http_cgroup_path_check(const char *arg, size_t len)
{
	size_t i, seg = 0; /* where the current segment starts */

	if (!arg || len == 0 || len > HTTP_CGROUP_PATH_MAX || arg[0] != '/')
		return -EINVAL;
	if (len == 1)
		return 0;
	for (i = 1; i <= len; i++) {
		unsigned char c = i < len ? (unsigned char)arg[i] : '/';

		if (c < 0x20 || c == 0x7f)
			return -EINVAL;
		if (c != '/')
			continue;
		/* the segment arg[seg + 1 .. i - 1] */
		if (i - seg == 1 || (i - seg == 2 && arg[seg + 1] == '.') ||
		    (i - seg == 3 && arg[seg + 1] == '.' && arg[seg + 2] == '.'))
			return -EINVAL;
		seg = i;
	}
	return 0;
}

bool http_equal_constant_time(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i;
	unsigned char diff = la != lb;

	for (i = 0; i < la && i < lb; i++)
		diff |= (unsigned char)(a[i] ^ b[i]);
	return diff == 0;
}
