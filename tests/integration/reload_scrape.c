// SPDX-License-Identifier: GPL-2.0
/* The reload tests' reading of a scrape: its counter and histogram samples
 * by key, compared window to window and against the highest ever seen; the
 * BPF programs the daemon holds; reloading it. */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "test_reload.h"

/* ---- exposition ---- */

enum kind { KIND_OTHER, KIND_COUNTER, KIND_HISTOGRAM };

static int cmp_sample(const void *a, const void *b)
{
	return strcmp(((const struct sample *)a)->key, ((const struct sample *)b)->key);
}

struct family_type {
	char name[128];
	enum kind kind;
};

static int cmp_family(const void *a, const void *b)
{
	return strcmp(((const struct family_type *)a)->name, ((const struct family_type *)b)->name);
}

/* The counter and histogram families of a scrape, from its # TYPE lines, sorted. */
static struct family_type *family_types(const char *body, size_t *n)
{
	struct family_type *t = NULL;
	size_t cap = 0;
	const char *p;

	*n = 0;
	for (p = strstr(body, "# TYPE "); p; p = strstr(p + 1, "\n# TYPE ")) {
		char name[128], type[32];

		if (*p == '\n')
			p++;
		if (sscanf(p, "# TYPE %127s %31s", name, type) != 2)
			continue;
		if (strcmp(type, "counter") != 0 && strcmp(type, "histogram") != 0)
			continue;
		if (*n == cap) {
			cap = cap ? 2 * cap : 64;
			t = realloc(t, cap * sizeof(*t));
			ck_assert(t != NULL);
		}
		snprintf(t[*n].name, sizeof(t[*n].name), "%s", name);
		t[(*n)++].kind = strcmp(type, "counter") == 0 ? KIND_COUNTER : KIND_HISTOGRAM;
	}
	qsort(t, *n, sizeof(*t), cmp_family);
	return t;
}

static enum kind line_kind(const struct family_type *t, size_t n, const char *name, size_t len)
{
	static const char *const suffixes[] = { "_bucket", "_sum", "_count" };
	struct family_type like;
	const struct family_type *f;

	snprintf(like.name, sizeof(like.name), "%.*s", (int)len, name);
	f = bsearch(&like, t, n, sizeof(*t), cmp_family);
	if (f && f->kind == KIND_COUNTER)
		return KIND_COUNTER;
	for (size_t i = 0; i < 3; i++) {
		size_t sl = strlen(suffixes[i]);

		if (len > sl && memcmp(name + len - sl, suffixes[i], sl) == 0) {
			snprintf(like.name, sizeof(like.name), "%.*s", (int)(len - sl), name);
			f = bsearch(&like, t, n, sizeof(*t), cmp_family);
			if (f && f->kind == KIND_HISTOGRAM)
				return KIND_HISTOGRAM;
		}
	}
	return KIND_OTHER;
}

void scrape_free(struct scrape *sc)
{
	for (size_t i = 0; i < sc->n; i++)
		free(sc->s[i].key);
	free(sc->s);
	free(sc->body);
	*sc = (struct scrape){ 0 };
}

static void parse_scrape(struct scrape *sc, char *body)
{
	size_t n_types;
	struct family_type *types = family_types(body, &n_types);
	char *line, *next;

	*sc = (struct scrape){ .body = body, .window_end = NAN, .reloads_ok = NAN };
	mw_metric(body, "memwatch_window_end_timestamp_seconds", NULL, &sc->window_end, NULL, 0);
	mw_metric(body, "memwatch_config_reloads_total", "result=\"success\"", &sc->reloads_ok, NULL, 0);
	for (line = body; line && *line; line = next) {
		char *nl = strchr(line, '\n'), *sp;
		size_t name_len;

		next = nl ? nl + 1 : NULL;
		if (*line == '#' || *line == '\n')
			continue;
		name_len = strcspn(line, "{ ");
		/* The value follows the last blank: label values may hold blanks. */
		sp = memrchr(line, ' ', nl ? (size_t)(nl - line) : strlen(line));
		if (!sp || line_kind(types, n_types, line, name_len) == KIND_OTHER)
			continue;
		if (sc->n == sc->cap) {
			sc->cap = sc->cap ? 2 * sc->cap : 512;
			sc->s = realloc(sc->s, sc->cap * sizeof(*sc->s));
			ck_assert(sc->s != NULL);
		}
		sc->s[sc->n].key = strndup(line, (size_t)(sp - line));
		sc->s[sc->n].value = strtod(sp + 1, NULL);
		ck_assert(sc->s[sc->n].key != NULL);
		sc->n++;
	}
	qsort(sc->s, sc->n, sizeof(*sc->s), cmp_sample);
	free(types);
}

static const struct sample *find_sample(const struct scrape *sc, const char *key)
{
	struct sample like = { .key = (char *)key };

	return bsearch(&like, sc->s, sc->n, sizeof(*sc->s), cmp_sample);
}

/* The next window after `after` (seconds since the epoch), parsed. */
void scrape_after(struct mw_daemon *d, double after, struct scrape *sc)
{
	int64_t deadline = mw_mono_ms() + WINDOW_TIMEOUT_MS;

	for (;;) {
		char *body = mw_scrape(d->port);
		double end = NAN;

		if (body && mw_metric(body, "memwatch_window_end_timestamp_seconds", NULL, &end, NULL, 0) &&
		    end > after) {
			parse_scrape(sc, body);
			return;
		}
		free(body);
		ck_assert_msg(mw_mono_ms() < deadline, "no window ended after %.3f within %d ms", after,
			      WINDOW_TIMEOUT_MS);
		mw_sleep_ms(20);
	}
}

/* Every counter and histogram sample of prev that cur still has is at least
 * as large. Returns how many were compared. */
size_t assert_monotonic(const struct scrape *prev, const struct scrape *cur, const char *when)
{
	size_t compared = 0;

	for (size_t i = 0; i < prev->n; i++) {
		const struct sample *c = find_sample(cur, prev->s[i].key);

		if (!c)
			continue;
		compared++;
		ck_assert_msg(c->value >= prev->s[i].value,
			      "%s: %s went backwards from %.17g (window ending %.3f) to %.17g (window ending %.3f)",
			      when, prev->s[i].key, prev->s[i].value, prev->window_end, c->value, cur->window_end);
	}
	return compared;
}

/* Merges sc into l, failing on any sample lower than the highest seen before;
 * returns how many samples of sc had been seen before. */
size_t ledger_merge(struct ledger *l, const struct scrape *sc, const char *when)
{
	struct sample *merged = calloc(l->n + sc->n + 1, sizeof(*merged));
	size_t i = 0, j = 0, n = 0, seen = 0;

	ck_assert(merged != NULL);
	while (i < l->n || j < sc->n) {
		int c = i == l->n ? 1 : j == sc->n ? -1 : strcmp(l->s[i].key, sc->s[j].key);

		if (c < 0) {
			merged[n++] = l->s[i++];
			continue;
		}
		if (c == 0) {
			ck_assert_msg(sc->s[j].value >= l->s[i].value,
				      "%s: %s is %.17g (window ending %.3f), below the %.17g it showed before "
				      "(a series that dropped out and came back reset)",
				      when, sc->s[j].key, sc->s[j].value, sc->window_end, l->s[i].value);
			free(l->s[i++].key);
			seen++;
		}
		merged[n].key = strdup(sc->s[j].key);
		ck_assert(merged[n].key != NULL);
		merged[n++].value = sc->s[j++].value;
	}
	free(l->s);
	l->s = merged;
	l->n = n;
	return seen;
}

void ledger_free(struct ledger *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->s[i].key);
	free(l->s);
	*l = (struct ledger){ 0 };
}

void collector_mode(const char *body, const char *collector, char *mode, size_t len)
{
	char matcher[64], labels[1024];

	snprintf(matcher, sizeof(matcher), "collector=\"%s\"", collector);
	ck_assert_msg(mw_metric(body, "memwatch_collector_info", matcher, NULL, labels, sizeof(labels)) &&
			      mw_label(labels, "mode", mode, len),
		      "no memwatch_collector_info{%s}", matcher);
}

/* Sends SIGHUP for text and returns the first window that ran on it. */
void reload_to(struct mw_daemon *d, const char *conf, const char *text, const struct scrape *before,
	       struct scrape *after)
{
	int64_t deadline = mw_mono_ms() + WINDOW_TIMEOUT_MS;
	double t = before->window_end;
	int r = mw_write_file(conf, text);

	ck_assert_msg(r == 0, "cannot write %s: %s", conf, strerror(-r));
	ck_assert_int_eq(mw_signal(d, SIGHUP), 0);
	for (;;) {
		scrape_after(d, t, after);
		if (after->reloads_ok > before->reloads_ok)
			return;
		/* Each window still on the old configuration is checked too. */
		assert_monotonic(before, after, "while the reload was pending");
		t = after->window_end;
		ck_assert_msg(mw_mono_ms() < deadline, "memwatch_config_reloads_total{result=\"success\"} still %g",
			      after->reloads_ok);
		scrape_free(after);
	}
}
