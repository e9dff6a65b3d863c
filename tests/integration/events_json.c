// SPDX-License-Identifier: GPL-2.0
/* JSON of the daemon's API checked by a real parser, python3's json module:
 * the scripts, running them on a body, and reading what they print. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "events_test.h"

/* Strict: the body must be UTF-8, JSON without NaN/Infinity, and with no raw
 * control characters in strings (json's default strict mode). */
#define PY_LOAD                                                                   \
	"import json, sys\n"                                                      \
	"def bad(c):\n"                                                           \
	"    raise ValueError('non-standard JSON constant ' + c)\n"               \
	"d = json.loads(open(sys.argv[1], 'rb').read().decode('utf-8'), parse_constant=bad)\n"

const char py_events[] = PY_LOAD
	"ev = d['events']\n"
	"assert isinstance(ev, list)\n"
	"for e in ev:\n"
	"    assert isinstance(e['kind'], str) and isinstance(e['pid'], int) and isinstance(e['comm'], str)\n"
	"m = [e for e in ev if e['kind'] == sys.argv[2] and e['pid'] == int(sys.argv[3])]\n"
	"print('total=%d' % len(ev))\n"
	"print('n=%d' % len(m))\n"
	"if m:\n"
	"    e = m[0]\n"
	"    print('pid=%d' % e['pid'])\n"
	"    print('comm_hex=%s' % e['comm'].encode('utf-8').hex())\n"
	"    print('cgroup_hex=%s' % e['cgroup'].encode('utf-8').hex())\n"
	"    print('timestamp=%.6f' % e['timestamp'])\n"
	"    a = e['available_bytes']\n"
	"    print('available=%s' % ('null' if a is None else '%.0f' % a))\n"
	"    print('source=%s' % e['available_source'])\n";

const char py_windows[] = PY_LOAD
	"ws = d['windows']\n"
	"assert isinstance(ws, list)\n"
	"print('n=%d' % len(ws))\n"
	"nan = float('nan')\n"
	"for i, w in enumerate(ws):\n"
	"    keys = all(k in w for k in ('seq', 'start', 'end', 'available_bytes', 'metrics')) and \\\n"
	"        isinstance(w['available_bytes'], dict) and isinstance(w['metrics'], dict)\n"
	"    s = w.get('metrics', {}).get(sys.argv[2], [])\n"
	"    v = s[0].get('value') if s else None\n"
	"    dl = s[0].get('delta') if s else None\n"
	"    print('w%d=%d %d %.6f %.6f %.17g %.17g' % (i, keys, w.get('seq', -1), w.get('start', 0), w.get('end', 0),\n"
	"          nan if v is None else v, nan if dl is None else dl))\n";

/* GETs path (200 expected) and runs script on the body; fails unless it parses. */
char *json_fields(struct mw_daemon *d, const char *path, const char *script, const char *const *args)
{
	struct mw_http_response resp;
	char ctype[128], *out;
	int r = mw_http_get(d->port, path, &resp), st;

	ck_assert_msg(r == 0 && resp.status == 200, "GET %s: r=%d status %d", path, r, resp.status);
	ck_assert_msg(mw_http_header(&resp, "Content-Type", ctype, sizeof(ctype)) &&
			      strncmp(ctype, "application/json", 16) == 0,
		      "GET %s: Content-Type is not application/json", path);
	st = mw_run_python(script, resp.body, resp.body_len, args, &out);
	ck_assert_msg(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
		      "python3's json does not accept GET %s (status 0x%x):\n%s\nbody (%zu bytes):\n%.4000s", path, st, out,
		      resp.body_len, resp.body);
	mw_http_response_free(&resp);
	return out;
}

/* The value of a "key=value" line of the script's output. */
bool field(const char *out, const char *key, char *buf, size_t len)
{
	size_t klen = strlen(key);
	const char *p;

	for (p = out; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, key, klen) == 0 && p[klen] == '=') {
			snprintf(buf, len, "%.*s", (int)strcspn(p + klen + 1, "\n"), p + klen + 1);
			return true;
		}
	return false;
}

long long field_int(const char *out, const char *key)
{
	char buf[64], *end;
	long long v;

	ck_assert_msg(field(out, key, buf, sizeof(buf)), "no %s= in python's output:\n%s", key, out);
	v = strtoll(buf, &end, 10);
	ck_assert_msg(end != buf && *end == '\0', "%s=%s is not a number", key, buf);
	return v;
}

void hex_of(const char *s, char *buf, size_t len)
{
	size_t i, o = 0;

	for (i = 0; s[i] && o + 3 <= len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%02x", (unsigned char)s[i]);
	buf[o] = '\0';
}

/* Parses the rows py_windows printed; returns how many windows there were. */
size_t window_rows(const char *out, struct window_row *rows, size_t max)
{
	size_t n = (size_t)field_int(out, "n"), i;

	ck_assert_msg(n <= max, "%zu windows, more than %zu", n, max);
	for (i = 0; i < n; i++) {
		char key[32], line[512];

		snprintf(key, sizeof(key), "w%zu", i);
		ck_assert_msg(field(out, key, line, sizeof(line)), "no %s= in:\n%s", key, out);
		ck_assert_msg(sscanf(line, "%d %lld %lf %lf %lf %lf", &rows[i].keys, &rows[i].seq, &rows[i].start,
				     &rows[i].end, &rows[i].value, &rows[i].delta) == 6,
			      "cannot parse %s=%s", key, line);
	}
	return n;
}

/* Windows oldest first, consecutive, each complete; every counter delta is the
 * change since the previous window, so the deltas after the first add up to
 * the counter's growth from the first to the last returned window. Returns
 * the growth over all returned windows (including the first one's delta). */
double check_window_rows(const struct window_row *w, size_t n, const char *out)
{
	double sum = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		ck_assert_msg(w[i].keys == 1, "window %zu lacks seq, start, end, available_bytes or metrics:\n%s", i,
			      out);
		ck_assert_msg(w[i].start < w[i].end, "window %zu: start %f is not before end %f", i, w[i].start,
			      w[i].end);
		ck_assert_msg(!isnan(w[i].value), "window %zu has no " MEMCG_RECLAIMS ":\n%s", i, out);
		ck_assert_msg(!isnan(w[i].delta), "window %zu has no delta for " MEMCG_RECLAIMS ":\n%s", i, out);
		if (i > 0) {
			ck_assert_msg(w[i].seq == w[i - 1].seq + 1, "window seqs %lld, %lld are not consecutive",
				      w[i - 1].seq, w[i].seq);
			ck_assert_msg(w[i].start >= w[i - 1].start, "windows out of order:\n%s", out);
			ck_assert_msg(w[i].delta == w[i].value - w[i - 1].value,
				      "window %lld: delta %.0f but the counter went %.0f -> %.0f", w[i].seq, w[i].delta,
				      w[i - 1].value, w[i].value);
			sum += w[i].delta;
		}
	}
	ck_assert_msg(n == 0 || sum == w[n - 1].value - w[0].value,
		      "deltas after the first window sum to %.0f, the counter grew by %.0f", sum,
		      w[n - 1].value - w[0].value);
	return n ? sum + w[0].delta : 0;
}
