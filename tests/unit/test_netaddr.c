/* SPDX-License-Identifier: GPL-2.0 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netaddr.h"

static void assert_v4(const char *text, const char *addr, unsigned port)
{
	struct listen_addr a;
	const struct sockaddr_in *sin = (const struct sockaddr_in *)&a.ss;
	struct in_addr want;

	memset(&a, 0xa5, sizeof(a));
	ck_assert_msg(listen_addr_parse(text, &a) == 0, "rejected: %s", text);
	ck_assert_int_eq(sin->sin_family, AF_INET);
	ck_assert_uint_eq(a.len, sizeof(struct sockaddr_in));
	ck_assert(!a.any);
	ck_assert_uint_eq(a.port, port);
	ck_assert_uint_eq(ntohs(sin->sin_port), port);
	ck_assert_int_eq(inet_pton(AF_INET, addr, &want), 1);
	ck_assert_uint_eq(sin->sin_addr.s_addr, want.s_addr);
}

static void assert_v6(const char *text, const char *addr, unsigned port)
{
	struct listen_addr a;
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)&a.ss;
	struct in6_addr want;

	memset(&a, 0xa5, sizeof(a));
	ck_assert_msg(listen_addr_parse(text, &a) == 0, "rejected: %s", text);
	ck_assert_int_eq(sin6->sin6_family, AF_INET6);
	ck_assert_uint_eq(a.len, sizeof(struct sockaddr_in6));
	ck_assert(!a.any);
	ck_assert_uint_eq(a.port, port);
	ck_assert_uint_eq(ntohs(sin6->sin6_port), port);
	ck_assert_int_eq(inet_pton(AF_INET6, addr, &want), 1);
	ck_assert_mem_eq(&sin6->sin6_addr, &want, sizeof(want));
	/* The rest of the sockaddr is zeroed, not left over. */
	ck_assert_uint_eq(sin6->sin6_flowinfo, 0);
	ck_assert_uint_eq(sin6->sin6_scope_id, 0);
}

START_TEST(test_ipv4)
{
	assert_v4("127.0.0.1:9615", "127.0.0.1", 9615);
	assert_v4("0.0.0.0:80", "0.0.0.0", 80);
	assert_v4("192.168.10.254:1", "192.168.10.254", 1);
	assert_v4("255.255.255.255:65535", "255.255.255.255", 65535);
}
END_TEST

START_TEST(test_ipv6)
{
	assert_v6("[::1]:9615", "::1", 9615);
	assert_v6("[::]:9577", "::", 9577); /* explicit, so not the dual-stack wildcard */
	assert_v6("[fe80::1:2:3:4]:443", "fe80::1:2:3:4", 443);
	assert_v6("[2001:db8:0:0:0:0:0:1]:8080", "2001:db8::1", 8080);
	assert_v6("[::ffff:192.0.2.1]:65535", "::ffff:192.0.2.1", 65535);
	assert_v6("[ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255]:1",
		  "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255", 1);
}
END_TEST

START_TEST(test_wildcard)
{
	struct listen_addr a;
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)&a.ss;

	memset(&a, 0xa5, sizeof(a));
	ck_assert_int_eq(listen_addr_parse(":9577", &a), 0);
	ck_assert(a.any);
	ck_assert_uint_eq(a.port, 9577);
	ck_assert_int_eq(sin6->sin6_family, AF_INET6);
	ck_assert_uint_eq(a.len, sizeof(struct sockaddr_in6));
	ck_assert_uint_eq(ntohs(sin6->sin6_port), 9577);
	ck_assert_mem_eq(&sin6->sin6_addr, &in6addr_any, sizeof(in6addr_any));

	ck_assert_int_eq(listen_addr_parse(":1", &a), 0);
	ck_assert(a.any);
	ck_assert_uint_eq(a.port, 1);
	ck_assert_int_eq(listen_addr_parse(":65535", &a), 0);
	ck_assert_uint_eq(a.port, 65535);
}
END_TEST

START_TEST(test_bad_forms)
{
	static const char *const bad[] = {
		"",
		":",
		"9577",              /* no colon at all */
		"127.0.0.1",         /* no port */
		"127.0.0.1:",        /* empty port */
		"127.0.0.1:0",       /* port 0 */
		":0",
		"127.0.0.1:65536",   /* one too many */
		":65536",
		":99999",
		":123456",
		":00000",
		"127.0.0.1:80a",     /* letters */
		"127.0.0.1:abc",
		"127.0.0.1:0x50",
		"127.0.0.1:+80",
		"127.0.0.1:-80",
		"127.0.0.1: 80",
		"127.0.0.1:80 ",
		" 127.0.0.1:80",
		"127.0.0.1 :80",
		"::1:80",            /* IPv6 without brackets */
		"::1",
		"fe80::1:9577",
		"localhost:9577",    /* names are not looked up */
		"example.com:80",
		"ip6-localhost:80",
		"256.0.0.1:80",
		"1.2.3:80",
		"1.2.3.4.5:80",
		"01.2.3.4:80",
		"[::1]",             /* brackets without port */
		"[::1]:",
		"[::1]80",
		"[::1]:0",
		"[::1]:65536",
		"[::1]:80:80",
		"[::1]:x",
		"[]:80",
		"[::1:80",
		"::1]:80",
		"[[::1]]:80",
		"[::1]]:80",
		"[127.0.0.1]:80",    /* IPv4 in brackets */
		"[localhost]:80",
		"[fe80::1%eth0]:80", /* scope ids are not supported */
		"[:::1]:80",
		"[0000:0000:0000:0000:0000:0000:0000:0000:0000:0000:0000:0000:0000:0000:0001]:80",
		"127.0.0.1:80:80",
		"1.2.3.4:8080\n",
	};
	struct listen_addr a;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int r = listen_addr_parse(bad[i], &a);

		ck_assert_msg(r == -EINVAL, "\"%s\": got %d, want -EINVAL", bad[i], r);
	}
	ck_assert_int_eq(listen_addr_parse(NULL, &a), -EINVAL);
}
END_TEST

START_TEST(test_long_inputs)
{
	struct listen_addr a;
	char buf[512];

	/* A host part longer than any numeric address. */
	memset(buf, '1', sizeof(buf));
	buf[200] = ':';
	buf[201] = '8';
	buf[202] = '\0';
	ck_assert_int_eq(listen_addr_parse(buf, &a), -EINVAL);

	buf[0] = '[';
	buf[199] = ']';
	ck_assert_int_eq(listen_addr_parse(buf, &a), -EINVAL);

	/* Long port strings, even of zeros, are refused. */
	snprintf(buf, sizeof(buf), "127.0.0.1:%s", "0000000000000000000080");
	ck_assert_int_eq(listen_addr_parse(buf, &a), -EINVAL);
	snprintf(buf, sizeof(buf), "127.0.0.1:%s", "18446744073709551697");
	ck_assert_int_eq(listen_addr_parse(buf, &a), -EINVAL);
}
END_TEST

START_TEST(test_reuse_output)
{
	struct listen_addr a;

	/* A successful parse after another fully replaces the earlier result. */
	ck_assert_int_eq(listen_addr_parse(":9577", &a), 0);
	ck_assert(a.any);
	ck_assert_int_eq(listen_addr_parse("127.0.0.1:80", &a), 0);
	ck_assert(!a.any);
	ck_assert_uint_eq(a.len, sizeof(struct sockaddr_in));
	ck_assert_int_eq(a.ss.ss_family, AF_INET);
}
END_TEST

static Suite *netaddr_suite(void)
{
	Suite *s = suite_create("netaddr");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_ipv4);
	tcase_add_test(tc, test_ipv6);
	tcase_add_test(tc, test_wildcard);
	tcase_add_test(tc, test_bad_forms);
	tcase_add_test(tc, test_long_inputs);
	tcase_add_test(tc, test_reuse_output);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(netaddr_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
