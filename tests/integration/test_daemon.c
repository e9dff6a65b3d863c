// SPDX-License-Identifier: GPL-2.0
/* End-to-end tests of memwatchd: the real binary, real BPF, real /proc,
 * talked to over HTTP on 127.0.0.1 and over an sd_notify socket. Needs root. */
#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "catalogue.h"
#include "test_daemon.h"

/* Runs after each test that passed its assertions (in check's fork mode a
 * failed assertion ends the test process at once; the daemon then gets
 * SIGTERM through PR_SET_PDEATHSIG). */
static void teardown(void)
{
	int killed = mw_cleanup_all();

	ck_assert_msg(killed == 0, "%d daemon(s) ignored SIGTERM and had to be killed", killed);
}

struct mw_daemon *start_or_fail(const char *config, bool notify)
{
	struct mw_daemon *d = mw_start(config, NULL, notify);

	ck_assert_msg(d != NULL, "memwatchd with %s did not start serving /metrics (log above)",
		      config ? config : "no config");
	return d;
}

char *scrape_or_fail(struct mw_daemon *d)
{
	char *body = mw_scrape(d->port);

	ck_assert_msg(body != NULL, "GET /metrics on port %d did not answer 200", d->port);
	return body;
}

double metric_or_fail(const char *body, const char *name, const char *matcher)
{
	double v = NAN;

	ck_assert_msg(mw_metric(body, name, matcher, &v, NULL, 0), "no sample %s{%s} in:\n%s", name,
		      matcher ? matcher : "", body);
	return v;
}

void assert_still_serving(struct mw_daemon *d, const char *after)
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

char *temp_config(const char *text)
{
	char *path = mw_write_temp_file("memwatchd.conf", text);

	ck_assert_msg(path != NULL, "cannot write a temporary config");
	return path;
}

/* ---- least privilege ---- */

/* Every thread (main, HTTP, event consumer) keeps only CAP_BPF and
 * CAP_PERFMON, and CAP_DAC_READ_SEARCH while the cgroup collector reads a
 * container runtime's state (docker_dir, podman_storage_dir: on by default). */
static void assert_capabilities(const char *config, unsigned long long want)
{
	struct mw_daemon *d = start_or_fail(config, false);
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

START_TEST(test_capabilities_dropped)
{
	const unsigned long long bpf = 1ULL << 38 | 1ULL << 39, dac_read_search = 1ULL << 2;
	char *text = mw_read_file(CONF_BASIC, NULL), *conf, *without;

	assert_capabilities(CONF_BASIC, bpf | dac_read_search);
	ck_assert_ptr_nonnull(text);
	ck_assert(asprintf(&without, "%s\n[collector.cgroup]\ndocker_dir = none\npodman_storage_dir = none\n", text) > 0);
	conf = temp_config(without);
	assert_capabilities(conf, bpf);
	free(conf);
	free(without);
	free(text);
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
	daemon_add_http_tests(tc);
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
	mw_keep_failures(sr);
	srunner_free(sr);
	if (failed) {
		mw_dump_daemon_logs(mw_tmp_root(), NULL);
		fprintf(stderr, "daemon logs and configs kept in %s\n", mw_tmp_root());
	} else {
		mw_remove_tmp_root();
	}
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
