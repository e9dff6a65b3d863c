// SPDX-License-Identifier: GPL-2.0
/* memwatch-top, the terminal view, end to end in a real terminal (a private
 * tmux server per test) against a live daemon: at 80x24 and 200x60, through
 * a resize, against an unreachable daemon, against a daemon with HTTPS (a
 * private CA made by openssl) and basic authentication with right and wrong
 * credentials, with a process whose name is a terminal escape sequence, and
 * `memwatchd --top`, the alias that runs it. Needs root (the daemon loads
 * BPF; the escape test writes /sys/fs/cgroup); without it, exits 77. tmux and
 * openssl are required: without them the tests fail and say which Debian
 * package is missing.
 *
 * Every test is bounded and undoes what it creates (uitest.h: the journal). */
#include <check.h>
#include <crypt.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "term.h"
#include "workloads_test.h"

#ifndef MEMWATCH_TOP_PATH
#error "MEMWATCH_TOP_PATH must point at memwatch-top"
#endif
#ifndef OPENSSL_PATH
#define OPENSSL_PATH "/usr/bin/openssl"
#endif

#define SCREEN_TIMEOUT_MS 20000
#define RUN_TIMEOUT_MS 10000

/* ESC [ 2 J (erase the screen), then a marker. */
#define ESCAPE_NAME "\x1b[2Jmwpwn"
#define ESCAPE_SHOWN "?[2Jmwpwn"

#define FAULT_WORKERS 3
#define TITLE "memwatch-top  "

/* 500 ms windows; every series of the faults collector, so that the test's own
 * processes are exported whatever else runs on the host. */
static const char top_config[] = "# memwatch-top tests\n"
				 "[daemon]\n"
				 "window = 500ms\n"
				 "\n"
				 "[collector.memavail]\n"
				 "method = procfs\n"
				 "\n"
				 "[collector.faults]\n"
				 "top_k = 1000\n";

/* memwatch-top --url url [extra...] in a fresh terminal. */
static void top_start(struct term *t, const char *tag, int cols, int lines, const char *url, const char *const *extra)
{
	const char *argv[24] = { MEMWATCH_TOP_PATH, "--url", url };
	size_t n = 3;

	for (; extra && *extra && n < 23; extra++)
		argv[n++] = *extra;
	argv[n] = NULL;
	term_start(t, tag, cols, lines, argv);
}

/* The screen of a live daemon: the title with the URL, available memory
 * within (0, MemTotal] (the kernel's own figure), the collectors. */
static void assert_live_screen(const char *screen, const char *url)
{
	double avail, total = (double)mw_proc_meminfo_kb("MemTotal") * 1024;
	char line[2048];

	ck_assert_msg(strncmp(screen, TITLE, strlen(TITLE)) == 0 && strstr(screen, url) && strstr(screen, "q: quit"),
		      "no title line with the URL %s:\n%s", url, screen);
	ck_assert_msg(screen_line(screen, "Available ", line, sizeof(line)), "no Available line:\n%s", screen);
	avail = parse_bytes(line + strlen("Available "));
	ck_assert_msg(avail > 0 && avail <= total, "Available line \"%s\" has no byte value in (0, MemTotal %.0f]", line,
		      total);
	ck_assert_msg(screen_line(screen, "Collectors ", line, sizeof(line)), "no Collectors line:\n%s", screen);
	ck_assert_msg(strstr(line, "meminfo:") && strstr(line, "reclaim:"),
		      "the Collectors line does not name meminfo and reclaim: \"%s\"", line);
}

static const char *const live_needles[] = { "Available ", "Collectors ", NULL };

/* ==== a. a live daemon at 80x24: q, C-c, and memwatchd --top ==== */

static void top_live_run(struct mw_daemon *d, const char *key, const char *tag, bool alias)
{
	char url[64], *screen;
	struct term t;
	bool found;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d", d->port);
	if (alias)
		term_start(&t, tag, 80, 24, (const char *const[]){ MEMWATCHD_PATH, "--top", "--url", url, NULL });
	else
		top_start(&t, tag, 80, 24, url, NULL);
	screen = term_wait(&t, live_needles, SCREEN_TIMEOUT_MS, &found);
	ck_assert_msg(found, "memwatch-top did not show the daemon within %d ms; screen:\n%s", SCREEN_TIMEOUT_MS,
		      screen);
	assert_live_screen(screen, url);
	assert_fits(screen, 80, 24);
	free(screen);
	term_key_exits(&t, key);
}

START_TEST(test_top_live)
{
	struct mw_daemon *d;

	require_program(TMUX_PATH, "tmux");
	d = start_daemon_with(top_config);
	top_live_run(d, "q", "q", false);
	top_live_run(d, "C-c", "ctrlc", false);
	top_live_run(d, "q", "alias", true);
	mw_assert_clean_stop(d);
}
END_TEST

/* ==== b. the terminal's size: 200x60, and a resize ==== */

static void start_fault_workers(pid_t *pids, char names[][16])
{
	int i;

	for (i = 0; i < FAULT_WORKERS; i++) {
		snprintf(names[i], 16, "mwtop-fault%d", i);
		pids[i] = spawn_worker(names[i], WORK_TOUCH_SLOW, NULL, NULL);
	}
}

/* A worker's row in the faults table: "PID     NAME ... MINOR MAJOR"; its
 * minor faults in the window must be more than none and no more than the
 * kernel counts for the process in all (/proc/PID/stat, read after). */
static void assert_fault_row(const char *screen, pid_t pid, const char *name)
{
	char needle[64], path[64], *stat, *p;
	unsigned long long minflt = 0, majflt = 0;
	double minor = NAN, major = NAN;
	const char *row;
	int i;

	snprintf(needle, sizeof(needle), "%-7d %s ", (int)pid, name);
	row = strstr(screen, needle);
	ck_assert_msg(row != NULL, "no row \"%s\" in the faults table:\n%s", needle, screen);
	ck_assert_msg(sscanf(row + strlen(needle), "%lf %lf", &minor, &major) == 2,
		      "the row of %s has no minor and major counts: \"%.120s\"", name, row);
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	stat = mw_read_file(path, NULL);
	ck_assert_msg(stat != NULL, "cannot read %s", path);
	/* Field 10 is minflt; the name (field 2) is in parentheses and has no ')'. */
	p = strrchr(stat, ')');
	ck_assert_msg(p != NULL, "%s: no ')'", path);
	for (i = 3, p += 2; i < 10 && p; i++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	ck_assert_msg(p && sscanf(p, "%llu", &minflt) == 1, "%s: no field 10", path);
	/* Field 12 is majflt (11 is cminflt). */
	for (; i < 12 && p; i++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	ck_assert_msg(p && sscanf(p, "%llu", &majflt) == 1, "%s: no field 12", path);
	free(stat);
	ck_assert_msg(minor > 0 && minor <= (double)minflt,
		      "%s: %.0f minor faults in the window on the screen, %llu in all in %s", name, minor, minflt, path);
	ck_assert_msg(major >= 0 && major <= (double)majflt,
		      "%s: %.0f major faults in the window on the screen, %llu in all in %s", name, major, majflt, path);
}

/* The title spans the terminal: the clock and "q: quit" end at its last column. */
static void assert_title_width(const char *screen, int cols)
{
	const char *nl = strchr(screen, '\n');
	size_t w = columns(screen, nl ? (size_t)(nl - screen) : strlen(screen));

	ck_assert_msg(w == (size_t)cols, "the title line is %zu columns wide, not the terminal's %d:\n%s", w, cols,
		      screen);
}

START_TEST(test_top_200x60)
{
	char url[64], names[FAULT_WORKERS][16], *screen;
	const char *needles[FAULT_WORKERS + 4];
	pid_t pids[FAULT_WORKERS];
	struct mw_daemon *d;
	struct term t;
	size_t widest;
	bool found;
	int i;

	require_program(TMUX_PATH, "tmux");
	d = start_daemon_with(top_config);
	start_fault_workers(pids, names);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", d->port);
	top_start(&t, "wide", 200, 60, url, NULL);
	needles[0] = "Available ";
	needles[1] = "Collectors ";
	needles[2] = "Top faulting processes";
	for (i = 0; i < FAULT_WORKERS; i++)
		needles[3 + i] = names[i];
	needles[3 + FAULT_WORKERS] = NULL;
	screen = term_wait(&t, needles, SCREEN_TIMEOUT_MS, &found);
	ck_assert_msg(found, "memwatch-top at 200x60 did not list the %d workers as faulting within %d ms:\n%s",
		      FAULT_WORKERS, SCREEN_TIMEOUT_MS, screen);
	assert_live_screen(screen, url);
	widest = assert_fits(screen, 200, 60);
	ck_assert_msg(widest == 200, "the widest line is %zu columns on a 200-column terminal", widest);
	assert_title_width(screen, 200);
	for (i = 0; i < FAULT_WORKERS; i++)
		assert_fault_row(screen, pids[i], names[i]);
	free(screen);
	term_key_exits(&t, "q");
	for (i = 0; i < FAULT_WORKERS; i++)
		stop_worker(pids[i]);
	mw_assert_clean_stop(d);
}
END_TEST

/* With --interval 3600 memwatch-top asks the daemon once; every later screen
 * is a redraw for the terminal's new size, not a refresh. */
START_TEST(test_top_resize)
{
	char url[64], names[FAULT_WORKERS][16], *screen;
	pid_t pids[FAULT_WORKERS];
	struct mw_daemon *d;
	struct term t;
	bool found;
	int i;

	require_program(TMUX_PATH, "tmux");
	d = start_daemon_with(top_config);
	start_fault_workers(pids, names);
	/* Two windows with the workers in them before the one fetch. */
	ck_assert_msg(mw_poll_metric(d->port, "memwatch_process_minor_faults_total", "comm=\"mwtop-fault0\"",
				     SCREEN_TIMEOUT_MS, mw_pred_gt, 0, NULL),
		      "the daemon did not export mwtop-fault0's faults");
	mw_sleep_ms(1000);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", d->port);
	top_start(&t, "resize", 80, 24, url, (const char *const[]){ "--interval", "3600", NULL });
	screen = term_wait(&t, live_needles, SCREEN_TIMEOUT_MS, &found);
	ck_assert_msg(found, "memwatch-top did not show the daemon within %d ms; screen:\n%s", SCREEN_TIMEOUT_MS,
		      screen);
	assert_live_screen(screen, url);
	assert_fits(screen, 80, 24);
	assert_title_width(screen, 80);
	ck_assert_msg(!strstr(screen, "Top faulting processes"), "a faults table at 80 columns:\n%s", screen);
	free(screen);

	resize(&t, 200, 60);
	screen = term_wait(&t, (const char *const[]){ "Top faulting processes", names[0], NULL }, SCREEN_TIMEOUT_MS,
			   &found);
	ck_assert_msg(found, "no redraw for 200x60 (faults table with %s) within %d ms:\n%s", names[0],
		      SCREEN_TIMEOUT_MS, screen);
	assert_live_screen(screen, url);
	assert_fits(screen, 200, 60);
	assert_title_width(screen, 200);
	assert_fault_row(screen, pids[0], names[0]);
	free(screen);

	resize(&t, 80, 24);
	screen = term_wait_for(&t, live_needles, "Top faulting processes", SCREEN_TIMEOUT_MS, &found);
	ck_assert_msg(found, "no redraw for 80x24 within %d ms:\n%s", SCREEN_TIMEOUT_MS, screen);
	assert_fits(screen, 80, 24);
	assert_title_width(screen, 80);
	free(screen);
	term_key_exits(&t, "q");
	for (i = 0; i < FAULT_WORKERS; i++)
		stop_worker(pids[i]);
	mw_assert_clean_stop(d);
}
END_TEST

/* ==== c. no daemon ==== */

/* With its attributes (capture-pane -e): the error in red, and never a
 * background colour of memwatch-top's own (SGR 40-47, 100-107, 48;...): the
 * terminal's background stays. */
static void assert_terminal_colors(const struct term *t)
{
	char *out = NULL;
	const char *p;
	int st = tmux(t, (const char *const[]){ "capture-pane", "-e", "-p", "-t", "top", NULL }, &out);

	ck_assert_msg(st == 0 && out, "tmux capture-pane -e failed (0x%x)", st);
	ck_assert_msg(strstr(out, "\x1b[31mCannot reach the daemon"), "the error is not red:\n%s", out);
	for (p = strstr(out, "\x1b["); p; p = strstr(p + 1, "\x1b[")) {
		int code = atoi(p + 2);

		ck_assert_msg(!((code >= 40 && code <= 48) || (code >= 100 && code <= 107)),
			      "a background colour (SGR %d) on the screen:\n%s", code, out);
	}
	free(out);
}

START_TEST(test_top_unreachable)
{
	char url[64], needle[64], *screen;
	struct term t;
	bool found;
	int port;

	require_program(TMUX_PATH, "tmux");
	port = mw_free_port();
	ck_assert_msg(port > 0, "no free port");
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	snprintf(needle, sizeof(needle), "(127.0.0.1:%d)", port);
	top_start(&t, "unreachable", 80, 24, url, NULL);
	screen = term_wait(&t, (const char *const[]){ "Cannot reach the daemon", needle, NULL }, SCREEN_TIMEOUT_MS,
			   &found);
	ck_assert_msg(found, "memwatch-top against %s did not say it cannot reach the daemon; screen:\n%s", url, screen);
	ck_assert_msg(strstr(screen, "Connection refused"), "no reason given:\n%s", screen);
	assert_fits(screen, 80, 24);
	free(screen);
	assert_terminal_colors(&t);
	term_key_exits(&t, "q");

	/* A terminal without colours (vt100): the same words, no colour at all. */
	term_start(&t, "unreachable-mono", 80, 24,
		   (const char *const[]){ "/usr/bin/env", "TERM=vt100", MEMWATCH_TOP_PATH, "--url", url, NULL });
	screen = term_wait(&t, (const char *const[]){ "Cannot reach the daemon", needle, NULL }, SCREEN_TIMEOUT_MS,
			   &found);
	ck_assert_msg(found, "memwatch-top on a vt100 did not say it cannot reach the daemon; screen:\n%s", screen);
	free(screen);
	{
		char *out = NULL;
		const char *p;

		ck_assert_int_eq(tmux(&t, (const char *const[]){ "capture-pane", "-e", "-p", "-t", "top", NULL }, &out),
				 0);
		for (p = strstr(out, "\x1b["); p; p = strstr(p + 1, "\x1b[")) {
			int code = atoi(p + 2);

			ck_assert_msg(code < 30 || code == 39 || code == 49, "colour (SGR %d) on a vt100:\n%s", code,
				      out);
		}
		free(out);
	}
	term_key_exits(&t, "q");
}
END_TEST

/* ==== d. HTTPS with a private CA, and basic authentication ==== */

static char tls_dir[300];

static void sh(const char *cmd)
{
	int st = system(cmd);

	ck_assert_msg(st == 0, "failed (status 0x%x): %s", st, cmd);
}

/* A CA, and a certificate it signs for 127.0.0.1 (the URL's host). */
static void make_ca_and_certificate(void)
{
	char cmd[2048];

	snprintf(tls_dir, sizeof(tls_dir), "%s/tls-XXXXXX", mw_tmp_root());
	ck_assert_ptr_nonnull(mkdtemp(tls_dir));
	snprintf(cmd, sizeof(cmd),
		 "cd %s && " OPENSSL_PATH " req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 "
		 "-subj /CN=memwatch-test-ca >/dev/null 2>&1 && " OPENSSL_PATH " req -newkey rsa:2048 -nodes "
		 "-keyout key.pem -out server.csr -subj /CN=localhost >/dev/null 2>&1 && "
		 "printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\n' >san.ext && " OPENSSL_PATH " x509 -req "
		 "-in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out cert.pem -days 2 -extfile san.ext "
		 ">/dev/null 2>&1",
		 tls_dir);
	sh(cmd);
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

static void write_password(const char *name, const char *line, char *path, size_t len)
{
	snprintf(path, len, "%s/%s", tls_dir, name);
	ck_assert_int_eq(mw_write_file(path, line), 0);
	chmod(path, 0600);
}

START_TEST(test_top_tls_auth)
{
	char conf[4096], listen[64], url[64], right[400], wrong[400], ca[400], *hash, *path, *screen;
	struct mw_daemon *d;
	struct term t;
	bool found;
	int port;

	require_program(TMUX_PATH, "tmux");
	require_program(OPENSSL_PATH, "openssl");
	make_ca_and_certificate();
	hash = hash_password("s3cret");
	snprintf(conf, sizeof(conf),
		 "[daemon]\nwindow = 500ms\ntls_cert_file = %s/cert.pem\ntls_key_file = %s/key.pem\n"
		 "basic_auth_users = ops:%s\n\n[collector.memavail]\nmethod = procfs\n",
		 tls_dir, tls_dir, hash);
	free(hash);
	path = mw_write_temp_file("tls.conf", conf);
	ck_assert_ptr_nonnull(path);
	port = mw_free_port();
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", port);
	d = mw_spawn((const char *const[]){ "--config", path, "--listen", listen, NULL }, false);
	ck_assert_ptr_nonnull(d);
	snprintf(url, sizeof(url), "https://127.0.0.1:%d", port);
	snprintf(ca, sizeof(ca), "%s/ca.pem", tls_dir);
	/* A line end after the password, as editors write it: not part of it. */
	write_password("right", "s3cret\n", right, sizeof(right));
	write_password("wrong", "s3cre\n", wrong, sizeof(wrong));

	/* The right credentials and the CA: the daemon's data. */
	top_start(&t, "tls-right", 80, 24, url,
		  (const char *const[]){ "--user", "ops", "--password-file", right, "--cacert", ca, NULL });
	screen = term_wait(&t, live_needles, SCREEN_TIMEOUT_MS, &found);
	ck_assert_msg(found, "memwatch-top over HTTPS with the right password showed no data within %d ms%s:\n%s",
		      SCREEN_TIMEOUT_MS, mw_running(d) ? "" : " (the daemon exited: log above)", screen);
	assert_live_screen(screen, url);
	assert_fits(screen, 80, 24);
	free(screen);
	term_key_exits(&t, "q");

	/* A wrong password: an authentication error, no data. */
	top_start(&t, "tls-wrong", 80, 24, url,
		  (const char *const[]){ "--user", "ops", "--password-file", wrong, "--cacert", ca, NULL });
	screen = term_wait(&t, (const char *const[]){ "Authentication failed", "HTTP 401", "wrong user", NULL },
			   SCREEN_TIMEOUT_MS, &found);
	ck_assert_msg(found, "memwatch-top with a wrong password did not say so within %d ms:\n%s", SCREEN_TIMEOUT_MS,
		      screen);
	ck_assert_msg(!strstr(screen, "Available "), "data shown with a wrong password:\n%s", screen);
	assert_fits(screen, 80, 24);
	free(screen);
	term_key_exits(&t, "q");

	/* No credentials at all. */
	top_start(&t, "tls-none", 80, 24, url, (const char *const[]){ "--cacert", ca, NULL });
	screen = term_wait(&t, (const char *const[]){ "Authentication failed", "wants a user", NULL },
			   SCREEN_TIMEOUT_MS, &found);
	ck_assert_msg(found, "memwatch-top without credentials did not say they are needed within %d ms:\n%s",
		      SCREEN_TIMEOUT_MS, screen);
	free(screen);
	term_key_exits(&t, "q");

	/* Without --cacert the private CA is unknown: a TLS error, no request. */
	top_start(&t, "tls-noca", 80, 24, url, (const char *const[]){ "--user", "ops", "--password-file", right, NULL });
	screen = term_wait(&t, (const char *const[]){ "Cannot reach the daemon", "TLS", "--cacert", NULL },
			   SCREEN_TIMEOUT_MS, &found);
	ck_assert_msg(found, "memwatch-top without the CA did not report the certificate within %d ms:\n%s",
		      SCREEN_TIMEOUT_MS, screen);
	ck_assert_msg(!strstr(screen, "Available "), "data shown over an unverified connection:\n%s", screen);
	assert_fits(screen, 80, 24);
	free(screen);
	term_key_exits(&t, "C-c");

	/* memwatchd --top with the daemon's configuration: https, the port given
	 * by --listen; the private CA is not known to it either. */
	term_start(&t, "tls-alias", 80, 24,
		   (const char *const[]){ MEMWATCHD_PATH, "--top", "--config", path, "--listen", listen, NULL });
	screen = term_wait(&t, (const char *const[]){ url, "Cannot reach the daemon", "TLS", NULL }, SCREEN_TIMEOUT_MS,
			   &found);
	ck_assert_msg(found, "memwatchd --top --config (TLS) did not run memwatch-top on %s within %d ms:\n%s", url,
		      SCREEN_TIMEOUT_MS, screen);
	free(screen);
	term_key_exits(&t, "q");
	free(path);

	ck_assert(mw_running(d));
	ck_assert_int_eq(mw_stop(d), 0);
}
END_TEST

/* ==== e. a process name that is a terminal escape sequence ==== */

/* A process named with ESC [ 2 J, stalled in memcg reclaim, so that the
 * stalled-processes table lists it: the screen shows the name, the terminal
 * obeys nothing. */
START_TEST(test_top_escape_in_comm)
{
	char url[64], sparse[512], *screen;
	struct mw_daemon *d;
	struct memcg cg;
	struct term t;
	pid_t worker;
	bool found;

	require_program(TMUX_PATH, "tmux");
	memcg_create(&cg, "top");
	sparse_create(sparse, sizeof(sparse), "top");
	d = start_daemon_with(top_config);
	worker = spawn_worker(ESCAPE_NAME, WORK_READ, cg.procs, sparse);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", d->port);
	top_start(&t, "escape", 80, 24, url, NULL);
	screen = term_wait(&t, (const char *const[]){ ESCAPE_SHOWN, NULL }, 3 * SCREEN_TIMEOUT_MS / 2, &found);
	ck_assert_msg(found, "memwatch-top did not list the worker as %s within %d ms; screen:\n%s", ESCAPE_SHOWN,
		      3 * SCREEN_TIMEOUT_MS / 2, screen);
	/* Had the terminal obeyed ESC [ 2 J, everything drawn before the name would be gone. */
	ck_assert_msg(strncmp(screen, TITLE, strlen(TITLE)) == 0 && strstr(screen, "Available "),
		      "the screen lost what was drawn before the process name:\n%s", screen);
	assert_fits(screen, 80, 24);
	free(screen);
	term_key_exits(&t, "q");

	stop_worker(worker);
	drop_file(sparse);
	memcg_remove(&cg);
	mw_assert_clean_stop(d);
}
END_TEST

/* ==== f. command line errors ==== */

/* prog args... without a terminal (stdin /dev/null); exit status and stderr. */
static int run_cli(const char *prog, const char *const *args, char **err)
{
	const char *argv[16] = { prog };
	char out_path[400], err_path[400];
	size_t n = 1;
	int st;

	for (; *args && n < 15; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	snprintf(out_path, sizeof(out_path), "%s/cli.out", mw_tmp_root());
	snprintf(err_path, sizeof(err_path), "%s/cli.err", mw_tmp_root());
	st = run_bounded(argv, out_path, err_path, NULL, RUN_TIMEOUT_MS);
	*err = mw_read_file(err_path, NULL);
	return st;
}

static void assert_exit(const char *prog, const char *const *args, int code, const char *want)
{
	char *err = NULL;
	int st = run_cli(prog, args, &err);

	ck_assert_msg(st != -1, "%s %s did not exit (killed)", prog, args[0] ? args[0] : "");
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == code, "%s %s %s: status 0x%x, expected exit %d; stderr: %s",
		      prog, args[0] ? args[0] : "", args[0] && args[1] ? args[1] : "", st, code, err ? err : "");
	ck_assert_msg(err && strstr(err, want), "stderr \"%s\" does not say \"%s\"", err ? err : "", want);
	ck_assert_msg(!mw_sanitizer_report(err), "sanitizer report: %.300s", mw_sanitizer_report(err));
	free(err);
}

START_TEST(test_top_cli_errors)
{
	char pw[400];

	snprintf(pw, sizeof(pw), "%s/cli-password", mw_tmp_root());
	ck_assert_int_eq(mw_write_file(pw, "secret\n"), 0);
	assert_exit(MEMWATCH_TOP_PATH, (const char *const[]){ "--url", "nonsense url with spaces", NULL }, 2,
		    "--url: 'nonsense url with spaces' is not http[s]://HOST[:PORT]");
	assert_exit(MEMWATCH_TOP_PATH, (const char *const[]){ "--url", "http://127.0.0.1:99999", NULL }, 2,
		    "is not http[s]://HOST[:PORT]");
	assert_exit(MEMWATCH_TOP_PATH, (const char *const[]){ "--url", "http://127.0.0.1:port", NULL }, 2,
		    "is not http[s]://HOST[:PORT]");
	assert_exit(MEMWATCH_TOP_PATH, (const char *const[]){ "--url", "ftp://127.0.0.1:21", NULL }, 2,
		    "is not http[s]://HOST[:PORT]");
	assert_exit(MEMWATCH_TOP_PATH, (const char *const[]){ "--url", "", NULL }, 2, "is not http[s]://HOST[:PORT]");
	assert_exit(MEMWATCH_TOP_PATH, (const char *const[]){ "--url", "https://ops:secret@127.0.0.1:9577", NULL }, 2,
		    "use --user and --password-file");
	assert_exit(MEMWATCH_TOP_PATH, (const char *const[]){ "--user", "ops", NULL }, 2,
		    "--user and --password-file go together");
	assert_exit(MEMWATCH_TOP_PATH, (const char *const[]){ "--password-file", pw, NULL }, 2,
		    "--user and --password-file go together");
	assert_exit(MEMWATCH_TOP_PATH,
		    (const char *const[]){ "--user", "ops", "--password-file", "/nonexistent/password", NULL }, 2,
		    "--password-file: /nonexistent/password: No such file or directory");
	assert_exit(MEMWATCH_TOP_PATH, (const char *const[]){ "--cacert", "/nonexistent/ca.pem", NULL }, 2,
		    "--cacert: /nonexistent/ca.pem: No such file or directory");
	assert_exit(MEMWATCH_TOP_PATH, (const char *const[]){ "--interval", "0", NULL }, 2,
		    "--interval: '0' is not 0.1 to 86400 seconds");
	assert_exit(MEMWATCH_TOP_PATH, (const char *const[]){ "--url", NULL }, 2, "needs a value");
	/* Well formed, but no terminal. */
	assert_exit(MEMWATCH_TOP_PATH, (const char *const[]){ "--user", "ops", "--password-file", pw, NULL }, 1,
		    "needs a terminal");
	/* The alias: its own errors, and memwatch-top's through it. */
	assert_exit(MEMWATCHD_PATH, (const char *const[]){ "--url", "http://127.0.0.1:9577", NULL }, 2,
		    "--url goes with --top");
	assert_exit(MEMWATCHD_PATH, (const char *const[]){ "--top", "--url", "nonsense url", NULL }, 2,
		    "memwatch-top: --url: 'nonsense url' is not http[s]://HOST[:PORT]");
}
END_TEST

static Suite *top_suite(void)
{
	Suite *s = suite_create("top");

	suite_add_tcase(s, ui_tcase("live", test_top_live));
	suite_add_tcase(s, ui_tcase("200x60", test_top_200x60));
	suite_add_tcase(s, ui_tcase("resize", test_top_resize));
	suite_add_tcase(s, ui_tcase("unreachable", test_top_unreachable));
	suite_add_tcase(s, ui_tcase("tls_auth", test_top_tls_auth));
	suite_add_tcase(s, ui_tcase("escape", test_top_escape_in_comm));
	suite_add_tcase(s, ui_tcase("cli", test_top_cli_errors));
	top_workloads_add(s);
	return s;
}

int main(void)
{
	return ui_main(top_suite(), (const char *const[]){ MEMWATCHD_PATH, MEMWATCH_TOP_PATH, NULL });
}
