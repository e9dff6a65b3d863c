// SPDX-License-Identifier: GPL-2.0
#include <curl/curl.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "client.h"
#include "macro.h"

#define DEFAULT_PORT "9577"
#define CONNECT_TIMEOUT_MS 3000L
#define TRANSFER_TIMEOUT_MS 10000L
/* /api/v1/windows with a full history of many processes is a few MiB. */
#define ANSWER_MAX (64u << 20)

struct top_client {
	CURL *curl;
	CURLU *url;
	char *prefix;       /* the URL's path without its trailing '/', maybe "" */
	char *display;      /* scheme://host:port/prefix */
	char host_port[300];
	char *user, *password, *cacert;
	const volatile sig_atomic_t *interrupted;
	char errbuf[CURL_ERROR_SIZE];
	/* The answer being received. */
	char *body;
	size_t len, cap;
	bool too_big;
};

static void wipe_free(char *s)
{
	if (s) {
		explicit_bzero(s, strlen(s));
		free(s);
	}
}

void top_client_free(struct top_client *c)
{
	if (!c)
		return;
	if (c->curl)
		curl_easy_cleanup(c->curl);
	curl_url_cleanup(c->url);
	free(c->prefix);
	free(c->display);
	free(c->user);
	wipe_free(c->password);
	free(c->cacert);
	free(c->body);
	free(c);
}

DEFINE_TRIVIAL_CLEANUP_FUNC(struct top_client *, top_client_free);

static size_t on_data(char *data, size_t size, size_t n, void *userdata)
{
	struct top_client *c = userdata;
	size_t add = size * n;

	if (c->len + add + 1 > ANSWER_MAX) {
		c->too_big = true;
		return 0;
	}
	if (c->len + add + 1 > c->cap) {
		size_t cap = c->cap ? c->cap : 65536;
		char *p;

		while (cap < c->len + add + 1)
			cap *= 2;
		p = realloc(c->body, cap);
		if (!p)
			return 0;
		c->body = p;
		c->cap = cap;
	}
	memcpy(c->body + c->len, data, add);
	c->len += add;
	return add;
}

static int on_progress(void *userdata, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow)
{
	const struct top_client *c = userdata;

	/* Non-zero aborts: q or C-c must not wait for a slow daemon. */
	return c->interrupted && *c->interrupted;
}

DEFINE_TRIVIAL_CLEANUP_FUNC(char *, curl_free);
#define _cleanup_curl_free_ _cleanup_(curl_freep)

/* The URL's parts; everything but scheme, host, port and path is refused. */
static int check_url(struct top_client *c, const char *text, char *err, size_t errlen)
{
	_cleanup_free_ char *with_scheme = NULL;
	_cleanup_curl_free_ char *scheme = NULL, *host = NULL, *port = NULL, *path = NULL, *part = NULL;
	CURLUcode rc;
	size_t n;

	if (!*text) {
		snprintf(err, errlen, "--url: '' is not http[s]://HOST[:PORT]");
		return -EINVAL;
	}
	if (!strstr(text, "://") && asprintf(&with_scheme, "http://%s", text) < 0)
		return -ENOMEM;
	c->url = curl_url();
	if (!c->url)
		return -ENOMEM;
	rc = curl_url_set(c->url, CURLUPART_URL, with_scheme ? with_scheme : text, 0);
	if (rc != CURLUE_OK) {
		snprintf(err, errlen, "--url: '%s' is not http[s]://HOST[:PORT] (%s)", text, curl_url_strerror(rc));
		return -EINVAL;
	}
	if (curl_url_get(c->url, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    (strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0)) {
		snprintf(err, errlen, "--url: '%s' is not http[s]://HOST[:PORT]", text);
		return -EINVAL;
	}
	if (curl_url_get(c->url, CURLUPART_USER, &part, 0) == CURLUE_OK) {
		snprintf(err, errlen, "--url: '%s' has a user name in it; use --user and --password-file", text);
		return -EINVAL;
	}
	if (curl_url_get(c->url, CURLUPART_QUERY, &part, 0) == CURLUE_OK ||
	    curl_url_get(c->url, CURLUPART_FRAGMENT, &part, 0) == CURLUE_OK) {
		snprintf(err, errlen, "--url: '%s' has a query or fragment; give the daemon's base URL", text);
		return -EINVAL;
	}
	if (curl_url_get(c->url, CURLUPART_HOST, &host, 0) != CURLUE_OK || !*host) {
		snprintf(err, errlen, "--url: '%s' is not http[s]://HOST[:PORT]", text);
		return -EINVAL;
	}
	if (curl_url_get(c->url, CURLUPART_PORT, &port, 0) == CURLUE_NO_PORT &&
	    (curl_url_set(c->url, CURLUPART_PORT, DEFAULT_PORT, 0) != CURLUE_OK ||
	     curl_url_get(c->url, CURLUPART_PORT, &port, 0) != CURLUE_OK))
		return -ENOMEM;
	if (!port) {
		snprintf(err, errlen, "--url: '%s' has no valid port", text);
		return -EINVAL;
	}
	if (curl_url_get(c->url, CURLUPART_PATH, &path, 0) != CURLUE_OK)
		return -ENOMEM;
	n = strlen(path);
	while (n > 0 && path[n - 1] == '/')
		n--;
	c->prefix = strndup(path, n);
	snprintf(c->host_port, sizeof(c->host_port), "%s:%s", host, port);
	if (!c->prefix || asprintf(&c->display, "%s://%s%s", scheme, c->host_port, c->prefix) < 0) {
		c->display = NULL;
		return -ENOMEM;
	}
	return 0;
}

int top_client_new(struct top_client **ret, const struct top_client_options *o, char *err, size_t errlen)
{
	_cleanup_(top_client_freep) struct top_client *c = calloc(1, sizeof(*c));
	int r;

	if (!c)
		return -ENOMEM;
	r = check_url(c, o->url, err, errlen);
	if (r < 0)
		return r;
	c->interrupted = o->interrupted;
	if ((o->user && !(c->user = strdup(o->user))) || (o->password && !(c->password = strdup(o->password))) ||
	    (o->cacert && !(c->cacert = strdup(o->cacert))))
		return -ENOMEM;
	c->curl = curl_easy_init();
	if (!c->curl)
		return -ENOMEM;
	curl_easy_setopt(c->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c->curl, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c->curl, CURLOPT_CONNECTTIMEOUT_MS, CONNECT_TIMEOUT_MS);
	curl_easy_setopt(c->curl, CURLOPT_TIMEOUT_MS, TRANSFER_TIMEOUT_MS);
	curl_easy_setopt(c->curl, CURLOPT_USERAGENT, "memwatch-top/" MEMWATCHD_VERSION);
	curl_easy_setopt(c->curl, CURLOPT_ERRORBUFFER, c->errbuf);
	curl_easy_setopt(c->curl, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c->curl, CURLOPT_WRITEDATA, c);
	curl_easy_setopt(c->curl, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(c->curl, CURLOPT_XFERINFODATA, c);
	curl_easy_setopt(c->curl, CURLOPT_NOPROGRESS, 0L);
	if (c->user) {
		curl_easy_setopt(c->curl, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		curl_easy_setopt(c->curl, CURLOPT_USERNAME, c->user);
		curl_easy_setopt(c->curl, CURLOPT_PASSWORD, c->password ? c->password : "");
	}
	if (c->cacert)
		curl_easy_setopt(c->curl, CURLOPT_CAINFO, c->cacert);
	*ret = TAKE_PTR(c);
	return 0;
}

const char *top_client_url(const struct top_client *c)
{
	return c->display;
}

const char *top_client_host_port(const struct top_client *c)
{
	return c->host_port;
}

static bool tls_failure(CURLcode rc)
{
	return rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CONNECT_ERROR ||
	       rc == CURLE_SSL_CACERT_BADFILE || rc == CURLE_SSL_CERTPROBLEM || rc == CURLE_SSL_ISSUER_ERROR;
}

static enum top_failure transport_error(struct top_client *c, CURLcode rc, char *err, size_t errlen)
{
	const char *what = c->errbuf[0] ? c->errbuf : curl_easy_strerror(rc);
	long os_errno = 0;

	if (rc == CURLE_ABORTED_BY_CALLBACK) {
		snprintf(err, errlen, "interrupted");
		return TOP_UNREACHABLE;
	}
	if (rc == CURLE_WRITE_ERROR && c->too_big) {
		snprintf(err, errlen, "answer larger than %u MiB (%s)", ANSWER_MAX >> 20, c->host_port);
		return TOP_BAD_ANSWER;
	}
	curl_easy_getinfo(c->curl, CURLINFO_OS_ERRNO, &os_errno);
	if (rc == CURLE_COULDNT_CONNECT && os_errno > 0)
		snprintf(err, errlen, "%s (%s)", strerror((int)os_errno), c->host_port);
	else if (rc == CURLE_PEER_FAILED_VERIFICATION)
		snprintf(err, errlen, "TLS: %s (%s; a private CA goes in --cacert)", what, c->host_port);
	else if (tls_failure(rc))
		snprintf(err, errlen, "TLS: %s (%s)", what, c->host_port);
	else
		snprintf(err, errlen, "%s (%s)", what, c->host_port);
	return TOP_UNREACHABLE;
}

enum top_failure top_client_get_json(struct top_client *c, const char *path_query, json_t **ret, char *err,
				     size_t errlen)
{
	_cleanup_free_ char *path = NULL;
	_cleanup_curl_free_ char *full = NULL;
	const char *q = strchr(path_query, '?');
	json_error_t jerr;
	long status = 0;
	CURLcode rc;

	*ret = NULL;
	if (asprintf(&path, "%s%.*s", c->prefix, (int)(q ? (size_t)(q - path_query) : strlen(path_query)),
		     path_query) < 0) {
		path = NULL;
		snprintf(err, errlen, "out of memory");
		return TOP_BAD_ANSWER;
	}
	if (curl_url_set(c->url, CURLUPART_PATH, path, 0) != CURLUE_OK ||
	    curl_url_set(c->url, CURLUPART_QUERY, q ? q + 1 : NULL, 0) != CURLUE_OK ||
	    curl_url_get(c->url, CURLUPART_URL, &full, 0) != CURLUE_OK) {
		snprintf(err, errlen, "cannot make a URL of %s", path_query);
		return TOP_BAD_ANSWER;
	}
	/* libcurl copies the string. */
	curl_easy_setopt(c->curl, CURLOPT_URL, full);
	c->len = 0;
	c->too_big = false;
	c->errbuf[0] = '\0';
	rc = curl_easy_perform(c->curl);
	if (rc != CURLE_OK)
		return transport_error(c, rc, err, errlen);
	curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &status);
	if (status == 401) {
		snprintf(err, errlen, "HTTP 401 from %s: %s", c->host_port,
			 c->user ? "wrong user or password (--user, --password-file)"
				 : "the daemon wants a user and password (--user, --password-file)");
		return TOP_AUTH;
	}
	if (status != 200) {
		snprintf(err, errlen, "HTTP %ld for %s from %s", status, path_query, c->host_port);
		return TOP_BAD_ANSWER;
	}
	/* Every number as a double: counters may pass what a json_int_t holds. */
	*ret = json_loadb(c->body ? c->body : "", c->len, JSON_DECODE_INT_AS_REAL, &jerr);
	if (!*ret) {
		snprintf(err, errlen, "not JSON: %s at line %d (%s from %s)", jerr.text, jerr.line, path_query,
			 c->host_port);
		return TOP_BAD_ANSWER;
	}
	return TOP_OK;
}
