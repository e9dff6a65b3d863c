// SPDX-License-Identifier: GPL-2.0
/* The listen address ([daemon] listen, --listen) -> listen_addr_parse(), and
 * back: a parsed address printed in canonical form parses to the same one. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include "fuzz.h"
#include "netaddr.h"

static void format(const struct listen_addr *a, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN];

	if (a->any) {
		snprintf(buf, len, ":%u", a->port);
	} else if (a->ss.ss_family == AF_INET6) {
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)&a->ss)->sin6_addr, host, sizeof(host));
		snprintf(buf, len, "[%s]:%u", host, a->port);
	} else {
		inet_ntop(AF_INET, &((const struct sockaddr_in *)&a->ss)->sin_addr, host, sizeof(host));
		snprintf(buf, len, "%s:%u", host, a->port);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_cstring(data, size), again[128];
	struct listen_addr a, b;
	int r;

	memset(&a, 0, sizeof(a));
	r = listen_addr_parse(text, &a);
	FUZZ_CHECK(r == 0 || r == -EINVAL);
	if (r == 0) {
		FUZZ_CHECK(a.port <= 65535);
		FUZZ_CHECK(a.ss.ss_family == AF_INET || a.ss.ss_family == AF_INET6);
		FUZZ_CHECK(a.len == (a.ss.ss_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6)));
		FUZZ_CHECK(ntohs(a.ss.ss_family == AF_INET ? ((struct sockaddr_in *)&a.ss)->sin_port
							     : ((struct sockaddr_in6 *)&a.ss)->sin6_port) == a.port);
		format(&a, again, sizeof(again));
		memset(&b, 0, sizeof(b));
		FUZZ_CHECK(listen_addr_parse(again, &b) == 0);
		FUZZ_CHECK(a.len == b.len && a.any == b.any && a.port == b.port);
		FUZZ_CHECK(memcmp(&a.ss, &b.ss, a.len) == 0);
	}
	free(text);
	return 0;
}
