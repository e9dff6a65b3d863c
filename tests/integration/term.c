// SPDX-License-Identifier: GPL-2.0
/* A terminal for the tests: a private tmux server (socket in the test's temp
 * tree) with one session "top"; see term.h. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "term.h"

/* tmux -u -L name ARGS..., bounded; returns the wait status, stdout in *out if asked. */
int tmux(const struct term *t, const char *const *args, char **out)
{
	const char *argv[48];
	char out_path[450], err_path[450];
	size_t n = 0;
	int st;

	argv[n++] = TMUX_PATH;
	argv[n++] = "-u";
	argv[n++] = "-L";
	argv[n++] = t->name;
	for (; *args && n < 47; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	snprintf(out_path, sizeof(out_path), "%s/tmux-%s.out", mw_tmp_root(), t->name);
	snprintf(err_path, sizeof(err_path), "%s/tmux-%s.err", mw_tmp_root(), t->name);
	st = run_bounded(argv, out_path, err_path, NULL, TMUX_TIMEOUT_MS);
	if (out)
		*out = mw_read_file(out_path, NULL);
	return st;
}

/* A private tmux server with one cols x lines session "top" running argv (a
 * UTF-8 locale). The pane's shell only waits for the program (its INT trap is
 * a no-op, which exec resets) and writes its exit status. */
void term_start(struct term *t, const char *tag, int cols, int lines, const char *const *argv)
{
	const char *script = "err=$1 st=$2; shift 2; trap : INT; LC_ALL=C.UTF-8 \"$@\" 2>\"$err\"; echo $? >\"$st\"";
	const char *args[48] = { "-f", "/dev/null", "new-session", "-d", "-s", "top", "-x", NULL, "-y", NULL,
				 "/bin/sh", "-c", script, "sh", t->err, t->status };
	char x[16], y[16], *err = NULL;
	size_t n = 16;
	int st;

	snprintf(t->name, sizeof(t->name), "memwatch-itest-%d-%s", (int)getpid(), tag);
	snprintf(t->status, sizeof(t->status), "%s/top-%s.status", mw_tmp_root(), tag);
	snprintf(t->err, sizeof(t->err), "%s/top-%s.stderr", mw_tmp_root(), tag);
	snprintf(x, sizeof(x), "%d", cols);
	snprintf(y, sizeof(y), "%d", lines);
	args[7] = x;
	args[9] = y;
	for (; *argv && n < 47; argv++)
		args[n++] = *argv;
	args[n] = NULL;
	t->cols = cols;
	t->lines = lines;
	unlink(t->status);
	journal_add("tmux", t->name);
	st = tmux(t, args, NULL);
	if (st != 0) {
		char path[450];

		snprintf(path, sizeof(path), "%s/tmux-%s.err", mw_tmp_root(), t->name);
		err = mw_read_file(path, NULL);
	}
	ck_assert_msg(st == 0, "tmux new-session failed (status 0x%x): %s", st, err ? err : "");
	free(err);
}

/* The screen, lines joined where tmux wrapped them, trailing blanks dropped. */
char *term_capture(const struct term *t)
{
	char *out = NULL, *p, *w;
	int st = tmux(t, (const char *const[]){ "capture-pane", "-p", "-J", "-t", "top", NULL }, &out);

	if (st != 0 || !out) {
		free(out);
		return NULL;
	}
	for (p = w = out; *p; p++) {
		if (*p == '\n')
			while (w > out && w[-1] == ' ')
				w--;
		*w++ = *p;
	}
	*w = '\0';
	return out;
}

/* Captures until every needle is on the screen and no avoid is (avoid may be
 * NULL); the last screen is returned either way. */
char *term_wait_for(const struct term *t, const char *const *needles, const char *avoid, int timeout_ms,
			   bool *found)
{
	int64_t deadline = mw_mono_ms() + timeout_ms;

	for (;;) {
		char *screen = term_capture(t);
		const char *const *n;
		bool all = screen != NULL;

		for (n = needles; all && *n; n++)
			all = strstr(screen, *n) != NULL;
		if (all && avoid)
			all = strstr(screen, avoid) == NULL;
		if (all || mw_mono_ms() >= deadline) {
			*found = all;
			return screen ? screen : strdup("(no screen: capture-pane failed)");
		}
		free(screen);
		mw_sleep_ms(200);
	}
}

char *term_wait(const struct term *t, const char *const *needles, int timeout_ms, bool *found)
{
	return term_wait_for(t, needles, NULL, timeout_ms, found);
}

/* Sends a key; the session must end (the command exited) within the bound, with status 0. */
void term_key_exits(const struct term *t, const char *key)
{
	int64_t deadline;
	char *status, *report_text;
	const char *report;
	int st;

	st = tmux(t, (const char *const[]){ "send-keys", "-t", "top", key, NULL }, NULL);
	ck_assert_msg(st == 0, "tmux send-keys %s failed (0x%x)", key, st);
	deadline = mw_mono_ms() + EXIT_TIMEOUT_MS;
	while (tmux(t, (const char *const[]){ "has-session", "-t", "top", NULL }, NULL) == 0) {
		ck_assert_msg(mw_mono_ms() < deadline, "the program in %s still runs %d ms after %s", t->name,
			      EXIT_TIMEOUT_MS, key);
		mw_sleep_ms(100);
	}
	status = mw_read_file(t->status, NULL);
	report_text = mw_read_file(t->err, NULL);
	report = report_text ? mw_sanitizer_report(report_text) : NULL;
	ck_assert_msg(status != NULL, "the session ended but the pane's shell wrote no exit status");
	ck_assert_msg(atoi(status) == 0 && status[0] == '0', "the program in %s exited %d after %s; stderr: %s", t->name,
		      atoi(status), key, report_text ? report_text : "");
	ck_assert_msg(!report, "sanitizer report from the program in the terminal: %.300s", report);
	free(status);
	free(report_text);
	/* The server ends with its last session; make sure. */
	tmux_kill_server(t->name);
}

/* Display columns of one line of UTF-8 (every character one column: the screen has no wide ones). */
size_t columns(const char *line, size_t len)
{
	size_t i, n = 0;

	for (i = 0; i < len; i++)
		if (((unsigned char)line[i] & 0xc0) != 0x80)
			n++;
	return n;
}

/* Every line within cols columns, at most lines lines; returns the widest. */
size_t assert_fits(const char *screen, int cols, int lines)
{
	const char *line = screen;
	size_t widest = 0;
	int n = 0;

	while (*line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line), w = columns(line, len);

		ck_assert_msg(w <= (size_t)cols, "line %d is %zu columns wide (> %d): \"%.*s\"\nscreen:\n%s", n + 1, w,
			      cols, (int)len, line, screen);
		widest = w > widest ? w : widest;
		n++;
		if (!nl)
			break;
		line = nl + 1;
	}
	ck_assert_msg(n <= lines, "%d lines on a %d-line screen:\n%s", n, lines, screen);
	return widest;
}

/* The line starting with prefix, copied (with its continuation lines, which start with two blanks). */
bool screen_line(const char *screen, const char *prefix, char *buf, size_t len)
{
	const char *p = screen;
	size_t o = 0;

	while (p && *p) {
		if (strncmp(p, prefix, strlen(prefix)) == 0) {
			for (;;) {
				const char *nl = strchr(p, '\n');
				size_t n = nl ? (size_t)(nl - p) : strlen(p);

				if (o + n + 2 >= len)
					return false;
				memcpy(buf + o, p, n);
				o += n;
				buf[o++] = ' ';
				if (!nl || strncmp(nl + 1, "  ", 2) != 0)
					break;
				p = nl + 1;
			}
			buf[o] = '\0';
			return true;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return false;
}

double parse_bytes(const char *text)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	char unit[16];
	double v, scale = 1;
	size_t i;

	if (sscanf(text, "%lf %15s", &v, unit) != 2)
		return NAN;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++, scale *= 1024)
		if (strcmp(unit, units[i]) == 0)
			return v * scale;
	return NAN;
}

void resize(const struct term *t, int cols, int lines)
{
	char x[16], y[16];
	int st;

	snprintf(x, sizeof(x), "%d", cols);
	snprintf(y, sizeof(y), "%d", lines);
	st = tmux(t, (const char *const[]){ "resize-window", "-t", "top", "-x", x, "-y", y, NULL }, NULL);
	ck_assert_msg(st == 0, "tmux resize-window -x %d -y %d failed (0x%x)", cols, lines, st);
}
