/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_TOP_CLIENT_H
#define MEMWATCH_TOP_CLIENT_H

#include <jansson.h>
#include <signal.h>
#include <stddef.h>

/* memwatch-top's HTTP(S) client for the daemon's JSON API: libcurl (one
 * handle, so the connection is kept between refreshes), jansson. */
struct top_client;

enum top_failure {
	TOP_OK,
	TOP_UNREACHABLE, /* no connection, TLS failed, timed out */
	TOP_AUTH,        /* HTTP 401 */
	TOP_BAD_ANSWER,  /* another status, or not JSON */
};

struct top_client_options {
	const char *url;
	const char *user;         /* NULL: no authentication */
	const char *password;
	const char *cacert;       /* NULL: the system's CA store */
	const volatile sig_atomic_t *interrupted; /* aborts a transfer when set */
};

/* Checks the URL (http or https, a host, no user or password in it: those go
 * in --user and --password-file); a missing port is 9577. 0, or -EINVAL with
 * the reason in err. */
int top_client_new(struct top_client **ret, const struct top_client_options *o, char *err, size_t errlen);
void top_client_free(struct top_client *c);
/* "scheme://host:port" of the daemon, for the title and messages. */
const char *top_client_url(const struct top_client *c);
const char *top_client_host_port(const struct top_client *c);

/* GET path (with query) below the URL's path; the answer parsed into *ret.
 * On failure, *ret is NULL and err says why, without the kind. */
enum top_failure top_client_get_json(struct top_client *c, const char *path_query, json_t **ret, char *err,
				     size_t errlen);

#endif
