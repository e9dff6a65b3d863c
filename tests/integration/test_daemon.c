// SPDX-License-Identifier: GPL-2.0
/* End-to-end tests of memwatchd: the real binary, real BPF, real /proc,
 * talked to over HTTP on 127.0.0.1 and over an sd_notify socket. Needs root. */
#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include "catalogue.h"
#include "helpers.h"

#ifndef CONF_DIR
#error "CONF_DIR must point at tests/integration/conf"
#endif

#define CONF_BASIC CONF_DIR "/basic.conf"
#define CONF_FAST CONF_DIR "/fast.conf"
#define CONF_PSI_MISSING CONF_DIR "/psi-missing.conf"
#define CONF_UNKNOWN_KEY CONF_DIR "/unknown-key.conf"
#define CONF_PROCFS_FALLBACKS CONF_DIR "/procfs-fallbacks.conf"

#define TEST_TIMEOUT_SEC 60
#define NOTIFY_TIMEOUT_MS 10000
#define POLL_TIMEOUT_MS 10000

#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* Runs after each test that passed its assertions (in check's fork mode a
 * failed assertion ends the test process at once; the daemon then gets
 * SIGTERM through PR_SET_PDEATHSIG). */
static void teardown(void)
{
	int killed = mw_cleanup_all();

	ck_assert_msg(killed == 0, "%d daemon(s) ignored SIGTERM and had to be killed", killed);
}

static struct mw_daemon *start_or_fail(const char *config, bool notify)
{
	struct mw_daemon *d = mw_start(config, NULL, notify);

	ck_assert_msg(d != NULL, "memwatchd with %s did not start serving /metrics (log above)",
		      config ? config : "no config");
	return d;
}

static char *scrape_or_fail(struct mw_daemon *d)
{
	char *body = mw_scrape(d->port);

	ck_assert_msg(body != NULL, "GET /metrics on port %d did not answer 200", d->port);
	return body;
}

static double metric_or_fail(const char *body, const char *name, const char *matcher)
{
	double v = NAN;

	ck_assert_msg(mw_metric(body, name, matcher, &v, NULL, 0), "no sample %s{%s} in:\n%s", name,
		      matcher ? matcher : "", body);
	return v;
}

static long long mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* After something nasty: the daemon still runs and still serves a normal scrape. */
static void assert_still_serving(struct mw_daemon *d, const char *after)
{
	struct mw_http_response resp;
	int r;

	r = mw_http_get(d->port, "/metrics", &resp);
	ck_assert_msg(r == 0 && resp.status == 200, "GET /metrics after %s: r=%d status %d", after, r,
		      resp.status);
	ck_assert_msg(mw_metric(resp.body, "memwatch_build_info", NULL, NULL, NULL, 0),
		      "/metrics after %s has no memwatch_build_info", after);
	mw_http_response_free(&resp);
	ck_assert_msg(mw_running(d), "memwatchd exited after %s", after);
}

/* A config file of our own, which a test may rewrite. */
static char *temp_config(const char *text)
{
	char *path = mw_write_temp_file("memwatchd.conf", text);

	ck_assert_msg(path != NULL, "cannot write a temporary config");
	return path;
}

/* ---- least privilege ---- */

/* Every thread (main, HTTP, event consumer) keeps only CAP_BPF and CAP_PERFMON. */
START_TEST(test_capabilities_dropped)
{
	struct mw_daemon *d = start_or_fail(CONF_BASIC, false);
	const unsigned long long want = 1ULL << 38 | 1ULL << 39;
	char dir[64], path[sizeof(dir) + 300], *text;
	struct dirent *de;
	unsigned threads = 0;
	DIR *tasks;

	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)d->pid);
	tasks = opendir(dir);
	ck_assert_msg(tasks != NULL, "cannot open %s", dir);
	while ((de = readdir(tasks))) {
		unsigned long long eff = 0, bnd = 0;
		const char *p;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/status", dir, de->d_name);
		text = mw_read_file(path, NULL);
		if (!text)
			continue; /* the thread went away */
		p = strstr(text, "CapEff:");
		ck_assert(p && sscanf(p, "CapEff: %llx", &eff) == 1);
		p = strstr(text, "CapBnd:");
		ck_assert(p && sscanf(p, "CapBnd: %llx", &bnd) == 1);
		ck_assert_msg(eff == want, "thread %s CapEff %llx, want %llx", de->d_name, eff, want);
		ck_assert_msg(bnd == want, "thread %s CapBnd %llx, want %llx", de->d_name, bnd, want);
		free(text);
		threads++;
	}
	closedir(tasks);
	ck_assert_msg(threads >= 2, "expected the HTTP and event threads too, saw %u", threads);
	mw_assert_clean_stop(d);
}
END_TEST

/* ---- /metrics basics ---- */

START_TEST(test_metrics_content_type_and_promtool)
{
	struct mw_daemon *d = start_or_fail(CONF_BASIC, false);
	struct mw_http_response resp;
	char ctype[256], *out = NULL;
	int rc;

	ck_assert_int_eq(mw_http_get(d->port, "/metrics", &resp), 0);
	ck_assert_int_eq(resp.status, 200);
	ck_assert_msg(mw_http_header(&resp, "Content-Type", ctype, sizeof(ctype)), "no Content-Type header");
	ck_assert_str_eq(ctype, METRICS_CONTENT_TYPE);
	ck_assert_msg(resp.body_len > 0, "empty /metrics body");

	rc = mw_promtool_check(resp.body, resp.body_len, &out);
	ck_assert_msg(rc == 0, "promtool check metrics exited %d:\n%s\non:\n%s", rc, out ? out : "",
		      resp.body);
	free(out);
	mw_http_response_free(&resp);

	/* HEAD is allowed too and carries the same type. */
	ck_assert_int_eq(mw_http_request(d->port, "HEAD", "/metrics", NULL, &resp), 0);
	ck_assert_int_eq(resp.status, 200);
	ck_assert_msg(mw_http_header(&resp, "Content-Type", ctype, sizeof(ctype)), "no Content-Type on HEAD");
	ck_assert_str_eq(ctype, METRICS_CONTENT_TYPE);
	mw_http_response_free(&resp);

	mw_assert_clean_stop(d);
}
END_TEST

/* The HELP text as exposition prints it: \\ and newline escaped. */
static void escaped_help(const char *help, char *buf, size_t len)
{
	size_t o = 0;

	for (; *help && o + 3 < len; help++) {
		if (*help == '\\' || *help == '\n')
			buf[o++] = '\\';
		buf[o++] = *help == '\n' ? 'n' : *help;
	}
	buf[o] = '\0';
}

/* What is served is what lib/catalogue.c says: no family outside it, and each
 * with the catalogue's TYPE and HELP. */
START_TEST(test_metrics_match_catalogue)
{
	struct mw_daemon *d = start_or_fail(CONF_BASIC, false);
	char *body, *line, *save = NULL, *log;
	size_t helps = 0, types = 0;

	/* A few windows, so that every collector has collected once. */
	ck_assert(mw_poll_metric(d->port, METRIC_NAME(MW_WINDOW_END_TIMESTAMP_SECONDS), NULL, POLL_TIMEOUT_MS,
				 mw_pred_gt, 0, NULL));
	sleep(2);
	body = scrape_or_fail(d);
	for (line = strtok_r(body, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const struct metric_desc *desc;
		char name[256], expected[1024];
		const char *text;
		bool help;

		if (line[0] != '#')
			continue;
		help = strncmp(line, "# HELP ", 7) == 0;
		ck_assert_msg(help || strncmp(line, "# TYPE ", 7) == 0, "unexpected comment line: %s", line);
		text = strchr(line + 7, ' ');
		ck_assert_msg(text && (size_t)(text - (line + 7)) < sizeof(name), "malformed: %s", line);
		memcpy(name, line + 7, (size_t)(text - (line + 7)));
		name[text - (line + 7)] = '\0';
		text++;
		desc = metric_find(name);
		ck_assert_msg(desc, "/metrics serves %s, which lib/catalogue.c does not have", name);
		if (help) {
			escaped_help(desc->help, expected, sizeof(expected));
			ck_assert_msg(strcmp(text, expected) == 0, "%s: served HELP \"%s\", catalogue \"%s\"", name, text,
				      expected);
			helps++;
		} else {
			ck_assert_msg(strcmp(text, metric_type_name(desc->type)) == 0, "%s: served TYPE %s, catalogue %s",
				      name, text, metric_type_name(desc->type));
			types++;
		}
	}
	ck_assert_uint_eq(helps, types);
	/* every collector of basic.conf and the daemon's own: far more than a handful */
	ck_assert_msg(types >= 60, "only %zu families served", types);
	free(body);
	/* Each family came from the module the catalogue names as its owner (the
	 * core checks every window and logs the first stranger). */
	log = mw_read_file(d->log_path, NULL);
	ck_assert_ptr_nonnull(log);
	ck_assert_msg(!strstr(log, "which the catalogue gives to"), "%s", log);
	free(log);
	mw_assert_clean_stop(d);
}
END_TEST

START_TEST(test_meminfo_matches_proc)
{
	struct mw_daemon *d = start_or_fail(CONF_BASIC, false);
	long long total_kb, avail_kb;
	double total, avail, amin, amax, diff;
	char *body;

	body = scrape_or_fail(d);
	/* Read right after the scrape: as close to "the same moment" as we can get. */
	total_kb = mw_proc_meminfo_kb("MemTotal");
	avail_kb = mw_proc_meminfo_kb("MemAvailable");
	ck_assert_msg(total_kb > 0 && avail_kb >= 0, "cannot read /proc/meminfo");

	total = metric_or_fail(body, "memwatch_memory_total_bytes", NULL);
	avail = metric_or_fail(body, "memwatch_memory_available_bytes", NULL);
	amin = metric_or_fail(body, "memwatch_memory_available_window_min_bytes", NULL);
	amax = metric_or_fail(body, "memwatch_memory_available_window_max_bytes", NULL);

	ck_assert_msg(total == (double)total_kb * 1024.0, "memwatch_memory_total_bytes %.0f != MemTotal %lld kB * 1024",
		      total, total_kb);
	diff = fabs(avail - (double)avail_kb * 1024.0);
	ck_assert_msg(diff <= 0.02 * (double)avail_kb * 1024.0,
		      "memwatch_memory_available_bytes %.0f is more than 2%% off MemAvailable %lld kB", avail,
		      avail_kb);
	ck_assert_msg(amin <= avail && avail <= amax, "window min %.0f <= last %.0f <= max %.0f does not hold",
		      amin, avail, amax);
	ck_assert_msg(metric_or_fail(body, "memwatch_collector_up", "collector=\"meminfo\"") == 1.0,
		      "meminfo collector not up");
	free(body);
	mw_assert_clean_stop(d);
}
END_TEST

START_TEST(test_kswapd_active)
{
	struct mw_daemon *d = start_or_fail(CONF_BASIC, false);
	char *body = scrape_or_fail(d);

	/* Exactly the state and attach mode the expectation table gives this kernel. */
	mw_assert_collector_expected(body, "kswapd", NULL);
	free(body);
	mw_assert_clean_stop(d);
}
END_TEST

/* ---- sd_notify ---- */

START_TEST(test_notify_ready_status_stopping)
{
	struct mw_daemon *d = start_or_fail(CONF_BASIC, true);
	char status[512];
	const char *msg;
	int st;

	msg = mw_notify_wait(d, "READY=1", NOTIFY_TIMEOUT_MS);
	ck_assert_msg(msg != NULL, "no READY=1 on the notify socket");
	/* The STATUS= may share READY's datagram or come on its own. */
	if (!mw_notify_field(msg, "STATUS", status, sizeof(status))) {
		d->notify_cursor = 0;
		msg = mw_notify_wait(d, "STATUS=", NOTIFY_TIMEOUT_MS);
		ck_assert_msg(msg != NULL, "no STATUS= on the notify socket");
		ck_assert(mw_notify_field(msg, "STATUS", status, sizeof(status)));
	}
	{
		/* "A/N collectors active": as many active as the expectation table
		 * says for this kernel, the others named as degraded. */
		static const char *const names[] = { "meminfo", "psi", "kswapd", "reclaim", "alloc", "faults",
						     "memavail", "oom", "cgroup", "compaction" };
		unsigned active = 0, enabled = 0, want_active = 0, want_degraded = 0;
		bool known = true;
		size_t i;

		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			struct mw_expectation want;

			if (mw_expectation("host", names[i], &want) < 0) {
				known = false;
				break;
			}
			if (strcmp(want.state, "active") == 0)
				want_active++;
			else if (strcmp(want.state, "degraded") == 0) {
				want_degraded++;
				ck_assert_msg(strstr(status, names[i]) != NULL, "STATUS=%s does not name the degraded %s",
					      status, names[i]);
			}
		}
		ck_assert_msg(sscanf(status, "%u/%u collectors active", &active, &enabled) == 2, "STATUS=%s", status);
		ck_assert_msg(!strstr(status, "failed"), "STATUS=%s", status);
		if (known)
			ck_assert_msg(active == want_active && enabled == want_active + want_degraded &&
					      (want_degraded > 0) == (strstr(status, "degraded") != NULL),
				      "STATUS=%s, want %u/%u active (collectors.tsv)", status, want_active,
				      want_active + want_degraded);
	}

	st = mw_stop(d);
	ck_assert_msg(!d->killed && WIFEXITED(st) && WEXITSTATUS(st) == 0, "exit status 0x%x after SIGTERM", st);
	msg = mw_notify_wait(d, "STOPPING=1", NOTIFY_TIMEOUT_MS);
	ck_assert_msg(msg != NULL, "no STOPPING=1 on the notify socket after SIGTERM");
	mw_assert_clean_stop(d);
}
END_TEST

/* ---- SIGHUP reload ---- */

static void expect_reload_cycle(struct mw_daemon *d)
{
	char usec[64], *end;
	const char *msg;
	unsigned long long v;

	msg = mw_notify_wait(d, "RELOADING=1", NOTIFY_TIMEOUT_MS);
	ck_assert_msg(msg != NULL, "no RELOADING=1 after SIGHUP");
	ck_assert_msg(mw_notify_field(msg, "MONOTONIC_USEC", usec, sizeof(usec)),
		      "RELOADING=1 without MONOTONIC_USEC: '%s'", msg);
	errno = 0;
	v = strtoull(usec, &end, 10);
	ck_assert_msg(errno == 0 && *end == '\0' && end != usec && v > 0, "MONOTONIC_USEC=%s is not a number", usec);
	msg = mw_notify_wait(d, "READY=1", NOTIFY_TIMEOUT_MS);
	ck_assert_msg(msg != NULL, "no READY=1 after RELOADING=1");
}

START_TEST(test_reload_broken_then_good)
{
	char *conf = temp_config("[daemon]\nwindow = 1s\n");
	struct mw_daemon *d = start_or_fail(conf, true);
	char needle_pos[512];
	double v = NAN;
	char *body;

	ck_assert_msg(mw_notify_wait(d, "READY=1", NOTIFY_TIMEOUT_MS) != NULL, "no READY=1 at startup");
	body = scrape_or_fail(d);
	ck_assert(metric_or_fail(body, "memwatch_window_seconds", NULL) == 1.0);
	ck_assert(metric_or_fail(body, "memwatch_config_reloads_total", "result=\"failure\"") == 0.0);
	free(body);

	/* A broken file: the reload must fail and change nothing. */
	ck_assert_int_eq(mw_write_file(conf, "[daemon]\nwindow = banana\n"), 0);
	ck_assert_int_eq(mw_signal(d, SIGHUP), 0);
	expect_reload_cycle(d);
	snprintf(needle_pos, sizeof(needle_pos), "%s:2:", conf);
	ck_assert_msg(mw_log_wait(d, POLL_TIMEOUT_MS, (const char *const[]){ needle_pos, "window", "banana", NULL }),
		      "no log line naming %s, line 2 and key window:\n%s", conf, mw_log(d));
	assert_still_serving(d, "a failed reload");
	ck_assert_msg(mw_poll_metric(d->port, "memwatch_config_reloads_total", "result=\"failure\"", POLL_TIMEOUT_MS,
				     mw_pred_eq, 1.0, &v),
		      "memwatch_config_reloads_total{result=\"failure\"} is %g, not 1", v);
	body = scrape_or_fail(d);
	ck_assert_msg(metric_or_fail(body, "memwatch_window_seconds", NULL) == 1.0,
		      "the window changed although the reload failed");
	ck_assert(metric_or_fail(body, "memwatch_config_reloads_total", "result=\"success\"") == 0.0);
	free(body);

	/* A good file with another window length. */
	ck_assert_int_eq(mw_write_file(conf, "[daemon]\nwindow = 500ms\n"), 0);
	ck_assert_int_eq(mw_signal(d, SIGHUP), 0);
	expect_reload_cycle(d);
	ck_assert_msg(mw_poll_metric(d->port, "memwatch_window_seconds", NULL, POLL_TIMEOUT_MS, mw_pred_eq, 0.5, &v),
		      "memwatch_window_seconds is %g after reloading window = 500ms", v);
	ck_assert_msg(mw_poll_metric(d->port, "memwatch_config_reloads_total", "result=\"success\"", POLL_TIMEOUT_MS,
				     mw_pred_eq, 1.0, &v),
		      "memwatch_config_reloads_total{result=\"success\"} is %g, not 1", v);
	body = scrape_or_fail(d);
	ck_assert(metric_or_fail(body, "memwatch_config_reloads_total", "result=\"failure\"") == 1.0);
	free(body);
	ck_assert(mw_log_wait(d, POLL_TIMEOUT_MS, (const char *const[]){ "Configuration reloaded from", conf, NULL }));
	assert_still_serving(d, "a good reload");
	mw_assert_clean_stop(d);
	free(conf);
}
END_TEST

/* ---- HTTP robustness ---- */

static void expect_status(struct mw_daemon *d, const char *method, const char *path, int want)
{
	struct mw_http_response resp;
	int r = mw_http_request(d->port, method, path, NULL, &resp);

	ck_assert_msg(r == 0 && resp.status == want, "%s %s: r=%d status %d, want %d", method, path, r,
		      resp.status, want);
	mw_http_response_free(&resp);
}

START_TEST(test_http_errors)
{
	static const char *const methods[] = { "POST", "PUT", "DELETE" };
	struct mw_daemon *d = start_or_fail(CONF_BASIC, false);
	struct mw_http_response resp;
	char allow[128];
	size_t i;

	expect_status(d, "GET", "/nonexistent", 404);
	expect_status(d, "GET", "/metrics/extra", 404);
	assert_still_serving(d, "404s");

	for (i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
		ck_assert_int_eq(mw_http_request(d->port, methods[i], "/metrics", "Content-Length: 0\r\n", &resp), 0);
		ck_assert_msg(resp.status == 405, "%s /metrics: status %d, want 405", methods[i], resp.status);
		ck_assert_msg(mw_http_header(&resp, "Allow", allow, sizeof(allow)), "%s: 405 without Allow", methods[i]);
		ck_assert_msg(strstr(allow, "GET") != NULL, "%s: Allow: %s has no GET", methods[i], allow);
		mw_http_response_free(&resp);
		assert_still_serving(d, methods[i]);
	}
	/* A POST with a body must not trip the daemon either. */
	{
		static const char req[] = "POST /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 11\r\n"
					  "Connection: close\r\n\r\nhello world";

		ck_assert_int_eq(mw_http_raw(d->port, req, sizeof(req) - 1, MW_IO_TIMEOUT_MS, &resp), 0);
		ck_assert_msg(resp.status == 405, "POST with body: status %d", resp.status);
		mw_http_response_free(&resp);
		assert_still_serving(d, "POST with a body");
	}
	mw_assert_clean_stop(d);
}
END_TEST

START_TEST(test_http_malformed)
{
	struct mw_daemon *d = start_or_fail(CONF_BASIC, false);
	struct mw_http_response resp;
	size_t big_len = 64 * 1024, len;
	char *big;
	unsigned char garbage[4096];
	unsigned seed = 12345;
	long long t0;

	/* A 64 KiB header line: far above the per-connection memory limit. */
	big = malloc(big_len + 256);
	ck_assert_ptr_nonnull(big);
	len = (size_t)sprintf(big, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Huge: ");
	memset(big + len, 'a', big_len);
	len += big_len;
	len += (size_t)sprintf(big + len, "\r\nConnection: close\r\n\r\n");
	ck_assert_int_eq(mw_http_raw(d->port, big, len, MW_IO_TIMEOUT_MS, &resp), 0);
	ck_assert_msg(resp.status == 431, "64 KiB header line: status %d, want 431", resp.status);
	mw_http_response_free(&resp);
	free(big);
	assert_still_serving(d, "a 64 KiB header line");

	/* Binary garbage, no HTTP at all; it ends in a blank line so that the
	 * server has to judge it rather than wait for the rest. */
	for (len = 0; len < sizeof(garbage) - 4; len++) {
		seed = seed * 1103515245u + 12345u;
		garbage[len] = (unsigned char)(seed >> 16);
	}
	memcpy(garbage + len, "\r\n\r\n", 4);
	/* A first line libmicrohttpd cannot split into method, URI and version
	 * is not answered: the connection closes at once (EOF long before our
	 * read timeout), which is what a scraper then sees. */
	t0 = mono_ms();
	ck_assert_int_eq(mw_http_raw(d->port, garbage, sizeof(garbage), MW_IO_TIMEOUT_MS, &resp), 0);
	ck_assert_msg(resp.raw_len == 0 && mono_ms() - t0 < MW_IO_TIMEOUT_MS / 2,
		      "garbage: %zu bytes back (status %d) after %lld ms; want the connection closed at once, unanswered",
		      resp.raw_len, resp.status, (long long)(mono_ms() - t0));
	mw_http_response_free(&resp);
	assert_still_serving(d, "garbage bytes");

	/* Garbage that ends in a blank line, so the server sees a complete "request". */
	{
		static const char junk[] = "\x01\x02\xff\xfe GARBAGE \x7f\r\n\x80\x81: \xc3\x28\r\n\r\n";

		ck_assert_int_eq(mw_http_raw(d->port, junk, sizeof(junk) - 1, MW_IO_TIMEOUT_MS, &resp), 0);
		ck_assert_msg(resp.status == 400, "terminated garbage: status %d, want 400", resp.status);
		mw_http_response_free(&resp);
		assert_still_serving(d, "terminated garbage");
	}

	/* A request line without an HTTP version (HTTP/0.9 style). */
	{
		static const char req[] = "GET /metrics\r\n\r\n";

		ck_assert_int_eq(mw_http_raw(d->port, req, sizeof(req) - 1, MW_IO_TIMEOUT_MS, &resp), 0);
		ck_assert_msg(resp.status == 400, "request line without version: status %d, want 400", resp.status);
		mw_http_response_free(&resp);
		assert_still_serving(d, "a request line without HTTP version");
	}

	/* Only blank lines (which a server skips while waiting for a request line),
	 * and an empty connection closed at once: no answer is expected. */
	ck_assert_int_eq(mw_http_raw(d->port, "\r\n\r\n", 4, 300, NULL), 0);
	ck_assert_int_eq(mw_http_raw(d->port, "", 0, 200, NULL), 0);
	assert_still_serving(d, "empty requests");
	mw_assert_clean_stop(d);
}
END_TEST

#define N_HALF_OPEN 200

START_TEST(test_http_half_open_connections)
{
	struct mw_daemon *d = start_or_fail(CONF_BASIC, false);
	int fds[N_HALF_OPEN], i, opened = 0;
	bool served = false;
	int attempt;

	for (i = 0; i < N_HALF_OPEN; i++) {
		fds[i] = mw_connect(d->port, NULL);
		if (fds[i] >= 0)
			opened++;
	}
	ck_assert_msg(opened > 0, "could not open any connection");
	ck_assert_msg(mw_running(d), "memwatchd exited under %d idle connections", opened);

	/* The per-address connection limit keeps room for a scraper from another address. */
	for (attempt = 0; attempt < 20 && !served; attempt++) {
		struct mw_http_response resp;

		if (mw_http_get_from(d->port, "127.0.0.2", "/metrics", &resp) == 0)
			served = resp.status == 200;
		mw_http_response_free(&resp);
		if (!served)
			mw_sleep_ms(100);
	}
	ck_assert_msg(served, "with %d idle connections from 127.0.0.1, a scrape from 127.0.0.2 was not served", opened);

	for (i = 0; i < N_HALF_OPEN; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	ck_assert_msg(mw_running(d), "memwatchd exited after %d idle connections", opened);
	/* The server notices the closed sockets asynchronously: allow it a moment. */
	ck_assert_msg(mw_wait_ready(d, POLL_TIMEOUT_MS) == 0, "/metrics not 200 again after closing %d idle connections",
		      opened);
	assert_still_serving(d, "200 idle connections");
	mw_assert_clean_stop(d);
}
END_TEST

START_TEST(test_http_stalled_partial_request)
{
	static const char partial_headers[] = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: yes";
	static const char partial_line[] = "GET /metr";
	struct mw_daemon *d = start_or_fail(CONF_BASIC, false);
	int a, b;

	a = mw_connect(d->port, NULL);
	b = mw_connect(d->port, NULL);
	ck_assert(a >= 0 && b >= 0);
	ck_assert(write(a, partial_headers, sizeof(partial_headers) - 1) == (ssize_t)sizeof(partial_headers) - 1);
	ck_assert(write(b, partial_line, sizeof(partial_line) - 1) == (ssize_t)sizeof(partial_line) - 1);
	/* While both stall, others are served. */
	assert_still_serving(d, "two clients stalling mid-request");
	assert_still_serving(d, "two clients stalling mid-request (again)");
	close(a);
	close(b);
	assert_still_serving(d, "closing the stalled clients");
	mw_assert_clean_stop(d);
}
END_TEST

START_TEST(test_healthz_and_landing_page)
{
	struct mw_daemon *d = start_or_fail(CONF_BASIC, false);
	struct mw_http_response resp;
	char ctype[256];

	ck_assert_int_eq(mw_http_get(d->port, "/healthz", &resp), 0);
	ck_assert_int_eq(resp.status, 200);
	ck_assert_msg(strcmp(resp.body, "ok") == 0 || strcmp(resp.body, "ok\n") == 0, "/healthz body '%s'", resp.body);
	mw_http_response_free(&resp);

	ck_assert_int_eq(mw_http_get(d->port, "/", &resp), 0);
	ck_assert_int_eq(resp.status, 200);
	ck_assert(mw_http_header(&resp, "Content-Type", ctype, sizeof(ctype)));
	ck_assert_msg(strncmp(ctype, "text/html", 9) == 0, "/ has Content-Type %s", ctype);
	ck_assert_msg(strstr(resp.body, "href=\"/metrics\"") != NULL, "/ has no link to /metrics:\n%s", resp.body);
	mw_http_response_free(&resp);
	mw_assert_clean_stop(d);
}
END_TEST

/* /healthz is 200 while windows are published and 503 once none was for
 * three windows and a second: the main loop (which collects) is stopped by
 * ptrace alone, the HTTP thread keeps serving. */
START_TEST(test_healthz_503_when_collection_stalls)
{
	struct mw_daemon *d = start_or_fail(CONF_FAST, false);
	struct mw_http_response resp;
	long long stopped_at, stale_at = -1, deadline;
	int st;

	ck_assert_int_eq(mw_http_get(d->port, "/healthz", &resp), 0);
	ck_assert_msg(resp.status == 200, "/healthz %d before the stall", resp.status);
	mw_http_response_free(&resp);

	/* PTRACE_INTERRUPT stops the main thread (tid = pid) only. */
	ck_assert_msg(ptrace(PTRACE_SEIZE, d->pid, NULL, NULL) == 0, "PTRACE_SEIZE: %s", strerror(errno));
	ck_assert_msg(ptrace(PTRACE_INTERRUPT, d->pid, NULL, NULL) == 0, "PTRACE_INTERRUPT: %s", strerror(errno));
	ck_assert_msg(waitpid(d->pid, &st, __WALL) == d->pid && WIFSTOPPED(st), "main thread did not stop: 0x%x", st);
	stopped_at = mono_ms();
	for (deadline = stopped_at + POLL_TIMEOUT_MS; stale_at < 0 && mono_ms() < deadline; mw_sleep_ms(50)) {
		ck_assert_int_eq(mw_http_get(d->port, "/healthz", &resp), 0);
		ck_assert_msg(resp.status == 200 || resp.status == 503, "/healthz answered %d", resp.status);
		if (resp.status == 503) {
			stale_at = mono_ms();
			ck_assert_msg(strstr(resp.body, "stale") != NULL, "/healthz 503 body '%s'", resp.body);
		}
		mw_http_response_free(&resp);
	}
	ck_assert_msg(stale_at >= 0, "/healthz still 200 %d ms after collection stopped", POLL_TIMEOUT_MS);
	/* The last window ended at most one window (200 ms) before the stop;
	 * stale means 3 windows + 1 s without one: not before 1.4 s. */
	ck_assert_msg(stale_at - stopped_at >= 1400, "/healthz 503 only %lld ms after collection stopped",
		      stale_at - stopped_at);
	/* The HTTP thread still serves the last windows. */
	ck_assert_int_eq(mw_http_get(d->port, "/metrics", &resp), 0);
	ck_assert_msg(resp.status == 200, "/metrics %d while collection is stopped", resp.status);
	mw_http_response_free(&resp);

	ck_assert_msg(ptrace(PTRACE_DETACH, d->pid, NULL, NULL) == 0, "PTRACE_DETACH: %s", strerror(errno));
	ck_assert_msg(mw_poll_metric(d->port, "memwatch_build_info", NULL, POLL_TIMEOUT_MS, mw_pred_eq, 1.0, NULL),
		      "no /metrics after the main thread resumed");
	for (deadline = mono_ms() + POLL_TIMEOUT_MS, resp.status = 0; mono_ms() < deadline; mw_sleep_ms(50)) {
		ck_assert_int_eq(mw_http_get(d->port, "/healthz", &resp), 0);
		st = resp.status;
		mw_http_response_free(&resp);
		if (st == 200)
			break;
	}
	ck_assert_msg(st == 200, "/healthz %d after collection resumed", st);
	mw_assert_clean_stop(d);
}
END_TEST

/* True when the server closed fd (EOF or reset) within timeout_ms, without sending anything. */
static bool closed_unanswered(int fd, int timeout_ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	char c;

	if (poll(&pfd, 1, timeout_ms) <= 0)
		return false;
	return recv(fd, &c, 1, MSG_DONTWAIT) <= 0;
}

#define CONN_LIMIT 8
#define PER_IP_LIMIT (CONN_LIMIT / 2)

/* max_connections = 8: one client address holds at most 4. A 5th from
 * 127.0.0.1 is closed unanswered; 127.0.0.2 is still served; the 4 held
 * ones work, and once one closes, 127.0.0.1 gets a connection again. */
START_TEST(test_http_per_ip_limit)
{
	static const char get[] = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
	char *conf = temp_config("[daemon]\nwindow = 1s\nmax_connections = 8\n");
	struct mw_daemon *d = start_or_fail(conf, false);
	struct mw_http_response resp;
	int held[PER_IP_LIMIT], extra, i;

	for (i = 0; i < PER_IP_LIMIT; i++) {
		held[i] = mw_connect(d->port, "127.0.0.1");
		ck_assert_msg(held[i] >= 0, "connection %d: %s", i + 1, strerror(-held[i]));
	}
	/* The server has seen them all once each answers: then the 5th is over the limit. */
	for (i = 0; i < PER_IP_LIMIT; i++) {
		ck_assert_msg(mw_http_exchange(held[i], get, false, &resp) == 0 && resp.status == 200,
			      "held connection %d not served (status %d)", i + 1, resp.status);
		mw_http_response_free(&resp);
	}
	extra = mw_connect(d->port, "127.0.0.1");
	ck_assert_msg(extra >= 0, "connect: %s", strerror(-extra));
	ck_assert_msg(closed_unanswered(extra, MW_IO_TIMEOUT_MS),
		      "a %dth connection from 127.0.0.1 was kept open (per-IP limit %d of max_connections %d)",
		      PER_IP_LIMIT + 1, PER_IP_LIMIT, CONN_LIMIT);
	close(extra);
	ck_assert_int_eq(mw_http_get_from(d->port, "127.0.0.2", "/metrics", &resp), 0);
	ck_assert_msg(resp.status == 200, "127.0.0.2 not served while 127.0.0.1 holds %d: status %d", PER_IP_LIMIT,
		      resp.status);
	mw_http_response_free(&resp);
	ck_assert_msg(mw_http_exchange(held[0], get, false, &resp) == 0 && resp.status == 200,
		      "a held connection stopped working");
	mw_http_response_free(&resp);

	close(held[0]);
	/* The server notices the close asynchronously. */
	ck_assert_msg(mw_wait_ready(d, POLL_TIMEOUT_MS) == 0, "127.0.0.1 not served again after closing one of %d",
		      PER_IP_LIMIT);
	for (i = 1; i < PER_IP_LIMIT; i++)
		close(held[i]);
	mw_assert_clean_stop(d);
	free(conf);
}
END_TEST

/* An idle connection is closed after the 10 s timeout (the README's figure),
 * not before; one that keeps asking within it stays open. */
START_TEST(test_http_idle_timeout)
{
	static const char get[] = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
	struct mw_daemon *d = start_or_fail(CONF_BASIC, false);
	struct mw_http_response resp;
	int idle, busy, i;
	long long t0, closed_after = -1;

	idle = mw_connect(d->port, NULL);
	busy = mw_connect(d->port, NULL);
	ck_assert(idle >= 0 && busy >= 0);
	t0 = mono_ms();
	/* The busy one asks every 4 s, 4 times: 12 s, past the idle timeout. */
	for (i = 0; i < 4; i++) {
		long long next = t0 + (i + 1) * 4000LL;

		ck_assert_msg(mw_http_exchange(busy, get, false, &resp) == 0 && resp.status == 200,
			      "request %d on a connection used every 4 s: no answer (status %d)", i + 1, resp.status);
		mw_http_response_free(&resp);
		while (mono_ms() < next) {
			if (closed_after < 0 && closed_unanswered(idle, 100))
				closed_after = mono_ms() - t0;
			else
				mw_sleep_ms(closed_after < 0 ? 0 : 100);
		}
	}
	ck_assert_msg(closed_after >= 0, "an idle connection was still open after %lld ms", mono_ms() - t0);
	ck_assert_msg(closed_after >= 10000, "an idle connection was closed after %lld ms, before the 10 s timeout",
		      closed_after);
	fprintf(stderr, "http: idle connection closed after %lld ms\n", closed_after);
	close(idle);
	close(busy);
	mw_assert_clean_stop(d);
}
END_TEST

/* ---- command line and config errors ---- */

static void expect_exit(const char *const *args, int want, char **out, char **err)
{
	int st = mw_run(args, out, err);

	ck_assert_msg(st >= 0 && WIFEXITED(st), "memwatchd %s did not exit normally (0x%x)", args[0], st);
	ck_assert_msg(WEXITSTATUS(st) == want, "memwatchd %s %s exited %d, want %d; stdout:\n%s\nstderr:\n%s", args[0],
		      args[1] ? args[1] : "", WEXITSTATUS(st), want, *out ? *out : "", *err ? *err : "");
}

START_TEST(test_cli_errors)
{
	char *out, *err, *bad, missing[512], needle[700];

	expect_exit((const char *const[]){ "--no-such-flag", NULL }, 2, &out, &err);
	ck_assert_msg(strstr(err, "--no-such-flag") != NULL, "unknown flag not named: %s", err);
	free(out);
	free(err);

	expect_exit((const char *const[]){ "--listen", "nonsense", NULL }, 2, &out, &err);
	ck_assert_msg(strstr(err, "nonsense") != NULL && strstr(err, "listen") != NULL, "bad --listen: %s", err);
	free(out);
	free(err);

	expect_exit((const char *const[]){ "--config", NULL }, 2, &out, &err);
	ck_assert_msg(strstr(err, "config") != NULL, "--config without a value: %s", err);
	free(out);
	free(err);

	expect_exit((const char *const[]){ "--config", CONF_UNKNOWN_KEY, "--listen", "127.0.0.1:1", NULL }, 2, &out,
		    &err);
	ck_assert_msg(strstr(err, CONF_UNKNOWN_KEY ":3:") != NULL, "unknown key: no %s:3: in: %s", CONF_UNKNOWN_KEY,
		      err);
	ck_assert_msg(strstr(err, "frobnicate") != NULL, "unknown key not named: %s", err);
	free(out);
	free(err);

	/* A collector's own boolean key: file, line, section and key named, exit 2. */
	bad = temp_config("[daemon]\nwindow = 1s\n[collector.alloc]\ntrace = sometimes\n");
	expect_exit((const char *const[]){ "--config", bad, "--listen", "127.0.0.1:1", NULL }, 2, &out, &err);
	snprintf(needle, sizeof(needle), "%s:4: [collector.alloc] trace: 'sometimes' is not a boolean", bad);
	ck_assert_msg(strstr(err, needle) != NULL, "bad [collector.alloc] trace: no '%s' in: %s", needle, err);
	free(bad);
	free(out);
	free(err);

	snprintf(missing, sizeof(missing), "%s/does-not-exist.conf", mw_tmp_root());
	expect_exit((const char *const[]){ "--config", missing, "--listen", "127.0.0.1:1", NULL }, 2, &out, &err);
	ck_assert_msg(strstr(err, missing) != NULL, "missing config not named: %s", err);
	free(out);
	free(err);

	expect_exit((const char *const[]){ "--version", NULL }, 0, &out, &err);
	ck_assert_msg(strncmp(out, "memwatchd ", 10) == 0, "--version printed '%s'", out);
	free(out);
	free(err);

	expect_exit((const char *const[]){ "--help", NULL }, 0, &out, &err);
	ck_assert_msg(strstr(out, "--config") != NULL, "--help printed '%s'", out);
	free(out);
	free(err);
}
END_TEST

/* The row of a --check table for one collector: "NAME STATE MODE REASON". */
static bool check_row(const char *out, const char *name, char *state, size_t state_len, char *rest, size_t rest_len)
{
	size_t nlen = strlen(name);
	const char *p;

	for (p = out; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		const char *s, *e;

		if (strncmp(p, name, nlen) != 0 || (p[nlen] != ' ' && p[nlen] != '\t'))
			continue;
		for (s = p + nlen; *s == ' ' || *s == '\t'; s++)
			;
		e = s + strcspn(s, " \t\n");
		snprintf(state, state_len, "%.*s", (int)(e - s), s);
		snprintf(rest, rest_len, "%.*s", (int)strcspn(e, "\n"), e);
		return true;
	}
	return false;
}

/* Every collector's --check row is exactly its row in the expectation table. */
START_TEST(test_check_mode)
{
	static const char *const names[] = { "meminfo", "psi", "kswapd", "reclaim", "alloc", "faults", "memavail",
					     "oom", "cgroup", "compaction" };
	char *out, *err, state[64], rest[512], mode[64], why[1024];
	const char *reason;
	size_t i;

	expect_exit((const char *const[]){ "--check", "--config", CONF_BASIC, NULL }, 0, &out, &err);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct mw_expectation want;
		int n = 0;

		ck_assert_msg(check_row(out, names[i], state, sizeof(state), rest, sizeof(rest)),
			      "--check table has no %s row:\n%s", names[i], out);
		if (mw_expectation("host", names[i], &want) < 0)
			continue;
		ck_assert(sscanf(rest, " %63s %n", mode, &n) == 1);
		reason = rest + n;
		ck_assert_msg(mw_expect_matches(&want, names[i], state, mode, reason, why, sizeof(why)),
			      "--check: %s\n%s", why, out);
	}
	free(out);
	free(err);
}
END_TEST

/* memwatchd --check as nobody, without any capability: its exit status,
 * stdout in *out and stderr in *err. */
static int check_unprivileged(const char *config, char **out, char **err)
{
	char out_path[512], err_path[512];
	int st = -1, fd_out, fd_err;
	pid_t pid;

	snprintf(out_path, sizeof(out_path), "%s/check-nobody.out", mw_tmp_root());
	snprintf(err_path, sizeof(err_path), "%s/check-nobody.err", mw_tmp_root());
	fd_out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	fd_err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ck_assert(fd_out >= 0 && fd_err >= 0);
	fflush(NULL);
	pid = fork();
	ck_assert(pid >= 0);
	if (pid == 0) {
		/* From uid 0 to another uid: the kernel clears every capability. */
		if (dup2(fd_out, STDOUT_FILENO) < 0 || dup2(fd_err, STDERR_FILENO) < 0 || setgroups(0, NULL) < 0 ||
		    setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
			_exit(126);
		execl(MEMWATCHD_PATH, MEMWATCHD_PATH, "--check", "--config", config, (char *)NULL);
		_exit(127);
	}
	close(fd_out);
	close(fd_err);
	ck_assert(waitpid(pid, &st, 0) == pid);
	*out = mw_read_file(out_path, NULL);
	*err = mw_read_file(err_path, NULL);
	ck_assert(*out && *err);
	return st;
}

/* The exit rule of --check: 0 when every collector is active or degraded for
 * what the kernel lacks (test_check_mode, test_psi_degraded), 1 when one
 * failed or fell back for another reason, such as no privilege to load BPF. */
START_TEST(test_check_exit_unprivileged)
{
	char *out, *err, state[64], rest[512];
	int st;

	/* BPF collectors with no /proc fallback fail outright. */
	st = check_unprivileged(CONF_BASIC, &out, &err);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 1, "--check as nobody: status 0x%x\n%s\n%s", st, out, err);
	ck_assert_msg(check_row(out, "kswapd", state, sizeof(state), rest, sizeof(rest)), "no kswapd row:\n%s", out);
	ck_assert_msg(strcmp(state, "failed") == 0 && strstr(rest, "not permitted to load BPF programs"),
		      "--check as nobody: kswapd %s%s", state, rest);
	free(out);
	free(err);

	/* Only collectors that fall back to /proc: degraded, yet not for a kernel reason. */
	st = check_unprivileged(CONF_PROCFS_FALLBACKS, &out, &err);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 1, "--check as nobody, %s: status 0x%x\n%s\n%s",
		      CONF_PROCFS_FALLBACKS, st, out, err);
	ck_assert_msg(check_row(out, "faults", state, sizeof(state), rest, sizeof(rest)) &&
			      strcmp(state, "degraded") == 0 && strstr(rest, "procfs"),
		      "--check as nobody: faults %s%s", state, rest);
	ck_assert_msg(strstr(err, "Collector faults is degraded for lack of privilege") &&
			      strstr(err, "Collector memavail is degraded for lack of privilege"),
		      "--check as nobody does not say why it exits 1:\n%s", err);
	ck_assert_msg(!strstr(out, " failed "), "--check as nobody, %s: a collector failed:\n%s",
		      CONF_PROCFS_FALLBACKS, out);
	free(out);
	free(err);

	/* The same file as root: 0. */
	expect_exit((const char *const[]){ "--check", "--config", CONF_PROCFS_FALLBACKS, NULL }, 0, &out, &err);
	free(out);
	free(err);
}
END_TEST

/* ---- several instances ---- */

START_TEST(test_two_instances)
{
	struct mw_daemon *a = start_or_fail(CONF_BASIC, false);
	struct mw_daemon *b = start_or_fail(CONF_FAST, false);
	struct mw_daemon *both[2] = { a, b };
	double windows[2];
	char *body;
	int i;

	ck_assert_int_ne(a->port, b->port);
	for (i = 0; i < 2; i++) {
		body = scrape_or_fail(both[i]);
		ck_assert_msg(mw_metric(body, "memwatch_collector_info", "collector=\"kswapd\",state=\"active\"", NULL,
					NULL, 0),
			      "instance %d: kswapd not active:\n%s", i, body);
		ck_assert(metric_or_fail(body, "memwatch_collector_up", "collector=\"kswapd\"") == 1.0);
		windows[i] = metric_or_fail(body, "memwatch_window_seconds", NULL);
		free(body);
	}
	ck_assert_msg(windows[0] == 1.0 && windows[1] == 0.2, "windows %g and %g, want 1 and 0.2", windows[0],
		      windows[1]);

	mw_assert_clean_stop(a);
	assert_still_serving(b, "stopping the other instance");
	body = scrape_or_fail(b);
	ck_assert_msg(mw_metric(body, "memwatch_collector_info", "collector=\"kswapd\",state=\"active\"", NULL, NULL, 0),
		      "kswapd no longer active after the other instance stopped:\n%s", body);
	ck_assert(mw_metric(body, "memwatch_kswapd_wakeups_total", NULL, NULL, NULL, 0));
	free(body);
	/* Its windows keep coming, too. */
	body = scrape_or_fail(b);
	{
		double t0 = metric_or_fail(body, "memwatch_window_end_timestamp_seconds", NULL), t1 = t0;

		ck_assert_msg(mw_poll_metric(b->port, "memwatch_window_end_timestamp_seconds", NULL, POLL_TIMEOUT_MS,
					     mw_pred_gt, t0, &t1),
			      "no new window after the other instance stopped (%f)", t1);
	}
	free(body);
	mw_assert_clean_stop(b);
}
END_TEST

/* ---- degraded collectors ---- */

START_TEST(test_psi_degraded)
{
	struct mw_daemon *d = start_or_fail(CONF_PSI_MISSING, true);
	char labels[1024], state[64], reason[512], status[1024], *out, *err, rest[512];
	const char *msg;
	char *body;
	double v;

	body = scrape_or_fail(d);
	ck_assert_msg(mw_metric(body, "memwatch_collector_info", "collector=\"psi\"", &v, labels, sizeof(labels)),
		      "no collector_info for psi:\n%s", body);
	ck_assert(mw_label(labels, "state", state, sizeof(state)));
	ck_assert(mw_label(labels, "reason", reason, sizeof(reason)));
	ck_assert_msg(strcmp(state, "degraded") == 0, "psi state '%s', want degraded", state);
	ck_assert_msg(reason[0] != '\0', "psi degraded without a reason");
	ck_assert_msg(strstr(reason, "/nonexistent/pressure") != NULL, "psi reason does not name the path: '%s'",
		      reason);
	ck_assert_msg(metric_or_fail(body, "memwatch_collector_up", "collector=\"psi\"") == 0.0, "psi up");
	ck_assert_msg(!mw_metric(body, "memwatch_pressure_memory_some_seconds_total", NULL, NULL, NULL, 0),
		      "PSI series present although psi is degraded");
	/* The others carry on. */
	ck_assert(metric_or_fail(body, "memwatch_collector_up", "collector=\"meminfo\"") == 1.0);
	ck_assert(metric_or_fail(body, "memwatch_collector_up", "collector=\"kswapd\"") == 1.0);
	ck_assert(mw_metric(body, "memwatch_memory_total_bytes", NULL, NULL, NULL, 0));
	free(body);

	msg = mw_notify_wait(d, "READY=1", NOTIFY_TIMEOUT_MS);
	ck_assert_msg(msg != NULL, "no READY=1 with psi degraded");
	ck_assert_msg(mw_notify_field(msg, "STATUS", status, sizeof(status)) && strstr(status, "psi") &&
			      strstr(status, "degraded"),
		      "STATUS does not mention the degraded psi: '%s'", msg);
	ck_assert(mw_log_wait(d, POLL_TIMEOUT_MS, (const char *const[]){ "psi", "degraded", NULL }));
	assert_still_serving(d, "a degraded psi");
	mw_assert_clean_stop(d);

	expect_exit((const char *const[]){ "--check", "--config", CONF_PSI_MISSING, NULL }, 0, &out, &err);
	ck_assert_msg(check_row(out, "psi", state, sizeof(state), rest, sizeof(rest)), "no psi row:\n%s", out);
	ck_assert_msg(strcmp(state, "degraded") == 0, "--check: psi %s%s", state, rest);
	ck_assert_msg(strstr(rest, "/nonexistent/pressure") != NULL, "--check: psi reason '%s'", rest);
	ck_assert(check_row(out, "kswapd", state, sizeof(state), rest, sizeof(rest)));
	ck_assert_str_eq(state, "active");
	free(out);
	free(err);
}
END_TEST

/* ---- windows ---- */

START_TEST(test_windows_progress)
{
	struct mw_daemon *d = start_or_fail(CONF_FAST, false);
	double t0, t1 = 0, t2 = 0;
	char *body = scrape_or_fail(d);

	ck_assert(metric_or_fail(body, "memwatch_window_seconds", NULL) == 0.2);
	t0 = metric_or_fail(body, "memwatch_window_end_timestamp_seconds", NULL);
	free(body);
	ck_assert_msg(mw_poll_metric(d->port, "memwatch_window_end_timestamp_seconds", NULL, POLL_TIMEOUT_MS,
				     mw_pred_gt, t0, &t1),
		      "window end stayed at %f", t0);
	ck_assert_msg(mw_poll_metric(d->port, "memwatch_window_end_timestamp_seconds", NULL, POLL_TIMEOUT_MS,
				     mw_pred_gt, t1, &t2),
		      "window end stayed at %f", t1);
	ck_assert(t0 < t1 && t1 < t2);
	mw_assert_clean_stop(d);
}
END_TEST

/* ---- gzip and keep-alive ---- */

/* Inflates one gzip member; malloc'd and NUL-terminated, or NULL if it is not
 * exactly one valid gzip member. */
static char *gunzip(const char *in, size_t len, size_t *out_len)
{
	z_stream zs = { 0 };
	size_t cap = 65536;
	char *out = malloc(cap), *grown;
	int r = Z_OK;

	if (!out || inflateInit2(&zs, 16 + 15) != Z_OK) {
		free(out);
		return NULL;
	}
	zs.next_in = (Bytef *)in;
	zs.avail_in = (uInt)len;
	while (r != Z_STREAM_END) {
		if (cap - zs.total_out < 4096) {
			grown = realloc(out, cap * 2);
			if (!grown)
				break;
			out = grown;
			cap *= 2;
		}
		zs.next_out = (Bytef *)out + zs.total_out;
		zs.avail_out = (uInt)(cap - zs.total_out - 1);
		r = inflate(&zs, Z_NO_FLUSH);
		if (r != Z_OK && r != Z_STREAM_END)
			break;
	}
	if (r != Z_STREAM_END || zs.avail_in != 0) {
		inflateEnd(&zs);
		free(out);
		return NULL;
	}
	out[zs.total_out] = '\0';
	*out_len = zs.total_out;
	inflateEnd(&zs);
	return out;
}

static void assert_vary(const struct mw_http_response *resp, const char *what)
{
	char vary[128];

	ck_assert_msg(mw_http_header(resp, "Vary", vary, sizeof(vary)), "%s: no Vary header", what);
	ck_assert_msg(strcasestr(vary, "Accept-Encoding") != NULL, "%s: Vary: %s", what, vary);
}

/* A scrape with this Accept-Encoding must come back as plain exposition text. */
static void expect_plain(struct mw_daemon *d, const char *accept)
{
	struct mw_http_response resp;
	char hdr[160], enc[64];

	snprintf(hdr, sizeof(hdr), "Accept-Encoding: %s\r\n", accept);
	ck_assert_int_eq(mw_http_request(d->port, "GET", "/metrics", hdr, &resp), 0);
	ck_assert_int_eq(resp.status, 200);
	ck_assert_msg(!mw_http_header(&resp, "Content-Encoding", enc, sizeof(enc)),
		      "Accept-Encoding: %s got Content-Encoding: %s", accept, enc);
	ck_assert_msg(strncmp(resp.body, "# HELP ", 7) == 0, "Accept-Encoding: %s: body starts '%.20s'", accept,
		      resp.body);
	ck_assert_msg(mw_metric(resp.body, "memwatch_build_info", NULL, NULL, NULL, 0),
		      "Accept-Encoding: %s: no memwatch_build_info", accept);
	assert_vary(&resp, accept);
	mw_http_response_free(&resp);
}

START_TEST(test_metrics_gzip)
{
	struct mw_daemon *d = start_or_fail(CONF_BASIC, false);
	struct mw_http_response gz, plain;
	char ctype[256], enc[64], *text = NULL, *out = NULL;
	size_t text_len = 0;
	bool same_window = false;
	int attempt, rc;

	/* The gzip body is the same window's text, byte for byte: scrape both
	 * until they fall into one window (they tell by its end timestamp). */
	for (attempt = 0; attempt < 20 && !same_window; attempt++) {
		double t_gz = NAN, t_plain = NAN;

		ck_assert_int_eq(mw_http_request(d->port, "GET", "/metrics", "Accept-Encoding: gzip\r\n", &gz), 0);
		ck_assert_int_eq(gz.status, 200);
		ck_assert_msg(mw_http_header(&gz, "Content-Encoding", enc, sizeof(enc)), "gzip asked, no Content-Encoding");
		ck_assert_str_eq(enc, "gzip");
		ck_assert_msg(mw_http_header(&gz, "Content-Type", ctype, sizeof(ctype)), "no Content-Type");
		ck_assert_str_eq(ctype, METRICS_CONTENT_TYPE);
		assert_vary(&gz, "gzip");
		free(text);
		text = gunzip(gz.body, gz.body_len, &text_len);
		ck_assert_msg(text != NULL, "the gzip body (%zu bytes) does not inflate", gz.body_len);

		ck_assert_int_eq(mw_http_get(d->port, "/metrics", &plain), 0);
		ck_assert_int_eq(plain.status, 200);
		ck_assert_msg(!mw_http_header(&plain, "Content-Encoding", enc, sizeof(enc)), "plain scrape: %s", enc);
		assert_vary(&plain, "no Accept-Encoding");
		ck_assert_msg(gz.body_len * 3 < plain.body_len, "gzip %zu bytes, text %zu", gz.body_len, plain.body_len);

		t_gz = metric_or_fail(text, "memwatch_window_end_timestamp_seconds", NULL);
		t_plain = metric_or_fail(plain.body, "memwatch_window_end_timestamp_seconds", NULL);
		if (t_gz == t_plain) {
			same_window = true;
			ck_assert_uint_eq(text_len, plain.body_len);
			ck_assert_msg(memcmp(text, plain.body, text_len) == 0, "one window, two texts");
		}
		mw_http_response_free(&gz);
		mw_http_response_free(&plain);
	}
	ck_assert_msg(same_window, "20 pairs of scrapes never fell into one window");
	rc = mw_promtool_check(text, text_len, &out);
	ck_assert_msg(rc == 0, "promtool check metrics on the inflated body exited %d:\n%s", rc, out ? out : "");
	free(out);
	free(text);

	/* What other clients send; in each, gzip is acceptable. */
	ck_assert_int_eq(mw_http_request(d->port, "GET", "/metrics", "Accept-Encoding: deflate, GZIP;q=0.5, br\r\n", &gz), 0);
	ck_assert_msg(mw_http_header(&gz, "Content-Encoding", enc, sizeof(enc)) && strcmp(enc, "gzip") == 0,
		      "GZIP;q=0.5 not served gzip");
	mw_http_response_free(&gz);

	/* HEAD: the same headers, no body. */
	ck_assert_int_eq(mw_http_request(d->port, "HEAD", "/metrics", "Accept-Encoding: gzip\r\n", &gz), 0);
	ck_assert_int_eq(gz.status, 200);
	ck_assert_msg(mw_http_header(&gz, "Content-Encoding", enc, sizeof(enc)) && strcmp(enc, "gzip") == 0,
		      "HEAD with gzip: no Content-Encoding");
	ck_assert_uint_eq(gz.body_len, 0);
	mw_http_response_free(&gz);

	expect_plain(d, "gzip;q=0");
	expect_plain(d, "gzip; q=0.0, identity");
	expect_plain(d, "identity");
	expect_plain(d, "deflate, br");
	expect_plain(d, "");
	expect_plain(d, "gzip;q=bogus");
	mw_assert_clean_stop(d);
}
END_TEST

/* Prometheus keeps its connection open between scrapes: so must we. */
START_TEST(test_http_keep_alive)
{
	static const char get_metrics[] = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: memwatchd-itest\r\n\r\n";
	static const char get_gzip[] = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept-Encoding: gzip\r\n\r\n";
	static const char get_missing[] = "GET /nonexistent HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
	static const char post_empty[] = "POST /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n";
	static const char head_health[] = "HEAD /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
	static const struct {
		const char *req;
		bool head;
		int status;
	} seq[] = {
		{ get_metrics, false, 200 }, { get_metrics, false, 200 }, { get_gzip, false, 200 },
		{ get_missing, false, 404 }, { post_empty, false, 405 }, { head_health, true, 200 },
		{ get_metrics, false, 200 },
	};
	struct mw_daemon *d = start_or_fail(CONF_BASIC, false);
	struct mw_http_response resp;
	char conn_hdr[64], enc[64];
	size_t i;
	int fd;

	fd = mw_connect(d->port, NULL);
	ck_assert_msg(fd >= 0, "connect: %s", strerror(-fd));
	for (i = 0; i < sizeof(seq) / sizeof(seq[0]); i++) {
		ck_assert_msg(mw_http_exchange(fd, seq[i].req, seq[i].head, &resp) == 0,
			      "request %zu on one connection got no answer: the server closed it", i + 1);
		ck_assert_msg(resp.status == seq[i].status, "request %zu: status %d, want %d", i + 1, resp.status,
			      seq[i].status);
		ck_assert_msg(!mw_http_header(&resp, "Connection", conn_hdr, sizeof(conn_hdr)) ||
			      strcasecmp(conn_hdr, "close") != 0, "request %zu answered with Connection: close", i + 1);
		if (seq[i].req == get_gzip)
			ck_assert_msg(mw_http_header(&resp, "Content-Encoding", enc, sizeof(enc)), "no gzip on keep-alive");
		if (seq[i].status == 200 && !seq[i].head && seq[i].req != get_gzip)
			ck_assert_msg(mw_metric(resp.body, "memwatch_build_info", NULL, NULL, NULL, 0),
				      "request %zu: not the exposition", i + 1);
		mw_http_response_free(&resp);
	}
	close(fd);
	assert_still_serving(d, "a keep-alive connection");
	mw_assert_clean_stop(d);
}
END_TEST

/* Nothing takes a body: one is answered at once and never read, whatever
 * size it claims, and the connection then closes. */
START_TEST(test_http_request_bodies)
{
	static const char *const reqs[] = {
		"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n\r\nhello",
		/* claims a terabyte, sends nothing of it */
		"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000000000000\r\n\r\n",
		"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n",
		"HEAD /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100000\r\n\r\nxyz",
		"POST /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000000000000\r\n\r\nabc",
		"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n",
	};
	static const int want[] = { 200, 200, 200, 200, 405, 200 };
	struct mw_daemon *d = start_or_fail(CONF_BASIC, false);
	size_t i;

	for (i = 0; i < sizeof(reqs) / sizeof(reqs[0]); i++) {
		struct mw_http_response resp;

		/* mw_http_raw reads until EOF or 5 s of silence: a server waiting
		 * for the body would show as no status, or as a test timeout. */
		ck_assert_int_eq(mw_http_raw(d->port, reqs[i], strlen(reqs[i]), MW_IO_TIMEOUT_MS, &resp), 0);
		ck_assert_msg(resp.status == want[i], "request %zu with a body: status %d, want %d", i + 1, resp.status,
			      want[i]);
		mw_http_response_free(&resp);
		assert_still_serving(d, "a request with a body");
	}
	mw_assert_clean_stop(d);
}
END_TEST

static TCase *tcase(const char *name)
{
	TCase *tc = tcase_create(name);

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_set_timeout(tc, TEST_TIMEOUT_SEC);
	return tc;
}

static Suite *daemon_suite(void)
{
	Suite *s = suite_create("memwatchd");
	TCase *tc;

	tc = tcase("metrics");
	tcase_add_test(tc, test_metrics_content_type_and_promtool);
	tcase_add_test(tc, test_metrics_match_catalogue);
	tcase_add_test(tc, test_meminfo_matches_proc);
	tcase_add_test(tc, test_kswapd_active);
	tcase_add_test(tc, test_capabilities_dropped);
	tcase_add_test(tc, test_windows_progress);
	suite_add_tcase(s, tc);

	tc = tcase("lifecycle");
	tcase_add_test(tc, test_notify_ready_status_stopping);
	tcase_add_test(tc, test_reload_broken_then_good);
	tcase_add_test(tc, test_two_instances);
	suite_add_tcase(s, tc);

	tc = tcase("http");
	tcase_add_test(tc, test_http_errors);
	tcase_add_test(tc, test_http_malformed);
	tcase_add_test(tc, test_http_half_open_connections);
	tcase_add_test(tc, test_http_stalled_partial_request);
	tcase_add_test(tc, test_healthz_and_landing_page);
	tcase_add_test(tc, test_metrics_gzip);
	tcase_add_test(tc, test_http_keep_alive);
	tcase_add_test(tc, test_http_request_bodies);
	tcase_add_test(tc, test_healthz_503_when_collection_stalls);
	tcase_add_test(tc, test_http_per_ip_limit);
	tcase_add_test(tc, test_http_idle_timeout);
	suite_add_tcase(s, tc);

	tc = tcase("cli");
	tcase_add_test(tc, test_cli_errors);
	tcase_add_test(tc, test_check_mode);
	tcase_add_test(tc, test_check_exit_unprivileged);
	suite_add_tcase(s, tc);

	tc = tcase("collectors");
	tcase_add_test(tc, test_psi_degraded);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr;
	int failed;

	if (geteuid() != 0) {
		fprintf(stderr, "memwatchd integration tests need root (BPF): skipping\n");
		return 77;
	}
	if (access(MEMWATCHD_PATH, X_OK) < 0) {
		fprintf(stderr, "%s: %m\n", MEMWATCHD_PATH);
		return 99;
	}
	if (mw_init_tmp_root() < 0) {
		fprintf(stderr, "cannot create a temporary directory: %m\n");
		return 99;
	}
	sr = srunner_create(daemon_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	if (failed) {
		mw_dump_daemon_logs(mw_tmp_root(), NULL);
		fprintf(stderr, "daemon logs and configs kept in %s\n", mw_tmp_root());
	} else {
		mw_remove_tmp_root();
	}
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
