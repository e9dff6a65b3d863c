// SPDX-License-Identifier: GPL-2.0
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <strings.h>
#include "accept.h"
#include "accept_encoding.h"
#include "expo.h"
#include "parse.h"

#define PROTOBUF_PROTO "io.prometheus.client.MetricFamily"

static const char *const content_types[EXPO_FORMAT__COUNT] = {
	[EXPO_FORMAT_TEXT] = EXPO_CONTENT_TYPE,
	[EXPO_FORMAT_OPENMETRICS] = "application/openmetrics-text; version=1.0.0; charset=utf-8",
	[EXPO_FORMAT_PROTOBUF] = "application/vnd.google.protobuf; proto=" PROTOBUF_PROTO "; encoding=delimited",
};

const char *expo_format_content_type(enum expo_format f)
{
	return (unsigned)f < EXPO_FORMAT__COUNT ? content_types[f] : content_types[EXPO_FORMAT_TEXT];
}

struct span {
	const char *p;
	size_t len;
};

static bool span_eq(struct span s, const char *word, bool fold_case)
{
	size_t n = strlen(word);

	if (s.len != n)
		return false;
	return fold_case ? strncasecmp(s.p, word, n) == 0 : memcmp(s.p, word, n) == 0;
}

/* tchar of RFC 9110 §5.6.2: what a type, subtype or parameter name is made of. */
static bool is_tchar(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || parse_is_digit(c) ||
	       (c != '\0' && strchr("!#$%&'*+-.^_`|~", c));
}

static const char *skip_token(const char *p, const char *end)
{
	while (p < end && is_tchar(*p))
		p++;
	return p;
}

/* A quoted string from p (at its opening quote): its end past the closing
 * quote, or NULL when it does not close before end. */
static const char *skip_quoted(const char *p, const char *end)
{
	for (p++; p < end; p++) {
		if (*p == '\\') {
			if (++p == end)
				return NULL;
		} else if (*p == '"') {
			return p + 1;
		}
	}
	return NULL;
}

/* The end of the element that starts at p: the next comma outside quotes. */
static const char *element_end(const char *p)
{
	while (*p && *p != ',') {
		if (*p == '"') {
			const char *q = skip_quoted(p, p + strlen(p));

			if (!q)
				return p + strlen(p);
			p = q;
		} else {
			p++;
		}
	}
	return p;
}

struct media_range {
	struct span type, subtype;
	struct span version, proto, encoding; /* p == NULL when absent */
	int q;
};

/* Parses one element; false when it is not a media range (it is then ignored). */
static bool parse_media_range(const char *p, const char *end, struct media_range *m)
{
	const char *t;
	bool after_q = false;

	*m = (struct media_range){ .q = 1000 };
	p = parse_skip_blanks(p, end);
	t = skip_token(p, end);
	if (t == p || t == end || *t != '/')
		return false;
	m->type = (struct span){ p, (size_t)(t - p) };
	p = t + 1;
	t = skip_token(p, end);
	if (t == p)
		return false;
	m->subtype = (struct span){ p, (size_t)(t - p) };
	p = t;
	for (;;) {
		struct span name, value;

		p = parse_skip_blanks(p, end);
		if (p == end)
			return true;
		if (*p != ';')
			return false;
		p = parse_skip_blanks(p + 1, end);
		if (p == end)
			return true; /* a trailing ";" is harmless */
		t = skip_token(p, end);
		if (t == p || t == end || *t != '=')
			return false;
		name = (struct span){ p, (size_t)(t - p) };
		p = t + 1;
		if (p < end && *p == '"') {
			t = skip_quoted(p, end);
			if (!t)
				return false;
			/* The value without its quotes; an escaped quote inside matches nothing we look for. */
			value = (struct span){ p + 1, (size_t)(t - p - 2) };
		} else {
			t = skip_token(p, end);
			value = (struct span){ p, (size_t)(t - p) };
		}
		p = t;
		/* Parameters after q are accept-ext (RFC 9110): not the media type's. */
		if (span_eq(name, "q", true)) {
			int q = accept_qvalue_parse(value.p, value.len);

			m->q = q < 0 ? 0 : q;
			after_q = true;
		} else if (after_q) {
			continue;
		} else if (span_eq(name, "version", true)) {
			m->version = value;
		} else if (span_eq(name, "proto", true)) {
			m->proto = value;
		} else if (span_eq(name, "encoding", true)) {
			m->encoding = value;
		}
	}
}

/* The format a media range names, or -1 (wildcards, other types, other versions). */
static int media_range_format(const struct media_range *m)
{
	if (span_eq(m->type, "text", true) && span_eq(m->subtype, "plain", true))
		return !m->version.p || span_eq(m->version, "0.0.4", false) ? EXPO_FORMAT_TEXT : -1;
	if (!span_eq(m->type, "application", true))
		return -1;
	if (span_eq(m->subtype, "openmetrics-text", true))
		return !m->version.p || span_eq(m->version, "1.0.0", false) ? EXPO_FORMAT_OPENMETRICS : -1;
	/* Without encoding=delimited it would be one message, not a stream of them. */
	if (span_eq(m->subtype, "vnd.google.protobuf", true) && m->proto.p &&
	    span_eq(m->proto, PROTOBUF_PROTO, false) && m->encoding.p && span_eq(m->encoding, "delimited", true))
		return EXPO_FORMAT_PROTOBUF;
	return -1;
}

void accept_format_init(struct accept_format *af)
{
	*af = (struct accept_format){ 0 };
	for (size_t i = 0; i < EXPO_FORMAT__COUNT; i++)
		af->weight[i] = -1;
}

void accept_format_parse(struct accept_format *af, const char *value)
{
	const char *p = value;

	if (!value)
		return;
	while (*p) {
		const char *end = element_end(p);
		struct media_range m;
		int f;

		if (parse_media_range(p, end, &m) && (f = media_range_format(&m)) >= 0) {
			/* Named twice: the lower weight, as for Accept-Encoding; the first place. */
			if (af->weight[f] < 0) {
				af->weight[f] = m.q;
				af->rank[f] = af->n_named++;
			} else if (m.q < af->weight[f]) {
				af->weight[f] = m.q;
			}
		}
		p = *end ? end + 1 : end;
	}
}

enum expo_format accept_format_choose(const struct accept_format *af)
{
	int best = -1;

	for (int f = 0; f < EXPO_FORMAT__COUNT; f++) {
		if (af->weight[f] <= 0)
			continue;
		if (best < 0 || af->weight[f] > af->weight[best] ||
		    (af->weight[f] == af->weight[best] && af->rank[f] < af->rank[best]))
			best = f;
	}
	return best < 0 ? EXPO_FORMAT_TEXT : (enum expo_format)best;
}
