// SPDX-License-Identifier: GPL-2.0
/* HTTPS and basic authentication, end to end: openssl makes a throwaway
 * certificate, curl is the client, everything on 127.0.0.1. */
#include <check.h>
#include <crypt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "helpers.h"

static char tls_dir[256];

static void make_certificate(void)
{
	char cmd[1024];

	snprintf(tls_dir, sizeof(tls_dir), "%s/tls-XXXXXX", mw_tmp_root());
	ck_assert_ptr_nonnull(mkdtemp(tls_dir));
	snprintf(cmd, sizeof(cmd),
		 "openssl req -x509 -newkey rsa:2048 -nodes -keyout %s/key.pem -out %s/cert.pem -days 2 "
		 "-subj /CN=localhost >/dev/null 2>&1",
		 tls_dir, tls_dir);
	ck_assert_msg(system(cmd) == 0, "openssl could not make a certificate");
}

/* curl's HTTP status for url, or 0 when the request failed. */
static int curl_status(const char *url, const char *userpass)
{
	char cmd[1024], out[16] = "";
	FILE *p;

	snprintf(cmd, sizeof(cmd), "curl -sk --max-time 5 -o /dev/null -w '%%{http_code}' %s%s%s '%s'",
		 userpass ? "-u '" : "", userpass ? userpass : "", userpass ? "'" : "", url);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	if (!fgets(out, sizeof(out), p))
		out[0] = '\0';
	pclose(p);
	return atoi(out);
}

static char *hash_password(const char *password)
{
	struct crypt_data cd;
	char *setting = crypt_gensalt_ra("$6$", 0, NULL, 0), *h;

	ck_assert_ptr_nonnull(setting);
	memset(&cd, 0, sizeof(cd));
	h = crypt_rn(password, setting, &cd, (int)sizeof(cd));
	free(setting);
	ck_assert_ptr_nonnull(h);
	return strdup(h);
}

START_TEST(test_https_served)
{
	char conf[4096], url[128], health[128], *hash = hash_password("s3cret"), *path;

	int port = mw_free_port(), code = 0, tries;
	char listen[64];
	struct mw_daemon *d;

	make_certificate();
	snprintf(conf, sizeof(conf),
		 "[daemon]\nwindow = 500ms\ntls_cert_file = %s/cert.pem\ntls_key_file = %s/key.pem\n"
		 "basic_auth_users = prometheus:%s\n",
		 tls_dir, tls_dir, hash);
	free(hash);
	path = mw_write_temp_file("tls.conf", conf);
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", port);
	d = mw_spawn((const char *const[]){ "--config", path, "--listen", listen, NULL }, false);
	free(path);
	ck_assert_ptr_nonnull(d);
	snprintf(url, sizeof(url), "https://127.0.0.1:%d/metrics", port);
	snprintf(health, sizeof(health), "https://127.0.0.1:%d/healthz", port);
	/* Bounded wait for the listener (not a timing assertion). */
	for (tries = 0; tries < 100 && code != 401; tries++) {
		code = curl_status(url, NULL);
		if (code != 401)
			usleep(100000);
	}
	ck_assert_int_eq(code, 401);
	ck_assert_int_eq(curl_status(url, "prometheus:wrong"), 401);
	ck_assert_int_eq(curl_status(url, "nobody:s3cret"), 401);
	ck_assert_int_eq(curl_status(url, "prometheus:s3cret"), 200);
	/* The cached password must not let a wrong one through afterwards. */
	ck_assert_int_eq(curl_status(url, "prometheus:s3cre"), 401);
	ck_assert_int_eq(curl_status(url, "prometheus:s3cret"), 200);
	ck_assert_int_eq(curl_status(health, NULL), 200);
	/* Plain HTTP on a TLS port gets no answer. */
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/metrics", port);
	ck_assert_int_ne(curl_status(url, "prometheus:s3cret"), 200);
	ck_assert(mw_running(d));
	ck_assert_int_eq(mw_stop(d), 0);
}
END_TEST

START_TEST(test_tls_misconfiguration)
{
	char conf[1024], listen[64], *path, *out = NULL, *err = NULL;
	int st;

	make_certificate();
	/* Key and certificate swapped: the daemon must refuse to start, naming both files. */
	snprintf(conf, sizeof(conf), "[daemon]\ntls_cert_file = %s/key.pem\ntls_key_file = %s/cert.pem\n", tls_dir,
		 tls_dir);
	path = mw_write_temp_file("bad-tls.conf", conf);
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", mw_free_port());
	st = mw_run((const char *const[]){ "--config", path, "--listen", listen, NULL }, &out, &err);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) != 0, "started with a swapped certificate and key");
	ck_assert_msg(err && strstr(err, "tls_cert_file") && strstr(err, "key.pem"), "stderr: %s", err ? err : "");
	free(out);
	free(err);
	free(path);

	/* Only one of the two files: a config error naming the line and key, exit 2. */
	snprintf(conf, sizeof(conf), "[daemon]\nwindow = 1s\ntls_cert_file = %s/cert.pem\n", tls_dir);
	path = mw_write_temp_file("half-tls.conf", conf);
	st = mw_run((const char *const[]){ "--config", path, NULL }, &out, &err);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 2);
	ck_assert_msg(err && strstr(err, ":3: [daemon] tls_cert_file:"), "stderr: %s", err ? err : "");
	free(out);
	free(err);
	free(path);

	/* A password in clear instead of a hash. */
	path = mw_write_temp_file("bad-auth.conf", "[daemon]\nbasic_auth_users = prometheus:secret\n");
	st = mw_run((const char *const[]){ "--config", path, NULL }, &out, &err);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 2);
	ck_assert_msg(err && strstr(err, ":2: [daemon] basic_auth_users:"), "stderr: %s", err ? err : "");
	free(out);
	free(err);
	free(path);
}
END_TEST

/* The user list is parsed when the configuration is loaded: a reload with a
 * bad list keeps the running users, a good one replaces them. */
START_TEST(test_auth_reload)
{
	char conf[2048], url[128], listen[64], *hash = hash_password("s3cret"), *other = hash_password("0ther"), *path;
	int port = mw_free_port(), code = 0, tries;
	struct mw_daemon *d;

	snprintf(conf, sizeof(conf), "[daemon]\nwindow = 500ms\nbasic_auth_users = prometheus:%s\n", hash);
	path = mw_write_temp_file("auth-reload.conf", conf);
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", port);
	d = mw_spawn((const char *const[]){ "--config", path, "--listen", listen, NULL }, false);
	ck_assert_ptr_nonnull(d);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/metrics", port);
	for (tries = 0; tries < 100 && code != 401; tries++) {
		code = curl_status(url, NULL);
		if (code != 401)
			usleep(100000);
	}
	ck_assert_int_eq(code, 401);
	ck_assert_int_eq(curl_status(url, "prometheus:s3cret"), 200);

	ck_assert_int_eq(mw_write_file(path, "[daemon]\nwindow = 500ms\nbasic_auth_users = grafana:0ther\n"), 0);
	ck_assert_int_eq(mw_signal(d, SIGHUP), 0);
	ck_assert(mw_log_wait(d, 10000, (const char *const[]){ "Reload failed", "basic_auth_users", NULL }));
	ck_assert_int_eq(curl_status(url, "prometheus:s3cret"), 200);
	ck_assert_int_eq(curl_status(url, "grafana:0ther"), 401);

	snprintf(conf, sizeof(conf), "[daemon]\nwindow = 500ms\nbasic_auth_users = grafana:%s\n", other);
	ck_assert_int_eq(mw_write_file(path, conf), 0);
	ck_assert_int_eq(mw_signal(d, SIGHUP), 0);
	ck_assert(mw_log_wait(d, 10000, (const char *const[]){ "Configuration reloaded", NULL }));
	ck_assert_int_eq(curl_status(url, "grafana:0ther"), 200);
	ck_assert_int_eq(curl_status(url, "prometheus:s3cret"), 401);
	ck_assert(mw_running(d));
	ck_assert_int_eq(mw_stop(d), 0);
	free(hash);
	free(other);
	free(path);
}
END_TEST

static void teardown(void)
{
	mw_cleanup_all();
}

int main(void)
{
	Suite *s = suite_create("security");
	TCase *tc = tcase_create("tls-auth");
	SRunner *sr;
	int failed;

	if (geteuid() != 0)
		return 77;
	if (system("command -v openssl >/dev/null && command -v curl >/dev/null") != 0) {
		fprintf(stderr, "openssl and curl are needed (packages openssl, curl)\n");
		return 1;
	}
	if (mw_init_tmp_root() < 0)
		return 1;
	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_https_served);
	tcase_add_test(tc, test_tls_misconfiguration);
	tcase_add_test(tc, test_auth_reload);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	if (!failed)
		mw_remove_tmp_root();
	return failed ? 1 : 0;
}
