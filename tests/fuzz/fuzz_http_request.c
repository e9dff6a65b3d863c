// SPDX-License-Identifier: GPL-2.0
/* A raw HTTP request, through libmicrohttpd, to what the daemon takes from
 * it: the path as libmicrohttpd hands it over (http_endpoint_of), the
 * ?windows= argument, the Authorization: Basic header as libmicrohttpd
 * decodes it, and every Accept-Encoding line. Each input is one connection
 * (a socketpair handed to MHD_add_connection), driven by MHD_run(). */
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>
#include "accept_encoding.h"
#include "fuzz.h"
#include "http_request.h"

#if MHD_VERSION >= 0x00097002
#define MHD_RESULT enum MHD_Result
#else
#define MHD_RESULT int
#endif

/* The daemon's own limits (daemon/http.c). */
#define CONNECTION_MEMORY_LIMIT (32 * 1024)

static struct MHD_Daemon *mhd;
static char headers_seen;

static MHD_RESULT add_accept_encoding(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	FUZZ_CHECK(key != NULL);
	if (strcasecmp(key, MHD_HTTP_HEADER_ACCEPT_ENCODING) == 0)
		accept_encoding_parse(cls, value);
	return MHD_YES;
}

static MHD_RESULT respond(struct MHD_Connection *conn, unsigned code)
{
	static const char body[] = "x\n";
	struct MHD_Response *resp = MHD_create_response_from_buffer(sizeof(body) - 1, (void *)body,
								   MHD_RESPMEM_PERSISTENT);
	MHD_RESULT ret;

	if (!resp)
		return MHD_NO;
	ret = MHD_queue_response(conn, code, resp);
	MHD_destroy_response(resp);
	return ret;
}

static MHD_RESULT on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
			     const char *version, const char *upload_data, size_t *upload_data_size,
			     void **req_cls)
{
	struct accept_encoding ae;
	char *user, *password = NULL;
	const char *arg;
	enum http_endpoint e;
	uint64_t windows;

	FUZZ_CHECK(url && method && version);
	if (!*req_cls) {
		*req_cls = &headers_seen;
		return MHD_YES;
	}
	if (*upload_data_size > 0) {
		*upload_data_size = 0; /* the daemon answers before a body; here it is skipped */
		return MHD_YES;
	}
	/* The path comes percent-decoded, the query string cut off: "%3f" is a
	 * '?' in it, and "%00" ends it early; neither may reach an endpoint
	 * other than the one it spells. */
	e = http_endpoint_of(url);
	FUZZ_CHECK(e == HTTP_ENDPOINT_UNKNOWN || url[0] == '/');

	user = MHD_basic_auth_get_username_password(conn, &password);
	if (user) {
		/* Both come back as C strings whatever the header held. */
		FUZZ_CHECK(strlen(user) < CONNECTION_MEMORY_LIMIT);
		if (password)
			FUZZ_CHECK(!http_equal_constant_time(password, "not the password") ||
				   strcmp(password, "not the password") == 0);
		MHD_free(user);
	}
	if (password)
		MHD_free(password);

	accept_encoding_init(&ae);
	MHD_get_connection_values(conn, MHD_HEADER_KIND, add_accept_encoding, &ae);
	FUZZ_CHECK(ae.gzip >= -1 && ae.gzip <= 1000 && ae.identity >= -1 && ae.identity <= 1000);
	(void)accept_encoding_gzip(&ae);

	arg = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "windows");
	if (arg && http_windows_parse(arg, &windows) < 0)
		return respond(conn, MHD_HTTP_BAD_REQUEST);
	return respond(conn, e == HTTP_ENDPOINT_UNKNOWN ? MHD_HTTP_NOT_FOUND : MHD_HTTP_OK);
}

static void start(void)
{
	mhd = MHD_start_daemon(MHD_USE_NO_LISTEN_SOCKET, 0, NULL, NULL, on_request, NULL,
			       MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONNECTION_MEMORY_LIMIT,
			       MHD_OPTION_CONNECTION_TIMEOUT, 10u, MHD_OPTION_END);
	FUZZ_CHECK(mhd != NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sockaddr_in peer = { .sin_family = AF_INET, .sin_port = htons(40000),
				    .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	char reply[4096];
	int fds[2], i;
	bool closed = false;

	/* More than the socket buffer would block the write: the request size
	 * limit (32 KiB) is below that anyway. */
	if (size > 64 * 1024)
		return 0;
	if (!mhd)
		start();
	FUZZ_CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0);
	FUZZ_CHECK(fcntl(fds[0], F_SETFL, O_NONBLOCK) == 0);
	FUZZ_CHECK(write(fds[0], data, size) == (ssize_t)size);
	shutdown(fds[0], SHUT_WR);
	FUZZ_CHECK(MHD_add_connection(mhd, fds[1], (struct sockaddr *)&peer, sizeof(peer)) == MHD_YES);
	/* Run until libmicrohttpd closes its end (it has seen the end of the
	 * request), draining the answers so it never blocks on a full socket. */
	for (i = 0; i < 10000 && !closed; i++) {
		ssize_t n;

		MHD_run(mhd);
		while ((n = read(fds[0], reply, sizeof(reply))) > 0)
			;
		closed = n == 0;
	}
	FUZZ_CHECK(closed);
	close(fds[0]);
	return 0;
}
