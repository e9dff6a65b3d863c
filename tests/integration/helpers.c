// SPDX-License-Identifier: GPL-2.0
#include <arpa/inet.h>
#include <check.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <ftw.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "helpers.h"

#define MW_MAX_DAEMONS 32

static char tmp_root[128];
static struct mw_daemon *registry[MW_MAX_DAEMONS];
static size_t n_registry;

void mw_sleep_ms(int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Monotonic milliseconds: only ever used to bound waits, never asserted on. */
int64_t mw_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int mw_init_tmp_root(void)
{
	snprintf(tmp_root, sizeof(tmp_root), "/tmp/memwatchd-itest.XXXXXX");
	if (!mkdtemp(tmp_root)) {
		tmp_root[0] = '\0';
		return -errno;
	}
	return 0;
}

const char *mw_tmp_root(void)
{
	return tmp_root;
}

static int rm_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	remove(path);
	return 0;
}

void mw_remove_tmp_root(void)
{
	if (tmp_root[0])
		nftw(tmp_root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static int make_dir(char *buf, size_t len, const char *prefix)
{
	if (!tmp_root[0] && mw_init_tmp_root() < 0)
		return -errno;
	snprintf(buf, len, "%s/%s.XXXXXX", tmp_root, prefix);
	if (!mkdtemp(buf))
		return -errno;
	return 0;
}

int mw_free_port(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sin);
	int fd, port = -1;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&sin, &len) == 0)
		port = ntohs(sin.sin_port);
	close(fd);
	return port;
}

int mw_write_text(const char *path, const char *text)
{
	size_t len = strlen(text);
	int fd = open(path, O_WRONLY | O_CLOEXEC), r = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, text, len) != (ssize_t)len)
		r = errno ? -errno : -EIO;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	return r;
}

int mw_write_file(const char *path, const char *text)
{
	char tmp[512];
	size_t len = strlen(text);
	FILE *f;

	/* Write then rename, so the daemon never reads half a file. */
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "we");
	if (!f)
		return -errno;
	if (fwrite(text, 1, len, f) != len) {
		fclose(f);
		return -EIO;
	}
	if (fclose(f) != 0)
		return -errno;
	if (rename(tmp, path) < 0)
		return -errno;
	return 0;
}

char *mw_write_temp_file(const char *name, const char *text)
{
	char dir[256], *path;

	if (make_dir(dir, sizeof(dir), "conf") < 0)
		return NULL;
	if (asprintf(&path, "%s/%s", dir, name) < 0)
		return NULL;
	if (mw_write_file(path, text) < 0) {
		free(path);
		return NULL;
	}
	return path;
}

char *mw_read_file(const char *path, size_t *ret_len)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap), *nb;
	ssize_t n;
	int fd;

	if (!buf)
		return NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		free(buf);
		return NULL;
	}
	for (;;) {
		if (cap - len < 2048) {
			cap *= 2;
			nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				close(fd);
				return NULL;
			}
			buf = nb;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	if (ret_len)
		*ret_len = len;
	return buf;
}

/* ---- daemon processes ---- */

static void registry_add(struct mw_daemon *d)
{
	if (n_registry < MW_MAX_DAEMONS)
		registry[n_registry++] = d;
}

static void daemon_free(struct mw_daemon *d)
{
	size_t i;

	if (!d)
		return;
	if (d->notify_fd >= 0)
		close(d->notify_fd);
	for (i = 0; i < d->n_notify_msgs; i++)
		free(d->notify_msgs[i]);
	free(d);
}

struct mw_daemon *mw_spawn(const char *const *args, bool notify)
{
	const char *argv[64];
	struct mw_daemon *d;
	int in_fd = -1, out_fd = -1, err_fd = -1;
	pid_t parent = getpid(), pid;
	size_t n = 0;

	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->notify_fd = -1;
	if (make_dir(d->dir, sizeof(d->dir), "daemon") < 0)
		goto fail;
	snprintf(d->log_path, sizeof(d->log_path), "%s/stderr.log", d->dir);
	snprintf(d->out_path, sizeof(d->out_path), "%s/stdout.log", d->dir);

	if (notify) {
		struct sockaddr_un sun = { .sun_family = AF_UNIX };

		snprintf(d->notify_path, sizeof(d->notify_path), "%s/notify", d->dir);
		if (strlen(d->notify_path) >= sizeof(sun.sun_path)) {
			fprintf(stderr, "notify socket path too long: %s\n", d->notify_path);
			goto fail;
		}
		memcpy(sun.sun_path, d->notify_path, strlen(d->notify_path) + 1);
		d->notify_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (d->notify_fd < 0 || bind(d->notify_fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
			fprintf(stderr, "cannot bind notify socket %s: %m\n", d->notify_path);
			goto fail;
		}
	}

	argv[n++] = MEMWATCHD_PATH;
	for (; args && *args && n < 63; args++)
		argv[n++] = *args;
	argv[n] = NULL;

	in_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	out_fd = open(d->out_path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
	err_fd = open(d->log_path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
	if (in_fd < 0 || out_fd < 0 || err_fd < 0) {
		fprintf(stderr, "cannot open the daemon's stdio files in %s: %m\n", d->dir);
		goto fail;
	}

	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "fork: %m\n");
		goto fail;
	}
	if (pid == 0) {
		sigset_t none;

		/* If the test dies (a failed assertion in check's fork mode
		 * exits at once), the daemon must not outlive it. */
		if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != parent)
			_exit(127);
		if (dup2(in_fd, STDIN_FILENO) < 0 || dup2(out_fd, STDOUT_FILENO) < 0 ||
		    dup2(err_fd, STDERR_FILENO) < 0)
			_exit(127);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		unsetenv("NOTIFY_SOCKET");
		unsetenv("LISTEN_FDS");
		unsetenv("LISTEN_PID");
		unsetenv("LISTEN_FDNAMES");
		unsetenv("WATCHDOG_USEC");
		unsetenv("WATCHDOG_PID");
		if (notify)
			setenv("NOTIFY_SOCKET", d->notify_path, 1);
		execv(argv[0], (char *const *)argv);
		dprintf(STDERR_FILENO, "exec %s: %m\n", argv[0]);
		_exit(127);
	}
	close(in_fd);
	close(out_fd);
	close(err_fd);
	d->pid = pid;
	registry_add(d);
	return d;
fail:
	if (in_fd >= 0)
		close(in_fd);
	if (out_fd >= 0)
		close(out_fd);
	if (err_fd >= 0)
		close(err_fd);
	daemon_free(d);
	return NULL;
}

bool mw_running(struct mw_daemon *d)
{
	int st;
	pid_t r;

	if (!d || d->pid <= 0 || d->exited)
		return false;
	do
		r = waitpid(d->pid, &st, WNOHANG);
	while (r < 0 && errno == EINTR);
	if (r == d->pid) {
		d->exited = true;
		d->wait_status = st;
		return false;
	}
	return r == 0;
}

int mw_wait_exit(struct mw_daemon *d, int timeout_ms)
{
	int64_t deadline = mw_mono_ms() + timeout_ms;

	while (mw_running(d)) {
		if (mw_mono_ms() >= deadline)
			return -ETIMEDOUT;
		mw_sleep_ms(20);
	}
	return d->exited ? 0 : -ECHILD;
}

int mw_signal(struct mw_daemon *d, int sig)
{
	/* Only while not reaped: until then the PID is still ours. */
	if (!d || d->pid <= 0 || d->exited)
		return -ESRCH;
	if (kill(d->pid, sig) < 0)
		return -errno;
	return 0;
}

int mw_stop(struct mw_daemon *d)
{
	if (!d || d->pid <= 0)
		return -1;
	if (d->exited)
		return d->wait_status;
	if (mw_running(d)) {
		mw_signal(d, SIGTERM);
		if (mw_wait_exit(d, MW_STOP_TIMEOUT_MS) < 0 && !d->exited) {
			int st;

			fprintf(stderr, "memwatchd (pid %d) ignored SIGTERM for %d ms, killing it\n", (int)d->pid,
				MW_STOP_TIMEOUT_MS);
			mw_signal(d, SIGKILL);
			while (waitpid(d->pid, &st, 0) < 0 && errno == EINTR)
				;
			d->exited = true;
			d->wait_status = st;
			d->killed = true;
		}
	}
	return d->wait_status;
}

int mw_cleanup_all(void)
{
	int killed = 0;
	size_t i;

	for (i = 0; i < n_registry; i++) {
		mw_stop(registry[i]);
		if (registry[i]->killed)
			killed++;
		daemon_free(registry[i]);
		registry[i] = NULL;
	}
	n_registry = 0;
	return killed;
}

int mw_run(const char *const *args, char **out, char **err)
{
	struct mw_daemon *d = mw_spawn(args, false);
	int st;

	if (out)
		*out = NULL;
	if (err)
		*err = NULL;
	if (!d)
		return -1;
	if (mw_wait_exit(d, 30000) < 0) {
		fprintf(stderr, "memwatchd did not exit within 30 s\n");
		mw_stop(d);
		return -1;
	}
	st = d->wait_status;
	if (out)
		*out = mw_read_file(d->out_path, NULL);
	if (err)
		*err = mw_read_file(d->log_path, NULL);
	return st;
}

char *mw_log(const struct mw_daemon *d)
{
	char *s = mw_read_file(d->log_path, NULL);

	return s ? s : strdup("");
}

void mw_dump_log(const struct mw_daemon *d, const char *why)
{
	char *log = mw_log(d);

	fprintf(stderr, "---- memwatchd (pid %d) log, %s ----\n%s---- end of log ----\n", (int)d->pid, why,
		log ? log : "");
	free(log);
}

bool mw_log_wait(const struct mw_daemon *d, int timeout_ms, const char *const *needles)
{
	int64_t deadline = mw_mono_ms() + timeout_ms;

	for (;;) {
		char *log = mw_log(d), *line, *save = NULL;
		bool found = false;

		for (line = strtok_r(log, "\n", &save); line && !found; line = strtok_r(NULL, "\n", &save)) {
			const char *const *n;

			found = true;
			for (n = needles; *n; n++)
				if (!strstr(line, *n)) {
					found = false;
					break;
				}
		}
		free(log);
		if (found)
			return true;
		if (mw_mono_ms() >= deadline)
			return false;
		mw_sleep_ms(50);
	}
}

const char *mw_sanitizer_report(const char *log)
{
	static const char *const markers[] = {
		"runtime error:", "ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "ThreadSanitizer",
		"SUMMARY: UndefinedBehaviorSanitizer",
	};
	size_t i;

	for (i = 0; i < sizeof(markers) / sizeof(markers[0]); i++) {
		const char *p = strstr(log, markers[i]);

		if (p)
			return p;
	}
	return NULL;
}

int mw_wait_ready(struct mw_daemon *d, int timeout_ms)
{
	int64_t deadline = mw_mono_ms() + timeout_ms;

	for (;;) {
		struct mw_http_response resp;
		int status = 0;

		if (mw_http_get(d->port, "/metrics", &resp) == 0) {
			status = resp.status;
			mw_http_response_free(&resp);
		}
		if (status == 200)
			return 0;
		if (!mw_running(d))
			return -ECHILD;
		if (mw_mono_ms() >= deadline)
			return -ETIMEDOUT;
		mw_sleep_ms(50);
	}
}

struct mw_daemon *mw_start(const char *config, const char *const *extra, bool notify)
{
	int attempt;

	for (attempt = 0; attempt < 5; attempt++) {
		const char *args[48];
		char listen[64];
		struct mw_daemon *d;
		size_t n = 0;
		int port = mw_free_port(), r;
		bool port_taken;
		char *log;

		if (port <= 0)
			return NULL;
		snprintf(listen, sizeof(listen), "127.0.0.1:%d", port);
		if (config) {
			args[n++] = "--config";
			args[n++] = config;
		}
		args[n++] = "--listen";
		args[n++] = listen;
		for (; extra && *extra && n < 47; extra++)
			args[n++] = *extra;
		args[n] = NULL;

		d = mw_spawn(args, notify);
		if (!d)
			return NULL;
		d->port = port;
		r = mw_wait_ready(d, mw_start_timeout_ms());
		if (r == 0)
			return d;
		/* Someone else may have taken the port between our probe and the daemon's bind. */
		mw_stop(d);
		log = mw_log(d);
		port_taken = strstr(log, "Address already in use") != NULL;
		free(log);
		if (!port_taken) {
			mw_dump_log(d, r == -ETIMEDOUT ? "/metrics never answered 200" : "exited before serving");
			return NULL;
		}
	}
	return NULL;
}

/* ---- sd_notify ---- */

static void notify_drain(struct mw_daemon *d)
{
	char buf[4096];
	ssize_t n;

	if (d->notify_fd < 0)
		return;
	for (;;) {
		n = recv(d->notify_fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return;
		buf[n] = '\0';
		if (d->n_notify_msgs < MW_MAX_NOTIFY_MSGS)
			d->notify_msgs[d->n_notify_msgs++] = strdup(buf);
	}
}

static bool msg_has_line(const char *msg, const char *key)
{
	size_t klen = strlen(key);
	const char *p = msg;

	if (!msg)
		return false;
	while (*p) {
		if (strncmp(p, key, klen) == 0)
			return true;
		p = strchr(p, '\n');
		if (!p)
			break;
		p++;
	}
	return false;
}

const char *mw_notify_wait(struct mw_daemon *d, const char *key, int timeout_ms)
{
	int64_t deadline = mw_mono_ms() + timeout_ms;

	if (d->notify_fd < 0)
		return NULL;
	for (;;) {
		struct pollfd pfd = { .fd = d->notify_fd, .events = POLLIN };
		int64_t left;

		notify_drain(d);
		while (d->notify_cursor < d->n_notify_msgs) {
			const char *m = d->notify_msgs[d->notify_cursor++];

			if (msg_has_line(m, key))
				return m;
		}
		left = deadline - mw_mono_ms();
		if (left <= 0)
			return NULL;
		poll(&pfd, 1, left > 100 ? 100 : (int)left);
	}
}

bool mw_notify_field(const char *msg, const char *key, char *buf, size_t len)
{
	size_t klen = strlen(key);
	const char *p = msg;

	while (p && *p) {
		if (strncmp(p, key, klen) == 0 && p[klen] == '=') {
			const char *v = p + klen + 1;
			size_t vlen = strcspn(v, "\n");

			if (vlen >= len)
				vlen = len - 1;
			memcpy(buf, v, vlen);
			buf[vlen] = '\0';
			return true;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return false;
}

/* ---- HTTP ---- */

int mw_connect(int port, const char *src)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct timeval tv = { .tv_sec = MW_IO_TIMEOUT_MS / 1000 };
	int fd, flags, err = 0;
	socklen_t elen = sizeof(err);

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (src) {
		struct sockaddr_in from = { .sin_family = AF_INET };

		if (inet_pton(AF_INET, src, &from.sin_addr) != 1 ||
		    bind(fd, (struct sockaddr *)&from, sizeof(from)) < 0) {
			err = errno ? errno : EINVAL;
			close(fd);
			return -err;
		}
	}
	/* Non-blocking connect with a bound: a full accept queue must not hang the test. */
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0) {
		struct pollfd pfd = { .fd = fd, .events = POLLOUT };

		if (errno != EINPROGRESS) {
			err = errno;
			close(fd);
			return -err;
		}
		if (poll(&pfd, 1, MW_IO_TIMEOUT_MS) <= 0) {
			close(fd);
			return -ETIMEDOUT;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) < 0 || err) {
			close(fd);
			return -(err ? err : EIO);
		}
	}
	flags = fcntl(fd, F_GETFL);
	fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	return fd;
}

static void send_all(int fd, const void *data, size_t len)
{
	const char *p = data;

	while (len > 0) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return; /* the server may well have given up on us: that is its right */
		p += n;
		len -= (size_t)n;
	}
}

static const char *find_header_end(const char *raw, size_t len, size_t *hdr_len)
{
	const char *p = memmem(raw, len, "\r\n\r\n", 4);

	if (p) {
		*hdr_len = (size_t)(p - raw);
		return p + 4;
	}
	return NULL;
}

/* The value of the first header called name (with its colon), or NULL. */
static const char *header_value(const char *raw, size_t hdr_len, const char *name)
{
	const char *p = raw, *end = raw + hdr_len;
	size_t name_len = strlen(name);

	while (p < end) {
		const char *nl = memmem(p, (size_t)(end - p), "\r\n", 2);

		if (!nl)
			nl = end;
		if ((size_t)(nl - p) > name_len && strncasecmp(p, name, name_len) == 0)
			return p + name_len + strspn(p + name_len, " \t");
		p = nl + 2;
	}
	return NULL;
}

static long content_length(const char *raw, size_t hdr_len)
{
	const char *v = header_value(raw, hdr_len, "Content-Length:");

	return v ? strtol(v, NULL, 10) : -1;
}

static bool chunked(const char *raw, size_t hdr_len)
{
	const char *v = header_value(raw, hdr_len, "Transfer-Encoding:");

	return v && strncasecmp(v, "chunked", 7) == 0;
}

/* Undoes chunked transfer coding in place; returns the body's length, or
 * what was decoded before a malformed chunk. */
static size_t dechunk(char *body, size_t len)
{
	size_t in = 0, out = 0;

	while (in < len) {
		size_t line = in, size = 0;

		/* The size in hex, maybe an extension, CRLF. */
		while (line < len && isxdigit((unsigned char)body[line])) {
			size = size * 16 + (size_t)(isdigit((unsigned char)body[line]) ? body[line] - '0'
										: (tolower((unsigned char)body[line]) - 'a' + 10));
			line++;
		}
		if (line == in)
			break;
		while (line + 1 < len && !(body[line] == '\r' && body[line + 1] == '\n'))
			line++;
		line += 2;
		if (size == 0 || line > len || size > len - line)
			break;
		memmove(body + out, body + line, size);
		out += size;
		in = line + size + 2;
	}
	return out;
}

/* Reads until EOF, a complete response, or timeout_ms without data. */
static void read_response(int fd, int timeout_ms, char **ret, size_t *ret_len, bool head)
{
	size_t len = 0, cap = 16384;
	char *buf = malloc(cap);

	if (!buf) {
		*ret = NULL;
		*ret_len = 0;
		return;
	}
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		size_t hdr_len;
		const char *body;
		ssize_t n;

		if (cap - len < 4096) {
			char *nb = realloc(buf, cap * 2);

			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
		if (poll(&pfd, 1, timeout_ms) <= 0)
			break;
		n = recv(fd, buf + len, cap - len - 1, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* EOF, or a reset after the server closed on unread data */
		len += (size_t)n;
		body = find_header_end(buf, len, &hdr_len);
		if (body) {
			long cl = content_length(buf, hdr_len);

			if (head || (cl >= 0 && (size_t)(buf + len - body) >= (size_t)cl))
				break;
		}
	}
	buf[len] = '\0';
	*ret = buf;
	*ret_len = len;
}

static void parse_response(char *raw, size_t len, struct mw_http_response *resp)
{
	const char *body, *eol;
	size_t hdr_len;

	*resp = (struct mw_http_response){ .raw = raw, .raw_len = len };
	if (raw && len > 12 && strncmp(raw, "HTTP/1.", 7) == 0 && raw[8] == ' ')
		resp->status = atoi(raw + 9);
	body = raw ? find_header_end(raw, len, &hdr_len) : NULL;
	if (!body) {
		resp->headers = strdup("");
		resp->body = strdup("");
		return;
	}
	eol = memmem(raw, hdr_len, "\r\n", 2);
	eol = eol ? eol + 2 : raw + hdr_len;
	resp->headers = strndup(eol, (size_t)(raw + hdr_len - eol));
	resp->body_len = (size_t)(raw + len - body);
	{
		long cl = content_length(raw, hdr_len);

		if (cl >= 0 && (size_t)cl < resp->body_len)
			resp->body_len = (size_t)cl;
		else if (cl < 0 && chunked(raw, hdr_len))
			resp->body_len = dechunk((char *)body, resp->body_len); /* body points into raw */
	}
	resp->body = malloc(resp->body_len + 1);
	if (resp->body) {
		memcpy(resp->body, body, resp->body_len);
		resp->body[resp->body_len] = '\0';
	}
}

static int http_request(int port, const char *src, const char *method, const char *path,
			const char *extra_headers, struct mw_http_response *resp)
{
	char *req = NULL, *raw;
	size_t raw_len;
	int fd, n;

	*resp = (struct mw_http_response){ 0 };
	fd = mw_connect(port, src);
	if (fd < 0)
		return fd;
	n = asprintf(&req, "%s %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUser-Agent: memwatchd-itest\r\n%s"
			   "Connection: close\r\n\r\n",
		     method, path, port, extra_headers ? extra_headers : "");
	if (n < 0) {
		close(fd);
		return -ENOMEM;
	}
	send_all(fd, req, (size_t)n);
	free(req);
	read_response(fd, MW_IO_TIMEOUT_MS, &raw, &raw_len, strcmp(method, "HEAD") == 0);
	close(fd);
	parse_response(raw, raw_len, resp);
	if (resp->status <= 0) {
		/* Callers only free what they got on success. */
		mw_http_response_free(resp);
		return -EPROTO;
	}
	return 0;
}

int mw_http_request(int port, const char *method, const char *path, const char *extra_headers,
		    struct mw_http_response *resp)
{
	return http_request(port, NULL, method, path, extra_headers, resp);
}

int mw_http_get(int port, const char *path, struct mw_http_response *resp)
{
	return http_request(port, NULL, "GET", path, NULL, resp);
}

int mw_http_get_from(int port, const char *src, const char *path, struct mw_http_response *resp)
{
	return http_request(port, src, "GET", path, NULL, resp);
}

int mw_http_raw(int port, const void *data, size_t len, int timeout_ms, struct mw_http_response *resp)
{
	char *raw;
	size_t raw_len;
	int fd;

	if (resp)
		*resp = (struct mw_http_response){ 0 };
	fd = mw_connect(port, NULL);
	if (fd < 0)
		return fd;
	send_all(fd, data, len);
	read_response(fd, timeout_ms, &raw, &raw_len, false);
	close(fd);
	if (resp)
		parse_response(raw, raw_len, resp);
	else
		free(raw);
	return 0;
}

int mw_http_exchange(int fd, const char *request, bool head, struct mw_http_response *resp)
{
	char *raw;
	size_t raw_len;

	send_all(fd, request, strlen(request));
	read_response(fd, MW_IO_TIMEOUT_MS, &raw, &raw_len, head);
	parse_response(raw, raw_len, resp);
	if (resp->status <= 0) {
		mw_http_response_free(resp);
		return -EPROTO;
	}
	return 0;
}

void mw_http_response_free(struct mw_http_response *resp)
{
	free(resp->raw);
	free(resp->headers);
	free(resp->body);
	*resp = (struct mw_http_response){ 0 };
}

bool mw_http_header(const struct mw_http_response *resp, const char *name, char *buf, size_t len)
{
	size_t nlen = strlen(name);
	const char *p = resp->headers;

	while (p && *p) {
		const char *eol = strstr(p, "\r\n");
		size_t llen = eol ? (size_t)(eol - p) : strlen(p);

		if (llen > nlen && strncasecmp(p, name, nlen) == 0 && p[nlen] == ':') {
			const char *v = p + nlen + 1, *e = p + llen;
			size_t vlen;

			while (v < e && (*v == ' ' || *v == '\t'))
				v++;
			while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
				e--;
			vlen = (size_t)(e - v);
			if (vlen >= len)
				vlen = len - 1;
			memcpy(buf, v, vlen);
			buf[vlen] = '\0';
			return true;
		}
		p = eol ? eol + 2 : NULL;
	}
	return false;
}

char *mw_scrape(int port)
{
	struct mw_http_response resp;
	char *body = NULL;

	if (mw_http_get(port, "/metrics", &resp) == 0 && resp.status == 200) {
		body = resp.body;
		resp.body = NULL;
	}
	mw_http_response_free(&resp);
	return body;
}

/* ---- exposition text ---- */

#define MW_MAX_LABELS 16

struct label_pair {
	char name[128];
	char value[512];
};

/* Parses a="x",b="y" up to the closing brace or the end of s. Returns the
 * number of pairs, or -1 on a syntax error; *end points after the '}'. */
static int parse_labels(const char *s, struct label_pair *out, int max, const char **end)
{
	int n = 0;

	for (;;) {
		size_t nl = 0, vl = 0;

		while (*s == ' ' || *s == ',')
			s++;
		if (*s == '}' || *s == '\0') {
			if (end)
				*end = *s ? s + 1 : s;
			return n;
		}
		if (n >= max)
			return -1;
		while (*s && *s != '=' && *s != ' ' && nl + 1 < sizeof(out[n].name))
			out[n].name[nl++] = *s++;
		out[n].name[nl] = '\0';
		while (*s == ' ')
			s++;
		if (*s++ != '=')
			return -1;
		while (*s == ' ')
			s++;
		if (*s++ != '"')
			return -1;
		while (*s && *s != '"') {
			char c = *s++;

			if (c == '\\' && *s) {
				c = *s++;
				if (c == 'n')
					c = '\n';
			}
			if (vl + 1 < sizeof(out[n].value))
				out[n].value[vl++] = c;
		}
		out[n].value[vl] = '\0';
		if (*s++ != '"')
			return -1;
		n++;
	}
}

bool mw_metric(const char *text, const char *name, const char *matcher, double *value, char *labels,
	       size_t labels_len)
{
	struct label_pair want[MW_MAX_LABELS], have[MW_MAX_LABELS];
	size_t name_len = strlen(name);
	int n_want = 0;
	const char *line;

	if (!text)
		return false;
	if (matcher && *matcher) {
		n_want = parse_labels(matcher, want, MW_MAX_LABELS, NULL);
		if (n_want < 0)
			return false;
	}
	for (line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		const char *p = line, *lbl_start = NULL, *lbl_end = NULL;
		int n_have = 0, i, j;
		char *num_end;
		double v;

		if (*p == '#' || strncmp(p, name, name_len) != 0)
			continue;
		p += name_len;
		if (*p == '{') {
			lbl_start = p + 1;
			n_have = parse_labels(lbl_start, have, MW_MAX_LABELS, &p);
			if (n_have < 0)
				continue;
			lbl_end = p - 1;
		} else if (*p != ' ') {
			continue; /* a longer name with the same prefix */
		}
		for (i = 0; i < n_want; i++) {
			for (j = 0; j < n_have; j++)
				if (strcmp(want[i].name, have[j].name) == 0 && strcmp(want[i].value, have[j].value) == 0)
					break;
			if (j == n_have)
				break;
		}
		if (i < n_want)
			continue;
		while (*p == ' ')
			p++;
		v = strtod(p, &num_end);
		if (num_end == p)
			continue;
		if (value)
			*value = v;
		if (labels && labels_len) {
			size_t l = lbl_start ? (size_t)(lbl_end - lbl_start) : 0;

			if (l >= labels_len)
				l = labels_len - 1;
			if (l)
				memcpy(labels, lbl_start, l);
			labels[l] = '\0';
		}
		return true;
	}
	return false;
}

bool mw_label(const char *labels, const char *label, char *buf, size_t len)
{
	struct label_pair have[MW_MAX_LABELS];
	int n = parse_labels(labels, have, MW_MAX_LABELS, NULL), i;

	for (i = 0; i < n; i++)
		if (strcmp(have[i].name, label) == 0) {
			snprintf(buf, len, "%s", have[i].value);
			return true;
		}
	return false;
}

bool mw_pred_eq(double v, double arg)
{
	return v == arg;
}

bool mw_pred_gt(double v, double arg)
{
	return v > arg;
}

bool mw_poll_metric(int port, const char *name, const char *matcher, int timeout_ms,
		    bool (*pred)(double v, double arg), double arg, double *last)
{
	int64_t deadline = mw_mono_ms() + timeout_ms;

	for (;;) {
		char *body = mw_scrape(port);
		double v;
		bool ok = false;

		if (body && mw_metric(body, name, matcher, &v, NULL, 0)) {
			if (last)
				*last = v;
			ok = pred(v, arg);
		}
		free(body);
		if (ok)
			return true;
		if (mw_mono_ms() >= deadline)
			return false;
		mw_sleep_ms(50);
	}
}

/* ---- promtool ---- */

int mw_promtool_check(const char *text, size_t len, char **output)
{
	char dir[256], in_path[300], out_path[300];
	int in_fd, out_fd, st = -1;
	int64_t deadline;
	pid_t pid;

	if (output)
		*output = NULL;
	if (make_dir(dir, sizeof(dir), "promtool") < 0)
		return -1;
	snprintf(in_path, sizeof(in_path), "%s/metrics.txt", dir);
	snprintf(out_path, sizeof(out_path), "%s/output.txt", dir);
	in_fd = open(in_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (in_fd < 0)
		return -1;
	if (write(in_fd, text, len) != (ssize_t)len || lseek(in_fd, 0, SEEK_SET) != 0) {
		close(in_fd);
		return -1;
	}
	out_fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out_fd < 0) {
		close(in_fd);
		return -1;
	}
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		if (dup2(in_fd, STDIN_FILENO) < 0 || dup2(out_fd, STDOUT_FILENO) < 0 ||
		    dup2(out_fd, STDERR_FILENO) < 0)
			_exit(127);
		execl(PROMTOOL_PATH, "promtool", "check", "metrics", (char *)NULL);
		dprintf(STDERR_FILENO, "exec %s: %m\n", PROMTOOL_PATH);
		_exit(127);
	}
	close(in_fd);
	close(out_fd);
	if (pid < 0)
		return -1;
	deadline = mw_mono_ms() + 30000;
	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid)
			break;
		if (r < 0 && errno != EINTR)
			return -1;
		if (mw_mono_ms() >= deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			st = -1;
			break;
		}
		mw_sleep_ms(20);
	}
	if (output)
		*output = mw_read_file(out_path, NULL);
	if (st == -1 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

long long mw_proc_meminfo_kb(const char *field)
{
	char *text = mw_read_file("/proc/meminfo", NULL), *p;
	size_t flen = strlen(field);
	long long v = -1;

	if (!text)
		return -1;
	for (p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, field, flen) == 0 && p[flen] == ':') {
			v = strtoll(p + flen + 1, NULL, 10);
			break;
		}
	free(text);
	return v;
}

void mw_assert_clean_stop(struct mw_daemon *d)
{
	int st = mw_stop(d);
	char *log = mw_log(d);
	const char *report = mw_sanitizer_report(log);

	if (d->killed || !WIFEXITED(st) || WEXITSTATUS(st) != 0 || report)
		mw_dump_log(d, "after SIGTERM");
	ck_assert_msg(!d->killed, "memwatchd did not stop on SIGTERM and had to be killed");
	ck_assert_msg(WIFEXITED(st), "memwatchd died of signal %d", WIFSIGNALED(st) ? WTERMSIG(st) : -1);
	ck_assert_msg(WEXITSTATUS(st) == 0, "memwatchd exited %d after SIGTERM", WEXITSTATUS(st));
	ck_assert_msg(!report, "sanitizer report in the daemon's log: %.300s", report);
	free(log);
}

void mw_dump_daemon_logs(const char *dir, const char *extra_glob)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd),
		 "for f in '%s'/daemon.*/stderr.log %s%s%s%s; do [ -s \"$f\" ] && { echo \"==== $f\"; cat \"$f\"; }; done 1>&2",
		 dir, extra_glob ? "'" : "", extra_glob ? dir : "", extra_glob ? "'/" : "", extra_glob ? extra_glob : "");
	(void)!system(cmd);
}

/* si_mem_available() worked out here from /proc/zoneinfo and /proc/vmstat,
 * independently of the daemon (its parser and its BPF program), in bytes. */
double mw_memavail_by_hand(void)
{
	unsigned long long free_pages = 0, low = 0, reserve = 0, file = 0, reclaimable = 0, v;
	unsigned long long z_free = 0, z_low = 0, z_high = 0, z_boost = 0, z_managed = 0, z_prot = 0;
	int node = -1, prev_node = -2, zone_index = -1, zones = 0;
	char line[512], key[64];
	FILE *f = fopen("/proc/zoneinfo", "re");

	ck_assert(f != NULL);
	for (;;) {
		bool eof = !fgets(line, sizeof(line), f);

		if (eof || strncmp(line, "Node ", 5) == 0) {
			if (zone_index >= 0) {
				unsigned long long r = z_prot + (z_high - z_boost);

				free_pages += z_free;
				low += z_low;
				reserve += r < z_managed ? r : z_managed;
				zones++;
			}
			if (eof)
				break;
			ck_assert(sscanf(line, "Node %d,", &node) == 1);
			zone_index = node == prev_node ? zone_index + 1 : 0;
			prev_node = node;
			z_free = z_low = z_high = z_boost = z_managed = z_prot = 0;
			continue;
		}
		if (sscanf(line, " pages free %llu", &v) == 1)
			z_free = v;
		else if (sscanf(line, " %63s %llu", key, &v) == 2 && strcmp(key, "low") == 0)
			z_low = v;
		else if (sscanf(line, " %63s %llu", key, &v) == 2 && strcmp(key, "high") == 0 && !z_high)
			z_high = v;
		else if (sscanf(line, " %63s %llu", key, &v) == 2 && strcmp(key, "boost") == 0)
			z_boost = v;
		else if (sscanf(line, " %63s %llu", key, &v) == 2 && strcmp(key, "managed") == 0)
			z_managed = v;
		else if (strstr(line, "protection: (")) {
			char *p = strchr(line, '(') + 1;
			int j = 0;

			/* The largest reserve against the zones above this one. */
			for (; *p && *p != ')'; j++) {
				v = strtoull(p, &p, 10);
				if (j >= zone_index && v > z_prot)
					z_prot = v;
				p += strspn(p, ", ");
			}
		}
	}
	fclose(f);
	ck_assert(zones > 0);

	f = fopen("/proc/vmstat", "re");
	ck_assert(f != NULL);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s %llu", key, &v) == 2) {
			if (strcmp(key, "nr_active_file") == 0 || strcmp(key, "nr_inactive_file") == 0)
				file += v;
			else if (strcmp(key, "nr_slab_reclaimable") == 0 || strcmp(key, "nr_kernel_misc_reclaimable") == 0)
				reclaimable += v;
		}
	fclose(f);

	{
		long long avail = (long long)free_pages - (long long)reserve;

		avail += (long long)(file - (file / 2 < low ? file / 2 : low));
		avail += (long long)(reclaimable - (reclaimable / 2 < low ? reclaimable / 2 : low));
		return (double)(avail > 0 ? avail : 0) * (double)sysconf(_SC_PAGESIZE);
	}
}


bool mw_zone_counters_agree(double *by_hand, double *meminfo)
{
	double a = mw_memavail_by_hand(), m = (double)mw_proc_meminfo_kb("MemAvailable") * 1024.0;

	if (by_hand)
		*by_hand = a;
	if (meminfo)
		*meminfo = m;
	/* The daemon's documented tolerance for the counters method: 2%. */
	return m > 0 && fabs(a - m) <= 0.02 * m;
}

/* ---- the expectation table (tests/expectations/collectors.tsv) ---- */

/* Every test binary that compiles helpers.c should get -DEXPECTATIONS_TSV
 * (expectations_arg in meson.build); one without it fails only if it asks. */
#ifdef EXPECTATIONS_TSV
static const char *const expectations_tsv = EXPECTATIONS_TSV;
#else
static const char *const expectations_tsv = NULL;
#endif

/* Evaluates a base condition (the "-agree" form) independently of the daemon. */
static int eval_condition(const char *base)
{
	if (strcmp(base, "zone-counters-agree") == 0) {
		double a, m;
		bool agree = mw_zone_counters_agree(&a, &m);

		fprintf(stderr, "expectations: zone-counters-agree is %s: si_mem_available from /proc/zoneinfo and "
				"/proc/vmstat %.0f B, MemAvailable %.0f B\n",
			agree ? "true" : "false", a, m);
		return agree;
	}
	return -1;
}

bool mw_under_ci(void)
{
	const char *ci = getenv("CI");

	return ci && strcmp(ci, "true") == 0;
}

int mw_expectation(const char *environment, const char *collector, struct mw_expectation *out)
{
	char release[sizeof(((struct utsname *)0)->release)], line[1024];
	struct utsname u;
	bool matched_any = false;
	int lineno = 0, r = -ENOENT;
	FILE *f;

	ck_assert(uname(&u) == 0);
	snprintf(release, sizeof(release), "%s", u.release);
	*out = (struct mw_expectation){ 0 };
	ck_assert_msg(expectations_tsv != NULL,
		      "this test binary was built without -DEXPECTATIONS_TSV (expectations_arg in tests/integration/meson.build)");
	f = fopen(expectations_tsv, "re");
	ck_assert_msg(f != NULL, "cannot open %s: %s", expectations_tsv, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		char *cols[7], *save = NULL, *p;
		int n = 0;

		lineno++;
		line[strcspn(line, "\n")] = '\0';
		if (line[0] == '#' || line[strspn(line, " \t")] == '\0')
			continue;
		for (p = strtok_r(line, "\t", &save); p && n < 7; p = strtok_r(NULL, "\t", &save))
			cols[n++] = p;
		ck_assert_msg(n == 7 && !p, "%s:%d: not 7 tab-separated columns", expectations_tsv, lineno);
		if (strcmp(cols[0], environment) != 0 || fnmatch(cols[1], release, 0) != 0)
			continue;
		matched_any = true;
		if (r == 0 || strcmp(cols[2], collector) != 0)
			continue;
		if (strcmp(cols[6], "-") != 0) {
			/* "x-disagree" is the negation of "x-agree", which the test evaluates. */
			char base[128];
			size_t len = strlen(cols[6]);
			bool negated = len > 9 && strcmp(cols[6] + len - 9, "-disagree") == 0;
			int holds;

			snprintf(base, sizeof(base), "%.*s%s", (int)(negated ? len - 9 : len), cols[6],
				 negated ? "-agree" : "");
			holds = eval_condition(base);
			ck_assert_msg(holds >= 0, "%s:%d: condition %s, which these tests cannot evaluate",
				      expectations_tsv, lineno, base);
			if (negated ? holds : !holds)
				continue;
		}
		snprintf(out->state, sizeof(out->state), "%s", cols[3]);
		snprintf(out->mode, sizeof(out->mode), "%s", cols[4]);
		snprintf(out->reason, sizeof(out->reason), "%s", strcmp(cols[5], "-") == 0 ? "" : cols[5]);
		snprintf(out->condition, sizeof(out->condition), "%s", strcmp(cols[6], "-") == 0 ? "" : cols[6]);
		out->line = lineno;
		r = 0;
	}
	fclose(f);
	if (!matched_any) {
		bool ci = mw_under_ci();

		fprintf(stderr, "\n*** no expectation row for kernel %s (environment %s), add one to "
				"tests/expectations/collectors.tsv ***\n%s\n\n",
			release, environment, ci ? "CI=true: failing" : "skipping this assertion (CI is not true)");
		ck_assert_msg(!ci, "no expectation row for kernel %s, add one to tests/expectations/collectors.tsv",
			      release);
		return -ENOENT;
	}
	ck_assert_msg(r == 0, "tests/expectations/collectors.tsv has rows for %s on kernel %s, but none for collector %s",
		      environment, release, collector);
	return 0;
}

int mw_expected_kill_field(const char *environment, const char *feature, char *source, size_t len)
{
	char release[sizeof(((struct utsname *)0)->release)], line[512], path[PATH_MAX];
	const char *slash;
	struct utsname u;
	bool matched_any = false, ci = mw_under_ci();
	int r = -ENOENT;
	FILE *f;

	ck_assert(uname(&u) == 0);
	snprintf(release, sizeof(release), "%s", u.release);
	const char *tsv = expectations_tsv ? expectations_tsv : "";

	ck_assert_msg(tsv[0], "built without -DEXPECTATIONS_TSV");
	slash = strrchr(tsv, '/');
	ck_assert(slash);
	snprintf(path, sizeof(path), "%.*s/kill_fields.tsv", (int)(slash - tsv), tsv);
	f = fopen(path, "re");
	ck_assert_msg(f != NULL, "cannot open %s: %s", path, strerror(errno));
	while (r < 0 && fgets(line, sizeof(line), f)) {
		char *cols[4], *save = NULL, *p;
		int n = 0;

		line[strcspn(line, "\n")] = '\0';
		if (line[0] == '#' || line[strspn(line, " \t")] == '\0')
			continue;
		for (p = strtok_r(line, "\t", &save); p && n < 4; p = strtok_r(NULL, "\t", &save))
			cols[n++] = p;
		ck_assert_msg(n == 4 && !p, "%s: a row without 4 tab-separated columns", path);
		if (strcmp(cols[0], environment) != 0 || fnmatch(cols[1], release, 0) != 0)
			continue;
		matched_any = true;
		if (strcmp(cols[2], feature) == 0) {
			snprintf(source, len, "%s", cols[3]);
			r = 0;
		}
	}
	fclose(f);
	if (!matched_any) {
		fprintf(stderr, "\n*** no row for kernel %s (environment %s) in %s ***\n%s\n\n", release, environment, path,
			ci ? "CI=true: failing" : "skipping this assertion (CI is not true)");
		ck_assert_msg(!ci, "no row for kernel %s in %s", release, path);
		return -ENOENT;
	}
	ck_assert_msg(r == 0, "%s has rows for %s on kernel %s, but none for %s", path, environment, release, feature);
	return 0;
}

bool mw_expect_matches(const struct mw_expectation *want, const char *collector, const char *state, const char *mode,
		       const char *reason, char *why, size_t why_len)
{
	if (strcmp(state, want->state) != 0 || strcmp(mode, want->mode) != 0)
		snprintf(why, why_len, "%s: %s/%s, want %s/%s (collectors.tsv line %d%s%s) reason '%s'", collector, state,
			 mode, want->state, want->mode, want->line, want->condition[0] ? ", condition " : "",
			 want->condition, reason);
	else if (!want->reason[0] && reason[0])
		snprintf(why, why_len, "%s: reason '%s', want none (collectors.tsv line %d)", collector, reason,
			 want->line);
	else if (want->reason[0] && !strstr(reason, want->reason))
		snprintf(why, why_len, "%s: reason '%s' lacks '%s' (collectors.tsv line %d)", collector, reason,
			 want->reason, want->line);
	else
		return true;
	return false;
}

bool mw_assert_collector_expected(const char *body, const char *collector, struct mw_expectation *ret)
{
	char matcher[96], labels[1024], state[64], mode[64], reason[512], why[1024];
	struct mw_expectation want;
	double v = NAN;

	if (mw_expectation("host", collector, &want) < 0)
		return false;
	snprintf(matcher, sizeof(matcher), "collector=\"%s\"", collector);
	ck_assert_msg(mw_metric(body, "memwatch_collector_info", matcher, &v, labels, sizeof(labels)),
		      "no memwatch_collector_info{%s} in:\n%s", matcher, body);
	ck_assert(v == 1.0);
	ck_assert(mw_label(labels, "state", state, sizeof(state)));
	ck_assert(mw_label(labels, "mode", mode, sizeof(mode)));
	ck_assert(mw_label(labels, "reason", reason, sizeof(reason)));
	ck_assert_msg(mw_expect_matches(&want, collector, state, mode, reason, why, sizeof(why)), "%s", why);
	ck_assert_msg(mw_metric(body, "memwatch_collector_up", matcher, &v, NULL, 0), "no memwatch_collector_up{%s}",
		      matcher);
	ck_assert_msg(v == (strcmp(want.state, "active") == 0 ? 1.0 : 0.0) || strcmp(want.state, "degraded") == 0,
		      "memwatch_collector_up{%s} is %g with state %s", matcher, v, want.state);
	if (ret)
		*ret = want;
	return true;
}

/* ---- memory cgroups ---- */

static bool mw_write_all(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	size_t len = strlen(text);
	bool ok;

	if (fd < 0)
		return false;
	ok = write(fd, text, len) == (ssize_t)len;
	close(fd);
	return ok;
}

bool mw_memcg_root(const char **root, bool *v2)
{
	static const char *const v2_roots[] = { "/sys/fs/cgroup", "/sys/fs/cgroup/unified" };
	char file[300], *text;

	if (access("/sys/fs/cgroup/memory/memory.limit_in_bytes", F_OK) == 0) {
		*root = "/sys/fs/cgroup/memory";
		*v2 = false;
		return true;
	}
	for (size_t i = 0; i < sizeof(v2_roots) / sizeof(v2_roots[0]); i++) {
		bool has;

		snprintf(file, sizeof(file), "%s/cgroup.controllers", v2_roots[i]);
		text = mw_read_file(file, NULL);
		has = text && strstr(text, "memory");
		free(text);
		if (!has)
			continue;
		snprintf(file, sizeof(file), "%s/cgroup.subtree_control", v2_roots[i]);
		(void)mw_write_all(file, "+memory");
		*root = v2_roots[i];
		*v2 = true;
		return true;
	}
	return false;
}

bool mw_memcg_make(struct mw_memcg *cg, const struct mw_memcg *parent, const char *name, const char *limit)
{
	const char *root;
	char file[320];
	bool v2;

	if (!mw_memcg_root(&root, &v2)) {
		errno = ENOENT;
		return false;
	}
	if (snprintf(cg->path, sizeof(cg->path), "%s/%s", parent ? parent->path : root, name) >= (int)sizeof(cg->path) ||
	    snprintf(cg->label, sizeof(cg->label), "%s/%s", parent ? parent->label : "", name) >= (int)sizeof(cg->label)) {
		errno = ENAMETOOLONG;
		return false;
	}
	if (mkdir(cg->path, 0755) < 0 && errno != EEXIST)
		return false;
	if (parent && v2) {
		snprintf(file, sizeof(file), "%s/cgroup.subtree_control", parent->path);
		if (!mw_write_all(file, "+memory"))
			return false;
	}
	if (limit) {
		snprintf(file, sizeof(file), "%s/%s", cg->path, v2 ? "memory.max" : "memory.limit_in_bytes");
		if (!mw_write_all(file, limit))
			return false;
	}
	return true;
}

bool mw_memcg_remove(const char *path)
{
	int64_t deadline = mw_mono_ms() + 10000;
	char procs[PATH_MAX + 16];

	snprintf(procs, sizeof(procs), "%s/cgroup.procs", path);
	for (;;) {
		char *text, *p, *end;

		if (rmdir(path) == 0 || errno == ENOENT)
			return true;
		if (errno != EBUSY || mw_mono_ms() >= deadline)
			return false;
		text = mw_read_file(procs, NULL);
		for (p = text; p;) {
			long pid = strtol(p, &end, 10);

			if (end == p)
				break;
			if (pid > 1)
				kill((pid_t)pid, SIGKILL);
			p = end;
		}
		free(text);
		mw_sleep_ms(50);
	}
}

/* ---- /dev/kmsg ---- */

int mw_kmsg_open_end(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0 && lseek(fd, 0, SEEK_END) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

char *mw_kmsg_read(int fd)
{
	size_t cap = 65536, len = 0;
	char *all = malloc(cap), rec[8192];

	if (!all)
		return NULL;
	all[0] = '\0';
	for (;;) {
		ssize_t n = read(fd, rec, sizeof(rec) - 1);
		const char *msg;
		size_t mlen;

		if (n < 0 && errno == EPIPE)
			continue; /* overwritten records: go on with what is there */
		if (n <= 0)
			break;
		rec[n] = '\0';
		msg = strchr(rec, ';');
		if (!msg)
			continue;
		msg++;
		mlen = strcspn(msg, "\n");
		if (len + mlen + 2 > cap) {
			char *bigger = realloc(all, cap * 2 + mlen);

			if (!bigger)
				break;
			all = bigger;
			cap = cap * 2 + mlen;
		}
		memcpy(all + len, msg, mlen);
		len += mlen;
		all[len++] = '\n';
		all[len] = '\0';
	}
	return all;
}

/* ---- the kernel's counts for a memory cgroup (v1 or v2) ---- */

/* The number after "key " in a file of "key value" lines; key NULL: the file's one number. */
static long long memcg_file_value(const char *path, const char *file, const char *key)
{
	char name[PATH_MAX + 32], *text, *p;
	long long v = -1;

	snprintf(name, sizeof(name), "%s/%s", path, file);
	text = mw_read_file(name, NULL);
	for (p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		size_t len = key ? strlen(key) : 0;

		if (!key || (strncmp(p, key, len) == 0 && p[len] == ' ')) {
			v = strtoll(p + len, NULL, 10);
			break;
		}
	}
	free(text);
	return v;
}

long long mw_memcg_oom_kills(const char *path)
{
	const char *root;
	bool v2;

	if (!mw_memcg_root(&root, &v2))
		return -1;
	return v2 ? memcg_file_value(path, "memory.events", "oom_kill")
		  : memcg_file_value(path, "memory.oom_control", "oom_kill");
}

long long mw_memcg_limit_hits(const char *path)
{
	const char *root;
	bool v2;

	if (!mw_memcg_root(&root, &v2))
		return -1;
	return v2 ? memcg_file_value(path, "memory.events", "max") : memcg_file_value(path, "memory.failcnt", NULL);
}

/* ---- bounds under emulation ---- */

int mw_start_timeout_ms(void)
{
	const char *s = getenv("MW_TEST_SLOWDOWN");
	long k = s ? strtol(s, NULL, 10) : 1;

	return MW_START_TIMEOUT_MS * (int)(k >= 1 && k <= 100 ? k : 1);
}
