/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCHD_HTTP_H
#define MEMWATCHD_HTTP_H

#include <stdint.h>
#include "config.h"
#include "macro.h"
#include "netaddr.h"
#include "ring.h"

struct event_channel;
struct http_server;

struct http_security {
	const char *tls_cert_file; /* both set: HTTPS */
	const char *tls_key_file;
	const struct basic_auth_users *users; /* none: no authentication */
};

/* Serves the ring's newest snapshot, and the channel's recent events (events
 * may be NULL; it must outlive the server). listen_fd >= 0 is a socket handed over
 * by systemd; otherwise addr is bound. Logs its own errors. */
int http_server_start(struct http_server **ret, const struct listen_addr *addr, const char *addr_text,
		      int listen_fd, unsigned max_connections, struct snapshot_ring *ring,
		      struct event_channel *events, uint32_t longest_window_msec, const struct http_security *sec);
/* A listening socket; bound before capabilities are dropped, so a port below 1024 works. */
int http_bind_listen(const struct listen_addr *addr, const char *text);
void http_server_set_longest_window(struct http_server *srv, uint32_t longest_window_msec);
/* When the next scrape of /metrics is due after after_mono, where the last
 * ones came at a steady rhythm (lib/scrape_rhythm.h); 0 when none is expected. */
uint64_t http_server_next_scrape(struct http_server *srv, uint64_t now_mono, uint64_t after_mono);
void http_server_stop(struct http_server *srv);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct http_server *, http_server_stop)

#endif
