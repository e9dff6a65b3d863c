// SPDX-License-Identifier: GPL-2.0
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include "netaddr.h"
#include "parse.h"

static int parse_port(const char *s, unsigned *port)
{
	uint64_t v;

	if (strlen(s) > 5 || parse_u64(s, s + strlen(s), &v) < 0)
		return -EINVAL;
	if (v == 0 || v > 65535)
		return -EINVAL;
	*port = (unsigned)v;
	return 0;
}

int listen_addr_parse(const char *text, struct listen_addr *out)
{
	char host[64];
	const char *colon;
	size_t hlen;
	unsigned port;

	memset(out, 0, sizeof(*out));
	if (!text)
		return -EINVAL;
	if (text[0] == '[') {
		const char *end = strchr(text, ']');

		if (!end || end[1] != ':')
			return -EINVAL;
		hlen = (size_t)(end - text - 1);
		colon = end + 1;
		if (hlen == 0 || hlen >= sizeof(host))
			return -EINVAL;
		memcpy(host, text + 1, hlen);
	} else {
		colon = strrchr(text, ':');
		if (!colon)
			return -EINVAL;
		hlen = (size_t)(colon - text);
		if (hlen >= sizeof(host) || memchr(text, ':', hlen))
			return -EINVAL;
		memcpy(host, text, hlen);
	}
	host[hlen] = '\0';
	if (parse_port(colon + 1, &port) < 0)
		return -EINVAL;
	out->port = port;

	if (hlen == 0) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&out->ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_addr = in6addr_any;
		sin6->sin6_port = htons((uint16_t)port);
		out->len = sizeof(*sin6);
		out->any = true;
		return 0;
	}
	if (text[0] != '[') {
		struct sockaddr_in *sin = (struct sockaddr_in *)&out->ss;

		if (inet_pton(AF_INET, host, &sin->sin_addr) != 1)
			return -EINVAL;
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)port);
		out->len = sizeof(*sin);
		return 0;
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&out->ss;

		if (inet_pton(AF_INET6, host, &sin6->sin6_addr) != 1)
			return -EINVAL;
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)port);
		out->len = sizeof(*sin6);
		return 0;
	}
}
