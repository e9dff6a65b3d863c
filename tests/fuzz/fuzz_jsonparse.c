// SPDX-License-Identifier: GPL-2.0
/* JSON text -> json_parse() (what memwatchd --top reads from the API). A
 * document that parses is written back with the daemon's own JSON writer
 * (json_put_string, json_put_number) and must parse to the same tree. And
 * any bytes given to json_put_string must come out as one valid JSON string. */
#include <errno.h>
#include <math.h>
#include "fuzz.h"
#include "json.h"
#include "jsonparse.h"
#include "strbuf.h"
#include "utf8.h"

static void write_value(struct strbuf *sb, const struct json_value *v)
{
	size_t i;

	switch (v->type) {
	case JSON_NULL:
		strbuf_puts(sb, "null");
		break;
	case JSON_BOOL:
		strbuf_puts(sb, v->boolean ? "true" : "false");
		break;
	case JSON_NUMBER:
		json_put_number(sb, v->number);
		break;
	case JSON_STRING:
		json_put_string(sb, v->string);
		break;
	case JSON_ARRAY:
	case JSON_OBJECT:
		strbuf_putc(sb, v->type == JSON_ARRAY ? '[' : '{');
		for (i = 0; i < v->n; i++) {
			if (i)
				strbuf_putc(sb, ',');
			if (v->type == JSON_OBJECT) {
				json_put_string(sb, v->keys[i]);
				strbuf_putc(sb, ':');
			}
			write_value(sb, &v->items[i]);
		}
		strbuf_putc(sb, v->type == JSON_ARRAY ? ']' : '}');
		break;
	}
}

static bool same(const struct json_value *a, const struct json_value *b)
{
	size_t i;

	if (a->type == JSON_NUMBER && !isfinite(a->number))
		return b->type == JSON_NULL; /* the writer's null for a non-finite number */
	if (a->type != b->type)
		return false;
	switch (a->type) {
	case JSON_NULL:
		return true;
	case JSON_BOOL:
		return a->boolean == b->boolean;
	case JSON_NUMBER:
		return a->number == b->number;
	case JSON_STRING:
		return strcmp(a->string, b->string) == 0;
	case JSON_ARRAY:
	case JSON_OBJECT:
		if (a->n != b->n)
			return false;
		for (i = 0; i < a->n; i++) {
			if (a->type == JSON_OBJECT && strcmp(a->keys[i], b->keys[i]) != 0)
				return false;
			if (!same(&a->items[i], &b->items[i]))
				return false;
		}
		return true;
	}
	return false;
}

static bool valid_utf8(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		size_t n = utf8_valid_len(p);

		if (!n)
			return false;
		p += n;
	}
	return true;
}

static void roundtrip_tree(const uint8_t *data, size_t size)
{
	struct json_value *v = NULL, *again = NULL;
	size_t off = (size_t)-1;
	struct strbuf sb;
	int r;

	r = json_parse((const char *)data, size, &v, &off);
	FUZZ_CHECK(r == 0 || r == -EINVAL || r == -ENOMEM);
	if (r == -EINVAL)
		FUZZ_CHECK(off <= size);
	if (r < 0)
		return;
	strbuf_init(&sb);
	write_value(&sb, v);
	FUZZ_CHECK(!strbuf_failed(&sb));
	r = json_parse(sb.data, sb.len, &again, NULL);
	if (r != 0 || !same(v, again)) {
		fprintf(stderr, "rewritten as: %.*s\n", (int)(sb.len > 400 ? 400 : sb.len), sb.data);
		FUZZ_CHECK(r == 0 && same(v, again));
	}
	json_free(again);
	json_free(v);
	strbuf_free(&sb);
}

static void roundtrip_string(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstring(data, size);
	struct json_value *v = NULL;
	struct strbuf sb;

	strbuf_init(&sb);
	json_put_string(&sb, s);
	FUZZ_CHECK(!strbuf_failed(&sb));
	FUZZ_CHECK(json_parse(sb.data, sb.len, &v, NULL) == 0);
	FUZZ_CHECK(v->type == JSON_STRING);
	FUZZ_CHECK(valid_utf8(v->string));
	/* Valid UTF-8 comes back unchanged; anything else only has U+FFFD put in. */
	if (valid_utf8(s))
		FUZZ_CHECK(strcmp(v->string, s) == 0);
	json_free(v);
	strbuf_free(&sb);
	free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	roundtrip_tree(data, size);
	roundtrip_string(data, size);
	return 0;
}
