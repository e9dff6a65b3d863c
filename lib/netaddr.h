/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMWATCH_NETADDR_H
#define MEMWATCH_NETADDR_H

#include <stdbool.h>
#include <sys/socket.h>

/* "127.0.0.1:9615", "[::1]:9615", or ":9615" for every address (IPv6 and IPv4). */
struct listen_addr {
	struct sockaddr_storage ss;
	socklen_t len;
	bool any; /* ":PORT": dual-stack wildcard */
	unsigned port;
};

/* Numeric addresses only: a name lookup at start-up can hang. Returns -EINVAL on a bad form. */
int listen_addr_parse(const char *text, struct listen_addr *out);

#endif
