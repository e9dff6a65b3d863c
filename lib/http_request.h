/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_HTTP_REQUEST_H
#define MEMWATCH_HTTP_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What the HTTP front-end reads from a request, apart from libmicrohttpd:
 * pure functions, so the fuzz suite can drive them without a server. */

enum http_endpoint {
	HTTP_ENDPOINT_UNKNOWN, /* 404 */
	HTTP_ENDPOINT_METRICS,
	HTTP_ENDPOINT_HEALTHZ,
	HTTP_ENDPOINT_WINDOWS,
	HTTP_ENDPOINT_EVENTS,
	HTTP_ENDPOINT_STATUS,
	HTTP_ENDPOINT_CGROUP, /* /cgroup?path=...: one cgroup's page */
};

/* The endpoint a request path (as libmicrohttpd hands it over: the query
 * string already cut off) names; exact match only. NULL is unknown. */
enum http_endpoint http_endpoint_of(const char *path);

/* "?windows=N": digits only (no sign, blank or junk), N >= 1. Returns 0,
 * -EINVAL on a bad form or zero, -ERANGE past UINT64_MAX. */
int http_windows_parse(const char *arg, uint64_t *ret);

/* "?path=P" of /cgroup, as libmicrohttpd decoded it (len bytes: a %00 stays
 * in): a cgroup path as the cgroup label writes it, "/" or "/a/b" with no
 * empty, "." or ".." segment, no trailing slash, no control character, at
 * most HTTP_CGROUP_PATH_MAX bytes. Returns 0 or -EINVAL. The page is only
 * ever looked up among the exported cgroups; this keeps junk out early. */
#define HTTP_CGROUP_PATH_MAX 4095
int http_cgroup_path_check(const char *arg, size_t len);

/* Compares two strings in time that depends only on their lengths. */
bool http_equal_constant_time(const char *a, const char *b);

#endif
