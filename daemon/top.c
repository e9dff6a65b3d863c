// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <math.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include "jsonparse.h"
#include "macro.h"
#include "strbuf.h"
#include "top.h"
#include "utf8.h"

#define SCREEN_ROWS 24
#define SPARK_WIDTH 60
#define RESPONSE_MAX (32u << 20)
#define IO_TIMEOUT_MS 3000
#define TOP_ROWS 4

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	interrupted = 1;
}

struct url {
	char host[256];
	char port[8];
};

static bool host_char(char c, bool bracketed)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
	       c == '_' || (bracketed && (c == ':' || c == '%'));
}

static int parse_url(const char *text, struct url *u)
{
	const char *p = text, *colon, *slash, *c;
	unsigned long port;
	size_t hlen, i;
	char *rest;

	/* No blanks, control characters or non-ASCII bytes anywhere. */
	for (c = text; *c; c++)
		if ((unsigned char)*c <= 0x20 || (unsigned char)*c >= 0x7f)
			return -EINVAL;
	if (strncmp(p, "http://", 7) == 0)
		p += 7;
	slash = strchr(p, '/');
	if (*p == '[') {
		const char *end = strchr(p, ']');

		if (!end || (slash && end > slash))
			return -EINVAL;
		hlen = (size_t)(end - p - 1);
		if (hlen == 0 || hlen >= sizeof(u->host))
			return -EINVAL;
		memcpy(u->host, p + 1, hlen);
		u->host[hlen] = '\0';
		if (end[1] != '\0' && end[1] != ':' && end[1] != '/')
			return -EINVAL;
		colon = end[1] == ':' ? end + 1 : NULL;
	} else {
		colon = strchr(p, ':');
		if (colon && slash && colon > slash)
			colon = NULL;
		hlen = colon ? (size_t)(colon - p) : slash ? (size_t)(slash - p) : strlen(p);
		if (hlen == 0 || hlen >= sizeof(u->host))
			return -EINVAL;
		memcpy(u->host, p, hlen);
		u->host[hlen] = '\0';
	}
	for (i = 0; u->host[i]; i++)
		if (!host_char(u->host[i], *p == '['))
			return -EINVAL;
	if (colon) {
		size_t plen = slash ? (size_t)(slash - colon - 1) : strlen(colon + 1);

		if (plen == 0 || plen >= sizeof(u->port))
			return -EINVAL;
		memcpy(u->port, colon + 1, plen);
		u->port[plen] = '\0';
		if (u->port[0] < '0' || u->port[0] > '9')
			return -EINVAL;
		port = strtoul(u->port, &rest, 10);
		if (*rest || port == 0 || port > 65535)
			return -EINVAL;
	} else {
		snprintf(u->port, sizeof(u->port), "9577");
	}
	return 0;
}

static int connect_to(const struct url *u)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res = NULL, *ai;
	int fd = -1, r;

	r = getaddrinfo(u->host, u->port, &hints, &res);
	if (r != 0)
		return -EHOSTUNREACH;
	for (ai = res; ai; ai = ai->ai_next) {
		struct timeval tv = { .tv_sec = IO_TIMEOUT_MS / 1000 };

		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		r = -errno;
		close(fd);
		fd = r;
	}
	freeaddrinfo(res);
	return fd;
}

/* GET path; the body in *body (malloc'd). Returns 0 or -errno, -EPROTO on a non-200. */
static int http_get(const struct url *u, const char *path, char **body, size_t *len)
{
	struct strbuf sb;
	char req[512], buf[65536], *hdr_end;
	int fd, status = 0;
	ssize_t n;

	fd = connect_to(u);
	if (fd < 0)
		return fd;
	snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\nHost: %s\r\nConnection: close\r\n\r\n", path, u->host);
	if (send(fd, req, strlen(req), MSG_NOSIGNAL) < 0) {
		int r = -errno;

		close(fd);
		return r;
	}
	strbuf_init(&sb);
	while ((n = recv(fd, buf, sizeof(buf), 0)) > 0 && sb.len < RESPONSE_MAX)
		strbuf_append(&sb, buf, (size_t)n);
	close(fd);
	if (!sb.data || strbuf_failed(&sb)) {
		strbuf_free(&sb);
		return -EIO;
	}
	hdr_end = strstr(sb.data, "\r\n\r\n");
	if (!hdr_end || sscanf(sb.data, "HTTP/%*s %d", &status) != 1 || status != 200) {
		strbuf_free(&sb);
		return -EPROTO;
	}
	*len = sb.len - (size_t)(hdr_end + 4 - sb.data);
	*body = malloc(*len + 1);
	if (!*body) {
		strbuf_free(&sb);
		return -ENOMEM;
	}
	memcpy(*body, hdr_end + 4, *len);
	(*body)[*len] = '\0';
	strbuf_free(&sb);
	return 0;
}

static int fetch_json(const struct url *u, const char *path, struct json_value **ret)
{
	char *body = NULL;
	size_t len = 0;
	int r;

	r = http_get(u, path, &body, &len);
	if (r < 0)
		return r;
	r = json_parse(body, len, ret, NULL);
	free(body);
	return r;
}

/* Text from the daemon (process names, cgroup paths) is shown, never obeyed by
 * the terminal: control characters (C0, DEL, C1) and invalid UTF-8 become '?'.
 * At most len - 1 bytes, cut between characters. */
static const char *term_safe(char *buf, size_t len, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t o = 0;

	while (*p && o + 1 < len) {
		size_t n = utf8_valid_len(p);

		if (n == 0 || *p < 0x20 || *p == 0x7f || (n == 2 && p[0] == 0xc2 && p[1] < 0xa0)) {
			buf[o++] = '?';
			p += n ? n : 1;
			continue;
		}
		if (o + n >= len)
			break;
		memcpy(buf + o, p, n);
		o += n;
		p += n;
	}
	buf[o] = '\0';
	return buf;
}

static void fmt_bytes(char *buf, size_t len, double v)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	size_t u = 0;

	if (isnan(v)) {
		snprintf(buf, len, "-");
		return;
	}
	while (fabs(v) >= 1024 && u + 1 < ARRAY_SIZE(units)) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, "%.1f %s", v, units[u]);
}

static void fmt_seconds(char *buf, size_t len, double v)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else if (v < 1e-3)
		snprintf(buf, len, "%.0f us", v * 1e6);
	else if (v < 1)
		snprintf(buf, len, "%.1f ms", v * 1e3);
	else
		snprintf(buf, len, "%.2f s", v);
}

/* The first sample of a family in one window. */
static const struct json_value *first_sample(const struct json_value *window, const char *name)
{
	const struct json_value *f = json_get(json_get(window, "metrics"), name);

	return f && f->type == JSON_ARRAY && f->n ? &f->items[0] : NULL;
}

static double metric(const struct json_value *window, const char *name, const char *field)
{
	return json_number(json_get(first_sample(window, name), field));
}

static void sparkline(struct strbuf *out, const struct json_value *windows)
{
	static const char *const bars[] = { "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█" };
	double lo = INFINITY, hi = -INFINITY, v;
	size_t i, start = windows->n > SPARK_WIDTH ? windows->n - SPARK_WIDTH : 0;

	for (i = start; i < windows->n; i++) {
		v = json_number(json_get(json_get(&windows->items[i], "available_bytes"), "min"));
		if (!isnan(v)) {
			lo = fmin(lo, v);
			hi = fmax(hi, v);
		}
	}
	strbuf_puts(out, "  ");
	for (i = start; i < windows->n; i++) {
		v = json_number(json_get(json_get(&windows->items[i], "available_bytes"), "min"));
		if (isnan(v) || !isfinite(lo)) {
			strbuf_putc(out, ' ');
			continue;
		}
		strbuf_puts(out, bars[hi > lo ? (size_t)((v - lo) / (hi - lo) * 7.0 + 0.5) : 7]);
	}
	strbuf_puts(out, "\r\n");
}

struct top_row {
	char label[64];
	double delta;
};

static int cmp_row(const void *a, const void *b)
{
	const struct top_row *x = a, *y = b;

	return x->delta < y->delta ? 1 : x->delta > y->delta ? -1 : 0;
}

/* The series of a family with the largest "delta" in one window, "other" left out. */
static size_t top_of(const struct json_value *window, const char *name, const char *key,
		     struct top_row *rows, size_t max)
{
	const struct json_value *f = json_get(json_get(window, "metrics"), name);
	struct top_row all[256];
	size_t i, n = 0;

	for (i = 0; f && f->type == JSON_ARRAY && i < f->n && n < ARRAY_SIZE(all); i++) {
		const struct json_value *labels = json_get(&f->items[i], "labels");
		const char *k = json_string(json_get(labels, key));
		double d = json_number(json_get(&f->items[i], "delta"));
		char a[24], b[48];

		if (strcmp(k, "other") == 0 || !(d > 0))
			continue;
		if (strcmp(key, "pid") == 0)
			snprintf(all[n].label, sizeof(all[n].label), "%-7s %s", term_safe(a, 8, k),
				 term_safe(b, 16, json_string(json_get(labels, "comm"))));
		else
			snprintf(all[n].label, sizeof(all[n].label), "%s", term_safe(b, 27, k));
		all[n++].delta = d;
	}
	qsort(all, n, sizeof(all[0]), cmp_row);
	n = n < max ? n : max;
	memcpy(rows, all, n * sizeof(*rows));
	return n;
}

static void draw(struct strbuf *out, const char *url_text, const struct json_value *windows_doc,
		 const struct json_value *events_doc, const char *error)
{
	const struct json_value *windows = json_get(windows_doc, "windows");
	const struct json_value *last = windows && windows->type == JSON_ARRAY && windows->n ?
						&windows->items[windows->n - 1] : NULL;
	struct top_row procs[TOP_ROWS], cgs[TOP_ROWS];
	char a[32], b[32], c[32], d[32], safe[3][48];
	size_t np, nc, i, rows = 0;
	time_t now = time(NULL);
	struct tm tm;
	char when[16];

	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%H:%M:%S", &tm);
	strbuf_puts(out, "\x1b[H\x1b[2J");
	strbuf_printf(out, "\x1b[1mmemwatchd top\x1b[0m  %-40s  %s UTC  q: quit\r\n", term_safe(safe[0], 41, url_text),
		      when);
	rows++;
	if (error || !last) {
		strbuf_printf(out, "\r\n\x1b[31mCannot reach the daemon: %.55s\x1b[0m\r\n", error ? error : "no window yet");
		strbuf_puts(out, "Retrying every second.\r\n");
		return;
	}
	fmt_bytes(a, sizeof(a), json_number(json_get(json_get(last, "available_bytes"), "last")));
	fmt_bytes(b, sizeof(b), json_number(json_get(json_get(last, "available_bytes"), "min")));
	fmt_bytes(c, sizeof(c), json_number(json_get(json_get(last, "available_bytes"), "max")));
	strbuf_printf(out, "\r\nAvailable %s (%.1f%%)   window min %s  max %s\r\n", a,
		      metric(last, "memwatch_memory_available_ratio", "value") * 100, b, c);
	{
		double eta = metric(last, "memwatch_memory_exhaustion_eta_seconds", "value");

		fmt_bytes(a, sizeof(a), metric(last, "memwatch_memory_available_slope_bytes_per_second", "value"));
		if (isnan(eta) || isinf(eta))
			strbuf_printf(out, "Trend %s/s   exhaustion: not in sight\r\n", a);
		else
			strbuf_printf(out, "Trend %s/s   exhaustion in %.0f s\r\n", a, eta);
	}
	sparkline(out, windows);
	fmt_seconds(a, sizeof(a), metric(last, "memwatch_direct_reclaim_seconds", "sum_delta"));
	fmt_seconds(b, sizeof(b), metric(last, "memwatch_memcg_reclaim_seconds", "sum_delta"));
	snprintf(c, sizeof(c), "%.0f", metric(last, "memwatch_kswapd_wakeups_total", "delta"));
	snprintf(d, sizeof(d), "%.0f", metric(last, "memwatch_oom_kills_total", "value"));
	/* Two lines of at most 80 columns, also when every number is large. */
	strbuf_printf(out, "\r\nReclaim stall in last window: direct %s  memcg %s\r\n", a, b);
	strbuf_printf(out, "kswapd wakes %s  OOM kills %s  PSI avg10: some %.1f%%  full %.1f%%\r\n", c, d,
		      metric(last, "memwatch_pressure_memory_some_avg10_ratio", "value") * 100,
		      metric(last, "memwatch_pressure_memory_full_avg10_ratio", "value") * 100);
	rows += 8;

	np = top_of(last, "memwatch_process_direct_reclaim_seconds_total", "pid", procs, TOP_ROWS);
	if (!np)
		np = top_of(last, "memwatch_process_memcg_reclaim_seconds_total", "pid", procs, TOP_ROWS);
	nc = top_of(last, "memwatch_cgroup_reclaim_seconds_total", "cgroup", cgs, TOP_ROWS);
	strbuf_printf(out, "\r\n\x1b[1m%-38s %-38s\x1b[0m\r\n", "Top stalled processes", "Top stalled cgroups");
	for (i = 0; i < TOP_ROWS; i++) {
		char left[80] = "", right[80] = "";

		if (i < np) {
			fmt_seconds(a, sizeof(a), procs[i].delta);
			snprintf(left, sizeof(left), "%-24.24s %10s", procs[i].label, a);
		}
		if (i < nc) {
			fmt_seconds(b, sizeof(b), cgs[i].delta);
			snprintf(right, sizeof(right), "%-26.26s %10s", cgs[i].label, b);
		}
		if (i == 0 && !np)
			snprintf(left, sizeof(left), "none");
		if (i == 0 && !nc)
			snprintf(right, sizeof(right), "none");
		strbuf_printf(out, "%-38s %-38s\r\n", left, right);
	}
	rows += 6;

	strbuf_puts(out, "\x1b[1mRecent OOM kills\x1b[0m\r\n");
	{
		const struct json_value *ev = json_get(events_doc, "events");
		size_t shown = 0;

		for (i = ev && ev->type == JSON_ARRAY ? ev->n : 0; i > 0 && shown < 3; i--) {
			const struct json_value *e = &ev->items[i - 1];

			if (strcmp(json_string(json_get(e, "kind")), "oom_kill") != 0)
				continue;
			strbuf_printf(out, "  %-19s  %-7.0f %-16s %s\r\n",
				      term_safe(safe[0], 20, json_string(json_get(e, "time"))),
				      json_number(json_get(e, "pid")),
				      term_safe(safe[1], 17, json_string(json_get(e, "comm"))),
				      term_safe(safe[2], 31, json_string(json_get(e, "cgroup"))));
			shown++;
		}
		if (!shown)
			strbuf_puts(out, "  none\r\n");
	}

	strbuf_puts(out, "\x1b[1mCollectors\x1b[0m ");
	{
		const struct json_value *f = json_get(json_get(last, "metrics"), "memwatch_collector_info");
		size_t col = 11;

		for (i = 0; f && f->type == JSON_ARRAY && i < f->n; i++) {
			const struct json_value *l = json_get(&f->items[i], "labels");
			char item[64];
			const char *state = json_string(json_get(l, "state"));

			snprintf(item, sizeof(item), "%s:%s%s ",
				 term_safe(safe[0], 24, json_string(json_get(l, "collector"))),
				 term_safe(safe[1], 24, json_string(json_get(l, "mode"))),
				 strcmp(state, "active") == 0 ? "" : strcmp(state, "degraded") == 0 ? "(degraded)" : "(!)");
			if (col + strlen(item) > 79) {
				strbuf_puts(out, "\r\n  ");
				col = 2;
			}
			strbuf_puts(out, item);
			col += strlen(item);
		}
		strbuf_puts(out, "\r\n");
	}
}

static void restore_terminal(const struct termios *saved, bool raw)
{
	if (raw)
		tcsetattr(STDIN_FILENO, TCSANOW, saved);
	fputs("\x1b[?25h\r\n", stdout);
	fflush(stdout);
}

int top_run(const char *url_text)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct termios saved, raw;
	bool is_raw = false, stdin_open = true;
	struct url u;
	int interval_ms = 1000;

	if (parse_url(url_text, &u) < 0) {
		fprintf(stderr, "memwatchd: --url: '%s' is not http://HOST:PORT\n", url_text);
		return 2;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved) == 0) {
		raw = saved;
		raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
		raw.c_cc[VMIN] = 0;
		raw.c_cc[VTIME] = 0;
		is_raw = tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
	}
	fputs("\x1b[?25l", stdout);
	while (!interrupted) {
		struct json_value *windows = NULL, *events = NULL;
		struct pollfd pfd = { .fd = stdin_open ? STDIN_FILENO : -1, .events = POLLIN };
		char error[400] = "";
		struct strbuf out;
		int r;

		r = fetch_json(&u, "/api/v1/windows?windows=60", &windows);
		if (r == 0)
			fetch_json(&u, "/api/v1/events", &events);
		else
			snprintf(error, sizeof(error), "%s (%s:%s)", r == -EPROTO ? "unexpected answer" : strerror(-r),
				 u.host, u.port);
		if (r == 0) {
			const struct json_value *list = json_get(windows, "windows");
			double w = list && list->type == JSON_ARRAY && list->n ?
					   metric(&list->items[list->n - 1], "memwatch_window_seconds", "value") : NAN;

			/* Redraw once per window; never faster than 10 times a second. */
			if (w >= 0.1 && w <= 60)
				interval_ms = (int)(w * 1000);
		}
		strbuf_init(&out);
		draw(&out, url_text, windows, events, error[0] ? error : NULL);
		if (out.data)
			fwrite(out.data, 1, out.len, stdout);
		fflush(stdout);
		strbuf_free(&out);
		json_free(windows);
		json_free(events);

		if (poll(&pfd, 1, interval_ms) > 0 && (pfd.revents & (POLLIN | POLLHUP))) {
			char key;
			ssize_t n = read(STDIN_FILENO, &key, 1);

			if (n == 1 && (key == 'q' || key == 'Q' || key == 3))
				break;
			if (n == 0)
				stdin_open = false; /* no terminal input: run until a signal */
		}
	}
	restore_terminal(&saved, is_raw);
	return 0;
}
