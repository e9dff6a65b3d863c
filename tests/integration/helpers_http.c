// SPDX-License-Identifier: GPL-2.0
/* The integration tests' HTTP client (loopback only) and their reading of
 * the Prometheus text exposition. */
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

bool mw_same_value(double a, double b)
{
	return a == b || (isnan(a) && isnan(b));
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
