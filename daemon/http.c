// SPDX-License-Identifier: GPL-2.0
#include <arpa/inet.h>
#include <crypt.h>
#include <pthread.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>
#include "accept.h"
#include "accept_encoding.h"
#include "clock.h"
#include "config.h"
#include "event_channel.h"
#include "expo.h"
#include "fileio.h"
#include "http.h"
#include "http_request.h"
#include "status_page.h"
#include "status_workloads.h"
#include "log.h"
#include "scrape_rhythm.h"

/* libmicrohttpd 0.9.71 changed the handler's return type. */
#if MHD_VERSION >= 0x00097002
#define MHD_RESULT enum MHD_Result
#else
#define MHD_RESULT int
#endif

#define CONNECTION_TIMEOUT_SEC 10
#define CONNECTION_MEMORY_LIMIT (32 * 1024)

struct http_user {
	struct basic_auth_user cred;
	char *last_good; /* the last password that matched: scrapes repeat it, crypt(3) is slow on purpose */
};

struct http_server {
	struct MHD_Daemon *mhd;
	struct snapshot_ring *ring;
	struct event_channel *events;
	atomic_uint longest_window_msec;
	int fd;
	char *tls_cert, *tls_key;
	struct http_user users[BASIC_AUTH_USERS_MAX];
	size_t n_users;
	pthread_mutex_t auth_lock;
	pthread_mutex_t rhythm_lock;
	struct scrape_rhythm rhythm; /* of /metrics, for the main loop (http_server_next_scrape) */
};

static const char landing_page[] =
	"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>memwatchd</title></head>\n"
	"<body><h1>memwatchd " MEMWATCHD_VERSION "</h1>\n"
	"<p>Linux memory pressure, watched from inside the kernel with eBPF.</p>\n"
	"<ul><li><a href=\"/metrics\">/metrics</a>: Prometheus metrics</li>\n"
	"<li><a href=\"/api/v1/windows\">/api/v1/windows</a>: the recent windows, as JSON</li>\n"
	"<li><a href=\"/api/v1/events\">/api/v1/events</a>: recent OOM kills and pressure instants, as JSON</li>\n"
	"<li><a href=\"/healthz\">/healthz</a>: liveness</li></ul>\n"
	"</body></html>\n";

static MHD_RESULT respond_static(struct MHD_Connection *conn, unsigned code, const char *type,
				 const char *body)
{
	struct MHD_Response *resp;
	MHD_RESULT ret;

	resp = MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_PERSISTENT);
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (code == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = MHD_queue_response(conn, code, resp);
	MHD_destroy_response(resp);
	return ret;
}

static void release_snapshot(void *cls)
{
	snapshot_unref(cls);
}

static MHD_RESULT add_accept_encoding(void *cls, enum MHD_ValueKind kind, const char *key,
				       const char *value)
{
	if (strcasecmp(key, MHD_HTTP_HEADER_ACCEPT_ENCODING) == 0)
		accept_encoding_parse(cls, value);
	return MHD_YES;
}

/* Every Accept-Encoding line counts: several are one comma-separated list. */
static bool wants_gzip(struct MHD_Connection *conn)
{
	struct accept_encoding ae;

	accept_encoding_init(&ae);
	MHD_get_connection_values(conn, MHD_HEADER_KIND, add_accept_encoding, &ae);
	return accept_encoding_gzip(&ae);
}

static MHD_RESULT add_accept(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	if (strcasecmp(key, MHD_HTTP_HEADER_ACCEPT) == 0)
		accept_format_parse(cls, value);
	return MHD_YES;
}

/* Every Accept line counts, as for Accept-Encoding. */
static enum expo_format wanted_format(struct MHD_Connection *conn)
{
	struct accept_format af;

	accept_format_init(&af);
	MHD_get_connection_values(conn, MHD_HEADER_KIND, add_accept, &af);
	return accept_format_choose(&af);
}

/* Zero-copy: the response holds its own reference to snap until it has been sent. */
static struct MHD_Response *metrics_response(struct snapshot *snap, enum expo_format format, bool gzip)
{
	struct MHD_Response *resp;
	const void *body;
	size_t len;

	body = snapshot_body(snap, format, gzip, &len);
	if (!body)
		return NULL;
	snapshot_ref(snap);
	resp = MHD_create_response_from_buffer_with_free_callback_cls(len, (void *)body, release_snapshot, snap);
	if (!resp) {
		snapshot_unref(snap);
		return NULL;
	}
	if (MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, expo_format_content_type(format)) != MHD_YES ||
	    MHD_add_response_header(resp, MHD_HTTP_HEADER_VARY, "Accept, Accept-Encoding") != MHD_YES ||
	    (gzip && MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_ENCODING, "gzip") != MHD_YES)) {
		MHD_destroy_response(resp);
		return NULL;
	}
	return resp;
}

static MHD_RESULT serve_metrics(struct http_server *srv, struct MHD_Connection *conn)
{
	struct MHD_Response *resp = NULL;
	enum expo_format format;
	struct snapshot *snap;
	MHD_RESULT ret;

	pthread_mutex_lock(&srv->rhythm_lock);
	scrape_rhythm_note(&srv->rhythm, now_mono_usec());
	pthread_mutex_unlock(&srv->rhythm_lock);
	snap = snapshot_ring_latest(srv->ring);
	if (!snap)
		return respond_static(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain; charset=utf-8",
				      "no window collected yet\n");
	/* No gzip copy (compression failed) or no room for its header: the
	 * plain body will do; no body in that format: the text. */
	format = wanted_format(conn);
	if (wants_gzip(conn))
		resp = metrics_response(snap, format, true);
	if (!resp)
		resp = metrics_response(snap, format, false);
	if (!resp && format != EXPO_FORMAT_TEXT)
		resp = metrics_response(snap, EXPO_FORMAT_TEXT, false);
	snapshot_unref(snap);
	if (!resp)
		return MHD_NO;
	ret = MHD_queue_response(conn, MHD_HTTP_OK, resp);
	MHD_destroy_response(resp);
	return ret;
}

static MHD_RESULT serve_health(struct http_server *srv, struct MHD_Connection *conn)
{
	struct snapshot *snap = snapshot_ring_latest(srv->ring);
	uint64_t stale_after = 3ULL * atomic_load(&srv->longest_window_msec) * USEC_PER_MSEC + USEC_PER_SEC;
	bool fresh = snap && now_mono_usec() - snapshot_window(snap)->end_mono_usec <= stale_after;

	snapshot_unref(snap);
	if (!fresh)
		return respond_static(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "text/plain; charset=utf-8",
				      "stale: no window published recently\n");
	return respond_static(conn, MHD_HTTP_OK, "text/plain; charset=utf-8", "ok\n");
}

static MHD_RESULT respond_strbuf_status(struct MHD_Connection *conn, unsigned code, struct strbuf *sb,
				       const char *type)
{
	struct MHD_Response *resp;
	MHD_RESULT ret;
	size_t len;
	_cleanup_free_ char *body = strbuf_steal(sb, &len);

	if (!body)
		return respond_static(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain; charset=utf-8",
				      "out of memory\n");
	resp = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!resp)
		return MHD_NO;
	TAKE_PTR(body); /* the response frees it */
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	ret = MHD_queue_response(conn, code, resp);
	MHD_destroy_response(resp);
	return ret;
}

static MHD_RESULT respond_strbuf(struct MHD_Connection *conn, struct strbuf *sb, const char *type)
{
	return respond_strbuf_status(conn, MHD_HTTP_OK, sb, type);
}

/* /api/v1/windows is sent one window at a time: the whole answer (every
 * window of the history with every series) runs to megabytes, one window to
 * tens of kilobytes, and a buffer for the whole would come and go with each
 * request. Each window is let go once the next one has its deltas. */
struct windows_stream {
	struct snapshot **snaps;
	size_t n, first, next; /* next: the next window to render; n: the trailer */
	struct strbuf sb;
	size_t sent; /* of sb */
	bool ended;
};

static void windows_stream_free(void *cls)
{
	struct windows_stream *ws = cls;

	for (size_t i = 0; i < ws->n; i++)
		snapshot_unref(ws->snaps[i]);
	free(ws->snaps);
	strbuf_free(&ws->sb);
	free(ws);
}

/* Renders the next piece into ws->sb: a window, or the trailer after the last. */
static void windows_stream_fill(struct windows_stream *ws)
{
	size_t i = ws->next++;

	strbuf_reset(&ws->sb);
	ws->sent = 0;
	if (i == ws->first)
		strbuf_puts(&ws->sb, "{\"windows\":[");
	if (i >= ws->n) {
		strbuf_puts(&ws->sb, "\n]}\n");
		ws->ended = true;
		return;
	}
	if (i > ws->first)
		strbuf_putc(&ws->sb, ',');
	strbuf_putc(&ws->sb, '\n');
	snapshot_render_json(&ws->sb, ws->snaps[i], i ? ws->snaps[i - 1] : NULL);
	if (i) {
		snapshot_unref(ws->snaps[i - 1]);
		ws->snaps[i - 1] = NULL;
	}
}

static ssize_t windows_stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct windows_stream *ws = cls;
	size_t k;

	(void)pos;
	while (ws->sent == ws->sb.len) {
		if (ws->ended)
			return MHD_CONTENT_READER_END_OF_STREAM;
		windows_stream_fill(ws);
		if (strbuf_failed(&ws->sb))
			return MHD_CONTENT_READER_END_WITH_ERROR;
	}
	k = ws->sb.len - ws->sent < max ? ws->sb.len - ws->sent : max;
	memcpy(buf, ws->sb.data + ws->sent, k);
	ws->sent += k;
	return (ssize_t)k;
}

#define WINDOWS_STREAM_BLOCK (32 * 1024)

static MHD_RESULT serve_windows(struct http_server *srv, struct MHD_Connection *conn)
{
	const char *arg = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "windows");
	size_t want = HISTORY_MAX + 1;
	struct windows_stream *ws;
	struct MHD_Response *resp;
	MHD_RESULT ret;

	if (arg) {
		uint64_t v;

		if (http_windows_parse(arg, &v) < 0)
			return respond_static(conn, MHD_HTTP_BAD_REQUEST, "text/plain; charset=utf-8",
					      "windows must be a positive number\n");
		if (v < want)
			want = (size_t)v + 1; /* one more, for the deltas of the oldest shown */
	}
	ws = calloc(1, sizeof(*ws));
	if (!ws)
		return MHD_NO;
	strbuf_init(&ws->sb);
	ws->snaps = calloc(want, sizeof(*ws->snaps));
	if (!ws->snaps) {
		windows_stream_free(ws);
		return MHD_NO;
	}
	ws->n = snapshot_ring_recent(srv->ring, ws->snaps, want);
	ws->first = ws->next = arg && ws->n == want ? 1 : 0;
	resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, WINDOWS_STREAM_BLOCK, windows_stream_read, ws,
						 windows_stream_free);
	if (!resp) {
		windows_stream_free(ws);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
	ret = MHD_queue_response(conn, MHD_HTTP_OK, resp);
	MHD_destroy_response(resp);
	return ret;
}

static MHD_RESULT serve_events(struct http_server *srv, struct MHD_Connection *conn)
{
	struct strbuf sb;

	strbuf_init(&sb);
	event_channel_render_json(srv->events, &sb);
	return respond_strbuf(conn, &sb, "application/json");
}

static MHD_RESULT serve_status(struct http_server *srv, struct MHD_Connection *conn)
{
	struct strbuf sb;

	strbuf_init(&sb);
	if (status_page_render(&sb, srv->ring, srv->events) < 0) {
		strbuf_free(&sb);
		return respond_static(conn, MHD_HTTP_OK, "text/html; charset=utf-8", landing_page);
	}
	return respond_strbuf(conn, &sb, "text/html; charset=utf-8");
}

/* The arguments of /cgroup: exactly one, path. */
struct cgroup_args {
	unsigned n, n_path;
};

static MHD_RESULT count_cgroup_arg(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	struct cgroup_args *a = cls;

	a->n++;
	a->n_path += strcmp(key, "path") == 0;
	return MHD_YES;
}

static MHD_RESULT serve_cgroup(struct http_server *srv, struct MHD_Connection *conn)
{
	struct cgroup_args args = { 0 };
	const char *path = NULL;
	size_t len = 0;
	struct strbuf sb;
	int r;

	MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, count_cgroup_arg, &args);
	if (args.n != 1 || args.n_path != 1 ||
	    MHD_lookup_connection_value_n(conn, MHD_GET_ARGUMENT_KIND, "path", strlen("path"), &path, &len) != MHD_YES ||
	    http_cgroup_path_check(path, len) < 0)
		return respond_static(conn, MHD_HTTP_BAD_REQUEST, "text/plain; charset=utf-8",
				      "/cgroup takes one argument, path: a cgroup path as the cgroup label writes "
				      "it (/a/b, URL-encoded)\n");
	strbuf_init(&sb);
	r = workloads_cgroup_page(&sb, srv->ring, path);
	if (r == -ENOENT) {
		strbuf_reset(&sb);
		workloads_not_found(&sb, path);
		return respond_strbuf_status(conn, MHD_HTTP_NOT_FOUND, &sb, "text/html; charset=utf-8");
	}
	if (r < 0) {
		strbuf_free(&sb);
		return respond_static(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain; charset=utf-8",
				      "out of memory\n");
	}
	return respond_strbuf(conn, &sb, "text/html; charset=utf-8");
}

DEFINE_TRIVIAL_CLEANUP_FUNC(char *, MHD_free)

static bool authorized(struct http_server *srv, struct MHD_Connection *conn)
{
	_cleanup_(MHD_freep) char *password = NULL, *user = MHD_basic_auth_get_username_password(conn, &password);
	bool ok = false;
	size_t i;

	if (!user)
		return false;
	for (i = 0; i < srv->n_users && !ok; i++) {
		struct http_user *u = &srv->users[i];
		struct crypt_data *cd;
		const char *h;

		if (strcmp(u->cred.name, user) != 0 || !password)
			continue;
		pthread_mutex_lock(&srv->auth_lock);
		if (u->last_good && http_equal_constant_time(u->last_good, password)) {
			ok = true;
		} else if ((cd = calloc(1, sizeof(*cd)))) {
			/* crypt_rn, not crypt_r: sanitizers intercept crypt_r and then
			 * --as-needed drops libcrypt from the link. */
			h = crypt_rn(password, u->cred.hash, cd, (int)sizeof(*cd));
			ok = h && h[0] != '*' && http_equal_constant_time(h, u->cred.hash);
			free(cd);
			if (ok) {
				free(u->last_good);
				u->last_good = strdup(password);
			}
		}
		pthread_mutex_unlock(&srv->auth_lock);
	}
	return ok;
}

/* Whether the request announces a body; none of our endpoints takes one. */
static bool has_body(struct MHD_Connection *conn)
{
	const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);

	if (MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING))
		return true;
	return cl && cl[strspn(cl, "0")] != '\0';
}

static MHD_RESULT handle_request(struct http_server *srv, struct MHD_Connection *conn, const char *url,
				 const char *method)
{
	/* /healthz stays open for liveness probes: it tells nothing about the host. */
	if (srv->n_users && http_endpoint_of(url) != HTTP_ENDPOINT_HEALTHZ && !authorized(srv, conn)) {
		struct MHD_Response *resp = MHD_create_response_from_buffer(
			strlen("unauthorized\n"), (void *)"unauthorized\n", MHD_RESPMEM_PERSISTENT);
		MHD_RESULT ret;

		if (!resp)
			return MHD_NO;
		ret = MHD_queue_basic_auth_fail_response(conn, "memwatchd", resp);
		MHD_destroy_response(resp);
		return ret;
	}

	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
		return respond_static(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain; charset=utf-8",
				      "method not allowed\n");
	switch (http_endpoint_of(url)) {
	case HTTP_ENDPOINT_METRICS:
		return serve_metrics(srv, conn);
	case HTTP_ENDPOINT_HEALTHZ:
		return serve_health(srv, conn);
	case HTTP_ENDPOINT_WINDOWS:
		return serve_windows(srv, conn);
	case HTTP_ENDPOINT_EVENTS:
		return serve_events(srv, conn);
	case HTTP_ENDPOINT_STATUS:
		return serve_status(srv, conn);
	case HTTP_ENDPOINT_CGROUP:
		return serve_cgroup(srv, conn);
	case HTTP_ENDPOINT_UNKNOWN:
		break;
	}
	return respond_static(conn, MHD_HTTP_NOT_FOUND, "text/plain; charset=utf-8", "not found\n");
}

/* Marks a request whose headers have been seen. */
static char headers_seen;

static MHD_RESULT on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
			     const char *version, const char *upload_data, size_t *upload_data_size,
			     void **req_cls)
{
	struct http_server *srv = cls;

	if (!*req_cls) {
		*req_cls = &headers_seen;
		/* A response queued now, with only the headers read, makes libmicrohttpd
		 * skip the rest of the request and close the connection after it; so
		 * answer on the next call, once the request is complete, and the
		 * connection stays open for the next scrape. A request with a body is
		 * the exception: answering now skips the body, whatever its size,
		 * instead of reading it for nothing. */
		if (!has_body(conn))
			return MHD_YES;
	} else if (*upload_data_size > 0) {
		/* Cannot happen (a body means we answered above); never read one. */
		return MHD_NO;
	}
	return handle_request(srv, conn, url, method);
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
	char buf[512];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	buf[strcspn(buf, "\n")] = '\0';
	log_debug("libmicrohttpd: %s", buf);
}

int http_bind_listen(const struct listen_addr *addr, const char *text)
{
	int fd, one = 1, zero = 0;

	fd = socket(addr->ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return log_error_errno(errno, "Failed to create socket for %s: %m", text);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (addr->any)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if (bind(fd, (const struct sockaddr *)&addr->ss, addr->len) < 0) {
		int r = log_error_errno(errno, "Failed to listen on %s: %m", text);

		close(fd);
		return r;
	}
	if (listen(fd, 128) < 0) {
		int r = log_error_errno(errno, "Failed to listen on %s: %m", text);

		close(fd);
		return r;
	}
	return fd;
}

static void free_security(struct http_server *srv)
{
	size_t i;

	for (i = 0; i < srv->n_users; i++)
		free(srv->users[i].last_good);
	srv->n_users = 0;
	free(srv->tls_cert);
	free(srv->tls_key);
	srv->tls_cert = srv->tls_key = NULL;
}

/* A server http_server_start() gave up on before MHD ran. */
static void server_unstarted_free(struct http_server *srv)
{
	if (!srv)
		return;
	free_security(srv);
	free(srv);
}

DEFINE_TRIVIAL_CLEANUP_FUNC(struct http_server *, server_unstarted_free);

static int load_security(struct http_server *srv, const struct http_security *sec)
{
	size_t i;
	int r;

	for (i = 0; i < sec->users->n; i++)
		srv->users[i].cred = sec->users->user[i];
	srv->n_users = sec->users->n;
	if (!sec->tls_cert_file || !sec->tls_cert_file[0])
		return 0;
	if (!MHD_is_feature_supported(MHD_FEATURE_TLS))
		return log_error_errno(EOPNOTSUPP, "TLS is configured but this libmicrohttpd was built without it");
	r = read_full_file(sec->tls_cert_file, 1 << 20, &srv->tls_cert, NULL);
	if (r < 0)
		return log_error_errno(r, "Cannot read tls_cert_file %s: %m", sec->tls_cert_file);
	r = read_full_file(sec->tls_key_file, 1 << 20, &srv->tls_key, NULL);
	if (r < 0)
		return log_error_errno(r, "Cannot read tls_key_file %s: %m", sec->tls_key_file);
	return 0;
}

int http_server_start(struct http_server **ret, const struct listen_addr *addr, const char *addr_text,
		      int listen_fd, unsigned max_connections, struct snapshot_ring *ring,
		      struct event_channel *events, uint32_t longest_window_msec, const struct http_security *sec)
{
	_cleanup_(server_unstarted_freep) struct http_server *srv = NULL;
	unsigned per_ip = max_connections > 4 ? max_connections / 2 : max_connections;
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_USE_ERROR_LOG;
	int r;

	srv = calloc(1, sizeof(*srv));
	if (!srv)
		return log_error_errno(ENOMEM, "Out of memory");
	pthread_mutex_init(&srv->auth_lock, NULL);
	pthread_mutex_init(&srv->rhythm_lock, NULL);
	r = load_security(srv, sec);
	if (r < 0)
		return r;
	if (srv->tls_cert)
		flags |= MHD_USE_TLS;
	srv->ring = ring;
	srv->events = events;
	atomic_init(&srv->longest_window_msec, longest_window_msec);
	srv->fd = listen_fd >= 0 ? listen_fd : http_bind_listen(addr, addr_text);
	if (srv->fd < 0)
		return srv->fd;
	srv->mhd = MHD_start_daemon(flags, 0, NULL, NULL, on_request, srv,
				    MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, NULL,
				    /* Ignored without MHD_USE_TLS; NULL ends the list early otherwise. */
				    MHD_OPTION_HTTPS_MEM_CERT, srv->tls_cert ? srv->tls_cert : "",
				    MHD_OPTION_HTTPS_MEM_KEY, srv->tls_key ? srv->tls_key : "",
				    MHD_OPTION_LISTEN_SOCKET, srv->fd,
				    MHD_OPTION_CONNECTION_LIMIT, max_connections,
				    MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_ip,
				    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)CONNECTION_TIMEOUT_SEC,
				    MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONNECTION_MEMORY_LIMIT,
				    MHD_OPTION_END);
	if (!srv->mhd) {
		close(srv->fd);
		if (srv->tls_cert)
			return log_error_errno(EINVAL, "Failed to start the HTTPS server on %s: the TLS certificate "
					       "or key was rejected (tls_cert_file %s, tls_key_file %s)",
					       addr_text, sec->tls_cert_file, sec->tls_key_file);
		return log_error_errno(EIO, "Failed to start the HTTP server on %s", addr_text);
	}
	*ret = TAKE_PTR(srv);
	return 0;
}

uint64_t http_server_next_scrape(struct http_server *srv, uint64_t now_mono, uint64_t after_mono)
{
	uint64_t next;

	if (!srv)
		return 0;
	pthread_mutex_lock(&srv->rhythm_lock);
	next = scrape_rhythm_next_after(&srv->rhythm, now_mono, after_mono);
	pthread_mutex_unlock(&srv->rhythm_lock);
	return next;
}

void http_server_set_longest_window(struct http_server *srv, uint32_t longest_window_msec)
{
	atomic_store(&srv->longest_window_msec, longest_window_msec);
}

void http_server_stop(struct http_server *srv)
{
	if (!srv)
		return;
	/* MHD_stop_daemon() closes the listening socket it was handed. */
	if (srv->mhd)
		MHD_stop_daemon(srv->mhd);
	else if (srv->fd >= 0)
		close(srv->fd);
	free_security(srv);
	pthread_mutex_destroy(&srv->auth_lock);
	pthread_mutex_destroy(&srv->rhythm_lock);
	free(srv);
}
