// SPDX-License-Identifier: GPL-2.0
/* The daemon's JSON read by a real parser (python3's json module), and one
 * window of /api/v1/windows turned back into exposition lines, so that a test
 * can judge the window it wants among those the ring keeps instead of racing
 * for the newest one. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "helpers.h"

#define PYTHON_TIMEOUT_MS 30000

int mw_run_python(const char *script, const char *body, size_t len, const char *const *args, char **out)
{
	static unsigned seq;
	char in_path[300], out_path[300];
	const char *argv[16];
	int64_t deadline = mw_mono_ms() + PYTHON_TIMEOUT_MS;
	int fd, ofd, st = -1;
	size_t n = 0;
	pid_t pid;

	*out = NULL;
	snprintf(in_path, sizeof(in_path), "%s/json.%d.%u", mw_tmp_root(), (int)getpid(), seq);
	snprintf(out_path, sizeof(out_path), "%s/python.%d.%u", mw_tmp_root(), (int)getpid(), seq++);
	fd = open(in_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ck_assert_msg(fd >= 0, "cannot create %s", in_path);
	ck_assert(write(fd, body, len) == (ssize_t)len);
	close(fd);
	ofd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ck_assert_msg(ofd >= 0, "cannot create %s", out_path);

	argv[n++] = "python3";
	argv[n++] = "-c";
	argv[n++] = script;
	argv[n++] = in_path;
	for (; args && *args && n < 15; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	fflush(NULL);
	pid = fork();
	ck_assert_msg(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		if (dup2(ofd, STDOUT_FILENO) < 0 || dup2(ofd, STDERR_FILENO) < 0)
			_exit(127);
		setenv("PYTHONIOENCODING", "utf-8", 1);
		execvp("python3", (char *const *)argv);
		dprintf(STDERR_FILENO, "exec python3: %m\n");
		_exit(127);
	}
	close(ofd);
	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid)
			break;
		if (r < 0 && errno != EINTR)
			break;
		if (mw_mono_ms() >= deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			st = -1;
			break;
		}
		mw_sleep_ms(10);
	}
	*out = mw_read_file(out_path, NULL);
	if (!*out)
		*out = strdup("");
	unlink(in_path);
	unlink(out_path);
	return st;
}

/* Exit 3: no window ends after argv[2] yet; 4: the oldest window kept, not
 * the daemon's first (sequence number 1), started after it, so the one asked
 * for has left the ring. Labels are
 * escaped as the text format does, so mw_metric() reads the lines. */
static const char py_window_after[] =
	"import json, sys\n"
	"d = json.loads(open(sys.argv[1], 'rb').read().decode('utf-8'))\n"
	"after = float(sys.argv[2])\n"
	"ws = d['windows']\n"
	"if ws and ws[0]['start'] > after and ws[0]['seq'] > 1:\n"
	"    sys.exit(4)\n"
	"def esc(v):\n"
	"    return v.replace('\\\\', '\\\\\\\\').replace('\"', '\\\\\"').replace('\\n', '\\\\n')\n"
	"for w in ws:\n"
	"    if w['end'] <= after:\n"
	"        continue\n"
	"    print('memwatch_window_end_timestamp_seconds %.6f' % w['end'])\n"
	"    print('mw_test_window_seq %d' % w['seq'])\n"
	"    for family, series in w['metrics'].items():\n"
	"        for s in series:\n"
	"            if 'value' not in s or s['value'] is None:\n"
	"                continue\n"
	"            labels = ','.join('%s=\"%s\"' % (k, esc(v)) for k, v in s.get('labels', {}).items())\n"
	"            print('%s%s %.17g' % (family, '{' + labels + '}' if labels else '', s['value']))\n"
	"    sys.exit(0)\n"
	"sys.exit(3)\n";

char *mw_window_after(int port, double after, int timeout_ms)
{
	int64_t deadline = mw_mono_ms() + timeout_ms;
	char arg[64];

	snprintf(arg, sizeof(arg), "%.6f", after);
	for (;;) {
		struct mw_http_response resp;
		char *out;
		int st;

		ck_assert_int_eq(mw_http_get(port, "/api/v1/windows", &resp), 0);
		ck_assert_msg(resp.status == 200, "GET /api/v1/windows: status %d", resp.status);
		st = mw_run_python(py_window_after, resp.body, resp.body_len, (const char *const[]){ arg, NULL }, &out);
		mw_http_response_free(&resp);
		ck_assert_msg(st != -1 && WIFEXITED(st), "python3 on /api/v1/windows (status 0x%x):\n%s", st, out);
		if (WEXITSTATUS(st) == 0)
			return out;
		ck_assert_msg(WEXITSTATUS(st) == 3, "no window after %s in /api/v1/windows (exit %d):\n%s", arg,
			      WEXITSTATUS(st), out);
		free(out);
		ck_assert_msg(mw_mono_ms() < deadline, "no window ended after %s within %d ms", arg, timeout_ms);
		mw_sleep_ms(50);
	}
}
